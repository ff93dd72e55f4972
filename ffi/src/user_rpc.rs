//! The user-lookup client: `getUserInfo`, `getUserInfoByIdentity` and `isProjectUser` of the
//! project's JSON-RPC service, over `depositkit_core::UserRpcClient`.
//!
//! A client is an opaque handle backed by an `Arc`: [`depositkit_user_rpc_client_new`] hands
//! out `Arc::into_raw`, [`depositkit_user_rpc_client_free`] takes it back. The handle is a
//! `const` pointer because every call only reads it: the core client is `Send + Sync`, keeps its
//! connection pool behind its own locks, and is used by many threads at once.
//!
//! The calls are synchronous: they do their HTTP requests (and retries) on the caller's thread.
//! `depositkit_user_rpc_client_get_users_info` sends many `getUserInfo` requests as one
//! JSON-RPC batch (JSON in, JSON out: one outcome per request, in request order).
//! Secrets (the server key, session tokens) are never echoed in a message, not even the bytes
//! of one that is not UTF-8.

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use depositkit_core::{UserRpcClient, UserRpcClientOptions};

use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;
use crate::strings;

/// JSON-RPC error code of the user-lookup service: missing or wrong project credentials. It
/// comes with HTTP 401, which the client reports as `DEPOSITKIT_STATUS_AUTHENTICATION` from the
/// HTTP status alone (`depositkit_last_error_rpc` then gives `DEPOSITKIT_STATUS_NOT_FOUND`).
pub const DEPOSITKIT_USER_RPC_UNAUTHORIZED: i64 = -32001;

/// JSON-RPC error code of the user-lookup service: no user with that uuid in the calling project
/// (`DEPOSITKIT_STATUS_NOT_FOUND`).
pub const DEPOSITKIT_USER_RPC_USER_NOT_FOUND: i64 = -32010;

/// JSON-RPC error code of the user-lookup service: the session token is wrong, expired, or not
/// the user's (`DEPOSITKIT_STATUS_AUTHENTICATION`).
pub const DEPOSITKIT_USER_RPC_INVALID_TOKEN: i64 = -32011;

/// JSON-RPC error code of the user-lookup service: an identity provider other than `jwt`
/// (`DEPOSITKIT_STATUS_RPC`; the client rejects such providers before sending anything).
pub const DEPOSITKIT_USER_RPC_UNSUPPORTED_PROVIDER: i64 = -32012;

/// JSON-RPC error code of the user-lookup service: no user with that identity in the calling
/// project (`DEPOSITKIT_STATUS_NOT_FOUND`).
pub const DEPOSITKIT_USER_RPC_IDENTITY_NOT_FOUND: i64 = -32013;

/// A client of the user-lookup service, bound to one service URL and one project.
///
/// Opaque: created by `depositkit_user_rpc_client_new`, used through a
/// `const depositkit_user_rpc_client *`, released by `depositkit_user_rpc_client_free`.
/// Thread-safe: one client may be used by any number of threads at once (calls share its pool
/// of keep-alive connections), and freed on any thread once no call is using it.
#[allow(non_camel_case_types)]
pub struct depositkit_user_rpc_client {
    inner: UserRpcClient,
}

/// How a user-lookup client talks to the service. Initialize it with
/// `depositkit_user_rpc_options_init` (which writes the defaults), then change the fields you
/// need: fields may be added at the end in later versions, and the init function sets them too.
///
/// The backoff between retries doubles from `initial_backoff_ms` and a random part of it is
/// waited ("full jitter"), at most 5 s; a server's `Retry-After` is honoured up to 30 s.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct depositkit_user_rpc_options {
    /// Deadline of one HTTP attempt, from connecting to the last byte of the response, in
    /// milliseconds. Must be greater than zero. Default 10000.
    pub timeout_ms: u64,
    /// Retries after the first attempt of a request answered with HTTP 429 or 5xx, refused or
    /// reset, or timed out (0 disables retrying). Default 3.
    pub max_retries: u32,
    /// The first backoff between two attempts, in milliseconds. Default 100.
    pub initial_backoff_ms: u64,
    /// The `User-Agent` header: printable ASCII, borrowed only during
    /// `depositkit_user_rpc_client_new` (which copies it). NULL, the default, means
    /// `depositkit/<version>`.
    pub user_agent: *const c_char,
}

