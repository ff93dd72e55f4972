//! Shared fixtures of the deposit tests: an in-process devnet with fault injection, client
//! configurations tuned for fast tests, and event helpers.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use depositkit_core::deposit::{
    DepositClient, DepositClientConfig, DepositEvent, DepositLifecycleEvent, DepositPhase,
    DestinationConfig,
};
use depositkit_devnet::{Devnet, DevnetConfig, RunningDevnet};

/// A Solana address with mixed case (USDC's mint): a destination that must keep its case.
pub const SOLANA_DEST: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/// A devnet on loopback, removed with its database on drop.
pub struct Net {
    pub devnet: RunningDevnet,
    dir: std::path::PathBuf,
}

impl Drop for Net {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

static N: AtomicU32 = AtomicU32::new(0);

pub fn net() -> Net {
    net_with(|c| c)
}

pub fn net_with(tune: impl FnOnce(DevnetConfig) -> DevnetConfig) -> Net {
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("depositkit-deposit-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = tune(DevnetConfig::new(dir.join("devnet.sqlite")).with_fault_injection());
    let devnet = Devnet::start(config).unwrap();
    Net { devnet, dir }
}

/// A fresh owner address (lower-case hex), unique per call.
pub fn owner() -> String {
    let bytes: [u8; 20] = rand_bytes();
    format!("0x{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

fn rand_bytes() -> [u8; 20] {
    let n = N.fetch_add(1, Ordering::Relaxed) as u64;
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
            as u64;
    let mut state =
        nanos ^ (u64::from(std::process::id()) << 32) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut out = [0u8; 20];
    for byte in &mut out {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *byte = (state >> 24) as u8;
    }
    out
}

/// A client configuration for tests: fast polling allowed, short retry delays, small timeouts.
pub fn config(net: &Net, owner: &str, destination: DestinationConfig) -> DepositClientConfig {
    let mut config =
        DepositClientConfig::new(owner, destination).with_services_url(net.devnet.services_url());
    config.min_polling_interval_ms = 20;
    config.polling_interval_ms = 50;
    config.sweep_retry_delay_ms = 30;
    config.http_retries = 3;
    config.http_initial_backoff_ms = 5;
    config.request_timeout_ms = 3000;
    config.call_timeout_ms = 20_000;
    config
}

/// An initialized client delivering USDC to the owner on Base.
pub fn client(net: &Net) -> DepositClient {
    client_with(net, |c| c)
}

pub fn client_with(
    net: &Net,
    tune: impl FnOnce(DepositClientConfig) -> DepositClientConfig,
) -> DepositClient {
    let owner = owner();
    let client =
        DepositClient::new(tune(config(net, &owner, DestinationConfig::chain(8453)))).unwrap();
    client.initialize().unwrap();
    client
}

/// Pulls events until a lifecycle event matches `want`; returns every event pulled.
pub fn wait_for(
    client: &DepositClient,
    timeout: Duration,
    want: impl Fn(&DepositLifecycleEvent) -> bool,
) -> Vec<DepositEvent> {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(event) = client.next_event(left) else {
            panic!("timed out waiting; events so far: {seen:#?}");
        };
        let hit = event.lifecycle().is_some_and(&want);
        seen.push(event);
        if hit {
            return seen;
        }
    }
}

/// Waits for the terminal phase (credited or failed) of `id`.
pub fn wait_terminal(
    client: &DepositClient,
    id: &str,
) -> (DepositLifecycleEvent, Vec<DepositEvent>) {
    let events = wait_for(client, Duration::from_secs(20), |e| {
        e.id == id && matches!(e.phase, DepositPhase::Credited | DepositPhase::Failed)
    });
    (events.last().unwrap().lifecycle().unwrap().clone(), events)
}

/// The phases of `id` among `events`, in order.
pub fn phases(events: &[DepositEvent], id: &str) -> Vec<DepositPhase> {
    events.iter().filter_map(|e| e.lifecycle()).filter(|e| e.id == id).map(|e| e.phase).collect()
}

/// Polls until a `detected` event shows up (deposits are visible at once on devnet).
pub fn poll_detected(client: &DepositClient) -> DepositLifecycleEvent {
    let found = client.poll_now().unwrap();
    found
        .into_iter()
        .find(|e| e.phase == DepositPhase::Detected)
        .unwrap_or_else(|| panic!("no deposit detected"))
}

/// Pulls events until `done` holds for everything pulled so far.
pub fn collect_until(
    client: &DepositClient,
    timeout: Duration,
    done: impl Fn(&[DepositEvent]) -> bool,
) -> Vec<DepositEvent> {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    while !done(&seen) {
        let left = deadline.saturating_duration_since(Instant::now());
        match client.next_event(left) {
            Some(event) => seen.push(event),
            None => panic!("timed out; events so far: {seen:#?}"),
        }
    }
    seen
}

/// The ids of the credited deposits among `events`, in order.
pub fn credited(events: &[DepositEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| e.lifecycle())
        .filter(|e| e.phase == DepositPhase::Credited)
        .map(|e| e.id.clone())
        .collect()
}
