//! The client status as a C enum, and its name.

use std::ffi::{CStr, c_char};

use depositkit_core::deposit::ClientStatus;

use crate::boundary::{self};

/// The status of a deposit client (spec section 3 `ClientStatus`).
///
/// `IDLE` (constructed, or closed) -> `INITIALIZING` -> `READY` or `ERROR` (a failed
/// initialization may be retried). Once initialized the status follows what runs: `SWEEPING`
/// while any deposit is queued, being swept or refunded, or waiting for a retry (of a sweep or
/// a refund), or a recovery is queued or running; else `WATCHING` while the watcher runs; else
/// `READY`. Every change is also reported as a `"status:change"` event.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum depositkit_client_status {
    /// Constructed and not initialized yet, or closed.
    Idle = 0,
    /// `depositkit_deposit_client_initialize` is running.
    Initializing = 1,
    /// Initialized; neither watching nor sweeping.
    Ready = 2,
    /// The watcher is polling.
    Watching = 3,
    /// At least one deposit is being swept or refunded or waits for a retry, or a recovery
    /// runs.
    Sweeping = 4,
    /// The last initialization failed; it may be tried again.
    Error = 5,
}

impl From<ClientStatus> for depositkit_client_status {
    /// Exhaustive on purpose: a status added to the core does not compile here until it gets
    /// its constant.
    fn from(status: ClientStatus) -> Self {
        match status {
            ClientStatus::Idle => depositkit_client_status::Idle,
            ClientStatus::Initializing => depositkit_client_status::Initializing,
            ClientStatus::Ready => depositkit_client_status::Ready,
            ClientStatus::Watching => depositkit_client_status::Watching,
            ClientStatus::Sweeping => depositkit_client_status::Sweeping,
            ClientStatus::Error => depositkit_client_status::Error,
        }
    }
}

/// Every client status, in numeric order.
pub(super) const CLIENT_STATUSES: [(depositkit_client_status, &CStr); 6] = [
    (depositkit_client_status::Idle, c"idle"),
    (depositkit_client_status::Initializing, c"initializing"),
    (depositkit_client_status::Ready, c"ready"),
    (depositkit_client_status::Watching, c"watching"),
    (depositkit_client_status::Sweeping, c"sweeping"),
    (depositkit_client_status::Error, c"error"),
];

/// The spec's name of a client status as a static NUL-terminated string: `"idle"`,
/// `"initializing"`, `"ready"`, `"watching"`, `"sweeping"` or `"error"` (the spelling of the
/// `"status:change"` event's payload).
///
/// Takes a plain `uint32_t` so that any number is safe to pass: a number that is not a
/// `depositkit_client_status` gives `"unknown"`. Never NULL; do not free the result. Does not
/// change the last error.
#[unsafe(no_mangle)]
pub extern "C" fn depositkit_client_status_str(status: u32) -> *const c_char {
    const UNKNOWN: &CStr = c"unknown";
    boundary::value(UNKNOWN.as_ptr(), || {
        CLIENT_STATUSES
            .iter()
            .find(|(s, _)| *s as u32 == status)
            .map_or(UNKNOWN, |(_, name)| name)
            .as_ptr()
    })
}
