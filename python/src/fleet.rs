//! `depositkit.DepositFleet`: fleet mode (docs/fleet.md) for Python, over
//! `depositkit_fleet::DepositFleet`.
//!
//! - **Joining**: `DepositFleet(database_url, *, destination, **options)` joins the fleet on
//!   PostgreSQL. The keywords `name`, `max_connections`, `lease_ttl` and `renew_every` are the
//!   member's; every other keyword is a `DepositClient` option, read by the same reader
//!   ([`build_config`]) into the template each owner's client starts from.
//! - **Owners and commands** (`add_owner`, `remove_owner`, `request`) and the **event log**
//!   (`events`) go to the database from a worker thread while the caller waits detached
//!   ([`wait_for_raw`]).
//! - **Errors**: each `FleetError` becomes the exception class of the nearest kind
//!   ([`kind_of`]); the database URL's password never appears: reprs show the URL with it
//!   replaced by `***`, and every message is scrubbed of it ([`Secrets`]).
//! - **Lifecycle**: `leave()` (also `with`) hands the owners to the other members at once;
//!   dropping the object without leaving stops its clients, and its owners pass on once its
//!   lease runs out.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use depositkit_core::deposit::RefundReason;
use depositkit_core::{Error, ErrorKind};
use depositkit_fleet::{
    CommandOutcome, DepositFleet, EventCursor, Fleet, FleetCommand, FleetError, FleetEvent,
    FleetOptions, LeaseSettings, OwnerOptions,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::blocking::wait_for_raw;
use crate::conversions::{given, json_to_py, str_arg};
use crate::errors::to_py_err;
use crate::fork::Origin;
use crate::options::{build_config, destination_arg};

mod password;

use password::{Secrets, redacted};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDepositFleet>()?;
    m.add_class::<PyFleetEvent>()
}

/// The class name in the messages of [`crate::fork`].
const CLASS: &str = "DepositFleet";
/// The owner of the client template: each owner's client replaces it with its own address.
const TEMPLATE_OWNER: &str = "0x0000000000000000000000000000000000000001";

// --- errors -----------------------------------------------------------------------------------

/// The exception class of each fleet failure.
fn kind_of(err: &FleetError) -> ErrorKind {
    match err {
        FleetError::DatabaseUrl { .. } | FleetError::SchemaVersion { .. } => {
            ErrorKind::Configuration
        }
        FleetError::Unreachable { .. } | FleetError::Postgres(_) => ErrorKind::Network,
        FleetError::DuplicateOwner(_)
        | FleetError::InvalidOwner { .. }
        | FleetError::InvalidCursor(_) => ErrorKind::InvalidArgument,
        FleetError::UnknownOwner(_) => ErrorKind::NotFound,
        FleetError::CommandTimeout { .. } => ErrorKind::Timeout,
        _ => ErrorKind::DepositSdk,
    }
}

fn fleet_err(py: Python<'_>, secrets: &Secrets, err: &FleetError) -> PyErr {
    to_py_err(py, Error::new(kind_of(err), secrets.scrub(&err.to_string())))
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

#[pyclass(module = "depositkit", name = "DepositFleet", frozen)]
pub(crate) struct PyDepositFleet {
    /// The running member; `None` once it left.
    member: Mutex<Option<DepositFleet>>,
    /// The fleet's database (owners, commands, the log), shared with the member.
    fleet: Fleet,
    node_id: String,
    /// The database URL with its password replaced by `***`.
    url: String,
    secrets: Secrets,
    origin: Origin,
}

impl PyDepositFleet {
    fn member(&self) -> std::sync::MutexGuard<'_, Option<DepositFleet>> {
        self.member.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The fleet's database, after checking that this process created the object and that the
    /// member has not left.
    fn fleet(&self, py: Python<'_>) -> PyResult<Fleet> {
        self.origin.check(py, CLASS)?;
        if self.member().is_none() {
            let message = format!("this DepositFleet (member {}) left the fleet", self.node_id);
            return Err(to_py_err(py, Error::new(ErrorKind::DepositSdk, message)));
        }
        Ok(self.fleet.clone())
    }

    /// Runs `call` on a worker thread, waiting detached; its failure as an exception.
    fn run<T: Send + 'static>(
        &self,
        py: Python<'_>,
        call: impl FnOnce() -> depositkit_fleet::Result<T> + Send + 'static,
    ) -> PyResult<T> {
        wait_for_raw(py, call)?.map_err(|err| fleet_err(py, &self.secrets, &err))
    }
}

