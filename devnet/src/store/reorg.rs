//! Taking a deposit back out of the ledger when a reorg of a simulated chain drops its transfer
//! (`POST /devnet/chains/{chain}/reorg`), and crediting it again, under the same transaction
//! hash, when the chain re-adds it.
//!
//! An account's line goes down by the amount (`rawAmount` and `received`: the transfer never
//! happened), its `receive` entry leaves the history, and the later receipts of the line move
//! down so the ranges of `received` still tile; an address no account owns loses the amount
//! from its ledger. Money already swept cannot be taken back: the reorg is refused.

use depositkit_core::U256;
use rusqlite::{Connection, OptionalExtension, params};

use super::Store;
use super::accounts::{
    Credit, account_by_deposit_address, amount_at, balance_in, chain_id_sql, credit_in, ledger_key,
};
use crate::error::{Error, Result};
use crate::time;

/// A credited transfer to take back: who got it and how much.
#[derive(Debug, Clone)]
pub struct Uncredit<'a> {
    /// The deposit's transaction hash.
    pub tx_hash: &'a str,
    /// The receiving address.
    pub address: &'a str,
    pub chain_id: u64,
    pub token: depositkit_core::TokenType,
    pub raw_amount: U256,
}

impl Store {
    /// Takes every transfer of `transfers` back, all or none.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the transaction when its address no longer holds the
    /// amount (it was swept); database failures.
    pub fn uncredit(&self, transfers: &[Uncredit<'_>]) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        for transfer in transfers {
            uncredit_in(&tx, transfer)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Credits every transfer of `credits` under its own transaction hash (a transfer a reorg
    /// took out, back in the chain), in one transaction.
    ///
    /// # Errors
    /// As [`Store::credit`].
    pub fn recredit(&self, credits: &[(Credit<'_>, &str)]) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let now = time::now_ms();
        for (credit, tx_hash) in credits {
            credit_in(&tx, credit, tx_hash, now)?;
        }
        tx.commit()?;
        Ok(())
    }
}

fn uncredit_in(conn: &Connection, t: &Uncredit<'_>) -> Result<()> {
    let chain = chain_id_sql(t.chain_id);
    let short = || {
        Error::invalid(
            "drop",
            format!("{}: its address no longer holds the amount (swept?)", t.tx_hash),
        )
    };
    let Some(account) = account_by_deposit_address(conn, t.address, t.chain_id)? else {
        let key = ledger_key(t.address, t.chain_id);
        let held = conn
            .query_row(
                "SELECT raw_amount FROM ledger WHERE address = ?1 AND chain_id = ?2 AND token = ?3",
                params![key, chain, t.token.symbol()],
                |row| amount_at(row, 0),
            )
            .optional()?
            .unwrap_or(U256::ZERO);
        let left = held.checked_sub(t.raw_amount).ok_or_else(short)?;
        conn.execute(
            "UPDATE ledger SET raw_amount = ?4 WHERE address = ?1 AND chain_id = ?2 AND token = ?3",
            params![key, chain, t.token.symbol(), left.to_string()],
        )?;
        return Ok(());
    };
    let (raw, received) = balance_in(conn, &account.id, t.chain_id, t.token)?;
    let raw = raw.checked_sub(t.raw_amount).ok_or_else(short)?;
    let received = received.checked_sub(t.raw_amount).ok_or_else(short)?;
    conn.execute(
        "UPDATE ua_balances SET raw_amount = ?4, received = ?5
         WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3",
        params![account.id, chain, t.token.symbol(), raw.to_string(), received.to_string()],
    )?;
    let seq: Option<i64> = conn
        .query_row(
            "SELECT seq FROM ua_transactions WHERE account_id = ?1 AND id = ?2 AND tag = 'receive'",
            params![account.id, t.tx_hash],
            |row| row.get(0),
        )
        .optional()?;
    let Some(seq) = seq else { return Ok(()) };
    conn.execute("DELETE FROM ua_transactions WHERE seq = ?1", [seq])?;
    // The later receipts of the line start lower by the amount.
    let mut later = conn.prepare_cached(
        "SELECT seq, received_before, received_after FROM ua_transactions
         WHERE account_id = ?1 AND chain_id = ?2 AND token = ?3 AND tag = 'receive'
           AND received_after IS NOT NULL AND seq > ?4",
    )?;
    let rows = later
        .query_map(params![account.id, chain, t.token.symbol(), seq], |row| {
            Ok((row.get::<_, i64>(0)?, amount_at(row, 1)?, amount_at(row, 2)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for (seq, before, after) in rows {
        conn.execute(
            "UPDATE ua_transactions SET received_before = ?2, received_after = ?3 WHERE seq = ?1",
            params![
                seq,
                before.saturating_sub(t.raw_amount).to_string(),
                after.saturating_sub(t.raw_amount).to_string()
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use depositkit_core::TokenType;

    use super::*;
    use crate::store::test_support::{TempDb, ua_account};

    #[test]
    fn a_deposit_goes_out_and_comes_back_under_its_hash() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let account = store.insert_ua_account(&ua_account()).unwrap();
        let credit = Credit {
            address: &account.evm_address,
            chain_id: 8453,
            token: TokenType::USDC,
            raw_amount: U256::from(5u64),
            sender: None,
            price_usd: 1.0,
        };
        let first = store.credit(&credit).unwrap();
        let second =
            store.credit(&Credit { raw_amount: U256::from(7u64), ..credit.clone() }).unwrap();
        let out = Uncredit {
            tx_hash: &first.tx_hash,
            address: &account.evm_address,
            chain_id: 8453,
            token: TokenType::USDC,
            raw_amount: U256::from(5u64),
        };
        store.uncredit(std::slice::from_ref(&out)).unwrap();
        let line = &store.ua_balances(&account.id).unwrap()[0];
        assert_eq!((line.raw_amount, line.received), (U256::from(7u64), U256::from(7u64)));
        let receipts = store
            .ua_receipts(&account.id, 8453, TokenType::USDC, U256::ZERO, U256::from(100u64))
            .unwrap();
        assert_eq!(receipts.len(), 1);
        assert_eq!(receipts[0].tx_hash, second.tx_hash);
        assert_eq!(
            (receipts[0].received_before, receipts[0].received_after),
            (U256::ZERO, U256::from(7u64))
        );

        store.recredit(&[(credit, first.tx_hash.as_str())]).unwrap();
        assert_eq!(
            store.ledger_amount(&account.evm_address, 8453, TokenType::USDC).unwrap(),
            U256::from(12u64)
        );
        let history = store.ua_transactions(&account.id, 1, 10).unwrap();
        assert_eq!(history[0].id, first.tx_hash);

        let too_much = Uncredit { raw_amount: U256::from(100u64), ..out };
        let err = store.uncredit(&[too_much]).unwrap_err();
        assert!(err.to_string().contains(&first.tx_hash), "{err}");
    }
}
