//! The records the store holds and the server returns: the User record of spec §2, its
//! wallets, and the chain families addresses belong to; and the checks every value passes before
//! either store writes it (the stores only run SQL).

use std::fmt;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use depositkit_core::describe::quote;

/// The chain families of spec §4 `isProjectUser` (and of `Wallet.chain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChainFamily {
    /// `evm_chain`: addresses compare case-insensitively and are stored lower-cased.
    Evm,
    /// `solana`: base58 public keys, compared exactly.
    Solana,
}

impl ChainFamily {
    /// Every family, in the order the docs list them.
    pub const ALL: [ChainFamily; 2] = [ChainFamily::Evm, ChainFamily::Solana];

    /// The family named `name` (`evm_chain` or `solana`, exactly).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "evm_chain" => Some(ChainFamily::Evm),
            "solana" => Some(ChainFamily::Solana),
            _ => None,
        }
    }

    /// Like [`ChainFamily::parse`], with an [`Error::InvalidInput`] naming `field`.
    pub fn parse_field(field: &str, name: &str) -> Result<Self> {
        Self::parse(name).ok_or_else(|| {
            Error::invalid(
                field,
                format!("chain {} is not one of \"evm_chain\", \"solana\"", quote(name)),
            )
        })
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainFamily::Evm => "evm_chain",
            ChainFamily::Solana => "solana",
        }
    }

    /// The form an address is stored and compared in: lower-case for EVM, unchanged for Solana.
    pub fn normalize(self, address: &str) -> String {
        match self {
            ChainFamily::Evm => address.to_ascii_lowercase(),
            ChainFamily::Solana => address.to_owned(),
        }
    }

    /// Checks an address before it is stored: EVM addresses must be `0x` + 40 hex digits with a
    /// valid EIP-55 checksum when mixed-case; Solana addresses must be base58 of 32 bytes.
    pub fn validate_address(self, field: &str, address: &str) -> Result<()> {
        let ok = match self {
            ChainFamily::Evm => depositkit_core::is_valid_evm_address(address),
            ChainFamily::Solana => depositkit_core::is_valid_solana_address(address),
        };
        if ok {
            return Ok(());
        }
        let expected = match self {
            ChainFamily::Evm => "0x followed by 40 hex digits (EIP-55 checksum when mixed-case)",
            ChainFamily::Solana => "base58 text of a 32-byte public key",
        };
        Err(Error::invalid(
            field,
            format!("{} is not a valid {} address: expected {expected}", quote(address), self),
        ))
    }

    /// Whether a looked-up address has the shape of this family's addresses. Unlike
    /// [`ChainFamily::validate_address`] an EVM checksum is not checked: lookups ignore case.
    pub fn looks_like_address(self, address: &str) -> bool {
        match self {
            ChainFamily::Evm => address
                .strip_prefix("0x")
                .or_else(|| address.strip_prefix("0X"))
                .is_some_and(|hex| hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit())),
            ChainFamily::Solana => depositkit_core::is_valid_solana_address(address),
        }
    }
}

impl fmt::Display for ChainFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The profile fields of a user (spec §2): everything but `uuid`, the timestamps and
/// `wallets`. Only `email` is required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub phone: Option<String>,
    pub email: String,
    pub name: Option<String>,
    pub avatar: Option<String>,
    pub facebook_id: Option<String>,
    pub facebook_email: Option<String>,
    pub google_id: Option<String>,
    pub google_email: Option<String>,
    pub apple_id: Option<String>,
    pub apple_email: Option<String>,
    pub twitter_id: Option<String>,
    pub twitter_email: Option<String>,
    pub telegram_id: Option<String>,
    pub telegram_phone: Option<String>,
    pub discord_id: Option<String>,
    pub discord_email: Option<String>,
    pub github_id: Option<String>,
    pub github_email: Option<String>,
    pub twitch_id: Option<String>,
    pub twitch_email: Option<String>,
    pub microsoft_id: Option<String>,
    pub microsoft_email: Option<String>,
    pub linkedin_id: Option<String>,
    pub linkedin_email: Option<String>,
}

