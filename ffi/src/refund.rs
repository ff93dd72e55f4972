//! Refunds (spec `deposit-library.md`, `refund`, `canRefund`): sending a deposit that was not
//! delivered back, on its source chain in its token, over
//! `depositkit_core::deposit::DepositClient::{refund, can_refund, refund_result, refund_config}`.
//!
//! Records cross as JSON strings in the spec's camelCase shapes (RefundResult, the eligibility,
//! RefundConfig). The automatic refund is configured with the `refund` option of
//! `depositkit_deposit_client_new`; its progress arrives as `"refund:update"` events.

use std::ffi::c_char;

use depositkit_core::deposit::RefundReason;
use depositkit_core::describe::quote;

use crate::boundary::{self, FfiError};
use crate::deposit::{client_arg, depositkit_deposit_client, json_out, write_json_answer};
use crate::status::depositkit_status;
use crate::strings;

/// Refunds deposit `deposit_id` now (spec `refund`): one attempt, through the client's serial
/// queue (never at the same time as a sweep), whatever the `refund` option says.
///
/// The receiver is the deposit's original sender when `refund.refundToSender` (the default)
/// and the deposit's transfers name exactly one sender of an address type that fits the source
/// chain; else the owner when its (EVM) address fits the source chain; else the refund is
/// `"skipped"` with reason `"address_type_mismatch"`. The money goes back on the source chain
/// in the deposit's token, less the gas (a deposit that does not cover the gas is `"skipped"`
/// with reason `"below_minimum"`). A deposit whose earlier sweep or refund has an unknown
/// outcome is first resolved with that same quote: a sweep found delivered makes the deposit
/// `credited` and the refund `"skipped"` (`"error"` says so), so money is never both delivered
/// and refunded. Each status on the way is also a `"refund:update"` event.
///
/// `reason` is recorded in the result: `"user_requested"` (NULL means this) or
/// `"sweep_failed"` (also accepted: `"address_type_mismatch"`, `"below_minimum"`).
///
/// On success `*out_result_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the RefundResult (spec section 2) in its final state,
///
/// ```json
/// {"depositId": "dep_...", "token": "USDC", "sourceChainId": 8453, "amount": "5",
///  "amountUSD": 5.0, "status": "success", "reason": "user_requested", "txHash": "0x...",
///  "refundedTo": "0x...", "refundedToSender": true, "attempts": 1, "deliveredAmount": "4.97",
///  "explorerUrl": "https://basescan.org/tx/0x...", "quoteId": "q_..."}
/// ```
///
/// `status` is `"success"`, `"failed"` (nothing moved; `"error"` says why; the deposit stays
/// pending and may be refunded or swept again), `"skipped"` (not refundable; `"reason"` says
/// why, `"error"` in words; nothing moved) or `"pending"` (the send's outcome could not be
/// learned: it is resolved automatically, with the same quote, and reported by
/// `"refund:update"` events). `amount` is what leaves the account and `deliveredAmount` what
/// the receiver got after the gas (human-readable decimal strings); `refundedTo` and
/// `refundedToSender` are set once the receiver is chosen, `txHash`, `deliveredAmount` and
/// `explorerUrl` on success (the explorer link only for chains that have one), `quoteId` once
/// a refund quote was sent. Absent fields are left out, not null. A refund that ran but did
/// not succeed is still `DEPOSITKIT_STATUS_OK`: read `status`. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_REFUND` when the deposit cannot be refunded: it was credited, already
///   refunded, is being swept or refunded right now (the message says which);
/// - `DEPOSITKIT_STATUS_NOT_FOUND` for an unknown `deposit_id`;
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an unknown `reason`;
/// - `DEPOSITKIT_STATUS_CONFIGURATION` before initialization; `DEPOSITKIT_STATUS_TIMEOUT` after
///   `callTimeoutMs` (the refund goes on in the background); `DEPOSITKIT_STATUS_DEPOSIT_SDK`
///   when the client is (or gets) closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`,
///   `deposit_id` or `out_result_json` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread up to `callTimeoutMs`. Thread-safe: two threads refunding the same
/// deposit at once get one refund; the other call fails with `DEPOSITKIT_STATUS_REFUND`.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// and `reason` must be NULL or NUL-terminated strings; `out_result_json` must be NULL or point
/// to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_refund(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    reason: *const c_char,
    out_result_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        let reason = if reason.is_null() {
            RefundReason::UserRequested
        } else {
            // SAFETY: the caller's contract above.
            unsafe { strings::str_arg(reason, "reason") }?.parse::<RefundReason>()?
        };
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_result_json, "out_result_json") }?;
        let result = client.inner.refund(deposit_id, reason)?;
        out.write(json_out(serde_json::to_string(&result))?);
        Ok(())
    })
}

/// Whether `depositkit_deposit_client_refund` would try to send deposit `deposit_id` back now,
/// and to whom (spec `canRefund`). Reads the deposit's senders and prices the refund (a quote,
/// which moves nothing), so a deposit too small to cover the gas is known.
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`):
///
/// ```json
/// {"eligible": true, "reason": "sweep_failed", "message": "...",
///  "refundAddress": "0x...", "refundToSender": true}
/// ```
///
/// `eligible` tells whether a refund would be tried; `message` says why in words (always set).
/// When eligible, `reason` is the reason the refund would carry (`"sweep_failed"` after a
/// failed sweep, else `"user_requested"`) and `refundAddress` / `refundToSender` name the
/// receiver (the original sender, or the owner). When not, `reason` is
/// `"address_type_mismatch"` or `"below_minimum"` when one of them is why, and absent
/// otherwise (a deposit unknown, being swept now, already being refunded, credited or
/// refunded: see `message`). It is the answer `depositkit_deposit_client_refund` acts on: a
/// deposit whose earlier sweep or refund outcome is unknown is eligible, and the refund first
/// resolves that send with its same quote (never sending twice; `message` says so). Absent
/// fields are left out, not null. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK` (also for an unknown `deposit_id`: not eligible);
/// `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` when the senders or the price cannot be read;
/// `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the
/// client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread up to `callTimeoutMs`. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_json` must be NULL or point to a writable
/// `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_can_refund(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_json, "out_json") }?;
        let eligibility = client.inner.can_refund(deposit_id)?;
        out.write(json_out(serde_json::to_string(&eligibility))?);
        Ok(())
    })
}

/// The latest refund update of deposit `deposit_id`, manual or automatic, in progress or final:
/// how to learn where an automatic refund is, or what a finished one sent.
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the RefundResult as `depositkit_deposit_client_refund` describes
/// it (`status` may also be `"pending"` or `"processing"` here). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` when the deposit was never
/// refunded nor tried; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`. Does not block.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_json` must be NULL or point to a writable
/// `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_refund_result(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_json, "out_json") }?;
        let result = client.inner.refund_result(deposit_id)?.ok_or_else(|| {
            FfiError::new(
                depositkit_status::NotFound,
                format!("deposit {} was never refunded", quote(deposit_id)),
            )
        })?;
        out.write(json_out(serde_json::to_string(&result))?);
        Ok(())
    })
}

/// The automatic-refund settings in use (the `refund` option of
/// `depositkit_deposit_client_new`, defaults filled in).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): `{"enabled": false, "delayMs": 5000, "maxAttempts": 2,
/// "refundToSender": true}`. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_refund_config(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.refund_config())
    })
}
