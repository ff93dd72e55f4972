//! What the chain-backed mode keeps (schema version 4): per balance line the counters that turn
//! a chain balance into the cumulative `received` ([`ChainLine`]), the observed incoming
//! transfers ([`Observation`]), and the legs of sweeps in flight ([`Leg`]).

use depositkit_core::{TokenType, U256};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::Store;
use super::accounts::{
    TxRecord, account_by_id, amount_at, balance_in, chain_id_at, chain_id_sql, insert_tx,
};
use crate::error::{Error, Result};
use crate::time;

/// The counters of one balance line of a chain-backed chain (all zero for a new line, except
/// `base`, which is the line's ledger `received` when observation started).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChainLine {
    pub base: U256,
    /// Moved out of the deposit address by sweeps and refunds.
    pub collected: U256,
    /// Native line: fees the deposit address paid.
    pub gas_paid: U256,
    /// Native line: gas devnet sent the deposit address.
    pub gas_sent: U256,
    /// EVM tokens: the last block whose `Transfer` logs were read.
    pub scanned_block: Option<u64>,
    /// The line's cumulative `received` so far.
    pub received: U256,
    /// The balance the last observation found (the line's `rawAmount`).
    pub balance: U256,
}

impl ChainLine {
    /// Everything that ever arrived from outside, given the address's `balance` now:
    /// `base + balance + collected + gas_paid − gas_sent` (saturating).
    pub fn total_in(&self, balance: U256) -> U256 {
        self.base
            .saturating_add(balance)
            .saturating_add(self.collected)
            .saturating_add(self.gas_paid)
            .saturating_sub(self.gas_sent)
    }
}

/// Which counter of a line a completed leg changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    Collected,
    GasPaid,
    GasSent,
}

impl Counter {
    const fn column(self) -> &'static str {
        match self {
            Counter::Collected => "collected",
            Counter::GasPaid => "gas_paid",
            Counter::GasSent => "gas_sent",
        }
    }
}

/// A change of one line's counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineDelta {
    pub account_id: String,
    pub chain_id: u64,
    pub token: TokenType,
    pub counter: Counter,
    pub amount: U256,
}

/// One incoming transfer seen on the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedTransfer {
    /// The transfer's hash, or an id of the observation when the chain does not tell.
    pub tx_hash: String,
    pub sender: Option<String>,
    pub raw_amount: U256,
}

/// What one read of a line found: the balance, the new `received`, and the transfers that make
/// up its increase (recorded as `receive`s, in order).
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub account_id: String,
    pub chain_id: u64,
    pub token: TokenType,
    pub balance: U256,
    pub received: U256,
    pub transfers: Vec<ObservedTransfer>,
    pub scanned_block: Option<u64>,
    /// The token's price now, for the history.
    pub price_usd: f64,
}

/// The kind of a sweep's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LegKind {
    /// Gas from the vault to the deposit address (EVM).
    Gas,
    /// The source amount from the deposit address to the vault.
    Collect,
    /// The destination amount from the vault to the receiver.
    Deliver,
}

impl LegKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            LegKind::Gas => "gas",
            LegKind::Collect => "collect",
            LegKind::Deliver => "deliver",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [LegKind::Gas, LegKind::Collect, LegKind::Deliver].into_iter().find(|k| k.as_str() == text)
    }
}

/// Where a leg stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegState {
    /// Signed and stored; maybe broadcast, maybe mined: its fate is not known yet.
    Signed,
    /// Mined and successful; its line changes are applied.
    Done,
    /// Mined and reverted, or known never to land; a gas or deliver leg is then made anew.
    Failed,
}

