//! Awaitables for asyncio: Python futures that depositkit's own threads complete, so that an
//! event loop awaiting them never blocks and no thread is started per call.
//!
//! - [`Pending`] is an `asyncio.Future` created on the running loop (`loop.create_future()`;
//!   asyncio, anyio on asyncio, uvloop). A thread completes it with [`Pending::settle`] without
//!   ever touching the interpreter: the completion is queued for its loop and, when the queue was
//!   empty, one byte is written to the loop's wake-up pipe, which the loop watches
//!   (`loop.add_reader`, registered once per loop). The loop's thread then drains the whole queue
//!   ([`queue`]): results are converted to Python objects and set there. So a storm of answers
//!   wakes the loop once per batch, worker threads never wait for the GIL (no contention with
//!   the loop, no stall of the loop's thread), and none of them can be caught inside Python when
//!   the interpreter finalizes. A future already done (cancelled) gets nothing set: its answer is
//!   dropped there, attached.
//! - [`spawn`] / [`spawn_settled`] run a core future on the depositkit runtime
//!   ([`core::runtime::Runtime::shared`], one per process: a forked child gets a fresh one) and
//!   complete the awaitable with its outcome: no thread waits for it. Cancelling the awaitable
//!   drops the core future on the runtime. For the user-lookup calls a request not yet sent is
//!   then taken off the runtime's queue and one on the wire finishes with its answer dropped;
//!   the deposit client's calls are core [`Task`](core::runtime::Task)s, which decide what a
//!   drop stops (a sweep or refund already queued finishes in the background and is reported
//!   as an event; see `core/src/deposit/client/async_api.rs`).

use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};

use depositkit_core as core;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCFunction;

use crate::errors::to_py_err;

/// How a pending future is completed, on its loop's thread (attached). It must check whether the
/// future is already done (cancelled) before setting anything.
pub(crate) type Settle = Box<dyn FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<()> + Send>;

/// How a value becomes the future's result.
pub(crate) type Convert<T> = fn(Python<'_>, T) -> PyResult<Py<PyAny>>;

/// An `asyncio.Future` waiting for a depositkit thread, with its loop.
pub(crate) struct Pending {
    /// The loop's address: its wake-up pipe's key ([`queue`]). The future holds the loop, so
    /// the address stays the loop's while this is pending.
    key: usize,
    future: Py<PyAny>,
}

impl Pending {
    /// A new future on the running event loop, and the awaitable to hand to Python.
    ///
    /// # Errors
    /// `RuntimeError` (asyncio's) when no event loop runs in this thread.
    pub(crate) fn new(py: Python<'_>) -> PyResult<(Pending, Bound<'_, PyAny>)> {
        let event_loop = running_loop(py)?;
        let future = event_loop.call_method0(intern!(py, "create_future"))?;
        let key = queue::register(&event_loop)?;
        Ok((Pending { key, future: future.clone().unbind() }, future))
    }

    /// Completes the future from any thread: `settle` runs on the loop's thread.
    pub(crate) fn settle(self, settle: Settle) {
        queue::push(self, settle);
    }
}

/// Sets `outcome` on `future` unless it is done (cancelled): its value through `convert`, or
/// its error as the exception of its kind.
fn answer<T>(
    py: Python<'_>,
    future: &Bound<'_, PyAny>,
    outcome: core::Result<T>,
    convert: Convert<T>,
) -> PyResult<()> {
    if is_done(future)? {
        return Ok(());
    }
    match outcome {
        Ok(value) => match convert(py, value) {
            Ok(value) => set_result(future, value.bind(py)),
            Err(err) => set_exception(future, err),
        },
        Err(err) => set_exception(future, to_py_err(py, err)),
    }
}

/// `future.done()`.
pub(crate) fn is_done(future: &Bound<'_, PyAny>) -> PyResult<bool> {
    future.call_method0(intern!(future.py(), "done"))?.extract()
}

/// `future.set_result(value)`.
pub(crate) fn set_result(future: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    future.call_method1(intern!(future.py(), "set_result"), (value,)).map(drop)
}

/// `future.set_exception(err)`.
pub(crate) fn set_exception(future: &Bound<'_, PyAny>, err: PyErr) -> PyResult<()> {
    let py = future.py();
    future.call_method1(intern!(py, "set_exception"), (err.into_value(py),)).map(drop)
}

/// A future on the running loop that is already done with `value`.
pub(crate) fn ready<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let future = running_loop(py)?.call_method0(intern!(py, "create_future"))?;
    set_result(&future, value)?;
    Ok(future)
}

