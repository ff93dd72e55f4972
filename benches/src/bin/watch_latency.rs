//! Detection latency of the chain watcher (issue 18, `docs/benchmarks.md`): a transfer's
//! inclusion in a block → its `Included` signal, with 1,000 and 10,000 watched addresses.
//!
//! ```text
//! cargo build --release -p depositkit-benches --bin watch_latency
//! target/release/watch_latency                       # devnet's simulated Base chain
//! target/release/watch_latency --anvil-url http://127.0.0.1:8545 --chain-id 8453
//! target/release/watch_latency --anvil-url http://127.0.0.1:8545 --watch-url ws://127.0.0.1:8545
//! ```
//!
//! On devnet (in process, on a fresh database), each sample is a `RunningDevnet::deposit` to one
//! of the watched addresses, which includes it in a new block of the simulated chain before it
//! returns; on anvil (automining), an `eth_sendTransaction` of 1 wei from its first account,
//! mined before it returns. The clock starts when the call returns and stops when the watcher's
//! sink receives the transfer's `Included`. Samples start at random moments of the watcher's
//! poll interval. Options: `--addresses 1000,10000`, `--samples 200`, `--poll-ms 100`,
//! `--watch-url URL` (the watcher's endpoint when it is not the one the transfers are sent to:
//! anvil's websocket, where new heads come by `eth_subscribe`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use depositkit_core::TokenType;
use depositkit_core::chain::evm::EvmRpc;
use depositkit_core::chain::watch::signal::ChainSignal;
use depositkit_core::chain::watch::{ChainWatcher, WatchSettings};
use depositkit_core::services::HttpSettings;
use depositkit_devnet::simchain::SimSettings;
use depositkit_devnet::{Devnet, DevnetConfig, RunningDevnet};
use serde_json::json;

struct Options {
    addresses: Vec<usize>,
    samples: usize,
    poll: Duration,
    anvil: Option<(String, u64)>,
    /// The watcher's endpoint, when not the chain's URL.
    watch_url: Option<String>,
}

fn options() -> Options {
    let mut options = Options {
        addresses: vec![1_000, 10_000],
        samples: 200,
        poll: Duration::from_millis(100),
        anvil: None,
        watch_url: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut chain_id = 8453;
    let mut url = None;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--addresses" => {
                options.addresses = value.split(',').filter_map(|n| n.parse().ok()).collect();
            }
            "--samples" => options.samples = value.parse().unwrap_or(options.samples),
            "--poll-ms" => options.poll = Duration::from_millis(value.parse().unwrap_or(100)),
            "--anvil-url" => url = Some(value),
            "--chain-id" => chain_id = value.parse().unwrap_or(chain_id),
            "--watch-url" => options.watch_url = Some(value),
            other => {
                eprintln!("unknown option {other}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    options.anvil = url.map(|u| (u, chain_id));
    options
}

/// Where the transfers come from.
enum Source {
    Devnet(RunningDevnet, std::path::PathBuf),
    Anvil(EvmRpc, String),
}

impl Source {
    /// Sends one transfer to `to`; its transaction hash, once included.
    fn send(&self, to: &str) -> String {
        match self {
            Source::Devnet(devnet, _) => {
                devnet.deposit(to, 8453, TokenType::USDC, "1000000", None).unwrap().tx_hash
            }
            Source::Anvil(node, from) => {
                let tx = json!({"from": from, "to": to, "value": "0x1"});
                node.send_transaction(&tx).unwrap().to_string()
            }
        }
    }
}

/// A tiny deterministic generator for the pauses.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn main() {
    let options = options();
    let (source, url, chain_id) = match &options.anvil {
        Some((url, chain_id)) => {
            let node = EvmRpc::new(url, &HttpSettings::default());
            let accounts = node.request("eth_accounts", json!([])).unwrap();
            let from = accounts[0].as_str().expect("anvil's first account").to_owned();
            (Source::Anvil(node, from), url.clone(), *chain_id)
        }
        None => {
            let db =
                std::env::temp_dir().join(format!("watch-latency-{}.sqlite", std::process::id()));
            let config = DevnetConfig::new(&db).with_sim_chains(SimSettings::default());
            let devnet = Devnet::start(config).unwrap();
            let url = devnet.chain_rpc_url(8453);
            (Source::Devnet(devnet, db), url, 8453)
        }
    };
    let url = options.watch_url.clone().unwrap_or(url);
    println!("| watched addresses | poll interval | samples | p50 | p99 | max |");
    println!("|---|---|---|---|---|---|");
    let mut lcg = Lcg(42);
    for (round, count) in options.addresses.iter().copied().enumerate() {
        let (tx, rx) = mpsc::channel::<(Instant, ChainSignal)>();
        let settings = WatchSettings { poll_interval: options.poll, ..WatchSettings::default() };
        let watcher = ChainWatcher::start(chain_id, &url, settings, move |signal| {
            let _ = tx.send((Instant::now(), signal));
        })
        .unwrap();
        let addresses: Vec<String> = (0..count)
            .map(|i| format!("0x{:040x}", 0x00dd_0000_0000u64 + (round * 1_000_000 + i) as u64))
            .collect();
        watcher.watch(addresses.iter().map(String::as_str)).unwrap();
        // Started: the first head.
        while !matches!(rx.recv().unwrap().1, ChainSignal::Head { .. }) {}
        let mut latencies = Vec::with_capacity(options.samples);
        for sample in 0..options.samples {
            std::thread::sleep(Duration::from_millis(lcg.below(options.poll.as_millis() as u64)));
            let to = &addresses[(sample * 7919) % count];
            let hash = source.send(to);
            let included_at = Instant::now();
            loop {
                let (at, signal) = rx.recv_timeout(Duration::from_secs(30)).expect("an inclusion");
                if let ChainSignal::Included(seen) = signal
                    && seen.tx.eq_ignore_ascii_case(&hash)
                {
                    latencies.push(at.saturating_duration_since(included_at));
                    break;
                }
            }
        }
        latencies.sort();
        println!(
            "| {count} | {} ms | {} | {:.1} ms | {:.1} ms | {:.1} ms |",
            options.poll.as_millis(),
            latencies.len(),
            percentile(&latencies, 0.5).as_secs_f64() * 1e3,
            percentile(&latencies, 0.99).as_secs_f64() * 1e3,
            latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        );
        watcher.stop();
    }
    if let Source::Devnet(devnet, db) = source {
        let _ = devnet.shutdown();
        for suffix in ["", "-wal", "-shm"] {
            let mut path = db.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}
