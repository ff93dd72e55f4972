//! devnet's simulated chains: every chain that is not chain-backed gets blocks (slots on
//! Solana) holding the deposits devnet credits on its ledger, so that a chain watcher can follow
//! it exactly as it follows a real node (`docs/devnet-chains.md`).
//!
//! - [`chain`]: one chain's blocks, heads and reorgs (data and decisions).
//! - [`evm_rpc`] and [`solana_rpc`]: the JSON-RPC subsets served per chain at
//!   `POST /devnet/chains/{chainId}/rpc`.
//! - [`routes`]: that endpoint and the admin endpoints `…/reorg` and `…/mine`.
//!
//! Blocks come from three sources: each credited deposit is included at once in a block of its
//! own; [`SimSettings::block_time`] adds (empty) blocks as time passes; `…/mine` adds blocks on
//! demand. `safe` (Solana: `confirmed`) and `finalized` trail the newest block by
//! [`SimSettings::safe_lag`] and [`SimSettings::finalized_lag`] blocks. A reorg replaces the
//! last blocks; the deposits it drops leave the ledger (the balance the deposit client polls
//! goes back down) and, when asked, come back a few blocks later under the same transaction
//! hash, credited again.

pub mod chain;
pub mod evm_rpc;
pub mod routes;
pub mod solana_rpc;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use depositkit_core::{AddressType, Chain, TokenType, U256, get_address_type, token_info};
use serde::Deserialize;

pub use chain::{Lags, Reorganised, SimBlock, SimChain, SimTransfer};

use crate::error::{Error, Result};
use crate::services::Services;
use crate::services::admin::DepositRequest;
use crate::store::{Credit, Store, Uncredit};

/// How the simulated chains make blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimSettings {
    /// An empty block this often (`None`: blocks only for deposits and `…/mine`).
    pub block_time: Option<Duration>,
    /// `latest − safe` (Solana: `processed − confirmed`), in blocks.
    pub safe_lag: u64,
    /// `latest − finalized`, in blocks: also the deepest reorg `…/reorg` accepts.
    pub finalized_lag: u64,
}

impl Default for SimSettings {
    /// A block a second; `safe` 2 and `finalized` 5 blocks behind the newest.
    fn default() -> Self {
        SimSettings { block_time: Some(Duration::from_secs(1)), safe_lag: 2, finalized_lag: 5 }
    }
}

impl SimSettings {
    fn lags(&self) -> Lags {
        Lags { safe: self.safe_lag, finalized: self.finalized_lag }
    }
}

/// A `POST /devnet/chains/{chainId}/reorg` body.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReorgRequest {
    /// How many of the newest blocks are replaced (at least 1, at most `finalizedLag`).
    pub depth: u64,
    /// The deposits (transaction hashes) taken out of the chain; the other transfers of the
    /// replaced blocks go into the first new block.
    #[serde(default)]
    pub drop: Vec<String>,
    /// The dropped deposits come back in the block this many blocks past the new tip.
    pub readd_after_blocks: Option<u64>,
}

/// The newest, safe and finalized heights of one simulated chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heads {
    pub latest: u64,
    pub safe: u64,
    pub finalized: u64,
}

/// A chain and when it last made a block.
#[derive(Debug)]
struct Clocked {
    chain: SimChain,
    last_block: Instant,
}

/// The simulated chains of one server, made on first use.
#[derive(Debug)]
pub struct SimChains {
    settings: SimSettings,
    store: Store,
    chains: Mutex<BTreeMap<u64, Clocked>>,
}

impl SimChains {
    /// No chain yet; deposits credited in `store` are put in blocks by
    /// [`SimChains::include`].
    pub fn new(store: Store, settings: SimSettings) -> Self {
        SimChains { settings, store, chains: Mutex::new(BTreeMap::new()) }
    }

    /// The settings.
    pub fn settings(&self) -> SimSettings {
        self.settings
    }

    /// Includes a deposit just credited on the ledger in a new block of its chain; the block's
    /// height.
    ///
    /// # Errors
    /// An unknown chain; the ledger failed to credit re-added transfers due in that block.
    pub fn include(&self, chain_id: u64, transfer: SimTransfer) -> Result<u64> {
        self.with_chain(chain_id, |chains, clocked| {
            let block = chains.make_block(clocked, vec![transfer])?;
            Ok(block)
        })
    }

