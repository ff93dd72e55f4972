//! The user-lookup client for Python: `depositkit.UserRpcClient` over
//! `depositkit_core::UserRpcClient`; the records it returns, `User` and `Wallet`, are declared in
//! [`crate::records::users`].
//!
//! Every network call runs on a worker thread while the calling thread waits for its answer with
//! the GIL released, checking for Ctrl-C every 100 ms ([`wait_for`]): the `KeyboardInterrupt` is
//! raised at once and the abandoned request finishes on its worker by itself (its answer is
//! dropped). Argument checks run in the core, before any request, and every core error becomes a
//! Python exception through [`to_py_err`].
//!
//! `get_users_info` sends one JSON-RPC batch and answers a list in request order holding each
//! request's `User` or its exception (an instance, not raised). The `_…_async` methods are the
//! awaitable forms `depositkit.AsyncUserRpcClient` (`depositkit/_aio.py`) awaits: the core's
//! futures run on its runtime and complete an `asyncio.Future` on the caller's event loop
//! ([`crate::aio`]), so an event loop never blocks and no thread is started per call.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use depositkit_core as core;
use depositkit_core::describe::quote;
use depositkit_core::users::MAX_TIMEOUT;
use depositkit_core::{Error, ErrorKind, RetryPolicy, UserRpcClientOptions};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PySequence, PyString};

use crate::aio;
use crate::blocking::wait_for;
use crate::conversions::{str_arg, type_name};
use crate::errors::{as_option_error, to_py_err};
use crate::fork::Origin;
use crate::records::py_repr;
use crate::records::users::PyUser;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUserRpcClient>()
}

/// The message of every call on a closed client.
const CLOSED: &str = "UserRpcClient is closed";

/// The class name in the messages of [`crate::fork`].
const CLASS: &str = "UserRpcClient";

// --- the client -------------------------------------------------------------------------------

#[pyclass(module = "depositkit", name = "UserRpcClient", frozen)]
pub(crate) struct PyUserRpcClient {
    /// `None` once closed. Calls clone the `Arc`, so a call in flight finishes after `close()`.
    client: Mutex<Option<Arc<core::UserRpcClient>>>,
    base_url: String,
    project_id: String,
    /// The process that created the client: a forked child must not share its connections.
    origin: Origin,
}

impl PyUserRpcClient {
    /// The core client, after checking that this is the process that created it
    /// ([`crate::fork`]); every method but the fixed `base_url` and `project_id` goes through
    /// here first.
    fn client(&self, py: Python<'_>) -> PyResult<Arc<core::UserRpcClient>> {
        self.origin.check(py, CLASS)?;
        let guard = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        guard.clone().ok_or_else(|| to_py_err(py, Error::new(ErrorKind::DepositSdk, CLOSED)))
    }

    /// Runs `call` with the core client on a worker thread; see [`wait_for`].
    fn run<T: Send + 'static>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&core::UserRpcClient) -> core::Result<T> + Send + 'static,
    ) -> PyResult<T> {
        let client = self.client(py)?;
        wait_for(py, move || call(&client))
    }
}

