//! Events in lists: `next_events()` (the pull queue, many events per call) and
//! `subscribe_batches()` (a callback that receives lists). One event costs Python a call, a
//! GIL hand-over and a wake-up when it comes alone; in a list those are paid once per list
//! (docs/benchmarks.md, "Scale"). `next_event()`, iteration and `subscribe()` are unchanged.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use depositkit_core as core;
use depositkit_core::deposit::SubscriptionId;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::args::timeout_arg;
use super::{Next, PyDepositClient, keep_subscription};
use crate::conversions::type_name;
use crate::events::{CallbackSlot, event_to_py};

fn max_arg(max_events: usize, name: &str) -> PyResult<usize> {
    if max_events == 0 {
        return Err(PyValueError::new_err(format!("{name} must be at least 1, got 0")));
    }
    Ok(max_events)
}

/// `events` as a Python list of their record objects.
fn events_to_list<'py>(
    py: Python<'py>,
    events: &[core::DepositEvent],
) -> PyResult<Bound<'py, PyList>> {
    let objects =
        events.iter().map(|event| event_to_py(py, event)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, objects)
}

#[pymethods]
impl PyDepositClient {
    // The default longest list is 1024 (written as a literal: stubs show it).
    #[pyo3(signature = (max_events=1024, timeout=None))]
    fn next_events<'py>(
        &self,
        py: Python<'py>,
        max_events: usize,
        timeout: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let max_events = max_arg(max_events, "max_events")?;
        let timeout = timeout_arg(timeout)?;
        let first = match self.wait_event(py, timeout)? {
            Some(Next::Event(event)) => *event,
            Some(Next::Closed) | None => return Ok(PyList::empty(py)),
        };
        let client = self.client(py)?;
        // The rest in one take of the client's queue.
        let mut events = vec![first];
        events.extend(client.next_events(Duration::ZERO, max_events - 1));
        events_to_list(py, &events)
    }

    #[pyo3(signature = (callback, max_batch=1024))]
    fn subscribe_batches(
        &self,
        py: Python<'_>,
        callback: &Bound<'_, PyAny>,
        max_batch: usize,
    ) -> PyResult<SubscriptionId> {
        if !callback.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "the callback must be callable, not {}",
                type_name(callback)
            )));
        }
        let max_batch = max_arg(max_batch, "max_batch")?;
        let client = self.client(py)?;
        let slot = CallbackSlot::new(callback.clone().unbind());
        // The core's delivery thread only queues the event here; this thread gathers what has
        // queued meanwhile and makes one call per list. It ends when the core drops the sender
        // (unsubscribed or closed), after the events already queued.
        let (sender, receiver) = mpsc::channel::<core::DepositEvent>();
        let held = Arc::clone(&slot);
        std::thread::Builder::new()
            .name("depositkit-py-batches".into())
            .spawn(move || {
                while let Ok(first) = receiver.recv() {
                    let mut batch = vec![first];
                    while batch.len() < max_batch {
                        match receiver.try_recv() {
                            Ok(event) => batch.push(event),
                            Err(_) => break,
                        }
                    }
                    held.call(|py| Ok(events_to_list(py, &batch)?.into_any().unbind()));
                }
            })
            .map_err(PyErr::from)?;
        let callbacks = self.callbacks();
        let subscribed = client.subscribe(Box::new(move |event: &core::DepositEvent| {
            let _ = sender.send(event.clone());
        }));
        keep_subscription(py, callbacks, slot, subscribed)
    }
}
