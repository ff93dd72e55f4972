//! `universal_sendTransaction [transactionId, {signatures}]` and `universal_getTransaction
//! [id]`.
//!
//! A send checks the owner's signature exactly as the SDK makes it ([`signing`]): one entry per
//! user operation, matched by `userOpHash`, each blob's proof leading from the op's leaf to one
//! root, the root signed with EIP-191 `personal_sign` by the account's owner, `validUntil` not
//! passed. Then the quote is executed as `POST /ua/v1/sweeps/send` executes it — idempotent per
//! transaction: the same transaction sent again answers the same outcome and moves nothing (its
//! signature is still checked, its `validUntil` no longer).
//!
//! A transaction's `status` here is the SDK's `UA_TRANSACTION_STATUS` (what the SDK's users
//! compare `getTransaction(…).status` with): 0 `INITIALIZING` (created, not sent), 7 `FINISHED`,
//! 6 `EXECUTION_FAILED`. The history lists keep the spec's `UATransaction` status (1 success, −1
//! failed), as `GET /ua/v1/transactions` does.

use alloy_primitives::{Address, B256, hex};
use serde_json::{Value, json};

use super::create::user_ops;
use super::rpc::{self as prpc, Call, codes, from_api, internal, invalid};
use super::signing::{self, Refusal};
use crate::rpc::RpcError;
use crate::services::api::codes as api_codes;
use crate::services::history::ua_transaction;
use crate::services::sweeps;
use crate::time;