#[pymethods]
impl PyUserRpcClient {
    #[new]
    #[pyo3(
        signature = (base_url, project_id, server_key, *, timeout=None, max_retries=None, user_agent=None),
        text_signature = "(base_url, project_id, server_key, *, timeout=10.0, max_retries=3, user_agent=None)"
    )]
    fn new(
        py: Python<'_>,
        base_url: &Bound<'_, PyAny>,
        project_id: &Bound<'_, PyAny>,
        server_key: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
        max_retries: Option<&Bound<'_, PyAny>>,
        user_agent: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        // A wrong type of any of them is a ConfigurationTypeError (the options' one rule).
        let read = || -> PyResult<_> {
            let base_url = str_arg(base_url, "base_url")?;
            let project_id = str_arg(project_id, "project_id")?;
            let server_key = str_arg(server_key, "server_key")?;
            let mut options = UserRpcClientOptions::default();
            if let Some(timeout) = timeout {
                options.timeout = timeout_arg(timeout)?;
            }
            if let Some(max_retries) = max_retries {
                options.retry =
                    RetryPolicy { max_retries: max_retries_arg(max_retries)?, ..options.retry };
            }
            if let Some(user_agent) = user_agent {
                options.user_agent = user_agent_arg(user_agent)?;
            }
            Ok((base_url, project_id, server_key, options))
        };
        let (base_url, project_id, server_key, options) =
            read().map_err(|e| as_option_error(py, e))?;
        let client = core::UserRpcClient::new(&base_url, &project_id, &server_key, options)
            .map_err(|err| to_py_err(py, err))?;
        Ok(PyUserRpcClient {
            base_url: client.base_url().to_owned(),
            project_id: client.project_id().to_owned(),
            client: Mutex::new(Some(Arc::new(client))),
            origin: Origin::here(),
        })
    }

    #[getter]
    fn base_url(&self) -> &str {
        &self.base_url
    }

    #[getter]
    fn project_id(&self) -> &str {
        &self.project_id
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        self.origin.check(py, CLASS)?;
        Ok(self.client.lock().unwrap_or_else(PoisonError::into_inner).is_none())
    }

    fn get_user_info(
        &self,
        py: Python<'_>,
        uuid: &Bound<'_, PyAny>,
        token: &Bound<'_, PyAny>,
    ) -> PyResult<PyUser> {
        let uuid = str_arg(uuid, "uuid")?.into_owned();
        let token = str_arg(token, "token")?.into_owned();
        let user = self.run(py, move |client| client.get_user_info(&uuid, &token))?;
        Ok(PyUser::from(user))
    }

    fn get_user_info_by_identity(
        &self,
        py: Python<'_>,
        provider: &Bound<'_, PyAny>,
        uid: &Bound<'_, PyAny>,
    ) -> PyResult<PyUser> {
        let provider = str_arg(provider, "provider")?.into_owned();
        let uid = str_arg(uid, "uid")?.into_owned();
        let user = self.run(py, move |client| client.get_user_info_by_identity(&provider, &uid))?;
        Ok(PyUser::from(user))
    }

    fn is_project_user(
        &self,
        py: Python<'_>,
        chain: &Bound<'_, PyAny>,
        address: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let chain = str_arg(chain, "chain")?.into_owned();
        let address = str_arg(address, "address")?.into_owned();
        self.run(py, move |client| client.is_project_user(&chain, &address))
    }

    fn get_users_info<'py>(
        &self,
        py: Python<'py>,
        requests: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let requests = requests_arg(requests)?;
        let outcomes = self.run(py, move |client| client.get_users_info(&requests))?;
        outcomes_to_py(py, outcomes)
    }

    fn _get_user_info_async<'py>(
        &self,
        py: Python<'py>,
        uuid: &Bound<'py, PyAny>,
        token: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (uuid, token) = (str_arg(uuid, "uuid")?, str_arg(token, "token")?);
        let future = self.client(py)?.get_user_info_async(&uuid, &token);
        aio::spawn(py, future, user_to_py)
    }

    fn _get_user_info_by_identity_async<'py>(
        &self,
        py: Python<'py>,
        provider: &Bound<'py, PyAny>,
        uid: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (provider, uid) = (str_arg(provider, "provider")?, str_arg(uid, "uid")?);
        let future = self.client(py)?.get_user_info_by_identity_async(&provider, &uid);
        aio::spawn(py, future, user_to_py)
    }

    fn _is_project_user_async<'py>(
        &self,
        py: Python<'py>,
        chain: &Bound<'py, PyAny>,
        address: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (chain, address) = (str_arg(chain, "chain")?, str_arg(address, "address")?);
        let future = self.client(py)?.is_project_user_async(&chain, &address);
        aio::spawn(py, future, |py, member| {
            Ok(PyBool::new(py, member).to_owned().into_any().unbind())
        })
    }

    fn _get_users_info_async<'py>(
        &self,
        py: Python<'py>,
        requests: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let requests = requests_arg(requests)?;
        let future = self.client(py)?.get_users_info_async(requests);
        aio::spawn(py, future, |py, outcomes| Ok(outcomes_to_py(py, outcomes)?.into_any().unbind()))
    }

    // Drops the core client and its connection pool. Idempotent; calls already running finish.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.origin.check(py, CLASS)?;
        let client = self.client.lock().unwrap_or_else(PoisonError::into_inner).take();
        drop(client);
        Ok(())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        slf.client(slf.py())?;
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
        // Never the server key.
        Ok(format!(
            "<depositkit.UserRpcClient base_url={} project_id={}>",
            py_repr(py, &self.base_url)?,
            py_repr(py, &self.project_id)?
        ))
    }
}

