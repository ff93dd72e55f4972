//! The deposit client against an in-process devnet: detection, sweeping, destinations, events.

mod deposit_support;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use deposit_support::*;
use depositkit_core::deposit::{
    ClientStatus, DepositClient, DepositEvent, DepositPhase, DestinationConfig, SweepStatus,
};
use depositkit_core::{ErrorKind, TokenType, U256, parse_raw_amount};
use depositkit_devnet::{Fault, Service};

fn raw(text: &str) -> U256 {
    parse_raw_amount(text).unwrap()
}

#[test]
fn deposit_is_detected_swept_and_credited_with_the_fee_aware_amount() {
    let net = net();
    let client = client(&net);
    assert_eq!(client.status(), ClientStatus::Ready);
    let addresses = client.deposit_addresses().unwrap();
    // 5 USDC on Base.
    net.devnet.deposit(&addresses.evm, 8453, TokenType::USDC, "5000000", Some(&owner())).unwrap();
    let detected = poll_detected(&client);
    assert_eq!(detected.token, TokenType::USDC);
    assert_eq!(detected.chain_id, 8453);
    assert_eq!(detected.amount, "5");
    assert!((detected.amount_usd - 5.0).abs() < 1e-9);
    assert_eq!(client.pending_deposits().unwrap().len(), 1);
    let (last, events) = wait_terminal(&client, &detected.id);
    assert_eq!(last.phase, DepositPhase::Credited, "{events:#?}");
    assert_eq!(
        phases(&events, &detected.id),
        [DepositPhase::Detected, DepositPhase::Processing, DepositPhase::Credited]
    );
    let statuses: Vec<ClientStatus> = events
        .iter()
        .filter_map(|e| match e {
            DepositEvent::StatusChanged(s) => Some(*s),
            _ => None,
        })
        .collect();
    assert!(statuses.contains(&ClientStatus::Sweeping), "{statuses:?}");
    let tx = last.transaction_id.clone().unwrap();
    assert!(last.explorer_url.as_deref().unwrap().ends_with(&tx));
    let destination = last.destination.clone().unwrap();
    assert_eq!(destination.chain_id, 8453);
    assert_eq!(destination.address, client.owner_address());

    let result = client.sweep_result(&detected.id).unwrap().unwrap();
    assert_eq!(result.status, SweepStatus::Success);
    assert_eq!(result.transaction_id, tx);
    let delivered = result.delivered.unwrap();
    let at_destination =
        net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    assert_eq!(at_destination, delivered.raw_amount, "ledger holds exactly the quote's amount");
    // delivered = value − fees, within one smallest unit.
    let expected = (delivered.value_usd - delivered.fees.total_usd) * 1e6;
    let got = delivered.raw_amount.parse::<f64>().unwrap();
    assert!((got - expected).abs() <= 1.0, "{got} vs {expected} ({delivered:?})");
    assert!(delivered.fees.total_usd > 0.0);
    assert_eq!(delivered.fees.service_usd, 0.0, "no own uaProjectId: no service fee");
    assert!(client.pending_deposits().unwrap().is_empty());
    assert_eq!(client.status(), ClientStatus::Ready);
    // The deposit account is empty again.
    assert_eq!(net.devnet.ledger_balance(&addresses.evm, 8453, TokenType::USDC).unwrap(), "0");
    client.close().unwrap();
    assert_eq!(client.status(), ClientStatus::Idle);
    assert_eq!(client.poll_now().unwrap_err().kind(), ErrorKind::DepositSdk);
}

#[test]
fn below_threshold_deposit_is_reported_and_not_swept() {
    let net = net();
    let client = client(&net);
    let evm = client.deposit_addresses().unwrap().evm;
    // 0.3 USDC: above dust, below the $0.50 minimum.
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "300000", None).unwrap();
    let events = client.poll_now().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].phase, DepositPhase::BelowThreshold);
    assert_eq!(events[0].amount, "0.3");
    assert!(events[0].error.as_deref().unwrap().contains("minimum"), "{events:?}");
    assert!(client.pending_deposits().unwrap().is_empty());
    // Dust (0.05 USDC) is silent; a second small deposit fires below_threshold again.
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "50000", None).unwrap();
    assert!(client.poll_now().unwrap().is_empty());
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "250000", None).unwrap();
    let again = client.poll_now().unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].phase, DepositPhase::BelowThreshold);
    assert_ne!(again[0].id, events[0].id);
    // Nothing was swept.
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "600000");
    assert_eq!(client.status(), ClientStatus::Ready);
}

