//! Universal accounts and the money they hold: accounts with their deposit addresses, balance
//! lines (`rawAmount` and the cumulative `received`), the ledger of every other address, and the
//! transaction history. Crediting an address is one function used by deposits and sweeps alike:
//! money sent to an account's deposit address is a deposit into that account.

use std::collections::HashMap;

use depositkit_core::{AddressType, TokenType, U256, get_address_type};
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Store;
use crate::error::{Error, Result};
use crate::time;

/// A universal account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UaAccount {
    /// `acc_` + 24 hex digits.
    pub id: String,
    /// The owner (the intermediary wallet), lower-case.
    pub owner: String,
    /// EVM deposit address, EIP-55.
    pub evm_address: String,
    /// Solana deposit address, base58.
    pub solana_address: String,
}

impl UaAccount {
    /// The deposit address of the account on `chain_id`.
    pub fn deposit_address(&self, chain_id: u64) -> &str {
        match get_address_type(chain_id) {
            AddressType::Solana => &self.solana_address,
            AddressType::Evm => &self.evm_address,
        }
    }
}

/// One balance line of an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceLine {
    pub chain_id: u64,
    pub token: TokenType,
    /// What the account holds now.
    pub raw_amount: U256,
    /// Everything ever deposited from outside; never decreases.
    pub received: U256,
}

/// Money arriving at an address.
#[derive(Debug, Clone)]
pub struct Credit<'a> {
    /// The receiving address (already validated for `chain_id`).
    pub address: &'a str,
    pub chain_id: u64,
    pub token: TokenType,
    pub raw_amount: U256,
    /// The sender, when known.
    pub sender: Option<&'a str>,
    /// The token's USD price at the time, for the history.
    pub price_usd: f64,
}

/// Where a credit went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credited {
    /// Transaction hash of the transfer.
    pub tx_hash: String,
    /// The account whose deposit address received it; `None` for any other address.
    pub account_id: Option<String>,
}

/// One entry of an account's history.
#[derive(Debug, Clone, PartialEq)]
pub struct TxRecord {
    pub id: String,
    /// `receive`, `sweep` or `refund`.
    pub tag: String,
    /// 1 success, 0 pending, -1 failed.
    pub status: i64,
    pub chain_id: u64,
    pub token: TokenType,
    /// What left (sweep) or reached (receive) the account.
    pub raw_amount: U256,
    pub price_usd: f64,
    pub from_address: Option<String>,
    pub to_address: String,
    pub to_chain_id: u64,
    pub quote_id: Option<String>,
    /// The caller's `depositId` of the quote (sweeps and refunds).
    pub deposit_id: Option<String>,
    /// For a `receive`: the line's cumulative `received` before and after it.
    pub received: Option<(U256, U256)>,
    pub created_at: i64,
}

/// One incoming transfer of an account: what `GET /ua/v1/receipts` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The transfer's transaction hash.
    pub tx_hash: String,
    /// The sender, when known.
    pub sender: Option<String>,
    pub raw_amount: U256,
    /// The line's cumulative `received` before the transfer.
    pub received_before: U256,
    /// … and after it (`received_before + raw_amount`).
    pub received_after: U256,
    /// Unix milliseconds.
    pub timestamp: i64,
}

/// The columns [`tx_row`] reads, in order.
pub(super) const TX_COLUMNS: &str = "id, tag, status, chain_id, token, raw_amount, price_usd, \
     from_address, to_address, to_chain_id, quote_id, deposit_id, received_before, \
     received_after, created_at";
/// How many columns [`TX_COLUMNS`] names.
pub(super) const TX_COLUMN_COUNT: usize = 15;

