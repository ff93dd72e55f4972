//! `DepositClient`'s events, event log and notifications: subscriptions, the pull queue, replay.

use super::*;

impl DepositClient {
    /// The notification records (spec §2: the deposit's lifecycle event plus `createdAt` and
    /// `updatedAt`), oldest first; empty when `notifications` is not configured. See
    /// [`super::notifications`] for the rules.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn notifications(&self) -> Result<Vec<NotificationRecord>> {
        self.inner.guard(ClientCall::Notifications)?;
        Ok(self.inner.hub.notifications())
    }

    /// Dismisses deposit `deposit_id`'s notification; whether there was one.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn dismiss_notification(&self, deposit_id: &str) -> Result<bool> {
        self.inner.guard(ClientCall::DismissNotification)?;
        Ok(self.inner.hub.dismiss_notification(deposit_id))
    }

    /// Calls `callback` with every record after each change of the notification records, on
    /// the client's delivery lane (a depositkit thread; one call at a time, in order). Remove
    /// it with [`unsubscribe`](DepositClient::unsubscribe).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when `notifications` is not configured;
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn subscribe_notifications(
        &self,
        callback: NotificationsCallback,
    ) -> Result<SubscriptionId> {
        self.inner.guard(ClientCall::SubscribeNotifications)?;
        self.inner.hub.subscribe_notifications(Arc::from(callback)).ok_or_else(|| {
            Error::configuration("notifications are not configured (set the notifications option)")
        })
    }

    /// The notifications configuration as given (`position`, `theme`, `class_name` are for a
    /// host UI), or `None` when notifications are off.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed.
    pub fn notifications_config(&self) -> Result<Option<NotificationsConfig>> {
        self.inner.guard(ClientCall::NotificationsConfig)?;
        Ok(self.inner.config.notifications.clone())
    }

    /// Calls `callback` for every event from now on, on the client's delivery lane (a
    /// depositkit thread of the process-wide pool; one call at a time, in order).
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed (nothing is registered).
    pub fn subscribe(&self, callback: EventCallback) -> Result<SubscriptionId> {
        self.inner.guard(ClientCall::Subscribe)?;
        Ok(self
            .inner
            .hub
            .subscribe(Arc::new(move |recorded: &RecordedEvent| callback(&recorded.event))))
    }

    /// Like [`subscribe`](DepositClient::subscribe), with each event's id in the event log (the
    /// cursor of [`events_since`](DepositClient::events_since)).
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed (nothing is registered).
    pub fn subscribe_recorded(&self, callback: RecordedEventCallback) -> Result<SubscriptionId> {
        self.inner.guard(ClientCall::SubscribeRecorded)?;
        Ok(self.inner.hub.subscribe(Arc::from(callback)))
    }

    /// The events after `cursor` (an event id; 0 for the start), oldest first, at most
    /// `limit`: what a host missed — while it was down, or because its pull queue overflowed.
    /// With a `store_path` every event the client ever emitted is kept, with the same ids
    /// across restarts; without one, the last `event_queue_capacity`.
    ///
    /// A host that must not miss a credit keeps the id of the last event it handled and, after
    /// a restart, handles `events_since(that id)` before new events.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] when events after `cursor` are no longer kept (in memory only);
    /// [`ErrorKind::InvalidArgument`] for a cursor past [`last_event_id`]; [`ErrorKind::Internal`]
    /// when the store cannot be read.
    ///
    /// [`last_event_id`]: DepositClient::last_event_id
    pub fn events_since(&self, cursor: u64, limit: usize) -> Result<Vec<RecordedEvent>> {
        self.inner.guard(ClientCall::EventsSince)?;
        self.inner.hub.store().events_since(cursor, limit)
    }

    /// The id of the last event the client emitted (0: none yet).
    pub fn last_event_id(&self) -> u64 {
        self.inner.hub.store().last_event_id()
    }

    /// Deposit `deposit_id`'s phase history: its lifecycle events and refund updates, oldest
    /// first, with their ids. Complete with a `store_path`; without one, what is still in the
    /// in-memory log.
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] when the store cannot be read.
    pub fn deposit_history(&self, deposit_id: &str) -> Result<Vec<RecordedEvent>> {
        self.inner.guard(ClientCall::DepositHistory)?;
        self.inner.hub.store().deposit_history(deposit_id)
    }

    /// The SQLite file of the client's durable state (`store_path`), if it has one.
    pub fn store_path(&self) -> Option<std::path::PathBuf> {
        self.inner.hub.store().path()
    }

    /// Removes a callback; `false` when `id` is not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.inner.hub.unsubscribe(id)
    }

    /// The oldest queued event, waiting at most `timeout` (zero: do not wait). Events are
    /// queued whether or not callbacks are subscribed; when the queue is full the oldest is
    /// dropped ([`dropped_events`](DepositClient::dropped_events)).
    pub fn next_event(&self, timeout: Duration) -> Option<DepositEvent> {
        self.inner.hub.next_event(timeout).map(|recorded| recorded.event)
    }

    /// [`next_event`](DepositClient::next_event) with the event's id in the event log.
    pub fn next_recorded_event(&self, timeout: Duration) -> Option<RecordedEvent> {
        self.inner.hub.next_event(timeout)
    }

    /// Up to `max` queued events at once, oldest first: waits at most `timeout` for the
    /// first, then takes the events already queued behind it (one lock for all of them).
    /// Empty when none arrived in time or `max` is 0.
    pub fn next_events(&self, timeout: Duration, max: usize) -> Vec<DepositEvent> {
        self.inner.hub.next_events(timeout, max).into_iter().map(|r| r.event).collect()
    }

    /// [`next_events`](DepositClient::next_events) with each event's id in the event log.
    pub fn next_recorded_events(&self, timeout: Duration, max: usize) -> Vec<RecordedEvent> {
        self.inner.hub.next_events(timeout, max)
    }

    /// Events dropped from the pull queue because it was full.
    pub fn dropped_events(&self) -> u64 {
        self.inner.hub.dropped()
    }

    /// Callbacks that panicked so far (each is reported as a [`DepositEvent::Error`]).
    pub fn callback_panics(&self) -> u64 {
        self.inner.hub.callback_panics()
    }
}

/// Dismisses expired notification records when they are due.
pub(super) async fn notifications_timer(hub: Arc<EventHub>) {
    loop {
        let next = hub.expire_notifications(now_ms());
        match next {
            Some(at) => {
                let wait = Duration::from_millis(at.saturating_sub(now_ms()).max(1));
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = hub.notifications_changed() => {}
                }
            }
            None => hub.notifications_changed().await,
        }
    }
}