#[test]
fn several_deposits_at_once_are_all_credited_by_the_watcher() {
    let net = net();
    let client = client(&net);
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "2000000", None).unwrap();
    net.devnet.deposit(&evm, 42161, TokenType::ETH, "1000000000000000", None).unwrap(); // 0.001 ETH
    net.devnet.deposit(&evm, 1, TokenType::USDT, "3500000", None).unwrap();
    // The watcher finds them on its own (50 ms interval in tests).
    client.start_watching().unwrap();
    assert!(client.is_watching().unwrap());
    let events = collect_until(&client, Duration::from_secs(20), |seen| credited(seen).len() == 3);
    let detected: Vec<_> = events
        .iter()
        .filter_map(|e| e.lifecycle())
        .filter(|e| e.phase == DepositPhase::Detected)
        .map(|e| (e.token, e.chain_id, e.amount.clone()))
        .collect();
    assert_eq!(detected.len(), 3, "{events:#?}");
    assert!(detected.contains(&(TokenType::ETH, 42161, "0.001".to_owned())));
    assert!(detected.contains(&(TokenType::USDT, 1, "3.5".to_owned())));
    for id in credited(&events) {
        let result = client.sweep_result(&id).unwrap().unwrap();
        assert_eq!(result.status, SweepStatus::Success);
    }
    // All three went to the owner as USDC on Base.
    let total: U256 = credited(&events)
        .iter()
        .map(|id| raw(&client.sweep_result(id).unwrap().unwrap().delivered.unwrap().raw_amount))
        .fold(U256::ZERO, |a, b| a + b);
    let ledger = net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    assert_eq!(raw(&ledger), total);
    assert_eq!(client.status(), ClientStatus::Watching);
    client.stop_watching().unwrap();
    assert_eq!(client.status(), ClientStatus::Ready);
}

#[test]
fn a_deposit_arriving_during_a_sweep_and_a_second_one_of_the_same_slot_are_both_credited() {
    let net = net();
    let client = client(&net);
    let evm = client.deposit_addresses().unwrap().evm;
    // Slow the first send down so that the next deposit lands mid-sweep.
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/send"),
            &Fault::delay(Duration::from_millis(400), 1),
        )
        .unwrap();
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "4000000", None).unwrap();
    let first = poll_detected(&client);
    wait_for(&client, Duration::from_secs(10), |e| {
        e.id == first.id && e.phase == DepositPhase::Processing
    });
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "1500000", None).unwrap();
    let second = poll_detected(&client);
    assert_ne!(second.id, first.id);
    assert_eq!(second.amount, "1.5", "only the new money");
    assert_eq!(client.status(), ClientStatus::Sweeping);
    let events = collect_until(&client, Duration::from_secs(20), |seen| credited(seen).len() == 2);
    assert_eq!(credited(&events), [first.id.clone(), second.id.clone()], "FIFO, one at a time");
    // A third deposit of the same token and chain after both were credited.
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "2000000", None).unwrap();
    let third = poll_detected(&client);
    assert_eq!(third.amount, "2");
    let (last, _) = wait_terminal(&client, &third.id);
    assert_eq!(last.phase, DepositPhase::Credited);
    let total: U256 = [&first.id, &second.id, &third.id]
        .iter()
        .map(|id| raw(&client.sweep_result(id).unwrap().unwrap().delivered.unwrap().raw_amount))
        .fold(U256::ZERO, |a, b| a + b);
    let ledger = net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    assert_eq!(raw(&ledger), total);
}