impl depositkit_user_rpc_options {
    /// The defaults, taken from the core's.
    fn defaults() -> Self {
        let core = UserRpcClientOptions::default();
        depositkit_user_rpc_options {
            timeout_ms: millis(core.timeout),
            max_retries: core.retry.max_retries,
            initial_backoff_ms: millis(core.retry.initial_backoff),
            user_agent: std::ptr::null(),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Writes the default options to `*out`: `timeout_ms` 10000, `max_retries` 3,
/// `initial_backoff_ms` 100, `user_agent` NULL (the default `depositkit/<version>`). Every field
/// is written, so `out` may point to uninitialized memory.
///
/// NULL is accepted and ignored. Never fails and does not change the last error. Thread-safe.
///
/// # Safety
/// `out` must be NULL or point to a writable `depositkit_user_rpc_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_user_rpc_options_init(out: *mut depositkit_user_rpc_options) {
    boundary::value((), || {
        if !out.is_null() {
            // SAFETY: not NULL, and the caller promises it is writable and aligned.
            unsafe { out.write(depositkit_user_rpc_options::defaults()) };
        }
    });
}

/// Reads a secret (server key, session token): like [`strings::str_arg`], but a message about
/// invalid UTF-8 names only the parameter, never a byte of the secret or where it is.
///
/// # Safety
/// As [`strings::str_arg`].
unsafe fn secret_arg<'a>(ptr: *const c_char, param: &str) -> FfiResult<&'a str> {
    // SAFETY: the caller's contract.
    unsafe { strings::str_arg(ptr, param) }.map_err(|err| match err.status {
        depositkit_status::InvalidUtf8 => {
            FfiError::new(depositkit_status::InvalidUtf8, format!("{param} is not valid UTF-8"))
        }
        _ => err,
    })
}

/// The core options for `options` (NULL: the defaults).
///
/// # Safety
/// `options` must be NULL or point to a readable `depositkit_user_rpc_options` whose
/// `user_agent` is NULL or a NUL-terminated string, valid for the call.
unsafe fn options_arg(
    options: *const depositkit_user_rpc_options,
) -> FfiResult<UserRpcClientOptions> {
    let mut core = UserRpcClientOptions::default();
    if options.is_null() {
        return Ok(core);
    }
    // SAFETY: not NULL, and the caller promises it is readable and aligned. Copied out, so a
    // caller changing it later cannot affect us.
    let options = unsafe { options.read() };
    core.timeout = Duration::from_millis(options.timeout_ms);
    core.retry.max_retries = options.max_retries;
    core.retry.initial_backoff = Duration::from_millis(options.initial_backoff_ms);
    if !options.user_agent.is_null() {
        // SAFETY: the caller's contract above.
        let user_agent = unsafe { strings::str_arg(options.user_agent, "options->user_agent") }?;
        if !user_agent.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
            return Err(FfiError::new(
                depositkit_status::Configuration,
                "options->user_agent must be printable ASCII (bytes 0x20 to 0x7e)",
            ));
        }
        user_agent.clone_into(&mut core.user_agent);
    }
    Ok(core)
}

/// The client behind a handle: `DEPOSITKIT_STATUS_NULL_ARGUMENT` naming `client` when NULL.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_user_rpc_client_new`, not freed
/// before `'a` ends (the duration of the call).
unsafe fn client_arg<'a>(
    client: *const depositkit_user_rpc_client,
) -> FfiResult<&'a UserRpcClient> {
    // SAFETY: the caller's contract above; `Arc::into_raw` gave an aligned pointer to a value
    // that lives until the handle is freed.
    unsafe { client.as_ref() }.map(|c| &c.inner).ok_or_else(|| FfiError::null_argument("client"))
}

