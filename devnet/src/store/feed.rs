//! What devnet's dashboard reads (`crate::dashboard`): the history and the quotes in the order
//! they were written, past a cursor, so that the dashboard can tail them; and every account with
//! its owner, deposit addresses and balances.

use depositkit_core::{TokenType, U256};
use rusqlite::{Row, params};

use super::Store;
use super::accounts::{
    TX_COLUMN_COUNT, TX_COLUMNS, TxRecord, amount_at, chain_id_at, token_at, tx_row,
};
use crate::error::Result;

/// A history entry and, for a sweep or refund, what its send recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    /// The entry's position in the history (increasing).
    pub seq: i64,
    pub account_id: String,
    pub record: TxRecord,
    /// The send's error, for a failed sweep or refund.
    pub error: Option<String>,
    pub explorer_url: Option<String>,
    /// What reached the destination (sweeps and refunds).
    pub delivered: Option<U256>,
    /// The collection transaction, when the source is chain-backed.
    pub source_tx_hash: Option<String>,
}

/// A stored quote: its position among quotes and its answer's body (JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteEntry {
    /// The quote's position among quotes (increasing).
    pub seq: i64,
    pub account_id: String,
    /// The quote's answer, as sent to the client.
    pub body: String,
    /// Unix milliseconds.
    pub created_at: i64,
}

/// An account as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountOverview {
    pub id: String,
    /// The owner address the client asked for (the JWT's user id), when its wallet is known.
    pub owner: Option<String>,
    pub evm_address: String,
    pub solana_address: String,
    /// What the deposit addresses hold: chain, token, held now, received ever.
    pub lines: Vec<(u64, TokenType, U256, U256)>,
    /// What the ledger holds at the addresses the account's quotes deliver to (destinations):
    /// address, chain, token, amount.
    pub destinations: Vec<(String, u64, TokenType, U256)>,
}

impl Store {
    /// Up to `limit` history entries after position `after`, oldest first.
    ///
    /// # Errors
    /// Database failures.
    pub fn history_after(&self, after: i64, limit: u32) -> Result<Vec<HistoryEntry>> {
        let conn = self.conn();
        let columns = TX_COLUMNS.split(", ").map(|c| format!("t.{c}")).collect::<Vec<_>>();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {}, t.seq, t.account_id, s.error, s.explorer_url, s.delivered,
                    s.source_tx_hash
             FROM ua_transactions t
             LEFT JOIN ua_sweeps s ON s.quote_id = t.quote_id AND t.tag != 'receive'
             WHERE t.seq > ?1 ORDER BY t.seq LIMIT ?2",
            columns.join(", ")
        ))?;
        let rows = stmt.query_map(params![after, limit], history_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Up to `limit` quotes after position `after`, oldest first.
    ///
    /// # Errors
    /// Database failures.
    pub fn quotes_after(&self, after: i64, limit: u32) -> Result<Vec<QuoteEntry>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT rowid, account_id, body, created_at FROM ua_quotes
             WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![after, limit], |row| {
            Ok(QuoteEntry {
                seq: row.get(0)?,
                account_id: row.get(1)?,
                body: row.get(2)?,
                created_at: row.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Every account, oldest first, with its owner, balance lines and destinations.
    ///
    /// # Errors
    /// Database failures.
    pub fn accounts_overview(&self) -> Result<Vec<AccountOverview>> {
        let conn = self.conn();
        let mut accounts = conn
            .prepare_cached(
                "SELECT a.id, substr(w.sub, 4), a.evm_address, a.solana_address
                 FROM ua_accounts a
                 LEFT JOIN signer_wallets w ON lower(w.address) = a.owner AND w.sub LIKE 'ua:%'
                 ORDER BY a.created_at, a.id",
            )?
            .query_map([], |row| {
                Ok(AccountOverview {
                    id: row.get(0)?,
                    owner: row.get(1)?,
                    evm_address: row.get(2)?,
                    solana_address: row.get(3)?,
                    lines: Vec::new(),
                    destinations: Vec::new(),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut lines = conn.prepare_cached(
            "SELECT chain_id, token, raw_amount, received FROM ua_balances
             WHERE account_id = ?1 ORDER BY chain_id, token",
        )?;
        // The ledger keys EVM addresses in lower case and Solana addresses as they are.
        let mut destinations = conn.prepare_cached(
            "SELECT l.address, l.chain_id, l.token, l.raw_amount FROM ledger l
             WHERE l.address IN (SELECT dst_address FROM ua_quotes WHERE account_id = ?1
                                 UNION SELECT lower(dst_address) FROM ua_quotes
                                 WHERE account_id = ?1)
             ORDER BY l.address, l.chain_id, l.token",
        )?;
        for account in &mut accounts {
            account.lines = lines
                .query_map([&account.id], |row| {
                    Ok((
                        chain_id_at(row, 0)?,
                        token_at(row, 1)?,
                        amount_at(row, 2)?,
                        amount_at(row, 3)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            account.destinations = destinations
                .query_map([&account.id], |row| {
                    Ok((row.get(0)?, chain_id_at(row, 1)?, token_at(row, 2)?, amount_at(row, 3)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
        }
        Ok(accounts)
    }
}

fn history_row(row: &Row<'_>) -> rusqlite::Result<HistoryEntry> {
    let at = TX_COLUMN_COUNT;
    let delivered: Option<String> = row.get(at + 4)?;
    Ok(HistoryEntry {
        record: tx_row(row)?,
        seq: row.get(at)?,
        account_id: row.get(at + 1)?,
        error: row.get(at + 2)?,
        explorer_url: row.get(at + 3)?,
        delivered: match delivered {
            Some(_) => Some(amount_at(row, at + 4)?),
            None => None,
        },
        source_tx_hash: row.get(at + 5)?,
    })
}
