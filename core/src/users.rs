//! The user-lookup client: JSON-RPC 2.0 over HTTP POST with Basic auth
//! (`spec/user-rpc-service.md`). See `docs/user-rpc.md` for the error mapping.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::describe::{json_kind, quote};
use crate::error::{Error, ErrorKind, Result, RpcErrorObject};
use crate::http::{JsonPoster, Reply, RetryPolicy};
use crate::validate::{evm_address_problem, solana_address_problem};

/// Error codes of the user-lookup service: JSON-RPC 2.0's own and the service's application
/// codes (documented in `docs/user-rpc.md`; the devnet server uses the same constants).
pub mod codes {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid JSON-RPC 2.0 request (also: empty batch, body too large, wrong HTTP method or
    /// content type).
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Wrong number or type of params, or a malformed value.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Missing or wrong project credentials (sent with HTTP 401).
    pub const UNAUTHORIZED: i64 = -32001;
    /// No user with that uuid in the calling project.
    pub const USER_NOT_FOUND: i64 = -32010;
    /// The session token is wrong, expired, or not the user's.
    pub const INVALID_TOKEN: i64 = -32011;
    /// An identity provider other than `jwt`.
    pub const UNSUPPORTED_PROVIDER: i64 = -32012;
    /// No user with that identity in the calling project.
    pub const IDENTITY_NOT_FOUND: i64 = -32013;
}

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

    fn from_result(method: &str, result: Value) -> Result<User> {
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

/// The longest per-attempt timeout accepted; larger values are almost certainly unit mistakes
/// and would overflow timer arithmetic on some platforms.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// How a [`UserRpcClient`] talks to the service.
#[derive(Debug, Clone)]
pub struct UserRpcClientOptions {
    /// Deadline of one HTTP attempt, connect to last byte. Default 10 s.
    pub timeout: Duration,
    /// Retries of 429, 5xx, refused connections and timeouts. Default: 3 retries.
    pub retry: RetryPolicy,
    /// The `User-Agent` header. Default `depositkit/<version>`.
    pub user_agent: String,
}

impl Default for UserRpcClientOptions {
    fn default() -> Self {
        UserRpcClientOptions {
            timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            user_agent: format!("depositkit/{}", crate::VERSION),
        }
    }
}

/// The `Authorization` header value; kept out of `Debug` so the server key cannot leak.
struct BasicAuth(String);

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Basic <redacted>")
    }
}

/// Client of the user-lookup service.
///
/// Thread-safe: one instance serves many threads at once and reuses keep-alive connections.
/// Every method checks its arguments before any network call.
///
/// ```no_run
/// use depositkit_core::users::{UserRpcClient, UserRpcClientOptions};
/// let client = UserRpcClient::new("http://127.0.0.1:7420/user-rpc", "my-project", "sk_…",
///     UserRpcClientOptions::default())?;
/// let member = client.is_project_user("evm_chain", "0x52908400098527886E0F7030069857D2E4169EE7")?;
/// # Ok::<(), depositkit_core::Error>(())
/// ```
#[derive(Debug)]
pub struct UserRpcClient {
    base_url: String,
    project_id: String,
    auth: BasicAuth,
    http: JsonPoster,
    next_id: AtomicU64,
}

impl UserRpcClient {
    /// A client of the service at `base_url` for the project `project_id` with its server key.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when the URL is not `http://` or `https://`, carries
    /// credentials, or when the project id or key is empty or the project id holds a `:`.
    pub fn new(
        base_url: &str,
        project_id: &str,
        server_key: &str,
        options: UserRpcClientOptions,
    ) -> Result<Self> {
        let rest = base_url
            .strip_prefix("http://")
            .or_else(|| base_url.strip_prefix("https://"))
            .ok_or_else(|| {
            Error::configuration(format!(
                "invalid base URL {}: expected http:// or https://",
                quote(base_url)
            ))
        })?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.is_empty() {
            return Err(Error::configuration(format!(
                "invalid base URL {}: no host",
                quote(base_url)
            )));
        }
        if authority.contains('@') {
            // Never echo it: the part before '@' is a credential.
            return Err(Error::configuration(
                "invalid base URL: it must not carry credentials; pass the project id and server key instead",
            ));
        }
        if project_id.is_empty() {
            return Err(Error::configuration("project id is empty"));
        }
        if project_id.contains(':') || project_id.chars().any(char::is_control) {
            return Err(Error::configuration(format!(
                "invalid project id {}: it must not contain ':' or control characters",
                quote(project_id)
            )));
        }
        if server_key.is_empty() {
            return Err(Error::configuration("project server key is empty"));
        }
        if server_key.chars().any(char::is_control) {
            return Err(Error::configuration("project server key contains control characters"));
        }
        if options.timeout.is_zero() || options.timeout > MAX_TIMEOUT {
            return Err(Error::configuration(format!(
                "timeout {} is out of range: expected more than zero and at most {}",
                crate::describe::duration(options.timeout),
                crate::describe::duration(MAX_TIMEOUT)
            )));
        }
        let credentials =
            base64::engine::general_purpose::STANDARD.encode(format!("{project_id}:{server_key}"));
        Ok(UserRpcClient {
            base_url: base_url.to_owned(),
            project_id: project_id.to_owned(),
            auth: BasicAuth(format!("Basic {credentials}")),
            http: JsonPoster::new(options.timeout, &options.user_agent, options.retry),
            next_id: AtomicU64::new(1),
        })
    }

