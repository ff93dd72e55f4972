//! Reading the builders' objects (`params[1]` of `universal_createTransaction`) into an
//! [`Order`]: what to deliver where, and how much moves.

use alloy_primitives::{U256, hex};
use alloy_sol_types::{SolCall, sol};
use depositkit_core::{Chain, TokenType, get_token_decimals, validate_address_for_chain};
use serde_json::{Map, Value};

use super::super::assets::{self, PRIMARY_TYPES};
use super::super::rpc::{Call, invalid};
use crate::chain::native_token;
use crate::rpc::RpcError;
use crate::services::fees;
use crate::store::UaAccount;

sol! {
    function transfer(address to, uint256 amount) external returns (bool);
}

/// What a builder asks for.
#[derive(Debug, Clone, PartialEq, Eq)]

pub struct Order {
    /// `transfer_v2`, `buy`, `sell`, `universal` or `convert`.
    pub tag: &'static str,
    pub dst_chain: u64,
    pub dst_token: TokenType,
    pub dst_address: String,
    pub want: Want,
}

/// How much moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// Deliver exactly `raw`, paid from a line of these token types (or of the token itself).
    Exactly { raw: U256, pay_with: Vec<TokenType> },
    /// Spend exactly `raw` of `token` on `chain_id`; deliver what it buys.
    Spend { chain_id: u64, token: TokenType, raw: U256 },
}

/// The order of the builder's object (params[1]).
pub(super) fn read(call: &Call<'_>, account: &UaAccount) -> Result<Order, RpcError> {
    let spec = call.object(1)?;
    if let Some(universal) = spec.get("universalTransaction") {
        let universal = universal
            .as_object()
            .ok_or_else(|| invalid(1, "universalTransaction must be an object"))?;
        return universal_order(spec, universal, account);
    }
    let tag = spec.get("tag").and_then(Value::as_str).unwrap_or_default();
    let chain_id = chain(spec, "chainId")?;
    let asset = |field: &str| -> Result<TokenType, RpcError> {
        let id = spec
            .get(field)
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(1, format!("needs {field}")))?;
        on_chain(id, chain_id)
    };
    let pay_with = types(spec.get("usePrimaryTokens"), None);
    match tag {
        "transfer_v2" => {
            let tokens = spec
                .get("assetTokens")
                .and_then(Value::as_array)
                .filter(|t| t.len() == 1)
                .ok_or_else(|| invalid(1, "assetTokens must hold exactly one {assetId, amount}"))?;
            let id = tokens[0].get("assetId").and_then(Value::as_str).unwrap_or_default();
            let token = on_chain(id, chain_id)?;
            let raw = raw_amount(&tokens[0]["amount"], "assetTokens[0].amount", token, chain_id)?;
            let receiver = spec.get("receiver").and_then(Value::as_str).unwrap_or_default();
            validate_address_for_chain(receiver, chain_id)
                .map_err(|e| invalid(1, format!("receiver: {}", e.message())))?;
            Ok(Order {
                tag: "transfer_v2",
                dst_chain: chain_id,
                dst_token: token,
                dst_address: receiver.to_owned(),
                want: Want::Exactly { raw, pay_with },
            })
        }
        "buy" => {
            let token = asset("assetId")?;
            let usd = assets::parse_amount(
                "amountInUSD",
                spec.get("amountInUSD").unwrap_or(&Value::Null),
            )
            .map_err(|e| invalid(1, e))?;
            let raw = usd_to_raw(call, usd, token, chain_id)?;
            Ok(Order {
                tag: "buy",
                dst_chain: chain_id,
                dst_token: token,
                dst_address: account.deposit_address(chain_id).to_owned(),
                want: Want::Exactly { raw, pay_with },
            })
        }
        "sell" => {
            let token = asset("assetId")?;
            let raw =
                raw_amount(spec.get("amount").unwrap_or(&Value::Null), "amount", token, chain_id)?;
            let native =
                spec.get("options").and_then(|o| o.get("preferTokenType")).and_then(Value::as_u64)
                    == Some(1);
            let into = if native {
                native_token(chain_id).filter(|into| *into != token)
            } else {
                [TokenType::USDC, TokenType::USDT]
                    .into_iter()
                    .find(|t| *t != token && assets::exists_on(*t, chain_id))
            }
            .ok_or_else(|| {
                invalid(1, format!("nothing to sell {token} into on chain {chain_id}"))
            })?;
            Ok(Order {
                tag: "sell",
                dst_chain: chain_id,
                dst_token: into,
                dst_address: account.deposit_address(chain_id).to_owned(),
                want: Want::Spend { chain_id, token, raw },
            })
        }
        other => Err(invalid(
            1,
            format!(
                "tag {} is not transfer_v2, buy or sell (nor is there a universalTransaction)",
                crate::describe::quote(other)
            ),
        )),
    }
}

