//! The answers of the methods, typed (`particle-ua-wire.md` §4): only what the SDK reads is
//! required, the rest is kept as it came.
//!
//! Pure functions of the `result` member, apart from the client (and fuzzable).

use alloy_primitives::B256;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::amounts::{raw_from_wire, read_wire, wire_to_f64};
use super::root::{SigningRoot, UserOpRef};
use crate::describe::{json_kind, quote};
use crate::error::{Error, ErrorKind, Result};
use crate::services::{SendStatus, TokenTransactionsResponse, TransactionsResponse, UaTransaction};
use crate::tokens::TokenType;
use crate::units::U256;
use crate::validate::{evm_address_problem, solana_address_problem};

/// The account object the SDK sends as the first parameter of most calls (its
/// `smartAccountOptions`): the three base fields, then what the host set, then the two
/// addresses once `universal_getUniversalAccount` answered them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountOptions {
    /// The owner of the account: the signer's address.
    pub owner_address: String,
    /// `"UNIVERSAL"` by default.
    pub name: String,
    /// `"2.0.1"` by default.
    pub version: String,
    /// The SDK's `useEIP7702`, sent when set.
    #[serde(rename = "useEIP7702", default, skip_serializing_if = "Option::is_none")]
    pub use_eip7702: Option<bool>,
    /// The SDK's `solanaAccountIndex`, sent when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solana_account_index: Option<u32>,
    /// The EVM deposit address, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smart_account_address: Option<String>,
    /// The Solana deposit address, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solana_smart_account_address: Option<String>,
}

impl AccountOptions {
    /// The options of `owner_address`'s account with `name` and `version`, addresses unknown.
    pub fn new(owner_address: &str, name: &str, version: &str) -> AccountOptions {
        AccountOptions {
            owner_address: owner_address.to_owned(),
            name: name.to_owned(),
            version: version.to_owned(),
            use_eip7702: None,
            solana_account_index: None,
            smart_account_address: None,
            solana_smart_account_address: None,
        }
    }
}

/// The deposit addresses of an account (`universal_getUniversalAccount`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmartAccount {
    /// The EVM deposit address (`smartAccountAddress`).
    pub evm_address: String,
    /// The Solana deposit address (`solanaSmartAccountAddress`).
    pub solana_address: String,
}

/// The result of `universal_getUniversalAccount`: an array whose first element holds the two
/// addresses.
///
/// # Errors
/// [`ErrorKind::UniversalAccount`] for an empty array (the SDK's "No smart account options
/// found") or an address that is missing or invalid; [`ErrorKind::Protocol`] when the result
/// is not an array of objects.
pub fn parse_smart_account(result: &Value) -> Result<SmartAccount> {
    const WHAT: &str = "universal_getUniversalAccount";
    let items = result
        .as_array()
        .ok_or_else(|| protocol(WHAT, format!("expected an array, got {}", json_kind(result))))?;
    let first = items
        .first()
        .ok_or_else(|| Error::new(ErrorKind::UniversalAccount, "No smart account options found"))?;
    let field = |name: &str| first.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
    let evm_address = field("smartAccountAddress");
    if let Some(problem) = evm_address_problem(&evm_address) {
        return Err(Error::new(
            ErrorKind::UniversalAccount,
            format!("Failed to get EVM smart account address: {} ({problem})", quote(&evm_address)),
        ));
    }
    let solana_address = field("solanaSmartAccountAddress");
    if let Some(problem) = solana_address_problem(&solana_address) {
        return Err(Error::new(
            ErrorKind::UniversalAccount,
            format!(
                "Failed to get Solana smart account address: {} ({problem})",
                quote(&solana_address)
            ),
        ));
    }
    Ok(SmartAccount { evm_address, solana_address })
}

/// What an account holds (`universal_getPrimaryAssets`).
#[derive(Debug, Clone, PartialEq)]
pub struct PrimaryAssets {
    /// The USD value of everything.
    pub total_amount_in_usd: f64,
    /// One entry per token type.
    pub assets: Vec<PrimaryAsset>,
}

/// One token type's holdings across chains.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimaryAsset {
    /// The token type (`"usdc"`), as sent.
    pub token_type: String,
    /// The USD price of one token (0 when the service sent none).
    pub price: f64,
    /// Whole tokens held, all chains.
    pub amount: f64,
    /// Their USD value.
    pub amount_in_usd: f64,
    /// Per chain.
    pub chains: Vec<ChainHolding>,
}

