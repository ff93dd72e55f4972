//! The incoming transfers of a `received` range (`GET /v1/receipts`).

use serde::Deserialize;

use super::{amount, lenient_string};
use crate::http::Reply;
use crate::services::{CallError, decode};
use crate::units::U256;

/// One incoming transfer of a `received` range (`GET /v1/receipts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The transfer's hash.
    pub tx_hash: String,
    /// Who sent it, when known.
    pub sender: Option<String>,
    /// Its amount, smallest units.
    pub raw_amount: U256,
    /// The account's cumulative `received` before it.
    pub received_before: U256,
    /// The account's cumulative `received` after it.
    pub received_after: U256,
    /// When it arrived, unix milliseconds.
    pub timestamp: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawReceipt {
    #[serde(default, deserialize_with = "lenient_string")]
    tx_hash: String,
    #[serde(default)]
    sender: Option<String>,
    raw_amount: String,
    received_before: String,
    received_after: String,
    #[serde(default)]
    timestamp: u64,
}

#[derive(Deserialize)]
struct RawReceipts {
    receipts: Vec<RawReceipt>,
}

// Parsed apart from the HTTP so that it is pure: an entry point of the fuzz targets (`fuzz/`),
// not part of the API. It takes the HTTP status and body.

/// The answer of `GET /v1/receipts`.
#[doc(hidden)]
pub fn parse_receipts(status: u16, body: String) -> Result<Vec<Receipt>, CallError> {
    const WHAT: &str = "receipts";
    let raw: RawReceipts = decode(WHAT, Reply { status, body })?;
    raw.receipts
        .into_iter()
        .map(|r| {
            Ok(Receipt {
                raw_amount: amount(WHAT, "rawAmount", &r.raw_amount)?,
                received_before: amount(WHAT, "receivedBefore", &r.received_before)?,
                received_after: amount(WHAT, "receivedAfter", &r.received_after)?,
                tx_hash: r.tx_hash,
                sender: r.sender.filter(|s| !s.trim().is_empty()),
                timestamp: r.timestamp,
            })
        })
        .collect()
}
