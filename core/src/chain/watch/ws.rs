//! JSON-RPC over a websocket (`ws://`, or `wss://` with TLS by rustls and the webpki roots):
//! requests answered by their id on the same socket as the `eth_subscribe` notifications that
//! wake the watcher. Blocking, for the watcher's own thread: the socket is read in slices of
//! [`READ_SLICE`] so that a wait for a notification also notices a stop or a wake-up.
//!
//! The socket is opened at the first request and again after it died (a request that found it
//! dead is made again on a new socket; when that fails too, the runner reports
//! [`Down`](super::signal::ChainSignal::Down) and backs off); a subscription is made again on
//! each new socket. An endpoint that answers
//! `eth_subscribe` with a JSON-RPC error does not offer subscriptions: that is remembered, and
//! the watcher polls over the same socket.

use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::HandshakeError;
use tungstenite::{Message, WebSocket};

use super::runner::{Control, Interrupt};
use super::ws_stream::WsStream;
use crate::chain::rpc::origin;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result, RpcErrorObject};

/// How long one read of the socket blocks at most.
pub(super) const READ_SLICE: Duration = Duration::from_millis(20);

type Socket = WebSocket<WsStream>;

/// Whether the endpoint follows new heads for us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Heads {
    /// Not asked on this socket yet.
    Unknown,
    /// Subscribed under this id.
    Subscribed(String),
    /// The endpoint answered `eth_subscribe` with an error: poll instead.
    Refused,
}

/// What a [`WsRpc::wait`] ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Woken {
    /// A notification came, the handle asked for a look, the wait's end came, or the socket
    /// died (the next request finds out): step now.
    Step,
    /// The watcher is stopping.
    Stop,
}

/// One websocket JSON-RPC endpoint.
pub(super) struct WsRpc {
    url: String,
    shown: String,
    timeout: Duration,
    conn: Mutex<Conn>,
}

impl std::fmt::Debug for WsRpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WsRpc").field("endpoint", &self.shown).finish_non_exhaustive()
    }
}

struct Conn {
    socket: Option<Socket>,
    next_id: u64,
    heads: Heads,
    /// A notification came since the last wait.
    notified: bool,
}

impl WsRpc {
    /// An endpoint at `url` (`ws://` or `wss://`), not connected yet; `timeout` bounds the
    /// connection and each request.
    pub(super) fn new(url: &str, timeout: Duration) -> Self {
        WsRpc {
            url: url.to_owned(),
            shown: origin(url),
            timeout,
            conn: Mutex::new(Conn {
                socket: None,
                next_id: 1,
                heads: Heads::Unknown,
                notified: false,
            }),
        }
    }

    fn conn(&self) -> MutexGuard<'_, Conn> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Calls `method` with `params` and waits for its answer (notifications meanwhile are
    /// noted for [`wait`](WsRpc::wait)).
    ///
    /// # Errors
    /// [`ErrorKind::Rpc`] when the node answers a JSON-RPC error; [`ErrorKind::Network`] when
    /// the socket cannot be opened or died (it is opened again at the next call);
    /// [`ErrorKind::Timeout`] when no answer came in time; [`ErrorKind::Protocol`] for an
    /// answer that is not JSON-RPC.
    pub(super) fn request(&self, method: &str, params: Value) -> Result<Value> {
        let mut conn = self.conn();
        let deadline = Instant::now() + self.timeout;
        // A socket found dead is opened again once at once: the watcher's requests are reads.
        let mut fresh = false;
        loop {
            if conn.socket.is_none() {
                conn.socket = Some(self.open(deadline)?);
                fresh = true;
                if conn.heads != Heads::Refused {
                    conn.heads = Heads::Unknown;
                }
            }
            let id = conn.next_id;
            conn.next_id += 1;
            let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            let answer = self.exchange(&mut conn, method, id, &body.to_string(), deadline);
            match &answer {
                Err(e) if e.kind() != ErrorKind::Rpc => {
                    conn.socket = None; // a half-read answer would confuse the next request
                    if e.kind() == ErrorKind::Network && !fresh {
                        continue;
                    }
                }
                _ => {}
            }
            return answer;
        }
    }

