//! What a reorganisation of a chain-backed chain took away (`docs/finality.md` §8).
//!
//! Devnet alone moves money out of a deposit address, and every such move is counted on the
//! line ([`ChainLine::total_in`] adds it back), so a line whose `total_in` falls below its
//! `received` has lost money that arrived: the chain dropped the block of a transfer (anvil's
//! `anvil_reorg` or `evm_revert`). Such a transfer never happened, so its `receive` leaves the
//! history and `received` goes down by it ([`crate::store::Store::uncredit`]), as on the
//! simulated chains (`crate::store` `reorg`). When the transfer is mined again, the next reading
//! finds it as any new one, in the same range of `received`, under its own hash.
//!
//! Which receipts: the newest first (a reorganisation removes the newest blocks) until they
//! cover the fall, skipping on EVM token lines a receipt whose transaction the chain still has
//! (it was not removed). A receipt taken back beyond the fall comes back at once as a new rise
//! of the same reading. What the line's recorded balance cannot give back is left counted (the
//! store refuses to take back more than an address held).

use depositkit_core::U256;

use crate::store::{ChainLine, Receipt};

/// A `receive` of a line to take back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenBack {
    /// Its transaction hash (or observation id).
    pub tx_hash: String,
    pub raw_amount: U256,
}

/// What the line's `received` counts that the chain no longer shows, given the address's
/// `balance` now.
pub fn fall(line: &ChainLine, balance: U256) -> U256 {
    line.received.saturating_sub(line.total_in(balance))
}

/// The receipts to take back for a `fall` of `line`, newest first; `receipts` are the line's
/// (oldest first, as the store lists them). `still_mined` says whether a receipt's transaction
/// is still on the chain (an error stops the choice and is returned).
///
/// # Errors
/// What `still_mined` failed with.
pub fn take_back<E>(
    line: &ChainLine,
    fall: U256,
    receipts: &[Receipt],
    mut still_mined: impl FnMut(&str) -> Result<bool, E>,
) -> Result<Vec<TakenBack>, E> {
    let mut taken = Vec::new();
    let mut sum = U256::ZERO;
    for receipt in receipts.iter().rev() {
        if sum >= fall {
            break;
        }
        let total = sum.saturating_add(receipt.raw_amount);
        if total > line.balance || total > line.received {
            break;
        }
        if still_mined(&receipt.tx_hash)? {
            continue;
        }
        taken.push(TakenBack { tx_hash: receipt.tx_hash.clone(), raw_amount: receipt.raw_amount });
        sum = total;
    }
    Ok(taken)
}

/// `line` once `taken` is taken back: `received` and the recorded balance lower by their sum.
pub fn without(line: &ChainLine, taken: &[TakenBack]) -> ChainLine {
    let sum = taken.iter().fold(U256::ZERO, |sum, t| sum.saturating_add(t.raw_amount));
    ChainLine {
        received: line.received.saturating_sub(sum),
        balance: line.balance.saturating_sub(sum),
        ..*line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(hash: &str, before: u64, amount: u64) -> Receipt {
        Receipt {
            tx_hash: hash.into(),
            sender: None,
            raw_amount: U256::from(amount),
            received_before: U256::from(before),
            received_after: U256::from(before + amount),
            timestamp: 0,
        }
    }

    fn line(received: u64, balance: u64) -> ChainLine {
        ChainLine {
            received: U256::from(received),
            balance: U256::from(balance),
            ..ChainLine::default()
        }
    }

    fn hashes(taken: &[TakenBack]) -> Vec<&str> {
        taken.iter().map(|t| t.tx_hash.as_str()).collect()
    }

    #[test]
    fn the_newest_receipts_the_chain_lost_cover_the_fall() {
        let receipts = [receipt("0xa", 0, 25), receipt("0xb", 25, 7)];
        let held = line(32, 32);
        // 0xb is still mined: only 0xa left the chain.
        assert_eq!(fall(&held, U256::from(7u64)), U256::from(25u64));
        let taken =
            take_back(&held, U256::from(25u64), &receipts, |h| Ok::<_, ()>(h == "0xb")).unwrap();
        assert_eq!(hashes(&taken), ["0xa"]);
        assert_eq!(without(&held, &taken), line(7, 7));
        // Nothing can say (native lines): the newest first, until the fall is covered.
        let taken = take_back(&held, U256::from(3u64), &receipts, |_| Ok::<_, ()>(false)).unwrap();
        assert_eq!(hashes(&taken), ["0xb"]);
        let taken = take_back(&held, U256::from(8u64), &receipts, |_| Ok::<_, ()>(false)).unwrap();
        assert_eq!(hashes(&taken), ["0xb", "0xa"]);
    }

    #[test]
    fn no_more_than_the_address_held_is_taken_back() {
        let receipts = [receipt("0xa", 0, 25), receipt("0xb", 25, 7)];
        let taken =
            take_back(&line(32, 10), U256::from(32u64), &receipts, |_| Ok::<_, ()>(false)).unwrap();
        assert_eq!(hashes(&taken), ["0xb"]);
        assert_eq!(fall(&line(32, 32), U256::from(32u64)), U256::ZERO);
        let failed = take_back(&line(32, 32), U256::from(1u64), &receipts, |_| Err("down"));
        assert_eq!(failed, Err("down"));
    }
}
