//! The user-lookup client through the C ABI, called from Rust exactly as a C program calls it,
//! against the real devnet server running in-process on 127.0.0.1.

use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant, SystemTime};

use depositkit::status::*;
use depositkit::strings::depositkit_string_free;
use depositkit::user_rpc::*;
use depositkit_devnet::{ChainFamily, Devnet, DevnetConfig, Fault, NewUser, RunningDevnet};
use serde_json::Value;

const EVM: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
const SOL: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const NOBODY_EVM: &CStr = c"0x0000000000000000000000000000000000000001";
const STRANGER: &str = "00000000-0000-4000-8000-000000000000";

fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

/// This thread's last-error message, read the way a C caller does: size first, then copy.
fn last_error() -> String {
    let mut n = 0;
    let status = unsafe { depositkit_last_error_message(null_mut(), 0, &mut n) };
    assert!(
        matches!(status, depositkit_status::Ok | depositkit_status::BufferTooSmall),
        "{status:?}"
    );
    let mut buf = vec![0 as c_char; n + 1];
    let status = unsafe { depositkit_last_error_message(buf.as_mut_ptr(), buf.len(), &mut n) };
    assert_eq!(status, depositkit_status::Ok);
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_owned()
}

/// This thread's last JSON-RPC error object as `(code, data)`, or `None` (NOT_FOUND), checking
/// that NOT_FOUND writes nothing.
fn last_error_rpc() -> Option<(i64, Option<Value>)> {
    let mut code = 12345i64;
    let sentinel = std::ptr::dangling_mut::<c_char>();
    let mut data = sentinel;
    match unsafe { depositkit_last_error_rpc(&mut code, &mut data) } {
        depositkit_status::Ok => {
            let data = (!data.is_null()).then(|| serde_json::from_str(&take(data)).unwrap());
            Some((code, data))
        }
        depositkit_status::NotFound => {
            assert_eq!(code, 12345, "out_code written with NOT_FOUND");
            assert_eq!(data, sentinel, "out_data_json written with NOT_FOUND");
            None
        }
        other => panic!("depositkit_last_error_rpc returned {other:?}"),
    }
}

/// Takes ownership of a string depositkit handed out, frees it, returns its text.
fn take(p: *mut c_char) -> String {
    assert!(!p.is_null());
    let text = unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned();
    unsafe { depositkit_string_free(p) };
    text
}

/// A client handle, freed on drop. Shareable across threads, as the header promises.
struct Client(*const depositkit_user_rpc_client);

// SAFETY: the handle is documented as usable from any number of threads at once.
unsafe impl Send for Client {}
// SAFETY: as above.
unsafe impl Sync for Client {}

impl Drop for Client {
    fn drop(&mut self) {
        unsafe { depositkit_user_rpc_client_free(self.0) };
    }
}

type Failure = (depositkit_status, String);

fn new_client(
    url: &str,
    project: &str,
    key: &str,
    options: Option<&depositkit_user_rpc_options>,
) -> Result<Client, Failure> {
    let (url, project, key) = (c(url), c(project), c(key));
    let options = options.map_or(null(), std::ptr::from_ref);
    let mut out: *const depositkit_user_rpc_client = null();
    let status = unsafe {
        depositkit_user_rpc_client_new(
            url.as_ptr(),
            project.as_ptr(),
            key.as_ptr(),
            options,
            &mut out,
        )
    };
    if status == depositkit_status::Ok {
        assert!(!out.is_null());
        Ok(Client(out))
    } else {
        assert!(out.is_null(), "out_client written on failure");
        Err((status, last_error()))
    }
}

impl Client {
    fn get_user_info(&self, uuid: &str, token: &str) -> Result<Value, Failure> {
        let (uuid, token) = (c(uuid), c(token));
        let mut out = null_mut();
        let status = unsafe {
            depositkit_user_rpc_client_get_user_info(
                self.0,
                uuid.as_ptr(),
                token.as_ptr(),
                &mut out,
            )
        };
        user_json(status, out)
    }

    fn get_user_info_by_identity(&self, provider: &str, uid: &str) -> Result<Value, Failure> {
        let (provider, uid) = (c(provider), c(uid));
        let mut out = null_mut();
        let status = unsafe {
            depositkit_user_rpc_client_get_user_info_by_identity(
                self.0,
                provider.as_ptr(),
                uid.as_ptr(),
                &mut out,
            )
        };
        user_json(status, out)
    }

