//! Events taken in lists as one JSON array: one C string per list instead of one per event.
//!
//! Why: taking events one C string each (`depositkit_deposit_client_next_events`) costs, per
//! event, an allocation here and a `depositkit_string_free` in the host besides writing its
//! JSON; a host that drains millions of events per second pays that per event. Here the events
//! of one take are written, one after the other, into one buffer.

use std::ffi::c_char;

use depositkit_core::deposit::RecordedEvent;

use crate::boundary;
use crate::status::depositkit_status;
use crate::strings;

use super::events::{take_list, write_event_json};
use super::{client_arg, depositkit_deposit_client};

/// Takes up to `max_events` events from the client's pull queue at once, oldest first, as one
/// JSON array: waits at most `timeout_ms` milliseconds for the first (0: do not wait), then
/// takes the events already queued behind it without waiting: as
/// `depositkit_deposit_client_next_events` does, with one string for the whole list instead of
/// one per event (the fastest way to drain many events: no allocation or free per event).
///
/// On success `*out_events_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of between 1 and `max_events` events, each in the
/// shapes described at `depositkit_deposit_client_subscribe` with its `"id"` and `"at"`, and
/// `*out_count` is the number of events in it. On `DEPOSITKIT_STATUS_TIMEOUT` and
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` `*out_count` is 0 and `*out_events_json` is not written; on
/// other failures nothing is written.
///
/// Returns:
/// - `DEPOSITKIT_STATUS_OK` with at least one event;
/// - `DEPOSITKIT_STATUS_TIMEOUT` when no event arrived within `timeout_ms` (a quiet period);
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` at once when the client is closed and its queue is empty;
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `max_events` is 0;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `out_events_json` or `out_count` is NULL.
///
/// Blocks the calling thread up to `timeout_ms`. Thread-safe: several threads may take events
/// at once (each gets its own; one array is in queue order), also with `_next_event` and
/// `_next_events` on the same client.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_events_json` must be NULL or point to a writable `char *`; `out_count` must be NULL or
/// point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_next_events_json(
    client: *const depositkit_deposit_client,
    timeout_ms: u64,
    max_events: usize,
    out_events_json: *mut *mut c_char,
    out_count: *mut usize,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let json_out = unsafe { boundary::out(out_events_json, "out_events_json") }?;
        // SAFETY: the caller's contract above.
        let count_out = unsafe { boundary::out(out_count, "out_count") }?;
        let (events, count_out) = take_list(
            client,
            timeout_ms,
            max_events,
            "max_events is 0: a take must have room for at least one event",
            count_out,
        )?;
        json_out.write(strings::owned(events_array_json(&events))?);
        count_out.write(events.len());
        Ok(())
    })
}

/// `events` as one JSON array, each element byte for byte what `_next_events` hands out.
pub(crate) fn events_array_json(events: &[RecordedEvent]) -> String {
    // The usual small event is ~120 bytes; one reservation for the whole list (and the NUL).
    let mut out = Vec::with_capacity(events.len() * 128 + 2);
    out.push(b'[');
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_event_json(&mut out, event);
    }
    out.push(b']');
    // Every part is UTF-8 (serde_json's output and ASCII).
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use serde_json::{Value, json};

    use super::super::events::tests::{emit_onramp, onramp_client};
    use super::super::{depositkit_deposit_client_close, depositkit_deposit_client_free};
    use super::*;
    use crate::strings::depositkit_string_free;

    /// Takes what `next_events_json` gives: (status, the count, the array's elements).
    fn take(
        client: *const depositkit_deposit_client,
        max_events: usize,
        timeout_ms: u64,
    ) -> (depositkit_status, usize, Vec<Value>) {
        let mut json: *mut c_char = std::ptr::null_mut();
        let mut count = usize::MAX;
        // SAFETY: a live handle, a string and a count to write.
        let status = unsafe {
            depositkit_deposit_client_next_events_json(
                client, timeout_ms, max_events, &mut json, &mut count,
            )
        };
        if json.is_null() {
            return (status, count, Vec::new());
        }
        // SAFETY: a string from the call, freed once.
        let text = unsafe { CStr::from_ptr(json) }.to_str().unwrap().to_owned();
        // SAFETY: as above.
        unsafe { depositkit_string_free(json) };
        let Value::Array(events) = serde_json::from_str(&text).unwrap() else {
            panic!("not an array: {text}")
        };
        (status, count, events)
    }

    /// One array per take, in queue order, at most `max_events`, each element the event with
    /// its id; a timeout on an empty queue, a refusal of 0, and "closed" once nothing is left.
    #[test]
    fn next_events_json_takes_queued_events_as_one_array() {
        let client = onramp_client();
        assert_eq!(take(client, 8, 0), (depositkit_status::Timeout, 0, vec![]));
        for n in 0..10 {
            emit_onramp(client, json!({"n": n, "s": "é\"\n"}));
        }
        assert_eq!(take(client, 0, 0).0, depositkit_status::InvalidArgument);
        let (status, count, events) = take(client, 4, 0);
        assert_eq!((status, count), (depositkit_status::Ok, 4));
        for (n, event) in events.iter().enumerate() {
            assert_eq!(event["type"], "onramp:order_processing");
            assert_eq!(event["payload"], json!({"n": n, "s": "é\"\n"}));
            assert_eq!(event["id"], n + 1, "each event carries its id");
        }
        let (status, count, events) = take(client, 100, 10);
        assert_eq!((status, count, events.len()), (depositkit_status::Ok, 6, 6));
        assert_eq!(events[5]["payload"]["n"], 9);
        // SAFETY: a live handle.
        assert_eq!(unsafe { depositkit_deposit_client_close(client) }, depositkit_status::Ok);
        assert_eq!(take(client, 8, 1000), (depositkit_status::DepositSdk, 0, vec![]));
        // SAFETY: a live handle, freed once.
        unsafe { depositkit_deposit_client_free(client) };
    }

    /// Each element is byte for byte what `_next_events` hands out for the event.
    #[test]
    fn the_array_holds_each_event_as_next_events_writes_it() {
        use depositkit_core::deposit::{DepositEvent, RecordedEvent};
        let events: Vec<RecordedEvent> = [
            json!({"type": "status:change", "payload": "watching"}),
            json!({"type": "onramp:order_created", "payload": {"a": [1, 2.5, null]}}),
            json!({"type": "error", "payload": {"kind": "NetworkError", "code": 600,
                "message": "a \"quoted\" line\nbreak"}}),
        ]
        .iter()
        .enumerate()
        .map(|(i, value)| RecordedEvent {
            id: i as u64 + 7,
            at: 1_700_000_000_000,
            event: DepositEvent::from_json(value).unwrap(),
        })
        .collect();
        let singles: Vec<String> = events.iter().map(super::super::events::event_json).collect();
        assert_eq!(events_array_json(&events), format!("[{}]", singles.join(",")));
        assert_eq!(events_array_json(&events[..1]), format!("[{}]", singles[0]));
    }
}
