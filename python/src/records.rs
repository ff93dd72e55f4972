//! The record classes of `depositkit`, each declared once with [`py_record!`]: its Python name,
//! the core type it wraps, its fields (Python name, Python type as the stub writes it, how the
//! value is read from the core record, docstring), its methods and its `repr()`. From that one
//! declaration come both the frozen pyo3 class (getters, methods, `__repr__`, `__eq__`, and
//! `__hash__` where asked for; the docstrings that `help()` shows) and the class's entry in
//! `depositkit/_native.pyi` ([`stub`]: `scripts/gen-stubs.sh` writes the entries into the file's
//! marked regions, and a test fails when the file is stale).
//!
//! The records, by concept: [`users`] (`User`, `Wallet`), [`deposits`] (`DepositAddresses`,
//! `DetectedDeposit`, `DeliveredAmount`, `SweepResult`), [`refunds`] (`RefundResult`,
//! `RefundEligibility`, `RecoveryResult`, `Notification`), [`history`] (`UATransaction`,
//! `TransactionsResponse`, `TokenTransactionsResponse`), [`events`] (the five events of the
//! deposit client), [`funding`] (`FundingBalance`, `FundingTransferResult`) and [`onramp`]
//! (`OnrampOrder`, `OnrampEvent`, `OnrampCompleteEvent`).
//!
//! Every class wraps the core's own record (`inner`), so the attribute values are exactly the
//! core's. `to_dict()` is mostly the core's serde form (the spec's camelCase record), with raw
//! amounts (`rawAmount`, at any depth) as Python `int`s ([`record_to_dict`]).

use depositkit_core::describe::quote;
use depositkit_core::{Error, ErrorKind, U256};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde::Serialize;

use crate::conversions::u256_to_py;
use crate::errors::to_py_err;