/// `asyncio.get_running_loop()`.
fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    GET_RUNNING_LOOP
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("asyncio")?.getattr("get_running_loop")?.unbind())
        })?
        .bind(py)
        .call0()
}

/// Calls `on_cancel` (on the loop's thread) if `future` ends cancelled.
pub(crate) fn on_cancel(
    future: &Bound<'_, PyAny>,
    on_cancel: impl FnOnce() + Send + 'static,
) -> PyResult<()> {
    let py = future.py();
    let on_cancel = Mutex::new(Some(on_cancel));
    let callback =
        PyCFunction::new_closure(py, None, None, move |args, _kwargs| -> PyResult<()> {
            let future = args.get_item(0)?;
            let cancelled: bool =
                future.call_method0(intern!(args.py(), "cancelled"))?.extract()?;
            let run = on_cancel.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let (true, Some(run)) = (cancelled, run) {
                run();
            }
            Ok(())
        })?;
    future.call_method1(intern!(py, "add_done_callback"), (callback,)).map(drop)
}

/// Runs `future` on the depositkit runtime; the awaitable returned completes with its outcome
/// (converted by `convert`). Cancelling the awaitable drops `future`.
pub(crate) fn spawn<'py, T: Send + 'static>(
    py: Python<'py>,
    future: impl Future<Output = core::Result<T>> + Send + 'static,
    convert: Convert<T>,
) -> PyResult<Bound<'py, PyAny>> {
    spawn_settled(py, future, move |outcome| -> Settle {
        Box::new(move |py, future| answer(py, future, outcome, convert))
    })
}

/// Runs `future` on the depositkit runtime; the awaitable returned completes through
/// `settle_with`, which gets its output and returns how to settle the awaitable (on the loop's
/// thread). Cancelling the awaitable drops `future` at once, on the runtime: a core
/// [`Task`](core::runtime::Task) then stops its work or only the wait, as it was started.
pub(crate) fn spawn_settled<'py, T: Send + 'static>(
    py: Python<'py>,
    future: impl Future<Output = T> + Send + 'static,
    settle_with: impl FnOnce(T) -> Settle + Send + 'static,
) -> PyResult<Bound<'py, PyAny>> {
    let runtime = core::runtime::Runtime::shared().map_err(|e| to_py_err(py, e))?;
    let (pending, awaitable) = Pending::new(py)?;
    let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
    on_cancel(&awaitable, move || {
        let _ = cancel.send(());
    })?;
    runtime.spawn(async move {
        tokio::select! {
            biased;
            Ok(()) = cancelled => pending.settle(Box::new(|_, _| Ok(()))),
            outcome = future => pending.settle(settle_with(outcome)),
        }
    });
    Ok(awaitable)
}

/// The completions waiting for their loop, and how they reach it: per loop a wake-up pipe
/// watched by the loop (`add_reader`) and a queue of completions. The pipe holds a byte exactly
/// when the queue is not empty (both change under one lock), so the loop wakes once per batch.
mod queue {
    use std::io::{ErrorKind as IoErrorKind, PipeReader, PipeWriter, Read, Write};
    use std::os::fd::AsRawFd;

    use super::*;

    /// One loop's pipe and queue.
    struct Slot {
        /// The loop's address.
        key: usize,
        /// `weakref.ref(loop)`: a slot does not keep its loop alive.
        event_loop: Py<PyAny>,
        reader: PipeReader,
        writer: PipeWriter,
        items: Vec<(Pending, Settle)>,
        /// Futures created on the loop and not settled yet (a slot is dropped only at zero).
        outstanding: usize,
    }

    /// The slots, with the process they belong to.
    static SLOTS: Mutex<(u32, Vec<Slot>)> = Mutex::new((0, Vec::new()));

