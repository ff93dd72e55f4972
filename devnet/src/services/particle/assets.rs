//! Amounts and tokens as the Particle JSON-RPC writes them (`particle-ua-wire.md` §3, §6).
//!
//! - **Amounts** are 18-decimal fixed-point integers whatever the token's real decimals,
//!   written as lower-case `0x` hex without padding (`"10"` tokens → `"0x8ac7230489e80000"`).
//!   Devnet reads `0x` hex, a decimal-integer string or a JSON integer (what JS `BigInt()`
//!   takes).
//! - **USD values** are atto-USD (10^-18 USD) integers, written the same way.
//! - **assetId** names a token type (`"usdc"`: any chain) or one token on one chain
//!   (`"<chainId>_<address>"`, the address of its contract or mint, the zero address for a
//!   native asset).

use alloy_primitives::U256;
use depositkit_core::{
    AddressType, Chain, DEFAULT_SUPPORTED_TOKENS, TokenType, get_address_type, get_token_decimals,
    token_info,
};
use serde_json::{Value, json};

use crate::chain::native_token;
use crate::describe::quote;
use crate::services::history;

/// The decimals every Particle amount is written with.
pub const DECIMALS: u8 = 18;
/// The address the SDK gives every native asset, SOL included (`SOLANA_NATIVE_ADDRESS_ZERO`).
pub const ZERO_ADDRESS: &str = "0x0000000000000000000000000000000000000000";
/// The SDK's primary token types, in its order (`SUPPORTED_TOKEN_TYPE`).
pub const PRIMARY_TYPES: [TokenType; 5] =
    [TokenType::ETH, TokenType::USDT, TokenType::USDC, TokenType::BNB, TokenType::SOL];

fn pow10(n: u8) -> U256 {
    U256::from(10u8).pow(U256::from(n))
}

/// `raw` smallest units of a token with `real_decimals` as an 18-decimal amount.
pub fn to_18(raw: U256, real_decimals: u8) -> U256 {
    raw.saturating_mul(pow10(DECIMALS.saturating_sub(real_decimals)))
}

/// An 18-decimal amount in smallest units of a token with `real_decimals` (truncated).
pub fn from_18(amount: U256, real_decimals: u8) -> U256 {
    amount / pow10(DECIMALS.saturating_sub(real_decimals))
}

/// Lower-case `0x` hex without padding (`0x0` for zero).
pub fn hex(value: U256) -> String {
    format!("{value:#x}")
}

/// An 18-decimal amount from JSON: `0x` hex, a decimal-integer string or a JSON integer.
///
/// # Errors
/// A message naming `field`.
pub fn parse_amount(field: &str, value: &Value) -> Result<U256, String> {
    let bad =
        || format!("{field}: {} is not an 18-decimal amount (0x hex)", quote(&value.to_string()));
    match value {
        Value::String(text) => {
            let text = text.trim();
            match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                Some(hex) if !hex.is_empty() => U256::from_str_radix(hex, 16).map_err(|_| bad()),
                Some(_) => Err(bad()),
                None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
                    U256::from_str_radix(text, 10).map_err(|_| bad())
                }
                None => Err(bad()),
            }
        }
        Value::Number(n) => n.as_u64().map(U256::from).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// The token type a lower-case type name stands for (`"usdc"`; `"btc"` too, devnet's).
pub fn token_type(name: &str) -> Option<TokenType> {
    DEFAULT_SUPPORTED_TOKENS.into_iter().find(|t| t.symbol().eq_ignore_ascii_case(name))
}

/// The lower-case type name of `token` (`usdc`).
pub fn type_name(token: TokenType) -> String {
    token.symbol().to_ascii_lowercase()
}

/// What an assetId names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetRef {
    /// A token type, on any chain.
    Type(TokenType),
    /// One token on one chain.
    OnChain(u64, TokenType),
}

impl AssetRef {
    /// The token.
    pub fn token(self) -> TokenType {
        match self {
            AssetRef::Type(token) | AssetRef::OnChain(_, token) => token,
        }
    }

    /// The token on `chain_id`: a type is taken there, a token on a chain must be on it.
    ///
    /// # Errors
    /// A message saying why not.
    pub fn on(self, chain_id: u64) -> Result<TokenType, String> {
        match self {
            AssetRef::Type(token) => Ok(token),
            AssetRef::OnChain(chain, token) if chain == chain_id => Ok(token),
            AssetRef::OnChain(chain, token) => {
                Err(format!("the asset is {token} on chain {chain}, not on chain {chain_id}"))
            }
        }
    }
}

/// Reads an assetId.
///
/// # Errors
/// A message naming the assetId.
pub fn parse_asset_id(asset_id: &str) -> Result<AssetRef, String> {
    if let Some(token) = token_type(asset_id) {
        return Ok(AssetRef::Type(token));
    }
    let unknown = || {
        format!(
            "assetId {} is neither a token type (eth, usdt, usdc, bnb, sol, btc) nor \
             <chainId>_<address> of a token devnet knows",
            quote(asset_id)
        )
    };
    let (chain, address) = asset_id.split_once('_').ok_or_else(unknown)?;
    let chain_id: u64 = chain.parse().map_err(|_| unknown())?;
    token_at(chain_id, address).map(|token| AssetRef::OnChain(chain_id, token)).ok_or_else(unknown)
}

