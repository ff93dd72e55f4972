//! The event hub of a client: how its events reach the host.
//!
//! Every event is first written to the event log (the store, one transaction with the state
//! change it reports), then delivered two ways at once:
//! - **Pull**: [`next_event`](super::DepositClient::next_event) takes the oldest queued event.
//!   The queue is bounded (`event_queue_capacity`, default 1024); when it is full the
//!   **oldest** event is dropped and counted
//!   ([`dropped_events`](super::DepositClient::dropped_events)), so a host that never pulls
//!   loses nothing but memory.
//! - **Callbacks**: a library-owned thread (`depositkit-events`, from the process-wide delivery
//!   pool of [`dispatch`](super::dispatch), where each client is one lane) calls every
//!   subscribed callback, in subscription order, for every event. One client's callbacks run
//!   one at a time, in event order, on one thread (another one only after a stuck callback made
//!   the pool replace that thread); two clients' callbacks may run at the same time. Callbacks
//!   never run on a runtime thread nor while depositkit holds a lock, so they may call back into
//!   the client.
//!   A panicking callback is caught; the panic is reported as a [`DepositEvent::Error`] in the
//!   pull queue (not to the callbacks, so that a callback failing on errors cannot loop).
//!
//! The notification store (when configured) takes in every event as it is emitted; its change
//! callbacks run on the same delivery lane. An event is in the pull queue and handed to the
//! dispatcher before the operation that caused it returns (for example
//! [`poll_now`](super::DepositClient::poll_now)).

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use super::dispatch::Lane;
use super::events::{DepositEvent, NotificationRecord, RecordedEvent, SubscriptionId};
use super::model::now_ms;
use super::notifications::NotificationStore;
use super::store::{Change, DepositStore};
use crate::error::ErrorKind;

type SharedCallback = Arc<dyn Fn(&RecordedEvent) + Send + Sync>;

type SharedNotificationsCallback = Arc<dyn Fn(&[NotificationRecord]) + Send + Sync>;

/// What the dispatcher delivers.
enum Dispatch {
    Event(Box<RecordedEvent>),
    Notifications(Arc<Vec<NotificationRecord>>),
}

/// The notification store of a client and what watches it.
struct Notes {
    store: Mutex<NotificationStore>,
    subscribers: Mutex<Arc<Vec<(SubscriptionId, SharedNotificationsCallback)>>>,
    /// Woken when the records change, so the expiry timer can look again.
    changed: tokio::sync::Notify,
}

struct Queue {
    events: VecDeque<RecordedEvent>,
    dropped: u64,
}

