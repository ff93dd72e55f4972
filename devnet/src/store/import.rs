//! Importing users from JSON: an array of User records (spec §2, camelCase; `uuid`,
//! `createdAt`, `updatedAt` and `wallets` optional) that may also carry
//! `identities: [{provider, uid}]` and `sessions: [{token, expiresAt}]`. All records go in one
//! transaction: one bad record rejects the whole file, and the error names its index and field.

use std::path::Path;

use serde_json::{Map, Value};

use super::Store;
use super::records::{ChainFamily, NewUser, Profile};
use super::write::{existing_project, insert_identity, insert_session, insert_user, insert_wallet};
use crate::describe::json_kind;
use crate::error::{Error, Result};
use crate::time;

/// Top-level keys a record may have besides the profile fields.
const EXTRA_KEYS: [&str; 6] =
    ["uuid", "createdAt", "updatedAt", "wallets", "identities", "sessions"];

impl Store {
    /// Imports the users in the JSON file at `path` into `project_id`; returns their uuids in
    /// file order.
    ///
    /// # Errors
    /// The file cannot be read or is not JSON; [`Error::ImportRecord`] for the first bad record
    /// (nothing is imported then); [`Error::NotFound`] for an unknown project.
    pub fn import_file(&self, project_id: &str, path: &Path) -> Result<Vec<String>> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        let records: Value = serde_json::from_str(&text).map_err(|source| Error::Json {
            context: format!("{} is not valid JSON", path.display()),
            source,
        })?;
        self.import_users(project_id, &records)
    }

    /// Imports `records` (a JSON array of user records) into `project_id` in one transaction;
    /// returns the uuids in order.
    ///
    /// # Errors
    /// As [`Store::import_file`].
    pub fn import_users(&self, project_id: &str, records: &Value) -> Result<Vec<String>> {
        let Value::Array(records) = records else {
            return Err(Error::invalid(
                "import file",
                format!("expected an array of users, found {}", json_kind(records)),
            ));
        };
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let project_id = existing_project(&tx, project_id)?;
        let now = time::now_ms();
        let mut uuids = Vec::with_capacity(records.len());
        for (index, record) in records.iter().enumerate() {
            let uuid = import_record(&tx, &project_id, record, now)
                .map_err(|e| Error::ImportRecord { index, source: Box::new(e) })?;
            uuids.push(uuid);
        }
        tx.commit()?;
        Ok(uuids)
    }
}

fn import_record(
    conn: &rusqlite::Connection,
    project_id: &str,
    record: &Value,
    now: i64,
) -> Result<String> {
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
    let uuid = insert_user(conn, project_id, &user, created_at, updated_at, "")?;

    for (i, wallet) in objects(map, "wallets", &["chain", "publicAddress"])?.into_iter().enumerate()
    {
        let prefix = format!("wallets[{i}].");
        let chain = required_string(wallet, "chain", &prefix)?;
        let chain = ChainFamily::parse_field(&format!("{prefix}chain"), &chain)?;
        let address = required_string(wallet, "publicAddress", &prefix)?;
        insert_wallet(conn, &uuid, chain, &address, &format!("{prefix}publicAddress"))?;
    }
    for (i, identity) in objects(map, "identities", &["provider", "uid"])?.into_iter().enumerate() {
        let prefix = format!("identities[{i}].");
        let provider = required_string(identity, "provider", &prefix)?;
        let uid = required_string(identity, "uid", &prefix)?;
        insert_identity(conn, &uuid, &provider, &uid, &prefix)?;
    }
    for (i, session) in objects(map, "sessions", &["token", "expiresAt"])?.into_iter().enumerate() {
        let prefix = format!("sessions[{i}].");
        let token = required_string(session, "token", &prefix)?;
        let expires_at = required_string(session, "expiresAt", &prefix)?;
        let expires_at = time::parse_ms(&format!("{prefix}expiresAt"), &expires_at)?;
        insert_session(conn, &uuid, &token, expires_at, &prefix)?;
    }
    Ok(uuid)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::test_support::TempDb;

    const EVM: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
    const SOL: &str = "11111111111111111111111111111111";

    #[test]
    fn imports_users_with_wallets_identities_and_sessions() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let project = store.create_project("p").unwrap().project_id;
        let uuid = "0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f";
        let records = json!([
            {"uuid": uuid, "email": "a@b.c", "googleId": "g1", "createdAt": "2022-06-08T07:47:54.000Z",
             "wallets": [{"chain": "evm_chain", "publicAddress": EVM}, {"chain": "solana", "publicAddress": SOL}],
             "identities": [{"provider": "jwt", "uid": "u-1"}],
             "sessions": [{"token": "tok-1", "expiresAt": "2999-01-01T00:00:00Z"}]},
            {"email": "d@e.f", "phone": null}
        ]);
        let uuids = store.import_users(&project, &records).unwrap();
        assert_eq!(uuids[0], uuid);
        let user = store.user(&project, uuid).unwrap().unwrap();
        assert_eq!(user.created_at, "2022-06-08T07:47:54.000Z");
        assert_eq!(user.updated_at, user.created_at);
        assert_eq!(user.profile.google_id.as_deref(), Some("g1"));
        assert_eq!(user.wallets[0].public_address, EVM.to_lowercase());
        assert_eq!(store.user_by_identity(&project, "jwt", "u-1").unwrap().unwrap().uuid, uuid);
        assert_eq!(
            store.session_status(uuid, "tok-1", time::now_ms()).unwrap(),
            crate::store::SessionStatus::Valid
        );
        assert!(store.user(&project, &uuids[1]).unwrap().is_some());
    }

    #[test]
    fn a_bad_record_rejects_the_whole_import_naming_index_and_field() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let project = store.create_project("p").unwrap().project_id;
        let cases = [
            (
                json!([{"email": "a@b.c"}, {"email": "x@y.z", "wallets": [{"chain": "evm_chain", "publicAddress": "0x12"}]}]),
                "record 1: invalid wallets[0].publicAddress",
            ),
            (
                json!([{"email": "a@b.c"}, {"email": 5}]),
                "record 1: invalid email: expected a string",
            ),
            (json!([{"emial": "a@b.c"}]), "record 0: invalid emial: unknown field"),
            (
                json!([{"email": "a@b.c", "wallets": [{"chain": "btc", "publicAddress": SOL}]}]),
                "record 0: invalid wallets[0].chain",
            ),
            (
                json!([{"email": "a@b.c", "sessions": [{"token": "t", "expiresAt": "soon"}]}]),
                "record 0: invalid sessions[0].expiresAt",
            ),
            (json!([{"name": "n"}]), "record 0: invalid email: is required"),
            (json!([{"email": "a@b.c", "uuid": "nope"}]), "record 0: invalid uuid"),
            (json!({"email": "a@b.c"}), "expected an array"),
        ];
        for (records, expected) in cases {
            let err = store.import_users(&project, &records).unwrap_err().to_string();
            assert!(err.contains(expected), "{err:?} lacks {expected:?}");
            assert!(store.user_uuids(&project).unwrap().is_empty(), "partial import after {err}");
        }
    }
}
