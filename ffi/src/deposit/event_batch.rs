//! Events taken in lists as one JSON array: one C string per list instead of one per event.
//!
//! Why: taking events one C string each (`depositkit_deposit_client_next_events`) costs, per
//! event, an allocation here and a `depositkit_string_free` in the host besides writing its
//! JSON; a host that drains millions of events per second pays that per event. Here the events
//! of one take are written, one after the other, into one buffer.

use std::ffi::c_char;

use depositkit_core::deposit::{DepositEvent, RecordedEvent};
use serde_json::Value;

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
    for (block, some) in events.chunks(WARM_BLOCK).enumerate() {
        std::hint::black_box(some.iter().map(warm).fold(0, usize::wrapping_add));
        for (i, event) in some.iter().enumerate() {
            if block > 0 || i > 0 {
                out.push(b',');
            }
            write_event_json(&mut out, event);
        }
    }
    out.push(b']');
    // Every part is UTF-8 (serde_json's output and ASCII).
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Events whose payloads are read ahead together before they are written (a block's payloads
/// stay in the CPU's caches until written: 64 small payloads are ~16 KiB).
const WARM_BLOCK: usize = 64;

/// Reads the first bytes of what writing `event` reads first (its onramp payload's top-level
/// keys and values), returning a number made of them so that the reads are not optimised away.
///
/// Why: the events of a list taken from a queue that filled while the host was busy were
/// allocated long ago, their payloads spread over the heap and out of the CPU's caches, and
/// writing an event stops at each of its blocks in turn (the payload's map node, its key, its
/// value). Read ahead in a loop that does nothing else, the blocks of many events are fetched
/// at once: taking 10,000 queued events went from 1.4-1.6 to 1.9-2.3 million events/s
/// (`cargo bench -p depositkit-benches --bench events -- c_take_json`, medians;
/// `docs/benchmarks.md`). Other kinds of event are written through a `Value` built first, a
/// cost that dwarfs this one: not read ahead.
fn warm(event: &RecordedEvent) -> usize {
    let DepositEvent::Onramp { payload, .. } = &event.event else { return 0 };
    let first_byte = |text: &str| usize::from(text.as_bytes().first().copied().unwrap_or(0));
    match payload {
        Value::Object(fields) => fields
            .iter()
            .take(8)
            .map(|(key, value)| {
                first_byte(key)
                    + match value {
                        Value::String(text) => first_byte(text),
                        Value::Array(items) => items.len(),
                        Value::Object(fields) => fields.len(),
                        _ => 0,
                    }
            })
            .fold(0, usize::wrapping_add),
        Value::String(text) => first_byte(text),
        _ => 0,
    }
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

    /// Through the C call: lists taken from a queue of many events (blocks read ahead and
    /// all) join up, byte for byte, to the event log's JSON (`_events_since`) of the same
    /// events.
    #[test]
    fn arrays_taken_from_a_long_queue_are_the_event_logs_json() {
        use super::super::events::depositkit_deposit_client_events_since;
        let client = onramp_client();
        let payloads = [
            json!({"status": "processing", "n": 1.5, "s": "é\"\n\\", "a": [null, {}]}),
            json!("a \"string\" payload"),
            json!(null),
            json!([1, "two", {"three": 3}]),
        ];
        let emitted = 2 * WARM_BLOCK + 9;
        for n in 0..emitted {
            emit_onramp(client, payloads[n % payloads.len()].clone());
        }
        // Each list's elements, without the brackets; and how many events were taken.
        let (mut lists, mut taken) = (Vec::new(), 0);
        while taken < emitted {
            let mut json: *mut c_char = std::ptr::null_mut();
            let mut count = 0;
            // SAFETY: a live handle, a string and a count to write.
            let status = unsafe {
                depositkit_deposit_client_next_events_json(client, 0, 70, &mut json, &mut count)
            };
            assert_eq!(status, depositkit_status::Ok);
            assert!((1..=70).contains(&count));
            // SAFETY: a string from the call, freed once.
            let text = unsafe { CStr::from_ptr(json) }.to_str().unwrap().to_owned();
            // SAFETY: as above.
            unsafe { depositkit_string_free(json) };
            lists
                .push(text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap().to_owned());
            taken += count;
        }
        assert_eq!(taken, emitted);
        let mut log: *mut c_char = std::ptr::null_mut();
        // SAFETY: a live handle and a string to write.
        let status = unsafe { depositkit_deposit_client_events_since(client, 0, 0, &mut log) };
        assert_eq!(status, depositkit_status::Ok);
        // SAFETY: a string from the call, freed once.
        let log_text = unsafe { CStr::from_ptr(log) }.to_str().unwrap().to_owned();
        // SAFETY: as above.
        unsafe { depositkit_string_free(log) };
        assert_eq!(format!("[{}]", lists.join(",")), log_text);
        // SAFETY: a live handle, freed once.
        unsafe { depositkit_deposit_client_free(client) };
    }

    /// Each element is byte for byte what `_next_events` and `_next_event` hand out for the
    /// event (`RecordedEvent::to_json`), for every kind of event, in lists shorter and longer
    /// than a block of events read ahead, with ids and times of every width.
    #[test]
    fn the_array_holds_each_event_as_next_events_writes_it() {
        use depositkit_core::deposit::{DepositEvent, RecordedEvent};
        let kinds = super::super::events::tests::every_kind_of_event();
        let events: Vec<RecordedEvent> = (0..3 * WARM_BLOCK + 5)
            .map(|i| RecordedEvent {
                id: if i == 1 { u64::MAX } else { i as u64 * 7919 },
                at: if i == 2 { 0 } else { 1_700_000_000_000 + i as u64 },
                event: DepositEvent::from_json(&kinds[i % kinds.len()]).unwrap(),
            })
            .collect();
        let singles: Vec<String> = events.iter().map(|e| e.to_json().to_string()).collect();
        for n in [1, 2, WARM_BLOCK - 1, WARM_BLOCK, WARM_BLOCK + 1, events.len()] {
            let array = events_array_json(&events[..n]);
            assert_eq!(array, format!("[{}]", singles[..n].join(",")), "{n} events");
            let each: Vec<String> =
                events[..n].iter().map(super::super::events::event_json).collect();
            assert_eq!(array, format!("[{}]", each.join(",")), "{n} events");
        }
    }
}
