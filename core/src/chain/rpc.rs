//! JSON-RPC 2.0 over HTTP POST, the transport of [`EvmRpc`](super::evm::EvmRpc) and
//! [`SolanaRpc`](super::solana::SolanaRpc).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result, RpcErrorObject};
use crate::http::{JsonPoster, Reply};
use crate::services::HttpSettings;

/// A JSON-RPC 2.0 client of one node URL.
///
/// Thread-safe; keeps connections alive. Reads ([`request`](JsonRpcClient::request)) are
/// retried on 429, 5xx, refused connections and timeouts; sends
/// ([`request_once`](JsonRpcClient::request_once)) are made exactly once, because repeating
/// `eth_sendTransaction` on an unlocked node would send a second transaction.
#[derive(Debug)]
pub struct JsonRpcClient {
    url: String,
    shown: String,
    http: JsonPoster,
    next_id: AtomicU64,
}

impl JsonRpcClient {
    /// A client of the node at `url`. The URL is checked when the first request is made.
    pub fn new(url: &str, settings: &HttpSettings) -> Self {
        JsonRpcClient {
            url: url.to_owned(),
            shown: origin(url),
            http: JsonPoster::new(settings.timeout, &settings.user_agent, settings.retry),
            next_id: AtomicU64::new(1),
        }
    }

    /// The node's URL, exactly as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL as messages show it: scheme and host only, since a path often holds an API key.
    pub fn display_url(&self) -> &str {
        &self.shown
    }

    /// Calls `method` with `params` (an array or object), retrying transient failures.
    ///
    /// # Errors
    /// [`ErrorKind::Rpc`] when the node answers a JSON-RPC error (the message names the method
    /// and the node's message); [`ErrorKind::Network`] / [`ErrorKind::Timeout`] when it cannot
    /// be reached; [`ErrorKind::Protocol`] for an answer that is not JSON-RPC.
    pub fn request(&self, method: &str, params: Value) -> Result<Value> {
        let body = self.body(method, params);
        let reply = self.http.post(&self.url, &JSON_HEADERS, &body).map_err(|e| self.redact(e))?;
        self.answer(method, reply)
    }

    /// Calls `method` exactly once: for requests that must not be repeated blindly
    /// (`eth_sendTransaction`, `sendTransaction`). A transport failure says whether the request
    /// may have reached the node.
    ///
    /// # Errors
    /// As [`request`](JsonRpcClient::request).
    pub fn request_once(&self, method: &str, params: Value) -> Result<Value> {
        let body = self.body(method, params);
        match self.http.post_once(&self.url, &JSON_HEADERS, &body) {
            Ok(reply) => self.answer(method, reply),
            Err(failure) => {
                let e = self.redact(failure.error);
                let note = if failure.maybe_sent {
                    "; the request may have reached the node"
                } else {
                    "; the request was not sent"
                };
                Err(Error::new(e.kind(), format!("{method}: {}{note}", e.message())))
            }
        }
    }

    fn body(&self, method: &str, params: Value) -> String {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    }

    pub(crate) fn answer(&self, method: &str, reply: Reply) -> Result<Value> {
        let parsed: Option<Value> = serde_json::from_str(&reply.body).ok();
        if let Some(Value::Object(mut object)) = parsed {
            if let Some(error) = object.get("error").filter(|e| !e.is_null()) {
                let Some(error) = RpcErrorObject::from_json(error) else {
                    return Err(Error::new(
                        ErrorKind::Protocol,
                        format!("{method} at {}: malformed JSON-RPC error {error}", self.shown),
                    ));
                };
                return Err(Error::rpc(ErrorKind::Rpc, method, error));
            }
            if let Some(result) = object.remove("result") {
                return Ok(result);
            }
        }
        if !(200..300).contains(&reply.status) {
            return Err(Error::new(
                ErrorKind::Network,
                format!("{method}: {} answered HTTP {}", self.shown, reply.status),
            ));
        }
        Err(Error::new(
            ErrorKind::Protocol,
            format!(
                "{method}: {} answered something that is not JSON-RPC: {}",
                self.shown,
                quote(reply.body.trim())
            ),
        ))
    }

    /// The transport's messages name the URL; show only its origin.
    fn redact(&self, e: Error) -> Error {
        if self.url == self.shown || !e.message().contains(&self.url) {
            return e;
        }
        Error::new(e.kind(), e.message().replace(&self.url, &self.shown))
    }
}

const JSON_HEADERS: [(&str, &str); 1] = [("Content-Type", "application/json")];

/// `scheme://host[:port]`, with `/…` when the URL has a path or query, and without user info.
pub(crate) fn origin(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme, rest),
        None => return "<invalid URL>".to_owned(),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let tail = &rest[end..];
    if tail.is_empty() || tail == "/" {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}/…")
    }
}

