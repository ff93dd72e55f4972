//! A client's health: what it last heard from each service, and the process's registry of live
//! clients that the backlog gauges are read from.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use serde::Serialize;

/// One remote service as a client last saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceHealth {
    /// The last successful call, unix milliseconds (`None`: none yet).
    pub last_ok_ms: Option<u64>,
    /// The last failed call, unix milliseconds.
    pub last_error_ms: Option<u64>,
    /// The last failure's message (never a secret: error messages hold none).
    pub last_error: Option<String>,
}

/// What `DepositClient::health()` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// Every service the client has called, by name (`account` — the balance polls —, `jwt` —
    /// the session —, `signer`, `chain` — the chain watchers' endpoints, `docs/finality.md`):
    /// the last success and failure.
    pub services: BTreeMap<String, ServiceHealth>,
    /// The last successful poll, unix milliseconds.
    pub last_poll_ms: Option<u64>,
    /// Deposits in the table: detected, not yet credited or refunded.
    pub backlog: u64,
    /// Ids of the deposits in the table for longer than `stuck_after_ms`.
    pub stuck: Vec<String>,
    /// The threshold `stuck` was computed with.
    pub stuck_after_ms: u64,
    /// Whether the client holds a session that has not expired.
    pub session_valid: bool,
    /// Whether the watcher is running.
    pub watching: bool,
    /// Whether the client has been initialized and not closed.
    pub ready: bool,
    /// True when ready, the last poll (if watching) succeeded and nothing is stuck.
    pub healthy: bool,
}

/// The per-service record of a client, updated as calls end.
#[derive(Debug, Default)]
pub(crate) struct HealthTracker {
    services: Mutex<BTreeMap<&'static str, ServiceHealth>>,
}

impl HealthTracker {
    /// A call to `service` ended: `Ok` or with this error message.
    pub(crate) fn record(&self, service: &'static str, outcome: Result<(), &str>) {
        let now = super::now_ms();
        let mut services = self.services.lock().unwrap_or_else(|e| e.into_inner());
        let entry = services.entry(service).or_default();
        match outcome {
            Ok(()) => entry.last_ok_ms = Some(now),
            Err(message) => {
                entry.last_error_ms = Some(now);
                entry.last_error = Some(message.to_owned());
            }
        }
    }

    /// The services as recorded so far.
    pub(crate) fn services(&self) -> BTreeMap<String, ServiceHealth> {
        let services = self.services.lock().unwrap_or_else(|e| e.into_inner());
        services.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    }
}

/// A live client, as the process's backlog gauges see it.
pub(crate) trait BacklogSource: Send + Sync {
    /// Deposits in its table, and how many have been there longer than `stuck_after_ms`.
    fn backlog(&self, now_ms: u64, stuck_after_ms: u64) -> (u64, u64);
}

static SOURCES: Mutex<Vec<Weak<dyn BacklogSource>>> = Mutex::new(Vec::new());

/// Counts `source` in the process's backlog gauges while it lives.
pub(crate) fn register_source(source: Weak<dyn BacklogSource>) {
    let mut sources = SOURCES.lock().unwrap_or_else(|e| e.into_inner());
    // Dropped clients leave when the list would grow, not at every registration: starting
    // 100,000 clients must not scan the list 100,000 times.
    if sources.len() == sources.capacity() {
        sources.retain(|s| s.strong_count() > 0);
    }
    sources.push(source);
}

/// The backlog and stuck deposits of every live client.
pub(super) fn backlog_of_sources(stuck_after_ms: u64) -> (u64, u64) {
    let live: Vec<Arc<dyn BacklogSource>> = {
        let mut sources = SOURCES.lock().unwrap_or_else(|e| e.into_inner());
        sources.retain(|s| s.strong_count() > 0);
        sources.iter().filter_map(Weak::upgrade).collect()
    };
    let now = super::now_ms();
    live.iter().fold((0, 0), |(backlog, stuck), source| {
        let (b, s) = source.backlog(now, stuck_after_ms);
        (backlog + b, stuck + s)
    })
}
