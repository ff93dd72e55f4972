//! `depositkit-fleet-member`: one member of a deposit fleet as a process of its own. It joins
//! the fleet in PostgreSQL, runs a deposit client for each owner it holds (its share of the
//! registered owners) until SIGTERM or SIGINT, then leaves gracefully; killed, its owners pass
//! to the other members once its lease runs out. It registers no owners: any process does that
//! (`Fleet::add_owner`).
//!
//! ```text
//! depositkit-fleet-member --database-url postgres://app@db/deposits \
//!     --services-url https://services.example --name worker-1
//! ```
//!
//! | flag | environment | default |
//! |---|---|---|
//! | `--database-url URL` | `DEPOSITKIT_FLEET_DATABASE_URL` | required |
//! | `--services-url URL` | `DEPOSITKIT_FLEET_SERVICES_URL` | the client's own |
//! | `--name NAME` | `DEPOSITKIT_FLEET_NAME` | `depositkit-fleet-member` |
//! | `--destination-chain ID` | `DEPOSITKIT_FLEET_DESTINATION_CHAIN` | `8453` |
//! | `--lease-ttl-ms MS` | `DEPOSITKIT_FLEET_LEASE_TTL_MS` | `10000` |
//! | `--renew-every-ms MS` | `DEPOSITKIT_FLEET_RENEW_EVERY_MS` | `3000` |
//! | `--max-connections N` | `DEPOSITKIT_FLEET_MAX_CONNECTIONS` | `8` |
//! | `--polling-interval-ms MS` | `DEPOSITKIT_FLEET_POLLING_INTERVAL_MS` | the client's own |
//! | `--sweep-retry-delay-ms MS` | `DEPOSITKIT_FLEET_SWEEP_RETRY_DELAY_MS` | the client's own |
//! | `--auto-sweep true\|false` | `DEPOSITKIT_FLEET_AUTO_SWEEP` | `true` (`false`: deposits wait for a `sweep` or `refund` command) |
//!
//! A URL with a password belongs in `DEPOSITKIT_FLEET_DATABASE_URL`: other users of the machine
//! can read command lines.
//!
//! It prints one JSON line per change on stdout: `{"event":"joined","node":…,"name":…,
//! "pid":…}`, `{"event":"holding","node":…,"owners":[…]}` whenever its node id or the owners
//! it runs change, `{"event":"left"}`, or `{"event":"error","message":…}` before exiting 1 (the
//! message never shows the database password). Exit codes: 0 after leaving, 1 failure, 2 usage.
//! The fault harness (`fleet/tests/fault_harness.rs`, `docs/fleet.md`) runs three of them.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use depositkit_core::deposit::{DepositClientConfig, DestinationConfig};
use depositkit_fleet::{DepositFleet, FleetOptions, LeaseSettings};
use serde_json::json;

/// `(flag, environment variable)` of every option.
const OPTIONS: [(&str, &str); 10] = [
    ("--database-url", "DEPOSITKIT_FLEET_DATABASE_URL"),
    ("--services-url", "DEPOSITKIT_FLEET_SERVICES_URL"),
    ("--name", "DEPOSITKIT_FLEET_NAME"),
    ("--destination-chain", "DEPOSITKIT_FLEET_DESTINATION_CHAIN"),
    ("--lease-ttl-ms", "DEPOSITKIT_FLEET_LEASE_TTL_MS"),
    ("--renew-every-ms", "DEPOSITKIT_FLEET_RENEW_EVERY_MS"),
    ("--max-connections", "DEPOSITKIT_FLEET_MAX_CONNECTIONS"),
    ("--polling-interval-ms", "DEPOSITKIT_FLEET_POLLING_INTERVAL_MS"),
    ("--sweep-retry-delay-ms", "DEPOSITKIT_FLEET_SWEEP_RETRY_DELAY_MS"),
    ("--auto-sweep", "DEPOSITKIT_FLEET_AUTO_SWEEP"),
];

/// The options given: flags first, then the environment.
fn read_options(args: &[String]) -> Result<HashMap<&'static str, String>, String> {
    let mut given = HashMap::new();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let Some((name, _)) = OPTIONS.iter().find(|(name, _)| name == flag) else {
            return Err(format!("unknown argument '{flag}' (see the flags in --help)"));
        };
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        given.insert(*name, value.clone());
    }
    for (name, variable) in OPTIONS {
        if let (false, Ok(value)) = (given.contains_key(name), std::env::var(variable)) {
            given.insert(name, value);
        }
    }
    Ok(given)
}

