//! The store contract's suite on the PostgreSQL store (the same suite core runs on SQLite),
//! against a real PostgreSQL server (`depositkit_server::testing`): the store as a client
//! opens it, and as a takeover's batch read hands it over (its first reads already made).

use depositkit_core::deposit::store_contract::{
    ChangeRows, DepositRow, EventRow, OwnerStore, ResultRow, StartRow, suite,
};
use depositkit_fleet::{Fleet, HeldOwner, LeaseSettings, Member, OwnerOptions};
use depositkit_server::testing::TestDatabase;

/// `owner` (a name, not an address: registered directly) claimed by `member`.
fn claimed(database: &TestDatabase, fleet: &Fleet, member: &Member, owner: &str) -> HeldOwner {
    database.execute(&format!(
        "INSERT INTO dk_owners (owner) VALUES ('{owner}') ON CONFLICT DO NOTHING"
    ));
    let m = member.clone();
    let held = fleet
        .run(async move {
            m.balance().await?;
            m.held().await
        })
        .unwrap();
    held.into_iter().find(|h| h.owner == owner).expect("claimed")
}

#[test]
fn the_postgres_store_keeps_the_contract() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    let member = fleet.join("contract", LeaseSettings::default()).unwrap();
    let open = |owner: &str| {
        let held = claimed(&database, &fleet, &member, owner);
        Box::new(fleet.store(&member, &held)) as Box<dyn OwnerStore>
    };
    suite::check(&open);
    // The fleet's store also keeps the start handed to the owner's next holder.
    suite::check_start_handover(&open);
    // Registered owners are addresses.
    let error = fleet.add_owner("not-an-owner", OwnerOptions::default()).unwrap_err();
    assert!(error.to_string().contains("'not-an-owner'"), "{error}");
}

/// A takeover's stores, whose first reads (last event id, handed-over start, rows) were made
/// for many owners at once, answer as the store does: the suite opens stores of an owner again
/// after writes, so what they read first must be what was stored then.
#[test]
fn a_takeovers_stores_read_ahead_keep_the_contract() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    let member = fleet.join("contract", LeaseSettings::default()).unwrap();
    // Another owner read with each, whose rows must not mix in.
    let other = claimed(&database, &fleet, &member, "0x0other");
    let store = fleet.store(&member, &other);
    let start = StartRow { account: "{}".to_owned(), session_jwt: None, session_expires_at: 9 };
    store.save_start(&start, 1).unwrap();
    store
        .write(&ChangeRows {
            now: 1,
            deposits: vec![DepositRow {
                id: "other-1".to_owned(),
                seq: 1,
                state: "detected".to_owned(),
                open: true,
                record: "{}".to_owned(),
            }],
            detector: Some("{}".to_owned()),
            results: vec![ResultRow {
                deposit_id: "other-1".to_owned(),
                kind: "sweep".to_owned(),
                result: "{}".to_owned(),
            }],
            events: (1..=7)
                .map(|id| EventRow {
                    id,
                    at: 1,
                    kind: "status:change".to_owned(),
                    deposit_id: None,
                    event: "{}".to_owned(),
                })
                .collect(),
            ..ChangeRows::default()
        })
        .unwrap();
    let open = |owner: &str| {
        let held = claimed(&database, &fleet, &member, owner);
        let other = other.clone();
        let mut stores = fleet.taken_over_stores(&member, &[other, held]).unwrap();
        assert_eq!(stores.len(), 2, "one store per owner asked for");
        assert_eq!(stores[1].owner(), owner);
        Box::new(stores.remove(1)) as Box<dyn OwnerStore>
    };
    suite::check(&open);
    suite::check_start_handover(&open);
}
