//! Funding deposits from the user's own wallet (spec §1 "Fund from wallet",
//! `docs/funding.md` §3–4).
//!
//! A funding wallet is never the owner or signer of the deposit account: it only sends money to
//! the deposit addresses, which the watcher then detects and sweeps as any deposit.
//!
//! - [`provider`]: the [`WalletProvider`] shape (EIP-1193 / Phantom / balance provider),
//!   [`ProviderError`] and [`EvmProvider`];
//! - [`wallet`]: connecting wallets and reading their accounts;
//! - [`balances`]: discovering the wallets' balances from the first source configured;
//! - [`balance`]: [`FundingBalance`], tied to the client that issued it;
//! - [`evm_transfer`] and [`solana_transfer`]: `fund_from_wallet` on each chain family;
//! - [`transfer`]: [`FundingTransferResult`] and the shared failure messages.
//!
//! - `face.rs`: what a client's funding calls check and run off the caller's thread, through
//!   the client's narrow interface (`deposit/port.rs`); the public methods are
//!   [`DepositClient`](crate::deposit::DepositClient)'s.
//!
//! Everything here is synchronous (the wallets and nodes answer one request at a time); the
//! client runs it on the runtime's blocking pool under its call timeout. Funding owns its
//! settings ([`FundingConfig`], declared with the client's other
//! options) and imports nothing of the client but its port.

pub mod balance;
pub mod balances;
pub mod evm_transfer;
mod face;
pub mod provider;
pub mod solana_transfer;
pub mod transfer;
pub mod wallet;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub use balance::{BalanceSource, FundingBalance};
pub use balances::FUNDING_CHAINS;
pub use provider::{EvmProvider, ProviderError, WalletProvider};
pub use transfer::FundingTransferResult;

use crate::chain::evm::EvmRpc;
use crate::chain::solana::SolanaRpc;
use crate::deposit::config::FundingConfig;
use crate::error::{Error, Result};
use crate::http::JsonPoster;
use crate::services::HttpSettings;
use wallet::Wallets;

/// The funding side of one client: its settings, its wallets and its node clients.
pub(crate) struct Funding {
    /// Ties [`FundingBalance`]s to this client.
    pub(crate) client_id: u64,
    pub(crate) config: FundingConfig,
    /// `funding.minValueUSD`, else the client's `minValueUSD`.
    pub(crate) min_value_usd: f64,
    pub(crate) http: HttpSettings,
    /// The HTTP client of the balance API and proxies.
    poster: JsonPoster,
    wallets: Mutex<Wallets>,
    evm_nodes: Mutex<HashMap<String, Arc<EvmRpc>>>,
    solana_node: Mutex<Option<Arc<SolanaRpc>>>,
}

static NEXT_CLIENT_ID: AtomicU64 = AtomicU64::new(1);

impl Funding {
    pub(crate) fn new(
        config: FundingConfig,
        client_min_value_usd: f64,
        http: HttpSettings,
    ) -> Funding {
        Funding {
            client_id: NEXT_CLIENT_ID.fetch_add(1, Ordering::Relaxed),
            min_value_usd: config.min_value_usd.unwrap_or(client_min_value_usd),
            poster: JsonPoster::new(http.timeout, &http.user_agent, http.retry),
            config,
            http,
            wallets: Mutex::new(Wallets::default()),
            evm_nodes: Mutex::new(HashMap::new()),
            solana_node: Mutex::new(None),
        }
    }

    /// Every funding operation's first check.
    pub(crate) fn ensure_enabled(&self) -> Result<()> {
        if !self.config.enabled {
            return Err(Error::configuration("funding is not enabled"));
        }
        Ok(())
    }

    pub(crate) fn wallets(&self) -> MutexGuard<'_, Wallets> {
        self.wallets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The node client of EVM chain `chain_id` (`funding.evmRpcUrls`, else the public
    /// default), shared so that connections are reused.
    pub(crate) fn evm_node(&self, chain_id: u64) -> Option<Arc<EvmRpc>> {
        let url = self.config.evm_rpc_url(chain_id)?;
        let mut nodes = self.evm_nodes.lock().unwrap_or_else(|e| e.into_inner());
        Some(Arc::clone(
            nodes.entry(url.to_owned()).or_insert_with(|| Arc::new(EvmRpc::new(url, &self.http))),
        ))
    }

    /// The Solana node client (`funding.solanaRpcUrl`, else the public default).
    pub(crate) fn solana_node(&self) -> Arc<SolanaRpc> {
        let mut node = self.solana_node.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(node.get_or_insert_with(|| {
            Arc::new(SolanaRpc::new(self.config.solana_rpc_url(), &self.http))
        }))
    }
}
