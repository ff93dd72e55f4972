//! Counters of what the services served, for tests and benchmarks (`GET /devnet/stats`):
//! how many balance requests arrived and how many accounts they answered, which shows whether
//! clients batch their polls.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// The counters of one server (since it started; in memory only).
#[derive(Debug, Default)]
pub struct ServiceStats {
    balance_requests: AtomicU64,
    balance_accounts: AtomicU64,
}

/// A reading of [`ServiceStats`], the body of `GET /devnet/stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatsSnapshot {
    /// `POST /ua/v1/balances` requests received, whatever their answer (injected faults
    /// excepted: they answer before the service).
    pub balance_requests: u64,
    /// Account ids answered with 200 by those requests.
    pub balance_accounts: u64,
}

impl ServiceStats {
    /// Counts a balances request.
    pub fn balance_request(&self) {
        self.balance_requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `n` accounts answered.
    pub fn balance_accounts(&self, n: usize) {
        self.balance_accounts.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            balance_requests: self.balance_requests.load(Ordering::Relaxed),
            balance_accounts: self.balance_accounts.load(Ordering::Relaxed),
        }
    }
}
