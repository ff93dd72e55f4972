//! Refunds, recovery of stuck funds, notification records and the transaction history through
//! the C ABI, called from Rust exactly as a C program calls them, against a devnet started with
//! `depositkit_devnet_start` and driven through its C functions (deposits with a sender, sweep
//! faults, HTTP faults of one service).

#![cfg(feature = "devnet")]

use std::ffi::{c_char, c_int, c_void};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use depositkit::deposit::*;
use depositkit::devnet::*;
use depositkit::history::*;
use depositkit::notifications::*;
use depositkit::recovery::*;
use depositkit::refund::*;
use depositkit::status::*;
use depositkit::tokens::{depositkit_token_info_json, depositkit_token_type};
use serde_json::{Value, json};

mod support;
use support::*;

const USDC: u32 = depositkit_token_type::Usdc as u32;
const BASE: u64 = 8453;
const WAIT: Duration = Duration::from_secs(30);

/// A bool output, starting from `sentinel`: checks it is written only on success.
fn bool_out(
    sentinel: bool,
    call: impl FnOnce(*mut bool) -> depositkit_status,
) -> Result<bool, Failure> {
    let mut out = sentinel;
    match check(call(&mut out)) {
        Ok(()) => Ok(out),
        Err(failure) => {
            assert_eq!(out, sentinel, "an output written on failure");
            Err(failure)
        }
    }
}

fn assert_failure(result: Result<Value, Failure>, status: depositkit_status, needle: &str) {
    let (got, message) = result.expect_err("the call should fail");
    assert_eq!(got, status, "{message}");
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
}

// --- the devnet, through its C API ------------------------------------------------------------

impl Devnet {
    /// `raw` USDC on Base to `address`, from `sender` (None: a made-up one).
    fn deposit(&self, address: &str, raw: &str, sender: Option<&str>) {
        let (address, raw) = (c(address), c(raw));
        let sender = sender.map(c);
        check(unsafe {
            depositkit_devnet_deposit(
                self.0,
                address.as_ptr(),
                BASE,
                USDC,
                raw.as_ptr(),
                sender.as_ref().map_or(null(), |s| s.as_ptr()),
                null_mut(),
            )
        })
        .unwrap();
    }

    fn balance(&self, address: &str) -> String {
        let address = c(address);
        let mut out = null_mut();
        check(unsafe {
            depositkit_devnet_ledger_balance(self.0, address.as_ptr(), BASE, USDC, &mut out)
        })
        .unwrap();
        take(out)
    }

    fn fail_next_sweeps(&self, count: u32) {
        check(unsafe { depositkit_devnet_fail_next_sweeps(self.0, count, false) }).unwrap();
    }

    fn fault(
        &self,
        service: &str,
        path: Option<&str>,
        status: u16,
        delay_ms: u64,
        count: u32,
    ) -> Result<(), Failure> {
        let service = c(service);
        let path = path.map(c);
        check(unsafe {
            depositkit_devnet_inject_service_fault(
                self.0,
                service.as_ptr(),
                path.as_ref().map_or(null(), |p| p.as_ptr()),
                status,
                delay_ms,
                count,
            )
        })
    }
}

// --- clients ------------------------------------------------------------------------------------

static OWNERS: AtomicU64 = AtomicU64::new(1);

/// A fresh EVM address (lower case), unique per call and per process.
fn address() -> String {
    let n = OWNERS.fetch_add(1, Ordering::Relaxed);
    format!("0x{:08x}{:024x}{:08x}", std::process::id(), n, 0x5e_u32)
}

impl Client {
    /// Initializes the client; returns its EVM deposit address.
    fn initialize(&self) -> String {
        let addresses =
            json_out(|out| unsafe { depositkit_deposit_client_initialize(self.0, out) }).unwrap();
        addresses["evm"].as_str().unwrap().to_owned()
    }

    /// Polls once; returns the id of the one deposit detected.
    fn poll_one(&self) -> String {
        let found =
            json_out(|out| unsafe { depositkit_deposit_client_poll_now(self.0, out) }).unwrap();
        assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
        assert_eq!(found[0]["phase"], "detected", "{found}");
        found[0]["id"].as_str().unwrap().to_owned()
    }

