//! Recovery of stuck funds (spec `deposit-library.md`, `getStuckFunds`, `recoverFunds`): money
//! in the account that no live deposit explains, swept to the destination, over
//! `depositkit_core::deposit::DepositClient::{stuck_funds, recover_funds, is_recovering}`.
//!
//! Records cross as JSON strings in the spec's camelCase shapes (DetectedDeposit,
//! RecoveryResult); each recovered asset is also a `"recovery:result"` event.

use std::ffi::c_char;

use crate::boundary;
use crate::deposit::{client_arg, depositkit_deposit_client, write_json_answer};
use crate::status::depositkit_status;

/// The funds in the account that no live deposit of this client explains: left by sweeps that
/// failed for good, by deposits below the thresholds or of tokens and chains the client does
/// not report. Deposits still being swept or refunded, or waiting for a manual sweep, are not
/// stuck. Runs a poll first (under the watcher's lock), so that a deposit arriving now is
/// registered as a deposit, not listed as stuck.
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array with one DetectedDeposit object (spec section 2) per
/// chain and token, `[]` when nothing is stuck:
///
/// ```json
/// [{"id": "recovery:usdc:8453", "token": "USDC", "chainId": 8453, "amount": "4",
///   "amountUSD": 4.0, "rawAmount": "4000000", "decimals": 6, "detectedAt": 1700000000000}]
/// ```
///
/// `id` is `"recovery:"`, the token in lower case, `":"` and the chain id; `amount` is
/// human-readable and `rawAmount` in smallest units (decimal strings); `amountUSD` is the value
/// at the service's price; `detectedAt` is when it was read (unix milliseconds). Dust (worth
/// $0.10 or less) is listed too; `depositkit_deposit_client_recover_funds` skips it. On failure
/// it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` (or `DEPOSITKIT_STATUS_JWT`) when the balances cannot be
/// read; `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when
/// the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks the calling thread up to `callTimeoutMs`. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_stuck_funds(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.stuck_funds())
    })
}

/// Sweeps every stuck asset (`depositkit_deposit_client_stuck_funds`) to the current
/// destination, one after the other through the client's serial queue (never at the same time
/// as a sweep or a refund). The status is `SWEEPING` meanwhile. Deposits whose failed sweeps
/// left the money behind become `credited` (a `"deposit:lifecycle"` event each).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array with one RecoveryResult (spec section 2) per stuck
/// asset, `[]` when nothing was stuck:
///
/// ```json
/// [{"token": "USDC", "chainId": 8453, "amount": "4", "amountUSD": 4.0, "status": "success",
///   "txHash": "0x...", "rawAmount": "4000000", "delivered": {...}}]
/// ```
///
/// `status` is `"success"` (with `txHash`, and `delivered`: `{"chainId", "token", "address",
/// "rawAmount", "amount", "decimals", "valueUSD", "fees": {"gasUSD", "lpUSD", "serviceUSD",
/// "totalUSD"}, "quoteId"}`, what reached the destination after fees, as in a SweepResult),
/// `"failed"` (with `error`; the money stays in the account) or `"skipped"` (with `error`: dust
/// worth $0.10 or less, or worth less than the fees; nothing moved). `amount` is human-readable
/// and `rawAmount` in smallest units (decimal strings). Absent fields are left out, not null.
/// Each result is also a `"recovery:result"` event. An asset that failed is still
/// `DEPOSITKIT_STATUS_OK`: read `status`. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` (or `DEPOSITKIT_STATUS_JWT`) when the balances cannot be
/// read; `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs` (the recovery goes on in the
/// background; its results still arrive as events); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the
/// client is (or gets) closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks the calling thread up to `callTimeoutMs`. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_recover_funds(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.recover_funds())
    })
}

/// Whether a recovery (`depositkit_deposit_client_recover_funds`) is queued or running.
///
/// On success `*out_recovering` is written; on failure it is not. Returns
/// `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_recovering` must be NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_is_recovering(
    client: *const depositkit_deposit_client,
    out_recovering: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_recovering, "out_recovering") }?;
        out.write(client.inner.is_recovering()?);
        Ok(())
    })
}
