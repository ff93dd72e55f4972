//! Recovery of stuck funds against an in-process devnet: what counts as stuck, and the
//! success, failed and skipped results of `recover_funds()`.

mod deposit_support;

use std::time::Duration;

use deposit_support::*;
use depositkit_core::deposit::{
    ClientStatus, DepositEvent, DepositPhase, DestinationConfig, RecoveryStatus, SweepStatus,
};
use depositkit_core::{DepositClient, ErrorKind, TokenType};
use depositkit_devnet::SweepFaultMode;

#[test]
fn a_failed_deposit_is_stuck_and_recovered_to_the_destination() {
    let net = net();
    let client = client(&net);
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "4000000", None).id;
    assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Failed);
    let stuck = client.stuck_funds().unwrap();
    assert_eq!(stuck.len(), 1, "{stuck:?}");
    assert_eq!(stuck[0].id, "recovery:usdc:8453");
    assert_eq!(
        (stuck[0].token, stuck[0].chain_id, stuck[0].amount.as_str()),
        (TokenType::USDC, 8453, "4")
    );
    assert!((stuck[0].amount_usd - 4.0).abs() < 1e-9);

    let results = client.recover_funds().unwrap();
    assert_eq!(results.len(), 1);
    let result = &results[0];
    assert_eq!(result.status, RecoveryStatus::Success, "{result:?}");
    let tx = result.tx_hash.clone().unwrap();
    assert_eq!((result.amount.as_str(), result.raw_amount.as_str()), ("4", "4000000"));
    let delivered = result.delivered.clone().unwrap();
    let at_owner =
        net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    assert_eq!(at_owner, delivered.raw_amount);
    // The failed deposit was part of it: now credited, no longer pending.
    let events = collect_until(&client, Duration::from_secs(5), |seen| {
        seen.iter().any(|e| matches!(e, DepositEvent::Recovery(_)))
    });
    let credited = events
        .iter()
        .filter_map(|e| e.lifecycle())
        .find(|e| e.id == id && e.phase == DepositPhase::Credited)
        .expect("credited event");
    assert_eq!(credited.transaction_id.as_deref(), Some(tx.as_str()));
    let json = events.iter().find(|e| e.recovery().is_some()).unwrap().to_json();
    assert_eq!(json["type"], "recovery:result");
    assert_eq!(json["payload"]["status"], "success");
    assert_eq!(json["payload"]["chainId"], 8453);
    assert_eq!(json["payload"]["txHash"], tx.as_str());
    let sweep = client.sweep_result(&id).unwrap().unwrap();
    assert_eq!((sweep.status, sweep.transaction_id.as_str()), (SweepStatus::Success, tx.as_str()));
    assert!(client.pending_deposits().unwrap().is_empty());
    assert!(client.stuck_funds().unwrap().is_empty());
    assert_eq!(client.recover_funds().unwrap(), []);
    assert_eq!(client.status(), ClientStatus::Ready);
    assert!(!client.is_recovering().unwrap());
}

