//! Funding deposits from the user's own wallet (`docs/funding.md` sections 3, 4 and 6 "C"):
//! the funding wallets and the balance provider of a deposit client, the balances they hold,
//! and `fund_from_wallet`, over `depositkit_core::deposit::DepositClient`'s funding methods.
//!
//! # Host providers
//!
//! Every host provider (an EVM wallet, a Solana wallet, a balance provider) is one C function,
//! [`depositkit_provider_fn`], with its `user_data`. It is wrapped in a [`HostProvider`], a
//! `depositkit_core::funding::WalletProvider` that the core calls on one of its threads (never
//! twice at once for one provider: the core serializes the calls). Each call hands the
//! callback a reply handle; the callback answers through [`depositkit_provider_reply_result`]
//! or [`depositkit_provider_reply_error`] before it returns.
//!
//! A reply handle is not a pointer to memory: it is a number that names one pending request
//! in a process-wide table ([`PendingReply`]), never reused, and depositkit never dereferences
//! it. So a handle used after its callback returned, or answered twice, is found missing (or
//! answered) in the table and the call fails with a status: it cannot touch freed memory or
//! answer another request.
//!
//! `user_data_free` runs in `HostProvider`'s `Drop`, so exactly once, when the last reference
//! goes: the core holds one while the provider is set (and a call in flight holds one until it
//! returns), and the handle keeps one per kind in [`HostProviders`]. When a provider is
//! replaced or cleared, the export first lets the core drop its reference, then drops the
//! handle's outside every lock. So `user_data_free` runs on the thread that replaced, cleared,
//! closed or freed (or, when a call of the provider was still running, on that call's thread
//! right after it returned), and never while depositkit holds a lock (so it may call depositkit
//! functions).
//!
//! # Balances
//!
//! `depositkit_deposit_client_wallet_balances` hands out an immutable list
//! ([`depositkit_funding_balances`]) of the core's opaque `FundingBalance` values. The list
//! remembers the client that issued it by a `Weak` reference to the handle's allocation (which
//! keeps the address from being reused by another client), so passing it to another client is
//! caught here, before the core's own check.

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};

use depositkit_core::describe::quote;
use depositkit_core::funding::{EvmProvider, FundingBalance, ProviderError, WalletProvider};
use depositkit_core::parse_raw_amount;
use serde_json::Value;

use crate::boundary::{self, FfiError, FfiResult};
use crate::deposit::{client_arg, depositkit_deposit_client, depositkit_user_data_free, json_out};
use crate::status::depositkit_status;
use crate::strings;

// --- the callback and its reply ----------------------------------------------------------------

/// The answer slot of one request to a host provider, handed to a `depositkit_provider_fn`.
///
/// Opaque: never dereference it. It is valid only until the callback it was given to returns,
/// and it takes exactly one answer: `depositkit_provider_reply_result` or
/// `depositkit_provider_reply_error`. Using it after the callback returned, or answering it
/// twice, is not undefined behaviour: the call fails with `DEPOSITKIT_STATUS_INVALID_ARGUMENT`
/// and changes nothing.
#[allow(non_camel_case_types)]
pub struct depositkit_provider_reply {
    _opaque: [u8; 0],
}

/// A host provider: an EVM wallet (EIP-1193), a Solana wallet (Phantom's shape) or a balance
/// provider, set with `depositkit_deposit_client_set_evm_wallet_provider`,
/// `depositkit_deposit_client_set_solana_wallet_provider` or
/// `depositkit_deposit_client_set_balance_provider`.
///
/// Called with the `user_data` given when it was set, the request's `method` (e.g.
/// `"eth_sendTransaction"`, `"connect"`, `"getWalletBalances"`) and its parameters as JSON
/// (`params_json`: an array for EVM methods, an object for Solana and balance methods; see
/// `docs/funding.md`, section 4). Both strings are NUL-terminated UTF-8, borrowed: valid only
/// during the call.
///
/// Before returning, the callback answers exactly once through `reply`:
/// `depositkit_provider_reply_result(reply, "<result as JSON>")`, or
/// `depositkit_provider_reply_error(reply, code, "message")` with an EIP-1193 code (4001: the
/// user rejected the request, 4100: unauthorized, 4902: unknown chain; any other code is a
/// failure). The answer may come from another thread, as long as the callback has not returned
/// yet. A callback that returns without a valid answer fails the request (an RPC failure).
/// `reply` is valid only until the callback returns.
///
/// Threads: the callback runs on a thread owned by the library (a worker of its runtime's
/// blocking pool) while a call such as `depositkit_deposit_client_fund_from_wallet` waits for
/// it; never on the thread that made that call, and never twice at once for the same provider
/// (two providers may be called at the same time). It may call the non-blocking depositkit
/// functions; the blocking ones of a deposit client fail there with
/// `DEPOSITKIT_STATUS_INTERNAL` (they must be called from the host's own threads). The calling
/// operation waits for the callback up to its `callTimeoutMs`, so it should return promptly.
///
/// A callback must not unwind (a C++ exception) or `longjmp` out of the call: that is undefined
/// behaviour.
#[allow(non_camel_case_types)]
pub type depositkit_provider_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        method: *const c_char,
        params_json: *const c_char,
        reply: *mut depositkit_provider_reply,
    ),
