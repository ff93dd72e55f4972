//! What every deposit-service endpoint shares: the error envelope
//! `{"error": {"code", "message"}}` with its codes, reading JSON bodies, the bearer token, and
//! running blocking store work off the async workers.

use std::fmt;

use axum::body::{Body, Bytes};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::Error;

/// The `code` values of error bodies (`docs/protocol.md`).
pub mod codes {
    /// Malformed JSON, a missing or bad field.
    pub const INVALID_REQUEST: &str = "INVALID_REQUEST";
    /// The JWT service does not know the credentials.
    pub const INVALID_CREDENTIALS: &str = "INVALID_CREDENTIALS";
    /// A missing, malformed, expired, revoked or badly signed JWT.
    pub const INVALID_SESSION: &str = "INVALID_SESSION";
    /// `ownerAddress` is not the session's wallet.
    pub const OWNER_MISMATCH: &str = "OWNER_MISMATCH";
    /// An account that is unknown or belongs to another wallet.
    pub const NOT_YOUR_ACCOUNT: &str = "NOT_YOUR_ACCOUNT";
    /// More than 1000 account ids in one balances request.
    pub const TOO_MANY_ACCOUNTS: &str = "TOO_MANY_ACCOUNTS";
    /// The account holds less than the amount to sweep.
    pub const INSUFFICIENT_BALANCE: &str = "INSUFFICIENT_BALANCE";
    /// The value does not cover the fees.
    pub const BELOW_MINIMUM: &str = "BELOW_MINIMUM";
    /// The destination token is not deliverable on the destination chain.
    pub const UNSUPPORTED_ROUTE: &str = "UNSUPPORTED_ROUTE";
    /// The signature is not the account owner's signature of the quote's `rootHash`.
    pub const BAD_SIGNATURE: &str = "BAD_SIGNATURE";
    /// The quote expired before it was sent.
    pub const QUOTE_EXPIRED: &str = "QUOTE_EXPIRED";
    /// No quote has this id.
    pub const UNKNOWN_QUOTE: &str = "UNKNOWN_QUOTE";
    /// The quote was never sent.
    pub const NOT_SENT: &str = "NOT_SENT";
    /// The account has no such transaction.
    pub const NOT_FOUND: &str = "NOT_FOUND";
    /// An injected sweep rejection (`/devnet/faults/sweeps`, mode `reject`).
    pub const ROUTE_FAILED: &str = "ROUTE_FAILED";
    /// An injected HTTP fault (`/devnet/faults`).
    pub const INJECTED_FAULT: &str = "INJECTED_FAULT";
    /// The body is larger than the server accepts.
    pub const TOO_LARGE: &str = "TOO_LARGE";
    /// A method the path does not take (the `Allow` header lists those it takes).
    pub const METHOD_NOT_ALLOWED: &str = "METHOD_NOT_ALLOWED";
    /// A devnet fault endpoint while fault injection is off.
    pub const FAULT_INJECTION_OFF: &str = "FAULT_INJECTION_OFF";
    /// Anything else; details go to the server's stderr only.
    pub const INTERNAL: &str = "INTERNAL";
    /// A chain-backed chain failed or could not be reached (502; the client retries).
    pub const CHAIN_UNAVAILABLE: &str = "CHAIN_UNAVAILABLE";
    /// `POST /devnet/deposits` on a chain-backed chain: send a real transfer instead.
    pub const CHAIN_BACKED: &str = "CHAIN_BACKED";
    /// The balance API's `X-API-Key` is missing or wrong.
    pub const INVALID_API_KEY: &str = "INVALID_API_KEY";
    /// The onramp order has no partner key.
    pub const INVALID_PARTNER_KEY: &str = "INVALID_PARTNER_KEY";
}

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds for a `Retry-After` header.
    pub retry_after: Option<u64>,
}

/// `Result` of an endpoint.
pub type ApiResult<T = Value> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), retry_after: None }
    }

    /// 400 with `code`.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 400 `INVALID_REQUEST`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::bad_request(codes::INVALID_REQUEST, message)
    }

    /// 401 `INVALID_SESSION`.
    pub fn session(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, codes::INVALID_SESSION, message)
    }

    /// 403 `NOT_YOUR_ACCOUNT`.
    pub fn not_yours(account_id: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            codes::NOT_YOUR_ACCOUNT,
            format!(
                "account {} is unknown or not the session's",
                crate::describe::quote(account_id)
            ),
        )
    }

    /// 500 `INTERNAL`; `detail` goes to stderr, never to the caller.
    pub fn internal(detail: impl fmt::Display) -> Self {
        eprintln!("depositkit-devnet: internal error: {detail}");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, codes::INTERNAL, "internal error")
    }
}