/// `universal_sendTransaction` → `{transactionId, status, txHash, deliveredRawAmount,
/// explorerUrl?, sourceTxHash?, error?}`: `txHash` is the transfer's hash (the history entry's
/// `transactionId`).
///
/// # Errors
/// -32657 for an unknown transaction; -32655 for signatures that are not the owner's; -32656
/// when the signature or the quote expired; -32653 when the balance changed; -32658, -32659.
pub fn send_transaction(call: &Call<'_>) -> Result<Value, RpcError> {
    let services = call.services;
    let id = call.param(0)?.as_str().ok_or_else(|| invalid(0, "must be the transactionId"))?;
    let signatures = call
        .object(1)?
        .get("signatures")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(1, "needs signatures, an array of {userOpHash, signature}"))?;
    let quote = sweeps::known_quote(services, id.trim()).map_err(from_api)?;
    let account = services
        .store
        .ua_account(&quote.account_id)
        .map_err(internal)?
        .ok_or_else(|| internal(format!("quote {} has no account", quote.id)))?;
    let ops = user_ops(&quote);
    let bad =
        |message: String| prpc::error(codes::INVALID_SIGNATURE, api_codes::BAD_SIGNATURE, message);
    let mut blobs = vec![None; ops.len()];
    for (i, entry) in signatures.iter().enumerate() {
        let hash = entry
            .get("userOpHash")
            .and_then(Value::as_str)
            .and_then(|h| h.parse::<B256>().ok())
            .ok_or_else(|| {
                invalid(1, format!("signatures[{i}].userOpHash is not 32 bytes of hex"))
            })?;
        let position = ops.iter().position(|op| op.hash == hash).ok_or_else(|| {
            bad(format!("signatures[{i}]: transaction {id} has no userOp {hash:#x}"))
        })?;
        let blob = entry
            .get("signature")
            .and_then(Value::as_str)
            .and_then(|s| hex::decode(s.trim()).ok())
            .ok_or_else(|| invalid(1, format!("signatures[{i}].signature is not hex")))?;
        blobs[position] = Some(blob);
    }
    let blobs = ops
        .iter()
        .zip(blobs)
        .map(|(op, blob)| {
            blob.ok_or_else(|| bad(format!("no signature for userOp {:#x}", op.hash)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let owner: Address = account.owner.parse().map_err(internal)?;
    let sent = services.store.sweep(&quote.id).map_err(internal)?.is_some();
    let now = u64::try_from(time::now_ms() / 1000).unwrap_or_default();
    signing::verify(&ops, &blobs, owner, (!sent).then_some(now)).map_err(
        |refusal| match refusal {
            Refusal::Invalid(message) => bad(message),
            Refusal::Expired(message) => {
                prpc::error(codes::EXPIRED, api_codes::QUOTE_EXPIRED, message)
            }
        },
    )?;
    let outcome = sweeps::execute(services, &quote, &account).map_err(from_api)?;
    Ok(send_answer(&quote.id, &outcome))
}

/// `UA_TRANSACTION_STATUS.INITIALIZING`: created, not sent.
pub const INITIALIZING: i64 = 0;
/// `UA_TRANSACTION_STATUS.EXECUTION_PENDING` (devnet executes at once: never answered).
pub const EXECUTION_PENDING: i64 = 5;
/// `UA_TRANSACTION_STATUS.EXECUTION_FAILED`: the money stayed in the account.
pub const EXECUTION_FAILED: i64 = 6;
/// `UA_TRANSACTION_STATUS.FINISHED`.
pub const FINISHED: i64 = 7;

/// A history entry as `universal_getTransaction` answers it: the `UATransaction`, its
/// `status` as a `UA_TRANSACTION_STATUS` code.
fn with_ua_status(record: &crate::store::TxRecord) -> Value {
    let mut transaction = ua_transaction(record);
    transaction["status"] = json!(if record.status < 0 { EXECUTION_FAILED } else { FINISHED });
    transaction
}

/// The answer of a send from the sweep's (`docs/protocol.md` §3, `sweeps/send`).
fn send_answer(transaction_id: &str, sweep: &Value) -> Value {
    let status = match sweep["status"].as_str() {
        Some("success") => FINISHED,
        Some("failed") => EXECUTION_FAILED,
        _ => EXECUTION_PENDING,
    };
    let mut answer = json!({
        "transactionId": transaction_id,
        "status": status,
        "txHash": sweep["transactionId"],
        "deliveredRawAmount": sweep["deliveredRawAmount"],
    });
    for field in ["explorerUrl", "sourceTxHash", "error"] {
        if let Some(value) = sweep.get(field) {
            answer[field] = value.clone();
        }
    }
    answer
}

/// `universal_getTransaction [id]`: for a transaction created here (`q_…`), its history entry
/// once sent (a `UATransaction`, `quoteId` = the id) or, before, the created transaction with
/// `status` 0; for a history entry's id (a transfer's hash), that entry — whichever account's
/// it is (a sweep's rather than the receive it made).
///
/// # Errors
/// -32657 when devnet has no such transaction; -32659 when completing a chain-backed send
/// failed.
pub fn get_transaction(call: &Call<'_>) -> Result<Value, RpcError> {
    let services = call.services;
    let id = call.param(0)?.as_str().ok_or_else(|| invalid(0, "must be a transaction id"))?.trim();
    let not_found = || {
        prpc::error(
            codes::NOT_FOUND,
            api_codes::NOT_FOUND,
            format!("no transaction {}", crate::describe::quote(id)),
        )
    };
    if let Some(quote) = services.store.quote(id).map_err(internal)? {
        let account = services
            .store
            .ua_account(&quote.account_id)
            .map_err(internal)?
            .ok_or_else(not_found)?;
        return match sweeps::outcome(services, &quote, &account) {
            Ok(_) => {
                let record = services
                    .store
                    .ua_transaction_by_quote(&account.id, &quote.id)
                    .map_err(internal)?
                    .ok_or_else(not_found)?;
                Ok(with_ua_status(&record))
            }
            Err(error) if error.code == api_codes::NOT_SENT => {
                let mut created: Value =
                    serde_json::from_str(&quote.body).unwrap_or_else(|_| json!({}));
                created["transactionId"] = json!(quote.id);
                created["status"] = json!(INITIALIZING);
                Ok(created)
            }
            Err(error) => Err(from_api(error)),
        };
    }
    // Hashes are stored as 0x + lower-case hex (Solana signatures as they are).
    let record = match services.store.ua_transaction_any(id).map_err(internal)? {
        Some(record) => record,
        None => services
            .store
            .ua_transaction_any(&id.to_ascii_lowercase())
            .map_err(internal)?
            .ok_or_else(not_found)?,
    };
    Ok(with_ua_status(&record))
}
