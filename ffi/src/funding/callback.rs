//! The host provider's callback type and its reply handles: numbers naming pending requests in
//! a process-wide table, never dereferenced, never reused.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex};

use depositkit_core::describe::quote;
use depositkit_core::funding::ProviderError;
use serde_json::Value;

use super::lock;
use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;
use crate::strings;

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

pub(super) type RawProviderFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut depositkit_provider_reply);

/// What a callback answered.
pub(super) enum Answer {
    Result(Value),
    Error(ProviderError),
}

/// The pending requests of every host provider, by reply number: `None` until answered.
static REPLIES: LazyLock<Mutex<HashMap<usize, Option<Answer>>>> = LazyLock::new(Default::default);

/// The next reply number (0 is never used: it would be a NULL handle).
static NEXT_REPLY: AtomicUsize = AtomicUsize::new(1);

/// One pending request in [`REPLIES`]; leaving it (return or unwind) removes the entry, so a
/// late answer finds nothing.
pub(super) struct PendingReply(usize);

impl PendingReply {
    pub(super) fn open() -> PendingReply {
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
    pub(super) fn handle(&self) -> *mut depositkit_provider_reply {
        std::ptr::without_provenance_mut(self.0)
    }

    /// Closes the request and returns its answer, if it got one.
    pub(super) fn take(&self) -> Option<Answer> {
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
pub(super) fn answer(
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
