//! `depositkit.Devnet`: the devnet emulator (`depositkit-devnet`) started in process, on a
//! loopback port of its own, for tests, demos and notebooks.
//!
//! The server runs on its own thread and tokio runtime (`Devnet::start`). The admin methods
//! (deposits, prices, faults) call the emulator directly, not over HTTP; each releases the GIL.
//! Without a `db_path` the database lives in a fresh temporary directory that `close()` removes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use depositkit_core::describe::quote;
use depositkit_core::{Error, ErrorKind, TokenType, U256};
use depositkit_devnet as devnet;
use depositkit_devnet::{
    ChainsConfig, DevnetConfig, Fault, RunningDevnet, Service, SweepFaultMode,
};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyMapping, PyString};

use crate::conversions::{
    amount_arg, given, json_to_py, py_to_json, str_arg, text_opt, token_arg, type_name, u256_to_py,
};
use crate::errors::to_py_err;
use crate::events::py_repr;
use crate::fork::Origin;

mod simchain;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDevnet>()
}

/// The class name in the messages of [`crate::fork`].
const CLASS: &str = "Devnet";

/// How long `close()` lets in-flight requests finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Every devnet not yet dropped, for [`close_all`].
static LIVE: Mutex<Vec<Weak<Handle>>> = Mutex::new(Vec::new());

/// Stops every devnet still running (the package's `atexit` hook), after the clients.
pub(crate) fn close_all(py: Python<'_>) {
    let live: Vec<Arc<Handle>> = LIVE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain(..)
        .filter_map(|weak| weak.upgrade())
        .filter(|handle| handle.origin.is_here())
        .collect();
    py.detach(move || {
        for handle in live {
            handle.stop();
        }
    });
}

/// A temporary directory holding the database, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("depositkit-devnet-{}-{nanos}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(TempDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Handle {
    /// `None` once stopped.
    /// Held during each admin call (they are short) and while stopping.
    running: Mutex<Option<RunningDevnet>>,
    /// Removed after the server stopped.
    temp: Mutex<Option<TempDir>>,
    /// The process that started the server: in a forked child the server's threads do not
    /// exist, and its database and temporary directory are the parent's.
    origin: Origin,
}

impl Handle {
    /// Stops the server and removes the temporary directory; in a forked child, nothing.
    fn stop(&self) {
        if !self.origin.is_here() {
            return;
        }
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(running) = running
            && let Err(e) = running.shutdown()
        {
            eprintln!("depositkit.Devnet: the server stopped with an error: {e}");
        }
        drop(self.temp.lock().unwrap_or_else(PoisonError::into_inner).take());
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if !self.origin.is_here() {
            // Inherited through fork: dropping the server would wait for its threads (gone)
            // and the temporary directory holds the parent's database. Leaked on purpose.
            std::mem::forget(self.running.get_mut().unwrap_or_else(PoisonError::into_inner).take());
            std::mem::forget(self.temp.get_mut().unwrap_or_else(PoisonError::into_inner).take());
            return;
        }
        self.stop();
    }
}

/// A devnet error as the exception of the closest kind: bad input → `InvalidArgumentError`.
fn devnet_err(py: Python<'_>, err: devnet::Error) -> PyErr {
    let kind = match &err {
        devnet::Error::InvalidInput { .. } | devnet::Error::Json { .. } => {
            ErrorKind::InvalidArgument
        }
        devnet::Error::NotFound(_) => ErrorKind::NotFound,
        _ => ErrorKind::DepositSdk,
    };
    to_py_err(py, Error::new(kind, err.to_string()))
}

fn closed_err(py: Python<'_>) -> PyErr {
    to_py_err(py, Error::new(ErrorKind::DepositSdk, "the devnet is closed"))
}