#[test]
fn destination_change_before_a_manual_sweep_is_used() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.auto_sweep = false;
        c
    });
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "3000000", None).unwrap();
    let detected = poll_detected(&client);
    assert_eq!(client.status(), ClientStatus::Ready, "auto-sweep is off");
    assert_eq!(client.pending_deposits().unwrap()[0].id, detected.id);
    // Bad destinations are refused and the old one stays.
    let err = client.set_destination(DestinationConfig::chain(196)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert_eq!(client.get_destination().unwrap().chain_id, 8453);
    let receiver = owner();
    let set = client
        .set_destination(
            DestinationConfig::chain(42161)
                .with_address(receiver.clone())
                .with_token(TokenType::USDT),
        )
        .unwrap();
    assert_eq!(client.get_destination().unwrap(), set);
    let result = client.sweep(&detected.id).unwrap();
    assert_eq!(result.status, SweepStatus::Success, "{result:?}");
    let delivered = result.delivered.unwrap();
    assert_eq!((delivered.chain_id, delivered.token), (42161, TokenType::USDT));
    assert_eq!(
        net.devnet.ledger_balance(&receiver, 42161, TokenType::USDT).unwrap(),
        delivered.raw_amount
    );
    assert_eq!(
        net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap(),
        "0"
    );
    let (last, _) = wait_terminal(&client, &detected.id);
    assert_eq!(last.phase, DepositPhase::Credited);
    assert_eq!(last.destination.unwrap().address, receiver);
    assert!(client.pending_deposits().unwrap().is_empty());
    let err = client.sweep(&detected.id).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn bnb_chain_usdc_with_18_decimals_both_ways() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.destination = DestinationConfig::chain(56);
        c
    });
    let evm = client.deposit_addresses().unwrap().evm;
    // 2 USDC on BNB Chain = 2 * 10^18.
    net.devnet.deposit(&evm, 56, TokenType::USDC, "2000000000000000000", None).unwrap();
    let detected = poll_detected(&client);
    assert_eq!(detected.amount, "2");
    let (last, _) = wait_terminal(&client, &detected.id);
    assert_eq!(last.phase, DepositPhase::Credited);
    let delivered = client.sweep_result(&detected.id).unwrap().unwrap().delivered.unwrap();
    assert_eq!(delivered.decimals, 18);
    let ledger = net.devnet.ledger_balance(client.owner_address(), 56, TokenType::USDC).unwrap();
    assert_eq!(ledger, delivered.raw_amount);
    let got = raw(&ledger);
    // Between 1.9 and 2 USDC arrived: the amount was not cut by 10^12 (reference defect 3).
    assert!(got > raw("1900000000000000000") && got < raw("2000000000000000000"), "{got}");
}

#[test]
fn solana_destination_keeps_its_case() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.destination = DestinationConfig::chain(101).with_address(SOLANA_DEST);
        c
    });
    assert_eq!(client.get_destination().unwrap().address, SOLANA_DEST);
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "5000000", None).unwrap();
    let detected = poll_detected(&client);
    let (last, _) = wait_terminal(&client, &detected.id);
    assert_eq!(last.phase, DepositPhase::Credited, "{last:?}");
    assert_eq!(last.destination.unwrap().address, SOLANA_DEST);
    let delivered = client.sweep_result(&detected.id).unwrap().unwrap().delivered.unwrap();
    assert_eq!(
        net.devnet.ledger_balance(SOLANA_DEST, 101, TokenType::USDC).unwrap(),
        delivered.raw_amount
    );
    // A deposit to the Solana deposit address is found too.
    let solana = client.deposit_addresses().unwrap().solana;
    net.devnet.deposit(&solana, 101, TokenType::SOL, "10000000", None).unwrap(); // 0.01 SOL
    let sol = poll_detected(&client);
    assert_eq!((sol.token, sol.chain_id, sol.amount.as_str()), (TokenType::SOL, 101, "0.01"));
}

#[test]
fn own_ua_project_id_pays_the_one_percent_service_fee() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.ua_project_id = Some("my-own-project".into());
        c
    });
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "10000000", None).unwrap();
    let detected = poll_detected(&client);
    wait_terminal(&client, &detected.id);
    let delivered = client.sweep_result(&detected.id).unwrap().unwrap().delivered.unwrap();
    assert!((delivered.fees.service_usd - 0.1).abs() < 1e-9, "{delivered:?}");
}

