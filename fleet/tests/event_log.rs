//! The one event log across owners on a real PostgreSQL: commit order, a cursor that resumes,
//! no event skipped when it commits late, transaction ids ordered as numbers (not as their
//! text), readers woken by new events, cursors of another cluster refused.

use std::time::Duration;

use depositkit_core::deposit::store_contract::OwnerStore;
use depositkit_fleet::{EventCursor, Fleet, FleetError, LeaseSettings, OwnerOptions};
use depositkit_server::testing::TestDatabase;
use support::{balance, event, owner};

mod support;

/// `(owner, id)` of each event.
fn keys(events: &[depositkit_fleet::FleetEvent]) -> Vec<(String, u64)> {
    events.iter().map(|e| (e.owner.clone(), e.id)).collect()
}

#[test]
fn readers_never_skip_a_late_commit_and_resume_from_their_cursor() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    for n in [1, 2] {
        fleet.add_owner(&owner(n), OwnerOptions::default()).unwrap();
    }
    let member = fleet.join("log", LeaseSettings::default()).unwrap();
    let mut held = balance(&fleet, &member);
    held.sort_by(|a, b| a.owner.cmp(&b.owner));
    let (one, two) = (fleet.store(&member, &held[0]), fleet.store(&member, &held[1]));
    one.write(&event(1)).unwrap();

    // A transaction that inserted an event of owner 2 and has not committed yet.
    let url = database.url().to_owned();
    let (late, driver) = fleet
        .run(async move {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .map_err(|e| FleetError::Postgres(e.to_string()))?;
            let driver = tokio::spawn(connection);
            client
                .batch_execute(
                    "BEGIN; INSERT INTO dk_events (owner, id, at, type, event) \
                     VALUES ('0x0000000000000000000000000000000000000002', 100, 0, 'late', '{}')",
                )
                .await
                .map_err(|e| FleetError::Postgres(e.to_string()))?;
            Ok((client, driver))
        })
        .unwrap();
    // Meanwhile owner 1 commits more.
    one.write(&event(2)).unwrap();
    let mut reader = fleet.event_reader(EventCursor::START);
    // Waiting, not at once: another transaction of the fleet's own (the member's lease work)
    // that began before owner 1's first event committed holds it back until it ends, as it
    // must; the open transaction below holds back everything after it for as long as it is open.
    let first = reader.read(100, Duration::from_secs(5)).unwrap();
    assert_eq!(keys(&first), vec![(owner(1), 1)], "nothing past the open transaction");
    let saved = reader.cursor().to_string();

    fleet
        .run(async move {
            late.batch_execute("COMMIT").await.map_err(|e| FleetError::Postgres(e.to_string()))?;
            drop(late);
            let _ = driver.await;
            Ok(())
        })
        .unwrap();
    two.write(&event(1)).unwrap();
    // Read until all three have come: a transaction of a concurrent test elsewhere on the
    // cluster may hold back the later two for a moment after the late commit is readable.
    let mut rest = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while rest.len() < 3 && std::time::Instant::now() < deadline {
        rest.extend(reader.read(100, Duration::from_secs(1)).unwrap());
    }
    assert_eq!(
        keys(&rest),
        vec![(owner(2), 100), (owner(1), 2), (owner(2), 1)],
        "the late commit comes in its transaction's order, then the rest"
    );

    // A reader restarted from the saved cursor reads the same rest, nothing before it.
    let mut resumed = fleet.event_reader(saved.parse().unwrap());
    assert_eq!(keys(&resumed.read(100, Duration::ZERO).unwrap()), keys(&rest));
    assert!(resumed.read(100, Duration::ZERO).unwrap().is_empty());
}

