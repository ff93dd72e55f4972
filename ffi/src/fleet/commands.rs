//! `depositkit_fleet_request`: a sweep, refund, recovery or destination change of any owner,
//! asked from any member and run by the owner's holder, over `depositkit_fleet::Fleet::request`.

use std::ffi::c_char;
use std::time::Duration;

use ::depositkit_fleet::{CommandOutcome, FleetCommand};
use depositkit_core::deposit::{DestinationConfig, RefundReason};
use depositkit_core::describe::{json_kind, quote};
use serde_json::{Map, Value};

use super::{checked_owner, depositkit_fleet, fleet_arg, fleet_error, invalid};
use crate::boundary::{self, FfiError, FfiResult};
use crate::deposit::json_out;
use crate::status::depositkit_status;
use crate::strings;

/// The keys `args_json` may have.
const ARG_KEYS: [&str; 3] = ["depositId", "reason", "destination"];

/// The command `kind` names, with its arguments from `args_json` (NULL: none).
pub(super) fn command(kind: &str, args_json: Option<&str>) -> FfiResult<FleetCommand> {
    let args = match args_json {
        None => Map::new(),
        Some(json) => match serde_json::from_str(json) {
            Ok(Value::Object(args)) => args,
            Ok(other) => {
                return Err(invalid(format!(
                    "args_json must be an object, got {}",
                    json_kind(&other)
                )));
            }
            Err(e) => return Err(invalid(format!("args_json is not valid JSON: {e}"))),
        },
    };
    if let Some(unknown) = args.keys().find(|key| !ARG_KEYS.contains(&key.as_str())) {
        return Err(invalid(format!(
            "args_json has an unknown key {}; the keys are {}",
            quote(unknown),
            ARG_KEYS.join(", ")
        )));
    }
    let given = |key: &str| args.get(key).filter(|value| !value.is_null());
    let text = |key: &str| -> FfiResult<Option<&str>> {
        match given(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => {
                Err(invalid(format!("args_json.{key} must be a string, got {}", json_kind(other))))
            }
        }
    };
    let unused = |key: &str| match given(key) {
        Some(_) => Err(invalid(format!("request {} takes no {key}", quote(kind)))),
        None => Ok(()),
    };
    let deposit_id = || -> FfiResult<String> {
        text("depositId")?
            .map(str::to_owned)
            .ok_or_else(|| invalid(format!("request {} needs depositId", quote(kind))))
    };
    match kind {
        "sweep" => {
            unused("reason")?;
            unused("destination")?;
            Ok(FleetCommand::Sweep { deposit_id: deposit_id()? })
        }
        "refund" => {
            unused("destination")?;
            let reason = match text("reason")? {
                Some(reason) => reason.parse::<RefundReason>()?,
                None => RefundReason::UserRequested,
            };
            Ok(FleetCommand::Refund { deposit_id: deposit_id()?, reason })
        }
        "recover" => {
            ARG_KEYS.iter().try_for_each(|key| unused(key))?;
            Ok(FleetCommand::Recover)
        }
        "set_destination" => {
            unused("depositId")?;
            unused("reason")?;
            let destination = given("destination").ok_or_else(|| {
                invalid("request \"set_destination\" needs destination".to_owned())
            })?;
            let destination = DestinationConfig::from_json_value(destination.clone())
                .map_err(|e| FfiError::new(depositkit_status::Configuration, e.message))?;
            Ok(FleetCommand::SetDestination(destination))
        }
        other => Err(invalid(format!(
            "command must be \"sweep\", \"refund\", \"recover\" or \"set_destination\", got {}",
            quote(other)
        ))),
    }
}

/// The status of a command the holder's client refused or failed: the class of its kind.
fn failed(command: &FleetCommand, message: String) -> FfiError {
    let status = match command {
        FleetCommand::Sweep { .. } => depositkit_status::Sweep,
        FleetCommand::Refund { .. } => depositkit_status::Refund,
        _ => depositkit_status::DepositSdk,
    };
    FfiError::new(status, message)
}

