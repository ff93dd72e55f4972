//! Particle's Universal Account service, spoken as the published SDK
//! `@particle-network/universal-account-sdk@2.0.3` speaks it (`particle-ua-wire.md`, the
//! recording of its wire protocol; `docs/particle.md`).
//!
//! - [`ParticleClient`] (here): the calls, one JSON-RPC request per POST over the crate's HTTP
//!   (`crate::http`); reads retried on 429, 5xx, lost connections and JSON-RPC rate limits,
//!   sends never ([`ParticleClient::send_once`], [`ParticleClient::send`]);
//! - `config.rs`: endpoint (configuration, `DEPOSITKIT_PARTICLE_RPC_URL`, the SDK's
//!   `UNIVERSALX_RPC_URL`, `DEPOSITKIT_PARTICLE_ENV`, production), credentials (never shown);
//! - `wire.rs`: the envelope, the answers' `error`/`result`, and [`ErrorClass`];
//! - `requests.rs`: the parameters, in the SDK's shapes and key order;
//! - `answers.rs`: the results, typed;
//! - `amounts.rs`: 18-decimal wire amounts and each token's real decimals;
//! - `assets.rs`: the chains, primary tokens and `assetId`s;
//! - `root.rs`: the signing root and the per-op signatures, as the SDK computes them;
//! - `backend/`: [`ParticleBackend`], the deposit engine's
//!   [`AccountBackend`](super::AccountBackend) over this client and a
//!   [`SignerSource`](crate::signer::SignerSource).

pub mod amounts;
pub mod answers;
pub mod assets;
mod backend;
pub mod config;
pub mod requests;
pub mod root;
pub mod wire;

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::{Headers, Http, HttpSettings};
use crate::error::{Error, ErrorKind, Result};
use crate::signer::Signature65;

pub use answers::{
    AccountOptions, ChainHolding, CreatedTransaction, FeeTotals, PrimaryAsset, PrimaryAssets,
    SmartAccount, TransactionRecord, TransactionState,
};
pub use assets::TokenRef;
pub use backend::ParticleBackend;
pub use config::{Credentials, ParticleConfig, ParticleEndpoint};
pub use requests::{EvmCall, ExpectToken, TransferRequest, UniversalRequest};
pub use root::{SigningRoot, UserOpRef};
pub use wire::{ErrorClass, methods};

use super::backend::SendFailure;
use requests::{
    OpSignature, Page, PageToken, Senders, Signatures, TransferParams, UniversalParams,
};
use wire::Answer;

/// How many times [`ParticleClient::send`] sends a transaction the service reported never
/// executed, before it gives up.
const SEND_ROUNDS: u32 = 3;

/// A signature authorizing an EIP-7702 delegation, attached to the op whose `userOpHash` it
/// names (`sendTransaction`'s `authorizations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eip7702Authorization {
    /// The op it belongs to (compared exactly, as the SDK compares).
    pub user_op_hash: String,
    /// The signature, `0x` hex, sent as given.
    pub signature: String,
}

/// The service's answer to a send (passed through by the SDK; demos read `transactionId`).
#[derive(Debug, Clone, PartialEq)]
pub struct SendAnswer {
    /// The transaction's id (the answer's, else the one sent).
    pub transaction_id: String,
    /// The answer as sent.
    pub result: Value,
}

/// How [`ParticleClient::send`] ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SendOutcome {
    /// The service took the send.
    Accepted(SendAnswer),
    /// The answer was lost; the service's record of the transaction says where it is.
    Found(TransactionRecord),
}

/// A client of Particle's Universal Account service.
///
/// Cheap to clone (the clones share one connection pool and configuration) and safe to use
/// from many tasks at once. Its methods are `async` and must be awaited on the depositkit
/// runtime (`crate::runtime`): the HTTP runs on its blocking pool. `Debug` shows the URL and
/// the account name and version, never the credentials.
#[derive(Clone)]
pub struct ParticleClient {
    inner: Arc<Inner>,
}

struct Inner {
    url: String,
    credentials: Credentials,
    config: ParticleConfig,
    http: Http,
}

impl fmt::Debug for ParticleClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParticleClient")
            .field("url", &self.inner.url)
            .field("account_name", &self.inner.config.account_name)
            .field("account_version", &self.inner.config.account_version)
            .field("credentials", &"<redacted>")
            .finish()
    }
}

impl ParticleClient {
    /// A client as `config` says, its unset fields read from the environment
    /// (`docs/particle.md` §2).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] naming the setting that is missing or wrong.
    pub fn new(config: ParticleConfig) -> Result<ParticleClient> {
        Ok(ParticleClient::from_resolved(config.resolve()?))
    }

