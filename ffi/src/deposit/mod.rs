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

mod callbacks;
mod client_status;
mod event_batch;
mod events;
#[cfg(test)]
mod tests;
mod watching;

use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use depositkit_core::deposit::{DepositClient, DepositClientConfig, DestinationConfig};
use serde_json::Value;

use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;
use crate::strings;

pub(crate) use callbacks::lock;
pub use callbacks::*;
pub use client_status::*;
pub use event_batch::*;
pub use events::*;
pub use watching::*;

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
pub(crate) fn destination_arg(json: &str) -> FfiResult<DestinationConfig> {
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
///   operations (spec section 5.2; a 1% service fee applies to sweeps, spec section 5.3).
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
/// - `refund` (object, default see below): Auto-refund (spec section 2 `RefundConfig`), every key
///   optional: `enabled` (default false: refund deposits whose sweep failed for good
///   automatically), `delayMs` (default 5000: the wait before the first attempt and between
///   attempts), `maxAttempts` (default 2, 1 to 100), `refundToSender` (default true: to the
///   original sender when known, else the owner). Manual refunds work either way.
/// - `notifications` (boolean or object, default false): Notification records (spec section 2
///   `DepositNotificationsProps`): true for the defaults, or an object, every key optional:
///   `durationMs` (default 6000; auto-dismiss delay of terminal records, 0 never), `max` (default
///   5; records kept), and `position`, `theme`, `className`, which are only kept for a host UI. The
///   spec's `renderItem` has no headless meaning and is refused as an unknown key. Default off.
/// - `funding` (object, default see below): Fund from wallet (spec section 2 `FundingConfig`;
///   `docs/funding.md` section 3-4), every key optional: `enabled` (default false: every funding
///   call is refused), `apiKey` (of the balance API, sent from this process: development use),
///   `balanceApiUrl` (that API's base URL), `proxyUrl` (the host's reverse proxy to it, which adds
///   the key), `balanceProvider` (`"rpc"`: read balances from the chains' nodes), `evmRpcUrls`
///   (chain id -> node URL), `solanaRpcUrl`, `minValueUSD` (smallest balance offered; default the
///   client's).
/// - `onramp` (object, default see below): The fiat onramp (spec section 2 `OnrampConfig`;
///   `docs/funding.md` section 5), every key optional: `enabled` (default false), `apiKey` (the
///   partner key; never shown), `mode` (`"overlay"`, the default, or `"redirect"`), `fiatCurrency`
///   (default `"USD"`), `defaultFiatAmount`, `paymentMode`, `widgetUrl`.
/// - `chainRpcUrls` (object, default see below): Chain watchers (`docs/finality.md`): chain id (a
///   number, or its text) -> the chain's JSON-RPC endpoint (an EVM node, or Solana's):
///   `http(s)://`, polled every 100 ms, or for an EVM chain `ws(s)://`, told of new heads by
///   `eth_subscribe` (polled over the socket when the endpoint refuses subscriptions). A watched
///   chain's deposits are `seen` when their transfer is included, `confirming` as blocks come,
///   `confirmed` when the chain's finality rule (`finality`) is met, and only then swept; one a
///   reorganisation removes first is `reorged` and never swept. Balance polling goes on beside
///   them, so a deposit is found while an endpoint is down. Endpoints are never shown (their path
///   may hold a key). Default none: every chain's deposits are the balance's rises, swept at once.
/// - `finality` (object, default see below): When a deposit on a watched chain (`chainRpcUrls`) is
///   final (`docs/finality.md`), every key optional: `chains` (chain id -> `{"confirmations": n}`,
///   `"safe"` (Solana's `"confirmed"`) or `"finalized"`, replacing that chain's documented
///   default), `instantBelowUsd` (default 0: deposits worth less are swept as soon as they are
///   seen, the host accepting the risk of a reorganisation on them), `balanceFallbackMs` (how long
///   a deposit only the balance shows waits before it is taken as final; default the chain's
///   typical time to finality).
/// - `backend` (string, default `"devnet"`): The universal-account backend: `"devnet"` (the
///   default: `docs/protocol.md`, the services under `servicesUrl`) or `"particle"` (Particle's
///   Universal Account JSON-RPC with a server-side signer, set up by `particle`;
///   `docs/particle.md`).
/// - `particle` (object, default see below): The `particle` backend's settings (`docs/particle.md`
///   section 8), every key optional: `environment` (`"production"`, the default, or `"staging"`),
///   `rpcUrl` (a URL of your own, e.g. devnet's `.../particle`; beats `environment`), `projectId`
///   and `clientKey` (the project's credentials; else `DEPOSITKIT_PARTICLE_PROJECT_ID` and
///   `DEPOSITKIT_PARTICLE_CLIENT_KEY`), and the signer: `signerKey` (one key, 64 hex digits),
///   `signerSeed` (a master seed in hex: one key per owner), or `signer` (`"key"` or `"seed"`: read
///   `DEPOSITKIT_PARTICLE_SIGNER_KEY` or `DEPOSITKIT_PARTICLE_SIGNER_SEED`; unset, whichever is
///   set). A host signer (a KMS callback) overrides these. Secrets are never shown.
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
///   wins, the others wait up to 2 s and are refused ("... is in use by another process"); openings
///   are serialised through `<storePath>-lock` beside it. Events are appended to
///   `<storePath>-events` first and folded into the file in batches: keep, copy or delete it with
///   the file (as SQLite's `-wal`). One live client per owner (several owners may share a file). A
///   file this version cannot read is refused naming the path. Unset (the default): state lives in
///   memory and a new client starts over.
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
        out_client.write(new_handle(config)?);
        Ok(())
    })
}

/// A new handle over a core client of `config`, owned by the caller (the body of
/// `depositkit_deposit_client_new` and `depositkit_deposit_client_new_with_signer`).
pub(crate) fn new_handle(
    config: DepositClientConfig,
) -> FfiResult<*const depositkit_deposit_client> {
    let inner = DepositClient::new(config)?;
    let client = depositkit_deposit_client {
        inner,
        subscriptions: Mutex::new(HashMap::new()),
        callback_errors: Arc::new(AtomicU64::new(0)),
        providers: crate::funding::HostProviders::default(),
    };
    Ok(Arc::into_raw(Arc::new(client)))
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
