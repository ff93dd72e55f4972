//! Following one EVM chain over JSON-RPC (HTTP or a websocket: `transport`): each step reads the newest block; when it moved,
//! checks that the block last processed is still in the chain (else walks back to the fork and
//! reports the orphaned transfers removed), then reads the new blocks one by one — native
//! transfers from their transactions, ERC-20 `Transfer` logs into the watched addresses through
//! `eth_getLogs` filtered by the `to` topic — and reports what it found, with the chain's
//! `latest`, `safe` and `finalized` heads.
//!
//! A matched transfer's receipt is read too: a reverted transaction moved no native value, and
//! a log's position within its transaction (not its index in the block, which changes when a
//! reorg re-includes the transaction elsewhere) is the transfer's stable `index`.

use std::collections::HashMap;
use std::sync::Arc;

use alloy_primitives::{Address, B256};
use serde_json::{Value, json};

use super::addresses::WatchedAddresses;
use super::runner::Control;
use super::signal::{ChainSignal, Inclusion, TransferSeen};
use super::tracker::Tracker;
use super::transport::Transport;
use super::{NATIVE_TRANSFER_INDEX, WatchSettings, token_of};
use crate::chain::erc20::{TRANSFER_EVENT_TOPIC, decode_transfer_log};
use crate::chain::evm::{Log, quantity_u256};
use crate::chain::rpc::{malformed, quantity_u64};
use crate::error::{Error, ErrorKind, Result};
use crate::units::U256;

/// A block as `eth_getBlockByNumber` describes it (with full transactions when asked).
#[derive(Debug, Clone)]
struct Block {
    inclusion: Inclusion,
    parent: String,
    transactions: Vec<Value>,
}

/// A transfer found in a processed block, before its receipt was read.
#[derive(Debug)]
struct Candidate {
    tx: String,
    to: String,
    contract: Option<String>,
    raw_amount: U256,
    inclusion: Inclusion,
    /// The log's index in its block (`None`: the transaction's native value).
    block_log_index: Option<u64>,
}

/// The state of one EVM chain's watcher between steps.
#[derive(Debug)]
pub(super) struct EvmFollower {
    chain_id: u64,
    rpc: Transport,
    addresses: Arc<WatchedAddresses>,
    tracker: Tracker,
    settings: WatchSettings,
    heads: Option<(u64, Option<u64>, Option<u64>)>,
    /// The `eth_getLogs` topic chunks and the address set's generation they were made of.
    topics: Option<(u64, Arc<Vec<Value>>)>,
}

impl EvmFollower {
    pub(super) fn new(
        chain_id: u64,
        url: &str,
        addresses: Arc<WatchedAddresses>,
        settings: WatchSettings,
    ) -> Self {
        EvmFollower {
            chain_id,
            rpc: Transport::new(url, &settings),
            addresses,
            tracker: Tracker::new(chain_id, settings.reorg_window),
            settings,
            heads: None,
            topics: None,
        }
    }

    /// One step; `true` when blocks are left to read (the runner steps again at once).
    pub(super) fn step(&mut self, emit: &mut dyn FnMut(ChainSignal)) -> Result<bool> {
        self.rpc.follow_heads()?;
        let newest = self.block("latest", false)?.ok_or_else(|| no_block("latest"))?;
        let latest = newest.inclusion.height;
        if self.tracker.tip().is_none() {
            let start = self.settings.from_height.map_or(latest, |h| h.saturating_sub(1));
            let tag = hex(start.min(latest));
            let anchor = self.block(&tag, false)?.ok_or_else(|| no_block(&tag))?;
            self.tracker.anchor(anchor.inclusion);
        }
        if self.tracker.tip() == Some(&newest.inclusion) {
            self.report_heads(latest, emit)?;
            return Ok(false);
        }
        self.follow_reorg(emit)?;
        let tip = self.tracker.tip().map_or(0, |b| b.height);
        let end = latest.min(tip.saturating_add(self.settings.max_blocks_per_step.max(1)));
        let mut candidates = Vec::new();
        let mut scanned = tip;
        for height in tip + 1..=end {
            let Some(block) = self.block(&hex(height), true)? else { break };
            if !self.tracker.extend(block.inclusion.clone(), &block.parent) {
                break; // the chain changed under us: the next step finds the fork
            }
            candidates.extend(self.native_transfers(&block)?);
            scanned = height;
        }
        if scanned > tip {
            let chunks = self.topic_chunks();
            candidates.extend(self.token_transfers(tip + 1, scanned, &chunks)?);
        }
        for seen in self.confirm(candidates)? {
            if let Some(signal) = self.tracker.include(seen) {
                emit(signal);
            }
        }
        self.report_heads(latest, emit)?;
        Ok(scanned < latest)
    }