impl Store {
    /// The account `id`.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_account(&self, id: &str) -> Result<Option<UaAccount>> {
        account_by_id(&self.conn(), id)
    }

    /// The accounts among `ids`.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_accounts(&self, ids: &[String]) -> Result<HashMap<String, UaAccount>> {
        // One statement, so one read transaction, for a whole poll's accounts: a statement per
        // id was a read transaction each (its WAL-index locks), most of a poll's cost here.
        let ids = json_list(ids)?;
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, owner, evm_address, solana_address FROM ua_accounts
             WHERE id IN (SELECT value FROM json_each(?1))",
        )?;
        let found = stmt
            .query_map([ids], account_row)?
            .map(|account| account.map(|a| (a.id.clone(), a)))
            .collect::<rusqlite::Result<HashMap<_, _>>>()?;
        Ok(found)
    }

    /// Stores `account` unless its owner already has one; returns the owner's account.
    ///
    /// # Errors
    /// Database failures.
    pub fn insert_ua_account(&self, account: &UaAccount) -> Result<UaAccount> {
        let conn = self.conn();
        // A new owner (the common case when thousands start) is one cached statement; an owner
        // already stored inserts nothing, returns no row, and is read as it was stored.
        let inserted = conn
            .prepare_cached(
                "INSERT OR IGNORE INTO ua_accounts
                     (id, owner, evm_address, evm_key, solana_address, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 RETURNING id, owner, evm_address, solana_address",
            )?
            .query_row(
                params![
                    account.id,
                    account.owner,
                    account.evm_address,
                    account.evm_address.to_ascii_lowercase(),
                    account.solana_address,
                    time::now_ms()
                ],
                account_row,
            )
            .optional()?;
        match inserted {
            Some(account) => Ok(account),
            None => Ok(conn
                .prepare_cached(
                    "SELECT id, owner, evm_address, solana_address FROM ua_accounts
                     WHERE owner = ?1",
                )?
                .query_row([&account.owner], account_row)?),
        }
    }

    /// The balance lines of `account_id`, by chain id then token.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_balances(&self, account_id: &str) -> Result<Vec<BalanceLine>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT chain_id, token, raw_amount, received FROM ua_balances
             WHERE account_id = ?1 ORDER BY chain_id, token",
        )?;
        let lines = stmt
            .query_map([account_id], |row| balance_line_at(row, 0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(lines)
    }

    /// The balance lines of each of `account_ids` (by chain id then token; an account without
    /// lines is absent): one statement for a whole batch of polled accounts, where
    /// [`ua_balances`](Self::ua_balances) per account cost a statement and a connection each.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_balances_of(
        &self,
        account_ids: &[impl AsRef<str>],
    ) -> Result<HashMap<String, Vec<BalanceLine>>> {
        let ids = json_list(account_ids)?;
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT account_id, chain_id, token, raw_amount, received FROM ua_balances
             WHERE account_id IN (SELECT value FROM json_each(?1))
             ORDER BY account_id, chain_id, token",
        )?;
        let mut rows = stmt.query([ids])?;
        let mut lines: HashMap<String, Vec<BalanceLine>> = HashMap::new();
        while let Some(row) = rows.next()? {
            let account_id: String = row.get(0)?;
            lines.entry(account_id).or_default().push(balance_line_at(row, 1)?);
        }
        Ok(lines)
    }

    /// Credits `credit` in one transaction: to the account owning the address (raising
    /// `rawAmount` and `received`, recorded as a `receive`), or else to the address's ledger.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when the balance would pass 2^256 − 1; database failures.
    pub fn credit(&self, credit: &Credit<'_>) -> Result<Credited> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let tx_hash = new_tx_hash();
        let account_id = credit_in(&tx, credit, &tx_hash, time::now_ms())?;
        tx.commit()?;
        Ok(Credited { tx_hash, account_id })
    }

    /// What `address` holds of `token` on `chain_id`: an account's `rawAmount` for a deposit
    /// address, else the ledger's amount (zero when nothing ever arrived).
    ///
    /// # Errors
    /// Database failures.
    pub fn ledger_amount(&self, address: &str, chain_id: u64, token: TokenType) -> Result<U256> {
        let conn = self.conn();
        if let Some(account) = account_by_deposit_address(&conn, address, chain_id)? {
            return Ok(balance_in(&conn, &account.id, chain_id, token)?.0);
        }
        let amount = conn
            .query_row(
                "SELECT raw_amount FROM ledger WHERE address = ?1 AND chain_id = ?2 AND token = ?3",
                params![ledger_key(address, chain_id), chain_id_sql(chain_id), token.symbol()],
                |row| amount_at(row, 0),
            )
            .optional()?;
        Ok(amount.unwrap_or(U256::ZERO))
    }

    /// The account owning the deposit `address` of `chain_id`'s family.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_account_by_deposit_address(
        &self,
        address: &str,
        chain_id: u64,
    ) -> Result<Option<UaAccount>> {
        account_by_deposit_address(&self.conn(), address, chain_id)
    }

    /// Page `page` (from 1) of `account_id`'s history, newest first.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_transactions(
        &self,
        account_id: &str,
        page: u32,
        page_size: u32,
    ) -> Result<Vec<TxRecord>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {TX_COLUMNS} FROM ua_transactions
             WHERE account_id = ?1 ORDER BY seq DESC LIMIT ?2 OFFSET ?3"
        ))?;
        let offset = i64::from(page.saturating_sub(1)) * i64::from(page_size);
        let records = stmt
            .query_map(params![account_id, page_size, offset], tx_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(records)
    }
}