/// A chain id; ids outside `u64` are refused as the devnet refuses unknown chains.
fn chain_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "chain_id must be an int, not {}",
            type_name(obj)
        )));
    }
    obj.extract::<u64>().map_err(|_| {
        to_py_err(obj.py(), Error::invalid_argument(format!("unknown chain id {}", obj)))
    })
}

/// The `address, chain_id, token` arguments naming one balance line.
fn line_args(
    address: &Bound<'_, PyAny>,
    chain_id: &Bound<'_, PyAny>,
    token: &Bound<'_, PyAny>,
) -> PyResult<(String, u64, TokenType)> {
    Ok((str_arg(address, "address")?.into_owned(), chain_arg(chain_id)?, token_arg(token)?))
}

/// A count: an `int` from 0 to 2^32 - 1.
fn count_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<u32> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!("{name} must be an int, not {}", type_name(obj))));
    }
    obj.extract::<u32>().map_err(|_| {
        to_py_err(
            obj.py(),
            Error::invalid_argument(format!("{name} must be from 0 to {}, got {obj}", u32::MAX)),
        )
    })
}

/// A human-readable amount (`str`, `int` or `decimal.Decimal`) in smallest units of `token` on
/// `chain_id`.
fn human_amount(obj: &Bound<'_, PyAny>, token: TokenType, chain_id: u64) -> PyResult<U256> {
    let py = obj.py();
    let decimal = py.import(intern!(py, "decimal"))?.getattr(intern!(py, "Decimal"))?;
    let text = if obj.is_instance_of::<PyString>() {
        str_arg(obj, "amount")?.into_owned()
    } else if obj.is_instance(&decimal)? {
        obj.call_method1(intern!(py, "__format__"), ("f",))?.extract::<String>()?
    } else if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        obj.str()?.to_string()
    } else if obj.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(
            "amount must be a str, int or decimal.Decimal, not float (floats cannot hold most amounts exactly)",
        ));
    } else {
        return Err(PyTypeError::new_err(format!(
            "amount must be a str, int or decimal.Decimal, not {}",
            type_name(obj)
        )));
    };
    let decimals = u32::from(depositkit_core::get_token_decimals(token, Some(chain_id)));
    depositkit_core::parse_units(&text, decimals).map_err(|e| to_py_err(py, e))
}

/// `Devnet(chains=...)`: the chains file as a mapping (what the `local_chains` fixture yields,
/// `json.load` of the file) or the path of the file.
fn chains_arg(obj: &Bound<'_, PyAny>) -> PyResult<ChainsConfig> {
    let py = obj.py();
    if let Ok(mapping) = obj.cast::<PyMapping>() {
        let value = py_to_json(mapping.as_any()).map_err(|what| {
            to_py_err(
                py,
                Error::invalid_argument(format!("chains holds {what}, which is not JSON")),
            )
        })?;
        return ChainsConfig::from_json(&value.to_string()).map_err(|e| devnet_err(py, e));
    }
    let os = py.import(intern!(py, "os"))?;
    let path_like = os.getattr(intern!(py, "PathLike"))?;
    if obj.is_instance_of::<PyString>() || obj.is_instance(&path_like)? {
        let path: PathBuf = obj.extract()?;
        return py.detach(move || ChainsConfig::from_file(&path)).map_err(|e| devnet_err(py, e));
    }
    Err(PyTypeError::new_err(format!(
        "chains must be the chains file as a dict, or its path, not {}",
        type_name(obj)
    )))
}

/// `complete_onramp_order`'s parameters: a mapping, or the widget URL itself (its query).
fn order_params_arg(obj: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    let py = obj.py();
    let invalid = |what: String| {
        to_py_err(py, Error::invalid_argument(format!("params holds {what}, which is not JSON")))
    };
    if obj.is_instance_of::<PyString>() {
        let parse = py.import(intern!(py, "urllib.parse"))?;
        let query =
            parse.call_method1(intern!(py, "urlsplit"), (obj,))?.getattr(intern!(py, "query"))?;
        let pairs = parse.call_method1(intern!(py, "parse_qsl"), (query,))?;
        let dict = py.get_type::<PyDict>().call1((pairs,))?;
        return py_to_json(&dict).map_err(invalid);
    }
    if obj.is_instance_of::<PyMapping>() {
        return py_to_json(obj).map_err(invalid);
    }
    Err(PyTypeError::new_err(format!(
        "params must be a dict of the widget URL's parameters, or the widget URL, not {}",
        type_name(obj)
    )))
}

