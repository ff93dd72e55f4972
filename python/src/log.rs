//! The logging bridge: the core's `tracing` records reach Python's `logging` under
//! `depositkit.*` loggers (`depositkit_core::deposit::records` → `depositkit.deposit.records`).
//!
//! The check whether a record is wanted never calls Python: the loggers' effective levels are
//! cached (re-read once a second, and at once by `refresh_log_levels()`), so a level that is
//! off costs an atomic load and a lookup. Wanted records are never handed to Python on the
//! thread that logged them — it may hold a lock of the client that a Python thread holding the
//! GIL is waiting for — but queued (bounded; overflow is dropped) to one forwarding thread,
//! `depositkit-log`, that attaches to the interpreter to call `Logger.log`, with the record's
//! fields as attributes (`extra`) and also appended to the message as `key=value`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use depositkit_core::observe::forward::{self, LogRecord, LogSink};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use tracing::Level;

/// Python's level for a tracing level (TRACE is 5, named "TRACE" in `logging`).
fn py_level(level: Level) -> u8 {
    match level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG => 10,
        Level::TRACE => 5,
    }
}

/// How long cached levels are trusted.
const REFRESH_EVERY: Duration = Duration::from_secs(1);
/// Records waiting for the forwarding thread at most.
const QUEUE: usize = 10_000;

/// A record on its way to Python.
struct Pending {
    level: u8,
    logger: String,
    message: String,
    fields: serde_json::Map<String, Value>,
}

struct PySink {
    /// The lowest (most verbose) effective level of any depositkit logger seen.
    lowest: AtomicU8,
    /// Effective level by tracing target.
    levels: RwLock<HashMap<String, u8>>,
    /// Milliseconds since `epoch` after which the cache is re-read.
    stale_at: AtomicU64,
    epoch: Instant,
    queue: SyncSender<Pending>,
    /// Records queued and not yet handed to Python, for `flush`.
    pending: Mutex<u64>,
    drained: Condvar,
}

impl PySink {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl LogSink for PySink {
    fn enabled(&self, level: Level, target: &str) -> bool {
        let level = py_level(level);
        if self.now_ms() >= self.stale_at.load(Ordering::Relaxed) {
            return true; // the forwarding side re-reads the levels and decides
        }
        if level < self.lowest.load(Ordering::Relaxed) {
            return false;
        }
        let levels = self.levels.read().unwrap_or_else(|e| e.into_inner());
        levels.get(target).is_none_or(|&effective| level >= effective)
    }

    fn record(&self, record: &LogRecord<'_>) {
        let pending = Pending {
            level: py_level(record.level),
            logger: record.target.to_owned(),
            message: record.message.clone(),
            fields: record.fields.clone(),
        };
        *self.pending.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
            self.queue.try_send(pending)
        {
            self.done();
        }
    }
}

impl PySink {
    fn done(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        *pending = pending.saturating_sub(1);
        if *pending == 0 {
            self.drained.notify_all();
        }
    }

    /// Re-reads the effective level of every target seen (and of `depositkit`).
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let logging = py.import("logging")?;
        let effective = |target: &str| -> PyResult<u8> {
            let logger = logging.call_method1("getLogger", (forward::logger_name(target),))?;
            let level: i64 = logger.call_method0("getEffectiveLevel")?.extract()?;
            let disabled: bool = logger.getattr("disabled")?.extract()?;
            Ok(if disabled { u8::MAX } else { u8::try_from(level.max(0)).unwrap_or(u8::MAX) })
        };
        let mut lowest = effective("depositkit_core")?;
        // No lock is held while Python runs: a thread holding the GIL may be logging.
        let targets: Vec<String> =
            self.levels.read().unwrap_or_else(|e| e.into_inner()).keys().cloned().collect();
        let mut fresh = HashMap::with_capacity(targets.len());
        for target in targets {
            let level = effective(&target)?;
            lowest = lowest.min(level);
            fresh.insert(target, level);
        }
        self.levels.write().unwrap_or_else(|e| e.into_inner()).extend(fresh);
        self.lowest.store(lowest, Ordering::Relaxed);
        self.stale_at.store(
            self.now_ms().saturating_add(REFRESH_EVERY.as_millis() as u64),
            Ordering::Relaxed,
        );
        Ok(())
    }