    /// The pause after a step that caught up (`transport`); `false` once stopped.
    pub(super) fn pause(&self, control: &Control, settings: &WatchSettings) -> bool {
        self.rpc.pause(control, settings)
    }

    /// When the block last processed is no longer in the chain: finds the newest remembered
    /// block that still is, reports the transfers above it removed and continues from it.
    fn follow_reorg(&mut self, emit: &mut dyn FnMut(ChainSignal)) -> Result<()> {
        let heights = self.tracker.heights_newest_first();
        for (walked, height) in heights.iter().copied().enumerate() {
            let now = self.block(&hex(height), false)?;
            if now.as_ref().map(|b| b.inclusion.hash.as_str()) == self.tracker.hash_at(height) {
                if walked > 0 {
                    self.tracker.rewind(height).into_iter().for_each(&mut *emit);
                }
                return Ok(());
            }
        }
        // Deeper than the remembered window: start again below it.
        let below = heights.last().map_or(0, |h| h.saturating_sub(1));
        self.tracker.rewind(0).into_iter().for_each(&mut *emit);
        let tag = hex(below);
        let anchor = self.block(&tag, false)?.ok_or_else(|| no_block(&tag))?;
        self.tracker.anchor(anchor.inclusion);
        Ok(())
    }

    /// The transactions of `block` sending native value to a watched address.
    fn native_transfers(&self, block: &Block) -> Result<Vec<Candidate>> {
        const METHOD: &str = "eth_getBlockByNumber";
        let mut found = Vec::new();
        for tx in &block.transactions {
            let Some(to) = tx.get("to").and_then(Value::as_str).map(str::to_ascii_lowercase) else {
                continue; // a contract creation
            };
            if !self.addresses.contains(&to) {
                continue;
            }
            let value = quantity_u256(METHOD, tx.get("value").unwrap_or(&Value::Null))?;
            if value.is_zero() {
                continue;
            }
            let hash = tx
                .get("hash")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(METHOD, "a transaction with a hash", tx))?;
            found.push(Candidate {
                tx: hash.to_ascii_lowercase(),
                to,
                contract: None,
                raw_amount: value,
                inclusion: block.inclusion.clone(),
                block_log_index: None,
            });
        }
        Ok(found)
    }

    /// The `to` topics of the watched addresses in chunks of `addresses_per_filter`, made
    /// again only when the addresses changed (10,000 addresses are 10,000 parses a step).
    fn topic_chunks(&mut self) -> Arc<Vec<Value>> {
        let generation = self.addresses.generation();
        if let Some((made_at, chunks)) = &self.topics
            && *made_at == generation
        {
            return Arc::clone(chunks);
        }
        let watched = self.addresses.snapshot();
        let chunks: Vec<Value> = watched
            .chunks(self.settings.addresses_per_filter.max(1))
            .map(|chunk| Value::from(chunk.iter().map(|a| address_topic(a)).collect::<Vec<_>>()))
            .collect();
        let chunks = Arc::new(chunks);
        self.topics = Some((generation, Arc::clone(&chunks)));
        chunks
    }

    /// ERC-20 `Transfer` logs into watched addresses in blocks `from..=to`, one filter per
    /// chunk of `to` topics, `parallel_requests` of them at a time. A log of a block other than
    /// the one processed at its height (a reorg in between) is left for the next step.
    fn token_transfers(&self, from: u64, to: u64, chunks: &[Value]) -> Result<Vec<Candidate>> {
        const METHOD: &str = "eth_getLogs";
        let answers = fan_out(chunks, self.settings.parallel_requests, |topics| {
            let filter = json!({
                "fromBlock": hex(from),
                "toBlock": hex(to),
                "topics": [TRANSFER_EVENT_TOPIC.to_string(), Value::Null, topics],
            });
            self.rpc.request(METHOD, json!([filter]))
        })?;
        let mut found = Vec::new();
        for answer in &answers {
            let items = answer.as_array().ok_or_else(|| malformed(METHOD, "an array", answer))?;
            for item in items {
                if item.get("removed").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                let (log, block_hash) = read_log(METHOD, item)?;
                let Some(transfer) = decode_transfer_log(&log) else { continue };
                let recipient = format!("{:#x}", transfer.to);
                let (Some(height), Some(tx), Some(index)) =
                    (log.block_number, log.transaction_hash, log.log_index)
                else {
                    continue; // pending
                };
                if self.tracker.hash_at(height) != Some(block_hash.as_str())
                    || !self.addresses.contains(&recipient)
                    || transfer.value.is_zero()
                {
                    continue;
                }
                found.push(Candidate {
                    tx: tx.to_string(),
                    to: recipient,
                    contract: Some(format!("{:#x}", transfer.token)),
                    raw_amount: transfer.value,
                    inclusion: Inclusion { height, hash: block_hash },
                    block_log_index: Some(index),
                });
            }
        }
        Ok(found)
    }

    /// Reads the receipts of the candidates' transactions: keeps the transfers of successful
    /// transactions in the block they were found in, with their position in the transaction.
    fn confirm(&self, candidates: Vec<Candidate>) -> Result<Vec<TransferSeen>> {
        let mut txs: Vec<&str> = candidates.iter().map(|c| c.tx.as_str()).collect();
        txs.sort_unstable();
        txs.dedup();
        let read = fan_out(&txs, self.settings.parallel_requests, |tx| self.receipt(tx))?;
        let receipts: HashMap<String, Option<TxReceipt>> =
            txs.into_iter().map(str::to_owned).zip(read).collect();
        let mut seen = Vec::new();
        for candidate in candidates {
            let Some(Some(receipt)) = receipts.get(&candidate.tx) else { continue };
            if !receipt.success || receipt.block_hash != candidate.inclusion.hash {
                continue;
            }
            let index = match candidate.block_log_index {
                None => NATIVE_TRANSFER_INDEX,
                Some(block_index) => {
                    let Some(position) = receipt.log_indexes.iter().position(|i| *i == block_index)
                    else {
                        continue;
                    };
                    u32::try_from(position).unwrap_or(u32::MAX - 1)
                }
            };
            seen.push(TransferSeen {
                chain_id: self.chain_id,
                token: token_of(self.chain_id, candidate.contract.as_deref()),
                to: candidate.to,
                contract: candidate.contract,
                raw_amount: candidate.raw_amount,
                tx: candidate.tx,
                index,
                inclusion: candidate.inclusion,
            });
        }
        seen.sort_by(|a, b| {
            (a.inclusion.height, &a.tx, a.index).cmp(&(b.inclusion.height, &b.tx, b.index))
        });
        Ok(seen)
    }

    /// Reports the heads when `latest` moved (or was never reported); forgets final transfers.
    fn report_heads(&mut self, latest: u64, emit: &mut dyn FnMut(ChainSignal)) -> Result<()> {
        if self.heads.is_some_and(|(known, _, _)| known == latest) {
            return Ok(());
        }
        let safe = self.tag_height("safe")?;
        let finalized = self.tag_height("finalized")?;
        self.heads = Some((latest, safe, finalized));
        self.tracker.settle(finalized);
        emit(ChainSignal::Head { chain_id: self.chain_id, latest, safe, finalized });
        Ok(())
    }

    /// The height of the block `tag` names; `None` when the node does not know the tag.
    fn tag_height(&self, tag: &str) -> Result<Option<u64>> {
        match self.block(tag, false) {
            Ok(block) => Ok(block.map(|b| b.inclusion.height)),
            Err(e) if e.kind() == ErrorKind::Rpc => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn block(&self, tag: &str, full: bool) -> Result<Option<Block>> {
        const METHOD: &str = "eth_getBlockByNumber";
        let value = self.rpc.request(METHOD, json!([tag, full]))?;
        if value.is_null() {
            return Ok(None);
        }
        let text =
            |name: &str| {
                value.get(name).and_then(Value::as_str).map(str::to_ascii_lowercase).ok_or_else(
                    || malformed(METHOD, "a block with a hash and a parent hash", &value),
                )
            };
        let height = quantity_u64(METHOD, value.get("number").unwrap_or(&Value::Null))?;
        let transactions = match value.get("transactions") {
            Some(Value::Array(items)) if full => items.clone(),
            _ => Vec::new(),
        };
        Ok(Some(Block {
            inclusion: Inclusion { height, hash: text("hash")? },
            parent: text("parentHash")?,
            transactions,
        }))
    }

    fn receipt(&self, tx: &str) -> Result<Option<TxReceipt>> {
        const METHOD: &str = "eth_getTransactionReceipt";
        let value = self.rpc.request(METHOD, json!([tx]))?;
        if value.is_null() {
            return Ok(None);
        }
        let status = quantity_u64(METHOD, value.get("status").unwrap_or(&Value::Null))?;
        let block_hash = value
            .get("blockHash")
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
            .ok_or_else(|| malformed(METHOD, "a receipt with a block hash", &value))?;
        let log_indexes = match value.get("logs") {
            Some(Value::Array(logs)) => logs
                .iter()
                .map(|l| quantity_u64(METHOD, l.get("logIndex").unwrap_or(&Value::Null)))
                .collect::<Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        Ok(Some(TxReceipt { success: status == 1, block_hash, log_indexes }))
    }
}

/// What the watcher reads of a receipt.
#[derive(Debug)]
struct TxReceipt {
    success: bool,
    block_hash: String,
    log_indexes: Vec<u64>,
}

/// A log and its block's hash (lower-case).
fn read_log(method: &str, item: &Value) -> Result<(Log, String)> {
    let log = crate::chain::evm::parse_log(method, item)?;
    let block_hash = item
        .get("blockHash")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    Ok((log, block_hash))
}

/// `call` for each of `items`, at most `width` at a time (each thread takes every `width`-th
/// item in turn); the answers in the items' order, or the first error.
fn fan_out<T: Sync, R: Send>(
    items: &[T],
    width: usize,
    call: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let width = width.clamp(1, items.len().max(1));
    if width == 1 {
        return items.iter().map(&call).collect();
    }
    let call = &call;
    let shares: Vec<Result<Vec<(usize, R)>>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..width)
            .map(|first| {
                scope.spawn(move || {
                    (first..items.len())
                        .step_by(width)
                        .map(|i| call(&items[i]).map(|answer| (i, answer)))
                        .collect::<Result<Vec<_>>>()
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut answers: Vec<(usize, R)> = Vec::with_capacity(items.len());
    for share in shares {
        answers.extend(share?);
    }
    answers.sort_unstable_by_key(|(i, _)| *i);
    Ok(answers.into_iter().map(|(_, answer)| answer).collect())
}

/// The 32-byte topic of an address (left-padded).
fn address_topic(address: &str) -> String {
    let parsed: Address = address.parse().unwrap_or(Address::ZERO);
    B256::left_padding_from(parsed.as_slice()).to_string()
}

fn hex(height: u64) -> String {
    format!("{height:#x}")
}

fn no_block(tag: &str) -> Error {
    Error::new(
        ErrorKind::Protocol,
        format!("eth_getBlockByNumber answered no block for {}", crate::describe::quote(tag)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_left_padded_addresses() {
        let topic = address_topic("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed");
        assert_eq!(topic, format!("0x{}5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "0".repeat(24)));
        assert_eq!(hex(26), "0x1a");
    }

    #[test]
    fn fanned_out_calls_answer_in_order_or_fail() {
        let items: Vec<u64> = (0..10).collect();
        for width in [0, 1, 3, 16] {
            let answers = fan_out(&items, width, |i| Ok(i * 2)).unwrap();
            assert_eq!(answers, (0..10).map(|i| i * 2).collect::<Vec<_>>(), "width {width}");
        }
        let failed = fan_out(&items, 4, |i| {
            if *i == 7 { Err(Error::new(ErrorKind::Network, "down")) } else { Ok(*i) }
        });
        assert_eq!(failed.unwrap_err().message(), "down");
        assert!(fan_out(&Vec::<u64>::new(), 4, |i| Ok(*i)).unwrap().is_empty());
    }
}
