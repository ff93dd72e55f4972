//! Funding from a wallet and the onramp through the C ABI, called from Rust exactly as a C
//! program calls them: host providers are C function pointers with `void *user_data` that
//! answer through the reply handle, balances come back as an opaque list, records as JSON.
//!
//! The full transfer path on the real local chains is `tests/c/test_funding.c` (run by
//! `scripts/test-c.sh`, which starts the chains); these tests need no chains: argument
//! validation, the reply handle's rules, `user_data` ownership, the balance list, and the
//! onramp (URL, overlay and redirect, devnet's simulated widget in ledger mode).

#![cfg(feature = "devnet")]

use std::ffi::{CStr, c_char, c_void};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use depositkit::deposit::*;
use depositkit::devnet::*;
use depositkit::funding::*;
use depositkit::onramp::*;
use depositkit::status::*;
use depositkit::tokens::depositkit_token_type;
use serde_json::{Value, json};

mod support;
use support::*;

const OWNER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";
const WALLET: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const BASE_USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
/// Nothing listens there: clients that never reach their services.
const NO_SERVICES: &str = "http://127.0.0.1:9";

// --- a host provider in "C" (user_data: an Arc<Provider>) -------------------------------------

type Script = dyn Fn(&Provider, &str, &Value, *mut depositkit_provider_reply) + Send + Sync;

struct Provider {
    script: Box<Script>,
    /// Every request: method and params.
    calls: Mutex<Vec<(String, Value)>>,
    /// Names of the threads the callback ran on.
    threads: Mutex<Vec<Option<String>>>,
    /// Times `user_data_free` ran.
    freed: AtomicU32,
    /// A reply handle the script kept, and statuses it recorded.
    kept: AtomicUsize,
    statuses: Mutex<Vec<(depositkit_status, String)>>,
}

impl Provider {
    fn new(
        script: impl Fn(&Provider, &str, &Value, *mut depositkit_provider_reply) + Send + Sync + 'static,
    ) -> Arc<Provider> {
        Arc::new(Provider {
            script: Box::new(script),
            calls: Mutex::new(Vec::new()),
            threads: Mutex::new(Vec::new()),
            freed: AtomicU32::new(0),
            kept: AtomicUsize::new(0),
            statuses: Mutex::new(Vec::new()),
        })
    }

    /// A provider answering every request with `result`.
    fn answering(result: Value) -> Arc<Provider> {
        Provider::new(move |p, _, _, reply| p.record(reply_result(reply, &result.to_string())))
    }

    fn record(&self, status: depositkit_status) {
        let message = if status == depositkit_status::Ok { String::new() } else { last_error() };
        self.statuses.lock().unwrap().push((status, message));
    }

    fn freed(&self) -> u32 {
        self.freed.load(Ordering::SeqCst)
    }

    fn methods(&self) -> Vec<String> {
        self.calls.lock().unwrap().iter().map(|(m, _)| m.clone()).collect()
    }

    /// Its `user_data`: one reference, given away (taken back by `provider_free`).
    fn user_data(self: &Arc<Self>) -> *mut c_void {
        Arc::into_raw(Arc::clone(self)) as *mut c_void
    }
}

/// Never panics on its own (a panic in an `extern "C"` function aborts the process); the
/// scripts record what they see instead of asserting.
unsafe extern "C" fn provider_callback(
    user_data: *mut c_void,
    method: *const c_char,
    params_json: *const c_char,
    reply: *mut depositkit_provider_reply,
) {
    // SAFETY: user_data is an `Arc<Provider>` given at registration, alive until provider_free.
    let provider = unsafe { &*(user_data as *const Provider) };
    // SAFETY: the header promises NUL-terminated strings, valid during the call.
    let method = unsafe { CStr::from_ptr(method) }.to_string_lossy().into_owned();
    // SAFETY: as above.
    let params = unsafe { CStr::from_ptr(params_json) }.to_string_lossy().into_owned();
    let params = serde_json::from_str(&params).unwrap_or(Value::String(params));
    if let Ok(mut threads) = provider.threads.lock() {
        threads.push(std::thread::current().name().map(str::to_owned));
    }
    if let Ok(mut calls) = provider.calls.lock() {
        calls.push((method.clone(), params.clone()));
    }
    (provider.script)(provider, &method, &params, reply);
}

unsafe extern "C" fn provider_free(user_data: *mut c_void) {
    // SAFETY: the reference `user_data()` gave away, taken back exactly once.
    let provider = unsafe { Arc::from_raw(user_data as *const Provider) };
    provider.freed.fetch_add(1, Ordering::SeqCst);
}

fn reply_result(reply: *mut depositkit_provider_reply, json: &str) -> depositkit_status {
    let json = c(json);
    unsafe { depositkit_provider_reply_result(reply, json.as_ptr()) }
}

fn reply_error(
    reply: *mut depositkit_provider_reply,
    code: i64,
    message: &str,
) -> depositkit_status {
    let message = c(message);
    unsafe { depositkit_provider_reply_error(reply, code, message.as_ptr()) }
}

