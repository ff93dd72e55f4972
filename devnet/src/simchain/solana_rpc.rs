//! The Solana JSON-RPC subset a simulated Solana answers (`POST /devnet/chains/101/rpc`):
//! `getHealth`, `getSlot` and `getBlockHeight` (by commitment: `processed` the newest slot,
//! `confirmed` and `finalized` trailing it), `getSignaturesForAddress`, `getTransaction`
//! (`json` / `jsonParsed`: balances before and after), `getBlock` and `getSignatureStatuses`.
//!
//! A deposit is one transaction whose signature is the deposit's transaction hash: lamports
//! arrive at the address itself, tokens at the address's associated token account (the
//! token balances name the address as owner).

use depositkit_core::chain::solana_tx::{Hash, Pubkey, associated_token_address};
use serde_json::{Value, json};

use super::chain::{Lags, SimBlock, SimChain, SimTransfer};
use super::routes::RpcFault;

/// The fee payer shown for a deposit whose sender is not a Solana address.
const UNKNOWN_SENDER: Pubkey = Pubkey::new_from_array([0xde; 32]);

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
    let (processed, confirmed, finalized) = chain.heads(lags);
    let context = json!({"slot": processed});
    let commitment = |index: usize| match params
        .get(index)
        .and_then(|c| c.get("commitment"))
        .and_then(Value::as_str)
    {
        Some("processed") => processed,
        Some("confirmed") => confirmed,
        _ => finalized,
    };
    match method {
        "getHealth" => Ok(json!("ok")),
        "getSlot" | "getBlockHeight" => Ok(json!(commitment(0))),
        "getSignaturesForAddress" => {
            let address = text(params, 0, "address")?;
            let config = params.get(1);
            let limit = config.and_then(|c| c.get("limit")).and_then(Value::as_u64).unwrap_or(1000);
            let newest = match config.and_then(|c| c.get("commitment")).and_then(Value::as_str) {
                Some("processed") => processed,
                Some("confirmed") | None => confirmed,
                _ => finalized,
            };
            let mut list = Vec::new();
            for block in chain.blocks().iter().rev().filter(|b| b.number <= newest) {
                for t in block.transfers.iter().rev().filter(|t| t.to == address) {
                    list.push(json!({
                        "signature": t.tx, "slot": block.number, "err": null, "memo": null,
                        "blockTime": block.timestamp,
                        "confirmationStatus": status(block.number, confirmed, finalized),
                    }));
                }
            }
            list.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
            Ok(Value::Array(list))
        }
        "getTransaction" => {
            let signature = text(params, 0, "signature")?;
            Ok(chain.find(signature).map_or(Value::Null, |(b, t)| transaction_json(b, t)))
        }
        "getBlock" => {
            let slot = params
                .get(0)
                .and_then(Value::as_u64)
                .ok_or_else(|| RpcFault::invalid("slot: a number"))?;
            Ok(chain.block(slot).filter(|b| b.number <= processed).map_or(Value::Null, |b| {
                let previous = chain.block(b.number.saturating_sub(1)).map_or([0; 32], |p| p.hash);
                json!({
                    "blockhash": Hash::new_from_array(b.hash).to_string(),
                    "previousBlockhash": Hash::new_from_array(previous).to_string(),
                    "parentSlot": b.number.saturating_sub(1),
                    "blockHeight": b.number,
                    "blockTime": b.timestamp,
                })
            }))
        }
        "getSignatureStatuses" => {
            let list = params
                .get(0)
                .and_then(Value::as_array)
                .ok_or_else(|| RpcFault::invalid("a list of signatures"))?;
            let statuses: Vec<Value> = list
                .iter()
                .map(|s| {
                    let found = s.as_str().and_then(|s| chain.find(s));
                    found.map_or(Value::Null, |(b, _)| {
                        json!({
                            "slot": b.number, "err": null,
                            "confirmations": if b.number <= finalized { Value::Null } else { json!(processed - b.number) },
                            "confirmationStatus": status(b.number, confirmed, finalized),
                        })
                    })
                })
                .collect();
            Ok(json!({"context": context, "value": statuses}))
        }
        other => Err(RpcFault::method_not_found(other)),
    }
}

fn text<'a>(params: &'a Value, index: usize, name: &str) -> Result<&'a str, RpcFault> {
    params
        .get(index)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcFault::invalid(format!("{name}: a string")))
}

fn status(slot: u64, confirmed: u64, finalized: u64) -> &'static str {
    if slot <= finalized {
        "finalized"
    } else if slot <= confirmed {
        "confirmed"
    } else {
        "processed"
    }
}

fn transaction_json(block: &SimBlock, transfer: &SimTransfer) -> Value {
    let payer = transfer.sender.as_deref().and_then(|s| s.parse().ok()).unwrap_or(UNKNOWN_SENDER);
    let key = |pubkey: String, signer: bool| json!({"pubkey": pubkey, "signer": signer, "writable": true});
    let amount = transfer.raw_amount.to_string();
    let (keys, pre, post, pre_tokens, post_tokens) =
        match (&transfer.contract, transfer.to.parse::<Pubkey>()) {
            (Some(mint), Ok(owner)) => {
                let token_account = mint
                    .parse::<Pubkey>()
                    .map(|m| associated_token_address(&owner, &m).to_string())
                    .unwrap_or_default();
                let balance = |raw: &str| {
                    json!([{"accountIndex": 1, "mint": mint, "owner": transfer.to,
                        "uiTokenAmount": {"amount": raw}}])
                };
                (
                    vec![
                        key(payer.to_string(), true),
                        key(token_account, false),
                        key(transfer.to.clone(), false),
                    ],
                    json!([1_000_000_000u64, 2_039_280u64, 0]),
                    json!([999_995_000u64, 2_039_280u64, 0]),
                    balance("0"),
                    balance(&amount),
                )
            }
            _ => {
                let lamports = u64::try_from(transfer.raw_amount).unwrap_or(u64::MAX);
                (
                    vec![key(payer.to_string(), true), key(transfer.to.clone(), false)],
                    json!([lamports.saturating_add(5_000), 0]),
                    json!([0, lamports]),
                    json!([]),
                    json!([]),
                )
            }
        };
    json!({
        "slot": block.number,
        "blockTime": block.timestamp,
        "transaction": {
            "signatures": [transfer.tx],
            "message": {"accountKeys": keys, "recentBlockhash": Hash::new_from_array(block.parent).to_string(), "instructions": []},
        },
        "meta": {
            "err": null, "fee": 5000,
            "preBalances": pre, "postBalances": post,
            "preTokenBalances": pre_tokens, "postTokenBalances": post_tokens,
        },
    })
}
