//! Refunds against an in-process devnet: automatic refunds after failed sweeps (to the sender
//! or the owner, retried, failed for good), manual refunds, eligibility, and the rules that
//! keep a deposit from being refunded twice or both refunded and credited.

mod deposit_support;

use std::sync::Arc;
use std::time::Duration;

use deposit_support::*;
use depositkit_core::deposit::{
    ClientStatus, DepositPhase, RefundReason, RefundStatus, SweepStatus,
};
use depositkit_core::{ErrorKind, TokenType, U256, parse_raw_amount};
use depositkit_devnet::{Fault, Service, SweepFaultMode};

const SOLANA_SENDER: &str = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB";

fn raw(text: &str) -> U256 {
    parse_raw_amount(text).unwrap()
}

#[test]
fn auto_refund_returns_a_failed_deposit_to_its_sender() {
    let net = net();
    let client = refund_client(&net, 2);
    let sender = checksummed(&owner());
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "5000000", Some(&sender)).id;
    let (last, events) = wait_refund(&client, &id);
    assert_eq!(
        phases(&events, &id),
        [
            DepositPhase::Detected,
            DepositPhase::Processing,
            DepositPhase::Processing,
            DepositPhase::Processing,
            DepositPhase::Failed
        ]
    );
    assert_eq!(
        refund_statuses(&events, &id),
        [RefundStatus::Pending, RefundStatus::Processing, RefundStatus::Success]
    );
    assert_eq!(last.reason, RefundReason::SweepFailed);
    assert_eq!(last.refunded_to.as_deref(), Some(sender.as_str()));
    assert_eq!(last.refunded_to_sender, Some(true));
    assert_eq!(last.attempts, 1);
    assert_eq!(
        (last.token, last.source_chain_id, last.amount.as_str()),
        (TokenType::USDC, 8453, "5")
    );
    let tx = last.tx_hash.clone().unwrap();
    assert!(last.explorer_url.as_deref().unwrap().ends_with(&tx), "{last:?}");
    // Back on Base in USDC, less the gas ($0.03): 4.97 USDC, exactly once.
    assert_eq!(last.delivered_amount.as_deref(), Some("4.97"));
    assert_eq!(net.devnet.ledger_balance(&sender, 8453, TokenType::USDC).unwrap(), "4970000");
    let evm = client.deposit_addresses().unwrap().evm;
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "0");
    assert!(client.pending_deposits().unwrap().is_empty());
    assert_eq!(client.refund_result(&id).unwrap().unwrap().status, RefundStatus::Success);
    assert_eq!(client.status(), ClientStatus::Ready);
    let json = depositkit_core::DepositEvent::Refund(last.clone()).to_json();
    assert_eq!(json["type"], "refund:update");
    assert_eq!(json["payload"]["depositId"], id.as_str());
    assert_eq!(json["payload"]["sourceChainId"], 8453);
    assert_eq!(json["payload"]["amountUSD"], 5.0);
    assert_eq!(json["payload"]["reason"], "sweep_failed");
    assert_eq!(json["payload"]["refundedToSender"], true);
    // Never again: refund, sweep and eligibility all say so.
    let err = client.refund(&id, RefundReason::UserRequested).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refund, "{err}");
    assert!(err.message().contains("already refunded"), "{err}");
    let err = client.sweep(&id).unwrap_err();
    assert!(err.message().contains("already refunded"), "{err}");
    let eligibility = client.can_refund(&id).unwrap();
    assert!(!eligibility.eligible);
    assert!(eligibility.message.contains("already refunded"), "{eligibility:?}");
    // The history lists the refund with its deposit id.
    let history = client.get_transactions(Some(1), Some(20)).unwrap();
    let refund = history.transactions.iter().find(|t| t.tag == "refund").unwrap();
    assert_eq!(refund.transaction_id, tx);
    assert_eq!(refund.deposit_id.as_deref(), Some(id.as_str()));
}

#[test]
fn without_a_known_sender_the_owner_is_refunded() {
    let net = net();
    let client = refund_client(&net, 2);
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "3000000", None).id;
    let (last, _) = wait_refund(&client, &id);
    assert_eq!(last.status, RefundStatus::Success, "{last:?}");
    assert_eq!(last.refunded_to.as_deref(), Some(client.owner_address()));
    assert_eq!(last.refunded_to_sender, Some(false));
    assert_eq!(
        net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap(),
        "2970000"
    );

    // refund_to_sender off: the owner, although the sender is known.
    let client = client_with(&net, |mut c| {
        c.refund.enabled = true;
        c.refund.delay_ms = 20;
        c.refund.refund_to_sender = false;
        c
    });
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    let sender = owner();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "3000000", Some(&sender)).id;
    let (last, _) = wait_refund(&client, &id);
    assert_eq!(last.refunded_to.as_deref(), Some(client.owner_address()), "{last:?}");
    assert_eq!(net.devnet.ledger_balance(&sender, 8453, TokenType::USDC).unwrap(), "0");
}

