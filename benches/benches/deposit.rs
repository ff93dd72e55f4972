//! The deposit path against an in-process devnet on 127.0.0.1: one idle watcher cycle (a
//! balances request, nothing new), and one deposit from arrival to `credited` (a balances
//! request, then quote → sign → send, and the event delivered).
//!
//! Run: `cargo bench -p depositkit-benches --bench deposit`

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use depositkit_core::TokenType;
use depositkit_core::deposit::{
    DepositClient, DepositClientConfig, DepositEvent, DepositPhase, DestinationConfig,
};
use depositkit_devnet::{Devnet, DevnetConfig};

const OWNER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";

fn deposit_path(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("depositkit-bench-deposit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let devnet = Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite"))).unwrap();
    let mut config = DepositClientConfig::new(OWNER, DestinationConfig::chain(42161))
        .with_services_url(devnet.services_url());
    // Polling is driven by poll_now(); the watcher task itself never starts.
    config.min_polling_interval_ms = 20;
    let client = DepositClient::new(config).unwrap();
    let addresses = client.initialize().unwrap();

    let mut g = c.benchmark_group("deposit");
    g.bench_function("poll_idle", |b| b.iter(|| client.poll_now().unwrap()));
    g.bench_function("deposit_to_credited", |b| {
        b.iter(|| {
            devnet.deposit(&addresses.evm, 8453, TokenType::USDC, "5000000", None).unwrap();
            let found = client.poll_now().unwrap();
            assert_eq!(found.len(), 1, "one deposit detected");
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
        })
    });
    g.finish();
    client.close().unwrap();
    devnet.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = deposit_path
}
criterion_main!(benches);
