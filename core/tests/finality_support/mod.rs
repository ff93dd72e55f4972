//! Shared fixtures of the finality tests on the local chains (`finality_anvil.rs`,
//! `finality_svm.rs`): one chain-backed devnet per binary taken in turns, a client watching one
//! chain, and the waits on its lifecycle events that fail with the story so far.

#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use alloy_primitives::U256;
use depositkit_core::deposit::finality::{FinalityConfig, FinalityRule};
use depositkit_core::deposit::{
    DepositClient, DepositEvent, DepositLifecycleEvent, DepositPhase, DestinationConfig,
};

use crate::chains_support::chains;
use crate::deposit_support::{Net, config, eventually, net_with, owner, phases};

/// Where the tests' clients deliver: USDC to their owner on the Arbitrum anvil.
pub const ARBITRUM: u64 = 42161;
pub const WAIT: Duration = Duration::from_secs(30);

/// The devnet on the chains, one test at a time: two devnets on the same chains would race for
/// the vault's nonces (`funding_flow.rs`), and the blocks a test counts must be its own.
pub fn turn() -> MutexGuard<'static, Net> {
    static NET: OnceLock<Mutex<Net>> = OnceLock::new();
    NET.get_or_init(|| Mutex::new(net_with(|c| c.with_chains(chains().devnet_config()))))
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// A client watching `chain_id` at `rpc` (with `rule`, else the chain's default), delivering
/// USDC to its owner on Arbitrum, once its watcher follows the chain.
pub fn watching_client(
    net: &Net,
    chain_id: u64,
    rpc: &str,
    rule: Option<FinalityRule>,
    auto_sweep: bool,
) -> (DepositClient, String) {
    let owner = owner();
    let mut config = config(net, &owner, DestinationConfig::chain(ARBITRUM));
    config.chain_rpc_urls.0.insert(chain_id, rpc.to_owned());
    config.finality = FinalityConfig {
        chains: rule.map(|rule| (chain_id, rule)).into_iter().collect(),
        ..FinalityConfig::default()
    };
    config.auto_sweep = auto_sweep;
    config.call_timeout_ms = 30_000;
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    client.start_watching().unwrap();
    let following =
        || client.health(None).services.get("chain").is_some_and(|s| s.last_ok_ms.is_some());
    // A deposit made before the watcher's first read is the balance's, not the chain's.
    assert!(eventually(WAIT, following), "the chain watcher never read its chain");
    (client, owner)
}

/// The lifecycle events among `pulled`, one line each, for failure messages.
pub fn events_told(pulled: &[DepositEvent]) -> String {
    let lines: Vec<String> = pulled
        .iter()
        .filter_map(|e| e.lifecycle())
        .map(|l| {
            format!(
                "{} {:?} {} tx={:?} {:?}/{:?}",
                l.id,
                l.phase,
                l.amount,
                l.source_tx_hash,
                l.confirmations,
                l.required_confirmations
            )
        })
        .collect();
    lines.join("\n")
}

/// Pulls events until one that `hit` accepts (or returns the first already pulled); on a
/// timeout, fails with every lifecycle event pulled.
pub fn wait_event(
    client: &DepositClient,
    pulled: &mut Vec<DepositEvent>,
    hit: impl Fn(&DepositLifecycleEvent) -> bool,
) -> DepositLifecycleEvent {
    wait_event_after(client, pulled, 0, hit)
}

/// [`wait_event`] among the events pulled from position `from` on.
pub fn wait_event_after(
    client: &DepositClient,
    pulled: &mut Vec<DepositEvent>,
    from: usize,
    hit: impl Fn(&DepositLifecycleEvent) -> bool,
) -> DepositLifecycleEvent {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(found) = pulled[from..].iter().filter_map(|e| e.lifecycle()).find(|l| hit(l)) {
            return found.clone();
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match client.next_event(left) {
            Some(event) => pulled.push(event),
            None => panic!("timed out; the events so far:\n{}", events_told(pulled)),
        }
    }
}

pub fn wait_phase(
    client: &DepositClient,
    id: &str,
    phase: DepositPhase,
    pulled: &mut Vec<DepositEvent>,
) -> DepositLifecycleEvent {
    wait_event(client, pulled, |l| l.id == id && l.phase == phase)
}

/// Waits until the deposit `id` whose transfer is `tx` is followed: `seen` (by the chain or the
/// balance, whichever was first), then its transfer linked.
pub fn wait_linked(client: &DepositClient, tx: &str, pulled: &mut Vec<DepositEvent>) -> String {
    let known: Vec<String> =
        pulled.iter().filter_map(|e| e.lifecycle()).map(|l| l.id.clone()).collect();
    let seen =
        wait_event(client, pulled, |l| l.phase == DepositPhase::Seen && !known.contains(&l.id));
    wait_event(client, pulled, |l| {
        l.id == seen.id
            && l.source_tx_hash.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(tx))
            && l.confirmations.is_some()
    });
    seen.id
}

/// Waits until deposit `id` is credited (failing on `failed`); the raw amount its sweep
/// delivered.
pub fn wait_credited(client: &DepositClient, id: &str, pulled: &mut Vec<DepositEvent>) -> U256 {
    let ended = wait_event(client, pulled, |l| {
        l.id == id && matches!(l.phase, DepositPhase::Credited | DepositPhase::Failed)
    });
    assert_eq!(ended.phase, DepositPhase::Credited, "{ended:?}");
    let result = client.sweep_result(id).unwrap().expect("swept");
    result.delivered.expect("delivered").raw_amount.parse().unwrap()
}

/// Checks that deposit `id` was seen, then reorganised out before it was confirmed, and that
/// nothing moved it (a sweep is refused naming the reorganisation; there is no sweep result).
pub fn reorged_and_never_moved(client: &DepositClient, pulled: &[DepositEvent], id: &str) {
    let story = phases(pulled, id);
    assert_eq!(story.first(), Some(&DepositPhase::Seen), "{story:?}");
    assert_eq!(story.last(), Some(&DepositPhase::Reorged), "{story:?}");
    assert!(!story.contains(&DepositPhase::Confirmed), "{story:?}");
    let refused = client.sweep(id).unwrap_err();
    assert!(refused.message().contains("reorganisation"), "{refused}");
    assert!(client.sweep_result(id).unwrap().is_none());
}

/// How many times `id` went through `phase` among `pulled`.
pub fn times(pulled: &[DepositEvent], id: &str, phase: DepositPhase) -> usize {
    pulled.iter().filter_map(|e| e.lifecycle()).filter(|l| l.id == id && l.phase == phase).count()
}

/// The deposit ids among `pulled`.
pub fn ids(pulled: &[DepositEvent]) -> std::collections::BTreeSet<String> {
    pulled.iter().filter_map(|e| e.lifecycle()).map(|l| l.id.clone()).collect()
}

/// What `owner` holds of USDC on the Arbitrum anvil.
pub fn delivered(owner: &str) -> U256 {
    chains().erc20_balance(ARBITRUM, &chains().token(ARBITRUM, "USDC"), owner)
}
