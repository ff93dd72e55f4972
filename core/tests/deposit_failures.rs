//! A client that survives its services failing, against an in-process devnet with fault
//! injection: the account service down in the middle of a sweep, 429 storms, slow responses
//! (the watchdog), key rotation and session expiry during a refund, and refund requests for
//! deposits whose sweep outcome is unknown. Every deposit ends credited, or failed and then
//! refunded; none is lost or left in processing; the client recovers by itself.

mod deposit_support;

use std::time::Duration;

use deposit_support::*;
use depositkit_core::deposit::{
    ClientStatus, DepositEvent, DepositPhase, RefundReason, RefundStatus, SweepStatus,
};
use depositkit_core::{DepositClient, ErrorKind, TokenType};
use depositkit_devnet::{Fault, Service, SweepFaultMode};

fn processing_count(events: &[DepositEvent], id: &str) -> usize {
    phases(events, id).iter().filter(|p| **p == DepositPhase::Processing).count()
}

/// The delivered amount of a credited deposit equals what its destination holds.
fn delivered_once(net: &Net, client: &DepositClient, id: &str) {
    let delivered = client.sweep_result(id).unwrap().unwrap().delivered.unwrap();
    let ledger = net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    assert_eq!(ledger, delivered.raw_amount, "delivered exactly once");
    let evm = client.deposit_addresses().unwrap().evm;
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "0");
}

#[test]
fn the_account_service_down_mid_sweep_is_recovered_from_automatically() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.http_retries = 1;
        c.reconcile_interval_ms = 50;
        c
    });
    // The service goes down as the sweep is sent: the send and the status reads fail for two
    // rounds; the client reports the unknown outcome and resolves it by itself.
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &Fault::status(503, 2))
        .unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/q_"), &Fault::status(503, 4))
        .unwrap();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "5000000", None).id;
    let events =
        collect_until(&client, Duration::from_secs(20), |seen| credited(seen).contains(&id));
    use DepositPhase::*;
    assert_eq!(
        phases(&events, &id),
        [Detected, Processing, Failed, Processing, Failed, Processing, Credited],
        "{events:#?}"
    );
    let failed: Vec<String> = events
        .iter()
        .filter_map(|e| e.lifecycle())
        .filter(|e| e.phase == Failed)
        .map(|e| e.error.clone().unwrap())
        .collect();
    assert!(failed.iter().all(|e| e.contains("is unknown")), "{failed:?}");
    // One quote throughout: the same one is resolved, never a new one.
    let quote_id = failed[0].split_whitespace().find(|w| w.starts_with("q_")).unwrap();
    let result = client.sweep_result(&id).unwrap().unwrap();
    assert_eq!(result.status, SweepStatus::Success);
    assert_eq!(result.delivered.as_ref().unwrap().quote_id, quote_id);
    delivered_once(&net, &client, &id);
    assert_eq!(client.status(), ClientStatus::Ready);
}

#[test]
fn a_sweep_that_keeps_failing_while_the_service_is_down_is_refunded() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.http_retries = 1;
        c.refund.enabled = true;
        c.refund.delay_ms = 30;
        c.refund.max_attempts = 3;
        c
    });
    // The account service answers 503 for a while: to three sweep quotes (two requests
    // each), then to the first refund attempt's receipts read.
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/quote"), &Fault::status(503, 6))
        .unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/receipts"), &Fault::status(503, 2))
        .unwrap();
    let sender = owner();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "3000000", Some(&sender)).id;
    let (last, events) = wait_refund(&client, &id);
    assert_eq!(processing_count(&events, &id), 3);
    let failed =
        events.iter().filter_map(|e| e.lifecycle()).find(|e| e.phase == DepositPhase::Failed);
    assert!(failed.unwrap().error.as_deref().unwrap().contains("503"), "{events:#?}");
    use RefundStatus::*;
    assert_eq!(refund_statuses(&events, &id), [Pending, Processing, Pending, Processing, Success]);
    assert_eq!(last.refunded_to.as_deref(), Some(sender.as_str()));
    assert_eq!(last.attempts, 2);
    assert_eq!(net.devnet.ledger_balance(&sender, 8453, TokenType::USDC).unwrap(), "2970000");
    assert_eq!(client.status(), ClientStatus::Ready);
    assert!(client.pending_deposits().unwrap().is_empty());
}

#[test]
fn a_429_storm_does_not_stop_the_watcher() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.http_retries = 1;
        c
    });
    client.start_watching().unwrap();
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/balances"),
            &Fault::status(429, 10).with_retry_after(0),
        )
        .unwrap();
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/quote"),
            &Fault::status(429, 3).with_retry_after(0),
        )
        .unwrap();
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "2000000", None).unwrap();
    let events = collect_until(&client, Duration::from_secs(20), |seen| credited(seen).len() == 1);
    let errors = events
        .iter()
        .filter(|e| matches!(e, DepositEvent::Error { kind: ErrorKind::UniversalAccount, .. }))
        .count();
    assert!(errors >= 1, "the failed polls were reported: {events:#?}");
    let id = credited(&events)[0].clone();
    // The first attempt's quote was refused twice (429 after one retry): retried.
    assert!(processing_count(&events, &id) >= 1);
    delivered_once(&net, &client, &id);
    assert!(eventually(Duration::from_secs(5), || client.status() == ClientStatus::Watching));
}

