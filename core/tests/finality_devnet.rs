//! Finality and reorganisations against devnet's simulated chains (`docs/finality.md`): a
//! deposit on a watched chain is swept only once its chain's rule is met; one a reorganisation
//! removes first is reported `reorged` and never swept; one that comes back is the same deposit,
//! swept once; a deposit whose chain endpoint is down is still found by the balance poll.
//!
//! The chains make blocks only when a deposit is credited or a test mines, so the counts are
//! the test's. Base (8453) is watched with a rule of 3 confirmations.

mod deposit_support;

use std::time::Duration;

use deposit_support::{Net, collect_until, config, eventually, net_with, owner, phases};
use depositkit_core::TokenType;
use depositkit_core::chain::watch::shared;
use depositkit_core::deposit::finality::{FinalityConfig, FinalityRule};
use depositkit_core::deposit::{
    DepositClient, DepositEvent, DepositLifecycleEvent, DepositPhase, DestinationConfig,
};
use depositkit_devnet::simchain::{ReorgRequest, SimSettings};

const BASE: u64 = 8453;
const ARBITRUM: u64 = 42161;
const WAIT: Duration = Duration::from_secs(20);

/// A devnet whose simulated chains make blocks only on deposits and `mine`.
fn chain_net() -> Net {
    net_with(|c| c.with_sim_chains(SimSettings { block_time: None, safe_lag: 2, finalized_lag: 5 }))
}

/// A watching client whose deposits on Base (watched at `rpc`) need 3 confirmations, delivering
/// USDC to the owner on Arbitrum.
fn watching_client(net: &Net, rpc: &str, fallback_ms: Option<u64>) -> (DepositClient, String) {
    let owner = owner();
    let mut config = config(net, &owner, DestinationConfig::chain(ARBITRUM));
    config.chain_rpc_urls.0.insert(BASE, rpc.to_owned());
    config.finality = FinalityConfig {
        chains: [(BASE, FinalityRule::Confirmations(3))].into_iter().collect(),
        balance_fallback_ms: fallback_ms,
        ..FinalityConfig::default()
    };
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    client.start_watching().unwrap();
    if fallback_ms.is_none() {
        // The watcher follows the chain from its newest block at its first read: deposits
        // before that are the balance's (the fallback), so wait for that read.
        let following =
            || client.health(None).services.get("chain").is_some_and(|s| s.last_ok_ms.is_some());
        assert!(eventually(WAIT, following), "the chain watcher never read its chain");
    }
    (client, owner)
}

/// Pulls events until one that `hit` accepts (or returns the first already pulled).
fn wait_event(
    client: &DepositClient,
    pulled: &mut Vec<DepositEvent>,
    hit: impl Fn(&DepositLifecycleEvent) -> bool,
) -> DepositLifecycleEvent {
    let accepts = |e: &DepositEvent| e.lifecycle().is_some_and(&hit);
    if !pulled.iter().any(accepts) {
        pulled.extend(collect_until(client, WAIT, |seen| seen.last().is_some_and(accepts)));
    }
    pulled.iter().find(|e| accepts(e)).unwrap().lifecycle().unwrap().clone()
}

/// Deposits `raw` USDC on Base and waits until the client follows its transfer: the deposit
/// `seen` (by the chain or the balance, whichever was first) and its transfer linked (its
/// first count reported). The deposit's id and the transaction.
fn deposit_followed(
    net: &Net,
    client: &DepositClient,
    raw: &str,
    pulled: &mut Vec<DepositEvent>,
) -> (String, String) {
    let address = client.deposit_addresses().unwrap().evm;
    let tx = net.devnet.deposit(&address, BASE, TokenType::USDC, raw, None).unwrap().tx_hash;
    let known: Vec<String> =
        pulled.iter().filter_map(|e| e.lifecycle()).map(|l| l.id.clone()).collect();
    let seen =
        wait_event(client, pulled, |l| l.phase == DepositPhase::Seen && !known.contains(&l.id));
    let from_chain = |l: &DepositLifecycleEvent| {
        l.id == seen.id
            && l.source_tx_hash.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(&tx))
            && l.confirmations.is_some()
    };
    wait_event(client, pulled, from_chain);
    (seen.id, tx)
}