/// Creates a client of the user-lookup service at `base_url` (for example
/// `"http://127.0.0.1:7420/user-rpc"`) for the project `project_id`, authenticating every
/// request with HTTP Basic auth as `project_id:server_key`. `options` may be NULL for the
/// defaults (see `depositkit_user_rpc_options_init`).
///
/// Nothing is sent: the arguments are checked and copied (none is borrowed after the call),
/// and the first request opens the first connection.
///
/// On success `*out_client` is a new handle owned by the caller: release it with
/// `depositkit_user_rpc_client_free`. On failure `*out_client` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when `base_url` is not
/// `http://` or `https://` with a host, or carries credentials (`user:pass@`), when
/// `project_id` or `server_key` is empty, `project_id` holds a `:` or a control character or
/// `server_key` a control character, when `options->timeout_ms` is 0 or above 86400000 (a day), or when
/// `options->user_agent` is not printable ASCII; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when
/// `base_url`, `project_id`, `server_key` or `out_client` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8` when a string is not UTF-8. Messages name the parameter and
/// quote the bad URL or project id, but never contain the server key (nor a URL's credentials).
///
/// Thread-safe; does not block.
///
/// # Safety
/// `base_url`, `project_id` and `server_key` must be NULL or NUL-terminated strings; `options`
/// must be NULL or point to a readable `depositkit_user_rpc_options` whose `user_agent` is NULL
/// or a NUL-terminated string; `out_client` must be NULL or point to a writable
/// `const depositkit_user_rpc_client *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_user_rpc_client_new(
    base_url: *const c_char,
    project_id: *const c_char,
    server_key: *const c_char,
    options: *const depositkit_user_rpc_options,
    out_client: *mut *const depositkit_user_rpc_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let base_url = unsafe { strings::str_arg(base_url, "base_url") }?;
        // SAFETY: the caller's contract above.
        let project_id = unsafe { strings::str_arg(project_id, "project_id") }?;
        // SAFETY: the caller's contract above.
        let server_key = unsafe { secret_arg(server_key, "server_key") }?;
        // SAFETY: the caller's contract above.
        let options = unsafe { options_arg(options) }?;
        // SAFETY: the caller's contract above.
        let out_client = unsafe { boundary::out(out_client, "out_client") }?;
        let inner = UserRpcClient::new(base_url, project_id, server_key, options)?;
        out_client.write(Arc::into_raw(Arc::new(depositkit_user_rpc_client { inner })));
        Ok(())
    })
}

/// Releases a client created by `depositkit_user_rpc_client_new`, closing its idle
/// connections.
///
/// NULL is accepted and ignored. May be called on any thread, once, after every call using
/// the client has returned. Does not change the last error.
///
/// # Safety
/// `client` must be NULL or a handle from `depositkit_user_rpc_client_new` that has not been
/// freed yet and that no other thread is using; after this call it must not be used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_user_rpc_client_free(
    client: *const depositkit_user_rpc_client,
) {
    boundary::value((), || {
        if !client.is_null() {
            // SAFETY: the caller promises `client` came from `Arc::into_raw` in
            // `depositkit_user_rpc_client_new` and is released only once.
            drop(unsafe { Arc::from_raw(client) });
        }
    });
}

/// `getUserInfo`: the profile record of the user `uuid` (canonical 8-4-4-4-12 hex form), proven
/// by the user's session `token`.
///
/// On success `*out_user_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the User record as a JSON object in the service's wire form,
/// camelCase keys with every field present (`null` when empty): `uuid`, `email`, `phone`,
/// `name`, `avatar`, the `<provider>Id` / `<provider>Email` pairs (`telegramPhone` for
/// telegram), `createdAt` and `updatedAt` (ISO 8601 UTC with milliseconds, as sent) and
/// `wallets` (an array of `{"chain", "publicAddress"}`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_CONFIGURATION` for a malformed `uuid` (the message quotes it) or an
///   empty `token`, found before any network call;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `uuid`, `token` or `out_user_json` is
///   NULL; `DEPOSITKIT_STATUS_INVALID_UTF8` when `uuid` or `token` is not UTF-8 (both before
///   any network call; the message names the parameter);
/// - `DEPOSITKIT_STATUS_AUTHENTICATION` when the service rejected the project credentials
///   (HTTP 401/403) or the session token (wrong, expired or another user's: JSON-RPC error
///   `DEPOSITKIT_USER_RPC_INVALID_TOKEN`);
/// - `DEPOSITKIT_STATUS_NOT_FOUND` when the project has no such user
///   (`DEPOSITKIT_USER_RPC_USER_NOT_FOUND`);
/// - `DEPOSITKIT_STATUS_TIMEOUT` when the last attempt timed out;
/// - `DEPOSITKIT_STATUS_NETWORK` when the last attempt was refused or reset, or the service
///   answered HTTP 429 or 5xx to every attempt;
/// - `DEPOSITKIT_STATUS_PROTOCOL` when the response is not valid JSON-RPC 2.0 for this request
///   or the record lacks a required field;
/// - `DEPOSITKIT_STATUS_RPC` for any other JSON-RPC error object.
///
/// When the service answered with a JSON-RPC error object, `depositkit_last_error_rpc` gives its
/// code and data. Messages never contain the server key or the session token.
///
/// Blocks the calling thread while it talks to the service: up to (`max_retries` + 1) x
/// `timeout_ms`, plus the waits between attempts (see `depositkit_user_rpc_options`).
/// Thread-safe: any number of threads may call it on the same client at once.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_user_rpc_client_new`; `uuid` and
/// `token` must be NULL or NUL-terminated strings; `out_user_json` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_user_rpc_client_get_user_info(
    client: *const depositkit_user_rpc_client,
    uuid: *const c_char,
    token: *const c_char,
    out_user_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let uuid = unsafe { strings::str_arg(uuid, "uuid") }?;
        // SAFETY: the caller's contract above.
        let token = unsafe { secret_arg(token, "token") }?;
        // SAFETY: the caller's contract above.
        let out_user_json = unsafe { boundary::out(out_user_json, "out_user_json") }?;
        let user = client.get_user_info(uuid, token)?;
        out_user_json.write(strings::owned(user.to_json().to_string())?);
        Ok(())
    })
}