/// One token type's holding on one chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHolding {
    /// The chain (`token.chainId`, else the entry's own `chainId`; 0 when neither is there).
    pub chain_id: u64,
    /// The token's contract or mint, when sent.
    pub address: String,
    /// The token's real decimals.
    pub real_decimals: u32,
    /// The amount in smallest units: the SDK's computed `rawAmount` (truncated).
    pub raw_amount: U256,
    /// The 18-decimal amount as sent.
    pub wire_amount: U256,
    /// The 18-decimal USD value as sent.
    pub wire_amount_in_usd: U256,
}

impl ChainHolding {
    /// The USD value, as a number.
    pub fn amount_in_usd(&self) -> f64 {
        wire_to_f64(self.wire_amount_in_usd)
    }
}

impl PrimaryAsset {
    /// The depositkit token of this type, when it is one (`"usdc"` → USDC).
    pub fn token(&self) -> Option<TokenType> {
        self.token_type.parse().ok()
    }
}

/// The result of `universal_getPrimaryAssets`. Required, as the SDK requires them:
/// `assets[]`, `totalAmountInUSD`, each asset's `amount`, `amountInUSD` and
/// `chainAggregation[]`, each aggregation's `amount`, `amountInUSD` and `token.realDecimals`.
///
/// # Errors
/// [`ErrorKind::Protocol`] naming the first field missing or malformed.
pub fn parse_primary_assets(result: &Value) -> Result<PrimaryAssets> {
    const WHAT: &str = "universal_getPrimaryAssets";
    let at = |path: String, why: String| protocol(WHAT, format!("{path}: {why}"));
    let wire = |path: String, value: Option<&Value>| -> Result<U256> {
        let value = value.ok_or_else(|| at(path.clone(), "missing".to_owned()))?;
        read_wire(&path, value).map_err(|e| protocol(WHAT, e.message().to_owned()))
    };
    let total = wire("totalAmountInUSD".into(), result.get("totalAmountInUSD"))?;
    let assets = result
        .get("assets")
        .and_then(Value::as_array)
        .ok_or_else(|| at("assets".into(), "expected an array".into()))?;
    let mut out = Vec::with_capacity(assets.len());
    for (i, asset) in assets.iter().enumerate() {
        let amount = wire(format!("assets[{i}].amount"), asset.get("amount"))?;
        let amount_in_usd = wire(format!("assets[{i}].amountInUSD"), asset.get("amountInUSD"))?;
        let aggregation =
            asset.get("chainAggregation").and_then(Value::as_array).ok_or_else(|| {
                at(format!("assets[{i}].chainAggregation"), "expected an array".into())
            })?;
        let mut chains = Vec::with_capacity(aggregation.len());
        for (j, item) in aggregation.iter().enumerate() {
            let path = format!("assets[{i}].chainAggregation[{j}]");
            let token = item.get("token");
            let real_decimals = token
                .and_then(|t| t.get("realDecimals"))
                .and_then(Value::as_u64)
                .filter(|d| *d <= 18)
                .ok_or_else(|| {
                    at(format!("{path}.token.realDecimals"), "expected 0 to 18".into())
                })? as u32;
            let wire_amount = wire(format!("{path}.amount"), item.get("amount"))?;
            let wire_amount_in_usd = wire(format!("{path}.amountInUSD"), item.get("amountInUSD"))?;
            let chain_id = token
                .and_then(|t| t.get("chainId"))
                .and_then(Value::as_u64)
                .or_else(|| item.get("chainId").and_then(Value::as_u64))
                .unwrap_or(0);
            let address = token
                .and_then(|t| t.get("address"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            chains.push(ChainHolding {
                chain_id,
                address,
                real_decimals,
                raw_amount: raw_from_wire(wire_amount, real_decimals)?,
                wire_amount,
                wire_amount_in_usd,
            });
        }
        out.push(PrimaryAsset {
            token_type: asset
                .get("tokenType")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            price: asset.get("price").and_then(Value::as_f64).unwrap_or(0.0),
            amount: wire_to_f64(amount),
            amount_in_usd: wire_to_f64(amount_in_usd),
            chains,
        });
    }
    Ok(PrimaryAssets { total_amount_in_usd: wire_to_f64(total), assets: out })
}

/// The fees of a transaction (`feeQuotes[0].fees.totals`), in USD: the service sends them as
/// 18-decimal values.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeeTotals {
    /// All fees (`feeTokenAmountInUSD`).
    pub fee_usd: f64,
    /// Gas (`gasFeeTokenAmountInUSD`).
    pub gas_fee_usd: f64,
    /// The liquidity providers' fee (`transactionLPFeeTokenAmountInUSD`).
    pub lp_fee_usd: f64,
    /// The service fee (`transactionServiceFeeTokenAmountInUSD`, 0 when not sent).
    pub service_fee_usd: f64,
    /// `freeGasFee`.
    pub free_gas_fee: bool,
    /// `freeServiceFee`.
    pub free_service_fee: bool,
}

/// A transaction made by `universal_createTransaction`: its id, what to sign, its fees, and
/// the result as the service sent it (token changes, deposit tokens, …).
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedTransaction {
    /// The service's id of the transaction.
    pub transaction_id: String,
    /// Its user operations, root hash and validity window.
    pub signing: SigningRoot,
    /// Its fees, when the service sent the three totals as the original deposit SDK reads them.
    pub fees: Option<FeeTotals>,
    /// The result as sent.
    pub result: Value,
}

/// The result of `universal_createTransaction`, signable: a `transactionId` and user operations
/// (`feeQuotes[0].userOps` when not empty, else `gasless.userOps`), each with a numeric
/// `chainId` and a 32-byte `userOpHash`. The signing window starts at `now_ms`, as the SDK
/// fixes it when the answer arrives.
///
/// # Errors
/// [`ErrorKind::Protocol`] naming what is missing or malformed.
pub fn parse_created(result: &Value, now_ms: u64) -> Result<CreatedTransaction> {
    const WHAT: &str = "universal_createTransaction";
    let transaction_id = result
        .get("transactionId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| protocol(WHAT, "the result has no transactionId".into()))?
        .to_owned();
    let quote_ops = result.get("feeQuotes").and_then(|q| q.get(0)).and_then(|q| q.get("userOps"));
    let gasless_ops = result.get("gasless").and_then(|g| g.get("userOps"));
    let ops = non_empty_array(quote_ops)
        .or_else(|| non_empty_array(gasless_ops))
        .ok_or_else(|| protocol(WHAT, "the result has no user operations to sign".into()))?;
    let mut user_ops = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let chain_id = op
            .get("chainId")
            .and_then(Value::as_u64)
            .ok_or_else(|| protocol(WHAT, format!("userOps[{i}].chainId: expected a number")))?;
        let hash = op.get("userOpHash").and_then(Value::as_str).unwrap_or_default();
        let user_op_hash = parse_hash(hash).ok_or_else(|| {
            protocol(
                WHAT,
                format!("userOps[{i}].userOpHash: {} is not 0x and 32 bytes of hex", quote(hash)),
            )
        })?;
        if !op.get("userOp").is_some_and(Value::is_object) {
            return Err(protocol(WHAT, format!("userOps[{i}].userOp: expected an object")));
        }
        user_ops.push(UserOpRef { chain_id, user_op_hash });
    }
    let signing = SigningRoot::new(user_ops, now_ms)?;
    let totals = result
        .get("feeQuotes")
        .and_then(|q| q.get(0))
        .and_then(|q| q.get("fees"))
        .and_then(|f| f.get("totals"));
    Ok(CreatedTransaction {
        transaction_id,
        signing,
        fees: totals.and_then(fee_totals),
        result: result.clone(),
    })
}

fn non_empty_array(value: Option<&Value>) -> Option<&Vec<Value>> {
    value.and_then(Value::as_array).filter(|a| !a.is_empty())
}

/// The totals as the original deposit SDK reads them: the three hex strings required.
fn fee_totals(totals: &Value) -> Option<FeeTotals> {
    let usd = |name: &str| -> Option<f64> {
        let value = totals.get(name)?;
        value.as_str()?;
        read_wire(name, value).ok().map(wire_to_f64)
    };
    Some(FeeTotals {
        fee_usd: usd("feeTokenAmountInUSD")?,
        gas_fee_usd: usd("gasFeeTokenAmountInUSD")?,
        lp_fee_usd: usd("transactionLPFeeTokenAmountInUSD")?,
        service_fee_usd: usd("transactionServiceFeeTokenAmountInUSD").unwrap_or(0.0),
        free_gas_fee: totals.get("freeGasFee").and_then(Value::as_bool).unwrap_or(false),
        free_service_fee: totals.get("freeServiceFee") == Some(&Value::Bool(true)),
    })
}

fn parse_hash(text: &str) -> Option<B256> {
    let hex = text.strip_prefix("0x")?;
    if hex.len() != 64 {
        return None;
    }
    hex.parse().ok()
}

/// A transaction's state, from the SDK's `UA_TRANSACTION_STATUS` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionState {
    /// 0 `INITIALIZING`: created, never sent.
    Created,
    /// Sent, not final: 1–5 (deposit and execution steps), 8–9 (refund steps), 12–13 (penny).
    Pending(i64),
    /// 7 `FINISHED`: executed.
    Finished,
    /// Final without executing: 6 `EXECUTION_FAILED`, 10 `REFUND_FAILED`, 11
    /// `REFUND_FINISHED` (the funds went back to the account), 14 `PENNY_FAILED`.
    Failed(i64),
    /// A code the SDK does not know.
    Unknown(i64),
}

