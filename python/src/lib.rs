//! `depositkit._native`: the pyo3 glue between depositkit-core and the `depositkit` package.
//!
//! This module is private. The public API is what `depositkit/__init__.py` re-exports; the
//! docstrings live in `depositkit/_native.pyi` (the record classes' entries generated from
//! [`records`], the rest written by hand). Each submodule owns one concern:
//!
//! - [`errors`]: the one conversion from `depositkit_core::Error` to the Python exception classes
//!   of `depositkit.exceptions`;
//! - [`conversions`]: turning Python arguments into core types (ints of any size, tokens,
//!   chain ids, strings) and core values into Python objects;
//! - [`validation`]: the chain, token, address and unit functions of spec §4;
//! - [`blocking`]: the one way a Python caller waits for Rust work: detached from the
//!   interpreter, checking for Ctrl-C every 100 ms;
//! - [`fork`]: the process that created a client or devnet, checked first by each of its
//!   methods, so that a forked child gets an error instead of a hang;
//! - [`user_rpc`]: `UserRpcClient`, the user-lookup service client;
//! - [`records`]: every record class (`User`, `Wallet`, the deposit client's records and events,
//!   fund-from-wallet's and the onramp's), each declared once by `py_record!`, which also gives
//!   its entry in `_native.pyi`;
//! - [`deposit`]: `DepositClient`, the deposit client of the spec, and [`events`]: how its
//!   events become Python objects and how Python callbacks are held for its event thread;
//! - [`funding`]: the arguments of the client's funding methods; [`providers`]: Python callables
//!   serving as the client's EVM wallet, Solana wallet and balance provider, called from library
//!   threads;
//! - [`onramp`]: the arguments of the client's onramp methods;
//! - [`signer`]: `CallbackSigner`, a Python callable that signs for the owner on the `particle`
//!   backend, called from library threads;
//! - [`devnet`]: `Devnet`, the emulator of the remote services, started in process (optionally
//!   backed by the local chains); only with the opt-in cargo feature `devnet` (production
//!   wheels leave it out, and `depositkit/__init__.py` then says how to get it).

use pyo3::prelude::*;
use pyo3::types::PyTuple;

mod aio;
mod blocking;
mod conversions;
mod deposit;
#[cfg(feature = "devnet")]
mod devnet;
mod errors;
mod events;
mod fleet;
mod fork;
mod funding;
mod log;
mod onramp;
mod options;
mod providers;
mod records;
mod signer;
mod user_rpc;
mod validation;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", depositkit_core::VERSION)?;
    // Whether this is a debug build: benches/compare_python.py refuses to time one.
    m.add("_DEBUG_BUILD", cfg!(debug_assertions))?;

    let tokens = depositkit_core::DEFAULT_SUPPORTED_TOKENS.map(|t| t.symbol());
    m.add("DEFAULT_SUPPORTED_TOKENS", PyTuple::new(py, tokens)?)?;
    m.add("DEFAULT_MIN_VALUE_USD", depositkit_core::DEFAULT_MIN_VALUE_USD)?;
    m.add("DEFAULT_POLLING_INTERVAL_MS", depositkit_core::DEFAULT_POLLING_INTERVAL_MS)?;
    m.add("MAX_DECIMALS", depositkit_core::MAX_DECIMALS)?;

    m.add_function(wrap_pyfunction!(errors::_error_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_raise_error, m)?)?;
    m.add_function(wrap_pyfunction!(_close_all, m)?)?;
    validation::register(m)?;
    user_rpc::register(m)?;
    records::register(m)?;
    deposit::register(m)?;
    fleet::register(m)?;
    signer::register(m)?;
    log::register(m)?;
    #[cfg(feature = "devnet")]
    devnet::register(m)?;
    Ok(())
}

/// Leaves the fleet with every `DepositFleet` still joined, then closes every `DepositClient`
/// and every `Devnet` still open. `depositkit/__init__.py`
/// registers it with `atexit`, so that the library's threads stop calling into Python before
/// the interpreter finalizes.
#[pyfunction]
fn _close_all(py: Python<'_>) {
    fleet::close_all(py);
    deposit::close_all(py);
    #[cfg(feature = "devnet")]
    devnet::close_all(py);
}