/// `getUserInfoByIdentity`: the profile record of the user whose identity at `provider` is
/// `uid`. Only the provider `"jwt"` exists.
///
/// On success `*out_user_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the User record as JSON, exactly as
/// `depositkit_user_rpc_client_get_user_info` gives it. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_CONFIGURATION` for a provider other than `"jwt"` (the message quotes
///   it) or an empty `uid`, found before any network call;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `provider`, `uid` or `out_user_json` is
///   NULL; `DEPOSITKIT_STATUS_INVALID_UTF8` when `provider` or `uid` is not UTF-8;
/// - `DEPOSITKIT_STATUS_AUTHENTICATION` when the service rejected the project credentials;
/// - `DEPOSITKIT_STATUS_NOT_FOUND` when no user of the project has that identity
///   (`DEPOSITKIT_USER_RPC_IDENTITY_NOT_FOUND`);
/// - `DEPOSITKIT_STATUS_TIMEOUT`, `DEPOSITKIT_STATUS_NETWORK`, `DEPOSITKIT_STATUS_PROTOCOL` and
///   `DEPOSITKIT_STATUS_RPC` as for `depositkit_user_rpc_client_get_user_info`.
///
/// When the service answered with a JSON-RPC error object, `depositkit_last_error_rpc` gives its
/// code and data. Messages never contain the server key.
///
/// Blocks the calling thread while it talks to the service: up to (`max_retries` + 1) x
/// `timeout_ms`, plus the waits between attempts (see `depositkit_user_rpc_options`).
/// Thread-safe: any number of threads may call it on the same client at once.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_user_rpc_client_new`; `provider` and
/// `uid` must be NULL or NUL-terminated strings; `out_user_json` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_user_rpc_client_get_user_info_by_identity(
    client: *const depositkit_user_rpc_client,
    provider: *const c_char,
    uid: *const c_char,
    out_user_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let provider = unsafe { strings::str_arg(provider, "provider") }?;
        // SAFETY: the caller's contract above.
        let uid = unsafe { strings::str_arg(uid, "uid") }?;
        // SAFETY: the caller's contract above.
        let out_user_json = unsafe { boundary::out(out_user_json, "out_user_json") }?;
        let user = client.get_user_info_by_identity(provider, uid)?;
        out_user_json.write(strings::owned(user.to_json().to_string())?);
        Ok(())
    })
}

