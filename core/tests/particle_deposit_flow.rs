//! The deposit client on the `particle` backend, end to end against devnet's Particle JSON-RPC
//! (`POST {servicesUrl}/particle`): detect → sweep → credited at the destination, a refund to
//! the deposit's sender, a recovery, with each of the three signers (a key, a seed, a host
//! callback); and detection from balance increases kept across a restart.

mod particle_support;

use depositkit_core::deposit::{
    BackendChoice, DepositClient, DepositClientConfig, DepositPhase, DestinationConfig,
    RecoveryStatus, RefundReason, RefundStatus, SweepStatus,
};
use depositkit_devnet::SweepFaultMode;
use particle_support::*;
use serde_json::json;

/// Detect → sweep → credited: the destination holds what the sweep delivered, exactly once;
/// a second deposit after the sweep is detected on its own and credited too.
fn sweep_flow(signer: SignerChoice) {
    let net = net();
    let destination = fresh_address();
    let client = DepositClient::new(config(&net, &fresh_address(), &destination, signer)).unwrap();
    let addresses = client.initialize().unwrap();
    assert!(addresses.evm.starts_with("0x") && !addresses.solana.is_empty());
    // The account is the signer's, not the owner's: the intermediary wallet.
    let wallet = client.intermediary_address().unwrap().unwrap();
    assert_ne!(wallet.to_ascii_lowercase(), client.owner_address());

    deposit_usdc(&net, &client, "25000000", None);
    let detected = poll_detected(&client);
    assert_eq!((detected.amount.as_str(), detected.chain_id), ("25", 8453));
    let credited = wait_terminal(&client, &detected.id);
    assert_eq!(credited.phase, DepositPhase::Credited, "{credited:?}");
    let sweep = client.sweep_result(&detected.id).unwrap().unwrap();
    assert_eq!(sweep.status, SweepStatus::Success, "{sweep:?}");
    let delivered: u64 = sweep.delivered.as_ref().unwrap().raw_amount.parse().unwrap();
    assert_eq!(usdc_at(&net, &destination, 42161), delivered, "delivered once");
    assert!(delivered > 24_000_000 && delivered < 25_000_000, "{delivered}");
    assert_eq!(count(&net, "universal_sendTransaction"), 1);

    // The sweep lowered the baseline: the next deposit is seen whole, nothing of the first again.
    deposit_usdc(&net, &client, "5000000", None);
    let second = poll_detected(&client);
    assert_ne!(second.id, detected.id);
    assert_eq!(second.amount, "5", "the new deposit, without what the sweep's fees left");
    assert_eq!(wait_terminal(&client, &second.id).phase, DepositPhase::Credited);
    let both = usdc_at(&net, &destination, 42161);
    assert!(both > delivered + 4_500_000 && both < delivered + 5_200_000, "{both}");
    assert_eq!(count(&net, "universal_sendTransaction"), 2);
    assert!(client.poll_now().unwrap().is_empty(), "nothing reported twice");
    client.close().unwrap();
}

#[test]
fn a_deposit_is_swept_and_credited_with_a_key() {
    sweep_flow(SignerChoice::Key);
}

#[test]
fn a_deposit_is_swept_and_credited_with_a_seed() {
    sweep_flow(SignerChoice::Seed);
}

#[test]
fn a_deposit_is_swept_and_credited_with_a_host_callback() {
    sweep_flow(SignerChoice::Callback);
}

/// A refund goes back to the deposit's sender, found in the account's history.
fn refund_flow(signer: SignerChoice) {
    let net = net();
    let mut config = config(&net, &fresh_address(), &fresh_address(), signer);
    config.auto_sweep = false;
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    let sender = checksummed(&fresh_address());
    deposit_usdc(&net, &client, "8000000", Some(&sender));
    let detected = poll_detected(&client);
    let eligibility = client.can_refund(&detected.id).unwrap();
    assert!(eligibility.eligible, "{eligibility:?}");
    assert_eq!(eligibility.refund_to_sender, Some(true), "{eligibility:?}");
    let refund = client.refund(&detected.id, RefundReason::UserRequested).unwrap();
    assert_eq!(refund.status, RefundStatus::Success, "{refund:?}");
    assert_eq!(refund.refunded_to_sender, Some(true));
    let back = usdc_at(&net, &sender, 8453);
    assert!(back > 7_500_000 && back < 8_000_000, "refunded to the sender: {back}");
    assert!(client.pending_deposits().unwrap().is_empty());
    assert_eq!(count(&net, "universal_sendTransaction"), 1);
    client.close().unwrap();
}

