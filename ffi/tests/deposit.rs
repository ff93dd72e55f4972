//! The deposit client and the in-process devnet through the C ABI, called from Rust exactly as
//! a C program calls them: the devnet is started with `depositkit_devnet_start`, clients are
//! configured with JSON, events arrive through C callbacks (with `void *user_data`) and through
//! `depositkit_deposit_client_next_event`.

#![cfg(feature = "devnet")]

use std::ffi::{c_char, c_int, c_void};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use depositkit::deposit::*;
use depositkit::devnet::*;
use depositkit::status::*;
use depositkit::strings::depositkit_string_free;
use depositkit::tokens::depositkit_token_type;
use serde_json::{Value, json};

mod support;
use support::*;

const USDC: u32 = depositkit_token_type::Usdc as u32;
const USDT: u32 = depositkit_token_type::Usdt as u32;
const BASE: u64 = 8453;
const ARBITRUM: u64 = 42161;
const SOLANA_ADDRESS: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const WAIT: Duration = Duration::from_secs(20);

// --- the devnet, through its C API ------------------------------------------------------------

impl Devnet {
    fn deposit(&self, address: &str, chain: u64, token: u32, raw: &str) -> Result<String, Failure> {
        let (address, raw) = (c(address), c(raw));
        string_out(|out| unsafe {
            depositkit_devnet_deposit(
                self.0,
                address.as_ptr(),
                chain,
                token,
                raw.as_ptr(),
                null(),
                out,
            )
        })
    }

    fn balance(&self, address: &str, chain: u64, token: u32) -> String {
        let address = c(address);
        string_out(|out| unsafe {
            depositkit_devnet_ledger_balance(self.0, address.as_ptr(), chain, token, out)
        })
        .unwrap()
    }
}

// --- clients ------------------------------------------------------------------------------------

static OWNERS: AtomicU64 = AtomicU64::new(1);

/// A fresh owner address, unique per call and per process.
fn owner() -> String {
    let n = OWNERS.fetch_add(1, Ordering::Relaxed);
    format!("0x{:08x}{:032x}", std::process::id(), n)
}

impl Client {
    fn initialize(&self) -> Value {
        json_out(|out| unsafe { depositkit_deposit_client_initialize(self.0, out) }).unwrap()
    }

    fn status(&self) -> depositkit_client_status {
        let mut status = depositkit_client_status::Error;
        check(unsafe { depositkit_deposit_client_status(self.0, &mut status) }).unwrap();
        status
    }

    fn poll_now(&self) -> Vec<Value> {
        let events =
            json_out(|out| unsafe { depositkit_deposit_client_poll_now(self.0, out) }).unwrap();
        events.as_array().unwrap().clone()
    }

    fn next_event(&self, timeout_ms: u64) -> Result<Value, Failure> {
        json_out(|out| unsafe { depositkit_deposit_client_next_event(self.0, timeout_ms, out) })
    }

    fn destination(&self) -> Value {
        json_out(|out| unsafe { depositkit_deposit_client_get_destination(self.0, out) }).unwrap()
    }

    fn set_destination(&self, destination: &str) -> Result<Value, Failure> {
        let destination = c(destination);
        json_out(|out| unsafe {
            depositkit_deposit_client_set_destination(self.0, destination.as_ptr(), out)
        })
    }

    fn sweep(&self, id: &str) -> Result<Value, Failure> {
        let id = c(id);
        json_out(|out| unsafe { depositkit_deposit_client_sweep(self.0, id.as_ptr(), out) })
    }

    fn sweep_result(&self, id: &str) -> Result<Value, Failure> {
        let id = c(id);
        json_out(|out| unsafe { depositkit_deposit_client_sweep_result(self.0, id.as_ptr(), out) })
    }

    fn pending(&self) -> Vec<Value> {
        let pending =
            json_out(|out| unsafe { depositkit_deposit_client_pending_deposits(self.0, out) })
                .unwrap();
        pending.as_array().unwrap().clone()
    }

    fn unsubscribe(&self, id: u64) -> bool {
        let mut removed = false;
        check(unsafe { depositkit_deposit_client_unsubscribe(self.0, id, &mut removed) }).unwrap();
        removed
    }

    fn callback_errors(&self) -> u64 {
        let mut n = u64::MAX;
        check(unsafe { depositkit_deposit_client_callback_errors(self.0, &mut n) }).unwrap();
        n
    }

    /// Pulls events until a lifecycle event of `id` in `phase`; returns every event pulled.
    fn pull_until(&self, id: &str, phase: &str) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now()).as_millis() as u64;
            let event = self
                .next_event(left)
                .unwrap_or_else(|f| panic!("{f:?} waiting for {phase}; events so far: {seen:#?}"));
            let hit = is_lifecycle(&event, id, phase);
            seen.push(event);
            if hit {
                return seen;
            }
        }
    }
}

fn is_lifecycle(event: &Value, id: &str, phase: &str) -> bool {
    event["type"] == "deposit:lifecycle"
        && event["payload"]["id"] == id
        && event["payload"]["phase"] == phase
}

/// The phases of deposit `id` among `events`, in order.
fn phases(events: &[Value], id: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "deposit:lifecycle" && e["payload"]["id"] == id)
        .map(|e| e["payload"]["phase"].as_str().unwrap().to_owned())
        .collect()
}

// --- a C callback collecting events (user_data: an Arc<Sink>) -----------------------------------

#[derive(Default)]
struct Sink {
    events: Mutex<Vec<Value>>,
    ready: Condvar,
    /// Calls of the callback, and how many saw a well-formed argument.
    calls: AtomicU32,
    bad_arguments: AtomicU32,
    /// Times `user_data_free` ran.
    freed: AtomicU32,
    /// What the callback returns.
    status: c_int,
    /// Names of the threads the callback ran on.
    threads: Mutex<Vec<Option<String>>>,
}

impl Sink {
    fn returning(status: c_int) -> Arc<Sink> {
        Arc::new(Sink { status, ..Sink::default() })
    }

