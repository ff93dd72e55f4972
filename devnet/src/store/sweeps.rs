//! Quotes and their execution. A sweep (or a refund: the same transfer back to a receiver on the
//! source chain) runs in one SQLite transaction: the source balance is debited (`received`
//! untouched), the destination credited, the history and the sweep's outcome recorded, or
//! nothing at all. The outcome row makes a send idempotent per quote.
//!
//! On a chain-backed chain the money moves on the chain first (`crate::chain::transfers`); the
//! transaction here then only records the outcome, and touches the ledger for the sides that are
//! not chain-backed ([`Settlement`]).

use depositkit_core::{TokenType, U256};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::Store;
use super::accounts::{
    Credit, TxRecord, amount_at, balance_in, chain_id_at, chain_id_sql, credit_in, insert_tx,
    set_raw_amount, token_at,
};
use crate::error::{Error, Result};

/// What a quote is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Purpose {
    /// A conversion of a deposit delivered to the host's destination.
    #[default]
    Sweep,
    /// A deposit sent back on its source chain, in its own token.
    Refund,
}

impl Purpose {
    /// The wire name (`sweep`, `refund`), also the history's tag.
    pub const fn as_str(self) -> &'static str {
        match self {
            Purpose::Sweep => "sweep",
            Purpose::Refund => "refund",
        }
    }

    /// The purpose named `name` (exactly).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "sweep" => Some(Purpose::Sweep),
            "refund" => Some(Purpose::Refund),
            _ => None,
        }
    }
}

/// A priced conversion of one deposit, as stored when quoted.
#[derive(Debug, Clone, PartialEq)]
pub struct QuoteRecord {
    pub id: String,
    pub account_id: String,
    pub purpose: Purpose,
    /// The caller's id of the deposit, echoed by the send and the history.
    pub deposit_id: Option<String>,
    /// `0x` + 64 hex digits: what the owner signs.
    pub root_hash: String,
    pub src_chain_id: u64,
    pub src_token: TokenType,
    pub src_raw: U256,
    pub src_price_usd: f64,
    pub dst_chain_id: u64,
    pub dst_token: TokenType,
    pub dst_address: String,
    pub dst_raw: U256,
    pub dst_price_usd: f64,
    /// The JSON the quote was answered with.
    pub body: String,
    /// Unix milliseconds.
    pub expires_at: i64,
    pub created_at: i64,
}

/// The outcome of a sent quote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepRecord {
    pub quote_id: String,
    pub transaction_id: String,
    /// `success`, `pending` or `failed`.
    pub status: String,
    pub error: Option<String>,
    pub explorer_url: Option<String>,
    /// What reached the destination (zero when failed).
    pub delivered: U256,
    /// The collection transaction, when the source is a chain-backed chain.
    pub source_tx_hash: Option<String>,
}

/// What executing a quote should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepPlan {
    /// Move the money on devnet's ledger.
    Deliver { transaction_id: String, explorer_url: Option<String> },
    /// Record a transfer made (at least in part) on the chains.
    Settle(Settlement),
    /// Record a failed sweep; the money stays in the account.
    Fail { transaction_id: String, error: String },
}

/// How a transfer whose legs ran on the chains is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    /// The delivery's transaction hash (a new random one for a delivery to the ledger).
    pub transaction_id: String,
    pub explorer_url: Option<String>,
    /// The collection's transaction, when the source is chain-backed.
    pub source_tx_hash: Option<String>,
    /// The source is on the ledger: debit the account's balance line.
    pub ledger_source: bool,
    /// The destination is on the ledger: credit it there.
    pub ledger_destination: bool,
}

/// What happened when a quote was executed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SweepOutcome {
    /// Executed now.
    Executed(SweepRecord),
    /// Executed before; nothing was done now.
    AlreadySent(SweepRecord),
    /// The account no longer holds the quoted source amount; nothing was done.
    InsufficientBalance,
}

impl Store {
    /// Stores a new quote.
    ///
    /// # Errors
    /// Database failures.
    pub fn insert_quote(&self, quote: &QuoteRecord) -> Result<()> {
        self.conn().execute(
            "INSERT INTO ua_quotes (id, account_id, root_hash, src_chain_id, src_token, src_raw,
                 src_price_usd, dst_chain_id, dst_token, dst_address, dst_raw, dst_price_usd, body,
                 expires_at, created_at, purpose, deposit_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
            params![
                quote.id,
                quote.account_id,
                quote.root_hash,
                chain_id_sql(quote.src_chain_id),
                quote.src_token.symbol(),
                quote.src_raw.to_string(),
                quote.src_price_usd,
                chain_id_sql(quote.dst_chain_id),
                quote.dst_token.symbol(),
                quote.dst_address,
                quote.dst_raw.to_string(),
                quote.dst_price_usd,
                quote.body,
                quote.expires_at,
                quote.created_at,
                quote.purpose.as_str(),
                quote.deposit_id
            ],
        )?;
        Ok(())
    }

