//! Tokens: symbols, decimals, contracts, and where each can be delivered or bought (spec §2, §4).
//!
//! Functions take a token as `uint32_t token` holding a `depositkit_token_type` value, never as
//! the enum type itself: a C caller can pass any integer, and an out-of-range value in a Rust
//! enum parameter would be undefined behaviour. Out-of-range numbers are rejected with
//! `DEPOSITKIT_STATUS_INVALID_ARGUMENT`.

use std::ffi::{CStr, c_char};

use depositkit_core::{Chain, DEFAULT_SUPPORTED_TOKENS, TokenType};

use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;
use crate::strings;

/// A token depositkit can detect, sweep or deliver. Pass it to functions as `uint32_t token`.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum depositkit_token_type {
    /// Ether.
    Eth = 0,
    /// USD Coin.
    Usdc = 1,
    /// Tether USD.
    Usdt = 2,
    /// Bitcoin (wrapped forms).
    Btc = 3,
    /// Solana's native token.
    Sol = 4,
    /// BNB Chain's native token.
    Bnb = 5,
}

impl From<TokenType> for depositkit_token_type {
    /// Exhaustive on purpose: a token added to the core does not compile here until it gets
    /// its constant.
    fn from(token: TokenType) -> Self {
        match token {
            TokenType::ETH => depositkit_token_type::Eth,
            TokenType::USDC => depositkit_token_type::Usdc,
            TokenType::USDT => depositkit_token_type::Usdt,
            TokenType::BTC => depositkit_token_type::Btc,
            TokenType::SOL => depositkit_token_type::Sol,
            TokenType::BNB => depositkit_token_type::Bnb,
        }
    }
}

impl From<depositkit_token_type> for TokenType {
    fn from(token: depositkit_token_type) -> Self {
        match token {
            depositkit_token_type::Eth => TokenType::ETH,
            depositkit_token_type::Usdc => TokenType::USDC,
            depositkit_token_type::Usdt => TokenType::USDT,
            depositkit_token_type::Btc => TokenType::BTC,
            depositkit_token_type::Sol => TokenType::SOL,
            depositkit_token_type::Bnb => TokenType::BNB,
        }
    }
}

/// The token numbered `token` (a `depositkit_token_type` value).
///
/// # Errors
/// `DEPOSITKIT_STATUS_INVALID_ARGUMENT` naming the number when it is no token.
pub(crate) fn token_arg(token: u32) -> FfiResult<TokenType> {
    DEFAULT_SUPPORTED_TOKENS
        .into_iter()
        .find(|t| depositkit_token_type::from(*t) as u32 == token)
        .ok_or_else(|| {
            FfiError::new(
                depositkit_status::InvalidArgument,
                format!(
                    "unknown token {token}: expected a depositkit_token_type from 0 (ETH) to 5 (BNB)"
                ),
            )
        })
}

/// The static NUL-terminated symbol of a token.
fn symbol(token: TokenType) -> &'static CStr {
    match token {
        TokenType::ETH => c"ETH",
        TokenType::USDC => c"USDC",
        TokenType::USDT => c"USDT",
        TokenType::BTC => c"BTC",
        TokenType::SOL => c"SOL",
        TokenType::BNB => c"BNB",
    }
}

/// The token whose symbol is `symbol`, in any letter case (`"usdc"`, `"USDC"`), as a
/// `depositkit_token_type` value. Nothing but the six symbols is accepted: no spaces, no
/// aliases.
///
/// On success `*out_token` is written; on failure it is not.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an unknown symbol
/// (the message quotes it, e.g. `unknown token "DOGE": expected one of ETH, USDC, USDT, BTC,
/// SOL, BNB`); `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `symbol` or `out_token` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8` when `symbol` is not UTF-8.
///
/// # Safety
/// `symbol` must be NULL or a NUL-terminated string; `out_token` must be NULL or point to a
/// writable `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_token_type_from_str(
    symbol: *const c_char,
    out_token: *mut u32,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let text = unsafe { strings::str_arg(symbol, "symbol") }?;
        // SAFETY: the caller's contract above.
        let out_token = unsafe { boundary::out(out_token, "out_token") }?;
        let token: TokenType = text.parse()?;
        out_token.write(depositkit_token_type::from(token) as u32);
        Ok(())
    })
}

