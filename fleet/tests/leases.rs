//! Leases and fencing on a real PostgreSQL server: one live holder per owner, database time,
//! a stale holder's writes refused, balanced shares without a storm, typed errors.

use std::time::{Duration, Instant};

use depositkit_core::deposit::store_contract::OwnerStore;
use depositkit_fleet::{Fleet, FleetError, LeaseSettings, OwnerOptions};
use depositkit_server::testing::TestDatabase;
use support::{balance, event, held, owner};

mod support;

fn settings() -> LeaseSettings {
    LeaseSettings {
        ttl: Duration::from_millis(1500),
        renew_every: Duration::from_millis(300),
        claim_per_tick: 500,
        release_per_tick: 2,
    }
}

/// Runs `step` until it says done, failing after `limit`.
fn eventually(limit: Duration, what: &str, mut step: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !step() {
        assert!(Instant::now() < deadline, "timed out: {what}");
        std::thread::yield_now();
    }
}

#[test]
fn owners_are_registered_durably_with_typed_errors() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 2).unwrap();
    let added =
        fleet.add_owner(&owner(1).to_uppercase().replace("0X", "0x"), OwnerOptions::default());
    assert_eq!(added.unwrap(), owner(1), "stored lower-case");
    match fleet.add_owner(&owner(1), OwnerOptions::default()) {
        Err(FleetError::DuplicateOwner(o)) => assert_eq!(o, owner(1)),
        other => panic!("expected DuplicateOwner, got {other:?}"),
    }
    match fleet.remove_owner(&owner(2)) {
        Err(FleetError::UnknownOwner(o)) => assert_eq!(o, owner(2)),
        other => panic!("expected UnknownOwner, got {other:?}"),
    }
    let destination = depositkit_core::deposit::DestinationConfig::chain(8453);
    fleet
        .set_owner_options(&owner(1), OwnerOptions { destination: Some(destination.clone()) })
        .unwrap();
    // Another connection (another process) sees it.
    let other = Fleet::connect(database.url(), 1).unwrap();
    assert_eq!(other.owner_options(&owner(1)).unwrap().destination, Some(destination));
    assert_eq!(other.owners().unwrap(), vec![owner(1)]);
    other.remove_owner(&owner(1)).unwrap();
    assert!(matches!(fleet.owner_options(&owner(1)), Err(FleetError::UnknownOwner(_))));
}

#[test]
fn a_paused_holder_is_taken_over_and_its_writes_are_refused() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    fleet.add_owner(&owner(7), OwnerOptions::default()).unwrap();
    let a = fleet.join("a", settings()).unwrap();
    let claimed = balance(&fleet, &a);
    assert_eq!(claimed.len(), 1);
    let store_a = fleet.store(&a, &claimed[0]);
    store_a.write(&event(1)).expect("the holder writes");

    let b = fleet.join("b", settings()).unwrap();
    assert!(balance(&fleet, &b).is_empty(), "a live holder keeps its owner");

    // `a` is paused: it renews no more. `b` keeps renewing and takes over once a's lease
    // passed in database time.
    eventually(Duration::from_secs(10), "b takes over", || {
        let m = b.clone();
        fleet.run(async move { m.renew().await }).unwrap();
        !balance(&fleet, &b).is_empty()
    });
    let taken = held(&fleet, &b);
    assert!(taken[0].fence > claimed[0].fence, "the takeover bumps the fence");
    let store_b = fleet.store(&b, &taken[0]);
    store_b.write(&event(2)).expect("the new holder writes");

    // `a` wakes up: its write is refused, typed, and it knows it lost the owner.
    let refused = store_a.write(&event(3)).expect_err("the stale holder is fenced off");
    assert!(refused.message().contains("no longer held"), "{}", refused.message());
    assert!(store_a.owner_lost());
    assert_eq!(store_b.last_event_id().unwrap(), 2, "nothing of a's landed");
    // Its lease cannot be renewed either: it must rejoin and holds nothing.
    let m = a.clone();
    assert!(matches!(fleet.run(async move { m.renew().await }), Err(FleetError::LeaseLost(_))));
    let mut rejoined = a.clone();
    let rejoined = fleet
        .run(async move {
            rejoined.rejoin().await?;
            Ok(rejoined)
        })
        .unwrap();
    assert!(held(&fleet, &rejoined).is_empty());
    assert!(store_a.write(&event(3)).is_err(), "still refused after rejoining");
}

