//! The deposit client (spec `deposit-library.md`): deposit addresses, the watcher, the sweeper
//! and lifecycle events, over `depositkit_core::deposit::DepositClient`. Refunds and recovery
//! (`refund.rs`, `recovery.rs`), notification records (`notifications.rs`) and the transaction
//! history (`history.rs`) are exports on the same handle, in files of their own.
//!
//! A client is an opaque handle backed by an `Arc`, like the user-lookup client:
//! [`depositkit_deposit_client_new`] hands out `Arc::into_raw`, [`depositkit_deposit_client_free`]
//! takes it back. Every call only reads the handle (the core client is `Send + Sync` and keeps
//! its state behind its own locks), so it is a `const` pointer usable by many threads at once.
//!
//! Records cross as JSON strings in the spec's camelCase shapes (the configuration, addresses,
//! destinations, events, detected deposits, sweep, refund and recovery results, notification
//! records, transactions); the status crosses as a C enum.
//!
//! # Callbacks
//!
//! [`depositkit_deposit_client_subscribe`] (and
//! `depositkit_deposit_client_subscribe_notifications` in `notifications.rs`, through the same
//! [`register_callback`]) wraps a C function pointer and its `user_data` in an
//! `Arc<HostCallback>`, shared by the core's event hub (through the boxed closure it is given)
//! and the handle's table of subscriptions. The hub calls it on a delivery thread of the
//! process's pool (`depositkit-events`), never on a runtime worker and never while depositkit holds a lock, so
//! the C callback may call back into the API.
//!
//! `user_data_free` runs in `HostCallback::release`, guarded so that it runs exactly once: from
//! `HostCallback`'s `Drop` when the last reference goes, or earlier from `unsubscribe` (below).
//! The hub delivers each event from a snapshot of its subscribers that holds a reference, so
//! the drop never happens while a call of the callback is running. And the handle drops its
//! reference last, after the hub let go of its own (unsubscribe, close, free) and outside every
//! lock: the hub drops a replaced list of subscribers while holding its lock, and a
//! `user_data_free` that called back into the client from there would deadlock.
//!
//! A call holds the subscription's `calling` lock and skips the callback once the subscription
//! is `closed`. Unsubscribing sets `closed` and, outside a callback, takes the lock once, so that
//! when `unsubscribe` returns no call is running and none will start; it then releases
//! `user_data` at once, on its own thread, even if a delivery still holds a reference for a
//! moment (that delivery can no longer call the callback). Inside a callback (on any client's
//! dispatcher thread) it does not wait, which keeps a callback that unsubscribes itself (or a
//! callback of another client) from deadlocking; the release then waits for the last reference.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use depositkit_core::TokenType;
use depositkit_core::deposit::{
    ClientStatus, DepositClient, DepositClientConfig, DestinationConfig, RecordedEvent,
};
use depositkit_core::describe::quote;
use serde_json::Value;

use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;
use crate::strings;

/// The status of a deposit client (spec section 3 `ClientStatus`).
///
/// `IDLE` (constructed, or closed) -> `INITIALIZING` -> `READY` or `ERROR` (a failed
/// initialization may be retried). Once initialized the status follows what runs: `SWEEPING`
/// while any deposit is queued, being swept or refunded, or waiting for a retry (of a sweep or
/// a refund), or a recovery is queued or running; else `WATCHING` while the watcher runs; else
/// `READY`. Every change is also reported as a `"status:change"` event.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum depositkit_client_status {
    /// Constructed and not initialized yet, or closed.
    Idle = 0,
    /// `depositkit_deposit_client_initialize` is running.
    Initializing = 1,
    /// Initialized; neither watching nor sweeping.
    Ready = 2,
    /// The watcher is polling.
    Watching = 3,
    /// At least one deposit is being swept or refunded or waits for a retry, or a recovery
    /// runs.
    Sweeping = 4,
    /// The last initialization failed; it may be tried again.
    Error = 5,
}

impl From<ClientStatus> for depositkit_client_status {
    /// Exhaustive on purpose: a status added to the core does not compile here until it gets
    /// its constant.
    fn from(status: ClientStatus) -> Self {
        match status {
            ClientStatus::Idle => depositkit_client_status::Idle,
            ClientStatus::Initializing => depositkit_client_status::Initializing,
            ClientStatus::Ready => depositkit_client_status::Ready,
            ClientStatus::Watching => depositkit_client_status::Watching,
            ClientStatus::Sweeping => depositkit_client_status::Sweeping,
            ClientStatus::Error => depositkit_client_status::Error,
        }
    }
}

/// Every client status, in numeric order.
const CLIENT_STATUSES: [(depositkit_client_status, &CStr); 6] = [
    (depositkit_client_status::Idle, c"idle"),
    (depositkit_client_status::Initializing, c"initializing"),
    (depositkit_client_status::Ready, c"ready"),
    (depositkit_client_status::Watching, c"watching"),
    (depositkit_client_status::Sweeping, c"sweeping"),
    (depositkit_client_status::Error, c"error"),
];

/// The spec's name of a client status as a static NUL-terminated string: `"idle"`,
/// `"initializing"`, `"ready"`, `"watching"`, `"sweeping"` or `"error"` (the spelling of the
/// `"status:change"` event's payload).
///
/// Takes a plain `uint32_t` so that any number is safe to pass: a number that is not a
/// `depositkit_client_status` gives `"unknown"`. Never NULL; do not free the result. Does not
/// change the last error.
#[unsafe(no_mangle)]
pub extern "C" fn depositkit_client_status_str(status: u32) -> *const c_char {
    const UNKNOWN: &CStr = c"unknown";
    boundary::value(UNKNOWN.as_ptr(), || {
        CLIENT_STATUSES
            .iter()
            .find(|(s, _)| *s as u32 == status)
            .map_or(UNKNOWN, |(_, name)| name)
            .as_ptr()
    })
}

