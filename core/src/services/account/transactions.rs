//! The account's transactions (spec §2 `UATransaction`, `TransactionsResponse`,
//! `TokenTransactionsResponse`).

use serde::{Deserialize, Serialize};

use super::lenient_string;

/// The spec's `UATransaction.targetToken`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[allow(missing_docs)]
pub struct UaTargetToken {
    #[serde(deserialize_with = "lenient_string")]
    pub name: String,
    #[serde(rename = "type", deserialize_with = "lenient_string")]
    pub token_type: String,
    #[serde(deserialize_with = "lenient_string")]
    pub image: String,
    pub price: f64,
    #[serde(deserialize_with = "lenient_string")]
    pub symbol: String,
    #[serde(deserialize_with = "lenient_string")]
    pub address: String,
    #[serde(deserialize_with = "lenient_string")]
    pub asset_id: String,
    pub chain_id: u64,
    pub decimals: u32,
    pub real_decimals: u32,
    pub is_primary_token: bool,
    pub is_smart_router_supported: bool,
}

/// The spec's `UATransaction.change`. `from` is empty when the sender is unknown.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[allow(missing_docs)]
pub struct UaChange {
    #[serde(deserialize_with = "lenient_string")]
    pub amount: String,
    #[serde(rename = "amountInUSD", deserialize_with = "lenient_string")]
    pub amount_in_usd: String,
    #[serde(deserialize_with = "lenient_string")]
    pub from: String,
    #[serde(deserialize_with = "lenient_string")]
    pub to: String,
    /// depositkit's addition: the amount in smallest units (decimal string), when the service
    /// sends it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_amount: Option<String>,
}

/// The spec's `UATransaction.detail`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[allow(missing_docs)]
pub struct UaDetail {
    pub red_packet_count: u64,
}

/// A transaction of the account (spec §2 `UATransaction`): incoming deposits (`tag`
/// `"receive"`), sweeps (`tag` `"sweep"`) and refunds (`tag` `"refund"`). `status` is 1 for
/// success, 0 pending, −1 failed. `quote_id` and `deposit_id` are depositkit's additions, set
/// when the service sends them (sweeps and refunds).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[allow(missing_docs)]
pub struct UaTransaction {
    #[serde(deserialize_with = "lenient_string")]
    pub transaction_id: String,
    #[serde(deserialize_with = "lenient_string")]
    pub tag: String,
    #[serde(deserialize_with = "lenient_string")]
    pub created_at: String,
    #[serde(deserialize_with = "lenient_string")]
    pub updated_at: String,
    pub target_token: UaTargetToken,
    pub change: UaChange,
    pub detail: UaDetail,
    pub status: i64,
    pub from_chains: Vec<u64>,
    pub to_chains: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deposit_id: Option<String>,
}

/// The spec's spelling of [`UaTransaction`].
pub type UATransaction = UaTransaction;

/// A page of transactions (spec §2 `TransactionsResponse`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionsResponse {
    /// Newest first.
    pub transactions: Vec<UaTransaction>,
    /// The page number (from 1).
    pub page: u32,
    /// The page size.
    pub page_size: u32,
}

/// The former name of [`TransactionsResponse`].
pub type TransactionsPage = TransactionsResponse;

/// A cursor-paged list of one token's transactions (spec §2 `TokenTransactionsResponse`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTransactionsResponse {
    /// Newest first.
    #[serde(default)]
    pub transactions: Vec<UaTransaction>,
    /// The cursor of the next page; `None` on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}
