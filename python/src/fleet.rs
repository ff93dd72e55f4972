//! `depositkit.DepositFleet`: fleet mode (docs/fleet.md) for Python, over
//! `depositkit_fleet::DepositFleet`.
//!
//! - **Joining**: `DepositFleet(database_url, *, destination, **options)` joins the fleet on
//!   PostgreSQL. The keywords `name`, `max_connections`, `lease_ttl` and `renew_every` are the
//!   member's; every other keyword is a `DepositClient` option, read by the same reader
//!   ([`build_config`]) into the template each owner's client starts from.
//! - **Owners and commands** (`add_owner`, `remove_owner`, `request`; the commands' arguments
//!   and outcomes in `command.rs`) and the **event log** (`events`) go to the database from a
//!   worker thread while the caller waits detached ([`wait_for_raw`]).
//! - **The log's other faces** (`feed.rs`): `events()` keeps its reader between calls,
//!   `subscribe` delivers to a callback on a thread of its own, `iter_events` pulls one event
//!   at a time; all stop when the member leaves.
//! - **Awaitables** (`aio.rs`): the `_…_async` calls `depositkit.AsyncDepositFleet` awaits,
//!   tasks of the fleet's runtime ([`AsyncFleet`]).
//! - **Errors**: each `FleetError` becomes the exception class of the nearest kind
//!   ([`FleetError::kind`]); the database URL's password never appears: reprs show the URL with it
//!   replaced by `***`, and every message is scrubbed of it ([`Secrets`]).
//! - **Lifecycle**: `leave()` (also `with`, and the `atexit` hook [`close_all`]) stops the
//!   log's callbacks and readers and hands the owners to the other members at once, and no
//!   connection of the member stays open; dropping the object without leaving stops its
//!   clients and callbacks, and its owners pass on once its lease runs out.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use depositkit_core::deposit::RefundReason;
use depositkit_core::{Error, ErrorKind};
use depositkit_fleet::{
    AsyncFleet, CommandOutcome, DepositFleet, EventCursor, Fleet, FleetCommand, FleetError,
    FleetEvent, FleetOptions, LeaseSettings, OwnerOptions,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::blocking::wait_for_raw;
use crate::conversions::{given, json_to_py, str_arg};
use crate::errors::to_py_err;
use crate::events::PyDepositAddresses;
use crate::fork::Origin;
use crate::options::{build_config, destination_arg};

mod aio;
mod command;
mod feed;
mod password;

use command::{Request, outcome_to_py};
use password::{Secrets, redacted};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDepositFleet>()?;
    m.add_class::<PyFleetEvent>()?;
    m.add_class::<feed::PyFleetEventIterator>()
}

/// The class name in the messages of [`crate::fork`].
const CLASS: &str = "DepositFleet";
/// The owner of the client template: each owner's client replaces it with its own address.
const TEMPLATE_OWNER: &str = "0x0000000000000000000000000000000000000001";

// --- errors -----------------------------------------------------------------------------------

fn fleet_err(py: Python<'_>, secrets: &Secrets, err: &FleetError) -> PyErr {
    to_py_err(py, Error::new(err.kind(), secrets.scrub(&err.to_string())))
}

/// [`build_config`]'s "DepositClient() got an unexpected keyword argument …", said of
/// `DepositFleet()`.
fn said_of_fleet(py: Python<'_>, err: PyErr) -> PyErr {
    if err.is_instance_of::<PyTypeError>(py) {
        let message = err.value(py).to_string();
        if let Some(rest) = message.strip_prefix("DepositClient()") {
            return PyTypeError::new_err(format!("DepositFleet(){rest}"));
        }
    }
    err
}

fn invalid(py: Python<'_>, message: String) -> PyErr {
    to_py_err(py, Error::invalid_argument(message))
}

/// A number of seconds named `what`, at least 0.
fn seconds(py: Python<'_>, what: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        invalid(py, format!("{what} must be a number of seconds, at least 0, got {value}"))
    })
}

// --- the member -------------------------------------------------------------------------------

/// The member's own keywords.
struct MemberArgs {
    name: Option<String>,
    max_connections: usize,
    lease_ttl: f64,
    renew_every: f64,
}

