//! Chain watchers: follow the transfers into the deposit addresses and the heads of one chain,
//! and report them as [`ChainSignal`]s, within a poll interval of their inclusion.
//!
//! - [`signal`]: what a watcher reports (data only).
//! - [`addresses`]: the watched addresses, changed at run time.
//! - [`tracker`]: the recent blocks and the reported transfers; reorgs (pure).
//! - `evm` / `solana`: following one chain over its JSON-RPC endpoint.
//! - `transport` / `ws`: an EVM chain's endpoint over HTTP (polled) or a websocket (new heads
//!   by `eth_subscribe` where the endpoint offers it, else polled over the socket).
//! - `runner`: the watcher's thread — steps, backoff, [`Down`](ChainSignal::Down) and
//!   [`Up`](ChainSignal::Up).
//! - [`shared`]: one watcher per (chain, endpoint) per process, its signals routed to the
//!   clients by address.
//!
//! ```no_run
//! use std::sync::mpsc;
//! use depositkit_core::chain::watch::{ChainWatcher, WatchSettings};
//! use depositkit_core::chain::watch::signal::ChainSignal;
//!
//! let (tx, rx) = mpsc::channel::<ChainSignal>();
//! let watcher = ChainWatcher::start(8453, "http://127.0.0.1:8545", WatchSettings::default(),
//!     move |signal| { let _ = tx.send(signal); })?;
//! watcher.watch(["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"])?;
//! for signal in rx.iter() { println!("{signal:?}"); }
//! # Ok::<(), depositkit_core::Error>(())
//! ```

pub mod addresses;
mod evm;
mod runner;
pub mod shared;
pub mod signal;
mod solana;
pub mod tracker;
mod transport;
mod ws;
mod ws_stream;

use std::sync::Arc;
use std::time::Duration;

use crate::chains::{AddressType, Chain, get_address_type};
use crate::error::{Error, Result};
use crate::services::HttpSettings;
use crate::tokens::{DEFAULT_SUPPORTED_TOKENS, TokenType, token_info};

use addresses::WatchedAddresses;
use signal::ChainSignal;

/// The [`index`](signal::TransferSeen::index) of an EVM transaction's native value transfer
/// (a log's index is its position among the transaction's logs, always smaller).
pub const NATIVE_TRANSFER_INDEX: u32 = u32::MAX;

/// How a watcher follows its chain.
#[derive(Debug, Clone)]
pub struct WatchSettings {
    /// The pause between two looks at the chain's newest block or slot when nothing changed:
    /// the detection latency's main part (on a polled endpoint).
    pub poll_interval: Duration,
    /// On a websocket endpoint that follows new heads for the watcher (`eth_subscribe`): the
    /// longest pause without a head before it looks anyway (a subscription that went quiet).
    pub subscribed_poll_interval: Duration,
    /// The longest pause between two attempts while the endpoint is down (the pause doubles
    /// from `poll_interval` up to this).
    pub max_backoff: Duration,
    /// Blocks read per step while catching up (the rest in the next steps, without pause).
    pub max_blocks_per_step: u64,
    /// Recent blocks remembered: the deepest reorg followed block by block (deeper ones are
    /// followed too, by starting again below the window).
    pub reorg_window: usize,
    /// The first block (EVM) or slot (Solana) to read; `None`: the chain's newest at start.
    pub from_height: Option<u64>,
    /// Watched addresses per `eth_getLogs` filter.
    pub addresses_per_filter: usize,
    /// Requests of one step made at the same time (the `eth_getLogs` filters of many
    /// addresses, the receipts of a block's transfers), each on a thread of the step's own.
    pub parallel_requests: usize,
    /// Signatures asked per address and step (Solana).
    pub signatures_per_address: usize,
    /// The HTTP settings of the endpoint's client; its retries should stay off (the watcher
    /// backs off itself and reports [`Down`](ChainSignal::Down)).
    pub http: HttpSettings,
}

impl Default for WatchSettings {
    fn default() -> Self {
        let mut http = HttpSettings { timeout: Duration::from_secs(10), ..HttpSettings::default() };
        http.retry.max_retries = 0;
        WatchSettings {
            poll_interval: Duration::from_millis(100),
            subscribed_poll_interval: Duration::from_secs(2),
            max_backoff: Duration::from_secs(5),
            max_blocks_per_step: 100,
            reorg_window: 128,
            from_height: None,
            addresses_per_filter: 500,
            parallel_requests: 4,
            signatures_per_address: 100,
            http,
        }
    }
}

/// A running watcher of one chain: a thread of its own following the chain's endpoint and
/// calling the sink with each [`ChainSignal`], in the chain's order. Stops when dropped.
pub struct ChainWatcher {
    chain_id: u64,
    addresses: Arc<WatchedAddresses>,
    control: Arc<runner::Control>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ChainWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainWatcher")
            .field("chain_id", &self.chain_id)
            .field("addresses", &self.addresses.len())
            .finish_non_exhaustive()
    }
}