    /// The service's base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The project id the client authenticates as.
    pub fn project_id(&self) -> &str {
        &self.project_id
    }

    /// `getUserInfo`: the profile of the user `uuid`, proven by the user's session `token`.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] for a malformed uuid or an empty token (before any request);
    /// [`ErrorKind::Authentication`] for bad project credentials or a wrong/expired token;
    /// [`ErrorKind::NotFound`] for an unknown user; see `docs/user-rpc.md` for the rest.
    pub fn get_user_info(&self, uuid: &str, token: &str) -> Result<User> {
        check_uuid(uuid)?;
        if token.is_empty() {
            return Err(Error::configuration("session token is empty"));
        }
        let result = self.call("getUserInfo", [uuid, token])?;
        User::from_result("getUserInfo", result)
    }

    /// `getUserInfoByIdentity`: the profile of the user with identity `uid` at `provider`.
    /// Only the provider `jwt` exists.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] for a provider other than `jwt` or an empty uid;
    /// [`ErrorKind::NotFound`] when no user has that identity.
    pub fn get_user_info_by_identity(&self, provider: &str, uid: &str) -> Result<User> {
        if provider != "jwt" {
            return Err(Error::configuration(format!(
                "unsupported identity provider {}: only \"jwt\" is supported",
                quote(provider)
            )));
        }
        if uid.is_empty() {
            return Err(Error::configuration("identity uid is empty"));
        }
        let result = self.call("getUserInfoByIdentity", [provider, uid])?;
        User::from_result("getUserInfoByIdentity", result)
    }

    /// `isProjectUser`: whether `address` on the chain family `chain` (`solana` or
    /// `evm_chain`) belongs to or has interacted with the project.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] for another chain family or an address invalid for it.
    pub fn is_project_user(&self, chain: &str, address: &str) -> Result<bool> {
        let problem = match chain {
            "evm_chain" => evm_address_problem(address),
            "solana" => solana_address_problem(address),
            other => {
                return Err(Error::configuration(format!(
                    "unsupported chain {}: expected \"solana\" or \"evm_chain\"",
                    quote(other)
                )));
            }
        };
        if let Some(reason) = problem {
            return Err(Error::configuration(format!(
                "invalid {chain} address {}: {reason}",
                quote(address)
            )));
        }
        project_user_answer(self.call("isProjectUser", [chain, address])?)
    }

    /// Sends one JSON-RPC request and returns its `result`, or the error it carries.
    fn call(&self, method: &str, params: [&str; 2]) -> Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let headers = [
            ("Authorization", self.auth.0.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ];
        let reply = self.http.post(&self.base_url, &headers, &body)?;
        self.interpret(method, id, reply)
    }

    fn interpret(&self, method: &str, id: u64, reply: Reply) -> Result<Value> {
        interpret_reply(&self.project_id, method, id, reply.status, &reply.body)
    }
}

