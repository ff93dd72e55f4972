//! The single-writer audit: triggers the harness installs in its own database (never part of
//! the fleet's schema) that record, in the writing transaction itself,
//!
//! - every row of owner state written (`dk_deposits`, `dk_events`, `dk_attempts`,
//!   `dk_results`, `dk_clients`) with the writer `dk_check_fence` vouched for in that
//!   transaction (`depositkit.writer` = `node/fence`, empty when no fence check ran);
//! - every claim of an owner (its fence changed) with the new holder;
//! - every lease row written or deleted (`dk_nodes`),
//!
//! each with its transaction id, so the checks compare commit times
//! (`track_commit_timestamp`). The fleet's own data says who wrote what and when; the checks
//! ask whether any of it contradicts single ownership (`checks.rs`).

use super::postgres::{execute, rows};

const INSTALL: &str = r#"
CREATE TABLE IF NOT EXISTS dk_audit_writes (
    tbl text NOT NULL, owner text NOT NULL, writer text,
    tx xid NOT NULL DEFAULT pg_current_xact_id()::xid);
CREATE TABLE IF NOT EXISTS dk_audit_claims (
    owner text NOT NULL, holder text, fence bigint NOT NULL,
    tx xid NOT NULL DEFAULT pg_current_xact_id()::xid);
CREATE TABLE IF NOT EXISTS dk_audit_leases (
    node text NOT NULL, expires_at timestamptz, deleted boolean NOT NULL,
    tx xid NOT NULL DEFAULT pg_current_xact_id()::xid);
CREATE TABLE IF NOT EXISTS dk_audit_commands (
    id bigint NOT NULL, owner text NOT NULL, state text NOT NULL, claimed_by text,
    fence bigint, tx xid NOT NULL DEFAULT pg_current_xact_id()::xid);
CREATE OR REPLACE FUNCTION dk_audit_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO dk_audit_commands (id, owner, state, claimed_by, fence)
    VALUES (NEW.id, NEW.owner, NEW.state, NEW.claimed_by, NEW.fence);
    RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER dk_audit AFTER UPDATE ON dk_commands FOR EACH ROW
    EXECUTE FUNCTION dk_audit_command();
CREATE OR REPLACE FUNCTION dk_audit_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO dk_audit_writes (tbl, owner, writer)
    VALUES (TG_TABLE_NAME, NEW.owner, current_setting('depositkit.writer', true));
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION dk_audit_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO dk_audit_claims (owner, holder, fence) VALUES (NEW.owner, NEW.holder, NEW.fence);
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION dk_audit_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO dk_audit_leases (node, expires_at, deleted) VALUES (OLD.node_id, NULL, true);
    ELSE
        INSERT INTO dk_audit_leases (node, expires_at, deleted)
        VALUES (NEW.node_id, NEW.expires_at, false);
    END IF;
    RETURN NULL;
END $$;
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['dk_deposits', 'dk_events', 'dk_attempts', 'dk_results',
                             'dk_clients'] LOOP
        EXECUTE format('CREATE OR REPLACE TRIGGER dk_audit AFTER INSERT OR UPDATE ON %I '
                       'FOR EACH ROW EXECUTE FUNCTION dk_audit_write()', t);
    END LOOP;
END $$;
CREATE OR REPLACE TRIGGER dk_audit AFTER UPDATE ON dk_owners FOR EACH ROW
    WHEN (OLD.fence IS DISTINCT FROM NEW.fence) EXECUTE FUNCTION dk_audit_claim();
CREATE OR REPLACE TRIGGER dk_audit AFTER INSERT OR UPDATE OR DELETE ON dk_nodes FOR EACH ROW
    EXECUTE FUNCTION dk_audit_lease();
CREATE OR REPLACE VIEW dk_audit_w AS
    SELECT tbl, owner, writer, split_part(writer, '/', 1) AS node,
           nullif(split_part(writer, '/', 2), '')::bigint AS fence,
           pg_xact_commit_timestamp(tx) AS committed
      FROM dk_audit_writes;
CREATE OR REPLACE VIEW dk_audit_c AS
    SELECT owner, holder, fence, pg_xact_commit_timestamp(tx) AS committed FROM dk_audit_claims;
CREATE OR REPLACE VIEW dk_audit_l AS
    SELECT node, expires_at, deleted, pg_xact_commit_timestamp(tx) AS committed
      FROM dk_audit_leases;
"#;

/// Installs the audit in the fleet's database (its tables must exist: connect a `Fleet` first).
pub fn install(url: &str) {
    execute(url, INSTALL).unwrap_or_else(|e| panic!("installing the audit failed: {e}"));
}

/// How long a write may take to commit after the fence check that let it in (the check reads
/// the lease at the transaction's start): writes are short; a paused holder wakes up
/// 0.5 × TTL or more after its lease passed.
const COMMIT_SLACK: &str = "1 second";