/// A callback receiving the events of a deposit client, registered with
/// `depositkit_deposit_client_subscribe`.
///
/// Called with the `user_data` given at registration, and one event as JSON: `event_json` is
/// NUL-terminated UTF-8 of `event_json_len` bytes (without the NUL). It is borrowed: valid only
/// during the call; copy it to keep it. The shapes of the events are described at
/// `depositkit_deposit_client_subscribe`.
///
/// Threads: callbacks run on a thread owned by the library (one of the process's event-delivery
/// threads, named `depositkit-events`, shared by every client), never on the thread that called
/// into depositkit and never on one of its runtime's worker threads. One client calls its callbacks one at a time, in the order
/// of subscription, each event in the order it happened; a callback is never called
/// concurrently with itself or with another callback of the same client (callbacks of two
/// clients may run at the same time).
///
/// Re-entry: a callback may call any depositkit function, including the blocking ones
/// (`depositkit_deposit_client_poll_now`, `_sweep`, ...), `depositkit_deposit_client_unsubscribe`
/// of itself or of another subscription, and `depositkit_deposit_client_close`; none of them
/// deadlocks. While a callback runs, later events of its client wait, so a callback should
/// return promptly.
///
/// Return 0 when the event was handled. Any other value is counted
/// (`depositkit_deposit_client_callback_errors`) and otherwise ignored: it never stops the
/// client or the subscription.
///
/// A callback must not unwind (a C++ exception) or `longjmp` out of the call: that is undefined
/// behaviour.
#[allow(non_camel_case_types)]
pub type depositkit_event_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        event_json: *const c_char,
        event_json_len: usize,
    ) -> c_int,
>;

/// Releases the `user_data` of a subscription (see `depositkit_deposit_client_subscribe`).
#[allow(non_camel_case_types)]
pub type depositkit_user_data_free = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A deposit client (spec section 4): deposit addresses, a watcher that detects deposits, a
/// sweeper that delivers each one to the destination, and lifecycle events.
///
/// Opaque: created by `depositkit_deposit_client_new`, used through a
/// `const depositkit_deposit_client *`, released by `depositkit_deposit_client_free`.
/// Thread-safe: one client may be used by any number of threads at once, and freed on any
/// thread once no call is using it. The work runs on a runtime shared by every client of the
/// process (two worker threads, created on first use); callbacks run on a pool of event-delivery
/// threads shared the same way (two, more only while callbacks are stuck).
#[allow(non_camel_case_types)]
pub struct depositkit_deposit_client {
    pub(crate) inner: DepositClient,
    /// Every live subscription made through the C API (event and notification callbacks), by
    /// id.
    subscriptions: Mutex<HashMap<u64, Arc<HostCallback>>>,
    /// Callback calls that returned non-zero.
    callback_errors: Arc<AtomicU64>,
    /// The host providers set through the C API (funding wallets, balance provider).
    pub(crate) providers: crate::funding::HostProviders,
}

