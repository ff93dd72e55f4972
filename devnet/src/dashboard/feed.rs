//! The dashboard's activity feed: the last [`CAPACITY`] events, numbered in the order devnet
//! appended them. What the database records (transfers, quotes, sends) is tailed from it by
//! [`Activity::sync`], so every way money moves is seen — the admin endpoints, an in-process
//! `Devnet`, the chain-backed observations, the Particle JSON-RPC; what it does not record (a
//! refused send, an injected fault that fired) is pushed by the request that saw it
//! ([`Activity::push`]). Watchers wait on [`Activity::subscribe`].

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::{Value, json};
use tokio::sync::watch;

use depositkit_core::{TokenType, U256};

use super::attribution::Attribution;
use super::events::{history_event, quote_event};
use crate::error::Result;
use crate::services::api::ApiError;
use crate::store::Store;
use crate::time;

/// How many events the feed keeps (the oldest go first).
pub const CAPACITY: usize = 5000;
/// How many rows of each table one read of the store takes.
const PAGE: u32 = 500;

/// The feed of one server (`Services::activity`).
#[derive(Debug)]
pub struct Activity {
    events: Mutex<Events>,
    /// What was read of the store so far; held while reading, so that two readers never append
    /// the same row twice.
    reader: Mutex<Reader>,
    /// The number of the last event appended.
    changed: watch::Sender<u64>,
    /// The server is shutting down: streams end.
    closed: AtomicBool,
}

/// The positions in the store's history and quotes read so far, and which deposit each quote
/// is for.
#[derive(Debug, Default)]
struct Reader {
    history: i64,
    quotes: i64,
    attribution: Attribution,
}

#[derive(Debug, Default)]
struct Events {
    list: VecDeque<Value>,
    last: u64,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            events: Mutex::default(),
            reader: Mutex::default(),
            changed: watch::channel(0).0,
            closed: AtomicBool::new(false),
        }
    }
}

impl Activity {
    /// Appends `event` (a JSON object; `at` is set to now when missing).
    pub fn push(&self, mut event: Value) {
        if event.get("at").is_none_or(Value::is_null) {
            event["at"] = json!(time::now_ms());
        }
        self.append(vec![event]);
    }

    /// Appends what the store recorded since the last call, oldest first. Blocking.
    ///
    /// # Errors
    /// Database failures (nothing is appended then).
    pub fn sync(&self, store: &Store) -> Result<()> {
        let mut reader = self.reader();
        self.sync_locked(store, &mut reader)
    }

    /// Records that the service refused the send of quote `quote_id` (`services.activity` after
    /// `crate::dashboard::refused_send`): the deposit's attempt failed, no money moved. Blocking.
    ///
    /// # Errors
    /// Database failures (the event is still appended).
    pub fn send_refused(&self, store: &Store, quote_id: &str, error: &ApiError) -> Result<()> {
        let mut reader = self.reader();
        let synced = self.sync_locked(store, &mut reader);
        let deposit_id = reader.attribution.settled(quote_id, false);
        self.push(json!({
            "kind": "send_refused",
            "phase": "failed",
            "quoteId": quote_id,
            "depositId": deposit_id,
            "status": error.status.as_u16(),
            "code": error.code,
            "error": error.message,
        }));
        synced
    }

    fn sync_locked(&self, store: &Store, reader: &mut Reader) -> Result<()> {
        loop {
            let history = store.history_after(reader.history, PAGE)?;
            let quotes = store.quotes_after(reader.quotes, PAGE)?;
            let full = history.len() == PAGE as usize || quotes.len() == PAGE as usize;
            if let Some(last) = history.last() {
                reader.history = last.seq;
            }
            if let Some(last) = quotes.last() {
                reader.quotes = last.seq;
            }
            // Attributed in the order the store recorded them.
            let mut new: Vec<Value> = quotes.iter().filter_map(quote_event).collect();
            new.extend(history.iter().map(history_event));
            // In one millisecond: a transfer, then the quote that spends it, then the send.
            let rank = |event: &Value| match event["kind"].as_str() {
                Some("deposit") => 0,
                Some("quote") => 1,
                _ => 2,
            };
            new.sort_by_key(|event| (event["at"].as_i64().unwrap_or_default(), rank(event)));
            for event in &mut new {
                attribute(&mut reader.attribution, event);
            }
            if !new.is_empty() {
                self.append(new);
            }
            if !full {
                return Ok(());
            }
        }
    }