    /// The quote `id`.
    ///
    /// # Errors
    /// Database failures.
    pub fn quote(&self, id: &str) -> Result<Option<QuoteRecord>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, account_id, root_hash, src_chain_id, src_token, src_raw, src_price_usd,
                        dst_chain_id, dst_token, dst_address, dst_raw, dst_price_usd, body,
                        expires_at, created_at, purpose, deposit_id
                 FROM ua_quotes WHERE id = ?1",
                [id],
                quote_row,
            )
            .optional()?)
    }

    /// The outcome of quote `quote_id`, once sent.
    ///
    /// # Errors
    /// Database failures.
    pub fn sweep(&self, quote_id: &str) -> Result<Option<SweepRecord>> {
        sweep_in(&self.conn(), quote_id)
    }

    /// Executes `quote` as `plan` says, atomically (see the module documentation).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when the destination balance would overflow; database failures.
    pub fn execute_sweep(
        &self,
        quote: &QuoteRecord,
        plan: &SweepPlan,
        now: i64,
    ) -> Result<SweepOutcome> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if let Some(done) = sweep_in(&tx, &quote.id)? {
            return Ok(SweepOutcome::AlreadySent(done));
        }
        let account = super::accounts::account_by_id(&tx, &quote.account_id)?
            .ok_or_else(|| Error::NotFound(format!("account {} not found", quote.account_id)))?;
        let from = account.deposit_address(quote.src_chain_id).to_owned();
        let mut history = TxRecord {
            id: String::new(),
            tag: quote.purpose.as_str().into(),
            status: 1,
            chain_id: quote.src_chain_id,
            token: quote.src_token,
            raw_amount: quote.src_raw,
            price_usd: quote.src_price_usd,
            from_address: Some(from.clone()),
            to_address: quote.dst_address.clone(),
            to_chain_id: quote.dst_chain_id,
            quote_id: Some(quote.id.clone()),
            deposit_id: quote.deposit_id.clone(),
            received: None,
            created_at: now,
        };
        let ledger;
        let settlement = match plan {
            SweepPlan::Deliver { transaction_id, explorer_url } => {
                ledger = Settlement {
                    transaction_id: transaction_id.clone(),
                    explorer_url: explorer_url.clone(),
                    source_tx_hash: None,
                    ledger_source: true,
                    ledger_destination: true,
                };
                Some(&ledger)
            }
            SweepPlan::Settle(settlement) => Some(settlement),
            SweepPlan::Fail { .. } => None,
        };
        let record = match (plan, settlement) {
            (_, Some(settlement)) => {
                if settlement.ledger_source {
                    let (held, _) =
                        balance_in(&tx, &quote.account_id, quote.src_chain_id, quote.src_token)?;
                    let Some(left) = held.checked_sub(quote.src_raw) else {
                        return Ok(SweepOutcome::InsufficientBalance);
                    };
                    set_raw_amount(
                        &tx,
                        &quote.account_id,
                        quote.src_chain_id,
                        quote.src_token,
                        left,
                    )?;
                }
                if settlement.ledger_destination {
                    let sender = account.deposit_address(quote.dst_chain_id).to_owned();
                    let credit = Credit {
                        address: &quote.dst_address,
                        chain_id: quote.dst_chain_id,
                        token: quote.dst_token,
                        raw_amount: quote.dst_raw,
                        sender: Some(&sender),
                        price_usd: quote.dst_price_usd,
                    };
                    credit_in(&tx, &credit, &settlement.transaction_id, now)?;
                }
                history.id.clone_from(&settlement.transaction_id);
                SweepRecord {
                    quote_id: quote.id.clone(),
                    transaction_id: settlement.transaction_id.clone(),
                    status: "success".into(),
                    error: None,
                    explorer_url: settlement.explorer_url.clone(),
                    delivered: quote.dst_raw,
                    source_tx_hash: settlement.source_tx_hash.clone(),
                }
            }
            (SweepPlan::Fail { transaction_id, error }, None) => {
                history.id.clone_from(transaction_id);
                history.status = -1;
                history.raw_amount = U256::ZERO;
                SweepRecord {
                    quote_id: quote.id.clone(),
                    transaction_id: transaction_id.clone(),
                    status: "failed".into(),
                    error: Some(error.clone()),
                    explorer_url: None,
                    delivered: U256::ZERO,
                    source_tx_hash: None,
                }
            }
            (SweepPlan::Deliver { .. } | SweepPlan::Settle(_), None) => {
                return Err(Error::invalid("plan", "a delivery without a settlement"));
            }
        };
        insert_tx(&tx, &history, &quote.account_id)?;
        tx.execute(
            "INSERT INTO ua_sweeps (quote_id, transaction_id, status, error, explorer_url,
                 delivered, created_at, source_tx_hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                record.quote_id,
                record.transaction_id,
                record.status,
                record.error,
                record.explorer_url,
                record.delivered.to_string(),
                now,
                record.source_tx_hash
            ],
        )?;
        tx.commit()?;
        Ok(SweepOutcome::Executed(record))
    }
}