thread_local! {
    /// How many C callbacks are running on this thread: non-zero only on a dispatcher thread
    /// during a call (a counter rather than a flag, so that leaving a scope never clears an
    /// outer one).
    static IN_CALLBACK: Cell<u32> = const { Cell::new(0) };
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn in_callback() -> bool {
    IN_CALLBACK.with(Cell::get) > 0
}

/// Marks this thread as running a C callback while it lives.
struct CallbackScope;

impl CallbackScope {
    fn enter() -> CallbackScope {
        IN_CALLBACK.with(|n| n.set(n.get() + 1));
        CallbackScope
    }
}

impl Drop for CallbackScope {
    fn drop(&mut self) {
        IN_CALLBACK.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// The C signature shared by `depositkit_event_callback` and
/// `depositkit_notifications_callback`: `user_data`, then a borrowed JSON string and its length.
pub(crate) type RawCallback = unsafe extern "C" fn(*mut c_void, *const c_char, usize) -> c_int;

/// A C callback with its `user_data`, shared by the core's event hub and the handle. Dropping
/// the last reference (or `unsubscribe`, see the module's documentation) releases the
/// `user_data`, once: nothing else owns it. Only a registered subscription (`owned`) does: a
/// failed registration leaves `user_data` to the caller.
pub(crate) struct HostCallback {
    callback: RawCallback,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    /// Set when the registration succeeded: from then on the library owns `user_data`.
    owned: AtomicBool,
    /// Set when `user_data_free` was called (by `release`).
    released: AtomicBool,
    /// Set when unsubscribed or closed: later deliveries skip the callback.
    closed: AtomicBool,
    /// Held while the callback runs.
    calling: Mutex<()>,
    errors: Arc<AtomicU64>,
}

// SAFETY: the caller of `depositkit_deposit_client_subscribe` promises that `user_data` may be
// used by the callback on the dispatcher thread and released by `user_data_free` on any thread;
// depositkit itself never dereferences it.
unsafe impl Send for HostCallback {}
// SAFETY: as above; one client calls its callbacks one at a time, and `call` holds `calling`.
unsafe impl Sync for HostCallback {}

impl HostCallback {
    /// Calls the callback with one event as JSON (with its `"id"` and `"at"`).
    fn call(&self, event: &RecordedEvent) {
        self.call_json(|| Some(event.to_json().to_string()));
    }

    /// Calls the callback with the JSON `json` makes (made only when the subscription is still
    /// open; `None` skips the call).
    pub(crate) fn call_json(&self, json: impl FnOnce() -> Option<String>) {
        let _calling = lock(&self.calling);
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        // JSON text escapes control characters, so it never holds a NUL byte.
        let Some(Ok(json)) = json().map(CString::new) else {
            return;
        };
        let len = json.as_bytes().len();
        let status = {
            let _scope = CallbackScope::enter();
            // SAFETY: the subscriber promised a callback that may be called with its
            // `user_data` on this thread, that reads `event_json` only during the call and never
            // unwinds; `json` lives until the call returns.
            unsafe { (self.callback)(self.user_data, json.as_ptr(), len) }
        };
        if status != 0 {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Releases `user_data` (calls `user_data_free`) unless it was released already or the
    /// subscription was never registered. Call it only once no call of the callback runs or
    /// will start: from `Drop`, or after `closed` was set and a running call was waited for.
    fn release(&self) {
        if !self.owned.load(Ordering::Acquire) {
            return; // never registered: `user_data` stays the caller's
        }
        if self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(free) = self.user_data_free {
            // SAFETY: the subscriber promised `user_data_free` may be called once with
            // `user_data`, on any thread, once the subscription is dropped: this is that once
            // (`released` was false), and no call of the callback runs or will start.
            unsafe { free(self.user_data) };
        }
    }
}

impl Drop for HostCallback {
    fn drop(&mut self) {
        self.release();
    }
}

/// The handle behind `client`: `DEPOSITKIT_STATUS_NULL_ARGUMENT` naming `client` when NULL.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`, not freed before
/// `'a` ends (the duration of the call).
pub(crate) unsafe fn client_arg<'a>(
    client: *const depositkit_deposit_client,
) -> FfiResult<&'a depositkit_deposit_client> {
    // SAFETY: the caller's contract above; `Arc::into_raw` gave an aligned pointer to a value
    // that lives until the handle is freed.
    unsafe { client.as_ref() }.ok_or_else(|| FfiError::null_argument("client"))
}

/// The body of an export that reads `client`, asks it one thing and hands the answer out as a
/// JSON string in `*out` (owned by the caller). Arguments are checked in order: `client`, then
/// `out`.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out` must be
/// NULL or point to a writable `char *`.
pub(crate) unsafe fn write_json_answer<T: serde::Serialize>(
    client: *const depositkit_deposit_client,
    out: *mut *mut c_char,
    out_name: &'static str,
    ask: impl FnOnce(&DepositClient) -> depositkit_core::Result<T>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let client = unsafe { client_arg(client) }?;
    // SAFETY: the caller's contract above.
    let out = unsafe { boundary::out(out, out_name) }?;
    let answer = ask(&client.inner)?;
    out.write(json_out(serde_json::to_string(&answer))?);
    Ok(())
}

/// Serialized JSON as a string owned by the caller.
pub(crate) fn json_out(json: Result<String, serde_json::Error>) -> FfiResult<*mut c_char> {
    let json = json.map_err(|e| {
        FfiError::new(depositkit_status::Internal, format!("cannot serialize a result: {e}"))
    })?;
    strings::owned(json)
}

fn configuration(message: String) -> FfiError {
    FfiError::new(depositkit_status::Configuration, message)
}

/// Reads a destination (`{"chainId": 42161, "address": "0x...", "token": "USDT"}`; `address`
/// and `token` optional, `token` in any letter case) with the core's one destination reader.
fn destination_arg(json: &str) -> FfiResult<DestinationConfig> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| configuration(format!("destination_json is not valid JSON: {e}")))?;
    DestinationConfig::from_json_value(value).map_err(|e| configuration(e.message))
}

/// Creates a deposit client from its configuration, a JSON object with the spec's camelCase
/// option names (spec section 4):
///
/// - `ownerAddress` (required): the owner of the unified account, an EVM address;
/// - `destination` (required): `{"chainId": 8453, "address": "0x...", "token": "USDC"}`, where
///   sweeps deliver. `chainId` is one of Ethereum 1, Base 8453, Arbitrum 42161, BNB Chain 56,
///   Solana 101 (X Layer is a deposit source only); `address` defaults to the owner (so a
///   Solana destination needs one); `token` (any letter case) defaults to USDC and must be
///   deliverable on the chain (`depositkit_is_supported_destination_token`);
/// - then any of these options (`docs/options.md`, generated from the one option table, has
///   them in every language; `null` keeps the default):
///
/// <!-- BEGIN generated options (core/tests/option_table.rs) -->
/// - `intermediaryAddress` (string, default unset): The intermediary wallet, when the host knows
///   it: `initialize()` checks it equals the signer's wallet.
/// - `uaProjectId` (string, default unset): The host's own project id for unified-account
///   operations (spec §5.2; a 1% service fee applies to sweeps, spec §5.3).
/// - `minValueUSD` (number, default 0.5): Minimum USD value of a deposit; smaller deposits reach
///   `below_threshold` (applied with 2% tolerance; 0 disables the check). Deposits worth $0.10 or
///   less are dust and ignored. Default 0.5 (spec `DEFAULT_MIN_VALUE_USD`).
/// - `supportedTokens` (array of token symbols, default `["ETH","USDC","USDT","BTC","SOL","BNB"]`): The
///   tokens the watcher reports, as symbols in any letter case. Default all six.
/// - `supportedChains` (array of chain ids, default all 17): The chain ids the watcher reports.
///   Default all 17.
/// - `pollingIntervalMs` (integer, default 3000): The watcher's polling interval in milliseconds:
///   at least `minPollingIntervalMs` (2000 in production), at most a day. Default 3000.
/// - `autoSweep` (boolean, default true): Sweep each detected deposit automatically; without it,
///   call `sweep(id)`. Default true.
/// - `refund` (object, default see below): Auto-refund (spec §2 `RefundConfig`), every key
///   optional: `enabled` (default false: refund deposits whose sweep failed for good
///   automatically), `delayMs` (default 5000: the wait before the first attempt and between
///   attempts), `maxAttempts` (default 2, 1 to 100), `refundToSender` (default true: to the
///   original sender when known, else the owner). Manual refunds work either way.
/// - `notifications` (boolean or object, default false): Notification records (spec §2
///   `DepositNotificationsProps`): true for the defaults, or an object, every key optional:
///   `durationMs` (default 6000; auto-dismiss delay of terminal records, 0 never), `max` (default
///   5; records kept), and `position`, `theme`, `className`, which are only kept for a host UI. The
///   spec's `renderItem` has no headless meaning and is refused as an unknown key. Default off.
/// - `funding` (object, default see below): Fund from wallet (spec §2 `FundingConfig`;
///   `docs/funding.md` §3–4), every key optional: `enabled` (default false: every funding call
///   is refused), `apiKey` (of the balance API, sent from this process: development use),
///   `balanceApiUrl` (that API's base URL), `proxyUrl` (the host's reverse proxy to it, which adds
///   the key), `balanceProvider` (`"rpc"`: read balances from the chains' nodes), `evmRpcUrls`
///   (chain id → node URL), `solanaRpcUrl`, `minValueUSD` (smallest balance offered; default the
///   client's).
/// - `onramp` (object, default see below): The fiat onramp (spec §2 `OnrampConfig`;
///   `docs/funding.md` §5), every key optional: `enabled` (default false), `apiKey` (the partner
///   key; never shown), `mode` (`"overlay"`, the default, or `"redirect"`), `fiatCurrency` (default
///   `"USD"`), `defaultFiatAmount`, `paymentMode`, `widgetUrl`.
/// - `servicesUrl` (string, default unset): Base URL of the three services (`{servicesUrl}/jwt`,
///   `/signer`, `/ua`), e.g. a devnet's. Either it or each of `jwtServiceUrl`, `signerUrl` and
///   `accountServiceUrl` is required.
/// - `jwtServiceUrl` (string, default unset): The JWT service; overrides `servicesUrl`.
/// - `signerUrl` (string, default unset): The auth-core signer; overrides `servicesUrl`.
/// - `accountServiceUrl` (string, default unset): The universal-account service; overrides
///   `servicesUrl`.
/// - `sweepRetryDelayMs` (integer, default 5000): Milliseconds between the 3 attempts of a failed
///   sweep (at most a day). Default 5000 (lower it in tests).
/// - `reconcileIntervalMs` (integer, default 10000): First wait in milliseconds before a sweep or
///   refund whose send outcome is unknown (a timeout, 5xx or 429 on the send) is resolved again
///   automatically, with the same quote, never a new one; doubles per round up to ten minutes.
///   Default 10000 (lower it in tests).
/// - `processingTimeoutMs` (integer, default 300000): The watchdog: the longest one sweep, refund
///   or recovery attempt may run, in milliseconds; then it is ended as a failed attempt (nothing
///   sent yet) or as an unknown outcome to resolve (a send was under way). Default 300000 (lower it
///   in tests).
/// - `minPollingIntervalMs` (integer, default 2000): **A test and devnet knob** (1 to 2000): lowers
///   the smallest `pollingIntervalMs` accepted, so that tests never wait seconds between polls.
///   Default 2000.
/// - `requestTimeoutMs` (integer, default 10000): Deadline of one HTTP attempt in milliseconds
///   (more than 0, at most a day). Default 10000.
/// - `httpRetries` (integer, default 3): Retries of one HTTP request answered 429 or 5xx, refused
///   or timed out (0 to 20). Default 3.
/// - `httpInitialBackoffMs` (integer, default 100): First backoff between HTTP retries in
///   milliseconds (doubling, full jitter). Default 100.
/// - `callTimeoutMs` (integer, default 60000): Deadline of one blocking call (`initialize`,
///   `poll_now`, `sweep`, `refund`, `can_refund`, `stuck_funds`, `recover_funds`, the history
///   calls) in milliseconds. Default 60000.
/// - `eventQueueCapacity` (integer, default 1024): Size of the pull queue of events (at least 1);
///   when full the oldest event is dropped. Without `storePath` also how many events `events_since`
///   can replay. Default 1024.
/// - `storePath` (string, default unset): A SQLite file (created if missing) that keeps the
///   client's state across restarts: deposit records with their phase history, sweep and refund
///   attempts, the event log, the watcher's snapshot and the notification records. A client started
///   again on it (even after its process was killed mid-sweep) resumes every deposit where it was,
///   resolves a send that may have happened with the same quote (never a second one), and continues
///   the event ids. One process at a time: of processes starting on one file at once exactly one
///   wins, the others wait up to 2 s and are refused ("… is in use by another process"); openings
///   are serialised through `<storePath>-lock` beside it. One live client per owner (several owners
///   may share a file). A file this version cannot read is refused naming the path. Unset (the
///   default): state lives in memory and a new client starts over.
/// <!-- END generated options -->
///
/// Nothing is sent: the configuration is checked, the store (`storePath`) opened and the client's
/// delivery lane set up; the first network call is `depositkit_deposit_client_initialize`.
///
/// On success `*out_client` is a new handle owned by the caller: release it with
/// `depositkit_deposit_client_free`. On failure `*out_client` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when `config_json` is not
/// valid JSON, has an unknown option or a value of the wrong type, or an option is invalid (an
/// owner that is no EVM address, an unknown or non-destination chain, an address invalid for
/// the destination chain, a token not deliverable there, a polling interval under the minimum,
/// a malformed URL...): the message names the option and quotes the value;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `config_json` or `out_client` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8` when `config_json` is not UTF-8;
/// `DEPOSITKIT_STATUS_INTERNAL` when a thread cannot be started.
///
/// Thread-safe; does not block.
///
/// # Safety
/// `config_json` must be NULL or a NUL-terminated string; `out_client` must be NULL or point to
/// a writable `const depositkit_deposit_client *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_new(
    config_json: *const c_char,
    out_client: *mut *const depositkit_deposit_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let config_json = unsafe { strings::str_arg(config_json, "config_json") }?;
        // SAFETY: the caller's contract above.
        let out_client = unsafe { boundary::out(out_client, "out_client") }?;
        let config = DepositClientConfig::from_json(config_json)?;
        let inner = DepositClient::new(config)?;
        let client = depositkit_deposit_client {
            inner,
            subscriptions: Mutex::new(HashMap::new()),
            callback_errors: Arc::new(AtomicU64::new(0)),
            providers: crate::funding::HostProviders::default(),
        };
        out_client.write(Arc::into_raw(Arc::new(client)));
        Ok(())
    })
}