#[pyclass(module = "depositkit", name = "Devnet", frozen)]
pub(crate) struct PyDevnet {
    handle: Arc<Handle>,
    services_url: String,
    user_rpc_url: String,
    db_path: PathBuf,
}

impl PyDevnet {
    /// Fails in a forked child ([`crate::fork`]): every method but the fixed `services_url`,
    /// `user_rpc_url` and `db_path` checks this first.
    fn check_process(&self, py: Python<'_>) -> PyResult<()> {
        self.handle.origin.check(py, CLASS)
    }

    /// Runs `call` with the running server, detached from the interpreter.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&RunningDevnet) -> devnet::Result<T> + Send,
    ) -> PyResult<T> {
        self.check_process(py)?;
        let handle = &self.handle;
        let outcome = py.detach(move || {
            let running = handle.running.lock().unwrap_or_else(PoisonError::into_inner);
            running.as_ref().map(call)
        });
        match outcome {
            None => Err(closed_err(py)),
            Some(result) => result.map_err(|e| devnet_err(py, e)),
        }
    }
}

#[pymethods]
impl PyDevnet {
    #[new]
    #[pyo3(signature = (*, db_path=None, fault_injection=true, chains=None, balance_api_key=None, sim_block_ms=None))]
    fn new(
        py: Python<'_>,
        db_path: Option<PathBuf>,
        fault_injection: bool,
        chains: Option<&Bound<'_, PyAny>>,
        balance_api_key: Option<&Bound<'_, PyAny>>,
        sim_block_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let chains = given(chains).map(chains_arg).transpose()?;
        let balance_api_key = text_opt(balance_api_key, "balance_api_key")?;
        let sim_block_ms =
            given(sim_block_ms).map(|ms| count_arg(ms, "sim_block_ms")).transpose()?;
        let temp = match db_path {
            Some(_) => None,
            None => Some(TempDir::new().map_err(|e| {
                to_py_err(
                    py,
                    Error::new(
                        ErrorKind::DepositSdk,
                        format!("cannot create a temporary directory for the devnet database: {e}"),
                    ),
                )
            })?),
        };
        let db_path = match (&db_path, &temp) {
            (Some(path), _) => path.clone(),
            (None, Some(temp)) => temp.0.join("devnet.sqlite"),
            (None, None) => unreachable!("a temporary directory exists without db_path"),
        };
        let mut config = DevnetConfig::new(&db_path);
        config.fault_injection = fault_injection;
        config.shutdown_grace = SHUTDOWN_GRACE;
        if let Some(ms) = sim_block_ms {
            // 0: blocks only for deposits and `mine_blocks`.
            config.sim_chains.block_time = (ms > 0).then(|| Duration::from_millis(u64::from(ms)));
        }
        if let Some(chains) = chains {
            config = config.with_chains(chains);
        }
        if let Some(key) = balance_api_key {
            config = config.with_balance_api_key(key);
        }
        let running =
            py.detach(move || devnet::Devnet::start(config)).map_err(|e| devnet_err(py, e))?;
        let services_url = running.services_url();
        let user_rpc_url = running.user_rpc_url();
        let handle = Arc::new(Handle {
            running: Mutex::new(Some(running)),
            temp: Mutex::new(temp),
            origin: Origin::here(),
        });
        {
            let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
            live.retain(|weak| weak.strong_count() > 0);
            live.push(Arc::downgrade(&handle));
        }
        Ok(PyDevnet { handle, services_url, user_rpc_url, db_path })
    }

