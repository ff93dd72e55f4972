//! The one boundary every export goes through.
//!
//! An export's body runs inside [`status`] (for functions returning `depositkit_status`) or
//! [`value`] (for functions returning a plain value: `bool`, `size_t`, a pointer, an enum). Both
//! run the body under `catch_unwind`, so no panic unwinds into C; a panic becomes
//! `DEPOSITKIT_STATUS_PANIC` (or the function's documented default) with a last-error message.
//! Formatting that message and dropping the panic payload run under their own guards (as
//! uniffi's `rustcalls.rs` does), because both run arbitrary code that may panic again.
//!
//! NULL checks happen inside the body, through [`out`] here and the string readers in
//! [`crate::strings`], so their failures go through the same path as every other error.
//!
//! `status` keeps the rule of the header: the last error is set on every failure and cleared
//! on success. `value` never touches the last error except to record a caught panic.
//!
//! Bodies are wrapped in `AssertUnwindSafe`: after a panic no state of the library is left
//! half-updated, because a body only reads its arguments, calls the core, and writes its
//! outputs last. The state that outlives a call is the thread-local last error, which the
//! boundary itself overwrites, and a handle's core object (the user-lookup client), which
//! keeps only a connection pool and a request counter that stay consistent when a call
//! unwinds.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

use depositkit_core::RpcErrorObject;

use crate::status::{clear_last_error, depositkit_status, set_last_error, set_last_error_with_rpc};

/// A failure on its way to C: the status to return, and the last-error message and JSON-RPC
/// error object (if a service sent one) to record.
#[derive(Debug)]
pub(crate) struct FfiError {
    pub(crate) status: depositkit_status,
    pub(crate) message: String,
    pub(crate) rpc: Option<Box<RpcErrorObject>>,
}

impl FfiError {
    pub(crate) fn new(status: depositkit_status, message: impl Into<String>) -> Self {
        FfiError { status, message: message.into(), rpc: None }
    }

    /// `DEPOSITKIT_STATUS_NULL_ARGUMENT` naming the parameter.
    pub(crate) fn null_argument(param: &str) -> Self {
        FfiError::new(depositkit_status::NullArgument, format!("{param} must not be NULL"))
    }
}

impl From<depositkit_core::Error> for FfiError {
    fn from(err: depositkit_core::Error) -> Self {
        FfiError {
            status: err.kind().into(),
            message: err.message().to_owned(),
            rpc: err.rpc_error().cloned().map(Box::new),
        }
    }
}

pub(crate) type FfiResult<T> = Result<T, FfiError>;

/// Runs a status-returning export's body: `Ok` clears the last error and returns
/// `DEPOSITKIT_STATUS_OK`; an error records its message (and JSON-RPC error object, if any) and
/// returns its status; a panic records its message and returns `DEPOSITKIT_STATUS_PANIC`.
pub(crate) fn status(body: impl FnOnce() -> FfiResult<()>) -> depositkit_status {
    match catch(body) {
        Some(Ok(())) => {
            clear_last_error();
            depositkit_status::Ok
        }
        Some(Err(err)) => {
            set_last_error_with_rpc(&err.message, err.rpc);
            err.status
        }
        None => depositkit_status::Panic,
    }
}

/// Runs a value-returning export's body and returns its value, or `default` (recording the
/// panic's message as the last error) if it panicked. The last error is otherwise untouched.
pub(crate) fn value<T>(default: T, body: impl FnOnce() -> T) -> T {
    catch(body).unwrap_or(default)
}

/// Runs `body`, catching a panic: `None` means it panicked and the last error now says so.
fn catch<T>(body: impl FnOnce() -> T) -> Option<T> {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => Some(result),
        Err(payload) => {
            record_panic(payload);
            None
        }
    }
}

/// The last-error message when even describing a panic failed.
const PANIC_FALLBACK: &str =
    "depositkit panicked, and describing the panic failed too; this is a bug, please report it";

/// Records a caught panic as the last error, then disposes of the payload. Never unwinds.
fn record_panic(payload: Box<dyn Any + Send>) {
    let recorded = panic::catch_unwind(AssertUnwindSafe(|| {
        let detail = if let Some(s) = payload.downcast_ref::<&'static str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a panic payload that is not a string".to_owned()
        };
        set_last_error(&format!("depositkit panicked: {detail}; this is a bug, please report it"));
    }));
    if let Err(second) = recorded {
        forget_payload(second);
        // Only a static string is left to try; ignore a failure of that too.
        let _ = panic::catch_unwind(|| set_last_error(PANIC_FALLBACK));
    }
    // Dropping the payload runs its destructor, which may panic as well.
    if let Err(second) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        forget_payload(second);
    }
}