/// The order of a universal (or convert) transaction.
fn universal_order(
    spec: &Map<String, Value>,
    universal: &Map<String, Value>,
    account: &UaAccount,
) -> Result<Order, RpcError> {
    let chain_id = chain(universal, "chainId")?;
    let pay_with =
        types(spec.get("inputTokens"), spec.get("fee").and_then(|f| f.get("tokenTypes")));
    let expect =
        universal.get("expectTokens").and_then(Value::as_array).cloned().unwrap_or_default();
    let transactions =
        universal.get("transactions").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut expected = Vec::new();
    for (i, entry) in expect.iter().enumerate() {
        let field = format!("expectTokens[{i}]");
        let token = entry
            .get("type")
            .and_then(Value::as_str)
            .and_then(assets::token_type)
            .ok_or_else(|| invalid(1, format!("{field}.type is not a token type")))?;
        let amount = assets::parse_amount(&format!("{field}.amount"), &entry["amount"])
            .map_err(|e| invalid(1, e))?;
        expected.push((token, amount));
    }
    let mut deliveries = Vec::new();
    for (i, transaction) in transactions.iter().enumerate() {
        if let Some(delivery) = delivery(chain_id, transaction, i)? {
            deliveries.push(delivery);
        }
    }
    let (tag, (token, address, raw)) = match (deliveries.as_slice(), expected.as_slice()) {
        ([one], _) => {
            let needed = assets::to_18(one.2, get_token_decimals(one.0, Some(chain_id)));
            if !expected.iter().any(|(token, amount)| *token == one.0 && *amount >= needed) {
                return Err(invalid(
                    1,
                    format!(
                        "expectTokens must provide the {} {} the transactions transfer",
                        one.2, one.0
                    ),
                ));
            }
            ("universal", one.clone())
        }
        ([], [(token, amount)]) if transactions.is_empty() => {
            let raw = assets::from_18(*amount, get_token_decimals(*token, Some(chain_id)));
            ("convert", (*token, account.deposit_address(chain_id).to_owned(), raw))
        }
        _ => {
            return Err(invalid(
                1,
                "devnet executes one transfer per transaction: one ERC-20 transfer or native \
                 transfer in transactions, or none and one expectTokens entry (a convert)",
            ));
        }
    };
    if !assets::exists_on(token, chain_id) {
        return Err(invalid(1, format!("{token} is not on chain {chain_id}")));
    }
    if raw.is_zero() {
        return Err(invalid(1, "the amount must be positive"));
    }
    Ok(Order {
        tag,
        dst_chain: chain_id,
        dst_token: token,
        dst_address: address,
        want: Want::Exactly { raw, pay_with },
    })
}

/// The transfer `transactions[i]` makes on `chain_id`, if any: an ERC-20 `transfer(to, amount)`
/// on a token devnet knows there, or a native transfer (`value` with no `data`).
fn delivery(
    chain_id: u64,
    transaction: &Value,
    i: usize,
) -> Result<Option<(TokenType, String, U256)>, RpcError> {
    let field = format!("transactions[{i}]");
    if chain_id == super::super::signing::SOLANA_CHAIN_ID {
        return Err(invalid(
            1,
            format!("{field}: devnet does not execute Solana instructions (send none: a convert)"),
        ));
    }
    let to = transaction.get("to").and_then(Value::as_str).unwrap_or_default();
    validate_address_for_chain(to, chain_id)
        .map_err(|e| invalid(1, format!("{field}.to: {}", e.message())))?;
    let data = transaction.get("data").and_then(Value::as_str).unwrap_or("0x");
    let data = hex::decode(data).map_err(|_| invalid(1, format!("{field}.data is not hex")))?;
    let value = match transaction.get("value") {
        None | Some(Value::Null) => U256::ZERO,
        Some(value) => {
            assets::parse_amount(&format!("{field}.value"), value).map_err(|e| invalid(1, e))?
        }
    };
    if data.is_empty() {
        if value.is_zero() {
            return Ok(None);
        }
        let native = native_token(chain_id)
            .ok_or_else(|| invalid(1, format!("{field}: chain {chain_id} has no native asset")))?;
        return Ok(Some((native, to.to_owned(), value)));
    }
    let call = transferCall::abi_decode(&data).map_err(|_| {
        invalid(
            1,
            format!(
                "{field}: devnet executes ERC-20 transfer(address,uint256) calls and native \
                 transfers only"
            ),
        )
    })?;
    let token = assets::token_at(chain_id, to)
        .filter(|t| assets::address_of(*t, chain_id) != assets::ZERO_ADDRESS)
        .ok_or_else(|| {
            invalid(1, format!("{field}.to {to} is no token devnet knows on chain {chain_id}"))
        })?;
    if !value.is_zero() {
        return Err(invalid(1, format!("{field}: a token transfer sends no value")));
    }
    Ok(Some((token, call.to.to_checksum(None), call.amount)))
}

