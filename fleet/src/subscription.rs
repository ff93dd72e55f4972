//! Callbacks on the fleet's one event log ([`Fleet::subscribe`]): a thread of the
//! subscription's own reads the log in commit order from a cursor and hands every event to the
//! callback, until the [`EventSubscription`] is dropped. What the C and Python faces'
//! `subscribe` give their callers, for Rust callers.
//!
//! Delivery is at least once: the thread moves past an event only once the callback returned
//! ([`EventSubscription::cursor`] is then after it), and a failed read is logged and tried
//! again (after [`RETRY_AFTER`]) from the same place, so nothing is skipped. A callback that
//! panics ends its subscription (logged); the process goes on.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{FleetError, Result};
use crate::fleet::Fleet;
use crate::log::{EventCursor, EventReader, FleetEvent};

/// Events the thread reads at once (and [`Fleet::subscribe`] reads first).
pub const BATCH: usize = 500;
/// How long one read waits for new events: also how long dropping a subscription may wait for
/// its thread to see that it was stopped.
pub const READ_WAIT: Duration = Duration::from_millis(500);
/// How long the thread waits after a failed read before reading again.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);
/// How often a thread waiting to read again looks whether it was stopped.
const STOP_CHECK: Duration = Duration::from_millis(50);

impl Fleet {
    /// Calls `on_event` with every event of the fleet's one log after `cursor`
    /// ([`EventCursor::START`] for the beginning, or a saved [`EventSubscription::cursor`] /
    /// [`FleetEvent::cursor`]), in commit order, on a thread of its own
    /// (`depositkit-fleet-events`), until the returned subscription is dropped.
    ///
    /// The callback runs one event at a time, never concurrently with itself; it is woken as
    /// soon as an event commits (the log's doorbell), reading again every second at most
    /// otherwise. Delivery is at least once (from an older cursor an event comes again):
    /// de-duplicate by `(owner, id)`. When a read fails (the database is unreachable) the
    /// failure is logged (target `depositkit_fleet::subscription`, level warn) and the read is
    /// tried again a second later from the same place.
    ///
    /// ```no_run
    /// # use depositkit_fleet::{EventCursor, Fleet};
    /// # fn main() -> depositkit_fleet::Result<()> {
    /// let fleet = Fleet::connect("postgres://app@db.internal/deposits", 4)?;
    /// let subscription = fleet.subscribe(EventCursor::START, |event| {
    ///     println!("{} #{}: {}", event.owner, event.id, event.kind);
    /// })?;
    /// // ... later: where to resume after a restart, then stop.
    /// let saved = subscription.cursor().to_string();
    /// drop(subscription);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// Read once before this returns, so that they come now rather than on the thread:
    /// [`FleetError::InvalidCursor`] for a cursor of another cluster; database errors. A
    /// thread that cannot be started: [`FleetError::Postgres`] naming why.
    pub fn subscribe<F>(&self, cursor: EventCursor, on_event: F) -> Result<EventSubscription>
    where
        F: FnMut(&FleetEvent) + Send + 'static,
    {
        let mut reader = self.event_reader(cursor.clone());
        let first = reader.read(BATCH, Duration::ZERO)?;
        EventSubscription::spawn("depositkit-fleet-events", cursor, reader, first, on_event)
            .map_err(|e| {
                FleetError::Postgres(format!("cannot start the subscription's thread: {e}"))
            })
    }
}

/// A callback on the fleet's log ([`Fleet::subscribe`]). Dropping it (or
/// [`EventSubscription::unsubscribe`]) stops the callback: no call starts after that, and one
/// running is waited for, unless the drop happens inside the callback itself.
pub struct EventSubscription {
    stop: Arc<AtomicBool>,
    handled: Arc<Mutex<EventCursor>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for EventSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSubscription")
            .field("cursor", &self.cursor())
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

impl EventSubscription {
    /// [`Fleet::subscribe`] after its first read, for callers that make that read themselves
    /// (the C and Python faces, on threads of their choosing): delivers `first`, what `reader`
    /// (made from cursor `start`) read first, then what it reads next, on a thread named
    /// `thread_name`. Does not block.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn spawn<F>(
        thread_name: &str,
        start: EventCursor,
        reader: EventReader,
        first: Vec<FleetEvent>,
        on_event: F,
    ) -> std::io::Result<Self>
    where
        F: FnMut(&FleetEvent) + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let handled = Arc::new(Mutex::new(start));
        let thread = std::thread::Builder::new().name(thread_name.to_owned()).spawn({
            let (stop, handled) = (Arc::clone(&stop), Arc::clone(&handled));
            move || deliver(reader, first, on_event, &stop, &handled)
        })?;
        Ok(EventSubscription { stop, handled, thread: Some(thread) })
    }

    /// The cursor after the last event whose callback returned: subscribe again from it (after
    /// a restart, say) to go on without skipping anything.
    pub fn cursor(&self) -> EventCursor {
        lock(&self.handled).clone()
    }

    /// Whether the callback still gets events (false once a callback panicked).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|thread| !thread.is_finished())
    }

    /// Stops the callback, as dropping the subscription does: no call starts after this
    /// returns, and a call running is waited for (unless this is called from the callback).
    pub fn unsubscribe(self) {
        drop(self);
    }

    /// Stops the callback without waiting: no call starts after the one running now, if any,
    /// returns; the thread ends by itself within [`READ_WAIT`]. For callers that must not
    /// block (a callback's host holding a lock the callback may need).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// [`EventSubscription::stop`], and lets the thread end by itself (never waited for).
    pub fn detach(mut self) {
        self.stop();
        self.thread.take();
    }
}

impl Drop for EventSubscription {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The subscription's thread: hands each event to the callback, in order, until stopped.
fn deliver<F>(
    reader: EventReader,
    first: Vec<FleetEvent>,
    on_event: F,
    stop: &AtomicBool,
    handled: &Mutex<EventCursor>,
) where
    F: FnMut(&FleetEvent),
{
    depositkit_core::runtime::block_host_signals();
    let run =
        panic::catch_unwind(AssertUnwindSafe(|| in_order(reader, first, on_event, stop, handled)));
    if run.is_err() {
        tracing::error!("a fleet event callback panicked; its subscription gets no more events");
    }
}

fn in_order<F>(
    mut reader: EventReader,
    first: Vec<FleetEvent>,
    mut on_event: F,
    stop: &AtomicBool,
    handled: &Mutex<EventCursor>,
) where
    F: FnMut(&FleetEvent),
{
    let mut batch = first;
    while !stop.load(Ordering::SeqCst) {
        for event in &batch {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            on_event(event);
            lock(handled).clone_from(&event.cursor);
        }
        batch = match reader.read(BATCH, READ_WAIT) {
            Ok(batch) => batch,
            Err(error) => {
                tracing::warn!(%error, "reading the fleet's event log failed: reading again");
                let until = Instant::now() + RETRY_AFTER;
                while !stop.load(Ordering::SeqCst) && Instant::now() < until {
                    std::thread::park_timeout(STOP_CHECK);
                }
                Vec::new()
            }
        };
    }
}