/// Calls a provider setter with `provider`'s `user_data`; on failure takes the reference back
/// (it stays the caller's), checking that `user_data_free` was not called.
fn with_user_data(
    provider: &Arc<Provider>,
    set: impl FnOnce(*mut c_void) -> depositkit_status,
) -> Result<(), Failure> {
    let user_data = provider.user_data();
    let result = check(set(user_data));
    if result.is_err() {
        assert_eq!(provider.freed(), 0, "user_data_free called after a failed registration");
        // SAFETY: the registration failed, so the reference is still ours.
        drop(unsafe { Arc::from_raw(user_data as *const Provider) });
    }
    result
}

impl Client {
    fn set_evm_provider(
        &self,
        provider: &Arc<Provider>,
        address: Option<&str>,
    ) -> Result<(), Failure> {
        let address = address.map(c);
        let address_ptr = address.as_ref().map_or(null(), |a| a.as_ptr());
        with_user_data(provider, |user_data| unsafe {
            depositkit_deposit_client_set_evm_wallet_provider(
                self.0,
                Some(provider_callback),
                user_data,
                Some(provider_free),
                address_ptr,
            )
        })
    }

    fn set_solana_provider(&self, provider: &Arc<Provider>) -> Result<(), Failure> {
        with_user_data(provider, |user_data| unsafe {
            depositkit_deposit_client_set_solana_wallet_provider(
                self.0,
                Some(provider_callback),
                user_data,
                Some(provider_free),
                null(),
            )
        })
    }

    fn set_balance_provider(&self, provider: &Arc<Provider>) -> Result<(), Failure> {
        with_user_data(provider, |user_data| unsafe {
            depositkit_deposit_client_set_balance_provider(
                self.0,
                Some(provider_callback),
                user_data,
                Some(provider_free),
            )
        })
    }

    fn set_evm_url(&self, url: &str, address: Option<&str>) -> Result<(), Failure> {
        let (url, address) = (c(url), address.map(c));
        check(unsafe {
            depositkit_deposit_client_set_evm_wallet_url(
                self.0,
                url.as_ptr(),
                address.as_ref().map_or(null(), |a| a.as_ptr()),
            )
        })
    }

    fn connect_evm(&self) -> Result<String, Failure> {
        string_out(|out| unsafe { depositkit_deposit_client_connect_evm_wallet(self.0, out) })
    }

    fn balances(&self) -> Result<Balances, Failure> {
        let mut out: *const depositkit_funding_balances = null();
        match check(unsafe { depositkit_deposit_client_wallet_balances(self.0, &mut out) }) {
            Ok(()) => {
                assert!(!out.is_null());
                Ok(Balances(out))
            }
            Err(failure) => {
                assert!(out.is_null(), "out_balances written on failure");
                Err(failure)
            }
        }
    }

    fn fund(&self, balances: &Balances, index: usize, raw: Option<&str>) -> Result<Value, Failure> {
        let raw = raw.map(c);
        json_out(|out| unsafe {
            depositkit_deposit_client_fund_from_wallet(
                self.0,
                balances.0,
                index,
                raw.as_ref().map_or(null(), |r| r.as_ptr()),
                out,
            )
        })
    }

    fn next(&self, timeout_ms: u64) -> Result<Value, Failure> {
        json_out(|out| unsafe { depositkit_deposit_client_next_event(self.0, timeout_ms, out) })
    }

    fn open_onramp(&self, amount: Option<&str>) -> Result<String, Failure> {
        let amount = amount.map(c);
        string_out(|out| unsafe {
            depositkit_deposit_client_open_onramp(
                self.0,
                amount.as_ref().map_or(null(), |a| a.as_ptr()),
                out,
            )
        })
    }

    fn onramp_message(&self, message: &str) -> Result<bool, Failure> {
        let message = c(message);
        let mut delivered = None::<bool>;
        let mut out = false;
        let result = check(unsafe {
            depositkit_deposit_client_handle_onramp_message(self.0, message.as_ptr(), &mut out)
        });
        if result.is_ok() {
            delivered = Some(out);
        }
        result.map(|()| delivered.unwrap())
    }

    fn last_order(&self) -> Option<Value> {
        let mut out = null_mut();
        check(unsafe { depositkit_deposit_client_last_onramp_order(self.0, &mut out) }).unwrap();
        (!out.is_null()).then(|| serde_json::from_str(&take(out)).unwrap())
    }
}

/// A balances list, freed on drop.
#[derive(Debug)]
struct Balances(*const depositkit_funding_balances);

impl Drop for Balances {
    fn drop(&mut self) {
        unsafe { depositkit_funding_balances_free(self.0) };
    }
}

impl Balances {
    fn len(&self) -> usize {
        unsafe { depositkit_funding_balances_len(self.0) }
    }

    fn get(&self, index: usize) -> Result<Value, Failure> {
        json_out(|out| unsafe { depositkit_funding_balances_get(self.0, index, out) })
    }
}

fn funding_client(extra: Value) -> Client {
    let mut options = json!({"funding": {"enabled": true}});
    for (key, value) in extra.as_object().unwrap() {
        options[key] = value.clone();
    }
    new_client_ok(&config(NO_SERVICES, OWNER, options))
}

fn assert_failure<T: std::fmt::Debug>(
    result: Result<T, Failure>,
    status: depositkit_status,
    needle: &str,
) {
    let (got, message) = result.expect_err("the call succeeded");
    assert_eq!(got, status, "{message}");
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
}