fn wait_phase(
    client: &DepositClient,
    id: &str,
    phase: DepositPhase,
    pulled: &mut Vec<DepositEvent>,
) -> DepositLifecycleEvent {
    wait_event(client, pulled, |l| l.id == id && l.phase == phase)
}

/// Waits for deposit `id` to end (credited or failed), pulling into `pulled`.
fn wait_credited(client: &DepositClient, id: &str, pulled: &mut Vec<DepositEvent>) {
    let ended = |e: &DepositEvent| {
        e.lifecycle().is_some_and(|l| {
            l.id == id && matches!(l.phase, DepositPhase::Credited | DepositPhase::Failed)
        })
    };
    if !pulled.iter().any(ended) {
        pulled.extend(collect_until(client, WAIT, |seen| seen.last().is_some_and(ended)));
    }
    let last = pulled.iter().rev().find(|e| ended(e)).unwrap().lifecycle().unwrap();
    assert_eq!(last.phase, DepositPhase::Credited, "{last:?}");
}

/// A devnet, and a client watching its Base at its simulated chain's endpoint.
fn watched() -> (Net, DepositClient, String) {
    let net = chain_net();
    let rpc = net.devnet.chain_rpc_url(BASE);
    let (client, owner) = watching_client(&net, &rpc, None);
    (net, client, owner)
}

fn delivered(net: &Net, owner: &str) -> u128 {
    net.devnet.ledger_balance(owner, ARBITRUM, TokenType::USDC).unwrap().parse().unwrap()
}

fn reorg(net: &Net, depth: u64, drop: &[&str], readd_after_blocks: Option<u64>) {
    let request = ReorgRequest {
        depth,
        drop: drop.iter().map(|t| (*t).to_owned()).collect(),
        readd_after_blocks,
    };
    net.devnet.reorg(BASE, &request).unwrap();
}

#[test]
fn a_deposit_confirms_block_by_block_and_is_swept_once_final() {
    let (net, client, owner) = watched();
    let mut pulled = Vec::new();
    let (id, _) = deposit_followed(&net, &client, "25000000", &mut pulled);
    let seen = wait_phase(&client, &id, DepositPhase::Seen, &mut pulled);
    assert_eq!((seen.chain_id, seen.amount.as_str()), (BASE, "25"));
    // Not final: nothing may move it yet.
    let refused = client.sweep(&id).unwrap_err();
    assert!(refused.message().contains("not final on its chain yet"), "{refused}");
    net.devnet.mine_blocks(BASE, 1).unwrap();
    let confirming = wait_event(&client, &mut pulled, |l| {
        l.id == id && l.phase == DepositPhase::Confirming && l.confirmations == Some(2)
    });
    assert_eq!(confirming.required_confirmations, Some(3));
    assert_eq!(delivered(&net, &owner), 0, "swept before it was final");
    net.devnet.mine_blocks(BASE, 1).unwrap();
    let confirmed = wait_phase(&client, &id, DepositPhase::Confirmed, &mut pulled);
    assert_eq!(confirmed.confirmations, Some(3));
    wait_credited(&client, &id, &mut pulled);
    let story = phases(&pulled, &id);
    assert_eq!(story.first(), Some(&DepositPhase::Seen), "{story:?}");
    assert!(!story.contains(&DepositPhase::Detected), "{story:?}");
    assert!(delivered(&net, &owner) > 0);
}

/// The raw amount the sweep of `id` delivered.
fn delivered_by(client: &DepositClient, id: &str) -> u128 {
    let result = client.sweep_result(id).unwrap().expect("swept");
    result.delivered.expect("delivered").raw_amount.parse().unwrap()
}

