//! The fiat onramp for Python (`docs/funding.md` §5): the argument handling of
//! `DepositClient.open_onramp` and `handle_onramp_message` (the methods sit in `deposit.rs`). The
//! record `OnrampOrder` and the events `OnrampEvent` and `OnrampCompleteEvent` are declared in
//! [`crate::records::onramp`].

use depositkit_core::{Error, ErrorKind};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyMapping, PyString};
use serde_json::Value;

use crate::conversions::{given, py_to_json, str_arg, type_name};
use crate::errors::to_py_err;
pub(crate) use crate::records::onramp::PyOnrampOrder;

/// `open_onramp`'s fiat amount: `None`, or an `int`, `float` or `decimal.Decimal` (not
/// `bool`). The core refuses non-positive and non-finite amounts; an `int` too large for a
/// float is refused here the same way.
pub(crate) fn fiat_amount_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
    let Some(obj) = given(obj) else { return Ok(None) };
    let py = obj.py();
    let decimal = py.import(intern!(py, "decimal"))?.getattr(intern!(py, "Decimal"))?;
    let is_number = obj.is_instance_of::<PyInt>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance(&decimal)?;
    if obj.is_instance_of::<PyBool>() || !is_number {
        return Err(PyTypeError::new_err(format!(
            "amount must be a number (int, float or decimal.Decimal) or None, not {}",
            type_name(obj)
        )));
    }
    match obj.call_method0(intern!(py, "__float__")).and_then(|f| f.extract::<f64>()) {
        Ok(value) => Ok(Some(value)),
        Err(_) => Err(to_py_err(
            py,
            Error::invalid_argument(format!(
                "the fiat amount must be a positive number, got {}",
                obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".to_owned())
            )),
        )),
    }
}

/// `handle_onramp_message`'s message: a mapping (the posted object) or its JSON text.
pub(crate) fn message_arg(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_instance_of::<PyString>() {
        return Ok(Value::String(str_arg(obj, "message")?.into_owned()));
    }
    if !obj.is_instance_of::<PyMapping>() {
        return Err(PyTypeError::new_err(format!(
            "message must be a dict (the object the widget posted) or its JSON text, not {}",
            type_name(obj)
        )));
    }
    py_to_json(obj).map_err(|what| {
        to_py_err(
            obj.py(),
            Error::new(
                ErrorKind::InvalidArgument,
                format!("malformed onramp message: it holds {what}, which is not JSON"),
            ),
        )
    })
}