    /// Reads chain `chain_id` (brought up to date with the clock first).
    ///
    /// # Errors
    /// An unknown chain.
    pub fn read<T>(&self, chain_id: u64, read: impl FnOnce(&SimChain, Lags) -> T) -> Result<T> {
        let lags = self.settings.lags();
        self.with_chain(chain_id, |_, clocked| Ok(read(&clocked.chain, lags)))
    }

    /// The heads of chain `chain_id`.
    ///
    /// # Errors
    /// An unknown chain.
    pub fn heads(&self, chain_id: u64) -> Result<Heads> {
        self.read(chain_id, |chain, lags| {
            let (latest, safe, finalized) = chain.heads(lags);
            Heads { latest, safe, finalized }
        })
    }

    /// Adds `blocks` empty blocks (at most 10,000) to chain `chain_id`; its heads then.
    ///
    /// # Errors
    /// An unknown chain or too many blocks; the ledger failed to credit re-added transfers.
    pub fn mine(&self, chain_id: u64, blocks: u64) -> Result<Heads> {
        if blocks > MAX_CATCH_UP {
            return Err(Error::invalid("blocks", format!("at most {MAX_CATCH_UP}, got {blocks}")));
        }
        self.with_chain(chain_id, |chains, clocked| {
            for _ in 0..blocks {
                chains.make_block(clocked, Vec::new())?;
            }
            Ok(())
        })?;
        self.heads(chain_id)
    }

    /// Replaces the newest blocks of chain `chain_id` as `request` says; the dropped deposits
    /// leave the ledger first (all or none).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the problem: a depth of 0 or reaching a finalized block, a
    /// dropped transaction that is not in the replaced blocks, a deposit already swept.
    pub fn reorg(&self, chain_id: u64, request: &ReorgRequest) -> Result<Reorganised> {
        let lags = self.settings.lags();
        self.with_chain(chain_id, |_, clocked| {
            let replaceable = clocked
                .chain
                .replaceable(request.depth, lags)
                .map_err(|m| Error::invalid("reorg", m))?;
            for tx in &request.drop {
                if !replaceable.iter().any(|t| t.tx.eq_ignore_ascii_case(tx)) {
                    return Err(Error::invalid(
                        "drop",
                        format!("{tx} is not a deposit in the {} newest blocks", request.depth),
                    ));
                }
            }
            let out: Vec<Uncredit<'_>> = replaceable
                .iter()
                .filter(|t| request.drop.iter().any(|d| d.eq_ignore_ascii_case(&t.tx)))
                .map(|t| Uncredit {
                    tx_hash: &t.tx,
                    address: &t.to,
                    chain_id,
                    token: t.token,
                    raw_amount: t.raw_amount,
                })
                .collect();
            self.store.uncredit(&out)?;
            let done = clocked.chain.reorganise(
                request.depth,
                &request.drop,
                request.readd_after_blocks,
                unix_seconds(),
            );
            clocked.last_block = Instant::now();
            Ok(done)
        })
    }

    /// Brings every chain up to date with the clock (the server's block clock calls it).
    pub fn tick(&self) {
        let ids: Vec<u64> =
            self.chains.lock().unwrap_or_else(PoisonError::into_inner).keys().copied().collect();
        for chain_id in ids {
            if let Err(e) = self.with_chain(chain_id, |_, _| Ok(())) {
                eprintln!("depositkit-devnet: simulated chain {chain_id}: {e}");
            }
        }
    }