/// Asks the member holding `owner` (this one or another process) to run `command` on the
/// owner's deposit client, and waits up to `timeout_ms` for how it ended. The holder is woken at
/// once (PostgreSQL `NOTIFY`), else at its next tick.
///
/// `command` and `args_json` (NULL, or a JSON object with these keys):
/// - `"sweep"`: `{"depositId": "..."}` (required): as `depositkit_deposit_client_sweep`; the
///   result is the SweepResult object;
/// - `"refund"`: `{"depositId": "...", "reason": "user_requested"}` (`reason` optional, as for
///   `depositkit_deposit_client_refund`); the result is the RefundResult object;
/// - `"recover"`: no arguments: as `depositkit_deposit_client_recover_funds`; the result is the
///   array of RecoveryResult objects (`[]` when nothing was stuck);
/// - `"set_destination"`: `{"destination": {"chainId": 42161, "address": "0x...", "token":
///   "USDT"}}`: as `depositkit_deposit_client_set_destination`, and stored with the owner, so a
///   later holder keeps it; the result is the destination now in use.
///
/// On success `*out_result_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the holder's result, as JSON in the records' camelCase. On
/// failure it is not written.
///
/// A command whose holder died while running it is run again by the next holder; the client's
/// own rules keep its effect single (a deposit is swept or refunded once). After a timeout the
/// command stays queued: its holder may still run it.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_SWEEP` (a sweep), `DEPOSITKIT_STATUS_REFUND` (a refund) or
///   `DEPOSITKIT_STATUS_DEPOSIT_SDK` (the others) when the holder's client refused or failed
///   the command, with the client's message (e.g. an unknown deposit id);
/// - `DEPOSITKIT_STATUS_NOT_FOUND` when `owner` is not registered (the message names it);
/// - `DEPOSITKIT_STATUS_TIMEOUT` when no holder finished the command within `timeout_ms`;
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an unknown `command`, `args_json` that is not
///   such an object (a missing, unknown or unused key, a value of the wrong type, an unknown
///   `reason`), or an `owner` that is not an EVM address: the message names it;
/// - `DEPOSITKIT_STATUS_CONFIGURATION` for a `destination` the owner's client would refuse (as
///   `depositkit_deposit_client_set_destination` does: the message names the field);
/// - `DEPOSITKIT_STATUS_NETWORK` when the database cannot be reached or a query fails;
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` after `depositkit_fleet_leave`;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `fleet`, `owner`, `command` or `out_result_json` is
///   NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread up to `timeout_ms` (and while the database answers). Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `owner`, `command` and
/// `args_json` must be NULL or NUL-terminated strings; `out_result_json` must be NULL or point
/// to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_request(
    fleet: *const depositkit_fleet,
    owner: *const c_char,
    command: *const c_char,
    args_json: *const c_char,
    timeout_ms: u64,
    out_result_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let owner = unsafe { strings::str_arg(owner, "owner") }?;
        // SAFETY: the caller's contract above.
        let kind = unsafe { strings::str_arg(command, "command") }?;
        // SAFETY: the caller's contract above.
        let args_json = unsafe { strings::opt_str_arg(args_json, "args_json") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_result_json, "out_result_json") }?;
        let command = self::command(kind, args_json)?;
        let destination = match &command {
            FleetCommand::SetDestination(destination) => Some(destination),
            _ => None,
        };
        let owner = checked_owner(owner, destination)?;
        let timeout = Duration::from_millis(timeout_ms);
        let outcome =
            fleet.joined()?.request(&owner, command.clone(), timeout).map_err(fleet_error)?;
        match outcome {
            CommandOutcome::Done(result) => {
                out.write(json_out(serde_json::to_string(&result))?);
                Ok(())
            }
            CommandOutcome::Failed(message) => Err(failed(&command, message)),
        }
    })
}