    /// The events numbered above `after`, oldest first (all that are kept when older ones
    /// were dropped).
    pub fn since(&self, after: u64) -> Vec<Value> {
        let events = self.lock();
        events
            .list
            .iter()
            .filter(|e| e["seq"].as_u64().is_some_and(|s| s > after))
            .cloned()
            .collect()
    }

    /// A receiver of the number of the last event, changed at every append (and at
    /// [`Activity::close`]).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Ends the streams that follow the feed: the server is shutting down, and an open page
    /// must not hold its graceful shutdown for the whole grace period.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.changed.send_modify(|_| {});
    }

    /// Whether [`Activity::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn append(&self, new: Vec<Value>) {
        let mut events = self.lock();
        for mut event in new {
            events.last += 1;
            event["seq"] = json!(events.last);
            events.list.push_back(event);
        }
        while events.list.len() > CAPACITY {
            events.list.pop_front();
        }
        self.changed.send_replace(events.last);
    }

    fn lock(&self) -> MutexGuard<'_, Events> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn reader(&self) -> MutexGuard<'_, Reader> {
        self.reader.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Sets `depositId` (and `covers`) of an event read from the store: see [`Attribution`].
fn attribute(attribution: &mut Attribution, event: &mut Value) {
    let line = |event: &Value, side: Option<&str>| -> Option<(String, u64, TokenType, U256)> {
        let at = side.map_or(event, |side| &event[side]);
        Some((
            event["accountId"].as_str()?.to_owned(),
            at["chainId"].as_u64()?,
            at["token"].as_str()?.parse().ok()?,
            U256::from_str_radix(at["rawAmount"].as_str()?, 10).ok()?,
        ))
    };
    match event["kind"].as_str() {
        Some("deposit") => {
            let received = event["receivedBefore"].as_str().zip(event["receivedAfter"].as_str());
            if let (Some((account, chain, token, _)), Some((before, after))) =
                (line(event, None), received)
                && let (Ok(before), Ok(after)) =
                    (U256::from_str_radix(before, 10), U256::from_str_radix(after, 10))
            {
                event["depositId"] =
                    json!(attribution.received((account, chain, token), before, after));
            }
        }
        Some("quote") => {
            let given = event["depositId"].as_str().map(str::to_owned);
            let quote_id = event["quoteId"].as_str().unwrap_or_default().to_owned();
            if let Some((account, chain, token, raw)) = line(event, Some("source"))
                && let Some(attributed) =
                    attribution.quoted(&quote_id, (account, chain, token), raw, given.as_deref())
            {
                event["depositId"] = json!(attributed.deposit_id);
                if !attributed.covers.is_empty() {
                    event["covers"] = json!(attributed.covers);
                }
            }
        }
        Some("sweep" | "refund") => {
            let quote_id = event["quoteId"].as_str().unwrap_or_default();
            let settled = attribution.settled(quote_id, event["phase"] != "failed");
            if event["depositId"].is_null() {
                event["depositId"] = json!(settled);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{TempDb, ua_account};
    use crate::store::{Credit, Store};
    use depositkit_core::{TokenType, U256};

    #[test]
    fn the_store_is_tailed_once_and_pushed_events_join_in_order() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let account = store.insert_ua_account(&ua_account()).unwrap();
        let activity = Activity::default();
        let mut changes = activity.subscribe();
        activity.sync(&store).unwrap();
        assert!(activity.since(0).is_empty());
        store
            .credit(&Credit {
                address: &account.evm_address,
                chain_id: 8453,
                token: TokenType::USDC,
                raw_amount: U256::from(5_000_000u64),
                sender: None,
                price_usd: 1.0,
            })
            .unwrap();
        activity.sync(&store).unwrap();
        activity.sync(&store).unwrap();
        activity.push(json!({ "kind": "fault", "service": "ua" }));
        let events = activity.since(0);
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(
            (events[0]["seq"].as_u64(), events[0]["kind"].as_str()),
            (Some(1), Some("deposit"))
        );
        assert_eq!(events[0]["amount"], "5");
        assert_eq!(
            (events[1]["seq"].as_u64(), events[1]["kind"].as_str()),
            (Some(2), Some("fault"))
        );
        assert!(events[1]["at"].as_i64().is_some());
        assert_eq!(activity.since(1).len(), 1);
        assert!(changes.has_changed().unwrap());
        assert_eq!(*changes.borrow_and_update(), 2);
    }

    #[test]
    fn the_oldest_events_go_first() {
        let activity = Activity::default();
        for n in 0..CAPACITY + 3 {
            activity.push(json!({ "kind": "fault", "n": n }));
        }
        let events = activity.since(0);
        assert_eq!(events.len(), CAPACITY);
        assert_eq!(events[0]["seq"], 4);
    }
}
