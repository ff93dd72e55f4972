//! The options of `depositkit.DepositClient(...)`: keyword arguments read through the core's one
//! option table ([`OPTIONS`]).
//!
//! Each keyword is an option's Rust field name; its Python value is checked for the Python
//! types its [`OptionKind`] allows (a wrong type is a `TypeError`, turned into a
//! `ConfigurationTypeError` by the caller), written as JSON, and handed to the option's own
//! reader in the core — the same reader the JSON configuration and so the C face use. Nested
//! dicts (`refund`, `notifications`, `funding`, `onramp`) take keys in snake_case or camelCase.
//! Core messages name options by their spec names; [`pythonize`] writes them as Python does.
//! Nothing here lists the options: adding one to the table adds its keyword, its conversion and
//! (by `core/tests/option_table.rs`) its stub.

use depositkit_core::Error;
use depositkit_core::deposit::{
    DepositClientConfig, DestinationConfig, NESTED_OPTION_NAMES, OPTIONS, OptionError, OptionKind,
    option_by_field,
};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use serde_json::{Map, Value};

use crate::conversions::{str_arg, type_name};
use crate::errors::{as_option_error, option_type_error, to_py_err};

// --- names ------------------------------------------------------------------------------------

/// Whether `word` is an option's (or a nested key's) spec name that messages may contain.
fn is_option_name(word: &str) -> bool {
    OPTIONS.iter().any(|spec| spec.name == word)
        || NESTED_OPTION_NAMES.contains(&word)
        || matches!(word, "ownerAddress" | "onDepositEvent")
}

/// `minValueUSD` → `min_value_usd`, `chainId` → `chain_id`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if c.is_ascii_uppercase()
            && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
        {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
        previous = Some(c);
    }
    out
}

/// `delay_ms` → `delayMs`, `min_value_usd` → `minValueUSD` (the spec's one acronym); a name
/// without `_` is kept.
fn camel_case(name: &str) -> String {
    if name == "min_value_usd" {
        return "minValueUSD".to_owned();
    }
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A core configuration message with its option names in Python's spelling: every spec name of
/// an option outside quoted values (`"…"`), and every camelCase word inside backticks (serde's
/// "unknown field `delayMs`"). Quoted values — what the host passed — are kept as they are.
pub(crate) fn pythonize(message: &str) -> String {
    let mut out = String::with_capacity(message.len() + 8);
    let mut word = String::new();
    let mut in_quote = false;
    let mut escaped = false;
    let mut in_backticks = false;
    let flush = |word: &mut String, out: &mut String, in_backticks: bool| {
        if word.is_empty() {
            return;
        }
        let camel = word.chars().any(|c| c.is_ascii_uppercase())
            && word.chars().next().is_some_and(|c| c.is_ascii_lowercase());
        if is_option_name(word) || (in_backticks && camel) {
            out.push_str(&snake_case(word));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in message.chars() {
        if in_quote {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_quote = false;
            }
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out, in_backticks);
        match c {
            '"' => in_quote = true,
            '`' => in_backticks = !in_backticks,
            _ => {}
        }
        out.push(c);
    }
    flush(&mut word, &mut out, in_backticks);
    out
}

/// The exception of a core error raised by the client: configuration messages name the options
/// as Python spells them.
pub(crate) fn client_err(py: Python<'_>, err: Error) -> PyErr {
    if err.kind() == depositkit_core::ErrorKind::Configuration {
        to_py_err(py, Error::configuration(pythonize(err.message())))
    } else {
        to_py_err(py, err)
    }
}

fn config_error(py: Python<'_>, message: String) -> PyErr {
    to_py_err(py, Error::configuration(message))
}

/// A core option reader's refusal, in Python's spelling and class.
fn option_err(py: Python<'_>, err: OptionError) -> PyErr {
    let message = pythonize(&err.message);
    if err.wrong_type { option_type_error(py, message) } else { config_error(py, message) }
}

/// `repr(obj)`, cut to 80 characters.
pub(crate) fn shown(obj: &Bound<'_, PyAny>) -> String {
    let text = obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".to_owned());
    depositkit_core::describe::cut(&text, 80)
}

// --- values by kind ---------------------------------------------------------------------------

/// An `int` (not `bool`) as a JSON number; beyond 64 bits it is refused here. `what` says what
/// `name` must be (`must be an int`).
fn int_value(obj: &Bound<'_, PyAny>, name: &str, what: &str) -> PyResult<Value> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!("{name} {what}, not {}", type_name(obj))));
    }
    if let Ok(n) = obj.extract::<u64>() {
        Ok(Value::from(n))
    } else if let Ok(n) = obj.extract::<i64>() {
        Ok(Value::from(n))
    } else {
        Err(config_error(obj.py(), format!("{name} is out of range: {}", shown(obj))))
    }
}

/// A number: `int`, `float` or `decimal.Decimal` (not `bool`), finite.
fn number_value(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    let py = obj.py();
    let is_decimal = py
        .import(intern!(py, "decimal"))?
        .getattr(intern!(py, "Decimal"))
        .and_then(|decimal| obj.is_instance(&decimal))?;
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>() || is_decimal)
    {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a number, not {}",
            type_name(obj)
        )));
    }
    let value = if obj.is_instance_of::<PyFloat>() {
        obj.extract::<f64>()?
    } else {
        obj.call_method0(intern!(py, "__float__"))?.extract::<f64>()?
    };
    serde_json::Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| config_error(py, format!("{name} must be a finite number, got {value}")))
}

