//! One chain-backed EVM chain (an anvil node): pinned balance reads, incoming `Transfer` logs,
//! devnet's signed legacy transactions and what became of them.

use std::sync::{Mutex, MutexGuard, PoisonError};

use alloy_primitives::{Address, B256, U256, hex};
use depositkit_core::chain::erc20::{self, TRANSFER_EVENT_TOPIC};
use depositkit_core::chain::evm::{EvmRpc, Receipt, quantity, quantity_u256};
use depositkit_core::services::HttpSettings;
use depositkit_core::{ErrorKind, validate_address_for_chain};
use serde_json::{Value, json};

use super::config::Asset;
use super::evm_signer::{LegacyTx, SignedTx};
use super::keys::EvmKey;
use super::{CONFIRM_TIMEOUT, ChainError, ChainResult};

/// Gas of a plain value transfer to an account without code.
pub const TRANSFER_GAS: u64 = 21_000;

/// An incoming ERC-20 transfer found in the logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    pub tx_hash: B256,
    pub from: Address,
    pub value: U256,
}

/// What became of a transaction devnet sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Mined (successful or reverted: see the receipt's status).
    Mined(Receipt),
    /// The node refused it and it is not mined: it never will be.
    Dropped(String),
}

/// One EVM chain.
pub struct EvmChain {
    chain_id: u64,
    rpc: EvmRpc,
    /// Held while the vault signs and sends on this chain, so that its nonces follow each other.
    vault: Mutex<()>,
}

impl std::fmt::Debug for EvmChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvmChain").field("chain_id", &self.chain_id).finish_non_exhaustive()
    }
}

/// Parses an EVM address (any letter case).
///
/// # Errors
/// A message saying why it is not one.
pub fn address(text: &str) -> Result<Address, String> {
    validate_address_for_chain(text, 1).map_err(|e| e.message().to_owned())?;
    text.trim()
        .parse()
        .map_err(|e| format!("{} is not an EVM address: {e}", crate::describe::quote(text)))
}

impl EvmChain {
    /// A chain whose node is at `url`.
    pub fn new(chain_id: u64, url: &str, settings: &HttpSettings) -> Self {
        EvmChain { chain_id, rpc: EvmRpc::new(url, settings), vault: Mutex::new(()) }
    }

    /// The chain id.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// The node's client, for development methods (`anvil_setBalance`).
    pub fn rpc(&self) -> &EvmRpc {
        &self.rpc
    }

    /// An error of this chain.
    pub fn fail(&self, message: impl std::fmt::Display) -> ChainError {
        ChainError::new(self.chain_id, message)
    }

    /// Holds the vault's lock on this chain.
    pub fn lock_vault(&self) -> MutexGuard<'_, ()> {
        self.vault.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks that the node serves this chain.
    ///
    /// # Errors
    /// Unreachable, or another chain id.
    pub fn check_chain_id(&self) -> ChainResult<()> {
        let found = self.rpc.chain_id().map_err(|e| self.fail(e))?;
        if found == self.chain_id {
            Ok(())
        } else {
            Err(self.fail(format!("the node at {} is chain {found}", self.rpc.display_url())))
        }
    }

    /// The latest block number.
    ///
    /// # Errors
    /// The node failed.
    pub fn block_number(&self) -> ChainResult<u64> {
        self.rpc.block_number().map_err(|e| self.fail(e))
    }

    /// Whether the chain has the transaction `hash` mined (false for text that is no hash:
    /// an observation id).
    ///
    /// # Errors
    /// The node failed.
    pub fn is_mined(&self, hash: &str) -> ChainResult<bool> {
        let Ok(hash) = hash.parse::<B256>() else { return Ok(false) };
        Ok(self.rpc.receipt(hash).map_err(|e| self.fail(e))?.is_some())
    }

    /// What `owner` holds of `asset`, at `block` (the latest when `None`).
    ///
    /// # Errors
    /// The node failed, or the token answered something that is not a balance.
    pub fn balance(
        &self,
        owner: Address,
        asset: Asset<'_>,
        block: Option<u64>,
    ) -> ChainResult<U256> {
        let tag = block.map_or_else(|| json!("latest"), |b| json!(format!("{b:#x}")));
        match asset {
            Asset::Native => {
                let value = self
                    .rpc
                    .request("eth_getBalance", json!([owner.to_string(), tag]))
                    .map_err(|e| self.fail(e))?;
                quantity_u256("eth_getBalance", &value).map_err(|e| self.fail(e))
            }
            Asset::Token(token) => {
                let data = hex::encode_prefixed(erc20::balance_of_calldata(owner));
                let value = self
                    .rpc
                    .request("eth_call", json!([{"to": token.address, "data": data}, tag]))
                    .map_err(|e| self.fail(e))?;
                let text = value.as_str().unwrap_or_default();
                erc20::decode_u256(text).map_err(|e| {
                    self.fail(format!("balanceOf on {}: {}", token.address, e.message()))
                })
            }
        }
    }

