//! The PostgreSQL schema: the tables of the SQLite store with PostgreSQL types (`bytea` hashes,
//! `bigint` milliseconds, an identity `seq` where SQLite orders by `rowid`), and the
//! `user_lookup_schema` table holding their version.

use deadpool_postgres::Object;

use super::db;
use crate::error::{Error, Result};
use crate::records::Profile;
use crate::store::sqlite::schema::SCHEMA_VERSION;

/// Serializes schema creation between servers starting at once on an empty database (a
/// transaction-scoped advisory lock: safe behind poolers).
const SCHEMA_LOCK: i64 = 0x6470_6b5f_7573_6572; // "dpk_user"

/// The DDL; the profile columns come from [`Profile::FIELDS`].
fn tables() -> String {
    let profile: Vec<String> = Profile::FIELDS
        .iter()
        .filter(|f| **f != "email")
        .map(|f| format!("    {} text,", Profile::column(f)))
        .collect();
    format!(
        "
CREATE TABLE projects (
    id              text PRIMARY KEY,
    name            text NOT NULL,
    server_key_hash bytea NOT NULL,
    created_at      bigint NOT NULL
);
CREATE TABLE users (
    uuid            text PRIMARY KEY,
    project_id      text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    email           text NOT NULL,
{}
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL,
    seq             bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX users_by_project ON users(project_id, created_at, seq);
CREATE TABLE wallets (
    user_uuid       text NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
    chain           text NOT NULL CHECK (chain IN ('evm_chain', 'solana')),
    public_address  text NOT NULL,
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (user_uuid, chain, public_address)
);
CREATE INDEX wallets_by_address ON wallets(chain, public_address);
CREATE TABLE identities (
    project_id      text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    provider        text NOT NULL,
    uid             text NOT NULL,
    user_uuid       text NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
    UNIQUE (project_id, provider, uid)
);
CREATE TABLE sessions (
    token_hash      bytea PRIMARY KEY,
    user_uuid       text NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
    expires_at      bigint NOT NULL
);
CREATE INDEX sessions_by_user ON sessions(user_uuid);
CREATE TABLE interactions (
    project_id      text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    chain           text NOT NULL CHECK (chain IN ('evm_chain', 'solana')),
    address         text NOT NULL,
    PRIMARY KEY (project_id, chain, address)
);
CREATE TABLE user_lookup_schema (version bigint NOT NULL);
",
        profile.join("\n")
    )
}

/// Creates the schema in an empty database; checks the version of an existing one.
///
/// # Errors
/// [`Error::SchemaVersion`] naming the database's version and [`SCHEMA_VERSION`]; query failures.
pub(super) async fn prepare(client: &Object, shown: &str) -> Result<()> {
    if let Some(found) = version(client).await? {
        return check(found, shown);
    }
    client.batch_execute("BEGIN").await.map_err(db)?;
    let created = create(client, shown).await;
    let end = if created.is_ok() { "COMMIT" } else { "ROLLBACK" };
    client.batch_execute(end).await.map_err(db)?;
    created
}

async fn create(client: &Object, shown: &str) -> Result<()> {
    client.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK]).await.map_err(db)?;
    if let Some(found) = version(client).await? {
        return check(found, shown);
    }
    let existing: Option<String> =
        client.query_one("SELECT to_regclass('projects')::text", &[]).await.map_err(db)?.get(0);
    if existing.is_some() {
        // Tables of someone else's making: never write into them.
        return Err(Error::SchemaVersion {
            schema: "user-lookup",
            database: shown.to_owned(),
            found: 0,
            expected: SCHEMA_VERSION,
        });
    }
    client.batch_execute(&tables()).await.map_err(db)?;
    client
        .execute("INSERT INTO user_lookup_schema (version) VALUES ($1)", &[&SCHEMA_VERSION])
        .await
        .map_err(db)?;
    Ok(())
}

/// The recorded version, or `None` when there is no `user_lookup_schema` table.
async fn version(client: &Object) -> Result<Option<i64>> {
    let table: Option<String> = client
        .query_one("SELECT to_regclass('user_lookup_schema')::text", &[])
        .await
        .map_err(db)?
        .get(0);
    if table.is_none() {
        return Ok(None);
    }
    let found: Option<i64> = client
        .query_one("SELECT max(version) FROM user_lookup_schema", &[])
        .await
        .map_err(db)?
        .get(0);
    Ok(Some(found.unwrap_or(0)))
}

fn check(found: i64, shown: &str) -> Result<()> {
    if found == SCHEMA_VERSION {
        Ok(())
    } else {
        Err(Error::SchemaVersion {
            schema: "user-lookup",
            database: shown.to_owned(),
            found,
            expected: SCHEMA_VERSION,
        })
    }
}
