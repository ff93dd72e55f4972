//! Events of the deposit client and how they reach the host.
//!
//! [`DepositLifecycleEvent`] is the one event model of a deposit (spec §2). The client also
//! reports status changes, background errors, refund updates and recovery results; all travel
//! as [`DepositEvent`]. The notification store (when configured) takes in every event as it is
//! emitted; its change callbacks run on the same event thread.
//!
//! Delivery, two ways at once:
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
//! An event is in the pull queue and handed to the dispatcher before the operation that caused
//! it returns (for example [`poll_now`](super::DepositClient::poll_now)).

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::dispatch::Lane;
use super::model::{RecoveryResult, RefundResult};
use super::notifications::{NotificationRecord, NotificationStore};
use super::status::ClientStatus;
use super::store::{Change, DepositStore};
use crate::error::ErrorKind;
use crate::onramp::{OnrampEventName, OnrampOrder};
use crate::tokens::TokenType;

/// The phase of a deposit (spec §3 `DepositPhase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DepositPhase {
    /// Found by the watcher.
    Detected,
    /// A sweep attempt started (again at each retry).
    Processing,
    /// Delivered to the destination.
    Credited,
    /// The sweep failed (or its outcome is unknown); the deposit stays in the account.
    Failed,
    /// Worth less than the minimum; it is not swept.
    BelowThreshold,
}

impl DepositPhase {
    /// The spec's spelling (`"below_threshold"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            DepositPhase::Detected => "detected",
            DepositPhase::Processing => "processing",
            DepositPhase::Credited => "credited",
            DepositPhase::Failed => "failed",
            DepositPhase::BelowThreshold => "below_threshold",
        }
    }
}

/// Where a deposit goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventDestination {
    /// Receiving address.
    pub address: String,
    /// Destination chain.
    pub chain_id: u64,
}

/// A deposit at one phase of its life (spec §2). `id` is the same in every phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepositLifecycleEvent {
    /// The deposit's id (see [`deposit_id`](super::deposit_id)).
    pub id: String,
    /// The phase it entered.
    pub phase: DepositPhase,
    /// The deposited token.
    pub token: TokenType,
    /// The source chain.
    pub chain_id: u64,
    /// Human-readable amount of the deposit.
    pub amount: String,
    /// Its USD value at detection.
    #[serde(rename = "amountUSD")]
    pub amount_usd: f64,
    /// Where it goes (the destination at the time of the event).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub destination: Option<EventDestination>,
    /// The delivering transaction (on `credited`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub transaction_id: Option<String>,
    /// A block-explorer link to it (on `credited`, when the chain has an explorer).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub explorer_url: Option<String>,
    /// Why it failed (on `failed`) or why it is below the threshold.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// When the phase was entered, unix milliseconds.
    pub timestamp: u64,
}

/// Everything the client reports.
#[derive(Debug, Clone, PartialEq)]
pub enum DepositEvent {
    /// A deposit entered a phase (`deposit:lifecycle`).
    Lifecycle(DepositLifecycleEvent),
    /// The client's status changed (`status:change`).
    StatusChanged(ClientStatus),
    /// Something failed in the background (a poll, a callback).
    Error {
        /// The error's kind.
        kind: ErrorKind,
        /// What failed and why.
        message: String,
    },
    /// A refund changed status (`refund:update`): pending, processing, then success, failed
    /// or skipped.
    Refund(RefundResult),
    /// One asset of [`recover_funds`](super::DepositClient::recover_funds) is done
    /// (`recovery:result`).
    Recovery(RecoveryResult),
    /// The onramp overlay posted an order event (`onramp:<name>`); `payload` is the widget's
    /// `data` as it was posted.
    Onramp {
        /// Which event.
        name: OnrampEventName,
        /// The widget's order data.
        payload: Value,
    },
    /// An onramp order completed (`onramp:complete`).
    OnrampComplete(OnrampOrder),
}

impl DepositEvent {
    /// The event as JSON: `{"type": "deposit:lifecycle", "payload": {…}}`,
    /// `{"type": "status:change", "payload": "watching"}`,
    /// `{"type": "error", "payload": {"kind": "NetworkError", "code": 600, "message": "…"}}`,
    /// `{"type": "refund:update", "payload": {RefundResult}}`,
    /// `{"type": "recovery:result", "payload": {RecoveryResult}}`,
    /// `{"type": "onramp:order_created", "payload": {…the widget's data…}}` (any
    /// `onramp:<name>`) or `{"type": "onramp:complete", "payload": {OnrampOrder}}`.
    pub fn to_json(&self) -> Value {
        match self {
            DepositEvent::Lifecycle(event) => json!({
                "type": "deposit:lifecycle",
                "payload": serde_json::to_value(event).unwrap_or(Value::Null),
            }),
            DepositEvent::StatusChanged(status) => {
                json!({"type": "status:change", "payload": status.as_str()})
            }
            DepositEvent::Error { kind, message } => json!({
                "type": "error",
                "payload": {"kind": kind.class_name(), "code": kind.code(), "message": message},
            }),
            DepositEvent::Refund(result) => json!({
                "type": "refund:update",
                "payload": serde_json::to_value(result).unwrap_or(Value::Null),
            }),
            DepositEvent::Recovery(result) => json!({
                "type": "recovery:result",
                "payload": serde_json::to_value(result).unwrap_or(Value::Null),
            }),
            DepositEvent::Onramp { name, payload } => {
                json!({"type": name.type_name(), "payload": payload})
            }
            DepositEvent::OnrampComplete(order) => {
                json!({"type": "onramp:complete", "payload": order.to_json()})
            }
        }
    }

