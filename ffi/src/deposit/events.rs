//! The pull side of events: the next event, dropped events, the event log from a cursor, the
//! last event id and one deposit's history.

use std::ffi::c_char;
use std::time::Duration;

use depositkit_core::deposit::{DepositEvent, RecordedEvent};
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

/// Takes up to `capacity` events from the client's pull queue at once, oldest first: waits at
/// most `timeout_ms` milliseconds for the first (0: do not wait), then takes the events already
/// queued behind it without waiting. A host that drains many events (thousands per second)
/// pays one call, not one per event; `depositkit_deposit_client_next_event` keeps working and
/// both may be used on one client (each event is taken by one caller only).
///
/// On success `out_events[0]` to `out_events[*out_count - 1]` are new strings owned by the
/// caller (free each with `depositkit_string_free`), one event each, in the shapes described
/// at `depositkit_deposit_client_subscribe`; `*out_count` is between 1 and `capacity`. The rest
/// of `out_events` is not written. On `DEPOSITKIT_STATUS_TIMEOUT` and
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` `*out_count` is 0; on other failures nothing is written.
///
/// Returns:
/// - `DEPOSITKIT_STATUS_OK` with at least one event;
/// - `DEPOSITKIT_STATUS_TIMEOUT` when no event arrived within `timeout_ms` (a quiet period);
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` at once when the client is closed and its queue is empty;
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `capacity` is 0;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `out_events` or `out_count` is NULL.
///
/// Blocks the calling thread up to `timeout_ms`. Thread-safe: several threads may take events
/// at once (each gets its own; one batch is in queue order).
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_events`
/// must be NULL or point to `capacity` writable `char *`; `out_count` must be NULL or point to a
/// writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_next_events(
    client: *const depositkit_deposit_client,
    timeout_ms: u64,
    out_events: *mut *mut c_char,
    capacity: usize,
    out_count: *mut usize,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        if out_events.is_null() {
            return Err(FfiError::null_argument("out_events"));
        }
        // SAFETY: the caller's contract above.
        let count_out = unsafe { boundary::out(out_count, "out_count") }?;
        let (events, count_out) = take_list(
            client,
            timeout_ms,
            capacity,
            "capacity is 0: out_events must have room for at least one event",
            count_out,
        )?;
        for (taken, event) in events.iter().enumerate() {
            // Never fails: serde_json escapes a NUL in any string it writes. Were it to, the
            // strings already written are freed: the caller owns none on a failure.
            let json = strings::owned(event_json(event)).inspect_err(|_| {
                for written in 0..taken {
                    // SAFETY: written just above by this call, freed once.
                    unsafe { strings::depositkit_string_free(out_events.add(written).read()) };
                }
            })?;
            // SAFETY: `taken < events.len() <= capacity` and the caller gave room for
            // `capacity` pointers.
            unsafe { out_events.add(taken).write(json) };
        }
        count_out.write(events.len());
        Ok(())
    })
}

/// The events of one take in a list (`_next_events`, `_next_events_json`): refuses a `max` of
/// 0 with `zero_max`, then takes up to `max` queued events, waiting at most `timeout_ms` for the
/// first (not at all once the client is closed). When none came, `*count_out` is 0 and the
/// error says why (a quiet period, or a closed client); else `count_out` comes back to be
/// written once the events are handed over.
pub(crate) fn take_list(
    client: &depositkit_deposit_client,
    timeout_ms: u64,
    max: usize,
    zero_max: &str,
    count_out: boundary::Out<usize>,
) -> boundary::FfiResult<(Vec<RecordedEvent>, boundary::Out<usize>)> {
    if max == 0 {
        return Err(FfiError::new(depositkit_status::InvalidArgument, zero_max));
    }
    let timeout =
        if client.inner.is_closed() { Duration::ZERO } else { Duration::from_millis(timeout_ms) };
    // One take of the client's queue for the whole list.
    let events = client.inner.next_recorded_events(timeout, max);
    if !events.is_empty() {
        return Ok((events, count_out));
    }
    count_out.write(0);
    Err(if client.inner.is_closed() {
        FfiError::new(
            depositkit_status::DepositSdk,
            "the client is closed and no event is left in its queue",
        )
    } else {
        FfiError::new(
            depositkit_status::Timeout,
            format!("no event arrived within {timeout_ms} ms"),
        )
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

/// One event's JSON, byte for byte `event.to_json().to_string()` — `{"at":…,"id":…,
/// "payload":…,"type":"…"}`, the keys in the sorted order serde_json's map writes them — with
/// the envelope written directly instead of built as a map (and the onramp widget's payload
/// written where it is instead of copied into one): most of the cost of handing a small event
/// to C. Checked against `to_json` for every kind of event in `tests.rs`.
pub(crate) fn event_json(recorded: &RecordedEvent) -> String {
    // Room for the usual event and the NUL byte the C string adds, so neither reallocates.
    let mut out = Vec::with_capacity(160);
    write_event_json(&mut out, recorded);
    // serde_json writes UTF-8, and the rest is ASCII.
    String::from_utf8(out).unwrap_or_else(|_| recorded.to_json().to_string())
}

/// Appends [`event_json`]'s text to `out` (a list of events shares one buffer:
/// `event_batch.rs`).
pub(crate) fn write_event_json(out: &mut Vec<u8>, recorded: &RecordedEvent) {
    let whole =
        |out: &mut Vec<u8>| out.extend_from_slice(recorded.to_json().to_string().as_bytes());
    let event = &recorded.event;
    let name = event.type_name();
    let plain_name = name.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
    let built;
    let payload = match event {
        DepositEvent::Onramp { payload, .. } => payload,
        other => match other.to_json() {
            Value::Object(mut fields) if fields.len() == 2 && fields.contains_key("type") => {
                built = fields.remove("payload");
                match &built {
                    Some(payload) => payload,
                    None => return whole(out),
                }
            }
            _ => return whole(out),
        },
    };
    if !plain_name {
        return whole(out);
    }
    let start = out.len();
    // The envelope's pieces appended as they are: `write!` through `core::fmt` was ~15% of
    // the time of a list of small events.
    out.extend_from_slice(br#"{"at":"#);
    // Writing to a `Vec` never fails; serde_json writes integers with `itoa`.
    let _ = serde_json::to_writer(&mut *out, &recorded.at);
    out.extend_from_slice(br#","id":"#);
    let _ = serde_json::to_writer(&mut *out, &recorded.id);
    out.extend_from_slice(br#","payload":"#);
    if serde_json::to_writer(&mut *out, payload).is_err() {
        out.truncate(start);
        return whole(out);
    }
    out.extend_from_slice(br#","type":""#);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(br#""}"#);
}

/// Recorded events as the JSON array `_events_since` and `_deposit_history` hand out.
fn events_json(events: &[RecordedEvent]) -> String {
    Value::Array(events.iter().map(RecordedEvent::to_json).collect()).to_string()
}

#[cfg(test)]
pub(super) mod tests {
    use std::ffi::{CStr, CString};

    use serde_json::json;

    use super::super::{depositkit_deposit_client_free, depositkit_deposit_client_new};
    use super::*;
    use crate::onramp::depositkit_deposit_client_handle_onramp_message;
    use crate::strings::depositkit_string_free;

    /// Takes what `next_events` gives: (status, the events' `payload.n`).
    fn take(
        client: *const depositkit_deposit_client,
        capacity: usize,
        timeout_ms: u64,
    ) -> (depositkit_status, Vec<u64>) {
        let mut slots = vec![std::ptr::null_mut::<c_char>(); capacity.max(1)];
        let mut count = usize::MAX;
        // SAFETY: a live handle, `capacity` slots, a count to write.
        let status = unsafe {
            depositkit_deposit_client_next_events(
                client,
                timeout_ms,
                slots.as_mut_ptr(),
                capacity,
                &mut count,
            )
        };
        let taken = if status == depositkit_status::InvalidArgument { 0 } else { count };
        let numbers = slots[..taken]
            .iter()
            .map(|&slot| {
                // SAFETY: a string from the call, freed once.
                let text = unsafe { CStr::from_ptr(slot) }.to_str().unwrap().to_owned();
                // SAFETY: as above.
                unsafe { depositkit_string_free(slot) };
                let event: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(event["type"], "onramp:order_processing", "{text}");
                event["payload"]["n"].as_u64().unwrap()
            })
            .collect();
        (status, numbers)
    }

    /// A client with the onramp on and no services (events only); the caller frees it.
    pub(in crate::deposit) fn onramp_client() -> *const depositkit_deposit_client {
        let config = json!({"ownerAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
            "destination": {"chainId": 8453}, "servicesUrl": "http://127.0.0.1:9",
            "onramp": {"enabled": true}});
        let config = CString::new(config.to_string()).unwrap();
        let mut client: *const depositkit_deposit_client = std::ptr::null();
        // SAFETY: valid arguments; the caller frees the handle.
        let status = unsafe { depositkit_deposit_client_new(config.as_ptr(), &mut client) };
        assert_eq!(status, depositkit_status::Ok);
        client
    }

    /// Emits `onramp:order_processing` with `data` on `client`, as the widget's message would.
    pub(in crate::deposit) fn emit_onramp(client: *const depositkit_deposit_client, data: Value) {
        let message = json!({"event": "order_processing", "data": data}).to_string();
        let message = CString::new(message).unwrap();
        let mut delivered = false;
        // SAFETY: a live handle, a NUL-terminated message.
        let status = unsafe {
            depositkit_deposit_client_handle_onramp_message(
                client,
                message.as_ptr(),
                &mut delivered,
            )
        };
        assert!(status == depositkit_status::Ok && delivered);
    }

    /// `next_events` takes the queued events in order, at most `capacity`, next to
    /// `next_event`; it times out on an empty queue and refuses a capacity of 0.
    #[test]
    fn next_events_takes_queued_events_in_order() {
        let client = onramp_client();
        assert_eq!(take(client, 8, 0), (depositkit_status::Timeout, vec![]));
        for n in 0..10 {
            emit_onramp(client, json!({"n": n}));
        }
        assert_eq!(take(client, 0, 0).0, depositkit_status::InvalidArgument);
        assert_eq!(take(client, 4, 0), (depositkit_status::Ok, vec![0, 1, 2, 3]));
        let mut one: *mut c_char = std::ptr::null_mut();
        // SAFETY: a live handle and a pointer to write.
        let status = unsafe { depositkit_deposit_client_next_event(client, 0, &mut one) };
        assert_eq!(status, depositkit_status::Ok);
        // SAFETY: the string from the call, freed once.
        unsafe { depositkit_string_free(one) };
        assert_eq!(take(client, 100, 10), (depositkit_status::Ok, vec![5, 6, 7, 8, 9]));
        assert_eq!(take(client, 100, 10), (depositkit_status::Timeout, vec![]));
        // SAFETY: a live handle, freed once.
        unsafe { depositkit_deposit_client_free(client) };
    }

    /// One event of every kind (and payloads with strings to escape), in their JSON form.
    pub(in crate::deposit) fn every_kind_of_event() -> Vec<Value> {
        let destination = json!({"address": "0xabc", "chainId": 8453});
        vec![
            json!({"type": "deposit:lifecycle", "payload": {"id": "d\"1", "phase": "credited",
                "token": "USDC", "chainId": 8453, "amount": "5", "amountUSD": 5.0,
                "destination": destination, "transactionId": "0x12", "timestamp": 7}}),
            json!({"type": "status:change", "payload": "watching"}),
            json!({"type": "error", "payload": {"kind": "NetworkError", "code": 600,
                "message": "a \"quoted\" é \u{1} line\nbreak"}}),
            json!({"type": "refund:update", "payload": {"depositId": "d1", "token": "USDT",
                "sourceChainId": 1, "amount": "2", "amountUSD": 2.0, "status": "pending",
                "reason": "sweep_failed", "attempts": 1}}),
            json!({"type": "recovery:result", "payload": {"token": "ETH", "chainId": 1,
                "amount": "0.1", "amountUSD": 300.5, "status": "skipped", "rawAmount": "1"}}),
            json!({"type": "onramp:order_processing", "payload": {"status": "processing",
                "z": [1, 2.5, null, "é"], "a": {"b": true}, "\n\"": "\\ \u{1f}"}}),
            json!({"type": "onramp:order_created", "payload": null}),
            json!({"type": "onramp:order_failed", "payload": "a \"plain\" string"}),
            json!({"type": "onramp:complete", "payload": {"amount": "99", "token": "USDC",
                "status": "completed", "id": "ord_1", "destination": destination,
                "fiatAmount": 100.0, "fiatCurrency": "USD", "txHash": "0x12"}}),
        ]
    }

    /// `event_json` writes what `to_json` builds, byte for byte, for every kind of event.
    #[test]
    fn event_json_is_to_json_for_every_kind_of_event() {
        for (i, sample) in every_kind_of_event().iter().enumerate() {
            let event = DepositEvent::from_json(sample).unwrap_or_else(|| panic!("{sample}"));
            let recorded =
                RecordedEvent { id: i as u64 + 1, at: 1_764_000_000_000 + i as u64, event };
            assert_eq!(event_json(&recorded), recorded.to_json().to_string());
        }
    }
}
