//! DepositFleet against devnet and a real PostgreSQL: members share the owners, run their
//! clients, and when a member dies mid-sweep another takes over and the deposit is credited at
//! its destination exactly once.

use std::time::{Duration, Instant};

use depositkit_core::TokenType;
use depositkit_core::deposit::{DepositClient, DestinationConfig};
use depositkit_devnet::{Fault, Service};
use depositkit_fleet::{CommandOutcome, DepositFleet, FleetCommand, FleetError, OwnerOptions};
use depositkit_server::testing::TestDatabase;

mod support;

use support::{devnet, eventually, options, phases, query, template};

#[test]
fn members_share_owners_and_a_survivor_credits_a_dead_members_deposit_once() {
    let (devnet, dir) = devnet("takeover");
    let database = TestDatabase::create();
    let a = DepositFleet::join(database.url(), template(&devnet), options("a")).unwrap();
    let owners: Vec<String> = (1..=3u32)
        .map(|n| {
            let owner = format!("0x{:040x}", 0xfeed_0000u64 + u64::from(n));
            a.fleet().add_owner(&owner, OwnerOptions::default()).unwrap()
        })
        .collect();
    eventually(Duration::from_secs(30), "a runs every owner", || a.running_owners() == owners);
    let b = DepositFleet::join(database.url(), template(&devnet), options("b")).unwrap();
    // Shares of ceil(3 / 2) = 2: a gives one back, b takes it.
    eventually(Duration::from_secs(30), "the owners are shared", || {
        a.running_owners().len() == 2 && b.running_owners().len() == 1
    });

    // A deposit to an owner a holds, with devnet holding the send so a dies mid-sweep.
    let owner = a.running_owners()[0].clone();
    let address = a.client(&owner).unwrap().deposit_addresses().unwrap().evm;
    devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/send"),
            &Fault { delay_ms: Some(1500), count: Some(1), ..Fault::default() },
        )
        .unwrap();
    devnet.deposit(&address, 8453, TokenType::USDC, "9000000", None).unwrap();
    let started = Instant::now();
    while !phases(&a, &owner).iter().any(|p| p == "processing") {
        if started.elapsed() > Duration::from_secs(20) {
            let log = a.fleet().owner_events(&owner, 0, 100).unwrap();
            panic!("a never started sweeping: {log:#?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    a.halt();

    // b takes over every owner within seconds and finishes the sweep.
    eventually(Duration::from_secs(20), "b takes over", || b.running_owners() == owners);
    eventually(Duration::from_secs(30), "the deposit is credited", || {
        phases(&b, &owner).iter().any(|p| p == "credited")
    });
    let credited = phases(&b, &owner).iter().filter(|p| *p == "credited").count();
    assert_eq!(credited, 1, "one credited event: {:?}", phases(&b, &owner));
    let delivered = devnet.ledger_balance(&owner, 8453, TokenType::USDC).unwrap();
    assert_ne!(delivered, "0", "delivered at the destination");
    let client = b.client(&owner).unwrap();
    let sweeps = client.get_transactions(Some(1), Some(100)).unwrap();
    let count = sweeps.transactions.iter().filter(|t| t.tag == "sweep").count();
    assert_eq!(count, 1, "swept once");
    b.leave().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn any_process_asks_and_the_holder_runs_the_command() {
    let (devnet, dir) = devnet("commands");
    let database = TestDatabase::create();
    let a = DepositFleet::join(database.url(), template(&devnet), options("a")).unwrap();
    let owner = a
        .fleet()
        .add_owner("0x00000000000000000000000000000000000c0de1", OwnerOptions::default())
        .unwrap();
    eventually(Duration::from_secs(30), "a runs the owner", || {
        a.running_owners() == [owner.clone()]
    });
    // Another process: a connection of its own, holding nothing.
    let other = depositkit_fleet::Fleet::connect(database.url(), 2).unwrap();
    let solana = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    let destination = DestinationConfig::chain(101).with_address(solana);
    let outcome = other
        .request(&owner, FleetCommand::SetDestination(destination.clone()), Duration::from_secs(20))
        .unwrap();
    let CommandOutcome::Done(value) = outcome else { panic!("expected Done, got {outcome:?}") };
    assert_eq!(value["address"], solana, "{value}");
    let now = a.client(&owner).unwrap().get_destination().unwrap();
    assert_eq!(now.address, solana, "the holder's client changed");
    assert_eq!(other.owner_options(&owner).unwrap().destination, Some(destination));

    let outcome = other
        .request(
            &owner,
            FleetCommand::Sweep { deposit_id: "no-such-deposit".into() },
            Duration::from_secs(20),
        )
        .unwrap();
    let CommandOutcome::Failed(message) = outcome else {
        panic!("expected Failed, got {outcome:?}")
    };
    assert!(message.contains("no-such-deposit"), "{message}");

    match other.request(
        "0x00000000000000000000000000000000000c0de2",
        FleetCommand::Recover,
        Duration::from_secs(1),
    ) {
        Err(FleetError::UnknownOwner(o)) => {
            assert_eq!(o, "0x00000000000000000000000000000000000c0de2")
        }
        other => panic!("expected UnknownOwner, got {other:?}"),
    }
    // No live holder: the requester's timeout ends the wait, typed.
    a.leave().unwrap();
    match other.request(&owner, FleetCommand::Recover, Duration::from_millis(300)) {
        Err(FleetError::CommandTimeout { .. }) => {}
        other => panic!("expected CommandTimeout, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_command_claimed_again_answers_with_the_result_of_its_one_run() {
    let (devnet, dir) = devnet("again");
    let database = TestDatabase::create();
    let a = DepositFleet::join(database.url(), template(&devnet), options("a")).unwrap();
    let owner = a
        .fleet()
        .add_owner("0x00000000000000000000000000000000000a9a10", OwnerOptions::default())
        .unwrap();
    eventually(Duration::from_secs(30), "a runs the owner", || {
        a.running_owners() == [owner.clone()]
    });
    let address = a.client(&owner).unwrap().deposit_addresses().unwrap().evm;
    devnet.deposit(&address, 8453, TokenType::USDC, "4000000", None).unwrap();
    eventually(Duration::from_secs(30), "the deposit is credited", || {
        phases(&a, &owner).iter().any(|p| p == "credited")
    });
    let events = a.fleet().owner_events(&owner, 0, 1000).unwrap();
    let deposit_id = events.iter().find_map(|e| e.deposit_id.clone()).expect("a deposit's events");
    let swept = a.client(&owner).unwrap().sweep_result(&deposit_id).unwrap().expect("swept");

    // A sweep of it that a holder claimed under an older fence and died with, maybe after
    // running it; then the same sweep asked anew, from another process.
    database.execute(&format!(
        "INSERT INTO dk_commands (owner, kind, args, state, fence, claimed_by) \
         SELECT owner, 'sweep', '{{\"depositId\": \"{deposit_id}\"}}'::jsonb, 'running', \
                fence - 1, 'a-dead-node' FROM dk_owners WHERE owner = '{owner}'"
    ));
    let other = depositkit_fleet::Fleet::connect(database.url(), 2).unwrap();
    let asked = FleetCommand::Sweep { deposit_id: deposit_id.clone() };
    let fresh = other.request(&owner, asked, Duration::from_secs(20)).unwrap();
    // Run anew: the deposit was credited, so it fails, naming it.
    let CommandOutcome::Failed(message) = fresh else { panic!("expected Failed, got {fresh:?}") };
    assert!(message.contains(&deposit_id), "{message}");
    // Claimed again: answered with the result of the run that happened, not run again.
    let rows = query(
        database.url(),
        "SELECT state, result, claimed_by FROM dk_commands WHERE kind = 'sweep' ORDER BY id",
        |row| (row.get::<_, String>(0), row.get::<_, Option<String>>(1), row.get::<_, String>(2)),
    );
    let (state, result, claimed_by) = &rows[0];
    assert_eq!((state.as_str(), claimed_by.as_str()), ("done", a.node_id().as_str()), "{rows:?}");
    let result: serde_json::Value = serde_json::from_str(result.as_deref().unwrap()).unwrap();
    assert_eq!(result, serde_json::to_value(&swept).unwrap());
    let sweeps = a.client(&owner).unwrap().get_transactions(Some(1), Some(100)).unwrap();
    let count = sweeps.transactions.iter().filter(|t| t.tag == "sweep").count();
    assert_eq!(count, 1, "swept once");
    a.leave().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn any_process_reads_an_owners_deposit_addresses() {
    let (devnet, dir) = devnet("addresses");
    let database = TestDatabase::create();
    let a = DepositFleet::join(database.url(), template(&devnet), options("a")).unwrap();
    let owner = a
        .fleet()
        .add_owner("0x00000000000000000000000000000000000add01", OwnerOptions::default())
        .unwrap();
    eventually(Duration::from_secs(30), "a runs the owner", || {
        a.running_owners() == [owner.clone()]
    });
    // Another process, holding nothing, reads what the holder's client gives.
    let other = depositkit_fleet::Fleet::connect(database.url(), 2).unwrap();
    let addresses = a.client(&owner).unwrap().deposit_addresses().unwrap();
    let upper = owner.to_uppercase().replacen("0X", "0x", 1);
    assert_eq!(other.deposit_addresses(&upper).unwrap(), Some(addresses.clone()));
    a.leave().unwrap();
    assert_eq!(other.deposit_addresses(&owner).unwrap(), Some(addresses), "kept after leaving");

    // Registered, never started (no member runs): none yet.
    let waiting = other
        .add_owner("0x00000000000000000000000000000000000add02", OwnerOptions::default())
        .unwrap();
    assert_eq!(other.deposit_addresses(&waiting).unwrap(), None);
    match other.deposit_addresses("0x00000000000000000000000000000000000add03") {
        Err(FleetError::UnknownOwner(o)) => {
            assert_eq!(o, "0x00000000000000000000000000000000000add03")
        }
        got => panic!("expected UnknownOwner, got {got:?}"),
    }
    match other.deposit_addresses("not-an-owner") {
        Err(error @ FleetError::InvalidOwner { .. }) => {
            assert!(error.to_string().contains("'not-an-owner'"), "{error}")
        }
        got => panic!("expected InvalidOwner, got {got:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_client_whose_lease_passed_sends_nothing_and_the_new_holder_credits_once() {
    let (devnet, dir) = devnet("stale");
    let database = TestDatabase::create();
    let fleet = depositkit_fleet::Fleet::connect(database.url(), 4).unwrap();
    let owner = fleet
        .add_owner("0x00000000000000000000000000000000005ca1e1", OwnerOptions::default())
        .unwrap();
    let lease = options("x").lease;
    let config = || {
        let mut config = template(&devnet);
        config.owner_address.clone_from(&owner);
        config
    };
    // The stale holder: it claims the owner, starts its client, then renews no more (paused).
    let stale = fleet.join("stale", lease).unwrap();
    let claimed = support::balance(&fleet, &stale);
    let old =
        DepositClient::with_store(config(), Box::new(fleet.store(&stale, &claimed[0]))).unwrap();
    let address = old.initialize().unwrap().evm;
    // The new holder takes over once the stale lease passed in database time.
    let fresh = fleet.join("fresh", lease).unwrap();
    eventually(Duration::from_secs(20), "the new holder takes over", || {
        let m = fresh.clone();
        fleet.run(async move { m.renew().await }).unwrap();
        !support::balance(&fleet, &fresh).is_empty()
    });
    devnet.deposit(&address, 8453, TokenType::USDC, "5000000", None).unwrap();
    // The stale client finds the deposit but can record nothing, so it sends nothing.
    let found = old.poll_now().unwrap();
    assert_eq!(found.len(), 1, "it sees the deposit");
    let sweep = old.sweep(&found[0].id);
    assert!(
        sweep.as_ref().map_or(true, |r| r.status != depositkit_core::deposit::SweepStatus::Success),
        "a stale client must not sweep: {sweep:?}"
    );
    assert_eq!(devnet.ledger_balance(&owner, 8453, TokenType::USDC).unwrap(), "0");
    let stored = fleet.owner_events(&owner, 0, 100).unwrap();
    assert!(
        stored.iter().all(|e| e.kind != "deposit:lifecycle"),
        "nothing of the stale client's reached the log: {stored:?}"
    );
    old.close().unwrap();

    let held = support::held(&fleet, &fresh);
    let new = DepositClient::with_store(config(), Box::new(fleet.store(&fresh, &held[0]))).unwrap();
    new.initialize().unwrap();
    new.start_watching().unwrap();
    eventually(Duration::from_secs(30), "the new holder credits it", || {
        devnet.ledger_balance(&owner, 8453, TokenType::USDC).unwrap() != "0"
    });
    let sweeps = new.get_transactions(Some(1), Some(100)).unwrap();
    assert_eq!(sweeps.transactions.iter().filter(|t| t.tag == "sweep").count(), 1);
    new.close().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}
