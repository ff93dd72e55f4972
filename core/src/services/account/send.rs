//! Sends and their outcome (`POST /v1/sweeps/send`, `GET /v1/sweeps/{quoteId}`).

use serde::{Deserialize, Serialize};

use super::lenient_string;
use crate::error::{Error, ErrorKind};
use crate::http::Reply;
use crate::services::{CallError, ServiceError, decode};

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

// Parsed apart from the HTTP so that it is pure: an entry point of the fuzz targets (`fuzz/`),
// not part of the API. It takes the HTTP status and body.

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
