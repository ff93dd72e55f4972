//! The options of the chain watchers: `chainRpcUrls` (which chains are watched, at which
//! endpoint) and `finality` (when a deposit they show is final; its type and rules are
//! `deposit::finality::policy`'s). `Debug` never shows an endpoint: its path or query may hold
//! a provider's key.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::chains::Chain;
use crate::deposit::finality::FinalityConfig;
use crate::deposit::finality::policy::finality_problem;
use crate::error::{Error, Result};

use super::checks::check_url;

/// The JSON-RPC endpoint of every chain to watch (chain id → URL): EVM nodes
/// (`eth_getLogs`, block tags) and Solana's (`getSignaturesForAddress`, commitments). A chain
/// without an entry is not watched: its deposits are the balance's rises, final at once.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChainRpcUrls(pub BTreeMap<u64, String>);

impl fmt::Debug for ChainRpcUrls {
    /// The chains only: an endpoint's path may hold a provider's key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl ChainRpcUrls {
    /// The endpoint of `chain_id`, when it is watched.
    pub fn get(&self, chain_id: u64) -> Option<&str> {
        self.0.get(&chain_id).map(String::as_str)
    }

    /// Whether no chain is watched.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

pub(super) fn check_chain_rpc_urls(name: &str, urls: &ChainRpcUrls) -> Result<()> {
    for (chain_id, url) in &urls.0 {
        let Some(chain) = Chain::from_id(*chain_id) else {
            return Err(Error::configuration(format!(
                "{name} has an unknown chain ID: {chain_id}. Use chains from the CHAIN constant."
            )));
        };
        check_url(&format!("{name} of {} ({chain_id})", chain.name()), url)?;
    }
    Ok(())
}

pub(super) fn check_finality(config: &FinalityConfig) -> Result<()> {
    finality_problem(config).map_or(Ok(()), |why| Err(Error::configuration(why)))
}
