//! `depositkit_status`, the per-thread last error (a message, and the JSON-RPC error object when
//! a service sent one), and the functions that read them.
//!
//! Every status except `OK` is either the code of a core [`ErrorKind`] (the one table of codes
//! lives in `depositkit-core`'s `ErrorKind::code`; the test below keeps this enum equal to it) or
//! one of the few codes only the C face needs (`NULL_ARGUMENT`, `INVALID_UTF8`,
//! `BUFFER_TOO_SMALL`, `PANIC`). Codes are never renumbered or reused; a retired code stays here
//! as a comment.

use std::cell::RefCell;
use std::ffi::{CStr, c_char};

use depositkit_core::{ErrorKind, RpcErrorObject};

use crate::boundary;
use crate::strings;

/// The result of every fallible depositkit function.
///
/// `DEPOSITKIT_STATUS_OK` (0) is success; every other value is a failure, and the calling
/// thread's last-error message (`depositkit_last_error_message`) says what was wrong and with
/// which value. Related failures share a block of 100. The numbers are stable: they are never
/// changed or reused, so a program may store or compare them.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum depositkit_status {
    /// Success.
    Ok = 0,
    /// A failure that fits no narrower status (the spec's `DepositSDKError`).
    DepositSdk = 1,
    /// An argument is malformed or out of range: an amount, a token number or symbol, a
    /// decimals count.
    InvalidArgument = 100,
    /// A pointer argument that must not be NULL was NULL; the message names the parameter.
    NullArgument = 101,
    /// A string argument was not valid UTF-8; the message names the parameter.
    InvalidUtf8 = 102,
    /// An output buffer was too small (see `depositkit_last_error_message`).
    BufferTooSmall = 103,
    /// Invalid configuration: unknown chain id, an address that is invalid for its chain, or a
    /// token that cannot be delivered (the spec's `ConfigurationError`).
    Configuration = 200,
    /// Authentication failed (`AuthenticationError`).
    Authentication = 300,
    /// The JWT service is unreachable or failed (`JwtError`).
    Jwt = 301,
    /// A universal-account operation failed (`UniversalAccountError`).
    UniversalAccount = 400,
    /// A sweep failed (`SweepError`).
    Sweep = 500,
    /// A refund failed (`RefundError`).
    Refund = 501,
    /// Funding from a wallet failed (`FundingError`).
    Funding = 502,
    /// A network failure: refused connection, reset, bad gateway (`NetworkError`).
    Network = 600,
    /// An operation did not finish within its deadline.
    Timeout = 601,
    /// A service answered something its protocol does not allow: malformed JSON-RPC, a
    /// response id that does not echo the request's, a record missing a required field.
    Protocol = 602,
    /// A service answered with a JSON-RPC error object.
    Rpc = 603,
    /// A thing looked up does not exist (for example a token on a chain that does not carry it).
    NotFound = 700,
    /// A bug in depositkit, or a state it cannot handle; please report it with the message.
    Internal = 900,
    /// depositkit panicked inside the call. The panic was caught at the boundary and the message
    /// is in the last error; the library stays usable. Please report it.
    Panic = 901,
}

macro_rules! status_table {
    ($($variant:ident => $name:literal,)*) => {
        impl depositkit_status {
            /// Every status, in code order.
            pub const ALL: [depositkit_status; 20] = [$(depositkit_status::$variant),*];

            /// The status with this number, if there is one.
            pub const fn from_code(code: u32) -> Option<depositkit_status> {
                $(if code == depositkit_status::$variant as u32 {
                    return Some(depositkit_status::$variant);
                })*
                None
            }

            /// The name of the C constant, e.g. `DEPOSITKIT_STATUS_CONFIGURATION`.
            pub const fn name(self) -> &'static CStr {
                match self {
                    $(depositkit_status::$variant => $name,)*
                }
            }
        }
    };
}