    #[getter]
    fn services_url(&self) -> &str {
        &self.services_url
    }

    #[getter]
    fn user_rpc_url(&self) -> &str {
        &self.user_rpc_url
    }

    #[getter]
    fn db_path(&self) -> PathBuf {
        self.db_path.clone()
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        self.check_process(py)?;
        Ok(self.handle.running.lock().unwrap_or_else(PoisonError::into_inner).is_none())
    }

    #[pyo3(signature = (address, chain_id, token, amount=None, *, raw_amount=None, sender=None))]
    #[allow(clippy::too_many_arguments)]
    fn deposit(
        &self,
        py: Python<'_>,
        address: &Bound<'_, PyAny>,
        chain_id: &Bound<'_, PyAny>,
        token: &Bound<'_, PyAny>,
        amount: Option<&Bound<'_, PyAny>>,
        raw_amount: Option<&Bound<'_, PyAny>>,
        sender: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let (address, chain_id, token) = line_args(address, chain_id, token)?;
        let raw = match (given(amount), given(raw_amount)) {
            (Some(amount), None) => human_amount(amount, token, chain_id)?,
            (None, Some(raw)) => amount_arg(raw)?,
            _ => {
                return Err(PyTypeError::new_err(
                    "deposit() takes exactly one of amount (human-readable) and raw_amount (smallest units)",
                ));
            }
        };
        let sender = text_opt(sender, "sender")?;
        let raw = raw.to_string();
        let deposit = self.with(py, |running| {
            running.deposit(&address, chain_id, token, &raw, sender.as_deref())
        })?;
        Ok(deposit.tx_hash)
    }

