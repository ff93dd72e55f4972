//! The one interface the deposit engine needs of a universal-account backend, so that the same
//! engine runs over devnet's protocol (`docs/protocol.md`: [`ProtocolBackend`]) and over
//! Particle's Universal Account JSON-RPC (`docs/particle.md`:
//! [`ParticleBackend`](super::particle::ParticleBackend)).
//!
//! What the engine does with an owner's account, and nothing else: open it (its deposit
//! addresses), read balances (of many accounts at once where the backend allows), quote one
//! transfer, sign it, send it **once**, ask what became of a send, and read the history. A send
//! without a definite answer is never repeated by a backend: the engine asks
//! [`AccountBackend::send_status`] first, and sends the same prepared transfer again only when
//! the answer is "never executed" (`Ok(None)`).
//!
//! The methods return boxed futures so that the engine can hold any backend as
//! `Arc<dyn AccountBackend>`, chosen by configuration at run time; they must be awaited on the
//! depositkit runtime (they do their HTTP on its blocking pool).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    AccountClient, BalanceLine, CallError, Quote, QuoteRequest, SendError, SendResult,
    ServiceError, SessionManager, SignerClient, TokenTransactionsResponse, TransactionsResponse,
    UaTransaction, with_session,
};
use crate::error::{Error, ErrorKind, Result};
use crate::units::U256;

/// A boxed, `Send` future borrowing the backend.
pub type BackendFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An owner's universal account at a backend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendAccount {
    /// The backend's id of the account (devnet: `acc_…`; Particle: the signer's address).
    pub account_id: String,
    /// The depositkit owner the account was opened for.
    pub owner: String,
    /// The address that owns the account and signs for it (the intermediary wallet).
    pub signer_address: String,
    /// The EVM deposit address.
    pub evm_address: String,
    /// The Solana deposit address.
    pub solana_address: String,
}

/// One balance line of an account.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountBalance {
    /// Chain id.
    pub chain_id: u64,
    /// Token symbol (`"USDC"`); unknown symbols are kept so the caller can skip them.
    pub token: String,
    /// Decimals of `raw_amount` and `received`: the token's real decimals.
    pub decimals: u32,
    /// What the account holds now, in smallest units.
    pub raw_amount: U256,
    /// The cumulative total ever deposited, when the backend keeps one (devnet does; Particle
    /// does not: deposits are then the increases of `raw_amount` between polls).
    pub received: Option<U256>,
    /// USD price of one whole token (0 when unknown).
    pub price_usd: f64,
    /// USD value of `raw_amount`.
    pub value_usd: f64,
}

impl From<BalanceLine> for AccountBalance {
    fn from(line: BalanceLine) -> Self {
        AccountBalance {
            chain_id: line.chain_id,
            token: line.token,
            decimals: line.decimals,
            raw_amount: line.raw_amount,
            received: Some(line.received),
            price_usd: line.price_usd,
            value_usd: line.value_usd,
        }
    }
}

/// A quoted transfer, ready to sign and send: the quote (its id, root hash, amounts, fees) and
/// what else the backend needs to send it — also after a restart, so the engine stores it with
/// the quote.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedTransfer {
    /// The quote: `quote_id` is the backend's id of the transfer (Particle: the transaction
    /// id), `root_hash` what the owner signs.
    pub quote: Quote,
    /// The backend's own data (Particle: the user operations and the signing window; devnet:
    /// null).
    pub backend: Value,
}

/// Why a send has no definite answer, or which definite refusal it got.
#[derive(Debug)]
pub enum SendFailure {
    /// Refused: certainly not executed, no money moved.
    Refused(Error),
    /// No definite answer. `maybe_sent` is `false` only when the request certainly never
    /// reached the service; otherwise ask [`AccountBackend::send_status`] before anything is
    /// sent again.
    Unknown {
        /// What happened.
        error: Error,
        /// Whether the service may have received the request.
        maybe_sent: bool,
    },
}

impl SendFailure {
    /// The error, whichever kind of failure.
    pub fn error(&self) -> &Error {
        match self {
            SendFailure::Refused(error) | SendFailure::Unknown { error, .. } => error,
        }
    }
}

/// The code of a quote's refusal that is the engine's to act on: the deposit does not cover the
/// fees of moving it (devnet's `422 BELOW_MINIMUM`; Particle's backend gives the same code when
/// its probe shows the fees take it all).
pub const BELOW_MINIMUM: &str = "BELOW_MINIMUM";

/// The service's refusal carried by `error` (in its chain of causes), when there is one: what
/// a backend keeps of a refusal for the engine to read by code ([`BELOW_MINIMUM`], …).
pub fn service_error_of(error: &Error) -> Option<&ServiceError> {
    let mut cause = std::error::Error::source(error);
    while let Some(current) = cause {
        if let Some(refusal) = current.downcast_ref::<ServiceError>() {
            return Some(refusal);
        }
        cause = current.source();
    }
    None
}

