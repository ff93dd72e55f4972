//! The devnet emulator in process (opt-in cargo feature `devnet`): a host starts the
//! local emulator of the remote services (JWT service, signer, universal-account service and
//! the user-lookup service) on loopback, points a deposit client's `servicesUrl` at it, and
//! drives it: deposits to any address, ledger balances, prices and sweep faults. Started with
//! a chains file (`depositkit_devnet_start_with_chains`), it backs those chains with real local
//! nodes (anvil, the SVM of `tests/chains/`), reads balances from them
//! (`depositkit_devnet_chain_balance`) and completes simulated onramp orders
//! (`depositkit_devnet_complete_onramp_order`).
//!
//! A devnet is an opaque handle backed by an `Arc`, like the clients. `RunningDevnet` is `Send`
//! but not `Sync` (it waits on a channel when it stops), so the handle keeps it behind a mutex;
//! calls on one devnet are serialized, which costs nothing for a test tool.
//!
//! Production builds (without the feature, the default) leave all this out: the header still
//! declares these functions inside `#if defined(DEPOSITKIT_DEVNET)`, and the library lacks them.

mod faults;
#[cfg(test)]
mod tests;

use std::ffi::c_char;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ::depositkit_devnet::{ChainsConfig, Devnet, DevnetConfig, RunningDevnet};

use depositkit_core::TokenType;
use depositkit_core::describe::quote;

use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;
use crate::strings;
use crate::tokens::token_arg;

/// How long freeing a devnet lets in-flight requests finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A devnet server running in this process, on a loopback port of its own, with its own
/// thread and runtime.
///
/// Opaque: created by `depositkit_devnet_start`, used through a `const depositkit_devnet *`,
/// released by `depositkit_devnet_free`. Thread-safe: any number of threads may use one devnet
/// at once (its calls take turns), and free it on any thread once no call is using it.
///
/// Only in builds with the opt-in cargo feature `devnet`; define `DEPOSITKIT_DEVNET`
/// before including this header to declare these functions.
#[allow(non_camel_case_types)]
pub struct depositkit_devnet {
    // Dropped in this order: the server stops before its temporary directory is removed.
    running: Mutex<RunningDevnet>,
    _temp: Option<TempDir>,
}

/// A directory removed with its content on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> FfiResult<TempDir> {
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "depositkit-devnet-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir(&path).map_err(|e| {
            FfiError::new(
                depositkit_status::DepositSdk,
                format!("cannot create the devnet's temporary directory {}: {e}", path.display()),
            )
        })?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl depositkit_devnet {
    fn running(&self) -> MutexGuard<'_, RunningDevnet> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A devnet failure as a status: bad input is `INVALID_ARGUMENT`, a missing record
/// `NOT_FOUND`, a database written by a newer devnet `CONFIGURATION`, anything else (the
/// database, a socket, a thread) `DEPOSIT_SDK`. The message is devnet's.
pub(super) fn devnet_error(err: ::depositkit_devnet::Error) -> FfiError {
    use ::depositkit_devnet::Error as E;
    let status = match &err {
        E::InvalidInput { .. } | E::Json { .. } | E::ImportRecord { .. } | E::Conflict(_) => {
            depositkit_status::InvalidArgument
        }
        E::NotFound(_) => depositkit_status::NotFound,
        E::SchemaVersion { .. } => depositkit_status::Configuration,
        _ => depositkit_status::DepositSdk,
    };
    FfiError::new(status, err.to_string())
}

/// The devnet behind a handle: `DEPOSITKIT_STATUS_NULL_ARGUMENT` naming `devnet` when NULL.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`, not freed before `'a`
/// ends (the duration of the call).
pub(super) unsafe fn devnet_arg<'a>(
    devnet: *const depositkit_devnet,
) -> FfiResult<&'a depositkit_devnet> {
    // SAFETY: the caller's contract above; `Arc::into_raw` gave an aligned pointer to a value
    // that lives until the handle is freed.
    unsafe { devnet.as_ref() }.ok_or_else(|| FfiError::null_argument("devnet"))
}

