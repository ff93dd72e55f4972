//! Importing users from JSON: an array of User records (spec §2, camelCase; `uuid`,
//! `createdAt`, `updatedAt` and `wallets` optional) that may also carry
//! `identities: [{provider, uid}]` and `sessions: [{token, expiresAt}]`. This module reads the
//! records (pure); each store writes them all in one transaction, so one bad record rejects the
//! whole file, and the error names its index and field.

use std::path::Path;

use serde_json::{Map, Value};

use depositkit_core::describe::json_kind;

use crate::error::{Error, Result};
use crate::records::{ChainFamily, NewUser, Profile};
use crate::time;

/// Top-level keys a record may have besides the profile fields.
const EXTRA_KEYS: [&str; 6] =
    ["uuid", "createdAt", "updatedAt", "wallets", "identities", "sessions"];

/// One record of an import file, read but not yet checked against the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedUser {
    pub user: NewUser,
    /// Milliseconds since the epoch (the import's time when absent).
    pub created_at: i64,
    /// Milliseconds since the epoch (`created_at` when absent).
    pub updated_at: i64,
    pub wallets: Vec<(ChainFamily, String)>,
    /// (provider, uid).
    pub identities: Vec<(String, String)>,
    /// (token, expires at in milliseconds since the epoch).
    pub sessions: Vec<(String, i64)>,
}

/// The JSON of the file at `path`.
///
/// # Errors
/// The file cannot be read or is not JSON.
pub fn read_file(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    serde_json::from_str(&text).map_err(|source| Error::Json {
        context: format!("{} is not valid JSON", path.display()),
        source,
    })
}

/// Reads `records` (a JSON array of user records).
///
/// # Errors
/// Not an array; [`Error::ImportRecord`] naming the first bad record and its field.
pub fn parse_records(records: &Value, now: i64) -> Result<Vec<ImportedUser>> {
    let Value::Array(records) = records else {
        return Err(Error::invalid(
            "import file",
            format!("expected an array of users, found {}", json_kind(records)),
        ));
    };
    records
        .iter()
        .enumerate()
        .map(|(index, record)| {
            parse_record(record, now)
                .map_err(|e| Error::ImportRecord { index, source: Box::new(e) })
        })
        .collect()
}

/// `error` as the failure of record `index`.
pub fn in_record(index: usize) -> impl FnOnce(Error) -> Error {
    move |e| Error::ImportRecord { index, source: Box::new(e) }
}

fn parse_record(record: &Value, now: i64) -> Result<ImportedUser> {
    let Value::Object(map) = record else {
        return Err(Error::invalid(
            "record",
            format!("expected an object, found {}", json_kind(record)),
        ));
    };
    if let Some(key) = map
        .keys()
        .find(|k| !Profile::FIELDS.contains(&k.as_str()) && !EXTRA_KEYS.contains(&k.as_str()))
    {
        return Err(Error::invalid(
            key.as_str(),
            "unknown field (expected the User record fields, identities or sessions)",
        ));
    }
    let mut values: [Option<String>; 24] = Default::default();
    for (value, field) in values.iter_mut().zip(Profile::FIELDS) {
        *value = optional_string(map, field, "")?;
    }
    let profile = Profile::from_values(values);
    if map.get("email").is_none_or(Value::is_null) {
        return Err(Error::invalid("email", "is required"));
    }
    let created_at = match optional_string(map, "createdAt", "")? {
        Some(text) => time::parse_ms("createdAt", &text)?,
        None => now,
    };
    let updated_at = match optional_string(map, "updatedAt", "")? {
        Some(text) => time::parse_ms("updatedAt", &text)?,
        None => created_at,
    };
    let user = NewUser { uuid: optional_string(map, "uuid", "")?, profile };

    let mut wallets = Vec::new();
    for (i, wallet) in objects(map, "wallets", &["chain", "publicAddress"])?.into_iter().enumerate()
    {
        let prefix = format!("wallets[{i}].");
        let chain = required_string(wallet, "chain", &prefix)?;
        let chain = ChainFamily::parse_field(&format!("{prefix}chain"), &chain)?;
        let address = required_string(wallet, "publicAddress", &prefix)?;
        chain.validate_address(&format!("{prefix}publicAddress"), &address)?;
        wallets.push((chain, address));
    }
    let mut identities = Vec::new();
    for (i, identity) in objects(map, "identities", &["provider", "uid"])?.into_iter().enumerate() {
        let prefix = format!("identities[{i}].");
        let provider = required_string(identity, "provider", &prefix)?;
        let uid = required_string(identity, "uid", &prefix)?;
        crate::records::check_identity(&provider, &uid, &prefix)?;
        identities.push((provider, uid));
    }
    let mut sessions = Vec::new();
    for (i, session) in objects(map, "sessions", &["token", "expiresAt"])?.into_iter().enumerate() {
        let prefix = format!("sessions[{i}].");
        let token = required_string(session, "token", &prefix)?;
        crate::records::check_session_token(&token, &prefix)?;
        let expires_at = required_string(session, "expiresAt", &prefix)?;
        let expires_at = time::parse_ms(&format!("{prefix}expiresAt"), &expires_at)?;
        sessions.push((token, expires_at));
    }
    Ok(ImportedUser { user, created_at, updated_at, wallets, identities, sessions })
}

/// The objects in the optional array `key`, each checked to have only `allowed` keys.
fn objects<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    allowed: &[&str],
) -> Result<Vec<&'a Map<String, Value>>> {
    let items = match map.get(key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(Error::invalid(
                key,
                format!("expected an array, found {}", json_kind(other)),
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(object) = item else {
                return Err(Error::invalid(
                    format!("{key}[{i}]"),
                    format!("expected an object, found {}", json_kind(item)),
                ));
            };
            if let Some(extra) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
                return Err(Error::invalid(
                    format!("{key}[{i}].{extra}"),
                    format!("unknown field (expected {})", allowed.join(", ")),
                ));
            }
            Ok(object)
        })
        .collect()
}

fn optional_string(map: &Map<String, Value>, key: &str, prefix: &str) -> Result<Option<String>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(Error::invalid(
            format!("{prefix}{key}"),
            format!("expected a string or null, found {}", json_kind(other)),
        )),
    }
}

fn required_string(map: &Map<String, Value>, key: &str, prefix: &str) -> Result<String> {
    optional_string(map, key, prefix)?
        .ok_or_else(|| Error::invalid(format!("{prefix}{key}"), "is required"))
}
