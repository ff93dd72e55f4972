//! Many deposit clients in one process against devnet (issue 7), and event throughput into a C
//! callback.
//!
//! For each client count (default 1, 100, 1000, 10000) the clients are created, initialized
//! and watching on the shared runtime, against a `depositkit-devnet serve` in **another
//! process** (so devnet's CPU is not this process's). It reports:
//! - memory per client: RSS growth from before the clients to all of them watching, / clients;
//! - CPU per poll round: this process's user+system CPU over several rounds / rounds (and per
//!   client); a round is every client polled once (devnet's `GET /devnet/stats`);
//! - balance requests per round (devnet's counter);
//! - detection latency p50/p99: `POST /devnet/deposits` to a client's deposit address →
//!   its `detected` event in a host callback; deposits at random moments of the interval;
//! - threads of the process.
//!
//! Then the C callback throughput: events (`onramp:order_processing`, one per
//! `depositkit_deposit_client_handle_onramp_message`) per second into an `extern "C"` callback
//! registered with `depositkit_deposit_client_subscribe`, for 1 and 100 clients.
//!
//! Run (see `docs/benchmarks.md`, "Scale"):
//! `cargo build --release -p depositkit-devnet -p depositkit-benches --bin scale && target/release/scale`
//! Options: `--clients 1,100,1000,10000`, `--interval-ms 1000` (the polling interval; below
//! 2000 ms it needs `min_polling_interval_ms`, a devnet/test knob), `--samples 60`,
//! `--rounds 5`, `--events 200000`, `--devnet PATH` (default: next to this binary),
//! `--events-only` (no client counts), `--no-events` (no event throughput),
//! `--devnet-in-process` (devnet served by this process, with its JWT crypto: RS256 by ring),
//! `--quick` (tiny sizes: what `cargo test` would run), `--chain-watch` (issue 18: every client
//! also watches devnet's simulated Base chain through `chainRpcUrls`, and the latency measured
//! is the deposit's inclusion (devnet's deposit call returns once its block exists) → its `seen`
//! event instead of `detected`).

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_int, c_void};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use depositkit_core::deposit::{
    DepositClient, DepositClientConfig, DepositEvent, DepositPhase, DestinationConfig, dispatch,
};
use serde_json::{Value, json};

struct Options {
    clients: Vec<usize>,
    interval_ms: u64,
    samples: usize,
    rounds: u64,
    events: u64,
    /// Whether the event throughput part runs (`--no-events` skips it).
    event_rates: bool,
    devnet: PathBuf,
    devnet_in_process: bool,
    /// Whether the clients watch Base with a chain watcher (`--chain-watch`).
    chain_watch: bool,
}

fn options() -> Options {
    let mut o = Options {
        clients: vec![1, 100, 1000, 10000],
        interval_ms: 1000,
        samples: 60,
        rounds: 5,
        events: 200_000,
        event_rates: true,
        devnet_in_process: false,
        chain_watch: false,
        devnet: std::env::current_exe().unwrap().with_file_name("depositkit-devnet"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--clients" => {
                o.clients = value().split(',').map(|n| n.trim().parse().unwrap()).collect()
            }
            "--interval-ms" => o.interval_ms = value().parse().unwrap(),
            "--samples" => o.samples = value().parse().unwrap(),
            "--rounds" => o.rounds = value().parse().unwrap(),
            "--events" => o.events = value().parse().unwrap(),
            "--devnet" => o.devnet = value().into(),
            "--events-only" => o.clients.clear(),
            "--devnet-in-process" => o.devnet_in_process = true,
            "--no-events" => o.event_rates = false,
            "--chain-watch" => o.chain_watch = true,
            "--quick" => {
                o.clients = vec![1, 20];
                o.interval_ms = 200;
                o.samples = 5;
                o.rounds = 2;
                o.events = 2000;
            }
            // `cargo test --benches` style flags.
            "--bench" | "--test" | "--nocapture" => {}
            other => panic!("unknown option {other}"),
        }
    }
    o
}

