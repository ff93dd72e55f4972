//! Python arguments into core types, core values into Python objects.
//!
//! Every function here type-checks its argument itself, so that a wrong type raises a `TypeError`
//! naming the argument and the type it got, and a value the core rejects raises the exception of
//! the core's error kind (through [`to_py_err`]). Nothing here can panic.

use std::borrow::Cow;

use depositkit_core::{Error, MAX_DECIMALS, TokenType, U256};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString};
use pyo3::{IntoPyObjectExt, intern};

use crate::errors::to_py_err;

/// The name of `obj`'s type, for a `TypeError` message.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "<unknown type>".to_owned())
}

/// `obj` as an `int` (or a subclass such as an `IntEnum` member); `bool` is refused because a
/// flag passed where a number belongs is always a mistake.
fn int_arg<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyInt>> {
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!("{what} must be an int, not bool")));
    }
    obj.cast::<PyInt>()
        .cloned()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be an int, not {}", type_name(obj))))
}

/// The decimal text of `int` for an error message. `int.__repr__` is used rather than `str()`
/// so that an `IntEnum` member prints as its number; an integer too long for Python to print
/// (`sys.get_int_max_str_digits`) is described by its size instead.
fn int_text(int: &Bound<'_, PyInt>) -> String {
    if let Ok(small) = int.extract::<i128>() {
        return small.to_string();
    }
    let py = int.py();
    let int_type = py.get_type::<PyInt>();
    if let Ok(text) = int_type
        .call_method1(intern!(py, "__repr__"), (int,))
        .and_then(|text| text.extract::<String>())
    {
        return text;
    }
    match int_type
        .call_method1(intern!(py, "bit_length"), (int,))
        .and_then(|bits| bits.extract::<u64>())
    {
        Ok(bits) => format!("<an integer of {bits} bits>"),
        Err(_) => "<an integer too large to print>".to_owned(),
    }
}

/// The text of a Python `str` (or `str` subclass such as a `TokenType` member). A string that
/// is not valid Unicode (lone surrogates) is taken with U+FFFD in their place: it then fails
/// validation like any other malformed text instead of raising `UnicodeEncodeError`.
pub(crate) fn str_arg<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, str>> {
    let text = obj.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a str, not {}", type_name(obj)))
    })?;
    Ok(text.to_cow().unwrap_or_else(|_| text.to_string_lossy()))
}

/// An optional argument: `None` when missing or `None`.
pub(crate) fn given<'a, 'py>(obj: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    obj.filter(|o| !o.is_none())
}

/// An optional `str` argument ([`str_arg`] when [`given`]).
pub(crate) fn text_opt(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    given(obj).map(|o| str_arg(o, what).map(|s| s.into_owned())).transpose()
}

/// A token given as a `TokenType` member or a symbol in any letter case.
pub(crate) fn token_arg(obj: &Bound<'_, PyAny>) -> PyResult<TokenType> {
    if !obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "token must be a TokenType or str, not {}",
            type_name(obj)
        )));
    }
    str_arg(obj, "token")?.parse::<TokenType>().map_err(|err| to_py_err(obj.py(), err))
}

/// A chain id from Python: any `int`. Ids outside `u64` (negative, huge) are kept as text so
/// that they behave like any other unknown chain.
pub(crate) struct ChainId<'py> {
    /// The id, when it fits a `u64`; `None` means "certainly not a chain depositkit knows".
    pub(crate) id: Option<u64>,
    int: Bound<'py, PyInt>,
}

impl ChainId<'_> {
    /// The id as decimal text, for messages.
    pub(crate) fn text(&self) -> String {
        match self.id {
            Some(id) => id.to_string(),
            None => int_text(&self.int),
        }
    }
}

pub(crate) fn chain_id_arg<'py>(obj: &Bound<'py, PyAny>) -> PyResult<ChainId<'py>> {
    let int = int_arg(obj, "chain_id")?;
    Ok(ChainId { id: int.extract::<u64>().ok(), int })
}

/// A decimals count. Values the core can judge (`0..=u32::MAX`) go to the core, which names
/// anything above 77; negative and huge values get the same message here.
pub(crate) fn decimals_arg(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    let int = int_arg(obj, "decimals")?;
    int.extract::<u32>().map_err(|_| {
        to_py_err(
            obj.py(),
            Error::invalid_argument(format!(
                "decimals {} is out of range: expected 0 to {MAX_DECIMALS}",
                int_text(&int)
            )),
        )
    })
}

/// A raw amount in smallest units: a Python `int` of any size from 0 to 2^256 - 1.
pub(crate) fn amount_arg(obj: &Bound<'_, PyAny>) -> PyResult<U256> {
    named_amount_arg(obj, "raw")
}