/// Declares a frozen record class wrapping a core record, and its stub.
///
/// ```text
/// py_record! {
///     /// The class docstring (also the stub's).
///     class "PythonName" as RustStruct(CoreType) hash by |r| (&r.a, &r.b);
///     repr |r, py| { Ok(format!(...)) }
///     getters {
///         /// The attribute's docstring.
///         name: "python type" = |r, py| -> RustType { expression reading `r: &CoreType` };
///     }
///     methods {
///         /// The method's docstring (none: `...` in the stub).
///         exception: "DepositSDKError" = |r, py| -> Bound<'py, PyAny> { ... };
///         /// `= serde`: the core record's serde form, by [`record_to_dict`].
///         to_dict: "dict[str, Any]" = serde;
///     }
/// }
/// ```
///
/// `hash by` (optional) makes the class hashable by the key it computes; every class compares
/// equal when its core records are equal. `py` is optional in each closure; `'py` is the
/// lifetime of that `Python` token. A Rust keyword as a Python name is written raw (`r#type`).
/// The struct gets `inner: CoreType`, `From<CoreType>` and `STUB`, the class's `.pyi` entry.
macro_rules! py_record {
    (
        $(#[doc = $doc:literal])*
        class $name:literal as $Py:ident($Inner:ty) hash by |$hr:ident| $hkey:expr;
        $($rest:tt)*
    ) => {
        impl ::std::hash::Hash for $Py {
            fn hash<H: ::std::hash::Hasher>(&self, state: &mut H) {
                let $hr = &self.inner;
                ::std::hash::Hash::hash(&$hkey, state)
            }
        }
        impl Eq for $Py {}
        py_record!(@split [true {
            // As pyo3's `#[pyclass(hash)]` computes it.
            fn __hash__(&self) -> u64 {
                let mut state = ::std::collections::hash_map::DefaultHasher::new();
                ::std::hash::Hash::hash(self, &mut state);
                ::std::hash::Hasher::finish(&state)
            }
        } $(#[doc = $doc])* $name $Py $Inner;] $($rest)*);
    };
    (
        $(#[doc = $doc:literal])*
        class $name:literal as $Py:ident($Inner:ty);
        $($rest:tt)*
    ) => {
        py_record!(@split [false {} $(#[doc = $doc])* $name $Py $Inner;] $($rest)*);
    };
    // The methods, one at a time: `= serde;` becomes the closure it stands for.
    (
        @split [$($head:tt)*]
        repr |$rr:ident $(, $rpy:ident)?| $repr:block
        getters $getters:tt
        methods { $($methods:tt)* }
    ) => {
        py_record!(@method [$($head)* repr |$rr $(, $rpy)?| $repr getters $getters] [] $($methods)*);
    };
    (
        @method $head:tt [$($done:tt)*]
        $(#[doc = $d:literal])* $m:ident: $t:literal = serde;
        $($rest:tt)*
    ) => {
        py_record!(@method $head [
            $($done)*
            $(#[doc = $d])*
            $m: $t = |record, py| -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::PyAny>> {
                $crate::records::record_to_dict(py, record)
            };
        ] $($rest)*);
    };
    (
        @method $head:tt [$($done:tt)*]
        $(#[doc = $d:literal])* $m:ident: $t:literal = |$($arg:ident),+| -> $ret:ty $body:block;
        $($rest:tt)*
    ) => {
        py_record!(@method $head [
            $($done)* $(#[doc = $d])* $m: $t = |$($arg),+| -> $ret $body;
        ] $($rest)*);
    };
    (@method [$($head:tt)*] [$($done:tt)*]) => {
        py_record!(@class $($head)* methods { $($done)* });
    };
    (
        @class $hash:literal { $($hash_method:tt)* }
        $(#[doc = $doc:literal])* $name:literal $Py:ident $Inner:ty;
        repr |$rr:ident $(, $rpy:ident)?| $repr:block
        getters {
            $(
                $(#[doc = $gdoc:literal])*
                $gname:ident: $gty:literal
                    = |$gr:ident $(, $gpy:ident)?| -> $gret:ty $gbody:block;
            )*
        }
        methods {
            $(
                $(#[doc = $mdoc:literal])*
                $mname:ident: $mty:literal
                    = |$mr:ident $(, $mpy:ident)?| -> $mret:ty $mbody:block;
            )*
        }
    ) => {
        $(#[doc = $doc])*
        #[::pyo3::pyclass(module = "depositkit", name = $name, frozen)]
        #[derive(PartialEq)]
        pub(crate) struct $Py {
            pub(crate) inner: $Inner,
        }

        impl From<$Inner> for $Py {
            fn from(inner: $Inner) -> Self {
                $Py { inner }
            }
        }

        #[cfg(test)]
        impl $Py {
            /// The class's entry in `depositkit/_native.pyi`.
            pub(crate) const STUB: $crate::records::stub::RecordStub =
                $crate::records::stub::RecordStub {
                    name: $name,
                    doc: &[$($doc),*],
                    hash: $hash,
                    properties: &[$($crate::records::stub::MemberStub {
                        name: stringify!($gname),
                        ty: $gty,
                        doc: &[$($gdoc),*],
                    }),*],
                    methods: &[$($crate::records::stub::MemberStub {
                        name: stringify!($mname),
                        ty: $mty,
                        doc: &[$($mdoc),*],
                    }),*],
                };
        }

        #[::pyo3::pymethods]
        #[allow(unused_braces, clippy::needless_lifetimes, clippy::wrong_self_convention)]
        impl $Py {
            $(
                #[getter]
                $(#[doc = $gdoc])*
                fn $gname<'py>(&self, __py: ::pyo3::Python<'py>) -> $gret {
                    let $gr = &self.inner;
                    $(let $gpy = __py;)?
                    $gbody
                }
            )*

            $(
                $(#[doc = $mdoc])*
                fn $mname<'py>(&self, __py: ::pyo3::Python<'py>) -> $mret {
                    let $mr = &self.inner;
                    $(let $mpy = __py;)?
                    $mbody
                }
            )*

            fn __repr__<'py>(&self, __py: ::pyo3::Python<'py>) -> ::pyo3::PyResult<String> {
                let $rr = &self.inner;
                $(let $rpy = __py;)?
                $repr
            }

            // `==` and `!=` between two objects of the class compare their core records;
            // anything else is `NotImplemented` (as pyo3's `#[pyclass(eq)]` has it).
            fn __richcmp__<'py>(
                &self,
                other: &::pyo3::Bound<'py, ::pyo3::PyAny>,
                op: ::pyo3::pyclass::CompareOp,
            ) -> ::pyo3::PyResult<::pyo3::Py<::pyo3::PyAny>> {
                use ::pyo3::IntoPyObjectExt as _;
                use ::pyo3::pyclass::CompareOp;
                let py = other.py();
                let Ok(other) = other.cast::<Self>() else { return Ok(py.NotImplemented()) };
                match op {
                    CompareOp::Eq => (self == other.get()).into_py_any(py),
                    CompareOp::Ne => (self != other.get()).into_py_any(py),
                    _ => Ok(py.NotImplemented()),
                }
            }

            $($hash_method)*
        }
    };
}

pub(crate) mod deposits;
pub(crate) mod events;
pub(crate) mod funding;
pub(crate) mod history;
pub(crate) mod onramp;
pub(crate) mod refunds;
#[cfg(test)]
pub(crate) mod stub;
pub(crate) mod users;

/// Lists every record class once, in the order the module adds them (`_native.__all__`), with the
/// group (submodule, and region of `_native.pyi`) it belongs to.
macro_rules! all_records {
    ($($group:ident::$Py:ident),* $(,)?) => {
        /// Adds every record class to the module.
        pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_class::<$group::$Py>()?;)*
            Ok(())
        }

        /// Every record class's stub, with its group, in the order of [`register`].
        #[cfg(test)]
        pub(crate) const STUBS: &[(&str, &stub::RecordStub)] =
            &[$((stringify!($group), &$group::$Py::STUB)),*];
    };
}

all_records! {
    users::PyUser,
    users::PyWallet,
    deposits::PyDepositAddresses,
    deposits::PyDetectedDeposit,
    deposits::PyDeliveredAmount,
    deposits::PySweepResult,
    events::PyLifecycleEvent,
    events::PyStatusChangedEvent,
    events::PyErrorEvent,
    refunds::PyRefundResult,
    refunds::PyRefundEligibility,
    refunds::PyRecoveryResult,
    refunds::PyNotification,
    history::PyUaTransaction,
    history::PyTransactionsResponse,
    history::PyTokenTransactionsResponse,
    events::PyRefundEvent,
    events::PyRecoveryEvent,
    funding::PyFundingBalance,
    funding::PyFundingTransferResult,
    onramp::PyOnrampOrder,
    onramp::PyOnrampEvent,
    onramp::PyOnrampCompleteEvent,
}

// --- what the records share ----------------------------------------------------------------------

/// The text of `text` as Python's `repr()` writes it (quotes and escapes included).
pub(crate) fn py_repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(PyString::new(py, text).repr()?.to_string())
}

/// `text` as [`py_repr`] writes it, or `None`.
pub(crate) fn py_repr_or_none(py: Python<'_>, text: Option<&str>) -> PyResult<String> {
    text.map_or_else(|| Ok("None".to_owned()), |text| py_repr(py, text))
}

/// `record`'s serde form as Python objects, `rawAmount` strings (at any depth, lists included)
/// as `int`s: the `to_dict()` of most record classes.
pub(crate) fn record_to_dict<'py>(
    py: Python<'py>,
    record: &impl Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(record).map_err(|e| {
        to_py_err(py, Error::new(ErrorKind::Internal, format!("record as JSON: {e}")))
    })?;
    json_with_ints(py, &value)
}

/// A JSON value as Python objects, as [`crate::conversions::json_to_py`] makes them, except that
/// a `rawAmount` string holding an integer becomes an `int`.
fn json_with_ints<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                let raw = match item {
                    Value::String(text) if key == "rawAmount" => text.parse::<U256>().ok(),
                    _ => None,
                };
                match raw {
                    Some(raw) => dict.set_item(key, u256_to_py(py, raw)?)?,
                    None => dict.set_item(key, json_with_ints(py, item)?)?,
                }
            }
            Ok(dict.into_any())
        }
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_with_ints(py, item)?)?;
            }
            Ok(list.into_any())
        }
        other => crate::conversions::json_to_py(py, other),
    }
}

/// A decimal string of smallest units from the core (`what` names it in the error) as a Python
/// `int`.
pub(crate) fn raw_text_to_py<'py>(
    py: Python<'py>,
    text: &str,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let raw = text.parse::<U256>().map_err(|_| {
        to_py_err(
            py,
            Error::new(
                ErrorKind::Protocol,
                format!("{what} raw amount {} is not an integer", quote(text)),
            ),
        )
    })?;
    u256_to_py(py, raw)
}

/// `{"address", "chain_id"}`, plus `"token"` when given.
pub(crate) fn destination_dict<'py>(
    py: Python<'py>,
    address: &str,
    chain_id: u64,
    token: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "address"), address)?;
    dict.set_item(intern!(py, "chain_id"), chain_id)?;
    if let Some(token) = token {
        dict.set_item(intern!(py, "token"), token)?;
    }
    Ok(dict)
}

/// A Python `list` of the record class `P` made from each of `records`.
pub(crate) fn records_list<'py, T, P>(
    py: Python<'py>,
    records: &[T],
) -> PyResult<Bound<'py, PyList>>
where
    T: Clone,
    P: From<T> + pyo3::PyClass + Into<pyo3::PyClassInitializer<P>>,
{
    let list = PyList::empty(py);
    for record in records {
        list.append(Py::new(py, P::from(record.clone()))?)?;
    }
    Ok(list)
}
