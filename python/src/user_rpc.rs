//! The user-lookup client for Python: `depositkit.UserRpcClient`, `depositkit.User` and
//! `depositkit.Wallet` over `depositkit_core::UserRpcClient`.
//!
//! Every network call runs on a worker thread while the calling thread waits for its answer with
//! the GIL released, checking for Ctrl-C every 100 ms ([`wait_for`]): the `KeyboardInterrupt` is
//! raised at once and the abandoned request finishes on its worker by itself (its answer is
//! dropped). Argument checks run in the core, before any request, and every core error becomes a
//! Python exception through [`to_py_err`].

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use depositkit_core as core;
use depositkit_core::describe::quote;
use depositkit_core::users::MAX_TIMEOUT;
use depositkit_core::{Error, ErrorKind, RetryPolicy, UserRpcClientOptions};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString, PyType};

use crate::blocking::wait_for;
use crate::conversions::{json_to_py, str_arg, type_name};
use crate::errors::{as_option_error, to_py_err};
use crate::fork::Origin;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUserRpcClient>()?;
    m.add_class::<PyUser>()?;
    m.add_class::<PyWallet>()?;
    Ok(())
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
        Ok(PyUser { inner: user })
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
        Ok(PyUser { inner: user })
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

/// The text of `text` as Python's `repr()` writes it (quotes and escapes included).
fn py_repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(PyString::new(py, text).repr()?.to_string())
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

// --- records ----------------------------------------------------------------------------------

#[pyclass(module = "depositkit", name = "Wallet", frozen, eq, hash)]
#[derive(PartialEq, Eq)]
pub(crate) struct PyWallet {
    inner: core::Wallet,
}

impl Hash for PyWallet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.inner.chain.hash(state);
        self.inner.public_address.hash(state);
    }
}

#[pymethods]
impl PyWallet {
    #[getter]
    fn chain(&self) -> &str {
        &self.inner.chain
    }

    #[getter]
    fn public_address(&self) -> &str {
        &self.inner.public_address
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "chain"), &self.inner.chain)?;
        dict.set_item(intern!(py, "publicAddress"), &self.inner.public_address)?;
        Ok(dict)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.Wallet chain={} public_address={}>",
            py_repr(py, &self.inner.chain)?,
            py_repr(py, &self.inner.public_address)?
        ))
    }
}

#[pyclass(module = "depositkit", name = "User", frozen, eq, hash)]
#[derive(PartialEq, Eq)]
pub(crate) struct PyUser {
    inner: core::User,
}

/// Hashes the identifying fields only: equal records have equal hashes, which is all `hash`
/// promises.
impl Hash for PyUser {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.inner.uuid.hash(state);
        self.inner.email.hash(state);
        self.inner.created_at.hash(state);
        self.inner.updated_at.hash(state);
    }
}

/// `datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)` and `datetime.timedelta`.
static DATETIME: PyOnceLock<(Py<PyAny>, Py<PyType>)> = PyOnceLock::new();

/// An aware UTC `datetime.datetime` for `field`, whose text `text` parsed to `parsed`
/// (seconds since the epoch and microseconds).
fn utc_datetime<'py>(
    py: Python<'py>,
    field: &str,
    text: &str,
    parsed: Option<(i64, u32)>,
) -> PyResult<Bound<'py, PyAny>> {
    let out_of_range = |why: String| {
        to_py_err(
            py,
            Error::new(
                ErrorKind::Protocol,
                format!("{field} {} cannot be a datetime.datetime: {why}", quote(text)),
            ),
        )
    };
    let Some((seconds, micros)) = parsed else {
        return Err(out_of_range("it is not an ISO 8601 timestamp".to_owned()));
    };
    let (epoch, timedelta) = DATETIME.get_or_try_init(py, || -> PyResult<_> {
        let datetime = py.import(intern!(py, "datetime"))?;
        let utc = datetime.getattr(intern!(py, "timezone"))?.getattr(intern!(py, "utc"))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item(intern!(py, "tzinfo"), utc)?;
        let epoch = datetime.getattr(intern!(py, "datetime"))?.call((1970, 1, 1), Some(&kwargs))?;
        let timedelta = datetime.getattr(intern!(py, "timedelta"))?.cast_into::<PyType>()?;
        Ok((epoch.unbind(), timedelta.unbind()))
    })?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "seconds"), seconds)?;
    kwargs.set_item(intern!(py, "microseconds"), micros)?;
    let delta = timedelta.bind(py).call((), Some(&kwargs))?;
    // Year 0 parses as RFC 3339 but is before datetime.MINYEAR.
    epoch.bind(py).add(delta).map_err(|e| out_of_range(e.to_string()))
}

