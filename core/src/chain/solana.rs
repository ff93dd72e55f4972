//! A JSON-RPC client of a Solana node: the reads and sends depositkit needs, plus raw
//! [`request`](SolanaRpc::request).
//!
//! Reads use the `confirmed` commitment, so that a transfer confirmed by
//! [`wait_confirmed`](SolanaRpc::wait_confirmed) shows in the balances read right after.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::rpc::{JsonRpcClient, malformed, poll_until};
use super::solana_tx::{Hash, Message, Pubkey, Signature};
use crate::error::{Error, ErrorKind, Result};
use crate::services::HttpSettings;

const COMMITMENT: &str = "confirmed";

/// An SPL token account, as `getTokenAccountsByOwner` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenAccount {
    /// The token account's own address.
    pub address: Pubkey,
    /// The token's mint.
    pub mint: Pubkey,
    /// The wallet that owns the tokens.
    pub owner: Pubkey,
    /// The balance in raw units.
    pub raw_amount: u64,
    /// The mint's decimals.
    pub decimals: u8,
}

/// A transaction's status (`getSignatureStatuses`).
#[derive(Debug, Clone, PartialEq)]
pub struct SignatureStatus {
    /// The slot it was processed in.
    pub slot: u64,
    /// The error it failed with (`None`: it succeeded).
    pub err: Option<Value>,
    /// `processed`, `confirmed` or `finalized`.
    pub confirmation_status: Option<String>,
}

impl SignatureStatus {
    /// Whether the transaction reached at least `confirmed`.
    pub fn is_confirmed(&self) -> bool {
        matches!(self.confirmation_status.as_deref(), Some("confirmed" | "finalized"))
    }
}

/// A JSON-RPC client of one Solana node.
///
/// ```no_run
/// use depositkit_core::chain::solana::SolanaRpc;
/// use depositkit_core::services::HttpSettings;
/// let rpc = SolanaRpc::new("http://127.0.0.1:8899", &HttpSettings::default());
/// let blockhash = rpc.latest_blockhash()?;
/// # Ok::<(), depositkit_core::Error>(())
/// ```
#[derive(Debug)]
pub struct SolanaRpc {
    rpc: JsonRpcClient,
}

impl SolanaRpc {
    /// A client of the node at `url`.
    pub fn new(url: &str, settings: &HttpSettings) -> Self {
        SolanaRpc { rpc: JsonRpcClient::new(url, settings) }
    }

    /// The node's URL, exactly as given.
    pub fn url(&self) -> &str {
        self.rpc.url()
    }

    /// The URL as messages show it (origin only).
    pub fn display_url(&self) -> &str {
        self.rpc.display_url()
    }

    /// Any method, raw (retried on transient failures).
    ///
    /// # Errors
    /// [`ErrorKind::Rpc`] naming the method and the node's message; [`ErrorKind::Network`],
    /// [`ErrorKind::Timeout`], [`ErrorKind::Protocol`] for transport problems.
    pub fn request(&self, method: &str, params: Value) -> Result<Value> {
        self.rpc.request(method, params)
    }

