//! The fiat onramp (spec §1 "Onramp", `docs/funding.md` §5): the widget URL for the host to
//! open, and the overlay's order messages turned into client events.
//!
//! The widget URL carries the partner key, so depositkit never logs it; neither
//! [`OnrampConfig`]'s nor the client's `Debug` shows it.

use std::fmt;
use std::str::FromStr;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chains::{Chain, get_chain_name};
use crate::deposit::config::{
    BUILTIN_ONRAMP_PARTNER_KEY, DEFAULT_ONRAMP_WIDGET_URL, OnrampConfig, OnrampMode,
};
use crate::deposit::status::ClientCall;
use crate::deposit::{DepositClient, DepositEvent, Destination, EventDestination};
use crate::describe::{json_kind, quote};
use crate::error::{Error, Result};
use crate::tokens::{TokenType, is_onramp_token_supported};

/// RFC 3986's unreserved characters stay as they are; everything else is percent-encoded.
const QUERY_VALUE: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// The onramp's name of each chain it serves.
const NETWORKS: [(u64, &str); 5] =
    [(1, "ethereum"), (56, "bsc"), (8453, "base"), (42161, "arbitrum"), (101, "solana")];

/// The onramp's network name of `chain_id` (`ethereum`, `bsc`, `base`, `arbitrum`, `solana`).
pub fn network_name(chain_id: u64) -> Option<&'static str> {
    NETWORKS.iter().find(|(id, _)| *id == chain_id).map(|(_, name)| *name)
}

/// The chain id of an onramp network name.
pub fn network_chain_id(name: &str) -> Option<u64> {
    NETWORKS.iter().find(|(_, n)| n.eq_ignore_ascii_case(name)).map(|(id, _)| *id)
}

/// An event the onramp overlay posts (`{"event": "<name>", "data": {order}}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OnrampEventName {
    /// The widget opened.
    WidgetOpened,
    /// The user placed an order.
    OrderCreated,
    /// The payment is being processed.
    OrderProcessing,
    /// The crypto was delivered; also reported as `onramp:complete`.
    OrderCompleted,
    /// The order failed.
    OrderFailed,
    /// The widget closed.
    WidgetClosed,
}

impl OnrampEventName {
    /// Every event, in the order of an order's life.
    pub const ALL: [OnrampEventName; 6] = [
        OnrampEventName::WidgetOpened,
        OnrampEventName::OrderCreated,
        OnrampEventName::OrderProcessing,
        OnrampEventName::OrderCompleted,
        OnrampEventName::OrderFailed,
        OnrampEventName::WidgetClosed,
    ];

    /// The widget's spelling (`order_completed`).
    pub const fn as_str(self) -> &'static str {
        match self {
            OnrampEventName::WidgetOpened => "widget_opened",
            OnrampEventName::OrderCreated => "order_created",
            OnrampEventName::OrderProcessing => "order_processing",
            OnrampEventName::OrderCompleted => "order_completed",
            OnrampEventName::OrderFailed => "order_failed",
            OnrampEventName::WidgetClosed => "widget_closed",
        }
    }

    /// The client event's type (`onramp:order_completed`).
    pub const fn type_name(self) -> &'static str {
        match self {
            OnrampEventName::WidgetOpened => "onramp:widget_opened",
            OnrampEventName::OrderCreated => "onramp:order_created",
            OnrampEventName::OrderProcessing => "onramp:order_processing",
            OnrampEventName::OrderCompleted => "onramp:order_completed",
            OnrampEventName::OrderFailed => "onramp:order_failed",
            OnrampEventName::WidgetClosed => "onramp:widget_closed",
        }
    }
}

impl fmt::Display for OnrampEventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for OnrampEventName {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        OnrampEventName::ALL.into_iter().find(|e| e.as_str() == text).ok_or_else(|| {
            Error::invalid_argument(format!(
                "unknown onramp event {}: expected one of {}",
                quote(text),
                OnrampEventName::ALL.map(OnrampEventName::as_str).join(", ")
            ))
        })
    }
}

