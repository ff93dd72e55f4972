//! Clients of the remote services the deposit client depends on, over the HTTP/JSON protocol of
//! `docs/protocol.md`: the JWT service ([`jwt`]), the auth-core signer ([`signer`]) and the
//! universal-account service ([`account`]). Each is configured by a base URL.
//!
//! The deposit engine's view of a universal-account backend is one trait,
//! [`AccountBackend`] ([`backend`]), served over those services ([`ProtocolBackend`]) or over
//! Particle's Universal Account JSON-RPC ([`particle`], with a server-side signer from
//! [`crate::signer`]).
//!
//! The HTTP itself is the blocking, pooled [`JsonPoster`](crate::http) run on the runtime's
//! blocking pool, so these clients are `async` and must be awaited on the depositkit runtime.

pub mod account;
pub mod backend;
pub mod jwt;
pub mod particle;
pub mod rs256;
pub mod signer;

use std::fmt;
use std::future::Future;
use std::time::Duration;

use serde::de::DeserializeOwned;

use crate::describe::{bound_message, cut, quote};
use crate::error::{Error, ErrorKind, Result};
use crate::http::{JsonPoster, OnceFailure, Reply, RetryPolicy};

pub use account::{
    AccountClient, AccountInfo, BalanceLine, Quote, QuoteDestination, QuoteFees, QuotePurpose,
    QuoteRequest, QuoteSource, Receipt, SendError, SendResult, SendStatus,
    TokenTransactionsResponse, TransactionsPage, TransactionsResponse, UATransaction, UaChange,
    UaDetail, UaTargetToken, UaTransaction,
};
pub use backend::{
    AccountBackend, AccountBalance, BELOW_MINIMUM, BackendAccount, BackendFuture, PreparedTransfer,
    ProtocolBackend, SendFailure, service_error_of,
};
pub use jwt::{JwtClient, Session, SessionManager};
pub use signer::{Signature, SignerClient};

/// The base URLs of the three services.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceUrls {
    /// The JWT service (`{servicesUrl}/jwt`).
    pub jwt: String,
    /// The auth-core signer (`{servicesUrl}/signer`).
    pub signer: String,
    /// The universal-account service (`{servicesUrl}/ua`).
    pub account: String,
}

impl ServiceUrls {
    /// The three URLs under one base, as devnet serves them.
    pub fn under(services_url: &str) -> Self {
        let base = services_url.trim_end_matches('/');
        ServiceUrls {
            jwt: format!("{base}/jwt"),
            signer: format!("{base}/signer"),
            account: format!("{base}/ua"),
        }
    }
}

/// How the service clients talk HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HttpSettings {
    /// Deadline of one HTTP attempt, connect to last byte.
    pub timeout: Duration,
    /// Retries of 429, 5xx, refused connections and timeouts (never for a sweep's send).
    pub retry: RetryPolicy,
    /// The `User-Agent` header.
    pub user_agent: String,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            user_agent: format!("depositkit/{}", crate::VERSION),
        }
    }
}

/// An error answer of a service: a non-2xx status with
/// `{"error": {"code": "<CODE>", "message": "…"}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    /// The HTTP status.
    pub status: u16,
    /// The protocol's error code (`INVALID_SESSION`, …), or `HTTP_<status>` when the body had
    /// none.
    pub code: String,
    /// The service's message, or the body itself when it was not the protocol's shape.
    pub message: String,
}

/// Longest error code kept from a service (the protocol's codes are short words).
const MAX_CODE_CHARS: usize = 64;

impl ServiceError {
    fn from_reply(reply: &Reply) -> ServiceError {
        let parsed: Option<serde_json::Value> = serde_json::from_str(&reply.body).ok();
        let error = parsed.as_ref().and_then(|v| v.get("error"));
        // An empty code is no code: the status names the error then. Both code and message
        // are the service's text, so they are bounded like every message (a service that
        // echoes a huge input cannot make our errors of any size).
        let code = error
            .and_then(|e| e.get("code"))
            .and_then(|c| c.as_str())
            .filter(|c| !c.trim().is_empty())
            .map(|c| cut(c, MAX_CODE_CHARS))
            .unwrap_or_else(|| format!("HTTP_{}", reply.status));
        let message = error
            .and_then(|e| e.get("message"))
            .and_then(|m| m.as_str())
            .map(bound_message)
            .unwrap_or_else(|| {
                let body = reply.body.trim();
                if body.is_empty() { "no message".to_owned() } else { quote(body) }
            });
        ServiceError { status: reply.status, code, message }
    }
}

