//! depositkit's C ABI: `libdepositkit.so`, `libdepositkit.a` and `include/depositkit.h`.
//!
//! This crate is a thin face over `depositkit-core`; it holds no logic of its own beyond
//! converting between C and Rust types. The header is generated from these sources by
//! `scripts/gen-header.sh` (cbindgen, pinned); the doc comments of every export become the
//! header's documentation, so they state ownership, NULL handling, status codes and lifetimes.
//!
//! # Rules every export follows
//!
//! - It runs inside the one boundary of `boundary.rs` (`boundary::status` or `boundary::value`,
//!   a test checks this for every export): NULL checks, `catch_unwind`, and the
//!   translation of errors and panics into a `depositkit_status` plus a thread-local last-error
//!   message. No panic crosses into C.
//! - It is `pub unsafe extern "C" fn` with a `# Safety` section when it takes pointers (so the
//!   Rust tests that call it state their obligations; `unsafe_op_in_unsafe_fn` is denied), and a
//!   safe `pub extern "C" fn` when it takes none.
//! - Fallible functions return `depositkit_status` and write their `out_*` parameters only on
//!   success. Functions returning `bool`, `size_t` or a pointer document their default.
//! - Enums are never taken as parameters (a C caller can pass any integer, and an out-of-range
//!   value in a Rust enum is undefined behaviour): tokens arrive as `uint32_t` and statuses as
//!   `uint32_t`, and are checked.
//! - Strings handed out are freed only by [`strings::depositkit_string_free`]; static strings
//!   (`const char *`) are never freed. Handles (`user_rpc::depositkit_user_rpc_client`,
//!   `deposit::depositkit_deposit_client`, `fleet::depositkit_fleet`, `devnet::depositkit_devnet`)
//!   are freed only by their own `_free` function, which accepts NULL.
//! - Callbacks (`deposit::depositkit_event_callback`,
//!   `notifications::depositkit_notifications_callback`, `funding::depositkit_provider_fn`,
//!   `signer::depositkit_sign_fn`) take `void *user_data` first, are
//!   `Option<unsafe extern "C" fn>` (NULL-able in C), run on a library-owned thread (the event
//!   dispatcher; for providers and signers, a worker of the runtime's blocking pool), and come
//!   with an optional `user_data_free` that the library calls exactly once.
//! - Handles of lists (`funding::depositkit_funding_balances`) are immutable and freed by their
//!   own `_free`.
//!
//! The crate needs `panic = "unwind"` (the default) for the boundary to catch panics.

// cbindgen emits items in module order, so the order here is the order of the header: errors
// and strings first, then one module per concept. (The blank lines stop rustfmt from sorting.)
pub mod status;

pub mod strings;

pub mod chains;

pub mod tokens;

pub mod units;

pub mod address;

pub mod user_rpc;

pub mod deposit;

pub mod signer;

pub mod refund;

pub mod recovery;

pub mod notifications;

pub mod history;

pub mod funding;

pub mod onramp;

pub mod log;

pub mod metrics;

pub mod fleet;

// The in-process devnet (`depositkit_devnet_*`): only with the opt-in cargo feature `devnet`
// (tests, demos); production builds have none of it. The header declares it inside
// `#if defined(DEPOSITKIT_DEVNET)`.
#[cfg(feature = "devnet")]
pub mod devnet;

mod boundary;

use std::ffi::c_char;

/// The smallest USD value of a deposit that is swept; smaller deposits reach the phase
/// `below_threshold` (the default `minValueUSD` of spec section 8).
pub const DEPOSITKIT_DEFAULT_MIN_VALUE_USD: f64 = 0.5;

/// How often the deposit watcher polls balances by default, in milliseconds (spec section 8).
pub const DEPOSITKIT_DEFAULT_POLLING_INTERVAL_MS: u64 = 3000;

/// The full version of depositkit, e.g. `"0.1.0"`, as a static NUL-terminated string.
///
/// The same version is in the `DEPOSITKIT_VERSION_MAJOR`, `_MINOR` and `_PATCH` macros of the
/// header; comparing the two tells a program whether the library it loaded matches the header it
/// was compiled against.
///
/// Never NULL. The string is static: do not free it.
#[unsafe(no_mangle)]
pub extern "C" fn depositkit_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    boundary::value(std::ptr::null(), || VERSION.as_ptr().cast())
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    #[test]
    #[allow(clippy::float_cmp)]
    fn constants_match_the_core() {
        assert_eq!(super::DEPOSITKIT_DEFAULT_MIN_VALUE_USD, depositkit_core::DEFAULT_MIN_VALUE_USD);
        assert_eq!(
            super::DEPOSITKIT_DEFAULT_POLLING_INTERVAL_MS,
            depositkit_core::DEFAULT_POLLING_INTERVAL_MS
        );
    }

    #[test]
    fn version_is_the_package_version() {
        let v = unsafe { CStr::from_ptr(super::depositkit_version()) };
        assert_eq!(v.to_str().unwrap(), depositkit_core::VERSION);
    }
}
