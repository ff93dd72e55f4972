//! The SQLite schema, versioned with `PRAGMA user_version`.

use std::collections::HashMap;

use depositkit_core::U256;
use rusqlite::{Connection, TransactionBehavior, params};

use crate::error::{Error, Result};

/// The schema version this build writes and reads. Older files (versions 1 to 3) are upgraded
/// in place.
pub const SCHEMA_VERSION: i64 = 4;

/// Version 1: the user-lookup tables (depositkit-server's SQLite tables; timestamps are
/// milliseconds since the Unix epoch, secrets SHA-256 hashes) and `meta`.
const META_V1: &str = "
CREATE TABLE meta (
    key             TEXT PRIMARY KEY,
    value           TEXT NOT NULL
);
";

/// Creates the tables of version 1.
fn create_v1(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(depositkit_server::store::sqlite::schema::TABLES)?;
    conn.execute_batch(META_V1)
}

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

/// Version 3 (applied on top of version 2): refunds and receipts. Quotes get a `purpose`
/// (`sweep` or `refund`) and the caller's `deposit_id`; the history is rebuilt (SQLite cannot
/// change a CHECK constraint in place) to allow the `refund` tag, to carry `deposit_id`, and to
/// record on every `receive` the account's cumulative `received` before and after it
/// (`received_before`, `received_after`: the receipts of `GET /ua/v1/receipts`; filled for
/// existing rows by [`backfill_received`]). A transfer from an account to its own deposit address
/// is both a `sweep` and a `receive` with the same id, hence the unique key with `tag`.
const SCHEMA_V3: &str = "
ALTER TABLE ua_quotes ADD COLUMN purpose TEXT NOT NULL DEFAULT 'sweep'
    CHECK (purpose IN ('sweep', 'refund'));
ALTER TABLE ua_quotes ADD COLUMN deposit_id TEXT;
CREATE TABLE ua_transactions_v3 (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL,
    account_id      TEXT NOT NULL REFERENCES ua_accounts(id) ON DELETE CASCADE,
    tag             TEXT NOT NULL CHECK (tag IN ('receive', 'sweep', 'refund')),
    status          INTEGER NOT NULL,
    chain_id        INTEGER NOT NULL,
    token           TEXT NOT NULL,
    raw_amount      TEXT NOT NULL,
    price_usd       REAL NOT NULL,
    from_address    TEXT,
    to_address      TEXT NOT NULL,
    to_chain_id     INTEGER NOT NULL,
    quote_id        TEXT,
    deposit_id      TEXT,
    received_before TEXT,
    received_after  TEXT,
    created_at      INTEGER NOT NULL,
    UNIQUE (account_id, id, tag)
);
INSERT INTO ua_transactions_v3 (seq, id, account_id, tag, status, chain_id, token, raw_amount,
        price_usd, from_address, to_address, to_chain_id, quote_id, created_at)
    SELECT seq, id, account_id, tag, status, chain_id, token, raw_amount, price_usd, from_address,
           to_address, to_chain_id, quote_id, created_at
    FROM ua_transactions ORDER BY seq;
DROP TABLE ua_transactions;
ALTER TABLE ua_transactions_v3 RENAME TO ua_transactions;
CREATE INDEX ua_transactions_by_account ON ua_transactions(account_id, seq);
CREATE INDEX ua_transactions_by_token ON ua_transactions(account_id, chain_id, token, seq);
";

