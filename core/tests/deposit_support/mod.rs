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

/// The refund updates of `id` among `events`, in order.
pub fn refund_updates(
    events: &[DepositEvent],
    id: &str,
) -> Vec<depositkit_core::deposit::RefundResult> {
    events.iter().filter_map(|e| e.refund()).filter(|r| r.deposit_id == id).cloned().collect()
}

/// The statuses of `id`'s refund updates among `events`.
pub fn refund_statuses(
    events: &[DepositEvent],
    id: &str,
) -> Vec<depositkit_core::deposit::RefundStatus> {
    refund_updates(events, id).into_iter().map(|r| r.status).collect()
}

/// Pulls events until `id`'s refund reaches a terminal status; returns that update and every
/// event pulled.
pub fn wait_refund(
    client: &DepositClient,
    id: &str,
) -> (depositkit_core::deposit::RefundResult, Vec<DepositEvent>) {
    let events = collect_until(client, Duration::from_secs(20), |seen| {
        seen.last()
            .and_then(|e| e.refund())
            .is_some_and(|r| r.deposit_id == id && r.status.is_terminal())
    });
    (events.last().unwrap().refund().unwrap().clone(), events)
}

/// An initialized client with auto-refund on (20 ms delay, `max_attempts`), delivering USDC to
/// the owner on Base.
pub fn refund_client(net: &Net, max_attempts: u32) -> DepositClient {
    client_with(net, |mut c| {
        c.refund.enabled = true;
        c.refund.delay_ms = 20;
        c.refund.max_attempts = max_attempts;
        c
    })
}

/// Deposits `raw` of `token` on `chain_id` into the client's deposit address (EVM, or Solana for
/// chain 101) and polls until it is detected.
pub fn deposit_detected(
    net: &Net,
    client: &DepositClient,
    chain_id: u64,
    token: depositkit_core::TokenType,
    raw: &str,
    sender: Option<&str>,
) -> DepositLifecycleEvent {
    let addresses = client.deposit_addresses().unwrap();
    let address = if chain_id == 101 { addresses.solana } else { addresses.evm };
    net.devnet.deposit(&address, chain_id, token, raw, sender).unwrap();
    poll_detected(client)
}

/// Waits until `check` holds, polling every 20 ms, at most `timeout`.
pub fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// A fresh EVM address in EIP-55 form: a sender that the client accepts as an EVM address.
pub fn checksummed(address: &str) -> String {
    use std::str::FromStr;
    alloy_primitives::Address::from_str(address).unwrap().to_checksum(None)
}
