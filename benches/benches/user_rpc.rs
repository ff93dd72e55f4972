//! One user-lookup round trip (client → devnet server on 127.0.0.1 → SQLite → back), per method.
//!
//! Run: `cargo bench -p depositkit-benches --bench user_rpc`

use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use depositkit_core::{UserRpcClient, UserRpcClientOptions};
use depositkit_devnet::{ChainFamily, Devnet, DevnetConfig, NewUser};

const EVM: &str = "0x52908400098527886E0F7030069857D2E4169EE7";

fn round_trips(c: &mut Criterion) {
    let dir =
        std::env::temp_dir().join(format!("depositkit-bench-user-rpc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let devnet = Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite"))).unwrap();
    let store = devnet.store();
    let project = store.create_project("bench").unwrap();
    let user =
        store.add_user(&project.project_id, &NewUser::with_email("bench@example.com")).unwrap();
    store.add_wallet(&user, ChainFamily::Evm, EVM).unwrap();
    store.add_identity(&user, "jwt", "bench-uid").unwrap();
    let token = store.add_session(&user, SystemTime::now() + Duration::from_secs(3600)).unwrap();
    let client = UserRpcClient::new(
        &devnet.user_rpc_url(),
        &project.project_id,
        &project.server_key,
        UserRpcClientOptions::default(),
    )
    .unwrap();

    let mut g = c.benchmark_group("user_rpc");
    g.bench_function("get_user_info", |b| b.iter(|| client.get_user_info(&user, &token).unwrap()));
    g.bench_function("get_user_info_by_identity", |b| {
        b.iter(|| client.get_user_info_by_identity("jwt", "bench-uid").unwrap())
    });
    g.bench_function("is_project_user", |b| {
        b.iter(|| client.is_project_user("evm_chain", EVM).unwrap())
    });
    g.finish();
    devnet.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, round_trips);
criterion_main!(benches);
