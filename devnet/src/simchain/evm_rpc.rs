//! The EVM JSON-RPC subset a simulated chain answers (`POST /devnet/chains/{chainId}/rpc`):
//! `eth_chainId`, `net_version`, `eth_blockNumber`, `eth_getBlockByNumber` (numbers and the
//! tags `latest`, `pending`, `safe`, `finalized`, `earliest`), `eth_getBlockByHash`,
//! `eth_getLogs`, `eth_getTransactionReceipt` and `eth_getTransactionByHash`.
//!
//! Each deposit is one transaction: native coins as a plain value transfer to the address, a
//! token as a call of the token contract's `transfer` emitting the ERC-20 `Transfer` log.

use alloy_primitives::hex::encode_prefixed;
use alloy_primitives::{Address, B256};
use depositkit_core::U256;
use depositkit_core::chain::erc20::{TRANSFER_EVENT_TOPIC, transfer_calldata};
use serde_json::{Value, json};

use super::chain::{Lags, SimBlock, SimChain, SimTransfer};
use super::routes::RpcFault;

/// The sender shown for a deposit that named no EVM address as its sender.
const UNKNOWN_SENDER: Address = Address::repeat_byte(0xde);
/// The most blocks one `eth_getLogs` reads.
const MAX_LOG_RANGE: u64 = 10_000;

/// Answers `method` with `params` on `chain`.
///
/// # Errors
/// `-32601` for another method, `-32602` for bad parameters.
pub fn answer(
    chain: &SimChain,
    lags: Lags,
    method: &str,
    params: &Value,
) -> Result<Value, RpcFault> {
    match method {
        "eth_chainId" => Ok(json!(format!("{:#x}", chain.chain_id))),
        "net_version" => Ok(json!(chain.chain_id.to_string())),
        "web3_clientVersion" => Ok(json!(concat!("depositkit-devnet/", env!("CARGO_PKG_VERSION")))),
        "eth_blockNumber" => Ok(json!(format!("{:#x}", chain.tip().number))),
        "eth_getBlockByNumber" => {
            let number = height(chain, lags, param(params, 0))?;
            let full = param(params, 1).as_bool().unwrap_or(false);
            Ok(chain.block(number).map_or(Value::Null, |b| block_json(chain, b, full)))
        }
        "eth_getBlockByHash" => {
            let hash = hash_param(param(params, 0))?;
            let full = param(params, 1).as_bool().unwrap_or(false);
            let found = chain.blocks().iter().find(|b| b.hash == hash.0);
            Ok(found.map_or(Value::Null, |b| block_json(chain, b, full)))
        }
        "eth_getLogs" => logs(chain, lags, param(params, 0)),
        "eth_getTransactionReceipt" => {
            let tx = hash_param(param(params, 0))?;
            Ok(chain.find(&tx.to_string()).map_or(Value::Null, |(b, t)| receipt_json(chain, b, t)))
        }
        "eth_getTransactionByHash" => {
            let tx = hash_param(param(params, 0))?;
            Ok(chain.find(&tx.to_string()).map_or(Value::Null, |(b, t)| tx_json(chain, b, t)))
        }
        other => Err(RpcFault::method_not_found(other)),
    }
}

fn param(params: &Value, index: usize) -> &Value {
    params.get(index).unwrap_or(&Value::Null)
}

/// A block number or tag.
fn height(chain: &SimChain, lags: Lags, tag: &Value) -> Result<u64, RpcFault> {
    let (latest, safe, finalized) = chain.heads(lags);
    match tag.as_str() {
        None | Some("latest" | "pending") => Ok(latest),
        Some("safe") => Ok(safe),
        Some("finalized") => Ok(finalized),
        Some("earliest") => Ok(0),
        Some(text) => text
            .strip_prefix("0x")
            .and_then(|d| u64::from_str_radix(d, 16).ok())
            .ok_or_else(|| RpcFault::invalid(format!("not a block number or tag: {text}"))),
    }
}

fn hash_param(value: &Value) -> Result<B256, RpcFault> {
    value
        .as_str()
        .and_then(|t| t.parse::<B256>().ok())
        .ok_or_else(|| RpcFault::invalid(format!("not a 32-byte hash: {value}")))
}

fn hex(n: u64) -> String {
    format!("{n:#x}")
}

fn sender(transfer: &SimTransfer) -> Address {
    transfer.sender.as_deref().and_then(|s| s.parse().ok()).unwrap_or(UNKNOWN_SENDER)
}

fn block_json(chain: &SimChain, block: &SimBlock, full: bool) -> Value {
    let transactions: Vec<Value> = block
        .transfers
        .iter()
        .map(|t| if full { tx_json(chain, block, t) } else { json!(t.tx) })
        .collect();
    json!({
        "number": hex(block.number),
        "hash": encode_prefixed(block.hash),
        "parentHash": encode_prefixed(block.parent),
        "timestamp": hex(block.timestamp),
        "miner": format!("{:#x}", Address::ZERO),
        "gasLimit": "0x1c9c380",
        "gasUsed": hex(21_000 * block.transfers.len() as u64),
        "baseFeePerGas": "0x0",
        "extraData": "0x",
        "transactions": transactions,
        "uncles": [],
    })
}

fn position(block: &SimBlock, transfer: &SimTransfer) -> u64 {
    block.transfers.iter().position(|t| t.tx == transfer.tx).unwrap_or(0) as u64
}

