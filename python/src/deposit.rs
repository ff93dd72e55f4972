//! The deposit client for Python: `depositkit.DepositClient` over
//! `depositkit_core::deposit::DepositClient`.
//!
//! - **Options** are keyword arguments in snake_case, each mapped to one field of
//!   [`DepositClientConfig`] (see [`build_config`]); the nested ones (`refund`, `notifications`,
//!   `funding`, `onramp`) are dicts whose keys may be snake_case or the spec's camelCase. A value
//!   of the wrong type raises `TypeError`; a bad value `ConfigurationError` (a `ValueError`),
//!   whose message names the option by its Python name (see [`pythonize`]).
//! - **Blocking calls** (`initialize`, `poll_now`, `sweep`, `refund`, `can_refund`,
//!   `stuck_funds`, `recover_funds`, `transactions`, `get_transactions`,
//!   `get_token_transactions`, `get_transaction`, and the funding calls `connect_evm_wallet`,
//!   `evm_accounts`, `prompt_evm_account_selection`, `connect_solana_wallet`,
//!   `get_wallet_balances`, `fund_from_wallet`) run on a worker thread while the caller waits
//!   with the GIL released and stays interruptible by Ctrl-C ([`crate::blocking`]).
//! - **Wallet providers** (`set_evm_wallet`, `set_solana_wallet`, `set_balance_provider`) are
//!   Python callables the core calls from its threads ([`crate::providers`]); the exception a
//!   provider raised during a funding call becomes the `__cause__` of that call's exception.
//!   The records and argument rules are in [`crate::funding`] and [`crate::onramp`].
//!   `next_event` and iteration wait in 100 ms slices, detached. The other methods only read or
//!   change the client's state under a short lock.
//! - **Callbacks** (`on_deposit_event=`, `subscribe`, `subscribe_notifications`) are held in
//!   [`CallbackSlot`]s: the core's event thread calls them attached to the interpreter, and
//!   their exceptions go to `sys.unraisablehook`. The client's `__traverse__`/`__clear__`
//!   expose them (and the wallet providers) to the garbage collector, so a callback that refers
//!   to its client is collected with it.
//! - **Lifecycle**: `close()` (also `with`, dropping the object, and the `atexit` hook
//!   [`close_all`]) stops the client with the GIL released, so that the event thread can finish a
//!   callback that is waiting for the GIL.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use depositkit_core as core;
use depositkit_core::deposit::{
    DepositClient, DepositClientConfig, DestinationConfig, FundingConfig, NotificationRecord,
    NotificationsConfig, OnrampConfig, RecordedEvent, RefundConfig, RefundReason, SubscriptionId,
    TokenTransactionFilter,
};
use depositkit_core::describe::quote;
use depositkit_core::funding::EvmProvider;
use depositkit_core::{Error, ErrorKind, TokenType};
use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit, intern};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::blocking::{wait_for_raw, wait_sliced};
use crate::conversions::{chain_id_arg, given, json_to_py, str_arg, text_opt, type_name};
use crate::errors::{as_option_error, option_type_error, to_py_err};
use crate::events::{
    CallbackSlot, PyDepositAddresses, PyDetectedDeposit, PyLifecycleEvent, PyNotification,
    PyRecoveryResult, PyRefundEligibility, PyRefundResult, PySweepResult,
    PyTokenTransactionsResponse, PyTransactionsResponse, PyUaTransaction, event_to_py,
    notifications_config_dict, notifications_to_py, py_repr, refund_config_dict,
    resolved_destination_dict,
};
use crate::fork::Origin;
use crate::funding::{
    EvmProviderArg, PyFundingBalance, PyFundingTransferResult, balance_arg, callable_arg,
    evm_provider_arg, raw_amount_arg,
};
use crate::onramp::{PyOnrampOrder, fiat_amount_arg, message_arg};
use crate::providers::{FailureLog, ProviderRole, ProviderSlot, Providers};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDepositClient>()
}

/// The class name in the messages of [`crate::fork`].
const CLASS: &str = "DepositClient";

/// A core client and whether its `close()` has returned.
struct Shared {
    client: DepositClient,
    /// The process that created the client: in a forked child it is neither used nor closed.
    origin: Origin,
    /// Set once `close()` returned: every event the client will ever produce is queued by then
    /// (the core's own flag is set at the start of `close()`, before its last status change).
    closed: AtomicBool,
}

impl Shared {
    fn close(&self) {
        let _ = self.client.close();
        self.closed.store(true, Ordering::Release);
    }

    fn finished(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

/// Every client not yet dropped, for [`close_all`].
static LIVE: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

/// Closes every client still alive (the package's `atexit` hook): their event threads stop
/// before the interpreter finalizes. Runs detached from the interpreter.
pub(crate) fn close_all(py: Python<'_>) {
    let live: Vec<Arc<Shared>> = LIVE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain(..)
        .filter_map(|weak| weak.upgrade())
        .filter(|shared| shared.origin.is_here())
        .collect();
    py.detach(move || {
        for shared in live {
            shared.close();
        }
    });
}

fn remember(client: &Arc<Shared>) {
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.retain(|weak| weak.strong_count() > 0);
    live.push(Arc::downgrade(client));
}

// --- errors -----------------------------------------------------------------------------------

/// The spec's camelCase option names that core messages may contain; [`pythonize`] writes them
/// in snake_case, the names of the Python keywords and dict keys.
const OPTION_NAMES: &[&str] = &[
    "ownerAddress",
    "intermediaryAddress",
    "uaProjectId",
    "minValueUSD",
    "supportedTokens",
    "supportedChains",
    "pollingIntervalMs",
    "minPollingIntervalMs",
    "autoSweep",
    "sweepRetryDelayMs",
    "reconcileIntervalMs",
    "processingTimeoutMs",
    "servicesUrl",
    "jwtServiceUrl",
    "signerUrl",
    "accountServiceUrl",
    "requestTimeoutMs",
    "httpRetries",
    "httpInitialBackoffMs",
    "callTimeoutMs",
    "eventQueueCapacity",
    "storePath",
    "onDepositEvent",
    "chainId",
    "delayMs",
    "maxAttempts",
    "refundToSender",
    "durationMs",
    "className",
    "apiKey",
    "proxyUrl",
    "evmRpcUrls",
    "solanaRpcUrl",
    "fiatCurrency",
    "defaultFiatAmount",
    "paymentMode",
    "widgetUrl",
    "balanceProvider",
    "balanceApiUrl",
];

/// `minValueUSD` → `min_value_usd`, `chainId` → `chain_id`.
fn snake_case(name: &str) -> String {
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

/// A core configuration message with its option names in Python's spelling: every name of
/// [`OPTION_NAMES`] outside quoted values (`"…"`), and every camelCase word inside backticks
/// (serde's "unknown field `delayMs`"). Quoted values — what the host passed — are kept as they
/// are.
fn pythonize(message: &str) -> String {
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
        if OPTION_NAMES.contains(&word.as_str()) || (in_backticks && camel) {
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
fn client_err(py: Python<'_>, err: Error) -> PyErr {
    if err.kind() == ErrorKind::Configuration {
        to_py_err(py, Error::configuration(pythonize(err.message())))
    } else {
        to_py_err(py, err)
    }
}

fn config_error(py: Python<'_>, message: String) -> PyErr {
    to_py_err(py, Error::configuration(message))
}

/// `repr(obj)`, cut to 80 characters.
fn shown(obj: &Bound<'_, PyAny>) -> String {
    let text = obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".to_owned());
    depositkit_core::describe::cut(&text, 80)
}

// --- option conversion ------------------------------------------------------------------------

/// An `int` (not `bool`) option that fits `T`, else `ConfigurationError` naming it.
fn int_opt<'py, T>(
    obj: Option<&Bound<'py, PyAny>>,
    name: &str,
    expected: &str,
) -> PyResult<Option<T>>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    let Some(obj) = given(obj) else { return Ok(None) };
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!("{name} must be an int, not {}", type_name(obj))));
    }
    obj.extract::<T>().map(Some).map_err(|_| {
        config_error(obj.py(), format!("{name} must be {expected}, got {}", shown(obj)))
    })
}