impl From<crate::chain::ChainError> for ApiError {
    /// 502 `CHAIN_UNAVAILABLE` naming the chain, with `Retry-After: 1`.
    fn from(error: crate::chain::ChainError) -> Self {
        let mut api =
            ApiError::new(StatusCode::BAD_GATEWAY, codes::CHAIN_UNAVAILABLE, error.message);
        api.retry_after = Some(1);
        api
    }
}

impl From<crate::chain::ChainFailure> for ApiError {
    fn from(failure: crate::chain::ChainFailure) -> Self {
        match failure {
            crate::chain::ChainFailure::Chain(e) => e.into(),
            crate::chain::ChainFailure::Store(e) => e.into(),
            crate::chain::ChainFailure::NoKey(message) => ApiError::invalid(message),
        }
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        match error {
            Error::InvalidInput { .. } => ApiError::invalid(error.to_string()),
            other => ApiError::internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code, "message": self.message } });
        let mut response = json_response(self.status, &body);
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// A JSON response with `status`.
pub fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// 405 `METHOD_NOT_ALLOWED`: the answer to a known path with a method it does not take (axum's
/// method router adds the `Allow` header).
pub async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        codes::METHOD_NOT_ALLOWED,
        format!(
            "{method} is not allowed on {}; the Allow header lists the methods it takes",
            uri.path()
        ),
    )
    .into_response()
}

/// 200 with `body`, or the error.
pub fn reply(result: ApiResult) -> Response {
    match result {
        Ok(body) => json_response(StatusCode::OK, &body),
        Err(error) => error.into_response(),
    }
}

/// Reads the whole body, at most `max` bytes.
///
/// # Errors
/// 413 `TOO_LARGE`; 400 `INVALID_REQUEST` when it cannot be read (the client went away
/// mid-body, a broken chunked encoding).
pub async fn read_body(body: Body, max: usize) -> ApiResult<Bytes> {
    axum::body::to_bytes(body, max).await.map_err(|e| {
        let e = e.into_inner();
        if e.is::<http_body_util::LengthLimitError>() {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                codes::TOO_LARGE,
                format!("the body is larger than {max} bytes"),
            )
        } else {
            ApiError::invalid(format!("cannot read the request body: {e}"))
        }
    })
}

/// Reads the body (at most `max` bytes) as JSON of type `T`; an empty body reads as `{}`.
///
/// # Errors
/// 413 `TOO_LARGE`; 400 `INVALID_REQUEST` naming what is wrong.
pub async fn read_json<T: DeserializeOwned>(body: Body, max: usize) -> ApiResult<T> {
    let bytes = read_body(body, max).await?;
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
    serde_json::from_slice(bytes).map_err(|e| ApiError::invalid(format!("bad JSON body: {e}")))
}

/// The token of `Authorization: Bearer <token>`.
///
/// # Errors
/// 401 `INVALID_SESSION` when the header is missing or not a bearer token.
pub fn bearer(headers: &HeaderMap) -> ApiResult<String> {
    let value = headers
        .get(AUTHORIZATION)
        .ok_or_else(|| ApiError::session("missing Authorization: Bearer <jwt>"))?;
    let value = value
        .to_str()
        .map_err(|_| ApiError::session("the Authorization header is not ASCII"))?
        .trim();
    match value.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(token.trim().to_owned())
        }
        _ => Err(ApiError::session("the Authorization scheme must be Bearer")),
    }
}

/// Runs `work` on the blocking pool (store access and signing block).
///
/// # Errors
/// What `work` returns; 500 when the task panicked.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(ApiError::internal(format!("request task failed: {e}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers).unwrap_err().status, StatusCode::UNAUTHORIZED);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer  abc.def.ghi "));
        assert_eq!(bearer(&headers).unwrap(), "abc.def.ghi");
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&headers).unwrap_err().code, codes::INVALID_SESSION);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert!(bearer(&headers).is_err());
    }
}
