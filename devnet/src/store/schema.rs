//! The SQLite schema, versioned with `PRAGMA user_version`.

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Error, Result};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

/// Version 1. Timestamps are milliseconds since the Unix epoch; secrets are SHA-256 hashes.
const SCHEMA_V1: &str = "
CREATE TABLE projects (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    server_key_hash BLOB NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE TABLE users (
    uuid            TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    phone           TEXT,
    email           TEXT NOT NULL,
    name            TEXT,
    avatar          TEXT,
    facebook_id     TEXT,
    facebook_email  TEXT,
    google_id       TEXT,
    google_email    TEXT,
    apple_id        TEXT,
    apple_email     TEXT,
    twitter_id      TEXT,
    twitter_email   TEXT,
    telegram_id     TEXT,
    telegram_phone  TEXT,
    discord_id      TEXT,
    discord_email   TEXT,
    github_id       TEXT,
    github_email    TEXT,
    twitch_id       TEXT,
    twitch_email    TEXT,
    microsoft_id    TEXT,
    microsoft_email TEXT,
    linkedin_id     TEXT,
    linkedin_email  TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX users_by_project ON users(project_id);
CREATE TABLE wallets (
    user_uuid       TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
    chain           TEXT NOT NULL CHECK (chain IN ('evm_chain', 'solana')),
    public_address  TEXT NOT NULL,
    PRIMARY KEY (user_uuid, chain, public_address)
);
CREATE INDEX wallets_by_address ON wallets(chain, public_address);
CREATE TABLE identities (
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    provider        TEXT NOT NULL,
    uid             TEXT NOT NULL,
    user_uuid       TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
    UNIQUE (project_id, provider, uid)
);
CREATE TABLE sessions (
    token_hash      BLOB PRIMARY KEY,
    user_uuid       TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
    expires_at      INTEGER NOT NULL
);
CREATE INDEX sessions_by_user ON sessions(user_uuid);
CREATE TABLE interactions (
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    chain           TEXT NOT NULL CHECK (chain IN ('evm_chain', 'solana')),
    address         TEXT NOT NULL,
    PRIMARY KEY (project_id, chain, address)
);
CREATE TABLE meta (
    key             TEXT PRIMARY KEY,
    value           TEXT NOT NULL
);
";

/// Sets the per-connection pragmas and creates (or checks) the schema.
pub(crate) fn prepare(conn: &mut Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "foreign_keys", true)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    debug_assert!(mode.eq_ignore_ascii_case("wal") || mode.eq_ignore_ascii_case("memory"));
    conn.pragma_update(None, "synchronous", "NORMAL")?;

    if user_version(conn)? == SCHEMA_VERSION {
        return Ok(());
    }
    // Re-check under a write lock: another process may be creating the schema right now.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    match user_version(&tx)? {
        0 => {
            tx.execute_batch(SCHEMA_V1)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        SCHEMA_VERSION => {}
        found => {
            return Err(Error::SchemaVersion { found, supported: SCHEMA_VERSION });
        }
    }
    tx.commit()?;
    Ok(())
}

fn user_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |row| row.get(0))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Profile;

    #[test]
    fn users_table_has_a_column_per_profile_field() {
        let mut conn = Connection::open_in_memory().unwrap();
        prepare(&mut conn).unwrap();
        let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('users')").unwrap();
        let columns: Vec<String> =
            stmt.query_map([], |row| row.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
        for field in Profile::FIELDS {
            assert!(columns.contains(&Profile::column(field)), "no column for {field}");
        }
        assert_eq!(columns.len(), Profile::FIELDS.len() + 4);
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn newer_schema_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 7).unwrap();
        let err = prepare(&mut conn).unwrap_err();
        assert!(matches!(err, Error::SchemaVersion { found: 7, supported: 1 }), "{err}");
    }
}