#[pymethods]
impl PyUser {
    #[getter]
    fn uuid(&self) -> &str {
        &self.inner.uuid
    }

    #[getter]
    fn phone(&self) -> Option<&str> {
        self.inner.phone.as_deref()
    }

    #[getter]
    fn email(&self) -> &str {
        &self.inner.email
    }

    #[getter]
    fn name(&self) -> Option<&str> {
        self.inner.name.as_deref()
    }

    #[getter]
    fn avatar(&self) -> Option<&str> {
        self.inner.avatar.as_deref()
    }

    #[getter]
    fn facebook_id(&self) -> Option<&str> {
        self.inner.facebook_id.as_deref()
    }

    #[getter]
    fn facebook_email(&self) -> Option<&str> {
        self.inner.facebook_email.as_deref()
    }

    #[getter]
    fn google_id(&self) -> Option<&str> {
        self.inner.google_id.as_deref()
    }

    #[getter]
    fn google_email(&self) -> Option<&str> {
        self.inner.google_email.as_deref()
    }

    #[getter]
    fn apple_id(&self) -> Option<&str> {
        self.inner.apple_id.as_deref()
    }

    #[getter]
    fn apple_email(&self) -> Option<&str> {
        self.inner.apple_email.as_deref()
    }

    #[getter]
    fn twitter_id(&self) -> Option<&str> {
        self.inner.twitter_id.as_deref()
    }

    #[getter]
    fn twitter_email(&self) -> Option<&str> {
        self.inner.twitter_email.as_deref()
    }

    #[getter]
    fn telegram_id(&self) -> Option<&str> {
        self.inner.telegram_id.as_deref()
    }

    #[getter]
    fn telegram_phone(&self) -> Option<&str> {
        self.inner.telegram_phone.as_deref()
    }

    #[getter]
    fn discord_id(&self) -> Option<&str> {
        self.inner.discord_id.as_deref()
    }

    #[getter]
    fn discord_email(&self) -> Option<&str> {
        self.inner.discord_email.as_deref()
    }

    #[getter]
    fn github_id(&self) -> Option<&str> {
        self.inner.github_id.as_deref()
    }

    #[getter]
    fn github_email(&self) -> Option<&str> {
        self.inner.github_email.as_deref()
    }

    #[getter]
    fn twitch_id(&self) -> Option<&str> {
        self.inner.twitch_id.as_deref()
    }

    #[getter]
    fn twitch_email(&self) -> Option<&str> {
        self.inner.twitch_email.as_deref()
    }

    #[getter]
    fn microsoft_id(&self) -> Option<&str> {
        self.inner.microsoft_id.as_deref()
    }

    #[getter]
    fn microsoft_email(&self) -> Option<&str> {
        self.inner.microsoft_email.as_deref()
    }

    #[getter]
    fn linkedin_id(&self) -> Option<&str> {
        self.inner.linkedin_id.as_deref()
    }

    #[getter]
    fn linkedin_email(&self) -> Option<&str> {
        self.inner.linkedin_email.as_deref()
    }

    #[getter]
    fn created_at(&self) -> &str {
        &self.inner.created_at
    }

    #[getter]
    fn updated_at(&self) -> &str {
        &self.inner.updated_at
    }

    #[getter]
    fn created_at_datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let parsed =
            self.inner.created_at_time().map(|t| (t.timestamp(), t.timestamp_subsec_micros()));
        utc_datetime(py, "createdAt", &self.inner.created_at, parsed)
    }

    #[getter]
    fn updated_at_datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let parsed =
            self.inner.updated_at_time().map(|t| (t.timestamp(), t.timestamp_subsec_micros()));
        utc_datetime(py, "updatedAt", &self.inner.updated_at, parsed)
    }

    #[getter]
    fn wallets(&self) -> Vec<PyWallet> {
        self.inner.wallets.iter().map(|w| PyWallet { inner: w.clone() }).collect()
    }

    // The record as the service sends it: camelCase keys, nulls included.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.inner.to_json())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<depositkit.User uuid={} email={}>",
            py_repr(py, &self.inner.uuid)?,
            py_repr(py, &self.inner.email)?
        ))
    }
}