>;

type RawProviderFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut depositkit_provider_reply);

/// What a callback answered.
enum Answer {
    Result(Value),
    Error(ProviderError),
}

/// The pending requests of every host provider, by reply number: `None` until answered.
static REPLIES: LazyLock<Mutex<HashMap<usize, Option<Answer>>>> = LazyLock::new(Default::default);

/// The next reply number (0 is never used: it would be a NULL handle).
static NEXT_REPLY: AtomicUsize = AtomicUsize::new(1);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One pending request in [`REPLIES`]; leaving it (return or unwind) removes the entry, so a
/// late answer finds nothing.
struct PendingReply(usize);

impl PendingReply {
    fn open() -> PendingReply {
        let id = loop {
            let id = NEXT_REPLY.fetch_add(1, Ordering::Relaxed);
            if id != 0 {
                break id;
            }
        };
        lock(&REPLIES).insert(id, None);
        PendingReply(id)
    }

    /// The handle given to C: the number, as a pointer that is never dereferenced.
    fn handle(&self) -> *mut depositkit_provider_reply {
        std::ptr::without_provenance_mut(self.0)
    }

    /// Closes the request and returns its answer, if it got one.
    fn take(&self) -> Option<Answer> {
        lock(&REPLIES).remove(&self.0).flatten()
    }
}

impl Drop for PendingReply {
    fn drop(&mut self) {
        lock(&REPLIES).remove(&self.0);
    }
}

/// Records the answer `make` builds for the pending request `reply`: `NULL_ARGUMENT` when
/// NULL, `INVALID_ARGUMENT` when it is not pending (its callback returned, or it never
/// existed) or was answered already. `make` runs only for a pending, unanswered request; when
/// it fails the request stays unanswered.
fn answer(
    reply: *mut depositkit_provider_reply,
    make: impl FnOnce() -> FfiResult<Answer>,
) -> FfiResult<()> {
    let mut replies = lock(&REPLIES);
    match replies.get_mut(&reply.addr()) {
        None => Err(FfiError::new(
            depositkit_status::InvalidArgument,
            format!(
                "reply {reply:p} is not a pending provider request: a reply handle is valid only \
                 until the callback it was given to returns"
            ),
        )),
        Some(Some(_)) => Err(FfiError::new(
            depositkit_status::InvalidArgument,
            format!(
                "reply {reply:p} was answered already: answer each request once, with \
                 depositkit_provider_reply_result or depositkit_provider_reply_error"
            ),
        )),
        Some(slot) => {
            *slot = Some(make()?);
            Ok(())
        }
    }
}

/// Answers a provider request with its result (see `depositkit_provider_fn`).
///
/// `result_json` is the method's result as JSON text, copied before this returns: e.g.
/// `"\"0x2105\""` for `eth_chainId`, `"[\"0xf39f...\"]"` for `eth_accounts`, `"null"` for a
/// method without a result, `"{\"publicKey\": \"...\"}"` for Solana's `connect`.
///
/// Returns:
/// - `DEPOSITKIT_STATUS_OK`: the request has its answer;
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `reply` is not pending (its callback already
///   returned: a reply handle lives only during its callback) or was already answered, or when
///   `result_json` is not valid JSON (the message says which; the request then stays
///   unanswered and may still be answered);
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `reply` or `result_json` is NULL;
///   `DEPOSITKIT_STATUS_INVALID_UTF8` when `result_json` is not UTF-8.
///
/// Does not block. Thread-safe: may be called on any thread while the callback runs.
///
/// # Safety
/// `reply` may be any value (it is never dereferenced); `result_json` must be NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_provider_reply_result(
    reply: *mut depositkit_provider_reply,
    result_json: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        if reply.is_null() {
            return Err(FfiError::null_argument("reply"));
        }
        // SAFETY: the caller's contract above.
        let text = unsafe { strings::str_arg(result_json, "result_json") }?;
        answer(reply, || {
            serde_json::from_str(text).map(Answer::Result).map_err(|e| {
                FfiError::new(
                    depositkit_status::InvalidArgument,
                    format!("result_json is not valid JSON ({e}): {}", quote(text)),
                )
            })
        })
    })
}

/// Answers a provider request with an error (see `depositkit_provider_fn`).
///
/// `code` is an EIP-1193 code: 4001 when the user rejected the request (a transfer then fails
/// with `DEPOSITKIT_STATUS_FUNDING` and "rejected by the wallet (4001): <message>"), 4100
/// unauthorized, 4902 unknown chain; any other code (a JSON-RPC code, a node's) is a failure
/// of the wallet. `message` (NULL: none) says why in words; it is copied before this returns.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `reply` is not
/// pending (its callback already returned) or was already answered;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `reply` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`
/// when `message` is not UTF-8. Does not block. Thread-safe: may be called on any thread while
/// the callback runs.
///
/// # Safety
/// `reply` may be any value (it is never dereferenced); `message` must be NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_provider_reply_error(
    reply: *mut depositkit_provider_reply,
    code: i64,
    message: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        if reply.is_null() {
            return Err(FfiError::null_argument("reply"));
        }
        let message = if message.is_null() {
            String::new()
        } else {
            // SAFETY: the caller's contract above.
            unsafe { strings::str_arg(message, "message") }?.to_owned()
        };
        answer(reply, || Ok(Answer::Error(ProviderError::new(code, message))))
    })
}

