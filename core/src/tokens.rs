//! Tokens (spec §2 `TokenType`), their per-chain contracts and decimals, and the rules that say
//! where each can be delivered (spec §4 destination matrix) or bought with fiat (onramp rules).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::chains::Chain;
use crate::error::{Error, Result};

/// A token depositkit can detect, sweep or deliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TokenType {
    /// Ether (native on Ethereum, Optimism, Base, Arbitrum, Linea; bridged on BNB Chain).
    ETH,
    /// USD Coin.
    USDC,
    /// Tether USD.
    USDT,
    /// Bitcoin (wrapped forms).
    BTC,
    /// Solana's native token.
    SOL,
    /// BNB Chain's native token.
    BNB,
}

/// Every token, in the spec's order; also the spec's `DEFAULT_SUPPORTED_TOKENS`.
pub const DEFAULT_SUPPORTED_TOKENS: [TokenType; 6] = [
    TokenType::ETH,
    TokenType::USDC,
    TokenType::USDT,
    TokenType::BTC,
    TokenType::SOL,
    TokenType::BNB,
];

impl TokenType {
    /// The upper-case symbol (`"USDC"`).
    pub const fn symbol(self) -> &'static str {
        match self {
            TokenType::ETH => "ETH",
            TokenType::USDC => "USDC",
            TokenType::USDT => "USDT",
            TokenType::BTC => "BTC",
            TokenType::SOL => "SOL",
            TokenType::BNB => "BNB",
        }
    }

    /// The token's usual decimals, before any per-chain override (see [`get_token_decimals`]).
    pub const fn default_decimals(self) -> u8 {
        match self {
            TokenType::ETH | TokenType::BNB => 18,
            TokenType::USDC | TokenType::USDT => 6,
            TokenType::BTC => 8,
            TokenType::SOL => 9,
        }
    }

    /// Whether this is a US-dollar stablecoin.
    pub const fn is_stablecoin(self) -> bool {
        matches!(self, TokenType::USDC | TokenType::USDT)
    }
}

impl fmt::Display for TokenType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl FromStr for TokenType {
    type Err = Error;

    /// Parses a symbol in any letter case (`"usdc"`, `"USDC"`); nothing else is accepted.
    fn from_str(text: &str) -> Result<Self> {
        DEFAULT_SUPPORTED_TOKENS
            .into_iter()
            .find(|t| t.symbol().eq_ignore_ascii_case(text))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "unknown token {}: expected one of ETH, USDC, USDT, BTC, SOL, BNB",
                    crate::describe::quote(text)
                ))
            })
    }
}

/// Where a token lives on one chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TokenInfo {
    /// The token.
    pub token: TokenType,
    /// The chain id.
    #[serde(rename = "chainId")]
    pub chain_id: u64,
    /// The contract (EVM) or mint (Solana) address; `None` for the chain's native asset.
    pub contract: Option<&'static str>,
    /// A bridged variant of the token on this chain (USDC.e), if one is in use.
    #[serde(rename = "bridgedContract")]
    pub bridged_contract: Option<&'static str>,
    /// Decimals of the token on this chain.
    pub decimals: u8,
}

impl TokenInfo {
    /// Whether this is the chain's native asset (no contract).
    pub const fn is_native(&self) -> bool {
        self.contract.is_none()
    }
}

