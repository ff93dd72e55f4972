//! How the deposit client's events reach Python: [`event_to_py`] (the record class of each
//! event; the classes themselves are declared in [`crate::records`]), the client's configuration
//! dicts, and [`CallbackSlot`], how a Python callable is held for the library's event thread,
//! over [`HeldCallable`], which the wallet providers use too.

use std::sync::{Arc, Mutex, PoisonError};

use depositkit_core::deposit::{DepositEvent, NotificationsConfig, RefundConfig};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::{PyTraverseError, PyVisit, intern};

use crate::records::destination_dict;
use crate::records::events::{
    ErrorReport, PyErrorEvent, PyRecoveryEvent, PyRefundEvent, PyStatusChangedEvent,
};
use crate::records::onramp::{OnrampMessage, PyOnrampCompleteEvent, PyOnrampEvent};
// The record classes `DepositClient` returns, where `deposit.rs` takes them from.
pub(crate) use crate::records::deposits::{PyDepositAddresses, PyDetectedDeposit, PySweepResult};
pub(crate) use crate::records::events::PyLifecycleEvent;
pub(crate) use crate::records::history::{
    PyTokenTransactionsResponse, PyTransactionsResponse, PyUaTransaction,
};
pub(crate) use crate::records::py_repr;
pub(crate) use crate::records::refunds::{
    PyNotification, PyRecoveryResult, PyRefundEligibility, PyRefundResult, notifications_to_py,
};

/// `event` as the Python object of its class.
pub(crate) fn event_to_py(py: Python<'_>, event: &DepositEvent) -> PyResult<Py<PyAny>> {
    Ok(match event {
        DepositEvent::Lifecycle(e) => Py::new(py, PyLifecycleEvent::from(e.clone()))?.into_any(),
        DepositEvent::StatusChanged(status) => {
            Py::new(py, PyStatusChangedEvent::from(*status))?.into_any()
        }
        DepositEvent::Error { kind, message } => {
            let report = ErrorReport { kind: *kind, message: message.clone() };
            Py::new(py, PyErrorEvent::from(report))?.into_any()
        }
        DepositEvent::Refund(result) => {
            Py::new(py, PyRefundEvent::from(result.clone()))?.into_any()
        }
        DepositEvent::Recovery(result) => {
            Py::new(py, PyRecoveryEvent::from(result.clone()))?.into_any()
        }
        DepositEvent::Onramp { name, payload } => {
            let message = OnrampMessage { name: *name, payload: payload.clone() };
            Py::new(py, PyOnrampEvent::from(message))?.into_any()
        }
        DepositEvent::OnrampComplete(order) => {
            Py::new(py, PyOnrampCompleteEvent::from(order.clone()))?.into_any()
        }
    })
}

/// `get_destination()`'s dict: `{"address", "chain_id", "token"}`.
pub(crate) fn resolved_destination_dict<'py>(
    py: Python<'py>,
    destination: &depositkit_core::Destination,
) -> PyResult<Bound<'py, PyDict>> {
    destination_dict(
        py,
        &destination.address,
        destination.chain_id,
        Some(destination.token.symbol()),
    )
}

/// `DepositClient.refund_config`: `{"enabled", "delay_ms", "max_attempts", "refund_to_sender"}`.
pub(crate) fn refund_config_dict<'py>(
    py: Python<'py>,
    config: &RefundConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "enabled"), config.enabled)?;
    dict.set_item(intern!(py, "delay_ms"), config.delay_ms)?;
    dict.set_item(intern!(py, "max_attempts"), config.max_attempts)?;
    dict.set_item(intern!(py, "refund_to_sender"), config.refund_to_sender)?;
    Ok(dict)
}

/// `DepositClient.notifications_config`: `{"position", "theme", "duration_ms", "max",
/// "class_name"}`.
pub(crate) fn notifications_config_dict<'py>(
    py: Python<'py>,
    config: &NotificationsConfig,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "position"), config.position.as_str())?;
    dict.set_item(intern!(py, "theme"), config.theme.as_str())?;
    dict.set_item(intern!(py, "duration_ms"), config.duration_ms)?;
    dict.set_item(intern!(py, "max"), config.max)?;
    dict.set_item(intern!(py, "class_name"), config.class_name.as_deref())?;
    Ok(dict)
}

// --- callbacks --------------------------------------------------------------------------------

/// A Python callable that Rust holds on behalf of a client (an event callback, a wallet
/// provider), visible to Python's garbage collector: the client's `__traverse__` visits it
/// ([`HeldCallable::traverse`]) and `__clear__` (or closing) drops it ([`HeldCallable::clear`]),
/// which breaks a cycle callable → client.
pub(crate) struct HeldCallable(Mutex<Option<Py<PyAny>>>);

impl HeldCallable {
    pub(crate) fn new(callable: Py<PyAny>) -> Self {
        HeldCallable(Mutex::new(Some(callable)))
    }

    /// Visits the callable. One locked right now (by a call that holds the GIL, hence never
    /// during a traversal on another thread) is skipped, which only makes the collector keep
    /// the objects longer.
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(callable) = self.0.try_lock() {
            visit.call(callable.as_ref())?;
        }
        Ok(())
    }

    /// Drops the callable (returned, to be released attached); `get` then finds nothing.
    pub(crate) fn clear(&self) -> Option<Py<PyAny>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// A new reference to the callable, `None` once cleared. The lock is not held past this
    /// call: the callable may release the GIL, and a garbage collection on another thread may
    /// then need the lock (`__clear__`).
    pub(crate) fn get(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).as_ref().map(|c| c.clone_ref(py))
    }
}

/// A Python callable held for the event thread. The closure the core calls owns an `Arc` of the
/// slot, not the callable itself: the callable is reachable from Python's garbage collector
/// through the client's `__traverse__` ([`CallbackSlot::traverse`]), and `__clear__` (or
/// unsubscribing, or closing) empties the slot, which breaks a cycle callable → client.
pub(crate) struct CallbackSlot {
    callable: HeldCallable,
}

impl CallbackSlot {
    pub(crate) fn new(callable: Py<PyAny>) -> Arc<Self> {
        Arc::new(CallbackSlot { callable: HeldCallable::new(callable) })
    }

    /// Visits the callable (see [`HeldCallable::traverse`]).
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.callable.traverse(visit)
    }

    /// Drops the callable; later events are no longer delivered to it.
    pub(crate) fn clear(&self) -> Option<Py<PyAny>> {
        self.callable.clear()
    }

    /// Calls the callable with the event `make` builds, on the calling (event) thread, attached
    /// to the interpreter for the call only. An exception goes to `sys.unraisablehook` with the
    /// callable as its object; nothing happens once the slot is empty or while the interpreter
    /// is shutting down.
    pub(crate) fn call(&self, make: impl FnOnce(Python<'_>) -> PyResult<Py<PyAny>>) {
        Python::try_attach(|py| {
            let Some(callable) = self.callable.get(py) else { return };
            if let Err(err) = make(py).and_then(|event| callable.call1(py, (event,))) {
                err.write_unraisable(py, Some(callable.bind(py)));
            }
        });
    }
}
