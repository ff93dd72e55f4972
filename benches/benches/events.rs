//! Events through one client, no network (issue 19's event goals, the Rust side): an
//! `onramp:order_processing` event emitted by `handle_onramp_message` — recorded in the event
//! log, handed to the delivery lane and queued — then taken in lists with `next_events`. Without
//! a store the log is in memory; with `store_path` every event is committed to the SQLite file
//! before it reaches the queue. One iteration emits and takes `BATCH` events per client; the
//! last case has `THREADS` clients on one file emitting at the same time.
//!
//! Run: `cargo bench -p depositkit-benches --bench events`

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use depositkit_core::deposit::{DepositClient, DepositClientConfig};
use serde_json::json;

fn owner(i: usize) -> String {
    format!("0x{i:040x}")
}

/// Events per iteration.
const BATCH: usize = 1000;

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

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = events
}
criterion_main!(benches);