#[test]
fn recovery_results_success_failed_and_skipped() {
    let net = net();
    // The watcher reports only USDC on Base; everything else sits in the account unexplained.
    // Destination Ethereum: gas there is $0.50.
    let client = {
        let mut config = config(&net, &owner(), DestinationConfig::chain(1));
        config.supported_tokens = vec![TokenType::USDC];
        config.supported_chains = vec![8453];
        let client = DepositClient::new(config).unwrap();
        client.initialize().unwrap();
        client
    };
    let evm = client.deposit_addresses().unwrap().evm;
    // A failed USDC deposit on Base ($4): recovered.
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "4000000", None).id;
    assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Failed);
    // USDT on Ethereum ($3): its send is rejected → failed.
    net.devnet.deposit(&evm, 1, TokenType::USDT, "3000000", None).unwrap();
    // ETH on Base worth $0.25: does not cover the fees → skipped.
    net.devnet.deposit(&evm, 8453, TokenType::ETH, "100000000000000", None).unwrap();
    // 0.05 USDC on Arbitrum: dust → skipped.
    net.devnet.deposit(&evm, 42161, TokenType::USDC, "50000", None).unwrap();
    let stuck = client.stuck_funds().unwrap();
    let listed: Vec<_> = stuck.iter().map(|s| (s.chain_id, s.token, s.amount.as_str())).collect();
    assert_eq!(
        listed,
        [
            (1, TokenType::USDT, "3"),
            (8453, TokenType::ETH, "0.0001"),
            (8453, TokenType::USDC, "4"),
            (42161, TokenType::USDC, "0.05"),
        ]
    );

    net.devnet.fail_next_sweeps(1, SweepFaultMode::Reject);
    let results = client.recover_funds().unwrap();
    let got: Vec<_> = results.iter().map(|r| (r.chain_id, r.token, r.status)).collect();
    assert_eq!(
        got,
        [
            (1, TokenType::USDT, RecoveryStatus::Failed),
            (8453, TokenType::ETH, RecoveryStatus::Skipped),
            (8453, TokenType::USDC, RecoveryStatus::Success),
            (42161, TokenType::USDC, RecoveryStatus::Skipped),
        ],
        "{results:#?}"
    );
    assert!(results[0].error.as_deref().unwrap().contains("ROUTE_FAILED"), "{results:?}");
    assert!(results[0].tx_hash.is_none());
    assert!(results[1].error.as_deref().unwrap().starts_with("Below minimum"), "{results:?}");
    assert!(results[2].tx_hash.is_some() && results[2].error.is_none());
    assert!(results[3].error.as_deref().unwrap().starts_with("Dust"), "{results:?}");
    // One recovery event per asset, in order.
    let events = collect_until(&client, Duration::from_secs(5), |seen| {
        seen.iter().filter(|e| e.recovery().is_some()).count() == 4
    });
    let reported: Vec<_> = events.iter().filter_map(|e| e.recovery()).cloned().collect();
    assert_eq!(reported, results);
    // What was not recovered is still there and still stuck.
    assert_eq!(net.devnet.ledger_balance(&evm, 1, TokenType::USDT).unwrap(), "3000000");
    let left: Vec<_> = client.stuck_funds().unwrap().iter().map(|s| s.id.clone()).collect();
    assert_eq!(left, ["recovery:usdt:1", "recovery:eth:8453", "recovery:usdc:42161"]);
    // A second try recovers the USDT.
    let again = client.recover_funds().unwrap();
    assert_eq!(again[0].status, RecoveryStatus::Success, "{again:?}");
}

#[test]
fn live_deposits_are_not_stuck() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.auto_sweep = false;
        c
    });
    // A deposit waiting for a manual sweep, and 0.3 USDC below the threshold.
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "3000000", None).id;
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "300000", None).unwrap();
    let stuck = client.stuck_funds().unwrap();
    assert_eq!(stuck.len(), 1);
    assert_eq!(stuck[0].amount, "0.3", "only the below-threshold money");
    // A deposit that arrives between polls is detected by the scan, not taken for stuck money.
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "2000000", None).unwrap();
    let results = client.recover_funds().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!((results[0].amount.as_str(), results[0].status), ("0.3", RecoveryStatus::Success));
    assert_eq!(client.pending_deposits().unwrap().len(), 2);
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "5000000");
    assert_eq!(client.sweep(&id).unwrap().status, SweepStatus::Success);

    // Before initialize(): a configuration error.
    let fresh = DepositClient::new(config(&net, &owner(), DestinationConfig::chain(8453))).unwrap();
    assert_eq!(fresh.stuck_funds().unwrap_err().kind(), ErrorKind::Configuration);
    assert_eq!(fresh.recover_funds().unwrap_err().kind(), ErrorKind::Configuration);
}
