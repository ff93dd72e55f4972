//! What a watcher remembers of its chain, and the signals that follow from what it sees next:
//! the hashes of the recent blocks (to notice a reorg: a block whose parent is not the block
//! remembered at that height) and the transfers reported as included and not yet final (to
//! report them removed when their block is orphaned). Pure: the followers fetch, this decides.

use std::collections::{HashMap, VecDeque};

use super::signal::{ChainSignal, Inclusion, TransferSeen};

/// A transfer's identity on its chain: the transaction and the position within it.
pub type TransferKey = (String, u32);

/// The recent blocks of one chain and the transfers reported in them.
#[derive(Debug)]
pub struct Tracker {
    chain_id: u64,
    /// Contiguous, ascending heights: the chain as the watcher last saw it.
    recent: VecDeque<Inclusion>,
    /// How many recent blocks are remembered: the deepest reorg noticed block by block.
    window: usize,
    /// Transfers reported [`Included`](ChainSignal::Included) and not yet final.
    reported: HashMap<TransferKey, TransferSeen>,
}

impl Tracker {
    /// Nothing seen yet on `chain_id`; `window` recent blocks are remembered (at least 2).
    pub fn new(chain_id: u64, window: usize) -> Self {
        Tracker {
            chain_id,
            recent: VecDeque::new(),
            window: window.max(2),
            reported: HashMap::new(),
        }
    }

    /// The newest block processed.
    pub fn tip(&self) -> Option<&Inclusion> {
        self.recent.back()
    }

    /// The remembered heights, newest first: where to look for the fork point of a reorg.
    pub fn heights_newest_first(&self) -> Vec<u64> {
        self.recent.iter().rev().map(|b| b.height).collect()
    }

    /// The hash remembered at `height`.
    pub fn hash_at(&self, height: u64) -> Option<&str> {
        let first = self.recent.front()?.height;
        let offset = usize::try_from(height.checked_sub(first)?).ok()?;
        self.recent.get(offset).map(|b| b.hash.as_str())
    }

    /// Starts (or restarts) from `block`: the next block processed is its child.
    pub fn anchor(&mut self, block: Inclusion) {
        self.recent.clear();
        self.recent.push_back(block);
    }

    /// Appends `block`, whose parent is `parent_hash`. `false` (nothing changed) when it does
    /// not continue the tip: the chain reorganised under the watcher.
    pub fn extend(&mut self, block: Inclusion, parent_hash: &str) -> bool {
        match self.recent.back() {
            Some(tip) if tip.height + 1 == block.height && tip.hash == parent_hash => {}
            Some(_) => return false,
            None => {}
        }
        self.recent.push_back(block);
        while self.recent.len() > self.window {
            self.recent.pop_front();
        }
        true
    }

    /// Forgets the blocks above `fork` (the newest block still in the chain): the transfers
    /// reported in them are [`Removed`](ChainSignal::Removed), oldest first. With `fork` below
    /// every remembered block, everything is forgotten and the caller anchors again.
    pub fn rewind(&mut self, fork: u64) -> Vec<ChainSignal> {
        while self.recent.back().is_some_and(|b| b.height > fork) {
            self.recent.pop_back();
        }
        let mut orphaned: Vec<TransferSeen> = Vec::new();
        self.reported.retain(|_, seen| {
            let gone = seen.inclusion.height > fork;
            if gone {
                orphaned.push(seen.clone());
            }
            !gone
        });
        orphaned.sort_by(|a, b| order(a).cmp(&order(b)));
        orphaned
            .into_iter()
            .map(|seen| ChainSignal::Removed {
                chain_id: self.chain_id,
                tx: seen.tx,
                index: seen.index,
            })
            .collect()
    }

