//! What `depositkit_fleet_join` reads: the template of every owner's client (the deposit
//! client's JSON, through the core's one reader) and the member's own options.

use std::time::Duration;

use ::depositkit_fleet::{FleetOptions, LeaseSettings};
use depositkit_core::deposit::DepositClientConfig;
use depositkit_core::describe::{json_kind, quote};
use serde_json::{Map, Value};

use super::invalid;
use crate::boundary::{FfiError, FfiResult};
use crate::status::depositkit_status;

/// The owner of the template when `template_json` names none: each owner's client replaces it
/// with its own address.
const TEMPLATE_OWNER: &str = "0x0000000000000000000000000000000000000001";

/// The member's options, in `member_json`.
const MEMBER_KEYS: [&str; 4] = ["name", "maxConnections", "leaseTtlMs", "renewEveryMs"];

fn configuration(message: String) -> FfiError {
    FfiError::new(depositkit_status::Configuration, message)
}

/// Reads and checks the template: `depositkit_deposit_client_new`'s JSON, `ownerAddress`
/// optional, `storePath` refused.
pub(super) fn template(json: &str) -> FfiResult<DepositClientConfig> {
    let mut value: Value = serde_json::from_str(json)
        .map_err(|e| configuration(format!("template_json is not valid JSON: {e}")))?;
    if let Value::Object(options) = &mut value
        && options.get("ownerAddress").is_none_or(Value::is_null)
    {
        options.insert("ownerAddress".to_owned(), Value::from(TEMPLATE_OWNER));
    }
    let config = DepositClientConfig::from_json(&value.to_string())?;
    if config.store_path.is_some() {
        return Err(configuration(
            "storePath cannot be set in a fleet's template: each owner's state is kept in the \
             fleet's database"
                .to_owned(),
        ));
    }
    config.validate()?;
    Ok(config)
}

/// A non-negative integer option of `member_json`.
fn integer(options: &Map<String, Value>, key: &str) -> FfiResult<Option<u64>> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or_else(|| {
            invalid(format!(
                "member_json.{key} must be a non-negative integer, got {}",
                if value.is_number() { value.to_string() } else { json_kind(value).to_owned() }
            ))
        }),
    }
}

/// Reads the member's options (NULL: the defaults) and checks them as Python's `DepositFleet`
/// does: `renewEveryMs` above 0 and below `leaseTtlMs`, `maxConnections` at least 1.
pub(super) fn member(json: Option<&str>) -> FfiResult<FleetOptions> {
    let mut member = FleetOptions::default();
    let Some(json) = json else { return Ok(member) };
    let value: Value = serde_json::from_str(json)
        .map_err(|e| invalid(format!("member_json is not valid JSON: {e}")))?;
    let Value::Object(options) = value else {
        return Err(invalid(format!("member_json must be an object, got {}", json_kind(&value))));
    };
    if let Some(unknown) = options.keys().find(|key| !MEMBER_KEYS.contains(&key.as_str())) {
        return Err(invalid(format!(
            "member_json has an unknown key {}; the keys are {}",
            quote(unknown),
            MEMBER_KEYS.join(", ")
        )));
    }
    match options.get("name") {
        None | Some(Value::Null) => {}
        Some(Value::String(name)) => member.name.clone_from(name),
        Some(other) => {
            return Err(invalid(format!(
                "member_json.name must be a string, got {}",
                json_kind(other)
            )));
        }
    }
    if let Some(connections) = integer(&options, "maxConnections")? {
        member.max_connections =
            usize::try_from(connections).ok().filter(|n| *n >= 1).ok_or_else(|| {
                invalid(format!("maxConnections must be at least 1, got {connections}"))
            })?;
    }
    let defaults = LeaseSettings::default();
    let ttl = integer(&options, "leaseTtlMs")?.map_or(defaults.ttl, Duration::from_millis);
    let renew_every =
        integer(&options, "renewEveryMs")?.map_or(defaults.renew_every, Duration::from_millis);
    if renew_every.is_zero() || renew_every >= ttl {
        return Err(invalid(format!(
            "renewEveryMs must be above 0 and below leaseTtlMs ({} ms), got {} ms",
            ttl.as_millis(),
            renew_every.as_millis()
        )));
    }
    member.lease = LeaseSettings { ttl, renew_every, ..defaults };
    Ok(member)
}
