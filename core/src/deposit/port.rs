//! The narrow interface between a client and its features — funding from a wallet
//! ([`crate::funding`]) and the fiat onramp ([`crate::onramp`]): what they may ask of the
//! client, and nothing of its internals.
//!
//! The engine's `Inner` implements [`ClientPort`]; the facade (`DepositClient`) hands it to
//! the features, which import this module and never the client.

use std::time::Duration;

use super::config::Destination;
use super::events::DepositEvent;
use super::model::DepositAddresses;
use super::status::ClientCall;
use crate::error::{Error, Result};

/// What a feature of a client (funding, the onramp) may ask of it.
pub(crate) trait ClientPort {
    /// The client's one lifecycle guard: `Ok` when the client answers `call` now (it is not
    /// an inherited client in a forked child, and not closed unless `call` answers when
    /// closed).
    fn admit(&self, call: ClientCall) -> Result<()>;

    /// The deposit addresses; [`not_initialized`] before `initialize()`.
    fn deposit_addresses(&self) -> Result<DepositAddresses>;

    /// Where deposits go now.
    fn destination(&self) -> Destination;

    /// Reports `event` as every event of the client is reported: recorded in the event log,
    /// queued for pulling, handed to the callbacks.
    fn emit(&self, event: DepositEvent);

    /// How long one blocking call of the client may take (`call_timeout_ms`).
    fn call_timeout(&self) -> Duration;

    /// Runs `work`, which may block, on the runtime's blocking pool and waits for it at most
    /// [`call_timeout`](ClientPort::call_timeout); `what` names the call in errors.
    fn run_blocking<T: Send + 'static>(
        &self,
        what: &str,
        work: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Result<T>;
}

/// What a call that needs an initialized client answers before `initialize()`.
pub(crate) fn not_initialized() -> Error {
    Error::configuration("Client not initialized. Call initialize() first.")
}
