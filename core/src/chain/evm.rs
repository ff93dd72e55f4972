//! A JSON-RPC client of an EVM node: the reads and sends depositkit needs, plus raw
//! [`request`](EvmRpc::request) for anything else (anvil's `anvil_*` development methods).
//!
//! Quantities travel as `0x` hex (`eth_getBalance` → `"0x1bc16d674ec80000"`) and come back as
//! [`U256`] or `u64`; hashes as [`B256`]; addresses as [`Address`].

use std::time::{Duration, Instant};

use alloy_primitives::{Address, B256, U256};
use serde_json::{Value, json};

use super::rpc::{JsonRpcClient, malformed, poll_until, quantity_u64};
use crate::error::{Error, ErrorKind, Result};
use crate::services::HttpSettings;

/// A transaction receipt (`eth_getTransactionReceipt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The transaction's hash.
    pub transaction_hash: B256,
    /// `true` when the transaction succeeded, `false` when it reverted.
    pub status: bool,
    /// Gas the transaction used.
    pub gas_used: u64,
    /// The price paid per gas unit, in wei.
    pub effective_gas_price: U256,
    /// The block it was included in.
    pub block_number: u64,
    /// The sender.
    pub from: Address,
    /// The recipient (`None` for a contract creation).
    pub to: Option<Address>,
    /// The created contract, for a contract creation.
    pub contract_address: Option<Address>,
    /// The logs it emitted.
    pub logs: Vec<Log>,
}

impl Receipt {
    /// Reads a receipt object as `eth_getTransactionReceipt` answers it (for receipts fetched
    /// through another channel, such as a wallet provider).
    ///
    /// # Errors
    /// [`ErrorKind::Protocol`] for a malformed receipt.
    pub fn from_json(value: &Value) -> Result<Receipt> {
        parse_receipt("eth_getTransactionReceipt", value)
    }

    /// What the transaction cost its sender in gas: `gas_used × effective_gas_price`.
    pub fn fee(&self) -> U256 {
        U256::from(self.gas_used).saturating_mul(self.effective_gas_price)
    }
}

/// An event log (`eth_getLogs`, receipts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    /// The emitting contract.
    pub address: Address,
    /// The indexed topics; the first is the event signature's hash.
    pub topics: Vec<B256>,
    /// The non-indexed data.
    pub data: Vec<u8>,
    /// The block, when mined.
    pub block_number: Option<u64>,
    /// The transaction, when mined.
    pub transaction_hash: Option<B256>,
    /// The log's index in its block, when mined.
    pub log_index: Option<u64>,
}

/// A JSON-RPC client of one EVM node.
///
/// ```no_run
/// use depositkit_core::chain::evm::EvmRpc;
/// use depositkit_core::services::HttpSettings;
/// let rpc = EvmRpc::new("http://127.0.0.1:8545", &HttpSettings::default());
/// let chain_id = rpc.chain_id()?;
/// # Ok::<(), depositkit_core::Error>(())
/// ```
#[derive(Debug)]
pub struct EvmRpc {
    rpc: JsonRpcClient,
}

impl EvmRpc {
    /// A client of the node at `url`.
    pub fn new(url: &str, settings: &HttpSettings) -> Self {
        EvmRpc { rpc: JsonRpcClient::new(url, settings) }
    }

    /// The node's URL, exactly as given.
    pub fn url(&self) -> &str {
        self.rpc.url()
    }

    /// The URL as messages show it (origin only).
    pub fn display_url(&self) -> &str {
        self.rpc.display_url()
    }

    /// Any method, raw: `params` is the JSON-RPC params array. Retried on transient failures,
    /// so use [`request_once`](EvmRpc::request_once) for anything that must not repeat.
    ///
    /// # Errors
    /// [`ErrorKind::Rpc`] naming the method and the node's message; [`ErrorKind::Network`],
    /// [`ErrorKind::Timeout`], [`ErrorKind::Protocol`] for transport problems.
    pub fn request(&self, method: &str, params: Value) -> Result<Value> {
        self.rpc.request(method, params)
    }