status_table! {
    Ok => c"DEPOSITKIT_STATUS_OK",
    DepositSdk => c"DEPOSITKIT_STATUS_DEPOSIT_SDK",
    InvalidArgument => c"DEPOSITKIT_STATUS_INVALID_ARGUMENT",
    NullArgument => c"DEPOSITKIT_STATUS_NULL_ARGUMENT",
    InvalidUtf8 => c"DEPOSITKIT_STATUS_INVALID_UTF8",
    BufferTooSmall => c"DEPOSITKIT_STATUS_BUFFER_TOO_SMALL",
    Configuration => c"DEPOSITKIT_STATUS_CONFIGURATION",
    Authentication => c"DEPOSITKIT_STATUS_AUTHENTICATION",
    Jwt => c"DEPOSITKIT_STATUS_JWT",
    UniversalAccount => c"DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT",
    Sweep => c"DEPOSITKIT_STATUS_SWEEP",
    Refund => c"DEPOSITKIT_STATUS_REFUND",
    Funding => c"DEPOSITKIT_STATUS_FUNDING",
    Network => c"DEPOSITKIT_STATUS_NETWORK",
    Timeout => c"DEPOSITKIT_STATUS_TIMEOUT",
    Protocol => c"DEPOSITKIT_STATUS_PROTOCOL",
    Rpc => c"DEPOSITKIT_STATUS_RPC",
    NotFound => c"DEPOSITKIT_STATUS_NOT_FOUND",
    Internal => c"DEPOSITKIT_STATUS_INTERNAL",
    Panic => c"DEPOSITKIT_STATUS_PANIC",
}

impl From<ErrorKind> for depositkit_status {
    fn from(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::DepositSdk => depositkit_status::DepositSdk,
            ErrorKind::InvalidArgument => depositkit_status::InvalidArgument,
            ErrorKind::Configuration => depositkit_status::Configuration,
            ErrorKind::Authentication => depositkit_status::Authentication,
            ErrorKind::Jwt => depositkit_status::Jwt,
            ErrorKind::UniversalAccount => depositkit_status::UniversalAccount,
            ErrorKind::Sweep => depositkit_status::Sweep,
            ErrorKind::Refund => depositkit_status::Refund,
            ErrorKind::Funding => depositkit_status::Funding,
            ErrorKind::Network => depositkit_status::Network,
            ErrorKind::Timeout => depositkit_status::Timeout,
            ErrorKind::Protocol => depositkit_status::Protocol,
            ErrorKind::Rpc => depositkit_status::Rpc,
            ErrorKind::NotFound => depositkit_status::NotFound,
            ErrorKind::Internal => depositkit_status::Internal,
            // `ErrorKind` is non-exhaustive: a kind added to the core before it gets a status
            // here falls back to the base class, as its Python exception does. The test below
            // fails until the new kind is mapped to a status with its own code.
            _ => depositkit_status::DepositSdk,
        }
    }
}

/// The last failure on this thread: its message and, when a service answered with a JSON-RPC
/// error object, that object (read by `depositkit_last_error_rpc`).
struct LastError {
    /// Empty after a success.
    message: String,
    /// `None` after a success and after a failure that carried no JSON-RPC error object.
    rpc: Option<Box<RpcErrorObject>>,
}

thread_local! {
    /// The last failure on this thread; an empty message and no rpc object after a success.
    static LAST_ERROR: RefCell<LastError> =
        const { RefCell::new(LastError { message: String::new(), rpc: None }) };
}

/// Records `message` as this thread's last error, with no JSON-RPC error object. NUL bytes
/// (which a C string cannot carry) become `\0`.
pub(crate) fn set_last_error(message: &str) {
    set_last_error_with_rpc(message, None);
}

/// Records `message` as this thread's last error together with the JSON-RPC error object the
/// failure carried (`None` for none). NUL bytes in the message become `\0`.
pub(crate) fn set_last_error_with_rpc(message: &str, rpc: Option<Box<RpcErrorObject>>) {
    let message =
        if message.contains('\0') { message.replace('\0', "\\0") } else { message.to_owned() };
    // `try_with`: during thread teardown the slot may be gone; then there is nobody to tell.
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = LastError { message, rpc };
        }
    });
}

/// Clears this thread's last error (after a successful call).
pub(crate) fn clear_last_error() {
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            slot.message.clear();
            slot.rpc = None;
        }
    });
}

/// Runs `f` on this thread's last-error message (empty when there is none).
pub(crate) fn with_last_error<R>(f: impl FnOnce(&str) -> R) -> R {
    with_last_error_record(|message, _| f(message))
}

/// Runs `f` on this thread's last-error JSON-RPC error object (`None` when the last failure
/// carried none, or after a success).
pub(crate) fn with_last_error_rpc<R>(f: impl FnOnce(Option<&RpcErrorObject>) -> R) -> R {
    with_last_error_record(|_, rpc| f(rpc))
}

/// Runs `f` on this thread's last error: its message (empty when there is none) and its
/// JSON-RPC error object. Reading never changes the record.
fn with_last_error_record<R>(f: impl FnOnce(&str, Option<&RpcErrorObject>) -> R) -> R {
    let mut f = Some(f);
    let result = LAST_ERROR.try_with(|slot| match slot.try_borrow() {
        Ok(last) => (f.take().expect("called once"))(&last.message, last.rpc.as_deref()),
        Err(_) => (f.take().expect("called once"))("", None),
    });
    match result {
        Ok(r) => r,
        Err(_) => (f.take().expect("called once"))("", None),
    }
}