#[test]
fn a_deposit_is_refunded_to_its_sender_with_a_key() {
    refund_flow(SignerChoice::Key);
}

#[test]
fn a_deposit_is_refunded_to_its_sender_with_a_seed() {
    refund_flow(SignerChoice::Seed);
}

#[test]
fn a_deposit_is_refunded_to_its_sender_with_a_host_callback() {
    refund_flow(SignerChoice::Callback);
}

/// A deposit whose sweeps all failed is stuck; `recover_funds()` delivers it.
fn recovery_flow(signer: SignerChoice) {
    let net = net();
    let destination = fresh_address();
    let client = DepositClient::new(config(&net, &fresh_address(), &destination, signer)).unwrap();
    client.initialize().unwrap();
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    deposit_usdc(&net, &client, "6000000", None);
    let detected = poll_detected(&client);
    assert_eq!(wait_terminal(&client, &detected.id).phase, DepositPhase::Failed);
    assert_eq!(usdc_at(&net, &destination, 42161), 0);
    let stuck = client.stuck_funds().unwrap();
    assert_eq!(stuck.len(), 1, "{stuck:?}");
    let results = client.recover_funds().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].status, RecoveryStatus::Success, "{results:?}");
    let delivered: u64 = results[0].delivered.as_ref().unwrap().raw_amount.parse().unwrap();
    assert_eq!(usdc_at(&net, &destination, 42161), delivered);
    assert!(delivered > 5_500_000, "{delivered}");
    assert!(client.pending_deposits().unwrap().is_empty());
    assert_eq!(client.sweep_result(&detected.id).unwrap().unwrap().status, SweepStatus::Success);
    // What the recovery moved is not a new deposit.
    assert!(client.poll_now().unwrap().is_empty());
    client.close().unwrap();
}

#[test]
fn stuck_funds_are_recovered_with_a_key() {
    recovery_flow(SignerChoice::Key);
}

#[test]
fn stuck_funds_are_recovered_with_a_seed() {
    recovery_flow(SignerChoice::Seed);
}

#[test]
fn stuck_funds_are_recovered_with_a_host_callback() {
    recovery_flow(SignerChoice::Callback);
}

/// The options read from JSON (as C gives them): `backend` and `particle` with a seed.
#[test]
fn the_backend_and_its_settings_are_options_read_from_json() {
    let net = net();
    let seed = fresh_key_hex();
    let json = json!({
        "ownerAddress": fresh_address(),
        "destination": {"chainId": 42161},
        "backend": "particle",
        "particle": {
            "rpcUrl": net.devnet.particle_url(),
            "projectId": net.project_id,
            "clientKey": net.client_key,
            "signerSeed": seed,
        },
    });
    let config = DepositClientConfig::from_json(&json.to_string()).unwrap();
    assert_eq!(config.backend, BackendChoice::Particle);
    let shown = format!("{config:?}");
    for secret in [net.client_key.as_str(), seed.as_str()] {
        assert!(!shown.contains(secret), "{shown}");
    }
    let client = DepositClient::new(tune(config)).unwrap();
    let addresses = client.initialize().unwrap();
    assert!(addresses.evm.starts_with("0x"));
    // The same seed gives the same account to a second client of the owner.
    let again = DepositClientConfig::from_json(&json.to_string()).unwrap();
    let second = DepositClient::new(tune(again)).unwrap();
    assert_eq!(second.initialize().unwrap(), addresses);
    let e = DepositClientConfig::from_json(
        &json!({"ownerAddress": fresh_address(), "destination": {"chainId": 1}, "backend": "x"})
            .to_string(),
    )
    .unwrap_err();
    assert!(e.message().contains("\"devnet\" or \"particle\""), "{e}");
}

