//! The multi-process fault harness: three `depositkit-fleet-member` processes, devnet and a
//! PostgreSQL server of its own, under a stream of deposits to many owners, while a seeded
//! generator SIGKILLs members (and starts new ones), SIGSTOPs one for 1.5 × its lease and
//! continues it, terminates members' database sessions and restarts (or stops) PostgreSQL.
//! Then it checks that no deposit was lost, none was swept or refunded twice, every event
//! reached the log consumer exactly once after de-duplication, each owner's first deliveries in
//! id order, with each deposit's lifecycle,
//! and that no write was accepted from a member that had lost its lease (`fault/audit.rs`).
//! A second scenario runs the members with auto-sweep off while a process that is not a
//! member asks for sweeps, refunds and destination changes (`fault/commands.rs`): each deposit
//! asked about must be sent exactly once, each command row end `done` or `failed`, and sweeps
//! land at the owner's new destination.
//!
//! A short run is part of `cargo test -p depositkit-fleet` (and so of `scripts/test.sh`):
//!
//! ```text
//! cargo test -p depositkit-fleet --test fault_harness -- --nocapture
//! ```
//!
//! The long run is `scripts/fleet-faults.sh` (minutes, more owners and faults). Knobs
//! (environment): `DEPOSITKIT_FAULT_SECONDS` (fault phase, default 20),
//! `DEPOSITKIT_FAULT_SEED` (default 1; printed, so any run can be repeated),
//! `DEPOSITKIT_FAULT_OWNERS` (10), `DEPOSITKIT_FAULT_MEMBERS` (3),
//! `DEPOSITKIT_FAULT_LEASE_TTL_MS` (3000), `DEPOSITKIT_FAULT_RENEW_MS` (1000),
//! `DEPOSITKIT_FAULT_DEPOSIT_GAP_MS` (mean pause between deposits, 300),
//! `DEPOSITKIT_FAULT_SETTLE_SECONDS` (how long the fleet may take to finish afterwards, 90);
//! for the commands scenario `DEPOSITKIT_FAULT_COMMAND_SECONDS` (12) and
//! `DEPOSITKIT_FAULT_COMMAND_OWNERS` (6).
//! PostgreSQL binaries are found as `scripts/postgres.sh` finds them (`DEPOSITKIT_PG_BIN`, else
//! the newest `/usr/lib/postgresql/*/bin`).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use depositkit_devnet::{Devnet, DevnetConfig, Fault as HttpFault, Service};
use depositkit_fleet::{Fleet, FleetCommand, FleetError, OwnerOptions};
use depositkit_server::testing::TestDatabase;

mod fault;

use fault::faults::{Cluster, plan};
use fault::postgres::{OwnPostgres, rows};
use fault::processes::MemberSettings;
use fault::rng::Rng;
use fault::{audit, checks, workload};

fn knob(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) => text.trim().parse().unwrap_or_else(|_| panic!("{name}={text} is not a number")),
        Err(_) => default,
    }
}

/// Polls `done` until it holds or `limit` passed; whether it held.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn count(url: &str, sql: &str) -> u64 {
    rows(url, sql).ok().and_then(|r| r.first()?.first()?.clone()?.parse().ok()).unwrap_or(0)
}

#[test]
fn the_fleet_keeps_money_log_and_fencing_right_under_faults() {
    run(Scenario {
        commands: false,
        seconds: knob("DEPOSITKIT_FAULT_SECONDS", 20),
        owners: knob("DEPOSITKIT_FAULT_OWNERS", 10),
    });
}

/// Members with auto-sweep off; a process that is not a member asks for every deposit's
/// sweep or refund (sometimes both) and for destination changes while the faults run.
#[test]
fn commands_from_any_process_take_effect_once_under_faults() {
    run(Scenario {
        commands: true,
        seconds: knob("DEPOSITKIT_FAULT_COMMAND_SECONDS", 12),
        owners: knob("DEPOSITKIT_FAULT_COMMAND_OWNERS", 6),
    });
}