/// A token: a `TokenType` member or a symbol (a `str`); the core reads the symbol.
fn token_value(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    if !obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a TokenType or str, not {}",
            type_name(obj)
        )));
    }
    Ok(Value::String(str_arg(obj, name)?.into_owned()))
}

/// The items of an iterable option (a `str` is refused: it is an iterable of characters).
fn items<'py>(obj: &Bound<'py, PyAny>, name: &str, what: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let refused = || {
        PyTypeError::new_err(format!(
            "{name} must be an iterable of {what}, not {}",
            type_name(obj)
        ))
    };
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyMapping>() {
        return Err(refused());
    }
    obj.try_iter().map_err(|_| refused())?.collect()
}

/// A `str` or any `os.PathLike` (`pathlib.Path`).
fn path_value(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    let text = if obj.is_instance_of::<PyString>() {
        obj.clone()
    } else {
        obj.py().import("os")?.getattr("fspath")?.call1((obj,)).map_err(|_| {
            PyTypeError::new_err(format!(
                "{name} must be a str or os.PathLike, not {}",
                type_name(obj)
            ))
        })?
    };
    Ok(Value::String(str_arg(&text, name)?.into_owned()))
}

/// A Python value as JSON, for the nested option dicts. Dict keys may be `str` or `int` (the
/// chain ids of `funding.evm_rpc_urls`).
fn plain_json(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    if obj.is_none() {
        Ok(Value::Null)
    } else if obj.is_instance_of::<PyBool>() {
        Ok(Value::Bool(obj.extract()?))
    } else if obj.is_instance_of::<PyInt>() {
        int_value(obj, name, "must be an int")
    } else if obj.is_instance_of::<PyFloat>() {
        number_value(obj, name)
    } else if obj.is_instance_of::<PyString>() {
        Ok(Value::String(str_arg(obj, name)?.into_owned()))
    } else if let Ok(mapping) = obj.cast::<PyMapping>() {
        let mut map = Map::new();
        for item in mapping.items()?.iter() {
            let (key, value) = item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
            let key = dict_key(&key, name)?;
            let value = plain_json(&value, &format!("{name}[{key}]"))?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        obj.try_iter()?
            .enumerate()
            .map(|(i, item)| plain_json(&item?, &format!("{name}[{i}]")))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array)
    } else {
        Err(PyTypeError::new_err(format!(
            "{name} must hold only str, int, float, bool, None, lists and dicts, not {}",
            type_name(obj)
        )))
    }
}

