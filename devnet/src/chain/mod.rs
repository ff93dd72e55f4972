//! devnet's chain-backed mode (`docs/funding.md` §2): the chains of a chains file are real
//! (anvil nodes, the LiteSVM JSON-RPC server), and devnet reads and moves money on them with
//! keys it derives per account.
//!
//! One module per concept:
//!
//! - [`config`]: the chains file.
//! - [`keys`]: the accounts' and the vault's keys; [`evm_signer`]: EIP-155 legacy transactions.
//! - [`evm`] and [`solana`]: one chain each — reads, signed sends and the fate of a sent
//!   transaction, over `depositkit_core::chain`'s RPC clients.
//! - [`inventory`]: stocking the vault with the chains' development methods.
//! - [`ledger_sync`]: turning chain balances into the accounts' `received` and receipts;
//!   [`reorg`]: taking back what a reorganisation of a chain removed.
//! - [`transfers`]: sweeps and refunds as collect + deliver legs, resumable.
//!
//! Every function here blocks (HTTP to the nodes); the server calls them from `spawn_blocking`.
//! A node that fails or cannot be reached is a [`ChainError`], which the services answer with
//! 502 `CHAIN_UNAVAILABLE` naming the chain.

pub mod config;
pub mod evm;
pub mod evm_signer;
pub mod inventory;
pub mod keys;
pub mod ledger_sync;
pub mod reorg;
pub mod solana;
pub mod transfers;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use depositkit_core::services::HttpSettings;
use depositkit_core::{Chain, TokenType, U256};

pub use config::{Asset, ChainsConfig, SOLANA_CHAIN_ID, native_token};
use evm::EvmChain;
use keys::KeyPair;
use solana::SolanaChain;

use crate::error::{Error, Result};

/// How long devnet waits for one of its transactions to be mined or confirmed.
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(30);

/// A chain that failed: unreachable, an error answer, a transaction not confirmed in time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ChainError {
    /// The chain at fault.
    pub chain_id: u64,
    /// What went wrong, naming the chain.
    pub message: String,
}

impl ChainError {
    /// An error of `chain_id`; the message is prefixed with the chain's name.
    pub fn new(chain_id: u64, message: impl std::fmt::Display) -> Self {
        let name = Chain::from_id(chain_id).map_or("unknown chain", Chain::name);
        ChainError { chain_id, message: format!("{name} (chain {chain_id}): {message}") }
    }
}

/// `Result` of chain work.
pub type ChainResult<T> = std::result::Result<T, ChainError>;

/// What chain-backed work that also reads and writes the store can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ChainFailure {
    /// A chain failed (502 `CHAIN_UNAVAILABLE`).
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] Error),
    /// The account's deposit address is not the address of its devnet key (an account opened by
    /// a devnet before chain-backed mode): money cannot leave it.
    #[error("{0}")]
    NoKey(String),
}

/// The chain-backed chains of one server, with the vault and the locks that keep devnet's own
/// transactions in order.
pub struct Chains {
    config: ChainsConfig,
    evm: BTreeMap<u64, EvmChain>,
    solana: Option<SolanaChain>,
    vault: KeyPair,
    accounts: AccountLocks,
}

impl std::fmt::Debug for Chains {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chains")
            .field("chains", &self.config.chain_ids())
            .field("vault", &self.vault.evm_address())
            .finish_non_exhaustive()
    }
}

impl Chains {
    /// Connects to the chains of `config`: checks each EVM node's chain id and stocks the vault
    /// ([`inventory::stock`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a bad chains file; [`Error::Io`] naming the chain when a node
    /// cannot be reached, has another chain id, or refuses the stocking.
    pub fn connect(config: ChainsConfig) -> Result<Self> {
        config.validate()?;
        let settings = HttpSettings::default();
        let evm = config
            .evm
            .iter()
            .map(|c| (c.chain_id, EvmChain::new(c.chain_id, &c.rpc_url, &settings)))
            .collect();
        let solana = config.solana.as_ref().map(|c| SolanaChain::new(&c.rpc_url, &settings));
        let chains = Chains {
            config,
            evm,
            solana,
            vault: KeyPair::vault(),
            accounts: AccountLocks::default(),
        };
        inventory::stock(&chains).map_err(|e| {
            Error::io("cannot use the chains file", std::io::Error::other(e.message))
        })?;
        Ok(chains)
    }