/// Starts a devnet server in this process on `127.0.0.1` and a free port, serving the deposit
/// services of `docs/protocol.md` (and the user-lookup service) from the SQLite database at
/// `db_path`, created with its schema when missing. `db_path` NULL means a fresh database in a
/// new temporary directory, removed by `depositkit_devnet_free`. With `fault_injection` the
/// HTTP fault endpoints (`/devnet/faults`, ...) are served too; the functions below work either
/// way. Every chain lives on devnet's ledger (`depositkit_devnet_start_with_chains` backs chains
/// with real local nodes).
///
/// The server answers when this returns: give `depositkit_devnet_services_url` to a deposit
/// client as its `servicesUrl`. The first start on a new database generates the JWT signing
/// key (well under a second).
///
/// On success `*out_devnet` is a new handle owned by the caller: release it with
/// `depositkit_devnet_free`. On failure `*out_devnet` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_devnet` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8` when `db_path` is not UTF-8;
/// `DEPOSITKIT_STATUS_CONFIGURATION` when the database was written by a newer devnet;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the database cannot be opened, no port can be bound or
/// a thread cannot be started (the message says which).
///
/// Only with the cargo feature `devnet`. Thread-safe.
///
/// # Safety
/// `db_path` must be NULL or a NUL-terminated string; `out_devnet` must be NULL or point to a
/// writable `const depositkit_devnet *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_start(
    db_path: *const c_char,
    fault_injection: bool,
    out_devnet: *mut *const depositkit_devnet,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let db_path = unsafe { strings::opt_str_arg(db_path, "db_path") }?;
        // SAFETY: the caller's contract above.
        let out_devnet = unsafe { boundary::out(out_devnet, "out_devnet") }?;
        out_devnet.write(start(db_path, fault_injection, None)?);
        Ok(())
    })
}

/// Starts a devnet server in this process as `depositkit_devnet_start` does, with the chains
/// of `chains_json` backed by real local nodes (`docs/funding.md`, section 2): deposits on them
/// are real transfers to the deposit addresses (devnet derives a key per account), sweeps and
/// refunds are real transactions from a vault devnet stocks with the chains' development
/// methods, and balances are read from the chains. Chains not in the file stay on devnet's
/// ledger.
///
/// `chains_json` is the text of a chains file, the JSON line `tests/chains/launch.py` prints:
///
/// ```json
/// {"evm": [{"chainId": 8453, "rpcUrl": "http://127.0.0.1:40123",
///           "tokens": {"USDC": {"address": "0x8335...", "decimals": 6}, ...}}, ...],
///  "solana": {"rpcUrl": "http://127.0.0.1:40200", "mints": {"USDC": {...}, ...}},
///  "evmDevAccounts": [{"address": "0xf39F...", "privateKey": "0xac09..."}, ...]}
/// ```
///
/// (`solana` and `evmDevAccounts` optional). The nodes must be running: this connects to each,
/// checks its chain id and stocks the vault before it returns (a few seconds at most). The
/// balance API is served at `{servicesUrl}/balances` with the key `devnet-balance-key`, the
/// balance proxy at `{servicesUrl}/balance-proxy`, the simulated onramp widget at
/// `{servicesUrl}/onramp`. `depositkit_devnet_deposit` refuses chain-backed chains (send a
/// real transfer); `depositkit_devnet_chain_balance` reads them.
///
/// On success `*out_devnet` is a new handle owned by the caller: release it with
/// `depositkit_devnet_free`. On failure `*out_devnet` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `chains_json` is
/// not valid JSON or not a valid chains file (an unknown chain, a token at an address other
/// than depositkit's, ...; the message says which); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when a node
/// cannot be reached, answers another chain id or refuses the stocking (the message names the
/// chain), or as `depositkit_devnet_start`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when
/// `chains_json` or `out_devnet` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`;
/// `DEPOSITKIT_STATUS_CONFIGURATION` as `depositkit_devnet_start`.
///
/// Only with the cargo feature `devnet`. Blocks while it connects. Thread-safe.
///
/// # Safety
/// `db_path` must be NULL or a NUL-terminated string; `chains_json` must be NULL or a
/// NUL-terminated string; `out_devnet` must be NULL or point to a writable
/// `const depositkit_devnet *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_start_with_chains(
    db_path: *const c_char,
    fault_injection: bool,
    chains_json: *const c_char,
    out_devnet: *mut *const depositkit_devnet,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let db_path = unsafe { strings::opt_str_arg(db_path, "db_path") }?;
        // SAFETY: the caller's contract above.
        let chains_json = unsafe { strings::str_arg(chains_json, "chains_json") }?;
        // SAFETY: the caller's contract above.
        let out_devnet = unsafe { boundary::out(out_devnet, "out_devnet") }?;
        let chains = ChainsConfig::from_json(chains_json).map_err(|e| {
            FfiError::new(
                depositkit_status::InvalidArgument,
                format!("chains_json is not a valid chains file: {e}"),
            )
        })?;
        out_devnet.write(start(db_path, fault_injection, Some(chains))?);
        Ok(())
    })
}