    /// Subscribes to new heads on the current socket unless done (or refused) already;
    /// `true` while subscribed.
    ///
    /// # Errors
    /// As [`request`](WsRpc::request), except a JSON-RPC error: that is a refusal.
    pub(super) fn follow_heads(&self) -> Result<bool> {
        match self.heads() {
            Heads::Subscribed(_) => return Ok(true),
            Heads::Refused => return Ok(false),
            Heads::Unknown => {}
        }
        match self.request("eth_subscribe", json!(["newHeads"])) {
            Ok(id) => {
                let id = id.as_str().map_or_else(|| id.to_string(), str::to_owned);
                self.conn().heads = Heads::Subscribed(id);
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::Rpc => {
                tracing::info!(
                    endpoint = %self.shown,
                    reason = e.message(),
                    "the chain endpoint offers no subscriptions; the watcher polls it"
                );
                self.conn().heads = Heads::Refused;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Whether heads are followed by subscription on the open socket.
    pub(super) fn heads(&self) -> Heads {
        let conn = self.conn();
        match (&conn.socket, &conn.heads) {
            (None, Heads::Subscribed(_)) => Heads::Unknown,
            (_, heads) => heads.clone(),
        }
    }

    /// Waits until a notification comes (or came since the last wait), `control` asks for a
    /// look or a stop, or `longest` passed.
    pub(super) fn wait(&self, control: &Control, longest: Duration) -> Woken {
        let deadline = Instant::now() + longest;
        loop {
            match control.interrupt() {
                Some(Interrupt::Stop) => return Woken::Stop,
                Some(Interrupt::Wake) => return Woken::Step,
                None => {}
            }
            let mut conn = self.conn();
            if std::mem::take(&mut conn.notified) || Instant::now() >= deadline {
                return Woken::Step;
            }
            let Some(socket) = conn.socket.as_mut() else { return Woken::Step };
            match socket.read() {
                Ok(message) => {
                    if let Some(value) = json_of(&message) {
                        conn.notified |= is_notification(&value);
                    }
                }
                Err(e) if is_timeout(&e) => {}
                Err(e) => {
                    tracing::info!(endpoint = %self.shown, error = %e, "the chain endpoint's websocket closed");
                    conn.socket = None;
                    return Woken::Step;
                }
            }
        }
    }

    /// Opens a socket: TCP with the connection timeout, then the websocket handshake (TLS
    /// first for `wss://`).
    fn open(&self, deadline: Instant) -> Result<Socket> {
        let request = self.url.as_str().into_client_request().map_err(|e| {
            Error::configuration(format!("not a websocket URL: {} ({e})", quote(&self.shown)))
        })?;
        let uri = request.uri();
        let host = uri.host().unwrap_or_default().trim_matches(['[', ']']).to_owned();
        let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("wss") { 443 } else { 80 });
        let unreachable = |why: String| {
            Error::new(ErrorKind::Network, format!("cannot reach {}: {why}", self.shown))
        };
        let address = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| unreachable(e.to_string()))?
            .next()
            .ok_or_else(|| unreachable("the host has no address".into()))?;
        let left = deadline.saturating_duration_since(Instant::now()).max(READ_SLICE);
        let stream =
            TcpStream::connect_timeout(&address, left).map_err(|e| unreachable(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        stream.set_read_timeout(Some(READ_SLICE)).map_err(|e| unreachable(e.to_string()))?;
        stream.set_write_timeout(Some(self.timeout)).map_err(|e| unreachable(e.to_string()))?;
        let stream = WsStream::new(stream, uri.scheme_str() == Some("wss"), &host)?;
        let mut handshake = tungstenite::client(request, stream);
        loop {
            match handshake {
                Ok((socket, _)) => return Ok(socket),
                Err(HandshakeError::Interrupted(mid)) if Instant::now() < deadline => {
                    handshake = mid.handshake();
                }
                Err(HandshakeError::Interrupted(_)) => {
                    return Err(Error::new(
                        ErrorKind::Timeout,
                        format!("the websocket handshake with {} took too long", self.shown),
                    ));
                }
                Err(HandshakeError::Failure(e)) => {
                    return Err(unreachable(format!("the websocket handshake failed: {e}")));
                }
            }
        }
    }

    /// Sends `body` and reads until the answer with `id` comes.
    fn exchange(
        &self,
        conn: &mut Conn,
        method: &str,
        id: u64,
        body: &str,
        deadline: Instant,
    ) -> Result<Value> {
        let closed = |e: tungstenite::Error| {
            Error::new(
                ErrorKind::Network,
                format!("{method}: the websocket to {} closed: {e}", self.shown),
            )
        };
        let Some(socket) = conn.socket.as_mut() else {
            return Err(closed(tungstenite::Error::AlreadyClosed));
        };
        socket.send(Message::text(body)).map_err(closed)?;
        loop {
            if Instant::now() >= deadline {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!("{method}: {} did not answer in time", self.shown),
                ));
            }
            let message = match socket.read() {
                Ok(message) => message,
                Err(e) if is_timeout(&e) => continue,
                Err(e) => return Err(closed(e)),
            };
            let Some(mut value) = json_of(&message) else { continue };
            if is_notification(&value) {
                conn.notified = true;
                continue;
            }
            if value.get("id").and_then(Value::as_u64) != Some(id) {
                continue; // an answer to a request that timed out earlier
            }
            return self.answer(method, &mut value);
        }
    }

    fn answer(&self, method: &str, value: &mut Value) -> Result<Value> {
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            return Err(match RpcErrorObject::from_json(error) {
                Some(object) => Error::rpc(ErrorKind::Rpc, method, object),
                None => Error::new(
                    ErrorKind::Protocol,
                    format!("{method} at {}: malformed JSON-RPC error {error}", self.shown),
                ),
            });
        }
        value.get_mut("result").map(Value::take).ok_or_else(|| {
            Error::new(
                ErrorKind::Protocol,
                format!(
                    "{method}: {} answered something that is not JSON-RPC: {}",
                    self.shown,
                    quote(&value.to_string())
                ),
            )
        })
    }
}

/// The JSON of a text or binary message (`None` for control frames and non-JSON).
fn json_of(message: &Message) -> Option<Value> {
    match message {
        Message::Text(text) => serde_json::from_str(text.as_str()).ok(),
        Message::Binary(bytes) => serde_json::from_slice(bytes).ok(),
        _ => None,
    }
}

/// An `eth_subscription` notification (of any subscription: each is a reason to look).
fn is_notification(value: &Value) -> bool {
    value.get("method").and_then(Value::as_str) == Some("eth_subscription")
}

/// A read that found nothing within [`READ_SLICE`].
fn is_timeout(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io)
        if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_told_from_answers() {
        let note = json!({"jsonrpc": "2.0", "method": "eth_subscription",
            "params": {"subscription": "0x1", "result": {"number": "0x2"}}});
        assert!(is_notification(&note));
        assert!(!is_notification(&json!({"jsonrpc": "2.0", "id": 1, "result": "0x1"})));
        assert_eq!(json_of(&Message::text(note.to_string())), Some(note));
        assert_eq!(json_of(&Message::Ping(Vec::new().into())), None);
    }

    #[test]
    fn an_unreachable_endpoint_is_a_network_error_without_its_path() {
        let rpc = WsRpc::new("ws://127.0.0.1:1/SECRET", Duration::from_secs(2));
        let err = rpc.request("eth_blockNumber", json!([])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Network, "{err}");
        assert!(
            !err.message().contains("SECRET") && err.message().contains("127.0.0.1:1"),
            "{err}"
        );
    }
}
