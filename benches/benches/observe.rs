//! What logging costs on the deposit path (issue 16): one idle poll and one deposit from
//! arrival to `credited`, with the process's `tracing` subscriber forwarding nothing (level
//! off: what a C host without a callback, or Python with `depositkit` at WARNING, pays), at
//! INFO and at DEBUG. The sink formats every record it gets as a host's logger would (message
//! and JSON fields into a string) and drops it.
//!
//! Run: `cargo bench -p depositkit-benches --bench observe -- --warm-up-time 2 --measurement-time 8`

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use depositkit_core::TokenType;
use depositkit_core::deposit::{
    DepositClient, DepositClientConfig, DepositEvent, DepositPhase, DestinationConfig,
};
use depositkit_core::observe::forward::{self, LogRecord, LogSink};
use depositkit_devnet::{Devnet, DevnetConfig, RunningDevnet};

const OWNER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";

/// A sink at a level that changes at run time (0: off), formatting what it keeps.
struct Sink {
    level: AtomicU32,
    records: AtomicU64,
    bytes: AtomicU64,
}

impl LogSink for Sink {
    fn enabled(&self, level: tracing::Level, _target: &str) -> bool {
        forward::level_number(level) <= self.level.load(Ordering::Relaxed)
    }

    fn record(&self, record: &LogRecord<'_>) {
        let line = format!(
            "{} {} {} {}",
            record.level,
            forward::logger_name(record.target),
            record.message,
            serde_json::Value::Object(record.fields.clone())
        );
        self.records.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(line.len() as u64, Ordering::Relaxed);
    }
}

fn credited(client: &DepositClient, devnet: &RunningDevnet, evm: &str) {
    devnet.deposit(evm, 8453, TokenType::USDC, "5000000", None).unwrap();
    assert_eq!(client.poll_now().unwrap().len(), 1, "one deposit detected");
    loop {
        match client.next_event(Duration::from_secs(10)) {
            Some(DepositEvent::Lifecycle(e)) if e.phase == DepositPhase::Credited => break,
            Some(DepositEvent::Lifecycle(e)) if e.phase == DepositPhase::Failed => {
                panic!("sweep failed: {:?}", e.error)
            }
            Some(_) => {}
            None => panic!("no credited event within 10 s"),
        }
    }
}

fn logging_cost(c: &mut Criterion) {
    let sink = Arc::new(Sink {
        level: AtomicU32::new(0),
        records: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
    });
    forward::install(Arc::clone(&sink)).unwrap();
    let dir = std::env::temp_dir().join(format!("depositkit-bench-observe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let devnet = Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite"))).unwrap();
    let mut config = DepositClientConfig::new(OWNER, DestinationConfig::chain(42161))
        .with_services_url(devnet.services_url());
    config.min_polling_interval_ms = 20;
    let client = DepositClient::new(config).unwrap();
    let addresses = client.initialize().unwrap();

    let mut g = c.benchmark_group("observe");
    for (name, level) in [("off", 0), ("info", 3), ("debug", 4)] {
        sink.level.store(level, Ordering::Relaxed);
        g.bench_function(format!("poll_idle/{name}"), |b| b.iter(|| client.poll_now().unwrap()));
        g.bench_function(format!("deposit_to_credited/{name}"), |b| {
            b.iter(|| credited(&client, &devnet, &addresses.evm))
        });
    }
    g.finish();
    eprintln!(
        "records formatted: {}, {} bytes",
        sink.records.load(Ordering::Relaxed),
        sink.bytes.load(Ordering::Relaxed)
    );
    client.close().unwrap();
    devnet.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = logging_cost
}
criterion_main!(benches);