/// One run's shape: the faults are the same in both; `commands` turns auto-sweep off and
/// the harness's commander on (`fault/commands.rs`).
struct Scenario {
    commands: bool,
    seconds: u64,
    owners: u64,
}

fn run(scenario: Scenario) {
    let Scenario { commands, seconds, owners: owner_count } = scenario;
    let seed = knob("DEPOSITKIT_FAULT_SEED", 1);
    let member_count = usize::try_from(knob("DEPOSITKIT_FAULT_MEMBERS", 3)).unwrap_or(3);
    let ttl = Duration::from_millis(knob("DEPOSITKIT_FAULT_LEASE_TTL_MS", 3000));
    let renew = Duration::from_millis(knob("DEPOSITKIT_FAULT_RENEW_MS", 1000));
    let gap = knob("DEPOSITKIT_FAULT_DEPOSIT_GAP_MS", 300);
    let settle = Duration::from_secs(knob("DEPOSITKIT_FAULT_SETTLE_SECONDS", 90));
    eprintln!(
        "fault harness{}: seed {seed}, {seconds} s of faults, {owner_count} owners, \
         {member_count} members, lease {} ms renewed every {} ms",
        if commands { " (commands, auto-sweep off)" } else { "" },
        ttl.as_millis(),
        renew.as_millis()
    );
    let started = Instant::now();
    let mut rng = Rng::new(seed);

    let postgres = OwnPostgres::start();
    let url = postgres.url().to_owned();
    let dir =
        std::env::temp_dir().join(format!("depositkit-faults-{}-{commands}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let devnet =
        Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite")).with_fault_injection()).unwrap();
    // Every send takes a while, so kills and pauses land mid-send too.
    let slow = HttpFault { delay_ms: Some(150), count: Some(1_000_000), ..HttpFault::default() };
    devnet.inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &slow).unwrap();

    let admin = Fleet::connect(&url, 2).unwrap();
    audit::install(&url);
    let mut owners = Vec::new();
    for n in 0..owner_count {
        let owner = admin
            .add_owner(&format!("0x{:040x}", 0xfa17_0000 + n), OwnerOptions::default())
            .unwrap();
        owners.push(owner);
    }
    let settings = MemberSettings {
        database_url: url.clone(),
        services_url: devnet.services_url(),
        lease_ttl: ttl,
        renew_every: renew,
        auto_sweep: !commands,
    };
    let mut cluster = Cluster::start(postgres, settings, member_count);
    // Every owner's client runs somewhere (as the members say) before the load starts.
    let everyone: BTreeSet<String> = owners.iter().cloned().collect();
    assert!(
        within(Duration::from_secs(60), || {
            let running: BTreeSet<String> =
                cluster.members.iter().flat_map(|m| m.owners()).collect();
            running == everyone
        }),
        "the members never ran every owner: {:?}",
        cluster.members.iter().map(|m| m.tail()).collect::<Vec<_>>()
    );

    let mut accounts = Vec::new();
    assert!(
        within(Duration::from_secs(60), || {
            accounts = rows(&url, "SELECT owner, account_id FROM dk_clients WHERE account_id IS NOT NULL ORDER BY owner")
                .unwrap_or_default();
            accounts.len() == owners.len()
        }),
        "not every owner's client opened its account: {accounts:?}"
    );
    let owners: Vec<workload::Owner> = accounts
        .into_iter()
        .map(|row| {
            let (owner, account_id) = (row[0].clone().unwrap(), row[1].clone().unwrap());
            let account =
                devnet.store().ua_account(&account_id).unwrap().expect("devnet has the account");
            workload::Owner { owner, account_id, address: account.evm_address }
        })
        .collect();

    let stop_deposits = Arc::new(AtomicBool::new(false));
    let stream = workload::deposits(
        devnet.store().clone(),
        owners.clone(),
        Rng::new(rng.next_u64()),
        (gap / 2, gap * 3 / 2),
        Arc::clone(&stop_deposits),
    );
    let stop_consumer = Arc::new(AtomicBool::new(false));
    let consumed = Arc::new(Mutex::new(workload::Consumed::default()));
    let consumer =
        workload::consumer(url.clone(), 5, Arc::clone(&stop_consumer), Arc::clone(&consumed));

    let stop_commands = Arc::new(AtomicBool::new(false));
    let commanded = Arc::new(Mutex::new(fault::commands::Commanded::default()));
    let commander = commands.then(|| {
        fault::commands::commander(
            url.clone(),
            owners.iter().map(|o| o.owner.clone()).collect(),
            Rng::new(rng.next_u64()),
            Arc::clone(&stop_commands),
            Arc::clone(&commanded),
        )
    });

    let mut next = plan(&mut rng);
    let faults_from = Instant::now();
    let mut n = 0;
    let mut problems = Vec::new();
    while faults_from.elapsed() < Duration::from_secs(seconds) || n < 5 {
        // Timing the faults: a random pause between them.
        std::thread::sleep(Duration::from_millis(rng.between(500, 2000)));
        cluster.inject(next(n), &mut rng);
        n += 1;
        problems.extend(cluster.crashed());
    }
    stop_deposits.store(true, Ordering::SeqCst);
    let made = stream.join().expect("the deposit stream ran");

    // Settling: every account emptied, every stored event consumed.
    let all_swept = || {
        owners.iter().all(|owner| {
            devnet
                .store()
                .ua_balances(&owner.account_id)
                .unwrap()
                .iter()
                .all(|l| l.raw_amount.is_zero())
        })
    };
    let caught_up = || {
        let seen: BTreeSet<(String, u64)> =
            workload::lock(&consumed).events.iter().map(|e| (e.owner.clone(), e.id)).collect();
        seen.len() as u64 == count(&url, "SELECT count(*) FROM dk_events")
    };
    // A deposit whose sweep failed stays `failed` until recovered: the operator's way is a
    // recovery command to its holder, asked from any process.
    let mut recoveries = 0;
    let mut recovered = BTreeSet::new();
    let mut last_recovery = Instant::now();
    let settled = within(settle, || {
        if all_swept() && caught_up() {
            return true;
        }
        if last_recovery.elapsed() > Duration::from_secs(5) {
            let failed = rows(
                &url,
                "SELECT DISTINCT owner FROM dk_deposits WHERE open AND state = 'failed'",
            )
            .unwrap_or_default();
            for owner in failed.into_iter().filter_map(|r| r[0].clone()) {
                recoveries += 1;
                recovered.insert(owner.clone());
                let _ = admin.request(&owner, FleetCommand::Recover, Duration::from_secs(10));
            }
            last_recovery = Instant::now();
        }
        false
    });
    problems.extend(cluster.crashed());
    stop_commands.store(true, Ordering::SeqCst);
    if let Some(commander) = commander {
        commander.join().expect("the commander ran");
    }
    // The members leave gracefully (SIGTERM), so nothing writes any more; then the consumer
    // must get every event stored, those of the leaving included.
    for member in &mut cluster.members {
        if !member.terminate(Duration::from_secs(20)).is_some_and(|s| s.success()) {
            problems.push(format!("{} did not leave cleanly: {}", member.name, member.tail()));
        }
    }
    if !within(Duration::from_secs(30), caught_up) {
        problems.push("the log consumer did not get every stored event within 30 s".to_owned());
    }
    stop_consumer.store(true, Ordering::SeqCst);
    consumer.join().expect("the consumer ran");
    if !settled {
        problems.push(format!(
            "the fleet did not settle within {} s (accounts emptied: {}, log consumed: {})",
            settle.as_secs(),
            all_swept(),
            caught_up()
        ));
    }

    let mut attempts = HashMap::new();
    let sql = "SELECT quote_id, transaction_id, deposit_id FROM dk_attempts";
    for row in rows(&url, sql).unwrap() {
        let deposit = row[2].clone().unwrap_or_default();
        for key in row[..2].iter().flatten() {
            attempts.insert(key.clone(), deposit.clone());
        }
    }
    let (money, money_problems) = checks::money(&devnet, &owners, &made, &attempts);
    let stored: BTreeSet<(String, u64)> = rows(&url, "SELECT owner, id FROM dk_events")
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].clone().unwrap_or_default().parse().unwrap_or(0),
            )
        })
        .collect();
    let events = std::mem::take(&mut workload::lock(&consumed).events);
    let (logged, log_problems) = checks::log(&events, &stored, &money.sends);
    let mut fencing = audit::violations(&url);
    for pause in &cluster.pauses {
        let after = format!(
            "'{}'::timestamptz + interval '{} milliseconds'",
            pause.stopped_at,
            ttl.as_millis() + 1000
        );
        let late = audit::writes_after(&url, &pause.nodes, &after);
        if late > 0 {
            fencing.push(format!(
                "{} wrote {late} rows after its lease passed while paused (nodes {:?})",
                pause.member, pause.nodes
            ));
        }
    }
    // Owners whose log came out of id order: failures, with their stored rows to look into.
    problems.extend(logged.inversions.iter().cloned());
    for inversion in &logged.inversions {
        let owner = inversion.split('\'').next().unwrap_or_default().trim_start_matches("owner ");
        let sql = format!(
            "SELECT id, tx::text, pos, type, deposit_id FROM dk_events WHERE owner = '{owner}' \
             ORDER BY id"
        );
        let writers = format!(
            "SELECT tx::text, writer, pg_xact_commit_timestamp(tx)::text FROM dk_audit_writes \
             WHERE tbl = 'dk_events' AND owner = '{owner}' ORDER BY tx"
        );
        eprintln!(
            "{inversion}; stored: {:?}; written (tx, writer, committed): {:?}; consumer \
             restarted after deliveries {:?}",
            rows(&url, &sql),
            rows(&url, &writers),
            workload::lock(&consumed).restarted_at
        );
    }
    problems.extend(cluster.problems.iter().cloned());
    problems.extend(money_problems);
    problems.extend(log_problems);
    problems.extend(fencing);
    let commanded = workload::lock(&commanded);
    if commands {
        problems.extend(checks::commands(&commanded, &money, &recovered));
        problems.extend(audit::command_violations(&url));
        if commanded.deposits.is_empty() {
            problems.push("the commander asked for nothing".to_owned());
        }
    }

    let consumer_stats = workload::lock(&consumed);
    eprintln!(
        "fault harness summary (seed {seed}, {:.0} s):\n  faults: {:?}; {} member processes \
         started; {} sessions cut; {} pauses; {} Unreachable errors while PostgreSQL was down; \
         {} recovery commands afterwards\n  \
         deposits: {} made ({} raw USDC); {} client deposits sent; {} delivered; {} refunds; \
         {} failed sends (retried)\n  log: {} events delivered, {} distinct, {} deposits \
         credited, {} per-owner order inversions; consumer restarted {} times, {} read errors\n  {}\n  \
         {}\n  violations: {}",
        started.elapsed().as_secs_f64(),
        cluster.injected,
        cluster.started(),
        cluster.sessions_cut,
        cluster.pauses.len(),
        cluster.unreachable_seen,
        recoveries,
        money.deposits,
        money.deposited,
        money.swept_deposits,
        money.delivered,
        money.refunds,
        money.failed_sends,
        logged.delivered,
        logged.distinct,
        logged.credited,
        logged.inversions.len(),
        consumer_stats.restarts,
        consumer_stats.read_errors,
        audit::summary(&url),
        if commands { commander_summary(&commanded, &url) } else { "no commands".to_owned() },
        problems.len()
    );
    drop(consumer_stats);
    if !problems.is_empty() {
        let open = rows(&url, "SELECT owner, id, state FROM dk_deposits WHERE open ORDER BY owner")
            .unwrap_or_default();
        problems.push(format!("deposits still open in the fleet's store: {open:?}"));
        let tails: Vec<String> =
            cluster.members.iter().map(|m| format!("--- {}:\n{}", m.name, m.tail())).collect();
        panic!(
            "the fault run (seed {seed}; DEPOSITKIT_FAULT_SEED={seed} repeats it) found:\n{}\n{}",
            problems.join("\n"),
            tails.join("\n")
        );
    }
    assert!(money.deposits > 0 && money.swept_deposits > 0, "the run made and swept deposits");
    let _ = std::fs::remove_dir_all(dir);
}

