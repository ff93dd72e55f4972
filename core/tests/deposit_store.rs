//! Durable state (`store_path`): a client started again on its store resumes where the last one
//! stopped — same deposits, same event ids, a send of unknown outcome resolved with the same
//! quote — and the event log replays what a host missed. The SIGKILL harness is
//! `tests/python/test_sigkill.py`.

mod deposit_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use depositkit_core::deposit::{
    DepositClient, DepositEvent, DepositPhase, DestinationConfig, SweepStatus,
};
use depositkit_core::{ErrorKind, TokenType};
use depositkit_devnet::{Fault, Service};

use deposit_support::{Net, config, eventually, net, owner, poll_detected, wait_for};

fn store_file(net: &Net, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "depositkit-store-{}-{}",
        std::process::id(),
        net.devnet.services_url().rsplit(':').next().unwrap_or("0")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn durable_client(net: &Net, owner: &str, store: &Path, auto_sweep: bool) -> DepositClient {
    let mut config = config(net, owner, DestinationConfig::chain(8453))
        .with_store_path(store.display().to_string());
    config.auto_sweep = auto_sweep;
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    client
}

#[test]
fn a_restarted_client_resumes_a_waiting_deposit_with_the_same_event_ids() {
    let net = net();
    let owner = owner();
    let store = store_file(&net, "waiting.sqlite");
    let first = durable_client(&net, &owner, &store, false);
    assert_eq!(first.store_path(), Some(store.clone()));
    let address = first.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&address, 8453, TokenType::USDC, "7000000", None).unwrap();
    let detected = poll_detected(&first);
    let before = first.events_since(0, usize::MAX).unwrap();
    assert_eq!(
        before.iter().map(|e| e.id).collect::<Vec<_>>(),
        (1..=before.len() as u64).collect::<Vec<_>>()
    );
    assert!(before.iter().any(|e| e.event.lifecycle() == Some(&detected)));
    let last = first.last_event_id();
    first.close().unwrap();

    let second = durable_client(&net, &owner, &store, false);
    // Where the first left it: the same deposit, waiting for a manual sweep.
    let pending = second.pending_deposits().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, detected.id);
    assert_eq!(pending[0].raw_amount.to_string(), "7000000");
    // The old events keep their ids; new ones continue after them.
    let replay = second.events_since(0, usize::MAX).unwrap();
    assert_eq!(&replay[..before.len()], &before[..]);
    assert!(replay[before.len()..].iter().all(|e| e.id > last));
    // Not reported again.
    assert!(second.poll_now().unwrap().is_empty());
    let result = second.sweep(&detected.id).unwrap();
    assert_eq!(result.status, SweepStatus::Success, "{result:?}");
    // A new deposit is just that deposit, not what the account held.
    net.devnet.deposit(&address, 8453, TokenType::USDC, "2500000", None).unwrap();
    let next = poll_detected(&second);
    assert_eq!(next.amount, "2.5");
    let history = second.deposit_history(&detected.id).unwrap();
    let phases: Vec<DepositPhase> =
        history.iter().filter_map(|e| e.event.lifecycle()).map(|e| e.phase).collect();
    assert_eq!(
        phases,
        [DepositPhase::Detected, DepositPhase::Processing, DepositPhase::Credited],
        "the phase history spans both runs"
    );
    second.close().unwrap();
}

#[test]
fn a_send_of_unknown_outcome_is_resolved_after_a_restart_with_the_same_quote() {
    let net = net();
    let owner = owner();
    let store = store_file(&net, "unknown.sqlite");
    let make = || {
        let mut config = config(&net, &owner, DestinationConfig::chain(8453))
            .with_store_path(store.display().to_string());
        // The watchdog ends the attempt while devnet still holds the send; nothing resolves it
        // before the client is closed.
        config.processing_timeout_ms = 300;
        config.reconcile_interval_ms = 600_000;
        config.http_retries = 0;
        let client = DepositClient::new(config).unwrap();
        client.initialize().unwrap();
        client
    };
    let first = make();
    let address = first.deposit_addresses().unwrap().evm;
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/send"),
            &Fault { delay_ms: Some(1500), count: Some(1), ..Fault::default() },
        )
        .unwrap();
    net.devnet.deposit(&address, 8453, TokenType::USDC, "9000000", None).unwrap();
    let detected = poll_detected(&first);
    let events = wait_for(&first, Duration::from_secs(10), |e| {
        e.id == detected.id && e.phase == DepositPhase::Failed
    });
    let failed = events.last().and_then(DepositEvent::lifecycle).unwrap();
    assert!(failed.error.as_deref().unwrap_or("").contains("unknown"), "{failed:?}");
    let pending = first.sweep_result(&detected.id).unwrap().unwrap();
    assert_eq!(pending.status, SweepStatus::Pending);
    let last = first.last_event_id();
    first.close().unwrap();
    // Devnet executes the held send meanwhile: the money has moved, the store does not know.
    let owner_lower = owner.to_ascii_lowercase();
    assert!(eventually(Duration::from_secs(10), || {
        net.devnet.ledger_balance(&owner_lower, 8453, TokenType::USDC).unwrap() != "0"
    }));
    let delivered = net.devnet.ledger_balance(&owner_lower, 8453, TokenType::USDC).unwrap();

    let second = make();
    let events = wait_for(&second, Duration::from_secs(10), |e| {
        e.id == detected.id && e.phase == DepositPhase::Credited
    });
    let credited = events.last().and_then(DepositEvent::lifecycle).unwrap();
    assert!(credited.transaction_id.is_some());
    let result = second.sweep_result(&detected.id).unwrap().unwrap();
    assert_eq!(result.status, SweepStatus::Success);
    assert!(second.pending_deposits().unwrap().is_empty());
    // Resolved, not sent again: the owner got the deposit once.
    assert_eq!(net.devnet.ledger_balance(&owner_lower, 8453, TokenType::USDC).unwrap(), delivered);
    let sweeps = second.get_transactions(Some(1), Some(100)).unwrap();
    let sweep_count = sweeps.transactions.iter().filter(|t| t.tag == "sweep").count();
    assert_eq!(sweep_count, 1, "{sweeps:?}");
    let credited_ids: Vec<u64> = second
        .events_since(0, usize::MAX)
        .unwrap()
        .into_iter()
        .filter(|e| e.event.lifecycle().is_some_and(|l| l.phase == DepositPhase::Credited))
        .map(|e| e.id)
        .collect();
    assert_eq!(credited_ids.len(), 1);
    assert!(credited_ids[0] > last, "new events continue the ids");
    second.close().unwrap();
}

