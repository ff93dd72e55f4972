//! The one error type of depositkit.
//!
//! Every fallible operation returns [`Error`], whose [`ErrorKind`] is one of the classes of the
//! deposit spec (§7) plus the few the implementation needs. The kind is the single source of
//! truth for the C status code ([`ErrorKind::code`]) and the Python exception class
//! ([`ErrorKind::class_name`]); both tables live here so that they cannot drift apart.

use std::fmt;

use crate::describe::bound_message;

/// What went wrong, as a stable category.
///
/// The numeric [`code`](ErrorKind::code) of a kind never changes and is never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A failure that fits no narrower class (`DepositSDKError` itself).
    DepositSdk,
    /// Invalid configuration: chain id, address or token invalid, or token not deliverable.
    Configuration,
    /// An argument to a function is malformed (an amount, a token symbol, a decimals count).
    InvalidArgument,
    /// Authentication failed.
    Authentication,
    /// The JWT service is unreachable or fails.
    Jwt,
    /// Unified-account operations failed, including initialization.
    UniversalAccount,
    /// A sweep failed.
    Sweep,
    /// A refund failed.
    Refund,
    /// Fund-from-wallet failed.
    Funding,
    /// Network problems: refused connections, resets, bad gateways.
    Network,
    /// An operation did not finish within its deadline.
    Timeout,
    /// A service answered something its protocol does not allow (malformed JSON-RPC, a
    /// response id that does not echo the request's, a record missing a required field).
    Protocol,
    /// A service answered with a JSON-RPC error object; [`Error::rpc`] carries it.
    Rpc,
    /// A thing looked up by id does not exist.
    NotFound,
    /// A bug in depositkit, or a state it cannot handle; report it.
    Internal,
}

impl ErrorKind {
    /// Every kind, in code order. Used by the bindings' tables and their tests.
    pub const ALL: [ErrorKind; 15] = [
        ErrorKind::DepositSdk,
        ErrorKind::InvalidArgument,
        ErrorKind::Configuration,
        ErrorKind::Authentication,
        ErrorKind::Jwt,
        ErrorKind::UniversalAccount,
        ErrorKind::Sweep,
        ErrorKind::Refund,
        ErrorKind::Funding,
        ErrorKind::Network,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
        ErrorKind::Rpc,
        ErrorKind::NotFound,
        ErrorKind::Internal,
    ];

    /// The stable numeric code of this kind: the C `depositkit_status` value and the
    /// Python exception's `code` attribute. Blocks of 100 group related kinds.
    pub const fn code(self) -> u32 {
        match self {
            ErrorKind::DepositSdk => 1,
            ErrorKind::InvalidArgument => 100,
            ErrorKind::Configuration => 200,
            ErrorKind::Authentication => 300,
            ErrorKind::Jwt => 301,
            ErrorKind::UniversalAccount => 400,
            ErrorKind::Sweep => 500,
            ErrorKind::Refund => 501,
            ErrorKind::Funding => 502,
            ErrorKind::Network => 600,
            ErrorKind::Timeout => 601,
            ErrorKind::Protocol => 602,
            ErrorKind::Rpc => 603,
            ErrorKind::NotFound => 700,
            ErrorKind::Internal => 900,
        }
    }

    /// The name of the Python exception class (and of the spec's error class) for this kind.
    pub const fn class_name(self) -> &'static str {
        match self {
            ErrorKind::DepositSdk => "DepositSDKError",
            ErrorKind::InvalidArgument => "InvalidArgumentError",
            ErrorKind::Configuration => "ConfigurationError",
            ErrorKind::Authentication => "AuthenticationError",
            ErrorKind::Jwt => "JwtError",
            ErrorKind::UniversalAccount => "UniversalAccountError",
            ErrorKind::Sweep => "SweepError",
            ErrorKind::Refund => "RefundError",
            ErrorKind::Funding => "FundingError",
            ErrorKind::Network => "NetworkError",
            ErrorKind::Timeout => "DepositTimeoutError",
            ErrorKind::Protocol => "ProtocolError",
            ErrorKind::Rpc => "RpcError",
            ErrorKind::NotFound => "NotFoundError",
            ErrorKind::Internal => "InternalError",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class_name())
    }
}

/// A depositkit error: a [`ErrorKind`], a message that says what was wrong and with which
/// value, and optionally the underlying cause.
///
/// Messages never contain secrets (server keys, JWTs, API keys).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    rpc: Option<Box<RpcErrorObject>>,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// A JSON-RPC 2.0 error object as a service sent it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RpcErrorObject {
    /// The error code (`-32700`…`-32600` are JSON-RPC's own, others the service's).
    pub code: i64,
    /// The service's message.
    pub message: String,
    /// The service's extra data, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl RpcErrorObject {
    /// Reads an error object; `None` unless it has an integer `code` and a string `message`.
    pub fn from_json(value: &serde_json::Value) -> Option<Self> {
        Some(RpcErrorObject {
            code: value.get("code")?.as_i64()?,
            message: value.get("message")?.as_str()?.to_owned(),
            data: value.get("data").cloned(),
        })
    }
}

impl Error {
    /// An error of `kind` with `message`, its quoted parts and its length bounded
    /// ([`bound_message`]): input of any size never makes a message of any size.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: bound_message(&message.into()), rpc: None, source: None }
    }

    /// An error of `kind` for a JSON-RPC error object returned by `method`.
    pub fn rpc(kind: ErrorKind, method: &str, object: RpcErrorObject) -> Self {
        let message = bound_message(&format!(
            "{method} failed: JSON-RPC error {}: {}",
            object.code, object.message
        ));
        Error { kind, message, rpc: Some(Box::new(object)), source: None }
    }

    /// Attaches the underlying cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// Shorthand for an [`ErrorKind::Configuration`] error.
    pub fn configuration(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Configuration, message)
    }

    /// Shorthand for an [`ErrorKind::InvalidArgument`] error.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// The category of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON-RPC error object behind this error, when a service sent one.
    pub fn rpc_error(&self) -> Option<&RpcErrorObject> {
        self.rpc.as_deref()
    }
}

/// `Result` with depositkit's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_and_class_names_are_unique() {
        let codes: HashSet<u32> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        let names: HashSet<&str> = ErrorKind::ALL.iter().map(|k| k.class_name()).collect();
        assert_eq!(codes.len(), ErrorKind::ALL.len());
        assert_eq!(names.len(), ErrorKind::ALL.len());
        assert!(!codes.contains(&0), "0 is reserved for success");
    }

    #[test]
    fn display_is_the_message_and_source_is_kept() {
        let io = std::io::Error::other("disk on fire");
        let err = Error::configuration("bad chain id 7").with_source(io);
        assert_eq!(err.to_string(), "bad chain id 7");
        assert_eq!(err.kind(), ErrorKind::Configuration);
        assert_eq!(std::error::Error::source(&err).unwrap().to_string(), "disk on fire");
    }
}