/// Detection from balance increases survives a restart on a store: the deposit found before is
/// neither lost nor reported again, and a new one is reported alone.
#[test]
fn a_restart_neither_loses_nor_reports_again_a_deposit() {
    let net = net();
    let store = std::env::temp_dir()
        .join(format!("depositkit-particle-store-{}.sqlite", rand::random::<u64>()));
    let owner = fresh_address();
    let key = fresh_key_hex();
    let make = || {
        let mut config = config(&net, &owner, &fresh_address(), SignerChoice::Key);
        config.particle.signer_key = Some(depositkit_core::deposit::Secret::new(key.clone()));
        config.auto_sweep = false;
        config.store_path = Some(store.to_string_lossy().into_owned());
        let client = DepositClient::new(config).unwrap();
        client.initialize().unwrap();
        client
    };
    let client = make();
    deposit_usdc(&net, &client, "3000000", None);
    let first = poll_detected(&client);
    assert_eq!(first.amount, "3");
    client.close().unwrap();
    drop(client);

    let client = make();
    assert!(client.poll_now().unwrap().is_empty(), "not reported again");
    let pending = client.pending_deposits().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, first.id, "not lost");
    deposit_usdc(&net, &client, "2000000", None);
    let second = poll_detected(&client);
    assert_eq!(second.amount, "2", "only the new money");
    // Swept now: both credited, once each.
    for id in [&first.id, &second.id] {
        let sweep = client.sweep(id).unwrap();
        assert_eq!(sweep.status, SweepStatus::Success, "{sweep:?}");
    }
    assert!(client.poll_now().unwrap().is_empty());
    client.close().unwrap();
    let _ = std::fs::remove_file(&store);
    let _ = std::fs::remove_file(format!("{}-lock", store.display()));
}

/// What a sweep's fees left in the account is not part of the next deposit, even when no poll
/// ran in between: the deposit is what its sender sent, its refund reaches that sender, and the
/// leftover is never reported as a deposit.
#[test]
fn a_sweeps_leftover_is_not_counted_into_the_next_deposit() {
    let net = net();
    let destination = fresh_address();
    let mut config = config(&net, &fresh_address(), &destination, SignerChoice::Key);
    config.auto_sweep = false;
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    deposit_usdc(&net, &client, "25000000", None);
    let first = poll_detected(&client);
    assert_eq!(first.amount, "25");
    let sweep = client.sweep(&first.id).unwrap();
    assert_eq!(sweep.status, SweepStatus::Success, "{sweep:?}");
    let wallet = client.deposit_addresses().unwrap().evm;
    let leftover = usdc_at(&net, &wallet, 8453);
    assert!(leftover > 0, "the sweep's fees left something behind");

    // No poll between the sweep and the next deposit.
    let sender = checksummed(&fresh_address());
    deposit_usdc(&net, &client, "5000000", Some(&sender));
    let second = poll_detected(&client);
    assert_eq!(second.amount, "5", "the deposit alone, without the sweep's leftover");
    let refund = client.refund(&second.id, RefundReason::UserRequested).unwrap();
    assert_eq!(refund.status, RefundStatus::Success, "{refund:?}");
    assert_eq!(refund.refunded_to_sender, Some(true), "{refund:?}");
    assert_eq!(refund.refunded_to.as_deref(), Some(sender.as_str()));
    let delivered = refund.delivered_amount.as_deref().unwrap();
    let delivered = depositkit_core::parse_units(delivered, 6).unwrap();
    let back = usdc_at(&net, &sender, 8453);
    assert_eq!(alloy_primitives::U256::from(back), delivered, "the sender got the refund, once");
    assert!(back > 4_500_000 && back < 5_000_000, "{back}");
    // The leftovers (the sweep's, the refund's fees') stay in the account, never a deposit.
    let left = usdc_at(&net, &wallet, 8453);
    assert!(left >= leftover && left < leftover + 10_000, "{left} after {leftover}");
    assert!(client.poll_now().unwrap().is_empty(), "no phantom deposit");
    assert!(client.pending_deposits().unwrap().is_empty());
    assert_eq!(count(&net, "universal_sendTransaction"), 2);
    client.close().unwrap();
}

/// A host signer is Particle's: given with the `devnet` backend (whose signer service signs), it
/// is refused rather than silently unused.
#[test]
fn a_host_signer_is_refused_on_the_devnet_backend() {
    let source: std::sync::Arc<dyn depositkit_core::signer::SignerSource> =
        std::sync::Arc::new(callback_signer(&fresh_key_hex()));
    let config = DepositClientConfig::new(fresh_address(), DestinationConfig::chain(42161))
        .with_signer_source(source);
    assert_eq!(config.backend, BackendChoice::Devnet);
    let Err(e) = DepositClient::new(config) else { panic!("a host signer on devnet was taken") };
    assert_eq!(e.kind(), depositkit_core::ErrorKind::Configuration);
    assert!(e.message().contains("backend \"devnet\""), "{e}");
}

fn checksummed(address: &str) -> String {
    use std::str::FromStr;
    alloy_primitives::Address::from_str(address).unwrap().to_checksum(None)
}
