//! The store's encoding: a [`Change`] and its recorded events as the contract's rows, and the
//! rows read back as events and as what a client restores.

use super::contract::{
    AttemptRow, ChangeRows, DepositRow, EventRow, OwnerRows, OwnerStore, ResultRow,
};
use super::{Change, Restored, record_from_json};
use crate::deposit::events::{DepositEvent, RecordedEvent};
use crate::describe::quote;
use crate::error::Result;

pub(super) fn change_rows(change: &Change, events: &[RecordedEvent], now: u64) -> ChangeRows {
    let results = change
        .sweep_results
        .iter()
        .map(|r| ("sweep", &r.deposit_id, serde_json::to_string(r)))
        .chain(
            change
                .refund_results
                .iter()
                .map(|r| ("refund", &r.deposit_id, serde_json::to_string(r))),
        );
    ChangeRows {
        now,
        deposits: change
            .records
            .iter()
            .map(|r| DepositRow {
                id: r.id.clone(),
                seq: r.seq,
                state: r.state.to_owned(),
                open: r.open,
                record: r.record.clone(),
            })
            .collect(),
        detector: change.detector.as_ref().map(|s| serde_json::to_string(s).unwrap_or_default()),
        attempts: change
            .attempts
            .iter()
            .map(|a| AttemptRow {
                quote_id: a.quote_id.clone(),
                deposit_id: a.deposit_id.clone(),
                purpose: a.purpose.as_str().to_owned(),
                outcome: a.outcome.map(|o| o.as_str().to_owned()),
                transaction_id: a.transaction_id.clone(),
            })
            .collect(),
        results: results
            .map(|(kind, deposit_id, json)| ResultRow {
                deposit_id: deposit_id.clone(),
                kind: kind.to_owned(),
                result: json.unwrap_or_default(),
            })
            .collect(),
        events: events
            .iter()
            .map(|e| EventRow {
                id: e.id,
                at: e.at,
                kind: e.event.type_name().to_owned(),
                deposit_id: event_deposit_id(&e.event).map(str::to_owned),
                event: e.event.to_json().to_string(),
            })
            .collect(),
    }
}

pub(super) fn decode_events(
    store: &dyn OwnerStore,
    rows: Vec<EventRow>,
) -> Result<Vec<RecordedEvent>> {
    rows.into_iter()
        .map(|row| {
            let what = format!("reading event {}", row.id);
            let value: serde_json::Value = serde_json::from_str(&row.event)
                .map_err(|e| store.unreadable(&what, &e.to_string()))?;
            let event = DepositEvent::from_json(&value)
                .ok_or_else(|| store.unreadable(&what, "an event this version cannot read"))?;
            Ok(RecordedEvent { id: row.id, at: row.at, event })
        })
        .collect()
}

pub(super) fn restore(store: &dyn OwnerStore, rows: OwnerRows) -> Result<Restored> {
    // The account binding is checked by `bind_account`, not restored.
    let mut restored = Restored::default();
    if let Some(json) = rows.detector {
        restored.detector = Some(
            serde_json::from_str(&json)
                .map_err(|e| store.unreadable("reading the watcher snapshot", &e.to_string()))?,
        );
    }
    if let Some(json) = rows.notifications {
        restored.notifications = serde_json::from_str(&json)
            .map_err(|e| store.unreadable("reading the notifications", &e.to_string()))?;
    }
    for row in rows.deposits {
        restored.next_seq = restored.next_seq.max(row.seq + 1);
        if row.open {
            let record = record_from_json(&row.record).map_err(|e| {
                store.unreadable(&format!("reading deposit {}", quote(&row.id)), &e.to_string())
            })?;
            restored.deposits.push(record);
        }
        restored.known_ids.push(row.id);
    }
    for (kind, json) in rows.results {
        let bad = |e: serde_json::Error| store.unreadable("reading a result", &e.to_string());
        match kind.as_str() {
            "sweep" => restored.sweep_results.push(serde_json::from_str(&json).map_err(bad)?),
            _ => restored.refund_results.push(serde_json::from_str(&json).map_err(bad)?),
        }
    }
    // Oldest first, as they were remembered.
    restored.sweep_results.reverse();
    restored.refund_results.reverse();
    Ok(restored)
}

/// The deposit an event is about, for its phase history.
pub(super) fn event_deposit_id(event: &DepositEvent) -> Option<&str> {
    match event {
        DepositEvent::Lifecycle(e) => Some(&e.id),
        DepositEvent::Refund(r) => Some(&r.deposit_id),
        _ => None,
    }
}
