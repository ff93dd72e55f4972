//! The account's transaction history (spec `deposit-library.md`, `getTransactions`,
//! `getTokenTransactions`, `getTransaction`): deposits, sweeps and refunds as the
//! universal-account service lists them, over
//! `depositkit_core::deposit::DepositClient::{get_transactions, get_token_transactions,
//! get_transaction}`.
//!
//! Records cross as JSON strings in the spec's camelCase shapes (UATransaction,
//! TransactionsResponse, TokenTransactionsResponse). Answers are cached by the core for 30 s
//! (10 answers per kind), and the caches are emptied whenever the client itself changes the
//! history (a deposit detected, a sweep, refund or recovery finished).

use std::ffi::c_char;

use depositkit_core::deposit::TokenTransactionFilter;

use crate::boundary;
use crate::deposit::{client_arg, depositkit_deposit_client, json_out, write_json_answer};
use crate::status::depositkit_status;
use crate::strings;

/// A page of the account's transactions, newest first (spec `getTransactions`): incoming
/// deposits (`tag` `"receive"`), sweeps (`"sweep"`) and refunds (`"refund"`), on every chain.
///
/// `page` counts from 1 (0 means the default, 1); `page_size` is 1 to 100 (0 means the
/// default, 10).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a TransactionsResponse (spec section 2),
/// `{"transactions": [...], "page": 1, "pageSize": 10}`, each transaction a UATransaction:
///
/// ```json
/// {"transactionId": "0x...", "tag": "sweep", "createdAt": "2025-01-01T00:00:00.000Z",
///  "updatedAt": "2025-01-01T00:00:00.000Z",
///  "targetToken": {"name": "USD Coin", "type": "usdc", "image": "", "price": 1.0,
///                  "symbol": "USDC", "address": "0x...", "assetId": "usdc", "chainId": 8453,
///                  "decimals": 6, "realDecimals": 6, "isPrimaryToken": true,
///                  "isSmartRouterSupported": true},
///  "change": {"amount": "2.5", "amountInUSD": "2.5", "from": "0x...", "to": "0x...",
///             "rawAmount": "2500000"},
///  "detail": {"redPacketCount": 0}, "status": 1, "fromChains": [8453], "toChains": [8453],
///  "quoteId": "q_...", "depositId": "dep_..."}
/// ```
///
/// `status` is 1 (success), 0 (pending) or -1 (failed); `createdAt` and `updatedAt` are the
/// service's timestamps, as strings (ISO 8601 from devnet); `change.from` is `""` when the
/// sender is unknown; `change.amount` and `change.amountInUSD` are decimal strings.
/// depositkit's additions, left out when the service does not send them: `change.rawAmount`
/// (smallest units), `quoteId` (sweeps and refunds: the quote that was sent) and `depositId`
/// (refunds: the deposit sent back). The string fields of `targetToken` may be `""`. On
/// failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for a page size above
/// 100; `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` when the service fails (`"Failed to get transactions:
/// ..."`); `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK`
/// when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks the calling thread up to `callTimeoutMs` (not at all for an answer in the cache).
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_get_transactions(
    client: *const depositkit_deposit_client,
    page: u32,
    page_size: u32,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| {
            c.get_transactions((page != 0).then_some(page), (page_size != 0).then_some(page_size))
        })
    })
}

/// One token's transactions on one chain, newest first, a page at a time by cursor (spec
/// `getTokenTransactions`, `TokenTransactionFilter`).
///
/// `token_address` is the token's contract on `chain_id` (the mint on Solana; any letter case
/// on EVM chains), or the zero address `0x0000000000000000000000000000000000000000` (the system
/// program `11111111111111111111111111111111` on Solana) for the chain's native asset: the
/// `contract` of `depositkit_token_info_json`, or those when it is `null`. `page_token` is NULL
/// for the first page, else the `nextPageToken` of the previous answer. `page_size` is 1 to 100
/// (0 means the default, 10).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a TokenTransactionsResponse (spec section 2),
/// `{"transactions": [...], "nextPageToken": "..."}`, each transaction a UATransaction as
/// described at `depositkit_deposit_client_get_transactions`; `nextPageToken` is left out on
/// the last page. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an empty
/// `token_address` or a page size above 100; `DEPOSITKIT_STATUS_CONFIGURATION` before
/// initialization; `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` when the service fails, also for a
/// `page_token` it never issued or that went stale (`"Failed to get token transactions:
/// ..."`); `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK`
/// when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `token_address`
/// or `out_json` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread up to `callTimeoutMs` (not at all for an answer in the cache).
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `token_address` and `page_token` must be NULL or NUL-terminated strings; `out_json` must be
/// NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_get_token_transactions(
    client: *const depositkit_deposit_client,
    chain_id: u64,
    token_address: *const c_char,
    page_token: *const c_char,
    page_size: u32,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let address = unsafe { strings::str_arg(token_address, "token_address") }?;
        // SAFETY: the caller's contract above.
        let page_token = unsafe { strings::opt_str_arg(page_token, "page_token") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_json, "out_json") }?;
        let mut filter = TokenTransactionFilter::new(chain_id, address);
        if page_size != 0 {
            filter = filter.with_page_size(page_size);
        }
        let answer = client.inner.get_token_transactions(&filter, page_token)?;
        out.write(json_out(serde_json::to_string(&answer))?);
        Ok(())
    })
}

/// One transaction of the account by its id (spec `getTransaction`): the `transactionId` of a
/// listed transaction, the `transactionId` of a `credited` event or SweepResult, or the
/// `txHash` of a RefundResult or RecoveryResult.
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a UATransaction as described at
/// `depositkit_deposit_client_get_transactions`. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` when the account has no such
/// transaction; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an empty id;
/// `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` when the service fails (`"Failed to get transaction:
/// ..."`); `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK`
/// when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread up to `callTimeoutMs` (not at all for an answer in the cache).
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `transaction_id` must be NULL or a NUL-terminated string; `out_json` must be NULL or point
/// to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_get_transaction(
    client: *const depositkit_deposit_client,
    transaction_id: *const c_char,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let transaction_id = unsafe { strings::str_arg(transaction_id, "transaction_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_json, "out_json") }?;
        let answer = client.inner.get_transaction(transaction_id)?;
        out.write(json_out(serde_json::to_string(&answer))?);
        Ok(())
    })
}
