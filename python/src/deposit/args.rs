//! The arguments of `DepositClient`'s methods that are not options, and the event log's
//! pairs.

use super::*;

/// Recorded events as the `(event_id, event)` pairs `events_since` and `deposit_history` return.
pub(super) fn recorded_to_py(
    py: Python<'_>,
    events: &[RecordedEvent],
) -> PyResult<Vec<(u64, Py<PyAny>)>> {
    events.iter().map(|r| Ok((r.id, event_to_py(py, &r.event)?))).collect()
}

/// A count or position argument: `None`, or a non-negative `int` (not `bool`) that fits `T`.
pub(super) fn count_arg<'py, T>(obj: Option<&Bound<'py, PyAny>>, name: &str) -> PyResult<Option<T>>
where
    T: for<'a> FromPyObject<'a, 'py>,
{
    let Some(obj) = given(obj) else { return Ok(None) };
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!("{name} must be an int, not {}", type_name(obj))));
    }
    obj.extract::<T>().map(Some).map_err(|_| {
        to_py_err(
            obj.py(),
            Error::invalid_argument(format!(
                "{name} must be a non-negative integer, got {}",
                shown(obj)
            )),
        )
    })
}

/// A page number or page size of the history calls: `None`, or an `int` (not `bool`). Values
/// beyond `u32` get the core's message; the core checks the rest.
pub(super) fn page_arg(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<u32>> {
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
pub(super) fn reason_arg(obj: &Bound<'_, PyAny>) -> PyResult<RefundReason> {
    let text = str_arg(obj, "reason")?;
    text.parse::<RefundReason>().map_err(|e| to_py_err(obj.py(), e))
}

/// A timeout in seconds (`int` or `float`, at least 0); `None` waits without a limit.
pub(super) fn timeout_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Duration>> {
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