    /// Pulls events until one satisfies `hit`; returns every event pulled.
    fn pull_until(&self, hit: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now()).as_millis() as u64;
            let event =
                json_out(|out| unsafe { depositkit_deposit_client_next_event(self.0, left, out) })
                    .unwrap_or_else(|f| panic!("{f:?}; events so far: {seen:#?}"));
            let done = hit(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    fn refund(&self, id: &str, reason: Option<&str>) -> Result<Value, Failure> {
        let id = c(id);
        let reason = reason.map(c);
        json_out(|out| unsafe {
            depositkit_deposit_client_refund(
                self.0,
                id.as_ptr(),
                reason.as_ref().map_or(null(), |r| r.as_ptr()),
                out,
            )
        })
    }

    fn can_refund(&self, id: &str) -> Result<Value, Failure> {
        let id = c(id);
        json_out(|out| unsafe { depositkit_deposit_client_can_refund(self.0, id.as_ptr(), out) })
    }

    fn refund_result(&self, id: &str) -> Result<Value, Failure> {
        let id = c(id);
        json_out(|out| unsafe { depositkit_deposit_client_refund_result(self.0, id.as_ptr(), out) })
    }

    fn stuck_funds(&self) -> Result<Value, Failure> {
        json_out(|out| unsafe { depositkit_deposit_client_stuck_funds(self.0, out) })
    }

    fn recover_funds(&self) -> Result<Value, Failure> {
        json_out(|out| unsafe { depositkit_deposit_client_recover_funds(self.0, out) })
    }

    fn notifications(&self) -> Value {
        json_out(|out| unsafe { depositkit_deposit_client_notifications(self.0, out) }).unwrap()
    }

    fn dismiss(&self, id: &str) -> bool {
        let id = c(id);
        bool_out(false, |out| unsafe {
            depositkit_deposit_client_dismiss_notification(self.0, id.as_ptr(), out)
        })
        .unwrap()
    }

    fn transactions(&self, page: u32, page_size: u32) -> Result<Value, Failure> {
        json_out(|out| unsafe {
            depositkit_deposit_client_get_transactions(self.0, page, page_size, out)
        })
    }

    fn token_transactions(
        &self,
        address: &str,
        cursor: Option<&str>,
        page_size: u32,
    ) -> Result<Value, Failure> {
        let address = c(address);
        let cursor = cursor.map(c);
        json_out(|out| unsafe {
            depositkit_deposit_client_get_token_transactions(
                self.0,
                BASE,
                address.as_ptr(),
                cursor.as_ref().map_or(null(), |p| p.as_ptr()),
                page_size,
                out,
            )
        })
    }

    fn transaction(&self, id: &str) -> Result<Value, Failure> {
        let id = c(id);
        json_out(|out| unsafe {
            depositkit_deposit_client_get_transaction(self.0, id.as_ptr(), out)
        })
    }

    fn unsubscribe(&self, id: u64) -> bool {
        bool_out(false, |out| unsafe { depositkit_deposit_client_unsubscribe(self.0, id, out) })
            .unwrap()
    }
}

fn is_lifecycle(event: &Value, id: &str, phase: &str) -> bool {
    event["type"] == "deposit:lifecycle"
        && event["payload"]["id"] == id
        && event["payload"]["phase"] == phase
}

fn is_final_refund(event: &Value, id: &str) -> bool {
    event["type"] == "refund:update"
        && event["payload"]["depositId"] == id
        && matches!(event["payload"]["status"].as_str(), Some("success" | "failed" | "skipped"))
}

/// The statuses of deposit `id`'s refund updates among `events`, in order.
fn refund_statuses(events: &[Value], id: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "refund:update" && e["payload"]["depositId"] == id)
        .map(|e| e["payload"]["status"].as_str().unwrap().to_owned())
        .collect()
}

/// A deposit of `raw` USDC on Base from `sender` whose three sweep attempts fail: returns its id
/// once the `failed` event was pulled, and the events.
fn failed_deposit(
    devnet: &Devnet,
    client: &Client,
    evm: &str,
    raw: &str,
    sender: Option<&str>,
) -> (String, Vec<Value>) {
    devnet.fail_next_sweeps(3);
    devnet.deposit(evm, raw, sender);
    let id = client.poll_one();
    let events = client.pull_until(|e| is_lifecycle(e, &id, "failed"));
    (id, events)
}

// --- a C callback collecting what it is given (user_data: an Arc<Sink>) -------------------------

#[derive(Default)]
struct Sink {
    /// Every argument, parsed.
    received: Mutex<Vec<Value>>,
    ready: Condvar,
    bad_arguments: AtomicU32,
    /// Times `user_data_free` ran.
    freed: AtomicU32,
    /// Names of the threads the callback ran on.
    threads: Mutex<Vec<Option<String>>>,
}

