//! Following Solana over JSON-RPC (HTTP): the `processed`, `confirmed` and `finalized` slots,
//! and per watched address the signatures `getSignaturesForAddress` lists (read when the
//! confirmed slot moved). A new signature's transaction (`getTransaction`, `jsonParsed`) says
//! what the address received: lamports (`postBalances − preBalances` at the address's account
//! index) and SPL tokens (`postTokenBalances − preTokenBalances` of token accounts the address
//! owns). A reported transfer whose signature the node no longer knows before it is finalized
//! (its slot was skipped by the cluster) is reported removed, and found again if it lands later.
//!
//! A transfer's [`index`](super::signal::TransferSeen::index) is the receiving account's index
//! in the transaction's account keys (the address itself for lamports, the token account for
//! tokens), so two transfers of one transaction are two deposits.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};

use super::addresses::WatchedAddresses;
use super::signal::{ChainSignal, Inclusion, TransferSeen};
use super::tracker::Tracker;
use super::{WatchSettings, token_of};
use crate::chain::rpc::malformed;
use crate::chain::solana::SolanaRpc;
use crate::error::Result;
use crate::units::U256;

/// The state of the Solana watcher between steps.
#[derive(Debug)]
pub(super) struct SolanaFollower {
    chain_id: u64,
    rpc: SolanaRpc,
    addresses: Arc<WatchedAddresses>,
    tracker: Tracker,
    settings: WatchSettings,
    /// Signatures already read, per address: listed again, they are skipped.
    known: HashMap<String, HashSet<String>>,
    /// The confirmed slot the addresses were last read at.
    read_at: Option<u64>,
    /// The first slot of interest (signatures of older slots are not reported).
    start: Option<u64>,
    heads: Option<(u64, Option<u64>, Option<u64>)>,
}

impl SolanaFollower {
    pub(super) fn new(
        chain_id: u64,
        url: &str,
        addresses: Arc<WatchedAddresses>,
        settings: WatchSettings,
    ) -> Self {
        SolanaFollower {
            chain_id,
            rpc: SolanaRpc::new(url, &settings.http),
            addresses,
            tracker: Tracker::new(chain_id, settings.reorg_window),
            start: settings.from_height,
            settings,
            known: HashMap::new(),
            read_at: None,
            heads: None,
        }
    }

    pub(super) fn step(&mut self, emit: &mut dyn FnMut(ChainSignal)) -> Result<bool> {
        let processed = self.slot("processed")?;
        let confirmed = self.slot("confirmed")?;
        let finalized = self.slot("finalized")?;
        let start = *self.start.get_or_insert(confirmed);
        let watched = self.addresses.snapshot();
        let fresh = watched.iter().any(|a| !self.known.contains_key(a));
        if self.read_at != Some(confirmed) || fresh {
            self.check_reported(finalized, emit)?;
            for address in &watched {
                self.read_address(address, start, emit)?;
            }
            self.known.retain(|a, _| self.addresses.contains(a));
            self.read_at = Some(confirmed);
        }
        let heads = (processed, Some(confirmed), Some(finalized));
        if self.heads != Some(heads) {
            self.heads = Some(heads);
            self.tracker.settle(Some(finalized));
            emit(ChainSignal::Head {
                chain_id: self.chain_id,
                latest: processed,
                safe: Some(confirmed),
                finalized: Some(finalized),
            });
        }
        Ok(false)
    }

    /// Reports removed the reported transfers the node no longer knows (or knows at another
    /// slot), and lets their signatures be found again.
    fn check_reported(&mut self, finalized: u64, emit: &mut dyn FnMut(ChainSignal)) -> Result<()> {
        const METHOD: &str = "getSignatureStatuses";
        let pending: Vec<TransferSeen> =
            self.tracker.reported().filter(|s| s.inclusion.height > finalized).cloned().collect();
        let signatures: Vec<String> = {
            let set: HashSet<&str> = pending.iter().map(|s| s.tx.as_str()).collect();
            set.into_iter().map(str::to_owned).collect()
        };
        for chunk in signatures.chunks(256) {
            let answer =
                self.rpc.request(METHOD, json!([chunk, {"searchTransactionHistory": true}]))?;
            let list = answer
                .get("value")
                .and_then(Value::as_array)
                .ok_or_else(|| malformed(METHOD, "a list of statuses", &answer))?;
            for (signature, status) in chunk.iter().zip(list) {
                let slot = status.get("slot").and_then(Value::as_u64);
                for seen in pending.iter().filter(|s| &s.tx == signature) {
                    if slot == Some(seen.inclusion.height) {
                        continue;
                    }
                    if let Some(signal) = self.tracker.forget(&(seen.tx.clone(), seen.index)) {
                        emit(signal);
                    }
                    if let Some(known) = self.known.get_mut(&seen.to) {
                        known.remove(signature);
                    }
                }
            }
        }
        Ok(())
    }

