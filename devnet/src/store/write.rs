//! Seeding the store: projects, users, wallets, identities, sessions, interactions. Every value
//! is checked before it is written; the `insert_*` functions also run inside an import's
//! transaction.

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::records::{ChainFamily, NewUser, Profile, ProjectCredentials, normalize_uuid};
use super::{Store, conflict_as};
use crate::describe::quote;
use crate::error::{Error, Result};
use crate::{secret, time};

impl Store {
    /// Creates a project named `name` with a new random server key. The key is returned once;
    /// only its SHA-256 hash is stored.
    ///
    /// # Errors
    /// An empty or over-long name; database failures.
    pub fn create_project(&self, name: &str) -> Result<ProjectCredentials> {
        let server_key = secret::new_server_key();
        let project_id = insert_project(&self.conn(), name, &server_key)?;
        Ok(ProjectCredentials { project_id, server_key })
    }

    /// Replaces the server key of `project_id` with a new random one and returns it. The old
    /// key stops working at once.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown project; database failures.
    pub fn rotate_server_key(&self, project_id: &str) -> Result<ProjectCredentials> {
        let project_id = normalize_uuid("project", project_id)?;
        let server_key = secret::new_server_key();
        let changed = self.conn().execute(
            "UPDATE projects SET server_key_hash = ?2 WHERE id = ?1",
            params![project_id, secret::hash(&server_key).as_slice()],
        )?;
        if changed == 0 {
            return Err(Error::NotFound(format!("project {project_id} not found")));
        }
        Ok(ProjectCredentials { project_id, server_key })
    }

    /// Adds a user to `project_id` and returns its uuid (the given one, lower-cased, or a new
    /// v4 uuid).
    ///
    /// # Errors
    /// A malformed uuid or empty email; [`Error::NotFound`] for an unknown project;
    /// [`Error::Conflict`] when the uuid is taken.
    pub fn add_user(&self, project_id: &str, user: &NewUser) -> Result<String> {
        let now = time::now_ms();
        insert_user(&self.conn(), project_id, user, now, now, "")
    }

    /// Adds a wallet to a user. Adding a wallet the user already has does nothing.
    ///
    /// # Errors
    /// An address that is not valid for `chain`; [`Error::NotFound`] for an unknown user.
    pub fn add_wallet(&self, user_uuid: &str, chain: ChainFamily, address: &str) -> Result<()> {
        insert_wallet(&self.conn(), user_uuid, chain, address, "address")
    }

    /// Links the identity (`provider`, `uid`) to a user, within the user's project.
    ///
    /// # Errors
    /// A malformed provider or uid; [`Error::NotFound`] for an unknown user;
    /// [`Error::Conflict`] when the identity already belongs to another user of the project.
    pub fn add_identity(&self, user_uuid: &str, provider: &str, uid: &str) -> Result<()> {
        insert_identity(&self.conn(), user_uuid, provider, uid, "")
    }

    /// Creates a session for a user with a new random token, valid until `expires_at`, and
    /// returns the token (only its hash is stored).
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown user.
    pub fn add_session(&self, user_uuid: &str, expires_at: SystemTime) -> Result<String> {
        let token = secret::new_session_token();
        self.add_session_with_token(user_uuid, &token, expires_at)?;
        Ok(token)
    }

    /// Like [`Store::add_session`] with a chosen token.
    ///
    /// # Errors
    /// An empty token or one with whitespace; [`Error::NotFound`] for an unknown user;
    /// [`Error::Conflict`] when the token is already in use.
    pub fn add_session_with_token(
        &self,
        user_uuid: &str,
        token: &str,
        expires_at: SystemTime,
    ) -> Result<()> {
        insert_session(&self.conn(), user_uuid, token, system_time_ms(expires_at), "")
    }

    /// Records that `address` on `chain` has interacted with `project_id`, so `isProjectUser`
    /// answers `true` for it. Recording it again does nothing.
    ///
    /// # Errors
    /// An address that is not valid for `chain`; [`Error::NotFound`] for an unknown project.
    pub fn add_interaction(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<()> {
        let conn = self.conn();
        let project_id = existing_project(&conn, project_id)?;
        chain.validate_address("address", address)?;
        conn.execute(
            "INSERT OR IGNORE INTO interactions (project_id, chain, address) VALUES (?1, ?2, ?3)",
            params![project_id, chain.as_str(), chain.normalize(address)],
        )?;
        Ok(())
    }
}

/// Milliseconds since the epoch of `t` (0 for times before it).
pub(crate) fn system_time_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

pub(crate) fn insert_project(conn: &Connection, name: &str, server_key: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(Error::invalid("name", "must be 1 to 200 characters"));
    }
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    conn.execute(
        "INSERT INTO projects (id, name, server_key_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![id, name, secret::hash(server_key).as_slice(), time::now_ms()],
    )?;
    Ok(id)
}