impl MemberArgs {
    fn options(&self, py: Python<'_>) -> PyResult<FleetOptions> {
        let ttl = seconds(py, "lease_ttl", self.lease_ttl)?;
        let renew_every = seconds(py, "renew_every", self.renew_every)?;
        if renew_every.is_zero() || renew_every >= ttl {
            return Err(invalid(
                py,
                format!(
                    "renew_every must be above 0 and below lease_ttl ({} s), got {} s",
                    self.lease_ttl, self.renew_every
                ),
            ));
        }
        if self.max_connections == 0 {
            return Err(invalid(py, "max_connections must be at least 1, got 0".to_owned()));
        }
        let defaults = FleetOptions::default();
        Ok(FleetOptions {
            name: self.name.clone().unwrap_or(defaults.name),
            lease: LeaseSettings { ttl, renew_every, ..LeaseSettings::default() },
            max_connections: self.max_connections,
        })
    }
}

/// The client template and the member's options of `DepositFleet(...)`'s keywords.
fn join_args(
    py: Python<'_>,
    destination: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
    member: MemberArgs,
) -> PyResult<(depositkit_core::deposit::DepositClientConfig, FleetOptions)> {
    let template_owner = PyString::new(py, TEMPLATE_OWNER);
    let template = build_config(template_owner.as_any(), destination, options)
        .map_err(|err| said_of_fleet(py, err))?;
    Ok((template, member.options(py)?))
}

impl PyDepositFleet {
    /// `events()`'s cursor and wait, checked.
    fn read_args(
        &self,
        py: Python<'_>,
        cursor: Option<&Bound<'_, PyAny>>,
        max_events: usize,
        timeout: f64,
    ) -> PyResult<(EventCursor, Duration)> {
        let cursor = cursor_arg(py, &self.shared.secrets, cursor)?;
        if max_events == 0 {
            return Err(invalid(py, "max_events must be at least 1, got 0".to_owned()));
        }
        Ok((cursor, seconds(py, "timeout", timeout)?))
    }
}

/// A cursor argument: a saved cursor's text, or `None` for the start of the log.
fn cursor_arg(
    py: Python<'_>,
    secrets: &Secrets,
    cursor: Option<&Bound<'_, PyAny>>,
) -> PyResult<EventCursor> {
    match given(cursor) {
        Some(text) => str_arg(text, "cursor")?
            .parse::<EventCursor>()
            .map_err(|err| fleet_err(py, secrets, &err)),
        None => Ok(EventCursor::START),
    }
}

/// A member of the fleet, shared by its Python object, its event iterators and [`close_all`].
pub(crate) struct Member {
    /// The running member; `None` once it left.
    member: Mutex<Option<DepositFleet>>,
    /// The async face's database, when the member joined through `AsyncDepositFleet.join`.
    aio: Mutex<Option<AsyncFleet>>,
    /// The log's readers and callbacks, stopped on leaving.
    feeds: feed::Feeds,
    node_id: String,
    secrets: Secrets,
    origin: Origin,
}

impl Member {
    fn member(&self) -> std::sync::MutexGuard<'_, Option<DepositFleet>> {
        self.member.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn aio(&self) -> std::sync::MutexGuard<'_, Option<AsyncFleet>> {
        self.aio.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn left_error(&self, py: Python<'_>) -> PyErr {
        let message = format!("this DepositFleet (member {}) left the fleet", self.node_id);
        to_py_err(py, Error::new(ErrorKind::DepositSdk, message))
    }

    /// The fleet's database, after checking that this process created the object and that the
    /// member has not left.
    fn fleet(&self, py: Python<'_>) -> PyResult<Fleet> {
        self.origin.check(py, CLASS)?;
        match self.member().as_ref() {
            Some(member) => Ok(member.fleet().clone()),
            None => Err(self.left_error(py)),
        }
    }

    /// Stops the log's readers and callbacks, drops the async face's pool, and hands back the
    /// running member (`None` when it had left). Blocks (it waits for the delivery threads):
    /// call it detached.
    fn take_for_leaving(&self) -> Option<DepositFleet> {
        self.feeds.stop();
        let member = self.member().take();
        if let Some(aio) = self.aio().take() {
            aio.close();
        }
        member
    }
}

/// Every member not yet dropped, for [`close_all`].
static LIVE: Mutex<Vec<Weak<Member>>> = Mutex::new(Vec::new());

/// Leaves the fleet with every member still joined (the package's `atexit` hook, before the
/// clients close): their callbacks stop and their owners pass to the other members at once.
pub(crate) fn close_all(py: Python<'_>) {
    let live: Vec<Arc<Member>> = LIVE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain(..)
        .filter_map(|weak| weak.upgrade())
        .filter(|member| member.origin.is_here())
        .collect();
    py.detach(move || {
        for member in live {
            if let Some(running) = member.take_for_leaving() {
                let _ = running.leave();
            }
        }
    });
}