/// A number option: `int`, `float` or `decimal.Decimal` (not `bool`).
fn number_opt(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<f64>> {
    let Some(obj) = given(obj) else { return Ok(None) };
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
        obj.extract::<f64>()
    } else {
        obj.call_method0(intern!(py, "__float__"))?.extract::<f64>()
    };
    value.map(Some).map_err(|_| {
        config_error(py, format!("{name} must be a finite number, got {}", shown(obj)))
    })
}

fn bool_opt(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<bool>> {
    let Some(obj) = given(obj) else { return Ok(None) };
    if !obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!("{name} must be a bool, not {}", type_name(obj))));
    }
    Ok(Some(obj.extract::<bool>()?))
}

/// The items of an iterable option (a `str` is refused: it is an iterable of characters).
fn items<'py>(obj: &Bound<'py, PyAny>, name: &str, what: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyMapping>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an iterable of {what}, not {}",
            type_name(obj)
        )));
    }
    let iter = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name} must be an iterable of {what}, not {}",
            type_name(obj)
        ))
    })?;
    iter.collect()
}

const TOKEN_LIST: &str = "ETH, USDC, USDT, BTC, SOL, BNB";

/// A token (a `TokenType` or its symbol in any case) of the option `name`.
fn token_of(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<TokenType> {
    if !obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a TokenType or str, not {}",
            type_name(obj)
        )));
    }
    let text = str_arg(obj, name)?;
    text.parse::<TokenType>().map_err(|_| {
        config_error(obj.py(), format!("{name} must be one of {TOKEN_LIST}, got {}", quote(&text)))
    })
}

fn tokens_opt(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<TokenType>>> {
    let Some(obj) = given(obj) else { return Ok(None) };
    items(obj, "supported_tokens", "tokens")?
        .iter()
        .map(|item| token_of(item, "supported_tokens"))
        .collect::<PyResult<Vec<_>>>()
        .map(Some)
}

fn chains_opt(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u64>>> {
    let Some(obj) = given(obj) else { return Ok(None) };
    let mut chains = Vec::new();
    for item in items(obj, "supported_chains", "chain ids")? {
        if item.is_instance_of::<PyBool>() || !item.is_instance_of::<PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "supported_chains must contain chain ids (int), not {}",
                type_name(&item)
            )));
        }
        let id = item.extract::<u64>().map_err(|_| {
            config_error(
                obj.py(),
                format!(
                    "supported_chains contains an unknown chain ID: {}. Use chains from the CHAIN constant.",
                    shown(&item)
                ),
            )
        })?;
        chains.push(id);
    }
    Ok(Some(chains))
}

/// `destination` (also `set_destination`'s argument): a mapping with `chain_id` (or `chainId`),
/// `address` and `token`; an object with those attributes (`depositkit.DestinationConfig`); or a
/// bare chain id (USDC to the owner address on that chain).
fn destination_arg<'py>(obj: &Bound<'py, PyAny>) -> PyResult<DestinationConfig> {
    let py = obj.py();
    let (chain_id, address, token) = if obj.is_instance_of::<PyInt>()
        && !obj.is_instance_of::<PyBool>()
    {
        (Some(obj.clone()), None, None)
    } else if let Ok(mapping) = obj.cast::<PyMapping>() {
        let mut chain_id = None;
        let mut address = None;
        let mut token = None;
        for item in mapping.items()?.iter() {
            let (key, value) = item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
            let key_text = str_arg(&key, "a destination key")?.into_owned();
            let slot = match key_text.as_str() {
                "chain_id" | "chainId" => &mut chain_id,
                "address" => &mut address,
                "token" => &mut token,
                _ => {
                    return Err(config_error(
                        py,
                        format!(
                            "destination has an unknown key {}: expected chain_id, address and token",
                            quote(&key_text)
                        ),
                    ));
                }
            };
            if slot.is_some() {
                return Err(config_error(
                    py,
                    "destination gives both chain_id and chainId".to_owned(),
                ));
            }
            *slot = Some(value);
        }
        (chain_id, address, token)
    } else if obj.hasattr(intern!(py, "chain_id"))? {
        let attr = |name: &str| -> PyResult<Option<Bound<'py, PyAny>>> {
            if obj.hasattr(name)? { Ok(Some(obj.getattr(name)?)) } else { Ok(None) }
        };
        (attr("chain_id")?, attr("address")?, attr("token")?)
    } else {
        return Err(PyTypeError::new_err(format!(
            "destination must be a dict with chain_id, address and token, a DestinationConfig or a chain id, not {}",
            type_name(obj)
        )));
    };
    let Some(chain_id) = chain_id.filter(|c| !c.is_none()) else {
        return Err(config_error(py, "destination.chain_id is required".to_owned()));
    };
    if chain_id.is_instance_of::<PyBool>() || !chain_id.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "destination.chain_id must be an int, not {}",
            type_name(&chain_id)
        )));
    }
    let chain_id = chain_id.extract::<u64>().map_err(|_| {
        config_error(
            py,
            format!(
                "Invalid destination chain ID: {}. Use a chain from the CHAIN constant.",
                shown(&chain_id)
            ),
        )
    })?;
    let address = text_opt(address.as_ref(), "destination.address")?;
    let token = given(token.as_ref()).map(|t| token_of(t, "destination.token")).transpose()?;
    Ok(DestinationConfig { chain_id, address, token })
}