    /// Waits until the events received satisfy `done`; returns them.
    fn wait(&self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        let mut events = self.events.lock().unwrap();
        while !done(&events) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out; the callback got {events:#?}");
            events = self.ready.wait_timeout(events, left).unwrap().0;
        }
        events.clone()
    }
}

/// Never panics: a panic in an `extern "C"` function aborts the process.
unsafe extern "C" fn sink_callback(
    user_data: *mut c_void,
    json: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: user_data is the `Arc<Sink>` given at subscription, alive until `sink_free`.
    let sink = unsafe { &*(user_data as *const Sink) };
    sink.calls.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the header promises `len` bytes and a NUL after them, valid during the call.
    let bytes = unsafe { std::slice::from_raw_parts(json.cast::<u8>(), len + 1) };
    let event = match (bytes[len], serde_json::from_slice::<Value>(&bytes[..len])) {
        (0, Ok(event)) => event,
        _ => {
            sink.bad_arguments.fetch_add(1, Ordering::SeqCst);
            return 1;
        }
    };
    if let Ok(mut threads) = sink.threads.lock() {
        threads.push(std::thread::current().name().map(str::to_owned));
    }
    if let Ok(mut events) = sink.events.lock() {
        events.push(event);
    }
    sink.ready.notify_all();
    sink.status
}

unsafe extern "C" fn sink_free(user_data: *mut c_void) {
    // SAFETY: the reference `subscribe` below gave away, taken back exactly once.
    let sink = unsafe { Arc::from_raw(user_data as *const Sink) };
    sink.freed.fetch_add(1, Ordering::SeqCst);
}

fn subscribe(client: &Client, sink: &Arc<Sink>) -> u64 {
    let user_data = Arc::into_raw(Arc::clone(sink)) as *mut c_void;
    let mut id = 0;
    check(unsafe {
        depositkit_deposit_client_subscribe(
            client.0,
            Some(sink_callback),
            user_data,
            Some(sink_free),
            &mut id,
        )
    })
    .unwrap();
    assert_ne!(id, 0);
    id
}

fn lifecycle_of<'a>(events: &'a [Value], id: &str, phase: &str) -> &'a Value {
    &events.iter().find(|e| is_lifecycle(e, id, phase)).unwrap()["payload"]
}

// --- tests --------------------------------------------------------------------------------------

