//! The validation layer of spec §4 for Python: chains, tokens, addresses, units.
//!
//! Each function converts its arguments (see [`crate::conversions`]), calls the core, and
//! converts the result; the rules themselves live in depositkit-core only. These calls are
//! CPU-trivial, so they keep the GIL.

use depositkit_core as core;
use depositkit_core::{Chain, Error};
use pyo3::prelude::*;

use crate::conversions::{
    amount_arg, chain_id_arg, decimals_arg, json_to_py, str_arg, token_arg, u256_to_py,
};
use crate::errors::to_py_err;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_chains, m)?)?;
    m.add_function(wrap_pyfunction!(_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(get_chain_name, m)?)?;
    m.add_function(wrap_pyfunction!(is_valid_destination_chain, m)?)?;
    m.add_function(wrap_pyfunction!(is_supported_destination_token, m)?)?;
    m.add_function(wrap_pyfunction!(is_onramp_token_supported, m)?)?;
    m.add_function(wrap_pyfunction!(get_address_type, m)?)?;
    m.add_function(wrap_pyfunction!(is_valid_evm_address, m)?)?;
    m.add_function(wrap_pyfunction!(is_valid_solana_address, m)?)?;
    m.add_function(wrap_pyfunction!(validate_address_for_chain, m)?)?;
    m.add_function(wrap_pyfunction!(format_units, m)?)?;
    m.add_function(wrap_pyfunction!(parse_units, m)?)?;
    m.add_function(wrap_pyfunction!(get_token_decimals, m)?)?;
    m.add_function(wrap_pyfunction!(token_info, m)?)?;
    Ok(())
}

/// `[(constant name, chain id, human name)]` for every chain, in the spec's order: the table
/// `depositkit.CHAIN` is built from.
#[pyfunction]
fn _chains() -> Vec<(&'static str, u64, &'static str)> {
    Chain::ALL.iter().map(|c| (c.constant_name(), c.id(), c.name())).collect()
}

/// Every token symbol, in the spec's order: the members of `depositkit.TokenType`.
#[pyfunction]
fn _tokens() -> Vec<&'static str> {
    core::DEFAULT_SUPPORTED_TOKENS.iter().map(|t| t.symbol()).collect()
}

#[pyfunction]
fn get_chain_name(chain_id: &Bound<'_, PyAny>) -> PyResult<String> {
    let chain = chain_id_arg(chain_id)?;
    Ok(match chain.id {
        Some(id) => core::get_chain_name(id),
        None => format!("Unknown Chain ({})", chain.text()),
    })
}

#[pyfunction]
fn is_valid_destination_chain(chain_id: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(chain_id_arg(chain_id)?.id.is_some_and(core::is_valid_destination_chain))
}

#[pyfunction]
fn is_supported_destination_token(
    token: &Bound<'_, PyAny>,
    chain_id: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let token = token_arg(token)?;
    Ok(chain_id_arg(chain_id)?.id.is_some_and(|id| core::is_supported_destination_token(token, id)))
}

#[pyfunction]
fn is_onramp_token_supported(
    token: &Bound<'_, PyAny>,
    chain_id: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let token = token_arg(token)?;
    Ok(chain_id_arg(chain_id)?.id.is_some_and(|id| core::is_onramp_token_supported(token, id)))
}

#[pyfunction]
fn get_address_type(chain_id: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    // An id outside u64 is an unknown chain, and unknown chains are EVM (spec §4).
    let address_type = match chain_id_arg(chain_id)?.id {
        Some(id) => core::get_address_type(id),
        None => core::AddressType::Evm,
    };
    Ok(address_type.as_str())
}

#[pyfunction]
fn is_valid_evm_address(addr: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(core::is_valid_evm_address(&str_arg(addr, "addr")?))
}

#[pyfunction]
fn is_valid_solana_address(addr: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(core::is_valid_solana_address(&str_arg(addr, "addr")?))
}

#[pyfunction]
fn validate_address_for_chain(
    addr: &Bound<'_, PyAny>,
    chain_id: &Bound<'_, PyAny>,
) -> PyResult<&'static str> {
    let py = addr.py();
    let addr = str_arg(addr, "addr")?;
    let chain = chain_id_arg(chain_id)?;
    let result = match chain.id {
        Some(id) => core::validate_address_for_chain(&addr, id),
        None => Err(Error::configuration(format!("Unknown chain ID: {}", chain.text()))),
    };
    result.map(core::AddressType::as_str).map_err(|err| to_py_err(py, err))
}

#[pyfunction]
fn format_units(raw: &Bound<'_, PyAny>, decimals: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = raw.py();
    let value = amount_arg(raw)?;
    let decimals = decimals_arg(decimals)?;
    core::format_units(value, decimals).map_err(|err| to_py_err(py, err))
}

#[pyfunction]
fn parse_units<'py>(
    text: &Bound<'py, PyAny>,
    decimals: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = text.py();
    let text = str_arg(text, "text")?;
    let decimals = decimals_arg(decimals)?;
    let value = core::parse_units(&text, decimals).map_err(|err| to_py_err(py, err))?;
    u256_to_py(py, value)
}

#[pyfunction]
#[pyo3(signature = (token, chain_id=None))]
fn get_token_decimals(
    token: &Bound<'_, PyAny>,
    chain_id: Option<&Bound<'_, PyAny>>,
) -> PyResult<u8> {
    let token = token_arg(token)?;
    // An id outside u64 is an unknown chain: the token's usual decimals, as for any unknown id.
    let chain_id = match chain_id {
        Some(obj) => chain_id_arg(obj)?.id,
        None => None,
    };
    Ok(core::get_token_decimals(token, chain_id))
}

#[pyfunction]
fn token_info<'py>(
    token: &Bound<'py, PyAny>,
    chain_id: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = token.py();
    let token = token_arg(token)?;
    let info = chain_id_arg(chain_id)?
        .id
        .and_then(Chain::from_id)
        .and_then(|chain| core::token_info(token, chain));
    match info {
        None => Ok(py.None().into_bound(py)),
        Some(info) => {
            // The core's serde form is the one record shape of every face (camelCase keys).
            let value = serde_json::to_value(info).map_err(|e| {
                to_py_err(
                    py,
                    Error::new(core::ErrorKind::Internal, format!("token info as JSON: {e}")),
                )
            })?;
            json_to_py(py, &value)
        }
    }
}