/// Where `token` lives on `chain`: the public contract addresses of the reference SDK
/// (`TOKEN_ADDRESSES`, EIP-55 checksummed), the native assets, and bridged ETH on BNB Chain.
/// Returns `None` where depositkit knows no such token on the chain.
pub fn token_info(token: TokenType, chain: Chain) -> Option<TokenInfo> {
    use Chain as C;
    use TokenType as T;
    let (contract, bridged): (Option<&'static str>, Option<&'static str>) = match (token, chain) {
        (T::USDC, C::ETHEREUM) => (Some("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"), None),
        (T::USDC, C::OPTIMISM) => (
            Some("0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85"),
            Some("0x7F5c764cBc14f9669B88837ca1490cCa17c31607"),
        ),
        (T::USDC, C::BNB) => (Some("0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d"), None),
        (T::USDC, C::POLYGON) => (Some("0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"), None),
        (T::USDC, C::BASE) => (Some("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"), None),
        (T::USDC, C::ARBITRUM) => (
            Some("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
            Some("0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8"),
        ),
        (T::USDC, C::AVALANCHE) => (
            Some("0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E"),
            Some("0xA7D7079b0FEaD91F3e65f86E8915Cb59c1a4C664"),
        ),
        (T::USDC, C::LINEA) => (Some("0x176211869cA2b568f2A7D4EE941E073a821EE1ff"), None),
        (T::USDC, C::XLAYER) => (Some("0x74b7F16337b8972027F6196A17a631aC6dE26d22"), None),
        (T::USDC, C::MONAD) => (Some("0x754704Bc059F8C67012fEd69BC8A327a5aafb603"), None),
        (T::USDC, C::SONIC) => (Some("0x29219dd400f2Bf60E5a23d13Be72B486D4038894"), None),
        (T::USDC, C::BERACHAIN) => (Some("0x549943e04f40284185054145c6E4e9568C1D3241"), None),
        (T::USDC, C::SOLANA) => (Some("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"), None),
        (T::USDT, C::ETHEREUM) => (Some("0xdAC17F958D2ee523a2206206994597C13D831ec7"), None),
        (T::USDT, C::OPTIMISM) => (Some("0x94b008aA00579c1307B0EF2c499aD98a8ce58e58"), None),
        (T::USDT, C::BNB) => (Some("0x55d398326f99059fF775485246999027B3197955"), None),
        (T::USDT, C::POLYGON) => (Some("0xc2132D05D31c914a87C6611C10748AEb04B58e8F"), None),
        (T::USDT, C::BASE) => (Some("0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2"), None),
        (T::USDT, C::ARBITRUM) => (Some("0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9"), None),
        (T::USDT, C::AVALANCHE) => (Some("0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7"), None),
        (T::USDT, C::LINEA) => (Some("0xA219439258ca9da29E9Cc4cE5596924745e12B93"), None),
        (T::USDT, C::MANTLE) => (Some("0x201EBa5CC46D216Ce6DC03F6a759e8E766e956aE"), None),
        (T::USDT, C::XLAYER) => (Some("0x1E4a5963aBFD975d8c9021ce480b42188849D41d"), None),
        (T::USDT, C::SOLANA) => (Some("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"), None),
        (T::ETH, C::ETHEREUM | C::OPTIMISM | C::BASE | C::ARBITRUM | C::LINEA) => (None, None),
        // Binance-Peg Ethereum: the "bridged" ETH of the destination matrix.
        (T::ETH, C::BNB) => (Some("0x2170Ed0880ac9A755fd29B2688956BD959F933F8"), None),
        (T::BNB, C::BNB) => (None, None),
        (T::SOL, C::SOLANA) => (None, None),
        _ => return None,
    };
    Some(TokenInfo {
        token,
        chain_id: chain.id(),
        contract,
        bridged_contract: bridged,
        decimals: get_token_decimals(token, Some(chain.id())),
    })
}

/// Decimals of `token`, on `chain_id` when given: USDC and USDT have 18 decimals on BNB Chain,
/// every other pair uses the token's usual decimals.
pub fn get_token_decimals(token: TokenType, chain_id: Option<u64>) -> u8 {
    match (token, chain_id) {
        (TokenType::USDC | TokenType::USDT, Some(56)) => 18,
        _ => token.default_decimals(),
    }
}

/// Whether `token` can be delivered on `chain_id` (the spec's destination matrix).
pub fn is_supported_destination_token(token: TokenType, chain_id: u64) -> bool {
    let Some(chain) = Chain::from_id(chain_id) else {
        return false;
    };
    match token {
        TokenType::USDC => chain.is_destination(),
        TokenType::USDT => {
            matches!(chain, Chain::ETHEREUM | Chain::ARBITRUM | Chain::BNB | Chain::SOLANA)
        }
        TokenType::ETH => {
            matches!(chain, Chain::ETHEREUM | Chain::BASE | Chain::ARBITRUM | Chain::BNB)
        }
        TokenType::SOL => chain == Chain::SOLANA,
        TokenType::BTC | TokenType::BNB => false,
    }
}

/// Whether the fiat onramp can buy `token` on `chain_id`: stablecoins on every onramp chain,
/// ETH only on Ethereum and Base, BNB only on BNB Chain, SOL only on Solana.
pub fn is_onramp_token_supported(token: TokenType, chain_id: u64) -> bool {
    let Some(chain) = Chain::from_id(chain_id) else {
        return false;
    };
    if !chain.is_onramp_chain() {
        return false;
    }
    match token {
        TokenType::USDC | TokenType::USDT => true,
        TokenType::ETH => matches!(chain, Chain::ETHEREUM | Chain::BASE),
        TokenType::BNB => chain == Chain::BNB,
        TokenType::SOL => chain == Chain::SOLANA,
        TokenType::BTC => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenType::*;

    #[test]
    fn parses_any_case_and_names_bad_input() {
        assert_eq!("usdc".parse::<TokenType>().unwrap(), USDC);
        assert_eq!("Sol".parse::<TokenType>().unwrap(), SOL);
        let err = "DOGE".parse::<TokenType>().unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert!(err.message().contains("\"DOGE\""), "{err}");
        assert!(" usdc".parse::<TokenType>().is_err());
        assert!("".parse::<TokenType>().is_err());
    }

    #[test]
    fn decimals_with_bnb_chain_override() {
        assert_eq!(get_token_decimals(USDC, Some(56)), 18);
        assert_eq!(get_token_decimals(USDT, Some(56)), 18);
        assert_eq!(get_token_decimals(USDC, Some(1)), 6);
        assert_eq!(get_token_decimals(USDC, None), 6);
        assert_eq!(get_token_decimals(ETH, Some(56)), 18);
        assert_eq!(get_token_decimals(BTC, None), 8);
        assert_eq!(get_token_decimals(SOL, Some(101)), 9);
        assert_eq!(token_info(USDC, Chain::BNB).unwrap().decimals, 18);
    }

    #[test]
    fn destination_matrix_exactly_as_the_spec() {
        // rows: token; columns: Ethereum, Base, Arbitrum, BNB, Solana
        let cols = [1u64, 8453, 42161, 56, 101];
        let rows = [
            (USDC, [true, true, true, true, true]),
            (USDT, [true, false, true, true, true]),
            (ETH, [true, true, true, true, false]),
            (SOL, [false, false, false, false, true]),
            (BTC, [false; 5]),
            (BNB, [false; 5]),
        ];
        for (token, expected) in rows {
            for (chain, want) in cols.iter().zip(expected) {
                assert_eq!(
                    is_supported_destination_token(token, *chain),
                    want,
                    "{token} on {chain}"
                );
            }
        }
        for token in DEFAULT_SUPPORTED_TOKENS {
            assert!(!is_supported_destination_token(token, 196), "X Layer is never a destination");
            assert!(!is_supported_destination_token(token, 10));
        }
    }

    #[test]
    fn onramp_rules() {
        for chain in [1u64, 56, 8453, 42161, 101] {
            assert!(is_onramp_token_supported(USDC, chain));
            assert!(is_onramp_token_supported(USDT, chain));
            assert!(!is_onramp_token_supported(BTC, chain));
        }
        assert!(is_onramp_token_supported(ETH, 1));
        assert!(is_onramp_token_supported(ETH, 8453));
        assert!(!is_onramp_token_supported(ETH, 42161));
        assert!(!is_onramp_token_supported(ETH, 56));
        assert!(is_onramp_token_supported(BNB, 56));
        assert!(!is_onramp_token_supported(BNB, 1));
        assert!(is_onramp_token_supported(SOL, 101));
        assert!(!is_onramp_token_supported(SOL, 1));
        assert!(!is_onramp_token_supported(USDC, 196), "X Layer is unsupported");
        assert!(!is_onramp_token_supported(USDC, 10));
    }

    #[test]
    fn every_evm_contract_carries_a_valid_checksum() {
        for chain in Chain::ALL {
            for token in DEFAULT_SUPPORTED_TOKENS {
                let Some(info) = token_info(token, chain) else {
                    continue;
                };
                for addr in info.contract.into_iter().chain(info.bridged_contract) {
                    assert!(
                        crate::validate::validate_address_for_chain(addr, chain.id()).is_ok(),
                        "{token} on {chain:?}: {addr}"
                    );
                    if chain != Chain::SOLANA {
                        assert_ne!(addr, addr.to_lowercase(), "{addr} should be checksummed");
                    }
                }
            }
        }
    }

    #[test]
    fn native_assets() {
        assert!(token_info(ETH, Chain::BASE).unwrap().is_native());
        assert!(!token_info(ETH, Chain::BNB).unwrap().is_native());
        assert!(token_info(SOL, Chain::SOLANA).unwrap().is_native());
        assert!(token_info(BNB, Chain::BNB).unwrap().is_native());
        assert!(token_info(ETH, Chain::POLYGON).is_none());
        assert!(token_info(USDC, Chain::HYPERVM).is_none());
    }
}