/// Closes a client (as `depositkit_deposit_client_close` does) and releases it. Every
/// subscription's and host provider's `user_data_free` has been called when this returns,
/// except for a callback still running on the dispatcher or a provider call still running on a
/// library thread (each is released when that call returns).
///
/// NULL is accepted and ignored. May be called on any thread, once, after every call using the
/// client has returned; it waits at most about 5 s (for the event dispatcher). Does not change
/// the last error.
///
/// # Safety
/// `client` must be NULL or a handle from `depositkit_deposit_client_new` that has not been
/// freed yet and that no other thread is using; after this call it must not be used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_free(client: *const depositkit_deposit_client) {
    boundary::value((), || {
        if !client.is_null() {
            // SAFETY: the caller promises `client` came from `Arc::into_raw` in
            // `depositkit_deposit_client_new` and is released only once.
            let client = unsafe { Arc::from_raw(client) };
            close(&client);
            drop(client);
        }
    });
}

/// Closes the core client (which drops its references to the callbacks), then marks every
/// subscription closed (a dispatcher left stuck in a callback calls nothing more once that call
/// returns) and drops the handle's references, outside every lock: `user_data_free` runs here,
/// or on the dispatcher after a call still running.
fn close(client: &depositkit_deposit_client) {
    let _ = client.inner.close();
    crate::funding::release_providers(client);
    let hosts: Vec<Arc<HostCallback>> =
        lock(&client.subscriptions).drain().map(|(_, host)| host).collect();
    for host in hosts {
        host.closed.store(true, Ordering::Release);
    }
}