    fn is_project_user(&self, chain: &str, address: &str) -> Result<bool, Failure> {
        let (chain, address) = (c(chain), c(address));
        // A value that is neither true nor false would show up as "written on failure".
        let mut out = false;
        let status = unsafe {
            depositkit_user_rpc_client_is_project_user(
                self.0,
                chain.as_ptr(),
                address.as_ptr(),
                &mut out,
            )
        };
        if status == depositkit_status::Ok {
            assert_eq!(last_error(), "", "success clears the last error");
            Ok(out)
        } else {
            assert!(!out, "out_is_member written on failure");
            Err((status, last_error()))
        }
    }
}

fn user_json(status: depositkit_status, out: *mut c_char) -> Result<Value, Failure> {
    if status == depositkit_status::Ok {
        assert_eq!(last_error(), "", "success clears the last error");
        Ok(serde_json::from_str(&take(out)).unwrap())
    } else {
        assert!(out.is_null(), "out_user_json written on failure");
        Err((status, last_error()))
    }
}

/// Options with the given retries and timeout, and a short backoff so tests stay fast.
fn options(max_retries: u32, timeout_ms: u64) -> depositkit_user_rpc_options {
    let mut o = std::mem::MaybeUninit::<depositkit_user_rpc_options>::uninit();
    unsafe { depositkit_user_rpc_options_init(o.as_mut_ptr()) };
    let mut o = unsafe { o.assume_init() };
    o.max_retries = max_retries;
    o.timeout_ms = timeout_ms;
    o.initial_backoff_ms = 5;
    o
}

/// A directory removed on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Fixture {
    devnet: RunningDevnet,
    url: String,
    project: String,
    key: String,
    user: String,
    token: String,
    _dir: TempDir,
}