/// Version 4 (applied on top of version 3): the chain-backed mode (`docs/funding.md` §2).
///
/// - `ua_sweeps.source_tx_hash`: the collection transaction of a sweep or refund whose source is
///   a chain-backed chain.
/// - `chain_lines`: per account, chain and token of a chain-backed chain, what turns the chain's
///   balance into the cumulative `received`: `received = max(received, base + balance +
///   collected + gas_paid − gas_sent)`. `base` is the line's ledger `received` when chain
///   observation started (zero for new lines); `collected` what sweeps and refunds moved out of
///   the deposit address; `gas_paid` (native line) the fees the address paid; `gas_sent` (native
///   line) the gas devnet sent it; `scanned_block` (EVM tokens) the last block whose `Transfer`
///   logs to the address were read.
/// - `chain_legs`: the transactions of a sweep or refund in flight — `gas` (vault → deposit
///   address), `collect` (deposit address → vault), `deliver` (vault → receiver) — each stored
///   signed before it is broadcast (`state` `signed`), then `done` or `failed` once its receipt is
///   known, with the line changes applied in the same transaction. A repeated send resumes from
///   them instead of paying twice.
const SCHEMA_V4: &str = "
ALTER TABLE ua_sweeps ADD COLUMN source_tx_hash TEXT;
CREATE TABLE chain_lines (
    account_id      TEXT NOT NULL REFERENCES ua_accounts(id) ON DELETE CASCADE,
    chain_id        INTEGER NOT NULL,
    token           TEXT NOT NULL,
    base            TEXT NOT NULL,
    collected       TEXT NOT NULL,
    gas_paid        TEXT NOT NULL,
    gas_sent        TEXT NOT NULL,
    scanned_block   INTEGER,
    PRIMARY KEY (account_id, chain_id, token)
);
CREATE TABLE chain_legs (
    quote_id        TEXT NOT NULL REFERENCES ua_quotes(id) ON DELETE CASCADE,
    leg             TEXT NOT NULL CHECK (leg IN ('gas', 'collect', 'deliver')),
    chain_id        INTEGER NOT NULL,
    tx_hash         TEXT NOT NULL,
    raw_tx          BLOB NOT NULL,
    amount          TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('signed', 'done', 'failed')),
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (quote_id, leg)
);
";

/// Sets the per-connection pragmas and creates (or checks) the schema.
pub(crate) fn prepare(conn: &mut Connection) -> Result<()> {
    depositkit_server::store::sqlite::schema::pragmas(conn)?;

    if user_version(conn)? == SCHEMA_VERSION {
        return Ok(());
    }
    // Re-check under a write lock: another process may be creating the schema right now.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = user_version(&tx)?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    if !(0..SCHEMA_VERSION).contains(&found) {
        return Err(Error::SchemaVersion {
            database: format!("sqlite://{}", tx.path().unwrap_or("")),
            schema: "devnet",
            found,
            expected: SCHEMA_VERSION,
        });
    }
    if found < 1 {
        create_v1(&tx)?;
    }
    if found < 2 {
        tx.execute_batch(SCHEMA_V2)?;
    }
    if found < 3 {
        tx.execute_batch(SCHEMA_V3)?;
        backfill_received(&tx)?;
    }
    if found < 4 {
        tx.execute_batch(SCHEMA_V4)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(())
}