/// The token whose contract (or mint) is `address` on `chain_id`; the chain's native asset for
/// the zero address (and, on Solana, the system program).
pub fn token_at(chain_id: u64, address: &str) -> Option<TokenType> {
    let chain = Chain::from_id(chain_id)?;
    if address.eq_ignore_ascii_case(ZERO_ADDRESS)
        || (chain_id == crate::chain::SOLANA_CHAIN_ID
            && address == history::token_address(TokenType::SOL, 101))
    {
        return native_token(chain_id);
    }
    DEFAULT_SUPPORTED_TOKENS.into_iter().find(|token| {
        token_info(*token, chain).and_then(|info| info.contract).is_some_and(|contract| {
            match get_address_type(chain_id) {
                AddressType::Evm => contract.eq_ignore_ascii_case(address),
                AddressType::Solana => contract == address,
            }
        })
    })
}

/// Whether devnet knows `token` on `chain_id` (a contract, a mint or the native asset).
pub fn exists_on(token: TokenType, chain_id: u64) -> bool {
    Chain::from_id(chain_id).and_then(|chain| token_info(token, chain)).is_some()
}

/// The address the SDK shows for `token` on `chain_id`: its contract or mint, the zero address
/// for a native asset.
pub fn address_of(token: TokenType, chain_id: u64) -> &'static str {
    Chain::from_id(chain_id)
        .and_then(|chain| token_info(token, chain))
        .and_then(|info| info.contract)
        .unwrap_or(ZERO_ADDRESS)
}

/// A token object as in the SDK's `SUPPORTED_PRIMARY_TOKENS` (`decimals` 18, `realDecimals` the
/// token's own on the chain).
pub fn token_object(token: TokenType, chain_id: u64) -> Value {
    json!({
        "chainId": chain_id,
        "address": address_of(token, chain_id),
        "decimals": DECIMALS,
        "realDecimals": get_token_decimals(token, Some(chain_id)),
        "type": type_name(token),
        "symbol": token.symbol(),
        "name": history::token_name(token),
        "assetId": type_name(token),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_18_decimal_hex() {
        let ten_usdc = U256::from(10_000_000u64);
        assert_eq!(hex(to_18(ten_usdc, 6)), "0x8ac7230489e80000");
        assert_eq!(hex(U256::ZERO), "0x0");
        assert_eq!(from_18(U256::from(0x8ac7_2304_89e8_0000u64), 6), ten_usdc);
        assert_eq!(from_18(U256::from(1_999_999_999_999u64), 6), U256::from(1u8), "truncated");
        for text in ["0x8ac7230489e80000", "10000000000000000000"] {
            assert_eq!(parse_amount("a", &json!(text)).unwrap(), to_18(ten_usdc, 6));
        }
        assert_eq!(parse_amount("a", &json!(5)).unwrap(), U256::from(5u8));
        for bad in [json!("1.5"), json!("0x"), json!(""), json!(-1), json!(null), json!("0xzz")] {
            assert!(parse_amount("a", &bad).unwrap_err().starts_with("a: "), "{bad}");
        }
    }

    #[test]
    fn asset_ids() {
        assert_eq!(parse_asset_id("usdc").unwrap(), AssetRef::Type(TokenType::USDC));
        assert_eq!(
            parse_asset_id("8453_0x833589fcd6edb6e08f4c7c32d4f71b54bda02913").unwrap(),
            AssetRef::OnChain(8453, TokenType::USDC)
        );
        assert_eq!(
            parse_asset_id(&format!("8453_{ZERO_ADDRESS}")).unwrap().token(),
            TokenType::ETH
        );
        assert_eq!(parse_asset_id(&format!("56_{ZERO_ADDRESS}")).unwrap().token(), TokenType::BNB);
        assert_eq!(parse_asset_id(&format!("101_{ZERO_ADDRESS}")).unwrap().token(), TokenType::SOL);
        assert_eq!(
            parse_asset_id("101_EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v").unwrap(),
            AssetRef::OnChain(101, TokenType::USDC)
        );
        // Solana mints compare exactly.
        assert!(parse_asset_id("101_epjfwdd5aufqssqem2qn1xzybapc8g4wegGkzwytdt1v").is_err());
        assert!(parse_asset_id("8453_0x4200000000000000000000000000000000000042").is_err());
        assert!(parse_asset_id("doge").is_err());
        assert_eq!(AssetRef::Type(TokenType::USDC).on(1), Ok(TokenType::USDC));
        assert!(AssetRef::OnChain(8453, TokenType::USDC).on(1).is_err());
    }

    #[test]
    fn token_objects_match_the_sdks_primary_tokens() {
        let usdc = token_object(TokenType::USDC, 8453);
        assert_eq!(usdc["address"], "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
        assert_eq!((usdc["decimals"].as_u64(), usdc["realDecimals"].as_u64()), (Some(18), Some(6)));
        assert_eq!(token_object(TokenType::SOL, 101)["address"], ZERO_ADDRESS);
        assert_eq!(token_object(TokenType::USDT, 56)["realDecimals"], 18);
        assert!(exists_on(TokenType::ETH, 8453) && !exists_on(TokenType::ETH, 101));
    }
}