#[test]
fn a_deposit_reorganised_out_before_its_confirmations_is_never_swept() {
    let (net, client, owner) = watched();
    let mut pulled = Vec::new();
    let (id, tx) = deposit_followed(&net, &client, "25000000", &mut pulled);
    reorg(&net, 1, &[&tx], None);
    wait_phase(&client, &id, DepositPhase::Reorged, &mut pulled);
    // The client polls when a deposit is reorganised out; this poll waits for that one.
    client.poll_now().unwrap();
    // Far past its confirmations, and a second deposit swept after it: the first never moved.
    net.devnet.mine_blocks(BASE, 4).unwrap();
    let (second, _) = deposit_followed(&net, &client, "7000000", &mut pulled);
    net.devnet.mine_blocks(BASE, 2).unwrap();
    wait_credited(&client, &second, &mut pulled);
    let story = phases(&pulled, &id);
    assert_eq!(story.first(), Some(&DepositPhase::Seen), "{story:?}");
    assert_eq!(story.last(), Some(&DepositPhase::Reorged), "{story:?}");
    assert!(!story.contains(&DepositPhase::Confirmed), "{story:?}");
    let refused = client.sweep(&id).unwrap_err();
    assert!(refused.message().contains("reorganisation"), "{refused}");
    assert_eq!(delivered(&net, &owner), delivered_by(&client, &second), "only the second arrived");
    assert!(client.sweep_result(&id).unwrap().is_none());
}

#[test]
fn a_deposit_that_returns_in_a_later_block_keeps_its_id_and_is_swept_once() {
    let (net, client, owner) = watched();
    let mut pulled = Vec::new();
    let (id, tx) = deposit_followed(&net, &client, "25000000", &mut pulled);
    reorg(&net, 1, &[&tx], Some(2));
    wait_phase(&client, &id, DepositPhase::Reorged, &mut pulled);
    // Back two blocks later, then its three confirmations.
    net.devnet.mine_blocks(BASE, 4).unwrap();
    wait_phase(&client, &id, DepositPhase::Confirmed, &mut pulled);
    wait_credited(&client, &id, &mut pulled);
    let story = phases(&pulled, &id);
    assert_eq!(story.iter().filter(|p| **p == DepositPhase::Seen).count(), 2, "{story:?}");
    assert_eq!(story.iter().filter(|p| **p == DepositPhase::Credited).count(), 1, "{story:?}");
    let others = pulled.iter().filter_map(|e| e.lifecycle()).filter(|l| l.id != id).count();
    assert_eq!(others, 0, "the returning transfer is no other deposit");
    assert_eq!(delivered(&net, &owner), delivered_by(&client, &id), "swept once");
}

#[test]
fn a_reorganisation_after_the_confirmations_credits_the_deposit_once() {
    let (net, client, owner) = watched();
    let mut pulled = Vec::new();
    let (id, _) = deposit_followed(&net, &client, "25000000", &mut pulled);
    net.devnet.mine_blocks(BASE, 2).unwrap();
    wait_credited(&client, &id, &mut pulled);
    // Its block and the two over it are replaced; the transfer moves to the new first block.
    reorg(&net, 3, &[], None);
    net.devnet.mine_blocks(BASE, 3).unwrap();
    // A later deposit, credited: the reorganisation was seen and handled by then.
    let (second, _) = deposit_followed(&net, &client, "7000000", &mut pulled);
    net.devnet.mine_blocks(BASE, 2).unwrap();
    wait_credited(&client, &second, &mut pulled);
    let story = phases(&pulled, &id);
    assert_eq!(story.iter().filter(|p| **p == DepositPhase::Credited).count(), 1, "{story:?}");
    assert!(!story.contains(&DepositPhase::Reorged), "{story:?}");
    let both = delivered_by(&client, &id) + delivered_by(&client, &second);
    assert_eq!(delivered(&net, &owner), both, "each deposit credited once");
    let ids: std::collections::HashSet<&str> =
        pulled.iter().filter_map(|e| e.lifecycle()).map(|l| l.id.as_str()).collect();
    assert_eq!(ids.len(), 2, "the moved transfer is no new deposit: {ids:?}");
}

