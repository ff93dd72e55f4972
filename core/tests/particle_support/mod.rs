//! Shared fixtures of the deposit client's tests on the `particle` backend: an in-process
//! devnet serving Particle's JSON-RPC with a project of its own, the three signers, clients
//! configured for fast tests, and readers of devnet's request log.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use alloy_primitives::{B256, hex};
use depositkit_core::deposit::{
    BackendChoice, DepositClient, DepositClientConfig, DepositLifecycleEvent, DepositPhase,
    DestinationConfig, ParticleOptions, Secret,
};
use depositkit_core::signer::{CallbackInput, CallbackSigner, KeySigner, Signer, SignerSource};
use depositkit_devnet::{Devnet, DevnetConfig, RunningDevnet};

/// A devnet on loopback with a Particle project, its database removed on drop.
pub struct Net {
    pub devnet: RunningDevnet,
    dir: PathBuf,
    pub project_id: String,
    pub client_key: String,
}

impl Drop for Net {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn net() -> Net {
    net_with(|config| config)
}

/// A devnet like [`net`]'s with `configure` applied to its configuration first (e.g.
/// `with_chains`, for a chain-backed devnet).
pub fn net_with(configure: impl FnOnce(DevnetConfig) -> DevnetConfig) -> Net {
    let dir = std::env::temp_dir().join(format!(
        "depositkit-particle-flow-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let config = configure(DevnetConfig::new(dir.join("devnet.sqlite")).with_fault_injection());
    let devnet = Devnet::start(config).unwrap_or_else(|e| panic!("devnet: {e}"));
    let project = devnet.store().create_project("depositkit particle flow").unwrap();
    Net { devnet, dir, project_id: project.project_id, client_key: project.server_key }
}

/// A random address (no account's).
pub fn fresh_address() -> String {
    hex::encode_prefixed(rand::random::<[u8; 20]>())
}

/// A random secp256k1 key as 64 hex digits.
pub fn fresh_key_hex() -> String {
    loop {
        let bytes = rand::random::<[u8; 32]>();
        if KeySigner::from_bytes(&bytes).is_ok() {
            return hex::encode(bytes);
        }
    }
}

/// Which of the three signers a client is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignerChoice {
    /// `particle.signerKey`.
    Key,
    /// `particle.signerSeed`.
    Seed,
    /// A host callback (`with_signer_source`) over a key it keeps.
    Callback,
}

/// A callback signer over `key`: the host gets the root and signs it with `personal_sign`.
pub fn callback_signer(key: &str) -> CallbackSigner {
    let key = KeySigner::from_hex(key).unwrap();
    let address = key.address().to_checksum(None);
    CallbackSigner::new(&address, CallbackInput::Message, move |root| {
        key.personal_sign(&B256::from(*root))
    })
    .unwrap()
}

/// The `particle` options of `net` (credentials, its URL), without a signer.
pub fn particle_options(net: &Net) -> ParticleOptions {
    ParticleOptions {
        rpc_url: Some(net.devnet.particle_url()),
        project_id: Some(Secret::new(net.project_id.clone())),
        client_key: Some(Secret::new(net.client_key.clone())),
        ..ParticleOptions::default()
    }
}

/// A configuration on the `particle` backend of `net`, signing with `signer`, for fast tests:
/// deliveries of USDC to `destination` on Arbitrum.
pub fn config(
    net: &Net,
    owner: &str,
    destination: &str,
    signer: SignerChoice,
) -> DepositClientConfig {
    let mut particle = particle_options(net);
    let mut config =
        DepositClientConfig::new(owner, DestinationConfig::chain(42161).with_address(destination))
            .with_backend(BackendChoice::Particle);
    match signer {
        SignerChoice::Key => particle.signer_key = Some(Secret::new(fresh_key_hex())),
        SignerChoice::Seed => particle.signer_seed = Some(Secret::new(fresh_key_hex())),
        SignerChoice::Callback => {
            let source: Arc<dyn SignerSource> = Arc::new(callback_signer(&fresh_key_hex()));
            config = config.with_signer_source(source);
        }
    }
    config.particle = particle;
    tune(config)
}

/// Fast polls, short delays and small timeouts.
pub fn tune(mut config: DepositClientConfig) -> DepositClientConfig {
    config.min_polling_interval_ms = 20;
    config.polling_interval_ms = 50;
    config.sweep_retry_delay_ms = 30;
    config.http_retries = 3;
    config.http_initial_backoff_ms = 5;
    config.request_timeout_ms = 3000;
    config.call_timeout_ms = 30_000;
    config
}

/// Deposits `raw` USDC on Base (from `sender`) into the client's EVM deposit address.
pub fn deposit_usdc(net: &Net, client: &DepositClient, raw: &str, sender: Option<&str>) {
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, depositkit_core::TokenType::USDC, raw, sender).unwrap();
}

/// Polls until a `detected` event shows up; that event.
pub fn poll_detected(client: &DepositClient) -> DepositLifecycleEvent {
    client
        .poll_now()
        .unwrap()
        .into_iter()
        .find(|e| e.phase == DepositPhase::Detected)
        .unwrap_or_else(|| panic!("no deposit detected"))
}

/// Pulls events until `id` is credited or failed; that event.
pub fn wait_terminal(client: &DepositClient, id: &str) -> DepositLifecycleEvent {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(event) = client.next_event(left) else {
            panic!("timed out waiting for {id}; events so far: {seen:#?}");
        };
        if let Some(lifecycle) = event.lifecycle()
            && lifecycle.id == id
            && matches!(lifecycle.phase, DepositPhase::Credited | DepositPhase::Failed)
        {
            return lifecycle.clone();
        }
        seen.push(event);
    }
}