#[test]
fn event_ids_are_stable_across_phases_and_client_restarts() {
    let net = net();
    let owner = owner();
    let make = || {
        let mut c = config(&net, &owner, DestinationConfig::chain(8453));
        c.auto_sweep = false;
        let client = DepositClient::new(c).unwrap();
        client.initialize().unwrap();
        client
    };
    let first = make();
    let evm = first.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "7000000", None).unwrap();
    let detected = poll_detected(&first);
    first.close().unwrap();
    drop(first);

    let second = make();
    assert_eq!(second.deposit_addresses().unwrap().evm, evm, "addresses are stable per owner");
    let again = poll_detected(&second);
    assert_eq!(again.id, detected.id, "same deposit, same id after a restart");
    assert_eq!(again.amount, "7");
    second.sweep(&again.id).unwrap();
    let (last, events) = wait_terminal(&second, &again.id);
    assert_eq!(last.phase, DepositPhase::Credited);
    let ids: Vec<&str> =
        events.iter().filter_map(|e| e.lifecycle()).map(|e| e.id.as_str()).collect();
    assert!(ids.iter().all(|id| *id == detected.id), "{ids:?}");
    // Polling again reports nothing: it was swept.
    assert!(second.poll_now().unwrap().is_empty());
}

#[test]
fn a_panicking_callback_is_reported_and_harmless() {
    let net = net();
    let client = client(&net);
    let calls = Arc::new(Mutex::new(0u32));
    let counter = Arc::clone(&calls);
    client.subscribe(Box::new(|_| panic!("host callback bug"))).unwrap();
    client.subscribe(Box::new(move |_| *counter.lock().unwrap() += 1)).unwrap();
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "1000000", None).unwrap();
    let detected = poll_detected(&client);
    let (last, mut events) = wait_terminal(&client, &detected.id);
    assert_eq!(last.phase, DepositPhase::Credited);
    client.close().unwrap(); // delivers what is queued: the panics are reported by now
    while let Some(event) = client.next_event(Duration::ZERO) {
        events.push(event);
    }
    assert!(client.callback_panics() >= 3);
    let reported = events.iter().any(|e| {
        matches!(e, DepositEvent::Error { kind: ErrorKind::Internal, message } if message.contains("host callback bug"))
    });
    assert!(reported, "{events:#?}");
    assert!(*calls.lock().unwrap() >= 4, "the other callback saw every event");
}

#[test]
fn callbacks_may_call_back_into_the_client() {
    let net = net();
    let client = Arc::new(client(&net));
    let slot: Arc<OnceLock<std::sync::Weak<DepositClient>>> = Arc::new(OnceLock::new());
    slot.set(Arc::downgrade(&client)).unwrap();
    let observations = Arc::new(Mutex::new(Vec::new()));
    let (seen, weak) = (Arc::clone(&observations), Arc::clone(&slot));
    client
        .subscribe(Box::new(move |event| {
            let Some(event) = event.lifecycle() else { return };
            let Some(client) = weak.get().and_then(|w| w.upgrade()) else { return };
            // Reads, a blocking poll and a destination change, all from the event thread.
            let status = client.status();
            let pending = client.pending_deposits().unwrap().len();
            let polled = client.poll_now().map(|found| found.len());
            let destination = client.get_destination().unwrap();
            seen.lock().unwrap().push((
                event.phase,
                status,
                pending,
                polled.is_ok(),
                destination.chain_id,
            ));
        }))
        .unwrap();
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "1000000", None).unwrap();
    let detected = poll_detected(&client);
    wait_terminal(&client, &detected.id);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while observations.lock().unwrap().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    client.close().unwrap();
    let seen = observations.lock().unwrap();
    let phases: Vec<DepositPhase> = seen.iter().map(|o| o.0).collect();
    assert_eq!(phases, [DepositPhase::Detected, DepositPhase::Processing, DepositPhase::Credited]);
    assert!(seen.iter().all(|o| o.3), "every re-entrant poll worked: {seen:?}");
}

#[test]
fn lifecycle_callback_of_the_config_and_json_shape() {
    let net = net();
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&got);
    let client = client_with(&net, move |mut c| {
        c.on_deposit_event = Some(Arc::new(move |e| sink.lock().unwrap().push(e.clone())));
        c
    });
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "1250000", None).unwrap();
    let detected = poll_detected(&client);
    let (_, events) = wait_terminal(&client, &detected.id);
    client.close().unwrap();
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 3);
    let json = events
        .iter()
        .find(|e| e.lifecycle().is_some_and(|l| l.phase == DepositPhase::Credited))
        .unwrap()
        .to_json();
    assert_eq!(json["type"], "deposit:lifecycle");
    let payload = &json["payload"];
    assert_eq!(payload["phase"], "credited");
    assert_eq!(payload["amount"], "1.25");
    assert_eq!(payload["chainId"], 8453);
    assert!(payload["transactionId"].is_string());
    assert!(payload["explorerUrl"].is_string());
    assert!(payload["timestamp"].as_u64().unwrap() > 1_600_000_000_000);
}

