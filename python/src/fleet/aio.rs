//! The awaitable forms of `DepositFleet`'s calls (`_…_async`), which
//! `depositkit.AsyncDepositFleet` (`depositkit/_fleet_aio.py`) awaits.
//!
//! A member joined through `_join_async` also holds an [`AsyncFleet`] on its own pool
//! ([`AsyncFleet::of`]): its owners, commands and log reads are tasks of the fleet's runtime, awaited through [`crate::aio::spawn_settled`]
//! (the runtime completes the `asyncio.Future` on the caller's loop; no thread waits).
//! Joining and leaving start and stop the member's deposit clients, which block: they run on
//! the depositkit runtime's blocking pool, once per member. Cancelling an await drops the call:
//! a command already queued stays queued (its holder may still run it), a read is abandoned
//! (the caller's cursor did not move, so nothing is lost).

use std::future::Future;

use depositkit_core::deposit::DepositAddresses;
use depositkit_fleet::AsyncFleet;

use super::*;
use crate::aio::{self, Settle};

/// How a call's value becomes Python data (on the loop's thread).
type Convert<T> = fn(Python<'_>, T) -> PyResult<Py<PyAny>>;

/// Awaits `future`, a fleet call: its value through `convert`, its failure as the exception of
/// its kind, scrubbed of the URL's password.
fn awaited<'py, T: Send + 'static>(
    py: Python<'py>,
    secrets: Secrets,
    future: impl Future<Output = depositkit_fleet::Result<T>> + Send + 'static,
    convert: impl FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
) -> PyResult<Bound<'py, PyAny>> {
    aio::spawn_settled(py, future, move |outcome| -> Settle {
        Box::new(move |py, future| {
            if aio::is_done(future)? {
                return Ok(());
            }
            match outcome.map_err(|err| fleet_err(py, &secrets, &err)).and_then(|v| convert(py, v))
            {
                Ok(value) => aio::set_result(future, value.bind(py)),
                Err(err) => aio::set_exception(future, err),
            }
        })
    })
}

fn none(py: Python<'_>, (): ()) -> PyResult<Py<PyAny>> {
    Ok(py.None())
}

fn owner_list(py: Python<'_>, owners: Vec<String>) -> PyResult<Py<PyAny>> {
    Ok(owners.into_pyobject(py)?.into_any().unbind())
}

fn addresses_to_py(py: Python<'_>, addresses: Option<DepositAddresses>) -> PyResult<Py<PyAny>> {
    match addresses {
        Some(addresses) => Ok(Py::new(py, PyDepositAddresses::from(addresses))?.into_any()),
        None => Ok(py.None()),
    }
}

fn owner_name(py: Python<'_>, owner: String) -> PyResult<Py<PyAny>> {
    Ok(owner.into_pyobject(py)?.into_any().unbind())
}

impl PyDepositFleet {
    /// The async face's database, after the checks of [`Member::fleet`].
    fn aio(&self, py: Python<'_>) -> PyResult<AsyncFleet> {
        self.fleet(py)?;
        match self.shared.aio().as_ref() {
            Some(aio) => Ok(aio.clone()),
            None => Err(to_py_err(
                py,
                Error::new(
                    ErrorKind::DepositSdk,
                    "this DepositFleet was not joined by AsyncDepositFleet.join: use its \
                     blocking methods",
                ),
            )),
        }
    }

    fn awaited<'py, T: Send + 'static>(
        &self,
        py: Python<'py>,
        future: impl Future<Output = depositkit_fleet::Result<T>> + Send + 'static,
        convert: Convert<T>,
    ) -> PyResult<Bound<'py, PyAny>> {
        awaited(py, self.shared.secrets.clone(), future, convert)
    }
}