/// A C provider with its `user_data`, as the core's `WalletProvider`. Dropping the last
/// reference calls `user_data_free`, once: only when the provider was set successfully
/// (`owned`): a failed registration leaves `user_data` to the caller.
pub(crate) struct HostProvider {
    callback: RawProviderFn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    /// Set once the provider was set: from then on the library owns `user_data`.
    owned: AtomicBool,
}

// SAFETY: the caller of the setters promises that the callback may be called with `user_data`
// on the library's threads and that `user_data_free` may be called on any thread; depositkit
// never dereferences `user_data`.
unsafe impl Send for HostProvider {}
// SAFETY: as above; the core never calls one provider twice at once.
unsafe impl Sync for HostProvider {}

impl HostProvider {
    fn new(
        callback: RawProviderFn,
        user_data: *mut c_void,
        user_data_free: depositkit_user_data_free,
    ) -> Arc<HostProvider> {
        Arc::new(HostProvider {
            callback,
            user_data,
            user_data_free,
            owned: AtomicBool::new(false),
        })
    }

    /// One request: opens a reply, calls the callback, reads the answer.
    fn call(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        let failure = |message: String| ProviderError::new(ProviderError::INTERNAL, message);
        let c_method = CString::new(method)
            .map_err(|_| failure(format!("the method name {} holds a NUL byte", quote(method))))?;
        // JSON text escapes control characters, so it never holds a NUL byte.
        let c_params = CString::new(params.to_string())
            .map_err(|_| failure(format!("the parameters of {method} hold a NUL byte")))?;
        let reply = PendingReply::open();
        // SAFETY: the caller of the setter promised a callback that may be called with its
        // `user_data` on this thread, reads `method` and `params_json` only during the call,
        // and never unwinds; both strings live until the call returns. `reply` is a number
        // the callback hands back to depositkit, never dereferenced.
        unsafe {
            (self.callback)(self.user_data, c_method.as_ptr(), c_params.as_ptr(), reply.handle())
        };
        match reply.take() {
            Some(Answer::Result(value)) => Ok(value),
            Some(Answer::Error(error)) => Err(error),
            None => Err(failure(format!(
                "the provider callback returned without answering {method}: answer with \
                 depositkit_provider_reply_result or depositkit_provider_reply_error before \
                 returning"
            ))),
        }
    }
}

impl WalletProvider for HostProvider {
    fn request(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        contained(method, || self.call(method, params))
    }
}

/// Runs one request of the bridging so that no panic of it unwinds into the core's thread (or
/// through C): a panic becomes a provider failure.
fn contained(
    method: &str,
    call: impl FnOnce() -> Result<Value, ProviderError>,
) -> Result<Value, ProviderError> {
    match panic::catch_unwind(AssertUnwindSafe(call)) {
        Ok(answer) => answer,
        Err(payload) => {
            // Dropping the payload runs its destructor, which may panic too: leak it then.
            if let Err(again) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
                std::mem::forget(again);
            }
            Err(ProviderError::new(
                ProviderError::INTERNAL,
                format!(
                    "depositkit panicked while calling the provider for {method}; this is a bug, \
                     please report it"
                ),
            ))
        }
    }
}

impl Drop for HostProvider {
    fn drop(&mut self) {
        if !self.owned.load(Ordering::Acquire) {
            return; // never set: `user_data` stays the caller's
        }
        if let Some(free) = self.user_data_free {
            // SAFETY: the caller of the setter promised `user_data_free` may be called once
            // with `user_data`, on any thread, once the provider is dropped: `Drop` runs once,
            // after every call of the callback returned (each holds a reference).
            unsafe { free(self.user_data) };
        }
    }
}

/// The host providers a client handle holds a reference to, so that it decides where the last
/// reference goes (see the module's documentation).
#[derive(Default)]
pub(crate) struct HostProviders(Mutex<Slots>);

#[derive(Default)]
struct Slots {
    evm: Option<Arc<HostProvider>>,
    solana: Option<Arc<HostProvider>>,
    balance: Option<Arc<HostProvider>>,
}

#[derive(Clone, Copy)]
enum Kind {
    Evm,
    Solana,
    Balance,
}

impl HostProviders {
    /// Puts `provider` in the slot of `kind`; returns the one it replaces, to be dropped by the
    /// caller outside this lock.
    fn replace(
        &self,
        kind: Kind,
        provider: Option<Arc<HostProvider>>,
    ) -> Option<Arc<HostProvider>> {
        let mut slots = lock(&self.0);
        let slot = match kind {
            Kind::Evm => &mut slots.evm,
            Kind::Solana => &mut slots.solana,
            Kind::Balance => &mut slots.balance,
        };
        std::mem::replace(slot, provider)
    }
}