/// Copies the calling thread's last-error message into `buf` as a NUL-terminated UTF-8 string.
///
/// The message explains the most recent failed call on this thread: what was wrong and with
/// which value (it never contains secrets). It is empty when the most recent status-returning
/// call on this thread succeeded, or when none has failed yet. Each thread has its own message,
/// so a failure on one thread never changes the message another thread reads.
///
/// On return `*out_n` is the full length of the message in bytes, without the NUL terminator,
/// whether or not it fitted: a caller can pass `len = 0` (and `buf = NULL`) to learn the size,
/// then call again with a buffer of `*out_n + 1` bytes.
///
/// Returns:
/// - `DEPOSITKIT_STATUS_OK` when the message and its NUL fitted in `len` bytes;
/// - `DEPOSITKIT_STATUS_BUFFER_TOO_SMALL` when `len < *out_n + 1`. If `len > 0`, `buf` then
///   holds the message truncated to at most `len - 1` bytes (cut at a UTF-8 character boundary)
///   and a NUL, like `snprintf`; if `len == 0` nothing is written to `buf`;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_n` is NULL, or `buf` is NULL while `len > 0`;
///   nothing is written.
///
/// Unlike every other function, this one never changes the last error, not even when it fails:
/// reading the message twice gives the same text.
///
/// # Safety
/// `buf` must be NULL or point to `len` writable bytes; `out_n` must be NULL or point to a
/// writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_last_error_message(
    buf: *mut c_char,
    len: usize,
    out_n: *mut usize,
) -> depositkit_status {
    boundary::value(depositkit_status::Panic, || {
        if out_n.is_null() || (buf.is_null() && len > 0) {
            return depositkit_status::NullArgument;
        }
        with_last_error(|message| {
            let n = message.len();
            // SAFETY: `out_n` is not NULL and the caller promises it is writable.
            unsafe { out_n.write(n) };
            let (copy, status) = if n < len {
                (n, depositkit_status::Ok)
            } else if len == 0 {
                return depositkit_status::BufferTooSmall;
            } else {
                let mut cut = len - 1;
                while !message.is_char_boundary(cut) {
                    cut -= 1;
                }
                (cut, depositkit_status::BufferTooSmall)
            };
            // SAFETY: `copy < len`, and the caller promises `buf` has `len` writable bytes; the
            // message is a Rust string, so it cannot overlap the caller's buffer.
            unsafe {
                std::ptr::copy_nonoverlapping(message.as_ptr(), buf.cast::<u8>(), copy);
                buf.add(copy).write(0);
            }
            status
        })
    })
}

/// The JSON-RPC error object behind the calling thread's last error, when a service answered
/// the failed call with one: for example `-32011` (`DEPOSITKIT_USER_RPC_INVALID_TOKEN`) when the
/// user-lookup service rejected a session token, or `-32010`
/// (`DEPOSITKIT_USER_RPC_USER_NOT_FOUND`) for an unknown user.
///
/// When the most recent failed call on this thread carried such an object, writes its `code` to
/// `*out_code` and, when `out_data_json` is not NULL, its `data` member to `*out_data_json` as a
/// new JSON string owned by the caller (free it with `depositkit_string_free`), or NULL when
/// the object had no `data`; then returns `DEPOSITKIT_STATUS_OK`. The object's `message` is
/// already part of the last-error message (`depositkit_last_error_message`).
///
/// Returns:
/// - `DEPOSITKIT_STATUS_OK` as above;
/// - `DEPOSITKIT_STATUS_NOT_FOUND` when the last error carried no JSON-RPC error object: the
///   most recent status-returning call on this thread succeeded, or failed for another reason
///   (bad arguments, rejected credentials answered with HTTP 401, a network failure, a
///   timeout...); nothing is written;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_code` is NULL; nothing is written.
///
/// Like `depositkit_last_error_message`, this function never changes the last error (neither
/// its message nor its JSON-RPC error object), not even when it fails: it may be called any
/// number of times after the failure, in any order with `depositkit_last_error_message`.
/// Per thread, like the last-error message. The data is what the service sent; depositkit adds
/// nothing to it (so never the server key or the session token).
///
/// # Safety
/// `out_code` must be NULL or point to a writable `int64_t`; `out_data_json` must be NULL or
/// point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_last_error_rpc(
    out_code: *mut i64,
    out_data_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::value(depositkit_status::Panic, || {
        if out_code.is_null() {
            return depositkit_status::NullArgument;
        }
        with_last_error_rpc(|rpc| {
            let Some(rpc) = rpc else {
                return depositkit_status::NotFound;
            };
            let data = if out_data_json.is_null() {
                std::ptr::null_mut()
            } else {
                match rpc.data.as_ref().map(|data| strings::owned(data.to_string())).transpose() {
                    Ok(data) => data.unwrap_or(std::ptr::null_mut()),
                    // JSON text escapes control characters, so it never holds a NUL byte.
                    Err(err) => return err.status,
                }
            };
            // SAFETY: `out_code` is not NULL and the caller promises it is writable; so is
            // `out_data_json` when it is not NULL.
            unsafe {
                out_code.write(rpc.code);
                if !out_data_json.is_null() {
                    out_data_json.write(data);
                }
            }
            depositkit_status::Ok
        })
    })
}