/// One balance line of a balance provider's answer.
fn line(chain_id: u64, token: &str, address: Option<&str>, decimals: u8, raw: &str) -> Value {
    json!({"chainId": chain_id, "token": token, "tokenAddress": address, "decimals": decimals,
           "rawAmount": raw, "priceUSD": 1.0, "valueUSD": null})
}

/// A client with an EVM wallet (address given) and a balance provider answering 25 USDC on
/// Base, 0.01 ETH on Arbitrum, and lines that must be dropped.
fn client_with_balances() -> (Client, Arc<Provider>) {
    let client = funding_client(json!({}));
    let wallet = Provider::new(|p, _, _, reply| p.record(reply_error(reply, 4200, "unused")));
    client.set_evm_provider(&wallet, Some(WALLET)).unwrap();
    let mut eth = line(42161, "ETH", None, 18, "10000000000000000");
    eth["priceUSD"] = json!(3000.0);
    let lines = json!([
        line(8453, "USDC", Some(BASE_USDC), 6, "25000000"),
        eth,
        line(196, "USDC", None, 6, "9000000"), // X Layer: never offered
        line(8453, "USDC", Some(BASE_USDC), 6, "0"), // nothing to send
        line(1, "USDT", None, 6, "100000"),    // $0.10: below minValueUSD
    ]);
    let balances = Provider::answering(json!({"balances": lines}));
    client.set_balance_provider(&balances).unwrap();
    (client, balances)
}

// --- the reply handle ----------------------------------------------------------------------------

#[test]
fn a_reply_takes_one_answer_and_only_during_its_callback() {
    let client = funding_client(json!({}));
    let provider = Provider::new(|p, method, _, reply| {
        p.kept.store(reply.addr(), Ordering::SeqCst);
        if method == "eth_requestAccounts" {
            // Bad JSON first: refused, and the request stays unanswered.
            p.record(reply_result(reply, "[\"0xf39f"));
            p.record(reply_result(reply, &json!([WALLET]).to_string()));
            // A second answer, of either kind, is refused.
            p.record(reply_result(reply, "[]"));
            p.record(reply_error(reply, 4001, "too late"));
        }
    });
    client.set_evm_provider(&provider, None).unwrap();
    assert_eq!(client.connect_evm().unwrap(), WALLET);

    let statuses = provider.statuses.lock().unwrap().clone();
    assert_eq!(statuses.len(), 4, "{statuses:?}");
    assert_eq!(statuses[0].0, depositkit_status::InvalidArgument);
    assert!(statuses[0].1.starts_with("result_json is not valid JSON"), "{statuses:?}");
    assert_eq!(statuses[1], (depositkit_status::Ok, String::new()));
    for (status, message) in &statuses[2..] {
        assert_eq!(*status, depositkit_status::InvalidArgument);
        assert!(message.contains("was answered already"), "{message}");
    }

    // After the callback returned, the handle names nothing: an error, not undefined behaviour.
    let stale = std::ptr::without_provenance_mut(provider.kept.load(Ordering::SeqCst));
    assert_eq!(reply_result(stale, "null"), depositkit_status::InvalidArgument);
    assert!(last_error().contains("is not a pending provider request"), "{}", last_error());
    assert_eq!(reply_error(stale, 4001, "late"), depositkit_status::InvalidArgument);
    assert!(last_error().contains("valid only until the callback"), "{}", last_error());
    // A made-up handle too.
    let made_up = std::ptr::without_provenance_mut(usize::MAX - 7);
    assert_eq!(reply_result(made_up, "1"), depositkit_status::InvalidArgument);

    // NULLs and bad UTF-8.
    assert_eq!(
        unsafe { depositkit_provider_reply_result(null_mut(), c"1".as_ptr()) },
        depositkit_status::NullArgument
    );
    assert_eq!(last_error(), "reply must not be NULL");
    assert_eq!(
        unsafe { depositkit_provider_reply_result(stale, null()) },
        depositkit_status::NullArgument
    );
    assert_eq!(last_error(), "result_json must not be NULL");
    assert_eq!(
        unsafe { depositkit_provider_reply_error(null_mut(), 1, null()) },
        depositkit_status::NullArgument
    );
    assert_eq!(
        unsafe { depositkit_provider_reply_error(stale, 1, c"\xff".as_ptr()) },
        depositkit_status::InvalidUtf8
    );
    assert!(last_error().starts_with("message is not valid UTF-8"), "{}", last_error());

    // The provider ran on a library thread (of the runtime's blocking pool), never on this one.
    let threads = provider.threads.lock().unwrap().clone();
    assert!(
        !threads.is_empty() && threads.iter().all(|t| t.as_deref() == Some("depositkit-rt")),
        "{threads:?}"
    );
}