/// The upper-case symbol of a token: `"ETH"`, `"USDC"`, `"USDT"`, `"BTC"`, `"SOL"` or `"BNB"`.
///
/// On success `*out_symbol` points to a static string: never free it; it stays valid for the
/// life of the program. On failure `*out_symbol` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `token` is not a
/// `depositkit_token_type` value; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_symbol` is NULL.
///
/// # Safety
/// `out_symbol` must be NULL or point to a writable `const char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_token_symbol(
    token: u32,
    out_symbol: *mut *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        let token = token_arg(token)?;
        // SAFETY: the caller's contract above.
        let out_symbol = unsafe { boundary::out(out_symbol, "out_symbol") }?;
        out_symbol.write(symbol(token).as_ptr());
        Ok(())
    })
}

/// Whether `token` can be delivered on `chain_id` (the spec's destination matrix):
///
/// | token    | Ethereum | Base | Arbitrum | BNB Chain     | Solana |
/// |----------|----------|------|----------|---------------|--------|
/// | USDC     | yes      | yes  | yes      | yes           | yes    |
/// | USDT     | yes      | no   | yes      | yes           | yes    |
/// | ETH      | yes      | yes  | yes      | yes (bridged) | no     |
/// | SOL      | no       | no   | no       | no            | yes    |
/// | BTC, BNB | no       | no   | no       | no            | no     |
///
/// Every other chain (X Layer included) and every unknown id gives false.
///
/// On success `*out_supported` is written; on failure it is not.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `token` is not a
/// `depositkit_token_type` value; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_supported` is NULL.
///
/// # Safety
/// `out_supported` must be NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_is_supported_destination_token(
    token: u32,
    chain_id: u64,
    out_supported: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        let token = token_arg(token)?;
        // SAFETY: the caller's contract above.
        let out_supported = unsafe { boundary::out(out_supported, "out_supported") }?;
        out_supported.write(depositkit_core::is_supported_destination_token(token, chain_id));
        Ok(())
    })
}

/// Whether the fiat onramp can buy `token` on `chain_id`: USDC and USDT on Ethereum, BNB Chain,
/// Base, Arbitrum and Solana; ETH only on Ethereum and Base; BNB only on BNB Chain; SOL only on
/// Solana; BTC nowhere. Other chains (X Layer included) and unknown ids give false.
///
/// On success `*out_supported` is written; on failure it is not.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `token` is not a
/// `depositkit_token_type` value; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_supported` is NULL.
///
/// # Safety
/// `out_supported` must be NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_is_onramp_token_supported(
    token: u32,
    chain_id: u64,
    out_supported: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        let token = token_arg(token)?;
        // SAFETY: the caller's contract above.
        let out_supported = unsafe { boundary::out(out_supported, "out_supported") }?;
        out_supported.write(depositkit_core::is_onramp_token_supported(token, chain_id));
        Ok(())
    })
}

/// The decimals of `token` on `chain_id`, or the token's usual decimals when `chain_id` is 0
/// ("no chain"). USDC and USDT have 18 decimals on BNB Chain (56) and 6 elsewhere; ETH and BNB
/// have 18, BTC 8, SOL 9. Unknown chain ids get the usual decimals.
///
/// On success `*out_decimals` is written; on failure it is not.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `token` is not a
/// `depositkit_token_type` value; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_decimals` is NULL.
///
/// # Safety
/// `out_decimals` must be NULL or point to a writable `uint8_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_get_token_decimals(
    token: u32,
    chain_id: u64,
    out_decimals: *mut u8,
) -> depositkit_status {
    boundary::status(|| {
        let token = token_arg(token)?;
        // SAFETY: the caller's contract above.
        let out_decimals = unsafe { boundary::out(out_decimals, "out_decimals") }?;
        let chain = (chain_id != 0).then_some(chain_id);
        out_decimals.write(depositkit_core::get_token_decimals(token, chain));
        Ok(())
    })
}

