//! The universal-account service (`docs/protocol.md` §3): accounts, balances, sweep quotes,
//! sends, sweep status and transactions. Every call carries the session's JWT as a bearer token
//! and, when the host set its own `uaProjectId`, the `X-UA-Project-Id` header.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{CallError, Headers, Http, HttpSettings, ServiceError, bearer, decode};
use crate::error::{Error, ErrorKind};
use crate::http::Reply;
use crate::units::{U256, parse_raw_amount};

/// An initialized account (`POST /v1/accounts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountInfo {
    /// The service's id of the account (`acc_…`).
    pub account_id: String,
    /// The intermediary wallet owning it.
    pub owner_address: String,
    /// The EVM deposit address.
    pub evm_address: String,
    /// The Solana deposit address.
    pub solana_address: String,
}

/// One balance line of an account (`POST /v1/balances`).
#[derive(Debug, Clone, PartialEq)]
pub struct BalanceLine {
    /// Chain id.
    pub chain_id: u64,
    /// Token symbol as sent (`"USDC"`); unknown symbols are kept so the caller can skip them.
    pub token: String,
    /// Decimals of `raw_amount` and `received`.
    pub decimals: u32,
    /// What the account holds now.
    pub raw_amount: U256,
    /// The cumulative total ever deposited from outside; only grows.
    pub received: U256,
    /// USD price of one whole token.
    pub price_usd: f64,
    /// USD value of `raw_amount`.
    pub value_usd: f64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBalanceLine {
    chain_id: u64,
    token: String,
    decimals: u32,
    raw_amount: String,
    received: String,
    #[serde(rename = "priceUSD", default)]
    price_usd: f64,
    #[serde(rename = "valueUSD", default)]
    value_usd: f64,
}

#[derive(Deserialize)]
struct RawAccountBalances {
    balances: Vec<RawBalanceLine>,
}

#[derive(Deserialize)]
struct RawBalances {
    accounts: HashMap<String, RawAccountBalances>,
}

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

/// The state of a sent quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SendStatus {
    /// Delivered.
    Success,
    /// Accepted, not final yet.
    Pending,
    /// Failed; the money is left in the account.
    Failed,
}

/// The answer of `POST /v1/sweeps/send` and `GET /v1/sweeps/{quoteId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendResult {
    /// The transaction.
    #[serde(default)]
    #[serde(deserialize_with = "lenient_string")]
    pub transaction_id: String,
    /// The quote it executed.
    #[serde(default)]
    pub quote_id: String,
    /// Its state.
    pub status: SendStatus,
    /// A block-explorer link to the transaction.
    #[serde(default)]
    pub explorer_url: Option<String>,
    /// What was delivered, smallest units.
    #[serde(default)]
    pub delivered_raw_amount: Option<String>,
    /// Why it failed (status `failed`).
    #[serde(default)]
    pub error: Option<String>,
    /// The deposit the quote was made for, when the quote named one (refunds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposit_id: Option<String>,
}

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

/// Why a send has no definite answer, or which definite refusal it got.
#[derive(Debug)]
pub enum SendError {
    /// The service answered a refusal (4xx other than 429): no money moved.
    Refused(ServiceError),
    /// No definite answer: a timeout, a reset, 429 or 5xx, an unreadable body. `maybe_sent`
    /// is `false` only when the request certainly never reached the service.
    Unknown {
        /// What happened.
        error: Error,
        /// Whether the service may have received the request.
        maybe_sent: bool,
    },
}

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

/// A string that a service may send as `null` (read as empty).
fn lenient_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
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

/// Client of the universal-account service.
#[derive(Debug)]
pub struct AccountClient {
    base_url: String,
    http: Http,
    ua_project_id: Option<String>,
}

fn protocol(what: &str, why: String) -> CallError {
    CallError::Transport(Error::new(ErrorKind::Protocol, format!("{what}: {why}")))
}

fn amount(what: &str, field: &str, text: &str) -> Result<U256, CallError> {
    parse_raw_amount(text).map_err(|e| protocol(what, format!("{field}: {}", e.message())))
}

impl AccountClient {
    /// A client of the service at `base_url`; `ua_project_id` is the host's own project id for
    /// account operations, if it set one.
    pub fn new(base_url: &str, settings: &HttpSettings, ua_project_id: Option<&str>) -> Self {
        AccountClient {
            base_url: base_url.trim_end_matches('/').to_owned(),
            http: Http::new(settings),
            ua_project_id: ua_project_id.map(str::to_owned),
        }
    }

    fn headers(&self, jwt: &str) -> Headers {
        let mut headers = bearer(jwt);
        if let Some(project) = &self.ua_project_id {
            headers.push(("X-UA-Project-Id", project.clone()));
        }
        headers
    }

    /// `POST /v1/accounts`: initializes (idempotently) the account of `owner_address`, the
    /// intermediary wallet.
    pub async fn init_account(
        &self,
        jwt: &str,
        owner_address: &str,
    ) -> Result<AccountInfo, CallError> {
        let url = format!("{}/v1/accounts", self.base_url);
        let body = json!({ "ownerAddress": owner_address }).to_string();
        let reply =
            self.http.post(url, self.headers(jwt), body).await.map_err(CallError::Transport)?;
        decode("account initialization", reply)
    }

