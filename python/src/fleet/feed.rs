//! The fleet's one event log for Python's synchronous face: the reader `events()` keeps between
//! calls ([`KeptReader`]), the callbacks (`subscribe`, each delivered by a thread of its own in
//! log order, [`deliver`]) and the iterator `iter_events()` ([`PyFleetEventIterator`]).
//!
//! Delivery is at least once: a position moves only past events handed to the caller (a
//! reader's read interrupted by Ctrl-C is dropped, and the next call reads again from the
//! caller's cursor). Leaving ([`Feeds::stop`]) stops every callback thread and drops every
//! reader, so no connection of the member's pool outlives it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use depositkit_fleet::{EventCursor, EventReader, Fleet, FleetEvent};
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;

use super::{Member, PyDepositFleet, PyFleetEvent, Secrets, cursor_arg, fleet_err};
use crate::blocking::wait_for_raw;
use crate::conversions::type_name;
use crate::errors::to_py_err;
use crate::events::CallbackSlot;
use depositkit_core::{Error, ErrorKind};

/// Events a callback thread or an iterator reads at once.
const BATCH: usize = 500;
/// How long one read of a callback thread or an iterator waits for new events: also how soon
/// it sees that it was stopped.
const READ_WAIT: Duration = Duration::from_millis(500);
/// How long a callback thread waits after a failed read before reading again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A reader kept between reads, dropped when the member leaves.
#[derive(Default)]
struct ReaderSlot {
    reader: Mutex<Option<EventReader>>,
    stopped: AtomicBool,
}

/// The readers and callback threads of one member.
#[derive(Default)]
pub(super) struct Feeds {
    readers: Mutex<Vec<Weak<ReaderSlot>>>,
    subscriptions: Mutex<Vec<Subscription>>,
    next_id: AtomicU64,
    stopped: AtomicBool,
}

impl Feeds {
    /// A reader slot that [`Feeds::stop`] empties.
    pub(super) fn kept_reader(&self) -> KeptReader {
        let slot = Arc::new(ReaderSlot::default());
        slot.stopped.store(self.stopped.load(Ordering::SeqCst), Ordering::SeqCst);
        let mut readers = lock(&self.readers);
        readers.retain(|weak| weak.strong_count() > 0);
        readers.push(Arc::downgrade(&slot));
        KeptReader(slot)
    }

    /// Stops every callback thread (and waits for them, but for the calling one: a callback
    /// may leave) and drops every reader. Blocks: call it detached.
    pub(super) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let subscriptions: Vec<Subscription> = lock(&self.subscriptions).drain(..).collect();
        for subscription in &subscriptions {
            subscription.stop.store(true, Ordering::SeqCst);
        }
        for subscription in subscriptions {
            // Dropping the callable needs the interpreter: it is released later, attached.
            let callable = subscription.slot.clear();
            if let Some(thread) = subscription.thread
                && thread.thread().id() != std::thread::current().id()
            {
                let _ = thread.join();
            }
            if let Some(callable) = callable {
                let _ = Python::try_attach(move |_py| drop(callable));
            }
        }
        for slot in lock(&self.readers).drain(..).filter_map(|weak| weak.upgrade()) {
            slot.stopped.store(true, Ordering::SeqCst);
            drop(lock(&slot.reader).take());
        }
    }

    /// Starts delivering the log from `reader` to `callback` on a thread of its own, beginning
    /// with `first`. Returns the subscription's id.
    fn subscribe(
        &self,
        reader: EventReader,
        first: Vec<FleetEvent>,
        callback: Py<PyAny>,
        secrets: Secrets,
    ) -> std::io::Result<u64> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let slot = CallbackSlot::new(callback);
        let stop = Arc::new(AtomicBool::new(false));
        let mut subscriptions = lock(&self.subscriptions);
        let thread =
            std::thread::Builder::new().name(format!("depositkit-fleet-events-{id}")).spawn({
                let (slot, stop) = (Arc::clone(&slot), Arc::clone(&stop));
                move || deliver(reader, first, &slot, &stop, &secrets)
            });
        match thread {
            Ok(thread) => {
                subscriptions.push(Subscription { id, slot, stop, thread: Some(thread) });
                Ok(id)
            }
            Err(e) => {
                drop(subscriptions);
                if let Some(callable) = slot.clear() {
                    let _ = Python::try_attach(move |_py| drop(callable));
                }
                Err(e)
            }
        }
    }

    /// Stops subscription `id`: no callback starts after this returns. `false` when unknown.
    fn unsubscribe(&self, id: u64) -> bool {
        let found = {
            let mut subscriptions = lock(&self.subscriptions);
            let at = subscriptions.iter().position(|s| s.id == id);
            at.map(|at| subscriptions.remove(at))
        };
        let Some(subscription) = found else { return false };
        subscription.stop.store(true, Ordering::SeqCst);
        // Attached (the caller's): the callable is released here. Its thread ends by itself
        // within a read (it may be the caller's own: not joined).
        drop(subscription.slot.clear());
        true
    }
}

