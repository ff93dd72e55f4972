//! The fiat onramp (spec §1 "Onramp", `docs/funding.md` §5): the widget URL for the host to
//! open, and the overlay's order messages turned into client events.
//!
//! The widget URL carries the partner key, so depositkit never logs it; neither
//! [`OnrampConfig`]'s nor the client's `Debug` shows it.
//!
//! `messages.rs`: the widget's networks, events and orders (data); `widget.rs`: the widget URL;
//! here: a client's onramp (`Onramp`: its settings and last order), which talks to the client
//! only through its narrow interface (`deposit/port.rs`). The public methods are
//! [`DepositClient`](crate::deposit::DepositClient)'s. The onramp owns its settings
//! ([`OnrampConfig`], declared with the client's other options).

pub(crate) mod messages;
mod widget;

use std::sync::Mutex;

use serde_json::Value;

use crate::deposit::config::{OnrampConfig, OnrampMode};
use crate::deposit::events::DepositEvent;
use crate::deposit::port::ClientPort;
use crate::deposit::status::ClientCall;
use crate::error::{Error, Result};

pub use messages::{OnrampEventName, OnrampOrder, network_chain_id, network_name, parse_message};
pub(crate) use widget::new_partner_order_id;
pub use widget::widget_url;

/// The onramp of one client: its settings and the last completed order it was told about.
pub(crate) struct Onramp {
    config: OnrampConfig,
    last_order: Mutex<Option<OnrampOrder>>,
}

impl Onramp {
    /// The onramp of a client configured with `config`.
    pub(crate) fn new(config: OnrampConfig) -> Onramp {
        Onramp { config, last_order: Mutex::new(None) }
    }

    /// The first checks of an onramp call: the client answers `call`, the onramp is enabled.
    fn admit(&self, client: &impl ClientPort, call: ClientCall) -> Result<()> {
        client.admit(call)?;
        if !self.config.enabled {
            return Err(Error::configuration("onramp is not enabled"));
        }
        Ok(())
    }

    /// `open_onramp`: the widget URL for the client's current destination.
    pub(crate) fn open(
        &self,
        client: &impl ClientPort,
        fiat_amount: Option<f64>,
    ) -> Result<String> {
        self.admit(client, ClientCall::OpenOnramp)?;
        let destination = client.destination();
        widget_url(&self.config, &destination, fiat_amount, &new_partner_order_id())
    }

    /// `handle_onramp_message`: the overlay's message reported as the client's events.
    pub(crate) fn handle_message(&self, client: &impl ClientPort, message: &Value) -> Result<bool> {
        self.admit(client, ClientCall::HandleOnrampMessage)?;
        if self.config.mode == OnrampMode::Redirect {
            return Ok(false);
        }
        let (name, data) = parse_message(message)?;
        let order = match name {
            OnrampEventName::OrderCompleted => Some(OnrampOrder::from_widget_order(&data)?),
            _ => None,
        };
        client.emit(DepositEvent::Onramp { name, payload: data });
        if let Some(order) = order {
            *self.last_order.lock().unwrap_or_else(|e| e.into_inner()) = Some(order.clone());
            client.emit(DepositEvent::OnrampComplete(order));
        }
        Ok(true)
    }

    /// `last_onramp_order`.
    pub(crate) fn last_order(&self, client: &impl ClientPort) -> Result<Option<OnrampOrder>> {
        client.admit(ClientCall::LastOnrampOrder)?;
        Ok(self.last_order.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }
}