impl TransactionState {
    /// The state of status `code`.
    pub fn of(code: i64) -> TransactionState {
        match code {
            0 => TransactionState::Created,
            7 => TransactionState::Finished,
            6 | 10 | 11 | 14 => TransactionState::Failed(code),
            1..=5 | 8 | 9 | 12 | 13 => TransactionState::Pending(code),
            other => TransactionState::Unknown(other),
        }
    }

    /// The SDK's name of the code (`"EXECUTION_FAILED"`).
    pub fn code_name(code: i64) -> &'static str {
        const NAMES: [&str; 15] = [
            "INITIALIZING",
            "DEPOSIT_LOCAL",
            "DEPOSIT_PENDING",
            "WAIT_TO_REFUND",
            "EXECUTION_LOCAL",
            "EXECUTION_PENDING",
            "EXECUTION_FAILED",
            "FINISHED",
            "REFUND_LOCAL",
            "REFUND_PENDING",
            "REFUND_FAILED",
            "REFUND_FINISHED",
            "PENNY_LOCAL",
            "PENNY_PENDING",
            "PENNY_FAILED",
        ];
        usize::try_from(code).ok().and_then(|i| NAMES.get(i)).copied().unwrap_or("UNKNOWN")
    }

    /// The send status of a sent transaction in this state; `None` for [`Created`]
    /// (never sent: sending it is safe).
    ///
    /// [`Created`]: TransactionState::Created
    pub fn send_status(self) -> Option<SendStatus> {
        match self {
            TransactionState::Created => None,
            TransactionState::Finished => Some(SendStatus::Success),
            TransactionState::Failed(_) => Some(SendStatus::Failed),
            TransactionState::Pending(_) | TransactionState::Unknown(_) => {
                Some(SendStatus::Pending)
            }
        }
    }
}