/// `depositkit-devnet serve` in a child process on a fresh database, or (`--devnet-in-process`)
/// devnet served by this process.
struct Devnet {
    child: Option<Child>,
    /// The in-process server: its JWT crypto is this process's jsonwebtoken provider, the one
    /// `depositkit_core::services::rs256::install()` sets (RS256 by ring).
    in_process: Mutex<Option<depositkit_devnet::RunningDevnet>>,
    services: String,
    dir: PathBuf,
}

impl Devnet {
    fn start(bin: &PathBuf, in_process: bool) -> Devnet {
        let dir = std::env::temp_dir().join(format!("depositkit-scale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        if in_process {
            depositkit_core::services::rs256::install();
            let config = depositkit_devnet::DevnetConfig::new(dir.join("devnet.sqlite"));
            let running = depositkit_devnet::Devnet::start(config).unwrap();
            let services = running.services_url();
            return Devnet { child: None, in_process: Mutex::new(Some(running)), services, dir };
        }
        let mut child = Command::new(bin)
            .arg("--db")
            .arg(dir.join("devnet.sqlite"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e} (build it first)", bin.display()));
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let urls: Value = serde_json::from_str(&first).unwrap();
        // Drain the rest so devnet never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let services = urls["servicesUrl"].as_str().unwrap().to_owned();
        Devnet { child: Some(child), in_process: Mutex::new(None), services, dir }
    }

    /// Devnet's CPU time (zero when it runs in this process: it is in this process's).
    fn cpu(&self) -> Duration {
        self.child.as_ref().map_or(Duration::ZERO, |child| process_cpu(child.id()))
    }

    fn stats(&self) -> (u64, u64) {
        let v: Value = ureq::get(format!("{}/devnet/stats", self.services))
            .call()
            .unwrap()
            .body_mut()
            .read_json()
            .unwrap();
        (v["balanceRequests"].as_u64().unwrap(), v["balanceAccounts"].as_u64().unwrap())
    }

    fn deposit(&self, address: &str) {
        let body =
            json!({"address": address, "chainId": 8453, "token": "USDC", "rawAmount": "5000000"});
        ureq::post(format!("{}/devnet/deposits", self.services)).send_json(&body).unwrap();
    }
}

impl Drop for Devnet {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(running) = self.in_process.lock().unwrap().take() {
            drop(running.shutdown());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn proc_status(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line[field.len()..].trim().trim_end_matches(" kB").trim().parse().unwrap()
}

/// User + system CPU time of the process `pid` (from `/proc/PID/stat`, in clock ticks).
fn process_cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the line: 11 and 12 after the command.
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Duration::from_secs_f64((ticks(11) + ticks(12)) as f64 / hz)
}

/// This process's user + system CPU time.
fn cpu_time() -> Duration {
    // SAFETY: getrusage writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn owner(i: usize) -> String {
    format!("0x{:040x}", 0x0005_ca1e_0000_0000_u64 ^ (std::process::id() as u64) << 24 ^ i as u64)
}

/// Deposits waiting for their `detected` event, by client, and the latencies measured.
#[derive(Default)]
struct Latencies {
    state: Mutex<(HashMap<usize, Instant>, Vec<Duration>)>,
    done: Condvar,
    /// Measured `seen` events that came from the chain watcher (with the transfer's
    /// transaction), not from a balance poll.
    by_chain: AtomicU64,
}

impl Latencies {
    fn detected(&self, client: usize, by_chain: bool) {
        let mut state = self.state.lock().unwrap();
        if let Some(start) = state.0.remove(&client) {
            self.by_chain.fetch_add(u64::from(by_chain), Ordering::Relaxed);
            state.1.push(start.elapsed());
            self.done.notify_all();
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Waits until devnet answered `rounds` more rounds for `n` clients (polling its counters).
fn wait_rounds(devnet: &Devnet, n: usize, rounds: u64) {
    let (_, a0) = devnet.stats();
    while devnet.stats().1 < a0 + rounds * n as u64 {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The event whose delay the latency columns measure: `seen` (the chain watcher's) with
/// `--chain-watch`, else `detected` (the balance poll's).
fn latency_phase(o: &Options) -> DepositPhase {
    if o.chain_watch { DepositPhase::Seen } else { DepositPhase::Detected }
}

fn scale_run(o: &Options, devnet: &Devnet, n: usize) {
    let latencies = Arc::new(Latencies::default());
    let rss0 = proc_status("VmRSS:");
    let (own_cpu0, devnet_cpu0) = (cpu_time(), devnet.cpu());
    let started = Instant::now();
    let workers = 16.min(n);
    let clients: Vec<(DepositClient, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let latencies = Arc::clone(&latencies);
                scope.spawn(move || {
                    (w..n)
                        .step_by(workers)
                        .map(|i| {
                            let mut config = DepositClientConfig::new(
                                owner(i + n * 100_000),
                                DestinationConfig::chain(42161),
                            )
                            .with_services_url(&devnet.services);
                            config.min_polling_interval_ms = o.interval_ms.min(2000);
                            config.polling_interval_ms = o.interval_ms;
                            config.auto_sweep = false;
                            if o.chain_watch {
                                let rpc = format!("{}/devnet/chains/8453/rpc", devnet.services);
                                config.chain_rpc_urls.0.insert(8453, rpc);
                            }
                            let measured = latency_phase(o);
                            let client = DepositClient::new(config).unwrap();
                            let board = Arc::clone(&latencies);
                            client
                                .subscribe(Box::new(move |event: &DepositEvent| {
                                    if let Some(e) = event.lifecycle()
                                        && e.phase == measured
                                    {
                                        board.detected(i, e.source_tx_hash.is_some());
                                    }
                                }))
                                .unwrap();
                            let evm = client.initialize().unwrap().evm;
                            client.start_watching().unwrap();
                            (i, client, evm)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<_> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        all.sort_unstable_by_key(|(i, _, _)| *i);
        all.into_iter().map(|(_, client, evm)| (client, evm)).collect()
    });
    let init = started.elapsed();
    let (own_cpu, devnet_cpu) = (cpu_time() - own_cpu0, devnet.cpu() - devnet_cpu0);
    eprintln!(
        "{n} clients: init {:.2} s wall; CPU during init: this process {:.2} s ({:.0} µs/client), devnet {:.2} s ({:.0} µs/client)",
        init.as_secs_f64(),
        own_cpu.as_secs_f64(),
        own_cpu.as_secs_f64() * 1e6 / n as f64,
        devnet_cpu.as_secs_f64(),
        devnet_cpu.as_secs_f64() * 1e6 / n as f64,
    );
    wait_rounds(devnet, n, 1); // every client past its first poll
    let rss1 = proc_status("VmRSS:");
    let threads = proc_status("Threads:");

    // CPU over a fixed time (no polling of devnet meanwhile), divided by the rounds devnet saw.
    let (r0, a0) = devnet.stats();
    let (cpu0, devnet_cpu0) = (cpu_time(), devnet.cpu());
    std::thread::sleep(Duration::from_millis(o.interval_ms * o.rounds));
    let cpu = cpu_time() - cpu0;
    let busy = |used: Duration| used.as_secs_f64() * 1e3 / (o.interval_ms * o.rounds) as f64;
    eprintln!(
        "{n} clients watching: CPU used {:.0}% of a core by this process, {:.0}% by devnet",
        100.0 * busy(cpu),
        100.0 * busy(devnet.cpu() - devnet_cpu0),
    );
    let (r1, a1) = devnet.stats();
    let (requests, done) = (r1 - r0, (a1 - a0) as f64 / n as f64);
    let per_round = cpu.div_f64(done.max(1e-9));

    // Detection latency: waves of deposits to distinct clients at random moments.
    let wave = n.min(20);
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ n as u64;
    let mut next = |bound: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % bound.max(1)
    };
    let mut taken = 0;
    while taken < o.samples {
        std::thread::sleep(Duration::from_millis(next(o.interval_ms)));
        let k = wave.min(o.samples - taken);
        let picks: Vec<usize> = (0..k).map(|j| (next(n as u64) as usize + j * 7919) % n).collect();
        let mut picks = picks;
        picks.sort_unstable();
        picks.dedup();
        for &i in &picks {
            latencies.state.lock().unwrap().0.insert(i, Instant::now());
            devnet.deposit(&clients[i].1);
        }
        let mut state = latencies.state.lock().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !state.0.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "deposits not detected within 60 s");
            state = latencies.done.wait_timeout(state, left).unwrap().0;
        }
        taken += picks.len();
    }
    let mut samples = latencies.state.lock().unwrap().1.clone();
    samples.sort_unstable();
    if o.chain_watch {
        let by_chain = latencies.by_chain.load(Ordering::Relaxed);
        eprintln!(
            "{n} clients: {by_chain} of {} `seen` events from the chain watcher (the rest from a balance poll); max {}",
            samples.len(),
            ms(samples[samples.len() - 1])
        );
    }

    let closing = Instant::now();
    std::thread::scope(|scope| {
        let mut chunks: Vec<Vec<(DepositClient, String)>> = (0..4).map(|_| Vec::new()).collect();
        for (i, c) in clients.into_iter().enumerate() {
            chunks[i % 4].push(c);
        }
        for chunk in chunks {
            scope.spawn(move || drop(chunk));
        }
    });
    println!(
        "| {n} | {:.1} KiB | {} ({:.1} µs/client) | {:.1} | {} / {} | {threads} | {:.1} s | {:.2} s |",
        (rss1.saturating_sub(rss0)) as f64 / n as f64,
        ms(per_round),
        per_round.as_secs_f64() * 1e6 / n as f64,
        requests as f64 / done,
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.99)),
        init.as_secs_f64(),
        closing.elapsed().as_secs_f64(),
    );
}

unsafe extern "C" fn count_event(
    user_data: *mut c_void,
    _json: *const c_char,
    _len: usize,
) -> c_int {
    // SAFETY: user_data is the AtomicU64 the benchmark keeps alive until the clients are freed.
    let counter = unsafe { &*(user_data as *const AtomicU64) };
    counter.fetch_add(1, Ordering::Relaxed);
    0
}

/// Events per second into a C callback: `events` onramp messages spread over `n` clients,
/// emitted by `threads` threads (each its share of the clients); with `store`, every client
/// keeps its event log in that SQLite file (`storePath`: each event is a committed row before
/// it reaches the callback; commits that meet are grouped).
fn c_throughput(events: u64, n: usize, store: Option<&std::path::Path>, threads: usize) -> f64 {
    use depositkit::deposit::{
        depositkit_deposit_client, depositkit_deposit_client_free, depositkit_deposit_client_new,
        depositkit_deposit_client_subscribe,
    };
    let counter = Box::leak(Box::new(AtomicU64::new(0)));
    let clients: Vec<usize> = (0..n)
        .map(|i| {
            let mut config = json!({
                "ownerAddress": owner(i),
                "destination": {"chainId": 8453},
                "servicesUrl": "http://127.0.0.1:9",
                "onramp": {"enabled": true}
            });
            if let Some(store) = store {
                config["storePath"] = json!(store.display().to_string());
            }
            let config = CString::new(config.to_string()).unwrap();
            let mut client: *const depositkit_deposit_client = std::ptr::null();
            let mut sub = 0u64;
            // SAFETY: valid arguments; the handle is freed below.
            unsafe {
                assert_eq!(depositkit_deposit_client_new(config.as_ptr(), &mut client) as i32, 0);
                let status = depositkit_deposit_client_subscribe(
                    client,
                    Some(count_event),
                    counter as *const AtomicU64 as *mut c_void,
                    None,
                    &mut sub,
                );
                assert_eq!(status as i32, 0);
            }
            client as usize
        })
        .collect();
    let message =
        CString::new(r#"{"event": "order_processing", "data": {"status": "processing"}}"#).unwrap();
    let per_client = events / n as u64;
    let total = per_client * n as u64;
    let started = Instant::now();
    std::thread::scope(|scope| {
        for part in clients.chunks(n.div_ceil(threads)) {
            let message = &message;
            scope.spawn(move || {
                for _ in 0..per_client {
                    for &client in part {
                        emit_one(client, message);
                    }
                }
            });
        }
    });
    while counter.load(Ordering::Relaxed) < total {
        std::thread::yield_now();
    }
    let rate = total as f64 / started.elapsed().as_secs_f64();
    for client in clients {
        // SAFETY: a live handle, freed once.
        unsafe { depositkit_deposit_client_free(client as *const depositkit_deposit_client) };
    }
    rate
}

/// How the C host takes its events in [`c_pull`].
#[derive(Clone, Copy)]
enum Pull {
    /// `depositkit_deposit_client_next_event`, one event per call.
    One,
    /// `depositkit_deposit_client_next_events`, up to this many per call.
    Batch(usize),
    /// `depositkit_deposit_client_next_events_json`, up to this many per call in one string.
    Json(usize),
}

/// A client for [`c_pull`]: a pull queue with room for `capacity` events, no callback.
fn pull_client(i: usize, capacity: u64, store: Option<&std::path::Path>) -> usize {
    use depositkit::deposit::{depositkit_deposit_client, depositkit_deposit_client_new};
    let mut config = json!({
        "ownerAddress": owner(i),
        "destination": {"chainId": 8453},
        "servicesUrl": "http://127.0.0.1:9",
        "onramp": {"enabled": true},
        "eventQueueCapacity": capacity,
    });
    if let Some(store) = store {
        config["storePath"] = json!(store.display().to_string());
    }
    let config = CString::new(config.to_string()).unwrap();
    let mut client: *const depositkit_deposit_client = std::ptr::null();
    // SAFETY: valid arguments; the handle is freed by the caller.
    let status = unsafe { depositkit_deposit_client_new(config.as_ptr(), &mut client) };
    assert_eq!(status as i32, 0);
    client as usize
}

/// Emits one event on `client`: `message` through `handle_onramp_message`.
fn emit_one(client: usize, message: &CString) {
    use depositkit::deposit::depositkit_deposit_client;
    use depositkit::onramp::depositkit_deposit_client_handle_onramp_message;
    let mut delivered = false;
    // SAFETY: a live handle, a NUL-terminated message.
    let status = unsafe {
        depositkit_deposit_client_handle_onramp_message(
            client as *const depositkit_deposit_client,
            message.as_ptr(),
            &mut delivered,
        )
    };
    assert!(status as i32 == 0 && delivered);
}

/// Emits `count` onramp events on `client` (one `handle_onramp_message` each).
fn emit_onramp(client: usize, count: u64) {
    let message =
        CString::new(r#"{"event": "order_processing", "data": {"status": "processing"}}"#).unwrap();
    for _ in 0..count {
        emit_one(client, &message);
    }
}

/// Takes `count` events from `client`'s pull queue as a C host would (each event's JSON string
/// received and freed), waiting for them as they come.
fn drain(client: usize, count: u64, pull: Pull) {
    use depositkit::deposit::{
        depositkit_deposit_client, depositkit_deposit_client_next_event,
        depositkit_deposit_client_next_events, depositkit_deposit_client_next_events_json,
    };
    use depositkit::strings::depositkit_string_free;
    let client = client as *const depositkit_deposit_client;
    let mut taken = 0u64;
    let mut slots =
        vec![std::ptr::null_mut::<c_char>(); if let Pull::Batch(n) = pull { n } else { 1 }];
    while taken < count {
        let got = match pull {
            // SAFETY: a live handle and room for the strings; each string is freed once.
            Pull::One => unsafe {
                let status = depositkit_deposit_client_next_event(client, 1000, &mut slots[0]);
                usize::from(status as i32 == 0)
            },
            // SAFETY: as above.
            Pull::Batch(n) => unsafe {
                let mut got = 0usize;
                depositkit_deposit_client_next_events(
                    client,
                    1000,
                    slots.as_mut_ptr(),
                    n,
                    &mut got,
                );
                got
            },
            // SAFETY: a live handle, a string and a count to write; the string is freed once.
            Pull::Json(n) => unsafe {
                let mut got = 0usize;
                let mut json = std::ptr::null_mut::<c_char>();
                depositkit_deposit_client_next_events_json(client, 1000, n, &mut json, &mut got);
                depositkit_string_free(json);
                taken += got as u64;
                continue;
            },
        };
        for slot in &slots[..got] {
            // SAFETY: a string from the call above, freed once.
            unsafe { depositkit_string_free(*slot) };
        }
        taken += got as u64;
    }
}

/// Events per second into a C host that pulls them (one client, no callback): end to end
/// (one thread emits while another pulls) and the pull alone (bursts of events queued first).
fn c_pull(events: u64, pull: Pull, store: Option<&std::path::Path>) -> (f64, f64) {
    use depositkit::deposit::{depositkit_deposit_client, depositkit_deposit_client_free};
    let client = pull_client(0, events + 16, store);
    let started = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| emit_onramp(client, events));
        scope.spawn(|| drain(client, events, pull));
    });
    let end_to_end = events as f64 / started.elapsed().as_secs_f64();
    // The pull alone, in bursts of 10,000 queued events (a host that fell behind by that much),
    // timed from the first take to the last.
    let burst = events.min(10_000);
    // SAFETY: a live handle, freed once.
    unsafe { depositkit_deposit_client_free(client as *const depositkit_deposit_client) };
    // A client whose queue (and in-memory event log) is as long as a burst.
    let client = pull_client(1, burst + 16, store);
    let mut pulling = Duration::ZERO;
    for _ in 0..events / burst {
        emit_onramp(client, burst);
        let started = Instant::now();
        drain(client, burst, pull);
        pulling += started.elapsed();
    }
    let pull_only = (events / burst * burst) as f64 / pulling.as_secs_f64();
    // SAFETY: a live handle, freed once.
    unsafe { depositkit_deposit_client_free(client as *const depositkit_deposit_client) };
    (end_to_end, pull_only)
}

fn main() {
    let o = options();
    println!(
        "machine: {} CPUs; polling interval {} ms (min_polling_interval_ms lowered: a devnet/test knob); auto-sweep off",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        o.interval_ms
    );
    if o.chain_watch {
        println!(
            "chain watch: every client watches devnet's simulated Base (chainRpcUrls); latency: deposit in its block → `seen`"
        );
    }
    let devnet = Devnet::start(&o.devnet, o.devnet_in_process);
    let place = if o.devnet_in_process { "in this process" } else { "another process" };
    println!("devnet ({place}): {}", devnet.services);
    println!(
        "| clients | memory / client | CPU / poll round | requests / round | detection p50 / p99 | threads | init | close |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &n in &o.clients {
        scale_run(&o, &devnet, n);
    }
    println!("delivery threads now: {}", dispatch::delivery_threads());
    if !o.event_rates {
        return;
    }
    for n in [1, 100] {
        let rate = c_throughput(o.events, n, None, 2);
        println!("C callback: {} events over {n} client(s): {:.0} events/s", o.events, rate);
    }
    let dir = std::env::temp_dir().join(format!("depositkit-scale-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (n, threads) in [(1, 1), (100, 2), (100, 16)] {
        let store = dir.join(format!("events-{n}-{threads}.sqlite"));
        let rate = c_throughput(o.events, n, Some(&store), threads);
        println!(
            "C callback, storePath (one SQLite file): {} events over {n} client(s), {threads} emitting thread(s): {:.0} events/s",
            o.events, rate
        );
    }
    for (pull, name) in [
        (Pull::One, "next_event"),
        (Pull::Batch(1024), "next_events (1024)"),
        (Pull::Json(1024), "next_events_json (1024)"),
    ] {
        let (both, alone) = c_pull(o.events, pull, None);
        println!(
            "C pull, {name}: {} events, 1 client: {both:.0} events/s emitted and pulled; {alone:.0} events/s pulled from bursts of 10,000 queued events",
            o.events
        );
    }
    let store = dir.join("pull.sqlite");
    let (both, alone) = c_pull(o.events.min(50_000), Pull::Batch(1024), Some(&store));
    println!(
        "C pull, next_events (1024), storePath: {} events, 1 client: {both:.0} events/s emitted and pulled; {alone:.0} events/s pulled from bursts of 10,000 queued events",
        o.events.min(50_000)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