/// The name of a status as a static NUL-terminated string, e.g.
/// `"DEPOSITKIT_STATUS_CONFIGURATION"` for `DEPOSITKIT_STATUS_CONFIGURATION`.
///
/// Takes a plain `uint32_t` so that any number is safe to pass: a number that is not a
/// `depositkit_status` gives `"DEPOSITKIT_STATUS_UNKNOWN"`. Never NULL; do not free the result.
/// Does not change the last error.
#[unsafe(no_mangle)]
pub extern "C" fn depositkit_status_str(status: u32) -> *const c_char {
    const UNKNOWN: &CStr = c"DEPOSITKIT_STATUS_UNKNOWN";
    boundary::value(UNKNOWN.as_ptr(), || {
        depositkit_status::from_code(status).map_or(UNKNOWN, depositkit_status::name).as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_kind_keeps_its_core_code() {
        for kind in ErrorKind::ALL {
            let status = depositkit_status::from(kind);
            assert_eq!(status as u32, kind.code(), "{kind:?} -> {status:?}");
        }
    }

    #[test]
    fn codes_are_unique_and_round_trip() {
        let mut codes: Vec<u32> = depositkit_status::ALL.iter().map(|s| *s as u32).collect();
        let sorted = {
            let mut c = codes.clone();
            c.sort_unstable();
            c
        };
        assert_eq!(codes, sorted, "ALL is in code order");
        codes.dedup();
        assert_eq!(codes.len(), depositkit_status::ALL.len());
        for status in depositkit_status::ALL {
            assert_eq!(depositkit_status::from_code(status as u32), Some(status));
        }
        assert_eq!(depositkit_status::from_code(2), None);
    }

    #[test]
    fn names_are_the_c_constants() {
        for status in depositkit_status::ALL {
            let name = status.name().to_str().unwrap();
            assert!(name.starts_with("DEPOSITKIT_STATUS_"), "{name}");
            // The rest of the name is the variant in SCREAMING_SNAKE_CASE, as cbindgen renders it.
            let variant = format!("{status:?}");
            let mut screaming = String::new();
            for (i, c) in variant.chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    screaming.push('_');
                }
                screaming.push(c.to_ascii_uppercase());
            }
            assert_eq!(&name["DEPOSITKIT_STATUS_".len()..], screaming);
        }
        let s = unsafe { CStr::from_ptr(depositkit_status_str(200)) };
        assert_eq!(s, c"DEPOSITKIT_STATUS_CONFIGURATION");
        let s = unsafe { CStr::from_ptr(depositkit_status_str(12345)) };
        assert_eq!(s, c"DEPOSITKIT_STATUS_UNKNOWN");
    }

    #[test]
    fn the_rpc_object_lives_and_dies_with_the_message() {
        let rpc = RpcErrorObject {
            code: -32011,
            message: "invalid session token".into(),
            data: Some(serde_json::json!({"param": 1})),
        };
        set_last_error_with_rpc("getUserInfo failed", Some(Box::new(rpc.clone())));
        with_last_error(|m| assert_eq!(m, "getUserInfo failed"));
        with_last_error_rpc(|r| assert_eq!(r, Some(&rpc)));
        set_last_error("another failure");
        with_last_error_rpc(|r| assert_eq!(r, None, "a failure without an object drops it"));
        set_last_error_with_rpc("again", Some(Box::new(rpc)));
        clear_last_error();
        with_last_error(|m| assert_eq!(m, ""));
        with_last_error_rpc(|r| assert_eq!(r, None, "a success drops it"));
    }

    #[test]
    fn nul_bytes_in_messages_are_escaped() {
        set_last_error("a\0b");
        with_last_error(|m| assert_eq!(m, "a\\0b"));
        clear_last_error();
        with_last_error(|m| assert_eq!(m, ""));
    }
}