#[test]
fn transactions_are_ordered_as_numbers_across_digit_boundaries() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 2).unwrap();
    // Rows of transactions 100, 99, 10 and 9 (stored in that order, so `pos` does not give the
    // answer away; ids below any a cluster assigns after initdb, so committed for every reader):
    // as text, "10" < "100" < "9" < "99".
    let txs = [100, 99, 10, 9];
    let values: Vec<String> =
        txs.iter().map(|tx| format!("('{tx}', '{}', {tx}, 0, 'test', '{{}}')", owner(1))).collect();
    database.execute(&format!(
        "INSERT INTO dk_events (tx, owner, id, at, type, event) VALUES {}",
        values.join(", ")
    ));
    let mut ascending: Vec<u64> = txs.to_vec();
    ascending.sort_unstable();
    let ids = |events: &[depositkit_fleet::FleetEvent]| -> Vec<u64> {
        events.iter().map(|e| e.id).collect()
    };

    let mut reader = fleet.event_reader(EventCursor::START);
    assert_eq!(ids(&reader.read(100, Duration::ZERO).unwrap()), ascending, "one read");

    // One at a time, each read from the last one's cursor: nothing skipped (with text order, the
    // cursor after transaction 10 would pass 9 and 99 before they were read).
    let mut one_by_one = Vec::new();
    let mut reader = fleet.event_reader(EventCursor::START);
    loop {
        let batch = reader.read(1, Duration::ZERO).unwrap();
        if batch.is_empty() {
            break;
        }
        one_by_one.extend(ids(&batch));
    }
    assert_eq!(one_by_one, ascending, "read one at a time");
}

#[test]
fn a_waiting_reader_gets_an_event_written_meanwhile() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    fleet.add_owner(&owner(5), OwnerOptions::default()).unwrap();
    let member = fleet.join("log", LeaseSettings::default()).unwrap();
    let held = balance(&fleet, &member);
    let store = fleet.store(&member, &held[0]);
    let mut reader = fleet.event_reader(EventCursor::START);
    let writer = std::thread::spawn(move || {
        store.write(&event(1)).unwrap();
        store
    });
    let mut got = Vec::new();
    while got.is_empty() {
        got = reader.read(10, Duration::from_secs(10)).unwrap();
    }
    assert_eq!(keys(&got), vec![(owner(5), 1)]);
    drop(writer.join().unwrap());
}

#[test]
fn cursors_that_are_not_ours_are_refused() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 2).unwrap();
    let bad = "v2.x.1.1".parse::<EventCursor>().unwrap_err();
    assert!(bad.to_string().contains("'v2.x.1.1'"), "{bad}");
    let foreign: EventCursor = "v1.12345.10.1".parse().unwrap();
    match fleet.event_reader(foreign).read(10, Duration::ZERO) {
        Err(FleetError::InvalidCursor(message)) => {
            assert!(message.contains("another PostgreSQL cluster"), "{message}");
        }
        other => panic!("expected InvalidCursor, got {other:?}"),
    }
}

#[test]
fn the_events_of_one_write_come_in_their_order_and_a_refused_one_keeps_none() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 2).unwrap();
    fleet.add_owner(&owner(7), OwnerOptions::default()).unwrap();
    let member = fleet.join("log", LeaseSettings::default()).unwrap();
    let held = balance(&fleet, &member);
    let store = fleet.store(&member, &held[0]);
    // Events alone (the single-statement write), ids not in their insertion order on purpose:
    // the log keeps the write's order, not the ids'.
    let mut write = event(5);
    write.events.extend([event(3), event(4)].into_iter().flat_map(|c| c.events));
    write.events[1].deposit_id = None;
    store.write(&write).unwrap();
    let mut reader = fleet.event_reader(EventCursor::START);
    let mut got = Vec::new();
    while got.len() < 3 {
        got.extend(reader.read(10, Duration::from_secs(5)).unwrap());
    }
    assert_eq!(keys(&got), vec![(owner(7), 5), (owner(7), 3), (owner(7), 4)]);
    assert_eq!(got[1].deposit_id, None, "a missing deposit id stays missing");
    assert_eq!(got[0].deposit_id.as_deref(), Some("d5"));

    // A write of events whose second repeats an id: refused whole, event 6 not kept either.
    let mut refused = event(6);
    refused.events.extend(event(3).events);
    assert!(store.write(&refused).is_err(), "a repeated event id is refused");
    assert_eq!(store.last_event_id().unwrap(), 5, "nothing of the refused write");
}
