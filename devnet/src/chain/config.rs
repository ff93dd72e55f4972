//! The chains file (`docs/funding.md` §1): the local chains devnet backs with real transactions,
//! as `tests/chains/launch.py` prints it.
//!
//! ```json
//! {"evm": [{"chainId": 8453, "rpcUrl": "http://127.0.0.1:40123",
//!           "tokens": {"USDC": {"address": "0x8335…2913", "decimals": 6}}}],
//!  "solana": {"rpcUrl": "http://127.0.0.1:40200",
//!             "mints": {"USDC": {"address": "EPjF…Dt1v", "decimals": 6}}},
//!  "evmDevAccounts": [{"address": "0xf39F…2266", "privateKey": "0xac09…ff80"}]}
//! ```
//!
//! [`ChainsConfig::validate`] checks it against depositkit's own tables: devnet answers amounts
//! with the token table's decimals, so a token deployed with other decimals would be misread.

use std::collections::BTreeMap;
use std::path::Path;

use depositkit_core::{
    AddressType, Chain, DEFAULT_SUPPORTED_TOKENS, TokenType, get_address_type, get_token_decimals,
    token_info, validate_address_for_chain,
};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Solana's chain id in depositkit's table.
pub const SOLANA_CHAIN_ID: u64 = 101;

/// The whole chains file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChainsConfig {
    /// The EVM chains (anvil nodes).
    #[serde(default)]
    pub evm: Vec<EvmChainConfig>,
    /// The Solana node, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solana: Option<SolanaChainConfig>,
    /// anvil's unlocked development accounts (the tests' funding wallets; devnet does not use
    /// them).
    #[serde(default)]
    pub evm_dev_accounts: Vec<DevAccount>,
}

/// One EVM chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvmChainConfig {
    pub chain_id: u64,
    pub rpc_url: String,
    /// Token symbol → its contract (the token's real address on that chain).
    #[serde(default)]
    pub tokens: BTreeMap<String, TokenConfig>,
}

/// The Solana chain (id 101).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SolanaChainConfig {
    pub rpc_url: String,
    /// Token symbol → its mint.
    #[serde(default)]
    pub mints: BTreeMap<String, TokenConfig>,
}

/// A token contract or mint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenConfig {
    pub address: String,
    pub decimals: u8,
}

/// An unlocked development account of the EVM nodes.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevAccount {
    pub address: String,
    pub private_key: String,
}

impl std::fmt::Debug for DevAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Public anvil keys, but keys all the same: keep them out of logs.
        f.debug_struct("DevAccount").field("address", &self.address).finish_non_exhaustive()
    }
}

/// Where a token lives on a chain-backed chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset<'a> {
    /// The chain's native asset (ETH, BNB, SOL).
    Native,
    /// A contract (EVM) or mint (Solana) of the chains file.
    Token(&'a TokenConfig),
}

impl ChainsConfig {
    /// Parses the JSON of a chains file (and validates it).
    ///
    /// # Errors
    /// [`Error::Json`] for malformed JSON; [`Error::InvalidInput`] as [`ChainsConfig::validate`].
    pub fn from_json(text: &str) -> Result<Self> {
        let config: ChainsConfig = serde_json::from_str(text.trim())
            .map_err(|source| Error::Json { context: "chains file".into(), source })?;
        config.validate()?;
        Ok(config)
    }