/// A completed onramp order (spec §2 `OnrampOrder`): what `onramp:complete` carries and
/// [`last_onramp_order`](crate::deposit::DepositClient::last_onramp_order) keeps.
///
/// JSON: `{"amount", "token", "status", "id", "destination": {"address", "chainId"},
/// "fiatAmount", "fiatCurrency", "txHash"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OnrampOrder {
    /// The delivered amount, human-readable (the order's `cryptoAmount`).
    pub amount: String,
    /// The delivered token (`cryptoCurrency`).
    pub token: TokenType,
    /// The provider's order status (`completed`).
    pub status: String,
    /// The provider's order id.
    pub id: String,
    /// Where the crypto went (`walletAddress` on `network`).
    pub destination: EventDestination,
    /// The fiat amount paid.
    pub fiat_amount: Option<f64>,
    /// The fiat currency paid in.
    pub fiat_currency: Option<String>,
    /// The delivering transaction, when the provider reports it.
    pub tx_hash: Option<String>,
}

impl OnrampOrder {
    /// Reads the widget's order object (`cryptoAmount`, `cryptoCurrency`, `status`, `id`,
    /// `walletAddress`, `network`, `fiatAmount`, `fiatCurrency`, `txHash`).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the missing or
    /// malformed field.
    pub fn from_widget_order(order: &Value) -> Result<OnrampOrder> {
        let bad = |field: &str, why: &str| {
            Error::invalid_argument(format!("malformed onramp order: {field} {why}"))
        };
        let text = |field: &str| -> Result<String> {
            match order.get(field) {
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                // Providers send amounts and ids as numbers too.
                Some(Value::Number(n)) => Ok(n.to_string()),
                Some(other) => Err(bad(field, &format!("is {}", json_kind(other)))),
                None => Err(bad(field, "is missing")),
            }
        };
        let optional_text = |field: &str| match order.get(field) {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        if !order.is_object() {
            return Err(Error::invalid_argument(format!(
                "malformed onramp order: data is {}, not an object",
                json_kind(order)
            )));
        }
        let token_text = text("cryptoCurrency")?;
        let token = token_text.parse::<TokenType>().map_err(|_| {
            bad("cryptoCurrency", &format!("is an unknown token {}", quote(&token_text)))
        })?;
        let network = text("network")?;
        let chain_id = network_chain_id(&network)
            .ok_or_else(|| bad("network", &format!("is an unknown network {}", quote(&network))))?;
        let fiat_amount = match order.get("fiatAmount") {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.parse::<f64>().ok(),
            _ => None,
        };
        Ok(OnrampOrder {
            amount: text("cryptoAmount")?,
            token,
            status: optional_text("status").unwrap_or_else(|| "completed".to_owned()),
            id: text("id")?,
            destination: EventDestination { address: text("walletAddress")?, chain_id },
            fiat_amount,
            fiat_currency: optional_text("fiatCurrency"),
            tx_hash: optional_text("txHash"),
        })
    }

    /// The JSON of the type documentation.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The widget URL for `destination` (`docs/funding.md` §5). `fiat_amount` overrides
/// `onramp.defaultFiatAmount`.
///
/// # Errors
/// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when the onramp does not
/// serve the destination chain; [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
/// for a non-positive or non-finite amount.
pub fn widget_url(
    config: &OnrampConfig,
    destination: &Destination,
    fiat_amount: Option<f64>,
    partner_order_id: &str,
) -> Result<String> {
    let network = network_name(destination.chain_id)
        .filter(|_| Chain::from_id(destination.chain_id).is_some_and(Chain::is_onramp_chain))
        .ok_or_else(|| {
            Error::configuration(format!(
                "the onramp does not serve {} ({}); it serves Ethereum, BNB Chain, Base, Arbitrum and Solana",
                get_chain_name(destination.chain_id),
                destination.chain_id
            ))
        })?;
    if let Some(amount) = fiat_amount
        && (!amount.is_finite() || amount <= 0.0)
    {
        return Err(Error::invalid_argument(format!(
            "the fiat amount must be a positive number, got {amount}"
        )));
    }
    let token = if is_onramp_token_supported(destination.token, destination.chain_id) {
        destination.token
    } else {
        TokenType::USDC
    };
    let base = config.widget_url.as_deref().unwrap_or(DEFAULT_ONRAMP_WIDGET_URL);
    let key = config.api_key.as_deref().unwrap_or(BUILTIN_ONRAMP_PARTNER_KEY);
    let mut params: Vec<(&str, String)> = vec![
        ("partnerKey", key.to_owned()),
        ("walletAddress", destination.address.clone()),
        ("network", network.to_owned()),
        ("cryptoCurrency", token.symbol().to_owned()),
        ("fiatCurrency", config.fiat_currency.clone()),
    ];
    if let Some(amount) = fiat_amount.or(config.default_fiat_amount) {
        params.push(("fiatAmount", amount.to_string()));
    }
    if let Some(method) = &config.payment_mode {
        params.push(("paymentMethod", method.clone()));
    }
    params.push(("mode", config.mode.as_str().to_owned()));
    params.push(("partnerOrderId", partner_order_id.to_owned()));
    let query: Vec<String> = params
        .iter()
        .map(|(name, value)| format!("{name}={}", utf8_percent_encode(value, QUERY_VALUE)))
        .collect();
    let joiner = if base.contains('?') { '&' } else { '?' };
    Ok(format!("{base}{joiner}{}", query.join("&")))
}

/// Reads an overlay message: `{"event": "<name>", "data": {…}}` (or that JSON as a string).
///
/// # Errors
/// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) for a malformed message or
/// an unknown event name, naming it.
pub fn parse_message(message: &Value) -> Result<(OnrampEventName, Value)> {
    let parsed;
    let message = match message {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).map_err(|e| {
                Error::invalid_argument(format!("malformed onramp message {}: {e}", quote(text)))
            })?;
            &parsed
        }
        other => other,
    };
    let Some(object) = message.as_object() else {
        return Err(Error::invalid_argument(format!(
            "malformed onramp message: expected an object, got {}",
            json_kind(message)
        )));
    };
    let name = match object.get("event") {
        Some(Value::String(name)) => name.parse::<OnrampEventName>()?,
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "malformed onramp message: event is {}",
                json_kind(other)
            )));
        }
        None => {
            return Err(Error::invalid_argument(format!(
                "malformed onramp message (no \"event\"): {}",
                quote(&message.to_string())
            )));
        }
    };
    let data = object.get("data").cloned().unwrap_or(Value::Object(Default::default()));
    Ok((name, data))
}

