//! Fault injection for tests: make the next user-rpc requests fail with an HTTP status (and a
//! `Retry-After`), or answer late. Driven by `POST`/`DELETE /devnet/faults` when the server was
//! started with fault injection, or in process by `RunningDevnet::inject_fault`.

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Longest delay that can be injected, so a mistaken value cannot hang a test run.
pub const MAX_DELAY_MS: u64 = 60_000;

/// One fault, as posted to `/devnet/faults`: `{"status": 429, "count": 2, "retryAfter": 0}`
/// or `{"delayMs": 1500, "count": 1}` (both kinds may be combined).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fault {
    /// HTTP status (400–599) to answer with instead of processing the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Seconds for the `Retry-After` header sent with `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// Milliseconds to wait before answering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// How many of the next requests the fault applies to (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

impl Fault {
    /// The next `count` requests get HTTP `status`.
    pub fn status(status: u16, count: u32) -> Self {
        Fault { status: Some(status), count: Some(count), ..Fault::default() }
    }

    /// The next `count` requests are answered after `delay`.
    pub fn delay(delay: Duration, count: u32) -> Self {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        Fault { delay_ms: Some(ms), count: Some(count), ..Fault::default() }
    }

    /// The same fault with a `Retry-After: seconds` header.
    #[must_use]
    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    fn check(&self) -> Result<u32, String> {
        if self.status.is_none() && self.delay_ms.is_none() {
            return Err("a fault needs \"status\" or \"delayMs\"".into());
        }
        if let Some(status) = self.status
            && !(400..=599).contains(&status)
        {
            return Err(format!("\"status\" must be an HTTP error status 400..=599, got {status}"));
        }
        if self.retry_after.is_some() && self.status.is_none() {
            return Err("\"retryAfter\" needs \"status\"".into());
        }
        if let Some(ms) = self.delay_ms
            && ms > MAX_DELAY_MS
        {
            return Err(format!("\"delayMs\" must be at most {MAX_DELAY_MS}, got {ms}"));
        }
        match self.count.unwrap_or(1) {
            0 => Err("\"count\" must be at least 1".into()),
            count => Ok(count),
        }
    }
}

/// What to do to the request now being served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Planned {
    /// Wait this long first.
    pub delay: Option<Duration>,
    /// Then answer with this status (and `Retry-After` seconds) instead of processing.
    pub status: Option<(u16, Option<u64>)>,
}

/// The pending faults of one server.
#[derive(Debug, Default)]
pub struct Faults {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    status: Option<(u16, Option<u64>, u32)>,
    delay: Option<(u64, u32)>,
}

impl Faults {
    /// Arms `fault`, replacing a pending fault of the same kind.
    ///
    /// # Errors
    /// A message saying what is wrong with `fault`.
    pub fn inject(&self, fault: &Fault) -> Result<(), String> {
        let count = fault.check()?;
        let mut state = self.lock();
        if let Some(status) = fault.status {
            state.status = Some((status, fault.retry_after, count));
        }
        if let Some(ms) = fault.delay_ms {
            state.delay = Some((ms, count));
        }
        Ok(())
    }

    /// Disarms every pending fault.
    pub fn clear(&self) {
        *self.lock() = State::default();
    }

    /// What applies to the request now being served; uses up one count of each pending fault.
    pub fn take(&self) -> Planned {
        let mut state = self.lock();
        let mut planned = Planned::default();
        if let Some((status, retry_after, left)) = state.status {
            planned.status = Some((status, retry_after));
            state.status = (left > 1).then_some((status, retry_after, left - 1));
        }
        if let Some((ms, left)) = state.delay {
            planned.delay = Some(Duration::from_millis(ms));
            state.delay = (left > 1).then_some((ms, left - 1));
        }
        planned
    }

    /// The pending faults, as `GET /devnet/faults` shows them.
    pub fn pending(&self) -> Vec<Fault> {
        let state = self.lock();
        let mut out = Vec::new();
        if let Some((status, retry_after, count)) = state.status {
            out.push(Fault {
                status: Some(status),
                retry_after,
                count: Some(count),
                delay_ms: None,
            });
        }
        if let Some((ms, count)) = state.delay {
            out.push(Fault { delay_ms: Some(ms), count: Some(count), ..Fault::default() });
        }
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_count_down() {
        let faults = Faults::default();
        faults.inject(&Fault::status(429, 2).with_retry_after(3)).unwrap();
        faults.inject(&Fault::delay(Duration::from_millis(5), 1)).unwrap();
        assert_eq!(
            faults.take(),
            Planned { delay: Some(Duration::from_millis(5)), status: Some((429, Some(3))) }
        );
        assert_eq!(faults.take(), Planned { delay: None, status: Some((429, Some(3))) });
        assert_eq!(faults.take(), Planned::default());
        faults.inject(&Fault::status(503, 5)).unwrap();
        assert_eq!(faults.pending().len(), 1);
        faults.clear();
        assert!(faults.pending().is_empty());
    }

    #[test]
    fn bad_faults_are_refused() {
        let faults = Faults::default();
        assert!(faults.inject(&Fault::default()).unwrap_err().contains("needs"));
        assert!(faults.inject(&Fault::status(200, 1)).unwrap_err().contains("400..=599"));
        assert!(faults.inject(&Fault::status(500, 0)).unwrap_err().contains("count"));
        let long = Fault::delay(Duration::from_secs(3600), 1);
        assert!(faults.inject(&long).unwrap_err().contains("delayMs"));
        let parsed: Result<Fault, _> = serde_json::from_str(r#"{"status": 429, "cnt": 1}"#);
        assert!(parsed.is_err());
    }
}