    /// Reads and parses a chains file.
    ///
    /// # Errors
    /// The file cannot be read; as [`ChainsConfig::from_json`].
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("cannot read the chains file {}", path.display()), e))?;
        Self::from_json(&text)
    }

    /// Checks every chain and token: EVM chain ids known to depositkit and of EVM type, each at
    /// most once; token symbols known and present on that chain in depositkit's table; addresses
    /// valid; decimals equal to the table's; RPC URLs `http(s)://`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the bad entry.
    pub fn validate(&self) -> Result<()> {
        let mut seen = Vec::new();
        for (i, evm) in self.evm.iter().enumerate() {
            let field = format!("chains.evm[{i}]");
            let chain = Chain::from_id(evm.chain_id)
                .filter(|c| c.address_type() == AddressType::Evm)
                .ok_or_else(|| {
                    Error::invalid(
                        format!("{field}.chainId"),
                        format!("{} is not an EVM chain depositkit knows", evm.chain_id),
                    )
                })?;
            if seen.contains(&evm.chain_id) {
                return Err(Error::invalid(
                    format!("{field}.chainId"),
                    format!("chain {} is listed twice", evm.chain_id),
                ));
            }
            seen.push(evm.chain_id);
            check_url(&format!("{field}.rpcUrl"), &evm.rpc_url)?;
            check_tokens(&format!("{field}.tokens"), chain, &evm.tokens)?;
        }
        if let Some(solana) = &self.solana {
            check_url("chains.solana.rpcUrl", &solana.rpc_url)?;
            check_tokens("chains.solana.mints", Chain::SOLANA, &solana.mints)?;
        }
        Ok(())
    }

    /// The chain-backed chain ids, EVM ones in file order, then Solana's.
    pub fn chain_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.evm.iter().map(|c| c.chain_id).collect();
        if self.solana.is_some() {
            ids.push(SOLANA_CHAIN_ID);
        }
        ids
    }

    /// Whether `chain_id` is backed by a real chain.
    pub fn is_chain_backed(&self, chain_id: u64) -> bool {
        if chain_id == SOLANA_CHAIN_ID {
            self.solana.is_some()
        } else {
            self.evm_chain(chain_id).is_some()
        }
    }

    /// The EVM chain `chain_id`.
    pub fn evm_chain(&self, chain_id: u64) -> Option<&EvmChainConfig> {
        self.evm.iter().find(|c| c.chain_id == chain_id)
    }

    /// Where `token` lives on the chain-backed chain `chain_id`; `None` when the chain is not
    /// chain-backed or the token is not on it (neither native nor in the file).
    pub fn asset(&self, chain_id: u64, token: TokenType) -> Option<Asset<'_>> {
        let tokens = if chain_id == SOLANA_CHAIN_ID {
            &self.solana.as_ref()?.mints
        } else {
            &self.evm_chain(chain_id)?.tokens
        };
        if native_token(chain_id) == Some(token) {
            return Some(Asset::Native);
        }
        tokens
            .iter()
            .find(|(symbol, _)| symbol.eq_ignore_ascii_case(token.symbol()))
            .map(|(_, config)| Asset::Token(config))
    }

    /// The tokens of the chain-backed chain `chain_id`: its native asset first, then the file's
    /// tokens in the table's order.
    pub fn tokens(&self, chain_id: u64) -> Vec<TokenType> {
        if !self.is_chain_backed(chain_id) {
            return Vec::new();
        }
        let native = native_token(chain_id);
        native
            .into_iter()
            .chain(
                DEFAULT_SUPPORTED_TOKENS
                    .into_iter()
                    .filter(|t| Some(*t) != native)
                    .filter(|t| self.asset(chain_id, *t).is_some()),
            )
            .collect()
    }
}

/// The native asset of `chain_id` in depositkit's table (ETH, BNB, SOL), if it has one there.
pub fn native_token(chain_id: u64) -> Option<TokenType> {
    let chain = Chain::from_id(chain_id)?;
    DEFAULT_SUPPORTED_TOKENS
        .into_iter()
        .find(|t| token_info(*t, chain).is_some_and(|info| info.is_native()))
}

fn check_url(field: &str, url: &str) -> Result<()> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(Error::invalid(field, format!("{} is not an http(s) URL", crate::describe::quote(url))))
    }
}