/// Where `token` lives on `chain_id`, as a JSON object:
///
/// ```json
/// {"token":"USDC","chainId":56,"contract":"0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d","bridgedContract":null,"decimals":18}
/// ```
///
/// `contract` is the EIP-55 checksummed contract (or the Solana mint), `null` for the chain's
/// native asset; `bridgedContract` is a bridged variant in use on the chain (USDC.e), or `null`.
///
/// On success `*out_json` is a new string owned by the caller: free it with
/// `depositkit_string_free`. On failure `*out_json` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` when depositkit knows no such
/// token on the chain, or does not know the chain (the message names both);
/// `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `token` is not a `depositkit_token_type` value;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_json` is NULL.
///
/// # Safety
/// `out_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_token_info_json(
    token: u32,
    chain_id: u64,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        let token = token_arg(token)?;
        // SAFETY: the caller's contract above.
        let out_json = unsafe { boundary::out(out_json, "out_json") }?;
        let info = Chain::from_id(chain_id)
            .and_then(|chain| depositkit_core::token_info(token, chain))
            .ok_or_else(|| {
                FfiError::new(
                    depositkit_status::NotFound,
                    format!(
                        "no {token} token is known on {} (chain id {chain_id})",
                        depositkit_core::get_chain_name(chain_id)
                    ),
                )
            })?;
        let json = serde_json::to_string(&info).map_err(|e| {
            FfiError::new(
                depositkit_status::Internal,
                format!("could not serialize the {token} token info: {e}"),
            )
        })?;
        out_json.write(strings::owned(json)?);
        Ok(())
    })
}

/// Writes the spec's default supported tokens (every token: ETH, USDC, USDT, BTC, SOL, BNB, as
/// `depositkit_token_type` values) into `out_tokens`, at most `len` of them, and returns how
/// many there are in total (6).
///
/// Call it with `out_tokens = NULL` and `len = 0` to learn the count; when the return value is
/// larger than `len`, only the first `len` were written. A NULL `out_tokens` writes nothing
/// whatever `len` is. Never fails and does not change the last error.
///
/// # Safety
/// `out_tokens` must be NULL or point to `len` writable `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_default_supported_tokens(
    out_tokens: *mut u32,
    len: usize,
) -> usize {
    boundary::value(DEFAULT_SUPPORTED_TOKENS.len(), || {
        if !out_tokens.is_null() {
            for (i, token) in DEFAULT_SUPPORTED_TOKENS.into_iter().take(len).enumerate() {
                // SAFETY: `i < len` and the caller promises `len` writable elements.
                unsafe { out_tokens.add(i).write(depositkit_token_type::from(token) as u32) };
            }
        }
        DEFAULT_SUPPORTED_TOKENS.len()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_numbers_and_symbols_match_the_core() {
        for (i, token) in DEFAULT_SUPPORTED_TOKENS.into_iter().enumerate() {
            let c = depositkit_token_type::from(token);
            assert_eq!(c as u32, i as u32, "{token}");
            assert_eq!(TokenType::from(c), token);
            assert_eq!(token_arg(i as u32).unwrap(), token);
            assert_eq!(symbol(token).to_str().unwrap(), token.symbol());
            assert_eq!(format!("{c:?}").to_ascii_uppercase(), token.symbol());
        }
        let err = token_arg(6).unwrap_err();
        assert_eq!(err.status, depositkit_status::InvalidArgument);
        assert!(err.message.starts_with("unknown token 6:"), "{}", err.message);
        assert!(token_arg(u32::MAX).is_err());
    }
}