    /// The event's `type` in [`to_json`](DepositEvent::to_json).
    pub const fn type_name(&self) -> &'static str {
        match self {
            DepositEvent::Lifecycle(_) => "deposit:lifecycle",
            DepositEvent::StatusChanged(_) => "status:change",
            DepositEvent::Error { .. } => "error",
            DepositEvent::Refund(_) => "refund:update",
            DepositEvent::Recovery(_) => "recovery:result",
            DepositEvent::Onramp { name, .. } => name.type_name(),
            DepositEvent::OnrampComplete(_) => "onramp:complete",
        }
    }

    /// The completed onramp order, if this is `onramp:complete`.
    pub fn onramp_order(&self) -> Option<&OnrampOrder> {
        match self {
            DepositEvent::OnrampComplete(order) => Some(order),
            _ => None,
        }
    }

    /// The refund update, if this is one.
    pub fn refund(&self) -> Option<&RefundResult> {
        match self {
            DepositEvent::Refund(result) => Some(result),
            _ => None,
        }
    }

    /// The recovery result, if this is one.
    pub fn recovery(&self) -> Option<&RecoveryResult> {
        match self {
            DepositEvent::Recovery(result) => Some(result),
            _ => None,
        }
    }

    /// The lifecycle event, if this is one.
    pub fn lifecycle(&self) -> Option<&DepositLifecycleEvent> {
        match self {
            DepositEvent::Lifecycle(event) => Some(event),
            _ => None,
        }
    }

    /// The event back from its [`to_json`](DepositEvent::to_json) form; `None` for a shape
    /// this version does not know (the event log of a newer depositkit).
    pub fn from_json(value: &Value) -> Option<DepositEvent> {
        let kind = value.get("type")?.as_str()?;
        let payload = value.get("payload")?;
        let parse = |v: &Value| v.clone();
        Some(match kind {
            "deposit:lifecycle" => {
                DepositEvent::Lifecycle(serde_json::from_value(parse(payload)).ok()?)
            }
            "status:change" => {
                DepositEvent::StatusChanged(serde_json::from_value(parse(payload)).ok()?)
            }
            "error" => {
                let code = payload.get("code")?.as_u64()?;
                DepositEvent::Error {
                    kind: ErrorKind::ALL.into_iter().find(|k| u64::from(k.code()) == code)?,
                    message: payload.get("message")?.as_str()?.to_owned(),
                }
            }
            "refund:update" => DepositEvent::Refund(serde_json::from_value(parse(payload)).ok()?),
            "recovery:result" => {
                DepositEvent::Recovery(serde_json::from_value(parse(payload)).ok()?)
            }
            "onramp:complete" => {
                DepositEvent::OnrampComplete(serde_json::from_value(parse(payload)).ok()?)
            }
            other => {
                let name = other.strip_prefix("onramp:")?.parse::<OnrampEventName>().ok()?;
                DepositEvent::Onramp { name, payload: payload.clone() }
            }
        })
    }
}

/// An event as the client's event log holds it: `id` orders the client's events (1, 2, …,
/// never reused; with a `store_path` they continue across restarts) and is the cursor of
/// [`events_since`](super::DepositClient::events_since); `at` is when it was emitted (unix
/// milliseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    /// The event's id in the client's log.
    pub id: u64,
    /// When it was emitted, unix milliseconds.
    pub at: u64,
    /// The event.
    pub event: DepositEvent,
}

impl RecordedEvent {
    /// [`DepositEvent::to_json`] plus `"id"` and `"at"`.
    pub fn to_json(&self) -> Value {
        let mut json = self.event.to_json();
        json["id"] = json!(self.id);
        json["at"] = json!(self.at);
        json
    }
}

/// Identifies a subscription, for [`unsubscribe`](super::DepositClient::unsubscribe).
pub type SubscriptionId = u64;

/// A host callback for every event.
pub type EventCallback = Box<dyn Fn(&DepositEvent) + Send + Sync>;

/// A host callback for every event with its id in the event log.
pub type RecordedEventCallback = Box<dyn Fn(&RecordedEvent) + Send + Sync>;

type SharedCallback = Arc<dyn Fn(&RecordedEvent) + Send + Sync>;

