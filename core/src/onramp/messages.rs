//! What the onramp widget speaks: its network names, the events its overlay posts and the
//! orders they carry. Data only: the event model (`deposit/events.rs`) carries these.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deposit::model::EventDestination;
use crate::describe::{json_kind, quote};
use crate::error::{Error, Result};
use crate::tokens::TokenType;

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