    fn read_address(
        &mut self,
        address: &str,
        start: u64,
        emit: &mut dyn FnMut(ChainSignal),
    ) -> Result<()> {
        const METHOD: &str = "getSignaturesForAddress";
        let limit = self.settings.signatures_per_address.max(1);
        let answer = self
            .rpc
            .request(METHOD, json!([address, {"limit": limit, "commitment": "confirmed"}]))?;
        let items = answer.as_array().ok_or_else(|| malformed(METHOD, "an array", &answer))?;
        // An address added later reports what lands after the last slot read before it.
        let floor = match self.known.contains_key(address) {
            true => start,
            false => self.read_at.map_or(start, |read| read + 1).max(start),
        };
        let known = self.known.entry(address.to_owned()).or_default();
        let mut found = Vec::new();
        for item in items.iter().rev() {
            let (Some(signature), Some(slot)) = (
                item.get("signature").and_then(Value::as_str),
                item.get("slot").and_then(Value::as_u64),
            ) else {
                return Err(malformed(METHOD, "signatures with their slots", item));
            };
            if !known.insert(signature.to_owned()) {
                continue;
            }
            let failed = item.get("err").is_some_and(|e| !e.is_null());
            if failed || slot < floor {
                continue;
            }
            found.push((signature.to_owned(), slot));
        }
        for (signature, slot) in found {
            for seen in self.transfers(address, &signature, slot)? {
                if let Some(signal) = self.tracker.include(seen) {
                    emit(signal);
                }
            }
        }
        Ok(())
    }

    /// What `address` received in the transaction `signature`.
    fn transfers(&self, address: &str, signature: &str, slot: u64) -> Result<Vec<TransferSeen>> {
        const METHOD: &str = "getTransaction";
        let tx = self.rpc.request(
            METHOD,
            json!([signature, {"encoding": "jsonParsed", "commitment": "confirmed",
                               "maxSupportedTransactionVersion": 0}]),
        )?;
        if tx.is_null() {
            return Ok(Vec::new());
        }
        let slot = tx.get("slot").and_then(Value::as_u64).unwrap_or(slot);
        let inclusion = Inclusion { height: slot, hash: self.blockhash(slot)? };
        let meta =
            tx.get("meta").ok_or_else(|| malformed(METHOD, "a transaction with meta", &tx))?;
        let keys: Vec<&str> = tx
            .pointer("/transaction/message/accountKeys")
            .and_then(Value::as_array)
            .map(|keys| {
                keys.iter()
                    .map(|k| k.get("pubkey").and_then(Value::as_str).or(k.as_str()).unwrap_or(""))
                    .collect()
            })
            .unwrap_or_default();
        let seen = |index: usize, contract: Option<String>, raw_amount: U256| TransferSeen {
            chain_id: self.chain_id,
            to: address.to_owned(),
            token: token_of(self.chain_id, contract.as_deref()),
            contract,
            raw_amount,
            tx: signature.to_owned(),
            index: u32::try_from(index).unwrap_or(u32::MAX),
            inclusion: inclusion.clone(),
        };
        let mut found = Vec::new();
        if let Some(at) = keys.iter().position(|k| *k == address) {
            let lamports = |name: &str| {
                meta.get(name)
                    .and_then(Value::as_array)
                    .and_then(|b| b.get(at))
                    .and_then(Value::as_u64)
            };
            if let (Some(pre), Some(post)) = (lamports("preBalances"), lamports("postBalances"))
                && post > pre
            {
                found.push(seen(at, None, U256::from(post - pre)));
            }
        }
        let balances = |name: &str| -> HashMap<u64, (String, u128)> {
            meta.get(name)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter(|b| b.get("owner").and_then(Value::as_str) == Some(address))
                        .filter_map(|b| {
                            let index = b.get("accountIndex")?.as_u64()?;
                            let mint = b.get("mint")?.as_str()?.to_owned();
                            let amount =
                                b.pointer("/uiTokenAmount/amount")?.as_str()?.parse().ok()?;
                            Some((index, (mint, amount)))
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let (pre, post) = (balances("preTokenBalances"), balances("postTokenBalances"));
        let mut indexes: Vec<&u64> = post.keys().collect();
        indexes.sort_unstable();
        for index in indexes {
            let (mint, after) = &post[index];
            let before = pre.get(index).map_or(0, |(_, amount)| *amount);
            if *after > before {
                let at = usize::try_from(*index).unwrap_or(usize::MAX);
                found.push(seen(at, Some(mint.clone()), U256::from(after - before)));
            }
        }
        Ok(found)
    }

    /// The blockhash of `slot` (`getBlock` without transactions); empty when the node has none.
    fn blockhash(&self, slot: u64) -> Result<String> {
        let block = self.rpc.request(
            "getBlock",
            json!([slot, {"transactionDetails": "none", "rewards": false,
                          "commitment": "confirmed", "maxSupportedTransactionVersion": 0}]),
        )?;
        Ok(block.get("blockhash").and_then(Value::as_str).unwrap_or_default().to_owned())
    }

    fn slot(&self, commitment: &str) -> Result<u64> {
        let value = self.rpc.request("getSlot", json!([{"commitment": commitment}]))?;
        value.as_u64().ok_or_else(|| malformed("getSlot", "a slot", &value))
    }
}
