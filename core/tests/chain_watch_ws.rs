//! The chain watcher on websocket endpoints (`ws://`; anvil serves JSON-RPC over websockets on
//! its port): new heads by `eth_subscribe` wake it (transfers are reported although it would
//! look on its own only once a minute), a socket that dies is opened and subscribed again, and
//! an endpoint that refuses subscriptions is polled over its socket.

mod chains_support;
mod watch_support;

use std::net::TcpListener;
use std::time::Duration;

use alloy_primitives::{Address, U256};
use chains_support::{chains, fresh_seed};
use depositkit_core::TokenType;
use depositkit_core::chain::evm::EvmRpc;
use depositkit_core::chain::watch::WatchSettings;
use depositkit_core::chain::watch::signal::ChainSignal;
use serde_json::{Value, json};
use tungstenite::Message;
use watch_support::{Relay, Signals, fast, included, watcher};

/// A fresh address nobody used.
fn fresh_address() -> String {
    format!("{:#x}", Address::from_slice(&fresh_seed()[12..]))
}

/// The websocket URL of an `http://` endpoint on the same port.
fn ws(url: &str) -> String {
    url.replacen("http://", "ws://", 1)
}

/// Settings under which only a subscription reports a transfer within the tests' 20 s: the
/// watcher's own looks (and its backoff) are a minute apart.
fn subscribed_only() -> WatchSettings {
    WatchSettings {
        poll_interval: Duration::from_secs(60),
        subscribed_poll_interval: Duration::from_secs(60),
        max_backoff: Duration::from_secs(60),
        ..fast()
    }
}

fn send_native(node: &EvmRpc, from: &str, to: &str, wei: u64) -> String {
    let tx = json!({"from": from, "to": to, "value": format!("{wei:#x}")});
    node.send_transaction(&tx).unwrap().to_string()
}

fn no_down(signals: &Signals) {
    let down = signals.position(|s| matches!(s, ChainSignal::Down { .. }));
    assert!(down.is_none(), "{:#?}", signals.seen);
}

#[test]
fn transfers_are_reported_through_the_new_heads_subscription() {
    let chains = chains();
    let node = chains.evm(8453);
    let (watcher, mut signals) = watcher(8453, &ws(&chains.evm_url(8453)), subscribed_only());
    let address = fresh_address();
    watcher.watch([address.as_str()]).unwrap();
    signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));

    let sender = chains.dev_account(5);
    let native_tx = send_native(&node, &sender, &address, 3_000_000_000_000_000);
    let native = signals.wait_for("the native transfer", |s| included(s, &native_tx));
    let ChainSignal::Included(native) = native else { unreachable!() };
    assert_eq!((native.to.as_str(), native.token), (address.as_str(), Some(TokenType::ETH)));
    assert_eq!(native.raw_amount, U256::from(3_000_000_000_000_000u64));

    let usdc = chains.token(8453, "USDC");
    chains.mint_erc20(8453, &usdc, &sender, &address, U256::from(1_250_000u64));
    let token = signals.wait_for(
        "the USDC transfer",
        |s| matches!(s, ChainSignal::Included(seen) if seen.contract.is_some()),
    );
    let ChainSignal::Included(token) = token else { unreachable!() };
    assert_eq!((token.token, token.raw_amount), (Some(TokenType::USDC), U256::from(1_250_000u64)));
    no_down(&signals);
}

#[test]
fn a_socket_that_dies_is_opened_and_subscribed_again() {
    let chains = chains();
    let node = chains.evm(1);
    let relay = Relay::new(&chains.evm_url(1));
    let (watcher, mut signals) = watcher(1, &ws(&relay.url), subscribed_only());
    let address = fresh_address();
    watcher.watch([address.as_str()]).unwrap();
    signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));
    let sender = chains.dev_account(6);
    let before = send_native(&node, &sender, &address, 1_000);
    signals.wait_for("the transfer before the socket died", |s| included(s, &before));

    relay.reset();
    let after = send_native(&node, &sender, &address, 2_000);
    let seen = signals.wait_for("the transfer after", |s| included(s, &after));
    let ChainSignal::Included(seen) = seen else { unreachable!() };
    assert_eq!(seen.raw_amount, U256::from(2_000u64));
}

/// A websocket JSON-RPC endpoint without subscriptions, as some providers are: each request is
/// answered by the node behind it (over HTTP), `eth_subscribe` with "method not found".
fn endpoint_without_subscriptions(node_url: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let node_url = node_url.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let node_url = node_url.clone();
            std::thread::spawn(move || {
                let Ok(mut socket) = tungstenite::accept(stream) else { return };
                while let Ok(message) = socket.read() {
                    let Message::Text(text) = message else { continue };
                    let request: Value = serde_json::from_str(text.as_str()).unwrap();
                    let answer = if request["method"] == "eth_subscribe" {
                        json!({"jsonrpc": "2.0", "id": request["id"],
                            "error": {"code": -32601, "message": "the method eth_subscribe does not exist/is not available"}})
                    } else {
                        ureq::post(&node_url)
                            .send_json(&request)
                            .unwrap()
                            .body_mut()
                            .read_json::<Value>()
                            .unwrap()
                    };
                    if socket.send(Message::text(answer.to_string())).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

#[test]
fn an_endpoint_without_subscriptions_is_polled() {
    let chains = chains();
    let node = chains.evm(56);
    let url = endpoint_without_subscriptions(&chains.evm_url(56));
    let settings = WatchSettings {
        poll_interval: Duration::from_millis(50),
        subscribed_poll_interval: Duration::from_secs(60),
        ..fast()
    };
    let (watcher, mut signals) = watcher(56, &url, settings);
    let address = fresh_address();
    watcher.watch([address.as_str()]).unwrap();
    signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));
    let tx = send_native(&node, &chains.dev_account(7), &address, 4_000);
    signals.wait_for("the transfer, by polling", |s| included(s, &tx));
    no_down(&signals);
}