/// The JSON-RPC methods devnet's Particle endpoint received, in order.
pub fn methods(net: &Net) -> Vec<String> {
    net.devnet
        .particle_requests()
        .iter()
        .filter_map(|r| r["method"].as_str().map(str::to_owned))
        .collect()
}

/// How many times `method` was received.
pub fn count(net: &Net, method: &str) -> usize {
    methods(net).iter().filter(|m| *m == method).count()
}

/// What `address` holds of USDC on `chain_id` on devnet's ledger, in smallest units.
pub fn usdc_at(net: &Net, address: &str, chain_id: u64) -> u64 {
    net.devnet
        .ledger_balance(address, chain_id, depositkit_core::TokenType::USDC)
        .unwrap()
        .parse()
        .unwrap()
}

/// A signer source that hands out `first` for the first `opens` calls, then `then`: an owner
/// whose signer changed after its account was opened.
#[derive(Debug)]
pub struct Switching {
    pub first: Arc<dyn Signer>,
    pub then: Arc<dyn Signer>,
    pub calls: std::sync::atomic::AtomicUsize,
    pub opens: usize,
}

impl SignerSource for Switching {
    fn signer_for(&self, _owner: &str) -> depositkit_core::Result<Arc<dyn Signer>> {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(if n < self.opens { Arc::clone(&self.first) } else { Arc::clone(&self.then) })
    }
}

/// A signer that claims `address` but signs with another key: what the service refuses.
#[derive(Debug)]
pub struct Impostor {
    pub address: alloy_primitives::Address,
    pub key: KeySigner,
}

impl Signer for Impostor {
    fn address(&self) -> alloy_primitives::Address {
        self.address
    }

    fn personal_sign(&self, message: &B256) -> depositkit_core::Result<[u8; 65]> {
        self.key.personal_sign(message)
    }
}

impl SignerSource for Impostor {
    fn signer_for(&self, _owner: &str) -> depositkit_core::Result<Arc<dyn Signer>> {
        Ok(Arc::new(Impostor { address: self.address, key: self.key.clone() }))
    }
}
