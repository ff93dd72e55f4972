//! The `particle` backend against devnet's Particle JSON-RPC (`POST {servicesUrl}/particle`,
//! `docs/protocol.md` §6), the real counterpart of the client (the loopback server of
//! `particle_rpc.rs` keeps the faults devnet does not make: a connection dropped after the
//! request, a JSON-RPC rate limit, echoed credentials).
//!
//! - depositkit sends, for each operation, the request Particle's own SDK sends — recorded in
//!   the same run on the same devnet — and sees the same addresses, balances and transactions;
//! - a deposit swept and one refunded through the deposit engine's interface with a per-owner
//!   key, delivered on devnet's ledger;
//! - a send refused before it ran (503) looked up and sent once more, a signature from another
//!   key refused by the service.
//!
//! The SDK runs under node from `tests/particle/node_modules` (`tests/particle/install.sh`, a
//! `scripts/test.sh` step); a missing install fails the test, never skips it.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use alloy_primitives::hex;
use depositkit_core::runtime::Runtime;
use depositkit_core::services::particle::{
    Credentials, ErrorClass, EvmCall, ExpectToken, ParticleBackend, ParticleClient, ParticleConfig,
    ParticleEndpoint, SendOutcome, TokenRef, TransferRequest, UniversalRequest, amounts,
};
use depositkit_core::services::{
    AccountBackend, QuoteDestination, QuotePurpose, QuoteRequest, QuoteSource, SendFailure,
    SendStatus,
};
use depositkit_core::signer::{KeySigner, SeedSigner, Signer};
use depositkit_core::{ErrorKind, TokenType, U256};
use depositkit_devnet::services::particle::log::shape;
use depositkit_devnet::{Devnet, DevnetConfig, Fault, RunningDevnet, Service};
use serde_json::{Value, json};

const USDC_BASE: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const USDC_ARBITRUM: &str = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831";

/// A devnet on loopback with its database in a temporary folder, removed on drop.
struct Net {
    devnet: RunningDevnet,
    dir: PathBuf,
    project: (String, String),
}