/// A key of the dict `name`: a `str`, or an `int` as its decimal text (chain ids, as in
/// `funding.evm_rpc_urls`, `chain_rpc_urls` and `finality.chains`).
fn dict_key(key: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    if key.is_instance_of::<PyInt>() && !key.is_instance_of::<PyBool>() {
        Ok(key.str()?.to_string())
    } else {
        Ok(str_arg(key, &format!("a key of {name}"))?.into_owned())
    }
}

/// A top-level option dict, keys in snake_case or camelCase (or chain ids, `int` or `str`), as
/// the spec's JSON object.
fn object_value(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    let Ok(mapping) = obj.cast::<PyMapping>() else {
        return Err(PyTypeError::new_err(format!("{name} must be a dict, not {}", type_name(obj))));
    };
    let mut map = Map::new();
    for item in mapping.items()?.iter() {
        let (key, value) = item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
        let key = dict_key(&key, name)?;
        let camel = camel_case(&key);
        let value = plain_json(&value, &format!("{name}.{key}"))?;
        if map.insert(camel.clone(), value).is_some() {
            let how = if camel.bytes().all(|b| b.is_ascii_digit()) {
                "as an int and as a str"
            } else {
                "in snake_case and camelCase"
            };
            return Err(config_error(
                obj.py(),
                format!("{name} gives {} twice ({how})", snake_case(&camel)),
            ));
        }
    }
    Ok(Value::Object(map))
}

/// The value of an option of `kind` named `name` (as Python spells it), as the core's JSON.
fn value_of(kind: OptionKind, obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    match kind {
        OptionKind::Integer => int_value(obj, name, "must be an int"),
        OptionKind::Number => number_value(obj, name),
        OptionKind::Bool => {
            if !obj.is_instance_of::<PyBool>() {
                return Err(PyTypeError::new_err(format!(
                    "{name} must be a bool, not {}",
                    type_name(obj)
                )));
            }
            Ok(Value::Bool(obj.extract()?))
        }
        OptionKind::Text => Ok(Value::String(str_arg(obj, name)?.into_owned())),
        OptionKind::Path => path_value(obj, name),
        OptionKind::Token => token_value(obj, name),
        OptionKind::Tokens => items(obj, name, "tokens")?
            .iter()
            .map(|item| token_value(item, name))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array),
        OptionKind::Chains => items(obj, name, "chain ids")?
            .iter()
            .map(|item| int_value(item, name, "must contain chain ids (int)"))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array),
        OptionKind::Object => object_value(obj, name),
        OptionKind::ObjectOrBool if obj.is_instance_of::<PyBool>() => {
            Ok(Value::Bool(obj.extract()?))
        }
        OptionKind::ObjectOrBool => object_value(obj, name),
    }
}

// --- the configuration ------------------------------------------------------------------------

/// `destination` (also `set_destination`'s argument): a mapping with `chain_id` (or `chainId`),
/// `address` and `token`; an object with those attributes (`depositkit.DestinationConfig`); or a
/// bare chain id (USDC to the owner address on that chain). Read by the core's one reader.
pub(crate) fn destination_arg(obj: &Bound<'_, PyAny>) -> PyResult<DestinationConfig> {
    let py = obj.py();
    let mut fields = Map::new();
    let mut put = |key: String, value: &Bound<'_, PyAny>| -> PyResult<()> {
        if value.is_none() {
            return Ok(());
        }
        let known =
            DestinationConfig::FIELDS.iter().find(|(field, name, _)| *field == key || *name == key);
        let (name, value) = match known {
            Some((field, name, kind)) => {
                ((*name).to_owned(), value_of(*kind, value, &format!("destination.{field}"))?)
            }
            // The core names the unknown key.
            None => (key, Value::Null),
        };
        if fields.insert(name.clone(), value).is_some() {
            return Err(config_error(
                py,
                format!("destination gives both {} and {name}", snake_case(&name)),
            ));
        }
        Ok(())
    };
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        put("chain_id".to_owned(), obj)?;
    } else if let Ok(mapping) = obj.cast::<PyMapping>() {
        for item in mapping.items()?.iter() {
            let (key, value) = item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
            put(str_arg(&key, "a destination key")?.into_owned(), &value)?;
        }
    } else if obj.hasattr(intern!(py, "chain_id"))? {
        for (field, _, _) in DestinationConfig::FIELDS {
            if obj.hasattr(field)? {
                put(field.to_owned(), &obj.getattr(field)?)?;
            }
        }
    } else {
        return Err(PyTypeError::new_err(format!(
            "destination must be a dict with chain_id, address and token, a DestinationConfig or a chain id, not {}",
            type_name(obj)
        )));
    }
    DestinationConfig::from_json_value(Value::Object(fields)).map_err(|e| option_err(py, e))
}