/// Drops every provider of `client` (closing or freeing it, once the core's `close()` dropped its
/// own references): the handle's, outside every lock, so `user_data_free` runs here unless a
/// call of the provider is still running (then right after it returns, on its thread).
pub(crate) fn release_providers(client: &depositkit_deposit_client) {
    let released = std::mem::take(&mut *lock(&client.providers.0));
    drop(released);
}

/// The body of the provider setters: checks `client`, `provider` and `address` in order, sets
/// the provider through `set`, and on success records it in the slot of `kind` (the library
/// now owns `user_data`). On failure `user_data` stays the caller's.
///
/// # Safety
/// As the setters' contracts.
unsafe fn set_host_provider(
    client: *const depositkit_deposit_client,
    kind: Kind,
    provider: depositkit_provider_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    address: *const c_char,
    set: impl FnOnce(
        &depositkit_deposit_client,
        Arc<dyn WalletProvider>,
        Option<&str>,
    ) -> depositkit_core::Result<()>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let client = unsafe { client_arg(client) }?;
    let callback = provider.ok_or_else(|| FfiError::null_argument("provider"))?;
    // SAFETY: the caller's contract above.
    let address = unsafe { strings::opt_str_arg(address, "address") }?;
    let host = HostProvider::new(callback, user_data, user_data_free);
    // Not `owned` yet: when `set` fails, dropping `host` leaves `user_data` alone.
    set(client, Arc::clone(&host) as Arc<dyn WalletProvider>, address)?;
    host.owned.store(true, Ordering::Release);
    let replaced = client.providers.replace(kind, Some(host));
    drop(replaced);
    Ok(())
}

// --- the wallets -------------------------------------------------------------------------------

/// Sets the EVM funding wallet to a JSON-RPC node that holds the wallet's unlocked account
/// (anvil's development accounts, a local node): requests go to `url`, and
/// `wallet_switchEthereumChain` moves to the chain's entry of `funding.evmRpcUrls`. Replaces
/// the EVM wallet set before (a provider set with
/// `depositkit_deposit_client_set_evm_wallet_provider` is released: its `user_data_free` is
/// called).
///
/// `address` (NULL: asked from the node with `eth_accounts` on first use) is the account to
/// send from. A funding wallet is never the owner or signer of the deposit account: it only
/// sends money to the deposit addresses.
///
/// The URL may hold an API key in its path: depositkit never logs it. Nothing is sent now.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not
/// enabled (`"funding": {"enabled": true}` in the configuration) or `url` is not an http(s)
/// URL; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `address` is not an EVM address (the message
/// quotes it); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` or `url` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8`. On failure the wallet set before stays.
///
/// Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `url` and
/// `address` must be NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_evm_wallet_url(
    client: *const depositkit_deposit_client,
    url: *const c_char,
    address: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let url = unsafe { strings::str_arg(url, "url") }?;
        // SAFETY: the caller's contract above.
        let address = unsafe { strings::opt_str_arg(address, "address") }?;
        client.inner.set_evm_wallet(EvmProvider::Url(url.to_owned()), address)?;
        let replaced = client.providers.replace(Kind::Evm, None);
        drop(replaced);
        Ok(())
    })
}

/// Sets the EVM funding wallet to a host provider: an EIP-1193 wallet behind `provider` (see
/// `depositkit_provider_fn`). depositkit asks it `eth_requestAccounts`, `eth_accounts`,
/// `wallet_requestPermissions`, `eth_chainId`, `wallet_switchEthereumChain`, `eth_gasPrice`,
/// `eth_estimateGas`, `eth_getBalance`, `eth_call`, `eth_sendTransaction` and
/// `eth_getTransactionReceipt` (receipts and reads may go to `funding.evmRpcUrls` instead).
/// Replaces the EVM wallet set before (releasing a previous provider's `user_data`).
///
/// `address` (NULL: the wallet's first `eth_accounts` entry, asked on first use, or the one
/// `depositkit_deposit_client_connect_evm_wallet` picks) is the account to send from.
///
/// On success the library owns `user_data`: `user_data_free` (if not NULL) is called with it
/// exactly once, when the provider is dropped (replaced by another EVM wallet, cleared with
/// `depositkit_deposit_client_clear_funding_wallet`, or the client closed or freed), on the
/// thread doing that (or, when a call of the provider is running at that moment, on that call's
/// thread once it returns), never while a call of `provider` runs and never while the library
/// holds a lock. On failure nothing is set and `user_data_free` is not called (`user_data`
/// stays the caller's).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not
/// enabled; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `address` is not an EVM address;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`
/// when `client` or `provider` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Does not block; nothing is asked of the wallet now. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `address` must
/// be NULL or a NUL-terminated string. `provider` must follow the rules of
/// `depositkit_provider_fn`; `user_data` (which may be NULL) must stay valid for it until
/// `user_data_free` is called (or, without `user_data_free`, until the provider is dropped) and
/// may be used on the library's threads; `user_data_free` must be safe to call on any thread
/// and must not unwind or `longjmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_evm_wallet_provider(
    client: *const depositkit_deposit_client,
    provider: depositkit_provider_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    address: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        unsafe {
            set_host_provider(client, Kind::Evm, provider, user_data, user_data_free, address, {
                |c, host, address| c.inner.set_evm_wallet(EvmProvider::Host(host), address)
            })
        }
    })
}