/// Stops the client: the watcher and the sweeper stop (a sweep under way is abandoned: its money
/// is either delivered or still in the account, where a new client finds it), the dispatcher
/// delivers the events already queued to the callbacks for at most 5 s, then every
/// subscription is dropped (calling its `user_data_free`), and so is every host provider
/// (funding wallets and balance provider, as `depositkit_deposit_client_clear_funding_wallet`
/// does). The status becomes `DEPOSITKIT_CLIENT_STATUS_IDLE`.
///
/// Idempotent. Afterwards every call on the client fails with `DEPOSITKIT_STATUS_DEPOSIT_SDK`
/// ("the client is closed") except what stays true after closing: `_close`, `_status`
/// (`DEPOSITKIT_CLIENT_STATUS_IDLE`), the event log (`_events_since`, `_deposit_history`,
/// `_last_event_id`), `_next_event` (which still hands out the events left in the queue) and
/// the delivery counters (`_dropped_events`, `_callback_errors`), and the releases closing
/// already did (`_unsubscribe`, `_clear_funding_wallet`). In particular
/// `_get_destination`, `_pending_deposits`, `_stop_watching`, `_sweep_result`,
/// `_refund_result`, `_refund_config`, `_notifications`, `_dismiss_notification` and every
/// other getter of the running client fail: their answers would be stale. A refund or recovery
/// under way is abandoned like a sweep: the money is either moved or still in the account.
/// The handle must still be freed with `depositkit_deposit_client_free`.
///
/// May be called from a callback: it then does not wait for the dispatcher (which is running
/// that callback).
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` is NULL.
/// Waits at most about 5 s. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_close(
    client: *const depositkit_deposit_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        close(client);
        Ok(())
    })
}

/// Initializes the client: opens the intermediary wallet's session with the JWT service,
/// fetches the signer's wallet (checked against `intermediaryAddress` when configured) and
/// initializes the unified account, whose deposit addresses it returns. The status goes
/// `INITIALIZING`, then `READY`, or `ERROR` on failure (initialization may then be retried).
///
/// On success `*out_addresses_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): `{"evm": "0x...", "solana": "..."}`, the deposit addresses
/// (spec `DepositAddresses`; the EVM one serves every EVM chain). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_JWT` when the JWT service is unreachable or its token fails
///   verification;
/// - `DEPOSITKIT_STATUS_AUTHENTICATION` when the services refuse the credentials or session;
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when `intermediaryAddress` is not the signer's wallet, or
///   the client is already initialized (or initializing);
/// - `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` when the account cannot be initialized;
/// - `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the
///   client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks the calling thread up to `callTimeoutMs` (default 60 s). Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_addresses_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_initialize(
    client: *const depositkit_deposit_client,
    out_addresses_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_addresses_json, "out_addresses_json") }?;
        let addresses = client.inner.initialize()?;
        out.write(json_out(serde_json::to_string(&addresses))?);
        Ok(())
    })
}

/// The deposit addresses of an initialized client.
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): `{"evm": "0x...", "solana": "..."}`, as
/// `depositkit_deposit_client_initialize` gives it. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`
/// when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_deposit_addresses(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.deposit_addresses())
    })
}

/// Changes where deposits are delivered (spec `setDestination`). Sweeps that start from now on
/// use it, queued ones and retries included.
///
/// `destination_json` is a JSON object `{"chainId": 42161, "address": "0x...", "token":
/// "USDT"}`: `chainId` is required; `address` defaults to the owner address and `token` (any
/// letter case) to USDC, as for the `destination` option of `depositkit_deposit_client_new`.
///
/// On success, when `out_destination_json` is not NULL, `*out_destination_json` is a new string
/// owned by the caller (free it with `depositkit_string_free`): the destination now in use with
/// its defaults filled in, `{"chainId": 42161, "address": "0x...", "token": "USDT"}` (EVM
/// addresses lower-cased, Solana ones as given). On failure it is not written and the previous
/// destination stays.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when `destination_json` is
/// not such an object, or the chain id, address or token is invalid (an unknown chain, X Layer
/// or another chain that cannot be a destination, an address invalid for the chain, a token
/// not deliverable there): the message names the field and quotes the value;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`
/// when `client` or `destination_json` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `destination_json` must be NULL or a NUL-terminated string; `out_destination_json` must be
/// NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_destination(
    client: *const depositkit_deposit_client,
    destination_json: *const c_char,
    out_destination_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let destination_json = unsafe { strings::str_arg(destination_json, "destination_json") }?;
        let destination = destination_arg(destination_json)?;
        let resolved = client.inner.set_destination(destination)?;
        if !out_destination_json.is_null() {
            let json = json_out(serde_json::to_string(&resolved))?;
            // SAFETY: not NULL, and the caller promises it is writable.
            unsafe { out_destination_json.write(json) };
        }
        Ok(())
    })
}

/// The destination in use (spec `getDestination`).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): `{"chainId": 8453, "address": "0x...", "token": "USDC"}`, with
/// the defaults filled in. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_get_destination(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.get_destination())
    })
}

/// The client's status (see `depositkit_client_status`).
///
/// On success `*out_status` is written; on failure it is not. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works on a closed client too
/// (`DEPOSITKIT_CLIENT_STATUS_IDLE`). Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_status`
/// must be NULL or point to a writable `depositkit_client_status`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_status(
    client: *const depositkit_deposit_client,
    out_status: *mut depositkit_client_status,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_status, "out_status") }?;
        out.write(client.inner.status().into());
        Ok(())
    })
}

/// Whether the fiat onramp serves the current destination chain (spec `isOnrampSupported`:
/// false for X Layer; true for Ethereum, BNB Chain, Base, Arbitrum and Solana).
///
/// On success `*out_supported` is written; on failure it is not. Returns
/// `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_supported` must be NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_is_onramp_supported(
    client: *const depositkit_deposit_client,
    out_supported: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_supported, "out_supported") }?;
        out.write(client.inner.is_onramp_supported()?);
        Ok(())
    })
}

/// Starts the watcher: one poll now, then one every `pollingIntervalMs`, never overlapping.
/// Detected deposits are reported as events and, with `autoSweep`, swept one at a time. The
/// status becomes `WATCHING` (or stays `SWEEPING`). Does nothing when the watcher already runs.
///
/// Failures of a background poll do not stop the watcher; each is reported as an `"error"`
/// event.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`
/// when `client` is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_start_watching(
    client: *const depositkit_deposit_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        client.inner.start_watching()?;
        Ok(())
    })
}

/// Stops the watcher (a poll under way is abandoned); sweeps under way go on. Does nothing when
/// it does not run. What the watcher has seen is kept: starting it again reports only new
/// deposits.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed (closing
/// stopped the watcher); `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` is NULL. Does not
/// block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_stop_watching(
    client: *const depositkit_deposit_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        client.inner.stop_watching()?;
        Ok(())
    })
}

/// Runs one poll of the account's balances now (after a poll under way finishes), whether or
/// not the watcher runs. Detected deposits are queued for their sweep when `autoSweep` is on.
///
/// On success `*out_events_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of the lifecycle events this poll produced, each a
/// DepositLifecycleEvent object as in the `payload` of a `"deposit:lifecycle"` event (phase
/// `"detected"` or `"below_threshold"`; see `depositkit_deposit_client_subscribe`); `[]` when
/// nothing new arrived. The same events have already been queued for
/// `depositkit_deposit_client_next_event` and handed to the callbacks' dispatcher when this
/// returns. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` before initialization;
/// `DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT` (or `DEPOSITKIT_STATUS_JWT`) when the balances cannot be
/// read; `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when
/// the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. A failure
/// is also reported as an `"error"` event.
///
/// Blocks the calling thread up to `callTimeoutMs`. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_events_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_poll_now(
    client: *const depositkit_deposit_client,
    out_events_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_events_json, "out_events_json", |c| c.poll_now())
    })
}

