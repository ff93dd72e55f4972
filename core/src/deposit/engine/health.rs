//! What the engine knows of its own health: the table's backlog and stuck deposits, the
//! session, the last calls to each service (kept by the poll and the session's users).

use super::Inner;
use crate::observe::{BacklogSource, Health};

impl Inner {
    /// The span of the client's tasks (the watcher, the executor): their records carry the
    /// owner.
    pub(crate) fn span(&self) -> tracing::Span {
        tracing::info_span!("deposit_client", owner = self.session.owner())
    }

    /// The client's health, deposits counting as stuck after `stuck_after_ms` in the table.
    pub(crate) fn health(&self, stuck_after_ms: u64) -> Health {
        let now = crate::observe::now_ms();
        let (backlog, stuck, watching, ready) = {
            let state = self.state();
            let mut stuck: Vec<(u64, String)> = state
                .deposits
                .values()
                .filter(|r| now.saturating_sub(r.deposit.detected_at) >= stuck_after_ms)
                .map(|r| (r.deposit.detected_at, r.deposit.id.clone()))
                .collect();
            stuck.sort();
            let ready = state.account.is_some() && !self.is_closed();
            (
                state.deposits.len() as u64,
                stuck.into_iter().map(|(_, id)| id).collect::<Vec<_>>(),
                state.status.watching(),
                ready,
            )
        };
        let services = self.health.services();
        let last_poll_ms = services.get("account").and_then(|s| s.last_ok_ms);
        let poll_failing = services
            .get("account")
            .and_then(|s| s.last_error_ms.map(|at| at > s.last_ok_ms.unwrap_or(0)))
            .unwrap_or(false);
        // Particle's backend has no session: its credentials do not expire.
        let session_valid = !self.speaks_protocol() || self.session.is_valid_now();
        Health {
            healthy: ready && stuck.is_empty() && !(watching && poll_failing),
            services,
            last_poll_ms,
            backlog,
            stuck,
            stuck_after_ms,
            session_valid,
            watching,
            ready,
        }
    }
}

impl BacklogSource for Inner {
    fn backlog(&self, now_ms: u64, stuck_after_ms: u64) -> (u64, u64) {
        let state = self.state();
        let stuck = state
            .deposits
            .values()
            .filter(|r| now_ms.saturating_sub(r.deposit.detected_at) >= stuck_after_ms)
            .count();
        (state.deposits.len() as u64, stuck as u64)
    }
}
