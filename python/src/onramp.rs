//! The fiat onramp for Python (`docs/funding.md` §5): the record `OnrampOrder`, the events
//! `OnrampEvent` (`onramp:<name>`) and `OnrampCompleteEvent` (`onramp:complete`), and the
//! argument handling of `DepositClient.open_onramp` and `handle_onramp_message` (the methods sit
//! in `deposit.rs`).

use depositkit_core::onramp::{OnrampEventName, OnrampOrder};
use depositkit_core::{Error, ErrorKind};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyMapping, PyString};
use serde_json::Value;

use crate::conversions::{given, py_to_json, str_arg, type_name};
use crate::errors::to_py_err;
use crate::events::{destination_dict, py_repr, record_to_dict};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyOnrampOrder>()?;
    m.add_class::<PyOnrampEvent>()?;
    m.add_class::<PyOnrampCompleteEvent>()?;
    Ok(())
}

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

// --- records and events -------------------------------------------------------------------------

#[pyclass(module = "depositkit", name = "OnrampOrder", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyOnrampOrder {
    inner: OnrampOrder,
}

impl From<OnrampOrder> for PyOnrampOrder {
    fn from(inner: OnrampOrder) -> Self {
        PyOnrampOrder { inner }
    }
}

#[pymethods]
impl PyOnrampOrder {
    #[getter]
    fn amount(&self) -> &str {
        &self.inner.amount
    }

    #[getter]
    fn token(&self) -> &'static str {
        self.inner.token.symbol()
    }

    #[getter]
    fn status(&self) -> &str {
        &self.inner.status
    }

    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }

    #[getter]
    fn destination<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = &self.inner.destination;
        destination_dict(py, &d.address, d.chain_id, None)
    }

    #[getter]
    fn fiat_amount(&self) -> Option<f64> {
        self.inner.fiat_amount
    }

    #[getter]
    fn fiat_currency(&self) -> Option<&str> {
        self.inner.fiat_currency.as_deref()
    }

    #[getter]
    fn tx_hash(&self) -> Option<&str> {
        self.inner.tx_hash.as_deref()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        record_to_dict(py, &self.inner)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.OnrampOrder id={} {} {} to {} on chain {} status={}>",
            py_repr(py, &self.inner.id)?,
            self.inner.amount,
            self.inner.token.symbol(),
            py_repr(py, &self.inner.destination.address)?,
            self.inner.destination.chain_id,
            py_repr(py, &self.inner.status)?
        ))
    }
}

#[pyclass(module = "depositkit", name = "OnrampEvent", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyOnrampEvent {
    name: OnrampEventName,
    payload: Value,
}

impl PyOnrampEvent {
    pub(crate) fn new(name: OnrampEventName, payload: Value) -> Self {
        PyOnrampEvent { name, payload }
    }
}

#[pymethods]
impl PyOnrampEvent {
    #[getter]
    fn r#type(&self) -> &'static str {
        self.name.type_name()
    }

    #[getter]
    fn name(&self) -> &'static str {
        self.name.as_str()
    }

    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::conversions::json_to_py(py, &self.payload)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "type"), self.name.type_name())?;
        dict.set_item(intern!(py, "payload"), crate::conversions::json_to_py(py, &self.payload)?)?;
        Ok(dict)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let id = self.payload.get("id").and_then(Value::as_str);
        Ok(match id {
            Some(id) => {
                format!(
                    "<depositkit.OnrampEvent {} order={}>",
                    self.name.type_name(),
                    py_repr(py, id)?
                )
            }
            None => format!("<depositkit.OnrampEvent {}>", self.name.type_name()),
        })
    }
}

#[pyclass(module = "depositkit", name = "OnrampCompleteEvent", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PyOnrampCompleteEvent {
    order: OnrampOrder,
}

impl From<OnrampOrder> for PyOnrampCompleteEvent {
    fn from(order: OnrampOrder) -> Self {
        PyOnrampCompleteEvent { order }
    }
}

#[pymethods]
impl PyOnrampCompleteEvent {
    #[getter]
    fn r#type(&self) -> &'static str {
        "onramp:complete"
    }

    #[getter]
    fn order(&self) -> PyOnrampOrder {
        PyOnrampOrder::from(self.order.clone())
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        record_to_dict(py, &self.order)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.OnrampCompleteEvent order={} {} {}>",
            py_repr(py, &self.order.id)?,
            self.order.amount,
            self.order.token.symbol()
        ))
    }
}