/// The detected deposits that are not delivered yet (queued, being swept, failed, or with an
/// unknown outcome), oldest first.
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of DetectedDeposit objects (spec section 2):
/// `{"id": "dep_...", "token": "USDC", "chainId": 8453, "amount": "25", "amountUSD": 25.0,
/// "rawAmount": "25000000", "decimals": 6, "detectedAt": <unix ms>}` (`rawAmount` is a decimal
/// string: it may not fit a double). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_pending_deposits(
    client: *const depositkit_deposit_client,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_json_answer(client, out_json, "out_json", |c| c.pending_deposits())
    })
}

/// Sweeps one pending deposit now: one attempt through the client's serial sweep queue, to the
/// current destination. Lifecycle events follow as for automatic sweeps (`processing`, then
/// `credited` or `failed`). A deposit whose last send has an unknown outcome is first resolved
/// (its quote is sent again, which the service treats idempotently), never quoted anew.
///
/// On success `*out_result_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the SweepResult (spec section 2), `{"depositId": "dep_...",
/// "transactionId": "0x...", "explorerUrl": "https://...", "status": "success"}` with `status`
/// one of `"success"`, `"failed"` (the deposit stays pending; `"error"` says why) or
/// `"pending"` (the outcome is unknown: sweep it again to resolve it). On success it also has
/// `"delivered"`: `{"chainId", "token", "address", "rawAmount" (decimal string), "amount",
/// "decimals", "valueUSD", "fees": {"gasUSD", "lpUSD", "serviceUSD", "totalUSD"}, "quoteId"}`,
/// what reached the destination after fees. `transactionId` and `explorerUrl` are `""` when
/// there is none. A sweep that ran but did not deliver is still `DEPOSITKIT_STATUS_OK`: read
/// `status`. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` for an unknown or already
/// delivered `deposit_id`; `DEPOSITKIT_STATUS_SWEEP` when it is already being swept;
/// `DEPOSITKIT_STATUS_CONFIGURATION` before initialization; `DEPOSITKIT_STATUS_TIMEOUT` after
/// `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is (or gets) closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread up to `callTimeoutMs`. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_result_json` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_sweep(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_result_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_result_json, "out_result_json") }?;
        let result = client.inner.sweep(deposit_id)?;
        out.write(json_out(serde_json::to_string(&result))?);
        Ok(())
    })
}

/// The result of the last finished sweep of `deposit_id`, automatic or manual: how to learn
/// what a `credited` deposit delivered.
///
/// On success `*out_result_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the SweepResult as `depositkit_deposit_client_sweep` gives it. On
/// failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` when no sweep of that deposit
/// has finished (the last 1000 results are kept); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`. Does not block.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_result_json` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_sweep_result(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_result_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_result_json, "out_result_json") }?;
        let result = client.inner.sweep_result(deposit_id)?.ok_or_else(|| {
            FfiError::new(
                depositkit_status::NotFound,
                format!("no sweep of deposit {} has finished", quote(deposit_id)),
            )
        })?;
        out.write(json_out(serde_json::to_string(&result))?);
        Ok(())
    })
}

/// Calls `callback` with `user_data` for every event of the client from now on (see
/// `depositkit_event_callback` for threads, re-entry and the return value).
///
/// Events are JSON objects with a `"type"` discriminator, a `"payload"`, the event's `"id"` in
/// the client's event log (1, 2, ... in the order of emission; with `storePath` they continue
/// across restarts: the cursor of `depositkit_deposit_client_events_since`) and `"at"` (when it
/// was emitted, unix milliseconds):
/// - `{"type": "deposit:lifecycle", "payload": {...}}`: a deposit entered a phase. The payload
///   is a DepositLifecycleEvent (spec section 2): `"id"` (`"dep_"` and 32 hex digits, derived
///   from the deposit itself: the same in every phase of one deposit and after a restart),
///   `"phase"` (`"detected"`, `"processing"` (a sweep attempt started; again at each retry),
///   `"credited"`, `"failed"` or `"below_threshold"`), `"token"` (`"USDC"`...), `"chainId"`
///   (the source chain), `"amount"` (human-readable decimal string), `"amountUSD"` (number),
///   `"destination"` (`{"address", "chainId"}`, where it goes), `"transactionId"` and
///   `"explorerUrl"` (on `credited`; the explorer link only for chains that have one),
///   `"error"` (on `failed`, and on `below_threshold` saying which minimum it missed) and
///   `"timestamp"` (unix milliseconds). Absent fields are left out, not null. What a credited
///   deposit delivered after fees is in `depositkit_deposit_client_sweep_result`;
/// - `{"type": "status:change", "payload": "watching"}`: the client's status changed (the
///   names of `depositkit_client_status_str`);
/// - `{"type": "error", "payload": {"kind": "UniversalAccountError", "code": 400, "message":
///   "..."}}`: something failed in the background (a poll of the watcher); `code` is the
///   `depositkit_status` value of the kind;
/// - `{"type": "refund:update", "payload": {...}}`: a refund changed status. The payload is a
///   RefundResult (described at `depositkit_deposit_client_refund`); one refund goes `"pending"`
///   -> `"processing"` (-> `"pending"` -> `"processing"` ... between automatic attempts) ->
///   `"success"`, `"failed"` or `"skipped"`;
/// - `{"type": "recovery:result", "payload": {...}}`: one asset of
///   `depositkit_deposit_client_recover_funds` is done; the payload is a RecoveryResult
///   (described there);
/// - `{"type": "onramp:<name>", "payload": {...}}` (`<name>` one of `widget_opened`,
///   `order_created`, `order_processing`, `order_completed`, `order_failed`, `widget_closed`):
///   the onramp widget posted a message (`depositkit_deposit_client_handle_onramp_message`);
///   the payload is the message's `data`;
/// - `{"type": "onramp:complete", "payload": {...}}`: an onramp order completed; the payload is
///   the OnrampOrder (described at `depositkit_deposit_client_handle_onramp_message`).
///
/// New types may be added: ignore the ones you do not know.
///
/// Lifecycle events are best-effort notifications, not a source of truth for crediting funds
/// (spec section 6). Notification records have their own callback
/// (`depositkit_deposit_client_subscribe_notifications`). Every event also goes to the pull
/// queue of `depositkit_deposit_client_next_event`, whether or not callbacks are subscribed.
///
/// On success `*out_subscription` is the subscription's id (never 0), for
/// `depositkit_deposit_client_unsubscribe`, and the library owns `user_data`: when the
/// subscription is dropped (by `depositkit_deposit_client_unsubscribe`, `_close` or `_free`)
/// `user_data_free` (if not NULL) is called with it exactly once, never while a call of
/// `callback` is running and never while the library holds a lock (so it may call depositkit
/// functions too): by `_unsubscribe` called outside a callback, on that thread before it
/// returns; otherwise on the thread that dropped the subscription or, when an event was being
/// delivered at that moment, on the dispatcher thread once that delivery ends. On failure
/// nothing is registered, `*out_subscription` is not written and `user_data_free` is not called
/// (`user_data` stays the caller's).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `callback`
/// or `out_subscription` is NULL; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed.
/// Does not block. Thread-safe (also from inside a callback).
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_subscription` must be NULL or point to a writable `uint64_t`. `callback` must follow
/// the rules of `depositkit_event_callback`; `user_data` (which may be NULL) must stay valid
/// for it until `user_data_free` is called (or, without `user_data_free`, until the
/// subscription is dropped) and may be used on the dispatcher thread; `user_data_free` must be
/// safe to call on any thread and must not unwind or `longjmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_subscribe(
    client: *const depositkit_deposit_client,
    callback: depositkit_event_callback,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    out_subscription: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        unsafe {
            register_callback(client, callback, user_data, user_data_free, out_subscription, {
                |inner, host| inner.subscribe_recorded(Box::new(move |event| host.call(event)))
            })
        }
    })
}

