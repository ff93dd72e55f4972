//! Observability: the process's metrics (Prometheus text, [`metrics_text`]) and the pieces of a
//! client's health report ([`Health`]). Logs are `tracing` events emitted where things happen
//! (targets `depositkit_core::…`); a Rust host installs its own subscriber, the C and Python
//! faces forward them to a callback and to `logging`.
//!
//! One registry per process, shared by every client, with owner-agnostic labels (chain, token,
//! service, status, purpose): 10,000 clients make no more series than one. It sits in the base
//! layer so that transport, clients and the engine can all count.
//!
//! Fleet mode (owners held, lease renewals and losses) does not exist yet; its metrics will
//! join this registry when it does.

pub mod forward;
mod health;
mod metrics;

pub(crate) use health::{BacklogSource, HealthTracker, Service, register_source};
pub use health::{Health, ServiceHealth};
pub use metrics::metrics_text;
pub(crate) use metrics::{
    deposit_detected, deposit_ended, deposit_failed, deposit_retry, event_delivered, event_dropped,
    http_request, http_retry, poll_finished, service_of,
};

/// How long a deposit may sit in a client's table before it counts as stuck (in `health()` and
/// `depositkit_stuck_deposits`), unless the caller of `health` asks for another threshold.
pub const DEFAULT_STUCK_AFTER_MS: u64 = 15 * 60 * 1000;

/// Unix milliseconds now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
