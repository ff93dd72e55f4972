//! The SQLite schema: the user-lookup tables and a `user_lookup_schema` table holding their
//! version. Timestamps are milliseconds since the Unix epoch; secrets are SHA-256 hashes.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::error::{Error, Result};

/// The version of the user-lookup tables this build reads and writes (both stores).
pub const SCHEMA_VERSION: i64 = 1;

/// The user-lookup tables (devnet's schema version 1 creates them too, beside its own).
pub const TABLES: &str = "
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
";

/// The pragmas every connection gets: a busy timeout, foreign keys, WAL, `synchronous=NORMAL`.
///
/// # Errors
/// SQLite failures.
pub fn pragmas(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "foreign_keys", true)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    debug_assert!(mode.eq_ignore_ascii_case("wal") || mode.eq_ignore_ascii_case("memory"));
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(())
}

/// Sets the pragmas, creates the schema in an empty file, and checks the version of an
/// existing one.
///
/// # Errors
/// [`Error::SchemaVersion`] naming the file's version and [`SCHEMA_VERSION`]; SQLite failures.
pub fn prepare(conn: &mut Connection) -> Result<()> {
    pragmas(conn)?;
    if let Some(found) = version(conn)? {
        return check(conn, found);
    }
    // Re-check under a write lock: another process may be creating the schema right now.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Some(found) = version(&tx)? {
        return check(&tx, found);
    }
    let tables: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'projects'",
        [],
        |row| row.get(0),
    )?;
    if tables > 0 {
        // A file with the tables but no version: devnet's, or someone else's.
        return Err(Error::SchemaVersion {
            schema: "user-lookup",
            database: path_of(&tx),
            found: 0,
            expected: SCHEMA_VERSION,
        });
    }
    tx.execute_batch(TABLES)?;
    tx.execute_batch("CREATE TABLE user_lookup_schema (version INTEGER NOT NULL)")?;
    tx.execute("INSERT INTO user_lookup_schema (version) VALUES (?1)", [SCHEMA_VERSION])?;
    tx.commit()?;
    Ok(())
}

/// The recorded version, or `None` when the file has no `user_lookup_schema` table.
fn version(conn: &Connection) -> Result<Option<i64>> {
    let has_table: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'user_lookup_schema'",
        [],
        |row| row.get(0),
    )?;
    if has_table == 0 {
        return Ok(None);
    }
    let found: Option<i64> = conn
        .query_row("SELECT max(version) FROM user_lookup_schema", [], |row| row.get(0))
        .optional()?
        .flatten();
    Ok(Some(found.unwrap_or(0)))
}

fn check(conn: &Connection, found: i64) -> Result<()> {
    if found == SCHEMA_VERSION {
        Ok(())
    } else {
        Err(Error::SchemaVersion {
            schema: "user-lookup",
            database: path_of(conn),
            found,
            expected: SCHEMA_VERSION,
        })
    }
}

fn path_of(conn: &Connection) -> String {
    format!("sqlite://{}", conn.path().unwrap_or(""))
}