/// Sets the Solana funding wallet to a host provider with Phantom's shape (see
/// `depositkit_provider_fn`): depositkit asks it `connect` (answer `{"publicKey":
/// "<base58>"}`) and `signAndSendTransaction` with `{"transaction": "<base64 of the unsigned
/// transaction depositkit built>", "encoding": "base64"}` (answer `{"signature": "<base58>"}`
/// or the bare signature string). Blockhashes, balances and confirmations come from
/// `funding.solanaRpcUrl`. Replaces the Solana wallet set before (releasing its `user_data`).
///
/// `address` (NULL: known after `depositkit_deposit_client_connect_solana_wallet`) is the
/// wallet's public key, base58.
///
/// Ownership of `user_data` and the calls of `user_data_free` are as for
/// `depositkit_deposit_client_set_evm_wallet_provider` (replaced by another Solana wallet,
/// cleared, or the client closed or freed).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not
/// enabled; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `address` is not a Solana address;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`
/// when `client` or `provider` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Does not block. Thread-safe.
///
/// # Safety
/// As for `depositkit_deposit_client_set_evm_wallet_provider`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_solana_wallet_provider(
    client: *const depositkit_deposit_client,
    provider: depositkit_provider_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    address: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        unsafe {
            set_host_provider(client, Kind::Solana, provider, user_data, user_data_free, address, {
                |c, host, address| c.inner.set_solana_wallet(host, address)
            })
        }
    })
}

/// Sets (or, with `provider` NULL, removes) the host's balance provider, the first source of
/// `depositkit_deposit_client_wallet_balances` when set (ahead of `funding.balanceProvider:
/// "rpc"`, `apiKey`, `proxyUrl` and the hosted default; `docs/funding.md`, section 3).
///
/// depositkit calls it with method `"getWalletBalances"` and params `{"evmAddress": "0x..." |
/// null, "solanaAddress": "..." | null, "chainIds": [1, 56, 8453, 42161, 101]}`; it answers the
/// balances array `[{"chainId": 8453, "token": "USDC", "tokenAddress": "0x..." | null,
/// "decimals": 6, "rawAmount": "25000000", "priceUSD": 1.0 | null, "valueUSD": 25.0 | null}]`
/// (or `{"balances": [...]}`). `evmAddress` is EIP-55 checksummed, as is every EVM wallet
/// address depositkit hands out (a balance's `walletAddress`, the connected account).
///
/// Ownership of `user_data` and the calls of `user_data_free` are as for
/// `depositkit_deposit_client_set_evm_wallet_provider` (replaced by another balance provider,
/// removed, or the client closed or freed). With `provider` NULL, `user_data` and
/// `user_data_free` are ignored.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`. `provider`,
/// `user_data` and `user_data_free` follow the rules of
/// `depositkit_deposit_client_set_evm_wallet_provider`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_balance_provider(
    client: *const depositkit_deposit_client,
    provider: depositkit_provider_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
) -> depositkit_status {
    boundary::status(|| {
        if provider.is_none() {
            // SAFETY: the caller's contract above.
            let client = unsafe { client_arg(client) }?;
            client.inner.set_balance_provider(None)?;
            let removed = client.providers.replace(Kind::Balance, None);
            drop(removed);
            return Ok(());
        }
        // SAFETY: the caller's contract above.
        unsafe {
            set_host_provider(
                client,
                Kind::Balance,
                provider,
                user_data,
                user_data_free,
                std::ptr::null(),
                |c, host, _| c.inner.set_balance_provider(Some(host)),
            )
        }
    })
}

/// Forgets both funding wallets (EVM and Solana; the balance provider stays). Their providers
/// are released: `user_data_free` is called for each host provider, as described at
/// `depositkit_deposit_client_set_evm_wallet_provider`. Funding operations then fail with
/// `DEPOSITKIT_STATUS_FUNDING` ("no EVM wallet is connected") until a wallet is set again.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` is NULL.
/// Works on a closed client too. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_clear_funding_wallet(
    client: *const depositkit_deposit_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        client.inner.clear_funding_wallet();
        let evm = client.providers.replace(Kind::Evm, None);
        let solana = client.providers.replace(Kind::Solana, None);
        drop((evm, solana));
        Ok(())
    })
}

/// The body of the exports that ask a wallet one thing and hand out a string.
///
/// # Safety
/// `client` must be NULL or a live handle; `out` must be NULL or point to a writable `char *`.
unsafe fn wallet_answer(
    client: *const depositkit_deposit_client,
    out: *mut *mut c_char,
    out_name: &'static str,
    ask: impl FnOnce(&depositkit_deposit_client) -> FfiResult<String>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let client = unsafe { client_arg(client) }?;
    // SAFETY: the caller's contract above.
    let out = unsafe { boundary::out(out, out_name) }?;
    let text = ask(client)?;
    out.write(strings::owned(text)?);
    Ok(())
}