/// `isProjectUser`: whether `address` on the chain family `chain` (`"evm_chain"` or
/// `"solana"`) belongs to, or has interacted with, the client's project.
///
/// On success `*out_is_member` is written (true or false); on failure it is not.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_CONFIGURATION` for another chain family, or an address that is invalid
///   for it (an EVM address must be `0x` and 40 hex digits, with a matching EIP-55 checksum
///   when mixed-case; a Solana address base58 of 32 bytes); the message quotes the value and
///   says why. Found before any network call;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `chain`, `address` or `out_is_member` is
///   NULL; `DEPOSITKIT_STATUS_INVALID_UTF8` when `chain` or `address` is not UTF-8;
/// - `DEPOSITKIT_STATUS_AUTHENTICATION` when the service rejected the project credentials;
/// - `DEPOSITKIT_STATUS_TIMEOUT`, `DEPOSITKIT_STATUS_NETWORK`, `DEPOSITKIT_STATUS_PROTOCOL`
///   (also when the result is not a boolean) and `DEPOSITKIT_STATUS_RPC` as for
///   `depositkit_user_rpc_client_get_user_info`.
///
/// When the service answered with a JSON-RPC error object, `depositkit_last_error_rpc` gives its
/// code and data. Messages never contain the server key.
///
/// Blocks the calling thread while it talks to the service: up to (`max_retries` + 1) x
/// `timeout_ms`, plus the waits between attempts (see `depositkit_user_rpc_options`).
/// Thread-safe: any number of threads may call it on the same client at once.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_user_rpc_client_new`; `chain` and
/// `address` must be NULL or NUL-terminated strings; `out_is_member` must be NULL or point to a
/// writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_user_rpc_client_is_project_user(
    client: *const depositkit_user_rpc_client,
    chain: *const c_char,
    address: *const c_char,
    out_is_member: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let chain = unsafe { strings::str_arg(chain, "chain") }?;
        // SAFETY: the caller's contract above.
        let address = unsafe { strings::str_arg(address, "address") }?;
        // SAFETY: the caller's contract above.
        let out_is_member = unsafe { boundary::out(out_is_member, "out_is_member") }?;
        let member = client.is_project_user(chain, address)?;
        out_is_member.write(member);
        Ok(())
    })
}

/// `getUserInfo` for many users in **one** JSON-RPC batch (one HTTP request).
///
/// `requests_json` is a JSON array of `{"uuid": "...", "token": "..."}` objects (other keys are
/// ignored). On success `*out_results_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array with one object per request, in request order -
/// `{"user": <the User record, as depositkit_user_rpc_client_get_user_info gives it>}`, or
/// `{"error": {"status": <the depositkit_status of that request's failure>, "class": "<its
/// Python class name, e.g. NotFoundError>", "message": "...", "rpc": {"code", "message",
/// "data"}}}` (`"rpc"` only when the service answered that request with a JSON-RPC error
/// object). A request whose uuid is malformed or whose token is empty fails alone with
/// `DEPOSITKIT_STATUS_CONFIGURATION` and is not sent. An empty array sends nothing and gives
/// `[]`. On failure `*out_results_json` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK` when the batch was answered (whatever each request's outcome),
/// or the failure of the whole batch:
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `requests_json` is not such an array (the
///   message says which item; it never quotes a token);
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `requests_json` or `out_results_json` is
///   NULL; `DEPOSITKIT_STATUS_INVALID_UTF8` when `requests_json` is not UTF-8;
/// - `DEPOSITKIT_STATUS_AUTHENTICATION` when the service rejected the project credentials;
/// - `DEPOSITKIT_STATUS_RPC` when it refused the batch as a whole (for example `-32600` for a
///   body over its size limit; `depositkit_last_error_rpc` gives the error object);
/// - `DEPOSITKIT_STATUS_TIMEOUT`, `DEPOSITKIT_STATUS_NETWORK`, and
///   `DEPOSITKIT_STATUS_PROTOCOL` when the answer is not a batch response.
///
/// Messages never contain the server key or a session token.
///
/// Blocks the calling thread while it talks to the service, as
/// `depositkit_user_rpc_client_get_user_info` does (one request for the whole batch).
/// Thread-safe: any number of threads may call it on the same client at once.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_user_rpc_client_new`;
/// `requests_json` must be NULL or a NUL-terminated string; `out_results_json` must be NULL or
/// point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_user_rpc_client_get_users_info(
    client: *const depositkit_user_rpc_client,
    requests_json: *const c_char,
    out_results_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above (a secret: never quoted).
        let requests_json = unsafe { secret_arg(requests_json, "requests_json") }?;
        // SAFETY: the caller's contract above.
        let out_results_json = unsafe { boundary::out(out_results_json, "out_results_json") }?;
        let requests = batch_requests(requests_json)?;
        let outcomes = client.get_users_info(&requests)?;
        let results: Vec<serde_json::Value> = outcomes.iter().map(outcome_json).collect();
        out_results_json.write(strings::owned(serde_json::Value::Array(results).to_string())?);
        Ok(())
    })
}

