//! Tokens as the SDK names them (`particle-ua-wire.md` §3, §6): the chains a universal
//! account serves, the primary tokens (named by their type, `"usdc"`), and the `assetId` of
//! any token (`"<chainId>_<address>"` when it is not primary).
//!
//! The primary-token table is the SDK's `SUPPORTED_PRIMARY_TOKENS`; a test checks it against
//! depositkit's own token table (`crate::tokens`: the same contracts and decimals).

use crate::chains::Chain;
use crate::error::{Error, Result};
use crate::tokens::{TokenType, token_info};

/// The chain id the SDK treats as Solana.
pub const SOLANA_CHAIN_ID: u64 = 101;

/// The chains of a universal account, in the SDK's order (`CHAIN_ID`).
pub const SUPPORTED_CHAINS: [u64; 6] = [101, 1, 8453, 42161, 56, 196];

/// The address the SDK gives a chain's native asset, Solana's SOL included.
pub const NATIVE_ADDRESS: &str = "0x0000000000000000000000000000000000000000";

/// The token types a universal account pays with by default (`usePrimaryTokens`).
pub const DEFAULT_PRIMARY_TOKENS: [&str; 5] = ["eth", "usdt", "usdc", "bnb", "sol"];

/// One of the SDK's primary tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimaryToken {
    /// The token type, which is also its `assetId` (`"usdc"`).
    pub kind: &'static str,
    /// Its chain.
    pub chain_id: u64,
    /// Its contract or mint; [`NATIVE_ADDRESS`] for a native asset.
    pub address: &'static str,
    /// Its real decimals (on the wire every amount has 18).
    pub real_decimals: u32,
}

const fn primary(
    kind: &'static str,
    chain_id: u64,
    address: &'static str,
    real_decimals: u32,
) -> PrimaryToken {
    PrimaryToken { kind, chain_id, address, real_decimals }
}

/// The SDK's `SUPPORTED_PRIMARY_TOKENS`.
pub const PRIMARY_TOKENS: [PrimaryToken; 15] = [
    primary("eth", 8453, NATIVE_ADDRESS, 18),
    primary("eth", 1, NATIVE_ADDRESS, 18),
    primary("eth", 42161, NATIVE_ADDRESS, 18),
    primary("eth", 56, "0x2170Ed0880ac9A755fd29B2688956BD959F933F8", 18),
    primary("usdt", 42161, "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", 6),
    primary("usdt", 1, "0xdAC17F958D2ee523a2206206994597C13D831ec7", 6),
    primary("usdt", 56, "0x55d398326f99059fF775485246999027B3197955", 18),
    primary("usdt", 101, "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", 6),
    primary("usdc", 8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 6),
    primary("usdc", 1, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", 6),
    primary("usdc", 42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", 6),
    primary("usdc", 56, "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d", 18),
    primary("usdc", 101, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 6),
    primary("sol", 101, NATIVE_ADDRESS, 9),
    primary("bnb", 56, NATIVE_ADDRESS, 18),
];

/// A token on a chain, as the SDK takes it: `{chainId, address}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRef {
    /// The chain id.
    pub chain_id: u64,
    /// The contract or mint address; [`NATIVE_ADDRESS`] for a native asset.
    pub address: String,
}

impl TokenRef {
    /// `token` on `chain_id` as depositkit knows it (`crate::tokens`): its contract, or the
    /// native address for a native asset (SOL included, as the SDK writes it).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when depositkit knows no
    /// such token on that chain.
    pub fn of(token: TokenType, chain_id: u64) -> Result<TokenRef> {
        let info = Chain::from_id(chain_id).and_then(|chain| token_info(token, chain)).ok_or_else(
            || Error::configuration(format!("no {token} token is known on chain {chain_id}")),
        )?;
        Ok(TokenRef { chain_id, address: info.contract.unwrap_or(NATIVE_ADDRESS).to_owned() })
    }

    /// The primary token this is, if it is one (addresses compared ignoring letter case).
    pub fn primary(&self) -> Option<&'static PrimaryToken> {
        PRIMARY_TOKENS
            .iter()
            .find(|p| p.chain_id == self.chain_id && p.address.eq_ignore_ascii_case(&self.address))
    }

    /// The SDK's `assetId`: the token type of a primary token, else `"<chainId>_<address>"`
    /// with the address as given.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when the chain is not one of
    /// a universal account's (the SDK throws before sending).
    pub fn asset_id(&self) -> Result<String> {
        check_chain(self.chain_id)?;
        Ok(match self.primary() {
            Some(primary) => primary.kind.to_owned(),
            None => format!("{}_{}", self.chain_id, self.address),
        })
    }
}