/// A new random transaction hash (`0x` + 64 hex digits).
pub(crate) fn new_tx_hash() -> String {
    format!("0x{}", alloy_primitives::hex::encode(rand::random::<[u8; 32]>()))
}

/// See [`Store::credit`]; runs inside the caller's transaction. Returns the credited account.
pub(super) fn credit_in(
    conn: &Connection,
    credit: &Credit<'_>,
    tx_hash: &str,
    now: i64,
) -> Result<Option<String>> {
    let chain = chain_id_sql(credit.chain_id);
    let Some(account) = account_by_deposit_address(conn, credit.address, credit.chain_id)? else {
        let key = ledger_key(credit.address, credit.chain_id);
        let held = conn
            .query_row(
                "SELECT raw_amount FROM ledger WHERE address = ?1 AND chain_id = ?2 AND token = ?3",
                params![key, chain, credit.token.symbol()],
                |row| amount_at(row, 0),
            )
            .optional()?
            .unwrap_or(U256::ZERO);
        let total = add(held, credit.raw_amount)?;
        conn.execute(
            "INSERT INTO ledger (address, chain_id, token, raw_amount) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (address, chain_id, token) DO UPDATE SET raw_amount = excluded.raw_amount",
            params![key, chain, credit.token.symbol(), total.to_string()],
        )?;
        return Ok(None);
    };
    let (raw, received_before) = balance_in(conn, &account.id, credit.chain_id, credit.token)?;
    let raw = add(raw, credit.raw_amount)?;
    let received = add(received_before, credit.raw_amount)?;
    conn.execute(
        "INSERT INTO ua_balances (account_id, chain_id, token, raw_amount, received)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (account_id, chain_id, token)
         DO UPDATE SET raw_amount = excluded.raw_amount, received = excluded.received",
        params![account.id, chain, credit.token.symbol(), raw.to_string(), received.to_string()],
    )?;
    insert_tx(
        conn,
        &TxRecord {
            id: tx_hash.to_owned(),
            tag: "receive".into(),
            status: 1,
            chain_id: credit.chain_id,
            token: credit.token,
            raw_amount: credit.raw_amount,
            price_usd: credit.price_usd,
            from_address: credit.sender.map(str::to_owned),
            to_address: account.deposit_address(credit.chain_id).to_owned(),
            to_chain_id: credit.chain_id,
            quote_id: None,
            deposit_id: None,
            received: Some((received_before, received)),
            created_at: now,
        },
        &account.id,
    )?;
    Ok(Some(account.id))
}

/// `rawAmount` and `received` of one balance line (zeros when there is none).
pub(super) fn balance_in(
    conn: &Connection,
    account_id: &str,
    chain_id: u64,
    token: TokenType,
) -> Result<(U256, U256)> {
    let line = conn
        .query_row(
            "SELECT raw_amount, received FROM ua_balances
             WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3",
            params![account_id, chain_id_sql(chain_id), token.symbol()],
            |row| Ok((amount_at(row, 0)?, amount_at(row, 1)?)),
        )
        .optional()?;
    Ok(line.unwrap_or((U256::ZERO, U256::ZERO)))
}