impl std::error::Error for ServiceError {}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {} {}: {}", self.status, self.code, self.message)
    }
}

/// Why a call to a service failed.
#[derive(Debug)]
pub enum CallError {
    /// The service answered with an error status.
    Service(ServiceError),
    /// No usable answer: unreachable, timed out, 429/5xx after the retries, a malformed body.
    Transport(Error),
    /// No session to call with: the JWT service failed ([`ErrorKind::Jwt`] or
    /// [`ErrorKind::Authentication`]).
    Session(Error),
}

impl CallError {
    /// Whether the service refused the session (HTTP 401).
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, CallError::Service(e) if e.status == 401)
    }

    /// The service's error, if it answered one.
    pub fn service(&self) -> Option<&ServiceError> {
        match self {
            CallError::Service(e) => Some(e),
            CallError::Transport(_) | CallError::Session(_) => None,
        }
    }

    /// A depositkit error of `kind` saying that `what` failed and why. A refused session
    /// (HTTP 401, after one refresh) is [`ErrorKind::Jwt`]; a session that could not be had
    /// keeps its own kind.
    pub fn into_error(self, kind: ErrorKind, what: &str) -> Error {
        match self {
            CallError::Service(e) if e.status == 401 => Error::new(
                ErrorKind::Jwt,
                format!("{what} failed: the service refused the session ({e})"),
            ),
            CallError::Service(e) => Error::new(kind, format!("{what} failed: {e}")),
            CallError::Session(e) => {
                Error::new(e.kind(), format!("{what} failed: {}", e.message())).with_source(e)
            }
            CallError::Transport(e) => {
                Error::new(kind, format!("{what} failed: {}", e.message())).with_source(e)
            }
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Service(e) => e.fmt(f),
            CallError::Transport(e) | CallError::Session(e) => e.fmt(f),
        }
    }
}

/// The async face of [`JsonPoster`]: every request runs on the runtime's blocking pool.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    poster: JsonPoster,
}

/// Owned request headers.
pub(crate) type Headers = Vec<(&'static str, String)>;

impl Http {
    pub(crate) fn new(settings: &HttpSettings) -> Http {
        Http { poster: JsonPoster::new(settings.timeout, &settings.user_agent, settings.retry) }
    }

    /// GET with retries; any status that is not retried comes back as a reply.
    pub(crate) async fn get(&self, url: String, headers: Headers) -> Result<Reply> {
        let poster = self.poster.clone();
        blocking(move || poster.get(&url, &borrowed(&headers))).await?
    }

    /// POST with retries.
    pub(crate) async fn post(&self, url: String, headers: Headers, body: String) -> Result<Reply> {
        let poster = self.poster.clone();
        blocking(move || poster.post(&url, &borrowed(&headers), &body)).await?
    }

    /// POST exactly once (see [`JsonPoster::post_once`]).
    pub(crate) async fn post_once(
        &self,
        url: String,
        headers: Headers,
        body: String,
    ) -> std::result::Result<Reply, OnceFailure> {
        let poster = self.poster.clone();
        match blocking(move || poster.post_once(&url, &borrowed(&headers), &body)).await {
            Ok(outcome) => outcome,
            Err(error) => Err(OnceFailure { error, maybe_sent: true }),
        }
    }
}

fn borrowed(headers: &Headers) -> Vec<(&str, &str)> {
    headers.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

async fn blocking<R: Send + 'static>(work: impl FnOnce() -> R + Send + 'static) -> Result<R> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::new(ErrorKind::Internal, format!("an HTTP request task failed: {e}")))
}

