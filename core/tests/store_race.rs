//! Processes that start on one store at the same moment: exactly one of them owns it, every
//! time, and the others are refused with a `Configuration` error that names the file. (A host
//! supervisor that starts two replicas at once must never end with none.)
//!
//! The test runs copies of this test binary as the racing processes: each builds a client on
//! the store at the instant the parent names, reports whether it won, and holds the store until the
//! parent lets it exit.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use depositkit_core::ErrorKind;
use depositkit_core::deposit::{DepositClient, DepositClientConfig, DestinationConfig};

const CHILD_ENV: &str = "DEPOSITKIT_STORE_RACE_STORE";
const START_ENV: &str = "DEPOSITKIT_STORE_RACE_AT";
const OWNER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";

/// Not a test of its own: the body of a racing process (does nothing unless the parent set
/// `CHILD_ENV`).
#[test]
fn racing_process() {
    let Ok(store) = std::env::var(CHILD_ENV) else { return };
    let stdin = std::io::stdin();
    // Start at the instant the parent named, spinning for the last millisecond, so that the
    // racers of a round open the store within microseconds of each other.
    let at: u128 = std::env::var(START_ENV).unwrap().parse().unwrap();
    let now = || SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    if let Some(wait) = at.checked_sub(now() + 1_000_000) {
        std::thread::sleep(Duration::from_nanos(u64::try_from(wait).unwrap()));
    }
    while now() < at {
        std::hint::spin_loop();
    }
    let line = match DepositClient::new(client_config(&PathBuf::from(store))) {
        Ok(_client) => {
            println!("RACE won");
            std::io::stdout().flush().unwrap();
            // Hold the store until the parent closes our stdin.
            let mut rest = String::new();
            while stdin.lock().read_line(&mut rest).unwrap_or(0) > 0 {}
            return;
        }
        Err(err) => format!("RACE lost {:?} {}", err.kind(), err.message()),
    };
    println!("{line}");
}

fn client_config(store: &Path) -> DepositClientConfig {
    DepositClientConfig::new(OWNER, DestinationConfig::chain(8453))
        .with_services_url("http://127.0.0.1:9")
        .with_store_path(store.display().to_string())
}

struct Racer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

fn spawn(store: &Path, at: u128) -> Racer {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "racing_process", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, store)
        .env(START_ENV, at.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    Racer { child, stdin, stdout }
}

fn outcome(racer: &mut Racer) -> String {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = racer.stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "a racer exited without a word; it printed {seen:?}");
        seen.push_str(&line);
        // libtest may print its "test racing_process ... " before our line.
        if let Some(at) = line.find("RACE ") {
            return line[at + 5..].trim().to_owned();
        }
    }
}

#[test]
fn processes_starting_on_one_store_at_once_leave_exactly_one_owner() {
    // DEPOSITKIT_STORE_RACE_ROUNDS=N and _RACERS=M stress it harder by hand.
    let count = |name: &str, default: usize| {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let rounds_count = count("DEPOSITKIT_STORE_RACE_ROUNDS", 8);
    let racers_count = count("DEPOSITKIT_STORE_RACE_RACERS", 3);
    let dir = std::env::temp_dir().join(format!("depositkit-store-race-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The rounds run side by side (one store each, starting 25 ms apart so that each round's
    // racers have the cores to themselves), so the losers' lock waits overlap.
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + Duration::from_millis(500);
    let rounds: Vec<(PathBuf, Vec<Racer>)> = (0..rounds_count)
        .map(|round| {
            let store = dir.join(format!("round-{round}.sqlite"));
            if round % 2 == 1 {
                // Half the rounds race on a store that exists (in WAL mode, with a schema).
                drop(DepositClient::new(client_config(&store)).unwrap());
            }
            let at = (start + Duration::from_millis(25 * round as u64)).as_nanos();
            let racers = (0..racers_count).map(|_| spawn(&store, at)).collect();
            (store, racers)
        })
        .collect();
    let mut rounds = rounds;
    for (store, racers) in &mut rounds {
        let outcomes: Vec<String> = racers.iter_mut().map(outcome).collect();
        let winners = outcomes.iter().filter(|o| *o == "won").count();
        assert_eq!(winners, 1, "{}: {outcomes:?}", store.display());
        for lost in outcomes.iter().filter(|o| *o != "won") {
            assert!(lost.starts_with(&format!("lost {:?}", ErrorKind::Configuration)), "{lost}");
            assert!(lost.contains("is in use by another process"), "{lost}");
            assert!(lost.contains(&store.display().to_string()), "{lost}");
        }
    }
    for (_, racers) in &mut rounds {
        for racer in racers.iter_mut() {
            racer.stdin.take();
            racer.child.wait().unwrap();
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
