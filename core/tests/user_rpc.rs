//! The user-lookup client against the real devnet server on 127.0.0.1.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use depositkit_core::users::codes;
use depositkit_core::{ErrorKind, RetryPolicy, UserRpcClient, UserRpcClientOptions};
use depositkit_devnet::{ChainFamily, Devnet, DevnetConfig, Fault, NewUser, RunningDevnet};

const EVM: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
const SOL: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

struct Fixture {
    devnet: RunningDevnet,
    project: String,
    key: String,
    user: String,
    token: String,
    _dir: TempDir,
}

/// A directory removed on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture() -> Fixture {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("depositkit-user-rpc-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let devnet =
        Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite")).with_fault_injection()).unwrap();
    let store = devnet.store();
    let project = store.create_project("test").unwrap();
    let mut new_user = NewUser::with_email("ada@example.com");
    new_user.profile.name = Some("Ada".into());
    new_user.profile.google_email = Some("ada@gmail.com".into());
    let user = store.add_user(&project.project_id, &new_user).unwrap();
    store.add_wallet(&user, ChainFamily::Evm, EVM).unwrap();
    store.add_wallet(&user, ChainFamily::Solana, SOL).unwrap();
    store.add_identity(&user, "jwt", "ada-uid").unwrap();
    let token = store.add_session(&user, SystemTime::now() + Duration::from_secs(3600)).unwrap();
    Fixture {
        devnet,
        project: project.project_id,
        key: project.server_key,
        user,
        token,
        _dir: TempDir(dir),
    }
}

fn options(max_retries: u32, timeout: Duration) -> UserRpcClientOptions {
    UserRpcClientOptions {
        timeout,
        retry: RetryPolicy {
            max_retries,
            initial_backoff: Duration::from_millis(5),
            ..RetryPolicy::default()
        },
        ..UserRpcClientOptions::default()
    }
}

impl Fixture {
    fn client(&self) -> UserRpcClient {
        self.client_with(options(2, Duration::from_secs(5)))
    }

    fn client_with(&self, options: UserRpcClientOptions) -> UserRpcClient {
        UserRpcClient::new(&self.devnet.user_rpc_url(), &self.project, &self.key, options).unwrap()
    }
}

#[test]
fn every_method_returns_the_stored_records() {
    let f = fixture();
    let client = f.client();
    let user = client.get_user_info(&f.user, &f.token).unwrap();
    assert_eq!(user.uuid, f.user);
    assert_eq!(user.email, "ada@example.com");
    assert_eq!(user.name.as_deref(), Some("Ada"));
    assert_eq!(user.google_email.as_deref(), Some("ada@gmail.com"));
    assert_eq!(user.phone, None);
    assert!(user.created_at.ends_with('Z') && user.created_at.len() == 24, "{}", user.created_at);
    assert!(user.created_at_time().is_some());
    let chains: Vec<&str> = user.wallets.iter().map(|w| w.chain.as_str()).collect();
    assert!(chains.contains(&"evm_chain") && chains.contains(&"solana"), "{chains:?}");

    let by_identity = client.get_user_info_by_identity("jwt", "ada-uid").unwrap();
    assert_eq!(by_identity, user);

    assert!(client.is_project_user("evm_chain", EVM).unwrap());
    assert!(client.is_project_user("evm_chain", &EVM.to_lowercase()).unwrap());
    assert!(client.is_project_user("solana", SOL).unwrap());
    assert!(
        !client.is_project_user("evm_chain", "0x0000000000000000000000000000000000000001").unwrap()
    );
}

#[test]
fn bad_credentials_are_authentication_errors_without_the_key() {
    let f = fixture();
    let wrong = UserRpcClient::new(
        &f.devnet.user_rpc_url(),
        &f.project,
        "sk_wrong_key_material",
        UserRpcClientOptions::default(),
    )
    .unwrap();
    let err = wrong.is_project_user("evm_chain", EVM).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Authentication);
    assert!(err.message().contains("401"), "{err}");
    assert!(!err.message().contains("sk_wrong_key_material"), "{err}");
    let unknown = UserRpcClient::new(
        &f.devnet.user_rpc_url(),
        "no-such-project",
        &f.key,
        UserRpcClientOptions::default(),
    )
    .unwrap();
    assert_eq!(
        unknown.is_project_user("evm_chain", EVM).unwrap_err().kind(),
        ErrorKind::Authentication
    );
}

#[test]
fn wrong_or_expired_token_and_unknown_user() {
    let f = fixture();
    let client = f.client();
    let err = client.get_user_info(&f.user, "not-the-token").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Authentication);
    assert_eq!(err.rpc_error().unwrap().code, codes::INVALID_TOKEN);
    assert!(!err.message().contains("not-the-token"), "{err}");

    let expired =
        f.devnet.store().add_session(&f.user, SystemTime::now() - Duration::from_secs(1)).unwrap();
    let err = client.get_user_info(&f.user, &expired).unwrap_err();
    assert_eq!(err.rpc_error().unwrap().code, codes::INVALID_TOKEN);

    let stranger = "00000000-0000-4000-8000-000000000000";
    let err = client.get_user_info(stranger, &f.token).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(err.rpc_error().unwrap().code, codes::USER_NOT_FOUND);

    let err = client.get_user_info_by_identity("jwt", "nobody").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn server_down_is_a_network_error() {
    let f = fixture();
    let url = f.devnet.user_rpc_url();
    let client = f.client_with(options(1, Duration::from_secs(2)));
    f.devnet.shutdown().unwrap();
    let err = client.is_project_user("evm_chain", EVM).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Network, "{err}");
    assert!(err.message().contains(&url) && err.message().contains("after 2 attempts"), "{err}");
}

#[test]
fn slow_server_times_out() {
    let f = fixture();
    f.devnet.inject_fault(&Fault::delay(Duration::from_millis(1500), 1)).unwrap();
    let client = f.client_with(options(0, Duration::from_millis(200)));
    let started = Instant::now();
    let err = client.is_project_user("evm_chain", EVM).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_millis(1400), "the deadline was not honoured");
}

#[test]
fn too_many_requests_then_success() {
    let f = fixture();
    f.devnet.inject_fault(&Fault::status(429, 2).with_retry_after(0)).unwrap();
    assert!(
        f.client_with(options(3, Duration::from_secs(5)))
            .is_project_user("evm_chain", EVM)
            .unwrap()
    );

    f.devnet.inject_fault(&Fault::status(503, 3)).unwrap();
    let err = f
        .client_with(options(2, Duration::from_secs(5)))
        .is_project_user("evm_chain", EVM)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Network);
    assert!(
        err.message().contains("HTTP 503") && err.message().contains("after 3 attempts"),
        "{err}"
    );
}

#[test]
fn one_client_serves_many_threads() {
    let f = fixture();
    let client = Arc::new(f.client());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let client = Arc::clone(&client);
            let (user, token) = (f.user.clone(), f.token.clone());
            std::thread::spawn(move || {
                for _ in 0..20 {
                    assert_eq!(client.get_user_info(&user, &token).unwrap().uuid, user);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
