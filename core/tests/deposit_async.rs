//! `DepositClient`'s async face (`…_async`, `client/async_api.rs`) against the in-process
//! devnet: each call answers what the synchronous one answers, awaited on the host's own
//! executor (a current-thread tokio runtime here: the work runs on depositkit's runtime, not
//! the host's); dropping a `Task` stops the wait, never the sweep it queued, which completes and
//! is reported once.

mod deposit_support;

use std::time::Duration;

use deposit_support::*;
use depositkit_core::deposit::{DepositPhase, DestinationConfig, RefundReason, SweepStatus};
use depositkit_core::{DepositClient, ErrorKind, TokenTransactionFilter, TokenType};
use depositkit_devnet::{Fault, Service};

/// The host's executor: one thread, no timers of its own needed by depositkit's tasks.
fn host() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().build().unwrap()
}

/// The next sweep send is answered `ms` late (it is on the wire meanwhile).
fn delay_next_send(net: &Net, ms: u64) {
    let late = Fault::delay(Duration::from_millis(ms), 1);
    net.devnet.inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &late).unwrap();
}

/// A client that sweeps only when asked, answering within `call_timeout_ms`.
fn fresh_within(net: &Net, call_timeout_ms: u64) -> DepositClient {
    let mut config = config(net, &owner(), DestinationConfig::chain(8453));
    config.auto_sweep = false;
    config.call_timeout_ms = call_timeout_ms;
    DepositClient::new(config).unwrap()
}

fn fresh(net: &Net) -> DepositClient {
    fresh_within(net, 20_000)
}

/// Initializes `client` (awaited on `host`) and detects a deposit of `raw` USDC on Base.
fn ready_with_deposit(
    net: &Net,
    host: &tokio::runtime::Runtime,
    client: &DepositClient,
    raw: &str,
) -> String {
    host.block_on(client.initialize_async()).unwrap();
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, raw, None).unwrap();
    poll_detected(client).id
}

#[test]
fn every_async_call_answers_like_the_sync_one() {
    let net = net();
    let client = fresh(&net);
    let host = host();
    let err = host.block_on(client.poll_now_async()).unwrap_err();
    assert_eq!(err.message(), "Client not initialized. Call initialize() first.");
    let addresses = host.block_on(client.initialize_async()).unwrap();
    assert_eq!(addresses, client.deposit_addresses().unwrap());
    let err = host.block_on(client.initialize_async()).unwrap_err();
    assert_eq!(err.message(), "Client already initialized");

    net.devnet.deposit(&addresses.evm, 8453, TokenType::USDC, "5000000", None).unwrap();
    let found = host.block_on(client.poll_now_async()).unwrap();
    let detected = found.iter().find(|e| e.phase == DepositPhase::Detected).unwrap().clone();
    let eligibility = host.block_on(client.can_refund_async(&detected.id)).unwrap();
    assert_eq!(eligibility, client.can_refund(&detected.id).unwrap());
    assert_eq!(host.block_on(client.stuck_funds_async()).unwrap(), vec![]);

    let swept = host.block_on(client.sweep_async(&detected.id)).unwrap();
    assert_eq!(swept.status, SweepStatus::Success);
    assert_eq!(client.sweep_result(&detected.id).unwrap(), Some(swept.clone()));
    let again = host.block_on(client.sweep_async(&detected.id)).unwrap_err();
    assert_eq!(again.kind(), ErrorKind::NotFound);
    assert!(again.message().contains(&swept.transaction_id), "{again}");
    let refund = host.block_on(client.refund_async(&detected.id, RefundReason::UserRequested));
    assert_eq!(refund.unwrap_err().kind(), ErrorKind::Refund);
    assert_eq!(host.block_on(client.recover_funds_async()).unwrap(), vec![]);

    let page = host.block_on(client.get_transactions_async(Some(1), Some(10))).unwrap();
    assert_eq!(page, client.get_transactions(Some(1), Some(10)).unwrap());
    let first = &page.transactions[0];
    let one = host.block_on(client.get_transaction_async(&first.transaction_id)).unwrap();
    assert_eq!(&one, first);
    let usdc = TokenTransactionFilter::for_token(8453, TokenType::USDC).unwrap();
    let by_token = host.block_on(client.get_token_transactions_async(&usdc, None)).unwrap();
    assert_eq!(by_token, client.get_token_transactions(&usdc, None).unwrap());
    let err = host.block_on(client.get_transactions_async(Some(0), None)).unwrap_err();
    assert_eq!(err.message(), "page must be at least 1, got 0");
    let err = host.block_on(client.get_transaction_async("tx_nope")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let err = host.block_on(client.connect_evm_wallet_async()).unwrap_err();
    assert_eq!(err.kind(), client.connect_evm_wallet().unwrap_err().kind());

    client.close().unwrap();
    let err = host.block_on(client.sweep_async(&detected.id)).unwrap_err();
    assert_eq!(err.message(), "the client is closed");
}

#[test]
fn a_dropped_sweep_task_still_delivers_once() {
    let net = net();
    let client = fresh(&net);
    let host = host();
    let id = ready_with_deposit(&net, &host, &client, "7000000");
    delay_next_send(&net, 600);
    let sweeping = client.sweep_async(&id);
    let seen = wait_for(&client, Duration::from_secs(20), |e| {
        e.id == id && e.phase == DepositPhase::Processing
    });
    drop(sweeping); // the wait only: the executor owns the sweep
    let (end, rest) = wait_terminal(&client, &id);
    assert_eq!(end.phase, DepositPhase::Credited);
    let all: Vec<_> = seen.into_iter().chain(rest).collect();
    assert_eq!(credited(&all), vec![id.clone()]);
    let delivered = net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC);
    assert_eq!(client.sweep_result(&id).unwrap().unwrap().status, SweepStatus::Success);
    let err = host.block_on(client.sweep_async(&id)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(
        net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap(),
        delivered.unwrap()
    );
}

#[test]
fn the_call_timeout_bounds_an_await_and_the_sweep_goes_on() {
    let net = net();
    // Long enough for initialize() on a busy machine; the send's answer comes later still.
    let client = fresh_within(&net, 1500);
    let host = host();
    let id = ready_with_deposit(&net, &host, &client, "3000000");
    delay_next_send(&net, 4000);
    let err = host.block_on(client.sweep_async(&id)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert_eq!(err.message(), "sweep() did not finish within 1500 ms");
    let (end, events) = wait_terminal(&client, &id);
    assert_eq!(end.phase, DepositPhase::Credited);
    assert_eq!(credited(&events), vec![id.clone()]);
}