    /// Any method, sent exactly once.
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request).
    pub fn request_once(&self, method: &str, params: Value) -> Result<Value> {
        self.rpc.request_once(method, params)
    }

    /// `eth_chainId`.
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request).
    pub fn chain_id(&self) -> Result<u64> {
        let value = self.request("eth_chainId", json!([]))?;
        quantity_u64("eth_chainId", &value)
    }

    /// `eth_getBalance(address, "latest")`, in wei.
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request).
    pub fn balance(&self, address: Address) -> Result<U256> {
        let value = self.request("eth_getBalance", json!([address.to_string(), "latest"]))?;
        quantity_u256("eth_getBalance", &value)
    }

    /// `eth_gasPrice`, in wei.
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request).
    pub fn gas_price(&self) -> Result<U256> {
        let value = self.request("eth_gasPrice", json!([]))?;
        quantity_u256("eth_gasPrice", &value)
    }

    /// `eth_estimateGas(tx)`; `tx` is a call object (`{"from", "to", "value", "data"}`, hex
    /// quantities).
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request); a transaction that would revert is an
    /// [`ErrorKind::Rpc`] error.
    pub fn estimate_gas(&self, tx: &Value) -> Result<u64> {
        let value = self.request("eth_estimateGas", json!([tx]))?;
        quantity_u64("eth_estimateGas", &value)
    }

    /// `eth_call(tx, "latest")`: the returned bytes.
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request).
    pub fn call(&self, tx: &Value) -> Result<Vec<u8>> {
        let value = self.request("eth_call", json!([tx, "latest"]))?;
        hex_bytes("eth_call", &value)
    }

    /// `eth_getTransactionCount(address, "pending")`: the next nonce, counting transactions
    /// still in the node's pool so that back-to-back sends do not reuse one.
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request).
    pub fn transaction_count(&self, address: Address) -> Result<u64> {
        let value =
            self.request("eth_getTransactionCount", json!([address.to_string(), "pending"]))?;
        quantity_u64("eth_getTransactionCount", &value)
    }

    /// `eth_sendRawTransaction(bytes)`, sent once: the transaction's hash.
    ///
    /// # Errors
    /// As [`request_once`](EvmRpc::request_once).
    pub fn send_raw_transaction(&self, raw: &[u8]) -> Result<B256> {
        let hex = format!("0x{}", alloy_primitives::hex::encode(raw));
        let value = self.request_once("eth_sendRawTransaction", json!([hex]))?;
        parse_b256("eth_sendRawTransaction", &value)
    }

    /// `eth_sendTransaction(tx)`, sent once, for a node that holds the sender's unlocked key
    /// (anvil's development accounts): the transaction's hash.
    ///
    /// # Errors
    /// As [`request_once`](EvmRpc::request_once).
    pub fn send_transaction(&self, tx: &Value) -> Result<B256> {
        let value = self.request_once("eth_sendTransaction", json!([tx]))?;
        parse_b256("eth_sendTransaction", &value)
    }

    /// `eth_getTransactionReceipt(hash)`: `None` while the transaction is not mined.
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request); a malformed receipt is [`ErrorKind::Protocol`].
    pub fn receipt(&self, hash: B256) -> Result<Option<Receipt>> {
        let value = self.request("eth_getTransactionReceipt", json!([hash.to_string()]))?;
        if value.is_null() {
            return Ok(None);
        }
        parse_receipt("eth_getTransactionReceipt", &value).map(Some)
    }

    /// Polls [`receipt`](EvmRpc::receipt) until the transaction is mined or `timeout` passes.
    ///
    /// # Errors
    /// [`ErrorKind::Timeout`] naming the hash when no receipt came in time; otherwise as
    /// [`receipt`](EvmRpc::receipt).
    pub fn wait_for_receipt(&self, hash: B256, timeout: Duration) -> Result<Receipt> {
        poll_until(
            Instant::now() + timeout,
            || self.receipt(hash),
            || {
                Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "transaction {hash} has no receipt after {}",
                        crate::describe::duration(timeout)
                    ),
                )
            },
        )
    }

    /// `eth_getLogs(filter)`; `filter` is the JSON-RPC filter object
    /// (`{"address", "topics", "fromBlock", "toBlock"}`).
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request).
    pub fn logs(&self, filter: &Value) -> Result<Vec<Log>> {
        let value = self.request("eth_getLogs", json!([filter]))?;
        let items = value.as_array().ok_or_else(|| malformed("eth_getLogs", "an array", &value))?;
        items.iter().map(|item| parse_log("eth_getLogs", item)).collect()
    }

    /// `eth_blockNumber`.
    ///
    /// # Errors
    /// As [`request`](EvmRpc::request).
    pub fn block_number(&self) -> Result<u64> {
        let value = self.request("eth_blockNumber", json!([]))?;
        quantity_u64("eth_blockNumber", &value)
    }
}

/// A `U256` as a JSON-RPC quantity (`"0x…"`, no leading zeros).
pub fn quantity(value: U256) -> String {
    format!("{value:#x}")
}

/// Parses a JSON-RPC quantity (`"0x1a"`) as a [`U256`].
///
/// # Errors
/// [`ErrorKind::Protocol`] naming `method` when `value` is not one.
pub fn quantity_u256(method: &str, value: &Value) -> Result<U256> {
    let digits = value
        .as_str()
        .and_then(|t| t.strip_prefix("0x"))
        .filter(|d| !d.is_empty() && d.len() <= 64)
        .ok_or_else(|| malformed(method, "a hex quantity", value))?;
    U256::from_str_radix(digits, 16).map_err(|_| malformed(method, "a hex quantity", value))
}

pub(crate) fn hex_bytes(method: &str, value: &Value) -> Result<Vec<u8>> {
    value
        .as_str()
        .and_then(|t| alloy_primitives::hex::decode(t).ok())
        .ok_or_else(|| malformed(method, "hex data", value))
}

