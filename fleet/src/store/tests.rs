//! A starting client's held events, on a real PostgreSQL server (`TestDatabase`): held until
//! the start ends, then written in one transaction; a write of rows, or a read of the log,
//! takes them first, in order.

use depositkit_core::deposit::store_contract::{ChangeRows, DepositRow, EventRow, OwnerStore};
use depositkit_server::testing::TestDatabase;

use super::PgOwnerStore;
use crate::db::Db;
use crate::lease::{LeaseSettings, Member};
use crate::owners::{self, OwnerOptions};

const OWNER: &str = "0x00000000000000000000000000000000000000e1";

fn events(ids: std::ops::RangeInclusive<u64>) -> ChangeRows {
    let events = ids
        .map(|id| EventRow {
            id,
            at: id,
            kind: "status:change".to_owned(),
            deposit_id: None,
            event: format!("{{\"n\":{id}}}"),
        })
        .collect();
    ChangeRows { now: 1, events, ..ChangeRows::default() }
}

/// The owner's stored events: (id, the transaction that wrote it).
fn stored(db: &Db) -> Vec<(i64, String)> {
    let db2 = db.clone();
    db.block_on(async move {
        let client = db2.client().await?;
        let rows = client
            .query("SELECT id, tx::text FROM dk_events WHERE owner = $1 ORDER BY id", &[&OWNER])
            .await
            .map_err(crate::error::pg)?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    })
    .unwrap()
}

fn held_store(db: &Db) -> PgOwnerStore {
    let db2 = db.clone();
    let (node, fence) = db
        .block_on(async move {
            owners::add(&db2, OWNER, &OwnerOptions::default()).await?;
            let member = Member::join(db2, "held", LeaseSettings::default()).await?;
            let fence = member.balance().await?.claimed[0].fence;
            Ok((member.node_id().to_owned(), fence))
        })
        .unwrap();
    PgOwnerStore::new(db.clone(), OWNER, &node, fence)
}

#[test]
fn a_starts_events_are_held_then_written_in_one_transaction_in_order() {
    let database = TestDatabase::create();
    let db = Db::connect(database.url(), "store-test", 4).unwrap();
    let store = held_store(&db);
    let start = store.hold_start_events();
    store.write(&events(1..=2)).unwrap();
    store.write(&events(3..=3)).unwrap();
    assert!(stored(&db).is_empty(), "held, not written yet");
    start.finish();
    let written = stored(&db);
    assert_eq!(written.iter().map(|w| w.0).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(written.iter().all(|w| w.1 == written[0].1), "one transaction: {written:?}");
    // Once finished, a write goes out at once, in a transaction of its own.
    store.write(&events(4..=4)).unwrap();
    let written = stored(&db);
    assert_eq!(written.len(), 4);
    assert_ne!(written[3].1, written[0].1);
    assert_eq!(store.last_event_id().unwrap(), 4);
}

#[test]
fn a_write_of_rows_or_a_read_of_the_log_takes_the_held_events_first() {
    let database = TestDatabase::create();
    let db = Db::connect(database.url(), "store-test", 4).unwrap();
    let store = held_store(&db);
    let start = store.hold_start_events();
    store.write(&events(1..=2)).unwrap();
    let mut with_rows = events(3..=3);
    with_rows.deposits.push(DepositRow {
        id: "dep-1".to_owned(),
        seq: 1,
        state: "detected".to_owned(),
        open: true,
        record: "{}".to_owned(),
    });
    store.write(&with_rows).unwrap();
    let written = stored(&db);
    assert_eq!(written.iter().map(|w| w.0).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(written.iter().all(|w| w.1 == written[0].1), "with the rows: {written:?}");
    start.finish();
    assert_eq!(stored(&db).len(), 3, "nothing left to write");

    // Held again (a restart): a read of the log writes what is held before it reads.
    let again = store.hold_start_events();
    store.write(&events(4..=5)).unwrap();
    let read = store.events_after(3, 10).unwrap();
    assert_eq!(read.iter().map(|e| e.id).collect::<Vec<_>>(), [4, 5]);
    store.write(&events(6..=6)).unwrap();
    assert_eq!(store.last_event_id().unwrap(), 6, "the last event id counts what is held");
    again.finish();
    assert_eq!(stored(&db).len(), 6);
}