/// One transaction (`universal_getTransaction`), unwrapped from a `data` member if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct TransactionRecord {
    /// Its id (empty when the service sent none).
    pub transaction_id: String,
    /// Its `status` code, when sent.
    pub status: Option<i64>,
    /// The record as sent.
    pub record: Value,
}

impl TransactionRecord {
    /// Its state; `None` without a status.
    pub fn state(&self) -> Option<TransactionState> {
        self.status.map(TransactionState::of)
    }
}

/// The result of `universal_getTransaction`.
///
/// # Errors
/// [`ErrorKind::Protocol`] when it is not an object.
pub fn parse_transaction(result: &Value) -> Result<TransactionRecord> {
    let record = match result.get("data") {
        Some(data) if data.is_object() => data,
        _ => result,
    };
    if !record.is_object() {
        return Err(protocol(
            "universal_getTransaction",
            format!("expected an object, got {}", json_kind(record)),
        ));
    }
    Ok(TransactionRecord {
        transaction_id: record
            .get("transactionId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        status: record.get("status").and_then(Value::as_i64),
        record: record.clone(),
    })
}

/// The list in a history result: a bare array, or the array under `data` or `transactions`
/// (what the original deposit SDK accepts).
fn transaction_list(what: &str, result: &Value) -> Result<Vec<UaTransaction>> {
    let list = match result {
        Value::Array(items) => items,
        _ => ["data", "transactions"]
            .iter()
            .find_map(|key| result.get(key).and_then(Value::as_array))
            .ok_or_else(|| {
                protocol(
                    what,
                    format!("expected a list of transactions, got {}", json_kind(result)),
                )
            })?,
    };
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value(item.clone())
                .map_err(|e| protocol(what, format!("transactions[{i}]: {e}")))
        })
        .collect()
}

/// The result of `universal_getTransactionsV2` for page `page` of `page_size`.
///
/// # Errors
/// [`ErrorKind::Protocol`] when there is no list or an item is malformed.
pub fn parse_transactions(
    result: &Value,
    page: u32,
    page_size: u32,
) -> Result<TransactionsResponse> {
    Ok(TransactionsResponse {
        transactions: transaction_list("universal_getTransactionsV2", result)?,
        page,
        page_size,
    })
}

/// The result of `universal_getTokenTransactions`: the list and `nextPageToken` (absent, null
/// or empty on the last page).
///
/// # Errors
/// As [`parse_transactions`].
pub fn parse_token_transactions(result: &Value) -> Result<TokenTransactionsResponse> {
    let next_page_token = result
        .get("nextPageToken")
        .or_else(|| result.get("result").and_then(|r| r.get("nextPageToken")))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    Ok(TokenTransactionsResponse {
        transactions: transaction_list("universal_getTokenTransactions", result)?,
        next_page_token,
    })
}

fn protocol(what: &str, why: String) -> Error {
    Error::new(ErrorKind::Protocol, format!("{what}: {why}"))
}

#[cfg(test)]
mod tests;
