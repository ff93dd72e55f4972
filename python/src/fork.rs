//! Objects inherited through `fork()`.
//!
//! A forked child has only the thread that called `fork()`: the threads of the parent's clients
//! and devnets (the tokio runtime, event threads, servers, workers) do not exist there, their
//! locks may be held forever, and their sockets and database are shared with the parent. Each
//! pyclass that owns such state records the process that created it ([`Origin`]) and checks it
//! before touching that state: in another process every method raises `InternalError` (the kind
//! of the core's own check, `Runtime::check_process`) saying so, at once, instead of hanging,
//! and closing or dropping the object there leaks it instead of stopping the parent's threads.

use depositkit_core::{Error, ErrorKind};
use pyo3::prelude::*;

use crate::errors::to_py_err;

/// The process that created an object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin {
    pid: u32,
}

impl Origin {
    /// The current process.
    pub(crate) fn here() -> Self {
        Origin { pid: std::process::id() }
    }

    /// Whether this is still the process that created the object.
    pub(crate) fn is_here(self) -> bool {
        self.pid == std::process::id()
    }

    /// The process that created the object.
    pub(crate) fn pid(self) -> u32 {
        self.pid
    }

    /// `InternalError` when the current process is not the one that created the `class` object
    /// (a forked child).
    pub(crate) fn check(self, py: Python<'_>, class: &str) -> PyResult<()> {
        if self.is_here() {
            return Ok(());
        }
        Err(to_py_err(py, self.error(class)))
    }

    fn error(self, class: &str) -> Error {
        Error::new(
            ErrorKind::Internal,
            format!(
                "this {class} was created in process {} and cannot be used in this forked \
                 child (process {}): its threads and connections stayed in the parent; create a \
                 new {class} in the child",
                self.pid,
                std::process::id()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_here_until_the_process_changes() {
        assert!(Origin::here().is_here());
        let elsewhere = Origin { pid: std::process::id().wrapping_add(1) };
        assert!(!elsewhere.is_here());
        let err = elsewhere.error("Devnet");
        assert_eq!(err.kind(), ErrorKind::Internal);
        assert!(
            err.message()
                .starts_with(&format!("this Devnet was created in process {}", elsewhere.pid()))
        );
        assert!(err.message().ends_with("create a new Devnet in the child"), "{}", err.message());
    }
}
