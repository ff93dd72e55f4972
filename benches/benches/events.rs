//! Events through one client, no network (issue 19's event goals, the Rust side): an
//! `onramp:order_processing` event emitted by `handle_onramp_message` — recorded in the event
//! log, handed to the delivery lane and queued — then taken in lists with `next_events`. Without
//! a store the log is in memory; with `store_path` every event is committed to the SQLite file
//! before it reaches the queue. One iteration emits and takes `BATCH` events per client; the
//! last case has `THREADS` clients on one file emitting at the same time. `c_take_json` times
//! the C host's side alone, as `scale`'s "pulled from bursts" rows do: `BURST` queued events
//! taken with `depositkit_deposit_client_next_events_json`, up to `LIST` per take (one JSON
//! array each), each string freed;
//! `c_take_json_cpu` is the same take timed by the taking thread's CPU time instead of the wall
//! clock (steadier on a machine shared with other work).
//!
//! Run: `cargo bench -p depositkit-benches --bench events`

use std::ffi::{CString, c_char};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use depositkit_core::deposit::{DepositClient, DepositClientConfig};
use serde_json::json;

fn owner(i: usize) -> String {
    format!("0x{i:040x}")
}

/// Events per iteration.
const BATCH: usize = 1000;

/// Events queued before a timed take in `c_take_json` (a host that fell behind by that much),
/// and the most taken per call.
const BURST: usize = 10_000;
const LIST: usize = 1024;

/// Emitting threads (one client each, one file) in the `store_path_N_threads` case.
const THREADS: usize = 8;

fn client(owner: &str, store: Option<&std::path::Path>) -> DepositClient {
    let mut config = json!({
        "ownerAddress": owner,
        "destination": {"chainId": 8453},
        "servicesUrl": "http://127.0.0.1:9",
        "onramp": {"enabled": true},
        "eventQueueCapacity": 4 * BATCH,
    });
    if let Some(store) = store {
        config["storePath"] = json!(store.display().to_string());
    }
    DepositClient::new(DepositClientConfig::from_json(&config.to_string()).unwrap()).unwrap()
}

fn emit_and_take(client: &DepositClient, message: &serde_json::Value) {
    for _ in 0..BATCH {
        assert!(client.handle_onramp_message(message).unwrap());
    }
    let mut taken = 0;
    while taken < BATCH {
        taken += client.next_events(Duration::from_secs(5), BATCH).len();
    }
}

fn events(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("depositkit-bench-events-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let message = json!({"event": "order_processing", "data": {"status": "processing"}});
    let mut g = c.benchmark_group("events");
    g.throughput(Throughput::Elements(BATCH as u64));
    let memory = client(&owner(0), None);
    g.bench_function("emit_and_take/memory", |b| b.iter(|| emit_and_take(&memory, &message)));
    memory.close().unwrap();
    let durable = client(&owner(1), Some(&dir.join("events.sqlite")));
    g.bench_function("emit_and_take/store_path", |b| b.iter(|| emit_and_take(&durable, &message)));
    durable.close().unwrap();
    g.finish();
    // Several clients on one file, each emitting from its own thread: their commits meet and
    // are grouped (`deposit::store`'s group commit).
    let mut g = c.benchmark_group("events");
    g.throughput(Throughput::Elements((THREADS * BATCH) as u64));
    let shared = dir.join("shared.sqlite");
    let clients: Vec<DepositClient> =
        (0..THREADS).map(|i| client(&owner(100 + i), Some(&shared))).collect();
    g.bench_function(format!("emit_and_take/store_path_{THREADS}_threads"), |b| {
        b.iter(|| {
            std::thread::scope(|scope| {
                for client in &clients {
                    scope.spawn(|| emit_and_take(client, &message));
                }
            })
        })
    });
    for client in clients {
        client.close().unwrap();
    }
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A C handle like [`client`]'s (in memory), through `depositkit_deposit_client_new`.
fn c_client(owner: &str) -> *const depositkit::deposit::depositkit_deposit_client {
    let config = json!({
        "ownerAddress": owner,
        "destination": {"chainId": 8453},
        "servicesUrl": "http://127.0.0.1:9",
        "onramp": {"enabled": true},
        "eventQueueCapacity": BURST,
    });
    let config = CString::new(config.to_string()).unwrap();
    let mut client = std::ptr::null();
    // SAFETY: valid arguments; the handle is freed by the caller.
    let status =
        unsafe { depositkit::deposit::depositkit_deposit_client_new(config.as_ptr(), &mut client) };
    assert_eq!(status as i32, 0);
    client
}

/// `BURST` events queued on `client` (untimed), then the time to take them all into C as JSON
/// arrays of up to `LIST` events, each string freed.
fn c_take_json(
    client: *const depositkit::deposit::depositkit_deposit_client,
    message: &CString,
    clock: fn() -> Duration,
) -> Duration {
    use depositkit::deposit::depositkit_deposit_client_next_events_json;
    use depositkit::onramp::depositkit_deposit_client_handle_onramp_message as handle_message;
    use depositkit::strings::depositkit_string_free;
    for _ in 0..BURST {
        let mut delivered = false;
        // SAFETY: a live handle, a NUL-terminated message, a flag to write.
        let status = unsafe { handle_message(client, message.as_ptr(), &mut delivered) };
        assert!(status as i32 == 0 && delivered);
    }
    let started = clock();
    let mut taken = 0;
    while taken < BURST {
        let mut json: *mut c_char = std::ptr::null_mut();
        let mut count = 0usize;
        // SAFETY: a live handle, a string and a count to write; the string is freed once.
        unsafe {
            depositkit_deposit_client_next_events_json(client, 5000, LIST, &mut json, &mut count);
            depositkit_string_free(json);
        }
        taken += count;
    }
    clock() - started
}

/// Time since an arbitrary start, by the wall clock.
fn wall_clock() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// The CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

fn c_events(c: &mut Criterion) {
    let message =
        CString::new(r#"{"event": "order_processing", "data": {"status": "processing"}}"#).unwrap();
    let mut g = c.benchmark_group("events");
    g.throughput(Throughput::Elements(BURST as u64));
    let client = c_client(&owner(200));
    for (name, clock) in
        [("c_take_json", wall_clock as fn() -> Duration), ("c_take_json_cpu", thread_cpu)]
    {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| c_take_json(client, &message, clock)).sum())
        });
    }
    g.finish();
    // SAFETY: a live handle, freed once.
    unsafe { depositkit::deposit::depositkit_deposit_client_free(client) };
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = events, c_events
}
criterion_main!(benches);