/// One callback and the thread delivering to it.
struct Subscription {
    id: u64,
    slot: Arc<CallbackSlot>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// A callback thread: hands each event of the log to the callback, in order, until stopped.
fn deliver(
    mut reader: EventReader,
    first: Vec<FleetEvent>,
    slot: &CallbackSlot,
    stop: &AtomicBool,
    secrets: &Secrets,
) {
    depositkit_core::runtime::block_host_signals();
    let mut batch = first;
    while !stop.load(Ordering::SeqCst) {
        for event in &batch {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            slot.call(|py| Ok(Py::new(py, PyFleetEvent::new(py, event)?)?.into_any()));
        }
        batch = match reader.read(BATCH, READ_WAIT) {
            Ok(batch) => batch,
            Err(error) => {
                let error = secrets.scrub(&error.to_string());
                tracing::warn!(%error, "reading the fleet's event log failed: reading again");
                let until = Instant::now() + RETRY_AFTER;
                while !stop.load(Ordering::SeqCst) && Instant::now() < until {
                    std::thread::park_timeout(Duration::from_millis(100));
                }
                Vec::new()
            }
        };
    }
}

/// The reader `events()` keeps: the next call that starts where the last one ended reuses it
/// (and its listening connection); any other cursor starts a new one.
pub(super) struct KeptReader(Arc<ReaderSlot>);

impl KeptReader {
    /// A job (for a worker thread) reading at most `max` events after `cursor`, waiting up to
    /// `wait`: the events and the cursor after them.
    pub(super) fn job(
        &self,
        fleet: Fleet,
        cursor: EventCursor,
        max: usize,
        wait: Duration,
    ) -> impl FnOnce() -> depositkit_fleet::Result<(Vec<FleetEvent>, String)> + Send + 'static {
        let slot = Arc::clone(&self.0);
        move || {
            let mut reader = match lock(&slot.reader).take() {
                Some(reader) if *reader.cursor() == cursor => reader,
                _ => fleet.event_reader(cursor),
            };
            let batch = reader.read(max, wait);
            let next = reader.cursor().to_string();
            if !slot.stopped.load(Ordering::SeqCst) {
                *lock(&slot.reader) = Some(reader);
            }
            Ok((batch?, next))
        }
    }
}

// --- the Python methods -----------------------------------------------------------------------