    /// `POST /v1/balances` for `account_ids`. For accounts of several wallets, `batch_sessions`
    /// holds one JWT per wallet (sent as `X-Batch-Sessions`); empty for one wallet.
    pub async fn balances(
        &self,
        jwt: &str,
        account_ids: &[&str],
        batch_sessions: &[&str],
    ) -> Result<HashMap<String, Vec<BalanceLine>>, CallError> {
        let url = format!("{}/v1/balances", self.base_url);
        let body = json!({ "accountIds": account_ids }).to_string();
        let mut headers = self.headers(jwt);
        if !batch_sessions.is_empty() {
            headers.push(("X-Batch-Sessions", batch_sessions.join(",")));
        }
        let reply = self.http.post(url, headers, body).await.map_err(CallError::Transport)?;
        parse_balances(reply.status, reply.body)
    }

    /// `POST /v1/sweeps/quote`: prices the conversion of exactly `request.source`.
    pub async fn quote(&self, jwt: &str, request: &QuoteRequest) -> Result<Quote, CallError> {
        let url = format!("{}/v1/sweeps/quote", self.base_url);
        let mut body = json!({
            "accountId": request.account_id,
            "purpose": request.purpose.as_str(),
            "source": {
                "chainId": request.source.chain_id,
                "token": request.source.token,
                "rawAmount": request.source.raw_amount.to_string(),
            },
            "destination": {
                "chainId": request.destination.chain_id,
                "token": request.destination.token,
                "address": request.destination.address,
            },
        });
        if let Some(deposit_id) = &request.deposit_id {
            body["depositId"] = json!(deposit_id);
        }
        let body = body.to_string();
        let reply =
            self.http.post(url, self.headers(jwt), body).await.map_err(CallError::Transport)?;
        parse_quote(reply.status, reply.body)
    }

    /// `POST /v1/sweeps/send`, exactly once: never retried here, because an answer that was lost
    /// must be resolved with [`AccountClient::sweep_status`] first.
    pub async fn send(
        &self,
        jwt: &str,
        quote_id: &str,
        signature: &str,
    ) -> Result<SendResult, SendError> {
        let url = format!("{}/v1/sweeps/send", self.base_url);
        let body = json!({ "quoteId": quote_id, "signature": signature }).to_string();
        match self.http.post_once(url, self.headers(jwt), body).await {
            Err(failure) => {
                Err(SendError::Unknown { error: failure.error, maybe_sent: failure.maybe_sent })
            }
            Ok(reply) => parse_send(reply.status, reply.body),
        }
    }

    /// `GET /v1/sweeps/{quoteId}`: the outcome of a send, or `None` when the quote was never
    /// executed (404 `NOT_SENT`: safe to quote again).
    pub async fn sweep_status(
        &self,
        jwt: &str,
        quote_id: &str,
    ) -> Result<Option<SendResult>, CallError> {
        let url = format!("{}/v1/sweeps/{}", self.base_url, path_segment(quote_id));
        let reply: Reply =
            self.http.get(url, self.headers(jwt)).await.map_err(CallError::Transport)?;
        parse_sweep_status(reply.status, reply.body)
    }

    /// `GET /v1/transactions`: a page of the account's transactions, newest first.
    pub async fn transactions(
        &self,
        jwt: &str,
        account_id: &str,
        page: u32,
        page_size: u32,
    ) -> Result<TransactionsPage, CallError> {
        let url = format!(
            "{}/v1/transactions?accountId={}&page={page}&pageSize={page_size}",
            self.base_url,
            path_segment(account_id)
        );
        let reply = self.http.get(url, self.headers(jwt)).await.map_err(CallError::Transport)?;
        decode("transactions", reply)
    }

    /// `GET /v1/transactions/by-token`: one token's transactions on one chain, newest first,
    /// from `page_token` on (`None`: the first page).
    pub async fn token_transactions(
        &self,
        jwt: &str,
        account_id: &str,
        chain_id: u64,
        address: &str,
        page_token: Option<&str>,
        page_size: u32,
    ) -> Result<TokenTransactionsResponse, CallError> {
        let mut url = format!(
            "{}/v1/transactions/by-token?accountId={}&chainId={chain_id}&address={}&pageSize={page_size}",
            self.base_url,
            path_segment(account_id),
            path_segment(address),
        );
        if let Some(token) = page_token {
            url.push_str("&pageToken=");
            url.push_str(&path_segment(token));
        }
        let reply = self.http.get(url, self.headers(jwt)).await.map_err(CallError::Transport)?;
        decode("token transactions", reply)
    }

    /// `GET /v1/transactions/{id}`: one transaction of the account (404 `NOT_FOUND` when it has
    /// none with that id).
    pub async fn transaction(
        &self,
        jwt: &str,
        account_id: &str,
        transaction_id: &str,
    ) -> Result<UaTransaction, CallError> {
        let url = format!(
            "{}/v1/transactions/{}?accountId={}",
            self.base_url,
            path_segment(transaction_id),
            path_segment(account_id)
        );
        let reply = self.http.get(url, self.headers(jwt)).await.map_err(CallError::Transport)?;
        decode("transaction", reply)
    }