    /// Any method, sent exactly once.
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request).
    pub fn request_once(&self, method: &str, params: Value) -> Result<Value> {
        self.rpc.request_once(method, params)
    }

    /// `getBalance`, in lamports.
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request).
    pub fn balance(&self, pubkey: &Pubkey) -> Result<u64> {
        let value =
            self.request("getBalance", json!([pubkey.to_string(), {"commitment": COMMITMENT}]))?;
        let lamports = context_value("getBalance", &value)?;
        lamports.as_u64().ok_or_else(|| malformed("getBalance", "a lamport count", lamports))
    }

    /// `getTokenAccountsByOwner` filtered by `mint` (`jsonParsed`).
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request); [`ErrorKind::Protocol`] for a malformed account.
    pub fn token_accounts_by_owner(
        &self,
        owner: &Pubkey,
        mint: &Pubkey,
    ) -> Result<Vec<TokenAccount>> {
        self.token_accounts(owner, json!({"mint": mint.to_string()}))
    }

    /// `getTokenAccountsByOwner` of every mint under `program` (normally
    /// [`TOKEN_PROGRAM`](super::solana_tx::TOKEN_PROGRAM)).
    ///
    /// # Errors
    /// As [`token_accounts_by_owner`](SolanaRpc::token_accounts_by_owner).
    pub fn token_accounts_by_program(
        &self,
        owner: &Pubkey,
        program: &Pubkey,
    ) -> Result<Vec<TokenAccount>> {
        self.token_accounts(owner, json!({"programId": program.to_string()}))
    }

    fn token_accounts(&self, owner: &Pubkey, filter: Value) -> Result<Vec<TokenAccount>> {
        const METHOD: &str = "getTokenAccountsByOwner";
        let value = self.request(
            METHOD,
            json!([owner.to_string(), filter, {"encoding": "jsonParsed", "commitment": COMMITMENT}]),
        )?;
        let items = context_value(METHOD, &value)?;
        let items = items.as_array().ok_or_else(|| malformed(METHOD, "an array", items))?;
        items.iter().map(|item| parse_token_account(METHOD, item)).collect()
    }

    /// Whether an account exists at `pubkey` (`getAccountInfo` answers something).
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request).
    pub fn account_exists(&self, pubkey: &Pubkey) -> Result<bool> {
        let value = self.request(
            "getAccountInfo",
            json!([pubkey.to_string(), {"encoding": "base64", "commitment": COMMITMENT}]),
        )?;
        Ok(!context_value("getAccountInfo", &value)?.is_null())
    }

    /// `getLatestBlockhash`: a blockhash to build a transaction with.
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request).
    pub fn latest_blockhash(&self) -> Result<Hash> {
        self.latest_blockhash_with_height().map(|(hash, _)| hash)
    }

    /// `getLatestBlockhash`: the blockhash and the last block height at which a transaction
    /// built on it is still accepted.
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request).
    pub fn latest_blockhash_with_height(&self) -> Result<(Hash, u64)> {
        const METHOD: &str = "getLatestBlockhash";
        let value = self.request(METHOD, json!([{"commitment": COMMITMENT}]))?;
        let inner = context_value(METHOD, &value)?;
        let hash = inner
            .get("blockhash")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Hash>().ok())
            .ok_or_else(|| malformed(METHOD, "a blockhash", inner))?;
        let height = inner.get("lastValidBlockHeight").and_then(Value::as_u64).unwrap_or(0);
        Ok((hash, height))
    }

    /// `getMinimumBalanceForRentExemption(len)`, in lamports.
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request).
    pub fn minimum_balance_for_rent_exemption(&self, len: usize) -> Result<u64> {
        const METHOD: &str = "getMinimumBalanceForRentExemption";
        let value = self.request(METHOD, json!([len]))?;
        value.as_u64().ok_or_else(|| malformed(METHOD, "a lamport count", &value))
    }

    /// `getFeeForMessage`: the fee the network charges for `message`, in lamports.
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request); [`ErrorKind::Rpc`] when the node cannot price it
    /// (its blockhash expired: the answer is `null`).
    pub fn fee_for_message(&self, message: &Message) -> Result<u64> {
        const METHOD: &str = "getFeeForMessage";
        let encoded = base64::engine::general_purpose::STANDARD.encode(message.serialize());
        let value = self.request(METHOD, json!([encoded, {"commitment": COMMITMENT}]))?;
        let fee = context_value(METHOD, &value)?;
        if fee.is_null() {
            return Err(Error::new(
                ErrorKind::Rpc,
                format!(
                    "{METHOD} failed: the node could not price the message (expired blockhash?)"
                ),
            ));
        }
        fee.as_u64().ok_or_else(|| malformed(METHOD, "a lamport count", fee))
    }

    /// `sendTransaction` of signed wire bytes (base64), sent once: the transaction's signature.
    ///
    /// # Errors
    /// As [`request_once`](SolanaRpc::request_once); a transaction that fails preflight is an
    /// [`ErrorKind::Rpc`] error carrying the node's message.
    pub fn send_transaction(&self, transaction: &[u8]) -> Result<Signature> {
        const METHOD: &str = "sendTransaction";
        let encoded = base64::engine::general_purpose::STANDARD.encode(transaction);
        let value = self.request_once(
            METHOD,
            json!([encoded, {"encoding": "base64", "preflightCommitment": COMMITMENT}]),
        )?;
        parse_signature(METHOD, &value)
    }

    /// `getSignatureStatuses` of one signature (searching history): `None` while the node
    /// does not know it.
    ///
    /// # Errors
    /// As [`request`](SolanaRpc::request).
    pub fn signature_status(&self, signature: &Signature) -> Result<Option<SignatureStatus>> {
        const METHOD: &str = "getSignatureStatuses";
        let value = self.request(
            METHOD,
            json!([[signature.to_string()], {"searchTransactionHistory": true}]),
        )?;
        let list = context_value(METHOD, &value)?;
        let first = list
            .as_array()
            .and_then(|a| a.first())
            .ok_or_else(|| malformed(METHOD, "an array of one status", list))?;
        if first.is_null() {
            return Ok(None);
        }
        Ok(Some(SignatureStatus {
            slot: first.get("slot").and_then(Value::as_u64).unwrap_or(0),
            err: first.get("err").filter(|e| !e.is_null()).cloned(),
            confirmation_status: first
                .get("confirmationStatus")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }))
    }

    /// Polls [`signature_status`](SolanaRpc::signature_status) until the transaction is
    /// confirmed or failed, or `timeout` passes. The returned status's `err` says whether it
    /// failed.
    ///
    /// # Errors
    /// [`ErrorKind::Timeout`] naming the signature when it was not confirmed in time.
    pub fn wait_confirmed(
        &self,
        signature: &Signature,
        timeout: Duration,
    ) -> Result<SignatureStatus> {
        poll_until(
            Instant::now() + timeout,
            || {
                let status = self.signature_status(signature)?;
                Ok(status.filter(|s| s.err.is_some() || s.is_confirmed()))
            },
            || {
                Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "transaction {signature} was not confirmed within {}",
                        crate::describe::duration(timeout)
                    ),
                )
            },
        )
    }

    /// `requestAirdrop` of `lamports` to `pubkey` (test validators only): the signature.
    ///
    /// # Errors
    /// As [`request_once`](SolanaRpc::request_once).
    pub fn request_airdrop(&self, pubkey: &Pubkey, lamports: u64) -> Result<Signature> {
        const METHOD: &str = "requestAirdrop";
        let value = self.request_once(METHOD, json!([pubkey.to_string(), lamports]))?;
        parse_signature(METHOD, &value)
    }
}