/// Connects the EVM funding wallet (`eth_requestAccounts`; a wallet may prompt its user): the
/// first account becomes the wallet's address, used by later transfers and balance reads.
///
/// On success `*out_address` is a new string owned by the caller (free it with
/// `depositkit_string_free`): that account, as the wallet spelled it. On failure it is not
/// written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_FUNDING` when no EVM wallet is set ("no EVM wallet is connected"), the
///   wallet rejected the request ("rejected by the wallet (4001): ..."), failed it, or answered
///   no account or an invalid one;
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not enabled;
/// - `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the
///   client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks the calling thread while the wallet answers (up to `callTimeoutMs`); calls the
/// provider on a library thread. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_address`
/// must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_connect_evm_wallet(
    client: *const depositkit_deposit_client,
    out_address: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        wallet_answer(client, out_address, "out_address", |c| Ok(c.inner.connect_evm_wallet()?))
    })
}

/// The EVM funding wallet's accounts (`eth_accounts`, no prompt).
///
/// On success `*out_accounts_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of addresses, `["0xf39F..."]` (empty when the
/// wallet shares none). On failure it is not written.
///
/// Returns as `depositkit_deposit_client_connect_evm_wallet`. Blocks while the wallet answers.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_accounts_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_evm_accounts(
    client: *const depositkit_deposit_client,
    out_accounts_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        wallet_answer(client, out_accounts_json, "out_accounts_json", |c| {
            let accounts = c.inner.evm_accounts()?;
            Ok(Value::from(accounts).to_string())
        })
    })
}

/// Lets the user pick the EVM wallet's accounts again (`wallet_requestPermissions
/// [{"eth_accounts": {}}]`, then `eth_accounts`); the first account becomes the wallet's
/// address.
///
/// On success `*out_accounts_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the JSON array of the accounts now shared. On failure it is not
/// written.
///
/// Returns as `depositkit_deposit_client_connect_evm_wallet`. Blocks while the wallet answers.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_accounts_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_prompt_evm_account_selection(
    client: *const depositkit_deposit_client,
    out_accounts_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        wallet_answer(client, out_accounts_json, "out_accounts_json", |c| {
            let accounts = c.inner.prompt_evm_account_selection()?;
            Ok(Value::from(accounts).to_string())
        })
    })
}

/// Connects the Solana funding wallet (Phantom's `connect`; a wallet may prompt its user): its
/// public key becomes the wallet's address.
///
/// On success `*out_address` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the public key, base58. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_FUNDING` when no Solana wallet is set,
/// the wallet rejected or failed the request, or answered no valid public key; otherwise as
/// `depositkit_deposit_client_connect_evm_wallet`. Blocks while the wallet answers.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_address`
/// must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_connect_solana_wallet(
    client: *const depositkit_deposit_client,
    out_address: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        wallet_answer(client, out_address, "out_address", |c| {
            Ok(c.inner.connect_solana_wallet()?)
        })
    })
}

// --- balances ----------------------------------------------------------------------------------

/// The balances of the funding wallets, as `depositkit_deposit_client_wallet_balances` found
/// them: an immutable list, tied to the client that issued it.
///
/// Opaque: read with `depositkit_funding_balances_len` and `depositkit_funding_balances_get`,
/// pass an entry (by index) to `depositkit_deposit_client_fund_from_wallet` of the same client,
/// release with `depositkit_funding_balances_free`. Thread-safe: any number of threads may read
/// one list at once; free it once, after every call using it has returned. It does not keep the
/// client alive, and stays readable after the client is freed.
#[allow(non_camel_case_types)]
pub struct depositkit_funding_balances {
    items: Vec<FundingBalance>,
    /// The issuing handle's allocation (a `Weak` keeps the address from being reused).
    issuer: Weak<depositkit_deposit_client>,
}

/// The list behind a handle: `DEPOSITKIT_STATUS_NULL_ARGUMENT` naming `balances` when NULL.
///
/// # Safety
/// `balances` must be NULL or a live list from `depositkit_deposit_client_wallet_balances`.
unsafe fn balances_arg<'a>(
    balances: *const depositkit_funding_balances,
) -> FfiResult<&'a depositkit_funding_balances> {
    // SAFETY: the caller's contract above; `Box::into_raw` gave an aligned pointer.
    unsafe { balances.as_ref() }.ok_or_else(|| FfiError::null_argument("balances"))
}

/// The entry `index` of `balances`: `INVALID_ARGUMENT` naming the index when out of range.
fn balance_at(balances: &depositkit_funding_balances, index: usize) -> FfiResult<&FundingBalance> {
    balances.items.get(index).ok_or_else(|| {
        FfiError::new(
            depositkit_status::InvalidArgument,
            format!(
                "index {index} is out of range: the balances list holds {} entr{}",
                balances.items.len(),
                if balances.items.len() == 1 { "y" } else { "ies" }
            ),
        )
    })
}

