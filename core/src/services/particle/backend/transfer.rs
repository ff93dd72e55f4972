//! What a prepared Particle transfer keeps for its send (`PreparedTransfer::backend`), and how
//! the service's answers become the engine's: send results, balance lines.

use alloy_primitives::hex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::answers::{CreatedTransaction, PrimaryAssets, TransactionState};
use super::super::root::{SigningRoot, UserOpRef};
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::services::backend::{AccountBalance, PreparedTransfer};
use crate::services::{SendResult, SendStatus};
use crate::signer::Signature65;

/// What a prepared transfer keeps for its send (`PreparedTransfer::backend`): the transaction
/// and what its root was computed from (the root and proofs are computed again from these).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Prepared {
    transaction_id: String,
    valid_until: u64,
    valid_after: u64,
    user_ops: Vec<PreparedOp>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PreparedOp {
    chain_id: u64,
    user_op_hash: String,
}

impl Prepared {
    pub(super) fn of(created: &CreatedTransaction) -> Prepared {
        let signing = &created.signing;
        Prepared {
            transaction_id: created.transaction_id.clone(),
            valid_until: signing.valid_until,
            valid_after: signing.valid_after,
            user_ops: signing
                .user_ops
                .iter()
                .map(|op| PreparedOp {
                    chain_id: op.chain_id,
                    user_op_hash: op.user_op_hash.to_string(),
                })
                .collect(),
        }
    }
}

/// The transaction a prepared transfer sends, its root computed again from what was kept.
pub(super) fn prepared(transfer: &PreparedTransfer) -> Result<CreatedTransaction> {
    let unusable = |why: String| {
        Error::new(
            ErrorKind::Internal,
            format!(
                "transfer {} carries no Particle transaction: {why}",
                quote(&transfer.quote.quote_id)
            ),
        )
    };
    let prepared: Prepared =
        serde_json::from_value(transfer.backend.clone()).map_err(|e| unusable(e.to_string()))?;
    let mut user_ops = Vec::with_capacity(prepared.user_ops.len());
    for op in &prepared.user_ops {
        let user_op_hash = op
            .user_op_hash
            .parse()
            .map_err(|_| unusable(format!("bad hash {}", quote(&op.user_op_hash))))?;
        user_ops.push(UserOpRef { chain_id: op.chain_id, user_op_hash });
    }
    let signing = SigningRoot::with_window(user_ops, prepared.valid_until, prepared.valid_after)?;
    if signing.root_hash.to_string() != transfer.quote.root_hash {
        return Err(unusable("its root hash does not match the quote's".to_owned()));
    }
    Ok(CreatedTransaction {
        transaction_id: prepared.transaction_id,
        signing,
        fees: None,
        result: Value::Null,
    })
}

pub(super) fn parse_signature(text: &str) -> Result<Signature65> {
    let bytes = hex::decode(text.trim()).map_err(|_| {
        Error::invalid_argument(format!("the signature {} is not hex", quote(text)))
    })?;
    bytes.try_into().map_err(|bytes: Vec<u8>| {
        Error::invalid_argument(format!("the signature is {} bytes, not 65", bytes.len()))
    })
}

/// The engine's send result of what the service sent about transaction `id` (a send's answer or
/// `universal_getTransaction`'s record); `None` when it says the transaction was never sent.
/// The status is a `UA_TRANSACTION_STATUS` code (or `"success"`, `"pending"`, `"failed"`);
/// the transfer's hash (`txHash`, else the record's `transactionId`), the delivered amount and
/// an explorer link are taken where the service sends them (devnet does).
pub(super) fn send_result_of(id: &str, value: &Value) -> Option<SendResult> {
    let text = |name: &str| {
        value.get(name).and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned)
    };
    let (status, failure) = match value.get("status") {
        Some(Value::Number(code)) => {
            let state = TransactionState::of(code.as_i64().unwrap_or(-1));
            let failure = match state {
                TransactionState::Failed(code) => Some(format!(
                    "the transaction ended {} ({code})",
                    TransactionState::code_name(code)
                )),
                _ => None,
            };
            (state.send_status()?, failure)
        }
        Some(Value::String(word)) if word == "success" => (SendStatus::Success, None),
        Some(Value::String(word)) if word == "failed" => (SendStatus::Failed, None),
        _ => (SendStatus::Pending, None),
    };
    let delivered = match value.get("deliveredRawAmount") {
        Some(Value::String(raw)) if !raw.is_empty() => Some(raw.clone()),
        Some(Value::Number(raw)) => Some(raw.to_string()),
        _ => None,
    };
    Some(SendResult {
        transaction_id: text("txHash").or_else(|| text("transactionId")).unwrap_or(id.to_owned()),
        status,
        explorer_url: text("explorerUrl"),
        delivered_raw_amount: delivered,
        error: text("error").or(failure),
        ..pending(id)
    })
}

/// A send of transaction `id` that is not final yet.
pub(super) fn pending(id: &str) -> SendResult {
    SendResult {
        transaction_id: id.to_owned(),
        quote_id: id.to_owned(),
        status: SendStatus::Pending,
        explorer_url: None,
        delivered_raw_amount: None,
        error: None,
        deposit_id: None,
    }
}

/// An account's balance lines: one per token type and chain, the token's symbol upper-cased
/// (unknown types kept), entries without a chain left out.
pub(super) fn balance_lines(assets: &PrimaryAssets) -> Vec<AccountBalance> {
    assets
        .assets
        .iter()
        .flat_map(|asset| {
            asset.chains.iter().filter(|c| c.chain_id != 0).map(move |holding| AccountBalance {
                chain_id: holding.chain_id,
                token: asset.token_type.to_ascii_uppercase(),
                decimals: holding.real_decimals,
                raw_amount: holding.raw_amount,
                received: None,
                price_usd: asset.price,
                value_usd: holding.amount_in_usd(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn send_results_from_answers_and_records() {
        let done = json!({"transactionId": "q_1", "status": 7, "txHash": "0xab",
            "deliveredRawAmount": "2440000", "explorerUrl": "https://arbiscan.io/tx/0xab"});
        let result = send_result_of("q_1", &done).unwrap();
        assert_eq!((result.transaction_id.as_str(), result.quote_id.as_str()), ("0xab", "q_1"));
        assert_eq!(result.status, SendStatus::Success);
        assert_eq!(result.delivered_raw_amount.as_deref(), Some("2440000"));
        assert_eq!(result.explorer_url.as_deref(), Some("https://arbiscan.io/tx/0xab"));
        let failed = send_result_of("q_1", &json!({"status": 6})).unwrap();
        assert_eq!((failed.status, failed.transaction_id.as_str()), (SendStatus::Failed, "q_1"));
        assert!(failed.error.unwrap().contains("EXECUTION_FAILED"));
        assert_eq!(
            send_result_of("q_1", &json!({"status": 5})).unwrap().status,
            SendStatus::Pending
        );
        assert_eq!(
            send_result_of("q_1", &json!({"status": "success"})).unwrap().status,
            SendStatus::Success
        );
        assert_eq!(send_result_of("q_1", &json!({})).unwrap().status, SendStatus::Pending);
        assert_eq!(send_result_of("q_1", &json!({"status": 0})), None, "never sent");
    }

    #[test]
    fn signatures_are_read_as_65_bytes_of_hex() {
        let text = format!("0x{}", "11".repeat(65));
        assert_eq!(parse_signature(&text).unwrap(), [0x11; 65]);
        assert!(parse_signature("0x1111").unwrap_err().message().contains("2 bytes"));
        assert!(parse_signature("zz").is_err());
    }
}