    /// `GET /v1/receipts`: the incoming transfers whose ranges overlap `(from, to]` of the
    /// account's cumulative `received` of `token` on `chain_id`, oldest first.
    pub async fn receipts(
        &self,
        jwt: &str,
        account_id: &str,
        chain_id: u64,
        token: &str,
        from: U256,
        to: U256,
    ) -> Result<Vec<Receipt>, CallError> {
        let url = format!(
            "{}/v1/receipts?accountId={}&chainId={chain_id}&token={}&from={from}&to={to}",
            self.base_url,
            path_segment(account_id),
            path_segment(token),
        );
        let reply = self.http.get(url, self.headers(jwt)).await.map_err(CallError::Transport)?;
        parse_receipts(reply.status, reply.body)
    }
}

// The parsing of the service's answers, apart from the HTTP so that it is pure: the entry points
// of the fuzz targets (`fuzz/`), not part of the API. Each takes the HTTP status and body.

/// The answer of `POST /v1/balances`: each account's balance lines.
#[doc(hidden)]
pub fn parse_balances(
    status: u16,
    body: String,
) -> Result<HashMap<String, Vec<BalanceLine>>, CallError> {
    const WHAT: &str = "balances";
    let raw: RawBalances = decode(WHAT, Reply { status, body })?;
    let mut accounts = HashMap::with_capacity(raw.accounts.len());
    for (id, lines) in raw.accounts {
        let mut out = Vec::with_capacity(lines.balances.len());
        for line in lines.balances {
            out.push(BalanceLine {
                chain_id: line.chain_id,
                raw_amount: amount(WHAT, "rawAmount", &line.raw_amount)?,
                received: amount(WHAT, "received", &line.received)?,
                token: line.token,
                decimals: line.decimals,
                price_usd: line.price_usd,
                value_usd: line.value_usd,
            });
        }
        accounts.insert(id, out);
    }
    Ok(accounts)
}

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

/// The answer of `POST /v1/sweeps/send`: 429 and 5xx leave the outcome unknown, any other
/// non-2xx status is a refusal.
#[doc(hidden)]
pub fn parse_send(status: u16, body: String) -> Result<SendResult, SendError> {
    let reply = Reply { status, body };
    if reply.status == 429 || reply.status >= 500 {
        let e = ServiceError::from_reply(&reply);
        return Err(SendError::Unknown {
            error: Error::new(ErrorKind::Network, format!("sweep send answered {e}")),
            maybe_sent: true,
        });
    }
    match decode::<SendResult>("sweep send", reply) {
        Ok(result) => Ok(result),
        Err(CallError::Service(e)) => Err(SendError::Refused(e)),
        Err(CallError::Transport(error) | CallError::Session(error)) => {
            Err(SendError::Unknown { error, maybe_sent: true })
        }
    }
}

/// The answer of `GET /v1/sweeps/{quoteId}`: `None` for 404 `NOT_SENT`.
#[doc(hidden)]
pub fn parse_sweep_status(status: u16, body: String) -> Result<Option<SendResult>, CallError> {
    match decode::<SendResult>("sweep status", Reply { status, body }) {
        Err(CallError::Service(e)) if e.status == 404 && e.code == "NOT_SENT" => Ok(None),
        other => other.map(Some),
    }
}

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

/// Percent-encodes everything but unreserved characters (ids are opaque strings).
fn path_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transactions_tolerate_nulls_and_extra_fields() {
        let page: TransactionsPage = serde_json::from_str(
            r#"{"transactions": [{"transactionId": "0x1", "tag": "receive", "createdAt": "2026-01-01T00:00:00Z",
                "updatedAt": "2026-01-01T00:00:00Z", "status": 1, "fromChains": [8453], "toChains": [8453],
                "targetToken": {"symbol": "USDC", "chainId": 8453, "decimals": 6, "address": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
                "change": {"amount": "5", "amountInUSD": "5", "from": null, "to": "0xabc", "rawAmount": "5000000"},
                "detail": {"redPacketCount": 0}, "quoteId": null}], "page": 1, "pageSize": 10}"#,
        )
        .unwrap();
        assert_eq!(page.transactions[0].change.from, "");
        assert_eq!(page.transactions[0].target_token.symbol, "USDC");
    }

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(path_segment("q_1-a.b~"), "q_1-a.b~");
        assert_eq!(path_segment("a/b?c"), "a%2Fb%3Fc");
    }

    #[test]
    fn send_results_parse_the_protocol_shape() {
        let r: SendResult = serde_json::from_str(
            r#"{"transactionId":"0xab","quoteId":"q_1","status":"success","explorerUrl":"https://arbiscan.io/tx/0xab","deliveredRawAmount":"2440000"}"#,
        )
        .unwrap();
        assert_eq!(r.status, SendStatus::Success);
        assert_eq!(r.delivered_raw_amount.as_deref(), Some("2440000"));
    }
}
