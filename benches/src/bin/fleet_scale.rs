//! The fleet at scale (issue 21): members as processes of their own sharing owners through a
//! PostgreSQL this benchmark starts (`scripts/postgres.sh`), against devnet served by this
//! process (every chain on its ledger, RS256 by ring: its lightest mode).
//!
//! It reports:
//! - **start-up**: `--owners` owners registered, then the time until every one is held by one of
//!   `--members` member processes and its client watching;
//! - **memory**: each member's RSS growth from joining (no owners) to holding its share, / owners;
//! - **detection**: a deposit made on devnet → its `detected` event read from the fleet's one
//!   log (`EventReader`) by this process, p50 / p99 over `--samples` deposits;
//! - **failover**: SIGKILL of the member holding the most owners → every one of its owners
//!   held by a survivor and watching, once at full scale and `--kills` times on a fleet of
//!   `--kill-owners` owners (a replacement member joins after each kill);
//! - **durable events / s** into PostgreSQL: onramp events emitted by `--rate-owners` owners'
//!   clients from 16 threads, each one fenced transaction in `dk_events`.
//!
//! Members are this binary again (`fleet_scale --member URL SERVICES NAME`), printing what
//! they run on stdout. Run (see `docs/benchmarks.md`, "Issue 21: fleet"):
//! `cargo build --release -p depositkit-benches --bin fleet_scale && target/release/fleet_scale`
//! Options: `--owners 30000`, `--members 3`, `--kills 8`, `--kill-owners 1500`, `--samples 40`,
//! `--events 20000`, `--rate-owners 32`, `--quick` (tiny sizes).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use depositkit_core::TokenType;
use depositkit_core::deposit::{DepositClientConfig, DestinationConfig};
use depositkit_fleet::{DepositFleet, EventCursor, Fleet, FleetOptions, LeaseSettings};
use serde_json::{Value, json};

struct Options {
    owners: usize,
    members: usize,
    kills: usize,
    kill_owners: usize,
    samples: usize,
    events: usize,
    rate_owners: usize,
}

