//! Transaction history (spec §2 `UATransaction`, transaction listings): the account's
//! deposits, sweeps and refunds, as the universal-account service lists them
//! (`docs/protocol.md` §3).
//!
//! Answers are cached like the reference's (§3.6): three caches — pages, token pages, single
//! transactions — of 10 entries each, least recently used evicted first, each entry good for
//! 30 s (a read exactly at the deadline still hits). Unlike the reference, the caches are
//! emptied whenever this client changes the history itself: a new deposit detected, a sweep,
//! refund or recovery finished. An answer fetched across such a change is not cached.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::chains::{AddressType, Chain};
use crate::services::{TokenTransactionsResponse, TransactionsResponse, UaTransaction};
use crate::tokens::{TokenType, token_info};

/// How long a cached history answer is used.
pub const TRANSACTION_CACHE_TTL: Duration = Duration::from_secs(30);
/// How many answers each history cache keeps.
pub const TRANSACTION_CACHE_ENTRIES: usize = 10;
/// The page size when none is given.
pub const DEFAULT_PAGE_SIZE: u32 = 10;
/// The largest page size the service accepts.
pub const MAX_PAGE_SIZE: u32 = 100;

/// The zero address: how the service names a native asset on an EVM chain.
pub const EVM_NATIVE_ADDRESS: &str = "0x0000000000000000000000000000000000000000";
/// The system program: how the service names SOL on Solana.
pub const SOLANA_NATIVE_ADDRESS: &str = "11111111111111111111111111111111";

/// Which token's transactions to list (spec §2 `TokenTransactionFilter`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTransactionFilter {
    /// The chain.
    pub chain_id: u64,
    /// The token's contract (mint on Solana); the zero address (system program on Solana) for
    /// the chain's native asset.
    pub address: String,
    /// depositkit's addition: transactions per page, 1 to 100 (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
}

impl TokenTransactionFilter {
    /// A filter for `address` on `chain_id`.
    pub fn new(chain_id: u64, address: impl Into<String>) -> Self {
        TokenTransactionFilter { chain_id, address: address.into(), page_size: None }
    }

    /// The filter of `token` on `chain_id` (its contract, or the native address); `None` when
    /// depositkit knows no such token there.
    pub fn for_token(chain_id: u64, token: TokenType) -> Option<Self> {
        let chain = Chain::from_id(chain_id)?;
        let info = token_info(token, chain)?;
        let address = match info.contract {
            Some(contract) => contract,
            None => match chain.address_type() {
                AddressType::Evm => EVM_NATIVE_ADDRESS,
                AddressType::Solana => SOLANA_NATIVE_ADDRESS,
            },
        };
        Some(TokenTransactionFilter::new(chain_id, address))
    }

    /// With `page_size` transactions per page.
    pub fn with_page_size(mut self, page_size: u32) -> Self {
        self.page_size = Some(page_size);
        self
    }
}

/// A small TTL + LRU cache (the reference's `TransactionCache`), on an explicit clock.
#[derive(Debug, Clone)]
pub struct TransactionCache<T> {
    ttl_ms: u64,
    max_entries: usize,
    /// Least recently used first.
    entries: VecDeque<(String, u64, T)>,
}

impl<T: Clone> TransactionCache<T> {
    /// A cache whose entries live `ttl` and that holds at most `max_entries` (at least 1).
    pub fn new(ttl: Duration, max_entries: usize) -> Self {
        TransactionCache {
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            max_entries: max_entries.max(1),
            entries: VecDeque::new(),
        }
    }

    /// The value of `key` at `now_ms`: nothing once `now_ms` is past the entry's deadline (the
    /// entry is then removed); a hit makes the entry the most recently used.
    pub fn get(&mut self, key: &str, now_ms: u64) -> Option<T> {
        let i = self.entries.iter().position(|(k, _, _)| k == key)?;
        let (k, expires, value) = self.entries.remove(i)?;
        if now_ms > expires {
            return None;
        }
        self.entries.push_back((k, expires, value.clone()));
        Some(value)
    }

    /// Stores `value` under `key` (replacing an entry of the same key); when full, the least
    /// recently used entry goes first.
    pub fn set(&mut self, key: &str, value: T, now_ms: u64) {
        self.entries.retain(|(k, _, _)| k != key);
        while self.entries.len() >= self.max_entries {
            self.entries.pop_front();
        }
        self.entries.push_back((key.to_owned(), now_ms.saturating_add(self.ttl_ms), value));
    }

