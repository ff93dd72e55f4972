//! The crash fast path on a real PostgreSQL server: a member whose lease session is gone (its
//! process died, or the server cut its session) is reaped at once, long before its lease would
//! pass; a member that is only slow keeps its owners; a member reaped while alive writes
//! nothing more and joins again.
//!
//! Leases here last an hour, so any takeover a test sees came from the fast path.

use std::time::{Duration, Instant};

use depositkit_core::TokenType;
use depositkit_core::deposit::store_contract::OwnerStore;
use depositkit_core::deposit::{DepositClientConfig, DestinationConfig};
use depositkit_devnet::{Devnet, DevnetConfig, Fault, Service};
use depositkit_fleet::{
    DepositFleet, Fleet, FleetError, FleetOptions, LeaseSettings, OwnerOptions,
};
use depositkit_server::testing::TestDatabase;
use support::{balance, event, held, owner};

mod support;

/// A lease no test outlives: whatever is taken over was taken by the fast path.
fn hour_lease() -> LeaseSettings {
    LeaseSettings {
        ttl: Duration::from_secs(3600),
        renew_every: Duration::from_millis(200),
        ..LeaseSettings::default()
    }
}

fn eventually(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ends `member`'s lease session on the server (`pg_terminate_backend`), as an operator or a
/// failing network would; the member's process lives on.
fn cut_lease_session(database: &TestDatabase, node: &str) {
    database.execute(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = 'depositkit-lease:{node}'"
    ));
}

/// The value of `depositkit_fleet_<name>` in Prometheus text.
fn metric(text: &str, name: &str) -> u64 {
    let prefix = format!("depositkit_fleet_{name} ");
    let line = text.lines().find(|l| l.starts_with(&prefix));
    line.and_then(|l| l[prefix.len()..].trim().parse().ok()).unwrap_or(0)
}

#[test]
fn a_slow_member_keeps_its_owners_and_a_cut_one_is_reaped_fenced_and_rejoins() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    fleet.add_owner(&owner(1), OwnerOptions::default()).unwrap();
    let mut a = fleet.join("a", hour_lease()).unwrap();
    let claimed = balance(&fleet, &a);
    assert_eq!(claimed.len(), 1);
    let store_a = fleet.store(&a, &claimed[0]);
    store_a.write(&event(1)).expect("the holder writes");

    // `a` renews no more but its session is up: a slow member, not a dead one. Nobody takes
    // its owner.
    let b = fleet.join("b", hour_lease()).unwrap();
    for _ in 0..3 {
        assert!(balance(&fleet, &b).is_empty(), "a live session keeps its owners");
    }

    // The server cuts a's lease session (its process lives on): b reaps it at its next step.
    cut_lease_session(&database, a.node_id());
    eventually(Duration::from_secs(30), "b takes a's owner over", || {
        !balance(&fleet, &b).is_empty()
    });
    let taken = held(&fleet, &b);
    assert_eq!(taken[0].owner, owner(1));
    assert!(taken[0].fence > claimed[0].fence, "the takeover bumps the fence");

    // a is alive and does not know yet: every write it tries is refused.
    let refused = store_a.write(&event(2)).expect_err("a reaped member writes nothing");
    assert!(refused.message().contains("no longer held"), "{}", refused.message());
    assert!(store_a.owner_lost());
    // Its next renewal opens a new session and finds itself reaped: it rejoins, holding
    // nothing, and is a live member again (not reaped a second time).
    let m = a.clone();
    let renewed = fleet.run(async move { m.renew().await });
    assert!(matches!(renewed, Err(FleetError::LeaseLost(_))), "{renewed:?}");
    // The process's metrics saw it (other tests of this binary may add to them).
    let text = depositkit_fleet::metrics_text();
    for counter in ["members_reaped_total", "leases_lost_total", "owners_claimed_total"] {
        assert!(metric(&text, counter) >= 1, "{counter} in:\n{text}");
    }
    assert!(text.contains("# TYPE depositkit_fleet_owners_held gauge"), "{text}");
    let old_node = a.node_id().to_owned();
    a = fleet
        .run(async move {
            a.rejoin().await?;
            Ok(a)
        })
        .unwrap();
    assert_ne!(a.node_id(), old_node);
    assert!(held(&fleet, &a).is_empty());
    assert!(balance(&fleet, &b).is_empty(), "b holds its whole share already");
    let m = a.clone();
    fleet.run(async move { m.renew().await }).expect("the rejoined member renews");
    let store_b = fleet.store(&b, &taken[0]);
    store_b.write(&event(2)).expect("the new holder writes");
    assert_eq!(store_b.last_event_id().unwrap(), 2, "nothing of a's landed after the cut");
}

