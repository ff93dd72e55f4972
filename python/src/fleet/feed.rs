//! The fleet's one event log for Python's synchronous face: the reader `events()` keeps between
//! calls ([`KeptReader`]), the callbacks (`subscribe`, each delivered in log order by a thread
//! of its own: the fleet's [`EventSubscription`]) and the iterator `iter_events()`
//! ([`PyFleetEventIterator`]).
//!
//! Delivery is at least once: a position moves only past events handed to the caller (a
//! reader's read interrupted by Ctrl-C is dropped, and the next call reads again from the
//! caller's cursor). Leaving ([`Feeds::stop`]) stops every callback thread and drops every
//! reader, so no connection of the member's pool outlives it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use depositkit_fleet::subscription::BATCH;
use depositkit_fleet::{EventCursor, EventReader, EventSubscription, Fleet, FleetEvent};
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;

use super::{Member, PyDepositFleet, PyFleetEvent, cursor_arg, fleet_err};
use crate::blocking::wait_for_raw;
use crate::conversions::type_name;
use crate::errors::to_py_err;
use crate::events::CallbackSlot;
use depositkit_core::{Error, ErrorKind};

/// How long one read of an iterator waits for new events: also how soon it sees that its
/// member left.
const READ_WAIT: Duration = Duration::from_millis(500);

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
            subscription.events.stop();
        }
        for subscription in subscriptions {
            // Dropping the callable needs the interpreter: it is released later, attached.
            let callable = subscription.slot.clear();
            // Waits for its thread, unless this is it.
            drop(subscription.events);
            if let Some(callable) = callable {
                let _ = Python::try_attach(move |_py| drop(callable));
            }
        }
        for slot in lock(&self.readers).drain(..).filter_map(|weak| weak.upgrade()) {
            slot.stopped.store(true, Ordering::SeqCst);
            drop(lock(&slot.reader).take());
        }
    }

    /// Starts delivering the log to `callback` on a thread of its own (the fleet's
    /// [`EventSubscription::spawn`]): `first`, what `reader` (made from `start`) read first,
    /// then what it reads next. Returns the subscription's id.
    fn subscribe(
        &self,
        start: EventCursor,
        reader: EventReader,
        first: Vec<FleetEvent>,
        callback: Py<PyAny>,
    ) -> std::io::Result<u64> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let slot = CallbackSlot::new(callback);
        let mut subscriptions = lock(&self.subscriptions);
        let name = format!("depositkit-fleet-events-{id}");
        let delivering = Arc::clone(&slot);
        let events = EventSubscription::spawn(&name, start, reader, first, move |event| {
            delivering.call(|py| Ok(Py::new(py, PyFleetEvent::new(py, event)?)?.into_any()));
        });
        match events {
            Ok(events) => {
                subscriptions.push(Subscription { id, slot, events });
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
        subscription.events.stop();
        // Attached (the caller's): the callable is released here. Its thread ends by itself
        // within a read (it may be the caller's own: not waited for).
        drop(subscription.slot.clear());
        subscription.events.detach();
        true
    }
}

/// One callback and the fleet's subscription delivering to it.
struct Subscription {
    id: u64,
    slot: Arc<CallbackSlot>,
    events: EventSubscription,
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
        let cursor = cursor_arg(py, &self.shared.secrets, cursor)?;
        let fleet = self.fleet(py)?;
        // A first read here: a cursor of another cluster or an unreachable database raises
        // now, not on the thread.
        let start = cursor.clone();
        let (reader, first) = self.run(py, move || {
            let mut reader = fleet.event_reader(cursor);
            let first = reader.read(BATCH, Duration::ZERO)?;
            Ok((reader, first))
        })?;
        let callback = callback.clone().unbind();
        let subscribed = self.shared.feeds.subscribe(start, reader, first, callback);
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