/// Sets `rawAmount` of an existing balance line (`received` is left alone).
pub(super) fn set_raw_amount(
    conn: &Connection,
    account_id: &str,
    chain_id: u64,
    token: TokenType,
    raw_amount: U256,
) -> Result<()> {
    conn.execute(
        "UPDATE ua_balances SET raw_amount = ?4
         WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3",
        params![account_id, chain_id_sql(chain_id), token.symbol(), raw_amount.to_string()],
    )?;
    Ok(())
}

/// Appends `record` to the history of `account_id`.
pub(super) fn insert_tx(conn: &Connection, record: &TxRecord, account_id: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO ua_transactions (id, account_id, tag, status, chain_id, token, raw_amount,
             price_usd, from_address, to_address, to_chain_id, quote_id, deposit_id,
             received_before, received_after, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        params![
            record.id,
            account_id,
            record.tag,
            record.status,
            chain_id_sql(record.chain_id),
            record.token.symbol(),
            record.raw_amount.to_string(),
            record.price_usd,
            record.from_address,
            record.to_address,
            chain_id_sql(record.to_chain_id),
            record.quote_id,
            record.deposit_id,
            record.received.map(|(before, _)| before.to_string()),
            record.received.map(|(_, after)| after.to_string()),
            record.created_at
        ],
    )?;
    Ok(())
}

/// A history row of [`TX_COLUMNS`].
pub(super) fn tx_row(row: &Row<'_>) -> rusqlite::Result<TxRecord> {
    let before: Option<String> = row.get(12)?;
    let received = match before {
        Some(_) => Some((amount_at(row, 12)?, amount_at(row, 13)?)),
        None => None,
    };
    Ok(TxRecord {
        id: row.get(0)?,
        tag: row.get(1)?,
        status: row.get(2)?,
        chain_id: chain_id_at(row, 3)?,
        token: token_at(row, 4)?,
        raw_amount: amount_at(row, 5)?,
        price_usd: row.get(6)?,
        from_address: row.get(7)?,
        to_address: row.get(8)?,
        to_chain_id: chain_id_at(row, 9)?,
        quote_id: row.get(10)?,
        deposit_id: row.get(11)?,
        received,
        created_at: row.get(14)?,
    })
}

pub(super) fn account_by_id(conn: &Connection, id: &str) -> Result<Option<UaAccount>> {
    Ok(conn
        .query_row(
            "SELECT id, owner, evm_address, solana_address FROM ua_accounts WHERE id = ?1",
            [id],
            account_row,
        )
        .optional()?)
}

pub(super) fn account_by_deposit_address(
    conn: &Connection,
    address: &str,
    chain_id: u64,
) -> Result<Option<UaAccount>> {
    let sql = match get_address_type(chain_id) {
        AddressType::Solana => {
            "SELECT id, owner, evm_address, solana_address FROM ua_accounts
             WHERE solana_address = ?1"
        }
        AddressType::Evm => {
            "SELECT id, owner, evm_address, solana_address FROM ua_accounts WHERE evm_key = ?1"
        }
    };
    Ok(conn.query_row(sql, [ledger_key(address, chain_id)], account_row).optional()?)
}

/// How an address is keyed: EVM addresses lower-cased, Solana addresses as they are.
pub(super) fn ledger_key(address: &str, chain_id: u64) -> String {
    match get_address_type(chain_id) {
        AddressType::Solana => address.to_owned(),
        AddressType::Evm => address.to_ascii_lowercase(),
    }
}

fn add(a: U256, b: U256) -> Result<U256> {
    a.checked_add(b)
        .ok_or_else(|| Error::invalid("rawAmount", "the balance would exceed 2^256 - 1"))
}