#[test]
fn a_provider_may_call_back_into_the_client_but_not_block_on_it() {
    let client = Arc::new(funding_client(json!({})));
    // The handle as a number, so that the provider's closure is Send.
    let handle = client.0.expose_provenance();
    let provider = Provider::new(move |p, _, _, reply| {
        let client = std::ptr::with_exposed_provenance::<depositkit_deposit_client>(handle);
        // A non-blocking call works...
        let mut supported = false;
        p.record(unsafe { depositkit_deposit_client_is_onramp_supported(client, &mut supported) });
        // ...a blocking one fails at once instead of deadlocking.
        let mut out = null_mut();
        p.record(unsafe { depositkit_deposit_client_evm_accounts(client, &mut out) });
        p.record(reply_result(reply, &json!([WALLET]).to_string()));
    });
    client.set_evm_provider(&provider, None).unwrap();
    assert_eq!(client.connect_evm().unwrap(), WALLET);
    let statuses = provider.statuses.lock().unwrap().clone();
    assert_eq!(statuses[0].0, depositkit_status::Ok);
    assert_eq!(statuses[1].0, depositkit_status::Internal, "{statuses:?}");
    assert!(statuses[1].1.contains("inside the depositkit runtime"), "{statuses:?}");
    assert_eq!(statuses[2].0, depositkit_status::Ok);
}

#[test]
fn an_unanswered_request_is_a_failure_and_answers_may_come_from_another_thread() {
    let client = funding_client(json!({}));
    let silent = Provider::new(|_, _, _, _| {});
    client.set_evm_provider(&silent, None).unwrap();
    assert_failure(
        client.connect_evm(),
        depositkit_status::Funding,
        "returned without answering eth_requestAccounts",
    );

    let helper = Provider::new(|p, _, _, reply| {
        let handle = reply.addr();
        let status = std::thread::spawn(move || {
            let reply = std::ptr::without_provenance_mut(handle);
            reply_result(reply, &json!([WALLET]).to_string())
        })
        .join()
        .unwrap_or(depositkit_status::Panic);
        p.record(status);
    });
    client.set_evm_provider(&helper, None).unwrap();
    assert_eq!(silent.freed(), 1, "replaced");
    assert_eq!(client.connect_evm().unwrap(), WALLET);
    assert_eq!(helper.statuses.lock().unwrap()[0].0, depositkit_status::Ok);
}

