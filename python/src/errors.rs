//! The one mapping from `depositkit_core::Error` to Python exceptions.
//!
//! The exception classes are written in pure Python (`depositkit/exceptions.py`) so that they can
//! inherit from built-ins too (`ConfigurationError` is also a `ValueError`). They are named by
//! [`ErrorKind::class_name`]; this module imports them once, caches them, and builds every
//! exception the package raises for a core error through [`to_py_err`].

use depositkit_core::{Error, ErrorKind, RpcErrorObject};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::conversions::json_to_py;

/// The module that defines the exception classes.
const EXCEPTIONS_MODULE: &str = "depositkit.exceptions";

/// The class of each kind in [`ErrorKind::ALL`] that `exceptions.py` defines, imported on
/// first use.
static CLASSES: PyOnceLock<Vec<(ErrorKind, Py<PyType>)>> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Vec<(ErrorKind, Py<PyType>)>> {
    CLASSES.get_or_try_init(py, || {
        let module = py.import(EXCEPTIONS_MODULE)?;
        let mut classes = Vec::with_capacity(ErrorKind::ALL.len());
        for kind in ErrorKind::ALL {
            // A kind newer than exceptions.py falls back to the base class (see `class_of`);
            // the test suite checks that every kind has its own class.
            if let Ok(class) = module.getattr(kind.class_name()) {
                classes.push((kind, class.cast_into::<PyType>()?.unbind()));
            }
        }
        Ok(classes)
    })
}

/// The exception class of `kind`, or the base class `DepositSDKError` for a kind that
/// `exceptions.py` does not define (`ErrorKind` is non-exhaustive).
fn class_of<'py>(py: Python<'py>, kind: ErrorKind) -> PyResult<Bound<'py, PyType>> {
    let classes = classes(py)?;
    let found = classes
        .iter()
        .find(|(k, _)| *k == kind)
        .or_else(|| classes.iter().find(|(k, _)| *k == ErrorKind::DepositSdk));
    match found {
        Some((_, class)) => Ok(class.bind(py).clone()),
        None => {
            Err(PyRuntimeError::new_err(format!("{EXCEPTIONS_MODULE} defines no DepositSDKError")))
        }
    }
}

/// Converts a core error into the Python exception of its kind, with the core's message
/// unchanged. This is the only place core errors become Python exceptions.
///
/// The class is called with the message as its single argument: `NetworkError` is also a
/// `ConnectionError`, and `OSError` subclasses treat two or more arguments as `(errno, strerror)`.
/// The instance gets `code` and `kind` of the error's kind (equal to the class attributes, unless
/// the kind fell back to the base class), and an error carrying a JSON-RPC error object gets
/// `rpc_code`, `rpc_message` and `rpc_data`.
pub(crate) fn to_py_err(py: Python<'_>, err: Error) -> PyErr {
    match build_exception(py, &err) {
        Ok(exception) => PyErr::from_value(exception),
        Err(failure) => {
            // The package is broken (exceptions.py missing or edited); still say what failed.
            let fallback = PyRuntimeError::new_err(format!("{}: {}", err.kind(), err.message()));
            fallback.set_cause(py, Some(failure));
            fallback
        }
    }
}

fn build_exception<'py>(py: Python<'py>, err: &Error) -> PyResult<Bound<'py, PyAny>> {
    let kind = err.kind();
    let exception = class_of(py, kind)?.call1((err.message(),))?;
    exception.setattr(intern!(py, "code"), kind.code())?;
    exception.setattr(intern!(py, "kind"), kind.class_name())?;
    if let Some(rpc) = err.rpc_error() {
        exception.setattr(intern!(py, "rpc_code"), rpc.code)?;
        exception.setattr(intern!(py, "rpc_message"), &rpc.message)?;
        let data = match &rpc.data {
            Some(data) => json_to_py(py, data)?,
            None => py.None().into_bound(py),
        };
        exception.setattr(intern!(py, "rpc_data"), data)?;
    }
    Ok(exception)
}

/// Whether `value` is a `depositkit.DepositSDKError` (of any kind).
pub(crate) fn is_depositkit_error(py: Python<'_>, value: &Bound<'_, PyAny>) -> bool {
    class_of(py, ErrorKind::DepositSdk)
        .map(|base| value.is_instance(base.as_any()).unwrap_or(false))
        .unwrap_or(false)
}

/// What reading an option raised, under the one rule for options (`exceptions.py`,
/// `ConfigurationTypeError`): a plain `TypeError` (a wrong type, found by a conversion helper
/// shared with method arguments) becomes a `ConfigurationTypeError` with the same message — a
/// `ConfigurationError` that is also a `TypeError`; everything else passes unchanged.
pub(crate) fn as_option_error(py: Python<'_>, err: PyErr) -> PyErr {
    let is_plain_type_error = err.is_instance_of::<PyTypeError>(py)
        && class_of(py, ErrorKind::DepositSdk)
            .map(|base| !err.is_instance(py, base.as_any()))
            .unwrap_or(false);
    if !is_plain_type_error {
        return err;
    }
    let message = err.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    option_type_error(py, message)
}

/// A `ConfigurationTypeError` (see [`as_option_error`]) with `message`.
pub(crate) fn option_type_error(py: Python<'_>, message: String) -> PyErr {
    let built = py
        .import(EXCEPTIONS_MODULE)
        .and_then(|module| module.getattr(intern!(py, "ConfigurationTypeError")))
        .and_then(|class| class.call1((message.as_str(),)));
    match built {
        Ok(exception) => PyErr::from_value(exception),
        Err(failure) => {
            let fallback = PyTypeError::new_err(message);
            fallback.set_cause(py, Some(failure));
            fallback
        }
    }
}

/// `[(class_name, code)]` for every error kind, in code order: the table `exceptions.py` reads
/// the `code` of each class from, so the numbers live in Rust only.
#[pyfunction]
pub(crate) fn _error_kinds() -> Vec<(&'static str, u32)> {
    ErrorKind::ALL.iter().map(|kind| (kind.class_name(), kind.code())).collect()
}

/// Raises the exception of the kind whose code is `code`, as a core error with `message` would
/// (and, with `rpc = (code, message, data as JSON text)`, one carrying a JSON-RPC error object).
/// It exists so the test suite can check the conversion of every kind, including kinds the
/// validation functions never produce.
#[pyfunction]
#[pyo3(signature = (code, message, rpc=None))]
pub(crate) fn _raise_error(
    py: Python<'_>,
    code: u32,
    message: &str,
    rpc: Option<(i64, String, Option<String>)>,
) -> PyResult<()> {
    let Some(kind) = ErrorKind::ALL.into_iter().find(|k| k.code() == code) else {
        return Err(PyValueError::new_err(format!("no error kind has code {code}")));
    };
    let err = match rpc {
        None => Error::new(kind, message),
        Some((rpc_code, rpc_message, data)) => {
            let data = data
                .map(|text| serde_json::from_str(&text))
                .transpose()
                .map_err(|e| PyValueError::new_err(format!("rpc data is not JSON: {e}")))?;
            let object = RpcErrorObject { code: rpc_code, message: rpc_message, data };
            Error::rpc(kind, message, object)
        }
    };
    Err(to_py_err(py, err))
}