impl Profile {
    /// The JSON names of the fields, in record order. The `users` table has one column per
    /// field, named by [`Profile::column`].
    pub const FIELDS: [&'static str; 24] = [
        "phone",
        "email",
        "name",
        "avatar",
        "facebookId",
        "facebookEmail",
        "googleId",
        "googleEmail",
        "appleId",
        "appleEmail",
        "twitterId",
        "twitterEmail",
        "telegramId",
        "telegramPhone",
        "discordId",
        "discordEmail",
        "githubId",
        "githubEmail",
        "twitchId",
        "twitchEmail",
        "microsoftId",
        "microsoftEmail",
        "linkedinId",
        "linkedinEmail",
    ];

    /// A profile with only `email` set.
    pub fn with_email(email: impl Into<String>) -> Self {
        Profile { email: email.into(), ..Profile::default() }
    }

    /// The `users` column of the JSON field `field` (`googleEmail` → `google_email`).
    pub fn column(field: &str) -> String {
        let mut column = String::with_capacity(field.len() + 2);
        for c in field.chars() {
            if c.is_ascii_uppercase() {
                column.push('_');
                column.push(c.to_ascii_lowercase());
            } else {
                column.push(c);
            }
        }
        column
    }

    /// The `users` columns of [`Profile::FIELDS`], in order, comma-separated: built once, for
    /// the SELECTs every `getUserInfo` runs (their text keys the prepared-statement caches).
    pub fn column_list() -> &'static str {
        static LIST: LazyLock<String> = LazyLock::new(|| {
            Profile::FIELDS.iter().map(|f| Profile::column(f)).collect::<Vec<_>>().join(", ")
        });
        &LIST
    }

    /// The field values in [`Profile::FIELDS`] order.
    pub fn values(&self) -> [Option<&str>; 24] {
        [
            self.phone.as_deref(),
            Some(self.email.as_str()),
            self.name.as_deref(),
            self.avatar.as_deref(),
            self.facebook_id.as_deref(),
            self.facebook_email.as_deref(),
            self.google_id.as_deref(),
            self.google_email.as_deref(),
            self.apple_id.as_deref(),
            self.apple_email.as_deref(),
            self.twitter_id.as_deref(),
            self.twitter_email.as_deref(),
            self.telegram_id.as_deref(),
            self.telegram_phone.as_deref(),
            self.discord_id.as_deref(),
            self.discord_email.as_deref(),
            self.github_id.as_deref(),
            self.github_email.as_deref(),
            self.twitch_id.as_deref(),
            self.twitch_email.as_deref(),
            self.microsoft_id.as_deref(),
            self.microsoft_email.as_deref(),
            self.linkedin_id.as_deref(),
            self.linkedin_email.as_deref(),
        ]
    }

    /// A profile from values in [`Profile::FIELDS`] order.
    pub fn from_values(mut v: [Option<String>; 24]) -> Self {
        let mut take = |i: usize| v[i].take();
        Profile {
            phone: take(0),
            email: take(1).unwrap_or_default(),
            name: take(2),
            avatar: take(3),
            facebook_id: take(4),
            facebook_email: take(5),
            google_id: take(6),
            google_email: take(7),
            apple_id: take(8),
            apple_email: take(9),
            twitter_id: take(10),
            twitter_email: take(11),
            telegram_id: take(12),
            telegram_phone: take(13),
            discord_id: take(14),
            discord_email: take(15),
            github_id: take(16),
            github_email: take(17),
            twitch_id: take(18),
            twitch_email: take(19),
            microsoft_id: take(20),
            microsoft_email: take(21),
            linkedin_id: take(22),
            linkedin_email: take(23),
        }
    }

    /// Checks the values before they are stored; `prefix` is put before field names in errors.
    pub fn validate(&self, prefix: &str) -> Result<()> {
        if self.email.trim().is_empty() {
            return Err(Error::invalid(format!("{prefix}email"), "must not be empty"));
        }
        for (field, value) in Self::FIELDS.iter().zip(self.values()) {
            if let Some(value) = value {
                if value.chars().count() > MAX_FIELD_CHARS {
                    return Err(Error::invalid(
                        format!("{prefix}{field}"),
                        format!("longer than {MAX_FIELD_CHARS} characters"),
                    ));
                }
                if value.chars().any(char::is_control) {
                    return Err(Error::invalid(
                        format!("{prefix}{field}"),
                        "must not contain control characters",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Longest accepted profile value (an avatar URL is the longest expected).
const MAX_FIELD_CHARS: usize = 2048;

/// The User record (spec §2), the `result` of `getUserInfo` and `getUserInfoByIdentity`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub uuid: String,
    #[serde(flatten)]
    pub profile: Profile,
    /// ISO 8601 UTC with milliseconds.
    pub created_at: String,
    /// ISO 8601 UTC with milliseconds.
    pub updated_at: String,
    pub wallets: Vec<Wallet>,
}

/// An element of `User.wallets`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Wallet {
    /// `evm_chain` or `solana`.
    pub chain: String,
    /// Lower-cased for `evm_chain`.
    pub public_address: String,
}

/// A user to add: an optional uuid (a v4 one is generated when absent) and the profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewUser {
    pub uuid: Option<String>,
    pub profile: Profile,
}

impl NewUser {
    /// A user with a generated uuid and only `email` set.
    pub fn with_email(email: impl Into<String>) -> Self {
        NewUser { uuid: None, profile: Profile::with_email(email) }
    }
}

/// A project just created (or whose key was just rotated): the only time the key is visible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectCredentials {
    pub project_id: String,
    pub server_key: String,
}

/// What a presented session token is for a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStatus {
    /// The token is the user's and has not expired.
    Valid,
    /// The token is the user's but its expiry has passed.
    Expired,
    /// No such token, or it belongs to another user.
    Unknown,
}

/// Checks a project name: 1 to 200 characters once trimmed; returns it trimmed.
pub fn check_project_name(name: &str) -> Result<&str> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(Error::invalid("name", "must be 1 to 200 characters"));
    }
    Ok(name)
}