/// A Python value as JSON, for the nested option dicts. Dict keys may be `str` or `int` (the
/// chain ids of `funding.evm_rpc_urls`).
fn to_json(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    if obj.is_none() {
        Ok(Value::Null)
    } else if obj.is_instance_of::<PyBool>() {
        Ok(Value::Bool(obj.extract()?))
    } else if obj.is_instance_of::<PyInt>() {
        if let Ok(n) = obj.extract::<u64>() {
            Ok(Value::from(n))
        } else if let Ok(n) = obj.extract::<i64>() {
            Ok(Value::from(n))
        } else {
            Err(config_error(obj.py(), format!("{name} is out of range: {}", shown(obj))))
        }
    } else if obj.is_instance_of::<PyFloat>() {
        let n: f64 = obj.extract()?;
        serde_json::Number::from_f64(n).map(Value::Number).ok_or_else(|| {
            config_error(obj.py(), format!("{name} must be a finite number, got {n}"))
        })
    } else if obj.is_instance_of::<PyString>() {
        Ok(Value::String(str_arg(obj, name)?.into_owned()))
    } else if let Ok(mapping) = obj.cast::<PyMapping>() {
        let mut map = Map::new();
        for item in mapping.items()?.iter() {
            let (key, value) = item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
            let key = if key.is_instance_of::<PyInt>() && !key.is_instance_of::<PyBool>() {
                key.str()?.to_string()
            } else {
                str_arg(&key, &format!("a key of {name}"))?.into_owned()
            };
            let value = to_json(&value, &format!("{name}[{key}]"))?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        obj.try_iter()?
            .enumerate()
            .map(|(i, item)| to_json(&item?, &format!("{name}[{i}]")))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array)
    } else {
        Err(PyTypeError::new_err(format!(
            "{name} must hold only str, int, float, bool, None, lists and dicts, not {}",
            type_name(obj)
        )))
    }
}

/// A nested option given as a dict (snake_case or camelCase keys), read by the core's own
/// deserializer: unknown keys and wrong types are refused with the option named.
fn nested_opt<T: DeserializeOwned>(
    obj: Option<&Bound<'_, PyAny>>,
    name: &str,
) -> PyResult<Option<T>> {
    let Some(obj) = given(obj) else { return Ok(None) };
    let py = obj.py();
    let Ok(mapping) = obj.cast::<PyMapping>() else {
        return Err(PyTypeError::new_err(format!("{name} must be a dict, not {}", type_name(obj))));
    };
    let mut map = Map::new();
    for item in mapping.items()?.iter() {
        let (key, value) = item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
        let key = str_arg(&key, &format!("a key of {name}"))?.into_owned();
        let camel = camel_case(&key);
        let value = to_json(&value, &format!("{name}.{key}"))?;
        if map.insert(camel.clone(), value).is_some() {
            return Err(config_error(
                py,
                format!("{name} gives {} twice (in snake_case and camelCase)", snake_case(&camel)),
            ));
        }
    }
    serde_json::from_value(Value::Object(map)).map(Some).map_err(|e| {
        let message = pythonize(&format!("invalid {name}: {e}"));
        // serde says "invalid type: …" for a value of the wrong JSON type: a type error under
        // the options' rule, like a wrong type anywhere else.
        if e.to_string().starts_with("invalid type") {
            option_type_error(py, message)
        } else {
            config_error(py, message)
        }
    })
}

/// The options of `DepositClient(...)`, in the order of its signature.
pub(crate) struct Options<'a, 'py> {
    pub intermediary_address: Option<&'a Bound<'py, PyAny>>,
    pub ua_project_id: Option<&'a Bound<'py, PyAny>>,
    pub min_value_usd: Option<&'a Bound<'py, PyAny>>,
    pub supported_tokens: Option<&'a Bound<'py, PyAny>>,
    pub supported_chains: Option<&'a Bound<'py, PyAny>>,
    pub polling_interval_ms: Option<&'a Bound<'py, PyAny>>,
    pub auto_sweep: Option<&'a Bound<'py, PyAny>>,
    pub refund: Option<&'a Bound<'py, PyAny>>,
    pub notifications: Option<&'a Bound<'py, PyAny>>,
    pub funding: Option<&'a Bound<'py, PyAny>>,
    pub onramp: Option<&'a Bound<'py, PyAny>>,
    pub services_url: Option<&'a Bound<'py, PyAny>>,
    pub jwt_service_url: Option<&'a Bound<'py, PyAny>>,
    pub signer_url: Option<&'a Bound<'py, PyAny>>,
    pub account_service_url: Option<&'a Bound<'py, PyAny>>,
    pub sweep_retry_delay_ms: Option<&'a Bound<'py, PyAny>>,
    pub reconcile_interval_ms: Option<&'a Bound<'py, PyAny>>,
    pub processing_timeout_ms: Option<&'a Bound<'py, PyAny>>,
    pub min_polling_interval_ms: Option<&'a Bound<'py, PyAny>>,
    pub request_timeout_ms: Option<&'a Bound<'py, PyAny>>,
    pub http_retries: Option<&'a Bound<'py, PyAny>>,
    pub http_initial_backoff_ms: Option<&'a Bound<'py, PyAny>>,
    pub call_timeout_ms: Option<&'a Bound<'py, PyAny>>,
    pub event_queue_capacity: Option<&'a Bound<'py, PyAny>>,
    pub store_path: Option<&'a Bound<'py, PyAny>>,
}

const NON_NEGATIVE: &str = "a non-negative integer";

