//! The pull side of events: the next event, dropped events, the event log from a cursor, the
//! last event id and one deposit's history.

use std::ffi::c_char;
use std::time::Duration;

use depositkit_core::deposit::RecordedEvent;
use serde_json::Value;

use crate::boundary::{self, FfiError};
use crate::status::depositkit_status;
use crate::strings;

use super::{client_arg, depositkit_deposit_client};

/// Takes the oldest event from the client's pull queue, waiting at most `timeout_ms`
/// milliseconds for one to arrive (0: do not wait).
///
/// Every event is queued, whether or not callbacks are subscribed; the queue holds
/// `eventQueueCapacity` events (default 1024) and, when full, drops the oldest
/// (`depositkit_deposit_client_dropped_events`). Each event is taken by one caller only.
///
/// On success `*out_event_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): one event, in the shapes described at
/// `depositkit_deposit_client_subscribe`. Otherwise it is not written.
///
/// Returns:
/// - `DEPOSITKIT_STATUS_OK` with an event;
/// - `DEPOSITKIT_STATUS_TIMEOUT` when no event arrived within `timeout_ms`: the normal outcome
///   of a quiet period, not an error of the client (the last-error message just says how long
///   it waited);
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` at once when the client is closed and its queue is empty:
///   no event will ever come;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` or `out_event_json` is NULL.
///
/// Blocks the calling thread up to `timeout_ms`. Thread-safe: several threads may wait at once.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_event_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_next_event(
    client: *const depositkit_deposit_client,
    timeout_ms: u64,
    out_event_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_event_json, "out_event_json") }?;
        let timeout = if client.inner.is_closed() {
            Duration::ZERO
        } else {
            Duration::from_millis(timeout_ms)
        };
        match client.inner.next_recorded_event(timeout) {
            Some(event) => {
                out.write(strings::owned(event.to_json().to_string())?);
                Ok(())
            }
            None if client.inner.is_closed() => Err(FfiError::new(
                depositkit_status::DepositSdk,
                "the client is closed and no event is left in its queue",
            )),
            None => Err(FfiError::new(
                depositkit_status::Timeout,
                format!("no event arrived within {timeout_ms} ms"),
            )),
        }
    })
}

/// Events dropped from the client's pull queue so far because it was full (the oldest is
/// dropped to make room).
///
/// On success `*out_count` is written; on failure it is not. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works on a closed client too.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_count`
/// must be NULL or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_dropped_events(
    client: *const depositkit_deposit_client,
    out_count: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_count, "out_count") }?;
        out.write(client.inner.dropped_events());
        Ok(())
    })
}

/// The events after `cursor` (an event id; 0 for the start), oldest first, at most `limit`
/// (0: no limit): what a host missed while it was down or because the pull queue overflowed.
/// With `storePath` every event the client ever emitted is kept, with the same ids after a
/// restart; without it, the last `eventQueueCapacity`. A host that must not miss a credit keeps
/// the id of the last event it handled and, after a restart, handles the events since that id
/// first.
///
/// On success `*out_events_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of events in the shapes described at
/// `depositkit_deposit_client_subscribe`, each with its `"id"` and `"at"`. On failure it is not
/// written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` when events after `cursor` are
/// no longer kept (without `storePath`); `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for a cursor past
/// the last event id; `DEPOSITKIT_STATUS_INTERNAL` when the store cannot be read;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`. Does not block on the network (reads the store file).
/// Thread-safe; works on a closed client too.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_events_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_events_since(
    client: *const depositkit_deposit_client,
    cursor: u64,
    limit: u64,
    out_events_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_events_json, "out_events_json") }?;
        let limit =
            if limit == 0 { usize::MAX } else { usize::try_from(limit).unwrap_or(usize::MAX) };
        let events = client.inner.events_since(cursor, limit)?;
        out.write(strings::owned(events_json(&events))?);
        Ok(())
    })
}

/// The id of the last event the client emitted (0: none yet).
///
/// On success `*out_id` is written; on failure it is not. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works on a closed client too.
/// Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_id` must
/// be NULL or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_last_event_id(
    client: *const depositkit_deposit_client,
    out_id: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_id, "out_id") }?;
        out.write(client.inner.last_event_id());
        Ok(())
    })
}

/// Deposit `deposit_id`'s phase history: its `deposit:lifecycle` events and `refund:update`s,
/// oldest first, with their ids (complete with `storePath`; without it, what the in-memory log
/// still holds; an unknown id has an empty history).
///
/// On success `*out_events_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array as `depositkit_deposit_client_events_since` gives.
/// On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INTERNAL` when the store cannot be read;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`. Does not block on the
/// network. Thread-safe; works on a closed client too.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_events_json` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_deposit_history(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_events_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_events_json, "out_events_json") }?;
        let events = client.inner.deposit_history(deposit_id)?;
        out.write(strings::owned(events_json(&events))?);
        Ok(())
    })
}

/// Recorded events as the JSON array `_events_since` and `_deposit_history` hand out.
fn events_json(events: &[RecordedEvent]) -> String {
    Value::Array(events.iter().map(RecordedEvent::to_json).collect()).to_string()
}
