//! Metrics and health: `depositkit_metrics_text`, `depositkit_deposit_client_health`.

use std::ffi::c_char;

use crate::boundary::{self, FfiResult};
use crate::deposit::{depositkit_deposit_client, write_json_answer};
use crate::status::depositkit_status;
use crate::strings;

/// Every metric of the process (all clients) in the Prometheus text exposition format 0.0.4:
/// `depositkit_deposits_detected_total`, `_credited_total`, `_refunded_total`,
/// `_failed_total` (by `chain` and `token`), `depositkit_sweep_latency_seconds`,
/// `depositkit_refund_latency_seconds`, `depositkit_polls_total`,
/// `depositkit_poll_latency_seconds`, `depositkit_backlog_deposits`,
/// `depositkit_stuck_deposits`, `depositkit_http_requests_total` (by `service` and `status`),
/// `depositkit_http_request_duration_seconds`, `depositkit_http_retries_total`,
/// `depositkit_retries_total`, `depositkit_events_delivered_total`,
/// `depositkit_events_dropped_total`; then fleet mode's (`depositkit_fleet_*`, zero until a
/// fleet member runs in the process): `depositkit_fleet_owners_held`,
/// `depositkit_fleet_lease_renewals_total`, `depositkit_fleet_leases_lost_total`,
/// `depositkit_fleet_members_reaped_total`, `depositkit_fleet_owners_claimed_total`,
/// `depositkit_fleet_owners_released_total`, `depositkit_fleet_commands_total` (by `outcome`:
/// `done`, `failed`), `depositkit_fleet_events_written_total` (see docs/fleet.md). Serve it as
/// `text/plain; version=0.0.4`.
///
/// On success `*out_text` is a string owned by the caller (free it with
/// `depositkit_string_free`). Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_text` is NULL. Thread-safe; does not block on
/// the network.
///
/// # Safety
/// `out_text` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_metrics_text(out_text: *mut *mut c_char) -> depositkit_status {
    boundary::status(|| -> FfiResult<()> {
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_text, "out_text") }?;
        out.write(strings::owned(::depositkit_fleet::metrics_text())?);
        Ok(())
    })
}

/// The client's health as JSON: `{"services":{"account":{"lastOkMs":...,"lastErrorMs":...,
/// "lastError":...},"jwt":{...}},"lastPollMs":...,"backlog":0,"stuck":["<deposit id>",...],
/// "stuckAfterMs":900000,"sessionValid":true,"watching":true,"ready":true,"healthy":true}`.
/// `stuck_after_ms` is how long a deposit may sit in the table before it is listed in `stuck`
/// (0: the default, 15 minutes).
///
/// On success `*out_json` is a string owned by the caller (free it with
/// `depositkit_string_free`). Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works on a closed client too
/// (`"ready":false`). Does not block on the network. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_health(
    client: *const depositkit_deposit_client,
    stuck_after_ms: u64,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    let threshold = (stuck_after_ms != 0).then_some(stuck_after_ms);
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| Ok(c.health(threshold)))
    })
}
