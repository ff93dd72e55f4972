//! Notifications without a UI: the headless equivalent of the reference's
//! `useDepositNotifications` (spec §2 `DepositNotificationsProps`).
//!
//! A [`NotificationRecord`] is a deposit's latest [`DepositLifecycleEvent`] plus `createdAt`
//! and `updatedAt` (unix milliseconds) — one record per deposit id, updated in place as the
//! deposit moves through its phases, and carrying the deposit's latest refund update when it
//! has one. The store keeps at most `max` records (a new deposit beyond that drops the oldest
//! record); a record in a terminal state is dismissed `durationMs` after its last update
//! (`0`: never). Terminal means phase `credited`, `failed` or `below_threshold`, unless a refund
//! of the deposit is still pending or processing (a failed deposit that is being refunded
//! stays until its refund ends). [`NotificationStore::dismiss`] removes a record at once; a
//! later event of the same deposit creates a new one.
//!
//! `position`, `theme` and `className` mean nothing here: they are kept and returned
//! ([`DepositClient::notifications_config`](super::DepositClient::notifications_config)) for a
//! host UI to use. `renderItem` (a React render function) has no headless equivalent: a host
//! renders the records itself.
//!
//! The store is plain data driven by an explicit clock (`now` arguments), so its rules are
//! tested without waiting; the client feeds it every event it emits and runs a timer task for
//! the expiries.

use super::config::NotificationsConfig;
use super::events::{DepositEvent, DepositLifecycleEvent};
use super::model::RefundResult;

// The record is part of the event model (`events.rs`); the store of records is here.
pub use super::events::NotificationRecord;

#[derive(Debug, Clone)]
struct Entry {
    record: NotificationRecord,
    expires_at: Option<u64>,
}

/// The notification records of one client.
#[derive(Debug, Clone)]
pub struct NotificationStore {
    config: NotificationsConfig,
    /// Oldest first.
    entries: Vec<Entry>,
}

impl NotificationStore {
    /// An empty store with `config`'s `max` and `duration_ms`.
    pub fn new(config: NotificationsConfig) -> Self {
        NotificationStore { config, entries: Vec::new() }
    }

    /// The configuration, as given.
    pub fn config(&self) -> &NotificationsConfig {
        &self.config
    }

