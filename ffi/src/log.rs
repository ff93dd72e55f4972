//! Logs to a C callback: `depositkit_set_log_callback`.

use std::ffi::{CString, c_char, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use depositkit_core::observe::forward::{self, LogRecord, LogSink};

use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;

/// Errors: a failed operation or a deposit that cannot move.
pub const DEPOSITKIT_LOG_LEVEL_ERROR: u32 = 1;
/// Warnings: retries, failed polls, events dropped.
pub const DEPOSITKIT_LOG_LEVEL_WARN: u32 = 2;
/// A deposit's state changes, detections.
pub const DEPOSITKIT_LOG_LEVEL_INFO: u32 = 3;
/// Polls and HTTP requests.
pub const DEPOSITKIT_LOG_LEVEL_DEBUG: u32 = 4;
/// Everything, events queued included.
pub const DEPOSITKIT_LOG_LEVEL_TRACE: u32 = 5;

/// A log callback: `level` is a `DEPOSITKIT_LOG_LEVEL_*`, `target` the logger
/// (`"depositkit.deposit.records"`), `message` the record's text and `fields_json` its
/// structured fields as one JSON object (`{"deposit_id":"...","chain":8453,"from":"queued",
/// "to":"sweeping","owner":"0x..."}`); the three strings are NUL-terminated, UTF-8 and valid only
/// during the call. It runs on whatever thread logs (a runtime worker, a blocking-pool
/// thread, the caller's thread), possibly on several at once, sometimes while the library holds
/// a client's lock: it must be thread-safe, should return quickly (copy the record, hand it to
/// the host's logger) and must not call any `depositkit_*` function. No field ever holds a key,
/// a seed, a JWT, an API key or a credential.
#[allow(non_camel_case_types)]
pub type depositkit_log_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        level: u32,
        target: *const c_char,
        message: *const c_char,
        fields_json: *const c_char,
    ),
>;

struct Target {
    callback: unsafe extern "C" fn(*mut c_void, u32, *const c_char, *const c_char, *const c_char),
    user_data: *mut c_void,
}

// SAFETY: the host promised (see `depositkit_set_log_callback`) that the callback and its
// user_data may be used from any thread.
unsafe impl Send for Target {}
// SAFETY: as above.
unsafe impl Sync for Target {}

struct CSink {
    min_level: AtomicU32,
    target: RwLock<Option<Target>>,
}

impl LogSink for CSink {
    fn enabled(&self, level: tracing::Level, _target: &str) -> bool {
        forward::level_number(level) <= self.min_level.load(Ordering::Relaxed)
    }

    fn record(&self, record: &LogRecord<'_>) {
        let guard = self.target.read().unwrap_or_else(|e| e.into_inner());
        let Some(target) = guard.as_ref() else { return };
        let clean = |s: String| CString::new(s.replace('\0', " ")).unwrap_or_default();
        let logger = clean(forward::logger_name(record.target));
        let message = clean(record.message.clone());
        let fields = clean(serde_json::Value::Object(record.fields.clone()).to_string());
        // SAFETY: the host's contract for the callback; the strings live until it returns.
        unsafe {
            (target.callback)(
                target.user_data,
                forward::level_number(record.level),
                logger.as_ptr(),
                message.as_ptr(),
                fields.as_ptr(),
            )
        };
    }
}

static SINK: OnceLock<Result<Arc<CSink>, String>> = OnceLock::new();

/// Sends the library's log records of `min_level` and more severe (a
/// `DEPOSITKIT_LOG_LEVEL_*`; 0 turns logging off) to `callback`, replacing any earlier one;
/// a NULL `callback` turns logging off. With logging off a record costs one atomic load.
///
/// `callback` runs on whatever thread logs (see `depositkit_log_callback`) and gets `user_data`
/// as it was passed; the library never frees `user_data`. The callback in place when this
/// returns is the only one called afterwards (a record being delivered to the previous one may
/// still finish).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `min_level` is
/// above `DEPOSITKIT_LOG_LEVEL_TRACE`; `DEPOSITKIT_STATUS_CONFIGURATION` when the process
/// already has a Rust `tracing` subscriber of its own. Thread-safe.
///
/// # Safety
/// `callback`, when not NULL, must be safe to call from any thread with `user_data` until it
/// is replaced or logging is turned off.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_set_log_callback(
    min_level: u32,
    callback: depositkit_log_callback,
    user_data: *mut c_void,
) -> depositkit_status {
    boundary::status(|| -> FfiResult<()> {
        if min_level > DEPOSITKIT_LOG_LEVEL_TRACE {
            return Err(FfiError::new(
                depositkit_status::InvalidArgument,
                format!("invalid log level {min_level}: expected 0 (off) to 5 (trace)"),
            ));
        }
        let sink = SINK
            .get_or_init(|| {
                let sink =
                    Arc::new(CSink { min_level: AtomicU32::new(0), target: RwLock::new(None) });
                forward::install(Arc::clone(&sink)).map(|()| sink).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|message| FfiError::new(depositkit_status::Configuration, message.clone()))?;
        let mut target = sink.target.write().unwrap_or_else(|e| e.into_inner());
        *target = callback.map(|callback| Target { callback, user_data });
        let level = if target.is_some() { min_level } else { 0 };
        sink.min_level.store(level, Ordering::Relaxed);
        Ok(())
    })
}
