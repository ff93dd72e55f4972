//! A client's health: what it last heard from each service, and the process's registry of live
//! clients that the backlog gauges are read from.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// the session —, `chain` — the chain watchers' endpoints, `docs/finality.md`):
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

/// A service a client calls, as [`Health::services`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    /// The account service: the balance polls.
    Account,
    /// The session service.
    Jwt,
    /// A chain watcher's endpoint.
    Chain,
}

impl Service {
    const ALL: [Service; 3] = [Service::Account, Service::Jwt, Service::Chain];

    /// The name `health()` reports it under.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Service::Account => "account",
            Service::Jwt => "jwt",
            Service::Chain => "chain",
        }
    }
}

/// The per-service record of a client, updated as calls end.
///
/// A success (every poll of every client) is one atomic store into the client's own memory;
/// only failures take the lock. A map behind a mutex cost two cache misses per poll (the lock
/// and the map's node), ~5% of the CPU of 10,000 polling clients.
#[derive(Debug, Default)]
pub(crate) struct HealthTracker {
    /// The last success per service, unix milliseconds; 0: none yet.
    last_ok_ms: [AtomicU64; Service::ALL.len()],
    /// The last failure per service: when and its message.
    last_error: Mutex<[Option<(u64, String)>; Service::ALL.len()]>,
}

impl HealthTracker {
    /// A call to `service` ended: `Ok` or with this error message.
    pub(crate) fn record(&self, service: Service, outcome: Result<(), &str>) {
        let now = super::now_ms().max(1);
        match outcome {
            Ok(()) => self.last_ok_ms[service as usize].store(now, Ordering::Relaxed),
            Err(message) => {
                let mut errors = self.last_error.lock().unwrap_or_else(|e| e.into_inner());
                errors[service as usize] = Some((now, message.to_owned()));
            }
        }
    }

    /// The services as recorded so far (those never called are absent).
    pub(crate) fn services(&self) -> BTreeMap<String, ServiceHealth> {
        let errors = self.last_error.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Service::ALL
            .into_iter()
            .zip(errors)
            .filter_map(|(service, error)| {
                let ok = self.last_ok_ms[service as usize].load(Ordering::Relaxed);
                let health = ServiceHealth {
                    last_ok_ms: (ok != 0).then_some(ok),
                    last_error_ms: error.as_ref().map(|(at, _)| *at),
                    last_error: error.map(|(_, message)| message),
                };
                (health != ServiceHealth::default()).then(|| (service.name().to_owned(), health))
            })
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_show_the_last_success_and_failure_of_those_called() {
        let tracker = HealthTracker::default();
        assert!(tracker.services().is_empty());

        tracker.record(Service::Account, Ok(()));
        tracker.record(Service::Jwt, Err("the JWT service answered 503"));
        let services = tracker.services();
        assert_eq!(services.keys().collect::<Vec<_>>(), ["account", "jwt"]);
        let account = &services["account"];
        assert!(account.last_ok_ms.is_some_and(|at| at > 0));
        assert_eq!((account.last_error_ms, account.last_error.as_deref()), (None, None));
        let jwt = &services["jwt"];
        assert_eq!(jwt.last_ok_ms, None);
        assert!(jwt.last_error_ms.is_some());
        assert_eq!(jwt.last_error.as_deref(), Some("the JWT service answered 503"));

        // A later failure keeps the last success; a later success keeps the last failure.
        tracker.record(Service::Account, Err("connection refused"));
        tracker.record(Service::Jwt, Ok(()));
        let services = tracker.services();
        assert_eq!(services["account"].last_ok_ms, account.last_ok_ms);
        assert_eq!(services["account"].last_error.as_deref(), Some("connection refused"));
        assert_eq!(services["jwt"].last_error.as_deref(), Some("the JWT service answered 503"));
        assert!(services["jwt"].last_ok_ms.is_some());
        assert!(!services.contains_key("chain"));
    }
}
