//! Quotes: what a sweep or a refund would spend and deliver (`POST /v1/sweeps/quote`).

use serde::{Deserialize, Serialize};

use super::amount;
use crate::http::Reply;
use crate::services::{CallError, decode};
use crate::units::U256;

/// What a quote spends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteSource {
    /// Source chain id.
    pub chain_id: u64,
    /// Source token symbol.
    pub token: String,
    /// Exactly this much of the token is spent.
    pub raw_amount: U256,
}

/// Where a quote delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteDestination {
    /// Destination chain id.
    pub chain_id: u64,
    /// Destination token symbol.
    pub token: String,
    /// Destination address.
    pub address: String,
}

/// What a quote is for (`docs/protocol.md` §3, "Refund transfers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuotePurpose {
    /// A conversion to the destination (the default).
    #[default]
    Sweep,
    /// A transfer back on the source chain in the source token, gas the only fee.
    Refund,
}

impl QuotePurpose {
    /// The protocol's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            QuotePurpose::Sweep => "sweep",
            QuotePurpose::Refund => "refund",
        }
    }
}

/// A request for a quote of one deposit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteRequest {
    /// The account spending.
    pub account_id: String,
    /// What is spent.
    pub source: QuoteSource,
    /// Where it goes.
    pub destination: QuoteDestination,
    /// A sweep (default) or a refund.
    pub purpose: QuotePurpose,
    /// The deposit this transfer belongs to, recorded by the service with the quote.
    pub deposit_id: Option<String>,
}

/// The fees of a quote, in USD.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct QuoteFees {
    /// Gas on the destination.
    #[serde(rename = "gasUSD", default)]
    pub gas_usd: f64,
    /// Liquidity-provider fee.
    #[serde(rename = "lpUSD", default)]
    pub lp_usd: f64,
    /// The service fee (1% with an own `uaProjectId`).
    #[serde(rename = "serviceUSD", default)]
    pub service_usd: f64,
    /// Their sum.
    #[serde(rename = "totalUSD", default)]
    pub total_usd: f64,
}

/// A priced conversion of one deposit (`POST /v1/sweeps/quote`).
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    /// The quote's id; sending it is idempotent.
    pub quote_id: String,
    /// What the intermediary signs (`0x` + 32 bytes).
    pub root_hash: String,
    /// When the quote expires, unix milliseconds.
    pub expires_at: u64,
    /// Source decimals.
    pub source_decimals: u32,
    /// USD value of the source amount.
    pub source_value_usd: f64,
    /// Destination decimals.
    pub destination_decimals: u32,
    /// What will be delivered, in the destination token's smallest units (the fee-aware amount).
    pub destination_raw_amount: U256,
    /// The fees.
    pub fees: QuoteFees,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawQuoteSource {
    decimals: u32,
    #[serde(rename = "valueUSD", default)]
    value_usd: f64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawQuoteDestination {
    decimals: u32,
    raw_amount: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawQuote {
    quote_id: String,
    root_hash: String,
    #[serde(default)]
    expires_at: u64,
    source: RawQuoteSource,
    destination: RawQuoteDestination,
    #[serde(default)]
    fees: QuoteFees,
}

// Parsed apart from the HTTP so that it is pure: an entry point of the fuzz targets (`fuzz/`),
// not part of the API. It takes the HTTP status and body.

/// The answer of `POST /v1/sweeps/quote`.
#[doc(hidden)]
pub fn parse_quote(status: u16, body: String) -> Result<Quote, CallError> {
    const WHAT: &str = "sweep quote";
    let raw: RawQuote = decode(WHAT, Reply { status, body })?;
    Ok(Quote {
        destination_raw_amount: amount(WHAT, "destination.rawAmount", &raw.destination.raw_amount)?,
        quote_id: raw.quote_id,
        root_hash: raw.root_hash,
        expires_at: raw.expires_at,
        source_decimals: raw.source.decimals,
        source_value_usd: raw.source.value_usd,
        destination_decimals: raw.destination.decimals,
        fees: raw.fees,
    })
}