/// Every option into the core's configuration (every field of [`DepositClientConfig`] but
/// `on_deposit_event`, which the caller sets). `None` for an option means its default.
fn build_config(
    owner_address: &Bound<'_, PyAny>,
    destination: &Bound<'_, PyAny>,
    o: &Options<'_, '_>,
) -> PyResult<DepositClientConfig> {
    let owner = str_arg(owner_address, "owner_address")?.into_owned();
    let mut config = DepositClientConfig::new(owner, destination_arg(destination)?);
    config.intermediary_address = text_opt(o.intermediary_address, "intermediary_address")?;
    config.ua_project_id = text_opt(o.ua_project_id, "ua_project_id")?;
    if let Some(min) = number_opt(o.min_value_usd, "min_value_usd")? {
        config.min_value_usd = min;
    }
    if let Some(tokens) = tokens_opt(o.supported_tokens)? {
        config.supported_tokens = tokens;
    }
    if let Some(chains) = chains_opt(o.supported_chains)? {
        config.supported_chains = chains;
    }
    if let Some(ms) = int_opt(o.polling_interval_ms, "polling_interval_ms", NON_NEGATIVE)? {
        config.polling_interval_ms = ms;
    }
    if let Some(auto) = bool_opt(o.auto_sweep, "auto_sweep")? {
        config.auto_sweep = auto;
    }
    if let Some(refund) = nested_opt::<RefundConfig>(o.refund, "refund")? {
        config.refund = refund;
    }
    config.notifications = match given(o.notifications) {
        None => None,
        Some(flag) if flag.is_instance_of::<PyBool>() => {
            flag.extract::<bool>()?.then(NotificationsConfig::default)
        }
        Some(_) => nested_opt::<NotificationsConfig>(o.notifications, "notifications")?,
    };
    if let Some(funding) = nested_opt::<FundingConfig>(o.funding, "funding")? {
        config.funding = funding;
    }
    if let Some(onramp) = nested_opt::<OnrampConfig>(o.onramp, "onramp")? {
        config.onramp = onramp;
    }
    config.services_url = text_opt(o.services_url, "services_url")?;
    config.jwt_service_url = text_opt(o.jwt_service_url, "jwt_service_url")?;
    config.signer_url = text_opt(o.signer_url, "signer_url")?;
    config.account_service_url = text_opt(o.account_service_url, "account_service_url")?;
    if let Some(ms) = int_opt(o.sweep_retry_delay_ms, "sweep_retry_delay_ms", NON_NEGATIVE)? {
        config.sweep_retry_delay_ms = ms;
    }
    if let Some(ms) = int_opt(o.reconcile_interval_ms, "reconcile_interval_ms", NON_NEGATIVE)? {
        config.reconcile_interval_ms = ms;
    }
    if let Some(ms) = int_opt(o.processing_timeout_ms, "processing_timeout_ms", NON_NEGATIVE)? {
        config.processing_timeout_ms = ms;
    }
    if let Some(ms) = int_opt(o.min_polling_interval_ms, "min_polling_interval_ms", NON_NEGATIVE)? {
        config.min_polling_interval_ms = ms;
    }
    if let Some(ms) = int_opt(o.request_timeout_ms, "request_timeout_ms", NON_NEGATIVE)? {
        config.request_timeout_ms = ms;
    }
    if let Some(n) = int_opt(o.http_retries, "http_retries", "an integer from 0 to 20")? {
        config.http_retries = n;
    }
    if let Some(ms) = int_opt(o.http_initial_backoff_ms, "http_initial_backoff_ms", NON_NEGATIVE)? {
        config.http_initial_backoff_ms = ms;
    }
    if let Some(ms) = int_opt(o.call_timeout_ms, "call_timeout_ms", NON_NEGATIVE)? {
        config.call_timeout_ms = ms;
    }
    if let Some(n) = int_opt(o.event_queue_capacity, "event_queue_capacity", "a positive integer")?
    {
        config.event_queue_capacity = n;
    }
    if let Some(path) = given(o.store_path) {
        // A str or any os.PathLike (pathlib.Path).
        let text = if path.is_instance_of::<PyString>() {
            path.clone()
        } else {
            path.py().import("os")?.getattr("fspath")?.call1((path,)).map_err(|_| {
                PyTypeError::new_err(format!(
                    "store_path must be a str or os.PathLike, not {}",
                    type_name(path)
                ))
            })?
        };
        config.store_path = Some(str_arg(&text, "store_path")?.into_owned());
    }
    Ok(config)
}

/// Recorded events as the `(event_id, event)` pairs `events_since` and `deposit_history` return.
fn recorded_to_py(py: Python<'_>, events: &[RecordedEvent]) -> PyResult<Vec<(u64, Py<PyAny>)>> {
    events.iter().map(|r| Ok((r.id, event_to_py(py, &r.event)?))).collect()
}

/// A page number or page size of the history calls: `None`, or an `int` (not `bool`). Values
/// beyond `u32` get the core's message; the core checks the rest.
fn page_arg(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<u32>> {
    let Some(obj) = given(obj) else { return Ok(None) };
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int or None, not {}",
            type_name(obj)
        )));
    }
    obj.extract::<u32>().map(Some).map_err(|_| {
        let message = if name == "page" {
            format!("page must be at least 1, got {}", shown(obj))
        } else {
            format!("page size must be between 1 and 100, got {}", shown(obj))
        };
        to_py_err(obj.py(), Error::invalid_argument(message))
    })
}

/// A refund reason: one of the spec's spellings (`"user_requested"`, `"sweep_failed"`, …).
fn reason_arg(obj: &Bound<'_, PyAny>) -> PyResult<RefundReason> {
    let text = str_arg(obj, "reason")?;
    text.parse::<RefundReason>().map_err(|e| to_py_err(obj.py(), e))
}

/// A timeout in seconds (`int` or `float`, at least 0); `None` waits without a limit.
fn timeout_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Duration>> {
    let Some(obj) = given(obj) else { return Ok(None) };
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>())
    {
        return Err(PyTypeError::new_err(format!(
            "timeout must be a number of seconds or None, not {}",
            type_name(obj)
        )));
    }
    let seconds: f64 = obj.extract()?;
    if seconds.is_nan() || seconds < 0.0 {
        return Err(to_py_err(
            obj.py(),
            Error::invalid_argument(format!("timeout must be at least 0 seconds, got {seconds}")),
        ));
    }
    // Beyond what a Duration holds (or a day and more): no limit in practice.
    Ok(Duration::try_from_secs_f64(seconds).ok())
}

// --- the client -------------------------------------------------------------------------------

/// What [`PyDepositClient::wait_event`] found.
enum Next {
    Event(Box<core::DepositEvent>),
    Closed,
}

#[pyclass(module = "depositkit", name = "DepositClient", frozen)]
pub(crate) struct PyDepositClient {
    shared: Arc<Shared>,
    /// The Python callables the core's event thread calls: `(subscription id, slot)`, with no id
    /// for `on_deposit_event`.
    callbacks: Mutex<Vec<(Option<SubscriptionId>, Arc<CallbackSlot>)>>,
    /// The Python wallet and balance providers the core calls back (for the collector).
    providers: Mutex<Providers>,
    /// The exceptions those providers raised, for chaining onto the call that failed.
    failures: Arc<FailureLog>,
}

/// Keeps `slot` under the id the core gave it (in the list, locked since before the
/// subscription, so that `unsubscribe(id)` from its first call finds it), or releases it when
/// the core refused.
fn keep_subscription(
    py: Python<'_>,
    mut callbacks: std::sync::MutexGuard<'_, Vec<(Option<SubscriptionId>, Arc<CallbackSlot>)>>,
    slot: Arc<CallbackSlot>,
    subscribed: core::Result<SubscriptionId>,
) -> PyResult<SubscriptionId> {
    match subscribed {
        Ok(id) => {
            callbacks.push((Some(id), slot));
            Ok(id)
        }
        Err(err) => {
            drop(callbacks);
            drop(slot.clear());
            Err(client_err(py, err))
        }
    }
}

impl PyDepositClient {
    /// The client's state, after checking that this is the process that created it
    /// ([`crate::fork`]). Every method goes through here (or [`Self::client`]) first.
    fn shared(&self, py: Python<'_>) -> PyResult<&Arc<Shared>> {
        self.shared.origin.check(py, CLASS)?;
        Ok(&self.shared)
    }

    /// The core client, after the check of [`Self::shared`].
    fn client(&self, py: Python<'_>) -> PyResult<&DepositClient> {
        Ok(&self.shared(py)?.client)
    }