#[test]
fn refunds_that_keep_failing_end_failed_after_max_attempts() {
    let net = net();
    let client = refund_client(&net, 3);
    // Three sweep attempts, then three refund attempts, all failing.
    net.devnet.fail_next_sweeps(6, SweepFaultMode::Fail);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "4000000", Some(&owner())).id;
    let (last, events) = wait_refund(&client, &id);
    use RefundStatus::*;
    assert_eq!(
        refund_statuses(&events, &id),
        [Pending, Processing, Pending, Processing, Pending, Processing, Failed]
    );
    let updates = refund_updates(&events, &id);
    assert!(updates[2].error.as_deref().unwrap().contains("attempt 1 of 3 failed"), "{updates:?}");
    assert_eq!(last.attempts, 3);
    assert!(last.error.as_deref().unwrap().contains("(after 3 attempts)"), "{last:?}");
    // Really attempted: the service saw three failed refunds of this deposit.
    let history = client.get_transactions(Some(1), Some(50)).unwrap();
    let failed_refunds = history
        .transactions
        .iter()
        .filter(|t| t.tag == "refund" && t.status == -1 && t.deposit_id.as_deref() == Some(&id))
        .count();
    assert_eq!(failed_refunds, 3, "{history:#?}");
    // The money is still there; the deposit waits; a manual refund now succeeds.
    let evm = client.deposit_addresses().unwrap().evm;
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "4000000");
    assert_eq!(client.pending_deposits().unwrap()[0].id, id);
    assert_eq!(client.status(), ClientStatus::Ready);
    let eligibility = client.can_refund(&id).unwrap();
    assert!(eligibility.eligible, "{eligibility:?}");
    assert_eq!(eligibility.reason, Some(RefundReason::SweepFailed));
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Success, "{result:?}");
    assert_eq!(result.reason, RefundReason::UserRequested);
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "0");
}

#[test]
fn manual_refund_with_auto_refund_off() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.auto_sweep = false;
        c
    });
    assert!(!client.refund_config().unwrap().enabled);
    let sender = checksummed(&owner());
    let id = deposit_detected(&net, &client, 42161, TokenType::USDT, "2500000", Some(&sender)).id;
    let eligibility = client.can_refund(&id).unwrap();
    assert!(eligibility.eligible, "{eligibility:?}");
    assert_eq!(eligibility.reason, Some(RefundReason::UserRequested));
    assert_eq!(eligibility.refund_address.as_deref(), Some(sender.as_str()));
    assert_eq!(eligibility.refund_to_sender, Some(true));
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Success, "{result:?}");
    assert_eq!(result.reason, RefundReason::UserRequested);
    assert_eq!(result.refunded_to.as_deref(), Some(sender.as_str()));
    assert_eq!(net.devnet.ledger_balance(&sender, 42161, TokenType::USDT).unwrap(), "2470000");
    let events = collect_until(&client, Duration::from_secs(5), |seen| {
        seen.iter().filter_map(|e| e.refund()).any(|r| r.status.is_terminal())
    });
    assert_eq!(
        refund_statuses(&events, &id),
        [RefundStatus::Pending, RefundStatus::Processing, RefundStatus::Success]
    );
    // Unknown ids are not found.
    let err = client.refund("dep_nope", RefundReason::UserRequested).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(!client.can_refund("dep_nope").unwrap().eligible);
}

