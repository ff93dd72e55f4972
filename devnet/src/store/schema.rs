//! The SQLite schema, versioned with `PRAGMA user_version`.

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Error, Result};

/// The schema version this build writes and reads. Version 1 files are upgraded in place.
pub const SCHEMA_VERSION: i64 = 2;

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

/// Version 2: the deposit services (`docs/protocol.md`). Amounts are 256-bit integers as decimal
/// text; EVM addresses are looked up lower-cased, Solana addresses as they are. Key material
/// (`signer_wallets.secret_key`, `jwt_keys.private_der`) is devnet-only and never leaves the file.
const SCHEMA_V2: &str = "
CREATE TABLE signer_wallets (
    sub             TEXT PRIMARY KEY,
    address         TEXT NOT NULL,
    secret_key      BLOB NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE TABLE jwt_keys (
    kid             TEXT PRIMARY KEY,
    private_der     BLOB NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE TABLE ua_accounts (
    id              TEXT PRIMARY KEY,
    owner           TEXT NOT NULL UNIQUE,
    evm_address     TEXT NOT NULL,
    evm_key         TEXT NOT NULL UNIQUE,
    solana_address  TEXT NOT NULL UNIQUE,
    created_at      INTEGER NOT NULL
);
CREATE TABLE ua_balances (
    account_id      TEXT NOT NULL REFERENCES ua_accounts(id) ON DELETE CASCADE,
    chain_id        INTEGER NOT NULL,
    token           TEXT NOT NULL,
    raw_amount      TEXT NOT NULL,
    received        TEXT NOT NULL,
    PRIMARY KEY (account_id, chain_id, token)
);
CREATE TABLE ledger (
    address         TEXT NOT NULL,
    chain_id        INTEGER NOT NULL,
    token           TEXT NOT NULL,
    raw_amount      TEXT NOT NULL,
    PRIMARY KEY (address, chain_id, token)
);
CREATE TABLE ua_quotes (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES ua_accounts(id) ON DELETE CASCADE,
    root_hash       TEXT NOT NULL,
    src_chain_id    INTEGER NOT NULL,
    src_token       TEXT NOT NULL,
    src_raw         TEXT NOT NULL,
    src_price_usd   REAL NOT NULL,
    dst_chain_id    INTEGER NOT NULL,
    dst_token       TEXT NOT NULL,
    dst_address     TEXT NOT NULL,
    dst_raw         TEXT NOT NULL,
    dst_price_usd   REAL NOT NULL,
    body            TEXT NOT NULL,
    expires_at      INTEGER NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE TABLE ua_sweeps (
    quote_id        TEXT PRIMARY KEY REFERENCES ua_quotes(id) ON DELETE CASCADE,
    transaction_id  TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('success', 'pending', 'failed')),
    error           TEXT,
    explorer_url    TEXT,
    delivered       TEXT NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE TABLE ua_transactions (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL,
    account_id      TEXT NOT NULL REFERENCES ua_accounts(id) ON DELETE CASCADE,
    tag             TEXT NOT NULL CHECK (tag IN ('receive', 'sweep')),
    status          INTEGER NOT NULL,
    chain_id        INTEGER NOT NULL,
    token           TEXT NOT NULL,
    raw_amount      TEXT NOT NULL,
    price_usd       REAL NOT NULL,
    from_address    TEXT,
    to_address      TEXT NOT NULL,
    to_chain_id     INTEGER NOT NULL,
    quote_id        TEXT,
    created_at      INTEGER NOT NULL,
    UNIQUE (account_id, id)
);
CREATE INDEX ua_transactions_by_account ON ua_transactions(account_id, seq);
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
            tx.execute_batch(SCHEMA_V2)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        1 => {
            tx.execute_batch(SCHEMA_V2)?;
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
        assert!(matches!(err, Error::SchemaVersion { found: 7, supported: 2 }), "{err}");
    }

    #[test]
    fn version_1_files_are_upgraded() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA_V1).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        prepare(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ua_accounts'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(tables, 1);
    }
}
