//! The endpoint an EVM chain's watcher talks to, by its URL's scheme: JSON-RPC over HTTP
//! (`http://`, `https://`), polled every `poll_interval`; or over a websocket (`ws://`,
//! `wss://`), where the watcher subscribes to new heads (`eth_subscribe`) and steps at each
//! one — and polls over the same socket when the endpoint refuses subscriptions. Either way a
//! step reads the chain the same way (blocks, `eth_getLogs`, receipts), so reorgs are found by
//! the same code.

use std::time::Duration;

use serde_json::Value;

use super::WatchSettings;
use super::runner::Control;
use super::ws::{Heads, Woken, WsRpc};
use crate::chain::evm::EvmRpc;
use crate::error::Result;

/// Whether `url` names a websocket endpoint.
pub(super) fn is_websocket(url: &str) -> bool {
    url.starts_with("ws://") || url.starts_with("wss://")
}

/// An EVM chain's endpoint.
#[derive(Debug)]
pub(super) enum Transport {
    Http(EvmRpc),
    Ws(Box<WsRpc>),
}

impl Transport {
    pub(super) fn new(url: &str, settings: &WatchSettings) -> Self {
        if is_websocket(url) {
            Transport::Ws(Box::new(WsRpc::new(url, settings.http.timeout)))
        } else {
            Transport::Http(EvmRpc::new(url, &settings.http))
        }
    }

    /// Calls `method` with `params`.
    ///
    /// # Errors
    /// As [`EvmRpc::request`].
    pub(super) fn request(&self, method: &str, params: Value) -> Result<Value> {
        match self {
            Transport::Http(rpc) => rpc.request(method, params),
            Transport::Ws(rpc) => rpc.request(method, params),
        }
    }

    /// Before a step: on a websocket, subscribes to new heads (again after a reconnection)
    /// unless the endpoint refused. `true` while heads come by subscription.
    ///
    /// # Errors
    /// The socket cannot be opened or died.
    pub(super) fn follow_heads(&self) -> Result<bool> {
        match self {
            Transport::Http(_) => Ok(false),
            Transport::Ws(rpc) => rpc.follow_heads(),
        }
    }

    /// The pause after a step that caught up: until the next head by subscription (at most
    /// `settings.subscribed_poll_interval`), else `settings.poll_interval`; shorter when
    /// woken; none when the socket was opened again and is not subscribed yet. `false` once
    /// stopped.
    pub(super) fn pause(&self, control: &Control, settings: &WatchSettings) -> bool {
        match self {
            Transport::Http(_) => control.pause(settings.poll_interval),
            Transport::Ws(rpc) => {
                let longest = match rpc.heads() {
                    Heads::Subscribed(_) => settings.subscribed_poll_interval,
                    Heads::Refused => settings.poll_interval,
                    // The socket was opened again during the step: subscribe in the next.
                    Heads::Unknown => return true,
                };
                rpc.wait(control, longest.max(Duration::from_millis(1))) == Woken::Step
            }
        }
    }
}