impl Drop for PyDepositFleet {
    fn drop(&mut self) {
        let mut member = self.member().take();
        if !self.origin.is_here() {
            // Inherited through fork: its threads are in the parent. Leaked on purpose.
            std::mem::forget(member);
            return;
        }
        // Stopping the clients waits for their threads: detached when attached.
        let _ = Python::try_attach(|py| {
            let attached = member.take();
            py.detach(move || attached.map(DepositFleet::halt));
        });
        if let Some(member) = member {
            member.halt();
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
        let url = str_arg(database_url, "database_url")?.into_owned();
        let secrets = Secrets::of(&url);
        let template_owner = PyString::new(py, TEMPLATE_OWNER);
        let template = build_config(template_owner.as_any(), destination, options)
            .map_err(|err| said_of_fleet(py, err))?;
        let member = MemberArgs { name, max_connections, lease_ttl, renew_every }.options(py)?;
        let joined = wait_for_raw(py, move || DepositFleet::join(&url, template, member))?;
        let member = joined.map_err(|err| fleet_err(py, &secrets, &err))?;
        let fleet = member.fleet().clone();
        let node_id = member.node_id();
        let url = redacted(&str_arg(database_url, "database_url")?);
        Ok(PyDepositFleet {
            member: Mutex::new(Some(member)),
            fleet,
            node_id,
            url,
            secrets,
            origin: Origin::here(),
        })
    }

    /// This member's node id.
    #[getter]
    fn node_id(&self) -> &str {
        &self.node_id
    }

    /// The database URL, its password replaced by `***`.
    #[getter]
    fn database_url(&self) -> &str {
        &self.url
    }

    /// The owners whose clients run in this process now, sorted.
    #[getter]
    fn running_owners(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.origin.check(py, CLASS)?;
        Ok(self.member().as_ref().map(DepositFleet::running_owners).unwrap_or_default())
    }

    /// Every registered owner, sorted.
    fn owners(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let fleet = self.fleet(py)?;
        self.run(py, move || fleet.owners())
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
        let owner = str_arg(owner, "owner")?.into_owned();
        let kind = str_arg(command, "command")?.into_owned();
        let command = command_of(py, &kind, deposit_id, reason, destination)?;
        let timeout = seconds(py, "timeout", timeout)?;
        let fleet = self.fleet(py)?;
        match self.run(py, move || fleet.request(&owner, command, timeout))? {
            CommandOutcome::Done(value) => json_to_py(py, &value),
            CommandOutcome::Failed(message) => {
                let kind = match kind.as_str() {
                    "sweep" => ErrorKind::Sweep,
                    "refund" => ErrorKind::Refund,
                    _ => ErrorKind::DepositSdk,
                };
                Err(to_py_err(py, Error::new(kind, message)))
            }
        }
    }

    #[pyo3(signature = (cursor=None, max_events=500, timeout=5.0))]
    fn events(
        &self,
        py: Python<'_>,
        cursor: Option<&Bound<'_, PyAny>>,
        max_events: usize,
        timeout: f64,
    ) -> PyResult<(Vec<PyFleetEvent>, String)> {
        let cursor = match given(cursor) {
            Some(text) => str_arg(text, "cursor")?
                .parse::<EventCursor>()
                .map_err(|err| fleet_err(py, &self.secrets, &err))?,
            None => EventCursor::START,
        };
        if max_events == 0 {
            return Err(invalid(py, "max_events must be at least 1, got 0".to_owned()));
        }
        let wait = seconds(py, "timeout", timeout)?;
        let mut reader = self.fleet(py)?.event_reader(cursor);
        let (batch, next) = self.run(py, move || {
            let batch = reader.read(max_events, wait)?;
            Ok((batch, reader.cursor().to_string()))
        })?;
        let events = batch.iter().map(|event| PyFleetEvent::new(py, event));
        Ok((events.collect::<PyResult<_>>()?, next))
    }

    /// Leaves the fleet gracefully: stops this member's clients and hands its owners to the
    /// others at once. A second call does nothing.
    fn leave(&self, py: Python<'_>) -> PyResult<()> {
        self.origin.check(py, CLASS)?;
        let Some(member) = self.member().take() else { return Ok(()) };
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
        format!("DepositFleet(node_id='{}', database_url='{}', {state})", self.node_id, self.url)
    }
}

/// The command `kind` names, with its arguments.
fn command_of(
    py: Python<'_>,
    kind: &str,
    deposit_id: Option<&Bound<'_, PyAny>>,
    reason: Option<&Bound<'_, PyAny>>,
    destination: Option<&Bound<'_, PyAny>>,
) -> PyResult<FleetCommand> {
    let deposit = || -> PyResult<String> {
        match given(deposit_id) {
            Some(id) => Ok(str_arg(id, "deposit_id")?.into_owned()),
            None => Err(invalid(py, format!("request '{kind}' needs deposit_id"))),
        }
    };
    let unused = |what: &str, value: Option<&Bound<'_, PyAny>>| -> PyResult<()> {
        match given(value) {
            Some(_) => Err(invalid(py, format!("request '{kind}' takes no {what}"))),
            None => Ok(()),
        }
    };
    match kind {
        "sweep" => {
            unused("reason", reason)?;
            unused("destination", destination)?;
            Ok(FleetCommand::Sweep { deposit_id: deposit()? })
        }
        "refund" => {
            unused("destination", destination)?;
            let reason = match given(reason) {
                Some(reason) => str_arg(reason, "reason")?
                    .parse::<RefundReason>()
                    .map_err(|err| to_py_err(py, err))?,
                None => RefundReason::UserRequested,
            };
            Ok(FleetCommand::Refund { deposit_id: deposit()?, reason })
        }
        "recover" => {
            unused("deposit_id", deposit_id)?;
            unused("reason", reason)?;
            unused("destination", destination)?;
            Ok(FleetCommand::Recover)
        }
        "set_destination" => {
            unused("deposit_id", deposit_id)?;
            unused("reason", reason)?;
            match given(destination) {
                Some(destination) => {
                    Ok(FleetCommand::SetDestination(destination_arg(destination)?))
                }
                None => Err(invalid(py, "request 'set_destination' needs destination".to_owned())),
            }
        }
        other => Err(invalid(
            py,
            format!(
                "command must be 'sweep', 'refund', 'recover' or 'set_destination', got {}",
                depositkit_core::describe::quote(other)
            ),
        )),
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