fn number(given: &HashMap<&str, String>, flag: &str) -> Result<Option<u64>, String> {
    given
        .get(flag)
        .map(|text| {
            text.parse::<u64>()
                .map_err(|_| format!("{flag} '{text}' is not a whole number"))
                .and_then(|n| if n == 0 { Err(format!("{flag} must be above 0")) } else { Ok(n) })
        })
        .transpose()
}

/// What to join, and how.
struct Member {
    url: String,
    template: DepositClientConfig,
    options: FleetOptions,
}

fn member(given: &HashMap<&str, String>) -> Result<Member, String> {
    let url = given.get("--database-url").cloned().ok_or(
        "--database-url (or DEPOSITKIT_FLEET_DATABASE_URL) is required: the fleet's PostgreSQL",
    )?;
    let chain = number(given, "--destination-chain")?.unwrap_or(8453);
    // The owner address is each owner's own; this one is only the template's placeholder.
    let mut template = DepositClientConfig::new(
        "0x0000000000000000000000000000000000000001",
        DestinationConfig::chain(chain),
    );
    if let Some(services) = given.get("--services-url") {
        template = template.with_services_url(services);
    }
    if let Some(ms) = number(given, "--polling-interval-ms")? {
        template.polling_interval_ms = ms;
        template.min_polling_interval_ms = template.min_polling_interval_ms.min(ms);
    }
    if let Some(ms) = number(given, "--sweep-retry-delay-ms")? {
        template.sweep_retry_delay_ms = ms;
    }
    match given.get("--auto-sweep").map(String::as_str) {
        None | Some("true") => {}
        Some("false") => template = template.with_auto_sweep(false),
        Some(other) => return Err(format!("--auto-sweep '{other}' must be true or false")),
    }
    let mut lease = LeaseSettings::default();
    if let Some(ms) = number(given, "--lease-ttl-ms")? {
        lease.ttl = Duration::from_millis(ms);
    }
    if let Some(ms) = number(given, "--renew-every-ms")? {
        lease.renew_every = Duration::from_millis(ms);
    }
    if lease.renew_every >= lease.ttl {
        return Err(format!(
            "--renew-every-ms ({} ms) must be below --lease-ttl-ms ({} ms)",
            lease.renew_every.as_millis(),
            lease.ttl.as_millis()
        ));
    }
    let mut options = FleetOptions { lease, ..FleetOptions::default() };
    if let Some(name) = given.get("--name") {
        options.name.clone_from(name);
    } else {
        options.name = "depositkit-fleet-member".to_owned();
    }
    if let Some(n) = number(given, "--max-connections")? {
        options.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
    }
    Ok(Member { url, template, options })
}

fn say(line: &serde_json::Value) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// Runs the member until SIGTERM or SIGINT; reports what it holds as it changes.
fn serve(member: Member) -> Result<(), String> {
    let name = member.options.name.clone();
    let fleet = DepositFleet::join(&member.url, member.template, member.options)
        .map_err(|e| e.to_string())?;
    say(&json!({"event": "joined", "node": fleet.node_id(), "name": name,
                "pid": std::process::id()}));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
        let mut shown = (String::new(), Vec::new());
        loop {
            let now = (fleet.node_id(), fleet.running_owners());
            if now != shown {
                say(&json!({"event": "holding", "node": now.0, "owners": now.1}));
                shown = now;
            }
            tokio::select! {
                _ = term.recv() => break,
                _ = interrupt.recv() => break,
                () = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
        }
        Ok::<(), String>(())
    })?;
    fleet.leave().map_err(|e| e.to_string())?;
    say(&json!({"event": "left"}));
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("usage: depositkit-fleet-member --database-url URL [--services-url URL]");
        for (flag, variable) in OPTIONS {
            println!("  {flag} VALUE   (or {variable})");
        }
        return ExitCode::SUCCESS;
    }
    let member = match read_options(&args).and_then(|given| member(&given)) {
        Ok(member) => member,
        Err(message) => {
            eprintln!("depositkit-fleet-member: usage error: {message}");
            return ExitCode::from(2);
        }
    };
    match serve(member) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            say(&json!({"event": "error", "message": message}));
            eprintln!("depositkit-fleet-member: error: {message}");
            ExitCode::FAILURE
        }
    }
}