#[test]
fn with_its_chain_endpoint_down_a_deposit_is_found_by_the_balance_and_swept() {
    let net = chain_net();
    // A port nothing listens on: the watcher reports Down and keeps retrying.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let rpc = format!("http://{}/rpc", dead.local_addr().unwrap());
    drop(dead);
    let (client, owner) = watching_client(&net, &rpc, Some(300));
    let address = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&address, BASE, TokenType::USDC, "25000000", None).unwrap();
    let pulled = collect_until(&client, WAIT, |seen| {
        seen.iter().filter_map(|e| e.lifecycle()).any(|l| l.phase == DepositPhase::Credited)
    });
    let credited = pulled
        .iter()
        .filter_map(|e| e.lifecycle())
        .find(|l| l.phase == DepositPhase::Credited)
        .unwrap();
    let story = phases(&pulled, &credited.id);
    assert_eq!(story[..2], [DepositPhase::Seen, DepositPhase::Confirmed], "{story:?}");
    assert!(credited.source_tx_hash.is_none(), "the chain never reported it");
    assert!(delivered(&net, &owner) > 0);
    // The endpoint's failure shows in `health()`, without its address.
    let down = || {
        let health = client.health(None);
        health.services.get("chain").and_then(|s| s.last_error.clone())
    };
    assert!(eventually(WAIT, || down().is_some()), "{:?}", client.health(None));
    assert!(!down().unwrap().contains("/rpc"), "{:?}", down());
}

/// A loopback TCP relay to an HTTP endpoint that can be cut and restored on the same port: the
/// chain endpoint dying and coming back.
struct Relay {
    port: u16,
    target: std::net::SocketAddr,
    open: Option<(std::sync::Arc<std::sync::atomic::AtomicBool>, std::thread::JoinHandle<()>)>,
    streams: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn to(url: &str) -> Relay {
        let authority = url.trim_start_matches("http://").split('/').next().unwrap();
        let target = authority.parse().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut relay = Relay { port, target, open: None, streams: Default::default() };
        relay.start();
        relay
    }