/// The body of an export that registers a C callback (`depositkit_deposit_client_subscribe`,
/// `depositkit_deposit_client_subscribe_notifications`): checks `client`, `callback` and
/// `out_subscription` in this order, wraps the callback in a [`HostCallback`], lets `subscribe`
/// hand it to the core (which refuses it when the client is closed), records it in the
/// handle's table and writes the id. When `subscribe` fails nothing is registered and `user_data` stays the
/// caller's (`user_data_free` is not called).
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_subscription` must be NULL or point to a writable `uint64_t`; `callback`, `user_data`
/// and `user_data_free` must follow the rules of `depositkit_deposit_client_subscribe`.
pub(crate) unsafe fn register_callback(
    client: *const depositkit_deposit_client,
    callback: Option<RawCallback>,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    out_subscription: *mut u64,
    subscribe: impl FnOnce(&DepositClient, Arc<HostCallback>) -> depositkit_core::Result<u64>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let client = unsafe { client_arg(client) }?;
    let callback = callback.ok_or_else(|| FfiError::null_argument("callback"))?;
    // SAFETY: the caller's contract above.
    let out = unsafe { boundary::out(out_subscription, "out_subscription") }?;
    let host = Arc::new(HostCallback {
        callback,
        user_data,
        user_data_free,
        owned: AtomicBool::new(false),
        released: AtomicBool::new(false),
        closed: AtomicBool::new(false),
        calling: Mutex::new(()),
        errors: Arc::clone(&client.callback_errors),
    });
    // The table's lock is held until the id is recorded, so that an unsubscribe of this id
    // (from a callback already running it) finds it.
    let mut subscriptions = lock(&client.subscriptions);
    let id = match subscribe(&client.inner, Arc::clone(&host)) {
        Ok(id) => id,
        Err(err) => {
            drop(subscriptions);
            // Not `owned`: dropping it leaves `user_data` alone.
            drop(host);
            return Err(err.into());
        }
    };
    // From here on the library owns `user_data`: dropping the last reference releases it.
    host.owned.store(true, Ordering::Release);
    subscriptions.insert(id, host);
    drop(subscriptions);
    out.write(id);
    Ok(())
}

/// Removes a subscription made by `depositkit_deposit_client_subscribe` or
/// `depositkit_deposit_client_subscribe_notifications` (the two share one space of ids).
///
/// On success `*out_removed` tells whether `subscription` was subscribed (false for an unknown
/// id, one already removed, or after `_close`). When it was, its callback is not called again;
/// called outside a callback, this waits for a call of it that is running on the dispatcher to
/// return, so once it returns no call is running and its `user_data_free` has been called (on
/// this thread). Called from inside a callback (of any client) it never waits: a callback may
/// unsubscribe itself (it returns normally; its `user_data_free` runs after it returns) or
/// another subscription. Its `user_data_free` is called as described at
/// `depositkit_deposit_client_subscribe`.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` or
/// `out_removed` is NULL. Works on a closed client too. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_removed`
/// must be NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_unsubscribe(
    client: *const depositkit_deposit_client,
    subscription: u64,
    out_removed: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_removed, "out_removed") }?;
        let host = lock(&client.subscriptions).remove(&subscription);
        if let Some(host) = &host {
            host.closed.store(true, Ordering::Release);
        }
        let removed = client.inner.unsubscribe(subscription);
        if let Some(host) = host {
            if !in_callback() {
                // Wait for a call under way (it holds the lock) to return; later ones see
                // `closed` and skip the callback. So `user_data` may be released now, on this
                // thread, outside every lock, even though a delivery may still hold a
                // reference to `host` for a moment.
                drop(lock(&host.calling));
                host.release();
            }
            // Inside a callback: the last reference unless a delivery still holds one;
            // `user_data_free` runs here, or on the dispatcher when that delivery ends.
            drop(host);
        }
        out.write(removed);
        Ok(())
    })
}

/// Callback calls that returned non-zero so far, over every subscription of the client (event
/// and notification callbacks).
///
/// On success `*out_count` is written; on failure it is not. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works on a closed client too.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_count`
/// must be NULL or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_callback_errors(
    client: *const depositkit_deposit_client,
    out_count: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_count, "out_count") }?;
        out.write(client.callback_errors.load(Ordering::Relaxed));
        Ok(())
    })
}