/// Starts a devnet (the body of both start functions) and hands out its handle.
fn start(
    db_path: Option<&str>,
    fault_injection: bool,
    chains: Option<ChainsConfig>,
) -> FfiResult<*const depositkit_devnet> {
    let (path, temp) = match db_path {
        Some(path) => (PathBuf::from(path), None),
        None => {
            let temp = TempDir::new()?;
            (temp.0.join("devnet.sqlite"), Some(temp))
        }
    };
    let mut config = DevnetConfig::new(path);
    config.fault_injection = fault_injection;
    config.shutdown_grace = SHUTDOWN_GRACE;
    if let Some(chains) = chains {
        config = config.with_chains(chains);
    }
    let running = Devnet::start(config).map_err(devnet_error)?;
    let devnet = depositkit_devnet { running: Mutex::new(running), _temp: temp };
    Ok(Arc::into_raw(Arc::new(devnet)))
}

/// Stops a devnet started by `depositkit_devnet_start` (in-flight requests get up to 2 s to
/// finish; the whole call takes at most about 4 s) and releases it, removing its temporary
/// directory when it made one. Clients still pointing at it then fail with network errors.
///
/// NULL is accepted and ignored. May be called on any thread, once, after every call using the
/// devnet has returned. Does not change the last error.
///
/// # Safety
/// `devnet` must be NULL or a handle from `depositkit_devnet_start` that has not been freed yet
/// and that no other thread is using; after this call it must not be used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_free(devnet: *const depositkit_devnet) {
    boundary::value((), || {
        if !devnet.is_null() {
            // SAFETY: the caller promises `devnet` came from `Arc::into_raw` in
            // `depositkit_devnet_start` and is released only once.
            drop(unsafe { Arc::from_raw(devnet) });
        }
    });
}

/// The base URL of the devnet's services, `http://127.0.0.1:PORT`: the `servicesUrl` option of
/// a deposit client (the JWT service is under `/jwt`, the signer under `/signer`, the
/// universal-account service under `/ua`, the user-lookup service under `/user-rpc`).
///
/// On success `*out_url` is a new string owned by the caller (free it with
/// `depositkit_string_free`); on failure it is not written. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`; `out_url` must be
/// NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_services_url(
    devnet: *const depositkit_devnet,
    out_url: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_url, "out_url") }?;
        out.write(strings::owned(devnet.running().services_url())?);
        Ok(())
    })
}

/// Credits an incoming transfer of `raw_amount` (smallest units, a decimal string: 25 USDC on
/// Base is `"25000000"`) of `token` (a `depositkit_token_type` value) on `chain_id` to
/// `address`, from `sender` (NULL: a made-up sender): a deposit when a devnet account owns
/// `address` (a deposit address from `depositkit_deposit_client_initialize`), else a credit to
/// the address's ledger. The next poll of the account's client sees it.
///
/// On success, when `out_tx_hash` is not NULL, `*out_tx_hash` is a new string owned by the
/// caller (free it with `depositkit_string_free`): the transfer's transaction hash. On failure
/// it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an unknown token
/// number, or when devnet refuses the transfer (an address invalid for the chain, an unknown
/// chain, a token not known on it, a malformed or zero amount; the message says which);
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet`, `address` or `raw_amount` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the database fails.
/// Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`; `address`,
/// `raw_amount` and `sender` must be NULL or NUL-terminated strings; `out_tx_hash` must be NULL
/// or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_deposit(
    devnet: *const depositkit_devnet,
    address: *const c_char,
    chain_id: u64,
    token: u32,
    raw_amount: *const c_char,
    sender: *const c_char,
    out_tx_hash: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        // SAFETY: the caller's contract above.
        let address = unsafe { strings::str_arg(address, "address") }?;
        let token = token_arg(token)?;
        // SAFETY: the caller's contract above.
        let raw_amount = unsafe { strings::str_arg(raw_amount, "raw_amount") }?;
        // SAFETY: the caller's contract above.
        let sender = unsafe { strings::opt_str_arg(sender, "sender") }?;
        let deposit = devnet
            .running()
            .deposit(address, chain_id, token, raw_amount, sender)
            .map_err(devnet_error)?;
        if !out_tx_hash.is_null() {
            let hash = strings::owned(deposit.tx_hash)?;
            // SAFETY: not NULL, and the caller promises it is writable.
            unsafe { out_tx_hash.write(hash) };
        }
        Ok(())
    })
}

/// The body of the exports that read what `address` holds of `token` and hand out the amount
/// in smallest units as a decimal string.
///
/// # Safety
/// `devnet` must be NULL or a live handle; `address` must be NULL or a NUL-terminated string;
/// `out_raw` must be NULL or point to a writable `char *`.
unsafe fn address_balance<T: std::fmt::Display>(
    devnet: *const depositkit_devnet,
    address: *const c_char,
    token: u32,
    out_raw: *mut *mut c_char,
    read: impl FnOnce(&RunningDevnet, &str, TokenType) -> Result<T, ::depositkit_devnet::Error>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let devnet = unsafe { devnet_arg(devnet) }?;
    // SAFETY: the caller's contract above.
    let address = unsafe { strings::str_arg(address, "address") }?;
    let token = token_arg(token)?;
    // SAFETY: the caller's contract above.
    let out = unsafe { boundary::out(out_raw, "out_raw") }?;
    let raw = read(&devnet.running(), address, token).map_err(devnet_error)?;
    out.write(strings::owned(raw.to_string())?);
    Ok(())
}