/// [`amount_arg`] for the argument `what` (named by a `TypeError`).
pub(crate) fn named_amount_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<U256> {
    let int = int_arg(obj, what)?;
    // Fast path: most amounts fit 64 bits.
    if let Ok(small) = int.extract::<u64>() {
        return Ok(U256::from(small));
    }
    let py = obj.py();
    let invalid = |why: &str| {
        to_py_err(
            py,
            Error::invalid_argument(format!("invalid raw amount {}: {why}", int_text(&int))),
        )
    };
    if int.lt(0)? {
        return Err(invalid("it is negative"));
    }
    // Unbound methods of `int`, so that an `int` subclass cannot change the answer.
    let int_type = py.get_type::<PyInt>();
    let bits: u64 = int_type.call_method1(intern!(py, "bit_length"), (&int,))?.extract()?;
    if bits > 256 {
        return Err(invalid("it exceeds 2^256 - 1"));
    }
    let bytes = int_type.call_method1(intern!(py, "to_bytes"), (&int, 32, intern!(py, "big")))?;
    U256::try_from_be_slice(bytes.cast::<PyBytes>()?.as_bytes())
        .ok_or_else(|| invalid("it exceeds 2^256 - 1"))
}

/// A 256-bit amount as a Python `int`.
pub(crate) fn u256_to_py(py: Python<'_>, value: U256) -> PyResult<Bound<'_, PyAny>> {
    if value.bit_len() <= 64 {
        return value.as_limbs()[0].into_bound_py_any(py);
    }
    let bytes = PyBytes::new(py, &value.to_be_bytes::<32>());
    py.get_type::<PyInt>().call_method1(intern!(py, "from_bytes"), (bytes, intern!(py, "big")))
}

/// A JSON value as the equivalent Python object (`dict`, `list`, `str`, `int`, `float`, `bool`,
/// `None`).
pub(crate) fn json_to_py<'py>(
    py: Python<'py>,
    value: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    match value {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(b) => b.into_bound_py_any(py),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_bound_py_any(py)
            } else if let Some(i) = n.as_i64() {
                i.into_bound_py_any(py)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)
            }
        }
        Value::String(s) => s.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, json_to_py(py, item)?)?;
            }
            Ok(dict.into_any())
        }
    }
}

/// How deep [`py_to_json`] follows nested containers (a list holding itself would never end).
const MAX_JSON_DEPTH: usize = 64;

/// A Python value as JSON, for what host providers answer: `None`, `bool`, `int`, `float`
/// (finite), `str`, mappings with `str` keys, lists and tuples. An `int` that fits no 64-bit
/// JSON number becomes its decimal text (raw amounts beyond 2^64: anvil's 10,000 ETH is
/// 10^22 wei), which is how the protocols spell such amounts anyway.
///
/// The error is the description of the first offending value (`"a value of type set at
/// [0].x"`), for the caller's message.
pub(crate) fn py_to_json(obj: &Bound<'_, PyAny>) -> Result<serde_json::Value, String> {
    to_json_at(obj, &mut String::new(), 0)
}

fn to_json_at(
    obj: &Bound<'_, PyAny>,
    path: &mut String,
    depth: usize,
) -> Result<serde_json::Value, String> {
    use serde_json::Value;
    let at = |path: &str| {
        if path.is_empty() {
            String::new()
        } else {
            format!(" at {}", path.trim_start_matches('.'))
        }
    };
    if depth > MAX_JSON_DEPTH {
        return Err(format!("containers nested deeper than {MAX_JSON_DEPTH} levels{}", at(path)));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(int) = obj.cast::<PyInt>() {
        if let Ok(n) = int.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = int.extract::<u64>() {
            return Ok(Value::from(n));
        }
        return Ok(Value::String(int_text(int)));
    }
    if let Ok(float) = obj.cast::<pyo3::types::PyFloat>() {
        let n = float.value();
        return serde_json::Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| format!("the non-finite float {n}{}", at(path)));
    }
    if obj.is_instance_of::<PyString>() {
        let text = obj.cast::<PyString>().map_err(|e| e.to_string())?;
        return Ok(Value::String(
            text.to_cow()
                .map(|t| t.into_owned())
                .unwrap_or_else(|_| text.to_string_lossy().into_owned()),
        ));
    }
    if let Ok(mapping) = obj.cast::<pyo3::types::PyMapping>() {
        let items =
            mapping.items().map_err(|e| format!("a mapping{} whose items fail: {e}", at(path)))?;
        let mut map = serde_json::Map::new();
        for item in items.iter() {
            let (key, value) = item
                .extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()
                .map_err(|e| format!("a mapping item{}: {e}", at(path)))?;
            let Ok(key) = key.cast::<PyString>() else {
                return Err(format!("a key of type {}{}", type_name(&key), at(path)));
            };
            let key = key.to_string_lossy().into_owned();
            let len = path.len();
            path.push('.');
            path.push_str(&key);
            let value = to_json_at(&value, path, depth + 1);
            path.truncate(len);
            map.insert(key, value?);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<pyo3::types::PyTuple>() {
        let mut out = Vec::new();
        let iter = obj.try_iter().map_err(|e| format!("a sequence{} that fails: {e}", at(path)))?;
        for (i, item) in iter.enumerate() {
            let item = item.map_err(|e| format!("a sequence{} that fails: {e}", at(path)))?;
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let value = to_json_at(&item, path, depth + 1);
            path.truncate(len);
            out.push(value?);
        }
        return Ok(Value::Array(out));
    }
    Err(format!("a value of type {}{}", type_name(obj), at(path)))
}