    /// The records, oldest first.
    pub fn records(&self) -> Vec<NotificationRecord> {
        self.entries.iter().map(|e| e.record.clone()).collect()
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Takes in any client event (lifecycle and refund updates count); whether the records
    /// changed.
    pub fn on_event(&mut self, event: &DepositEvent, now: u64) -> bool {
        match event {
            DepositEvent::Lifecycle(lifecycle) => self.on_lifecycle(lifecycle, now),
            DepositEvent::Refund(refund) => self.on_refund(refund, now),
            _ => false,
        }
    }

    /// A lifecycle event: updates the deposit's record in place, or creates one (dropping the
    /// oldest when `max` would be exceeded). Always a change.
    pub fn on_lifecycle(&mut self, event: &DepositLifecycleEvent, now: u64) -> bool {
        match self.position(&event.id) {
            Some(i) => {
                let entry = &mut self.entries[i];
                entry.record.event = event.clone();
                entry.record.updated_at = now;
            }
            None => {
                self.entries.push(Entry {
                    record: NotificationRecord {
                        event: event.clone(),
                        created_at: now,
                        updated_at: now,
                        refund: None,
                    },
                    expires_at: None,
                });
                let max = usize::try_from(self.config.max.max(1)).unwrap_or(usize::MAX);
                while self.entries.len() > max {
                    self.entries.remove(0);
                }
            }
        }
        if let Some(i) = self.position(&event.id) {
            self.schedule(i);
        }
        true
    }

    /// A refund update: attached to the deposit's record when there is one (a refund never
    /// creates a record: the deposit's lifecycle events do). Whether the records changed.
    pub fn on_refund(&mut self, refund: &RefundResult, now: u64) -> bool {
        let Some(i) = self.position(&refund.deposit_id) else { return false };
        let entry = &mut self.entries[i];
        entry.record.refund = Some(refund.clone());
        entry.record.updated_at = now;
        self.schedule(i);
        true
    }

    /// Removes deposit `id`'s record; whether there was one.
    pub fn dismiss(&mut self, id: &str) -> bool {
        match self.position(id) {
            Some(i) => {
                self.entries.remove(i);
                true
            }
            None => false,
        }
    }

    /// Removes the records whose auto-dismiss time is `now` or earlier; whether any was.
    pub fn expire(&mut self, now: u64) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.expires_at.is_none_or(|at| at > now));
        self.entries.len() != before
    }

    /// When the next record is due to be auto-dismissed, unix milliseconds.
    pub fn next_expiry(&self) -> Option<u64> {
        self.entries.iter().filter_map(|e| e.expires_at).min()
    }

    /// Puts back records saved by an earlier run of the client (`store.rs`), oldest first,
    /// replacing none that exist: their auto-dismiss times follow from `updatedAt` as before.
    pub fn restore(&mut self, records: Vec<NotificationRecord>) {
        for record in records {
            if self.position(&record.event.id).is_some() {
                continue;
            }
            self.entries.push(Entry { record, expires_at: None });
            let i = self.entries.len() - 1;
            self.schedule(i);
        }
        let max = usize::try_from(self.config.max.max(1)).unwrap_or(usize::MAX);
        while self.entries.len() > max {
            self.entries.remove(0);
        }
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.record.event.id == id)
    }

    fn schedule(&mut self, i: usize) {
        let duration = self.config.duration_ms;
        let entry = &mut self.entries[i];
        entry.expires_at = (duration > 0 && entry.record.is_terminal())
            .then(|| entry.record.updated_at.saturating_add(duration));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deposit::events::DepositPhase;
    use crate::deposit::model::{RefundReason, RefundStatus};
    use crate::tokens::TokenType;

    fn event(id: &str, phase: DepositPhase) -> DepositLifecycleEvent {
        DepositLifecycleEvent {
            id: id.into(),
            phase,
            token: TokenType::USDC,
            chain_id: 8453,
            amount: "2".into(),
            amount_usd: 2.0,
            destination: None,
            transaction_id: None,
            explorer_url: None,
            error: None,
            timestamp: 0,
            confirmations: None,
            required_confirmations: None,
            source_tx_hash: None,
        }
    }

    fn store(max: u32, duration_ms: u64) -> NotificationStore {
        NotificationStore::new(NotificationsConfig { max, duration_ms, ..Default::default() })
    }

    fn ids(store: &NotificationStore) -> Vec<String> {
        store.records().into_iter().map(|r| r.event.id).collect()
    }

    fn refund(id: &str, status: RefundStatus) -> RefundResult {
        RefundResult {
            deposit_id: id.into(),
            token: TokenType::USDC,
            source_chain_id: 8453,
            amount: "2".into(),
            amount_usd: 2.0,
            status,
            reason: RefundReason::SweepFailed,
            tx_hash: None,
            error: None,
            refunded_to: None,
            refunded_to_sender: None,
            attempts: 0,
            delivered_amount: None,
            explorer_url: None,
            quote_id: None,
        }
    }

    #[test]
    fn one_record_per_deposit_updated_in_place() {
        let mut s = store(5, 6000);
        assert!(s.on_lifecycle(&event("a", DepositPhase::Detected), 100));
        assert!(s.on_lifecycle(&event("b", DepositPhase::Detected), 150));
        assert!(s.on_lifecycle(&event("a", DepositPhase::Processing), 200));
        let records = s.records();
        assert_eq!(ids(&s), ["a", "b"], "updates keep the order");
        assert_eq!(records[0].event.phase, DepositPhase::Processing);
        assert_eq!((records[0].created_at, records[0].updated_at), (100, 200));
        assert_eq!(s.next_expiry(), None, "nothing terminal yet");
        let json = serde_json::to_value(&records[0]).unwrap();
        assert_eq!(json["id"], "a");
        assert_eq!(json["phase"], "processing");
        assert_eq!(json["createdAt"], 100);
        assert_eq!(json["updatedAt"], 200);
        assert!(json.get("refund").is_none());
    }

    #[test]
    fn at_most_max_records_the_oldest_dropped() {
        let mut s = store(3, 0);
        for (i, id) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            s.on_lifecycle(&event(id, DepositPhase::Detected), i as u64);
        }
        assert_eq!(ids(&s), ["c", "d", "e"]);
        // Updating an existing record never drops another.
        s.on_lifecycle(&event("c", DepositPhase::Credited), 10);
        assert_eq!(ids(&s), ["c", "d", "e"]);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn terminal_records_expire_after_duration_ms() {
        let mut s = store(5, 6000);
        s.on_lifecycle(&event("a", DepositPhase::Detected), 0);
        s.on_lifecycle(&event("a", DepositPhase::Credited), 1000);
        s.on_lifecycle(&event("b", DepositPhase::Processing), 1500);
        s.on_lifecycle(&event("c", DepositPhase::BelowThreshold), 2000);
        assert_eq!(s.next_expiry(), Some(7000));
        assert!(!s.expire(6999), "exactly at the deadline it is still shown");
        assert!(s.expire(7000));
        assert_eq!(ids(&s), ["b", "c"]);
        assert_eq!(s.next_expiry(), Some(8000));
        assert!(s.expire(9000));
        assert_eq!(ids(&s), ["b"], "non-terminal records never expire");
        assert!(!s.expire(u64::MAX));
    }

    #[test]
    fn duration_zero_never_expires() {
        let mut s = store(5, 0);
        s.on_lifecycle(&event("a", DepositPhase::Failed), 0);
        assert_eq!(s.next_expiry(), None);
        assert!(!s.expire(u64::MAX));
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn dismiss_and_recreate() {
        let mut s = store(5, 6000);
        s.on_lifecycle(&event("a", DepositPhase::Detected), 0);
        assert!(s.dismiss("a"));
        assert!(!s.dismiss("a"));
        assert!(s.is_empty());
        s.on_lifecycle(&event("a", DepositPhase::Processing), 50);
        let r = &s.records()[0];
        assert_eq!((r.created_at, r.updated_at), (50, 50));
    }

    #[test]
    fn a_refund_in_progress_keeps_a_failed_record() {
        let mut s = store(5, 1000);
        s.on_lifecycle(&event("a", DepositPhase::Failed), 0);
        assert_eq!(s.next_expiry(), Some(1000));
        assert!(s.on_refund(&refund("a", RefundStatus::Pending), 10));
        assert_eq!(s.next_expiry(), None, "pending refund: not terminal");
        s.on_refund(&refund("a", RefundStatus::Processing), 20);
        assert!(!s.expire(5000));
        s.on_refund(&refund("a", RefundStatus::Success), 30);
        assert_eq!(s.next_expiry(), Some(1030));
        assert_eq!(s.records()[0].refund.as_ref().unwrap().status, RefundStatus::Success);
        // Refund updates of an unknown deposit create nothing.
        assert!(!s.on_refund(&refund("zzz", RefundStatus::Pending), 40));
        assert!(s.expire(1030));
        assert!(s.is_empty());
    }

    #[test]
    fn other_events_are_ignored() {
        let mut s = store(5, 1000);
        let status = DepositEvent::StatusChanged(crate::deposit::ClientStatus::Ready);
        assert!(!s.on_event(&status, 0));
        assert!(s.on_event(&DepositEvent::Lifecycle(event("a", DepositPhase::Detected)), 0));
    }
}