/// The pull queue, the subscribers and the dispatcher of one client.
pub(crate) struct EventHub {
    queue: Mutex<Queue>,
    ready: Condvar,
    capacity: usize,
    subscribers: Mutex<Arc<Vec<(SubscriptionId, SharedCallback)>>>,
    next_id: AtomicU64,
    dispatch: Mutex<Option<LaneSender>>,
    callback_panics: AtomicU64,
    notes: Option<Notes>,
    /// The event log (and the rest of the client's durable state).
    store: Arc<DepositStore>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl EventHub {
    /// A hub whose dispatcher lane runs until [`Dispatcher::stop`].
    #[cfg(test)]
    pub fn start(capacity: usize) -> std::io::Result<(Arc<EventHub>, Dispatcher)> {
        let store = DepositStore::open(None, "0xtest", capacity).map_err(std::io::Error::other)?;
        EventHub::start_with(capacity, None, Arc::new(store))
    }

    /// A hub with a notification store when `notifications` is set; its deliveries are a lane
    /// of the process-wide pool (started on first use).
    pub fn start_with(
        capacity: usize,
        notifications: Option<NotificationStore>,
        store: Arc<DepositStore>,
    ) -> std::io::Result<(Arc<EventHub>, Dispatcher)> {
        let lane = Lane::new()?;
        let hub = Arc::new_cyclic(|hub: &Weak<EventHub>| EventHub {
            queue: Mutex::new(Queue { events: VecDeque::new(), dropped: 0 }),
            ready: Condvar::new(),
            capacity: capacity.max(1),
            subscribers: Mutex::new(Arc::new(Vec::new())),
            next_id: AtomicU64::new(1),
            dispatch: Mutex::new(Some(LaneSender { lane: Arc::clone(&lane), hub: hub.clone() })),
            callback_panics: AtomicU64::new(0),
            notes: notifications.map(|store| Notes {
                store: Mutex::new(store),
                subscribers: Mutex::new(Arc::new(Vec::new())),
                changed: tokio::sync::Notify::new(),
            }),
            store,
        });
        Ok((hub, Dispatcher { lane: Some(lane) }))
    }

    /// Runs one delivery (on a pool thread).
    fn handle(&self, item: Dispatch) {
        match item {
            Dispatch::Event(event) => self.deliver(&event),
            Dispatch::Notifications(records) => self.deliver_notes(&records),
        }
    }

    /// Records `event` in the event log, queues it for pulling and hands it to the dispatcher.
    /// Never blocks on callbacks.
    pub fn emit(&self, event: DepositEvent) {
        self.commit(Change::events(vec![event]));
    }

    /// Writes `change` (state and events, one transaction), then publishes its events. A
    /// failed write is reported as an `Error` event after them; the events still go out.
    pub fn commit(&self, change: Change) {
        let (recorded, error) = self.store.commit(change, now_ms());
        for event in recorded {
            self.publish(event);
        }
        if let Some(error) = error {
            let report = DepositEvent::Error {
                kind: ErrorKind::Internal,
                message: format!("the client's state was not saved: {}", error.message()),
            };
            // Its own write is not checked again: it would fail the same way.
            let (recorded, _) = self.store.commit(Change::events(vec![report]), now_ms());
            for event in recorded {
                self.publish(event);
            }
        }
    }

    /// The client's store.
    pub fn store(&self) -> &Arc<DepositStore> {
        &self.store
    }

    /// Queues a recorded event for pulling and hands it to the dispatcher. The notification
    /// store (if any) takes it in first, so that the records reflect it when the operation
    /// that caused it returns.
    fn publish(&self, event: RecordedEvent) {
        let changed = self.notes.as_ref().and_then(|notes| {
            let mut store = lock(&notes.store);
            store.on_event(&event.event, event.at).then(|| store.records())
        });
        // Dispatcher first: once an event can be pulled, closing the client delivers it to the
        // callbacks too.
        if let Some(tx) = lock(&self.dispatch).as_ref() {
            let _ = tx.send(Dispatch::Event(Box::new(event.clone())));
        }
        self.enqueue(event);
        if let Some(records) = changed {
            self.notes_changed(records);
        }
    }

    /// Puts back the notification records a restarted client had.
    pub fn restore_notifications(&self, records: Vec<NotificationRecord>) {
        if let Some(notes) = &self.notes {
            lock(&notes.store).restore(records);
            notes.changed.notify_one();
        }
    }

    fn notes_changed(&self, records: Vec<NotificationRecord>) {
        if let Some(notes) = &self.notes {
            if let Err(error) = self.store.save_notifications(&records, now_ms()) {
                self.log_only(DepositEvent::Error {
                    kind: ErrorKind::Internal,
                    message: format!(
                        "the notification records were not saved: {}",
                        error.message()
                    ),
                });
            }
            notes.changed.notify_one();
            if !lock(&notes.subscribers).is_empty()
                && let Some(tx) = lock(&self.dispatch).as_ref()
            {
                let _ = tx.send(Dispatch::Notifications(Arc::new(records)));
            }
        }
    }

    /// Whether the client keeps notification records.
    pub fn has_notifications(&self) -> bool {
        self.notes.is_some()
    }

    /// The notification records, oldest first (empty without a store).
    pub fn notifications(&self) -> Vec<NotificationRecord> {
        self.notes.as_ref().map(|n| lock(&n.store).records()).unwrap_or_default()
    }

    /// Dismisses the record of deposit `id`; whether there was one.
    pub fn dismiss_notification(&self, id: &str) -> bool {
        let Some(notes) = &self.notes else { return false };
        let changed = {
            let mut store = lock(&notes.store);
            store.dismiss(id).then(|| store.records())
        };
        match changed {
            Some(records) => {
                self.notes_changed(records);
                true
            }
            None => false,
        }
    }

    /// Removes the records whose auto-dismiss time has come; returns when the next one is due
    /// (unix milliseconds).
    pub fn expire_notifications(&self, now: u64) -> Option<u64> {
        let notes = self.notes.as_ref()?;
        let (changed, next) = {
            let mut store = lock(&notes.store);
            let changed = store.expire(now).then(|| store.records());
            (changed, store.next_expiry())
        };
        if let Some(records) = changed {
            self.notes_changed(records);
        }
        next
    }

    /// Waits until the records change (for the expiry timer); returns at once without a store.
    pub async fn notifications_changed(&self) {
        if let Some(notes) = &self.notes {
            notes.changed.notified().await;
        }
    }

    /// Adds a callback for changes of the notification records.
    pub fn subscribe_notifications(
        &self,
        callback: SharedNotificationsCallback,
    ) -> Option<SubscriptionId> {
        let notes = self.notes.as_ref()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut subscribers = lock(&notes.subscribers);
        let mut list: Vec<_> = subscribers.as_ref().clone();
        list.push((id, callback));
        *subscribers = Arc::new(list);
        Some(id)
    }

    fn deliver_notes(&self, records: &[NotificationRecord]) {
        let Some(notes) = &self.notes else { return };
        let subscribers = Arc::clone(&lock(&notes.subscribers));
        for (id, callback) in subscribers.iter() {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| callback(records))) {
                self.report_panic(*id, &*panic);
            }
        }
    }

    fn report_panic(&self, id: SubscriptionId, panic: &(dyn std::any::Any + Send)) {
        self.callback_panics.fetch_add(1, Ordering::Relaxed);
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string panic".to_owned());
        self.log_only(DepositEvent::Error {
            kind: ErrorKind::Internal,
            message: format!("event callback {id} panicked: {what}"),
        });
    }

    /// Records `event` and queues it for pulling, but not for the callbacks (so that a callback
    /// failing on errors cannot loop).
    fn log_only(&self, event: DepositEvent) {
        let (recorded, _) = self.store.commit(Change::events(vec![event]), now_ms());
        for event in recorded {
            self.enqueue(event);
        }
    }

    fn enqueue(&self, event: RecordedEvent) {
        let mut queue = lock(&self.queue);
        while queue.events.len() >= self.capacity {
            queue.events.pop_front();
            queue.dropped += 1;
            crate::observe::event_dropped();
            tracing::warn!(capacity = self.capacity, "event queue full: the oldest event dropped");
        }
        crate::observe::event_delivered();
        tracing::trace!(event_id = event.id, "event queued");
        queue.events.push_back(event);
        drop(queue);
        self.ready.notify_all();
    }

    fn deliver(&self, event: &RecordedEvent) {
        let subscribers = Arc::clone(&lock(&self.subscribers));
        for (id, callback) in subscribers.iter() {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| callback(event))) {
                self.report_panic(*id, &*panic);
            }
        }
    }

    /// The oldest queued event, waiting at most `timeout` for one.
    pub fn next_event(&self, timeout: Duration) -> Option<RecordedEvent> {
        self.wait_queued(timeout)?.events.pop_front()
    }

    /// Up to `max` of the oldest queued events, oldest first, taken under one acquisition of
    /// the queue's lock (a host draining thousands of events per second would otherwise pay
    /// one per event): waits at most `timeout` for the first, then takes those already queued
    /// behind it without waiting. Empty when none arrived in time, or when `max` is 0.
    pub fn next_events(&self, timeout: Duration, max: usize) -> Vec<RecordedEvent> {
        if max == 0 {
            return Vec::new();
        }
        let Some(mut queue) = self.wait_queued(timeout) else { return Vec::new() };
        let take = max.min(queue.events.len());
        queue.events.drain(..take).collect()
    }

    /// The locked queue once it holds an event, waiting at most `timeout`; `None` on timeout.
    fn wait_queued(&self, timeout: Duration) -> Option<MutexGuard<'_, Queue>> {
        let deadline = Instant::now().checked_add(timeout);
        let mut queue = lock(&self.queue);
        loop {
            if !queue.events.is_empty() {
                return Some(queue);
            }
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return None;
            }
            queue = self.ready.wait_timeout(queue, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Events dropped because the pull queue was full.
    pub fn dropped(&self) -> u64 {
        lock(&self.queue).dropped
    }

    /// Callbacks that panicked so far.
    pub fn callback_panics(&self) -> u64 {
        self.callback_panics.load(Ordering::Relaxed)
    }

    /// Adds a callback for every event.
    pub fn subscribe(&self, callback: SharedCallback) -> SubscriptionId {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut subscribers = lock(&self.subscribers);
        let mut list: Vec<_> = subscribers.as_ref().clone();
        list.push((id, callback));
        *subscribers = Arc::new(list);
        id
    }

    /// Removes a callback; `false` when `id` is not subscribed. A delivery already under way
    /// may still call it once.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        let mut subscribers = lock(&self.subscribers);
        let before = subscribers.len();
        let list: Vec<_> = subscribers.iter().filter(|(i, _)| *i != id).cloned().collect();
        let removed = list.len() != before;
        *subscribers = Arc::new(list);
        drop(subscribers);
        if removed {
            return true;
        }
        let Some(notes) = &self.notes else { return false };
        let mut subscribers = lock(&notes.subscribers);
        let before = subscribers.len();
        let list: Vec<_> = subscribers.iter().filter(|(i, _)| *i != id).cloned().collect();
        let removed = list.len() != before;
        *subscribers = Arc::new(list);
        removed
    }

    /// Stops handing events to the dispatcher; it finishes what it has, then exits.
    fn close_dispatch(&self) {
        lock(&self.dispatch).take();
    }

    /// Drops every callback (they may hold the client).
    pub fn clear_subscribers(&self) {
        *lock(&self.subscribers) = Arc::new(Vec::new());
        if let Some(notes) = &self.notes {
            *lock(&notes.subscribers) = Arc::new(Vec::new());
        }
    }
}