    /// The signal for `seen`, found in a processed block: [`Included`](ChainSignal::Included)
    /// unless it was already reported at the same place.
    pub fn include(&mut self, seen: TransferSeen) -> Option<ChainSignal> {
        let key = (seen.tx.clone(), seen.index);
        if self.reported.get(&key).is_some_and(|known| known.inclusion == seen.inclusion) {
            return None;
        }
        self.reported.insert(key, seen.clone());
        Some(ChainSignal::Included(seen))
    }

    /// A transfer reported at a place that is no longer in the chain although its block height
    /// still is (a reorg seen only through one transfer, such as a log's block hash): reported
    /// [`Removed`](ChainSignal::Removed) and forgotten.
    pub fn forget(&mut self, key: &TransferKey) -> Option<ChainSignal> {
        self.reported.remove(key).map(|seen| ChainSignal::Removed {
            chain_id: self.chain_id,
            tx: seen.tx,
            index: seen.index,
        })
    }

    /// The transfers reported and still tracked.
    pub fn reported(&self) -> impl Iterator<Item = &TransferSeen> {
        self.reported.values()
    }

    /// Forgets the transfers at or below `finalized`: the chain will not take them back, and
    /// the ones older than the remembered window, which a reorg can no longer be noticed for.
    pub fn settle(&mut self, finalized: Option<u64>) {
        let oldest = self.recent.front().map_or(0, |b| b.height);
        let keep_above = finalized.unwrap_or(0).max(oldest.saturating_sub(1));
        self.reported.retain(|_, seen| seen.inclusion.height > keep_above);
    }
}

fn order(seen: &TransferSeen) -> (u64, &str, u32) {
    (seen.inclusion.height, seen.tx.as_str(), seen.index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::U256;

    fn block(height: u64, hash: &str) -> Inclusion {
        Inclusion { height, hash: hash.to_owned() }
    }

    fn seen(tx: &str, at: Inclusion) -> TransferSeen {
        TransferSeen {
            chain_id: 1,
            to: "0xabc".into(),
            token: None,
            contract: None,
            raw_amount: U256::from(5u64),
            tx: tx.into(),
            index: 0,
            inclusion: at,
        }
    }

    #[test]
    fn a_reorg_removes_what_was_reported_above_the_fork() {
        let mut t = Tracker::new(1, 8);
        t.anchor(block(10, "a10"));
        assert!(t.extend(block(11, "a11"), "a10"));
        assert!(t.extend(block(12, "a12"), "a11"));
        assert!(!t.extend(block(13, "b13"), "b12"), "not the tip's child");
        assert!(t.include(seen("t1", block(11, "a11"))).is_some());
        assert!(t.include(seen("t1", block(11, "a11"))).is_none(), "reported once");
        assert!(t.include(seen("t2", block(12, "a12"))).is_some());
        let removed = t.rewind(11);
        assert_eq!(removed, [ChainSignal::Removed { chain_id: 1, tx: "t2".into(), index: 0 }]);
        assert_eq!(t.tip(), Some(&block(11, "a11")));
        assert!(t.extend(block(12, "b12"), "a11"));
        let again = t.include(seen("t2", block(12, "b12")));
        assert!(matches!(again, Some(ChainSignal::Included(s)) if s.inclusion.hash == "b12"));
    }

    #[test]
    fn final_transfers_and_old_blocks_are_forgotten() {
        let mut t = Tracker::new(1, 3);
        t.anchor(block(1, "h1"));
        for h in 2..=6 {
            assert!(t.extend(block(h, &format!("h{h}")), &format!("h{}", h - 1)));
        }
        assert_eq!(t.heights_newest_first(), [6, 5, 4]);
        assert_eq!(t.hash_at(5), Some("h5"));
        assert_eq!(t.hash_at(2), None);
        t.include(seen("old", block(3, "h3")));
        t.include(seen("new", block(6, "h6")));
        t.settle(None);
        assert_eq!(t.reported().count(), 1);
        t.settle(Some(6));
        assert_eq!(t.reported().count(), 0);
        assert!(t.rewind(0).is_empty());
        assert!(t.tip().is_none());
    }
}