/// Reads the balances of the funding wallets (spec `getWalletBalances`) from the first source
/// configured: the host's balance provider (`depositkit_deposit_client_set_balance_provider`),
/// else `funding.balanceProvider: "rpc"` (the chains' nodes at `funding.evmRpcUrls` and
/// `funding.solanaRpcUrl`), else `funding.apiKey` (the balance API), else `funding.proxyUrl`,
/// else the hosted proxy. The addresses asked for are the EVM wallet's (its address, or its
/// first `eth_accounts` entry) and the Solana wallet's (once known). Only the five funding
/// chains (Ethereum, BNB Chain, Base, Arbitrum, Solana) and known tokens are kept, with a
/// positive amount and, when priced, a value of at least `funding.minValueUSD`.
///
/// On success `*out_balances` is a new list owned by the caller (release it with
/// `depositkit_funding_balances_free`; it may be empty). Each entry, read with
/// `depositkit_funding_balances_get`, is
///
/// ```json
/// {"chainId": 8453, "token": "USDC", "tokenAddress": "0x8335...", "decimals": 6,
///  "rawAmount": "25000000", "priceUSD": 1.0, "valueUSD": 25.0, "amount": "25",
///  "walletAddress": "0xf39Fd6e5...", "source": "rpc"}
/// ```
///
/// (`walletAddress` EIP-55 checksummed; `tokenAddress` null for the chain's native asset; `priceUSD`/`valueUSD` null when the
/// source did not price it; `source` one of `"balanceProvider"`, `"rpc"`, `"apiKey"`,
/// `"proxyUrl"`, `"hosted"`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_FUNDING` when no wallet is set, or the source failed (the message names
///   the source, never a key);
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not enabled;
/// - `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the
///   client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks the calling thread while the source answers (up to `callTimeoutMs`). Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_balances`
/// must be NULL or point to a writable `const depositkit_funding_balances *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_wallet_balances(
    client: *const depositkit_deposit_client,
    out_balances: *mut *const depositkit_funding_balances,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let handle = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_balances, "out_balances") }?;
        let items = handle.inner.get_wallet_balances()?;
        // SAFETY: `client` is a live handle from `Arc::into_raw` (the caller's contract): one
        // more strong reference for the moment it takes to make a `Weak` of it.
        let issuer = unsafe {
            Arc::increment_strong_count(client);
            Arc::downgrade(&Arc::from_raw(client))
        };
        let list = Box::new(depositkit_funding_balances { items, issuer });
        out.write(Box::into_raw(list).cast_const());
        Ok(())
    })
}

/// The number of entries of a balances list; 0 when `balances` is NULL. Never fails; does not
/// change the last error. Thread-safe.
///
/// # Safety
/// `balances` must be NULL or a live list from `depositkit_deposit_client_wallet_balances`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_funding_balances_len(
    balances: *const depositkit_funding_balances,
) -> usize {
    // SAFETY: the caller's contract above.
    boundary::value(0, || unsafe { balances.as_ref() }.map_or(0, |list| list.items.len()))
}

/// Entry `index` of a balances list, as JSON (the shape is described at
/// `depositkit_deposit_client_wallet_balances`).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `index` is not
/// below `depositkit_funding_balances_len` (the message names both);
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `balances` or `out_json` is NULL. Does not block.
/// Thread-safe.
///
/// # Safety
/// `balances` must be NULL or a live list from `depositkit_deposit_client_wallet_balances`;
/// `out_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_funding_balances_get(
    balances: *const depositkit_funding_balances,
    index: usize,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let balances = unsafe { balances_arg(balances) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_json, "out_json") }?;
        let balance = balance_at(balances, index)?;
        out.write(json_out(serde_json::to_string(balance))?);
        Ok(())
    })
}

/// Releases a balances list. NULL is accepted and ignored. May be called on any thread, once,
/// after every call using the list has returned; before or after the client is freed. Does not
/// change the last error.
///
/// # Safety
/// `balances` must be NULL or a list from `depositkit_deposit_client_wallet_balances` that has
/// not been freed yet and that no other thread is using; after this call it must not be used
/// again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_funding_balances_free(
    balances: *const depositkit_funding_balances,
) {
    boundary::value((), || {
        if !balances.is_null() {
            // SAFETY: the caller promises `balances` came from `Box::into_raw` in
            // `depositkit_deposit_client_wallet_balances` and is released only once.
            drop(unsafe { Box::from_raw(balances.cast_mut()) });
        }
    });
}