impl LegState {
    const fn as_str(self) -> &'static str {
        match self {
            LegState::Signed => "signed",
            LegState::Done => "done",
            LegState::Failed => "failed",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [LegState::Signed, LegState::Done, LegState::Failed]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// One transaction of a sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leg {
    pub quote_id: String,
    pub kind: LegKind,
    pub chain_id: u64,
    /// `0x` hash (EVM) or base58 signature (Solana).
    pub tx_hash: String,
    /// The signed transaction, for broadcasting it again.
    pub raw_tx: Vec<u8>,
    /// What it moves (gas: the wei sent; collect and deliver: the token amount).
    pub amount: U256,
    pub state: LegState,
}

impl Store {
    /// The counters of a line, created (with `base` = the line's `received`) when missing.
    ///
    /// # Errors
    /// Database failures.
    pub fn chain_line(
        &self,
        account_id: &str,
        chain_id: u64,
        token: TokenType,
    ) -> Result<ChainLine> {
        let conn = self.conn();
        let (balance, received) = balance_in(&conn, account_id, chain_id, token)?;
        conn.execute(
            "INSERT OR IGNORE INTO chain_lines
                 (account_id, chain_id, token, base, collected, gas_paid, gas_sent)
             VALUES (?1, ?2, ?3, ?4, '0', '0', '0')",
            params![account_id, chain_id_sql(chain_id), token.symbol(), received.to_string()],
        )?;
        let line = conn.query_row(
            "SELECT base, collected, gas_paid, gas_sent, scanned_block FROM chain_lines
             WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3",
            params![account_id, chain_id_sql(chain_id), token.symbol()],
            |row| {
                Ok(ChainLine {
                    base: amount_at(row, 0)?,
                    collected: amount_at(row, 1)?,
                    gas_paid: amount_at(row, 2)?,
                    gas_sent: amount_at(row, 3)?,
                    scanned_block: block_at(row, 4)?,
                    received,
                    balance,
                })
            },
        )?;
        Ok(line)
    }

    /// Records an observation in one transaction: each transfer becomes a `receive` (with its
    /// range of `received`), the line gets the balance and the new `received`, and the scanned
    /// block moves on. The transfers must add up to the increase of `received`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when they do not, or `received` would go down; database failures.
    pub fn record_observation(&self, observation: &Observation) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let account = account_by_id(&tx, &observation.account_id)?
            .ok_or_else(|| Error::NotFound(format!("account {}", observation.account_id)))?;
        let (_, before) = balance_in(&tx, &account.id, observation.chain_id, observation.token)?;
        let increase = observation
            .received
            .checked_sub(before)
            .ok_or_else(|| Error::invalid("received", "received never goes down"))?;
        let sum = observation
            .transfers
            .iter()
            .try_fold(U256::ZERO, |sum, t| sum.checked_add(t.raw_amount))
            .ok_or_else(|| Error::invalid("transfers", "too large"))?;
        if sum != increase {
            return Err(Error::invalid(
                "transfers",
                format!("they add up to {sum}, not to the increase {increase}"),
            ));
        }
        let now = time::now_ms();
        let mut running = before;
        for transfer in &observation.transfers {
            let after = running + transfer.raw_amount;
            insert_tx(
                &tx,
                &TxRecord {
                    id: transfer.tx_hash.clone(),
                    tag: "receive".into(),
                    status: 1,
                    chain_id: observation.chain_id,
                    token: observation.token,
                    raw_amount: transfer.raw_amount,
                    price_usd: observation.price_usd,
                    from_address: transfer.sender.clone(),
                    to_address: account.deposit_address(observation.chain_id).to_owned(),
                    to_chain_id: observation.chain_id,
                    quote_id: None,
                    deposit_id: None,
                    received: Some((running, after)),
                    created_at: now,
                },
                &account.id,
            )?;
            running = after;
        }
        let chain = chain_id_sql(observation.chain_id);
        let symbol = observation.token.symbol();
        tx.execute(
            "INSERT INTO ua_balances (account_id, chain_id, token, raw_amount, received)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (account_id, chain_id, token)
             DO UPDATE SET raw_amount = excluded.raw_amount, received = excluded.received",
            params![
                account.id,
                chain,
                symbol,
                observation.balance.to_string(),
                observation.received.to_string()
            ],
        )?;
        if let Some(block) = observation.scanned_block {
            tx.execute(
                "UPDATE chain_lines SET scanned_block = ?4
                 WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3",
                params![account.id, chain, symbol, block_sql(block)],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The legs of quote `quote_id`.
    ///
    /// # Errors
    /// Database failures.
    pub fn chain_legs(&self, quote_id: &str) -> Result<Vec<Leg>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {LEG_COLUMNS} FROM chain_legs WHERE quote_id = ?1 ORDER BY created_at"
        ))?;
        let legs = stmt.query_map([quote_id], leg_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(legs)
    }

