//! Seeding the store: projects, users, wallets, identities, sessions, interactions. Every value
//! is checked before it is written; the `insert_*` functions also run inside an import's
//! transaction.

use std::time::SystemTime;

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::{SqliteStore, conflict_as};
use crate::error::{Error, Result};
use crate::records::{
    ChainFamily, NewUser, Profile, ProjectCredentials, check_identity, check_project_name,
    check_session_token, identity_taken, normalize_uuid,
};
use crate::store::import::ImportedUser;
use crate::{secret, time};

impl SqliteStore {
    /// [`crate::UserStore::create_project`] on SQLite (blocking).
    pub fn create_project(&self, name: &str) -> Result<ProjectCredentials> {
        let server_key = secret::new_server_key();
        let project_id = insert_project(&self.conn(), name, &server_key)?;
        Ok(ProjectCredentials { project_id, server_key })
    }

    /// [`crate::UserStore::rotate_server_key`] on SQLite (blocking).
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

    /// [`crate::UserStore::add_user`] on SQLite (blocking).
    pub fn add_user(&self, project_id: &str, user: &NewUser) -> Result<String> {
        let now = time::now_ms();
        insert_user(&self.conn(), project_id, user, now, now, "")
    }

    /// [`crate::UserStore::add_wallet`] on SQLite (blocking).
    pub fn add_wallet(&self, user_uuid: &str, chain: ChainFamily, address: &str) -> Result<()> {
        insert_wallet(&self.conn(), user_uuid, chain, address, "address")
    }

    /// [`crate::UserStore::add_identity`] on SQLite (blocking).
    pub fn add_identity(&self, user_uuid: &str, provider: &str, uid: &str) -> Result<()> {
        insert_identity(&self.conn(), user_uuid, provider, uid, "")
    }

    /// [`crate::UserStore::add_session`] with a new random token, on SQLite (blocking).
    pub fn add_session(&self, user_uuid: &str, expires_at: SystemTime) -> Result<String> {
        let token = secret::new_session_token();
        self.add_session_with_token(user_uuid, &token, expires_at)?;
        Ok(token)
    }

    /// Like [`SqliteStore::add_session`] with a chosen token.
    pub fn add_session_with_token(
        &self,
        user_uuid: &str,
        token: &str,
        expires_at: SystemTime,
    ) -> Result<()> {
        insert_session(&self.conn(), user_uuid, token, time::system_time_ms(expires_at), "")
    }

    /// [`crate::UserStore::add_interaction`] on SQLite (blocking).
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

impl SqliteStore {
    /// [`crate::UserStore::import_users`] on SQLite (blocking).
    pub fn import_users(
        &self,
        project_id: &str,
        records: &serde_json::Value,
    ) -> Result<Vec<String>> {
        let records = crate::store::import::parse_records(records, time::now_ms())?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let project_id = existing_project(&tx, project_id)?;
        let mut uuids = Vec::with_capacity(records.len());
        for (index, record) in records.iter().enumerate() {
            let uuid = import_record(&tx, &project_id, record)
                .map_err(crate::store::import::in_record(index))?;
            uuids.push(uuid);
        }
        tx.commit()?;
        Ok(uuids)
    }
}

fn import_record(conn: &Connection, project_id: &str, record: &ImportedUser) -> Result<String> {
    let uuid =
        insert_user(conn, project_id, &record.user, record.created_at, record.updated_at, "")?;
    for (i, (chain, address)) in record.wallets.iter().enumerate() {
        insert_wallet(conn, &uuid, *chain, address, &format!("wallets[{i}].publicAddress"))?;
    }
    for (i, (provider, uid)) in record.identities.iter().enumerate() {
        insert_identity(conn, &uuid, provider, uid, &format!("identities[{i}]."))?;
    }
    for (i, (token, expires_at)) in record.sessions.iter().enumerate() {
        insert_session(conn, &uuid, token, *expires_at, &format!("sessions[{i}]."))?;
    }
    Ok(uuid)
}

fn insert_project(conn: &Connection, name: &str, server_key: &str) -> Result<String> {
    let name = check_project_name(name)?;
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    conn.execute(
        "INSERT INTO projects (id, name, server_key_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![id, name, secret::hash(server_key).as_slice(), time::now_ms()],
    )?;
    Ok(id)
}

/// The normalized id of an existing project.
fn existing_project(conn: &Connection, project_id: &str) -> Result<String> {
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
fn existing_user(conn: &Connection, user_uuid: &str) -> Result<(String, String)> {
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
fn insert_user(
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

fn insert_wallet(
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

fn insert_identity(
    conn: &Connection,
    user_uuid: &str,
    provider: &str,
    uid: &str,
    prefix: &str,
) -> Result<()> {
    let (uuid, project_id) = existing_user(conn, user_uuid)?;
    check_identity(provider, uid, prefix)?;
    let owner: Option<String> = conn
        .query_row(
            "SELECT user_uuid FROM identities WHERE project_id = ?1 AND provider = ?2 AND uid = ?3",
            params![project_id, provider, uid],
            |row| row.get(0),
        )
        .optional()?;
    match owner {
        Some(owner) if owner == uuid => Ok(()),
        Some(owner) => Err(identity_taken(provider, uid, &owner)),
        None => {
            conn.execute(
                "INSERT INTO identities (project_id, provider, uid, user_uuid) VALUES (?1, ?2, ?3, ?4)",
                params![project_id, provider, uid, uuid],
            )?;
            Ok(())
        }
    }
}

fn insert_session(
    conn: &Connection,
    user_uuid: &str,
    token: &str,
    expires_at_ms: i64,
    prefix: &str,
) -> Result<()> {
    let (uuid, _) = existing_user(conn, user_uuid)?;
    check_session_token(token, prefix)?;
    conn.execute(
        "INSERT INTO sessions (token_hash, user_uuid, expires_at) VALUES (?1, ?2, ?3)",
        params![secret::hash(token).as_slice(), uuid, expires_at_ms],
    )
    .map_err(|e| conflict_as(e, || "that session token is already in use".to_owned()))?;
    Ok(())
}
