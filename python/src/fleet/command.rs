//! `DepositFleet.request()`'s commands: the arguments read into a [`FleetCommand`], and its
//! outcome as Python data or the exception of its kind.

use super::*;

/// A command's outcome as Python data, or the exception of its kind (`SweepError` for a sweep
/// the holder's client refused, …).
pub(super) fn outcome_to_py(
    py: Python<'_>,
    kind: &str,
    outcome: CommandOutcome,
) -> PyResult<Py<PyAny>> {
    match outcome {
        CommandOutcome::Done(value) => Ok(json_to_py(py, &value)?.unbind()),
        CommandOutcome::Failed(message) => {
            let kind = match kind {
                "sweep" => ErrorKind::Sweep,
                "refund" => ErrorKind::Refund,
                _ => ErrorKind::DepositSdk,
            };
            Err(to_py_err(py, Error::new(kind, message)))
        }
    }
}

/// `request()`'s arguments, checked.
pub(super) struct Request {
    pub(super) owner: String,
    pub(super) kind: String,
    pub(super) command: FleetCommand,
    pub(super) timeout: Duration,
}

impl Request {
    /// From the owner, the command's name, its `[deposit_id, reason, destination]` and the
    /// timeout in seconds.
    pub(super) fn of(
        py: Python<'_>,
        owner: &Bound<'_, PyAny>,
        command: &Bound<'_, PyAny>,
        [deposit_id, reason, destination]: [Option<&Bound<'_, PyAny>>; 3],
        timeout: f64,
    ) -> PyResult<Request> {
        let owner = str_arg(owner, "owner")?.into_owned();
        let kind = str_arg(command, "command")?.into_owned();
        let command = command_of(py, &kind, deposit_id, reason, destination)?;
        Ok(Request { owner, kind, command, timeout: seconds(py, "timeout", timeout)? })
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