    fn from_resolved(resolved: config::Resolved) -> ParticleClient {
        let config::Resolved { url, credentials, config } = resolved;
        let http = Http::new(&HttpSettings {
            timeout: config.timeout,
            retry: config.retry,
            user_agent: config.user_agent.clone(),
        });
        ParticleClient { inner: Arc::new(Inner { url, credentials, config, http }) }
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The configuration in use (endpoint resolved).
    pub fn config(&self) -> &ParticleConfig {
        &self.inner.config
    }

    /// The account object of the account owned by `owner_address`, with the configured name
    /// and version.
    pub fn account_options(&self, owner_address: &str) -> AccountOptions {
        AccountOptions::new(
            owner_address,
            &self.inner.config.account_name,
            &self.inner.config.account_version,
        )
    }

    fn headers() -> Headers {
        vec![
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/plain, */*".to_owned()),
        ]
    }

    fn body<P: Serialize>(&self, method: &str, params: &P) -> Result<String> {
        let (id, device_id) = wire::fresh_ids();
        wire::body(method, params, &self.inner.credentials, id, &device_id)
    }

    /// A read: retried on 429, 5xx and lost connections (`crate::http`) and on a JSON-RPC
    /// rate-limit error, with the configured backoff.
    async fn read<P: Serialize>(&self, method: &str, params: &P) -> Result<Value> {
        let credentials = &self.inner.credentials;
        let retry = self.inner.config.retry;
        let mut attempt = 0;
        loop {
            let body = self.body(method, params)?;
            let reply = self
                .inner
                .http
                .post(self.inner.url.clone(), Self::headers(), body)
                .await
                .map_err(|e| wire::scrubbed(e, credentials))?;
            match wire::read(method, &reply, credentials)? {
                Answer::Result(value) => return Ok(value),
                Answer::Failed(e)
                    if ErrorClass::of(&e) == Some(ErrorClass::RateLimited)
                        && attempt < retry.max_retries =>
                {
                    tokio::time::sleep(retry.delay(attempt, None)).await;
                    attempt += 1;
                }
                Answer::Failed(e) => return Err(e),
            }
        }
    }

    /// `universal_getUniversalAccount`: the deposit addresses of `account`.
    ///
    /// # Errors
    /// [`ErrorKind::UniversalAccount`] for an empty answer or invalid addresses; the class's kind
    /// for a service error (`docs/particle.md` §3).
    pub async fn smart_account(&self, account: &AccountOptions) -> Result<SmartAccount> {
        let result = self.read(methods::GET_UNIVERSAL_ACCOUNT, &(account,)).await?;
        answers::parse_smart_account(&result)
    }

    /// The account of `owner_address` with its addresses filled in, as the SDK's
    /// `getSmartAccountOptions` leaves its account object.
    ///
    /// # Errors
    /// As [`ParticleClient::smart_account`].
    pub async fn open(&self, owner_address: &str) -> Result<AccountOptions> {
        let mut account = self.account_options(owner_address);
        let addresses = self.smart_account(&account).await?;
        account.smart_account_address = Some(addresses.evm_address);
        account.solana_smart_account_address = Some(addresses.solana_address);
        Ok(account)
    }

    /// `universal_getPrimaryAssets`: what `account` holds.
    ///
    /// # Errors
    /// [`ErrorKind::Protocol`] for a malformed answer; the class's kind for a service error.
    pub async fn primary_assets(&self, account: &AccountOptions) -> Result<PrimaryAssets> {
        let result = self.read(methods::GET_PRIMARY_ASSETS, &(account,)).await?;
        answers::parse_primary_assets(&result)
    }

    /// What each of `accounts` holds, in order. The service has no batch call (the SDK sends
    /// one request per account), so at most `balance_concurrency` requests are in flight.
    pub async fn primary_assets_many(
        &self,
        accounts: &[AccountOptions],
    ) -> Vec<Result<PrimaryAssets>> {
        let permits = Arc::new(tokio::sync::Semaphore::new(self.inner.config.balance_concurrency));
        let tasks: Vec<_> = accounts
            .iter()
            .map(|account| {
                let (client, account, permits) =
                    (self.clone(), account.clone(), Arc::clone(&permits));
                tokio::spawn(async move {
                    let _permit = permits.acquire_owned().await;
                    client.primary_assets(&account).await
                })
            })
            .collect();
        let mut out = Vec::with_capacity(tasks.len());
        for task in tasks {
            out.push(task.await.unwrap_or_else(|e| {
                Err(Error::new(ErrorKind::Internal, format!("a balance request task failed: {e}")))
            }));
        }
        out
    }

    /// `universal_createTransaction` of a transfer (`createTransferTransaction`).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] for a chain a universal account does not serve;
    /// [`ErrorKind::Protocol`] for an answer without a transaction id or user operations; the
    /// class's kind for a service error (insufficient funds: [`ErrorClass::InsufficientFunds`]).
    pub async fn create_transfer(
        &self,
        account: &AccountOptions,
        request: &TransferRequest,
    ) -> Result<CreatedTransaction> {
        let params = TransferParams::new(request, &self.inner.config.use_primary_tokens)?;
        let result = self.read(methods::CREATE_TRANSACTION, &(account, params)).await?;
        answers::parse_created(&result, wire::now_ms())
    }

    /// `universal_createTransaction` of a universal transaction (`createUniversalTransaction`).
    ///
    /// # Errors
    /// As [`ParticleClient::create_transfer`]; [`ErrorKind::InvalidArgument`] when it has neither
    /// expected tokens nor calls (the SDK refuses it too).
    pub async fn create_universal(
        &self,
        account: &AccountOptions,
        request: &UniversalRequest,
    ) -> Result<CreatedTransaction> {
        if request.expect_tokens.is_empty() && request.transactions.is_empty() {
            return Err(Error::invalid_argument("Transactions and expectTokens cannot be empty"));
        }
        assets::check_chain(request.chain_id)?;
        let config = &self.inner.config;
        let params = UniversalParams::new(request, &config.use_primary_tokens, config.slippage_bps);
        let result = self.read(methods::CREATE_TRANSACTION, &(account, params)).await?;
        answers::parse_created(&result, wire::now_ms())
    }

    /// `universal_sendTransaction` of `transaction` with the owner's `signature` of its root,
    /// **exactly once**: a send whose answer is lost is not repeated here ([`ParticleClient::send`]
    /// looks it up first).
    ///
    /// A JSON-RPC refusal other than a service failure is [`SendFailure::Refused`]; a service
    /// failure, 429, 5xx, a timeout or an unreadable answer is [`SendFailure::Unknown`].
    pub async fn send_once(
        &self,
        transaction: &CreatedTransaction,
        signature: &Signature65,
        authorizations: &[Eip7702Authorization],
    ) -> Result<SendAnswer, SendFailure> {
        const METHOD: &str = methods::SEND_TRANSACTION;
        let credentials = &self.inner.credentials;
        let params =
            (&transaction.transaction_id, signatures(transaction, signature, authorizations));
        let body = self
            .body(METHOD, &params)
            .map_err(|error| SendFailure::Unknown { error, maybe_sent: false })?;
        let reply =
            match self.inner.http.post_once(self.inner.url.clone(), Self::headers(), body).await {
                Ok(reply) => reply,
                Err(failure) => {
                    return Err(SendFailure::Unknown {
                        error: wire::scrubbed(failure.error, credentials),
                        maybe_sent: failure.maybe_sent,
                    });
                }
            };
        let unknown = |error: Error| SendFailure::Unknown { error, maybe_sent: true };
        if reply.status == 429 || reply.status >= 500 {
            return Err(unknown(Error::new(
                ErrorKind::Network,
                format!(
                    "{METHOD}: the service answered HTTP {}; the send may have happened",
                    reply.status
                ),
            )));
        }
        match wire::read(METHOD, &reply, credentials).map_err(unknown)? {
            Answer::Result(result) => Ok(SendAnswer {
                transaction_id: result
                    .get("transactionId")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .unwrap_or(&transaction.transaction_id)
                    .to_owned(),
                result,
            }),
            Answer::Failed(e) => match ErrorClass::of(&e) {
                Some(class) if class.is_definite_refusal() => Err(SendFailure::Refused(e)),
                None if !(200..300).contains(&reply.status) => Err(SendFailure::Refused(e)),
                _ => Err(unknown(e)),
            },
        }
    }

    /// Sends `transaction` and never twice blindly: a send whose answer is lost is looked up by
    /// its transaction id; only a transaction the service still reports as never sent (status
    /// 0, `INITIALIZING`) is sent again — the same transaction with the same signature — at
    /// most three times in all, after the configured backoff.
    ///
    /// # Errors
    /// The refusal; or, when the outcome cannot be learned, an error saying so (the transaction
    /// was then not sent again).
    pub async fn send(
        &self,
        transaction: &CreatedTransaction,
        signature: &Signature65,
        authorizations: &[Eip7702Authorization],
    ) -> Result<SendOutcome> {
        let id = &transaction.transaction_id;
        let mut last = String::new();
        for round in 0..SEND_ROUNDS {
            if round > 0 {
                tokio::time::sleep(self.inner.config.retry.delay(round - 1, None)).await;
            }
            match self.send_once(transaction, signature, authorizations).await {
                Ok(answer) => return Ok(SendOutcome::Accepted(answer)),
                Err(SendFailure::Refused(e)) => return Err(e),
                Err(SendFailure::Unknown { error, maybe_sent: false }) => {
                    last = error.message().to_owned()
                }
                Err(SendFailure::Unknown { error, maybe_sent: true }) => {
                    match self.transaction(id).await {
                        Ok(record) if record.state() == Some(TransactionState::Created) => {
                            last = error.message().to_owned();
                        }
                        Ok(record) => return Ok(SendOutcome::Found(record)),
                        Err(lookup) => {
                            return Err(Error::new(
                                error.kind(),
                                format!(
                                    "the outcome of sending transaction {id} is unknown ({}) and it could not be looked up ({}); it was not sent again",
                                    error.message(),
                                    lookup.message()
                                ),
                            ));
                        }
                    }
                }
            }
        }
        Err(Error::new(
            ErrorKind::Network,
            format!(
                "sending transaction {id} failed {SEND_ROUNDS} times while it stayed unsent: {last}"
            ),
        ))
    }

    /// `universal_getTransaction`: the service's record of transaction `id`.
    ///
    /// # Errors
    /// The class's kind for a service error; [`ErrorKind::Protocol`] for a malformed answer.
    pub async fn transaction(&self, id: &str) -> Result<TransactionRecord> {
        let result = self.read(methods::GET_TRANSACTION, &(id,)).await?;
        answers::parse_transaction(&result)
    }

    /// `universal_getTransactionsV2`: page `page` (from 1) of `account`'s transactions,
    /// `limit` per page, with `tag` if given.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when `account` has no addresses yet
    /// ([`ParticleClient::open`] fills them); as [`ParticleClient::transaction`].
    pub async fn transactions(
        &self,
        account: &AccountOptions,
        page: u32,
        limit: u32,
        tag: Option<&str>,
    ) -> Result<crate::services::TransactionsResponse> {
        let (sender, solana_sender) = senders(account)?;
        let params = (Senders { sender, solana_sender, tag }, Page { page, limit });
        let result = self.read(methods::GET_TRANSACTIONS, &params).await?;
        answers::parse_transactions(&result, page, limit)
    }

    /// `universal_getTokenTransactions`: `token`'s transactions in `account`, from
    /// `page_token` on.
    ///
    /// # Errors
    /// As [`ParticleClient::transactions`]; [`ErrorKind::Configuration`] for a chain a
    /// universal account does not serve.
    pub async fn token_transactions(
        &self,
        account: &AccountOptions,
        token: &TokenRef,
        page_token: Option<&str>,
    ) -> Result<crate::services::TokenTransactionsResponse> {
        let (sender, solana_sender) = senders(account)?;
        let page_token = page_token.filter(|t| !t.is_empty());
        let params = (
            token.asset_id()?,
            Senders { sender, solana_sender, tag: None },
            PageToken { page_token },
        );
        let result = self.read(methods::GET_TOKEN_TRANSACTIONS, &params).await?;
        answers::parse_token_transactions(&result)
    }
}

/// The signatures of `sendTransaction`: each op's blob, with the EIP-7702 authorization whose
/// `userOpHash` equals the op's (EVM ops only).
fn signatures(
    transaction: &CreatedTransaction,
    signature: &Signature65,
    authorizations: &[Eip7702Authorization],
) -> Signatures {
    let signing = &transaction.signing;
    let blobs = signing.op_signatures(signature);
    let signatures = signing
        .user_ops
        .iter()
        .zip(blobs)
        .map(|(op, blob)| {
            let user_op_hash = op.user_op_hash.to_string();
            let eip7702_auth_signature = if op.is_solana() {
                None
            } else {
                authorizations
                    .iter()
                    .find(|a| a.user_op_hash == user_op_hash)
                    .map(|a| a.signature.clone())
            };
            OpSignature { user_op_hash, signature: blob.to_string(), eip7702_auth_signature }
        })
        .collect();
    Signatures { signatures }
}

fn senders(account: &AccountOptions) -> Result<(&str, &str)> {
    match (&account.smart_account_address, &account.solana_smart_account_address) {
        (Some(evm), Some(solana)) => Ok((evm, solana)),
        _ => Err(Error::configuration(
            "the account's addresses are not known yet: open the account first",
        )),
    }
}

#[cfg(test)]
mod tests;