#[test]
fn the_in_memory_log_replays_the_last_events_and_says_when_older_ones_are_gone() {
    let net = net();
    let mut config = config(&net, &owner(), DestinationConfig::chain(8453));
    config.event_queue_capacity = 2;
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    client.start_watching().unwrap();
    client.stop_watching().unwrap();
    let last = client.last_event_id();
    assert!(last >= 4, "initializing, ready, watching, ready: {last}");
    assert_eq!(client.store_path(), None);
    let kept = client.events_since(last - 2, 10).unwrap();
    assert_eq!(kept.iter().map(|e| e.id).collect::<Vec<_>>(), [last - 1, last]);
    assert_eq!(client.events_since(last - 2, 1).unwrap().len(), 1, "limit");
    let gone = client.events_since(0, 10).unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::NotFound);
    assert!(gone.message().contains("only the last 2 events"), "{gone}");
    let past = client.events_since(last + 1, 10).unwrap_err();
    assert_eq!(past.kind(), ErrorKind::InvalidArgument);
    assert!(past.message().contains(&format!("cursor {}", last + 1)), "{past}");
    client.close().unwrap();
}

#[test]
fn a_store_holds_one_live_client_per_owner_and_refuses_bad_paths() {
    let net = net();
    let store = store_file(&net, "shared.sqlite");
    let (a, b) = (owner(), owner());
    let first = durable_client(&net, &a, &store, true);
    // Another owner shares the file.
    let other = durable_client(&net, &b, &store, true);
    let again = config(&net, &a, DestinationConfig::chain(8453))
        .with_store_path(store.display().to_string());
    let error = DepositClient::new(again.clone()).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.message().contains("in use by another live client"), "{error}");
    first.close().unwrap();
    let reopened = DepositClient::new(again).unwrap();
    reopened.close().unwrap();
    other.close().unwrap();

    let dir = store.parent().unwrap().display().to_string();
    let bad = config(&net, &a, DestinationConfig::chain(8453)).with_store_path(dir.clone());
    let error = DepositClient::new(bad).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.message().contains(&dir), "{error}");
    let empty = config(&net, &a, DestinationConfig::chain(8453)).with_store_path(" ");
    let error = DepositClient::new(empty).unwrap_err();
    assert!(error.message().starts_with("storePath must be a file path"), "{error}");
}

#[test]
fn notification_records_come_back_with_the_client() {
    let net = net();
    let owner = owner();
    let store = store_file(&net, "notes.sqlite");
    let make = || {
        let mut config = config(&net, &owner, DestinationConfig::chain(8453))
            .with_store_path(store.display().to_string());
        config.auto_sweep = false;
        config.notifications = Some(depositkit_core::deposit::NotificationsConfig {
            duration_ms: 0,
            ..Default::default()
        });
        let client = DepositClient::new(config).unwrap();
        client.initialize().unwrap();
        client
    };
    let first = make();
    let address = first.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&address, 8453, TokenType::USDC, "3000000", None).unwrap();
    let detected = poll_detected(&first);
    let records = first.notifications().unwrap();
    assert_eq!(records.len(), 1);
    first.close().unwrap();

    let second = make();
    assert_eq!(second.notifications().unwrap(), records, "the same record, same times");
    assert_eq!(second.notifications().unwrap()[0].event.id, detected.id);
    assert!(second.dismiss_notification(&detected.id).unwrap());
    second.close().unwrap();
    let third = make();
    assert!(third.notifications().unwrap().is_empty(), "a dismissal is kept too");
    third.close().unwrap();
}
