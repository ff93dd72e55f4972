//! The deposit client on the `particle` backend when things go wrong, against devnet's Particle
//! JSON-RPC: a signer that no longer owns the account, a signature the service rejects, refused
//! credentials, a storm of 429s, and a send whose answer is lost — typed errors, nothing sent
//! twice, nothing lost.

mod particle_support;

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use depositkit_core::deposit::{DepositClient, DepositPhase, Secret, SweepStatus};
use depositkit_core::signer::{KeySigner, Signer};
use depositkit_core::{ErrorKind, TokenType};
use depositkit_devnet::{Fault, Service};
use particle_support::*;
use serde_json::json;

/// A client on `net` with auto-sweep off, signing with `source`.
fn manual_client(
    net: &Net,
    destination: &str,
    source: Arc<dyn depositkit_core::signer::SignerSource>,
) -> DepositClient {
    let mut config =
        config(net, &fresh_address(), destination, SignerChoice::Key).with_signer_source(source);
    config.auto_sweep = false;
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    client
}

fn key() -> KeySigner {
    KeySigner::from_hex(&fresh_key_hex()).unwrap()
}

#[test]
fn a_signer_that_does_not_own_the_account_is_refused_and_nothing_is_sent() {
    let net = net();
    let destination = fresh_address();
    let (owner_key, other_key) = (key(), key());
    let switching = Switching {
        first: Arc::new(owner_key.clone()),
        then: Arc::new(other_key.clone()),
        calls: AtomicUsize::new(0),
        opens: 1,
    };
    let client = manual_client(&net, &destination, Arc::new(switching));
    deposit_usdc(&net, &client, "10000000", None);
    let detected = poll_detected(&client);
    let sweep = client.sweep(&detected.id).unwrap();
    assert_eq!(sweep.status, SweepStatus::Failed, "{sweep:?}");
    let error = sweep.error.unwrap();
    assert!(error.contains("is owned by"), "{error}");
    assert!(error.contains(&owner_key.address().to_checksum(None)), "{error}");
    assert!(error.contains(&other_key.address().to_checksum(None)), "{error}");
    assert_eq!(count(&net, "universal_sendTransaction"), 0, "nothing sent");
    let evm = client.deposit_addresses().unwrap().evm;
    assert_eq!(usdc_at(&net, &evm, 8453), 10_000_000, "the money stays in the account");
    assert_eq!(usdc_at(&net, &destination, 42161), 0);
}

#[test]
fn a_signature_the_service_rejects_moves_nothing() {
    let net = net();
    let destination = fresh_address();
    let claimed = key();
    let impostor = Impostor { address: claimed.address(), key: key() };
    let client = manual_client(&net, &destination, Arc::new(impostor));
    assert_eq!(
        client.intermediary_address().unwrap().unwrap(),
        claimed.address().to_checksum(None)
    );
    deposit_usdc(&net, &client, "10000000", None);
    let detected = poll_detected(&client);
    let sweep = client.sweep(&detected.id).unwrap();
    assert_eq!(sweep.status, SweepStatus::Failed, "{sweep:?}");
    let error = sweep.error.unwrap();
    assert!(error.contains("-32655"), "the service's refusal: {error}");
    assert_eq!(count(&net, "universal_sendTransaction"), 1, "sent once, refused");
    let evm = client.deposit_addresses().unwrap().evm;
    assert_eq!(usdc_at(&net, &evm, 8453), 10_000_000);
    assert_eq!(usdc_at(&net, &destination, 42161), 0);
    // Nothing was delivered, so the deposit can still be swept or refunded.
    assert_eq!(client.pending_deposits().unwrap().len(), 1);
}

#[test]
fn refused_credentials_are_an_authentication_error() {
    let net = net();
    let mut config = config(&net, &fresh_address(), &fresh_address(), SignerChoice::Key);
    config.particle.client_key = Some(Secret::new("not-the-key-of-this-project"));
    let client = DepositClient::new(config).unwrap();
    let e = client.initialize().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(!e.message().contains("not-the-key-of-this-project"), "{e}");

    // A 401 from the service (a proxy) on a read is one too.
    let client = DepositClient::new(config_ok(&net)).unwrap();
    client.initialize().unwrap();
    net.devnet
        .inject_service_fault_at(
            Service::Particle,
            Some("/universal_getPrimaryAssets"),
            &Fault::status(401, 1),
        )
        .unwrap();
    let e = client.poll_now().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
    assert!(e.message().contains("401"), "{e}");
}

fn config_ok(net: &Net) -> depositkit_core::deposit::DepositClientConfig {
    config(net, &fresh_address(), &fresh_address(), SignerChoice::Seed)
}