/// The JSON body of a 2xx reply as `T`; any other status as a [`ServiceError`].
pub(crate) fn decode<T: DeserializeOwned>(
    what: &str,
    reply: Reply,
) -> std::result::Result<T, CallError> {
    if !(200..300).contains(&reply.status) {
        return Err(CallError::Service(ServiceError::from_reply(&reply)));
    }
    serde_json::from_str(&reply.body).map_err(|e| {
        CallError::Transport(Error::new(
            ErrorKind::Protocol,
            format!("{what}: malformed response: {e}: {}", quote(reply.body.trim())),
        ))
    })
}

/// Runs `call` with the session's JWT; when the service refuses it (HTTP 401) the session is
/// refreshed once and the call repeated.
pub(crate) async fn with_session<T, F, Fut>(
    session: &SessionManager,
    mut call: F,
) -> std::result::Result<T, CallError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = std::result::Result<T, CallError>>,
{
    let first = session.get().await.map_err(CallError::Session)?;
    match call(first.jwt.to_string()).await {
        Err(e) if e.is_unauthorized() => {
            let fresh = session.refresh(&first.jwt).await.map_err(CallError::Session)?;
            call(fresh.jwt.to_string()).await
        }
        other => other,
    }
}

/// `Authorization: Bearer <jwt>` plus the JSON headers.
pub(crate) fn bearer(jwt: &str) -> Headers {
    vec![
        ("Authorization", format!("Bearer {jwt}")),
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json".to_owned()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_under_one_base() {
        let urls = ServiceUrls::under("http://127.0.0.1:7420/");
        assert_eq!(urls.jwt, "http://127.0.0.1:7420/jwt");
        assert_eq!(urls.signer, "http://127.0.0.1:7420/signer");
        assert_eq!(urls.account, "http://127.0.0.1:7420/ua");
    }

    #[test]
    fn service_errors_are_read_from_the_protocol_body_or_the_status() {
        let reply = Reply {
            status: 409,
            body: r#"{"error":{"code":"INSUFFICIENT_BALANCE","message":"balance changed"}}"#.into(),
        };
        let e = ServiceError::from_reply(&reply);
        assert_eq!(
            (e.status, e.code.as_str(), e.message.as_str()),
            (409, "INSUFFICIENT_BALANCE", "balance changed")
        );
        assert_eq!(e.to_string(), "HTTP 409 INSUFFICIENT_BALANCE: balance changed");
        let e = ServiceError::from_reply(&Reply { status: 502, body: "bad gateway".into() });
        assert_eq!(e.code, "HTTP_502");
        assert_eq!(e.message, "\"bad gateway\"");
    }

    /// Found by the `account_answers` fuzz target: an empty code is no code, and a service's
    /// text of any size is bounded.
    #[test]
    fn an_empty_code_falls_back_to_the_status_and_service_text_is_bounded() {
        let body = r#"{"error":{"code":"","message":"slow down"}}"#;
        let e = ServiceError::from_reply(&Reply { status: 429, body: body.into() });
        assert_eq!(e.to_string(), "HTTP 429 HTTP_429: slow down");
        let long = "w".repeat(5000);
        let body = format!(r#"{{"error":{{"code":"{long}","message":"{long}"}}}}"#);
        let e = ServiceError::from_reply(&Reply { status: 400, body });
        assert_eq!(e.code.chars().count(), 65, "{}", e.code);
        assert!(e.message.chars().count() <= crate::describe::MAX_MESSAGE_CHARS);
    }

    #[test]
    fn decode_maps_statuses_and_malformed_bodies() {
        #[derive(serde::Deserialize, Debug)]
        struct X {
            #[allow(dead_code)]
            a: u32,
        }
        assert!(decode::<X>("x", Reply { status: 200, body: r#"{"a":1}"#.into() }).is_ok());
        let e = decode::<X>("x", Reply { status: 401, body: "{}".into() }).unwrap_err();
        assert!(e.is_unauthorized());
        let e = decode::<X>("x", Reply { status: 200, body: "nope".into() }).unwrap_err();
        match e {
            CallError::Transport(e) => assert_eq!(e.kind(), ErrorKind::Protocol),
            other => panic!("{other:?}"),
        }
    }
}
