//! Lookups the server answers from: credentials, users, sessions, identities, membership.
//!
//! The per-request statements go through the connection's prepared-statement cache
//! (`prepare_cached`): `Connection::query_row` parses and plans the SQL again on every call,
//! which for these point lookups cost more than running them (`benches/server_throughput.sh`,
//! `docs/benchmarks.md`).

use std::sync::LazyLock;

use rusqlite::{Connection, OptionalExtension, params};

use super::SqliteStore;
use crate::error::Result;
use crate::records::{ChainFamily, Profile, SessionStatus, User, Wallet};
use crate::{secret, time};

impl SqliteStore {
    /// [`crate::UserStore::verify_server_key`] on SQLite (blocking).
    pub fn verify_server_key(&self, project_id: &str, server_key: &str) -> Result<bool> {
        let stored: Option<Vec<u8>> = self
            .conn()
            .prepare_cached("SELECT server_key_hash FROM projects WHERE id = ?1")?
            .query_row([project_id], |row| row.get(0))
            .optional()?;
        Ok(secret::matches_stored(server_key, stored.as_deref()))
    }

    /// [`crate::UserStore::user`] on SQLite (blocking).
    pub fn user(&self, project_id: &str, uuid: &str) -> Result<Option<User>> {
        load_user(&self.conn(), project_id, uuid)
    }

    /// [`crate::UserStore::session_status`] on SQLite (blocking).
    pub fn session_status(&self, uuid: &str, token: &str, now_ms: i64) -> Result<SessionStatus> {
        let row: Option<(String, i64)> = self
            .conn()
            .prepare_cached("SELECT user_uuid, expires_at FROM sessions WHERE token_hash = ?1")?
            .query_row([secret::hash(token).as_slice()], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        Ok(SessionStatus::of(row, uuid, now_ms))
    }

    /// [`crate::UserStore::user_by_identity`] on SQLite (blocking).
    pub fn user_by_identity(
        &self,
        project_id: &str,
        provider: &str,
        uid: &str,
    ) -> Result<Option<User>> {
        let conn = self.conn();
        let uuid: Option<String> = conn
            .prepare_cached(
                "SELECT user_uuid FROM identities WHERE project_id = ?1 AND provider = ?2 AND uid = ?3",
            )?
            .query_row(params![project_id, provider, uid], |row| row.get(0))
            .optional()?;
        match uuid {
            Some(uuid) => load_user(&conn, project_id, &uuid),
            None => Ok(None),
        }
    }

    /// [`crate::UserStore::is_project_address`] on SQLite (blocking).
    pub fn is_project_address(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<bool> {
        let address = chain.normalize(address);
        // Prepared per call on purpose: through the statement cache this compound query ran
        // ~20% slower under `benches/server_throughput.sh` (docs/benchmarks.md, issue 19).
        let found: Option<i64> = self
            .conn()
            .query_row(
                "SELECT 1 FROM wallets w JOIN users u ON u.uuid = w.user_uuid
                   WHERE u.project_id = ?1 AND w.chain = ?2 AND w.public_address = ?3
                 UNION ALL
                 SELECT 1 FROM interactions
                   WHERE project_id = ?1 AND chain = ?2 AND address = ?3
                 LIMIT 1",
                params![project_id, chain.as_str(), address],
                |row| row.get(0),
            )
            .optional()?;
        Ok(found.is_some())
    }

    /// [`crate::UserStore::user_uuids`] on SQLite (blocking).
    pub fn user_uuids(&self, project_id: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT uuid FROM users WHERE project_id = ?1 ORDER BY created_at, rowid")?;
        let rows = stmt.query_map([project_id], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The user row of `load_user`, built once.
static USER_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT created_at, updated_at, {} FROM users WHERE uuid = ?1 AND project_id = ?2",
        Profile::column_list()
    )
});

fn load_user(conn: &Connection, project_id: &str, uuid: &str) -> Result<Option<User>> {
    let row = conn
        .prepare_cached(&USER_SQL)?
        .query_row([uuid, project_id], |row| {
            let mut values: [Option<String>; 24] = Default::default();
            for (i, value) in values.iter_mut().enumerate() {
                *value = row.get(i + 2)?;
            }
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, values))
        })
        .optional()?;
    let Some((created_at, updated_at, values)) = row else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT chain, public_address FROM wallets WHERE user_uuid = ?1 ORDER BY rowid",
    )?;
    let wallets = stmt
        .query_map([uuid], |row| Ok(Wallet { chain: row.get(0)?, public_address: row.get(1)? }))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(User {
        uuid: uuid.to_owned(),
        profile: Profile::from_values(values),
        created_at: time::format_ms(created_at),
        updated_at: time::format_ms(updated_at),
        wallets,
    }))
}