#[test]
fn an_expired_lease_cannot_write_even_before_anyone_takes_over() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 2).unwrap();
    fleet.add_owner(&owner(9), OwnerOptions::default()).unwrap();
    let a = fleet.join("a", settings()).unwrap();
    let claimed = balance(&fleet, &a);
    let store = fleet.store(&a, &claimed[0]);
    store.write(&event(1)).unwrap();
    let mut next = 1;
    eventually(Duration::from_secs(10), "the write is refused once the lease passed", || {
        next += 1;
        store.write(&event(next)).is_err()
    });
    assert!(store.owner_lost(), "refused for the lease, not for anything else");
}

#[test]
fn members_share_owners_evenly_and_hand_over_gradually() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    for n in 0..10 {
        fleet.add_owner(&owner(100 + n), OwnerOptions::default()).unwrap();
    }
    let a = fleet.join("a", settings()).unwrap();
    assert_eq!(balance(&fleet, &a).len(), 10, "alone, a takes every owner");
    let b = fleet.join("b", settings()).unwrap();
    let c = fleet.join("c", settings()).unwrap();
    // Shares are ceil(10 / 3) = 4. a gives back at most 2 per step (release_per_tick).
    let mut steps = 0;
    loop {
        steps += 1;
        let m = a.clone();
        let surplus = fleet.run(async move { m.balance().await.map(|b| b.surplus) }).unwrap();
        assert!(surplus.len() <= 2, "no storm: at most release_per_tick per step");
        for s in &surplus {
            let (m, s) = (a.clone(), s.clone());
            assert!(fleet.run(async move { m.release(&s.owner, s.fence).await }).unwrap());
        }
        for member in [&b, &c] {
            let claimed = balance(&fleet, member);
            assert!(held(&fleet, member).len() <= 4, "never more than the share");
            drop(claimed);
        }
        if surplus.is_empty() && held(&fleet, &b).len() + held(&fleet, &c).len() == 6 {
            break;
        }
        assert!(steps < 20, "the fleet did not settle");
    }
    assert_eq!(held(&fleet, &a).len(), 4);
    let mut all: Vec<String> =
        [&a, &b, &c].iter().flat_map(|m| held(&fleet, m).into_iter().map(|h| h.owner)).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 10, "every owner held exactly once");
    // c leaves gracefully: its owners go to the others at once, within their shares (5).
    let m = c.clone();
    fleet.run(async move { m.leave().await }).unwrap();
    balance(&fleet, &a);
    balance(&fleet, &b);
    assert_eq!(held(&fleet, &a).len() + held(&fleet, &b).len(), 10);
    assert!(held(&fleet, &a).len() <= 5 && held(&fleet, &b).len() <= 5);
}

#[test]
fn a_database_of_another_schema_version_or_unreachable_is_a_typed_error() {
    let database = TestDatabase::create();
    drop(Fleet::connect(database.url(), 1).unwrap());
    database.execute("UPDATE dk_meta SET value = '99' WHERE key = 'schema_version'");
    match Fleet::connect(database.url(), 1) {
        Err(FleetError::SchemaVersion { found, expected, .. }) => {
            assert_eq!((found.as_str(), expected), ("99", 2));
        }
        other => panic!("expected SchemaVersion, got {other:?}"),
    }
    match Fleet::connect("postgres://nobody:secret@127.0.0.1:1/none?connect_timeout=2", 1) {
        Err(error @ FleetError::Unreachable { .. }) => {
            let message = error.to_string();
            assert!(message.contains("127.0.0.1:1/none"), "{message}");
            assert!(!message.contains("secret"), "no password in errors: {message}");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}