impl ChainWatcher {
    /// Starts watching chain `chain_id` (an EVM chain or Solana, by depositkit's chain table)
    /// through the JSON-RPC endpoint `url` (`http(s)://`, or for an EVM chain `ws(s)://`: new
    /// heads by subscription where the endpoint offers it); `sink` gets every signal, on the watcher's thread
    /// (keep it short: forward to a channel or a queue). Nothing is watched until
    /// [`watch`](ChainWatcher::watch) adds addresses; heads are reported from the start.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) for an unknown chain or a
    /// URL that is not `http(s)://` (or `ws(s)://` on an EVM chain); [`ErrorKind::Internal`](crate::ErrorKind::Internal) when
    /// the thread cannot start. An endpoint that cannot be reached is not an error: the watcher
    /// reports [`Down`](ChainSignal::Down) and retries.
    pub fn start(
        chain_id: u64,
        url: &str,
        settings: WatchSettings,
        sink: impl Fn(ChainSignal) + Send + 'static,
    ) -> Result<ChainWatcher> {
        let chain = Chain::from_id(chain_id)
            .ok_or_else(|| Error::configuration(format!("Unknown chain ID: {chain_id}")))?;
        let http = url.starts_with("http://") || url.starts_with("https://");
        let evm = get_address_type(chain_id) == AddressType::Evm;
        if !(http || evm && transport::is_websocket(url)) {
            let wanted = if evm { "an http(s) or ws(s)" } else { "an http(s)" };
            return Err(Error::configuration(format!(
                "the chain watcher of {} needs {wanted} endpoint, got {}",
                chain.name(),
                crate::describe::quote(&crate::chain::rpc::origin(url))
            )));
        }
        let addresses = Arc::new(WatchedAddresses::new(chain_id));
        let follower = match get_address_type(chain_id) {
            AddressType::Evm => runner::Follower::Evm(Box::new(evm::EvmFollower::new(
                chain_id,
                url,
                Arc::clone(&addresses),
                settings.clone(),
            ))),
            AddressType::Solana => runner::Follower::Solana(Box::new(solana::SolanaFollower::new(
                chain_id,
                url,
                Arc::clone(&addresses),
                settings.clone(),
            ))),
        };
        let control = Arc::new(runner::Control::default());
        let thread =
            runner::spawn(chain_id, follower, settings, Arc::clone(&control), Box::new(sink))?;
        Ok(ChainWatcher { chain_id, addresses, control, thread: Some(thread) })
    }

    /// The chain watched.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// Starts following transfers into `addresses` (from the next block or slot read); returns
    /// how many were new.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) naming the first address
    /// that is not one of the chain (none is added then).
    pub fn watch<'a>(&self, addresses: impl IntoIterator<Item = &'a str>) -> Result<usize> {
        let added = self.addresses.add(addresses)?;
        self.control.wake();
        Ok(added)
    }

    /// Stops following `addresses`; returns how many were watched.
    pub fn unwatch<'a>(&self, addresses: impl IntoIterator<Item = &'a str>) -> usize {
        self.addresses.remove(addresses)
    }

    /// How many addresses are watched.
    pub fn watched(&self) -> usize {
        self.addresses.len()
    }

    /// Looks at the chain now instead of at the end of the current pause.
    pub fn wake(&self) {
        self.control.wake();
    }

    /// Stops the watcher and waits for its thread (at most one endpoint request's timeout).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.control.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for ChainWatcher {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The token depositkit knows at `contract` on `chain_id` (`None`: the chain's native coin).
pub fn token_of(chain_id: u64, contract: Option<&str>) -> Option<TokenType> {
    let chain = Chain::from_id(chain_id)?;
    DEFAULT_SUPPORTED_TOKENS.into_iter().find(|token| {
        token_info(*token, chain).is_some_and(|info| match (contract, info.contract) {
            (None, None) => true,
            (Some(wanted), Some(known)) => {
                wanted.eq_ignore_ascii_case(known)
                    || info.bridged_contract.is_some_and(|b| wanted.eq_ignore_ascii_case(b))
            }
            _ => false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_by_contract() {
        assert_eq!(token_of(8453, None), Some(TokenType::ETH));
        let usdc = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913";
        assert_eq!(token_of(8453, Some(usdc)), Some(TokenType::USDC));
        assert_eq!(token_of(8453, Some("0x0000000000000000000000000000000000000001")), None);
        assert_eq!(token_of(137, None), None, "POL is no depositkit token");
        assert_eq!(token_of(101, None), Some(TokenType::SOL));
    }

    #[test]
    fn bad_endpoints_are_refused_without_their_path() {
        let err =
            ChainWatcher::start(101, "ws://node.example/SECRET", WatchSettings::default(), |_| {})
                .unwrap_err();
        assert!(!err.message().contains("SECRET") && err.message().contains("http(s)"), "{err}");
        let err = ChainWatcher::start(
            8453,
            "ftp://node.example/SECRET",
            WatchSettings::default(),
            |_| {},
        )
        .unwrap_err();
        assert!(!err.message().contains("SECRET") && err.message().contains("ws(s)"), "{err}");
        assert!(
            ChainWatcher::start(5, "http://127.0.0.1:1", WatchSettings::default(), |_| {}).is_err()
        );
    }
}