/// What the commander asked and what came of it, one line.
fn commander_summary(commanded: &fault::commands::Commanded, url: &str) -> String {
    let both = commanded.deposits.values().filter(|a| a.kinds.len() > 1).count();
    let changes: usize = commanded.destinations.values().map(|l| l.len() - 1).sum();
    format!(
        "commander: {} deposits asked for ({both} with both a sweep and a refund), {} requests \
         ({} retries, {} timeouts, {} unreachable, {} reconnects), {changes} destination \
         changes; {}",
        commanded.deposits.len(),
        commanded.requests,
        commanded.retries,
        commanded.timeouts,
        commanded.unreachable,
        commanded.reconnects,
        audit::command_summary(url)
    )
}

/// Runs the member binary with `args` to its end: exit code and stdout + stderr.
fn member_run(args: &[&str]) -> (Option<i32>, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_depositkit-fleet-member"))
        .args(args)
        .env_remove("DEPOSITKIT_FLEET_DATABASE_URL")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

#[test]
fn removed_owners_and_members_without_a_usable_database_get_typed_errors() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 2).unwrap();
    let owner = fleet
        .add_owner("0x00000000000000000000000000000000000dead1", OwnerOptions::default())
        .unwrap();
    fleet.remove_owner(&owner).unwrap();
    match fleet.request(&owner, FleetCommand::Recover, Duration::from_secs(1)) {
        Err(FleetError::UnknownOwner(o)) => assert_eq!(o, owner),
        other => panic!("a command for a removed owner gave {other:?}, expected UnknownOwner"),
    }
    assert!(matches!(fleet.remove_owner(&owner), Err(FleetError::UnknownOwner(o)) if o == owner));
    assert!(matches!(
        fleet.set_owner_options(&owner, OwnerOptions::default()),
        Err(FleetError::UnknownOwner(_))
    ));
    assert!(matches!(fleet.holder(&owner), Err(FleetError::UnknownOwner(_))));

    // The member tool: a database it cannot reach, one of another schema version, bad flags.
    let (code, text) = member_run(&["--database-url", "postgres://app:secret@127.0.0.1:1/none"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("\"event\":\"error\"") && text.contains("127.0.0.1:1/none is unreachable"),
        "{text}"
    );
    assert!(!text.contains("secret"), "no password in its output: {text}");
    database.execute("UPDATE dk_meta SET value = '99' WHERE key = 'schema_version'");
    let (code, text) = member_run(&["--database-url", database.url()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("fleet schema version 99"), "{text}");
    let (code, text) = member_run(&[
        "--database-url",
        database.url(),
        "--lease-ttl-ms",
        "1000",
        "--renew-every-ms",
        "2000",
    ]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--renew-every-ms (2000 ms) must be below --lease-ttl-ms (1000 ms)"),
        "{text}"
    );
    let (code, text) = member_run(&["--database-url", database.url(), "--lease-ttl-ms", "soon"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("--lease-ttl-ms 'soon' is not a whole number"), "{text}");
}