#[test]
fn wallet_errors_keep_their_eip_1193_meaning() {
    let client = funding_client(json!({}));
    let rejecting = Provider::new(|p, _, _, reply| {
        p.record(reply_error(reply, 4001, "User rejected the request."));
    });
    client.set_evm_provider(&rejecting, None).unwrap();
    assert_failure(
        client.connect_evm(),
        depositkit_status::Funding,
        "rejected by the wallet (4001): User rejected the request.",
    );
    let failing = Provider::new(|p, _, _, reply| {
        p.record(unsafe { depositkit_provider_reply_error(reply, -32000, null()) });
    });
    client.set_evm_provider(&failing, None).unwrap();
    assert_failure(client.connect_evm(), depositkit_status::Funding, "(-32000)");
    let accounts =
        || string_out(|out| unsafe { depositkit_deposit_client_evm_accounts(client.0, out) });
    assert_failure(accounts(), depositkit_status::Funding, "the wallet failed eth_accounts");

    let listing =
        Provider::answering(json!([WALLET, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"]));
    client.set_evm_provider(&listing, None).unwrap();
    let list: Value = serde_json::from_str(&accounts().unwrap()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");
    let picked = json_out(|out| unsafe {
        depositkit_deposit_client_prompt_evm_account_selection(client.0, out)
    })
    .unwrap();
    assert_eq!(picked, list);
    assert_eq!(listing.methods(), ["eth_accounts", "wallet_requestPermissions", "eth_accounts"]);
    assert_eq!(listing.calls.lock().unwrap()[1].1, json!([{"eth_accounts": {}}]));

    // Solana: Phantom's connect.
    let phantom =
        Provider::answering(json!({"publicKey": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"}));
    client.set_solana_provider(&phantom).unwrap();
    let key =
        string_out(|out| unsafe { depositkit_deposit_client_connect_solana_wallet(client.0, out) })
            .unwrap();
    assert_eq!(key, "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM");
    assert_eq!(phantom.calls.lock().unwrap()[0], ("connect".to_owned(), json!({})));
}

// --- user_data ------------------------------------------------------------------------------------

#[test]
fn user_data_is_released_exactly_once_when_replaced_cleared_closed_or_freed() {
    let client = funding_client(json!({}));
    let a = Provider::answering(json!([WALLET]));
    let b = Provider::answering(json!([WALLET]));
    client.set_evm_provider(&a, None).unwrap();
    client.set_evm_provider(&b, None).unwrap();
    assert_eq!((a.freed(), b.freed()), (1, 0), "replaced by another provider");
    client.set_evm_url("http://127.0.0.1:8545", Some(WALLET)).unwrap();
    assert_eq!(b.freed(), 1, "replaced by a URL");

    let c1 = Provider::answering(json!([WALLET]));
    let s1 = Provider::answering(json!({"publicKey": "x"}));
    client.set_evm_provider(&c1, None).unwrap();
    client.set_solana_provider(&s1).unwrap();
    check(unsafe { depositkit_deposit_client_clear_funding_wallet(client.0) }).unwrap();
    assert_eq!((c1.freed(), s1.freed()), (1, 1), "cleared");
    assert_failure(client.connect_evm(), depositkit_status::Funding, "no EVM wallet is connected");

    // A failed registration leaves user_data to the caller (`with_user_data` checks it).
    let refused = Provider::answering(json!([]));
    assert_failure(
        client.set_evm_provider(&refused, Some("0x1234")),
        depositkit_status::InvalidArgument,
        "\"0x1234\"",
    );

    let balance = Provider::answering(json!([]));
    client.set_balance_provider(&balance).unwrap();
    check(unsafe {
        depositkit_deposit_client_set_balance_provider(client.0, None, null_mut(), None)
    })
    .unwrap();
    assert_eq!(balance.freed(), 1, "removed");

    // Closing releases every provider; freeing later does not release them again.
    let d = Provider::answering(json!([WALLET]));
    let e = Provider::answering(json!([]));
    client.set_evm_provider(&d, None).unwrap();
    client.set_balance_provider(&e).unwrap();
    check(unsafe { depositkit_deposit_client_close(client.0) }).unwrap();
    assert_eq!((d.freed(), e.freed()), (1, 1), "closed");
    let late = Provider::answering(json!([]));
    assert_failure(client.set_evm_provider(&late, None), depositkit_status::DepositSdk, "closed");
    drop(client);
    assert_eq!((d.freed(), e.freed()), (1, 1));

    // Freeing an open client releases them too.
    let client = funding_client(json!({}));
    let f = Provider::answering(json!([WALLET]));
    let g = Provider::answering(json!([]));
    client.set_evm_provider(&f, None).unwrap();
    client.set_solana_provider(&g).unwrap();
    drop(client);
    assert_eq!((f.freed(), g.freed()), (1, 1), "freed");
    for p in [&a, &b, &c1, &s1, &refused, &balance, &d, &e, &late, &f, &g] {
        assert_eq!(Arc::strong_count(p), 1, "every reference given away came back");
    }
}

#[test]
fn wallet_setters_check_their_arguments() {
    let client = funding_client(json!({}));
    let provider = Provider::answering(json!([]));
    let url = c("http://127.0.0.1:8545");
    let st = unsafe { depositkit_deposit_client_set_evm_wallet_url(null(), url.as_ptr(), null()) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "client must not be NULL");
    let st = unsafe { depositkit_deposit_client_set_evm_wallet_url(client.0, null(), null()) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "url must not be NULL");
    assert_failure(
        client.set_evm_url("ftp://127.0.0.1", None),
        depositkit_status::Configuration,
        "ftp://127.0.0.1",
    );
    assert_failure(
        client.set_evm_url("http://127.0.0.1:8545", Some("0xnope")),
        depositkit_status::InvalidArgument,
        "the EVM wallet address must be a valid EVM address: \"0xnope\"",
    );
    let bad = c("0x\u{e9}");
    let st = unsafe {
        depositkit_deposit_client_set_evm_wallet_url(client.0, url.as_ptr(), bad.as_ptr())
    };
    assert_eq!(st, depositkit_status::InvalidArgument);
    let st = unsafe {
        depositkit_deposit_client_set_evm_wallet_url(client.0, url.as_ptr(), c"\xff".as_ptr())
    };
    assert_eq!(st, depositkit_status::InvalidUtf8);
    assert!(last_error().starts_with("address is not valid UTF-8"));

    for set in [
        depositkit_deposit_client_set_evm_wallet_provider,
        depositkit_deposit_client_set_solana_wallet_provider,
    ] {
        let st = unsafe { set(client.0, None, null_mut(), None, null()) };
        assert_eq!(st, depositkit_status::NullArgument);
        assert_eq!(last_error(), "provider must not be NULL");
        let st = unsafe { set(null(), Some(provider_callback), null_mut(), None, null()) };
        assert_eq!(st, depositkit_status::NullArgument);
        assert_eq!(last_error(), "client must not be NULL");
    }
    assert_failure(
        client.set_solana_provider_at(&provider, "not-base58!"),
        depositkit_status::InvalidArgument,
        "the Solana wallet address must be a valid Solana address",
    );
    assert_eq!(provider.freed(), 0);

    // Funding off: every funding operation is a configuration error.
    let off = new_client_ok(&config(NO_SERVICES, OWNER, json!({})));
    assert_failure(
        off.set_evm_provider(&provider, None),
        depositkit_status::Configuration,
        "funding is not enabled",
    );
    assert_failure(
        off.set_evm_url("http://127.0.0.1:8545", None),
        depositkit_status::Configuration,
        "funding is not enabled",
    );
    assert_failure(off.connect_evm(), depositkit_status::Configuration, "funding is not enabled");
    assert_failure(off.balances(), depositkit_status::Configuration, "funding is not enabled");
    let st = unsafe { depositkit_deposit_client_connect_evm_wallet(client.0, null_mut()) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "out_address must not be NULL");
    assert_failure(client.connect_evm(), depositkit_status::Funding, "no EVM wallet is connected");
}

impl Client {
    fn set_solana_provider_at(
        &self,
        provider: &Arc<Provider>,
        address: &str,
    ) -> Result<(), Failure> {
        let address = c(address);
        with_user_data(provider, |user_data| unsafe {
            depositkit_deposit_client_set_solana_wallet_provider(
                self.0,
                Some(provider_callback),
                user_data,
                Some(provider_free),
                address.as_ptr(),
            )
        })
    }
}

// --- balances and fund_from_wallet ---------------------------------------------------------------

#[test]
fn balances_come_from_the_host_provider_as_an_opaque_list() {
    let (client, provider) = client_with_balances();
    let balances = client.balances().unwrap();
    assert_eq!(
        provider.calls.lock().unwrap().clone(),
        [(
            "getWalletBalances".to_owned(),
            json!({"evmAddress": WALLET, "solanaAddress": null,
                   "chainIds": [1, 56, 8453, 42161, 101]})
        )]
    );
    assert_eq!(balances.len(), 2);
    let usdc = balances.get(0).unwrap();
    assert_eq!(usdc["chainId"], 8453);
    assert_eq!(usdc["token"], "USDC");
    assert_eq!(usdc["rawAmount"], "25000000");
    assert_eq!(usdc["amount"], "25");
    assert_eq!(usdc["decimals"], 6);
    assert_eq!(usdc["walletAddress"], WALLET);
    assert_eq!(usdc["source"], "balanceProvider");
    let eth = balances.get(1).unwrap();
    assert_eq!((eth["token"].as_str(), eth["tokenAddress"].is_null()), (Some("ETH"), true));
    assert_eq!(eth["amount"], "0.01");

    assert_failure(
        balances.get(2),
        depositkit_status::InvalidArgument,
        "index 2 is out of range: the balances list holds 2 entries",
    );
    let st = unsafe { depositkit_funding_balances_get(balances.0, 0, null_mut()) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "out_json must not be NULL");
    let mut out = null_mut();
    let st = unsafe { depositkit_funding_balances_get(null(), 0, &mut out) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "balances must not be NULL");
    assert!(out.is_null());
    assert_eq!(unsafe { depositkit_funding_balances_len(null()) }, 0);
    unsafe { depositkit_funding_balances_free(null()) };
    let st = unsafe { depositkit_deposit_client_wallet_balances(client.0, null_mut()) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "out_balances must not be NULL");

    // The list outlives its client and stays readable.
    drop(client);
    assert_eq!(provider.freed(), 1);
    assert_eq!(balances.get(0).unwrap(), usdc);

    // A source that fails is a funding error naming it.
    let client = funding_client(json!({}));
    client.set_evm_url("http://127.0.0.1:8545", Some(WALLET)).unwrap();
    let broken =
        Provider::new(|p, _, _, reply| p.record(reply_error(reply, -32000, "upstream down")));
    client.set_balance_provider(&broken).unwrap();
    assert_failure(client.balances(), depositkit_status::Funding, "balance provider");
    let garbage = Provider::answering(json!({"balances": 7}));
    client.set_balance_provider(&garbage).unwrap();
    assert_failure(client.balances(), depositkit_status::Funding, "balance provider");
    // No wallet at all.
    check(unsafe { depositkit_deposit_client_clear_funding_wallet(client.0) }).unwrap();
    assert_failure(client.balances(), depositkit_status::Funding, "no funding wallet is connected");
}

#[test]
fn fund_from_wallet_checks_its_arguments() {
    let (client, _provider) = client_with_balances();
    let balances = client.balances().unwrap();

    let mut out = null_mut();
    let st = unsafe {
        depositkit_deposit_client_fund_from_wallet(client.0, null(), 0, null(), &mut out)
    };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "balances must not be NULL");
    let st = unsafe {
        depositkit_deposit_client_fund_from_wallet(null(), balances.0, 0, null(), &mut out)
    };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "client must not be NULL");
    let st = unsafe {
        depositkit_deposit_client_fund_from_wallet(client.0, balances.0, 0, null(), null_mut())
    };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "out_result_json must not be NULL");
    assert!(out.is_null());

    assert_failure(
        client.fund(&balances, 7, None),
        depositkit_status::InvalidArgument,
        "index 7 is out of range: the balances list holds 2 entries",
    );
    assert_failure(
        client.fund(&balances, 0, Some("12a")),
        depositkit_status::InvalidArgument,
        "raw_amount: invalid raw amount \"12a\"",
    );
    assert_failure(
        client.fund(&balances, 0, Some("-5")),
        depositkit_status::InvalidArgument,
        "\"-5\"",
    );
    assert_failure(
        client.fund(&balances, 0, Some("0")),
        depositkit_status::InvalidArgument,
        "raw_amount must be more than 0",
    );
    let st = unsafe {
        depositkit_deposit_client_fund_from_wallet(
            client.0,
            balances.0,
            0,
            c"\xff".as_ptr(),
            &mut out,
        )
    };
    assert_eq!(st, depositkit_status::InvalidUtf8);
    // Valid arguments, but the client has no deposit address yet.
    assert_failure(
        client.fund(&balances, 0, Some("1000000")),
        depositkit_status::Configuration,
        "",
    );

    // A list from another client, even one with the same configuration and balances.
    let (other, _other_provider) = client_with_balances();
    let theirs = other.balances().unwrap();
    assert_eq!(theirs.get(0).unwrap(), balances.get(0).unwrap());
    assert_failure(
        client.fund(&theirs, 0, Some("1000000")),
        depositkit_status::InvalidArgument,
        "balances was issued by another client (entry 0: USDC on chain 8453 of wallet 0xf39F",
    );
    // ... also once that client is gone.
    drop(other);
    assert_failure(
        client.fund(&theirs, 1, None),
        depositkit_status::InvalidArgument,
        "balances was issued by another client (entry 1: ETH on chain 42161",
    );
}

// --- the onramp ------------------------------------------------------------------------------------

fn onramp_client(url: &str, onramp: Value) -> Client {
    new_client_ok(&config(url, OWNER, json!({"onramp": onramp})))
}

/// The query parameters of a URL, decoded.
fn query(url: &str) -> serde_json::Map<String, Value> {
    let (_, query) = url.split_once('?').unwrap();
    query
        .split('&')
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap();
            let mut bytes = Vec::new();
            let mut rest = v.as_bytes();
            while let Some((&b, tail)) = rest.split_first() {
                if b == b'%' {
                    bytes.push(
                        u8::from_str_radix(std::str::from_utf8(&tail[..2]).unwrap(), 16).unwrap(),
                    );
                    rest = &tail[2..];
                } else {
                    bytes.push(b);
                    rest = tail;
                }
            }
            (k.to_owned(), Value::String(String::from_utf8(bytes).unwrap()))
        })
        .collect()
}

#[test]
fn the_onramp_url_is_built_and_checked_through_c() {
    let client = onramp_client(
        NO_SERVICES,
        json!({"enabled": true, "apiKey": "pk/test key", "widgetUrl": "https://widget.example/buy",
               "paymentMode": "card"}),
    );
    let url = client.open_onramp(Some("49.99")).unwrap();
    assert!(url.starts_with("https://widget.example/buy?partnerKey=pk%2Ftest%20key&"), "{url}");
    let params = query(&url);
    assert_eq!(params["walletAddress"], OWNER);
    assert_eq!(params["network"], "base");
    assert_eq!(params["cryptoCurrency"], "USDC");
    assert_eq!(params["fiatCurrency"], "USD");
    assert_eq!(params["fiatAmount"], "49.99");
    assert_eq!(params["paymentMethod"], "card");
    assert_eq!(params["mode"], "overlay");
    assert!(params["partnerOrderId"].as_str().is_some_and(|id| !id.is_empty()));
    let again = query(&client.open_onramp(None).unwrap());
    assert!(!again.contains_key("fiatAmount"));
    assert_ne!(again["partnerOrderId"], params["partnerOrderId"], "one order id per URL");

    for (amount, needle) in [
        ("abc", "fiat_amount must be a decimal number such as \"100\" or \"49.99\", got \"abc\""),
        ("", "got \"\""),
        ("inf", "got \"inf\""),
        ("0", "the fiat amount must be a positive number"),
        ("-5", "the fiat amount must be a positive number"),
        ("1e999", "the fiat amount must be a positive number"),
    ] {
        assert_failure(
            client.open_onramp(Some(amount)),
            depositkit_status::InvalidArgument,
            needle,
        );
    }
    let st = unsafe { depositkit_deposit_client_open_onramp(client.0, null(), null_mut()) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "out_url must not be NULL");

    // Off.
    let off = onramp_client(NO_SERVICES, json!({"enabled": false}));
    assert_failure(
        off.open_onramp(None),
        depositkit_status::Configuration,
        "onramp is not enabled",
    );
    assert_failure(
        off.onramp_message("{}"),
        depositkit_status::Configuration,
        "onramp is not enabled",
    );
}

#[test]
fn overlay_messages_become_events_and_the_last_order() {
    let client = onramp_client(NO_SERVICES, json!({"enabled": true}));
    assert_eq!(client.last_order(), None);
    let order = json!({"id": "ord_1", "status": "completed", "cryptoAmount": "99",
                       "cryptoCurrency": "USDC", "walletAddress": OWNER, "network": "base",
                       "fiatAmount": 100, "fiatCurrency": "USD", "txHash": "0xabc"});
    assert!(
        client.onramp_message(&json!({"event": "widget_opened", "data": {}}).to_string()).unwrap()
    );
    assert!(
        client
            .onramp_message(&json!({"event": "order_completed", "data": order}).to_string())
            .unwrap()
    );

    let mut events = Vec::new();
    while let Ok(event) = client.next(0) {
        events.push(event);
    }
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["onramp:widget_opened", "onramp:order_completed", "onramp:complete"]);
    assert_eq!(events[1]["payload"], order);
    let want = json!({"amount": "99", "token": "USDC", "status": "completed", "id": "ord_1",
                      "destination": {"address": OWNER, "chainId": 8453}, "fiatAmount": 100.0,
                      "fiatCurrency": "USD", "txHash": "0xabc"});
    assert_eq!(events[2]["payload"], want);
    assert_eq!(client.last_order(), Some(want));

    for (message, needle) in [
        ("{\"event\": ", "message_json is not valid JSON"),
        ("[1]", "expected an object"),
        (r#"{"event": "order_shipped", "data": {}}"#, "unknown onramp event \"order_shipped\""),
        (r#"{"data": {}}"#, "no \"event\""),
        (
            r#"{"event": "order_completed", "data": {"id": "x"}}"#,
            "malformed onramp order: cryptoCurrency is missing",
        ),
    ] {
        assert_failure(client.onramp_message(message), depositkit_status::InvalidArgument, needle);
    }
    let mut delivered = true;
    let st = unsafe {
        depositkit_deposit_client_handle_onramp_message(client.0, null(), &mut delivered)
    };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "message_json must not be NULL");
    let st = unsafe {
        depositkit_deposit_client_handle_onramp_message(client.0, c"{}".as_ptr(), null_mut())
    };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "out_delivered must not be NULL");
    assert!(delivered, "not written on failure");
    let st = unsafe { depositkit_deposit_client_last_onramp_order(client.0, null_mut()) };
    assert_eq!(st, depositkit_status::NullArgument);
}

#[test]
fn redirect_mode_has_no_event_channel() {
    let client = onramp_client(NO_SERVICES, json!({"enabled": true, "mode": "redirect"}));
    assert_eq!(query(&client.open_onramp(Some("20")).unwrap())["mode"], "redirect");
    let message = json!({"event": "order_completed", "data": {"id": "ord_2"}}).to_string();
    assert!(!client.onramp_message(&message).unwrap());
    assert_failure(client.next(0), depositkit_status::Timeout, "");
    assert_eq!(client.last_order(), None);
}

#[test]
fn devnet_completes_an_onramp_order_whose_messages_the_client_takes() {
    let devnet = Devnet::start();
    let widget = format!("{}/onramp/widget", devnet.url());
    let client = onramp_client(&devnet.url(), json!({"enabled": true, "widgetUrl": widget}));
    let url = client.open_onramp(Some("100")).unwrap();
    assert!(url.starts_with(&format!("{widget}?")), "{url}");

    let url_c = c(&url);
    let answer = json_out(|out| unsafe {
        depositkit_devnet_complete_onramp_order(devnet.0, url_c.as_ptr(), out)
    })
    .unwrap();
    let messages = answer["messages"].as_array().unwrap();
    let names: Vec<&str> = messages.iter().map(|m| m["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["order_created", "order_processing", "order_completed"]);
    for message in messages {
        assert!(client.onramp_message(&message.to_string()).unwrap());
    }
    let order = client.last_order().unwrap();
    assert_eq!(order["destination"], json!({"address": OWNER, "chainId": 8453}));
    assert_eq!(order["token"], "USDC");
    assert_eq!(order["fiatAmount"], 100.0);
    assert_eq!(order["id"], answer["order"]["id"]);
    // Credited to the destination on devnet's ledger: 100 USD at $1, less 1%.
    let owner = c(OWNER);
    let held = string_out(|out| unsafe {
        depositkit_devnet_ledger_balance(
            devnet.0,
            owner.as_ptr(),
            8453,
            depositkit_token_type::Usdc as u32,
            out,
        )
    })
    .unwrap();
    assert_eq!(held, "99000000");

    // Bad URLs.
    for (bad, needle) in [
        ("https://widget.example/buy", "widget_url has no query parameters"),
        ("https://widget.example/buy?network=base", "no partnerKey"),
        ("https://w/?partnerKey=k&a=%zz", "malformed query parameter \"a=%zz\""),
    ] {
        let bad = c(bad);
        let result = json_out(|out| unsafe {
            depositkit_devnet_complete_onramp_order(devnet.0, bad.as_ptr(), out)
        });
        assert_failure(result, depositkit_status::InvalidArgument, needle);
    }
}

// --- devnet with chains: argument checks (the chains themselves are in tests/c) ----------------

#[test]
fn devnet_start_with_chains_checks_the_chains_file() {
    let mut out: *const depositkit_devnet = null();
    let st = unsafe { depositkit_devnet_start_with_chains(null(), false, null(), &mut out) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "chains_json must not be NULL");
    let st = unsafe { depositkit_devnet_start_with_chains(null(), false, c"{".as_ptr(), &mut out) };
    assert_eq!(st, depositkit_status::InvalidArgument);
    assert!(last_error().starts_with("chains_json is not a valid chains file"), "{}", last_error());
    let unknown =
        c(r#"{"evm": [{"chainId": 999999, "rpcUrl": "http://127.0.0.1:9", "tokens": {}}]}"#);
    let st =
        unsafe { depositkit_devnet_start_with_chains(null(), false, unknown.as_ptr(), &mut out) };
    assert_eq!(st, depositkit_status::InvalidArgument, "{}", last_error());
    assert!(last_error().contains("999999"), "{}", last_error());
    assert!(out.is_null());
    let st =
        unsafe { depositkit_devnet_start_with_chains(null(), false, c"{}".as_ptr(), null_mut()) };
    assert_eq!(st, depositkit_status::NullArgument);
    assert_eq!(last_error(), "out_devnet must not be NULL");

    // A ledger devnet has no chain to read.
    let devnet = Devnet::start();
    let address = c(WALLET);
    let result = string_out(|out| unsafe {
        depositkit_devnet_chain_balance(
            devnet.0,
            address.as_ptr(),
            8453,
            depositkit_token_type::Usdc as u32,
            out,
        )
    });
    assert_failure(result, depositkit_status::InvalidArgument, "chain 8453 is not chain-backed");
}