fn options() -> Options {
    let mut o = Options {
        owners: 30_000,
        members: 3,
        kills: 8,
        kill_owners: 1500,
        samples: 40,
        events: 20_000,
        rate_owners: 32,
    };
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo test --benches` style flags mean nothing here.
    args.retain(|a| !matches!(a.as_str(), "--bench" | "--test" | "--nocapture"));
    if args.iter().any(|a| a == "--quick") {
        args.retain(|a| a != "--quick");
        (o.owners, o.kills, o.kill_owners, o.samples, o.events, o.rate_owners) =
            (300, 2, 150, 6, 2000, 8);
    }
    for pair in args.chunks(2) {
        let field = match pair[0].as_str() {
            "--owners" => &mut o.owners,
            "--members" => &mut o.members,
            "--kills" => &mut o.kills,
            "--kill-owners" => &mut o.kill_owners,
            "--samples" => &mut o.samples,
            "--events" => &mut o.events,
            "--rate-owners" => &mut o.rate_owners,
            other => panic!("unknown option {other}"),
        };
        *field = pair.get(1).and_then(|v| v.parse().ok()).unwrap_or_else(|| {
            panic!("{} needs a whole number", pair[0]);
        });
    }
    o
}

/// The lease every member uses: the defaults (10 s, renewed every 3 s), but claims and
/// hand-backs unbounded per tick, so a failover or a rebalance is one tick, not many.
fn lease() -> LeaseSettings {
    LeaseSettings { claim_per_tick: 100_000, release_per_tick: 100_000, ..LeaseSettings::default() }
}

/// The owners' client template: devnet, default polling (2 s), auto-sweep off (sweeps would
/// load devnet, not the fleet).
fn template(services: &str) -> DepositClientConfig {
    let mut config = DepositClientConfig::new(
        "0x0000000000000000000000000000000000000001",
        DestinationConfig::chain(42161),
    )
    .with_services_url(services);
    config.auto_sweep = false;
    config
}

/// `fleet_scale --member URL SERVICES NAME`: one member; prints `node ID`, `addr OWNER EVM`
/// for each owner it starts running, and `running N` whenever the count changes.
fn member_main(url: &str, services: &str, name: &str) {
    let options = FleetOptions { name: name.to_owned(), lease: lease(), max_connections: 8 };
    let fleet = DepositFleet::join(url, template(services), options).unwrap();
    let mut out = std::io::stdout().lock();
    let (mut node, mut running, mut known) = (String::new(), usize::MAX, HashMap::new());
    loop {
        if fleet.node_id() != node {
            node = fleet.node_id();
            writeln!(out, "node {node}").unwrap();
        }
        // The owners are listed (a sort of tens of thousands) only when their count changed:
        // the member's own work is what is measured.
        let count = fleet.running_count();
        if count != running {
            for owner in &fleet.running_owners() {
                if known.contains_key(owner) {
                    continue;
                }
                if let Some(evm) = fleet.client(owner).and_then(|c| c.deposit_addresses().ok()) {
                    writeln!(out, "addr {owner} {}", evm.evm).unwrap();
                    known.insert(owner.clone(), ());
                }
            }
            running = count;
            writeln!(out, "running {running}").unwrap();
        }
        out.flush().unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A PostgreSQL of this run (`scripts/postgres.sh`), stopped at the end.
struct Postgres {
    dir: PathBuf,
    url: String,
    bin: PathBuf,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres.sh")
}

impl Postgres {
    fn start() -> Postgres {
        let dir =
            std::env::temp_dir().join(format!("depositkit-fleet-scale-{}", std::process::id()));
        let output = Command::new("bash")
            .arg(script())
            .args(["start".as_ref(), dir.as_os_str()])
            .args(["--watch-pid", &std::process::id().to_string()])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let url = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let bin = std::fs::read_to_string(dir.join("bin")).unwrap().trim().into();
        Postgres { dir, url, bin }
    }

    /// The result of `sql` in database `db` (psql, unaligned).
    fn sql(&self, db: &str, sql: &str) -> String {
        let url = format!("{}/{db}", self.url.rsplit_once('/').unwrap().0);
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-t", "-A", "-d", &url, "-c", sql])
            .output()
            .unwrap();
        assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// A new empty database: its URL.
    fn database(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        format!("{}/{name}", self.url.rsplit_once('/').unwrap().0)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(script()).arg("stop").arg(&self.dir).output();
    }
}

/// What the members said: each one's running count, and every owner's deposit address.
#[derive(Default)]
struct Board {
    running: Mutex<HashMap<u32, usize>>,
    addresses: Mutex<HashMap<String, String>>,
}

struct MemberProcess {
    child: Child,
}

fn spawn_member(url: &str, services: &str, name: &str, board: &Arc<Board>) -> MemberProcess {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--member", url, services, name])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let board = Arc::clone(board);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let mut words = line.split(' ');
            match (words.next(), words.next(), words.next()) {
                (Some("running"), Some(n), _) => {
                    board.running.lock().unwrap().insert(pid, n.parse().unwrap());
                }
                (Some("addr"), Some(owner), Some(evm)) => {
                    board.addresses.lock().unwrap().insert(owner.to_owned(), evm.to_owned());
                }
                _ => {}
            }
        }
        board.running.lock().unwrap().remove(&pid);
    });
    MemberProcess { child }
}

impl Board {
    fn running(&self, pid: u32) -> Option<usize> {
        self.running.lock().unwrap().get(&pid).copied()
    }

    fn total(&self) -> usize {
        self.running.lock().unwrap().values().sum()
    }

    /// Waits until `done(self)`; the time it took, or panics after `limit`.
    fn wait(&self, limit: Duration, what: &str, done: impl Fn(&Board) -> bool) -> Duration {
        let started = Instant::now();
        while !done(self) {
            assert!(started.elapsed() < limit, "timed out: {what} (running {})", self.total());
            std::thread::sleep(Duration::from_millis(10));
        }
        started.elapsed()
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
    line[6..].trim().trim_end_matches(" kB").trim().parse().unwrap_or(0)
}

/// User + system CPU time of process `pid` (`/proc/PID/stat`); this process's includes
/// devnet's, which it serves.
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Duration::from_secs_f64((ticks(11) + ticks(12)) as f64 / hz)
}

/// CPU of each process of the PostgreSQL server of this run: the postmaster
/// (`data/postmaster.pid`'s first line) and its children (the backends).
fn postgres_cpu(dir: &std::path::Path) -> HashMap<u32, Duration> {
    let pid_file = std::fs::read_to_string(dir.join("data/postmaster.pid")).unwrap_or_default();
    let Some(postmaster) = pid_file.lines().next().and_then(|l| l.trim().parse::<u32>().ok())
    else {
        return HashMap::new();
    };
    let children = std::fs::read_dir("/proc").into_iter().flatten().flatten().filter_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let ppid: u32 = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
        (ppid == postmaster).then_some(pid)
    });
    std::iter::once(postmaster).chain(children).map(|pid| (pid, cpu(pid))).collect()
}

/// CPU of this process (with devnet), of `members` and of PostgreSQL, from now until `report`
/// is called.
struct CpuWindow {
    own: Duration,
    members: Vec<(u32, Duration)>,
    /// The server's directory, and its processes' CPU at the start.
    postgres: (PathBuf, HashMap<u32, Duration>),
}

impl CpuWindow {
    fn start(members: &[u32], postgres: &std::path::Path) -> CpuWindow {
        let own = cpu(std::process::id());
        CpuWindow {
            own,
            members: members.iter().map(|p| (*p, cpu(*p))).collect(),
            postgres: (postgres.to_owned(), postgres_cpu(postgres)),
        }
    }

    /// `devnet + bench X s, members Y s, PostgreSQL Z s (each per owner)`.
    fn report(&self, owners: usize) -> String {
        let own = cpu(std::process::id()) - self.own;
        let members: Duration = self.members.iter().map(|(p, before)| cpu(*p) - *before).sum();
        // By process: the backends of a killed member end in the window (what they used in it
        // is not counted), those of a new connection start in it.
        let postgres: Duration = postgres_cpu(&self.postgres.0)
            .iter()
            .map(|(pid, now)| {
                now.saturating_sub(self.postgres.1.get(pid).copied().unwrap_or_default())
            })
            .sum();
        let per = |d: Duration| d.as_secs_f64() * 1e3 / owners.max(1) as f64;
        format!(
            "CPU: devnet (+ this process) {:.1} s ({:.2} ms / owner), members {:.1} s ({:.2} ms / owner), PostgreSQL {:.1} s ({:.2} ms / owner)",
            own.as_secs_f64(),
            per(own),
            members.as_secs_f64(),
            per(members),
            postgres.as_secs_f64(),
            per(postgres)
        )
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim().to_owned()
}

fn owner(phase: u64, i: usize) -> String {
    format!("0x{:040x}", (0xf1ee_7000_u64 + phase) << 32 | i as u64)
}

/// Registers `n` owners from 8 threads.
fn register(fleet: &Fleet, phase: u64, n: usize) {
    std::thread::scope(|scope| {
        for t in 0..8 {
            scope.spawn(move || {
                for i in (t..n).step_by(8) {
                    fleet.add_owner(&owner(phase, i), Default::default()).unwrap();
                }
            });
        }
    });
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// Xorshift: random enough for picking owners and moments.
struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound.max(1)
    }
}

/// A fleet of member processes on database `db`.
struct Members {
    url: String,
    services: String,
    /// The PostgreSQL server's directory (its CPU is measured too).
    postgres: PathBuf,
    board: Arc<Board>,
    processes: Vec<MemberProcess>,
}

impl Members {
    fn start(url: String, services: &str, n: usize, postgres: &Postgres) -> Members {
        let board = Arc::new(Board::default());
        let processes =
            (0..n).map(|i| spawn_member(&url, services, &format!("m{i}"), &board)).collect();
        let services = services.to_owned();
        let postgres = postgres.dir.clone();
        let members = Members { url, services, postgres, board, processes };
        members.board.wait(Duration::from_secs(60), "members joined", |b| {
            b.running.lock().unwrap().len() == n
        });
        members
    }

    /// SIGKILLs the member running the most owners, then waits until the survivors run
    /// `total`: the failover time, and how many owners the killed member ran.
    fn kill_one(&mut self, total: usize) -> (Duration, usize) {
        let (index, held) = self
            .processes
            .iter()
            .enumerate()
            .map(|(i, p)| (i, self.board.running(p.child.id()).unwrap_or(0)))
            .max_by_key(|(_, held)| *held)
            .unwrap();
        let mut victim = self.processes.remove(index);
        let pid = victim.child.id();
        let survivors: Vec<u32> = self.processes.iter().map(|p| p.child.id()).collect();
        let window = CpuWindow::start(&survivors, &self.postgres);
        let killed = Instant::now();
        victim.child.kill().unwrap();
        victim.child.wait().unwrap();
        while self.board.running(pid).is_some() {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.board.wait(Duration::from_secs(600), "failover", |b| {
            survivors.iter().map(|p| b.running(*p).unwrap_or(0)).sum::<usize>() == total
        });
        let took = killed.elapsed();
        println!("  {}", window.report(held));
        (took, held)
    }

    /// A member joins in place of a killed one; waits until it holds its share.
    fn replace(&mut self, total: usize) {
        let name = format!("m{}", self.processes.len() + 100);
        let process = spawn_member(&self.url, &self.services, &name, &self.board);
        let pid = process.child.id();
        self.processes.push(process);
        let share = total / (self.processes.len());
        self.board.wait(Duration::from_secs(600), "rebalanced", |b| {
            b.running(pid).unwrap_or(0) >= share && b.total() == total
        });
    }
}

impl Drop for Members {
    fn drop(&mut self) {
        for process in &mut self.processes {
            let _ = process.child.kill();
            let _ = process.child.wait();
        }
    }
}

/// Deposit → `detected` in the fleet's log, `samples` times in waves of up to 10.
fn detection(url: &str, devnet: &depositkit_devnet::RunningDevnet, board: &Board, samples: usize) {
    let fleet = Fleet::connect(url, 2).unwrap();
    let mut reader = fleet.event_reader(EventCursor::START);
    while !reader.read(10_000, Duration::ZERO).unwrap().is_empty() {}
    let pending: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let latencies: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let reading = {
        let (pending, latencies, stop) = (pending.clone(), latencies.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                for event in reader.read(1000, Duration::from_millis(200)).unwrap() {
                    let value: Value = serde_json::from_str(&event.event).unwrap_or_default();
                    let detected = event.kind == "deposit:lifecycle"
                        && value["payload"]["phase"] == "detected";
                    if detected && let Some(start) = pending.lock().unwrap().remove(&event.owner) {
                        latencies.lock().unwrap().push(start.elapsed());
                    }
                }
            }
        })
    };
    let addresses: Vec<(String, String)> =
        board.addresses.lock().unwrap().iter().map(|(o, a)| (o.clone(), a.clone())).collect();
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    let mut taken = 0;
    while taken < samples {
        std::thread::sleep(Duration::from_millis(random.below(2000)));
        for _ in 0..10.min(samples - taken) {
            let (owner, address) = &addresses[random.below(addresses.len() as u64) as usize];
            if pending.lock().unwrap().contains_key(owner) {
                continue;
            }
            pending.lock().unwrap().insert(owner.clone(), Instant::now());
            devnet.deposit(address, 8453, TokenType::USDC, "5000000", None).unwrap();
            taken += 1;
        }
        let started = Instant::now();
        while !pending.lock().unwrap().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(120), "deposits not detected");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    stop.store(true, Ordering::SeqCst);
    reading.join().unwrap();
    let mut samples = latencies.lock().unwrap().clone();
    samples.sort_unstable();
    println!(
        "detection (devnet deposit → `detected` read from the fleet log), {} deposits: p50 {} / p99 {}",
        samples.len(),
        secs(percentile(&samples, 0.5)),
        secs(percentile(&samples, 0.99))
    );
}

/// Failover times: `kills` SIGKILLs, a replacement joining after each.
fn failovers(members: &mut Members, total: usize, kills: usize, random: &mut Random) {
    let mut times = Vec::new();
    for kill in 0..kills {
        // At a random moment of the survivors' 3 s tick.
        std::thread::sleep(Duration::from_millis(1000 + random.below(3000)));
        let (took, held) = members.kill_one(total);
        println!(
            "  killed a member running {held} owners: all held and watching again after {}",
            secs(took)
        );
        times.push(took);
        if kill + 1 < kills {
            members.replace(total);
        }
    }
    if times.is_empty() {
        return;
    }
    times.sort_unstable();
    println!(
        "failover over {} kills of {total} owners / {} members: p50 {} / p99 {} (max {})",
        times.len(),
        members.processes.len() + 1,
        secs(percentile(&times, 0.5)),
        secs(percentile(&times, 0.99)),
        secs(*times.last().unwrap())
    );
}

/// Durable events per second: onramp events from 16 threads over `owners` owners' clients,
/// each a fenced transaction into `dk_events`.
fn event_rate(pg: &Postgres, db: &str, services: &str, o: &Options, synchronous: bool) {
    let (owners, events) = (o.rate_owners, o.events);
    let url = pg.database(db);
    if synchronous {
        // postgres.sh turns it off server-wide (and fsync); a database setting wins over that.
        pg.sql("postgres", &format!("ALTER DATABASE {db} SET synchronous_commit = on"));
    }
    let options = FleetOptions { name: "rate".into(), lease: lease(), max_connections: 8 };
    let mut config = template(services);
    config.onramp.enabled = true;
    let fleet = DepositFleet::join(&url, config, options).unwrap();
    register(fleet.fleet(), 9, owners);
    let started = Instant::now();
    while fleet.running_owners().len() < owners {
        assert!(started.elapsed() < Duration::from_secs(300), "rate owners did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let clients: Vec<_> = fleet.running_owners().iter().map(|o| fleet.client(o).unwrap()).collect();
    let before: usize = pg.sql(db, "SELECT count(*) FROM dk_events").parse().unwrap();
    let message = json!({"event": "order_processing", "data": {"status": "processing"}});
    let threads = 16;
    let started = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (clients, message) = (&clients, &message);
            scope.spawn(move || {
                for i in (t..events).step_by(threads) {
                    clients[i % clients.len()].handle_onramp_message(message).unwrap();
                }
            });
        }
    });
    let took = started.elapsed();
    let after: usize = pg.sql(db, "SELECT count(*) FROM dk_events").parse().unwrap();
    println!(
        "durable events: {} onramp events from {threads} threads over {owners} owners: {:.0} events/s ({} rows written; synchronous_commit {})",
        events,
        events as f64 / took.as_secs_f64(),
        after - before,
        pg.sql(db, "SHOW synchronous_commit"),
    );
    fleet.leave().unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--member") {
        member_main(&args[2], &args[3], &args[4]);
        return;
    }
    let o = options();
    println!(
        "machine: {} CPUs; load {}; lease 10 s renewed every 3 s; polling 2 s; auto-sweep off",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load()
    );
    let pg = Postgres::start();
    println!("PostgreSQL ({}): {}", pg.sql("postgres", "SHOW server_version"), pg.url);
    depositkit_core::services::rs256::install();
    let dir = std::env::temp_dir().join(format!("depositkit-fleet-devnet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let devnet = depositkit_devnet::Devnet::start(depositkit_devnet::DevnetConfig::new(
        dir.join("d.sqlite"),
    ))
    .unwrap();
    let services = devnet.services_url();

    // Start-up and memory at full scale.
    let url = pg.database("fleet_scale");
    let mut members = Members::start(url.clone(), &services, o.members, &pg);
    std::thread::sleep(Duration::from_secs(2));
    let pids: Vec<u32> = members.processes.iter().map(|p| p.child.id()).collect();
    let base: Vec<u64> = pids.iter().map(|p| rss_kib(*p)).collect();
    let fleet = Fleet::connect(&url, 8).unwrap();
    let window = CpuWindow::start(&pids, &pg.dir);
    let started = Instant::now();
    register(&fleet, 1, o.owners);
    let registered = started.elapsed();
    members.board.wait(Duration::from_secs(1800), "every owner running", |b| b.total() == o.owners);
    let all = started.elapsed();
    println!(
        "{} owners, {} members: registered in {}; every owner held and watching {} after the first registration",
        o.owners,
        o.members,
        secs(registered),
        secs(all)
    );
    println!("  {}", window.report(o.owners));
    std::thread::sleep(Duration::from_secs(5));
    for (pid, base) in pids.iter().zip(&base) {
        let (rss, held) = (rss_kib(*pid), members.board.running(*pid).unwrap_or(0));
        println!(
            "  member {pid}: {held} owners, RSS {:.1} MiB ({:.1} MiB joined, no owners): {:.1} KiB / owner",
            rss as f64 / 1024.0,
            *base as f64 / 1024.0,
            rss.saturating_sub(*base) as f64 / held.max(1) as f64
        );
    }
    println!("load now {}", load());
    detection(&url, &devnet, &members.board, o.samples);
    let mut random = Random(0x2545_F491_4F6C_DD1D);
    failovers(&mut members, o.owners, 1, &mut random);
    drop(members);

    // Failover, several kills, on a smaller fleet.
    let url = pg.database("fleet_failover");
    let mut members = Members::start(url.clone(), &services, o.members, &pg);
    register(&Fleet::connect(&url, 8).unwrap(), 2, o.kill_owners);
    members.board.wait(Duration::from_secs(600), "owners running", |b| b.total() == o.kill_owners);
    failovers(&mut members, o.kill_owners, o.kills, &mut random);
    drop(members);

    event_rate(&pg, "fleet_rate", &services, &o, false);
    event_rate(&pg, "fleet_rate_sync", &services, &o, true);
    println!("load at the end {}", load());
    drop(devnet);
    let _ = std::fs::remove_dir_all(dir);
}