fn sweep_in(conn: &Connection, quote_id: &str) -> Result<Option<SweepRecord>> {
    Ok(conn
        .query_row(
            "SELECT quote_id, transaction_id, status, error, explorer_url, delivered,
                    source_tx_hash
             FROM ua_sweeps WHERE quote_id = ?1",
            [quote_id],
            |row| {
                Ok(SweepRecord {
                    quote_id: row.get(0)?,
                    transaction_id: row.get(1)?,
                    status: row.get(2)?,
                    error: row.get(3)?,
                    explorer_url: row.get(4)?,
                    delivered: amount_at(row, 5)?,
                    source_tx_hash: row.get(6)?,
                })
            },
        )
        .optional()?)
}

fn quote_row(row: &Row<'_>) -> rusqlite::Result<QuoteRecord> {
    let purpose: String = row.get(15)?;
    Ok(QuoteRecord {
        id: row.get(0)?,
        account_id: row.get(1)?,
        purpose: Purpose::parse(&purpose).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                15,
                rusqlite::types::Type::Text,
                format!("unknown purpose {}", crate::describe::quote(&purpose)).into(),
            )
        })?,
        deposit_id: row.get(16)?,
        root_hash: row.get(2)?,
        src_chain_id: chain_id_at(row, 3)?,
        src_token: token_at(row, 4)?,
        src_raw: amount_at(row, 5)?,
        src_price_usd: row.get(6)?,
        dst_chain_id: chain_id_at(row, 7)?,
        dst_token: token_at(row, 8)?,
        dst_address: row.get(9)?,
        dst_raw: amount_at(row, 10)?,
        dst_price_usd: row.get(11)?,
        body: row.get(12)?,
        expires_at: row.get(13)?,
        created_at: row.get(14)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{TempDb, ua_account};

    #[test]
    fn a_sweep_moves_money_once_and_keeps_received() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let account = store.insert_ua_account(&ua_account()).unwrap();
        let deposit = Credit {
            address: &account.evm_address,
            chain_id: 8453,
            token: TokenType::ETH,
            raw_amount: U256::from(1000u64),
            sender: None,
            price_usd: 2500.0,
        };
        store.credit(&deposit).unwrap();
        let dest = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
        let quote = QuoteRecord {
            id: "q_1".into(),
            account_id: account.id.clone(),
            purpose: Purpose::Sweep,
            deposit_id: None,
            root_hash: "0x00".into(),
            src_chain_id: 8453,
            src_token: TokenType::ETH,
            src_raw: U256::from(600u64),
            src_price_usd: 2500.0,
            dst_chain_id: 42161,
            dst_token: TokenType::USDC,
            dst_address: dest.into(),
            dst_raw: U256::from(42u64),
            dst_price_usd: 1.0,
            body: "{}".into(),
            expires_at: 0,
            created_at: 0,
        };
        store.insert_quote(&quote).unwrap();
        assert_eq!(store.quote("q_1").unwrap().unwrap(), quote);
        let plan = SweepPlan::Deliver { transaction_id: "0xt".into(), explorer_url: None };
        let SweepOutcome::Executed(done) = store.execute_sweep(&quote, &plan, 1).unwrap() else {
            panic!("not executed");
        };
        assert_eq!(done.delivered, U256::from(42u64));
        assert_eq!(
            store.execute_sweep(&quote, &plan, 2).unwrap(),
            SweepOutcome::AlreadySent(done.clone())
        );
        let line = &store.ua_balances(&account.id).unwrap()[0];
        assert_eq!((line.raw_amount, line.received), (U256::from(400u64), U256::from(1000u64)));
        assert_eq!(store.ledger_amount(dest, 42161, TokenType::USDC).unwrap(), U256::from(42u64));

        // A second quote for more than is left moves nothing.
        let again = QuoteRecord { id: "q_2".into(), ..quote };
        store.insert_quote(&again).unwrap();
        assert_eq!(
            store.execute_sweep(&again, &plan, 3).unwrap(),
            SweepOutcome::InsufficientBalance
        );
        assert!(store.sweep("q_2").unwrap().is_none());
        assert_eq!(store.ua_transactions(&account.id, 1, 10).unwrap().len(), 2);
    }
}