/// The `value` of an RPC response with context (`{"context": …, "value": …}`).
pub(crate) fn context_value<'a>(method: &str, answer: &'a Value) -> Result<&'a Value> {
    answer.get("value").ok_or_else(|| malformed(method, "{\"context\", \"value\"}", answer))
}

pub(crate) fn parse_signature(method: &str, value: &Value) -> Result<Signature> {
    value
        .as_str()
        .and_then(|t| t.parse::<Signature>().ok())
        .ok_or_else(|| malformed(method, "a signature", value))
}

pub(crate) fn parse_token_account(method: &str, item: &Value) -> Result<TokenAccount> {
    let bad = || malformed(method, "a jsonParsed token account", item);
    let key = |v: Option<&Value>| -> Result<Pubkey> {
        v.and_then(Value::as_str).and_then(|t| t.parse::<Pubkey>().ok()).ok_or_else(bad)
    };
    let info = item.pointer("/account/data/parsed/info").ok_or_else(bad)?;
    let amount = info.pointer("/tokenAmount/amount").and_then(Value::as_str).ok_or_else(bad)?;
    let decimals = info
        .pointer("/tokenAmount/decimals")
        .and_then(Value::as_u64)
        .and_then(|d| u8::try_from(d).ok())
        .ok_or_else(bad)?;
    Ok(TokenAccount {
        address: key(item.get("pubkey"))?,
        mint: key(info.get("mint"))?,
        owner: key(info.get("owner"))?,
        // The canonical decimal a node sends: no sign, no leading zeros (what is read is
        // exactly the string sent).
        raw_amount: amount
            .parse::<u64>()
            .ok()
            .filter(|raw| raw.to_string() == amount)
            .ok_or_else(bad)?,
        decimals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_accounts_parse() {
        let item = json!({
            "pubkey": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
            "account": {"data": {"program": "spl-token", "parsed": {"type": "account", "info": {
                "mint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
                "owner": "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
                "tokenAmount": {"amount": "25000000", "decimals": 6, "uiAmount": 25.0}}}}}
        });
        let account = parse_token_account("m", &item).unwrap();
        assert_eq!(account.raw_amount, 25_000_000);
        assert_eq!(account.decimals, 6);
        assert_eq!(account.mint.to_string(), "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
        let mut bad = item;
        bad["account"]["data"]["parsed"]["info"]["tokenAmount"]["amount"] = json!("-1");
        assert_eq!(parse_token_account("m", &bad).unwrap_err().kind(), ErrorKind::Protocol);
    }

    #[test]
    fn statuses() {
        let s =
            SignatureStatus { slot: 1, err: None, confirmation_status: Some("finalized".into()) };
        assert!(s.is_confirmed());
        let s = SignatureStatus { confirmation_status: Some("processed".into()), ..s };
        assert!(!s.is_confirmed());
    }
}