/// The normalized id of an existing project.
pub(crate) fn existing_project(conn: &Connection, project_id: &str) -> Result<String> {
    let id = normalize_uuid("project", project_id)?;
    let found: Option<i64> = conn
        .query_row("SELECT 1 FROM projects WHERE id = ?1", [&id], |row| row.get(0))
        .optional()?;
    match found {
        Some(_) => Ok(id),
        None => Err(Error::NotFound(format!("project {id} not found"))),
    }
}

/// The normalized uuid of an existing user and the project it belongs to.
pub(crate) fn existing_user(conn: &Connection, user_uuid: &str) -> Result<(String, String)> {
    let uuid = normalize_uuid("user", user_uuid)?;
    let project: Option<String> = conn
        .query_row("SELECT project_id FROM users WHERE uuid = ?1", [&uuid], |row| row.get(0))
        .optional()?;
    match project {
        Some(project) => Ok((uuid, project)),
        None => Err(Error::NotFound(format!("user {uuid} not found"))),
    }
}

/// Inserts a user; `prefix` goes before field names in errors (`wallets[0].` style paths are
/// built by the importer).
pub(crate) fn insert_user(
    conn: &Connection,
    project_id: &str,
    user: &NewUser,
    created_at: i64,
    updated_at: i64,
    prefix: &str,
) -> Result<String> {
    let project_id = existing_project(conn, project_id)?;
    let uuid = match &user.uuid {
        Some(u) => normalize_uuid(&format!("{prefix}uuid"), u)?,
        None => uuid::Uuid::new_v4().hyphenated().to_string(),
    };
    user.profile.validate(prefix)?;
    let mut columns =
        vec!["uuid".to_owned(), "project_id".into(), "created_at".into(), "updated_at".into()];
    columns.extend(Profile::FIELDS.iter().map(|f| Profile::column(f)));
    let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    let sql =
        format!("INSERT INTO users ({}) VALUES ({})", columns.join(", "), placeholders.join(", "));
    let mut values: Vec<Value> =
        vec![uuid.clone().into(), project_id.into(), created_at.into(), updated_at.into()];
    values.extend(
        user.profile.values().map(|v| v.map_or(Value::Null, |s| Value::Text(s.to_owned()))),
    );
    conn.execute(&sql, params_from_iter(values))
        .map_err(|e| conflict_as(e, || format!("user {uuid} already exists")))?;
    Ok(uuid)
}

pub(crate) fn insert_wallet(
    conn: &Connection,
    user_uuid: &str,
    chain: ChainFamily,
    address: &str,
    address_field: &str,
) -> Result<()> {
    let (uuid, _) = existing_user(conn, user_uuid)?;
    chain.validate_address(address_field, address)?;
    conn.execute(
        "INSERT OR IGNORE INTO wallets (user_uuid, chain, public_address) VALUES (?1, ?2, ?3)",
        params![uuid, chain.as_str(), chain.normalize(address)],
    )?;
    Ok(())
}

pub(crate) fn insert_identity(
    conn: &Connection,
    user_uuid: &str,
    provider: &str,
    uid: &str,
    prefix: &str,
) -> Result<()> {
    let (uuid, project_id) = existing_user(conn, user_uuid)?;
    let provider_ok = !provider.is_empty()
        && provider.len() <= 64
        && provider
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if !provider_ok {
        return Err(Error::invalid(
            format!("{prefix}provider"),
            format!("{} must be 1 to 64 of a-z, 0-9, _ and -", quote(provider)),
        ));
    }
    if uid.is_empty() || uid.chars().count() > 512 || uid.chars().any(char::is_control) {
        return Err(Error::invalid(
            format!("{prefix}uid"),
            "must be 1 to 512 characters without control characters",
        ));
    }
    let owner: Option<String> = conn
        .query_row(
            "SELECT user_uuid FROM identities WHERE project_id = ?1 AND provider = ?2 AND uid = ?3",
            params![project_id, provider, uid],
            |row| row.get(0),
        )
        .optional()?;
    match owner {
        Some(owner) if owner == uuid => Ok(()),
        Some(owner) => Err(Error::Conflict(format!(
            "identity {provider}:{} already belongs to user {owner}",
            quote(uid)
        ))),
        None => {
            conn.execute(
                "INSERT INTO identities (project_id, provider, uid, user_uuid) VALUES (?1, ?2, ?3, ?4)",
                params![project_id, provider, uid, uuid],
            )?;
            Ok(())
        }
    }
}

pub(crate) fn insert_session(
    conn: &Connection,
    user_uuid: &str,
    token: &str,
    expires_at_ms: i64,
    prefix: &str,
) -> Result<()> {
    let (uuid, _) = existing_user(conn, user_uuid)?;
    // Never put the token itself into a message.
    if token.is_empty()
        || token.len() > 1024
        || token.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(Error::invalid(
            format!("{prefix}token"),
            "a session token must be 1 to 1024 characters without whitespace",
        ));
    }
    conn.execute(
        "INSERT INTO sessions (token_hash, user_uuid, expires_at) VALUES (?1, ?2, ?3)",
        params![secret::hash(token).as_slice(), uuid, expires_at_ms],
    )
    .map_err(|e| conflict_as(e, || "that session token is already in use".to_owned()))?;
    Ok(())
}