    /// Asks the core client one thing that does not block (the core decides what a closed
    /// client still answers): its error raised as the Python exception of its kind.
    fn ask<T>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&DepositClient) -> core::Result<T>,
    ) -> PyResult<T> {
        call(self.client(py)?).map_err(|e| client_err(py, e))
    }

    fn callbacks(
        &self,
    ) -> std::sync::MutexGuard<'_, Vec<(Option<SubscriptionId>, Arc<CallbackSlot>)>> {
        self.callbacks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn providers(&self) -> std::sync::MutexGuard<'_, Providers> {
        self.providers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`Self::run`] for a call that may call the Python providers: when it fails, the newest
    /// exception a provider raised during it becomes the raised exception's `__cause__`.
    fn run_calling_providers<T: Send + 'static>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&DepositClient) -> core::Result<T> + Send + 'static,
    ) -> PyResult<T> {
        let mark = self.failures.mark();
        let result = self.run(py, call);
        let cause = self.failures.take_since(py, mark);
        if let (Err(err), Some(cause)) = (&result, cause) {
            err.set_cause(py, Some(cause));
        }
        result
    }

    /// A slot holding `callable` as the client's provider of `role`.
    fn provider_slot(&self, callable: Py<PyAny>, role: ProviderRole) -> Arc<ProviderSlot> {
        ProviderSlot::new(callable, role, Arc::clone(&self.failures))
    }

    /// Puts `slot` in the provider slot `which` picks, after `set` (detached) accepted it.
    fn set_provider(
        &self,
        py: Python<'_>,
        which: fn(&mut Providers) -> &mut Option<Arc<ProviderSlot>>,
        slot: Option<Arc<ProviderSlot>>,
        set: impl FnOnce(&DepositClient) -> core::Result<()> + Send,
    ) -> PyResult<()> {
        let client = self.client(py)?;
        // Locked across the change, so that the slot held is the one the core holds. The
        // core's change runs detached: it drops the previous provider, whose callable must not
        // be released (and a `__del__` run) while this lock is held.
        let mut providers = self.providers();
        py.detach(|| set(client)).map_err(|e| client_err(py, e))?;
        let previous = std::mem::replace(which(&mut providers), slot);
        drop(providers);
        drop(previous);
        Ok(())
    }

    /// Runs `call` with the core client on a worker thread, waiting detached (see
    /// [`wait_for_raw`]).
    fn run<T: Send + 'static>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&DepositClient) -> core::Result<T> + Send + 'static,
    ) -> PyResult<T> {
        let shared = Arc::clone(self.shared(py)?);
        wait_for_raw(py, move || call(&shared.client))?.map_err(|err| client_err(py, err))
    }

    /// The next event, waiting at most `timeout` (`None`: until one comes or the client is
    /// closed), detached and interruptible. A closed client still hands out what was queued.
    fn wait_event(&self, py: Python<'_>, timeout: Option<Duration>) -> PyResult<Option<Next>> {
        let shared = self.shared(py)?;
        wait_sliced(py, timeout, |slice| match shared.client.next_event(slice) {
            Some(event) => Some(Next::Event(Box::new(event))),
            None if shared.finished() => Some(
                shared
                    .client
                    .next_event(Duration::ZERO)
                    .map_or(Next::Closed, |event| Next::Event(Box::new(event))),
            ),
            None => None,
        })
    }

    fn ensure_open(&self, py: Python<'_>) -> PyResult<()> {
        if self.client(py)?.is_closed() {
            return Err(to_py_err(py, Error::new(ErrorKind::DepositSdk, "the client is closed")));
        }
        Ok(())
    }

    fn shutdown(&self, py: Python<'_>) -> PyResult<()> {
        let shared = Arc::clone(self.shared(py)?);
        // Detached: the event thread may be waiting for the GIL to finish a callback, and close()
        // waits for it (at most 5 s).
        py.detach(move || shared.close());
        self.release_callables();
        Ok(())
    }

    /// Drops every Python object the client holds for the core (callbacks, providers, kept
    /// exceptions), closing or being collected.
    fn release_callables(&self) {
        let slots: Vec<_> = self.callbacks().drain(..).collect();
        for (_, slot) in slots {
            drop(slot.clear());
        }
        let providers = self.providers().clear();
        drop(providers);
        drop(self.failures.clear());
    }
}

impl Drop for PyDepositClient {
    fn drop(&mut self) {
        if !self.shared.origin.is_here() {
            // Inherited through fork: closing would wait for threads that do not exist here,
            // and dropping the core client would close it. Leaked on purpose.
            std::mem::forget(Arc::clone(&self.shared));
            return;
        }
        if self.shared.finished() {
            return;
        }
        let shared = Arc::clone(&self.shared);
        let close = move || shared.close();
        // Dropped while attached (deallocation): detach for the close, as in `close()`.
        if Python::try_attach(|py| py.detach(close.clone())).is_none() {
            close();
        }
    }
}