#[test]
fn reads_ride_out_a_few_429s_and_a_storm_is_a_rate_limit_error() {
    let net = net();
    let mut config = config_ok(&net);
    config.auto_sweep = false;
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    deposit_usdc(&net, &client, "4000000", None);
    let assets = "/universal_getPrimaryAssets";
    // Two 429s: the poll's read is retried (httpRetries = 3) and the deposit found.
    net.devnet
        .inject_service_fault_at(Service::Particle, Some(assets), &Fault::status(429, 2))
        .unwrap();
    let before = count(&net, "universal_getPrimaryAssets");
    let detected = poll_detected(&client);
    assert_eq!(detected.amount, "4");
    assert_eq!(count(&net, "universal_getPrimaryAssets") - before, 3, "two refused, one read");
    // A storm: the retries run out, a typed rate-limit error, nothing detected twice.
    net.devnet
        .inject_service_fault_at(Service::Particle, Some(assets), &Fault::status(429, 100))
        .unwrap();
    let before = count(&net, "universal_getPrimaryAssets");
    let e = client.poll_now().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network, "{e}");
    assert!(e.message().contains("429"), "{e}");
    assert_eq!(count(&net, "universal_getPrimaryAssets") - before, 4, "1 + 3 retries");
    net.devnet
        .inject_service_fault_at(Service::Particle, Some(assets), &Fault::status(429, 1))
        .unwrap();
    assert!(client.poll_now().unwrap().is_empty());
    assert_eq!(client.pending_deposits().unwrap().len(), 1);
}

#[test]
fn a_send_whose_answer_is_lost_is_looked_up_and_never_sent_again() {
    let net = net();
    let destination = fresh_address();
    let client =
        DepositClient::new(config(&net, &fresh_address(), &destination, SignerChoice::Callback))
            .unwrap();
    client.initialize().unwrap();
    // The next send runs, then its answer is lost (HTTP 504 instead of the result).
    let url = format!("{}/devnet/particle/lose-answers", net.devnet.services_url());
    ureq::post(&url).send_json(json!({"method": "universal_sendTransaction", "count": 1})).unwrap();
    deposit_usdc(&net, &client, "12000000", None);
    let detected = poll_detected(&client);
    let credited = wait_terminal(&client, &detected.id);
    assert_eq!(credited.phase, DepositPhase::Credited, "{credited:?}");
    let sends: Vec<String> = methods(&net)
        .into_iter()
        .filter(|m| m == "universal_sendTransaction" || m == "universal_getTransaction")
        .collect();
    assert_eq!(
        sends[..2],
        ["universal_sendTransaction", "universal_getTransaction"],
        "looked up by its transaction id before anything else"
    );
    assert_eq!(count(&net, "universal_sendTransaction"), 1, "sent once");
    let sweep = client.sweep_result(&detected.id).unwrap().unwrap();
    let delivered: u64 = sweep.delivered.unwrap().raw_amount.parse().unwrap();
    assert_eq!(usdc_at(&net, &destination, 42161), delivered, "delivered once");
    let evm = client.deposit_addresses().unwrap().evm;
    let left = net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap();
    assert!(left.parse::<u64>().unwrap() < 200_000, "swept once: {left} left");
}

/// A send whose answer is lost while its status cannot be read either: the deposit waits,
/// unresolved, in the store. A new client on that store looks the transaction up before
/// anything else, finds it executed, and credits it: sent once, delivered once.
#[test]
fn an_unresolved_send_is_looked_up_after_a_restart_and_never_sent_again() {
    let net = net();
    let destination = fresh_address();
    let owner = fresh_address();
    let key = fresh_key_hex();
    let store = std::env::temp_dir()
        .join(format!("depositkit-particle-unresolved-{}.sqlite", rand::random::<u64>()));
    let make = || {
        let mut config = config(&net, &owner, &destination, SignerChoice::Key);
        config.particle.signer_key = Some(Secret::new(key.clone()));
        config.store_path = Some(store.to_string_lossy().into_owned());
        // No automatic reconciliation during the test: the restart resolves it.
        config.reconcile_interval_ms = 24 * 60 * 60 * 1000;
        let client = DepositClient::new(config).unwrap();
        client.initialize().unwrap();
        client
    };
    let client = make();
    let url = format!("{}/devnet/particle/lose-answers", net.devnet.services_url());
    ureq::post(&url).send_json(json!({"method": "universal_sendTransaction", "count": 1})).unwrap();
    net.devnet
        .inject_service_fault_at(
            Service::Particle,
            Some("/universal_getTransaction"),
            &Fault::status(503, 1000),
        )
        .unwrap();
    deposit_usdc(&net, &client, "9000000", None);
    let detected = poll_detected(&client);
    let failed = wait_terminal(&client, &detected.id);
    assert_eq!(failed.phase, DepositPhase::Failed);
    assert!(failed.error.as_deref().unwrap_or_default().contains("unknown"), "{failed:?}");
    assert_eq!(count(&net, "universal_sendTransaction"), 1);
    let delivered = usdc_at(&net, &destination, 42161);
    assert!(delivered > 8_500_000, "it ran: {delivered}");
    client.close().unwrap();
    drop(client);
    net.devnet.clear_faults();

    let lookups = count(&net, "universal_getTransaction");
    let client = make();
    let credited = wait_terminal(&client, &detected.id);
    assert_eq!(credited.phase, DepositPhase::Credited, "{credited:?}");
    assert!(count(&net, "universal_getTransaction") > lookups, "looked up");
    assert_eq!(count(&net, "universal_sendTransaction"), 1, "never sent again");
    assert_eq!(usdc_at(&net, &destination, 42161), delivered, "delivered once");
    assert!(client.pending_deposits().unwrap().is_empty());
    client.close().unwrap();
    let _ = std::fs::remove_file(&store);
    let _ = std::fs::remove_file(format!("{}-lock", store.display()));
}