#[test]
fn a_deposit_is_detected_swept_and_credited_through_callbacks_and_the_pull_queue() {
    let devnet = Devnet::start();
    let owner = owner();
    let client = new_client(&config(&devnet.url(), &owner, json!({}))).unwrap();
    assert_eq!(client.status(), depositkit_client_status::Idle);
    let sink = Sink::returning(0);
    subscribe(&client, &sink);

    let addresses = client.initialize();
    let evm = addresses["evm"].as_str().unwrap().to_owned();
    assert!(evm.starts_with("0x") && evm.len() == 42, "{addresses}");
    assert!(addresses["solana"].as_str().is_some_and(|s| s.len() >= 32), "{addresses}");
    let again =
        json_out(|out| unsafe { depositkit_deposit_client_deposit_addresses(client.0, out) })
            .unwrap();
    assert_eq!(again, addresses);
    assert_eq!(client.status(), depositkit_client_status::Ready);

    // 25 USDC on Base to the EVM deposit address.
    let tx = devnet.deposit(&evm, BASE, USDC, "25000000").unwrap();
    assert!(tx.starts_with("0x"), "{tx}");
    let found = client.poll_now();
    assert_eq!(found.len(), 1, "{found:?}");
    let detected = &found[0];
    assert_eq!(detected["phase"], "detected");
    assert_eq!(detected["token"], "USDC");
    assert_eq!(detected["chainId"], BASE);
    assert_eq!(detected["amount"], "25");
    let id = detected["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("dep_"), "{id}");

    // The callback sees detected, processing, credited, with the same id.
    let called = sink.wait(|events| events.iter().any(|e| is_lifecycle(e, &id, "credited")));
    assert_eq!(phases(&called, &id), ["detected", "processing", "credited"]);
    // Every event carries its id in the client's log (1, 2, …) and when it was emitted.
    let ids: Vec<u64> = called.iter().map(|e| e["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert!(called.iter().all(|e| e["at"].as_u64().is_some_and(|at| at > 0)));
    let untagged = |e: &Value| json!({"type": e["type"], "payload": e["payload"]});
    assert_eq!(
        untagged(&called[0]),
        json!({"type": "status:change", "payload": "initializing"}),
        "events from the subscription on"
    );
    assert!(
        called
            .iter()
            .any(|e| untagged(e) == json!({"type": "status:change", "payload": "sweeping"}))
    );
    // And so does the pull queue, independently.
    let pulled = client.pull_until(&id, "credited");
    assert_eq!(phases(&pulled, &id), ["detected", "processing", "credited"]);
    assert_eq!(lifecycle_of(&pulled, &id, "credited"), lifecycle_of(&called, &id, "credited"));

    // The ledger at the destination holds exactly what the sweep delivered.
    let credited = lifecycle_of(&called, &id, "credited").clone();
    let result = client.sweep_result(&id).unwrap();
    assert_eq!(result["status"], "success");
    assert_eq!(result["depositId"], id.as_str());
    assert_eq!(result["transactionId"], credited["transactionId"]);
    assert_eq!(result["explorerUrl"], credited["explorerUrl"]);
    let delivered = &result["delivered"];
    let destination = client.destination();
    assert_eq!(destination, json!({"chainId": BASE, "address": owner, "token": "USDC"}));
    assert_eq!(credited["destination"], json!({"address": owner, "chainId": BASE}));
    assert_eq!(delivered["address"], owner.as_str());
    let at_destination = devnet.balance(&owner, BASE, USDC);
    assert_eq!(at_destination, delivered["rawAmount"].as_str().unwrap());
    let raw: u64 = at_destination.parse().unwrap();
    assert!(raw > 24_000_000 && raw < 25_000_000, "25 USDC less fees: {raw}");
    assert_eq!(devnet.balance(&evm, BASE, USDC), "0", "the deposit address was swept");
    assert!(client.pending().is_empty());
    assert_eq!(client.status(), depositkit_client_status::Ready);

    // Every call ran on the client's dispatcher thread, with well-formed arguments.
    let threads = sink.threads.lock().unwrap().clone();
    assert!(threads.iter().all(|t| t.as_deref() == Some("depositkit-events")), "{threads:?}");
    assert_eq!(sink.bad_arguments.load(Ordering::SeqCst), 0);
    assert_eq!(client.callback_errors(), 0);
    let mut dropped = u64::MAX;
    check(unsafe { depositkit_deposit_client_dropped_events(client.0, &mut dropped) }).unwrap();
    assert_eq!(dropped, 0);

    // Closing drops the subscription: user_data_free exactly once, and nothing after.
    check(unsafe { depositkit_deposit_client_close(client.0) }).unwrap();
    assert_eq!(sink.freed.load(Ordering::SeqCst), 1);
    assert_eq!(client.status(), depositkit_client_status::Idle);
    let (status, message) =
        json_out(|out| unsafe { depositkit_deposit_client_poll_now(client.0, out) }).unwrap_err();
    assert_eq!(status, depositkit_status::DepositSdk);
    assert_eq!(message, "the client is closed");
    check(unsafe { depositkit_deposit_client_close(client.0) }).unwrap(); // idempotent
    drop(client);
    assert_eq!(sink.freed.load(Ordering::SeqCst), 1);
    assert_eq!(Arc::strong_count(&sink), 1, "the library kept no reference");
}

#[test]
fn a_deposit_below_the_threshold_is_reported_and_not_swept() {
    let devnet = Devnet::start();
    let client = new_client(&config(&devnet.url(), &owner(), json!({}))).unwrap();
    let evm = client.initialize()["evm"].as_str().unwrap().to_owned();
    // 0.3 USDC: above dust, below the $0.50 minimum.
    devnet.deposit(&evm, BASE, USDC, "300000").unwrap();
    let found = client.poll_now();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["phase"], "below_threshold");
    assert_eq!(found[0]["amount"], "0.3");
    assert!(found[0]["error"].as_str().unwrap().contains("minimum"), "{found:?}");
    assert!(client.pending().is_empty());
    assert_eq!(devnet.balance(&evm, BASE, USDC), "300000");
    // Nothing new: an empty array.
    assert!(client.poll_now().is_empty());
}

#[test]
fn bad_configurations_are_configuration_errors_naming_the_option() {
    let url = "http://127.0.0.1:1";
    let owner = owner();
    let cases: Vec<(String, &str)> = vec![
        (config(url, "0x1234", json!({})), "ownerAddress must be a valid EVM address: \"0x1234\""),
        (
            config(url, &owner, json!({"destination": {"chainId": 196}})),
            "destination.chainId 196: X Layer is a deposit source only",
        ),
        (
            config(url, &owner, json!({"destination": {"chainId": BASE, "token": "USDT"}})),
            "destination.token USDT cannot be delivered on Base (8453); deliverable there: ETH, USDC",
        ),
        (
            config(url, &owner, json!({"destination": {"chainId": 101, "address": owner}})),
            "Invalid Solana address format for destination on Solana",
        ),
        (
            config(url, &owner, json!({"destination": {"chainId": 101}})),
            "a Solana destination needs destination.address",
        ),
        (
            config(url, &owner, json!({"destination": {"chainId": 1, "token": "DOGE"}})),
            "destination.token must be one of ETH, USDC, USDT, BTC, SOL, BNB, got \"DOGE\"",
        ),
        (
            config(url, &owner, json!({"pollingIntervalMs": 500, "minPollingIntervalMs": 2000})),
            "pollingIntervalMs must be at least 2000 ms",
        ),
        (config(url, &owner, json!({"pollingInterval": 5})), "pollingInterval"),
        (
            json!({"ownerAddress": owner, "destination": {"chainId": 1}}).to_string(),
            "jwtServiceUrl is required",
        ),
        ("{\"ownerAddress\": ".to_owned(), "invalid configuration JSON"),
        ("[]".to_owned(), "invalid configuration JSON"),
    ];
    for (json, want) in cases {
        let (status, message) = new_client(&json).err().unwrap();
        assert_eq!(status, depositkit_status::Configuration, "{json}");
        assert!(message.contains(want), "{json}: {message:?} lacks {want:?}");
    }
    // A Solana destination with a Solana address is fine.
    let ok =
        config(url, &owner, json!({"destination": {"chainId": 101, "address": SOLANA_ADDRESS}}));
    new_client(&ok).unwrap();
}

#[test]
fn null_arguments_and_invalid_utf8_name_the_parameter() {
    let client = new_client(&config("http://127.0.0.1:1", &owner(), json!({}))).unwrap();
    let want = |(status, message): Failure, param: &str| {
        assert_eq!(status, depositkit_status::NullArgument, "{param}");
        assert_eq!(message, format!("{param} must not be NULL"));
    };
    let nul = null::<depositkit_deposit_client>();
    let mut text = null_mut();
    let mut flag = false;
    let mut n = 0u64;
    let mut status = depositkit_client_status::Idle;
    let mut out_client = null();
    let id = c("dep_0");
    let dest = c("{\"chainId\": 1}");
    let config_json = c("{}");
    unsafe {
        want(
            check(depositkit_deposit_client_new(null(), &mut out_client)).unwrap_err(),
            "config_json",
        );
        want(
            check(depositkit_deposit_client_new(config_json.as_ptr(), null_mut())).unwrap_err(),
            "out_client",
        );
        want(check(depositkit_deposit_client_initialize(nul, &mut text)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_initialize(client.0, null_mut())).unwrap_err(),
            "out_addresses_json",
        );
        want(
            check(depositkit_deposit_client_deposit_addresses(nul, &mut text)).unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_deposit_addresses(client.0, null_mut())).unwrap_err(),
            "out_json",
        );
        want(
            check(depositkit_deposit_client_set_destination(nul, dest.as_ptr(), null_mut()))
                .unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_set_destination(client.0, null(), null_mut()))
                .unwrap_err(),
            "destination_json",
        );
        want(
            check(depositkit_deposit_client_get_destination(nul, &mut text)).unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_get_destination(client.0, null_mut())).unwrap_err(),
            "out_json",
        );
        want(check(depositkit_deposit_client_status(nul, &mut status)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_status(client.0, null_mut())).unwrap_err(),
            "out_status",
        );
        want(
            check(depositkit_deposit_client_is_onramp_supported(nul, &mut flag)).unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_is_onramp_supported(client.0, null_mut())).unwrap_err(),
            "out_supported",
        );
        want(check(depositkit_deposit_client_start_watching(nul)).unwrap_err(), "client");
        want(check(depositkit_deposit_client_stop_watching(nul)).unwrap_err(), "client");
        want(check(depositkit_deposit_client_poll_now(nul, &mut text)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_poll_now(client.0, null_mut())).unwrap_err(),
            "out_events_json",
        );
        want(
            check(depositkit_deposit_client_pending_deposits(client.0, null_mut())).unwrap_err(),
            "out_json",
        );
        want(
            check(depositkit_deposit_client_sweep(client.0, null(), &mut text)).unwrap_err(),
            "deposit_id",
        );
        want(
            check(depositkit_deposit_client_sweep(client.0, id.as_ptr(), null_mut())).unwrap_err(),
            "out_result_json",
        );
        want(
            check(depositkit_deposit_client_sweep_result(nul, id.as_ptr(), &mut text)).unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_subscribe(
                nul,
                Some(sink_callback),
                null_mut(),
                None,
                &mut n,
            ))
            .unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_subscribe(
                client.0,
                Some(sink_callback),
                null_mut(),
                None,
                null_mut(),
            ))
            .unwrap_err(),
            "out_subscription",
        );
        want(
            check(depositkit_deposit_client_unsubscribe(nul, 1, &mut flag)).unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_unsubscribe(client.0, 1, null_mut())).unwrap_err(),
            "out_removed",
        );
        want(check(depositkit_deposit_client_next_event(nul, 0, &mut text)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_next_event(client.0, 0, null_mut())).unwrap_err(),
            "out_event_json",
        );
        want(check(depositkit_deposit_client_dropped_events(nul, &mut n)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_dropped_events(client.0, null_mut())).unwrap_err(),
            "out_count",
        );
        want(check(depositkit_deposit_client_callback_errors(nul, &mut n)).unwrap_err(), "client");
        want(check(depositkit_deposit_client_close(nul)).unwrap_err(), "client");
    }
    assert!(text.is_null() && out_client.is_null() && n == 0 && !flag);
    assert_eq!(status, depositkit_client_status::Idle);

    // A NULL callback: refused, and user_data stays the caller's (user_data_free not called).
    let sink = Sink::returning(0);
    let user_data = Arc::into_raw(Arc::clone(&sink)) as *mut c_void;
    let failure = check(unsafe {
        depositkit_deposit_client_subscribe(client.0, None, user_data, Some(sink_free), &mut n)
    })
    .unwrap_err();
    want(failure, "callback");
    assert_eq!(sink.freed.load(Ordering::SeqCst), 0);
    drop(unsafe { Arc::from_raw(user_data as *const Sink) });

    // Invalid UTF-8.
    let (status, message) =
        check(unsafe { depositkit_deposit_client_new(c"{\"a\xff".as_ptr(), &mut out_client) })
            .unwrap_err();
    assert_eq!(status, depositkit_status::InvalidUtf8);
    assert!(message.starts_with("config_json is not valid UTF-8"), "{message}");
    let (status, message) = check(unsafe {
        depositkit_deposit_client_sweep(client.0, c"dep_\xc3".as_ptr(), &mut text)
    })
    .unwrap_err();
    assert_eq!(status, depositkit_status::InvalidUtf8);
    assert!(message.starts_with("deposit_id is not valid UTF-8"), "{message}");

    // Frees accept NULL.
    unsafe {
        depositkit_deposit_client_free(null());
        depositkit_devnet_free(null());
    }
}