/// The configuration of `DepositClient(owner_address, destination, **options)` (every field but
/// `on_deposit_event`, which the caller sets). `None` for an option means its default. A wrong
/// type is a `ConfigurationTypeError`; an unknown keyword is Python's own call error, a plain
/// `TypeError`.
pub(crate) fn build_config(
    owner_address: &Bound<'_, PyAny>,
    destination: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<DepositClientConfig> {
    let py = owner_address.py();
    let owner = str_arg(owner_address, "owner_address").map_err(|e| as_option_error(py, e))?;
    let destination = destination_arg(destination).map_err(|e| as_option_error(py, e))?;
    let mut config = DepositClientConfig::new(owner.into_owned(), destination);
    for (key, value) in options.into_iter().flat_map(|o| o.iter()) {
        let key = str_arg(&key, "a keyword")?.into_owned();
        let Some(spec) = option_by_field(&key) else {
            return Err(PyTypeError::new_err(format!(
                "DepositClient() got an unexpected keyword argument {}",
                shown(key.into_pyobject(py)?.as_any())
            )));
        };
        if value.is_none() {
            continue;
        }
        let json = value_of(spec.kind, &value, spec.field).map_err(|e| as_option_error(py, e))?;
        spec.set(&mut config, json).map_err(|e| option_err(py, e))?;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_names_are_written_in_snake_case_outside_quotes() {
        assert_eq!(
            pythonize("pollingIntervalMs must be at least 2000 ms (and at most a day), got 500"),
            "polling_interval_ms must be at least 2000 ms (and at most a day), got 500"
        );
        assert_eq!(
            pythonize("destination.chainId 196: X Layer is a deposit source only"),
            "destination.chain_id 196: X Layer is a deposit source only"
        );
        assert_eq!(
            pythonize(
                r#"ownerAddress must be a valid EVM address: "pollingIntervalMs \"ownerAddress" (bad)"#
            ),
            r#"owner_address must be a valid EVM address: "pollingIntervalMs \"ownerAddress" (bad)"#
        );
        assert_eq!(
            pythonize(
                "invalid refund: unknown field `delayMss`, expected one of `enabled`, `delayMs`"
            ),
            "invalid refund: unknown field `delay_mss`, expected one of `enabled`, `delay_ms`"
        );
        assert_eq!(pythonize("funding.minValueUSD must be"), "funding.min_value_usd must be");
        assert_eq!(pythonize("Client not initialized."), "Client not initialized.");
        for spec in OPTIONS {
            assert_eq!(
                pythonize(&format!("{} is bad", spec.name)),
                format!("{} is bad", spec.field)
            );
        }
    }

    #[test]
    fn keys_convert_both_ways() {
        for (snake, camel) in [
            ("delay_ms", "delayMs"),
            ("min_value_usd", "minValueUSD"),
            ("evm_rpc_urls", "evmRpcUrls"),
            ("refund_to_sender", "refundToSender"),
        ] {
            assert_eq!(camel_case(snake), camel);
            assert_eq!(snake_case(camel), snake);
        }
        assert_eq!(camel_case("delayMs"), "delayMs");
        assert_eq!(camel_case("enabled"), "enabled");
    }
}