/// The first pause of a wait (for a receipt, a signature's status): a local or fast chain has
/// the answer within milliseconds, so a fixed 100 ms step would be most of the wait.
const FIRST_POLL_PAUSE: Duration = Duration::from_millis(5);
/// The longest pause between two asks: the pause doubles up to this, sparing a slow chain's node.
const MAX_POLL_PAUSE: Duration = Duration::from_millis(200);

/// Asks `poll` until it finds something — at once, then after pauses doubling from
/// [`FIRST_POLL_PAUSE`] to [`MAX_POLL_PAUSE`] — or fails with the error `late` builds once
/// `deadline` has passed. An error of `poll` ends the wait.
pub(crate) fn poll_until<T>(
    deadline: Instant,
    mut poll: impl FnMut() -> Result<Option<T>>,
    late: impl FnOnce() -> Error,
) -> Result<T> {
    let mut pause = FIRST_POLL_PAUSE;
    loop {
        if let Some(found) = poll()? {
            return Ok(found);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(MAX_POLL_PAUSE);
    }
}

/// Parses a JSON-RPC quantity (`"0x1a"`) as a `u64`.
pub(crate) fn quantity_u64(method: &str, value: &Value) -> Result<u64> {
    let text = value.as_str().ok_or_else(|| malformed(method, "a hex quantity", value))?;
    let digits =
        text.strip_prefix("0x").ok_or_else(|| malformed(method, "a hex quantity", value))?;
    u64::from_str_radix(digits, 16).map_err(|_| malformed(method, "a hex quantity", value))
}

/// A [`ErrorKind::Protocol`] error: `method` answered `value` where `expected` was due.
pub(crate) fn malformed(method: &str, expected: &str, value: &Value) -> Error {
    Error::new(
        ErrorKind::Protocol,
        format!("{method} answered {} where {expected} was expected", quote(&value.to_string())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_hides_paths_and_user_info() {
        assert_eq!(origin("http://127.0.0.1:8545"), "http://127.0.0.1:8545");
        assert_eq!(origin("http://127.0.0.1:8545/"), "http://127.0.0.1:8545");
        assert_eq!(origin("https://eth.example/v2/SECRET"), "https://eth.example/…");
        assert_eq!(origin("https://user:pw@eth.example?key=1"), "https://eth.example/…");
        assert_eq!(origin("nonsense"), "<invalid URL>");
    }

    #[test]
    fn quantities() {
        assert_eq!(quantity_u64("m", &json!("0x1a")).unwrap(), 26);
        assert_eq!(quantity_u64("m", &json!("0x0")).unwrap(), 0);
        assert_eq!(quantity_u64("m", &json!("26")).unwrap_err().kind(), ErrorKind::Protocol);
        assert_eq!(quantity_u64("m", &json!(26)).unwrap_err().kind(), ErrorKind::Protocol);
    }

    /// Serves `answers` in order, one HTTP response per connection, on a loopback port.
    fn canned(answers: Vec<(u16, &'static str)>) -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for (status, body) in answers {
                let (mut stream, _) = listener.accept().unwrap();
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let reply = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        url
    }

    #[test]
    fn answers_and_errors() {
        let url = canned(vec![
            (200, r#"{"jsonrpc":"2.0","id":1,"result":"0x2105"}"#),
            (
                200,
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"insufficient funds for gas"}}"#,
            ),
            (400, r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad params"}}"#),
            (200, r#"<html>"#),
        ]);
        let client = JsonRpcClient::new(&url, &HttpSettings::default());
        assert_eq!(client.request("eth_chainId", json!([])).unwrap(), json!("0x2105"));
        let err = client.request_once("eth_sendTransaction", json!([])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Rpc);
        assert_eq!(
            err.message(),
            "eth_sendTransaction failed: JSON-RPC error -32000: insufficient funds for gas"
        );
        assert_eq!(err.rpc_error().unwrap().code, -32000);
        let err = client.request("eth_call", json!([])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Rpc, "an error body is read whatever the status");
        let err = client.request("eth_call", json!([])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Protocol);
    }

    #[test]
    fn unreachable_node_is_a_network_error_without_the_path() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let settings = HttpSettings {
            retry: crate::http::RetryPolicy { max_retries: 0, ..Default::default() },
            ..HttpSettings::default()
        };
        let client = JsonRpcClient::new(&format!("http://127.0.0.1:{port}/v2/SECRET"), &settings);
        let err = client.request("eth_chainId", json!([])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Network, "{err}");
        assert!(!err.message().contains("SECRET"), "{err}");
        let err = client.request_once("eth_sendTransaction", json!([])).unwrap_err();
        assert!(!err.message().contains("SECRET"), "{err}");
        assert!(err.message().contains("was not sent"), "{err}");
    }
}
