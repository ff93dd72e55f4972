//! `depositkit._native`: the pyo3 glue between depositkit-core and the `depositkit` package.
//!
//! This module is private. The public API is what `depositkit/__init__.py` re-exports; the
//! docstrings live in the hand-written `depositkit/_native.pyi`. Each submodule owns one concern:
//!
//! - [`errors`]: the one conversion from `depositkit_core::Error` to the Python exception classes
//!   of `depositkit.exceptions`;
//! - [`conversions`]: turning Python arguments into core types (ints of any size, tokens,
//!   chain ids, strings) and core values into Python objects;
//! - [`validation`]: the chain, token, address and unit functions of spec §4;
//! - [`user_rpc`]: `UserRpcClient`, `User` and `Wallet`, the user-lookup service client, whose
//!   network calls release the GIL and stay interruptible by Ctrl-C.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

mod conversions;
mod errors;
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
    validation::register(m)?;
    user_rpc::register(m)?;
    Ok(())
}