impl Drop for Net {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn net() -> Net {
    let dir = std::env::temp_dir().join(format!(
        "depositkit-particle-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let config = DevnetConfig::new(dir.join("devnet.sqlite")).with_fault_injection();
    let devnet = Devnet::start(config).unwrap();
    let project = devnet.store().create_project("depositkit particle").unwrap();
    Net { devnet, dir, project: (project.project_id, project.server_key) }
}

fn client(net: &Net) -> ParticleClient {
    ParticleClient::new(ParticleConfig {
        endpoint: Some(ParticleEndpoint::Url(net.devnet.particle_url())),
        credentials: Some(Credentials::new(&net.project.0, &net.project.1).unwrap()),
        ..Default::default()
    })
    .unwrap()
}

fn run<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> T {
    Runtime::shared().unwrap().block_on("test", Duration::from_secs(60), future).unwrap()
}

/// A random address (not an account's).
fn fresh_address() -> String {
    hex::encode_prefixed(rand::random::<[u8; 20]>())
}

/// A random key and its hex.
fn fresh_key() -> (KeySigner, String) {
    loop {
        let bytes = rand::random::<[u8; 32]>();
        if let Ok(signer) = KeySigner::from_bytes(&bytes) {
            return (signer, hex::encode_prefixed(bytes));
        }
    }
}

/// Runs `tests/particle/sdk-run.mjs` (Particle's SDK 2.0.3) with `config`; its report.
fn run_sdk(config: &Value) -> Value {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/particle");
    assert!(
        dir.join("node_modules/@particle-network/universal-account-sdk/package.json").is_file(),
        "Particle's SDK is not installed: run tests/particle/install.sh (scripts/test.sh does)"
    );
    let mut child = Command::new("node")
        .arg(dir.join("sdk-run.mjs"))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node (needed for Particle's SDK): {e}"));
    child.stdin.take().unwrap().write_all(config.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "no report from the SDK ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(output.status.success() && report["ok"] == true, "the SDK failed: {report}");
    report
}

/// `(chainId, tokenType, rawAmount)` of every line with money, sorted.
fn lines(list: impl IntoIterator<Item = (u64, String, String)>) -> Vec<(u64, String, String)> {
    let mut out: Vec<_> = list.into_iter().filter(|(_, _, raw)| raw != "0").collect();
    out.sort();
    out
}

#[test]
fn depositkit_sends_what_particles_sdk_sends_and_sees_what_it_sees() {
    let net = net();
    let devnet = &net.devnet;
    let client = client(&net);
    let (signer, key_hex) = fresh_key();
    let owner = signer.address().to_checksum(None);
    // The account, opened by depositkit, funded on devnet.
    let account = run({
        let (client, owner) = (client.clone(), owner.clone());
        async move { client.open(&owner).await.unwrap() }
    });
    let evm = account.smart_account_address.clone().unwrap();
    let solana = account.solana_smart_account_address.clone().unwrap();
    devnet.deposit(&evm, 8453, TokenType::USDC, "40000000", Some(&fresh_address())).unwrap();
    devnet.deposit(&evm, 42161, TokenType::ETH, "20000000000000000", None).unwrap();
    devnet.deposit(&solana, 101, TokenType::SOL, "1500000000", None).unwrap();
    let (receiver, receiver2) = (fresh_address(), fresh_address());

    // Particle's SDK, then depositkit, the same operations in the same order.
    let before_sdk = devnet.particle_requests().len();
    let report = run_sdk(&json!({
        "rpcUrl": devnet.particle_url(),
        "projectId": net.project.0,
        "projectClientKey": net.project.1,
        "ownerKey": key_hex,
        "transfer": {"chainId": 8453, "address": USDC_BASE, "amount": "5", "receiver": receiver},
        "universal": {"chainId": 42161, "type": "usdc", "address": USDC_ARBITRUM, "decimals": 6,
                      "amount": "3", "receiver": receiver2},
        "tokenTransactions": {"chainId": 8453, "address": USDC_BASE},
    }));
    let before_ours = devnet.particle_requests().len();
    let ours = run({
        let (client, owner, receiver, receiver2) =
            (client.clone(), owner.clone(), receiver.clone(), receiver2.clone());
        async move {
            let account = client.open(&owner).await.unwrap();
            let assets = client.primary_assets(&account).await.unwrap();
            let transfer = TransferRequest {
                token: TokenRef { chain_id: 8453, address: USDC_BASE.into() },
                amount: amounts::parse_decimal("5").unwrap(),
                receiver,
            };
            let mut sent = Vec::new();
            let created = client.create_transfer(&account, &transfer).await.unwrap();
            let signature = signer.personal_sign(&created.signing.root_hash).unwrap();
            sent.push(client.send(&created, &signature, &[]).await.unwrap());
            client.transaction(&created.transaction_id).await.unwrap();
            let three = U256::from(3_000_000u64);
            let receiver2 = receiver2.parse().unwrap();
            let calldata = depositkit_core::chain::erc20::transfer_calldata(receiver2, three);
            let universal = UniversalRequest {
                chain_id: 42161,
                expect_tokens: vec![ExpectToken {
                    kind: "usdc".into(),
                    amount: amounts::parse_decimal("3").unwrap(),
                }],
                transactions: vec![EvmCall::new(USDC_ARBITRUM, &calldata, U256::ZERO)],
            };
            let created = client.create_universal(&account, &universal).await.unwrap();
            let signature = signer.personal_sign(&created.signing.root_hash).unwrap();
            sent.push(client.send(&created, &signature, &[]).await.unwrap());
            client.transaction(&created.transaction_id).await.unwrap();
            let history = client.transactions(&account, 1, 100, None).await.unwrap();
            let base_usdc = TokenRef { chain_id: 8453, address: USDC_BASE.into() };
            client.token_transactions(&account, &base_usdc, None).await.unwrap();
            client.primary_assets(&account).await.unwrap();
            (account, assets, sent, history)
        }
    });
    let (account, assets, sent, history) = ours;
    let log = devnet.particle_requests();
    let (sdk_requests, our_requests) = (&log[before_sdk..before_ours], &log[before_ours..]);

    // The same requests: method, body keys in order, each parameter's JSON kind, headers.
    assert_eq!(sdk_requests.len(), 11, "{sdk_requests:#?}");
    assert_eq!(our_requests.len(), sdk_requests.len());
    for (sdk, ours) in sdk_requests.iter().zip(our_requests) {
        assert_eq!(shape(ours), shape(sdk), "\nours: {ours}\nsdk:  {sdk}");
        let user_agent = ours["headers"]["user-agent"].as_str().unwrap_or_default();
        assert!(user_agent.starts_with("depositkit/"), "{ours}");
    }
    // The same addresses, balances and transactions.
    assert_eq!(report["owner"], owner);
    assert_eq!(report["addresses"], json!({"evm": evm, "solana": solana}));
    let sdk_lines = lines(report["balances"].as_array().unwrap().iter().map(|l| {
        (
            l["chainId"].as_u64().unwrap(),
            l["tokenType"].as_str().unwrap().to_owned(),
            l["rawAmount"].as_str().unwrap().to_owned(),
        )
    }));
    let our_lines = lines(assets.assets.iter().flat_map(|a| {
        a.chains.iter().map(|c| (c.chain_id, a.token_type.clone(), c.raw_amount.to_string()))
    }));
    assert_eq!(our_lines, sdk_lines);
    assert!(our_lines.contains(&(101, "sol".into(), "1500000000".into())), "{our_lines:?}");
    let ours: Vec<String> = history.transactions.iter().map(|t| t.transaction_id.clone()).collect();
    let sdk: Vec<String> = serde_json::from_value(report["transactions"].clone()).unwrap();
    assert_eq!(
        ours.len(),
        sdk.len() + 2,
        "our two sends on top of the SDK's view: {ours:?} {sdk:?}"
    );
    assert_eq!(ours[2..], sdk[..]);
    // Both of our sends were taken and delivered, once.
    for outcome in &sent {
        assert!(
            matches!(outcome, SendOutcome::Accepted(a) if a.result["status"] == 7),
            "{outcome:?}"
        );
    }
    assert_eq!(devnet.ledger_balance(&receiver, 8453, TokenType::USDC).unwrap(), "10000000");
    assert_eq!(devnet.ledger_balance(&receiver2, 42161, TokenType::USDC).unwrap(), "6000000");
    assert_eq!(account.smart_account_address.as_deref(), Some(evm.as_str()));
}

fn quote_request(
    source: (u64, &str, u64),
    destination: (u64, &str, &str),
    purpose: QuotePurpose,
) -> QuoteRequest {
    QuoteRequest {
        account_id: String::new(),
        source: QuoteSource {
            chain_id: source.0,
            token: source.1.into(),
            raw_amount: U256::from(source.2),
        },
        destination: QuoteDestination {
            chain_id: destination.0,
            token: destination.1.into(),
            address: destination.2.into(),
        },
        purpose,
        deposit_id: None,
    }
}

#[test]
fn a_deposit_is_swept_and_another_refunded_with_a_per_owner_key() {
    let net = net();
    let devnet = &net.devnet;
    let seed = SeedSigner::from_bytes(&rand::random::<[u8; 32]>()).unwrap();
    let owner = fresh_address();
    let expected_signer = seed.derive(&owner).unwrap().address().to_checksum(None);
    let backend: Arc<dyn AccountBackend> =
        Arc::new(ParticleBackend::new(client(&net), Arc::new(seed)));
    let account = run({
        let (backend, owner) = (Arc::clone(&backend), owner.clone());
        async move { backend.open_account(&owner).await.unwrap() }
    });
    assert_eq!(account.signer_address, expected_signer);
    let sender = fresh_address();
    devnet.deposit(&account.evm_address, 8453, TokenType::USDC, "25000000", Some(&sender)).unwrap();
    devnet
        .deposit(&account.evm_address, 42161, TokenType::USDT, "10000000", Some(&sender))
        .unwrap();

    let receiver = fresh_address();
    let (balances, swept, refunded) = run({
        let (backend, account, receiver, sender) =
            (Arc::clone(&backend), account.clone(), receiver.clone(), sender.clone());
        async move {
            let balances = backend.balances(std::slice::from_ref(&account)).await;
            let mut outcomes = Vec::new();
            let requests = [
                quote_request(
                    (8453, "USDC", 25_000_000),
                    (42161, "USDC", &receiver),
                    QuotePurpose::Sweep,
                ),
                quote_request(
                    (42161, "USDT", 10_000_000),
                    (42161, "USDT", &sender),
                    QuotePurpose::Refund,
                ),
            ];
            for request in &requests {
                let prepared = backend.quote(&account, request).await.unwrap();
                let signature = backend.sign(&account, &prepared).await.unwrap();
                let sent = backend.send_once(&account, &prepared, &signature).await.unwrap();
                let status = backend.send_status(&account, &prepared).await.unwrap().unwrap();
                outcomes.push((prepared, sent, status));
            }
            let refunded = outcomes.pop().unwrap();
            (balances, outcomes.pop().unwrap(), refunded)
        }
    });
    let lines = balances.into_iter().next().unwrap().unwrap();
    let usdc = lines.iter().find(|l| l.token == "USDC" && l.chain_id == 8453).unwrap();
    assert_eq!(
        (usdc.decimals, usdc.raw_amount, usdc.received),
        (6, U256::from(25_000_000u64), None)
    );
    assert!((usdc.value_usd - 25.0).abs() < 1e-9, "{usdc:?}");
    for ((prepared, sent, status), (address, chain_id, token)) in [
        (&swept, (&receiver, 42161, TokenType::USDC)),
        (&refunded, (&sender, 42161, TokenType::USDT)),
    ] {
        assert_eq!(sent.status, SendStatus::Success, "{sent:?}");
        assert_eq!(status.status, SendStatus::Success, "{status:?}");
        assert_eq!(sent.quote_id, prepared.quote.quote_id);
        let delivered = devnet.ledger_balance(address, chain_id, token).unwrap();
        assert_eq!(delivered, prepared.quote.destination_raw_amount.to_string(), "{prepared:?}");
        assert_eq!(sent.delivered_raw_amount.as_deref(), Some(delivered.as_str()));
    }
    // The sweep delivers the deposit's value less its fees (gas $0.03, 0.2 % LP and the own
    // project's 1 % service fee, on what is spent: at most $24.67) and leaves little behind.
    let delivered = swept.0.quote.destination_raw_amount;
    assert!(delivered > U256::from(24_550_000u64), "{:?}", swept.0.quote);
    let left = devnet.ledger_balance(&account.evm_address, 8453, TokenType::USDC).unwrap();
    assert!(left.parse::<u64>().unwrap() < 150_000, "left in the account: {left}");
}

#[test]
fn a_send_refused_before_it_ran_is_looked_up_and_sent_once_more() {
    let net = net();
    let devnet = &net.devnet;
    let client = client(&net);
    let (signer, _) = fresh_key();
    let owner = signer.address().to_checksum(None);
    let account = run({
        let (client, owner) = (client.clone(), owner.clone());
        async move { client.open(&owner).await.unwrap() }
    });
    let evm = account.smart_account_address.clone().unwrap();
    devnet.deposit(&evm, 8453, TokenType::USDC, "20000000", None).unwrap();
    let receiver = fresh_address();
    devnet
        .inject_service_fault_at(
            Service::Particle,
            Some("/universal_sendTransaction"),
            &Fault::status(503, 1),
        )
        .unwrap();
    let (outcome, wrong_key) = run({
        let receiver = receiver.clone();
        async move {
            let transfer = TransferRequest {
                token: TokenRef::of(TokenType::USDC, 8453).unwrap(),
                amount: amounts::wire_from_raw(U256::from(5_000_000u64), 6).unwrap(),
                receiver,
            };
            let created = client.create_transfer(&account, &transfer).await.unwrap();
            let signature = signer.personal_sign(&created.signing.root_hash).unwrap();
            let outcome = client.send(&created, &signature, &[]).await.unwrap();
            // Another transaction signed by another key: the service refuses it.
            let created = client.create_transfer(&account, &transfer).await.unwrap();
            let (other, _) = fresh_key();
            let signature = other.personal_sign(&created.signing.root_hash).unwrap();
            let wrong_key = client.send_once(&created, &signature, &[]).await.unwrap_err();
            (outcome, wrong_key)
        }
    });
    assert!(
        matches!(outcome, SendOutcome::Accepted(ref a) if a.result["status"] == 7),
        "{outcome:?}"
    );
    let methods: Vec<String> = devnet
        .particle_requests()
        .iter()
        .filter_map(|r| r["method"].as_str().map(str::to_owned))
        .filter(|m| m.ends_with("Transaction"))
        .collect();
    assert_eq!(
        methods[..4],
        [
            "universal_createTransaction",
            "universal_sendTransaction",
            "universal_getTransaction",
            "universal_sendTransaction"
        ]
    );
    assert_eq!(
        devnet.ledger_balance(&receiver, 8453, TokenType::USDC).unwrap(),
        "5000000",
        "sent once"
    );
    let SendFailure::Refused(error) = wrong_key else { panic!("{wrong_key:?}") };
    assert_eq!(
        (error.kind(), ErrorClass::of(&error)),
        (ErrorKind::Authentication, Some(ErrorClass::SignatureRejected)),
        "{error}"
    );
}