/// The `(uuid, token)` pairs of `depositkit_user_rpc_client_get_users_info`'s `requests_json`.
/// Messages name the item, never its values (they hold session tokens).
fn batch_requests(text: &str) -> FfiResult<Vec<(String, String)>> {
    const SHAPE: &str = "requests_json must be a JSON array of {\"uuid\", \"token\"} objects";
    let invalid = |what: String| FfiError::new(depositkit_status::InvalidArgument, what);
    let parsed: serde_json::Value =
        serde_json::from_str(text).map_err(|_| invalid(format!("{SHAPE}; it is not JSON")))?;
    let serde_json::Value::Array(items) = parsed else {
        return Err(invalid(format!("{SHAPE}; it is not an array")));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let field = |name: &str| item.get(name).and_then(serde_json::Value::as_str);
            match (field("uuid"), field("token")) {
                (Some(uuid), Some(token)) => Ok((uuid.to_owned(), token.to_owned())),
                _ => Err(invalid(format!(
                    "{SHAPE}; item {index} lacks a string \"uuid\" or \"token\""
                ))),
            }
        })
        .collect()
}

/// One outcome of a batch as `{"user": ...}` or `{"error": {...}}`.
fn outcome_json(outcome: &depositkit_core::Result<depositkit_core::User>) -> serde_json::Value {
    match outcome {
        Ok(user) => serde_json::json!({ "user": user.to_json() }),
        Err(err) => {
            let status: depositkit_status = err.kind().into();
            let mut error = serde_json::json!({
                "status": status as u32,
                "class": err.kind().class_name(),
                "message": err.message(),
            });
            if let Some(rpc) = err.rpc_error() {
                error["rpc"] = serde_json::to_value(rpc).unwrap_or(serde_json::Value::Null);
            }
            serde_json::json!({ "error": error })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use depositkit_core::users::codes;

    #[test]
    fn codes_match_the_core() {
        assert_eq!(DEPOSITKIT_USER_RPC_UNAUTHORIZED, codes::UNAUTHORIZED);
        assert_eq!(DEPOSITKIT_USER_RPC_USER_NOT_FOUND, codes::USER_NOT_FOUND);
        assert_eq!(DEPOSITKIT_USER_RPC_INVALID_TOKEN, codes::INVALID_TOKEN);
        assert_eq!(DEPOSITKIT_USER_RPC_UNSUPPORTED_PROVIDER, codes::UNSUPPORTED_PROVIDER);
        assert_eq!(DEPOSITKIT_USER_RPC_IDENTITY_NOT_FOUND, codes::IDENTITY_NOT_FOUND);
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let d = depositkit_user_rpc_options::defaults();
        assert_eq!((d.timeout_ms, d.max_retries, d.initial_backoff_ms), (10_000, 3, 100));
        assert!(d.user_agent.is_null());
    }

    #[test]
    fn options_convert_to_the_core() {
        let ua = c"my-app/1.0";
        let options = depositkit_user_rpc_options {
            timeout_ms: 1500,
            max_retries: 0,
            initial_backoff_ms: 7,
            user_agent: ua.as_ptr(),
        };
        let core = unsafe { options_arg(&options) }.unwrap();
        assert_eq!(core.timeout, Duration::from_millis(1500));
        assert_eq!(core.retry.max_retries, 0);
        assert_eq!(core.retry.initial_backoff, Duration::from_millis(7));
        assert_eq!(core.user_agent, "my-app/1.0");
        let default = UserRpcClientOptions::default();
        assert_eq!(core.retry.max_backoff, default.retry.max_backoff);
        assert_eq!(
            unsafe { options_arg(std::ptr::null()) }.unwrap().user_agent,
            default.user_agent
        );

        let bad = depositkit_user_rpc_options { user_agent: c"a\tb".as_ptr(), ..options };
        let err = unsafe { options_arg(&bad) }.unwrap_err();
        assert_eq!(err.status, depositkit_status::Configuration);
        assert!(err.message.contains("options->user_agent"), "{}", err.message);
    }

    #[test]
    fn secrets_in_invalid_utf8_are_not_described() {
        let err = unsafe { secret_arg(c"sk_\xff\xfe".as_ptr(), "server_key") }.unwrap_err();
        assert_eq!(err.status, depositkit_status::InvalidUtf8);
        assert_eq!(err.message, "server_key is not valid UTF-8");
        let err = unsafe { secret_arg(std::ptr::null(), "token") }.unwrap_err();
        assert_eq!(err.status, depositkit_status::NullArgument);
    }
}