#[pyclass(module = "depositkit", name = "DepositFleet", frozen)]
pub(crate) struct PyDepositFleet {
    shared: Arc<Member>,
    /// The reader `events()` keeps between calls.
    kept: feed::KeptReader,
    /// The database URL with its password replaced by `***`.
    url: String,
}

impl PyDepositFleet {
    fn wrap(member: DepositFleet, aio: Option<AsyncFleet>, secrets: Secrets, url: &str) -> Self {
        let node_id = member.node_id();
        let shared = Arc::new(Member {
            member: Mutex::new(Some(member)),
            aio: Mutex::new(aio),
            feeds: feed::Feeds::default(),
            node_id,
            secrets,
            origin: Origin::here(),
        });
        {
            let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
            live.retain(|weak| weak.strong_count() > 0);
            live.push(Arc::downgrade(&shared));
        }
        let kept = shared.feeds.kept_reader();
        PyDepositFleet { shared, kept, url: redacted(url) }
    }

    fn member(&self) -> std::sync::MutexGuard<'_, Option<DepositFleet>> {
        self.shared.member()
    }

    fn fleet(&self, py: Python<'_>) -> PyResult<Fleet> {
        self.shared.fleet(py)
    }

    /// Runs `call` on a worker thread, waiting detached; its failure as an exception.
    fn run<T: Send + 'static>(
        &self,
        py: Python<'_>,
        call: impl FnOnce() -> depositkit_fleet::Result<T> + Send + 'static,
    ) -> PyResult<T> {
        wait_for_raw(py, call)?.map_err(|err| fleet_err(py, &self.shared.secrets, &err))
    }
}

impl Drop for PyDepositFleet {
    fn drop(&mut self) {
        if !self.shared.origin.is_here() {
            // Inherited through fork: its threads are in the parent. Leaked on purpose.
            std::mem::forget(self.shared.member().take());
            return;
        }
        // Stopping the callbacks and clients waits for their threads: detached when attached.
        let shared = Arc::clone(&self.shared);
        let halt = move || shared.take_for_leaving().map(DepositFleet::halt);
        let mut halt = Some(halt);
        let _ = Python::try_attach(|py| {
            if let Some(halt) = halt.take() {
                py.detach(halt);
            }
        });
        if let Some(halt) = halt {
            halt();
        }
    }
}

