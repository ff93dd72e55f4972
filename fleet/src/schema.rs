//! The fleet's tables in PostgreSQL, created in an empty database and checked in an existing
//! one (`dk_meta.schema_version`).
//!
//! - `dk_nodes`: the live fleet members and their leases (database time);
//! - `dk_owners`: the registered owners, their options, holder and fencing token;
//! - `dk_clients`, `dk_deposits`, `dk_attempts`, `dk_results`, `dk_events`: the deposit state of
//!   the store contract, the SQLite store's tables keyed by owner. Rows stay when an owner is
//!   removed: registered again, it resumes where it stopped. `dk_events` also records each
//!   row's transaction id (`tx`, for the one ordered log across owners). `dk_clients` also
//!   keeps the start handed to the owner's next holder (`start_account`, and the session:
//!   `session_jwt`, a short-lived secret, and `session_expires_at`; schema version 2).
//! - `dk_commands`: commands for owners' holders (`commands.rs`);
//! - `dk_check_fence(owner, node, fence)`: the check every write runs first; it takes the
//!   owner's row `FOR SHARE` (a takeover's `UPDATE` waits for the write, and a write behind a
//!   takeover sees the new fence) and raises SQLSTATE `DKF01` unless `node` holds the owner
//!   under `fence` with an unexpired lease; then it names the writer for the rest of the
//!   transaction (`depositkit.writer` = `node/fence`), which audits read.

use deadpool_postgres::Object;

use crate::error::{FleetError, Result, pg};

/// The schema this code writes.
pub(crate) const SCHEMA_VERSION: i64 = 2;

/// The earlier schema this code brings up to [`SCHEMA_VERSION`] when it joins (members of
/// version 1 that already run keep working on it; one that starts after is refused).
const UPGRADES_FROM: i64 = 1;

/// The SQLSTATE of a refused fence.
pub(crate) const FENCE_LOST: &str = "DKF01";

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS dk_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS dk_nodes (
    node_id text PRIMARY KEY, name text NOT NULL,
    joined_at timestamptz NOT NULL DEFAULT now(),
    renewed_at timestamptz NOT NULL DEFAULT now(), expires_at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS dk_owners (
    owner text PRIMARY KEY, options jsonb NOT NULL DEFAULT '{}',
    holder text REFERENCES dk_nodes (node_id) ON DELETE SET NULL,
    fence bigint NOT NULL DEFAULT 0, acquired_at timestamptz,
    enabled boolean NOT NULL DEFAULT true, created_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX IF NOT EXISTS dk_owners_by_holder ON dk_owners (holder);
CREATE TABLE IF NOT EXISTS dk_clients (
    owner text PRIMARY KEY, account_id text, detector text, notifications text,
    updated_at bigint NOT NULL, start_account text, session_jwt text, session_expires_at bigint);
CREATE TABLE IF NOT EXISTS dk_deposits (
    owner text NOT NULL, id text NOT NULL, seq bigint NOT NULL, state text NOT NULL,
    open boolean NOT NULL, record text NOT NULL, updated_at bigint NOT NULL,
    PRIMARY KEY (owner, id));
CREATE TABLE IF NOT EXISTS dk_attempts (
    owner text NOT NULL, quote_id text NOT NULL, deposit_id text NOT NULL, purpose text NOT NULL,
    sent_at bigint NOT NULL, outcome text, transaction_id text, updated_at bigint NOT NULL,
    PRIMARY KEY (owner, quote_id));
CREATE TABLE IF NOT EXISTS dk_results (
    owner text NOT NULL, deposit_id text NOT NULL, kind text NOT NULL, result text NOT NULL,
    updated_at bigint NOT NULL, PRIMARY KEY (owner, deposit_id, kind));
CREATE TABLE IF NOT EXISTS dk_events (
    pos bigint GENERATED ALWAYS AS IDENTITY, tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
    owner text NOT NULL, id bigint NOT NULL, at bigint NOT NULL, type text NOT NULL,
    deposit_id text, event text NOT NULL, PRIMARY KEY (owner, id));
CREATE INDEX IF NOT EXISTS dk_events_by_tx ON dk_events (tx, pos);
CREATE INDEX IF NOT EXISTS dk_events_by_deposit ON dk_events (owner, deposit_id, id);
CREATE TABLE IF NOT EXISTS dk_commands (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, owner text NOT NULL,
    kind text NOT NULL, args jsonb NOT NULL, state text NOT NULL DEFAULT 'pending',
    fence bigint, claimed_by text, result text, error text,
    created_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz);
CREATE INDEX IF NOT EXISTS dk_commands_open ON dk_commands (owner, id)
    WHERE state IN ('pending', 'running');
CREATE OR REPLACE FUNCTION dk_check_fence(p_owner text, p_node text, p_fence bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    held boolean;
BEGIN
    SELECT o.holder = p_node AND o.fence = p_fence
           AND EXISTS (SELECT 1 FROM dk_nodes n WHERE n.node_id = p_node AND n.expires_at > now())
      INTO held
      FROM dk_owners o WHERE o.owner = p_owner FOR SHARE OF o;
    IF held IS NOT TRUE THEN
        RAISE EXCEPTION 'owner % is not held by % under fence %', p_owner, p_node, p_fence
            USING ERRCODE = 'DKF01';
    END IF;
    -- Who this transaction writes as, for audits (the fault harness's): node/fence.
    PERFORM set_config('depositkit.writer', p_node || '/' || p_fence, true);
END $$;
"#;

/// Version 1 to 2: the start handed over (`dk_clients`' last three columns). Only on a
/// database of version 1: the `ALTER` takes the table's lock, which members joining every day
/// should not.
const UPGRADE: &str = r#"
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM dk_meta WHERE key = 'schema_version' AND value = '1') THEN
        ALTER TABLE dk_clients ADD COLUMN IF NOT EXISTS start_account text,
            ADD COLUMN IF NOT EXISTS session_jwt text,
            ADD COLUMN IF NOT EXISTS session_expires_at bigint;
        UPDATE dk_meta SET value = '2' WHERE key = 'schema_version';
    END IF;
END $$;
"#;

/// Creates the schema when missing, or brings a database of version 1 up to this one (under
/// an advisory lock, so members starting together do not race), and checks its version first:
/// a database of another version is left untouched.
pub(crate) async fn prepare(client: &Object, shown: &str) -> Result<()> {
    check_version(client, shown, &[UPGRADES_FROM, SCHEMA_VERSION]).await?;
    client
        .batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock(7236981453); {SCHEMA} {UPGRADE} \
             INSERT INTO dk_meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}') \
             ON CONFLICT (key) DO NOTHING; COMMIT;"
        ))
        .await
        .map_err(pg)?;
    check_version(client, shown, &[SCHEMA_VERSION]).await
}

/// Refuses a database whose schema version is not one of `accepted` (none yet is fine).
async fn check_version(client: &Object, shown: &str, accepted: &[i64]) -> Result<()> {
    let exists =
        client.query_one("SELECT to_regclass('dk_meta') IS NOT NULL", &[]).await.map_err(pg)?;
    if !exists.get::<_, bool>(0) {
        return Ok(());
    }
    let found: Option<String> = client
        .query_opt("SELECT value FROM dk_meta WHERE key = 'schema_version'", &[])
        .await
        .map_err(pg)?
        .map(|row| row.get(0));
    match found {
        Some(found) if !accepted.iter().any(|v| v.to_string() == found) => {
            Err(FleetError::SchemaVersion {
                url: shown.to_owned(),
                found,
                expected: SCHEMA_VERSION,
            })
        }
        _ => Ok(()),
    }
}
