//! The onramp through the client (`docs/funding.md` §5): the widget URL, overlay messages
//! becoming events and the last order, redirect mode, and the errors.

use std::time::Duration;

use depositkit_core::deposit::{
    DepositClient, DepositClientConfig, DepositEvent, DestinationConfig, OnrampMode,
};
use depositkit_core::onramp::OnrampEventName;
use depositkit_core::{ErrorKind, TokenType};
use serde_json::json;

const OWNER: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
const SOLANA_DEST: &str = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const PARTNER_KEY: &str = "pk_host_partner_secret";

fn client(
    destination: DestinationConfig,
    tune: impl FnOnce(&mut DepositClientConfig),
) -> DepositClient {
    let mut config =
        DepositClientConfig::new(OWNER, destination).with_services_url("http://127.0.0.1:1");
    config.onramp.enabled = true;
    tune(&mut config);
    DepositClient::new(config).unwrap()
}

fn query(url: &str) -> Vec<(String, String)> {
    let (_, query) = url.split_once('?').unwrap();
    query
        .split('&')
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

#[test]
fn the_widget_url_names_the_destination() {
    let client = client(DestinationConfig::chain(101).with_address(SOLANA_DEST), |c| {
        c.onramp.api_key = Some(PARTNER_KEY.into());
        c.onramp.widget_url = Some("http://127.0.0.1:7420/onramp/widget".into());
        c.onramp.fiat_currency = "EUR".into();
        c.onramp.payment_mode = Some("sepa".into());
    });
    assert!(client.is_onramp_supported().unwrap());
    let url = client.open_onramp(Some(120.0)).unwrap();
    assert!(url.starts_with("http://127.0.0.1:7420/onramp/widget?"), "{url}");
    let params = query(&url);
    let names: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "partnerKey",
            "walletAddress",
            "network",
            "cryptoCurrency",
            "fiatCurrency",
            "fiatAmount",
            "paymentMethod",
            "mode",
            "partnerOrderId"
        ]
    );
    let get = |k: &str| params.iter().find(|(n, _)| n == k).unwrap().1.clone();
    assert_eq!(get("partnerKey"), PARTNER_KEY);
    assert_eq!(get("walletAddress"), SOLANA_DEST);
    assert_eq!(get("network"), "solana");
    assert_eq!(get("cryptoCurrency"), "USDC");
    assert_eq!(get("fiatCurrency"), "EUR");
    assert_eq!(get("fiatAmount"), "120");
    assert_eq!(get("mode"), "overlay");
    assert_ne!(get("partnerOrderId"), query(&client.open_onramp(None).unwrap()).last().unwrap().1);
    assert!(!format!("{client:?}").contains(PARTNER_KEY));
    // Without an amount (and no default) there is no fiatAmount; bad amounts are refused.
    assert!(!client.open_onramp(None).unwrap().contains("fiatAmount"));
    for bad in [0.0, -5.0, f64::NAN] {
        assert_eq!(client.open_onramp(Some(bad)).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
}

#[test]
fn the_destination_token_is_bought_when_the_onramp_sells_it() {
    let eth = client(DestinationConfig::chain(1).with_token(TokenType::ETH), |_| {});
    assert!(eth.open_onramp(None).unwrap().contains("&network=ethereum&cryptoCurrency=ETH&"));
    let bridged = client(DestinationConfig::chain(56).with_token(TokenType::ETH), |_| {});
    let url = bridged.open_onramp(None).unwrap();
    assert!(url.contains("&network=bsc&cryptoCurrency=USDC&"), "{url}");
    assert!(url.starts_with(depositkit_core::deposit::DEFAULT_ONRAMP_WIDGET_URL), "{url}");
    assert!(
        url.contains(&format!(
            "partnerKey={}",
            depositkit_core::deposit::BUILTIN_ONRAMP_PARTNER_KEY
        ))
    );
}

#[test]
fn overlay_messages_become_events_and_the_last_order() {
    let client = client(DestinationConfig::chain(8453), |_| {});
    let order = json!({"id": "ord_42", "status": "completed", "cryptoAmount": "99.0",
                       "cryptoCurrency": "USDC", "walletAddress": OWNER.to_ascii_lowercase(),
                       "network": "base", "fiatAmount": 100, "fiatCurrency": "USD", "txHash": "0xabc"});
    assert_eq!(client.last_onramp_order().unwrap(), None);
    for name in ["widget_opened", "order_created", "order_processing", "order_completed"] {
        let delivered =
            client.handle_onramp_message(&json!({"event": name, "data": order})).unwrap();
        assert!(delivered);
    }
    // A message as the JSON text the widget posted works the same.
    let text = json!({"event": "widget_closed", "data": {}}).to_string();
    assert!(client.handle_onramp_message(&json!(text)).unwrap());
    let mut events = Vec::new();
    while let Some(event) = client.next_event(Duration::from_millis(200)) {
        events.push(event);
    }
    let types: Vec<&str> = events.iter().map(DepositEvent::type_name).collect();
    assert_eq!(
        types,
        [
            "onramp:widget_opened",
            "onramp:order_created",
            "onramp:order_processing",
            "onramp:order_completed",
            "onramp:complete",
            "onramp:widget_closed"
        ]
    );
    assert_eq!(events[1].to_json(), json!({"type": "onramp:order_created", "payload": order}));
    assert!(matches!(
        &events[3],
        DepositEvent::Onramp { name: OnrampEventName::OrderCompleted, .. }
    ));
    let complete = events[4].onramp_order().unwrap();
    assert_eq!(
        events[4].to_json(),
        json!({"type": "onramp:complete", "payload": {
            "amount": "99.0", "token": "USDC", "status": "completed", "id": "ord_42",
            "destination": {"address": OWNER.to_ascii_lowercase(), "chainId": 8453},
            "fiatAmount": 100.0, "fiatCurrency": "USD", "txHash": "0xabc"}})
    );
    assert_eq!(client.last_onramp_order().unwrap().as_ref(), Some(complete));
}

#[test]
fn unknown_or_malformed_messages_are_invalid_arguments() {
    let client = client(DestinationConfig::chain(8453), |_| {});
    let err =
        client.handle_onramp_message(&json!({"event": "order_refunded", "data": {}})).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("\"order_refunded\""), "{err}");
    let err = client.handle_onramp_message(&json!(42)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let err = client
        .handle_onramp_message(&json!({"event": "order_completed", "data": {"id": "x"}}))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("cryptoCurrency"), "{err}");
    assert!(client.next_event(Duration::from_millis(100)).is_none(), "nothing emitted");
    assert_eq!(client.last_onramp_order().unwrap(), None);
}

#[test]
fn redirect_mode_has_no_event_channel() {
    let client = client(DestinationConfig::chain(8453), |c| c.onramp.mode = OnrampMode::Redirect);
    assert!(client.open_onramp(None).unwrap().contains("&mode=redirect&"));
    let delivered =
        client.handle_onramp_message(&json!({"event": "order_completed", "data": {}})).unwrap();
    assert!(!delivered);
    assert!(client.next_event(Duration::from_millis(100)).is_none());
    assert_eq!(client.last_onramp_order().unwrap(), None);
}

#[test]
fn a_disabled_onramp_is_a_configuration_error() {
    let off = client(DestinationConfig::chain(8453), |c| c.onramp.enabled = false);
    for err in [
        off.open_onramp(None).unwrap_err(),
        off.handle_onramp_message(&json!({"event": "widget_opened"})).unwrap_err(),
    ] {
        assert_eq!(err.kind(), ErrorKind::Configuration);
        assert_eq!(err.message(), "onramp is not enabled");
    }
}