/// A devnet with fault injection, one project, and the user Ada with an EVM and a Solana
/// wallet, the jwt identity `ada-uid` and a session valid for an hour.
fn fixture() -> Fixture {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("depositkit-ffi-user-rpc-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let devnet =
        Devnet::start(DevnetConfig::new(dir.join("devnet.sqlite")).with_fault_injection()).unwrap();
    let store = devnet.store();
    let project = store.create_project("ffi test").unwrap();
    let mut new_user = NewUser::with_email("ada@example.com");
    new_user.profile.name = Some("Ada".into());
    new_user.profile.google_email = Some("ada@gmail.com".into());
    let user = store.add_user(&project.project_id, &new_user).unwrap();
    store.add_wallet(&user, ChainFamily::Evm, EVM).unwrap();
    store.add_wallet(&user, ChainFamily::Solana, SOL).unwrap();
    store.add_identity(&user, "jwt", "ada-uid").unwrap();
    let token = store.add_session(&user, SystemTime::now() + Duration::from_secs(3600)).unwrap();
    Fixture {
        url: devnet.user_rpc_url(),
        devnet,
        project: project.project_id,
        key: project.server_key,
        user,
        token,
        _dir: TempDir(dir),
    }
}

impl Fixture {
    fn client(&self) -> Client {
        self.client_with(&options(2, 5000))
    }

    fn client_with(&self, options: &depositkit_user_rpc_options) -> Client {
        new_client(&self.url, &self.project, &self.key, Some(options)).unwrap()
    }
}

#[test]
fn every_call_returns_the_stored_records() {
    let f = fixture();
    let client = new_client(&f.url, &f.project, &f.key, None).expect("NULL options: defaults");

    let user = client.get_user_info(&f.user, &f.token).unwrap();
    assert_eq!(user["uuid"], f.user.as_str());
    assert_eq!(user["email"], "ada@example.com");
    assert_eq!(user["name"], "Ada");
    assert_eq!(user["googleEmail"], "ada@gmail.com");
    assert_eq!(user["phone"], Value::Null, "absent fields are present as null");
    assert_eq!(user["telegramPhone"], Value::Null);
    let created = user["createdAt"].as_str().unwrap();
    assert!(created.ends_with('Z') && created.len() == 24, "{created}");
    assert!(user["updatedAt"].is_string());
    let wallets = user["wallets"].as_array().unwrap();
    let has = |chain: &str, address: &str| {
        wallets.iter().any(|w| {
            w["chain"] == chain
                && w["publicAddress"].as_str().unwrap().eq_ignore_ascii_case(address)
        })
    };
    assert!(has("evm_chain", EVM) && has("solana", SOL), "{wallets:?}");

    let by_identity = client.get_user_info_by_identity("jwt", "ada-uid").unwrap();
    assert_eq!(by_identity, user);

    assert!(client.is_project_user("evm_chain", EVM).unwrap());
    assert!(client.is_project_user("evm_chain", &EVM.to_lowercase()).unwrap());
    assert!(client.is_project_user("solana", SOL).unwrap());
    assert!(!client.is_project_user("evm_chain", NOBODY_EVM.to_str().unwrap()).unwrap());
    assert_eq!(last_error_rpc(), None, "no JSON-RPC error after a success");
}

#[test]
fn options_init_writes_the_defaults() {
    let mut o = depositkit_user_rpc_options {
        timeout_ms: 1,
        max_retries: 99,
        initial_backoff_ms: 1,
        user_agent: c"x".as_ptr(),
    };
    unsafe { depositkit_user_rpc_options_init(&mut o) };
    assert_eq!((o.timeout_ms, o.max_retries, o.initial_backoff_ms), (10_000, 3, 100));
    assert!(o.user_agent.is_null());
    unsafe { depositkit_user_rpc_options_init(null_mut()) };
}

#[test]
fn bad_configuration_is_refused_before_anything_is_sent() {
    let url = "http://127.0.0.1:9/user-rpc";
    let conf = depositkit_status::Configuration;

    let zero = depositkit_user_rpc_options { timeout_ms: 0, ..options(0, 1) };
    let (status, msg) = new_client(url, "proj", "sk_secret_1", Some(&zero)).err().unwrap();
    assert_eq!(
        (status, msg.as_str()),
        (conf, "timeout 0 µs is out of range: expected more than zero and at most 86400 s")
    );
    let huge = depositkit_user_rpc_options { timeout_ms: u64::MAX, ..options(0, 1) };
    let (status, msg) = new_client(url, "proj", "sk_secret_1", Some(&huge)).err().unwrap();
    assert_eq!(status, conf);
    assert!(msg.contains("out of range"), "{msg}");

    let (status, msg) = new_client("ftp://host/x", "proj", "sk_secret_1", None).err().unwrap();
    assert_eq!(status, conf);
    assert!(msg.contains("\"ftp://host/x\""), "{msg}");

    let (status, msg) =
        new_client("http://proj:sk_secret_1@host/", "proj", "sk_secret_1", None).err().unwrap();
    assert_eq!(status, conf);
    assert!(!msg.contains("sk_secret_1"), "{msg}");

    let (status, msg) = new_client(url, "a:b", "sk_secret_1", None).err().unwrap();
    assert_eq!(status, conf);
    assert!(msg.contains("\"a:b\"") && !msg.contains("sk_secret_1"), "{msg}");
    assert_eq!(new_client(url, "", "k", None).err().unwrap().0, conf);
    assert_eq!(new_client(url, "proj", "", None).err().unwrap().0, conf);

    let ua = depositkit_user_rpc_options { user_agent: c"app\r\nX-Evil: 1".as_ptr(), ..zero };
    let (status, msg) = new_client(url, "proj", "k", Some(&ua)).err().unwrap();
    assert_eq!(status, conf);
    assert!(msg.contains("options->user_agent"), "{msg}");
    let ua =
        depositkit_user_rpc_options { timeout_ms: 50, user_agent: c"app/1.0".as_ptr(), ..zero };
    assert!(new_client(url, "proj", "k", Some(&ua)).is_ok());

    // A server key that is not UTF-8: the message names the parameter, not its bytes.
    let mut out: *const depositkit_user_rpc_client = null();
    let status = unsafe {
        depositkit_user_rpc_client_new(
            c"http://h/".as_ptr(),
            c"proj".as_ptr(),
            c"sk_\xfe\xff".as_ptr(),
            null(),
            &mut out,
        )
    };
    assert_eq!(status, depositkit_status::InvalidUtf8);
    assert_eq!(last_error(), "server_key is not valid UTF-8");
    assert!(out.is_null());

    unsafe { depositkit_user_rpc_client_free(null()) };
}

#[test]
fn bad_credentials_are_authentication_errors_without_the_key() {
    let f = fixture();
    let wrong = new_client(&f.url, &f.project, "sk_wrong_key_material", None).unwrap();
    let (status, msg) = wrong.is_project_user("evm_chain", EVM).unwrap_err();
    assert_eq!(status, depositkit_status::Authentication);
    assert!(msg.contains("401"), "{msg}");
    assert!(!msg.contains("sk_wrong_key_material"), "{msg}");

    let (status, msg) = wrong.get_user_info(&f.user, &f.token).unwrap_err();
    assert_eq!(status, depositkit_status::Authentication);
    assert!(!msg.contains("sk_wrong_key_material") && !msg.contains(&f.token), "{msg}");

    let unknown = new_client(&f.url, "no-such-project", &f.key, None).unwrap();
    let (status, msg) = unknown.get_user_info_by_identity("jwt", "ada-uid").unwrap_err();
    assert_eq!(status, depositkit_status::Authentication);
    assert!(!msg.contains(&f.key), "{msg}");
}

#[test]
fn wrong_token_gives_the_json_rpc_error() {
    let f = fixture();
    let client = f.client();
    let (status, msg) = client.get_user_info(&f.user, "not-the-token").unwrap_err();
    assert_eq!(status, depositkit_status::Authentication);
    assert!(msg.contains("-32011"), "{msg}");
    assert!(!msg.contains("not-the-token") && !msg.contains(&f.key), "{msg}");

    let (code, data) = last_error_rpc().expect("the failure carried a JSON-RPC error");
    assert_eq!(code, DEPOSITKIT_USER_RPC_INVALID_TOKEN);
    let data = data.expect("devnet sends data");
    assert_eq!(data["param"], 1);
    assert!(!data.to_string().contains("not-the-token"), "{data}");

    // Reading does not change the record: the same answer again, the same message.
    assert_eq!(last_error_rpc(), Some((DEPOSITKIT_USER_RPC_INVALID_TOKEN, Some(data))));
    assert_eq!(last_error(), msg);
    // The data is optional to ask for.
    let mut code = 0;
    assert_eq!(unsafe { depositkit_last_error_rpc(&mut code, null_mut()) }, depositkit_status::Ok);
    assert_eq!(code, -32011);
    // NULL out_code: NULL_ARGUMENT, and the record survives.
    assert_eq!(
        unsafe { depositkit_last_error_rpc(null_mut(), null_mut()) },
        depositkit_status::NullArgument
    );
    assert_eq!(last_error_rpc().map(|(code, _)| code), Some(-32011));
    assert_eq!(last_error(), msg);

    // An expired token is rejected the same way.
    let expired =
        f.devnet.store().add_session(&f.user, SystemTime::now() - Duration::from_secs(1)).unwrap();
    let (status, _) = client.get_user_info(&f.user, &expired).unwrap_err();
    assert_eq!(status, depositkit_status::Authentication);
    assert_eq!(last_error_rpc().map(|(code, _)| code), Some(-32011));

    // A success clears the object with the message.
    client.get_user_info(&f.user, &f.token).unwrap();
    assert_eq!(last_error_rpc(), None);
}

#[test]
fn unknown_users_are_not_found() {
    let f = fixture();
    let client = f.client();
    let (status, msg) = client.get_user_info(STRANGER, &f.token).unwrap_err();
    assert_eq!(status, depositkit_status::NotFound);
    assert!(msg.contains(STRANGER), "{msg}");
    let (code, data) = last_error_rpc().unwrap();
    assert_eq!(code, DEPOSITKIT_USER_RPC_USER_NOT_FOUND);
    assert_eq!(data.unwrap()["uuid"], STRANGER);

    let (status, _) = client.get_user_info_by_identity("jwt", "nobody").unwrap_err();
    assert_eq!(status, depositkit_status::NotFound);
    assert_eq!(last_error_rpc().unwrap().0, DEPOSITKIT_USER_RPC_IDENTITY_NOT_FOUND);
}

#[test]
fn bad_arguments_are_configuration_errors_naming_the_value() {
    // Port 9 (discard) on loopback is closed: reaching the network would be NETWORK.
    let client = new_client("http://127.0.0.1:9/user-rpc", "proj", "sk_secret_2", None).unwrap();
    let conf = depositkit_status::Configuration;

    // After a JSON-RPC failure, a failure without one drops the object.
    let f = fixture();
    f.client().get_user_info(STRANGER, &f.token).unwrap_err();
    assert!(last_error_rpc().is_some());

    let (status, msg) = client.get_user_info("not-a-uuid", "tok_secret").unwrap_err();
    assert_eq!(status, conf);
    assert!(msg.contains("\"not-a-uuid\""), "{msg}");
    assert!(!msg.contains("tok_secret") && !msg.contains("sk_secret_2"), "{msg}");
    assert_eq!(last_error_rpc(), None);

    let (status, msg) = client.get_user_info(STRANGER, "").unwrap_err();
    assert_eq!((status, msg.as_str()), (conf, "session token is empty"));
    let (status, msg) = client.get_user_info_by_identity("google", "u1").unwrap_err();
    assert_eq!(status, conf);
    assert!(msg.contains("\"google\""), "{msg}");
    let (status, msg) = client.is_project_user("bitcoin", EVM).unwrap_err();
    assert_eq!(status, conf);
    assert!(msg.contains("\"bitcoin\""), "{msg}");
    let (status, msg) = client.is_project_user("evm_chain", "0x123").unwrap_err();
    assert_eq!(status, conf);
    assert!(msg.contains("\"0x123\""), "{msg}");
    assert_eq!(client.is_project_user("solana", EVM).unwrap_err().0, conf);

    // A token that is not UTF-8: named, not described.
    let mut out = null_mut();
    let status = unsafe {
        depositkit_user_rpc_client_get_user_info(
            client.0,
            c(STRANGER).as_ptr(),
            c"tok\xff".as_ptr(),
            &mut out,
        )
    };
    assert_eq!(status, depositkit_status::InvalidUtf8);
    assert_eq!(last_error(), "token is not valid UTF-8");
    assert!(out.is_null());
}

#[test]
fn null_arguments_name_the_parameter_and_write_nothing() {
    let client = new_client("http://127.0.0.1:9/user-rpc", "proj", "k", None).unwrap();
    let url = c"http://127.0.0.1:9/user-rpc";
    let uuid = c(STRANGER);
    let check = |status: depositkit_status, param: &str| {
        assert_eq!(status, depositkit_status::NullArgument, "{param}");
        assert_eq!(last_error(), format!("{param} must not be NULL"));
    };
    let mut handle: *const depositkit_user_rpc_client = null();
    let mut json = null_mut();
    let mut member = false;
    unsafe {
        check(
            depositkit_user_rpc_client_new(
                null(),
                c"p".as_ptr(),
                c"k".as_ptr(),
                null(),
                &mut handle,
            ),
            "base_url",
        );
        check(
            depositkit_user_rpc_client_new(
                url.as_ptr(),
                null(),
                c"k".as_ptr(),
                null(),
                &mut handle,
            ),
            "project_id",
        );
        check(
            depositkit_user_rpc_client_new(
                url.as_ptr(),
                c"p".as_ptr(),
                null(),
                null(),
                &mut handle,
            ),
            "server_key",
        );
        check(
            depositkit_user_rpc_client_new(
                url.as_ptr(),
                c"p".as_ptr(),
                c"k".as_ptr(),
                null(),
                null_mut(),
            ),
            "out_client",
        );

        check(
            depositkit_user_rpc_client_get_user_info(
                null(),
                uuid.as_ptr(),
                c"t".as_ptr(),
                &mut json,
            ),
            "client",
        );
        check(
            depositkit_user_rpc_client_get_user_info(client.0, null(), c"t".as_ptr(), &mut json),
            "uuid",
        );
        check(
            depositkit_user_rpc_client_get_user_info(client.0, uuid.as_ptr(), null(), &mut json),
            "token",
        );
        check(
            depositkit_user_rpc_client_get_user_info(
                client.0,
                uuid.as_ptr(),
                c"t".as_ptr(),
                null_mut(),
            ),
            "out_user_json",
        );

        check(
            depositkit_user_rpc_client_get_user_info_by_identity(
                null(),
                c"jwt".as_ptr(),
                c"u".as_ptr(),
                &mut json,
            ),
            "client",
        );
        check(
            depositkit_user_rpc_client_get_user_info_by_identity(
                client.0,
                null(),
                c"u".as_ptr(),
                &mut json,
            ),
            "provider",
        );
        check(
            depositkit_user_rpc_client_get_user_info_by_identity(
                client.0,
                c"jwt".as_ptr(),
                null(),
                &mut json,
            ),
            "uid",
        );
        check(
            depositkit_user_rpc_client_get_user_info_by_identity(
                client.0,
                c"jwt".as_ptr(),
                c"u".as_ptr(),
                null_mut(),
            ),
            "out_user_json",
        );

        check(
            depositkit_user_rpc_client_is_project_user(
                null(),
                c"evm_chain".as_ptr(),
                NOBODY_EVM.as_ptr(),
                &mut member,
            ),
            "client",
        );
        check(
            depositkit_user_rpc_client_is_project_user(
                client.0,
                null(),
                NOBODY_EVM.as_ptr(),
                &mut member,
            ),
            "chain",
        );
        check(
            depositkit_user_rpc_client_is_project_user(
                client.0,
                c"evm_chain".as_ptr(),
                null(),
                &mut member,
            ),
            "address",
        );
        check(
            depositkit_user_rpc_client_is_project_user(
                client.0,
                c"evm_chain".as_ptr(),
                NOBODY_EVM.as_ptr(),
                null_mut(),
            ),
            "out_is_member",
        );
    }
    assert!(handle.is_null() && json.is_null() && !member);
}

#[test]
fn server_down_is_a_network_error() {
    let f = fixture();
    let client = f.client_with(&options(1, 2000));
    let Fixture { devnet, url, .. } = f;
    devnet.shutdown().unwrap();
    let (status, msg) = client.is_project_user("evm_chain", EVM).unwrap_err();
    assert_eq!(status, depositkit_status::Network, "{msg}");
    assert!(msg.contains(&url) && msg.contains("after 2 attempts"), "{msg}");
    assert_eq!(last_error_rpc(), None);
}

#[test]
fn a_slow_server_times_out() {
    let f = fixture();
    f.devnet.inject_fault(&Fault::delay(Duration::from_millis(1500), 1)).unwrap();
    let client = f.client_with(&options(0, 200));
    let started = Instant::now();
    let (status, msg) = client.is_project_user("evm_chain", EVM).unwrap_err();
    assert_eq!(status, depositkit_status::Timeout, "{msg}");
    assert!(started.elapsed() < Duration::from_millis(1400), "the deadline was not honoured");
    assert!(msg.contains("timed out after 1 attempt"), "{msg}");
}

#[test]
fn too_many_requests_are_retried_then_succeed() {
    let f = fixture();
    f.devnet.inject_fault(&Fault::status(429, 2).with_retry_after(0)).unwrap();
    let client = f.client_with(&options(3, 5000));
    assert!(client.is_project_user("evm_chain", EVM).unwrap());

    f.devnet.inject_fault(&Fault::status(503, 3)).unwrap();
    let (status, msg) =
        f.client_with(&options(2, 5000)).is_project_user("evm_chain", EVM).unwrap_err();
    assert_eq!(status, depositkit_status::Network);
    assert!(msg.contains("HTTP 503") && msg.contains("after 3 attempts"), "{msg}");
}

#[test]
fn one_client_serves_eight_threads() {
    let f = fixture();
    let client = f.client();
    std::thread::scope(|s| {
        for i in 0..8 {
            let (client, user, token) = (&client, f.user.as_str(), f.token.as_str());
            s.spawn(move || {
                for round in 0..10 {
                    let record = client.get_user_info(user, token).unwrap();
                    assert_eq!(record["uuid"], user);
                    assert!(client.is_project_user("solana", SOL).unwrap());
                    // Each thread keeps its own last error while the others succeed and fail.
                    if (i + round) % 3 == 0 {
                        let (status, _) = client.get_user_info(user, "wrong").unwrap_err();
                        assert_eq!(status, depositkit_status::Authentication);
                        assert_eq!(last_error_rpc().unwrap().0, -32011);
                    } else {
                        assert_eq!(last_error_rpc(), None);
                    }
                }
            });
        }
    });
    // The main thread saw none of it.
    assert_eq!(last_error_rpc(), None);
    assert_eq!(
        client.get_user_info_by_identity("jwt", "ada-uid").unwrap()["uuid"],
        f.user.as_str()
    );
}