    /// Removes `key`; whether it was there.
    pub fn invalidate_key(&mut self, key: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|(k, _, _)| k != key);
        self.entries.len() != before
    }

    /// Removes everything.
    pub fn invalidate(&mut self) {
        self.entries.clear();
    }

    /// Entries held (expired ones included until they are read).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The three history caches of a client and the generation that invalidations bump.
#[derive(Debug)]
pub(crate) struct HistoryCaches {
    pub pages: TransactionCache<TransactionsResponse>,
    pub tokens: TransactionCache<TokenTransactionsResponse>,
    pub single: TransactionCache<UaTransaction>,
    pub generation: u64,
}

impl Default for HistoryCaches {
    fn default() -> Self {
        HistoryCaches {
            pages: TransactionCache::new(TRANSACTION_CACHE_TTL, TRANSACTION_CACHE_ENTRIES),
            tokens: TransactionCache::new(TRANSACTION_CACHE_TTL, TRANSACTION_CACHE_ENTRIES),
            single: TransactionCache::new(TRANSACTION_CACHE_TTL, TRANSACTION_CACHE_ENTRIES),
            generation: 0,
        }
    }
}

impl HistoryCaches {
    /// Empties the three caches.
    pub fn invalidate(&mut self) {
        self.pages.invalidate();
        self.tokens.invalidate();
        self.single.invalidate();
        self.generation += 1;
    }

    pub fn page_key(page: u32, page_size: u32) -> String {
        format!("page:{page}:{page_size}")
    }

    pub fn token_key(
        filter: &TokenTransactionFilter,
        page_size: u32,
        cursor: Option<&str>,
    ) -> String {
        format!(
            "token:{}:{}:{}:{page_size}",
            filter.address.to_ascii_lowercase(),
            filter.chain_id,
            cursor.unwrap_or("first")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miss_hit_and_expiry_exactly_after_the_ttl() {
        let mut c = TransactionCache::new(Duration::from_millis(1000), 10);
        assert_eq!(c.get("a", 0), None);
        c.set("a", 1, 0);
        assert_eq!(c.get("a", 999), Some(1));
        assert_eq!(c.get("a", 1000), Some(1), "exactly at the TTL is still a hit");
        assert_eq!(c.get("a", 1001), None);
        assert!(c.is_empty(), "an expired read removes the entry");
    }

    #[test]
    fn lru_eviction_and_promotion() {
        let mut c = TransactionCache::new(Duration::from_secs(30), 2);
        c.set("a", 1, 0);
        c.set("b", 2, 0);
        assert_eq!(c.get("a", 1), Some(1)); // a is now the most recent
        c.set("c", 3, 2);
        assert_eq!(c.get("b", 3), None, "b was the least recently used");
        assert_eq!(c.get("a", 3), Some(1));
        assert_eq!(c.get("c", 3), Some(3));
        c.set("c", 4, 4);
        assert_eq!(c.len(), 2, "overwriting keeps one entry");
        assert!(c.invalidate_key("c"));
        assert!(!c.invalidate_key("c"));
        c.invalidate();
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn defaults_ten_entries_thirty_seconds() {
        let mut c = TransactionCache::new(TRANSACTION_CACHE_TTL, TRANSACTION_CACHE_ENTRIES);
        for i in 0..11u32 {
            c.set(&format!("k{i}"), i, 0);
        }
        assert_eq!(c.len(), 10);
        assert_eq!(c.get("k0", 0), None);
        assert_eq!(c.get("k10", 30_000), Some(10));
        assert_eq!(c.get("k10", 30_001), None);
    }

    #[test]
    fn filters_for_tokens() {
        let f = TokenTransactionFilter::for_token(8453, TokenType::USDC).unwrap();
        assert_eq!(f.address, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
        assert_eq!(
            TokenTransactionFilter::for_token(1, TokenType::ETH).unwrap().address,
            EVM_NATIVE_ADDRESS
        );
        assert_eq!(
            TokenTransactionFilter::for_token(101, TokenType::SOL).unwrap().address,
            SOLANA_NATIVE_ADDRESS
        );
        assert_eq!(TokenTransactionFilter::for_token(8453, TokenType::SOL), None);
        let json = serde_json::to_value(f.with_page_size(3)).unwrap();
        assert_eq!(json["chainId"], 8453);
        assert_eq!(json["pageSize"], 3);
        let key = HistoryCaches::token_key(&TokenTransactionFilter::new(1, "0xAB"), 10, None);
        assert_eq!(key, "token:0xab:1:first:10");
    }
}
