//! The options of the chain watchers: `chainRpcUrls` (which chains are watched, at which
//! endpoint) and `finality` (when a deposit they show is final; its type and rules are
//! `deposit::finality::policy`'s). `Debug` never shows an endpoint: its path or query may hold
//! a provider's key.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::chains::{AddressType, Chain};
use crate::deposit::finality::FinalityConfig;
use crate::deposit::finality::policy::finality_problem;
use crate::error::{Error, Result};

use super::checks::check_url;

/// The JSON-RPC endpoint of every chain to watch (chain id → URL): EVM nodes
/// (`eth_getLogs`, block tags; `http(s)://`, or `ws(s)://` to be told of new heads by
/// `eth_subscribe`) and Solana's (`getSignaturesForAddress`, commitments; `http(s)://`). A chain
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
        let option = format!("{name} of {} ({chain_id})", chain.name());
        // An EVM chain's endpoint may be a websocket (`chain::watch`: new heads by
        // subscription); checked as the http(s) URL it matches.
        let websocket = ["ws://", "wss://"].iter().find_map(|scheme| url.strip_prefix(scheme));
        match websocket {
            Some(rest) if chain.address_type() == AddressType::Evm => {
                let scheme = if url.starts_with("wss://") { "https://" } else { "http://" };
                check_url(&option, &format!("{scheme}{rest}")).map_err(|_| {
                    Error::configuration(format!(
                        "{option} is not a valid websocket URL: {}",
                        crate::describe::quote(url)
                    ))
                })?;
            }
            Some(_) => {
                return Err(Error::configuration(format!(
                    "{option} must be an http:// or https:// URL (a websocket endpoint serves EVM chains only), got {}",
                    crate::describe::quote(url)
                )));
            }
            None => check_url(&option, url)?,
        }
    }
    Ok(())
}

pub(super) fn check_finality(config: &FinalityConfig) -> Result<()> {
    finality_problem(config).map_or(Ok(()), |why| Err(Error::configuration(why)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(chain_id: u64, url: &str) -> Result<()> {
        check_chain_rpc_urls("chainRpcUrls", &ChainRpcUrls([(chain_id, url.to_owned())].into()))
    }

    #[test]
    fn evm_chains_take_websocket_endpoints_and_solana_does_not() {
        assert!(check(8453, "wss://base.example/v2/key").is_ok());
        assert!(check(8453, "ws://127.0.0.1:8545").is_ok());
        assert!(check(8453, "https://base.example").is_ok());
        let err = check(101, "wss://solana.example").unwrap_err();
        assert!(err.message().contains("EVM chains only"), "{err}");
        let err = check(8453, "ws://").unwrap_err();
        assert!(err.message().contains("\"ws://\""), "{err}");
        let err = check(8453, "ftp://base.example").unwrap_err();
        assert!(err.message().contains("http://"), "{err}");
    }
}
