//! The start handed over through the fleet's store, against devnet and a real PostgreSQL: a
//! takeover starts each owner's client on the account and session its previous holder kept
//! (devnet mints no JWT for it), and a kept session that does not verify, runs out or was
//! revoked is replaced by a new one. Also: a stale holder keeps no start, and a database of
//! schema version 1 is brought up to version 2. (The store's part of the contract:
//! `store_contract.rs`.)

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use depositkit_core::TokenType;
use depositkit_core::deposit::store_contract::{OwnerStore, StartRow};
use depositkit_devnet::RunningDevnet;
use depositkit_fleet::{DepositFleet, Fleet, LeaseSettings, OwnerOptions};
use depositkit_server::testing::TestDatabase;
use support::{devnet, eventually, options, phases, query, template};

mod support;

fn now_secs() -> i64 {
    i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()).unwrap()
}

/// What `dk_clients` keeps for the next holder, by owner: the start's account JSON, the
/// session JWT and its expiry.
#[derive(Debug, Clone, PartialEq)]
struct Kept {
    account: Option<String>,
    jwt: Option<String>,
    expires_at: Option<i64>,
}

fn kept(database: &TestDatabase) -> HashMap<String, Kept> {
    query(
        database.url(),
        "SELECT owner, start_account, session_jwt, session_expires_at FROM dk_clients",
        |row| {
            let kept = Kept { account: row.get(1), jwt: row.get(2), expires_at: row.get(3) };
            (row.get::<_, String>(0), kept)
        },
    )
    .into_iter()
    .collect()
}

/// Member `a` of a new fleet running `n` owners, and their EVM deposit addresses.
fn first_holder(
    devnet: &RunningDevnet,
    database: &TestDatabase,
    n: u32,
) -> (DepositFleet, Vec<String>, HashMap<String, String>) {
    let a = DepositFleet::join(database.url(), template(devnet), options("a")).unwrap();
    let owners: Vec<String> = (1..=n)
        .map(|i| {
            let owner = format!("0x{:040x}", 0xabba_0000u64 + u64::from(i));
            a.fleet().add_owner(&owner, OwnerOptions::default()).unwrap()
        })
        .collect();
    eventually(Duration::from_secs(30), "a runs every owner", || a.running_owners() == owners);
    let addresses = owners
        .iter()
        .map(|o| (o.clone(), a.client(o).unwrap().deposit_addresses().unwrap().evm))
        .collect();
    (a, owners, addresses)
}

/// A deposit to `owner` is detected by `holder`'s client: its polls are served.
fn detects_a_deposit(devnet: &RunningDevnet, holder: &DepositFleet, owner: &str, address: &str) {
    devnet.deposit(address, 8453, TokenType::USDC, "5000000", None).unwrap();
    eventually(Duration::from_secs(20), "the deposit is detected", || {
        phases(holder, owner).iter().any(|p| p == "detected")
    });
}