    /// Hands one record to `logging` (when its logger wants it).
    fn emit(&self, py: Python<'_>, record: Pending) -> PyResult<()> {
        let known =
            self.levels.read().unwrap_or_else(|e| e.into_inner()).contains_key(&record.logger);
        if !known {
            self.levels.write().unwrap_or_else(|e| e.into_inner()).insert(record.logger.clone(), 0);
            self.refresh(py)?;
        } else if self.now_ms() >= self.stale_at.load(Ordering::Relaxed) {
            self.refresh(py)?;
        }
        let logging = py.import("logging")?;
        let logger = logging.call_method1("getLogger", (forward::logger_name(&record.logger),))?;
        if !logger.call_method1("isEnabledFor", (record.level,))?.extract::<bool>()? {
            return Ok(());
        }
        let extra = PyDict::new(py);
        let fields = PyDict::new(py);
        let mut message = record.message;
        for (key, value) in &record.fields {
            let shown = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            message.push_str(&format!(" {key}={shown}"));
            let value = json_to_py(py, value)?;
            fields.set_item(key, &value)?;
            if !RESERVED.contains(&key.as_str()) {
                extra.set_item(key, value)?;
            }
        }
        extra.set_item("fields", fields)?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("extra", extra)?;
        logger.call_method("log", (record.level, message), Some(&kwargs))?;
        Ok(())
    }
}

/// `logging.LogRecord`'s own attributes, which `extra` may not set.
const RESERVED: &[&str] = &[
    "name",
    "msg",
    "args",
    "levelname",
    "levelno",
    "pathname",
    "filename",
    "module",
    "exc_info",
    "exc_text",
    "stack_info",
    "lineno",
    "funcName",
    "created",
    "msecs",
    "relativeCreated",
    "thread",
    "threadName",
    "processName",
    "process",
    "message",
    "asctime",
    "taskName",
    "fields",
];

fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.into_pyobject(py)?.into_any(),
            (_, Some(i), _) => i.into_pyobject(py)?.into_any(),
            (_, _, Some(f)) => f.into_pyobject(py)?.into_any(),
            _ => n.to_string().into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        other => other.to_string().into_pyobject(py)?.into_any(),
    })
}

fn forward_loop(sink: Arc<PySink>, queue: Receiver<Pending>) {
    while let Ok(record) = queue.recv() {
        // During finalization nothing may attach: the record is dropped.
        let attached = Python::try_attach(|py| {
            if let Err(err) = sink.emit(py, record) {
                // Never a loop of log records about log records: the error is shown once.
                err.write_unraisable(py, None);
            }
        });
        sink.done();
        if attached.is_none() {
            return;
        }
    }
}

static SINK: OnceLock<Option<Arc<PySink>>> = OnceLock::new();

/// Installs the bridge (once; at import). A process whose Rust side already has a `tracing`
/// subscriber keeps it, and `logging` gets nothing.
pub(crate) fn install() {
    SINK.get_or_init(|| {
        let (tx, rx) = sync_channel(QUEUE);
        let sink = Arc::new(PySink {
            lowest: AtomicU8::new(0),
            levels: RwLock::new(HashMap::new()),
            stale_at: AtomicU64::new(0),
            epoch: Instant::now(),
            queue: tx,
            pending: Mutex::new(0),
            drained: Condvar::new(),
        });
        let forwarder = Arc::clone(&sink);
        std::thread::Builder::new()
            .name("depositkit-log".into())
            .spawn(move || forward_loop(forwarder, rx))
            .ok()?;
        forward::install(Arc::clone(&sink)).ok()?;
        Some(sink)
    });
}

/// Re-reads the `depositkit.*` loggers' levels now (they are otherwise re-read once a second):
/// call it after `setLevel` when the next records must follow the new level at once.
#[pyfunction]
fn refresh_log_levels(py: Python<'_>) -> PyResult<()> {
    match SINK.get().and_then(Option::as_ref) {
        Some(sink) => sink.refresh(py),
        None => Ok(()),
    }
}

/// Waits (at most `timeout` seconds) until every record logged so far has been handed to
/// `logging`; whether it got there.
#[pyfunction]
#[pyo3(signature = (timeout = 5.0))]
fn flush_logs(py: Python<'_>, timeout: f64) -> bool {
    let Some(sink) = SINK.get().and_then(Option::as_ref) else { return true };
    let sink = Arc::clone(sink);
    py.detach(move || {
        let deadline = Instant::now() + Duration::from_secs_f64(timeout.clamp(0.0, 3600.0));
        let mut pending = sink.pending.lock().unwrap_or_else(|e| e.into_inner());
        while *pending > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            pending = sink.drained.wait_timeout(pending, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        true
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install();
    m.add_function(wrap_pyfunction!(refresh_log_levels, m)?)?;
    m.add_function(wrap_pyfunction!(flush_logs, m)?)?;
    m.add_function(wrap_pyfunction!(metrics_text, m)?)?;
    Ok(())
}

/// Every metric of the process in the Prometheus text format (see the README's "Operating
/// it"), fleet mode's (`depositkit_fleet_*`) after the clients'.
#[pyfunction]
fn metrics_text() -> String {
    depositkit_fleet::metrics_text()
}
