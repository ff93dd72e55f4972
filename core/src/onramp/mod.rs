//! The fiat onramp (spec §1 "Onramp", `docs/funding.md` §5): the widget URL for the host to
//! open, and the overlay's order messages turned into client events.
//!
//! The widget URL carries the partner key, so depositkit never logs it; neither
//! [`OnrampConfig`]'s nor the client's `Debug` shows it.
//!
//! `messages.rs`: the widget's networks, events and orders (data); `widget.rs`: the widget URL.

pub(crate) mod messages;
mod widget;

use serde_json::Value;

use crate::deposit::config::{OnrampConfig, OnrampMode};
use crate::deposit::status::ClientCall;
use crate::deposit::{DepositClient, DepositEvent};
use crate::error::{Error, Result};

pub use messages::{OnrampEventName, OnrampOrder, network_chain_id, network_name, parse_message};
pub(crate) use widget::new_partner_order_id;
pub use widget::widget_url;

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
