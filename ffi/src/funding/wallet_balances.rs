//! The balances of the funding wallets: an immutable list of the core's opaque
//! `FundingBalance` values, tied to the client that issued it.

use std::ffi::c_char;
use std::sync::{Arc, Weak};

use depositkit_core::funding::FundingBalance;

use crate::boundary::{self, FfiError, FfiResult};
use crate::deposit::{client_arg, depositkit_deposit_client, json_out};
use crate::status::depositkit_status;

/// The balances of the funding wallets, as `depositkit_deposit_client_wallet_balances` found
/// them: an immutable list, tied to the client that issued it.
///
/// Opaque: read with `depositkit_funding_balances_len` and `depositkit_funding_balances_get`,
/// pass an entry (by index) to `depositkit_deposit_client_fund_from_wallet` of the same client,
/// release with `depositkit_funding_balances_free`. Thread-safe: any number of threads may read
/// one list at once; free it once, after every call using it has returned. It does not keep the
/// client alive, and stays readable after the client is freed.
#[allow(non_camel_case_types)]
pub struct depositkit_funding_balances {
    items: Vec<FundingBalance>,
    /// The issuing handle's allocation (a `Weak` keeps the address from being reused).
    pub(super) issuer: Weak<depositkit_deposit_client>,
}

/// The list behind a handle: `DEPOSITKIT_STATUS_NULL_ARGUMENT` naming `balances` when NULL.
///
/// # Safety
/// `balances` must be NULL or a live list from `depositkit_deposit_client_wallet_balances`.
pub(super) unsafe fn balances_arg<'a>(
    balances: *const depositkit_funding_balances,
) -> FfiResult<&'a depositkit_funding_balances> {
    // SAFETY: the caller's contract above; `Box::into_raw` gave an aligned pointer.
    unsafe { balances.as_ref() }.ok_or_else(|| FfiError::null_argument("balances"))
}

/// The entry `index` of `balances`: `INVALID_ARGUMENT` naming the index when out of range.
pub(super) fn balance_at(
    balances: &depositkit_funding_balances,
    index: usize,
) -> FfiResult<&FundingBalance> {
    balances.items.get(index).ok_or_else(|| {
        FfiError::new(
            depositkit_status::InvalidArgument,
            format!(
                "index {index} is out of range: the balances list holds {} entr{}",
                balances.items.len(),
                if balances.items.len() == 1 { "y" } else { "ies" }
            ),
        )
    })
}

/// Reads the balances of the funding wallets (spec `getWalletBalances`) from the first source
/// configured: the host's balance provider (`depositkit_deposit_client_set_balance_provider`),
/// else `funding.balanceProvider: "rpc"` (the chains' nodes at `funding.evmRpcUrls` and
/// `funding.solanaRpcUrl`), else `funding.apiKey` (the balance API), else `funding.proxyUrl`,
/// else the hosted proxy. The addresses asked for are the EVM wallet's (its address, or its
/// first `eth_accounts` entry) and the Solana wallet's (once known). Only the five funding
/// chains (Ethereum, BNB Chain, Base, Arbitrum, Solana) and known tokens are kept, with a
/// positive amount and, when priced, a value of at least `funding.minValueUSD`.
///
/// On success `*out_balances` is a new list owned by the caller (release it with
/// `depositkit_funding_balances_free`; it may be empty). Each entry, read with
/// `depositkit_funding_balances_get`, is
///
/// ```json
/// {"chainId": 8453, "token": "USDC", "tokenAddress": "0x8335...", "decimals": 6,
///  "rawAmount": "25000000", "priceUSD": 1.0, "valueUSD": 25.0, "amount": "25",
///  "walletAddress": "0xf39Fd6e5...", "source": "rpc"}
/// ```
///
/// (`walletAddress` EIP-55 checksummed; `tokenAddress` null for the chain's native asset; `priceUSD`/`valueUSD` null when the
/// source did not price it; `source` one of `"balanceProvider"`, `"rpc"`, `"apiKey"`,
/// `"proxyUrl"`, `"hosted"`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_FUNDING` when no wallet is set, or the source failed (the message names
///   the source, never a key);
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not enabled;
/// - `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the
///   client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks the calling thread while the source answers (up to `callTimeoutMs`). Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_balances`
/// must be NULL or point to a writable `const depositkit_funding_balances *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_wallet_balances(
    client: *const depositkit_deposit_client,
    out_balances: *mut *const depositkit_funding_balances,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let handle = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_balances, "out_balances") }?;
        let items = handle.inner.get_wallet_balances()?;
        // SAFETY: `client` is a live handle from `Arc::into_raw` (the caller's contract): one
        // more strong reference for the moment it takes to make a `Weak` of it.
        let issuer = unsafe {
            Arc::increment_strong_count(client);
            Arc::downgrade(&Arc::from_raw(client))
        };
        let list = Box::new(depositkit_funding_balances { items, issuer });
        out.write(Box::into_raw(list).cast_const());
        Ok(())
    })
}

/// The number of entries of a balances list; 0 when `balances` is NULL. Never fails; does not
/// change the last error. Thread-safe.
///
/// # Safety
/// `balances` must be NULL or a live list from `depositkit_deposit_client_wallet_balances`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_funding_balances_len(
    balances: *const depositkit_funding_balances,
) -> usize {
    // SAFETY: the caller's contract above.
    boundary::value(0, || unsafe { balances.as_ref() }.map_or(0, |list| list.items.len()))
}

/// Entry `index` of a balances list, as JSON (the shape is described at
/// `depositkit_deposit_client_wallet_balances`).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `index` is not
/// below `depositkit_funding_balances_len` (the message names both);
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `balances` or `out_json` is NULL. Does not block.
/// Thread-safe.
///
/// # Safety
/// `balances` must be NULL or a live list from `depositkit_deposit_client_wallet_balances`;
/// `out_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_funding_balances_get(
    balances: *const depositkit_funding_balances,
    index: usize,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let balances = unsafe { balances_arg(balances) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_json, "out_json") }?;
        let balance = balance_at(balances, index)?;
        out.write(json_out(serde_json::to_string(balance))?);
        Ok(())
    })
}

/// Releases a balances list. NULL is accepted and ignored. May be called on any thread, once,
/// after every call using the list has returned; before or after the client is freed. Does not
/// change the last error.
///
/// # Safety
/// `balances` must be NULL or a list from `depositkit_deposit_client_wallet_balances` that has
/// not been freed yet and that no other thread is using; after this call it must not be used
/// again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_funding_balances_free(
    balances: *const depositkit_funding_balances,
) {
    boundary::value((), || {
        if !balances.is_null() {
            // SAFETY: the caller promises `balances` came from `Box::into_raw` in
            // `depositkit_deposit_client_wallet_balances` and is released only once.
            drop(unsafe { Box::from_raw(balances.cast_mut()) });
        }
    });
}