#[pymethods]
impl PyDepositFleet {
    #[pyo3(signature = (callback, cursor=None))]
    fn subscribe(
        &self,
        py: Python<'_>,
        callback: &Bound<'_, PyAny>,
        cursor: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        if !callback.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "the callback must be callable, not {}",
                type_name(callback)
            )));
        }
        let secrets = self.shared.secrets.clone();
        let cursor = cursor_arg(py, &secrets, cursor)?;
        let fleet = self.fleet(py)?;
        // A first read here: a cursor of another cluster or an unreachable database raises
        // now, not on the thread.
        let (reader, first) = self.run(py, move || {
            let mut reader = fleet.event_reader(cursor);
            let first = reader.read(BATCH, Duration::ZERO)?;
            Ok((reader, first))
        })?;
        let callback = callback.clone().unbind();
        let subscribed = self.shared.feeds.subscribe(reader, first, callback, secrets);
        let id = subscribed.map_err(|e| {
            let message = format!("cannot start the callback's thread: {e}");
            to_py_err(py, Error::new(ErrorKind::Internal, message))
        })?;
        if self.member().is_none() {
            // Left meanwhile: the thread stops at once.
            self.shared.feeds.unsubscribe(id);
        }
        Ok(id)
    }

    fn unsubscribe(&self, id: u64) -> bool {
        self.shared.feeds.unsubscribe(id)
    }

    #[pyo3(signature = (cursor=None, *, max_events=500))]
    fn iter_events(
        &self,
        py: Python<'_>,
        cursor: Option<&Bound<'_, PyAny>>,
        max_events: usize,
    ) -> PyResult<PyFleetEventIterator> {
        let (cursor, _) = self.read_args(py, cursor, max_events, 0.0)?;
        self.fleet(py)?;
        Ok(PyFleetEventIterator {
            member: Arc::clone(&self.shared),
            reader: self.shared.feeds.kept_reader(),
            max_events,
            state: Mutex::new(Position { cursor, buffered: VecDeque::new() }),
        })
    }
}

/// Where an iterator is: the cursor after the last event it handed out, and the events read
/// but not handed out yet.
struct Position {
    cursor: EventCursor,
    buffered: VecDeque<FleetEvent>,
}

/// `DepositFleet.iter_events()`: the fleet's log from a cursor, one event at a time.
#[pyclass(module = "depositkit", name = "FleetEventIterator", frozen)]
pub(crate) struct PyFleetEventIterator {
    member: Arc<Member>,
    reader: KeptReader,
    max_events: usize,
    state: Mutex<Position>,
}

impl PyFleetEventIterator {
    /// The next event, reading in waits of [`READ_WAIT`] until one comes, `timeout` passed
    /// (`None`) or the member left (`None`).
    fn next(&self, py: Python<'_>, timeout: Option<Duration>) -> PyResult<Option<PyFleetEvent>> {
        self.member.origin.check(py, super::CLASS)?;
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let fleet = match self.member.member().as_ref() {
                Some(member) => member.fleet().clone(),
                None => return Ok(None),
            };
            let cursor = {
                let mut state = lock(&self.state);
                if let Some(event) = state.buffered.pop_front() {
                    state.cursor = event.cursor.clone();
                    return PyFleetEvent::new(py, &event).map(Some);
                }
                state.cursor.clone()
            };
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let wait = left.map_or(READ_WAIT, |left| left.min(READ_WAIT));
            let job = self.reader.job(fleet, cursor.clone(), self.max_events, wait);
            let (batch, _) =
                wait_for_raw(py, job)?.map_err(|err| fleet_err(py, &self.member.secrets, &err))?;
            {
                let mut state = lock(&self.state);
                // Another thread may have moved on meanwhile: keep only a batch read from here.
                if state.cursor == cursor && state.buffered.is_empty() {
                    state.buffered.extend(batch);
                }
            }
            if lock(&self.state).buffered.is_empty() && left.is_some_and(|l| l <= wait) {
                return Ok(None);
            }
        }
    }
}

#[pymethods]
impl PyFleetEventIterator {
    /// The cursor after the last event this iterator returned.
    #[getter]
    fn cursor(&self) -> String {
        lock(&self.state).cursor.to_string()
    }

    #[pyo3(signature = (timeout=None))]
    fn next_event(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<PyFleetEvent>> {
        let timeout = timeout.map(|t| super::seconds(py, "timeout", t)).transpose()?;
        self.next(py, timeout)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<PyFleetEvent> {
        self.next(py, None)?.ok_or_else(|| PyStopIteration::new_err(()))
    }

    fn __repr__(&self) -> String {
        format!("FleetEventIterator(cursor='{}')", self.cursor())
    }
}