/// Leaks a payload whose handling panicked: dropping it could panic again, leaking is safe.
fn forget_payload(payload: Box<dyn Any + Send>) {
    std::mem::forget(payload);
}

/// An output parameter known not to be NULL. Write it last, once the call has succeeded.
pub(crate) struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    /// Stores `value` into the caller's variable, without reading or dropping what was there.
    pub(crate) fn write(self, value: T) {
        // SAFETY: `out` checked the pointer for NULL and its caller promised that it is valid
        // for writes and aligned (the export's `# Safety` contract).
        unsafe { self.0.as_ptr().write(value) }
    }
}

/// Checks an output pointer: `DEPOSITKIT_STATUS_NULL_ARGUMENT` naming `param` when NULL.
///
/// # Safety
/// `ptr` must be NULL or valid for a write of `T` and aligned, until the call returns.
pub(crate) unsafe fn out<T>(ptr: *mut T, param: &str) -> FfiResult<Out<T>> {
    NonNull::new(ptr).map(Out).ok_or_else(|| FfiError::null_argument(param))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::with_last_error;

    fn last_error() -> String {
        with_last_error(str::to_owned)
    }

    #[test]
    fn success_clears_and_failure_sets_the_last_error() {
        let s = status(|| Err(FfiError::new(depositkit_status::NotFound, "no such thing 7")));
        assert_eq!(s, depositkit_status::NotFound);
        assert_eq!(last_error(), "no such thing 7");
        assert_eq!(status(|| Ok(())), depositkit_status::Ok);
        assert_eq!(last_error(), "");
    }

    #[test]
    fn core_errors_keep_kind_and_message() {
        let s = status(|| Err(depositkit_core::Error::configuration("bad chain 7").into()));
        assert_eq!(s, depositkit_status::Configuration);
        assert_eq!(last_error(), "bad chain 7");
    }

    #[test]
    fn core_errors_keep_their_json_rpc_error_object() {
        use crate::status::with_last_error_rpc;
        let object =
            RpcErrorObject { code: -32010, message: "user x not found".into(), data: None };
        let err = depositkit_core::Error::rpc(
            depositkit_core::ErrorKind::NotFound,
            "getUserInfo",
            object.clone(),
        );
        assert_eq!(status(|| Err(err.into())), depositkit_status::NotFound);
        assert_eq!(last_error(), "getUserInfo failed: JSON-RPC error -32010: user x not found");
        with_last_error_rpc(|rpc| assert_eq!(rpc, Some(&object)));
        // A panic replaces the whole record, object included.
        let _ = status(|| panic!("later"));
        with_last_error_rpc(|rpc| assert_eq!(rpc, None));
    }

    #[test]
    fn a_panic_becomes_status_panic_with_its_message() {
        let s = status(|| panic!("boom {}", 42));
        assert_eq!(s, depositkit_status::Panic);
        let msg = last_error();
        assert!(msg.contains("depositkit panicked: boom 42"), "{msg}");
        // The boundary leaves the thread usable.
        assert_eq!(status(|| Ok(())), depositkit_status::Ok);
        assert_eq!(last_error(), "");
    }

    #[test]
    fn a_static_str_panic_keeps_its_message() {
        let s = status(|| std::panic::panic_any("static boom"));
        assert_eq!(s, depositkit_status::Panic);
        assert!(last_error().contains("static boom"));
    }

    #[test]
    fn value_functions_return_their_default_on_panic() {
        status(|| Ok(()));
        assert!(!value(false, || -> bool { panic!("inside value") }));
        assert!(last_error().contains("inside value"));
        // A value function that succeeds leaves the last error alone.
        assert!(value(false, || true));
        assert!(last_error().contains("inside value"));
    }

    /// A payload whose destructor panics: disposing of it must not unwind out of the boundary.
    struct PanicsOnDrop;

    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("payload drop");
        }
    }

    #[test]
    fn a_payload_that_panics_when_dropped_is_contained() {
        let s = status(|| std::panic::panic_any(PanicsOnDrop));
        assert_eq!(s, depositkit_status::Panic);
        assert!(last_error().contains("not a string"), "{}", last_error());
    }

    #[test]
    fn out_rejects_null_naming_the_parameter() {
        let err = unsafe { out::<u8>(std::ptr::null_mut(), "out_decimals") }.err().unwrap();
        assert_eq!(err.status, depositkit_status::NullArgument);
        assert_eq!(err.message, "out_decimals must not be NULL");
        let mut x = 0u8;
        unsafe { out(&raw mut x, "out_x") }.unwrap().write(9);
        assert_eq!(x, 9);
    }
}
