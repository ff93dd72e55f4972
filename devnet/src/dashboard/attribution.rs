//! Which deposit a sweep belongs to. A depositkit client quotes a sweep without the deposit's
//! id (it sends `depositId` with refunds only), so devnet attributes each sweep quote to the
//! deposit it most likely is: the deposit an earlier quote of the same amount on the same line
//! was for, when that attempt ended without delivering; else the oldest transfers of the line
//! that no quote claimed yet, whose amounts add up to the quote's (a client that saw two transfers
//! in one poll sweeps them as one deposit, whose id covers both ranges of `received`).
//! Pure bookkeeping, fed in the order devnet recorded things.

use std::collections::{HashMap, VecDeque};

use depositkit_core::deposit::model::deposit_id;
use depositkit_core::{TokenType, U256};

/// An account's balance line: account, chain, token.
pub type Line = (String, u64, TokenType);

/// A transfer no quote has claimed yet.
#[derive(Debug, Clone)]
struct Transfer {
    before: U256,
    after: U256,
    id: String,
}

/// A deposit a quote claimed, until one of its sends delivers.
#[derive(Debug, Clone)]
struct Claimed {
    line: Line,
    raw: U256,
    id: String,
    /// A quote of it is out (not yet sent, or sent and not yet answered).
    busy: bool,
}

/// What a quote was attributed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributed {
    /// The deposit's id, as its client knows it.
    pub deposit_id: String,
    /// The ids of the single transfers the deposit is made of, when there are several.
    pub covers: Vec<String>,
}

/// The attribution state of one feed.
#[derive(Debug, Default)]
pub struct Attribution {
    unclaimed: HashMap<Line, VecDeque<Transfer>>,
    claimed: Vec<Claimed>,
    quotes: HashMap<String, String>,
}

impl Attribution {
    /// A transfer raised `line`'s `received` from `before` to `after`; returns the id a client
    /// gives it when it sees it alone.
    pub fn received(&mut self, line: Line, before: U256, after: U256) -> String {
        let id = deposit_id(&line.0, line.1, line.2, before, after);
        self.unclaimed.entry(line).or_default().push_back(Transfer {
            before,
            after,
            id: id.clone(),
        });
        id
    }

    /// Quote `quote_id` spends `raw` of `line`; `given` is the `depositId` the client sent.
    pub fn quoted(
        &mut self,
        quote_id: &str,
        line: Line,
        raw: U256,
        given: Option<&str>,
    ) -> Option<Attributed> {
        let attributed = match given {
            Some(id) => self.claim_given(&line, raw, id),
            None => self.claim_free(&line, raw).or_else(|| self.claim_unclaimed(&line, raw)),
        }?;
        self.quotes.insert(quote_id.to_owned(), attributed.deposit_id.clone());
        Some(attributed)
    }

    /// Quote `quote_id`'s send ended: it `delivered` (the deposit is done) or not (the next
    /// quote of the same amount is the next attempt). Returns the deposit's id.
    pub fn settled(&mut self, quote_id: &str, delivered: bool) -> Option<String> {
        let id = self.quotes.get(quote_id)?.clone();
        if delivered {
            self.claimed.retain(|c| c.id != id);
        } else if let Some(claimed) = self.claimed.iter_mut().find(|c| c.id == id) {
            claimed.busy = false;
        }
        Some(id)
    }

    /// The deposit quote `quote_id` was attributed to.
    pub fn deposit_of(&self, quote_id: &str) -> Option<&str> {
        self.quotes.get(quote_id).map(String::as_str)
    }

    fn claim_given(&mut self, line: &Line, raw: U256, id: &str) -> Option<Attributed> {
        if let Some(claimed) = self.claimed.iter_mut().find(|c| c.id == id) {
            claimed.busy = true;
        } else {
            if let Some(transfers) = self.unclaimed.get_mut(line) {
                transfers.retain(|t| t.id != id);
            }
            self.claimed.push(Claimed { line: line.clone(), raw, id: id.to_owned(), busy: true });
        }
        Some(Attributed { deposit_id: id.to_owned(), covers: Vec::new() })
    }