/// A host callback for changes of the notification records: called with every record, oldest
/// first, after each change.
pub type NotificationsCallback = Box<dyn Fn(&[NotificationRecord]) + Send + Sync>;

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
        let (recorded, error) = self.store.commit(change, crate::deposit::client::now_ms());
        for event in recorded {
            self.publish(event);
        }
        if let Some(error) = error {
            let report = DepositEvent::Error {
                kind: ErrorKind::Internal,
                message: format!("the client's state was not saved: {}", error.message()),
            };
            // Its own write is not checked again: it would fail the same way.
            let (recorded, _) =
                self.store.commit(Change::events(vec![report]), crate::deposit::client::now_ms());
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
            if let Err(error) =
                self.store.save_notifications(&records, crate::deposit::client::now_ms())
            {
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
        let (recorded, _) =
            self.store.commit(Change::events(vec![event]), crate::deposit::client::now_ms());
        for event in recorded {
            self.enqueue(event);
        }
    }

    fn enqueue(&self, event: RecordedEvent) {
        let mut queue = lock(&self.queue);
        while queue.events.len() >= self.capacity {
            queue.events.pop_front();
            queue.dropped += 1;
        }
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
        let deadline = Instant::now().checked_add(timeout);
        let mut queue = lock(&self.queue);
        loop {
            if let Some(event) = queue.events.pop_front() {
                return Some(event);
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

    fn lifecycle(id: &str, phase: DepositPhase) -> DepositLifecycleEvent {
        DepositLifecycleEvent {
            id: id.into(),
            phase,
            token: TokenType::USDC,
            chain_id: 8453,
            amount: "1.5".into(),
            amount_usd: 1.5,
            destination: Some(EventDestination { address: "0xabc".into(), chain_id: 42161 }),
            transaction_id: None,
            explorer_url: None,
            error: None,
            timestamp: 7,
        }
    }

    #[test]
    fn lifecycle_json_is_camel_case_without_absent_fields() {
        let json = serde_json::to_value(lifecycle("dep_1", DepositPhase::BelowThreshold)).unwrap();
        assert_eq!(json["phase"], "below_threshold");
        assert_eq!(json["amountUSD"], 1.5);
        assert_eq!(json["chainId"], 8453);
        assert_eq!(json["destination"]["chainId"], 42161);
        assert!(json.get("transactionId").is_none());
        let event = DepositEvent::Error { kind: ErrorKind::Network, message: "down".into() };
        assert_eq!(event.to_json()["payload"]["kind"], "NetworkError");
        assert_eq!(DepositEvent::StatusChanged(ClientStatus::Ready).to_json()["payload"], "ready");
    }

    #[test]
    fn refund_and_recovery_events_have_their_own_types() {
        use crate::deposit::model::{
            RecoveryResult, RecoveryStatus, RefundReason, RefundResult, RefundStatus,
        };
        // The existing variants keep their shape.
        let json = DepositEvent::Lifecycle(lifecycle("dep_1", DepositPhase::Credited)).to_json();
        assert_eq!(json["type"], "deposit:lifecycle");
        assert_eq!(json["payload"]["id"], "dep_1");
        let refund = RefundResult {
            deposit_id: "dep_1".into(),
            token: TokenType::USDC,
            source_chain_id: 8453,
            amount: "1.5".into(),
            amount_usd: 1.5,
            status: RefundStatus::Skipped,
            reason: RefundReason::AddressTypeMismatch,
            tx_hash: None,
            error: Some("no".into()),
            refunded_to: None,
            refunded_to_sender: None,
            attempts: 1,
            delivered_amount: None,
            explorer_url: None,
            quote_id: None,
        };
        let event = DepositEvent::Refund(refund.clone());
        assert_eq!(event.type_name(), "refund:update");
        let json = event.to_json();
        assert_eq!(json["type"], "refund:update");
        let payload = &json["payload"];
        assert_eq!(payload["depositId"], "dep_1");
        assert_eq!(payload["status"], "skipped");
        assert_eq!(payload["reason"], "address_type_mismatch");
        assert_eq!(payload["attempts"], 1);
        assert!(payload.get("txHash").is_none() && payload.get("refundedTo").is_none());
        assert_eq!(event.refund(), Some(&refund));
        let recovery = RecoveryResult {
            token: TokenType::ETH,
            chain_id: 1,
            amount: "0.1".into(),
            amount_usd: 250.0,
            status: RecoveryStatus::Success,
            error: None,
            tx_hash: Some("0xab".into()),
            raw_amount: "100000000000000000".into(),
            delivered: None,
        };
        let json = DepositEvent::Recovery(recovery).to_json();
        assert_eq!(json["type"], "recovery:result");
        assert_eq!(json["payload"]["amountUSD"], 250.0);
        assert_eq!(json["payload"]["txHash"], "0xab");
        assert_eq!(json["payload"]["rawAmount"], "100000000000000000");
    }

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