    /// The chains file.
    pub fn config(&self) -> &ChainsConfig {
        &self.config
    }

    /// The chain-backed chain ids.
    pub fn chain_ids(&self) -> Vec<u64> {
        self.config.chain_ids()
    }

    /// Whether `chain_id` is chain-backed.
    pub fn is_chain_backed(&self, chain_id: u64) -> bool {
        self.config.is_chain_backed(chain_id)
    }

    /// The vault's keys.
    pub fn vault(&self) -> &KeyPair {
        &self.vault
    }

    /// The EVM chain `chain_id`.
    ///
    /// # Errors
    /// When it is not chain-backed (a caller's mistake: they check first).
    pub fn evm(&self, chain_id: u64) -> ChainResult<&EvmChain> {
        self.evm
            .get(&chain_id)
            .ok_or_else(|| ChainError::new(chain_id, "not a chain-backed EVM chain"))
    }

    /// The Solana chain.
    ///
    /// # Errors
    /// When Solana is not chain-backed.
    pub fn solana(&self) -> ChainResult<&SolanaChain> {
        self.solana
            .as_ref()
            .ok_or_else(|| ChainError::new(SOLANA_CHAIN_ID, "Solana is not chain-backed"))
    }

    /// The EVM chains.
    pub fn evm_chains(&self) -> impl Iterator<Item = &EvmChain> {
        self.evm.values()
    }

    /// What `address` holds of `token` on the chain-backed chain `chain_id`, read from the
    /// chain now (zero for a token that is not on the chain).
    ///
    /// # Errors
    /// The chain failed, or `address` is not an address of the chain.
    pub fn balance(&self, address: &str, chain_id: u64, token: TokenType) -> ChainResult<U256> {
        let Some(asset) = self.config.asset(chain_id, token) else {
            return Ok(U256::ZERO);
        };
        if chain_id == SOLANA_CHAIN_ID {
            let owner = solana::pubkey(address).map_err(|e| ChainError::new(chain_id, e))?;
            self.solana()?.balance(&owner, asset)
        } else {
            let owner = evm::address(address).map_err(|e| ChainError::new(chain_id, e))?;
            self.evm(chain_id)?.balance(owner, asset, None)
        }
    }

    /// Holds the lock of `account_id` while `work` runs: balance reads and sweeps of one account
    /// never interleave, so a reading never sees gas sent for a collection that is not yet
    /// counted.
    pub fn with_account<T>(&self, account_id: &str, work: impl FnOnce() -> T) -> T {
        let _guard = self.accounts.lock(account_id);
        work()
    }
}

/// Per-account locks, held across blocking chain calls (on blocking-pool threads).
#[derive(Default)]
struct AccountLocks {
    held: Mutex<HashSet<String>>,
    released: Condvar,
}

impl AccountLocks {
    fn lock(&self, account_id: &str) -> AccountGuard<'_> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        while held.contains(account_id) {
            held = self.released.wait(held).unwrap_or_else(PoisonError::into_inner);
        }
        held.insert(account_id.to_owned());
        AccountGuard { locks: self, account_id: account_id.to_owned() }
    }
}

struct AccountGuard<'a> {
    locks: &'a AccountLocks,
    account_id: String,
}

impl Drop for AccountGuard<'_> {
    fn drop(&mut self) {
        let mut held = self.locks.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.remove(&self.account_id);
        self.locks.released.notify_all();
    }
}

/// A short id for an observation without a transaction hash of its own: `0x` + 64 hex digits.
pub(crate) fn observation_id() -> String {
    crate::store::new_tx_hash()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn account_locks_serialize_one_account_only() {
        let locks = Arc::new(AccountLocks::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (locks, inside) = (Arc::clone(&locks), Arc::clone(&inside));
                std::thread::spawn(move || {
                    let _guard = locks.lock("acc_1");
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "thread {i}");
                    // Another account is not held up.
                    drop(locks.lock("acc_2"));
                    std::thread::sleep(Duration::from_millis(2));
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    }

    #[test]
    fn errors_name_the_chain() {
        assert_eq!(ChainError::new(8453, "down").message, "Base (chain 8453): down");
    }
}