    fn ledger_balance<'py>(
        &self,
        py: Python<'py>,
        address: &Bound<'py, PyAny>,
        chain_id: &Bound<'py, PyAny>,
        token: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (address, chain_id, token) = line_args(address, chain_id, token)?;
        let raw = self.with(py, |running| running.ledger_balance(&address, chain_id, token))?;
        let raw = raw.parse::<U256>().map_err(|_| {
            to_py_err(
                py,
                Error::new(
                    ErrorKind::Internal,
                    format!("the ledger answered {}, not an amount", quote(&raw)),
                ),
            )
        })?;
        u256_to_py(py, raw)
    }

    #[getter]
    fn chains(&self, py: Python<'_>) -> PyResult<Vec<u64>> {
        self.with(py, |running| Ok(running.chains()))
    }

    #[getter]
    fn vault_addresses<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let vault = self.with(py, |running| Ok(running.vault_addresses()))?;
        vault
            .map(|vault| {
                let dict = PyDict::new(py);
                dict.set_item(intern!(py, "evm"), vault.evm)?;
                dict.set_item(intern!(py, "solana"), vault.solana)?;
                Ok(dict)
            })
            .transpose()
    }

    fn chain_balance<'py>(
        &self,
        py: Python<'py>,
        address: &Bound<'py, PyAny>,
        chain_id: &Bound<'py, PyAny>,
        token: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (address, chain_id, token) = line_args(address, chain_id, token)?;
        let raw = self.with(py, |running| running.chain_balance(&address, chain_id, token))?;
        u256_to_py(py, raw)
    }

    fn complete_onramp_order<'py>(
        &self,
        py: Python<'py>,
        params: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = order_params_arg(params)?;
        let answer = self.with(py, |running| running.complete_onramp_order(&params))?;
        json_to_py(py, &answer)
    }

    fn set_price(&self, py: Python<'_>, token: &Bound<'_, PyAny>, usd: f64) -> PyResult<()> {
        let token = token_arg(token)?;
        self.with(py, |running| running.set_price(token, usd))
    }

    #[pyo3(signature = (count, mode="fail"))]
    fn fail_next_sweeps(
        &self,
        py: Python<'_>,
        count: &Bound<'_, PyAny>,
        mode: &str,
    ) -> PyResult<()> {
        let count = count_arg(count, "count")?;
        let mode = match mode {
            "fail" => SweepFaultMode::Fail,
            "reject" => SweepFaultMode::Reject,
            other => {
                return Err(to_py_err(
                    py,
                    Error::invalid_argument(format!(
                        "mode must be \"fail\" or \"reject\", got {}",
                        quote(other)
                    )),
                ));
            }
        };
        self.with(py, |running| {
            running.fail_next_sweeps(count, mode);
            Ok(())
        })
    }

    fn rotate_jwt_key(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, RunningDevnet::rotate_jwt_key)
    }

    fn forge_next_jwts(&self, py: Python<'_>, count: &Bound<'_, PyAny>) -> PyResult<()> {
        let count = count_arg(count, "count")?;
        self.with(py, |running| running.forge_next_jwts(count))
    }

    #[pyo3(signature = (user=None))]
    fn expire_sessions(&self, py: Python<'_>, user: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let user = text_opt(user, "user")?;
        self.with(py, |running| {
            running.expire_sessions(user.as_deref());
            Ok(())
        })
    }

    #[pyo3(signature = (service, *, status=None, retry_after=None, delay_ms=None, count=1, path=None))]
    #[allow(clippy::too_many_arguments)]
    fn inject_fault(
        &self,
        py: Python<'_>,
        service: &str,
        status: Option<u16>,
        retry_after: Option<u64>,
        delay_ms: Option<u64>,
        count: u32,
        path: Option<String>,
    ) -> PyResult<()> {
        let service =
            Service::ALL.into_iter().find(|s| s.as_str() == service).ok_or_else(|| {
                to_py_err(
                    py,
                    Error::invalid_argument(format!(
                        "service must be one of \"jwt\", \"signer\", \"ua\", \"user-rpc\", got {}",
                        quote(service)
                    )),
                )
            })?;
        let fault = Fault { status, retry_after, delay_ms, count: Some(count) };
        self.with(py, |running| running.inject_service_fault_at(service, path.as_deref(), &fault))
    }

    fn clear_faults(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |running| {
            running.clear_faults();
            Ok(())
        })
    }

    /// The demo project of `depositkit-devnet serve --demo` (created on first use).
    fn demo_credentials<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let creds = self.with(py, |running| devnet::ensure_demo(running.store()))?;
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "project_id"), creds.project_id)?;
        dict.set_item(intern!(py, "server_key"), creds.server_key)?;
        dict.set_item(intern!(py, "user_uuid"), creds.user_uuid)?;
        dict.set_item(intern!(py, "user_token"), creds.user_token)?;
        dict.set_item(intern!(py, "jwt_uid"), creds.jwt_uid)?;
        dict.set_item(intern!(py, "evm_address"), creds.evm_address)?;
        dict.set_item(intern!(py, "solana_address"), creds.solana_address)?;
        Ok(dict)
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.check_process(py)?;
        let handle = &self.handle;
        py.detach(|| handle.stop());
        Ok(())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        if slf.closed(slf.py())? {
            return Err(closed_err(slf.py()));
        }
        Ok(slf)
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let state = if !self.handle.origin.is_here() {
            format!(" created in process {}", self.handle.origin.pid())
        } else if self.handle.running.lock().unwrap_or_else(PoisonError::into_inner).is_none() {
            " closed".to_owned()
        } else {
            String::new()
        };
        Ok(format!("<depositkit.Devnet services_url={}{state}>", py_repr(py, &self.services_url)?))
    }
}

impl Drop for PyDevnet {
    fn drop(&mut self) {
        // Dropped while attached (deallocation): stopping waits for the server thread.
        let handle = Arc::clone(&self.handle);
        let stop = move || handle.stop();
        if Python::try_attach(|py| py.detach(stop.clone())).is_none() {
            stop();
        }
    }
}