fn check_tokens(field: &str, chain: Chain, tokens: &BTreeMap<String, TokenConfig>) -> Result<()> {
    let mut seen = Vec::new();
    for (symbol, config) in tokens {
        let field = format!("{field}.{symbol}");
        let token: TokenType = symbol
            .parse()
            .map_err(|e: depositkit_core::Error| Error::invalid(&field, e.message()))?;
        if seen.contains(&token) {
            return Err(Error::invalid(&field, format!("{token} is listed twice")));
        }
        seen.push(token);
        let info = token_info(token, chain).filter(|info| !info.is_native()).ok_or_else(|| {
            Error::invalid(
                &field,
                format!("depositkit knows no {token} contract on {}", chain.name()),
            )
        })?;
        validate_address_for_chain(&config.address, chain.id())
            .map_err(|e| Error::invalid(format!("{field}.address"), e.message()))?;
        let expected = get_token_decimals(token, Some(chain.id()));
        if config.decimals != expected {
            return Err(Error::invalid(
                format!("{field}.decimals"),
                format!(
                    "{} on {} has {expected} decimals, not {}",
                    token,
                    chain.name(),
                    config.decimals
                ),
            ));
        }
        // The library uses its own token table on the local chains, so the contract must be
        // the real one (the launcher copies the test token's code there).
        let same = match get_address_type(chain.id()) {
            AddressType::Evm => {
                info.contract.is_some_and(|c| c.eq_ignore_ascii_case(&config.address))
            }
            AddressType::Solana => info.contract == Some(config.address.as_str()),
        };
        if !same {
            return Err(Error::invalid(
                format!("{field}.address"),
                format!(
                    "{} is not {token}'s address on {} ({})",
                    config.address,
                    chain.name(),
                    info.contract.unwrap_or_default()
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{"evm": [{"chainId": 8453, "rpcUrl": "http://127.0.0.1:1",
        "tokens": {"USDC": {"address": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "decimals": 6}}},
        {"chainId": 56, "rpcUrl": "http://127.0.0.1:2",
         "tokens": {"USDT": {"address": "0x55d398326f99059fF775485246999027B3197955", "decimals": 18}}}],
      "solana": {"rpcUrl": "http://127.0.0.1:3",
        "mints": {"USDC": {"address": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "decimals": 6}}},
      "evmDevAccounts": [{"address": "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        "privateKey": "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"}]}"#;

    #[test]
    fn parses_and_looks_up() {
        let config = ChainsConfig::from_json(FILE).unwrap();
        assert_eq!(config.chain_ids(), [8453, 56, 101]);
        assert!(config.is_chain_backed(101) && !config.is_chain_backed(1));
        assert_eq!(config.asset(8453, TokenType::ETH), Some(Asset::Native));
        assert!(matches!(config.asset(8453, TokenType::USDC), Some(Asset::Token(_))));
        assert_eq!(config.asset(8453, TokenType::USDT), None);
        assert_eq!(config.tokens(56), [TokenType::BNB, TokenType::USDT]);
        assert_eq!(config.tokens(101), [TokenType::SOL, TokenType::USDC]);
        assert!(config.tokens(1).is_empty());
        assert!(!format!("{:?}", config.evm_dev_accounts[0]).contains("ac0974"));
        assert_eq!(native_token(56), Some(TokenType::BNB));
        assert_eq!(native_token(137), None);
    }

    #[test]
    fn refuses_what_depositkit_would_misread() {
        let bad = [
            FILE.replace("\"chainId\": 56", "\"chainId\": 101"),
            FILE.replace("\"chainId\": 56", "\"chainId\": 8453"),
            FILE.replace("\"decimals\": 18", "\"decimals\": 6"),
            FILE.replace(
                "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
                "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
            ),
            FILE.replace("\"USDT\"", "\"DOGE\""),
            FILE.replace("http://127.0.0.1:3", "ftp://x"),
        ];
        for text in bad {
            assert!(ChainsConfig::from_json(&text).is_err(), "{text}");
        }
        assert!(ChainsConfig::from_json("{").is_err());
        assert_eq!(ChainsConfig::from_json("{}").unwrap().chain_ids(), Vec::<u64>::new());
    }
}