/// What the deposit engine needs of a universal-account backend (see the module's docs).
pub trait AccountBackend: Send + Sync + fmt::Debug {
    /// `"devnet"` or `"particle"`.
    fn name(&self) -> &'static str;

    /// Opens (idempotently) the universal account of the depositkit owner `owner`: its
    /// signer and deposit addresses.
    fn open_account<'a>(&'a self, owner: &'a str) -> BackendFuture<'a, Result<BackendAccount>>;

    /// The balance lines of each of `accounts`, in order: one request for all where the
    /// backend allows, else a bounded number at once.
    fn balances<'a>(
        &'a self,
        accounts: &'a [BackendAccount],
    ) -> BackendFuture<'a, Vec<Result<Vec<AccountBalance>>>>;

    /// A quote of exactly `request.source` to `request.destination` (the request's
    /// `account_id` is ignored: `account` is the one).
    fn quote<'a>(
        &'a self,
        account: &'a BackendAccount,
        request: &'a QuoteRequest,
    ) -> BackendFuture<'a, Result<PreparedTransfer>>;

    /// The account owner's signature of `transfer`'s root hash: `0x` + 65 bytes hex.
    fn sign<'a>(
        &'a self,
        account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
    ) -> BackendFuture<'a, Result<String>>;

    /// Sends `transfer` with `signature` exactly once: never retried inside.
    fn send_once<'a>(
        &'a self,
        account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
        signature: &'a str,
    ) -> BackendFuture<'a, Result<SendResult, SendFailure>>;

    /// What became of a sent `transfer`; `Ok(None)` when it was never executed (sending the
    /// same transfer again is safe).
    fn send_status<'a>(
        &'a self,
        account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
    ) -> BackendFuture<'a, Result<Option<SendResult>>>;

    /// A page (from 1) of the account's transactions, newest first.
    fn transactions<'a>(
        &'a self,
        account: &'a BackendAccount,
        page: u32,
        page_size: u32,
    ) -> BackendFuture<'a, Result<TransactionsResponse>>;

    /// One token's transactions on one chain, from `page_token` on.
    fn token_transactions<'a>(
        &'a self,
        account: &'a BackendAccount,
        chain_id: u64,
        token_address: &'a str,
        page_token: Option<&'a str>,
        page_size: u32,
    ) -> BackendFuture<'a, Result<TokenTransactionsResponse>>;

    /// One transaction of the account.
    fn transaction<'a>(
        &'a self,
        account: &'a BackendAccount,
        transaction_id: &'a str,
    ) -> BackendFuture<'a, Result<UaTransaction>>;
}

/// The services of `docs/protocol.md` (devnet's) as an [`AccountBackend`]: one client's session,
/// signer and account service, as the engine holds them today. Balances of several accounts go
/// in one request when they share this session; the process-wide poller keeps batching the
/// accounts of many sessions (`X-Batch-Sessions`) on its own.
#[derive(Debug, Clone)]
pub struct ProtocolBackend {
    session: Arc<SessionManager>,
    signer: Arc<SignerClient>,
    account: Arc<AccountClient>,
}

impl ProtocolBackend {
    /// The backend of one owner's session.
    pub fn new(
        session: Arc<SessionManager>,
        signer: Arc<SignerClient>,
        account: Arc<AccountClient>,
    ) -> ProtocolBackend {
        ProtocolBackend { session, signer, account }
    }
}

fn call_error(what: &'static str, kind: ErrorKind) -> impl FnOnce(CallError) -> Error {
    move |e| e.into_error(kind, what)
}