#[test]
fn calls_before_initialization_say_so() {
    let client = new_client(&config("http://127.0.0.1:1", &owner(), json!({}))).unwrap();
    let not_initialized = |failure: Failure| {
        assert_eq!(failure.0, depositkit_status::Configuration);
        assert!(failure.1.contains("initialize"), "{}", failure.1);
    };
    not_initialized(
        json_out(|out| unsafe { depositkit_deposit_client_deposit_addresses(client.0, out) })
            .unwrap_err(),
    );
    not_initialized(
        json_out(|out| unsafe { depositkit_deposit_client_poll_now(client.0, out) }).unwrap_err(),
    );
    not_initialized(
        check(unsafe { depositkit_deposit_client_start_watching(client.0) }).unwrap_err(),
    );
    not_initialized(client.sweep("dep_00").unwrap_err());
    check(unsafe { depositkit_deposit_client_stop_watching(client.0) }).unwrap();
    let (status, message) = client.sweep_result("dep_00").unwrap_err();
    assert_eq!(status, depositkit_status::NotFound);
    assert_eq!(message, "no sweep of deposit \"dep_00\" has finished");
    assert!(client.pending().is_empty());
}

#[test]
fn next_event_times_out_quietly_and_ends_after_close() {
    let client = new_client(&config("http://127.0.0.1:1", &owner(), json!({}))).unwrap();
    let mut out = std::ptr::dangling_mut::<c_char>();
    let status = unsafe { depositkit_deposit_client_next_event(client.0, 30, &mut out) };
    assert_eq!(status, depositkit_status::Timeout);
    assert_eq!(out, std::ptr::dangling_mut::<c_char>(), "written on timeout");
    assert_eq!(last_error(), "no event arrived within 30 ms");
    let (status, _) = client.next_event(0).unwrap_err();
    assert_eq!(status, depositkit_status::Timeout);

    // A closed client with an empty queue answers at once: no event will ever come.
    check(unsafe { depositkit_deposit_client_close(client.0) }).unwrap();
    let started = Instant::now();
    let (status, message) = client.next_event(600_000).unwrap_err();
    assert_eq!(status, depositkit_status::DepositSdk);
    assert!(message.contains("closed"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_callback_returning_non_zero_is_counted_and_not_fatal() {
    let devnet = Devnet::start();
    let client = new_client(&config(&devnet.url(), &owner(), json!({}))).unwrap();
    let failing = Sink::returning(7);
    let watching = Sink::returning(0);
    let failing_id = subscribe(&client, &failing);
    subscribe(&client, &watching);
    client.initialize(); // initializing, ready
    // Callbacks run in subscription order: once the second saw both events, the first has
    // returned from both.
    watching.wait(|events| events.len() == 2);
    assert_eq!(failing.calls.load(Ordering::SeqCst), 2);
    assert_eq!(client.callback_errors(), 2);
    // The failing subscription stays, the client works.
    check(unsafe { depositkit_deposit_client_start_watching(client.0) }).unwrap();
    watching.wait(|events| events.len() == 3);
    assert_eq!(client.callback_errors(), 3);
    assert_eq!(failing.events.lock().unwrap().last().unwrap()["payload"], "watching");
    assert!(client.unsubscribe(failing_id));
    assert_eq!(failing.freed.load(Ordering::SeqCst), 1);
    assert!(!client.unsubscribe(failing_id), "already removed");
    assert_eq!(failing.freed.load(Ordering::SeqCst), 1, "freed once");
}

/// user_data of a callback that calls back into the client.
struct Reentrant {
    client: AtomicPtr<depositkit_deposit_client>,
    subscription: AtomicU64,
    calls: AtomicU32,
    /// What the calls made from inside the callback returned.
    results: Mutex<Vec<String>>,
    done: (Mutex<bool>, Condvar),
    freed: AtomicU32,
    /// Close the client from the callback instead of unsubscribing.
    close: bool,
}

unsafe extern "C" fn reentrant_callback(
    user_data: *mut c_void,
    _: *const c_char,
    _: usize,
) -> c_int {
    // SAFETY: the Arc<Reentrant> given at subscription, alive until `reentrant_free`.
    let me = unsafe { &*(user_data as *const Reentrant) };
    me.calls.fetch_add(1, Ordering::SeqCst);
    let client = me.client.load(Ordering::SeqCst).cast_const();
    let mut results = Vec::new();
    let mut status = depositkit_client_status::Error;
    // SAFETY: the client outlives its subscriptions' calls (it is freed after `done`).
    let s = unsafe { depositkit_deposit_client_status(client, &mut status) };
    results.push(format!("status {s:?} {status:?}"));
    let mut json = null_mut();
    // SAFETY: as above.
    let s = unsafe { depositkit_deposit_client_get_destination(client, &mut json) };
    results.push(format!("get_destination {s:?} {}", !json.is_null()));
    // SAFETY: a string the library handed out, freed once.
    unsafe { depositkit_string_free(json) };
    if me.close {
        // SAFETY: as above.
        let s = unsafe { depositkit_deposit_client_close(client) };
        results.push(format!("close {s:?}"));
    } else {
        let mut removed = false;
        let id = me.subscription.load(Ordering::SeqCst);
        // SAFETY: as above.
        let s = unsafe { depositkit_deposit_client_unsubscribe(client, id, &mut removed) };
        results.push(format!("unsubscribe {s:?} {removed}"));
    }
    if let Ok(mut all) = me.results.lock() {
        all.extend(results);
    }
    if let Ok(mut done) = me.done.0.lock() {
        *done = true;
    }
    me.done.1.notify_all();
    0
}

unsafe extern "C" fn reentrant_free(user_data: *mut c_void) {
    // SAFETY: the reference given away at subscription, taken back exactly once.
    let me = unsafe { Arc::from_raw(user_data as *const Reentrant) };
    me.freed.fetch_add(1, Ordering::SeqCst);
}

fn reentrant(client: &Client, close: bool) -> Arc<Reentrant> {
    let me = Arc::new(Reentrant {
        client: AtomicPtr::new(client.0.cast_mut()),
        subscription: AtomicU64::new(0),
        calls: AtomicU32::new(0),
        results: Mutex::new(Vec::new()),
        done: (Mutex::new(false), Condvar::new()),
        freed: AtomicU32::new(0),
        close,
    });
    let mut id = 0;
    check(unsafe {
        depositkit_deposit_client_subscribe(
            client.0,
            Some(reentrant_callback),
            Arc::into_raw(Arc::clone(&me)) as *mut c_void,
            Some(reentrant_free),
            &mut id,
        )
    })
    .unwrap();
    me.subscription.store(id, Ordering::SeqCst);
    me
}

fn wait_done(me: &Reentrant) {
    let guard = me.done.0.lock().unwrap();
    let (guard, timeout) = me.done.1.wait_timeout_while(guard, WAIT, |done| !*done).unwrap();
    assert!(*guard && !timeout.timed_out(), "the callback did not run");
}

fn wait_freed(freed: &AtomicU32) {
    let deadline = Instant::now() + WAIT;
    while freed.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "user_data_free was not called");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_callback_may_call_back_and_unsubscribe_itself() {
    let devnet = Devnet::start();
    let client = new_client(&config(&devnet.url(), &owner(), json!({}))).unwrap();
    let me = reentrant(&client, false);
    let later = Sink::returning(0);
    subscribe(&client, &later);
    client.initialize(); // initializing (the callback unsubscribes itself), ready
    wait_done(&me);
    later.wait(|events| events.len() == 2);
    assert_eq!(me.calls.load(Ordering::SeqCst), 1, "not called after unsubscribing itself");
    assert_eq!(
        *me.results.lock().unwrap(),
        [
            "status Ok Initializing".to_owned(),
            "get_destination Ok true".to_owned(),
            "unsubscribe Ok true".to_owned()
        ]
    );
    wait_freed(&me.freed);
    assert!(!client.unsubscribe(me.subscription.load(Ordering::SeqCst)));
    drop(client);
    assert_eq!(me.freed.load(Ordering::SeqCst), 1, "user_data_free exactly once");
    assert_eq!(Arc::strong_count(&me), 1);
}

#[test]
fn a_callback_may_close_its_client() {
    let devnet = Devnet::start();
    let client = new_client(&config(&devnet.url(), &owner(), json!({}))).unwrap();
    let me = reentrant(&client, true);
    // initialize() races with the close from the callback: it may succeed or fail as closed.
    let mut out = null_mut();
    let status = unsafe { depositkit_deposit_client_initialize(client.0, &mut out) };
    if status == depositkit_status::Ok {
        take(out);
    } else {
        assert_eq!(status, depositkit_status::DepositSdk, "{}", last_error());
    }
    wait_done(&me);
    assert_eq!(me.results.lock().unwrap().last().unwrap(), "close Ok");
    wait_freed(&me.freed);
    assert_eq!(client.status(), depositkit_client_status::Idle);
    let mut id = 0;
    let sink = Sink::returning(0);
    let user_data = Arc::into_raw(Arc::clone(&sink)) as *mut c_void;
    let (status, message) = check(unsafe {
        depositkit_deposit_client_subscribe(
            client.0,
            Some(sink_callback),
            user_data,
            Some(sink_free),
            &mut id,
        )
    })
    .unwrap_err();
    assert_eq!((status, message.as_str()), (depositkit_status::DepositSdk, "the client is closed"));
    assert_eq!(sink.freed.load(Ordering::SeqCst), 0, "not taken on failure");
    drop(unsafe { Arc::from_raw(user_data as *const Sink) });
    drop(client);
    assert_eq!(me.freed.load(Ordering::SeqCst), 1);
}

/// user_data of a callback that takes its time.
#[derive(Default)]
struct Slow {
    entered: AtomicBool,
    returned: AtomicBool,
    freed: AtomicU32,
    /// Set when `user_data_free` ran while the callback had not returned.
    freed_too_early: AtomicBool,
}

unsafe extern "C" fn slow_callback(user_data: *mut c_void, _: *const c_char, _: usize) -> c_int {
    // SAFETY: the Arc<Slow> given at subscription, alive until `slow_free`.
    let me = unsafe { &*(user_data as *const Slow) };
    if !me.entered.swap(true, Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(300));
        me.returned.store(true, Ordering::SeqCst);
    }
    0
}

unsafe extern "C" fn slow_free(user_data: *mut c_void) {
    // SAFETY: the reference given away at subscription, taken back exactly once.
    let me = unsafe { Arc::from_raw(user_data as *const Slow) };
    if !me.returned.load(Ordering::SeqCst) {
        me.freed_too_early.store(true, Ordering::SeqCst);
    }
    me.freed.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn unsubscribe_waits_for_a_running_call_and_frees_once() {
    let devnet = Devnet::start();
    let client = Arc::new(new_client(&config(&devnet.url(), &owner(), json!({}))).unwrap());
    let slow = Arc::new(Slow::default());
    let mut id = 0;
    check(unsafe {
        depositkit_deposit_client_subscribe(
            client.0,
            Some(slow_callback),
            Arc::into_raw(Arc::clone(&slow)) as *mut c_void,
            Some(slow_free),
            &mut id,
        )
    })
    .unwrap();
    let init = {
        let client = Arc::clone(&client);
        std::thread::spawn(move || client.initialize())
    };
    let deadline = Instant::now() + WAIT;
    while !slow.entered.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(client.unsubscribe(id));
    assert!(slow.returned.load(Ordering::SeqCst), "unsubscribe returned during the call");
    init.join().unwrap();
    wait_freed(&slow.freed);
    // A subscription never unsubscribed is released by free, once.
    let sink = Sink::returning(0);
    subscribe(&client, &sink);
    drop(Arc::into_inner(client).unwrap());
    assert_eq!(sink.freed.load(Ordering::SeqCst), 1);
    assert_eq!(slow.freed.load(Ordering::SeqCst), 1);
    assert!(!slow.freed_too_early.load(Ordering::SeqCst), "freed while its callback ran");
}

/// user_data whose `user_data_free` calls back into the client: it unsubscribes another
/// subscription (which takes the event hub's lock).
struct Chain {
    client: AtomicPtr<depositkit_deposit_client>,
    next: AtomicU64,
    next_removed: AtomicBool,
    freed: AtomicU32,
}

unsafe extern "C" fn quiet_callback(_: *mut c_void, _: *const c_char, _: usize) -> c_int {
    0
}

unsafe extern "C" fn chain_free(user_data: *mut c_void) {
    // SAFETY: the reference given away at subscription, taken back exactly once.
    let me = unsafe { Arc::from_raw(user_data as *const Chain) };
    me.freed.fetch_add(1, Ordering::SeqCst);
    let next = me.next.load(Ordering::SeqCst);
    if next != 0 {
        let mut removed = false;
        // SAFETY: the client outlives this call (it is freed after the unsubscribe below).
        let s = unsafe {
            depositkit_deposit_client_unsubscribe(
                me.client.load(Ordering::SeqCst).cast_const(),
                next,
                &mut removed,
            )
        };
        me.next_removed.store(s == depositkit_status::Ok && removed, Ordering::SeqCst);
    }
}

fn chain(client: &Client, next: u64) -> (Arc<Chain>, u64) {
    let me = Arc::new(Chain {
        client: AtomicPtr::new(client.0.cast_mut()),
        next: AtomicU64::new(next),
        next_removed: AtomicBool::new(false),
        freed: AtomicU32::new(0),
    });
    let mut id = 0;
    check(unsafe {
        depositkit_deposit_client_subscribe(
            client.0,
            Some(quiet_callback),
            Arc::into_raw(Arc::clone(&me)) as *mut c_void,
            Some(chain_free),
            &mut id,
        )
    })
    .unwrap();
    (me, id)
}

#[test]
fn user_data_free_may_call_back_into_the_client() {
    let client = new_client(&config("http://127.0.0.1:1", &owner(), json!({}))).unwrap();
    // Unsubscribing `first` frees its user_data, which unsubscribes `second`.
    let (second, second_id) = chain(&client, 0);
    let (first, first_id) = chain(&client, second_id);
    assert!(client.unsubscribe(first_id));
    assert_eq!(first.freed.load(Ordering::SeqCst), 1);
    assert!(first.next_removed.load(Ordering::SeqCst));
    assert_eq!(second.freed.load(Ordering::SeqCst), 1);
    // The same when close drops them.
    let (fourth, fourth_id) = chain(&client, 0);
    let (third, _) = chain(&client, fourth_id);
    check(unsafe { depositkit_deposit_client_close(client.0) }).unwrap();
    assert_eq!(third.freed.load(Ordering::SeqCst), 1);
    assert_eq!(fourth.freed.load(Ordering::SeqCst), 1);
    assert!(!third.next_removed.load(Ordering::SeqCst), "already dropped by close");
    drop(client);
    for me in [first, second, third, fourth] {
        assert_eq!(me.freed.load(Ordering::SeqCst), 1);
        assert_eq!(Arc::strong_count(&me), 1);
    }
}

#[test]
fn destinations_change_at_run_time_and_bad_ones_are_refused() {
    let owner = owner();
    let client = new_client(&config("http://127.0.0.1:1", &owner, json!({}))).unwrap();
    let initial = json!({"chainId": BASE, "address": owner, "token": "USDC"});
    assert_eq!(client.destination(), initial);
    let mut supported = false;
    check(unsafe { depositkit_deposit_client_is_onramp_supported(client.0, &mut supported) })
        .unwrap();
    assert!(supported);
    let refused = [
        (r#"{"chainId": 196}"#.to_owned(), "X Layer is a deposit source only"),
        (
            r#"{"chainId": 8453, "token": "usdt"}"#.to_owned(),
            "destination.token USDT cannot be delivered on Base",
        ),
        (format!(r#"{{"chainId": 101, "address": "{owner}"}}"#), "Invalid Solana address format"),
        ("{\"chainId\": 1,".to_owned(), "destination_json is not valid JSON"),
        (r#"{"chain": 1}"#.to_owned(), "unknown key \"chain\""),
    ];
    for (json, want) in refused {
        let (status, message) = client.set_destination(&json).unwrap_err();
        assert_eq!(status, depositkit_status::Configuration, "{json}");
        assert!(message.contains(want), "{json}: {message}");
        assert_eq!(client.destination(), initial, "the old destination stays");
    }
    let receiver = "0x52908400098527886E0F7030069857D2E4169EE7";
    let set = client
        .set_destination(&format!(
            r#"{{"chainId": 42161, "address": "{receiver}", "token": "usdt"}}"#
        ))
        .unwrap();
    let want =
        json!({"chainId": ARBITRUM, "address": receiver.to_ascii_lowercase(), "token": "USDT"});
    assert_eq!(set, want);
    assert_eq!(client.destination(), want);
    let solana = c(&format!(r#"{{"chainId": 101, "address": "{SOLANA_ADDRESS}"}}"#));
    check(unsafe {
        depositkit_deposit_client_set_destination(client.0, solana.as_ptr(), null_mut())
    })
    .unwrap();
    assert_eq!(
        client.destination(),
        json!({"chainId": 101, "address": SOLANA_ADDRESS, "token": "USDC"})
    );
}

#[test]
fn failed_sweeps_then_a_manual_sweep_to_a_new_destination() {
    let devnet = Devnet::start();
    let client = new_client(&config(&devnet.url(), &owner(), json!({}))).unwrap();
    let evm = client.initialize()["evm"].as_str().unwrap().to_owned();
    // Every attempt of the automatic sweep is refused before money moves.
    check(unsafe { depositkit_devnet_fail_next_sweeps(devnet.0, 3, true) }).unwrap();
    devnet.deposit(&evm, BASE, USDC, "4000000").unwrap();
    let id = client.poll_now()[0]["id"].as_str().unwrap().to_owned();
    let events = client.pull_until(&id, "failed");
    assert_eq!(
        phases(&events, &id),
        ["detected", "processing", "processing", "processing", "failed"]
    );
    assert!(lifecycle_of(&events, &id, "failed")["error"].is_string());
    let pending = client.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["id"], id.as_str());
    assert_eq!(pending[0]["rawAmount"], "4000000");
    assert_eq!(client.sweep_result(&id).unwrap()["status"], "failed");

    // A new JWT key and expired sessions on the way: the client renews and goes on.
    check(unsafe { depositkit_devnet_rotate_jwt_key(devnet.0) }).unwrap();
    check(unsafe { depositkit_devnet_expire_sessions(devnet.0, null()) }).unwrap();
    let receiver = owner();
    client
        .set_destination(&format!(
            r#"{{"chainId": 42161, "address": "{receiver}", "token": "USDT"}}"#
        ))
        .unwrap();
    let result = client.sweep(&id).unwrap();
    assert_eq!(result["status"], "success", "{result}");
    assert_eq!(result["delivered"]["chainId"], ARBITRUM);
    assert_eq!(result["delivered"]["token"], "USDT");
    assert_eq!(
        devnet.balance(&receiver, ARBITRUM, USDT),
        result["delivered"]["rawAmount"].as_str().unwrap()
    );
    client.pull_until(&id, "credited");
    assert!(client.pending().is_empty());
    let (status, message) = client.sweep(&id).unwrap_err();
    assert_eq!(status, depositkit_status::NotFound);
    assert!(message.contains(&id), "{message}");
}

#[test]
fn the_watcher_finds_deposits_on_its_own() {
    let devnet = Devnet::start();
    let client = new_client(&config(&devnet.url(), &owner(), json!({}))).unwrap();
    let evm = client.initialize()["evm"].as_str().unwrap().to_owned();
    check(unsafe { depositkit_deposit_client_start_watching(client.0) }).unwrap();
    assert_eq!(client.status(), depositkit_client_status::Watching);
    devnet.deposit(&evm, ARBITRUM, USDC, "3000000").unwrap();
    let deadline = Instant::now() + WAIT;
    let id = loop {
        let event = client.next_event(WAIT.as_millis() as u64).unwrap();
        if event["type"] == "deposit:lifecycle" && event["payload"]["phase"] == "detected" {
            break event["payload"]["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline);
    };
    client.pull_until(&id, "credited");
    check(unsafe { depositkit_deposit_client_stop_watching(client.0) }).unwrap();
    assert_eq!(client.status(), depositkit_client_status::Ready);
}

#[test]
fn devnet_functions_check_their_arguments() {
    let devnet = Devnet::start();
    assert!(devnet.url().starts_with("http://127.0.0.1:"));
    // A transfer to an address no account owns lands in its ledger.
    let someone = "0x52908400098527886E0F7030069857D2E4169EE7";
    devnet.deposit(someone, ARBITRUM, USDT, "1234").unwrap();
    assert_eq!(devnet.balance(someone, ARBITRUM, USDT), "1234");
    assert_eq!(devnet.balance(someone, BASE, USDC), "0");
    // out_tx_hash and sender may be NULL.
    let (address, raw, sender) = (c(someone), c("5"), c(&owner()));
    check(unsafe {
        depositkit_devnet_deposit(
            devnet.0,
            address.as_ptr(),
            ARBITRUM,
            USDT,
            raw.as_ptr(),
            sender.as_ptr(),
            null_mut(),
        )
    })
    .unwrap();
    assert_eq!(devnet.balance(someone, ARBITRUM, USDT), "1239");

    let (status, message) = devnet.deposit(someone, BASE, 99, "1").unwrap_err();
    assert_eq!(status, depositkit_status::InvalidArgument);
    assert!(message.starts_with("unknown token 99"), "{message}");
    let (status, message) = devnet.deposit(someone, BASE, USDC, "-1").unwrap_err();
    assert_eq!(status, depositkit_status::InvalidArgument);
    assert!(message.contains("-1"), "{message}");
    let (status, _) = devnet.deposit("0x1234", BASE, USDC, "1").unwrap_err();
    assert_eq!(status, depositkit_status::InvalidArgument);

    check(unsafe { depositkit_devnet_set_price(devnet.0, USDC, 0.999) }).unwrap();
    let (status, message) =
        check(unsafe { depositkit_devnet_set_price(devnet.0, USDC, -1.0) }).unwrap_err();
    assert_eq!(status, depositkit_status::InvalidArgument);
    assert!(message.contains("USDC"), "{message}");
    assert_eq!(
        check(unsafe { depositkit_devnet_set_price(devnet.0, 42, 1.0) }).unwrap_err().0,
        depositkit_status::InvalidArgument
    );
    check(unsafe { depositkit_devnet_fail_next_sweeps(devnet.0, 0, false) }).unwrap();
    check(unsafe { depositkit_devnet_forge_next_jwts(devnet.0, 0) }).unwrap();
    let who = c(&owner());
    check(unsafe { depositkit_devnet_expire_sessions(devnet.0, who.as_ptr()) }).unwrap();

    let want = |(status, message): Failure, param: &str| {
        assert_eq!(status, depositkit_status::NullArgument, "{param}");
        assert_eq!(message, format!("{param} must not be NULL"));
    };
    let nul = null::<depositkit_devnet>();
    let mut text = null_mut();
    unsafe {
        want(check(depositkit_devnet_start(null(), false, null_mut())).unwrap_err(), "out_devnet");
        want(check(depositkit_devnet_services_url(nul, &mut text)).unwrap_err(), "devnet");
        want(check(depositkit_devnet_services_url(devnet.0, null_mut())).unwrap_err(), "out_url");
        want(
            check(depositkit_devnet_deposit(
                nul,
                address.as_ptr(),
                1,
                USDC,
                raw.as_ptr(),
                null(),
                null_mut(),
            ))
            .unwrap_err(),
            "devnet",
        );
        want(
            check(depositkit_devnet_deposit(
                devnet.0,
                null(),
                1,
                USDC,
                raw.as_ptr(),
                null(),
                null_mut(),
            ))
            .unwrap_err(),
            "address",
        );
        want(
            check(depositkit_devnet_deposit(
                devnet.0,
                address.as_ptr(),
                1,
                USDC,
                null(),
                null(),
                null_mut(),
            ))
            .unwrap_err(),
            "raw_amount",
        );
        want(
            check(depositkit_devnet_ledger_balance(
                devnet.0,
                address.as_ptr(),
                1,
                USDC,
                null_mut(),
            ))
            .unwrap_err(),
            "out_raw",
        );
        want(check(depositkit_devnet_set_price(nul, USDC, 1.0)).unwrap_err(), "devnet");
        want(check(depositkit_devnet_fail_next_sweeps(nul, 1, true)).unwrap_err(), "devnet");
        want(check(depositkit_devnet_rotate_jwt_key(nul)).unwrap_err(), "devnet");
        want(check(depositkit_devnet_forge_next_jwts(nul, 1)).unwrap_err(), "devnet");
        want(check(depositkit_devnet_expire_sessions(nul, null())).unwrap_err(), "devnet");
    }
    assert!(text.is_null());
}

#[test]
fn a_devnet_on_a_given_database_keeps_it() {
    let dir = std::env::temp_dir().join(format!("depositkit-ffi-devnet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kept.sqlite");
    let path_c = c(path.to_str().unwrap());
    let someone = "0x52908400098527886E0F7030069857D2E4169EE7";
    for round in 1..=2u32 {
        let mut out = null();
        check(unsafe { depositkit_devnet_start(path_c.as_ptr(), false, &mut out) }).unwrap();
        let devnet = Devnet(out);
        devnet.deposit(someone, BASE, USDC, "10").unwrap();
        assert_eq!(devnet.balance(someone, BASE, USDC), (10 * round).to_string());
        drop(devnet);
        assert!(path.exists(), "the database stays");
    }
    std::fs::remove_dir_all(&dir).unwrap();

    let mut out = null();
    let bad = c("/nonexistent-dir/devnet.sqlite");
    let (status, message) =
        check(unsafe { depositkit_devnet_start(bad.as_ptr(), false, &mut out) }).unwrap_err();
    assert_eq!(status, depositkit_status::DepositSdk, "{message}");
    assert!(out.is_null());
}