/// What `address` holds of `token` (a `depositkit_token_type` value) on `chain_id`, in smallest
/// units: an account's balance for a deposit address, else what the address's ledger received
/// (a destination: what sweeps delivered there). `"0"` when nothing arrived.
///
/// On success `*out_raw` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a decimal integer. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an unknown token
/// number or chain; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet`, `address` or `out_raw` is
/// NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the database
/// fails. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`; `address` must be
/// NULL or a NUL-terminated string; `out_raw` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_ledger_balance(
    devnet: *const depositkit_devnet,
    address: *const c_char,
    chain_id: u64,
    token: u32,
    out_raw: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        address_balance(devnet, address, token, out_raw, |running, address, token| {
            running.ledger_balance(address, chain_id, token)
        })
    })
}

/// What `address` holds of `token` (a `depositkit_token_type` value) on `chain_id` now, read
/// from the chain itself, in smallest units: the native balance (`eth_getBalance` /
/// `getBalance`) for the chain's native token, else the token's balance (`balanceOf` / the
/// address's token accounts); `"0"` when it holds none or the token is not deployed there.
/// Only for a chain-backed chain of a devnet started with
/// `depositkit_devnet_start_with_chains`; it reads any address (a funding wallet, a deposit
/// address, a destination).
///
/// On success `*out_raw` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a decimal integer. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an unknown token
/// number, or a chain that is not chain-backed (the message names it);
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the chain's node fails (the message names the chain);
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet`, `address` or `out_raw` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8`. Blocks while the node answers. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start_with_chains` (or
/// `depositkit_devnet_start`); `address` must be NULL or a NUL-terminated string; `out_raw` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_chain_balance(
    devnet: *const depositkit_devnet,
    address: *const c_char,
    chain_id: u64,
    token: u32,
    out_raw: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        address_balance(devnet, address, token, out_raw, |running, address, token| {
            running.chain_balance(address, chain_id, token)
        })
    })
}

/// Completes an order of devnet's simulated onramp widget, as if the user paid: `widget_url` is
/// the URL `depositkit_deposit_client_open_onramp` returned (with a `servicesUrl` of this devnet
/// as `onramp.widgetUrl`, or any widget URL: only its query parameters are read). The crypto,
/// `fiatAmount` (USD) / price less 1%, is credited to `walletAddress` on the `network`'s chain
/// (a real transfer from the vault on a chain-backed chain, else the ledger).
///
/// On success `*out_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): `{"order": {...}, "messages": [...]}`, where `messages` are the
/// overlay's messages for the order (`order_created`, `order_processing`,
/// `order_completed`), each a JSON object to pass to
/// `depositkit_deposit_client_handle_onramp_message`. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when the URL has no
/// query, no partner key, or a bad network, token, address or amount (the message says which);
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when a chain-backed chain fails;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
/// Blocks while a chain-backed delivery confirms. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`; `widget_url` must be
/// NULL or a NUL-terminated string; `out_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_complete_onramp_order(
    devnet: *const depositkit_devnet,
    widget_url: *const c_char,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        // SAFETY: the caller's contract above.
        let widget_url = unsafe { strings::str_arg(widget_url, "widget_url") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_json, "out_json") }?;
        let params = query_params(widget_url)?;
        let answer = devnet.running().complete_onramp_order(&params).map_err(devnet_error)?;
        out.write(strings::owned(answer.to_string())?);
        Ok(())
    })
}

/// The query parameters of `url` as a JSON object of strings (percent-decoded; `+` is a space).
fn query_params(url: &str) -> FfiResult<serde_json::Value> {
    let invalid = |why: String| FfiError::new(depositkit_status::InvalidArgument, why);
    let query = url
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or_default())
        .filter(|q| !q.is_empty())
        .ok_or_else(|| invalid(format!("widget_url has no query parameters: {}", quote(url))))?;
    let mut params = serde_json::Map::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |text: &str| {
            percent_decode(text).ok_or_else(|| {
                invalid(format!("widget_url has a malformed query parameter {}", quote(pair)))
            })
        };
        params.insert(decode(key)?, serde_json::Value::String(decode(value)?));
    }
    Ok(serde_json::Value::Object(params))
}

/// Decodes `%XX` escapes and `+`; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

pub use faults::*;
