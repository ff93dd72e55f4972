//! Notification records without a UI (spec `deposit-library.md`, `DepositNotificationsProps`,
//! the headless `useDepositNotifications`): one record per deposit, kept by the client when the
//! `notifications` option is set, over
//! `depositkit_core::deposit::DepositClient::{notifications, dismiss_notification,
//! subscribe_notifications, notifications_config}`.
//!
//! The change callback reuses the event callbacks' machinery of `deposit.rs`
//! (`register_callback`, `HostCallback`): the same threads, re-entry, lifetime of `user_data`
//! and `depositkit_deposit_client_unsubscribe`.

use std::ffi::{c_char, c_int, c_void};

use crate::boundary;
use crate::deposit::{
    client_arg, depositkit_deposit_client, depositkit_user_data_free, register_callback,
    write_json_answer,
};
use crate::status::depositkit_status;
use crate::strings;

/// A callback receiving the notification records of a deposit client after each change,
/// registered with `depositkit_deposit_client_subscribe_notifications`.
///
/// Called with the `user_data` given at registration and every record, oldest first, as a JSON
/// array (the shape of `depositkit_deposit_client_notifications`; `[]` once the last record
/// is gone): `records_json` is NUL-terminated UTF-8 of `records_json_len` bytes (without the
/// NUL). It is borrowed: valid only during the call; copy it to keep it.
///
/// Threads, re-entry, the return value and unwinding follow the rules of
/// `depositkit_event_callback`: it runs on a delivery thread of the process (`depositkit-events`),
/// one call at a time together with the client's event callbacks, may call any depositkit
/// function (including `depositkit_deposit_client_dismiss_notification` and
/// `depositkit_deposit_client_unsubscribe` of itself), should return promptly, returns 0 when
/// handled (any other value is counted by `depositkit_deposit_client_callback_errors`), and must
/// not unwind or `longjmp`.
#[allow(non_camel_case_types)]
pub type depositkit_notifications_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        records_json: *const c_char,
        records_json_len: usize,
    ) -> c_int,
>;

/// The notification records, oldest first: one per deposit, updated in place as the deposit
/// moves through its phases and as it is refunded. At most `notifications.max` are kept (a new
/// deposit beyond that drops the oldest record). A record whose story is over (phase
/// `credited`, `failed` or `below_threshold`, with no refund pending or processing) is removed
/// `notifications.durationMs` after its last change (0: never), or at once by
/// `depositkit_deposit_client_dismiss_notification`; a later event of the deposit creates a new
/// one. Records are current when the call that caused them returns (a poll, a sweep, a
/// refund).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array, `[]` when there is none or when the
/// `notifications` option is not set. Each record is the deposit's latest lifecycle event (the
/// fields of a `"deposit:lifecycle"` payload, see `depositkit_deposit_client_subscribe`: `id`,
/// `phase`, `token`, `chainId`, `amount`, `amountUSD`, `destination`, `transactionId`,
/// `explorerUrl`, `error`, `timestamp`) plus `createdAt` and `updatedAt` (unix milliseconds)
/// and, once the deposit is being (or was) refunded, `refund`: its latest RefundResult (see
/// `depositkit_deposit_client_refund`):
///
/// ```json
/// [{"id": "dep_...", "phase": "failed", "token": "USDC", "chainId": 8453, "amount": "2",
///   "amountUSD": 2.0, "destination": {"address": "0x...", "chainId": 8453},
///   "error": "...", "timestamp": 1700000000000, "createdAt": 1700000000000,
///   "updatedAt": 1700000000500, "refund": {"depositId": "dep_...", "status": "success", ...}}]
/// ```
///
/// Absent fields are left out, not null. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_notifications(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.notifications())
    })
}

/// Dismisses deposit `deposit_id`'s notification record now (a later event of the deposit
/// creates a new one). The change goes to the notification callbacks.
///
/// On success `*out_dismissed` tells whether there was such a record (false for an unknown
/// deposit, a record already gone, or when the `notifications` option is not set); on failure
/// it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
/// Does not block. Thread-safe (also from inside a callback).
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_dismissed` must be NULL or point to a writable
/// `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_dismiss_notification(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_dismissed: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_dismissed, "out_dismissed") }?;
        out.write(client.inner.dismiss_notification(deposit_id)?);
        Ok(())
    })
}

/// Calls `callback` with `user_data` and every notification record (a JSON array, see
/// `depositkit_notifications_callback`) after each change of the records: a deposit's event, a
/// refund update, an expiry, a dismissal. Changes that follow each other quickly each get a
/// call, in order; the last call shows the current records.
///
/// Threads, re-entry and the lifetime of `user_data` are those of
/// `depositkit_deposit_client_subscribe`: on success `*out_subscription` is the subscription's
/// id (never 0; the same space of ids as event subscriptions), removed with
/// `depositkit_deposit_client_unsubscribe`, and the library owns `user_data`: `user_data_free`
/// (if not NULL) is called with it exactly once when the subscription is dropped (by
/// `_unsubscribe`, `_close` or `_free`), never while a call of `callback` is running and never
/// while the library holds a lock. On failure nothing is registered, `*out_subscription` is not
/// written and `user_data_free` is not called (`user_data` stays the caller's).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when the client was
/// created without the `notifications` option; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`,
/// `callback` or `out_subscription` is NULL; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is
/// closed. Does not block. Thread-safe (also from inside a callback).
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_subscription` must be NULL or point to a writable `uint64_t`. `callback` must follow
/// the rules of `depositkit_notifications_callback`; `user_data` (which may be NULL) must stay
/// valid for it until `user_data_free` is called (or, without `user_data_free`, until the
/// subscription is dropped) and may be used on the dispatcher thread; `user_data_free` must be
/// safe to call on any thread and must not unwind or `longjmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_subscribe_notifications(
    client: *const depositkit_deposit_client,
    callback: depositkit_notifications_callback,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    out_subscription: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        unsafe {
            register_callback(client, callback, user_data, user_data_free, out_subscription, {
                |inner, host| {
                    inner.subscribe_notifications(Box::new(move |records| {
                        host.call_json(|| serde_json::to_string(records).ok());
                    }))
                }
            })
        }
    })
}

/// The `notifications` option in use, defaults filled in: `position`, `theme` and `className`
/// mean nothing to depositkit and are kept for a host UI that renders the records.
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): `{"position": "top-right", "theme": "dark", "durationMs": 6000,
/// "max": 5, "className": null}`, or `null` (the JSON literal) when notifications are off. On
/// failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_notifications_config(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.notifications_config())
    })
}