#[pymethods]
impl PyDepositFleet {
    #[staticmethod]
    #[pyo3(signature = (
        database_url, *, destination, name=None, max_connections=8, lease_ttl=10.0,
        renew_every=3.0, **options
    ))]
    #[allow(clippy::too_many_arguments)]
    fn _join_async<'py>(
        py: Python<'py>,
        database_url: &Bound<'py, PyAny>,
        destination: &Bound<'py, PyAny>,
        name: Option<String>,
        max_connections: usize,
        lease_ttl: f64,
        renew_every: f64,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let member_args = MemberArgs { name, max_connections, lease_ttl, renew_every };
        let url = str_arg(database_url, "database_url")?.into_owned();
        let secrets = Secrets::of(&url);
        let (template, member) = join_args(py, destination, options, member_args)?;
        let runtime = depositkit_core::runtime::Runtime::shared().map_err(|e| to_py_err(py, e))?;
        let joining = url.clone();
        let joined = runtime.spawn_blocking(move || {
            let member = DepositFleet::join(&joining, template, member)?;
            // The awaited calls share the member's pool.
            let aio = AsyncFleet::of(member.fleet());
            Ok((member, aio))
        });
        let joined = async move {
            joined.await.unwrap_or_else(|_| {
                Err(FleetError::Postgres("joining the fleet stopped (it panicked)".to_owned()))
            })
        };
        let kept = secrets.clone();
        awaited(py, secrets, joined, move |py, (member, aio)| {
            Ok(Py::new(py, PyDepositFleet::wrap(member, Some(aio), kept, &url))?.into_any())
        })
    }

    #[pyo3(signature = (owner, *, destination=None))]
    fn _add_owner_async<'py>(
        &self,
        py: Python<'py>,
        owner: &Bound<'py, PyAny>,
        destination: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let owner = str_arg(owner, "owner")?;
        let destination = given(destination).map(destination_arg).transpose()?;
        let added = self.aio(py)?.add_owner(&owner, OwnerOptions { destination });
        self.awaited(py, added, owner_name)
    }

    fn _remove_owner_async<'py>(
        &self,
        py: Python<'py>,
        owner: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let removed = self.aio(py)?.remove_owner(&str_arg(owner, "owner")?);
        self.awaited(py, removed, none)
    }

    fn _deposit_addresses_async<'py>(
        &self,
        py: Python<'py>,
        owner: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let addresses = self.aio(py)?.deposit_addresses(&str_arg(owner, "owner")?);
        self.awaited(py, addresses, addresses_to_py)
    }

    fn _owners_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let owners = self.aio(py)?.owners();
        self.awaited(py, owners, owner_list)
    }

    #[pyo3(signature = (owner, command, *, deposit_id=None, reason=None, destination=None, timeout=30.0))]
    #[allow(clippy::too_many_arguments)]
    fn _request_async<'py>(
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
        let asked = self.aio(py)?.request(&owner, command, timeout);
        awaited(py, self.shared.secrets.clone(), asked, move |py, outcome| {
            outcome_to_py(py, &kind, outcome)
        })
    }

    #[pyo3(signature = (cursor=None, max_events=500, timeout=5.0))]
    fn _events_async<'py>(
        &self,
        py: Python<'py>,
        cursor: Option<&Bound<'py, PyAny>>,
        max_events: usize,
        timeout: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (cursor, wait) = self.read_args(py, cursor, max_events, timeout)?;
        let start = cursor.to_string();
        let read = self.aio(py)?.read_events(cursor, max_events, wait);
        awaited(py, self.shared.secrets.clone(), read, move |py, batch| {
            let next = batch.last().map_or(start, |last| last.cursor.to_string());
            let events = batch
                .iter()
                .map(|event| PyFleetEvent::new(py, event))
                .collect::<PyResult<Vec<_>>>()?;
            Ok((events, next).into_pyobject(py)?.into_any().unbind())
        })
    }

    fn _leave_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.shared.origin.check(py, CLASS)?;
        let runtime = depositkit_core::runtime::Runtime::shared().map_err(|e| to_py_err(py, e))?;
        let shared = Arc::clone(&self.shared);
        let left = runtime.spawn_blocking(move || match shared.take_for_leaving() {
            Some(member) => member.leave(),
            None => Ok(()),
        });
        let left = async move {
            left.await.unwrap_or_else(|_| {
                Err(FleetError::Postgres("leaving the fleet stopped (it panicked)".to_owned()))
            })
        };
        self.awaited(py, left, none)
    }
}