/// Checks an identity: `provider` 1 to 64 of a-z, 0-9, `_` and `-`; `uid` 1 to 512 characters
/// without control characters. `prefix` goes before the field names in errors.
pub fn check_identity(provider: &str, uid: &str, prefix: &str) -> Result<()> {
    let provider_ok = !provider.is_empty()
        && provider.len() <= 64
        && provider
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if !provider_ok {
        return Err(Error::invalid(
            format!("{prefix}provider"),
            format!("{} must be 1 to 64 of a-z, 0-9, _ and -", quote(provider)),
        ));
    }
    if uid.is_empty() || uid.chars().count() > 512 || uid.chars().any(char::is_control) {
        return Err(Error::invalid(
            format!("{prefix}uid"),
            "must be 1 to 512 characters without control characters",
        ));
    }
    Ok(())
}

/// Checks a chosen session token: 1 to 1024 characters without whitespace. The token itself is
/// never put into the message.
pub fn check_session_token(token: &str, prefix: &str) -> Result<()> {
    if token.is_empty()
        || token.len() > 1024
        || token.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(Error::invalid(
            format!("{prefix}token"),
            "a session token must be 1 to 1024 characters without whitespace",
        ));
    }
    Ok(())
}

/// The message of the conflict when an identity belongs to another user.
pub(crate) fn identity_taken(provider: &str, uid: &str, owner: &str) -> Error {
    Error::Conflict(format!("identity {provider}:{} already belongs to user {owner}", quote(uid)))
}