/// Sends money from a funding wallet to the client's deposit address (spec `fundFromWallet`):
/// entry `index` of `balances` (from this client's `depositkit_deposit_client_wallet_balances`)
/// says which wallet, chain and token. The watcher then detects the transfer and sweeps it like
/// any deposit (with `"deposit:lifecycle"` events).
///
/// `raw_amount` is the amount in the token's smallest units as a decimal string (`"5000000"`
/// is 5 USDC on Base); NULL sends the most it can: the whole token balance, or for the native
/// asset the balance less the gas.
///
/// EVM: the wallet is switched to the balance's chain when needed; the gas price is
/// `eth_gasPrice` x 1.25; a native transfer uses 21,000 gas, an ERC-20 `transfer` the
/// estimate x 1.2, and the wallet's native balance must cover the gas. The transaction is sent
/// with `eth_sendTransaction` through the wallet and its receipt awaited. Solana: a system
/// transfer, or `TransferChecked` (creating the deposit address's token account when missing),
/// signed and sent by the wallet and confirmed. Nothing is sent when a check fails; nothing is
/// lost when the wallet rejects.
///
/// On success `*out_result_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`):
///
/// ```json
/// {"txHash": "0x...", "chainId": 8453, "token": "USDC", "rawAmount": "5000000",
///  "amount": "5", "from": "0xf39f...", "to": "0x<deposit address>"}
/// ```
///
/// On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_FUNDING` (502) saying why: `"insufficient gas: ..."` (naming the need
///   and the holding), `"insufficient funds: ..."`, `"rejected by the wallet (4001): ..."`,
///   `"RPC failure on <chain>: ..."`, `"transaction <hash> reverted"`, or no wallet set for
///   the balance's chain family;
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `index` is out of range, `balances` was issued
///   by another client, or `raw_amount` is not a decimal integer (or is zero or too large; the
///   message quotes it);
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not enabled or the client is not
///   initialized; `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs` (a transaction already sent
///   may still land); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
///   `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `balances` or `out_result_json` is NULL;
///   `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread until the transfer is confirmed (up to `callTimeoutMs`); calls the
/// wallet's provider on a library thread. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `balances` must
/// be NULL or a live list from `depositkit_deposit_client_wallet_balances`; `raw_amount` must
/// be NULL or a NUL-terminated string; `out_result_json` must be NULL or point to a writable
/// `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_fund_from_wallet(
    client: *const depositkit_deposit_client,
    balances: *const depositkit_funding_balances,
    index: usize,
    raw_amount: *const c_char,
    out_result_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let handle = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let list = unsafe { balances_arg(balances) }?;
        let balance = balance_at(list, index)?;
        if !std::ptr::eq(list.issuer.as_ptr(), client) {
            return Err(FfiError::new(
                depositkit_status::InvalidArgument,
                format!(
                    "balances was issued by another client (entry {index}: {} on chain {} of \
                     wallet {}): pass a list from this client's \
                     depositkit_deposit_client_wallet_balances",
                    balance.token(),
                    balance.chain_id(),
                    balance.wallet_address()
                ),
            ));
        }
        // SAFETY: the caller's contract above.
        let raw_amount = match unsafe { strings::opt_str_arg(raw_amount, "raw_amount") }? {
            None => None,
            Some(text) => Some(parse_raw_amount(text).map_err(|e| {
                FfiError::new(
                    depositkit_status::InvalidArgument,
                    format!("raw_amount: {}", e.message()),
                )
            })?),
        };
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_result_json, "out_result_json") }?;
        let result = handle.inner.fund_from_wallet(balance, raw_amount)?;
        out.write(json_out(serde_json::to_string(&result))?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_handles_are_numbers_never_reused() {
        let a = PendingReply::open();
        let b = PendingReply::open();
        assert_ne!(a.handle(), b.handle());
        assert!(!a.handle().is_null());
        let handle = a.handle();
        answer(handle, || Ok(Answer::Result(Value::from(7)))).unwrap();
        let again = answer(handle, || Ok(Answer::Result(Value::Null))).unwrap_err();
        assert_eq!(again.status, depositkit_status::InvalidArgument);
        assert!(again.message.contains("answered already"), "{}", again.message);
        assert!(matches!(a.take(), Some(Answer::Result(v)) if v == 7));
        drop(a);
        let late = answer(handle, || Ok(Answer::Result(Value::Null))).unwrap_err();
        assert!(late.message.contains("not a pending provider request"), "{}", late.message);
        // A failing answer leaves the request unanswered.
        let bad =
            answer(b.handle(), || Err(FfiError::new(depositkit_status::InvalidArgument, "bad")));
        assert!(bad.is_err());
        assert!(b.take().is_none());
    }

    #[test]
    fn a_panic_in_the_bridging_is_a_provider_failure() {
        let err = contained("eth_chainId", || panic!("bridging bug")).unwrap_err();
        assert_eq!(err.code, ProviderError::INTERNAL);
        assert!(err.message.contains("panicked while calling the provider for eth_chainId"));
        assert_eq!(contained("x", || Ok(Value::from(1))).unwrap(), Value::from(1));
        // A pending reply is closed when the call unwinds: a late answer finds nothing.
        let mut handle = std::ptr::null_mut();
        let _ = contained("eth_accounts", || {
            let reply = PendingReply::open();
            handle = reply.handle();
            panic!("after opening a reply")
        });
        let late = answer(handle, || Ok(Answer::Result(Value::Null))).unwrap_err();
        assert_eq!(late.status, depositkit_status::InvalidArgument);
    }
}
