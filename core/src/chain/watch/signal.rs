//! What a chain watcher tells the deposit engine: data only.
//!
//! A chain watcher follows the transfers into the deposit addresses on one chain and the
//! chain's heads; the deposit engine turns these signals into the `seen → confirming →
//! confirmed` phases of a deposit and into reorg reports. A signal says what the chain showed,
//! never what to do about it: the finality policy and the lifecycle decide that.

use crate::tokens::TokenType;
use crate::units::U256;

/// Where a transfer sits in its chain: a block (EVM) or a slot (Solana).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Inclusion {
    /// The block number (EVM) or slot (Solana).
    pub height: u64,
    /// The block's hash (EVM) or the slot's blockhash (Solana): a reorg changes it.
    pub hash: String,
}

/// One incoming transfer into a watched deposit address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TransferSeen {
    /// The chain's id (depositkit's `CHAIN` numbering).
    pub chain_id: u64,
    /// The deposit address it went to (EVM: lower-case hex; Solana: base58).
    pub to: String,
    /// The token, when it is one depositkit knows on that chain; `None` for any other.
    pub token: Option<TokenType>,
    /// The token contract (EVM), mint (Solana), or `None` for the chain's native coin.
    pub contract: Option<String>,
    /// The amount in the token's smallest unit.
    pub raw_amount: U256,
    /// The transaction hash (EVM) or signature (Solana).
    pub tx: String,
    /// The position within the transaction (EVM log index; Solana instruction index), so two
    /// transfers of one transaction are two deposits.
    pub index: u32,
    /// Where it was included.
    pub inclusion: Inclusion,
}

/// What a chain watcher reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainSignal {
    /// A transfer was included in a block (again, after a reorg, possibly at another height).
    Included(TransferSeen),
    /// A transfer reported as included is no longer in the chain (a reorg removed its block).
    Removed {
        /// The chain's id.
        chain_id: u64,
        /// The transaction hash or signature.
        tx: String,
        /// The position within the transaction.
        index: u32,
    },
    /// The chain's heads moved (each only ever reported when known).
    Head {
        /// The chain's id.
        chain_id: u64,
        /// The newest block or slot (`latest` / `processed`).
        latest: u64,
        /// The newest `safe` block (EVM) or `confirmed` slot (Solana), when the chain has one.
        safe: Option<u64>,
        /// The newest `finalized` block or slot, when the chain has one.
        finalized: Option<u64>,
    },
    /// The watcher lost its endpoint (it keeps retrying); balance polling covers detection
    /// meanwhile.
    Down {
        /// The chain's id.
        chain_id: u64,
        /// Why, without the endpoint's path or credentials.
        reason: String,
    },
    /// The watcher reached its endpoint again and caught up from where it stopped.
    Up {
        /// The chain's id.
        chain_id: u64,
    },
}
