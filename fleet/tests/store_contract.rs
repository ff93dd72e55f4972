//! The store contract's suite on the PostgreSQL store (the same suite core runs on SQLite),
//! against a real PostgreSQL server (`depositkit_server::testing`).

use depositkit_core::deposit::store_contract::{OwnerStore, suite};
use depositkit_fleet::{Fleet, LeaseSettings, OwnerOptions};
use depositkit_server::testing::TestDatabase;

#[test]
fn the_postgres_store_keeps_the_contract() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    let member = fleet.join("contract", LeaseSettings::default()).unwrap();
    let open = |owner: &str| {
        // The suite's owners are names, not addresses: register them directly.
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
        let held = held.into_iter().find(|h| h.owner == owner).expect("claimed");
        Box::new(fleet.store(&member, &held)) as Box<dyn OwnerStore>
    };
    suite::check(&open);
    // The fleet's store also keeps the start handed to the owner's next holder.
    suite::check_start_handover(&open);
    // Registered owners are addresses.
    let error = fleet.add_owner("not-an-owner", OwnerOptions::default()).unwrap_err();
    assert!(error.to_string().contains("'not-an-owner'"), "{error}");
}