impl AccountBackend for ProtocolBackend {
    fn name(&self) -> &'static str {
        "devnet"
    }

    fn open_account<'a>(&'a self, owner: &'a str) -> BackendFuture<'a, Result<BackendAccount>> {
        Box::pin(async move {
            let wallet =
                with_session(&self.session, |jwt| async move { self.signer.wallet(&jwt).await })
                    .await
                    .map_err(call_error(
                        "Fetching the intermediary wallet",
                        ErrorKind::Authentication,
                    ))?;
            let info = with_session(&self.session, |jwt| {
                let wallet = wallet.clone();
                async move { self.account.init_account(&jwt, &wallet).await }
            })
            .await
            .map_err(call_error(
                "Failed to initialize Universal Account",
                ErrorKind::UniversalAccount,
            ))?;
            Ok(BackendAccount {
                account_id: info.account_id,
                owner: owner.to_owned(),
                signer_address: wallet,
                evm_address: info.evm_address,
                solana_address: info.solana_address,
            })
        })
    }

    fn balances<'a>(
        &'a self,
        accounts: &'a [BackendAccount],
    ) -> BackendFuture<'a, Vec<Result<Vec<AccountBalance>>>> {
        Box::pin(async move {
            let ids: Vec<&str> = accounts.iter().map(|a| a.account_id.as_str()).collect();
            let answer = with_session(&self.session, |jwt| {
                let ids = &ids;
                async move { self.account.balances(&jwt, ids, &[]).await }
            })
            .await;
            match answer {
                Ok(mut lines) => accounts
                    .iter()
                    .map(|a| {
                        let lines = lines.remove(&a.account_id).unwrap_or_default();
                        Ok(lines.into_iter().map(AccountBalance::from).collect())
                    })
                    .collect(),
                Err(e) => {
                    let e = e.into_error(ErrorKind::UniversalAccount, "Failed to get balances");
                    accounts.iter().map(|_| Err(Error::new(e.kind(), e.message()))).collect()
                }
            }
        })
    }

    fn quote<'a>(
        &'a self,
        account: &'a BackendAccount,
        request: &'a QuoteRequest,
    ) -> BackendFuture<'a, Result<PreparedTransfer>> {
        Box::pin(async move {
            let request =
                QuoteRequest { account_id: account.account_id.clone(), ..request.clone() };
            let quote = with_session(&self.session, |jwt| {
                let request = &request;
                async move { self.account.quote(&jwt, request).await }
            })
            .await
            .map_err(|e| {
                // The service's refusal stays readable as data (`BELOW_MINIMUM`, …).
                let refusal = e.service().cloned();
                let error = e.into_error(ErrorKind::Sweep, "Quoting the transfer");
                match refusal {
                    Some(refusal) => error.with_source(refusal),
                    None => error,
                }
            })?;
            Ok(PreparedTransfer { quote, backend: Value::Null })
        })
    }

    fn sign<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
    ) -> BackendFuture<'a, Result<String>> {
        Box::pin(async move {
            let root = transfer.quote.root_hash.as_str();
            with_session(&self.session, |jwt| async move { self.signer.sign(&jwt, root).await })
                .await
                .map(|s| s.signature)
                .map_err(call_error("Signing", ErrorKind::Sweep))
        })
    }

    fn send_once<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
        signature: &'a str,
    ) -> BackendFuture<'a, Result<SendResult, SendFailure>> {
        Box::pin(async move {
            let not_sent = |error: Error| SendFailure::Unknown { error, maybe_sent: false };
            let session = self.session.get().await.map_err(not_sent)?;
            let id = &transfer.quote.quote_id;
            let answer = match self.account.send(&session.jwt, id, signature).await {
                // A refused session never reached the send: renew it once.
                Err(SendError::Refused(e)) if e.status == 401 => {
                    let fresh = self.session.refresh(&session.jwt).await.map_err(not_sent)?;
                    self.account.send(&fresh.jwt, id, signature).await
                }
                other => other,
            };
            answer.map_err(|e| match e {
                SendError::Refused(e) => {
                    SendFailure::Refused(Error::new(ErrorKind::Sweep, format!("Send refused: {e}")))
                }
                SendError::Unknown { error, maybe_sent } => {
                    SendFailure::Unknown { error, maybe_sent }
                }
            })
        })
    }

    fn send_status<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
    ) -> BackendFuture<'a, Result<Option<SendResult>>> {
        Box::pin(async move {
            let id = transfer.quote.quote_id.as_str();
            with_session(
                &self.session,
                |jwt| async move { self.account.sweep_status(&jwt, id).await },
            )
            .await
            // The service's own words: the engine says what could not be read.
            .map_err(|e| Error::new(ErrorKind::Sweep, e.to_string()))
        })
    }

    fn transactions<'a>(
        &'a self,
        account: &'a BackendAccount,
        page: u32,
        page_size: u32,
    ) -> BackendFuture<'a, Result<TransactionsResponse>> {
        Box::pin(async move {
            let id = account.account_id.as_str();
            with_session(&self.session, |jwt| async move {
                self.account.transactions(&jwt, id, page, page_size).await
            })
            .await
            .map_err(call_error("Failed to get transactions", ErrorKind::UniversalAccount))
        })
    }

    fn token_transactions<'a>(
        &'a self,
        account: &'a BackendAccount,
        chain_id: u64,
        token_address: &'a str,
        page_token: Option<&'a str>,
        page_size: u32,
    ) -> BackendFuture<'a, Result<TokenTransactionsResponse>> {
        Box::pin(async move {
            let id = account.account_id.as_str();
            with_session(&self.session, |jwt| async move {
                self.account
                    .token_transactions(&jwt, id, chain_id, token_address, page_token, page_size)
                    .await
            })
            .await
            .map_err(call_error("Failed to get token transactions", ErrorKind::UniversalAccount))
        })
    }

    fn transaction<'a>(
        &'a self,
        account: &'a BackendAccount,
        transaction_id: &'a str,
    ) -> BackendFuture<'a, Result<UaTransaction>> {
        Box::pin(async move {
            let id = account.account_id.as_str();
            with_session(&self.session, |jwt| async move {
                self.account.transaction(&jwt, id, transaction_id).await
            })
            .await
            .map_err(call_error("Failed to get transaction", ErrorKind::UniversalAccount))
        })
    }
}