    /// Runs `work` on chain `chain_id` (made on first use), after the blocks the clock owes.
    fn with_chain<T>(
        &self,
        chain_id: u64,
        work: impl FnOnce(&Self, &mut Clocked) -> Result<T>,
    ) -> Result<T> {
        if Chain::from_id(chain_id).is_none() {
            return Err(Error::invalid("chainId", format!("unknown chain id {chain_id}")));
        }
        let mut chains = self.chains.lock().unwrap_or_else(PoisonError::into_inner);
        let clocked = chains.entry(chain_id).or_insert_with(|| Clocked {
            chain: SimChain::new(chain_id, unix_seconds()),
            last_block: Instant::now(),
        });
        if let Some(block_time) = self.settings.block_time.filter(|t| !t.is_zero()) {
            let owed = clocked.last_block.elapsed().as_nanos() / block_time.as_nanos();
            let owed = u64::try_from(owed).unwrap_or(u64::MAX);
            if owed > MAX_CATCH_UP {
                clocked.last_block = Instant::now(); // a long pause: no flood of empty blocks
            }
            for _ in 0..owed.min(MAX_CATCH_UP) {
                self.make_block(clocked, Vec::new())?;
                clocked.last_block += block_time;
            }
        }
        work(self, clocked)
    }

    /// Appends a block with `transfers` and the re-added ones due at its height (credited again
    /// first: if the ledger fails, they stay due and no block is made); its height.
    fn make_block(&self, clocked: &mut Clocked, transfers: Vec<SimTransfer>) -> Result<u64> {
        let height = clocked.chain.tip().number + 1;
        let mut due = clocked.chain.take_due(height);
        if !due.is_empty() {
            let chain_id = clocked.chain.chain_id;
            let credits: Vec<(Credit<'_>, &str)> = due
                .iter()
                .map(|t| {
                    let credit = Credit {
                        address: &t.to,
                        chain_id,
                        token: t.token,
                        raw_amount: t.raw_amount,
                        sender: t.sender.as_deref(),
                        price_usd: t.price_usd,
                    };
                    (credit, t.tx.as_str())
                })
                .collect();
            if let Err(e) = self.store.recredit(&credits) {
                clocked.chain.schedule(height, due);
                return Err(e);
            }
        }
        due.extend(transfers);
        Ok(clocked.chain.append(due, unix_seconds()).number)
    }
}

/// The most blocks made at once (by `…/mine`, or by the clock after a pause).
pub const MAX_CATCH_UP: u64 = 10_000;

/// Includes a credit devnet just made in the simulated chain of its chain, as the transfer
/// `tx_hash` (a no-op for a chain-backed chain, where money arrives by real transfers). A
/// failure is logged, never the credit's: the ledger has it, and balance polling finds it.
pub fn record_credit(services: &Services, credit: &Credit<'_>, tx_hash: &str) {
    if services.chain_backed(credit.chain_id).is_some() {
        return;
    }
    let contract = Chain::from_id(credit.chain_id)
        .and_then(|chain| token_info(credit.token, chain))
        .and_then(|info| info.contract)
        .map(|c| match get_address_type(credit.chain_id) {
            AddressType::Evm => c.to_ascii_lowercase(),
            AddressType::Solana => c.to_owned(),
        });
    let transfer = SimTransfer {
        tx: tx_hash.to_owned(),
        to: credit.address.to_owned(),
        token: credit.token,
        contract,
        raw_amount: credit.raw_amount,
        sender: credit.sender.map(str::to_owned),
        price_usd: credit.price_usd,
    };
    if let Err(e) = services.simchains.include(credit.chain_id, transfer) {
        eprintln!("depositkit-devnet: simulated chain {}: {e}", credit.chain_id);
    }
}

/// [`record_credit`] for a deposit of `raw_amount` credited as `request` asked (already
/// checked by [`admin::deposit`](crate::services::admin::deposit)).
pub fn record_deposit(
    services: &Services,
    request: &DepositRequest,
    tx_hash: &str,
    raw_amount: U256,
) {
    let Ok(token) = request.token.parse::<TokenType>() else { return };
    let credit = Credit {
        address: &request.address,
        chain_id: request.chain_id,
        token,
        raw_amount,
        sender: request.sender.as_deref(),
        price_usd: services.prices.usd(token),
    };
    record_credit(services, &credit, tx_hash);
}

/// The block clock of a server: brings the chains up to date every `block_time`.
pub async fn run_clock(sims: Arc<SimChains>) {
    let Some(block_time) = sims.settings.block_time.filter(|t| !t.is_zero()) else { return };
    let mut interval = tokio::time::interval(block_time);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let sims = Arc::clone(&sims);
        let _ = tokio::task::spawn_blocking(move || sims.tick()).await;
    }
}

fn unix_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