/// `ids` as a JSON array: the one parameter of a statement over many ids (`json_each(?1)`).
fn json_list(ids: &[impl AsRef<str>]) -> Result<String> {
    let ids: Vec<&str> = ids.iter().map(AsRef::as_ref).collect();
    serde_json::to_string(&ids)
        .map_err(|e| crate::error::Error::invalid("account ids", e.to_string()))
}

/// The balance line in the columns `chain_id, token, raw_amount, received` from `first` on.
fn balance_line_at(row: &Row<'_>, first: usize) -> rusqlite::Result<BalanceLine> {
    Ok(BalanceLine {
        chain_id: chain_id_at(row, first)?,
        token: token_at(row, first + 1)?,
        raw_amount: amount_at(row, first + 2)?,
        received: amount_at(row, first + 3)?,
    })
}

fn account_row(row: &Row<'_>) -> rusqlite::Result<UaAccount> {
    Ok(UaAccount {
        id: row.get(0)?,
        owner: row.get(1)?,
        evm_address: row.get(2)?,
        solana_address: row.get(3)?,
    })
}

/// Chain ids are small; SQLite stores them as signed integers.
pub(super) fn chain_id_sql(chain_id: u64) -> i64 {
    i64::try_from(chain_id).unwrap_or(i64::MAX)
}

pub(super) fn chain_id_at(row: &Row<'_>, index: usize) -> rusqlite::Result<u64> {
    let id: i64 = row.get(index)?;
    u64::try_from(id)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, Type::Integer, e.into()))
}

pub(super) fn token_at(row: &Row<'_>, index: usize) -> rusqlite::Result<TokenType> {
    let text: String = row.get(index)?;
    text.parse::<TokenType>()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, Type::Text, e.into()))
}

pub(super) fn amount_at(row: &Row<'_>, index: usize) -> rusqlite::Result<U256> {
    let text: String = row.get(index)?;
    U256::from_str_radix(&text, 10)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, Type::Text, e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{TempDb, ua_account as account};

    #[test]
    fn credits_go_to_accounts_or_the_ledger() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let acc = store.insert_ua_account(&account()).unwrap();
        // A second insert for the same owner returns the first account.
        let other = UaAccount { id: "acc_2".into(), ..account() };
        assert_eq!(store.insert_ua_account(&other).unwrap().id, "acc_1");

        let credit = Credit {
            address: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
            chain_id: 8453,
            token: TokenType::USDC,
            raw_amount: U256::from(5u64),
            sender: Some("0xsender"),
            price_usd: 1.0,
        };
        assert_eq!(store.credit(&credit).unwrap().account_id.as_deref(), Some("acc_1"));
        store.credit(&credit).unwrap();
        let lines = store.ua_balances(&acc.id).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(
            (lines[0].raw_amount, lines[0].received),
            (U256::from(10u64), U256::from(10u64))
        );
        let history = store.ua_transactions(&acc.id, 1, 10).unwrap();
        assert_eq!(history.len(), 2);
        assert_eq!(history[0].from_address.as_deref(), Some("0xsender"));
        assert_eq!(history[0].to_address, acc.evm_address);

        // The Solana address is case-sensitive; anything else lands in the ledger.
        let sol = Credit {
            address: "epjfwdd5aufqssqem2qn1xzybapc8g4wegGkZwyTDt1v",
            chain_id: 101,
            ..credit
        };
        assert_eq!(store.credit(&sol).unwrap().account_id, None);
        assert_eq!(
            store.ledger_amount(sol.address, 101, TokenType::USDC).unwrap(),
            U256::from(5u64)
        );
        assert_eq!(
            store.ledger_amount(&acc.evm_address, 8453, TokenType::USDC).unwrap(),
            U256::from(10u64)
        );
        assert_eq!(store.ledger_amount(&acc.evm_address, 1, TokenType::USDC).unwrap(), U256::ZERO);
        let huge = Credit { raw_amount: U256::MAX, ..credit };
        assert!(store.credit(&huge).is_err());
        assert_eq!(store.ua_balances(&acc.id).unwrap()[0].raw_amount, U256::from(10u64));
    }
}