#[test]
fn the_watchdog_ends_attempts_that_hang() {
    let net = net();
    client(&net); // warm-up: the first JWT makes the devnet's key
    let client = client_with(&net, |mut c| {
        c.processing_timeout_ms = 1000;
        c.reconcile_interval_ms = 50;
        c
    });
    // A quote that hangs: the attempt ends with nothing sent, and the retry delivers.
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/quote"),
            &Fault::delay(Duration::from_millis(2200), 1),
        )
        .unwrap();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "2000000", None).id;
    let (last, events) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Credited, "{events:#?}");
    assert_eq!(processing_count(&events, &id), 2);
    delivered_once(&net, &client, &id);

    // A send that hangs: its outcome is unknown, reported, and resolved with the same quote.
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/send"),
            &Fault::delay(Duration::from_millis(2200), 1),
        )
        .unwrap();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "3000000", None).id;
    let events =
        collect_until(&client, Duration::from_secs(20), |seen| credited(seen).contains(&id));
    let failed = events
        .iter()
        .filter_map(|e| e.lifecycle())
        .find(|e| e.id == id && e.phase == DepositPhase::Failed)
        .expect("the hang is reported");
    assert!(failed.error.as_deref().unwrap().contains("watchdog"), "{failed:?}");
    std::thread::sleep(Duration::from_millis(2200)); // let the held send run
    let ledger = net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    let total: u128 = [&last.id, &id]
        .into_iter()
        .map(|id| {
            client
                .sweep_result(id)
                .unwrap()
                .unwrap()
                .delivered
                .unwrap()
                .raw_amount
                .parse::<u128>()
                .unwrap()
        })
        .sum();
    assert_eq!(ledger.parse::<u128>().unwrap(), total, "each delivered once");
    assert_eq!(client.status(), ClientStatus::Ready);
}

#[test]
fn key_rotation_and_session_expiry_during_an_auto_refund() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.refund.enabled = true;
        c.refund.delay_ms = 300;
        c
    });
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "2000000", None).id;
    wait_for(&client, Duration::from_secs(10), |e| e.id == id && e.phase == DepositPhase::Failed);
    net.devnet.rotate_jwt_key().unwrap();
    net.devnet.expire_sessions(None);
    let (last, _) = wait_refund(&client, &id);
    assert_eq!(last.status, RefundStatus::Success, "{last:?}");
    assert_eq!(
        net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap(),
        "1970000"
    );
}

#[test]
fn a_refund_of_a_deposit_whose_sweep_outcome_is_unknown_never_pays_twice() {
    let net = net();
    client(&net); // warm-up
    // The sweep's send is held past the client's deadline and then executed, and its status
    // cannot be read: the outcome is unknown to the client, but the money was delivered.
    let client = client_with(&net, |mut c| {
        c.request_timeout_ms = 600;
        c.http_retries = 1;
        c
    });
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/send"),
            &Fault::delay(Duration::from_millis(1200), 1),
        )
        .unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/q_"), &Fault::status(503, 2))
        .unwrap();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "4000000", None).id;
    let (last, _) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Failed);
    assert!(last.error.as_deref().unwrap().contains("is unknown"), "{last:?}");
    std::thread::sleep(Duration::from_millis(1200)); // the held send runs
    assert!(!client.can_refund(&id).unwrap().eligible, "unknown sweep outcome");
    // A refund request first resolves the sweep: delivered, so credited, not refunded.
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Skipped, "{result:?}");
    assert!(result.error.as_deref().unwrap().contains("turned out delivered"), "{result:?}");
    let events = collect_until(&client, Duration::from_secs(5), |seen| {
        seen.iter().filter_map(|e| e.lifecycle()).any(|e| e.phase == DepositPhase::Credited)
    });
    assert!(credited(&events).contains(&id));
    delivered_once(&net, &client, &id);
    let err = client.refund(&id, RefundReason::UserRequested).unwrap_err();
    assert!(err.message().contains("credited"), "{err}");

    // Never executed, quote still valid: no refund yet (it could still execute); a sweep then
    // resolves the same quote.
    let client = client_with(&net, |mut c| {
        c.http_retries = 1;
        c
    });
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &Fault::status(503, 1))
        .unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/q_"), &Fault::status(503, 2))
        .unwrap();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "3000000", None).id;
    assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Failed);
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Failed, "{result:?}");
    assert!(result.error.as_deref().unwrap().contains("never executed"), "{result:?}");
    let swept = client.sweep(&id).unwrap();
    assert_eq!(swept.status, SweepStatus::Success, "{swept:?}");
    delivered_once(&net, &client, &id);
}