/// Fills `received_before` and `received_after` of the `receive` rows written before version 3.
/// Until then every increase of an account's `received` was exactly one `receive` of the same
/// amount, so running totals in history order give the offsets.
fn backfill_received(conn: &Connection) -> Result<()> {
    let mut select = conn.prepare(
        "SELECT seq, account_id, chain_id, token, raw_amount FROM ua_transactions
         WHERE tag = 'receive' AND received_after IS NULL ORDER BY seq",
    )?;
    let rows = select
        .query_map([], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                (row.get::<_, String>(1)?, row.get::<_, i64>(2)?, row.get::<_, String>(3)?),
                row.get::<_, String>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut update = conn.prepare(
        "UPDATE ua_transactions SET received_before = ?2, received_after = ?3 WHERE seq = ?1",
    )?;
    let mut totals: HashMap<(String, i64, String), U256> = HashMap::new();
    for (seq, line, raw) in rows {
        let raw = U256::from_str_radix(&raw, 10).map_err(|e| {
            Error::invalid(
                "ua_transactions.raw_amount",
                format!("row {seq}: {}: {e}", crate::describe::quote(&raw)),
            )
        })?;
        let before = totals.get(&line).copied().unwrap_or(U256::ZERO);
        let after = before.saturating_add(raw);
        update.execute(params![seq, before.to_string(), after.to_string()])?;
        totals.insert(line, after);
    }
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
        assert!(
            matches!(err, Error::SchemaVersion { found: 7, expected: SCHEMA_VERSION, .. }),
            "{err}"
        );
    }

    #[test]
    fn version_2_files_are_upgraded_with_their_data() {
        use depositkit_core::TokenType;

        use crate::store::test_support::TempDb;
        use crate::store::{Credit, Purpose, QuoteRecord, Store, SweepOutcome, SweepPlan};

        let db = TempDb::new();
        let evm = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
        let sol = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
        {
            // A file as a version 2 devnet left it.
            let conn = Connection::open(&db.0).unwrap();
            create_v1(&conn).unwrap();
            conn.execute_batch(SCHEMA_V2).unwrap();
            conn.pragma_update(None, "user_version", 2).unwrap();
            conn.execute_batch(&format!(
                "INSERT INTO meta (key, value) VALUES ('demo', 'kept');
                 INSERT INTO ua_accounts VALUES ('acc_1', '0xowner', '{evm}', '{}', '{sol}', 1);
                 INSERT INTO ua_balances VALUES ('acc_1', 8453, 'USDC', '15', '30');
                 INSERT INTO ua_balances VALUES ('acc_1', 8453, 'ETH', '7', '7');
                 INSERT INTO ledger VALUES ('0xdest', 42161, 'USDC', '14');
                 INSERT INTO ua_quotes VALUES ('q_1', 'acc_1', '0x01', 8453, 'USDC', '15', 1.0,
                     42161, 'USDC', '0xDest', '14', 1.0, '{{}}', 99, 2);
                 INSERT INTO ua_sweeps VALUES ('q_1', '0xt3', 'success', NULL, 'https://x/0xt3',
                     '14', 3);
                 INSERT INTO ua_transactions (id, account_id, tag, status, chain_id, token,
                     raw_amount, price_usd, from_address, to_address, to_chain_id, quote_id,
                     created_at) VALUES
                     ('0xt1', 'acc_1', 'receive', 1, 8453, 'USDC', '10', 1.0, '0xs1', '{evm}',
                      8453, NULL, 10),
                     ('0xt2', 'acc_1', 'receive', 1, 8453, 'USDC', '20', 1.0, NULL, '{evm}',
                      8453, NULL, 20),
                     ('0xt3', 'acc_1', 'sweep', 1, 8453, 'USDC', '15', 1.0, '{evm}', '0xDest',
                      42161, 'q_1', 30),
                     ('0xt4', 'acc_1', 'receive', 1, 8453, 'ETH', '7', 2500.0, '0xs4', '{evm}',
                      8453, NULL, 40);",
                evm.to_ascii_lowercase()
            ))
            .unwrap();
        }

        let store = Store::open(&db.0).unwrap();
        {
            let conn = Connection::open(&db.0).unwrap();
            assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        }
        assert_eq!(store.meta("demo").unwrap().as_deref(), Some("kept"));
        let lines = store.ua_balances("acc_1").unwrap();
        assert_eq!(lines.len(), 2);
        let usdc = lines.iter().find(|l| l.token == TokenType::USDC).unwrap();
        assert_eq!((usdc.raw_amount, usdc.received), (U256::from(15u64), U256::from(30u64)));
        assert_eq!(
            store.ledger_amount("0xDEST", 42161, TokenType::USDC).unwrap(),
            U256::from(14u64)
        );
        let quote = store.quote("q_1").unwrap().unwrap();
        assert_eq!((quote.purpose, quote.deposit_id.as_deref()), (Purpose::Sweep, None));
        assert_eq!((quote.dst_address.as_str(), quote.dst_raw), ("0xDest", U256::from(14u64)));
        let sweep = store.sweep("q_1").unwrap().unwrap();
        assert_eq!((sweep.transaction_id.as_str(), sweep.delivered), ("0xt3", U256::from(14u64)));
        let history = store.ua_transactions("acc_1", 1, 10).unwrap();
        let ids: Vec<&str> = history.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["0xt4", "0xt3", "0xt2", "0xt1"]);
        assert_eq!(history[1].quote_id.as_deref(), Some("q_1"));
        assert_eq!(history[1].received, None);

        // The receipts of the old deposits were rebuilt from the history, per line.
        let all = store.ua_receipts("acc_1", 8453, TokenType::USDC, U256::ZERO, U256::from(30u64));
        let offsets: Vec<(String, Option<String>, u64, u64)> = all
            .unwrap()
            .into_iter()
            .map(|r| (r.tx_hash, r.sender, r.received_before.to(), r.received_after.to()))
            .collect();
        assert_eq!(
            offsets,
            [("0xt1".into(), Some("0xs1".into()), 0, 10), ("0xt2".into(), None, 10, 30)]
        );
        let eth = store.ua_receipts("acc_1", 8453, TokenType::ETH, U256::ZERO, U256::ONE).unwrap();
        assert_eq!((eth.len(), eth[0].received_after), (1, U256::from(7u64)));

        // New transfers continue the ranges and the numbering; refunds can be recorded.
        let credit = Credit {
            address: evm,
            chain_id: 8453,
            token: TokenType::USDC,
            raw_amount: U256::from(5u64),
            sender: Some("0xs5"),
            price_usd: 1.0,
        };
        store.credit(&credit).unwrap();
        let latest = &store.ua_transactions("acc_1", 1, 1).unwrap()[0];
        assert_eq!(latest.received, Some((U256::from(30u64), U256::from(35u64))));
        let refund = QuoteRecord {
            id: "q_2".into(),
            purpose: Purpose::Refund,
            deposit_id: Some("dep_1".into()),
            dst_chain_id: 8453,
            dst_address: "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB".into(),
            ..quote
        };
        store.insert_quote(&refund).unwrap();
        let plan = SweepPlan::Deliver { transaction_id: "0xt6".into(), explorer_url: None };
        assert!(matches!(
            store.execute_sweep(&refund, &plan, 60).unwrap(),
            SweepOutcome::Executed(_)
        ));
        let latest = &store.ua_transactions("acc_1", 1, 1).unwrap()[0];
        assert_eq!((latest.tag.as_str(), latest.deposit_id.as_deref()), ("refund", Some("dep_1")));
        assert_eq!(store.quote("q_2").unwrap().unwrap().purpose, Purpose::Refund);
        drop(store);

        // Opening it again changes nothing.
        let store = Store::open(&db.0).unwrap();
        assert_eq!(store.ua_transactions("acc_1", 1, 10).unwrap().len(), 6);
    }

    #[test]
    fn version_3_files_are_upgraded_for_the_chains() {
        use crate::store::test_support::TempDb;
        use crate::store::{LegKind, Store};

        let db = TempDb::new();
        {
            // A file as a version 3 devnet left it, with one sweep.
            let mut conn = Connection::open(&db.0).unwrap();
            let tx = conn.transaction().unwrap();
            create_v1(&tx).unwrap();
            tx.execute_batch(SCHEMA_V2).unwrap();
            tx.execute_batch(SCHEMA_V3).unwrap();
            tx.execute_batch(
                "INSERT INTO ua_accounts VALUES ('acc_1', '0xowner', '0xA', '0xa', 'S', 1);
                 INSERT INTO ua_quotes (id, account_id, root_hash, src_chain_id, src_token,
                     src_raw, src_price_usd, dst_chain_id, dst_token, dst_address, dst_raw,
                     dst_price_usd, body, expires_at, created_at)
                     VALUES ('q_1', 'acc_1', '0x01', 8453, 'USDC', '15', 1.0, 42161, 'USDC',
                     '0xDest', '14', 1.0, '{}', 99, 2);
                 INSERT INTO ua_sweeps VALUES ('q_1', '0xt3', 'success', NULL, NULL, '14', 3);",
            )
            .unwrap();
            tx.pragma_update(None, "user_version", 3).unwrap();
            tx.commit().unwrap();
        }
        let store = Store::open(&db.0).unwrap();
        let sweep = store.sweep("q_1").unwrap().unwrap();
        assert_eq!((sweep.transaction_id.as_str(), sweep.source_tx_hash), ("0xt3", None));
        assert!(store.chain_legs("q_1").unwrap().iter().all(|l| l.kind != LegKind::Gas));
        assert!(store.chain_line("acc_1", 8453, depositkit_core::TokenType::USDC).is_ok());
        let conn = Connection::open(&db.0).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn version_1_files_are_upgraded() {
        let mut conn = Connection::open_in_memory().unwrap();
        create_v1(&conn).unwrap();
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