impl SessionStatus {
    /// What a token is for user `uuid` at `now_ms`, given the session row its hash found:
    /// (the session's user, its expiry in milliseconds since the epoch).
    pub fn of(row: Option<(String, i64)>, uuid: &str, now_ms: i64) -> Self {
        match row {
            Some((owner, _)) if owner != uuid => SessionStatus::Unknown,
            Some((_, expires_at)) => Self::of_expiry(Some(expires_at), now_ms),
            None => SessionStatus::Unknown,
        }
    }

    /// What a token is at `now_ms`, given the expiry of its session when that session is the
    /// user's (`None`: no such session, or another user's).
    pub fn of_expiry(expires_at: Option<i64>, now_ms: i64) -> Self {
        match expires_at {
            Some(expires_at) if expires_at <= now_ms => SessionStatus::Expired,
            Some(_) => SessionStatus::Valid,
            None => SessionStatus::Unknown,
        }
    }
}

/// Parses `text` as a hyphenated UUID and returns its lower-case form.
pub fn normalize_uuid(field: &str, text: &str) -> Result<String> {
    let parsed = (text.len() == 36)
        .then(|| uuid::Uuid::try_parse(text).ok())
        .flatten()
        .ok_or_else(|| {
            Error::invalid(
                field,
                format!("{} is not a UUID like 0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f", quote(text)),
            )
        })?;
    Ok(parsed.hyphenated().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_snake_case() {
        assert_eq!(Profile::column("googleEmail"), "google_email");
        assert_eq!(Profile::column("phone"), "phone");
    }

    #[test]
    fn fields_match_serde_names_in_order() {
        let json = serde_json::to_value(Profile::with_email("a@b.c")).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let mut sorted_fields = Profile::FIELDS.to_vec();
        sorted_fields.sort_unstable();
        let mut sorted_keys = keys.clone();
        sorted_keys.sort_unstable();
        assert_eq!(sorted_keys, sorted_fields);
        let round = Profile::from_values(
            Profile::with_email("x@y.z").values().map(|v| v.map(str::to_owned)),
        );
        assert_eq!(round, Profile::with_email("x@y.z"));
    }

    #[test]
    fn user_record_serializes_camel_case_with_nulls() {
        let user = User {
            uuid: "u".into(),
            profile: Profile { google_id: Some("g".into()), ..Profile::with_email("a@b.c") },
            created_at: "2022-06-08T07:47:54.000Z".into(),
            updated_at: "2022-06-08T07:47:54.000Z".into(),
            wallets: vec![Wallet { chain: "solana".into(), public_address: "x".into() }],
        };
        let json = serde_json::to_value(&user).unwrap();
        assert_eq!(json["googleId"], "g");
        assert!(json["telegramPhone"].is_null());
        assert_eq!(json["wallets"][0]["publicAddress"], "x");
        assert_eq!(json.as_object().unwrap().len(), 1 + 24 + 3);
    }

    #[test]
    fn uuids_are_normalized_and_checked() {
        let upper = "0B7C5A4E-3F1D-4C2A-9E8B-1A2B3C4D5E6F";
        assert_eq!(normalize_uuid("uuid", upper).unwrap(), upper.to_lowercase());
        assert!(normalize_uuid("uuid", "0b7c5a4e3f1d4c2a9e8b1a2b3c4d5e6f").is_err());
        assert!(normalize_uuid("uuid", "nope").unwrap_err().to_string().contains("\"nope\""));
    }

    #[test]
    fn addresses_are_checked_per_family() {
        let evm = "0x52908400098527886E0F7030069857D2E4169EE7";
        assert!(ChainFamily::Evm.validate_address("a", evm).is_ok());
        assert!(ChainFamily::Evm.validate_address("a", "0x1234").is_err());
        assert!(ChainFamily::Evm.looks_like_address(&evm.to_lowercase()));
        assert_eq!(ChainFamily::Evm.normalize(evm), evm.to_lowercase());
        let sol = "11111111111111111111111111111111";
        assert!(ChainFamily::Solana.validate_address("a", sol).is_ok());
        assert!(ChainFamily::Solana.validate_address("a", evm).is_err());
        assert_eq!(ChainFamily::parse("evm"), None);
    }
}