fn chain(object: &Map<String, Value>, field: &str) -> Result<u64, RpcError> {
    object
        .get(field)
        .and_then(Value::as_u64)
        .filter(|id| Chain::from_id(*id).is_some())
        .ok_or_else(|| invalid(1, format!("{field} must be the id of a chain devnet knows")))
}

fn on_chain(asset_id: &str, chain_id: u64) -> Result<TokenType, RpcError> {
    let token = assets::parse_asset_id(asset_id)
        .and_then(|asset| asset.on(chain_id))
        .map_err(|e| invalid(1, e))?;
    if !assets::exists_on(token, chain_id) {
        return Err(invalid(1, format!("{token} is not on chain {chain_id}")));
    }
    Ok(token)
}

/// An 18-decimal amount of `token` on `chain_id` in its smallest units; positive.
fn raw_amount(
    value: &Value,
    field: &str,
    token: TokenType,
    chain_id: u64,
) -> Result<U256, RpcError> {
    let amount = assets::parse_amount(field, value).map_err(|e| invalid(1, e))?;
    let raw = assets::from_18(amount, get_token_decimals(token, Some(chain_id)));
    if raw.is_zero() {
        return Err(invalid(1, format!("{field} must be positive")));
    }
    Ok(raw)
}

/// What `usd` (atto-USD) buys of `token` at devnet's price, in its smallest units.
fn usd_to_raw(
    call: &Call<'_>,
    usd: U256,
    token: TokenType,
    chain_id: u64,
) -> Result<U256, RpcError> {
    let price = fees::price_units(call.services.prices.usd(token));
    let decimals = u32::from(get_token_decimals(token, Some(chain_id)));
    let scale = U256::from(10u8).pow(U256::from(decimals));
    let raw = usd
        .checked_mul(scale)
        .map(|n| n / (price * U256::from(1_000_000_000u64)).max(U256::from(1u8)))
        .ok_or_else(|| invalid(1, "amountInUSD is too large"))?;
    if raw.is_zero() || price.is_zero() {
        return Err(invalid(1, "amountInUSD buys nothing"));
    }
    Ok(raw)
}

/// Token types named by `list` (type names, or `{type}` objects), else by `fallback`, else the
/// five primary types. Names devnet does not know are left out.
fn types(list: Option<&Value>, fallback: Option<&Value>) -> Vec<TokenType> {
    let read = |value: &Value| -> Option<Vec<TokenType>> {
        let names = value.as_array()?;
        Some(
            names
                .iter()
                .filter_map(|v| v.as_str().or_else(|| v.get("type").and_then(Value::as_str)))
                .filter_map(assets::token_type)
                .collect(),
        )
    };
    list.and_then(read)
        .or_else(|| fallback.and_then(read))
        .unwrap_or_else(|| PRIMARY_TYPES.to_vec())
}

#[cfg(test)]
mod tests {
    use alloy_primitives::U256;
    use serde_json::json;

    use super::*;

    #[test]
    fn token_transfers_decode() {
        let usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
        let receiver = alloy_primitives::Address::repeat_byte(0x55);
        let data = transferCall { to: receiver, amount: U256::from(3_000_000u64) }.abi_encode();
        let tx = json!({"to": usdc, "data": hex::encode_prefixed(&data), "value": "0x0"});
        let (token, to, raw) = delivery(8453, &tx, 0).unwrap().unwrap();
        assert_eq!((token, raw), (TokenType::USDC, U256::from(3_000_000u64)));
        assert_eq!(to, receiver.to_checksum(None));
        let native = json!({"to": usdc, "value": "0x10"});
        assert_eq!(delivery(8453, &native, 0).unwrap().unwrap().0, TokenType::ETH);
        assert_eq!(delivery(8453, &json!({"to": usdc}), 0).unwrap(), None);
        assert!(delivery(8453, &json!({"to": usdc, "data": "0xdeadbeef"}), 0).is_err());
        assert!(delivery(101, &json!({"programId": "x"}), 0).is_err());
    }
}