impl Sink {
    /// Waits until what the callback received satisfies `done`; returns it.
    fn wait(&self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        let mut received = self.received.lock().unwrap();
        while !done(&received) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out; the callback got {received:#?}");
            received = self.ready.wait_timeout(received, left).unwrap().0;
        }
        received.clone()
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
    // SAFETY: the header promises `len` bytes and a NUL after them, valid during the call.
    let bytes = unsafe { std::slice::from_raw_parts(json.cast::<u8>(), len + 1) };
    let value = match (bytes[len], serde_json::from_slice::<Value>(&bytes[..len])) {
        (0, Ok(value)) => value,
        _ => {
            sink.bad_arguments.fetch_add(1, Ordering::SeqCst);
            return 1;
        }
    };
    if let Ok(mut threads) = sink.threads.lock() {
        threads.push(std::thread::current().name().map(str::to_owned));
    }
    if let Ok(mut received) = sink.received.lock() {
        received.push(value);
    }
    sink.ready.notify_all();
    0
}

unsafe extern "C" fn sink_free(user_data: *mut c_void) {
    // SAFETY: the reference given away at subscription, taken back exactly once.
    let sink = unsafe { Arc::from_raw(user_data as *const Sink) };
    sink.freed.fetch_add(1, Ordering::SeqCst);
}

fn subscribe_events(client: &Client, sink: &Arc<Sink>) -> u64 {
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

fn subscribe_notifications(client: &Client, sink: &Arc<Sink>) -> Result<u64, Failure> {
    let user_data = Arc::into_raw(Arc::clone(sink)) as *mut c_void;
    let mut id = 0;
    let result = check(unsafe {
        depositkit_deposit_client_subscribe_notifications(
            client.0,
            Some(sink_callback),
            user_data,
            Some(sink_free),
            &mut id,
        )
    });
    match result {
        Ok(()) => {
            assert_ne!(id, 0);
            Ok(id)
        }
        Err(failure) => {
            assert_eq!(id, 0, "out_subscription written on failure");
            // Still ours: take the reference back.
            drop(unsafe { Arc::from_raw(user_data as *const Sink) });
            Err(failure)
        }
    }
}

// --- tests --------------------------------------------------------------------------------------

#[test]
fn a_manual_refund_after_failed_sweeps_goes_back_to_the_sender_once() {
    let devnet = Devnet::start();
    let client = new_client_ok(&config(&devnet.url(), &address(), json!({})));
    let evm = client.initialize();
    let config =
        json_out(|out| unsafe { depositkit_deposit_client_refund_config(client.0, out) }).unwrap();
    assert_eq!(
        config,
        json!({"enabled": false, "delayMs": 5000, "maxAttempts": 2, "refundToSender": true})
    );
    let sender = address();
    let (id, _) = failed_deposit(&devnet, &client, &evm, "5000000", Some(&sender));
    assert_failure(client.refund_result(&id), depositkit_status::NotFound, "never refunded");

    let eligibility = client.can_refund(&id).unwrap();
    assert_eq!(eligibility["eligible"], true, "{eligibility}");
    assert_eq!(eligibility["reason"], "sweep_failed");
    assert_eq!(eligibility["refundAddress"].as_str().unwrap().to_lowercase(), sender);
    assert_eq!(eligibility["refundToSender"], true);
    assert!(eligibility["message"].is_string());
    let unknown = client.can_refund("dep_nope").unwrap();
    assert_eq!(unknown["eligible"], false, "{unknown}");
    assert!(unknown.get("refundAddress").is_none(), "absent, not null: {unknown}");

    // Bad input first: nothing happens.
    assert_failure(
        client.refund(&id, Some("because")),
        depositkit_status::InvalidArgument,
        "reason must be one of sweep_failed, user_requested",
    );
    assert_failure(client.refund("dep_nope", None), depositkit_status::NotFound, "dep_nope");

    // NULL reason: user_requested. 5 USDC back on Base, less $0.03 of gas.
    let result = client.refund(&id, None).unwrap();
    assert_eq!(result["status"], "success", "{result}");
    assert_eq!(result["reason"], "user_requested");
    assert_eq!(result["depositId"], id.as_str());
    assert_eq!(result["token"], "USDC");
    assert_eq!(result["sourceChainId"], BASE);
    assert_eq!(result["amount"], "5");
    assert_eq!(result["amountUSD"], 5.0);
    assert_eq!(result["refundedTo"].as_str().unwrap().to_lowercase(), sender);
    assert_eq!(result["refundedToSender"], true);
    assert_eq!(result["attempts"], 1);
    assert_eq!(result["deliveredAmount"], "4.97");
    let tx = result["txHash"].as_str().unwrap().to_owned();
    assert!(result["explorerUrl"].as_str().unwrap().ends_with(&tx), "{result}");
    assert!(result.get("error").is_none(), "{result}");
    assert_eq!(devnet.balance(&sender), "4970000");
    assert_eq!(devnet.balance(&evm), "0");
    assert_eq!(client.refund_result(&id).unwrap(), result);

    // The updates arrived as events: pending, processing, success.
    let events = client.pull_until(|e| is_final_refund(e, &id));
    assert_eq!(refund_statuses(&events, &id), ["pending", "processing", "success"]);
    assert_eq!(events.last().unwrap()["payload"], result);

    // Never twice: REFUND with the core's message; can_refund agrees.
    assert_failure(client.refund(&id, None), depositkit_status::Refund, "already refunded");
    assert_failure(
        client.refund(&id, Some("sweep_failed")),
        depositkit_status::Refund,
        "already refunded",
    );
    let eligibility = client.can_refund(&id).unwrap();
    assert_eq!(eligibility["eligible"], false);
    assert!(eligibility["message"].as_str().unwrap().contains("already refunded"));

    // The history has the refund, with its deposit id; one transaction by its hash.
    let history = client.transactions(0, 0).unwrap();
    assert_eq!((history["page"].as_u64(), history["pageSize"].as_u64()), (Some(1), Some(10)));
    let refund = history["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tag"] == "refund" && t["status"] == 1)
        .unwrap_or_else(|| panic!("no refund in {history:#}"));
    assert_eq!(refund["transactionId"], tx.as_str());
    assert_eq!(refund["depositId"], id.as_str());
    let single = client.transaction(&tx).unwrap();
    assert_eq!(&single, refund);
}

#[test]
fn auto_refund_from_the_configuration_reaches_events_and_notification_records() {
    let devnet = Devnet::start();
    let extra = json!({
        "refund": {"enabled": true, "delayMs": 20, "maxAttempts": 2},
        "notifications": {"durationMs": 0, "max": 3, "theme": "light"},
    });
    let client = new_client_ok(&config(&devnet.url(), &address(), extra));
    let config =
        json_out(|out| unsafe { depositkit_deposit_client_refund_config(client.0, out) }).unwrap();
    assert_eq!(
        config,
        json!({"enabled": true, "delayMs": 20, "maxAttempts": 2, "refundToSender": true})
    );
    let notes_config =
        json_out(|out| unsafe { depositkit_deposit_client_notifications_config(client.0, out) })
            .unwrap();
    assert_eq!(
        notes_config,
        json!({"position": "top-right", "theme": "light", "durationMs": 0, "max": 3,
               "className": null})
    );
    let events_sink = Arc::new(Sink::default());
    let notes_sink = Arc::new(Sink::default());
    let events_sub = subscribe_events(&client, &events_sink);
    let notes_sub = subscribe_notifications(&client, &notes_sink).unwrap();
    assert_ne!(events_sub, notes_sub);
    let evm = client.initialize();
    assert_eq!(client.notifications(), json!([]));

    let sender = address();
    devnet.fail_next_sweeps(3);
    devnet.deposit(&evm, "3000000", Some(&sender));
    let id = client.poll_one();
    let events = events_sink.wait(|seen| seen.iter().any(|e| is_final_refund(e, &id)));
    let phases: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "deposit:lifecycle" && e["payload"]["id"] == id)
        .map(|e| e["payload"]["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["detected", "processing", "processing", "processing", "failed"]);
    assert_eq!(refund_statuses(&events, &id), ["pending", "processing", "success"]);
    let last = &events.iter().rfind(|e| is_final_refund(e, &id)).unwrap()["payload"];
    assert_eq!(last["reason"], "sweep_failed");
    assert_eq!(last["refundedTo"].as_str().unwrap().to_lowercase(), sender);
    assert_eq!(devnet.balance(&sender), "2970000");
    assert_eq!(devnet.balance(&evm), "0");
    assert_eq!(&client.refund_result(&id).unwrap(), last);
    let pending =
        json_out(|out| unsafe { depositkit_deposit_client_pending_deposits(client.0, out) })
            .unwrap();
    assert_eq!(pending, json!([]));

    // One record for the deposit: the failed lifecycle event, with the refund attached.
    let records = client.notifications();
    assert_eq!(records.as_array().unwrap().len(), 1, "{records:#}");
    let record = &records[0];
    assert_eq!(record["id"], id.as_str());
    assert_eq!(record["phase"], "failed");
    assert_eq!(record["token"], "USDC");
    assert_eq!(record["chainId"], BASE);
    assert!(record["error"].is_string() && record["timestamp"].is_u64(), "{record}");
    let (created, updated) = (record["createdAt"].as_u64(), record["updatedAt"].as_u64());
    assert!(created.is_some() && created <= updated, "{record}");
    assert_eq!(&record["refund"], last);
    // The callback saw the same records, on the dispatcher thread.
    let snapshots = notes_sink.wait(|seen| seen.last() == Some(&records));
    assert!(snapshots.iter().all(|s| s.as_array().is_some_and(|a| a.len() <= 1)), "{snapshots:#?}");
    assert!(snapshots.len() >= 3, "a call per change: {snapshots:#?}");
    let threads = notes_sink.threads.lock().unwrap().clone();
    assert!(threads.iter().all(|t| t.as_deref() == Some("depositkit-events")), "{threads:?}");

    // durationMs 0: kept until dismissed; the dismissal reaches the callback as [].
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(client.notifications(), records);
    assert!(client.dismiss(&id));
    assert!(!client.dismiss(&id));
    assert_eq!(client.notifications(), json!([]));
    notes_sink.wait(|seen| seen.last() == Some(&json!([])));

    // One space of ids: the notification subscription is removed by _unsubscribe.
    assert!(client.unsubscribe(notes_sub));
    assert!(!client.unsubscribe(notes_sub));
    assert_eq!(notes_sink.freed.load(Ordering::SeqCst), 1);
    assert_eq!(notes_sink.bad_arguments.load(Ordering::SeqCst), 0);
    drop(client);
    assert_eq!(events_sink.freed.load(Ordering::SeqCst), 1);
    assert_eq!(Arc::strong_count(&events_sink), 1, "the library kept no reference");
    assert_eq!(Arc::strong_count(&notes_sink), 1, "the library kept no reference");
}

#[test]
fn stuck_funds_are_recovered_and_service_failures_are_statuses() {
    let devnet = Devnet::start();
    let owner = address();
    let client = new_client_ok(&config(&devnet.url(), &owner, json!({})));
    let evm = client.initialize();
    assert_eq!(client.stuck_funds().unwrap(), json!([]));
    let (id, _) = failed_deposit(&devnet, &client, &evm, "4000000", None);

    let stuck = client.stuck_funds().unwrap();
    assert_eq!(stuck.as_array().unwrap().len(), 1, "{stuck:#}");
    assert_eq!(stuck[0]["id"], "recovery:usdc:8453");
    assert_eq!(
        (stuck[0]["token"].as_str(), stuck[0]["chainId"].as_u64()),
        (Some("USDC"), Some(BASE))
    );
    assert_eq!(
        (stuck[0]["amount"].as_str(), stuck[0]["rawAmount"].as_str()),
        (Some("4"), Some("4000000"))
    );
    assert_eq!(stuck[0]["decimals"], 6);

    // The account service fails every balance read: both calls fail with its status, and
    // nothing moves.
    devnet.fault("ua", Some("/v1/balances"), 500, 0, 1000).unwrap();
    assert_failure(client.stuck_funds(), depositkit_status::UniversalAccount, "");
    assert_failure(client.recover_funds(), depositkit_status::UniversalAccount, "");
    assert_eq!(devnet.balance(&evm), "4000000");
    check(unsafe { depositkit_devnet_clear_faults(devnet.0) }).unwrap();

    // The recovery's send is refused: a "failed" result (still OK), the money stays.
    check(unsafe { depositkit_devnet_fail_next_sweeps(devnet.0, 1, true) }).unwrap();
    let results = client.recover_funds().unwrap();
    assert_eq!(results.as_array().unwrap().len(), 1, "{results:#}");
    assert_eq!(results[0]["status"], "failed", "{results:#}");
    assert!(results[0]["error"].is_string() && results[0].get("txHash").is_none(), "{results:#}");
    assert_eq!(devnet.balance(&evm), "4000000");
    let events = client.pull_until(|e| e["type"] == "recovery:result");
    assert_eq!(events.last().unwrap()["payload"], results[0]);

    let results = client.recover_funds().unwrap();
    assert_eq!(results.as_array().unwrap().len(), 1, "{results:#}");
    let result = &results[0];
    assert_eq!(result["status"], "success", "{result}");
    assert_eq!(
        (result["amount"].as_str(), result["rawAmount"].as_str()),
        (Some("4"), Some("4000000"))
    );
    assert_eq!(result["chainId"], BASE);
    let tx = result["txHash"].as_str().unwrap().to_owned();
    assert_eq!(devnet.balance(&owner), result["delivered"]["rawAmount"].as_str().unwrap());
    assert_eq!(devnet.balance(&evm), "0");
    // The failed deposit was in it: credited by the recovery's transaction.
    let events = client.pull_until(|e| e["type"] == "recovery:result");
    let credited = events.iter().find(|e| is_lifecycle(e, &id, "credited")).expect("credited");
    assert_eq!(credited["payload"]["transactionId"], tx.as_str());
    assert_eq!(&events.last().unwrap()["payload"], result);
    assert!(
        !bool_out(true, |out| unsafe { depositkit_deposit_client_is_recovering(client.0, out) })
            .unwrap()
    );
    assert_eq!(client.stuck_funds().unwrap(), json!([]));
    assert_eq!(client.recover_funds().unwrap(), json!([]));
    let pending =
        json_out(|out| unsafe { depositkit_deposit_client_pending_deposits(client.0, out) })
            .unwrap();
    assert_eq!(pending, json!([]));
}

#[test]
fn history_by_page_and_by_cursor() {
    let devnet = Devnet::start();
    let client = new_client_ok(&config(&devnet.url(), &address(), json!({})));
    let evm = client.initialize();
    let sender = address();
    let mut sweeps = Vec::new();
    for raw in ["1000000", "2000000", "3000000"] {
        devnet.deposit(&evm, raw, Some(&sender));
        let id = client.poll_one();
        let events = client.pull_until(|e| is_lifecycle(e, &id, "credited"));
        let credited = events.last().unwrap();
        sweeps.push(credited["payload"]["transactionId"].as_str().unwrap().to_owned());
    }

    // Six transactions: three deposits received, three sweeps. Pages of four.
    let first = client.transactions(1, 4).unwrap();
    assert_eq!((first["page"].as_u64(), first["pageSize"].as_u64()), (Some(1), Some(4)));
    let second = client.transactions(2, 4).unwrap();
    let all: Vec<Value> = first["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["transactions"].as_array().unwrap())
        .cloned()
        .collect();
    assert_eq!(all.len(), 6, "{all:#?}");
    assert_eq!(all.iter().filter(|t| t["tag"] == "receive").count(), 3);
    assert_eq!(all.iter().filter(|t| t["tag"] == "sweep").count(), 3);
    let receive = all.iter().find(|t| t["tag"] == "receive").unwrap();
    assert_eq!(receive["change"]["from"].as_str().unwrap().to_lowercase(), sender);
    for field in ["targetToken", "change", "detail", "fromChains", "toChains", "createdAt"] {
        assert!(receive.get(field).is_some(), "{field} missing in {receive}");
    }

    // By token, with a cursor: the token's contract from depositkit_token_info_json.
    let info = json_out(|out| unsafe { depositkit_token_info_json(USDC, BASE, out) }).unwrap();
    let contract = info["contract"].as_str().unwrap().to_owned();
    let page = client.token_transactions(&contract, None, 4).unwrap();
    assert_eq!(page["transactions"].as_array().unwrap().len(), 4);
    let cursor = page["nextPageToken"].as_str().expect("a second page").to_owned();
    let last = client.token_transactions(&contract.to_lowercase(), Some(&cursor), 4).unwrap();
    assert_eq!(last["transactions"].as_array().unwrap().len(), 2);
    assert!(last.get("nextPageToken").is_none(), "the last page has no cursor: {last}");
    let paged: Vec<&Value> = page["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .chain(last["transactions"].as_array().unwrap())
        .map(|t| &t["transactionId"])
        .collect();
    let listed: Vec<&Value> = all.iter().map(|t| &t["transactionId"]).collect();
    assert_eq!(paged, listed, "newest first, nothing twice, nothing missing");
    let whole = client.token_transactions(&contract, None, 0).unwrap();
    assert_eq!(whole["transactions"].as_array().unwrap().len(), 6, "default page size 10");
    assert_failure(
        client.token_transactions(&contract, Some("bogus"), 4),
        depositkit_status::UniversalAccount,
        "Failed to get token transactions",
    );
    assert_failure(
        client.token_transactions("", None, 4),
        depositkit_status::InvalidArgument,
        "address",
    );
    assert_failure(client.transactions(1, 101), depositkit_status::InvalidArgument, "page size");

    // One transaction by id.
    let sweep = client.transaction(&sweeps[0]).unwrap();
    assert_eq!(sweep["tag"], "sweep");
    assert_eq!(sweep["transactionId"], sweeps[0].as_str());
    assert_eq!(sweep["status"], 1);
    assert!(sweep["quoteId"].as_str().unwrap().starts_with("q_"), "{sweep}");
    assert_eq!(sweep["targetToken"]["symbol"], "USDC");
    assert_eq!(sweep["targetToken"]["address"], contract.as_str());
    assert_failure(client.transaction("0xnope"), depositkit_status::NotFound, "0xnope");
    assert_failure(client.transaction(""), depositkit_status::InvalidArgument, "empty");
}

#[test]
fn null_arguments_unconfigured_and_uninitialized_clients() {
    let devnet = Devnet::start();
    let client = new_client_ok(&config(&devnet.url(), &address(), json!({})));
    let want = |(status, message): Failure, param: &str| {
        assert_eq!(status, depositkit_status::NullArgument, "{param}: {message}");
        assert_eq!(message, format!("{param} must not be NULL"));
    };
    let nul = null::<depositkit_deposit_client>();
    let id = c("dep_0");
    let address = c("0x00");
    let mut text = null_mut();
    let mut flag = false;
    let mut sub = 0u64;
    unsafe {
        let cl = client.0;
        want(
            check(depositkit_deposit_client_refund(nul, id.as_ptr(), null(), &mut text))
                .unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_refund(cl, null(), null(), &mut text)).unwrap_err(),
            "deposit_id",
        );
        want(
            check(depositkit_deposit_client_refund(cl, id.as_ptr(), null(), null_mut()))
                .unwrap_err(),
            "out_result_json",
        );
        want(
            check(depositkit_deposit_client_can_refund(nul, id.as_ptr(), &mut text)).unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_can_refund(cl, null(), &mut text)).unwrap_err(),
            "deposit_id",
        );
        want(
            check(depositkit_deposit_client_can_refund(cl, id.as_ptr(), null_mut())).unwrap_err(),
            "out_json",
        );
        want(
            check(depositkit_deposit_client_refund_result(nul, id.as_ptr(), &mut text))
                .unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_refund_result(cl, null(), &mut text)).unwrap_err(),
            "deposit_id",
        );
        want(
            check(depositkit_deposit_client_refund_result(cl, id.as_ptr(), null_mut()))
                .unwrap_err(),
            "out_json",
        );
        want(check(depositkit_deposit_client_refund_config(nul, &mut text)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_refund_config(cl, null_mut())).unwrap_err(),
            "out_json",
        );
        want(check(depositkit_deposit_client_stuck_funds(nul, &mut text)).unwrap_err(), "client");
        want(check(depositkit_deposit_client_stuck_funds(cl, null_mut())).unwrap_err(), "out_json");
        want(check(depositkit_deposit_client_recover_funds(nul, &mut text)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_recover_funds(cl, null_mut())).unwrap_err(),
            "out_json",
        );
        want(check(depositkit_deposit_client_is_recovering(nul, &mut flag)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_is_recovering(cl, null_mut())).unwrap_err(),
            "out_recovering",
        );
        want(check(depositkit_deposit_client_notifications(nul, &mut text)).unwrap_err(), "client");
        want(
            check(depositkit_deposit_client_notifications(cl, null_mut())).unwrap_err(),
            "out_json",
        );
        want(
            check(depositkit_deposit_client_dismiss_notification(nul, id.as_ptr(), &mut flag))
                .unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_dismiss_notification(cl, null(), &mut flag))
                .unwrap_err(),
            "deposit_id",
        );
        want(
            check(depositkit_deposit_client_dismiss_notification(cl, id.as_ptr(), null_mut()))
                .unwrap_err(),
            "out_dismissed",
        );
        want(
            check(depositkit_deposit_client_notifications_config(nul, &mut text)).unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_notifications_config(cl, null_mut())).unwrap_err(),
            "out_json",
        );
        want(
            check(depositkit_deposit_client_subscribe_notifications(
                nul,
                Some(sink_callback),
                null_mut(),
                None,
                &mut sub,
            ))
            .unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_subscribe_notifications(
                cl,
                None,
                null_mut(),
                None,
                &mut sub,
            ))
            .unwrap_err(),
            "callback",
        );
        want(
            check(depositkit_deposit_client_subscribe_notifications(
                cl,
                Some(sink_callback),
                null_mut(),
                None,
                null_mut(),
            ))
            .unwrap_err(),
            "out_subscription",
        );
        want(
            check(depositkit_deposit_client_get_transactions(nul, 0, 0, &mut text)).unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_get_transactions(cl, 0, 0, null_mut())).unwrap_err(),
            "out_json",
        );
        want(
            check(depositkit_deposit_client_get_token_transactions(
                nul,
                BASE,
                address.as_ptr(),
                null(),
                0,
                &mut text,
            ))
            .unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_get_token_transactions(
                cl,
                BASE,
                null(),
                null(),
                0,
                &mut text,
            ))
            .unwrap_err(),
            "token_address",
        );
        want(
            check(depositkit_deposit_client_get_token_transactions(
                cl,
                BASE,
                address.as_ptr(),
                null(),
                0,
                null_mut(),
            ))
            .unwrap_err(),
            "out_json",
        );
        want(
            check(depositkit_deposit_client_get_transaction(nul, id.as_ptr(), &mut text))
                .unwrap_err(),
            "client",
        );
        want(
            check(depositkit_deposit_client_get_transaction(cl, null(), &mut text)).unwrap_err(),
            "transaction_id",
        );
        want(
            check(depositkit_deposit_client_get_transaction(cl, id.as_ptr(), null_mut()))
                .unwrap_err(),
            "out_json",
        );
        want(
            check(depositkit_devnet_inject_service_fault(
                null(),
                c"ua".as_ptr(),
                null(),
                500,
                0,
                1,
            ))
            .unwrap_err(),
            "devnet",
        );
        want(
            check(depositkit_devnet_inject_service_fault(devnet.0, null(), null(), 500, 0, 1))
                .unwrap_err(),
            "service",
        );
        want(check(depositkit_devnet_clear_faults(null())).unwrap_err(), "devnet");
        // Invalid UTF-8 names the parameter too.
        let bad = c"dep_\xff";
        let (status, message) =
            check(depositkit_deposit_client_refund(cl, id.as_ptr(), bad.as_ptr(), &mut text))
                .unwrap_err();
        assert_eq!(status, depositkit_status::InvalidUtf8);
        assert!(message.starts_with("reason is not valid UTF-8"), "{message}");
        let (status, message) = check(depositkit_deposit_client_get_token_transactions(
            cl,
            BASE,
            address.as_ptr(),
            bad.as_ptr(),
            0,
            &mut text,
        ))
        .unwrap_err();
        assert_eq!(status, depositkit_status::InvalidUtf8);
        assert!(message.starts_with("page_token is not valid UTF-8"), "{message}");
    }
    assert!(text.is_null() && !flag && sub == 0, "nothing written on failure");

    // Before initialization.
    let before = |result: Result<Value, Failure>| {
        let (status, message) = result.unwrap_err();
        assert_eq!(status, depositkit_status::Configuration, "{message}");
    };
    before(client.refund("dep_0", None));
    before(client.can_refund("dep_0"));
    before(client.stuck_funds());
    before(client.recover_funds());
    before(client.transactions(0, 0));
    before(client.token_transactions("0x00", None, 0));
    before(client.transaction("0xab"));
    assert_failure(client.refund_result("dep_0"), depositkit_status::NotFound, "dep_0");

    // Without the notifications option: no records, and subscribing is refused without taking
    // user_data (the helper takes its reference back).
    assert_eq!(client.notifications(), json!([]));
    assert!(!client.dismiss("dep_0"));
    let notes_config =
        json_out(|out| unsafe { depositkit_deposit_client_notifications_config(client.0, out) })
            .unwrap();
    assert_eq!(notes_config, Value::Null);
    let sink = Arc::new(Sink::default());
    let (status, message) = subscribe_notifications(&client, &sink).unwrap_err();
    assert_eq!(status, depositkit_status::Configuration, "{message}");
    assert!(message.contains("notifications are not configured"), "{message}");
    assert_eq!(sink.freed.load(Ordering::SeqCst), 0, "user_data_free not called on failure");
    assert_eq!(Arc::strong_count(&sink), 1);

    // Bad faults.
    let bad_fault =
        |service: &str, path: Option<&str>, status: u16, delay: u64, count: u32, needle: &str| {
            let (got, message) = devnet.fault(service, path, status, delay, count).unwrap_err();
            assert_eq!(got, depositkit_status::InvalidArgument, "{message}");
            assert!(message.contains(needle), "{message:?} lacks {needle:?}");
        };
    bad_fault(
        "bank",
        None,
        500,
        0,
        1,
        "service must be one of jwt, signer, ua, user-rpc, got \"bank\"",
    );
    bad_fault("ua", None, 200, 0, 1, "400..=599");
    bad_fault("ua", None, 0, 0, 1, "needs");
    bad_fault("ua", None, 500, 0, 0, "count");
    bad_fault("ua", None, 0, 60_001, 1, "delayMs");
    bad_fault("ua", Some("v1/balances"), 500, 0, 1, "must start with /");
    bad_fault("user-rpc", Some("/x"), 500, 0, 1, "user-rpc");

    // A closed client answers only what stays true (status::ClientCall): the rest, getters
    // included, say it is closed.
    check(unsafe { depositkit_deposit_client_close(client.0) }).unwrap();
    let notifications =
        json_out(|out| unsafe { depositkit_deposit_client_notifications(client.0, out) });
    assert_failure(notifications, depositkit_status::DepositSdk, "closed");
    assert_failure(client.refund_result("dep_0"), depositkit_status::DepositSdk, "closed");
    assert_failure(client.refund("dep_0", None), depositkit_status::DepositSdk, "closed");
    assert_failure(client.stuck_funds(), depositkit_status::DepositSdk, "closed");
    assert_failure(client.transactions(0, 0), depositkit_status::DepositSdk, "closed");
    let (status, _) = subscribe_notifications(&client, &sink).unwrap_err();
    assert_eq!(status, depositkit_status::DepositSdk);
    assert_eq!(Arc::strong_count(&sink), 1);
}