    fn claim_free(&mut self, line: &Line, raw: U256) -> Option<Attributed> {
        let claimed =
            self.claimed.iter_mut().find(|c| !c.busy && c.line == *line && c.raw == raw)?;
        claimed.busy = true;
        Some(Attributed { deposit_id: claimed.id.clone(), covers: Vec::new() })
    }

    fn claim_unclaimed(&mut self, line: &Line, raw: U256) -> Option<Attributed> {
        let transfers = self.unclaimed.get_mut(line)?;
        let mut sum = U256::ZERO;
        let mut taken = 0;
        for transfer in transfers.iter() {
            if sum >= raw {
                break;
            }
            // Only consecutive ranges of `received` make one deposit.
            if taken > 0 && transfers[taken - 1].after != transfer.before {
                break;
            }
            sum = sum.saturating_add(transfer.after.saturating_sub(transfer.before));
            taken += 1;
        }
        if sum != raw || taken == 0 {
            return None;
        }
        let parts: Vec<Transfer> = transfers.drain(..taken).collect();
        let (first, last) = (&parts[0], &parts[taken - 1]);
        let (id, covers) = if taken == 1 {
            (first.id.clone(), Vec::new())
        } else {
            let id = deposit_id(&line.0, line.1, line.2, first.before, last.after);
            (id, parts.iter().map(|t| t.id.clone()).collect())
        };
        self.claimed.push(Claimed { line: line.clone(), raw, id: id.clone(), busy: true });
        Some(Attributed { deposit_id: id, covers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> Line {
        ("acc_1".into(), 8453, TokenType::USDC)
    }

    fn u(n: u64) -> U256 {
        U256::from(n)
    }

    #[test]
    fn a_sweep_and_its_retry_belong_to_the_transfer_of_that_amount() {
        let mut a = Attribution::default();
        let first = a.received(line(), u(0), u(25));
        let second = a.received(line(), u(25), u(35));
        let quoted = a.quoted("q1", line(), u(25), None).unwrap();
        assert_eq!(quoted, Attributed { deposit_id: first.clone(), covers: vec![] });
        // While q1 is out, another quote of 25 is not its retry, and no transfer of 25 is left.
        assert_eq!(a.quoted("q0", line(), u(25), None), None);
        assert_eq!(a.settled("q1", false).as_deref(), Some(first.as_str()));
        assert_eq!(a.quoted("q2", line(), u(25), None).unwrap().deposit_id, first);
        assert_eq!(a.settled("q2", true).as_deref(), Some(first.as_str()));
        assert_eq!(a.quoted("q3", line(), u(10), None).unwrap().deposit_id, second);
        assert_eq!(a.deposit_of("q3"), Some(second.as_str()));
        assert_eq!(a.settled("unknown", true), None);
    }

    #[test]
    fn transfers_seen_in_one_poll_are_one_deposit() {
        let mut a = Attribution::default();
        let one = a.received(line(), u(0), u(10));
        let two = a.received(line(), u(10), u(35));
        let quoted = a.quoted("q1", line(), u(35), None).unwrap();
        assert_eq!(quoted.deposit_id, deposit_id("acc_1", 8453, TokenType::USDC, u(0), u(35)));
        assert_eq!(quoted.covers, vec![one, two]);
        // Amounts that do not add up claim nothing.
        a.received(line(), u(35), u(40));
        assert_eq!(a.quoted("q2", line(), u(3), None), None);
        let other = ("acc_2".to_owned(), 8453, TokenType::USDC);
        assert_eq!(a.quoted("q3", other, u(5), None), None);
    }

    #[test]
    fn a_refund_names_its_deposit() {
        let mut a = Attribution::default();
        let id = a.received(line(), u(0), u(25));
        let quoted = a.quoted("r1", line(), u(25), Some(&id)).unwrap();
        assert_eq!(quoted.deposit_id, id);
        // The transfer is claimed: a sweep of 25 does not take it again.
        assert_eq!(a.quoted("q1", line(), u(25), None), None);
        assert_eq!(a.settled("r1", true), Some(id));
    }
}
