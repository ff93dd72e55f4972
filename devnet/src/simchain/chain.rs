//! One simulated chain: blocks (or slots) holding the deposits credited on a ledger chain, and
//! the operations on them — append a block, cut the last blocks off and replace them (a reorg),
//! and the `safe` and `finalized` heads. Data and decisions only: the ledger effects are the
//! caller's ([`super::SimChains`]).

use depositkit_core::{TokenType, U256};

/// One transfer into an address, as the chain holds it (and as the ledger credited it).
#[derive(Debug, Clone, PartialEq)]
pub struct SimTransfer {
    /// The ledger's transaction hash of the deposit: the chain's transaction id too.
    pub tx: String,
    /// The receiving address, as the deposit named it.
    pub to: String,
    pub token: TokenType,
    /// The token's contract (EVM) or mint (Solana); `None` for the native coin.
    pub contract: Option<String>,
    pub raw_amount: U256,
    /// The sender, when the deposit named one.
    pub sender: Option<String>,
    /// The USD price credited with it (credited again after a reorg re-adds it).
    pub price_usd: f64,
}

/// One block (EVM) or slot (Solana).
#[derive(Debug, Clone, PartialEq)]
pub struct SimBlock {
    pub number: u64,
    pub hash: [u8; 32],
    pub parent: [u8; 32],
    /// Unix seconds.
    pub timestamp: u64,
    pub transfers: Vec<SimTransfer>,
}

/// How far `safe` and `finalized` trail the newest block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lags {
    /// `latest − safe` (Solana: `processed − confirmed`).
    pub safe: u64,
    /// `latest − finalized`.
    pub finalized: u64,
}

/// A simulated chain: its blocks from genesis, and the transfers a reorg took out that come
/// back at a later height.
#[derive(Debug, Clone)]
pub struct SimChain {
    pub chain_id: u64,
    blocks: Vec<SimBlock>,
    /// (height, transfers): included in the block of that height when it is made.
    readds: Vec<(u64, Vec<SimTransfer>)>,
}

/// What a reorg did.
#[derive(Debug, Clone, PartialEq)]
pub struct Reorganised {
    /// The heights whose blocks were replaced.
    pub replaced: Vec<u64>,
    /// The transfers taken out of the chain.
    pub dropped: Vec<SimTransfer>,
    /// The transfers of the replaced blocks that the new blocks hold again.
    pub kept: Vec<SimTransfer>,
    /// Where the dropped transfers come back, if they do.
    pub readd_at: Option<u64>,
}

impl SimChain {
    /// A chain with its genesis block only.
    pub fn new(chain_id: u64, timestamp: u64) -> Self {
        let genesis = SimBlock {
            number: 0,
            hash: new_hash(),
            parent: [0; 32],
            timestamp,
            transfers: Vec::new(),
        };
        SimChain { chain_id, blocks: vec![genesis], readds: Vec::new() }
    }

    /// The newest block.
    pub fn tip(&self) -> &SimBlock {
        self.blocks.last().unwrap_or_else(|| unreachable!("a chain always has its genesis"))
    }

    /// The block at `number`.
    pub fn block(&self, number: u64) -> Option<&SimBlock> {
        self.blocks.get(usize::try_from(number).ok()?)
    }

    /// Every block, genesis first.
    pub fn blocks(&self) -> &[SimBlock] {
        &self.blocks
    }

    /// `(latest, safe, finalized)`.
    pub fn heads(&self, lags: Lags) -> (u64, u64, u64) {
        let latest = self.tip().number;
        (latest, latest.saturating_sub(lags.safe), latest.saturating_sub(lags.finalized))
    }

    /// Takes the re-added transfers due in the block of `height` (all due at or before it).
    pub fn take_due(&mut self, height: u64) -> Vec<SimTransfer> {
        let mut due = Vec::new();
        self.readds.retain_mut(|(at, transfers)| {
            let now = *at <= height;
            if now {
                due.append(transfers);
            }
            !now
        });
        due
    }

    /// `transfers` come back in the block of `height`.
    pub fn schedule(&mut self, height: u64, transfers: Vec<SimTransfer>) {
        if !transfers.is_empty() {
            self.readds.push((height, transfers));
        }
    }

    /// Appends a block holding `transfers` (take the due re-added ones first, see
    /// [`SimChain::take_due`]).
    pub fn append(&mut self, transfers: Vec<SimTransfer>, timestamp: u64) -> &SimBlock {
        let number = self.tip().number + 1;
        let parent = self.tip().hash;
        self.blocks.push(SimBlock { number, hash: new_hash(), parent, timestamp, transfers });
        self.tip()
    }