#[test]
fn lifecycle_rules_of_the_client() {
    let net = net();
    let owner = owner();
    let client = DepositClient::new(config(&net, &owner, DestinationConfig::chain(8453))).unwrap();
    assert_eq!(client.status(), ClientStatus::Idle);
    let err = client.deposit_addresses().unwrap_err();
    assert_eq!(err.message(), "Client not initialized. Call initialize() first.");
    assert_eq!(client.start_watching().unwrap_err().kind(), ErrorKind::Configuration);
    assert_eq!(client.poll_now().unwrap_err().kind(), ErrorKind::Configuration);
    let addresses = client.initialize().unwrap();
    assert_eq!(client.initialize().unwrap_err().message(), "Client already initialized");
    assert!(addresses.evm.starts_with("0x"));
    let wallet = client.intermediary_address().unwrap().unwrap();
    assert!(client.account_id().unwrap().unwrap().len() > 3);
    assert!(client.is_onramp_supported().unwrap());
    client.close().unwrap();
    client.close().unwrap();

    // A configured intermediary must be the signer's wallet.
    let mut c = config(&net, &owner, DestinationConfig::chain(8453));
    c.intermediary_address = Some(wallet.to_uppercase().replacen("0X", "0x", 1));
    let same = DepositClient::new(c).unwrap();
    assert_eq!(same.initialize().unwrap().evm, addresses.evm, "stable per owner");
    let mut c = config(&net, &owner, DestinationConfig::chain(8453));
    c.intermediary_address = Some(deposit_support::owner());
    let other = DepositClient::new(c).unwrap();
    let err = other.initialize().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert!(err.message().contains("does not match the signer's wallet"), "{err}");
    assert_eq!(other.status(), ClientStatus::Error);
}