/// The client template: devnet's services, fast polling and sweep retries.
fn template(services: &str) -> DepositClientConfig {
    let mut config = DepositClientConfig::new(owner(1), DestinationConfig::chain(8453))
        .with_services_url(services);
    (config.min_polling_interval_ms, config.polling_interval_ms) = (20, 50);
    config.sweep_retry_delay_ms = 30;
    config
}

/// How many of `owner`'s stored lifecycle events are in `phase`.
fn in_phase(fleet: &Fleet, owner: &str, phase: &str) -> usize {
    let stored = fleet.owner_events(owner, 0, usize::MAX).unwrap();
    let lifecycle = stored.iter().filter(|e| e.kind == "deposit:lifecycle");
    let parsed = lifecycle.filter_map(|e| serde_json::from_str::<serde_json::Value>(&e.event).ok());
    parsed.filter(|event| event["payload"]["phase"] == phase).count()
}

#[test]
fn a_member_that_dies_mid_sweep_is_taken_over_at_once_and_the_deposit_swept_once() {
    let dir = std::env::temp_dir().join(format!("depositkit-fast-failover-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let devnet =
        Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite")).with_fault_injection()).unwrap();
    let database = TestDatabase::create();
    let options = |name: &str| FleetOptions {
        name: name.to_owned(),
        lease: hour_lease(),
        max_connections: 4,
    };
    let template = template(&devnet.services_url());
    let a = DepositFleet::join(database.url(), template.clone(), options("a")).unwrap();
    let owners: Vec<String> = (1..=4u32)
        .map(|n| a.fleet().add_owner(&owner(0xfa57_0000 + n), OwnerOptions::default()).unwrap())
        .collect();
    eventually(Duration::from_secs(30), "a runs every owner", || a.running_owners() == owners);
    // b joins with a share of 2 but a gives back only its surplus: wait for the even split.
    let b = DepositFleet::join(database.url(), template, options("b")).unwrap();
    eventually(Duration::from_secs(30), "the owners are shared", || {
        a.running_owners().len() == 2 && b.running_owners().len() == 2
    });

    // A deposit to one of a's owners; devnet holds the send, so a dies mid-sweep.
    let owner = a.running_owners()[0].clone();
    let held_send = Fault { delay_ms: Some(1500), count: Some(1), ..Fault::default() };
    devnet.inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &held_send).unwrap();
    let client = a.client(&owner).unwrap();
    let address = client.deposit_addresses().unwrap().evm;
    devnet.deposit(&address, 8453, TokenType::USDC, "7000000", None).unwrap();
    drop(client);
    eventually(Duration::from_secs(20), "a starts sweeping", || {
        in_phase(b.fleet(), &owner, "processing") > 0
    });
    let dead = a.node_id();
    // Gone as a killed process is: its connections close, it gives nothing back, and its
    // lease has an hour left.
    a.halt();

    eventually(Duration::from_secs(30), "b runs every owner", || b.running_owners() == owners);
    for owner in &owners {
        let (holder, _) = b.fleet().holder(owner).unwrap();
        assert_eq!(holder.as_deref(), Some(b.node_id().as_str()), "{owner} held by b");
        assert_ne!(holder.as_deref(), Some(dead.as_str()));
    }
    eventually(Duration::from_secs(30), "the deposit is credited", || {
        in_phase(b.fleet(), &owner, "credited") > 0
    });
    assert_eq!(in_phase(b.fleet(), &owner, "credited"), 1, "credited once");
    assert_ne!(devnet.ledger_balance(&owner, 8453, TokenType::USDC).unwrap(), "0");
    let sweeps = b.client(&owner).unwrap().get_transactions(Some(1), Some(100)).unwrap();
    assert_eq!(sweeps.transactions.iter().filter(|t| t.tag == "sweep").count(), 1, "swept once");
    b.leave().unwrap();
    drop(devnet);
    let _ = std::fs::remove_dir_all(dir);
}