/// A fresh `partnerOrderId`.
pub(crate) fn new_partner_order_id() -> String {
    format!("dk_{}", uuid::Uuid::new_v4().simple())
}

impl DepositClient {
    fn ensure_onramp(&self, call: ClientCall) -> Result<&OnrampConfig> {
        self.inner.guard(call)?;
        let config = &self.inner.config.onramp;
        if !config.enabled {
            return Err(Error::configuration("onramp is not enabled"));
        }
        Ok(config)
    }

    /// The onramp widget's URL for the current destination, for the host to open (an overlay
    /// iframe or a new tab, per `onramp.mode`). `fiat_amount` overrides
    /// `onramp.defaultFiatAmount`. The URL carries the partner key: do not log it.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when the onramp is not
    /// enabled or does not serve the destination chain;
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) for a non-positive or
    /// non-finite amount.
    pub fn open_onramp(&self, fiat_amount: Option<f64>) -> Result<String> {
        let config = self.ensure_onramp(ClientCall::OpenOnramp)?;
        let destination = self.get_destination()?;
        widget_url(config, &destination, fiat_amount, &new_partner_order_id())
    }

    /// Takes in a message the overlay widget posted (`{"event": "<name>", "data": {…}}`, or
    /// that JSON as a string): emits `onramp:<name>` with the data, and for `order_completed`
    /// also `onramp:complete` with the [`OnrampOrder`], kept as
    /// [`last_onramp_order`](DepositClient::last_onramp_order). Returns `true`. In redirect mode
    /// there is no event channel: returns `false` and emits nothing.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when the onramp is not
    /// enabled; [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) for an unknown
    /// event or a malformed message, naming it.
    pub fn handle_onramp_message(&self, message: &Value) -> Result<bool> {
        let config = self.ensure_onramp(ClientCall::HandleOnrampMessage)?;
        if config.mode == OnrampMode::Redirect {
            return Ok(false);
        }
        let (name, data) = parse_message(message)?;
        let order = match name {
            OnrampEventName::OrderCompleted => Some(OnrampOrder::from_widget_order(&data)?),
            _ => None,
        };
        self.inner.hub.emit(DepositEvent::Onramp { name, payload: data });
        if let Some(order) = order {
            *self.inner.onramp_order.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(order.clone());
            self.inner.hub.emit(DepositEvent::OnrampComplete(order));
        }
        Ok(true)
    }

    /// The last completed onramp order this client was told about.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`](crate::ErrorKind::DepositSdk) when the client is closed.
    pub fn last_onramp_order(&self) -> Result<Option<OnrampOrder>> {
        self.inner.guard(ClientCall::LastOnrampOrder)?;
        Ok(self.inner.onramp_order.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn destination(chain_id: u64, token: TokenType) -> Destination {
        Destination {
            chain_id,
            address: "0x52908400098527886e0f7030069857d2e4169ee7".into(),
            token,
        }
    }

    #[test]
    fn url_has_every_parameter_encoded() {
        let config = OnrampConfig {
            enabled: true,
            api_key: Some("pk live&key".into()),
            payment_mode: Some("apple_pay".into()),
            ..Default::default()
        };
        let url =
            widget_url(&config, &destination(8453, TokenType::ETH), Some(150.5), "dk_1").unwrap();
        assert_eq!(
            url,
            "https://onramp.depositkit.dev/widget?partnerKey=pk%20live%26key\
             &walletAddress=0x52908400098527886e0f7030069857d2e4169ee7&network=base\
             &cryptoCurrency=ETH&fiatCurrency=USD&fiatAmount=150.5&paymentMethod=apple_pay\
             &mode=overlay&partnerOrderId=dk_1"
        );
    }

    #[test]
    fn defaults_and_fallbacks() {
        let config = OnrampConfig {
            enabled: true,
            mode: OnrampMode::Redirect,
            default_fiat_amount: Some(50.0),
            widget_url: Some("http://127.0.0.1:9/onramp/widget?x=1".into()),
            ..Default::default()
        };
        // USDT is not bought on Base: USDC instead.
        let url = widget_url(&config, &destination(56, TokenType::ETH), None, "id").unwrap();
        assert!(
            url.starts_with(
                "http://127.0.0.1:9/onramp/widget?x=1&partnerKey=pk_depositkit_builtin_onramp&"
            ),
            "{url}"
        );
        assert!(url.contains("&network=bsc&cryptoCurrency=USDC&"), "{url}");
        assert!(url.contains("&fiatAmount=50&mode=redirect&"), "{url}");
        let err = widget_url(&config, &destination(10, TokenType::USDC), None, "id").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Configuration);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err =
                widget_url(&config, &destination(1, TokenType::USDC), Some(bad), "id").unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn messages_parse() {
        let (name, data) =
            parse_message(&json!({"event": "order_created", "data": {"id": "o1"}})).unwrap();
        assert_eq!((name, data), (OnrampEventName::OrderCreated, json!({"id": "o1"})));
        let (name, _) = parse_message(&json!(r#"{"event": "widget_closed"}"#)).unwrap();
        assert_eq!(name.type_name(), "onramp:widget_closed");
        let err = parse_message(&json!({"event": "order_teleported"})).unwrap_err();
        assert!(err.message().starts_with("unknown onramp event \"order_teleported\""), "{err}");
        assert!(parse_message(&json!([1])).unwrap_err().message().contains("an array"));
        assert!(parse_message(&json!("{")).is_err());
        assert!(
            parse_message(&json!({"data": {}})).unwrap_err().message().contains("no \"event\"")
        );
    }

    #[test]
    fn orders_read_the_widget_fields() {
        let order = OnrampOrder::from_widget_order(&json!({
            "id": "ord_1", "status": "completed", "cryptoAmount": "99", "cryptoCurrency": "USDC",
            "walletAddress": "0xabc", "network": "base", "fiatAmount": 100, "fiatCurrency": "USD",
            "txHash": "0x12"
        }))
        .unwrap();
        assert_eq!(
            order.to_json(),
            json!({"amount": "99", "token": "USDC", "status": "completed", "id": "ord_1",
                   "destination": {"address": "0xabc", "chainId": 8453}, "fiatAmount": 100.0,
                   "fiatCurrency": "USD", "txHash": "0x12"})
        );
        let err = OnrampOrder::from_widget_order(&json!({"id": "x"})).unwrap_err();
        assert_eq!(err.message(), "malformed onramp order: cryptoCurrency is missing");
        let err = OnrampOrder::from_widget_order(
            &json!({"id": "x", "cryptoCurrency": "USDC", "network": "mars"}),
        )
        .unwrap_err();
        assert!(err.message().contains("unknown network \"mars\""), "{err}");
    }
}