fn tx_json(chain: &SimChain, block: &SimBlock, transfer: &SimTransfer) -> Value {
    let (to, value, input) = match &transfer.contract {
        None => (transfer.to.to_ascii_lowercase(), transfer.raw_amount, "0x".to_owned()),
        Some(contract) => {
            let recipient: Address = transfer.to.parse().unwrap_or(Address::ZERO);
            let data = transfer_calldata(recipient, transfer.raw_amount);
            (contract.clone(), U256::ZERO, encode_prefixed(data))
        }
    };
    json!({
        "hash": transfer.tx,
        "blockHash": encode_prefixed(block.hash),
        "blockNumber": hex(block.number),
        "transactionIndex": hex(position(block, transfer)),
        "from": format!("{:#x}", sender(transfer)),
        "to": to,
        "value": format!("{value:#x}"),
        "input": input,
        "nonce": "0x0",
        "gas": "0x186a0",
        "gasPrice": "0x0",
        "type": "0x0",
        "chainId": hex(chain.chain_id),
    })
}

/// The `Transfer` log of a token transfer; `log_index` is its index in the block.
fn log_json(block: &SimBlock, transfer: &SimTransfer, log_index: u64) -> Option<Value> {
    let contract = transfer.contract.as_ref()?;
    let recipient: Address = transfer.to.parse().ok()?;
    Some(json!({
        "address": contract,
        "topics": [
            TRANSFER_EVENT_TOPIC.to_string(),
            B256::left_padding_from(sender(transfer).as_slice()).to_string(),
            B256::left_padding_from(recipient.as_slice()).to_string(),
        ],
        "data": encode_prefixed(B256::from(transfer.raw_amount.to_be_bytes::<32>())),
        "blockNumber": hex(block.number),
        "blockHash": encode_prefixed(block.hash),
        "transactionHash": transfer.tx,
        "transactionIndex": hex(position(block, transfer)),
        "logIndex": hex(log_index),
        "removed": false,
    }))
}

/// The logs of `block`, each with its index in the block.
fn block_logs(block: &SimBlock) -> Vec<(usize, Value)> {
    block
        .transfers
        .iter()
        .enumerate()
        .filter(|(_, t)| t.contract.is_some())
        .enumerate()
        .filter_map(|(log_index, (i, t))| log_json(block, t, log_index as u64).map(|l| (i, l)))
        .collect()
}

fn receipt_json(chain: &SimChain, block: &SimBlock, transfer: &SimTransfer) -> Value {
    let tx = tx_json(chain, block, transfer);
    let at = position(block, transfer) as usize;
    let logs: Vec<Value> =
        block_logs(block).into_iter().filter(|(i, _)| *i == at).map(|(_, l)| l).collect();
    json!({
        "transactionHash": transfer.tx,
        "transactionIndex": tx["transactionIndex"],
        "blockHash": tx["blockHash"],
        "blockNumber": tx["blockNumber"],
        "from": tx["from"],
        "to": tx["to"],
        "cumulativeGasUsed": hex(21_000 * (at as u64 + 1)),
        "gasUsed": "0x5208",
        "effectiveGasPrice": "0x0",
        "status": "0x1",
        "contractAddress": null,
        "type": "0x0",
        "logs": logs,
    })
}

/// `eth_getLogs`: the `Transfer` logs matching the filter's blocks, `address` and `topics`.
fn logs(chain: &SimChain, lags: Lags, filter: &Value) -> Result<Value, RpcFault> {
    let blocks: Vec<&SimBlock> = if let Some(hash) = filter.get("blockHash") {
        let hash = hash_param(hash)?;
        chain.blocks().iter().filter(|b| b.hash == hash.0).collect()
    } else {
        let from = height(chain, lags, filter.get("fromBlock").unwrap_or(&Value::Null))?;
        let to = height(chain, lags, filter.get("toBlock").unwrap_or(&Value::Null))?;
        if to.saturating_sub(from) > MAX_LOG_RANGE {
            return Err(RpcFault::invalid(format!("at most {MAX_LOG_RANGE} blocks per query")));
        }
        (from..=to).filter_map(|n| chain.block(n)).collect()
    };
    let addresses = one_or_many(filter.get("address"));
    let topics: Vec<Option<Vec<String>>> = filter
        .get("topics")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .map(|v| (!v.is_null()).then(|| one_or_many(Some(v)).unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let mut found = Vec::new();
    for block in blocks {
        for (_, log) in block_logs(block) {
            let address = log["address"].as_str().unwrap_or_default();
            if addresses
                .as_ref()
                .is_some_and(|a| !a.iter().any(|x| x.eq_ignore_ascii_case(address)))
            {
                continue;
            }
            let matches = topics.iter().enumerate().all(|(i, wanted)| match wanted {
                None => true,
                Some(options) => log["topics"]
                    .get(i)
                    .and_then(Value::as_str)
                    .is_some_and(|t| options.iter().any(|o| o.eq_ignore_ascii_case(t))),
            });
            if matches {
                found.push(log);
            }
        }
    }
    Ok(Value::Array(found))
}

/// A filter field that is one string or a list of strings.
fn one_or_many(value: Option<&Value>) -> Option<Vec<String>> {
    match value? {
        Value::String(one) => Some(vec![one.clone()]),
        Value::Array(many) => {
            Some(many.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        }
        _ => None,
    }
}