    /// The legs of `account_id`'s quotes whose fate is not known yet.
    ///
    /// # Errors
    /// Database failures.
    pub fn unsettled_legs(&self, account_id: &str) -> Result<Vec<Leg>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {LEG_COLUMNS} FROM chain_legs
             WHERE state = 'signed'
               AND quote_id IN (SELECT id FROM ua_quotes WHERE account_id = ?1)
             ORDER BY created_at"
        ))?;
        let legs = stmt.query_map([account_id], leg_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(legs)
    }

    /// Stores a freshly signed leg (state `signed`), replacing a `failed` one of the same kind.
    ///
    /// # Errors
    /// [`Error::Conflict`] when the quote already has a leg of that kind that is not `failed`;
    /// database failures.
    pub fn insert_leg(&self, leg: &Leg) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let existing: Option<String> = tx
            .query_row(
                "SELECT state FROM chain_legs WHERE quote_id = ?1 AND leg = ?2",
                params![leg.quote_id, leg.kind.as_str()],
                |row| row.get(0),
            )
            .optional()?;
        if existing.as_deref().is_some_and(|state| state != LegState::Failed.as_str()) {
            return Err(Error::Conflict(format!(
                "quote {} already has a {} transaction",
                leg.quote_id,
                leg.kind.as_str()
            )));
        }
        tx.execute(
            "INSERT INTO chain_legs (quote_id, leg, chain_id, tx_hash, raw_tx, amount, state,
                 created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (quote_id, leg) DO UPDATE SET chain_id = excluded.chain_id,
                 tx_hash = excluded.tx_hash, raw_tx = excluded.raw_tx, amount = excluded.amount,
                 state = excluded.state",
            params![
                leg.quote_id,
                leg.kind.as_str(),
                chain_id_sql(leg.chain_id),
                leg.tx_hash,
                leg.raw_tx,
                leg.amount.to_string(),
                leg.state.as_str(),
                time::now_ms()
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Marks a `signed` leg `done` or `failed` and applies `deltas` to the lines, atomically; a
    /// leg that is no longer `signed` is left alone (its deltas were applied when it settled).
    ///
    /// # Errors
    /// Database failures.
    pub fn settle_leg(
        &self,
        quote_id: &str,
        kind: LegKind,
        state: LegState,
        deltas: &[LineDelta],
    ) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let changed = tx.execute(
            "UPDATE chain_legs SET state = ?3 WHERE quote_id = ?1 AND leg = ?2 AND state = 'signed'",
            params![quote_id, kind.as_str(), state.as_str()],
        )?;
        if changed == 1 {
            for delta in deltas {
                add_to_counter(&tx, delta)?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

/// Adds `delta` to its counter, creating the line (with `base` = its `received`) when missing.
fn add_to_counter(conn: &Connection, delta: &LineDelta) -> Result<()> {
    let (_, received) = balance_in(conn, &delta.account_id, delta.chain_id, delta.token)?;
    let chain = chain_id_sql(delta.chain_id);
    conn.execute(
        "INSERT OR IGNORE INTO chain_lines
             (account_id, chain_id, token, base, collected, gas_paid, gas_sent)
         VALUES (?1, ?2, ?3, ?4, '0', '0', '0')",
        params![delta.account_id, chain, delta.token.symbol(), received.to_string()],
    )?;
    let column = delta.counter.column();
    let current: U256 = conn.query_row(
        &format!(
            "SELECT {column} FROM chain_lines WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3"
        ),
        params![delta.account_id, chain, delta.token.symbol()],
        |row| amount_at(row, 0),
    )?;
    conn.execute(
        &format!(
            "UPDATE chain_lines SET {column} = ?4
             WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3"
        ),
        params![
            delta.account_id,
            chain,
            delta.token.symbol(),
            current.saturating_add(delta.amount).to_string()
        ],
    )?;
    Ok(())
}

const LEG_COLUMNS: &str = "quote_id, leg, chain_id, tx_hash, raw_tx, amount, state";

fn leg_row(row: &Row<'_>) -> rusqlite::Result<Leg> {
    let kind: String = row.get(1)?;
    let state: String = row.get(6)?;
    let bad = |index: usize, what: &str, text: &str| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            format!("unknown {what} {}", crate::describe::quote(text)).into(),
        )
    };
    Ok(Leg {
        quote_id: row.get(0)?,
        kind: LegKind::parse(&kind).ok_or_else(|| bad(1, "leg", &kind))?,
        chain_id: chain_id_at(row, 2)?,
        tx_hash: row.get(3)?,
        raw_tx: row.get(4)?,
        amount: amount_at(row, 5)?,
        state: LegState::parse(&state).ok_or_else(|| bad(6, "state", &state))?,
    })
}

fn block_at(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<u64>> {
    let block: Option<i64> = row.get(index)?;
    Ok(block.and_then(|b| u64::try_from(b).ok()))
}

fn block_sql(block: u64) -> i64 {
    i64::try_from(block).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{TempDb, ua_account};
    use crate::store::{Purpose, QuoteRecord};

    fn setup() -> (TempDb, Store) {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        store.insert_ua_account(&ua_account()).unwrap();
        (db, store)
    }

    #[test]
    fn observations_tile_received_and_counters_add_up() {
        let (_db, store) = setup();
        let line = store.chain_line("acc_1", 8453, TokenType::USDC).unwrap();
        assert_eq!(line, ChainLine::default());
        let observation = Observation {
            account_id: "acc_1".into(),
            chain_id: 8453,
            token: TokenType::USDC,
            balance: U256::from(30u64),
            received: U256::from(30u64),
            transfers: vec![
                ObservedTransfer {
                    tx_hash: "0xa".into(),
                    sender: Some("0xs".into()),
                    raw_amount: U256::from(10u64),
                },
                ObservedTransfer {
                    tx_hash: "0xb".into(),
                    sender: None,
                    raw_amount: U256::from(20u64),
                },
            ],
            scanned_block: Some(7),
            price_usd: 1.0,
        };
        store.record_observation(&observation).unwrap();
        let receipts = store
            .ua_receipts("acc_1", 8453, TokenType::USDC, U256::ZERO, U256::from(30u64))
            .unwrap();
        let ranges: Vec<(u64, u64)> =
            receipts.iter().map(|r| (r.received_before.to(), r.received_after.to())).collect();
        assert_eq!(ranges, [(0, 10), (10, 30)]);
        let line = store.chain_line("acc_1", 8453, TokenType::USDC).unwrap();
        assert_eq!((line.received, line.scanned_block), (U256::from(30u64), Some(7)));
        // Transfers that do not add up, or a lower received, are refused.
        let wrong =
            Observation { received: U256::from(31u64), transfers: vec![], ..observation.clone() };
        assert!(store.record_observation(&wrong).is_err());
        let lower = Observation { received: U256::from(29u64), transfers: vec![], ..observation };
        assert!(store.record_observation(&lower).is_err());
        assert_eq!(line.total_in(U256::from(5u64)), U256::from(5u64));
    }

    #[test]
    fn legs_settle_once() {
        let (_db, store) = setup();
        store
            .insert_quote(&QuoteRecord {
                id: "q_1".into(),
                account_id: "acc_1".into(),
                purpose: Purpose::Sweep,
                deposit_id: None,
                root_hash: "0x00".into(),
                src_chain_id: 8453,
                src_token: TokenType::USDC,
                src_raw: U256::from(5u64),
                src_price_usd: 1.0,
                dst_chain_id: 42161,
                dst_token: TokenType::USDC,
                dst_address: "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB".into(),
                dst_raw: U256::from(4u64),
                dst_price_usd: 1.0,
                body: "{}".into(),
                expires_at: 0,
                created_at: 0,
            })
            .unwrap();
        let leg = Leg {
            quote_id: "q_1".into(),
            kind: LegKind::Collect,
            chain_id: 8453,
            tx_hash: "0xc".into(),
            raw_tx: vec![1, 2],
            amount: U256::from(5u64),
            state: LegState::Signed,
        };
        store.insert_leg(&leg).unwrap();
        assert!(matches!(store.insert_leg(&leg), Err(Error::Conflict(_))));
        assert_eq!(store.unsettled_legs("acc_1").unwrap(), std::slice::from_ref(&leg));
        let delta = LineDelta {
            account_id: "acc_1".into(),
            chain_id: 8453,
            token: TokenType::USDC,
            counter: Counter::Collected,
            amount: U256::from(5u64),
        };
        store
            .settle_leg("q_1", LegKind::Collect, LegState::Done, std::slice::from_ref(&delta))
            .unwrap();
        store.settle_leg("q_1", LegKind::Collect, LegState::Done, &[delta]).unwrap();
        let line = store.chain_line("acc_1", 8453, TokenType::USDC).unwrap();
        assert_eq!(line.collected, U256::from(5u64));
        assert!(store.unsettled_legs("acc_1").unwrap().is_empty());
        assert_eq!(store.chain_legs("q_1").unwrap()[0].state, LegState::Done);
        // A failed leg may be replaced.
        let gas = Leg { kind: LegKind::Gas, tx_hash: "0xg".into(), ..leg };
        store.insert_leg(&gas).unwrap();
        store.settle_leg("q_1", LegKind::Gas, LegState::Failed, &[]).unwrap();
        store.insert_leg(&Leg { tx_hash: "0xg2".into(), ..gas }).unwrap();
        let legs = store.chain_legs("q_1").unwrap();
        assert_eq!(legs.iter().find(|l| l.kind == LegKind::Gas).unwrap().tx_hash, "0xg2");
    }
}