#[pymethods]
impl PyDepositFleet {
    #[new]
    #[pyo3(signature = (
        database_url, *, destination, name=None, max_connections=8, lease_ttl=10.0,
        renew_every=3.0, **options
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        database_url: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
        name: Option<String>,
        max_connections: usize,
        lease_ttl: f64,
        renew_every: f64,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let member_args = MemberArgs { name, max_connections, lease_ttl, renew_every };
        let url = str_arg(database_url, "database_url")?.into_owned();
        let secrets = Secrets::of(&url);
        let (template, member) = join_args(py, destination, options, member_args)?;
        let joining = url.clone();
        let joined = wait_for_raw(py, move || DepositFleet::join(&joining, template, member))?;
        let member = joined.map_err(|err| fleet_err(py, &secrets, &err))?;
        Ok(PyDepositFleet::wrap(member, None, secrets, &url))
    }

    /// This member's node id.
    #[getter]
    fn node_id(&self) -> &str {
        &self.shared.node_id
    }

    /// The database URL, its password replaced by `***`.
    #[getter]
    fn database_url(&self) -> &str {
        &self.url
    }

    /// The owners whose clients run in this process now, sorted.
    #[getter]
    fn running_owners(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.shared.origin.check(py, CLASS)?;
        Ok(self.member().as_ref().map(DepositFleet::running_owners).unwrap_or_default())
    }

    /// Whether the member left the fleet.
    #[getter]
    fn left(&self) -> bool {
        self.member().is_none()
    }

    /// Every registered owner, sorted.
    fn owners(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let fleet = self.fleet(py)?;
        self.run(py, move || fleet.owners())
    }

    /// The deposit addresses of `owner`'s account, or `None` until a client of it started once.
    fn deposit_addresses(
        &self,
        py: Python<'_>,
        owner: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PyDepositAddresses>> {
        let owner = str_arg(owner, "owner")?.into_owned();
        let fleet = self.fleet(py)?;
        let addresses = self.run(py, move || fleet.deposit_addresses(&owner))?;
        Ok(addresses.map(PyDepositAddresses::from))
    }

    #[pyo3(signature = (owner, *, destination=None))]
    fn add_owner(
        &self,
        py: Python<'_>,
        owner: &Bound<'_, PyAny>,
        destination: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let owner = str_arg(owner, "owner")?.into_owned();
        let destination = given(destination).map(destination_arg).transpose()?;
        let fleet = self.fleet(py)?;
        self.run(py, move || fleet.add_owner(&owner, OwnerOptions { destination }))
    }

    fn remove_owner(&self, py: Python<'_>, owner: &Bound<'_, PyAny>) -> PyResult<()> {
        let owner = str_arg(owner, "owner")?.into_owned();
        let fleet = self.fleet(py)?;
        self.run(py, move || fleet.remove_owner(&owner))
    }

    #[pyo3(signature = (owner, command, *, deposit_id=None, reason=None, destination=None, timeout=30.0))]
    #[allow(clippy::too_many_arguments)]
    fn request<'py>(
        &self,
        py: Python<'py>,
        owner: &Bound<'py, PyAny>,
        command: &Bound<'py, PyAny>,
        deposit_id: Option<&Bound<'py, PyAny>>,
        reason: Option<&Bound<'py, PyAny>>,
        destination: Option<&Bound<'py, PyAny>>,
        timeout: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let asked = Request::of(py, owner, command, [deposit_id, reason, destination], timeout)?;
        let Request { owner, kind, command, timeout } = asked;
        let fleet = self.fleet(py)?;
        let outcome = self.run(py, move || fleet.request(&owner, command, timeout))?;
        outcome_to_py(py, &kind, outcome).map(|value| value.into_bound(py))
    }

    #[pyo3(signature = (cursor=None, max_events=500, timeout=5.0))]
    fn events(
        &self,
        py: Python<'_>,
        cursor: Option<&Bound<'_, PyAny>>,
        max_events: usize,
        timeout: f64,
    ) -> PyResult<(Vec<PyFleetEvent>, String)> {
        let (cursor, wait) = self.read_args(py, cursor, max_events, timeout)?;
        let job = self.kept.job(self.fleet(py)?, cursor, max_events, wait);
        let (batch, next) = self.run(py, job)?;
        let events = batch.iter().map(|event| PyFleetEvent::new(py, event));
        Ok((events.collect::<PyResult<_>>()?, next))
    }

    /// Leaves the fleet gracefully: stops this member's clients and hands its owners to the
    /// others at once. A second call does nothing.
    fn leave(&self, py: Python<'_>) -> PyResult<()> {
        self.shared.origin.check(py, CLASS)?;
        let shared = Arc::clone(&self.shared);
        let Some(member) = py.detach(move || shared.take_for_leaving()) else { return Ok(()) };
        self.run(py, move || member.leave())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        slf.fleet(slf.py())?;
        Ok(slf)
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        self.leave(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let state = if self.member().is_some() { "joined" } else { "left" };
        let node = &self.shared.node_id;
        format!("DepositFleet(node_id='{node}', database_url='{}', {state})", self.url)
    }
}

// --- the log's events -------------------------------------------------------------------------

/// One event of the fleet's log.
#[pyclass(module = "depositkit", name = "FleetEvent", frozen, get_all)]
pub(crate) struct PyFleetEvent {
    owner: String,
    id: u64,
    at: u64,
    kind: String,
    deposit_id: Option<String>,
    /// The event as `DepositEvent.to_dict()` would give it.
    event: Py<PyAny>,
    cursor: String,
}

impl PyFleetEvent {
    fn new(py: Python<'_>, event: &FleetEvent) -> PyResult<Self> {
        let value: serde_json::Value =
            serde_json::from_str(&event.event).unwrap_or(serde_json::Value::Null);
        Ok(PyFleetEvent {
            owner: event.owner.clone(),
            id: event.id,
            at: event.at,
            kind: event.kind.clone(),
            deposit_id: event.deposit_id.clone(),
            event: json_to_py(py, &value)?.unbind(),
            cursor: event.cursor.to_string(),
        })
    }
}

#[pymethods]
impl PyFleetEvent {
    fn __repr__(&self) -> String {
        format!(
            "FleetEvent(owner='{}', id={}, kind='{}', deposit_id={})",
            self.owner,
            self.id,
            self.kind,
            self.deposit_id.as_deref().map_or("None".to_owned(), |id| format!("'{id}'"))
        )
    }
}
