//! One user-lookup round trip through `depositkit-server` (depositkit's client → HTTP on
//! 127.0.0.1 → the store → back), per store: SQLite, and PostgreSQL (the test harness's server,
//! `fsync` off: this measures the service, not the disk).
//!
//! Run: `cargo bench -p depositkit-server --bench user_lookup -- --warm-up-time 1 --measurement-time 4`

use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use depositkit_core::{UserRpcClient, UserRpcClientOptions};
use depositkit_server::serve::{self, ServeOptions};
use depositkit_server::testing::TestDatabase;
use depositkit_server::{ChainFamily, NewUser, UserStore};

const EVM: &str = "0x52908400098527886E0F7030069857D2E4169EE7";

struct Served {
    client: UserRpcClient,
    user: String,
    token: String,
    _runtime: tokio::runtime::Runtime,
}

fn serve_store(url: &str) -> Served {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (store, project, user, token) = runtime.block_on(async {
        let store = UserStore::open(url, 8).await.unwrap();
        let project = store.create_project("bench").await.unwrap();
        let user = store
            .add_user(&project.project_id, &NewUser::with_email("b@example.com"))
            .await
            .unwrap();
        store.add_wallet(&user, ChainFamily::Evm, EVM).await.unwrap();
        store.add_identity(&user, "jwt", "bench-uid").await.unwrap();
        let expires = SystemTime::now() + Duration::from_secs(3600);
        let token = store.add_session(&user, None, expires).await.unwrap();
        (store, project, user, token)
    });
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let rpc_url = format!("http://{}/user-rpc", listener.local_addr().unwrap());
    let options = ServeOptions::default();
    let router = serve::router(store, &options);
    runtime.spawn(serve::serve(
        listener,
        router,
        64,
        Duration::from_secs(1),
        std::future::pending(),
    ));
    let options = UserRpcClientOptions::default();
    let client =
        UserRpcClient::new(&rpc_url, &project.project_id, &project.server_key, options).unwrap();
    Served { client, user, token, _runtime: runtime }
}

fn round_trips(c: &mut Criterion) {
    let file =
        std::env::temp_dir().join(format!("depositkit-bench-server-{}.sqlite", std::process::id()));
    let postgres = TestDatabase::create();
    let stores = [
        ("sqlite", format!("sqlite://{}", file.display())),
        ("postgres", postgres.url().to_owned()),
    ];
    let mut g = c.benchmark_group("server_user_lookup");
    for (name, url) in &stores {
        let served = serve_store(url);
        g.bench_function(format!("{name}/get_user_info"), |b| {
            b.iter(|| served.client.get_user_info(&served.user, &served.token).unwrap())
        });
        g.bench_function(format!("{name}/get_user_info_by_identity"), |b| {
            b.iter(|| served.client.get_user_info_by_identity("jwt", "bench-uid").unwrap())
        });
        g.bench_function(format!("{name}/is_project_user"), |b| {
            b.iter(|| served.client.is_project_user("evm_chain", EVM).unwrap())
        });
    }
    g.finish();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

criterion_group!(benches, round_trips);
criterion_main!(benches);
