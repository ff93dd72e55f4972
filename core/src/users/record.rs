//! The records the service returns: [`User`] and its [`Wallet`]s (spec §2).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};

/// A wallet of a [`User`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Wallet {
    /// Chain family, for example `evm_chain` or `solana`.
    pub chain: String,
    /// The wallet's public address.
    pub public_address: String,
}

/// A registered user's profile record (spec §2). Timestamps are kept exactly as sent;
/// [`User::created_at_time`] and [`User::updated_at_time`] give them parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // the fields are the spec's, one for one
pub struct User {
    pub uuid: String,
    #[serde(default)]
    pub phone: Option<String>,
    pub email: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub avatar: Option<String>,
    #[serde(default)]
    pub facebook_id: Option<String>,
    #[serde(default)]
    pub facebook_email: Option<String>,
    #[serde(default)]
    pub google_id: Option<String>,
    #[serde(default)]
    pub google_email: Option<String>,
    #[serde(default)]
    pub apple_id: Option<String>,
    #[serde(default)]
    pub apple_email: Option<String>,
    #[serde(default)]
    pub twitter_id: Option<String>,
    #[serde(default)]
    pub twitter_email: Option<String>,
    #[serde(default)]
    pub telegram_id: Option<String>,
    #[serde(default)]
    pub telegram_phone: Option<String>,
    #[serde(default)]
    pub discord_id: Option<String>,
    #[serde(default)]
    pub discord_email: Option<String>,
    #[serde(default)]
    pub github_id: Option<String>,
    #[serde(default)]
    pub github_email: Option<String>,
    #[serde(default)]
    pub twitch_id: Option<String>,
    #[serde(default)]
    pub twitch_email: Option<String>,
    #[serde(default)]
    pub microsoft_id: Option<String>,
    #[serde(default)]
    pub microsoft_email: Option<String>,
    #[serde(default)]
    pub linkedin_id: Option<String>,
    #[serde(default)]
    pub linkedin_email: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub wallets: Vec<Wallet>,
}

impl User {
    /// `createdAt`, parsed. Always `Some` for a record returned by [`UserRpcClient`], which
    /// rejects records whose timestamps are not ISO 8601.
    pub fn created_at_time(&self) -> Option<DateTime<Utc>> {
        parse_timestamp(&self.created_at)
    }

    /// `updatedAt`, parsed (see [`User::created_at_time`]).
    pub fn updated_at_time(&self) -> Option<DateTime<Utc>> {
        parse_timestamp(&self.updated_at)
    }

    /// The record as the service sends it (camelCase keys, nulls included).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    pub(super) fn from_result(method: &str, result: Value) -> Result<User> {
        let user: User = serde_json::from_value(result).map_err(|e| {
            Error::new(
                ErrorKind::Protocol,
                format!("{method} returned a malformed user record: {e}"),
            )
        })?;
        for (field, text) in [("createdAt", &user.created_at), ("updatedAt", &user.updated_at)] {
            if parse_timestamp(text).is_none() {
                return Err(Error::new(
                    ErrorKind::Protocol,
                    format!(
                        "{method} returned a malformed user record: {field} {} is not an ISO 8601 timestamp",
                        quote(text)
                    ),
                ));
            }
        }
        Ok(user)
    }
}

fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.with_timezone(&Utc))
}
