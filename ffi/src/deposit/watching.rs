//! Watching and sweeping: start, stop and poll the watcher, the pending deposits, a manual sweep
//! and its result.

use std::ffi::c_char;

use depositkit_core::describe::quote;

use crate::boundary::{self, FfiError};
use crate::status::depositkit_status;
use crate::strings;

use super::{client_arg, depositkit_deposit_client, json_out, write_json_answer};

/// Starts the watcher: one poll now, then one every `pollingIntervalMs`, never overlapping.
/// Detected deposits are reported as events and, with `autoSweep`, swept one at a time. The
/// status becomes `WATCHING` (or stays `SWEEPING`). Does nothing when the watcher already runs.
///
/// Failures of a background poll do not stop the watcher; each is reported as an `"error"`
/// event.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`
/// when `client` is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_start_watching(
    client: *const depositkit_deposit_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        client.inner.start_watching()?;
        Ok(())
    })
}

/// Stops the watcher (a poll under way is abandoned); sweeps under way go on. Does nothing when
/// it does not run. What the watcher has seen is kept: starting it again reports only new
/// deposits.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed (closing
/// stopped the watcher); `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` is NULL. Does not
/// block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_stop_watching(
    client: *const depositkit_deposit_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        client.inner.stop_watching()?;
        Ok(())
    })
}

/// Runs one poll of the account's balances now (after a poll under way finishes), whether or
/// not the watcher runs. Detected deposits are queued for their sweep when `autoSweep` is on.
///
/// On success `*out_events_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of the lifecycle events this poll produced, each a
/// DepositLifecycleEvent object as in the `payload` of a `"deposit:lifecycle"` event (phase
/// `"detected"` or `"below_threshold"`; see `depositkit_deposit_client_subscribe`); `[]` when
/// nothing new arrived. The same events have already been queued for
/// `depositkit_deposit_client_next_event` and handed to the callbacks' dispatcher when this
/// returns. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` (or `DEPOSITKIT_STATUS_JWT`) when the balances cannot be
/// read; `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when
/// the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. A failure
/// is also reported as an `"error"` event.
///
/// Blocks the calling thread up to `callTimeoutMs`. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_events_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_poll_now(
    client: *const depositkit_deposit_client,
    out_events_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_events_json, "out_events_json", |c| c.poll_now())
    })
}

/// The detected deposits that are not delivered yet (queued, being swept, failed, or with an
/// unknown outcome), oldest first.
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of DetectedDeposit objects (spec section 2):
/// `{"id": "dep_...", "token": "USDC", "chainId": 8453, "amount": "25", "amountUSD": 25.0,
/// "rawAmount": "25000000", "decimals": 6, "detectedAt": <unix ms>}` (`rawAmount` is a decimal
/// string: it may not fit a double). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_pending_deposits(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.pending_deposits())
    })
}

/// Sweeps one pending deposit now: one attempt through the client's serial sweep queue, to the
/// current destination. Lifecycle events follow as for automatic sweeps (`processing`, then
/// `credited` or `failed`). A deposit whose last send has an unknown outcome is first resolved
/// (its quote is sent again, which the service treats idempotently), never quoted anew.
///
/// On success `*out_result_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the SweepResult (spec section 2), `{"depositId": "dep_...",
/// "transactionId": "0x...", "explorerUrl": "https://...", "status": "success"}` with `status`
/// one of `"success"`, `"failed"` (the deposit stays pending; `"error"` says why) or
/// `"pending"` (the outcome is unknown: sweep it again to resolve it). On success it also has
/// `"delivered"`: `{"chainId", "token", "address", "rawAmount" (decimal string), "amount",
/// "decimals", "valueUSD", "fees": {"gasUSD", "lpUSD", "serviceUSD", "totalUSD"}, "quoteId"}`,
/// what reached the destination after fees. `transactionId` and `explorerUrl` are `""` when
/// there is none. A sweep that ran but did not deliver is still `DEPOSITKIT_STATUS_OK`: read
/// `status`. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` for an unknown or already
/// delivered `deposit_id`; `DEPOSITKIT_STATUS_SWEEP` when it is already being swept;
/// `DEPOSITKIT_STATUS_CONFIGURATION` before initialization; `DEPOSITKIT_STATUS_TIMEOUT` after
/// `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is (or gets) closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread up to `callTimeoutMs`. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_result_json` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_sweep(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_result_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_result_json, "out_result_json") }?;
        let result = client.inner.sweep(deposit_id)?;
        out.write(json_out(serde_json::to_string(&result))?);
        Ok(())
    })
}

/// The result of the last finished sweep of `deposit_id`, automatic or manual: how to learn
/// what a `credited` deposit delivered.
///
/// On success `*out_result_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the SweepResult as `depositkit_deposit_client_sweep` gives it. On
/// failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` when no sweep of that deposit
/// has finished (the last 1000 results are kept); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`. Does not block.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_result_json` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_sweep_result(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_result_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_result_json, "out_result_json") }?;
        let result = client.inner.sweep_result(deposit_id)?.ok_or_else(|| {
            FfiError::new(
                depositkit_status::NotFound,
                format!("no sweep of deposit {} has finished", quote(deposit_id)),
            )
        })?;
        out.write(json_out(serde_json::to_string(&result))?);
        Ok(())
    })
}