/// Hands a hub's deliveries to its lane. Holds the hub weakly (the hub holds this); each job
/// holds it strongly until it ran, so what was handed over is delivered.
struct LaneSender {
    lane: Arc<Lane>,
    hub: Weak<EventHub>,
}

impl LaneSender {
    /// Queues `item` on the lane; an error once the lane is closed.
    fn send(&self, item: Dispatch) -> Result<(), ()> {
        let hub = self.hub.upgrade().ok_or(())?;
        if self.lane.push(Box::new(move || hub.handle(item))) { Ok(()) } else { Err(()) }
    }
}

/// The delivery lane of a hub in the process-wide pool.
pub(crate) struct Dispatcher {
    lane: Option<Arc<Lane>>,
}

impl Dispatcher {
    /// Lets the lane deliver what is queued, waiting at most `timeout`. Returns whether
    /// everything was delivered. Called from one of this hub's own callbacks (a callback closing
    /// its client), it does not wait: the rest is delivered after that callback returns.
    pub fn stop(&mut self, hub: &EventHub, timeout: Duration) -> bool {
        hub.close_dispatch();
        let Some(lane) = self.lane.take() else {
            return true;
        };
        lane.close();
        if lane.runs_on_current_thread() {
            return false;
        }
        // On timeout a callback is stuck: the lane goes on when it returns.
        lane.wait_idle(timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deposit::events::DepositPhase;
    use crate::deposit::events::tests::lifecycle;
    use crate::deposit::status::ClientStatus;
    use crate::error::ErrorKind;

    #[test]
    fn pull_queue_drops_the_oldest_when_full() {
        let (hub, mut dispatcher) = EventHub::start(2).unwrap();
        for i in 0..3 {
            hub.emit(DepositEvent::Lifecycle(lifecycle(
                &format!("dep_{i}"),
                DepositPhase::Detected,
            )));
        }
        assert_eq!(hub.dropped(), 1);
        let first = hub.next_event(Duration::ZERO).unwrap();
        assert_eq!(first.event.lifecycle().unwrap().id, "dep_1");
        assert_eq!(first.id, 2, "ids count every event, dropped ones too");
        assert_eq!(hub.next_event(Duration::ZERO).unwrap().event.lifecycle().unwrap().id, "dep_2");
        assert_eq!(hub.next_event(Duration::from_millis(10)), None);
        assert!(dispatcher.stop(&hub, Duration::from_secs(5)));
    }

    fn emit_lifecycles(hub: &EventHub, ids: std::ops::Range<usize>) {
        for i in ids {
            let event = lifecycle(&format!("dep_{i}"), DepositPhase::Detected);
            hub.emit(DepositEvent::Lifecycle(event));
        }
    }

    fn deposit_ids(events: &[RecordedEvent]) -> Vec<String> {
        events.iter().map(|r| r.event.lifecycle().unwrap().id.clone()).collect()
    }

    #[test]
    fn next_events_takes_the_oldest_in_order_at_most_max() {
        let (hub, mut dispatcher) = EventHub::start(4).unwrap();
        emit_lifecycles(&hub, 0..6);
        assert_eq!(hub.dropped(), 2, "a full queue drops the oldest, as for next_event");
        assert!(hub.next_events(Duration::ZERO, 0).is_empty());
        let first = hub.next_events(Duration::ZERO, 3);
        assert_eq!(deposit_ids(&first), ["dep_2", "dep_3", "dep_4"]);
        assert_eq!(first.iter().map(|r| r.id).collect::<Vec<_>>(), [3, 4, 5]);
        assert_eq!(hub.next_event(Duration::ZERO).unwrap().event.lifecycle().unwrap().id, "dep_5");
        emit_lifecycles(&hub, 6..8);
        assert_eq!(deposit_ids(&hub.next_events(Duration::ZERO, 100)), ["dep_6", "dep_7"]);
        assert_eq!(hub.dropped(), 2, "taking events drops none");
        assert!(dispatcher.stop(&hub, Duration::from_secs(5)));
    }

    #[test]
    fn next_events_waits_for_the_first_event_until_the_timeout() {
        let (hub, mut dispatcher) = EventHub::start(16).unwrap();
        let started = Instant::now();
        assert!(hub.next_events(Duration::from_millis(20), 8).is_empty());
        assert!(started.elapsed() >= Duration::from_millis(20), "it waited the whole timeout");
        let taken = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| hub.next_events(Duration::from_secs(30), 8));
            emit_lifecycles(&hub, 0..1);
            waiter.join().unwrap()
        });
        assert_eq!(deposit_ids(&taken), ["dep_0"], "an event emitted meanwhile wakes the waiter");
        assert!(dispatcher.stop(&hub, Duration::from_secs(5)));
    }

    #[test]
    fn callbacks_run_on_the_dispatcher_and_panics_are_reported() {
        let (hub, mut dispatcher) = EventHub::start(16).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        hub.subscribe(Arc::new(|_: &RecordedEvent| panic!("host bug")));
        let id = hub.subscribe(Arc::new(move |e: &RecordedEvent| {
            assert_eq!(std::thread::current().name(), Some("depositkit-events"));
            sink.lock().unwrap().push(e.event.clone());
        }));
        hub.emit(DepositEvent::StatusChanged(ClientStatus::Ready));
        assert!(dispatcher.stop(&hub, Duration::from_secs(5)));
        assert_eq!(seen.lock().unwrap().len(), 1, "the second callback still ran");
        assert_eq!(hub.callback_panics(), 1);
        assert_eq!(
            hub.next_event(Duration::ZERO).map(|r| r.event),
            Some(DepositEvent::StatusChanged(ClientStatus::Ready))
        );
        match hub.next_event(Duration::ZERO).map(|r| r.event) {
            Some(DepositEvent::Error { kind: ErrorKind::Internal, message }) => {
                assert!(message.contains("panicked: host bug"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(hub.unsubscribe(id));
        assert!(!hub.unsubscribe(id));
    }
}