#[test]
fn a_credited_deposit_and_a_refunded_one_are_never_refunded_again() {
    let net = net();
    let client = client(&net);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "2000000", None).id;
    assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Credited);
    let err = client.refund(&id, RefundReason::UserRequested).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refund, "{err}");
    assert!(err.message().contains("credited"), "{err}");
    let eligibility = client.can_refund(&id).unwrap();
    assert!(!eligibility.eligible && eligibility.message.contains("credited"), "{eligibility:?}");

    // Two hosts racing to refund the same deposit: exactly one refund happens.
    let client = Arc::new(client_with(&net, |mut c| {
        c.auto_sweep = false;
        c
    }));
    let sender = owner();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "3000000", Some(&sender)).id;
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (client, id) = (Arc::clone(&client), id.clone());
            std::thread::spawn(move || client.refund(&id, RefundReason::UserRequested))
        })
        .collect();
    let outcomes: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let successes = outcomes
        .iter()
        .filter(|o| o.as_ref().is_ok_and(|r| r.status == RefundStatus::Success))
        .count();
    assert_eq!(successes, 1, "{outcomes:#?}");
    for outcome in &outcomes {
        if let Err(e) = outcome {
            assert_eq!(e.kind(), ErrorKind::Refund, "{e}");
            assert!(
                e.message().contains("already being refunded")
                    || e.message().contains("already refunded"),
                "{e}"
            );
        }
    }
    assert_eq!(net.devnet.ledger_balance(&sender, 8453, TokenType::USDC).unwrap(), "2970000");
    // And the refunded deposit is never swept.
    let err = client.sweep(&id).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn an_ambiguous_refund_send_is_resolved_without_paying_twice() {
    let net = net();
    fresh_warmup(&net);
    let client = client_with(&net, |mut c| {
        c.auto_sweep = false;
        c.request_timeout_ms = 600;
        c
    });
    let sender = owner();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "6000000", Some(&sender)).id;
    // The send is held past the client's deadline, then executed by the service.
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/send"),
            &Fault::delay(Duration::from_millis(1500), 1),
        )
        .unwrap();
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Success, "{result:?}");
    std::thread::sleep(Duration::from_millis(1500)); // let the held send run
    assert_eq!(net.devnet.ledger_balance(&sender, 8453, TokenType::USDC).unwrap(), "5970000");
    let evm = client.deposit_addresses().unwrap().evm;
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "0");

    // A send whose outcome cannot be learned stays pending, and a later refund resolves that
    // same quote rather than quoting anew.
    let client = client_with(&net, |mut c| {
        c.auto_sweep = false;
        c.http_retries = 1;
        c
    });
    let sender = owner();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "7000000", Some(&sender)).id;
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &Fault::status(503, 1))
        .unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/q_"), &Fault::status(503, 100))
        .unwrap();
    let pending = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(pending.status, RefundStatus::Pending, "{pending:?}");
    let error = pending.error.clone().unwrap();
    assert!(error.contains("is unknown"), "{error}");
    let quote_id = pending.quote_id.clone().unwrap();
    // can_refund gives the answer refund acts on: admitted, resolving the same quote.
    let eligibility = client.can_refund(&id).unwrap();
    assert!(eligibility.eligible, "{eligibility:?}");
    assert!(eligibility.message.contains("resolves it with the same quote"), "{eligibility:?}");
    let err = client.sweep(&id).unwrap_err();
    assert!(err.message().contains("being refunded"), "{err}");
    net.devnet.clear_faults();
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Success, "{result:?}");
    assert_eq!(result.quote_id.as_deref(), Some(quote_id.as_str()), "the same quote");
    assert_eq!(net.devnet.ledger_balance(&sender, 8453, TokenType::USDC).unwrap(), "6970000");
}

#[test]
fn solana_deposits_need_a_solana_sender() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.auto_sweep = false;
        c
    });
    // 0.1 SOL from an EVM-looking sender: nobody to refund on Solana (the owner is EVM).
    let id = deposit_detected(&net, &client, 101, TokenType::SOL, "100000000", Some(&owner())).id;
    let eligibility = client.can_refund(&id).unwrap();
    assert!(!eligibility.eligible);
    assert_eq!(eligibility.reason, Some(RefundReason::AddressTypeMismatch));
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Skipped, "{result:?}");
    assert_eq!(result.reason, RefundReason::AddressTypeMismatch);
    assert!(result.error.as_deref().unwrap().starts_with("Address type mismatch"), "{result:?}");
    let solana = client.deposit_addresses().unwrap().solana;
    assert_eq!(net.devnet.ledger_balance(&solana, 101, TokenType::SOL).unwrap(), "100000000");
    assert_eq!(client.pending_deposits().unwrap()[0].id, id, "the money stays, the deposit too");

    // With a Solana sender: refunded to it, less the gas ($0.01 = 0.0000666… SOL).
    let id =
        deposit_detected(&net, &client, 101, TokenType::SOL, "200000000", Some(SOLANA_SENDER)).id;
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Success, "{result:?}");
    assert_eq!(result.refunded_to.as_deref(), Some(SOLANA_SENDER));
    let got = raw(&net.devnet.ledger_balance(SOLANA_SENDER, 101, TokenType::SOL).unwrap());
    assert!(got < raw("200000000") && got > raw("199900000"), "{got}");
}

#[test]
fn a_deposit_that_cannot_pay_the_gas_is_skipped_below_minimum() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.auto_sweep = false;
        c.min_value_usd = 0.0;
        c
    });
    // 0.3 USDC on Ethereum, where gas costs $0.50.
    let id = deposit_detected(&net, &client, 1, TokenType::USDC, "300000", None).id;
    let eligibility = client.can_refund(&id).unwrap();
    assert!(!eligibility.eligible, "{eligibility:?}");
    assert_eq!(eligibility.reason, Some(RefundReason::BelowMinimum));
    let result = client.refund(&id, RefundReason::UserRequested).unwrap();
    assert_eq!(result.status, RefundStatus::Skipped);
    assert_eq!(result.reason, RefundReason::BelowMinimum);
}

#[test]
fn auto_refund_waits_for_failed_sweeps_only_and_manual_sweep_still_works_after() {
    let net = net();
    let client = refund_client(&net, 1);
    // A sweep that fails twice then succeeds is credited, never refunded.
    net.devnet.fail_next_sweeps(2, SweepFaultMode::Reject);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "2000000", None).id;
    let (last, events) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Credited);
    assert!(refund_updates(&events, &id).is_empty());
    assert_eq!(client.sweep_result(&id).unwrap().unwrap().status, SweepStatus::Success);
    assert!(client.refund_result(&id).unwrap().is_none());
}

fn fresh_warmup(net: &Net) {
    // The first JWT of a fresh devnet creates its key (0.1–0.4 s): not within a short deadline.
    client(net);
}