/// The SDK's token type of `token` (`"usdc"`): its symbol in lower case.
pub fn token_kind(token: TokenType) -> String {
    token.symbol().to_ascii_lowercase()
}

/// Whether `chain_id` is one of a universal account's chains.
///
/// # Errors
/// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) naming it when it is not.
pub fn check_chain(chain_id: u64) -> Result<()> {
    if SUPPORTED_CHAINS.contains(&chain_id) {
        return Ok(());
    }
    Err(Error::configuration(format!(
        "Chain {chain_id} is not supported by universal accounts: expected one of 101, 1, 8453, 42161, 56, 196"
    )))
}

/// The real decimals of the token of `kind` on `chain_id` when it is primary, else of the
/// depositkit token of that symbol there.
pub fn real_decimals(kind: &str, chain_id: u64) -> Option<u32> {
    if let Some(p) =
        PRIMARY_TOKENS.iter().find(|p| p.chain_id == chain_id && p.kind.eq_ignore_ascii_case(kind))
    {
        return Some(p.real_decimals);
    }
    let token: TokenType = kind.parse().ok()?;
    Chain::from_id(chain_id)
        .and_then(|chain| token_info(token, chain))
        .map(|i| u32::from(i.decimals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    /// Every primary token is the same contract, with the same decimals, in depositkit's own
    /// token table.
    #[test]
    fn the_primary_tokens_agree_with_the_token_table() {
        for p in &PRIMARY_TOKENS {
            let token: TokenType = p.kind.parse().unwrap();
            let ours = TokenRef::of(token, p.chain_id).unwrap();
            assert!(ours.address.eq_ignore_ascii_case(p.address), "{p:?} vs {ours:?}");
            assert_eq!(real_decimals(p.kind, p.chain_id), Some(p.real_decimals), "{p:?}");
            let info = token_info(token, Chain::from_id(p.chain_id).unwrap()).unwrap();
            assert_eq!(u32::from(info.decimals), p.real_decimals, "{p:?}");
        }
    }

    /// The document's assetIds (§3, §4.3, §4.5).
    #[test]
    fn asset_ids_as_the_sdk_makes_them() {
        let id = |chain_id: u64, address: &str| {
            TokenRef { chain_id, address: address.to_owned() }.asset_id().unwrap()
        };
        assert_eq!(id(42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"), "usdc");
        assert_eq!(id(42161, "0xAF88D065E77C8CC2239327C5EDB3A432268E5831"), "usdc");
        assert_eq!(id(8453, NATIVE_ADDRESS), "eth");
        assert_eq!(id(101, NATIVE_ADDRESS), "sol");
        assert_eq!(id(56, NATIVE_ADDRESS), "bnb");
        assert_eq!(
            id(8453, "0x4200000000000000000000000000000000000042"),
            "8453_0x4200000000000000000000000000000000000042"
        );
        assert_eq!(
            id(101, "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"),
            "101_JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"
        );
        // X Layer has no primary tokens.
        assert_eq!(id(196, NATIVE_ADDRESS), "196_0x0000000000000000000000000000000000000000");
        // USDT on Base is not a primary token of the SDK (depositkit knows its contract).
        let usdt_base = TokenRef::of(TokenType::USDT, 8453).unwrap();
        assert_eq!(usdt_base.asset_id().unwrap(), format!("8453_{}", usdt_base.address));
        let e = TokenRef { chain_id: 10, address: NATIVE_ADDRESS.into() }.asset_id().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration);
        assert!(e.message().contains("Chain 10"), "{e}");
    }

    #[test]
    fn native_assets_use_the_zero_address() {
        assert_eq!(TokenRef::of(TokenType::SOL, 101).unwrap().address, NATIVE_ADDRESS);
        assert_eq!(TokenRef::of(TokenType::ETH, 42161).unwrap().address, NATIVE_ADDRESS);
        assert!(TokenRef::of(TokenType::SOL, 1).is_err());
    }
}