/// One contradiction of single ownership, as text naming the rows.
pub fn violations(url: &str) -> Vec<String> {
    let queries = [
        (
            "a write that no fence check vouched for",
            "SELECT tbl, owner, coalesce(writer, '(none)') FROM dk_audit_w \
             WHERE writer IS NULL OR writer = '' LIMIT 20"
                .to_owned(),
        ),
        (
            "a write under a fence its writer never claimed",
            "SELECT w.tbl, w.owner, w.writer FROM dk_audit_w w WHERE w.fence IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM dk_audit_c c WHERE c.owner = w.owner \
                             AND c.fence = w.fence AND c.holder = w.node) LIMIT 20"
                .to_owned(),
        ),
        (
            "a write committed after a newer holder's claim committed",
            "SELECT w.tbl, w.owner, w.writer, w.committed::text, c.fence::text, \
                    c.committed::text FROM dk_audit_w w JOIN dk_audit_c c \
               ON c.owner = w.owner AND c.fence > w.fence AND c.committed < w.committed \
             LIMIT 20"
                .to_owned(),
        ),
        (
            "a write committed after its writer's lease had passed or its node was removed",
            format!(
                "SELECT w.tbl, w.owner, w.writer, w.committed::text FROM dk_audit_w w \
                 WHERE w.node <> '' AND (w.committed > interval '{COMMIT_SLACK}' + \
                   (SELECT max(l.expires_at) FROM dk_audit_l l \
                     WHERE l.node = w.node AND NOT l.deleted AND l.committed <= w.committed) \
                   OR EXISTS (SELECT 1 FROM dk_audit_l l WHERE l.node = w.node AND l.deleted \
                              AND l.committed < w.committed)) LIMIT 20"
            ),
        ),
    ];
    contradictions(url, queries)
}

/// What the audit saw: writes, claims, distinct writers, lease rows.
pub fn summary(url: &str) -> String {
    let sql = "SELECT (SELECT count(*) FROM dk_audit_writes), (SELECT count(*) FROM dk_audit_claims), \
               (SELECT count(DISTINCT node) FROM dk_audit_w), (SELECT count(*) FROM dk_audit_leases)";
    match rows(url, sql) {
        Ok(rows) if !rows.is_empty() => {
            let v: Vec<String> = rows[0].iter().map(|c| c.clone().unwrap_or_default()).collect();
            format!(
                "audit: {} rows written, {} claims, {} writer nodes, {} lease rows",
                v[0], v[1], v[2], v[3]
            )
        }
        other => format!("audit summary unavailable: {other:?}"),
    }
}

/// How many writes `nodes` (a paused member's) committed after `after_sql` (an SQL
/// timestamp expression).
pub fn writes_after(url: &str, nodes: &[String], after_sql: &str) -> u64 {
    if nodes.is_empty() {
        return 0;
    }
    let list: Vec<String> = nodes.iter().map(|n| format!("'{n}'")).collect();
    let sql = format!(
        "SELECT count(*) FROM dk_audit_w WHERE node IN ({}) AND committed > {after_sql}",
        list.join(", ")
    );
    rows(url, &sql).ok().and_then(|r| r.first()?.first()?.clone()?.parse().ok()).unwrap_or(0)
}

/// The command rows: each ended `done` or `failed` (a failure with its reason), and none was
/// finished twice (by a holder and again by a later one).
pub fn command_violations(url: &str) -> Vec<String> {
    let queries = [
        (
            "a command that never ended",
            "SELECT id::text, owner, kind, state, coalesce(claimed_by, '') FROM dk_commands \
             WHERE state NOT IN ('done', 'failed') LIMIT 20",
        ),
        (
            "a failed command without a reason",
            "SELECT id::text, owner, kind FROM dk_commands \
             WHERE state = 'failed' AND coalesce(error, '') = '' LIMIT 20",
        ),
        (
            "a command finished twice",
            "SELECT id::text, string_agg(state || ' by ' || coalesce(claimed_by, '?') || '/' || \
                    coalesce(fence::text, '?'), ', ') FROM dk_audit_commands \
             WHERE state IN ('done', 'failed') GROUP BY id HAVING count(*) > 1 LIMIT 20",
        ),
    ];
    contradictions(url, queries.map(|(what, sql)| (what, sql.to_owned())))
}

/// Each row `queries` find, as `what: the row's columns`; a failed query is one too.
fn contradictions(
    url: &str,
    queries: impl IntoIterator<Item = (&'static str, String)>,
) -> Vec<String> {
    let mut found = Vec::new();
    for (what, sql) in queries {
        match rows(url, &sql) {
            Ok(rows) => found.extend(rows.into_iter().map(|row| {
                let row: Vec<String> = row.into_iter().map(Option::unwrap_or_default).collect();
                format!("{what}: {}", row.join(" | "))
            })),
            Err(e) => found.push(format!("the audit query for {what} failed: {e}")),
        }
    }
    found
}

/// The command rows by kind and end, and how many were claimed more than once (a holder died,
/// or could not record the outcome, while running them).
pub fn command_summary(url: &str) -> String {
    let sql = "SELECT kind || ' ' || state || ' ' || count(*) FROM dk_commands \
               GROUP BY kind, state ORDER BY kind, state";
    let ends: Vec<String> =
        rows(url, sql).unwrap_or_default().into_iter().filter_map(|r| r[0].clone()).collect();
    let sql = "SELECT count(*) FROM (SELECT id FROM dk_audit_commands WHERE state = 'running' \
               GROUP BY id HAVING count(*) > 1) r";
    let reclaimed = rows(url, sql)
        .ok()
        .and_then(|r| r.first()?.first()?.clone())
        .unwrap_or_else(|| "?".to_owned());
    format!("commands: {}; {reclaimed} claimed more than once", ends.join(", "))
}
