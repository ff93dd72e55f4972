//! `DepositClient`'s onramp methods (spec §1 "Onramp", `docs/funding.md` §5): the public face
//! of [`crate::onramp`], which talks to the client only through its port (`deposit/port.rs`).

use serde_json::Value;

use super::DepositClient;
use crate::error::Result;
use crate::onramp::OnrampOrder;

impl DepositClient {
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
        self.inner.onramp.open(&*self.inner, fiat_amount)
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
        self.inner.onramp.handle_message(&*self.inner, message)
    }

    /// The last completed onramp order this client was told about.
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`](crate::ErrorKind::DepositSdk) when the client is closed.
    pub fn last_onramp_order(&self) -> Result<Option<OnrampOrder>> {
        self.inner.onramp.last_order(&*self.inner)
    }
}