    fn slots() -> MutexGuard<'static, (u32, Vec<Slot>)> {
        let mut slots = SLOTS.lock().unwrap_or_else(PoisonError::into_inner);
        let pid = std::process::id();
        if slots.0 != pid {
            // Inherited through fork: those loops and their futures are the parent's.
            std::mem::forget(std::mem::take(&mut slots.1));
            slots.0 = pid;
        }
        slots
    }

    /// Counts a new future of `event_loop` (called on the loop's thread) and returns its key;
    /// the first one of a loop sets up the loop's pipe. Slots of loops that are gone or closed,
    /// with nothing outstanding, are dropped here.
    pub(super) fn register(event_loop: &Bound<'_, PyAny>) -> PyResult<usize> {
        let py = event_loop.py();
        let key = event_loop.as_ptr() as usize;
        let known =
            slots().1.iter().find(|slot| slot.key == key).map(|s| s.event_loop.clone_ref(py));
        if let Some(weak) = known {
            // The same address may be a new loop once the old one is gone: the weak reference
            // tells (called outside the lock: never lock while running Python).
            let same = weak.bind(py).call0()?.is(event_loop);
            let mut slots = slots();
            if let Some(slot) = slots.1.iter_mut().find(|slot| slot.key == key) {
                if same {
                    slot.outstanding += 1;
                    return Ok(key);
                }
                // The old loop is gone, so nothing of it is outstanding (a future holds its loop).
                let index = slots.1.iter().position(|slot| slot.key == key);
                let stale = index.map(|index| slots.1.swap_remove(index));
                drop(slots);
                drop(stale);
            }
        }
        sweep(py)?;
        let (reader, writer) = std::io::pipe()?;
        let fd = reader.as_raw_fd();
        py.import(intern!(py, "os"))?.call_method1(intern!(py, "set_blocking"), (fd, false))?;
        event_loop.call_method1(intern!(py, "add_reader"), (fd, drain_function(py)?, key))?;
        let weak =
            py.import(intern!(py, "weakref"))?.getattr(intern!(py, "ref"))?.call1((event_loop,))?;
        let slot = Slot {
            key,
            event_loop: weak.unbind(),
            reader,
            writer,
            items: Vec::new(),
            outstanding: 1,
        };
        slots().1.push(slot);
        Ok(key)
    }

    /// Drops the slots with nothing outstanding whose loop is gone or closed (attached: a slot
    /// holds a Python object). The pipe's fds close with the slot.
    fn sweep(py: Python<'_>) -> PyResult<()> {
        let idle: Vec<(usize, Py<PyAny>)> = slots()
            .1
            .iter()
            .filter(|slot| slot.outstanding == 0)
            .map(|slot| (slot.key, slot.event_loop.clone_ref(py)))
            .collect();
        for (key, weak) in idle {
            let event_loop = weak.bind(py).call0()?;
            let finished = event_loop.is_none()
                || event_loop.call_method0(intern!(py, "is_closed"))?.extract::<bool>()?;
            if !finished {
                continue;
            }
            let removed = {
                let mut slots = slots();
                let index = slots.1.iter().position(|s| s.key == key && s.outstanding == 0);
                index.map(|index| slots.1.swap_remove(index))
            };
            drop(removed);
        }
        Ok(())
    }

    /// Queues a completion (any thread, never attached); the first of a batch wakes the loop.
    pub(super) fn push(pending: Pending, settle: Settle) {
        let mut slots = slots();
        let Some(slot) = slots.1.iter_mut().find(|slot| slot.key == pending.key) else {
            // No slot: a future inherited through fork. Nobody can await it here.
            std::mem::forget((pending, settle));
            return;
        };
        slot.items.push((pending, settle));
        if slot.items.len() == 1 {
            loop {
                match (&slot.writer).write(&[1]) {
                    Err(e) if e.kind() == IoErrorKind::Interrupted => continue,
                    // A pipe holds one byte per batch: never full. Any other failure leaves the
                    // batch for the next wake-up.
                    _ => break,
                }
            }
        }
    }

    fn drain_function(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
        static DRAIN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        DRAIN
            .get_or_try_init(py, || {
                Ok::<_, PyErr>(wrap_pyfunction!(drain, py)?.into_any().unbind())
            })
            .map(|drain| drain.bind(py))
    }

    /// Settles every completion queued for the loop `key` (the loop's reader callback, on its
    /// thread).
    #[pyfunction]
    fn drain(py: Python<'_>, key: usize) {
        let items = {
            let mut slots = slots();
            let Some(slot) = slots.1.iter_mut().find(|slot| slot.key == key) else { return };
            let mut bytes = [0u8; 64];
            while matches!((&slot.reader).read(&mut bytes), Ok(n) if n > 0) {}
            let items = std::mem::take(&mut slot.items);
            slot.outstanding = slot.outstanding.saturating_sub(items.len());
            items
        };
        for (pending, settle) in items {
            let future = pending.future.bind(py);
            if let Err(err) = settle(py, future) {
                err.write_unraisable(py, Some(future));
            }
        }
    }
}