/// What a call of `method` with request id `id`, made as project `project_id`, makes of the
/// HTTP answer `status` with `body`: the JSON-RPC `result`, or the error it stands for.
///
/// Pure: the parsing entry point of the fuzz targets (`fuzz/`), not part of the API.
#[doc(hidden)]
pub fn interpret_reply(
    project_id: &str,
    method: &str,
    id: u64,
    status: u16,
    body: &str,
) -> Result<Value> {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let rpc_error =
        parsed.as_ref().and_then(|v| v.get("error")).and_then(RpcErrorObject::from_json);
    if status == 401 || status == 403 {
        let detail = rpc_error.map(|e| format!(": {}", e.message)).unwrap_or_default();
        return Err(Error::new(
            ErrorKind::Authentication,
            format!(
                "{method}: the service rejected the credentials of project {} (HTTP {status}{detail})",
                quote(project_id)
            ),
        ));
    }
    let Some(envelope) = parsed else {
        return Err(Error::new(
            ErrorKind::Protocol,
            format!("{method}: HTTP {status} response is not JSON: {}", quote(body.trim())),
        ));
    };
    let Some(object) = envelope.as_object() else {
        return Err(protocol(
            method,
            format!("the response is {}, not an object", json_kind(&envelope)),
        ));
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(protocol(method, "the response lacks \"jsonrpc\": \"2.0\"".into()));
    }
    if let Some(error) = object.get("error") {
        let Some(error) = RpcErrorObject::from_json(error) else {
            return Err(protocol(
                method,
                format!("malformed error object {}", quote(&error.to_string())),
            ));
        };
        return Err(Error::rpc(rpc_kind(error.code), method, error));
    }
    match object.get("id") {
        Some(Value::Number(n)) if n.as_u64() == Some(id) => {}
        Some(other) => {
            return Err(protocol(
                method,
                format!("response id {other} does not match request id {id}"),
            ));
        }
        None => return Err(protocol(method, "the response has no id".into())),
    }
    if status != 200 {
        return Err(protocol(method, format!("unexpected HTTP {status} with a result")));
    }
    object
        .get("result")
        .cloned()
        .ok_or_else(|| protocol(method, "the response has neither result nor error".into()))
}

/// `isProjectUser`'s `result` as its answer.
///
/// Pure: a parsing entry point of the fuzz targets (`fuzz/`), not part of the API.
#[doc(hidden)]
pub fn project_user_answer(result: Value) -> Result<bool> {
    match result {
        Value::Bool(answer) => Ok(answer),
        other => Err(Error::new(
            ErrorKind::Protocol,
            format!("isProjectUser returned {} where a boolean was expected", json_kind(&other)),
        )),
    }
}

/// The `result` of `getUserInfo` or `getUserInfoByIdentity` (`method`) as a [`User`].
///
/// Pure: a parsing entry point of the fuzz targets (`fuzz/`), not part of the API.
#[doc(hidden)]
pub fn user_from_result(method: &str, result: Value) -> Result<User> {
    User::from_result(method, result)
}

fn protocol(method: &str, what: String) -> Error {
    Error::new(ErrorKind::Protocol, format!("{method}: malformed JSON-RPC response: {what}"))
}

fn rpc_kind(code: i64) -> ErrorKind {
    match code {
        codes::UNAUTHORIZED | codes::INVALID_TOKEN => ErrorKind::Authentication,
        codes::USER_NOT_FOUND | codes::IDENTITY_NOT_FOUND => ErrorKind::NotFound,
        _ => ErrorKind::Rpc,
    }
}