impl Drop for PyUserRpcClient {
    fn drop(&mut self) {
        // Inherited through fork: the pooled connections are the parent's too. Leaked on
        // purpose rather than closed from here.
        if !self.origin.is_here() {
            let client = self.client.get_mut().unwrap_or_else(PoisonError::into_inner).take();
            std::mem::forget(client);
        }
    }
}

fn user_to_py(py: Python<'_>, user: core::User) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, PyUser::from(user))?.into_any())
}

/// A batch's outcomes as a list: each request's `User`, or its exception (not raised).
fn outcomes_to_py(
    py: Python<'_>,
    outcomes: Vec<core::Result<core::User>>,
) -> PyResult<Bound<'_, PyList>> {
    let items = outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Ok(user) => user_to_py(py, user),
            Err(err) => Ok(to_py_err(py, err).into_value(py).into_any()),
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// `get_users_info`'s requests: an iterable of `(uuid, token)` pairs of `str`.
fn requests_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "requests must be an iterable of (uuid, token) pairs, not str",
        ));
    }
    let items = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "requests must be an iterable of (uuid, token) pairs, not {}",
            type_name(obj)
        ))
    })?;
    items
        .enumerate()
        .map(|(index, item)| {
            let item = item?;
            let pair = item
                .cast::<PySequence>()
                .ok()
                .filter(|_| !item.is_instance_of::<PyString>())
                .filter(|seq| seq.len().ok() == Some(2));
            let Some(pair) = pair else {
                return Err(PyTypeError::new_err(format!(
                    "requests[{index}] must be a (uuid, token) pair, not {}",
                    type_name(&item)
                )));
            };
            let (uuid, token) = (pair.get_item(0)?, pair.get_item(1)?);
            let uuid = str_arg(&uuid, &format!("requests[{index}] uuid"))?.into_owned();
            let token = str_arg(&token, &format!("requests[{index}] token"))?.into_owned();
            Ok((uuid, token))
        })
        .collect()
}

/// `timeout`: an `int` or `float` number of seconds, above zero and at most the core's
/// [`MAX_TIMEOUT`] (a day).
fn timeout_arg(obj: &Bound<'_, PyAny>) -> PyResult<Duration> {
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>())
    {
        return Err(PyTypeError::new_err(format!(
            "timeout must be a number of seconds (int or float), not {}",
            type_name(obj)
        )));
    }
    // An int too large for a float is certainly too long.
    let seconds = obj.extract::<f64>().unwrap_or(f64::INFINITY);
    let max = MAX_TIMEOUT.as_secs();
    match Duration::try_from_secs_f64(seconds) {
        Ok(timeout) if !timeout.is_zero() && timeout <= MAX_TIMEOUT => Ok(timeout),
        _ => {
            let shown = obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".to_owned());
            Err(to_py_err(
                obj.py(),
                Error::configuration(format!(
                    "invalid timeout {shown}: expected a number of seconds greater than zero and at most {max}"
                )),
            ))
        }
    }
}

/// `max_retries`: an `int` from 0 to 2^32 - 1.
fn max_retries_arg(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "max_retries must be an int, not {}",
            type_name(obj)
        )));
    }
    obj.extract::<u32>().map_err(|_| {
        let shown = obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".to_owned());
        to_py_err(
            obj.py(),
            Error::configuration(format!(
                "invalid max_retries {shown}: expected an integer from 0 to {}",
                u32::MAX
            )),
        )
    })
}

/// `user_agent`: a `str` that fits an HTTP header.
fn user_agent_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = str_arg(obj, "user_agent")?;
    if text.chars().any(|c| c.is_control()) || text.trim() != text {
        let quoted = quote(&text);
        return Err(to_py_err(
            obj.py(),
            Error::configuration(format!(
                "invalid user_agent {quoted}: it must not contain control characters or surrounding spaces"
            )),
        ));
    }
    Ok(text.into_owned())
}