    fn start(&mut self) {
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = std::net::TcpListener::bind(("127.0.0.1", self.port)).unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (flag, target, streams) = (stop.clone(), self.target, self.streams.clone());
        let accept = std::thread::spawn(move || {
            for client in listener.incoming() {
                if flag.load(Ordering::Acquire) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = std::net::TcpStream::connect(target) else { continue };
                let pairs = [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server.try_clone().unwrap(), client.try_clone().unwrap()),
                ];
                streams.lock().unwrap().extend([client, server]);
                for (mut from, mut to) in pairs {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        self.open = Some((stop, accept));
    }

    /// Refuses new connections and cuts the open ones.
    fn cut(&mut self) {
        if let Some((stop, accept)) = self.open.take() {
            stop.store(true, std::sync::atomic::Ordering::Release);
            let _ = std::net::TcpStream::connect(("127.0.0.1", self.port)); // wakes the accept
            accept.join().unwrap();
        }
        for stream in self.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

#[test]
fn a_chain_endpoint_that_dies_and_comes_back_misses_nothing() {
    let net = chain_net();
    let rpc = net.devnet.chain_rpc_url(BASE);
    let path = format!("/{}", rpc.trim_start_matches("http://").split_once('/').unwrap().1);
    let mut relay = Relay::to(&rpc);
    let (client, owner) = watching_client(&net, &relay.url(&path), None);
    let failures = || client.health(None).services.get("chain").and_then(|s| s.last_error_ms);
    relay.cut();
    let address = client.deposit_addresses().unwrap().evm;
    let tx = net.devnet.deposit(&address, BASE, TokenType::USDC, "25000000", None).unwrap().tx_hash;
    net.devnet.mine_blocks(BASE, 1).unwrap();
    // Down: the balance finds the deposit; its finality is unknown, so it waits.
    let mut pulled = Vec::new();
    let seen = wait_event(&client, &mut pulled, |l| l.phase == DepositPhase::Seen);
    assert!(seen.source_tx_hash.is_none(), "{seen:?}");
    assert!(eventually(WAIT, || failures().is_some()), "the watcher never saw its endpoint die");
    assert_eq!(delivered(&net, &owner), 0);
    // Back: the watcher catches up, finds the transfer under the same deposit, and its chain's
    // rule decides (two blocks over it already, one more).
    relay.start();
    let linked = wait_event(&client, &mut pulled, |l| {
        l.id == seen.id && l.source_tx_hash.as_deref().is_some_and(|t| t.eq_ignore_ascii_case(&tx))
    });
    assert_eq!(linked.phase, DepositPhase::Confirming, "{linked:?}");
    net.devnet.mine_blocks(BASE, 1).unwrap();
    wait_phase(&client, &seen.id, DepositPhase::Confirmed, &mut pulled);
    wait_credited(&client, &seen.id, &mut pulled);
    let ids: std::collections::HashSet<&str> =
        pulled.iter().filter_map(|e| e.lifecycle()).map(|l| l.id.as_str()).collect();
    assert_eq!(ids.len(), 1, "one deposit: {ids:?}");
    assert_eq!(delivered(&net, &owner), delivered_by(&client, &seen.id));
}

/// A client watching Base at `rpc` (3 confirmations) that keeps its table in `store`.
fn stored_client(net: &Net, rpc: &str, owner: &str, store: &std::path::Path) -> DepositClient {
    let mut config = config(net, owner, DestinationConfig::chain(ARBITRUM));
    config.chain_rpc_urls.0.insert(BASE, rpc.to_owned());
    config.finality.chains.insert(BASE, FinalityRule::Confirmations(3));
    config.store_path = Some(store.to_string_lossy().into_owned());
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    client.start_watching().unwrap();
    let following =
        || client.health(None).services.get("chain").is_some_and(|s| s.last_ok_ms.is_some());
    assert!(eventually(WAIT, following), "the chain watcher never read its chain");
    client
}

#[test]
fn a_confirming_deposit_resumes_after_a_restart_and_is_swept_once() {
    let net = chain_net();
    let rpc = net.devnet.chain_rpc_url(BASE);
    let store = std::env::temp_dir().join(format!(
        "depositkit-finality-{}-{}.sqlite",
        std::process::id(),
        owner()
    ));
    let owner = owner();
    let start = || stored_client(&net, &rpc, &owner, &store);
    let client = start();
    let mut pulled = Vec::new();
    let (id, _) = deposit_followed(&net, &client, "25000000", &mut pulled);
    client.close().unwrap();
    drop(client);
    // Two blocks while it is down; the next client reads the chain again from its block.
    net.devnet.mine_blocks(BASE, 2).unwrap();
    let client = start();
    let mut pulled = Vec::new();
    wait_phase(&client, &id, DepositPhase::Confirmed, &mut pulled);
    wait_credited(&client, &id, &mut pulled);
    assert_eq!(delivered(&net, &owner), delivered_by(&client, &id), "swept once");
    let history: Vec<DepositPhase> = client
        .deposit_history(&id)
        .unwrap()
        .iter()
        .filter_map(|e| e.event.lifecycle().map(|l| l.phase))
        .collect();
    assert_eq!(history.first(), Some(&DepositPhase::Seen), "{history:?}");
    assert_eq!(history.iter().filter(|p| **p == DepositPhase::Credited).count(), 1);
    client.close().unwrap();
    for suffix in ["", "-lock", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
    }
}

#[test]
fn clients_on_one_chain_share_its_watcher_and_hear_only_their_transfers() {
    let net = chain_net();
    let rpc = net.devnet.chain_rpc_url(BASE);
    let clients: Vec<(DepositClient, String)> =
        (0..3).map(|_| watching_client(&net, &rpc, None)).collect();
    assert_eq!(shared::subscribers(BASE, &rpc), 3, "one watcher follows the three addresses");
    let mut pulled = vec![Vec::new(), Vec::new(), Vec::new()];
    let ids: Vec<(String, String)> = clients
        .iter()
        .zip(&mut pulled)
        .map(|((client, _), pulled)| deposit_followed(&net, client, "25000000", pulled))
        .collect();
    // The last deposit's block leaves the chain: only its client hears of it.
    reorg(&net, 1, &[&ids[2].1], None);
    let (gone, gone_client) = (&ids[2].0, &clients[2].0);
    wait_phase(gone_client, gone, DepositPhase::Reorged, &mut pulled[2]);
    net.devnet.mine_blocks(BASE, 4).unwrap();
    for ((client, owner), (pulled, (id, _))) in
        clients.iter().zip(pulled.iter_mut().zip(&ids)).take(2)
    {
        wait_credited(client, id, pulled);
        let story = phases(pulled, id);
        assert!(!story.contains(&DepositPhase::Reorged), "{story:?}");
        assert_eq!(delivered(&net, owner), delivered_by(client, id), "swept once");
        let own = pulled.iter().filter_map(|e| e.lifecycle()).all(|l| l.id == *id);
        assert!(own, "a client hears only its own deposits");
    }
    gone_client.poll_now().unwrap();
    assert!(gone_client.sweep_result(gone).unwrap().is_none(), "the reorganised deposit moved");
    assert_eq!(delivered(&net, &clients[2].1), 0);
    for (client, _) in &clients {
        client.close().unwrap();
    }
    let stopped = || shared::subscribers(BASE, &rpc) == 0;
    assert!(eventually(WAIT, stopped), "the watcher outlived its clients");
}

#[test]
fn a_restart_that_reads_the_shared_watcher_again_credits_nobody_twice() {
    let net = chain_net();
    let rpc = net.devnet.chain_rpc_url(BASE);
    let (neighbour, neighbour_owner) = watching_client(&net, &rpc, None);
    let store = std::env::temp_dir().join(format!("depositkit-shared-{}.sqlite", owner()));
    let owner = owner();
    let client = stored_client(&net, &rpc, &owner, &store);
    let (mut pulled, mut theirs) = (Vec::new(), Vec::new());
    let (id, _) = deposit_followed(&net, &client, "25000000", &mut pulled);
    client.close().unwrap();
    drop(client);
    // The neighbour's deposit is credited above it before the client comes back.
    let (their_id, _) = deposit_followed(&net, &neighbour, "7000000", &mut theirs);
    net.devnet.mine_blocks(BASE, 2).unwrap();
    wait_credited(&neighbour, &their_id, &mut theirs);
    // Back from below the neighbour's block: the shared watcher reads it again for both.
    let client = stored_client(&net, &rpc, &owner, &store);
    assert_eq!(shared::subscribers(BASE, &rpc), 2);
    let mut pulled = Vec::new();
    wait_credited(&client, &id, &mut pulled);
    assert_eq!(delivered(&net, &owner), delivered_by(&client, &id), "swept once");
    // A later deposit of the neighbour's, credited: the repeated transfer was heard by then.
    let (later, _) = deposit_followed(&net, &neighbour, "5000000", &mut theirs);
    net.devnet.mine_blocks(BASE, 2).unwrap();
    wait_credited(&neighbour, &later, &mut theirs);
    let ids: std::collections::HashSet<&str> =
        theirs.iter().filter_map(|e| e.lifecycle()).map(|l| l.id.as_str()).collect();
    assert_eq!(ids.len(), 2, "the repeated transfer is no new deposit: {ids:?}");
    let both = delivered_by(&neighbour, &their_id) + delivered_by(&neighbour, &later);
    assert_eq!(delivered(&net, &neighbour_owner), both, "each credited once");
    client.close().unwrap();
    for suffix in ["", "-lock", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
    }
}