#[pymethods]
impl PyDepositClient {
    #[new]
    #[pyo3(
        signature = (
            owner_address, destination, *, intermediary_address=None, ua_project_id=None,
            min_value_usd=None, supported_tokens=None, supported_chains=None,
            polling_interval_ms=None, auto_sweep=None, refund=None, notifications=None,
            funding=None, onramp=None, on_deposit_event=None, services_url=None,
            jwt_service_url=None, signer_url=None, account_service_url=None,
            sweep_retry_delay_ms=None, reconcile_interval_ms=None, processing_timeout_ms=None,
            min_polling_interval_ms=None, request_timeout_ms=None,
            http_retries=None, http_initial_backoff_ms=None, call_timeout_ms=None,
            event_queue_capacity=None, store_path=None
        ),
        text_signature = "(owner_address, destination, *, intermediary_address=None, ua_project_id=None, min_value_usd=0.5, supported_tokens=None, supported_chains=None, polling_interval_ms=3000, auto_sweep=True, refund=None, notifications=None, funding=None, onramp=None, on_deposit_event=None, services_url=None, jwt_service_url=None, signer_url=None, account_service_url=None, sweep_retry_delay_ms=5000, reconcile_interval_ms=10000, processing_timeout_ms=300000, min_polling_interval_ms=2000, request_timeout_ms=10000, http_retries=3, http_initial_backoff_ms=100, call_timeout_ms=60000, event_queue_capacity=1024, store_path=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        owner_address: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
        intermediary_address: Option<&Bound<'_, PyAny>>,
        ua_project_id: Option<&Bound<'_, PyAny>>,
        min_value_usd: Option<&Bound<'_, PyAny>>,
        supported_tokens: Option<&Bound<'_, PyAny>>,
        supported_chains: Option<&Bound<'_, PyAny>>,
        polling_interval_ms: Option<&Bound<'_, PyAny>>,
        auto_sweep: Option<&Bound<'_, PyAny>>,
        refund: Option<&Bound<'_, PyAny>>,
        notifications: Option<&Bound<'_, PyAny>>,
        funding: Option<&Bound<'_, PyAny>>,
        onramp: Option<&Bound<'_, PyAny>>,
        on_deposit_event: Option<&Bound<'_, PyAny>>,
        services_url: Option<&Bound<'_, PyAny>>,
        jwt_service_url: Option<&Bound<'_, PyAny>>,
        signer_url: Option<&Bound<'_, PyAny>>,
        account_service_url: Option<&Bound<'_, PyAny>>,
        sweep_retry_delay_ms: Option<&Bound<'_, PyAny>>,
        reconcile_interval_ms: Option<&Bound<'_, PyAny>>,
        processing_timeout_ms: Option<&Bound<'_, PyAny>>,
        min_polling_interval_ms: Option<&Bound<'_, PyAny>>,
        request_timeout_ms: Option<&Bound<'_, PyAny>>,
        http_retries: Option<&Bound<'_, PyAny>>,
        http_initial_backoff_ms: Option<&Bound<'_, PyAny>>,
        call_timeout_ms: Option<&Bound<'_, PyAny>>,
        event_queue_capacity: Option<&Bound<'_, PyAny>>,
        store_path: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let options = Options {
            intermediary_address,
            ua_project_id,
            min_value_usd,
            supported_tokens,
            supported_chains,
            polling_interval_ms,
            auto_sweep,
            refund,
            notifications,
            funding,
            onramp,
            services_url,
            jwt_service_url,
            signer_url,
            account_service_url,
            sweep_retry_delay_ms,
            reconcile_interval_ms,
            processing_timeout_ms,
            min_polling_interval_ms,
            request_timeout_ms,
            http_retries,
            http_initial_backoff_ms,
            call_timeout_ms,
            event_queue_capacity,
            store_path,
        };
        let mut config = build_config(owner_address, destination, &options)
            .map_err(|e| as_option_error(py, e))?;
        let mut callbacks = Vec::new();
        if let Some(callback) = given(on_deposit_event) {
            if !callback.is_callable() {
                return Err(option_type_error(
                    py,
                    format!("on_deposit_event must be callable, not {}", type_name(callback)),
                ));
            }
            let slot = CallbackSlot::new(callback.clone().unbind());
            let held = Arc::clone(&slot);
            config.on_deposit_event = Some(Arc::new(move |event: &core::DepositLifecycleEvent| {
                held.call(|py| Ok(Py::new(py, PyLifecycleEvent::from(event.clone()))?.into_any()));
            }));
            callbacks.push((None, slot));
        }
        // Starting the client opens its store and its delivery lane (and the runtime and the
        // delivery pool on first use).
        let client =
            py.detach(move || DepositClient::new(config)).map_err(|e| client_err(py, e))?;
        let shared =
            Arc::new(Shared { client, origin: Origin::here(), closed: AtomicBool::new(false) });
        remember(&shared);
        Ok(PyDepositClient {
            shared,
            callbacks: Mutex::new(callbacks),
            providers: Mutex::new(Providers::default()),
            failures: Arc::new(FailureLog::default()),
        })
    }

    fn initialize(&self, py: Python<'_>) -> PyResult<PyDepositAddresses> {
        self.run(py, DepositClient::initialize).map(Into::into)
    }

    #[getter]
    fn deposit_addresses(&self, py: Python<'_>) -> PyResult<PyDepositAddresses> {
        self.client(py)?.deposit_addresses().map(Into::into).map_err(|e| client_err(py, e))
    }

    #[pyo3(signature = (destination=None, /, *, chain_id=None, address=None, token=None))]
    fn set_destination<'py>(
        &self,
        py: Python<'py>,
        destination: Option<&Bound<'py, PyAny>>,
        chain_id: Option<&Bound<'py, PyAny>>,
        address: Option<&Bound<'py, PyAny>>,
        token: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let keywords = [chain_id, address, token].iter().any(|k| given(*k).is_some());
        let config = match given(destination) {
            Some(_) if keywords => {
                return Err(PyTypeError::new_err(
                    "set_destination() takes a destination or chain_id/address/token keywords, not both",
                ));
            }
            Some(destination) => {
                destination_arg(destination).map_err(|e| as_option_error(py, e))?
            }
            None => {
                if given(chain_id).is_none() {
                    return Err(PyTypeError::new_err(
                        "set_destination() needs a destination (or chain_id=...)",
                    ));
                }
                let dict = PyDict::new(py);
                dict.set_item(intern!(py, "chain_id"), chain_id)?;
                dict.set_item(intern!(py, "address"), address)?;
                dict.set_item(intern!(py, "token"), token)?;
                destination_arg(dict.as_any()).map_err(|e| as_option_error(py, e))?
            }
        };
        let client = self.client(py)?;
        let resolved =
            py.detach(|| client.set_destination(config)).map_err(|e| client_err(py, e))?;
        resolved_destination_dict(py, &resolved)
    }

    fn get_destination<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        resolved_destination_dict(py, &self.ask(py, DepositClient::get_destination)?)
    }

    #[getter]
    fn status(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(self.client(py)?.status().as_str())
    }

    #[getter]
    fn is_watching(&self, py: Python<'_>) -> PyResult<bool> {
        self.ask(py, DepositClient::is_watching)
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.client(py)?.is_closed())
    }

    #[getter]
    fn owner_address<'py>(&'py self, py: Python<'py>) -> PyResult<&'py str> {
        Ok(self.client(py)?.owner_address())
    }

    #[getter]
    fn intermediary_address(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.ask(py, DepositClient::intermediary_address)
    }

    #[getter]
    fn account_id(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.ask(py, DepositClient::account_id)
    }

    #[getter]
    fn dropped_events(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.client(py)?.dropped_events())
    }

    /// The id of the last event the client emitted (0: none yet).
    #[getter]
    fn last_event_id(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.client(py)?.last_event_id())
    }

    /// The SQLite file of the client's durable state, or None.
    #[getter]
    fn store_path(&self, py: Python<'_>) -> PyResult<Option<String>> {
        Ok(self.client(py)?.store_path().map(|p| p.display().to_string()))
    }

    /// The events after `cursor` as `(event_id, event)` pairs, oldest first.
    #[pyo3(signature = (cursor=None, limit=None))]
    fn events_since(
        &self,
        py: Python<'_>,
        cursor: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<(u64, Py<PyAny>)>> {
        let cursor: u64 = int_opt(cursor, "cursor", NON_NEGATIVE)?.unwrap_or(0);
        let limit: usize = int_opt(limit, "limit", NON_NEGATIVE)?.unwrap_or(usize::MAX);
        let events = self.client(py)?.events_since(cursor, limit).map_err(|e| to_py_err(py, e))?;
        recorded_to_py(py, &events)
    }

    /// Deposit `deposit_id`'s lifecycle events and refund updates as `(event_id, event)` pairs.
    fn deposit_history(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<(u64, Py<PyAny>)>> {
        let id = str_arg(deposit_id, "deposit_id")?;
        let events = self.client(py)?.deposit_history(&id).map_err(|e| to_py_err(py, e))?;
        recorded_to_py(py, &events)
    }

    #[getter]
    fn callback_panics(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.client(py)?.callback_panics())
    }

    fn is_onramp_supported(&self, py: Python<'_>) -> PyResult<bool> {
        self.ask(py, DepositClient::is_onramp_supported)
    }

    // --- fund from wallet (funding.rs) ----------------------------------------------------------

    #[pyo3(signature = (provider, address=None))]
    fn set_evm_wallet(
        &self,
        py: Python<'_>,
        provider: &Bound<'_, PyAny>,
        address: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let address = text_opt(address, "address")?;
        let (core_provider, slot) = match evm_provider_arg(provider)? {
            EvmProviderArg::Url(url) => (EvmProvider::Url(url), None),
            EvmProviderArg::Callable(callable) => {
                let slot = self.provider_slot(callable, ProviderRole::EvmWallet);
                (EvmProvider::Host(slot.provider()), Some(slot))
            }
        };
        self.set_provider(
            py,
            |p| &mut p.evm,
            slot,
            move |client| client.set_evm_wallet(core_provider, address.as_deref()),
        )
    }

    #[pyo3(signature = (provider, address=None))]
    fn set_solana_wallet(
        &self,
        py: Python<'_>,
        provider: &Bound<'_, PyAny>,
        address: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let address = text_opt(address, "address")?;
        let callable = callable_arg(provider, "(method, params) -> result")?;
        let slot = self.provider_slot(callable, ProviderRole::SolanaWallet);
        let core_provider = slot.provider();
        self.set_provider(
            py,
            |p| &mut p.solana,
            Some(slot),
            move |client| client.set_solana_wallet(core_provider, address.as_deref()),
        )
    }

    fn set_balance_provider(&self, py: Python<'_>, provider: &Bound<'_, PyAny>) -> PyResult<()> {
        let slot = if provider.is_none() {
            None
        } else {
            let callable = callable_arg(provider, "(request) -> balances, or None")?;
            Some(self.provider_slot(callable, ProviderRole::Balances))
        };
        let core_provider = slot.as_ref().map(ProviderSlot::provider);
        self.set_provider(
            py,
            |p| &mut p.balances,
            slot,
            move |client| client.set_balance_provider(core_provider),
        )
    }

    fn clear_funding_wallet(&self, py: Python<'_>) -> PyResult<()> {
        self.set_provider(
            py,
            |p| &mut p.evm,
            None,
            |client| {
                client.clear_funding_wallet();
                Ok(())
            },
        )?;
        let previous = self.providers().solana.take();
        drop(previous);
        Ok(())
    }

    fn connect_evm_wallet(&self, py: Python<'_>) -> PyResult<String> {
        self.run_calling_providers(py, DepositClient::connect_evm_wallet)
    }

    fn evm_accounts(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.run_calling_providers(py, DepositClient::evm_accounts)
    }

    fn prompt_evm_account_selection(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.run_calling_providers(py, DepositClient::prompt_evm_account_selection)
    }

    fn connect_solana_wallet(&self, py: Python<'_>) -> PyResult<String> {
        self.run_calling_providers(py, DepositClient::connect_solana_wallet)
    }

    fn get_wallet_balances(&self, py: Python<'_>) -> PyResult<Vec<PyFundingBalance>> {
        let balances = self.run_calling_providers(py, DepositClient::get_wallet_balances)?;
        Ok(balances.into_iter().map(PyFundingBalance::from).collect())
    }

    #[pyo3(signature = (balance, raw_amount=None))]
    fn fund_from_wallet(
        &self,
        py: Python<'_>,
        balance: &Bound<'_, PyAny>,
        raw_amount: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyFundingTransferResult> {
        let balance = balance_arg(balance)?;
        let raw_amount = raw_amount_arg(raw_amount)?;
        self.run_calling_providers(py, move |client| client.fund_from_wallet(&balance, raw_amount))
            .map(Into::into)
    }

    // --- the onramp (onramp.rs) -----------------------------------------------------------------

    #[pyo3(signature = (amount=None))]
    fn open_onramp(&self, py: Python<'_>, amount: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        let amount = fiat_amount_arg(amount)?;
        let client = self.client(py)?;
        py.detach(|| client.open_onramp(amount)).map_err(|e| client_err(py, e))
    }

    fn handle_onramp_message(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<bool> {
        let message = message_arg(message)?;
        let client = self.client(py)?;
        py.detach(|| client.handle_onramp_message(&message)).map_err(|e| client_err(py, e))
    }

    #[getter]
    fn last_onramp_order(&self, py: Python<'_>) -> PyResult<Option<PyOnrampOrder>> {
        Ok(self.ask(py, DepositClient::last_onramp_order)?.map(PyOnrampOrder::from))
    }

    fn start_watching(&self, py: Python<'_>) -> PyResult<()> {
        let client = self.client(py)?;
        py.detach(|| client.start_watching()).map_err(|e| client_err(py, e))
    }

    fn stop_watching(&self, py: Python<'_>) -> PyResult<()> {
        let client = self.client(py)?;
        py.detach(|| client.stop_watching()).map_err(|e| client_err(py, e))
    }

    fn poll_now(&self, py: Python<'_>) -> PyResult<Vec<PyLifecycleEvent>> {
        let events = self.run(py, DepositClient::poll_now)?;
        Ok(events.into_iter().map(PyLifecycleEvent::from).collect())
    }

    fn pending_deposits(&self, py: Python<'_>) -> PyResult<Vec<PyDetectedDeposit>> {
        let pending = self.ask(py, DepositClient::pending_deposits)?;
        Ok(pending.into_iter().map(PyDetectedDeposit::from).collect())
    }

    fn sweep(&self, py: Python<'_>, deposit_id: &Bound<'_, PyAny>) -> PyResult<PySweepResult> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        self.run(py, move |client| client.sweep(&id)).map(Into::into)
    }

    fn sweep_result(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PySweepResult>> {
        let id = str_arg(deposit_id, "deposit_id")?;
        Ok(self.ask(py, |client| client.sweep_result(&id))?.map(Into::into))
    }

    #[pyo3(signature = (page=1, page_size=10))]
    fn transactions<'py>(
        &self,
        py: Python<'py>,
        page: u32,
        page_size: u32,
    ) -> PyResult<Bound<'py, PyAny>> {
        let page = self.run(py, move |client| client.transactions(page, page_size))?;
        let value = serde_json::to_value(page).map_err(|e| {
            to_py_err(py, Error::new(ErrorKind::Internal, format!("transactions as JSON: {e}")))
        })?;
        json_to_py(py, &value)
    }

    #[pyo3(signature = (page=None, page_size=None))]
    fn get_transactions(
        &self,
        py: Python<'_>,
        page: Option<&Bound<'_, PyAny>>,
        page_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTransactionsResponse> {
        let page = page_arg(page, "page")?;
        let page_size = page_arg(page_size, "page_size")?;
        self.run(py, move |client| client.get_transactions(page, page_size)).map(Into::into)
    }

    #[pyo3(signature = (chain_id, address, *, page_token=None, page_size=None))]
    fn get_token_transactions(
        &self,
        py: Python<'_>,
        chain_id: &Bound<'_, PyAny>,
        address: &Bound<'_, PyAny>,
        page_token: Option<&Bound<'_, PyAny>>,
        page_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTokenTransactionsResponse> {
        let chain = chain_id_arg(chain_id)?;
        let Some(chain_id) = chain.id else {
            return Err(to_py_err(
                py,
                Error::invalid_argument(format!("unknown chain id {}", chain.text())),
            ));
        };
        let address = str_arg(address, "address")?.into_owned();
        let page_token = text_opt(page_token, "page_token")?;
        let mut filter = TokenTransactionFilter::new(chain_id, address);
        filter.page_size = page_arg(page_size, "page_size")?;
        self.run(py, move |client| client.get_token_transactions(&filter, page_token.as_deref()))
            .map(Into::into)
    }

    fn get_transaction(
        &self,
        py: Python<'_>,
        transaction_id: &Bound<'_, PyAny>,
    ) -> PyResult<PyUaTransaction> {
        let id = str_arg(transaction_id, "transaction_id")?.into_owned();
        self.run(py, move |client| client.get_transaction(&id)).map(Into::into)
    }

    #[pyo3(
        signature = (deposit_id, reason=None),
        text_signature = "(self, deposit_id, reason='user_requested')"
    )]
    fn refund(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
        reason: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyRefundResult> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        let reason =
            given(reason).map(reason_arg).transpose()?.unwrap_or(RefundReason::UserRequested);
        self.run(py, move |client| client.refund(&id, reason)).map(Into::into)
    }

    fn can_refund(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
    ) -> PyResult<PyRefundEligibility> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        self.run(py, move |client| client.can_refund(&id)).map(Into::into)
    }

    fn refund_result(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PyRefundResult>> {
        let id = str_arg(deposit_id, "deposit_id")?;
        Ok(self.ask(py, |client| client.refund_result(&id))?.map(Into::into))
    }

    #[getter]
    fn refund_config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        refund_config_dict(py, &self.ask(py, DepositClient::refund_config)?)
    }

    fn stuck_funds(&self, py: Python<'_>) -> PyResult<Vec<PyDetectedDeposit>> {
        let stuck = self.run(py, DepositClient::stuck_funds)?;
        Ok(stuck.into_iter().map(PyDetectedDeposit::from).collect())
    }

    fn recover_funds(&self, py: Python<'_>) -> PyResult<Vec<PyRecoveryResult>> {
        let results = self.run(py, DepositClient::recover_funds)?;
        Ok(results.into_iter().map(PyRecoveryResult::from).collect())
    }

    #[getter]
    fn is_recovering(&self, py: Python<'_>) -> PyResult<bool> {
        self.ask(py, DepositClient::is_recovering)
    }

    fn notifications(&self, py: Python<'_>) -> PyResult<Vec<PyNotification>> {
        let records = self.ask(py, DepositClient::notifications)?;
        Ok(records.into_iter().map(PyNotification::from).collect())
    }

    fn dismiss_notification(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let id = str_arg(deposit_id, "deposit_id")?;
        self.ask(py, |client| client.dismiss_notification(&id))
    }

    fn subscribe_notifications(
        &self,
        py: Python<'_>,
        callback: &Bound<'_, PyAny>,
    ) -> PyResult<SubscriptionId> {
        if !callback.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "the callback must be callable, not {}",
                type_name(callback)
            )));
        }
        let client = self.client(py)?;
        let slot = CallbackSlot::new(callback.clone().unbind());
        let held = Arc::clone(&slot);
        // Locked across the subscription, as in `subscribe`.
        let callbacks = self.callbacks();
        let subscribed =
            client.subscribe_notifications(Box::new(move |records: &[NotificationRecord]| {
                held.call(|py| Ok(notifications_to_py(py, records)?.into_any().unbind()));
            }));
        keep_subscription(py, callbacks, slot, subscribed)
    }

    #[getter]
    fn notifications_config<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.ask(py, DepositClient::notifications_config)?
            .map(|config| notifications_config_dict(py, &config))
            .transpose()
    }

    fn subscribe(&self, py: Python<'_>, callback: &Bound<'_, PyAny>) -> PyResult<SubscriptionId> {
        if !callback.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "the callback must be callable, not {}",
                type_name(callback)
            )));
        }
        let client = self.client(py)?;
        let slot = CallbackSlot::new(callback.clone().unbind());
        let held = Arc::clone(&slot);
        // The list is locked across the subscription so that `unsubscribe(id)` from a callback
        // of the first event finds the slot.
        let callbacks = self.callbacks();
        let subscribed = client.subscribe(Box::new(move |event: &core::DepositEvent| {
            held.call(|py| event_to_py(py, event));
        }));
        keep_subscription(py, callbacks, slot, subscribed)
    }

    fn unsubscribe(&self, py: Python<'_>, id: SubscriptionId) -> PyResult<bool> {
        let removed = self.client(py)?.unsubscribe(id);
        let slot = {
            let mut callbacks = self.callbacks();
            let position = callbacks.iter().position(|(sid, _)| *sid == Some(id));
            position.map(|i| callbacks.remove(i).1)
        };
        if let Some(slot) = slot {
            drop(slot.clear());
        }
        Ok(removed)
    }

    #[pyo3(signature = (timeout=None))]
    fn next_event(
        &self,
        py: Python<'_>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let timeout = timeout_arg(timeout)?;
        match self.wait_event(py, timeout)? {
            Some(Next::Event(event)) => event_to_py(py, &event).map(Some),
            Some(Next::Closed) | None => Ok(None),
        }
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.wait_event(py, None)? {
            Some(Next::Event(event)) => event_to_py(py, &event),
            Some(Next::Closed) | None => Err(PyStopIteration::new_err(())),
        }
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.shutdown(py)
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        slf.ensure_open(slf.py())?;
        Ok(slf)
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.shutdown(py)?;
        Ok(false)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // try_lock: a traversal must not block; a list locked right now is skipped (the
        // collector then keeps these objects a while longer).
        if let Ok(callbacks) = self.callbacks.try_lock() {
            for (_, slot) in callbacks.iter() {
                slot.traverse(&visit)?;
            }
        }
        if let Ok(providers) = self.providers.try_lock() {
            for slot in providers.slots() {
                slot.traverse(&visit)?;
            }
        }
        self.failures.traverse(&visit)
    }

    fn __clear__(&self) {
        // In a forked child the lists' locks may have been held by a thread of the parent:
        // the callables are leaked with the client.
        if !self.shared.origin.is_here() {
            return;
        }
        self.release_callables();
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        // Never a key: the owner, the status and where deposits go. In a forked child, none of
        // the client's state (its locks may be held by the parent's threads).
        if !self.shared.origin.is_here() {
            return Ok(format!(
                "<depositkit.DepositClient created in process {}>",
                self.shared.origin.pid()
            ));
        }
        let owner = py_repr(py, self.shared.client.owner_address())?;
        let status = py_repr(py, self.shared.client.status().as_str())?;
        // A closed client has no destination any more (`get_destination()` raises).
        let Ok(destination) = self.shared.client.get_destination() else {
            return Ok(format!("<depositkit.DepositClient owner={owner} status={status} closed>"));
        };
        Ok(format!(
            "<depositkit.DepositClient owner={owner} status={status} destination={}>",
            py_repr(
                py,
                &format!(
                    "{} to {} on {}",
                    destination.token.symbol(),
                    destination.address,
                    core::get_chain_name(destination.chain_id)
                )
            )?
        ))
    }
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