/// Checks the canonical 8-4-4-4-12 hex form of a UUID.
fn check_uuid(uuid: &str) -> Result<()> {
    let canonical = uuid.len() == 36 && uuid::Uuid::try_parse(uuid).is_ok();
    if canonical {
        Ok(())
    } else {
        Err(Error::configuration(format!(
            "invalid user uuid {}: expected 8-4-4-4-12 hex digits",
            quote(uuid)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> UserRpcClient {
        UserRpcClient::new(
            "http://127.0.0.1:9/user-rpc",
            "proj",
            "sk_secret",
            UserRpcClientOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn debug_never_shows_the_key() {
        let text = format!("{:?}", client());
        assert!(!text.contains("sk_secret"), "{text}");
        assert!(
            !text.contains(&base64::engine::general_purpose::STANDARD.encode("proj:sk_secret"))
        );
        assert!(text.contains("<redacted>"));
    }

    #[test]
    fn constructor_rejects_bad_config() {
        let o = UserRpcClientOptions::default;
        let e = UserRpcClient::new("ftp://x", "p", "k", o()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration);
        assert!(e.message().contains("ftp://x"));
        let e = UserRpcClient::new("http://me:sk_secret@host/", "p", "k", o()).unwrap_err();
        assert!(!e.message().contains("sk_secret"), "{e}");
        assert!(UserRpcClient::new("http://h/", "", "k", o()).is_err());
        assert!(
            UserRpcClient::new("http://h/", "a:b", "k", o())
                .unwrap_err()
                .message()
                .contains("\"a:b\"")
        );
        assert!(UserRpcClient::new("http://h/", "p", "", o()).is_err());
        assert!(UserRpcClient::new("http:///x", "p", "k", o()).is_err());
    }

    #[test]
    fn arguments_are_checked_before_any_request() {
        // Port 9 (discard) on loopback is closed: reaching the network would be a Network error.
        let c = client();
        let e = c.get_user_info("not-a-uuid", "tok").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration);
        assert!(e.message().contains("\"not-a-uuid\""));
        let e = c.get_user_info("0b0c1a9e8f7d4e3a9b2c1d0e9f8a7b6c", "tok").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration, "the hyphen-less form is not accepted");
        let e = c.get_user_info("0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c", "").unwrap_err();
        assert_eq!(e.message(), "session token is empty");
        let e = c.get_user_info_by_identity("google", "u1").unwrap_err();
        assert!(e.message().contains("\"google\""));
        let e = c.is_project_user("bitcoin", "x").unwrap_err();
        assert!(e.message().contains("\"bitcoin\""));
        let e = c.is_project_user("evm_chain", "0x123").unwrap_err();
        assert!(e.message().contains("\"0x123\""), "{e}");
        let e =
            c.is_project_user("solana", "0x52908400098527886E0F7030069857D2E4169EE7").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration);
    }

    #[test]
    fn interprets_envelopes() {
        let c = client();
        let reply = |status, body: &str| Reply { status, body: body.into() };
        let ok = c.interpret(
            "isProjectUser",
            5,
            reply(200, r#"{"jsonrpc":"2.0","id":5,"result":true}"#),
        );
        assert_eq!(ok.unwrap(), Value::Bool(true));
        let e = c
            .interpret("m", 5, reply(200, r#"{"jsonrpc":"2.0","id":6,"result":true}"#))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(e.message().contains("response id 6 does not match request id 5"), "{e}");
        let e = c.interpret("m", 5, reply(200, "<html>")).unwrap_err();
        assert!(e.message().contains("not JSON"), "{e}");
        let body = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32010,"message":"user x not found","data":{"uuid":"x"}}}"#;
        let e = c.interpret("getUserInfo", 5, reply(200, body)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        let rpc = e.rpc_error().unwrap();
        assert_eq!((rpc.code, rpc.message.as_str()), (-32010, "user x not found"));
        assert_eq!(rpc.data, Some(json!({"uuid": "x"})));
        let body =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"unauthorized"}}"#;
        let e = c.interpret("getUserInfo", 5, reply(401, body)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication);
        let body = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad params"}}"#;
        assert_eq!(c.interpret("m", 5, reply(200, body)).unwrap_err().kind(), ErrorKind::Rpc);
    }

    #[test]
    fn user_records() {
        let mut record = json!({
            "uuid": "0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c", "email": "a@b.c", "phone": null,
            "createdAt": "2022-06-08T07:47:54.000Z", "updatedAt": "2022-06-08T07:47:54.000Z",
            "wallets": [{"chain": "evm_chain", "publicAddress": "0x52908400098527886E0F7030069857D2E4169EE7"}],
            "someFutureField": 1
        });
        let user = User::from_result("getUserInfo", record.clone()).unwrap();
        assert_eq!(user.created_at, "2022-06-08T07:47:54.000Z");
        assert_eq!(user.created_at_time().unwrap().timestamp_millis(), 1_654_674_474_000);
        assert_eq!(user.wallets[0].public_address, "0x52908400098527886E0F7030069857D2E4169EE7");
        assert_eq!(user.to_json()["createdAt"], "2022-06-08T07:47:54.000Z");
        record.as_object_mut().unwrap().remove("email");
        let e = User::from_result("getUserInfo", record.clone()).unwrap_err();
        assert!(e.message().contains("missing field `email`"), "{e}");
        record["email"] = json!("a@b.c");
        record["createdAt"] = json!("yesterday");
        let e = User::from_result("getUserInfo", record).unwrap_err();
        assert!(e.message().contains("createdAt \"yesterday\""), "{e}");
    }
}