pub(crate) fn parse_b256(method: &str, value: &Value) -> Result<B256> {
    value
        .as_str()
        .and_then(|t| t.parse::<B256>().ok())
        .ok_or_else(|| malformed(method, "a 32-byte hash", value))
}

pub(crate) fn parse_address(method: &str, value: &Value) -> Result<Address> {
    value
        .as_str()
        .and_then(|t| t.parse::<Address>().ok())
        .ok_or_else(|| malformed(method, "an address", value))
}

fn optional<T>(
    method: &str,
    value: Option<&Value>,
    parse: impl Fn(&str, &Value) -> Result<T>,
) -> Result<Option<T>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => parse(method, v).map(Some),
    }
}

fn field<'a>(method: &str, object: &'a Value, name: &str) -> Result<&'a Value> {
    object.get(name).ok_or_else(|| {
        Error::new(
            ErrorKind::Protocol,
            format!("{method} answered a record without {}", crate::describe::quote(name)),
        )
    })
}

pub(crate) fn parse_receipt(method: &str, value: &Value) -> Result<Receipt> {
    // Pre-Byzantium receipts have a `root` instead of a `status`; every chain depositkit
    // supports has `status`.
    let status = quantity_u64(method, field(method, value, "status")?)? == 1;
    let logs = match value.get("logs") {
        Some(Value::Array(items)) => {
            items.iter().map(|item| parse_log(method, item)).collect::<Result<Vec<_>>>()?
        }
        _ => Vec::new(),
    };
    Ok(Receipt {
        transaction_hash: parse_b256(method, field(method, value, "transactionHash")?)?,
        status,
        gas_used: quantity_u64(method, field(method, value, "gasUsed")?)?,
        effective_gas_price: optional(method, value.get("effectiveGasPrice"), quantity_u256)?
            .unwrap_or_default(),
        block_number: quantity_u64(method, field(method, value, "blockNumber")?)?,
        from: parse_address(method, field(method, value, "from")?)?,
        to: optional(method, value.get("to"), parse_address)?,
        contract_address: optional(method, value.get("contractAddress"), parse_address)?,
        logs,
    })
}

pub(crate) fn parse_log(method: &str, value: &Value) -> Result<Log> {
    let topics = field(method, value, "topics")?
        .as_array()
        .ok_or_else(|| malformed(method, "an array of topics", value))?
        .iter()
        .map(|t| parse_b256(method, t))
        .collect::<Result<Vec<_>>>()?;
    Ok(Log {
        address: parse_address(method, field(method, value, "address")?)?,
        topics,
        data: hex_bytes(method, field(method, value, "data")?)?,
        block_number: optional(method, value.get("blockNumber"), quantity_u64)?,
        transaction_hash: optional(method, value.get("transactionHash"), parse_b256)?,
        log_index: optional(method, value.get("logIndex"), quantity_u64)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_round_trip() {
        assert_eq!(quantity(U256::ZERO), "0x0");
        assert_eq!(quantity(U256::from(26u64)), "0x1a");
        let v = json!("0xde0b6b3a7640000");
        assert_eq!(quantity_u256("m", &v).unwrap(), U256::from(1_000_000_000_000_000_000u64));
        assert!(quantity_u256("m", &json!("0x")).is_err());
        assert!(quantity_u256("m", &json!("12")).is_err());
        assert!(quantity_u256("m", &json!(format!("0x1{}", "0".repeat(64)))).is_err());
    }

    #[test]
    fn receipts_parse() {
        let hash = format!("0x{}", "ab".repeat(32));
        let topic = format!("0x{}", "cd".repeat(32));
        let receipt = json!({
            "transactionHash": hash, "status": "0x1", "gasUsed": "0x5208",
            "effectiveGasPrice": "0x3b9aca00", "blockNumber": "0x10",
            "from": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "to": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", "contractAddress": null,
            "logs": [{"address": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
                      "topics": [topic], "data": "0x01", "blockNumber": "0x10",
                      "transactionHash": hash, "logIndex": "0x0"}]
        });
        let r = parse_receipt("eth_getTransactionReceipt", &receipt).unwrap();
        assert!(r.status);
        assert_eq!(r.gas_used, 21_000);
        assert_eq!(r.fee(), U256::from(21_000u64 * 1_000_000_000));
        assert_eq!(r.block_number, 16);
        assert_eq!(r.logs.len(), 1);
        assert_eq!(r.logs[0].data, [1]);
        assert_eq!(r.contract_address, None);
        let mut bad = receipt.clone();
        bad["status"] = json!(true);
        assert_eq!(
            parse_receipt("eth_getTransactionReceipt", &bad).unwrap_err().kind(),
            ErrorKind::Protocol
        );
        bad.as_object_mut().unwrap().remove("status");
        let err = parse_receipt("eth_getTransactionReceipt", &bad).unwrap_err();
        assert!(err.message().contains("\"status\""), "{err}");
    }
}