#[test]
fn a_takeover_starts_on_the_handed_over_session_and_devnet_mints_none() {
    let (devnet, dir) = devnet("reuse");
    let database = TestDatabase::create();
    let (a, owners, addresses) = first_holder(&devnet, &database, 3);
    let before = kept(&database);
    for owner in &owners {
        let kept = &before[owner];
        let jwt = kept.jwt.as_deref().expect("the holder keeps its session for the next one");
        assert!(kept.expires_at.unwrap() > now_secs() + 120, "{kept:?}");
        let account = kept.account.as_deref().expect("and its account");
        assert!(account.contains(&addresses[owner]), "{account}");
        assert!(!account.contains(jwt), "the account JSON holds no secret");
    }

    // From now on every JWT devnet mints is forged: a client that asked for one would fail
    // to verify it and not start.
    devnet.forge_next_jwts(1000).unwrap();
    a.halt();
    // Read after a's clients closed (their last status change: `idle`).
    let last_ids: HashMap<String, i64> =
        query(database.url(), "SELECT owner, max(id) FROM dk_events GROUP BY owner", |row| {
            (row.get(0), row.get(1))
        })
        .into_iter()
        .collect();
    let b = DepositFleet::join(database.url(), template(&devnet), options("b")).unwrap();
    eventually(Duration::from_secs(20), "b takes every owner over", || {
        b.running_owners() == owners
    });
    // Each started client's status changes went to the log together, in one transaction
    // (held until its start ended), their ids after a's last (the batch read's).
    for owner in &owners {
        let written = query(
            database.url(),
            &format!(
                "SELECT id, type, event, tx::text FROM dk_events \
                 WHERE owner = '{owner}' AND id > {} ORDER BY id",
                last_ids[owner]
            ),
            |row| {
                (
                    row.get::<_, i64>(0),
                    row.get::<_, String>(1),
                    row.get::<_, String>(2),
                    row.get::<_, String>(3),
                )
            },
        );
        let ids: Vec<i64> = written.iter().map(|w| w.0).collect();
        let first = last_ids[owner] + 1;
        assert_eq!(ids, (first..first + 3).collect::<Vec<_>>(), "{owner}: {written:?}");
        let statuses: Vec<String> = written
            .iter()
            .map(|(_, kind, event, _)| {
                assert_eq!(kind, "status:change");
                let event: serde_json::Value = serde_json::from_str(event).unwrap();
                event["payload"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(statuses, ["initializing", "ready", "watching"], "{owner}");
        assert!(written.iter().all(|w| w.3 == written[0].3), "one transaction: {written:?}");
    }
    for owner in &owners {
        let evm = b.client(owner).unwrap().deposit_addresses().unwrap().evm;
        assert_eq!(evm, addresses[owner], "the handed-over account");
    }
    assert_eq!(kept(&database), before, "nothing minted, nothing new kept");
    let owner = &owners[0];
    detects_a_deposit(&devnet, &b, owner, &addresses[owner]);
    devnet.clear_faults();
    b.leave().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_handed_over_session_that_fails_runs_out_or_was_revoked_is_replaced() {
    let (devnet, dir) = devnet("fallback");
    let database = TestDatabase::create();
    let (a, owners, addresses) = first_holder(&devnet, &database, 4);
    let before = kept(&database);
    a.halt();
    let jwt = |n: usize| before[&owners[n]].jwt.clone().unwrap();
    // 0: its signature altered; 1: 30 s left by the holder's account; 2: another owner's
    // session (a valid signature, the wrong subject); 3: revoked at devnet (it still verifies
    // against the JWKS: the service's refusal replaces it).
    let mut forged = jwt(0);
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    database.execute(&format!(
        "UPDATE dk_clients SET session_jwt = '{forged}' WHERE owner = '{}';
         UPDATE dk_clients SET session_expires_at = {} WHERE owner = '{}';
         UPDATE dk_clients SET session_jwt = '{}' WHERE owner = '{}'",
        owners[0],
        now_secs() + 30,
        owners[1],
        jwt(0),
        owners[2],
    ));
    devnet.expire_sessions(Some(&owners[3]));

    let b = DepositFleet::join(database.url(), template(&devnet), options("b")).unwrap();
    eventually(Duration::from_secs(20), "b takes every owner over", || {
        b.running_owners() == owners
    });
    for (n, owner) in owners.iter().enumerate() {
        detects_a_deposit(&devnet, &b, owner, &addresses[owner]);
        // The new session is kept for the next holder (a renewal's save runs in the
        // background).
        eventually(Duration::from_secs(10), "a new session is kept", || {
            let now = kept(&database)[owner].clone();
            now.jwt.as_deref().is_some_and(|fresh| fresh != jwt(n) && fresh != forged)
                && now.expires_at.unwrap() > now_secs() + 120
        });
        assert_eq!(b.client(owner).unwrap().deposit_addresses().unwrap().evm, addresses[owner]);
    }
    b.leave().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_stale_holder_keeps_no_start() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    let member = fleet.join("contract", LeaseSettings::default()).unwrap();
    // A member that lost the owner keeps nothing for the next one.
    let owner = "0x0000000000000000000000000000000000000f0e";
    database.execute(&format!("INSERT INTO dk_owners (owner) VALUES ('{owner}')"));
    let m = member.clone();
    let held = fleet.run(async move { m.balance().await.map(|b| b.claimed) }).unwrap();
    let held = held.into_iter().find(|h| h.owner == owner).expect("claimed");
    let store = fleet.store(&member, &held);
    database.execute(&format!("UPDATE dk_owners SET fence = fence + 1 WHERE owner = '{owner}'"));
    let start = StartRow {
        account: "{}".into(),
        session_jwt: Some("secret-jwt".into()),
        session_expires_at: 1,
    };
    let error = store.save_start(&start, 1).expect_err("a stale fence is refused");
    assert!(!error.to_string().contains("secret-jwt"), "{error}");
    assert!(store.owner_lost());
    assert_eq!(store.load_start().unwrap(), None);
}

#[test]
fn a_database_of_schema_version_1_is_brought_up_to_version_2() {
    let database = TestDatabase::create();
    drop(Fleet::connect(database.url(), 2).unwrap());
    // Version 1 had no handed-over start.
    database.execute(
        "ALTER TABLE dk_clients DROP COLUMN start_account, DROP COLUMN session_jwt, \
         DROP COLUMN session_expires_at;
         UPDATE dk_meta SET value = '1' WHERE key = 'schema_version';
         INSERT INTO dk_clients (owner, account_id, updated_at) VALUES ('0x01', 'acct', 1)",
    );
    drop(Fleet::connect(database.url(), 2).unwrap());
    let version =
        query(database.url(), "SELECT value FROM dk_meta WHERE key = 'schema_version'", |row| {
            row.get::<_, String>(0)
        });
    assert_eq!(version, ["2"]);
    let rows = query(
        database.url(),
        "SELECT account_id, start_account, session_jwt FROM dk_clients",
        |row| {
            (
                row.get::<_, String>(0),
                row.get::<_, Option<String>>(1),
                row.get::<_, Option<String>>(2),
            )
        },
    );
    assert_eq!(rows, [("acct".to_owned(), None, None)], "the rows stay, the columns are new");
}