/// Takes the oldest event from the client's pull queue, waiting at most `timeout_ms`
/// milliseconds for one to arrive (0: do not wait).
///
/// Every event is queued, whether or not callbacks are subscribed; the queue holds
/// `eventQueueCapacity` events (default 1024) and, when full, drops the oldest
/// (`depositkit_deposit_client_dropped_events`). Each event is taken by one caller only.
///
/// On success `*out_event_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): one event, in the shapes described at
/// `depositkit_deposit_client_subscribe`. Otherwise it is not written.
///
/// Returns:
/// - `DEPOSITKIT_STATUS_OK` with an event;
/// - `DEPOSITKIT_STATUS_TIMEOUT` when no event arrived within `timeout_ms`: the normal outcome
///   of a quiet period, not an error of the client (the last-error message just says how long
///   it waited);
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` at once when the client is closed and its queue is empty:
///   no event will ever come;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` or `out_event_json` is NULL.
///
/// Blocks the calling thread up to `timeout_ms`. Thread-safe: several threads may wait at once.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_event_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_next_event(
    client: *const depositkit_deposit_client,
    timeout_ms: u64,
    out_event_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_event_json, "out_event_json") }?;
        let timeout = if client.inner.is_closed() {
            Duration::ZERO
        } else {
            Duration::from_millis(timeout_ms)
        };
        match client.inner.next_recorded_event(timeout) {
            Some(event) => {
                out.write(strings::owned(event.to_json().to_string())?);
                Ok(())
            }
            None if client.inner.is_closed() => Err(FfiError::new(
                depositkit_status::DepositSdk,
                "the client is closed and no event is left in its queue",
            )),
            None => Err(FfiError::new(
                depositkit_status::Timeout,
                format!("no event arrived within {timeout_ms} ms"),
            )),
        }
    })
}

/// Events dropped from the client's pull queue so far because it was full (the oldest is
/// dropped to make room).
///
/// On success `*out_count` is written; on failure it is not. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works on a closed client too.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_count`
/// must be NULL or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_dropped_events(
    client: *const depositkit_deposit_client,
    out_count: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_count, "out_count") }?;
        out.write(client.inner.dropped_events());
        Ok(())
    })
}

/// The events after `cursor` (an event id; 0 for the start), oldest first, at most `limit`
/// (0: no limit): what a host missed while it was down or because the pull queue overflowed.
/// With `storePath` every event the client ever emitted is kept, with the same ids after a
/// restart; without it, the last `eventQueueCapacity`. A host that must not miss a credit keeps
/// the id of the last event it handled and, after a restart, handles the events since that id
/// first.
///
/// On success `*out_events_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of events in the shapes described at
/// `depositkit_deposit_client_subscribe`, each with its `"id"` and `"at"`. On failure it is not
/// written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NOT_FOUND` when events after `cursor` are
/// no longer kept (without `storePath`); `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for a cursor past
/// the last event id; `DEPOSITKIT_STATUS_INTERNAL` when the store cannot be read;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`. Does not block on the network (reads the store file).
/// Thread-safe; works on a closed client too.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_events_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_events_since(
    client: *const depositkit_deposit_client,
    cursor: u64,
    limit: u64,
    out_events_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_events_json, "out_events_json") }?;
        let limit =
            if limit == 0 { usize::MAX } else { usize::try_from(limit).unwrap_or(usize::MAX) };
        let events = client.inner.events_since(cursor, limit)?;
        out.write(strings::owned(events_json(&events))?);
        Ok(())
    })
}

/// The id of the last event the client emitted (0: none yet).
///
/// On success `*out_id` is written; on failure it is not. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works on a closed client too.
/// Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_id` must
/// be NULL or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_last_event_id(
    client: *const depositkit_deposit_client,
    out_id: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_id, "out_id") }?;
        out.write(client.inner.last_event_id());
        Ok(())
    })
}

/// Deposit `deposit_id`'s phase history: its `deposit:lifecycle` events and `refund:update`s,
/// oldest first, with their ids (complete with `storePath`; without it, what the in-memory log
/// still holds; an unknown id has an empty history).
///
/// On success `*out_events_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array as `depositkit_deposit_client_events_since` gives.
/// On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INTERNAL` when the store cannot be read;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT`; `DEPOSITKIT_STATUS_INVALID_UTF8`. Does not block on the
/// network. Thread-safe; works on a closed client too.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `deposit_id`
/// must be NULL or a NUL-terminated string; `out_events_json` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_deposit_history(
    client: *const depositkit_deposit_client,
    deposit_id: *const c_char,
    out_events_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let deposit_id = unsafe { strings::str_arg(deposit_id, "deposit_id") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_events_json, "out_events_json") }?;
        let events = client.inner.deposit_history(deposit_id)?;
        out.write(strings::owned(events_json(&events))?);
        Ok(())
    })
}

/// Recorded events as the JSON array `_events_since` and `_deposit_history` hand out.
fn events_json(events: &[RecordedEvent]) -> String {
    Value::Array(events.iter().map(RecordedEvent::to_json).collect()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_match_the_core_names() {
        for (status, name) in CLIENT_STATUSES {
            let core: ClientStatus = name.to_str().unwrap().parse().unwrap();
            assert_eq!(depositkit_client_status::from(core), status);
            // SAFETY: the function returns a static NUL-terminated string.
            let got = unsafe { CStr::from_ptr(depositkit_client_status_str(status as u32)) };
            assert_eq!(got, name);
        }
        // SAFETY: as above.
        let got = unsafe { CStr::from_ptr(depositkit_client_status_str(6)) };
        assert_eq!(got, c"unknown");
    }

    #[test]
    fn destinations_are_read_with_named_errors() {
        let d =
            destination_arg(r#"{"chainId": 42161, "address": "0xab", "token": "usdt"}"#).unwrap();
        assert_eq!(
            d,
            DestinationConfig::chain(42161).with_address("0xab").with_token(TokenType::USDT)
        );
        let d = destination_arg(r#"{"chainId": 8453, "address": null}"#).unwrap();
        assert_eq!(d, DestinationConfig::chain(8453));
        let cases = [
            ("{", "destination_json is not valid JSON"),
            ("[1]", "destination must be an object"),
            (r#"{"chainId": 1, "chain": 2}"#, "unknown key \"chain\""),
            (r#"{"address": "0xab"}"#, "destination.chainId is required"),
            (r#"{"chainId": -1}"#, "Invalid destination chain ID: -1."),
            (
                r#"{"chainId": 1, "address": 5}"#,
                "destination.address must be a string, got a number",
            ),
            (r#"{"chainId": 1, "token": "DOGE"}"#, "destination.token must be one of"),
            (r#"{"chainId": 1, "token": true}"#, "destination.token must be a string"),
        ];
        for (json, want) in cases {
            let err = destination_arg(json).unwrap_err();
            assert_eq!(err.status, depositkit_status::Configuration, "{json}");
            assert!(err.message.contains(want), "{json}: {}", err.message);
        }
    }
}