    /// The transfers of the last `depth` blocks, without changing anything: what a reorg of
    /// that depth would replace.
    ///
    /// # Errors
    /// A message when `depth` is 0 or reaches a finalized block (or the genesis).
    pub fn replaceable(&self, depth: u64, lags: Lags) -> Result<Vec<&SimTransfer>, String> {
        let latest = self.tip().number;
        if depth == 0 {
            return Err("depth: at least 1".into());
        }
        let (_, _, finalized) = self.heads(lags);
        if depth > latest.saturating_sub(finalized) || depth > latest {
            return Err(format!(
                "depth: {depth} would reach a finalized block (latest {latest}, finalized \
                 {finalized})"
            ));
        }
        let from = usize::try_from(latest + 1 - depth).unwrap_or(usize::MAX);
        Ok(self.blocks[from..].iter().flat_map(|b| b.transfers.iter()).collect())
    }

    /// Replaces the last `depth` blocks by as many new ones (new hashes): the transfers whose
    /// transaction is in `drop` are taken out, the others go into the first new block; the
    /// dropped ones come back in the block `readd_after` blocks past the new tip when given.
    /// Check with [`SimChain::replaceable`] first.
    pub fn reorganise(
        &mut self,
        depth: u64,
        drop: &[String],
        readd_after: Option<u64>,
        timestamp: u64,
    ) -> Reorganised {
        let keep = self.blocks.len().saturating_sub(usize::try_from(depth).unwrap_or(usize::MAX));
        let removed = self.blocks.split_off(keep.max(1));
        let replaced: Vec<u64> = removed.iter().map(|b| b.number).collect();
        let (dropped, kept): (Vec<SimTransfer>, Vec<SimTransfer>) = removed
            .into_iter()
            .flat_map(|b| b.transfers)
            .partition(|t| drop.iter().any(|d| d.eq_ignore_ascii_case(&t.tx)));
        for (i, _) in replaced.iter().enumerate() {
            let transfers = if i == 0 { kept.clone() } else { Vec::new() };
            let number = self.tip().number + 1;
            let parent = self.tip().hash;
            self.blocks.push(SimBlock { number, hash: new_hash(), parent, timestamp, transfers });
        }
        let readd_at = readd_after.filter(|_| !dropped.is_empty()).map(|after| {
            let at = self.tip().number + after.max(1);
            self.schedule(at, dropped.clone());
            at
        });
        Reorganised { replaced, dropped, kept, readd_at }
    }

    /// The block holding the transfer `tx`, with the transfer.
    pub fn find(&self, tx: &str) -> Option<(&SimBlock, &SimTransfer)> {
        self.blocks.iter().find_map(|b| {
            b.transfers.iter().find(|t| t.tx.eq_ignore_ascii_case(tx)).map(|t| (b, t))
        })
    }
}

/// A random 32-byte block hash.
fn new_hash() -> [u8; 32] {
    rand::random()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transfer(tx: &str) -> SimTransfer {
        SimTransfer {
            tx: tx.into(),
            to: "0xabc".into(),
            token: TokenType::USDC,
            contract: None,
            raw_amount: U256::from(5u64),
            sender: None,
            price_usd: 1.0,
        }
    }

    const LAGS: Lags = Lags { safe: 2, finalized: 5 };

    #[test]
    fn blocks_chain_and_heads_trail() {
        let mut chain = SimChain::new(8453, 0);
        for i in 0..6 {
            chain.append(vec![transfer(&format!("t{i}"))], i);
        }
        assert!(chain.take_due(100).is_empty());
        assert_eq!(chain.heads(LAGS), (6, 4, 1));
        assert_eq!(chain.block(3).unwrap().parent, chain.block(2).unwrap().hash);
        assert_eq!(chain.find("T2").unwrap().0.number, 3);
    }

    #[test]
    fn a_reorg_drops_keeps_and_readds() {
        let mut chain = SimChain::new(8453, 0);
        for i in 0..8 {
            chain.append(vec![transfer(&format!("t{i}"))], i);
        }
        let old_tip = chain.tip().hash;
        // latest 8, finalized 3: blocks 4..=8 can be replaced, not 3.
        assert!(chain.replaceable(6, LAGS).is_err());
        assert_eq!(chain.replaceable(5, LAGS).unwrap().len(), 5);
        assert_eq!(chain.replaceable(2, LAGS).unwrap().len(), 2);
        let done = chain.reorganise(2, &["t7".into()], Some(2), 9);
        assert_eq!(done.replaced, [7, 8]);
        assert_eq!(done.dropped, [transfer("t7")]);
        assert_eq!(done.kept, [transfer("t6")]);
        assert_eq!(done.readd_at, Some(10));
        assert_ne!(chain.tip().hash, old_tip);
        assert_eq!(chain.tip().number, 8);
        assert_eq!(chain.find("t6").unwrap().0.number, 7);
        assert!(chain.find("t7").is_none());
        assert!(chain.take_due(9).is_empty());
        chain.append(Vec::new(), 10);
        let due = chain.take_due(10);
        assert_eq!(due, [transfer("t7")]);
        assert_eq!(chain.append(due, 11).number, 10);
        assert_eq!(chain.find("t7").unwrap().0.number, 10);
    }
}
