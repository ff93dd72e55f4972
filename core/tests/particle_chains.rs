//! The deposit client on the `particle` backend against the **chain-backed** devnet: a real
//! ERC-20 USDC transfer on the local Base anvil into the client's deposit address is detected
//! through devnet's Particle JSON-RPC, swept and credited on the Arbitrum anvil (read there with
//! `balanceOf`), sent once; so is USDC arriving at the Solana deposit address on the local SVM;
//! and a transfer to another client is refunded to its sender on the chain.
//!
//! One devnet serves the binary's one test: two devnets on the same chains would race for the
//! vault's nonces (`funding_flow.rs` explains).

mod chains_support;
mod particle_support;

use std::time::{Duration, Instant};

use alloy_primitives::U256;
use alloy_primitives::hex::encode_prefixed;
use chains_support::{Chains, chains, eip55};
use depositkit_core::chain::erc20;
use depositkit_core::deposit::{
    DepositClient, DepositLifecycleEvent, DepositPhase, RefundReason, RefundStatus, SweepStatus,
};
use depositkit_core::units::parse_units;
use particle_support::*;
use serde_json::json;

// anvil development accounts sending the deposits (account 0 deployed the tokens).
const SWEPT_SENDER: usize = 4;
const REFUNDED_SENDER: usize = 5;

/// Sends `raw` USDC on Base from the unlocked development account `from` to `to` with the
/// token's `transfer` (minted to `from` first); waits until mined.
fn transfer_usdc(chains: &Chains, from: &str, to: &str, raw: u64) {
    let usdc = chains.token(8453, "USDC");
    chains.mint_erc20(8453, &usdc, from, from, U256::from(raw));
    let data = erc20::transfer_calldata(to.parse().unwrap(), U256::from(raw));
    let tx = json!({"from": from, "to": usdc, "data": encode_prefixed(data)});
    let node = chains.evm(8453);
    let hash = node.send_transaction(&tx).unwrap();
    assert!(node.wait_for_receipt(hash, Duration::from_secs(10)).unwrap().status, "reverted");
}

/// Polls until a deposit is detected (devnet reads the chain); that event.
fn wait_detected(client: &DepositClient) -> DepositLifecycleEvent {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let events = client.poll_now().unwrap();
        if let Some(event) = events.into_iter().find(|e| e.phase == DepositPhase::Detected) {
            return event;
        }
        assert!(Instant::now() < deadline, "no deposit detected within 20 s");
    }
}

/// Waits for the deposit of `(amount, chain id)` to be detected, then credited by a successful
/// sweep; what that sweep says it delivered, in smallest units.
fn wait_credited(client: &DepositClient, deposit: (&str, u64)) -> U256 {
    let detected = wait_detected(client);
    assert_eq!((detected.amount.as_str(), detected.chain_id), deposit, "{detected:?}");
    let credited = wait_terminal(client, &detected.id);
    assert_eq!(credited.phase, DepositPhase::Credited, "{credited:?}");
    let sweep = client.sweep_result(&detected.id).unwrap().unwrap();
    assert_eq!(sweep.status, SweepStatus::Success, "{sweep:?}");
    sweep.delivered.as_ref().unwrap().raw_amount.parse().unwrap()
}

#[test]
fn usdc_on_base_and_solana_is_credited_on_arbitrum_and_a_refund_reaches_its_sender() {
    let chains = chains();
    let net = net_with(|config| config.with_chains(chains.devnet_config()));
    let usdc_base = chains.token(8453, "USDC");
    let usdc_arbitrum = chains.token(42161, "USDC");

    // Swept: 25 USDC from a wallet on Base arrive at the destination on Arbitrum, once.
    let destination = fresh_address();
    let client =
        DepositClient::new(config(&net, &fresh_address(), &destination, SignerChoice::Key))
            .unwrap();
    let deposit_address = client.initialize().unwrap().evm;
    transfer_usdc(chains, &chains.dev_account(SWEPT_SENDER), &deposit_address, 25_000_000);
    let delivered = wait_credited(&client, ("25", 8453));
    let held = chains.erc20_balance(42161, &usdc_arbitrum, &destination);
    assert_eq!(held, delivered, "what the sweep reports is what the chain holds");
    assert!(held > U256::from(24_000_000u64) && held < U256::from(25_000_000u64), "{held}");
    // The sweep's fees leave at most dust behind (docs/particle.md §7, "A sweep's leftover").
    let leftover = chains.erc20_balance(8453, &usdc_base, &deposit_address);
    assert!(leftover < U256::from(100_000u64), "collected: {leftover} left");
    assert_eq!(count(&net, "universal_sendTransaction"), 1, "sent once");
    assert!(client.poll_now().unwrap().is_empty(), "nothing reported twice");

    // Swept from the SVM: 10 USDC arrive at the Solana deposit address (its token account on
    // the local Solana node) and are delivered to the same destination on Arbitrum.
    let (usdc_solana, solana_address) =
        (chains.token(101, "USDC"), client.deposit_addresses().unwrap().solana);
    let solana_address = solana_address.parse().unwrap();
    chains.mint_spl(&usdc_solana, &solana_address, 10_000_000);
    let delivered = wait_credited(&client, ("10", 101));
    let both = chains.erc20_balance(42161, &usdc_arbitrum, &destination);
    assert_eq!(both, held + delivered, "what the sweeps report is what the chain holds");
    assert!(delivered > U256::from(9_000_000u64) && delivered < U256::from(10_000_000u64));
    let leftover = chains.spl_balance(&usdc_solana, &solana_address);
    assert!(leftover < 100_000, "collected: {leftover} left");
    assert_eq!(count(&net, "universal_sendTransaction"), 2, "sent once");
    client.close().unwrap();

    // Refunded: 8 USDC go back to the wallet that sent them, on Base, less the gas.
    let mut refunding = config(&net, &fresh_address(), &fresh_address(), SignerChoice::Seed);
    refunding.auto_sweep = false;
    let client = DepositClient::new(refunding).unwrap();
    let deposit_address = client.initialize().unwrap().evm;
    let sender = eip55(&chains.dev_account(REFUNDED_SENDER));
    transfer_usdc(chains, &sender, &deposit_address, 8_000_000);
    let before = chains.erc20_balance(8453, &usdc_base, &sender);
    let detected = wait_detected(&client);
    let refund = client.refund(&detected.id, RefundReason::UserRequested).unwrap();
    assert_eq!(refund.status, RefundStatus::Success, "{refund:?}");
    assert_eq!(refund.refunded_to_sender, Some(true), "{refund:?}");
    assert_eq!(refund.refunded_to.as_deref().map(eip55), Some(sender.clone()), "{refund:?}");
    // The sender holds again what the refund says it got: the 8 USDC less the gas.
    let back = chains.erc20_balance(8453, &usdc_base, &sender) - before;
    let said = parse_units(refund.delivered_amount.as_deref().unwrap(), 6).unwrap();
    assert_eq!(back, said, "{refund:?}");
    assert!(back > U256::from(7_900_000u64) && back < U256::from(8_000_000u64), "{back}");
    let leftover = chains.erc20_balance(8453, &usdc_base, &deposit_address);
    assert!(leftover < U256::from(100_000u64), "collected: {leftover} left");
    assert!(client.pending_deposits().unwrap().is_empty());
    assert_eq!(count(&net, "universal_sendTransaction"), 3, "the refund sent once");
    client.close().unwrap();
}
