//! `DepositClient`'s events: the event log, notifications, callbacks and the pull queue.

use super::*;

#[pymethods]
impl PyDepositClient {
    #[pyo3(signature = (cursor=None, limit=None))]
    fn events_since(
        &self,
        py: Python<'_>,
        cursor: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<(u64, Py<PyAny>)>> {
        let cursor: u64 = count_arg(cursor, "cursor")?.unwrap_or(0);
        let limit: usize = count_arg(limit, "limit")?.unwrap_or(usize::MAX);
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
}
