//! Fixtures shared by the fleet's tests.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use depositkit_core::deposit::store_contract::{ChangeRows, EventRow};
use depositkit_core::deposit::{DepositClientConfig, DestinationConfig};
use depositkit_devnet::{Devnet, DevnetConfig, RunningDevnet};
use depositkit_fleet::{DepositFleet, Fleet, FleetOptions, HeldOwner, LeaseSettings, Member};

/// Owner address number `n`.
pub fn owner(n: u32) -> String {
    format!("0x{n:040x}")
}

/// A change of one event, `id`, about deposit `d<id>`.
pub fn event(id: u64) -> ChangeRows {
    ChangeRows {
        now: id,
        events: vec![EventRow {
            id,
            at: id,
            kind: "deposit:lifecycle".into(),
            deposit_id: Some(format!("d{id}")),
            event: "{}".into(),
        }],
        ..ChangeRows::default()
    }
}

/// One balancing step of `member`: the owners it claimed.
pub fn balance(fleet: &Fleet, member: &Member) -> Vec<HeldOwner> {
    let m = member.clone();
    fleet.run(async move { m.balance().await.map(|b| b.claimed) }).unwrap()
}

/// The owners `member` holds.
pub fn held(fleet: &Fleet, member: &Member) -> Vec<HeldOwner> {
    let m = member.clone();
    fleet.run(async move { m.held().await }).unwrap()
}

/// Devnet serving from a directory of its own (returned, for removal), fault injection on.
pub fn devnet(name: &str) -> (RunningDevnet, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("depositkit-fleet-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let devnet =
        Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite")).with_fault_injection()).unwrap();
    (devnet, dir)
}

/// The client template: devnet's services, fast polling, short retries.
pub fn template(devnet: &RunningDevnet) -> DepositClientConfig {
    let mut config = DepositClientConfig::new(
        "0x0000000000000000000000000000000000000001",
        DestinationConfig::chain(8453),
    )
    .with_services_url(devnet.services_url());
    config.min_polling_interval_ms = 20;
    config.polling_interval_ms = 50;
    config.sweep_retry_delay_ms = 30;
    config.http_retries = 3;
    config.http_initial_backoff_ms = 5;
    config.request_timeout_ms = 3000;
    config.call_timeout_ms = 20_000;
    config
}

/// A member named `name` with a 2 s lease renewed every 300 ms.
pub fn options(name: &str) -> FleetOptions {
    FleetOptions {
        name: name.to_owned(),
        lease: LeaseSettings {
            ttl: Duration::from_millis(2000),
            renew_every: Duration::from_millis(300),
            ..LeaseSettings::default()
        },
        max_connections: 4,
    }
}

/// Waits until `done`, polling; panics naming `what` after `limit`.
pub fn eventually(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The phases of deposit events in `owner`'s stored log, in order.
pub fn phases(fleet: &DepositFleet, owner: &str) -> Vec<String> {
    fleet
        .fleet()
        .owner_events(owner, 0, usize::MAX)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "deposit:lifecycle")
        .filter_map(|e| {
            let value: serde_json::Value = serde_json::from_str(&e.event).ok()?;
            Some(value["payload"]["phase"].as_str()?.to_owned())
        })
        .collect()
}

/// Rows of `sql` from `url`, each column read as `T` (a one-off connection).
pub fn query<T>(url: &str, sql: &str, read: impl Fn(&tokio_postgres::Row) -> T) -> Vec<T> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
        let driver = tokio::spawn(connection);
        let rows = client.query(sql, &[]).await.unwrap();
        drop(client);
        let _ = driver.await;
        rows.iter().map(read).collect()
    })
}
