//! The universal-account service (`docs/protocol.md` §3): accounts, balances, sweep quotes,
//! sends, sweep status and transactions. Every call carries the session's JWT as a bearer token
//! and, when the host set its own `uaProjectId`, the `X-UA-Project-Id` header.
//!
//! The client is here; the answers' types and their parsing (pure, the fuzz targets' entry
//! points) are in one file per part of the protocol: `balances.rs` (accounts and balances),
//! `quote.rs`, `send.rs` (sends and sweep status), `receipts.rs`, `transactions.rs`.

mod balances;
mod quote;
mod receipts;
mod send;
mod transactions;

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::json;

use super::{CallError, Headers, Http, HttpSettings, bearer, decode};
use crate::error::{Error, ErrorKind};
use crate::http::Reply;
use crate::units::{U256, parse_raw_amount};

pub use balances::{AccountInfo, BalanceLine, parse_balances};
pub use quote::{
    Quote, QuoteDestination, QuoteFees, QuotePurpose, QuoteRequest, QuoteSource, parse_quote,
};
pub use receipts::{Receipt, parse_receipts};
pub use send::{SendError, SendResult, SendStatus, parse_send, parse_sweep_status};
pub use transactions::{
    TokenTransactionsResponse, TransactionsPage, TransactionsResponse, UATransaction, UaChange,
    UaDetail, UaTargetToken, UaTransaction,
};

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

/// A string that a service may send as `null` (read as empty).
fn lenient_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
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
mod tests;