/// The client's own lifecycle has one guard (`ClientCall` in `status.rs`): after `close()`
/// every call fails with `DepositSdk` "the client is closed" but for what stays true — the
/// lifecycle, the owner, the event log, the pull queue and its counters, and the releases
/// closing already did.
#[test]
fn a_closed_client_refuses_every_call_but_what_stays_true() {
    use depositkit_core::deposit::{NotificationsConfig, RefundReason, TokenTransactionFilter};
    use depositkit_core::funding::{EvmProvider, ProviderError, WalletProvider};
    use serde_json::{Value, json};

    let net = net();
    let client = client_with(&net, |mut c| {
        c.auto_sweep = false;
        c.funding.enabled = true;
        c.onramp.enabled = true;
        c.notifications = Some(NotificationsConfig::default());
        c
    });
    let owner = client.owner_address().to_owned();
    let wallet: Arc<dyn WalletProvider> =
        Arc::new(|_: &str, _: &Value| -> Result<Value, ProviderError> {
            Ok(json!({"balances": [{"chainId": 8453, "token": "USDC",
                "tokenAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "decimals": 6,
                "rawAmount": "25000000", "priceUSD": 1.0, "valueUSD": 25.0}]}))
        });
    let funder = "0x52908400098527886E0F7030069857D2E4169EE7";
    client.set_evm_wallet(EvmProvider::Host(Arc::clone(&wallet)), Some(funder)).unwrap();
    client.set_balance_provider(Some(Arc::clone(&wallet))).unwrap();
    let balance = client.get_wallet_balances().unwrap().remove(0);
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "3000000", None).unwrap();
    let detected = poll_detected(&client);
    client.start_watching().unwrap();
    let subscription = client.subscribe(Box::new(|_| {})).unwrap();
    // Open, the views answer: afterwards they would be stale.
    assert_eq!(client.pending_deposits().unwrap().len(), 1);
    assert_eq!(client.get_destination().unwrap().chain_id, 8453);
    client.close().unwrap();

    macro_rules! refused {
        ($($call:expr),+ $(,)?) => {$(
            match $call {
                Ok(_) => panic!("{} answered after close()", stringify!($call)),
                Err(err) => {
                    assert_eq!(err.kind(), ErrorKind::DepositSdk, "{}: {err}", stringify!($call));
                    assert_eq!(err.message(), "the client is closed", "{}", stringify!($call));
                }
            }
        )+};
    }
    let id = detected.id.as_str();
    let filter = TokenTransactionFilter::new(8453, evm.clone());
    refused!(
        client.initialize(),
        client.deposit_addresses(),
        client.account_id(),
        client.intermediary_address(),
        client.set_destination(DestinationConfig::chain(42161)),
        client.get_destination(),
        client.is_onramp_supported(),
        client.is_watching(),
        client.start_watching(),
        client.stop_watching(),
        client.poll_now(),
        client.pending_deposits(),
        client.sweep(id),
        client.sweep_result(id),
        client.transactions(1, 10),
        client.get_transactions(None, None),
        client.get_token_transactions(&filter, None),
        client.get_transaction("0x00"),
        client.refund(id, RefundReason::UserRequested),
        client.can_refund(id),
        client.refund_result(id),
        client.refund_config(),
        client.stuck_funds(),
        client.recover_funds(),
        client.is_recovering(),
        client.notifications(),
        client.dismiss_notification(id),
        client.subscribe_notifications(Box::new(|_| {})),
        client.notifications_config(),
        client.subscribe(Box::new(|_| {})),
        client.subscribe_recorded(Box::new(|_| {})),
        client.set_evm_wallet(EvmProvider::Url("http://127.0.0.1:1".into()), None),
        client.set_solana_wallet(Arc::clone(&wallet), None),
        client.set_balance_provider(Some(Arc::clone(&wallet))),
        client.set_balance_provider(None),
        client.connect_evm_wallet(),
        client.evm_accounts(),
        client.prompt_evm_account_selection(),
        client.connect_solana_wallet(),
        client.get_wallet_balances(),
        client.fund_from_wallet(&balance, None),
        client.open_onramp(None),
        client.handle_onramp_message(&json!({"event": "widget_opened", "data": {}})),
        client.last_onramp_order(),
    );

    // What stays true still answers.
    client.close().unwrap();
    assert!(client.is_closed());
    assert_eq!(client.status(), ClientStatus::Idle);
    assert_eq!(client.owner_address(), owner);
    assert_eq!(client.store_path(), None);
    let last = client.last_event_id();
    let log = client.events_since(0, usize::MAX).unwrap();
    assert_eq!(log.last().map(|e| e.id), Some(last));
    let history = client.deposit_history(id).unwrap();
    assert_eq!(
        history.first().and_then(|e| e.event.lifecycle()).map(|e| e.phase),
        Some(DepositPhase::Detected)
    );
    let mut queued = 0;
    while client.next_recorded_event(Duration::ZERO).is_some()
        || client.next_event(Duration::ZERO).is_some()
    {
        queued += 1;
    }
    assert!(queued > 0, "the events queued before close() can still be taken");
    assert_eq!(client.dropped_events(), 0);
    assert_eq!(client.callback_panics(), 0);
    assert!(!client.unsubscribe(subscription), "close() dropped it already");
    client.clear_funding_wallet();
}

#[test]
fn many_clients_share_one_runtime_and_close_quickly() {
    let net = net();
    let clients: Vec<DepositClient> = (0..8).map(|_| client(&net)).collect();
    for client in &clients {
        assert!(client.poll_now().unwrap().is_empty());
    }
    let started = std::time::Instant::now();
    drop(clients);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn transactions_list_deposits_and_sweeps() {
    let net = net();
    let client = client(&net);
    let evm = client.deposit_addresses().unwrap().evm;
    let sender = owner();
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "2000000", Some(&sender)).unwrap();
    let detected = poll_detected(&client);
    wait_terminal(&client, &detected.id);
    let page = client.transactions(1, 10).unwrap();
    assert_eq!((page.page, page.page_size), (1, 10));
    let tags: Vec<&str> = page.transactions.iter().map(|t| t.tag.as_str()).collect();
    assert_eq!(tags, ["sweep", "receive"], "newest first");
    let receive = &page.transactions[1];
    assert!(receive.change.from.eq_ignore_ascii_case(&sender), "{receive:?}");
    assert_eq!(receive.target_token.chain_id, 8453);
}
