//! The one event log across owners, read from a cursor that survives restarts, over
//! `depositkit_fleet::EventReader`.

use std::ffi::c_char;
use std::time::Duration;

use ::depositkit_fleet::{EventCursor, FleetEvent};
use serde_json::{Value, json};

use super::{depositkit_fleet, fleet_arg, fleet_error, invalid};
use crate::boundary;
use crate::deposit::json_out;
use crate::status::depositkit_status;
use crate::strings;

/// One event of the log as JSON: its owner, id, time, kind, deposit, the event itself (as the
/// deposit client hands it out) and the cursor just after it.
pub(super) fn event_json(event: &FleetEvent) -> Value {
    json!({
        "owner": event.owner,
        "id": event.id,
        "at": event.at,
        "kind": event.kind,
        "depositId": event.deposit_id,
        "event": serde_json::from_str::<Value>(&event.event).unwrap_or(Value::Null),
        "cursor": event.cursor.to_string(),
    })
}

/// Reads the fleet's one event log (every owner's events, in commit order) after `cursor`: at
/// most `max_events` events, waiting up to `timeout_ms` for the first one when none is there yet
/// (0: do not wait).
///
/// `cursor` is NULL (the beginning of the log) or a cursor this function handed out (as
/// `*out_next_cursor` or an event's `"cursor"`), e.g. saved by an earlier run of the program:
/// the text `v1.<cluster>.<tx>.<pos>`, which names its PostgreSQL cluster (a cursor of another
/// cluster, e.g. after a restore, is refused).
///
/// On success `*out_events_json` and `*out_next_cursor` are new strings owned by the caller
/// (free each with `depositkit_string_free`): a JSON array of events, oldest first, `[]` when
/// none came within `timeout_ms`,
///
/// ```json
/// [{"owner": "0x...", "id": 7, "at": 1700000000000, "kind": "deposit:lifecycle",
///   "depositId": "...", "event": {"type": "deposit:lifecycle", ...}, "cursor": "v1...."}]
/// ```
///
/// (`id` is the event's id in its owner's log; `at` unix milliseconds; `depositId` null for an
/// event about no deposit; `event` the event as the deposit client's callbacks get it), and the
/// cursor after the last event read (the given one when none). On failure neither is written.
///
/// Delivery is at least once: save the next cursor after handling a batch, and de-duplicate by
/// (`owner`, `id`).
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for a `cursor` that is not one or names another
///   cluster, or `max_events` 0;
/// - `DEPOSITKIT_STATUS_NETWORK` when the database cannot be read;
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` after `depositkit_fleet_leave`;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `fleet`, `out_events_json` or `out_next_cursor` is
///   NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks up to `timeout_ms` (woken as soon as an event commits) and while the database
/// answers. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `cursor` must be NULL or
/// a NUL-terminated string; `out_events_json` and `out_next_cursor` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_events(
    fleet: *const depositkit_fleet,
    cursor: *const c_char,
    max_events: usize,
    timeout_ms: u64,
    out_events_json: *mut *mut c_char,
    out_next_cursor: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let cursor = unsafe { strings::opt_str_arg(cursor, "cursor") }?;
        // SAFETY: the caller's contract above.
        let out_events = unsafe { boundary::out(out_events_json, "out_events_json") }?;
        // SAFETY: the caller's contract above.
        let out_cursor = unsafe { boundary::out(out_next_cursor, "out_next_cursor") }?;
        let cursor = match cursor {
            Some(text) => text.parse::<EventCursor>().map_err(fleet_error)?,
            None => EventCursor::START,
        };
        if max_events == 0 {
            return Err(invalid("max_events must be at least 1, got 0".to_owned()));
        }
        let mut reader = fleet.joined()?.event_reader(cursor);
        let batch =
            reader.read(max_events, Duration::from_millis(timeout_ms)).map_err(fleet_error)?;
        let events: Vec<Value> = batch.iter().map(event_json).collect();
        let events = json_out(serde_json::to_string(&events))?;
        let next = match strings::owned(reader.cursor().to_string()) {
            Ok(next) => next,
            Err(err) => {
                // SAFETY: `events` came from `strings::owned` just above and was not handed out.
                unsafe { strings::depositkit_string_free(events) };
                return Err(err);
            }
        };
        out_events.write(events);
        out_cursor.write(next);
        Ok(())
    })
}