    /// The `Transfer`s of `token` to `to` in blocks `from_block..=to_block`, in chain order.
    ///
    /// # Errors
    /// The node failed.
    pub fn incoming(
        &self,
        token: Address,
        to: Address,
        from_block: u64,
        to_block: u64,
    ) -> ChainResult<Vec<Incoming>> {
        if from_block > to_block {
            return Ok(Vec::new());
        }
        let filter = json!({
            "address": token.to_string(),
            "topics": [TRANSFER_EVENT_TOPIC.to_string(), Value::Null, B256::left_padding_from(to.as_slice()).to_string()],
            "fromBlock": format!("{from_block:#x}"),
            "toBlock": format!("{to_block:#x}"),
        });
        let logs = self.rpc.logs(&filter).map_err(|e| self.fail(e))?;
        Ok(logs
            .iter()
            .filter_map(|log| {
                let transfer = erc20::decode_transfer_log(log)?;
                Some(Incoming {
                    tx_hash: log.transaction_hash?,
                    from: transfer.from,
                    value: transfer.value,
                })
            })
            .filter(|incoming| !incoming.value.is_zero())
            .collect())
    }

    /// The gas price devnet pays: the node's suggestion plus a quarter, so that a base fee
    /// rising between the quote and the block does not strand the transaction.
    ///
    /// # Errors
    /// The node failed.
    pub fn gas_price(&self) -> ChainResult<U256> {
        let price = self.rpc.gas_price().map_err(|e| self.fail(e))?;
        Ok(price.saturating_mul(U256::from(5u64)) / U256::from(4u64))
    }

    /// Gas of a call from `from` (asked at gas price zero, so that the sender needs no ether
    /// for the estimate).
    ///
    /// # Errors
    /// The node failed, or the call would revert.
    pub fn estimate_gas(
        &self,
        from: Address,
        to: Address,
        value: U256,
        data: &[u8],
    ) -> ChainResult<u64> {
        let call = json!({
            "from": from.to_string(),
            "to": to.to_string(),
            "value": quantity(value),
            "data": hex::encode_prefixed(data),
            "gasPrice": "0x0",
        });
        self.rpc.estimate_gas(&call).map_err(|e| self.fail(e))
    }

    /// Signs a transaction from `key` with its next nonce (counting pending ones).
    ///
    /// # Errors
    /// The node failed.
    pub fn sign(
        &self,
        key: &EvmKey,
        to: Address,
        value: U256,
        data: Vec<u8>,
        gas_limit: u64,
        gas_price: U256,
    ) -> ChainResult<SignedTx> {
        let nonce = self.rpc.transaction_count(key.address()).map_err(|e| self.fail(e))?;
        LegacyTx { chain_id: self.chain_id, nonce, gas_price, gas_limit, to, value, data }
            .sign(key)
            .map_err(|e| self.fail(format!("signing: {e}")))
    }

    /// Sends `raw` (whose hash is `hash`) and waits for it to be mined.
    ///
    /// # Errors
    /// The node could not be reached (the transaction may or may not have been sent), or it was
    /// not mined in time.
    pub fn send(&self, raw: &[u8], hash: B256) -> ChainResult<Fate> {
        match self.rpc.send_raw_transaction(raw) {
            Ok(_) => self.wait(hash).map(Fate::Mined),
            Err(e) if e.kind() == ErrorKind::Rpc => {
                let message = e.message().to_ascii_lowercase();
                if ["already known", "already imported", "known transaction"]
                    .iter()
                    .any(|m| message.contains(m))
                {
                    return self.wait(hash).map(Fate::Mined);
                }
                // Refused: unless it was mined before (a resend), it never will be.
                match self.rpc.receipt(hash).map_err(|e| self.fail(e))? {
                    Some(receipt) => Ok(Fate::Mined(receipt)),
                    None => Ok(Fate::Dropped(e.message().to_owned())),
                }
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// What became of a transaction stored before it was (perhaps) sent: its receipt when
    /// mined, else the outcome of sending it (again).
    ///
    /// # Errors
    /// As [`EvmChain::send`].
    pub fn settle(&self, raw: &[u8], hash: B256) -> ChainResult<Fate> {
        match self.rpc.receipt(hash).map_err(|e| self.fail(e))? {
            Some(receipt) => Ok(Fate::Mined(receipt)),
            None => self.send(raw, hash),
        }
    }

    fn wait(&self, hash: B256) -> ChainResult<Receipt> {
        self.rpc.wait_for_receipt(hash, CONFIRM_TIMEOUT).map_err(|e| self.fail(e))
    }
}
