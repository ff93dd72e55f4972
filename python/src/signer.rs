//! `depositkit.CallbackSigner`: a Python callable that signs for the owner's universal account
//! on the `particle` backend (`docs/particle.md` §4), given to `DepositClient(signer=...)`.
//!
//! It wraps the core's [`CallbackSigner`], which checks every signature against the signer's
//! address before it is used. The core calls it on its runtime's blocking pool, never on an
//! async worker; the call attaches to the interpreter ([`Python::try_attach`]) for the call only.
//! The other two signers, a key and a master seed, are options (`particle={"signer_key": ...}`)
//! read by the core's one option reader.
//!
//! What the callable raises becomes the core's error: a `depositkit.DepositSDKError` keeps its
//! kind and message (so `raise depositkit.NetworkError("KMS unreachable")` stays a network
//! error); anything else is an authentication error naming the exception's type and its text
//! (cut to 200 characters). An answer that is not 65 bytes is one too. No key is ever shown:
//! `repr()` gives the address and the input, never the callable (whose `repr()` might hold one).

use std::sync::Arc;

use depositkit_core::signer::{CallbackInput, CallbackSigner, Signer};
use depositkit_core::{Error, ErrorKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};
use pyo3::{PyTraverseError, PyVisit, intern};

use crate::conversions::{given, str_arg, type_name};
use crate::errors::{is_depositkit_error, option_type_error, to_py_err};
use crate::events::HeldCallable;
use crate::providers::cut;
use crate::records::py_repr;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCallbackSigner>()
}

/// The Python callable behind a [`CallbackSigner`], held where the collector can see it
/// ([`PyCallbackSigner`]'s `__traverse__`).
struct SignerSlot {
    callable: HeldCallable,
}

impl SignerSlot {
    /// One signature, attached: the callable's 65 bytes, or the error it made.
    fn sign(&self, py: Python<'_>, message: &[u8; 32]) -> depositkit_core::Result<[u8; 65]> {
        let Some(callable) = self.callable.get(py) else {
            return Err(Error::new(
                ErrorKind::Authentication,
                "the signer callback was dropped (its CallbackSigner was collected)",
            ));
        };
        let answer = callable
            .bind(py)
            .call1((PyBytes::new(py, message),))
            .map_err(|err| raised(py, &err))?;
        signature_of(&answer)
    }
}

/// The core's error for an exception the callable raised.
fn raised(py: Python<'_>, err: &PyErr) -> Error {
    let value = err.value(py);
    let kind = value
        .getattr(intern!(py, "code"))
        .and_then(|code| code.extract::<u32>())
        .ok()
        .and_then(|code| ErrorKind::ALL.into_iter().find(|kind| kind.code() == code));
    let text = value
        .str()
        .map(|text| cut(&text.to_string_lossy()))
        .unwrap_or_else(|_| "<an exception whose str() fails>".to_owned());
    let depositkit_error = is_depositkit_error(py, value.as_any());
    match kind {
        Some(kind) if depositkit_error => Error::new(kind, text),
        _ => Error::new(
            ErrorKind::Authentication,
            format!("the signer callback raised {}: {text}", type_name(value.as_any())),
        ),
    }
}

/// The callable's answer as a signature: `bytes` or `bytearray` of 65 bytes.
fn signature_of(answer: &Bound<'_, PyAny>) -> depositkit_core::Result<[u8; 65]> {
    let bytes = if let Ok(bytes) = answer.cast::<PyBytes>() {
        bytes.as_bytes().to_vec()
    } else if let Ok(array) = answer.cast::<PyByteArray>() {
        array.to_vec()
    } else {
        return Err(Error::new(
            ErrorKind::Authentication,
            format!(
                "the signer callback returned {}, not bytes (65 bytes r || s || v)",
                type_name(answer)
            ),
        ));
    };
    <[u8; 65]>::try_from(bytes.as_slice()).map_err(|_| {
        Error::new(
            ErrorKind::Authentication,
            format!("the signer callback returned {} bytes, not 65 (r || s || v)", bytes.len()),
        )
    })
}

/// `input` as the core's [`CallbackInput`].
fn input_arg(obj: &Bound<'_, PyAny>) -> PyResult<CallbackInput> {
    match &*str_arg(obj, "input")? {
        "digest" => Ok(CallbackInput::Digest),
        "message" => Ok(CallbackInput::Message),
        other => Err(PyValueError::new_err(format!(
            "input must be \"digest\" or \"message\", not {}",
            py_repr(obj.py(), other)?
        ))),
    }
}

fn input_name(input: CallbackInput) -> &'static str {
    match input {
        CallbackInput::Digest => "digest",
        CallbackInput::Message => "message",
    }
}

/// `DepositClient`'s `signer=`: a `CallbackSigner`, or `None`. Anything else is a
/// `ConfigurationTypeError` naming its type (never its value: it may be a key).
pub(crate) fn signer_arg(
    py: Python<'_>,
    obj: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Py<PyCallbackSigner>>> {
    let Some(obj) = given(obj) else {
        return Ok(None);
    };
    match obj.cast::<PyCallbackSigner>() {
        Ok(signer) => Ok(Some(signer.clone().unbind())),
        Err(_) => Err(option_type_error(
            py,
            format!(
                "signer must be a depositkit.CallbackSigner, not {} (a key or a seed goes in \
                 particle={{\"signer_key\": ...}} or {{\"signer_seed\": ...}})",
                type_name(obj)
            ),
        )),
    }
}

#[pyclass(module = "depositkit", name = "CallbackSigner", frozen)]
pub(crate) struct PyCallbackSigner {
    signer: CallbackSigner,
    slot: Arc<SignerSlot>,
}

impl PyCallbackSigner {
    /// The core signer a client signs with.
    pub(crate) fn core(&self) -> CallbackSigner {
        self.signer.clone()
    }
}

#[pymethods]
impl PyCallbackSigner {
    #[new]
    #[pyo3(
        signature = (address, sign, *, input = None),
        text_signature = "(address, sign, *, input='digest')"
    )]
    fn new(
        py: Python<'_>,
        address: &Bound<'_, PyAny>,
        sign: &Bound<'_, PyAny>,
        input: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let address = str_arg(address, "address")?;
        if !sign.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "sign must be a callable (bytes) -> bytes, not {}",
                type_name(sign)
            )));
        }
        let input = match given(input) {
            Some(input) => input_arg(input)?,
            None => CallbackInput::Digest,
        };
        let slot = Arc::new(SignerSlot { callable: HeldCallable::new(sign.clone().unbind()) });
        let held = Arc::clone(&slot);
        let signer = CallbackSigner::new(&address, input, move |message| {
            Python::try_attach(|py| held.sign(py, message)).unwrap_or_else(|| {
                Err(Error::new(ErrorKind::Internal, "the Python interpreter is shutting down"))
            })
        })
        .map_err(|e| to_py_err(py, e))?;
        Ok(PyCallbackSigner { signer, slot })
    }

    /// The signer's address, EIP-55.
    #[getter]
    fn address(&self) -> String {
        self.signer.address().to_checksum(None)
    }

    /// `"digest"` or `"message"`.
    #[getter]
    fn input(&self) -> &'static str {
        input_name(self.signer.input())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.CallbackSigner address={} input={}>",
            py_repr(py, &self.address())?,
            py_repr(py, self.input())?
        ))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.slot.callable.traverse(&visit)
    }

    fn __clear__(&self) {
        drop(self.slot.callable.clear());
    }
}
