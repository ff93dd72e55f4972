//! Reading an account's history beyond the plain pages of [`Store::ua_transactions`]: the
//! receipts that make up a range of `received`, one token's transactions by cursor, and one
//! transaction by id.

use depositkit_core::{TokenType, U256};
use rusqlite::{OptionalExtension, params_from_iter};

use super::Store;
use super::accounts::{
    Receipt, TX_COLUMN_COUNT, TX_COLUMNS, TxRecord, amount_at, chain_id_sql, tx_row,
};
use crate::error::Result;

impl Store {
    /// The incoming transfers of `account_id` in `token` on `chain_id` whose own range
    /// `(received_before, received_after]` overlaps `(from, to]`, oldest first.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_receipts(
        &self,
        account_id: &str,
        chain_id: u64,
        token: TokenType,
        from: U256,
        to: U256,
    ) -> Result<Vec<Receipt>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT id, from_address, raw_amount, received_before, received_after, created_at
             FROM ua_transactions
             WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3 AND tag = 'receive'
               AND received_after IS NOT NULL
             ORDER BY seq",
        )?;
        let rows = stmt.query_map(
            rusqlite::params![account_id, chain_id_sql(chain_id), token.symbol()],
            |row| {
                Ok(Receipt {
                    tx_hash: row.get(0)?,
                    sender: row.get(1)?,
                    raw_amount: amount_at(row, 2)?,
                    received_before: amount_at(row, 3)?,
                    received_after: amount_at(row, 4)?,
                    timestamp: row.get(5)?,
                })
            },
        )?;
        let mut receipts = Vec::new();
        for receipt in rows {
            let receipt = receipt?;
            // Ranges only grow along the history: nothing later can overlap any more.
            if receipt.received_before >= to {
                break;
            }
            if receipt.received_after > from {
                receipts.push(receipt);
            }
        }
        Ok(receipts)
    }

    /// Up to `limit` history entries of `account_id` on `chain_id` in any of `tokens`, newest
    /// first, older than the entry numbered `before` when given; each with its number (the
    /// history's row sequence, which only grows).
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_transactions_by_token(
        &self,
        account_id: &str,
        chain_id: u64,
        tokens: &[TokenType],
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<(i64, TxRecord)>> {
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (0..tokens.len()).map(|i| format!("?{}", i + 5)).collect();
        let sql = format!(
            "SELECT {TX_COLUMNS}, seq FROM ua_transactions
             WHERE account_id = ?1 AND chain_id = ?2 AND seq < ?3 AND token IN ({})
             ORDER BY seq DESC LIMIT ?4",
            placeholders.join(", ")
        );
        let mut values: Vec<rusqlite::types::Value> = vec![
            account_id.to_owned().into(),
            chain_id_sql(chain_id).into(),
            before.unwrap_or(i64::MAX).into(),
            i64::from(limit).into(),
        ];
        values.extend(tokens.iter().map(|t| t.symbol().to_owned().into()));
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&sql)?;
        let records = stmt
            .query_map(params_from_iter(values), |row| {
                Ok((row.get(TX_COLUMN_COUNT)?, tx_row(row)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(records)
    }

    /// Page `page` (from 1) of `account_id`'s history with tag `tag` (every tag when `None`),
    /// newest first.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_transactions_tagged(
        &self,
        account_id: &str,
        tag: Option<&str>,
        page: u32,
        page_size: u32,
    ) -> Result<Vec<TxRecord>> {
        let Some(tag) = tag else {
            return self.ua_transactions(account_id, page, page_size);
        };
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {TX_COLUMNS} FROM ua_transactions
             WHERE account_id = ?1 AND tag = ?2 ORDER BY seq DESC LIMIT ?3 OFFSET ?4"
        ))?;
        let offset = i64::from(page.saturating_sub(1)) * i64::from(page_size);
        let records = stmt
            .query_map(rusqlite::params![account_id, tag, page_size, offset], tx_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(records)
    }

    /// Up to `limit` history entries of `account_id` in `token` (on `chain_id` when given, else
    /// on any chain), newest first, older than the entry numbered `before` when given; each
    /// with its number.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_transactions_of_token(
        &self,
        account_id: &str,
        token: TokenType,
        chain_id: Option<u64>,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<(i64, TxRecord)>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {TX_COLUMNS}, seq FROM ua_transactions
             WHERE account_id = ?1 AND token = ?2 AND (?3 IS NULL OR chain_id = ?3) AND seq < ?4
             ORDER BY seq DESC LIMIT ?5"
        ))?;
        let records = stmt
            .query_map(
                rusqlite::params![
                    account_id,
                    token.symbol(),
                    chain_id.map(chain_id_sql),
                    before.unwrap_or(i64::MAX),
                    i64::from(limit)
                ],
                |row| Ok((row.get(TX_COLUMN_COUNT)?, tx_row(row)?)),
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(records)
    }

    /// The history entry of the sweep or refund of quote `quote_id` of `account_id`.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_transaction_by_quote(
        &self,
        account_id: &str,
        quote_id: &str,
    ) -> Result<Option<TxRecord>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!(
                    "SELECT {TX_COLUMNS} FROM ua_transactions
                     WHERE account_id = ?1 AND quote_id = ?2 AND tag != 'receive'
                     ORDER BY seq DESC LIMIT 1"
                ),
                [account_id, quote_id],
                tx_row,
            )
            .optional()?)
    }

    /// The history entry `id` of any account: a sweep's or refund's rather than the `receive`
    /// it made at another account, the newest of each.
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_transaction_any(&self, id: &str) -> Result<Option<TxRecord>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!(
                    "SELECT {TX_COLUMNS} FROM ua_transactions WHERE id = ?1
                     ORDER BY tag = 'receive', seq DESC LIMIT 1"
                ),
                [id],
                tx_row,
            )
            .optional()?)
    }

    /// The history entry `id` of `account_id` (the newest when a transfer to the account's own
    /// deposit address is both a sweep and a receive).
    ///
    /// # Errors
    /// Database failures.
    pub fn ua_transaction(&self, account_id: &str, id: &str) -> Result<Option<TxRecord>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!(
                    "SELECT {TX_COLUMNS} FROM ua_transactions WHERE account_id = ?1 AND id = ?2
                     ORDER BY seq DESC LIMIT 1"
                ),
                [account_id, id],
                tx_row,
            )
            .optional()?)
    }
}
