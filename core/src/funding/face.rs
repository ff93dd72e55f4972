//! What a client's funding calls do before and around the work (`docs/funding.md` §6): the
//! checks every call makes and the work run off the caller's thread, through the client's
//! narrow interface ([`ClientPort`]) — never its internals. The public methods are
//! `DepositClient`'s (`deposit/client/funding.rs`), each one line into here.
//!
//! Anything that talks to a wallet or a node runs on the runtime's blocking pool (wallets and
//! nodes are called synchronously, and a host provider may block), and the caller waits at most
//! `call_timeout_ms`, as for every other blocking method of the client.

use std::sync::Arc;

use super::Funding;
use super::balance::FundingBalance;
use super::transfer::{Deadline, FundingTransferResult};
use crate::chains::{AddressType, get_address_type};
use crate::deposit::port::{ClientPort, not_initialized};
use crate::deposit::status::ClientCall;
use crate::error::{Error, Result};
use crate::units::U256;

impl Funding {
    /// The first checks of a funding call: the client answers `call`, and funding is enabled.
    pub(crate) fn admit(&self, client: &impl ClientPort, call: ClientCall) -> Result<()> {
        client.admit(call)?;
        self.ensure_enabled()
    }

    /// Runs `work` with this funding on the blocking pool, under the client's call timeout.
    pub(crate) fn call<T: Send + 'static>(
        self: &Arc<Self>,
        client: &impl ClientPort,
        call: ClientCall,
        what: &str,
        work: impl FnOnce(&Funding) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.admit(client, call)?;
        let funding = Arc::clone(self);
        client.run_blocking(what, move || work(&funding))
    }

    /// `fund_from_wallet`: `raw_amount` of `balance` (default: the gas-adjusted maximum) to the
    /// client's deposit address of its chain, sent and confirmed.
    pub(crate) fn fund_from_wallet(
        self: &Arc<Self>,
        client: &impl ClientPort,
        balance: &FundingBalance,
        raw_amount: Option<U256>,
    ) -> Result<FundingTransferResult> {
        let work = self.fund_from_wallet_work(client, balance, raw_amount)?;
        self.call(client, ClientCall::FundFromWallet, "fund_from_wallet()", work)
    }

    /// `fund_from_wallet`'s checks, made at once, and its work, to run off the caller's thread
    /// (the synchronous call waits for it; the async one awaits it).
    pub(crate) fn fund_from_wallet_work<C: ClientPort>(
        &self,
        client: &C,
        balance: &FundingBalance,
        raw_amount: Option<U256>,
    ) -> Result<impl FnOnce(&Funding) -> Result<FundingTransferResult> + Send + 'static + use<C>>
    {
        self.admit(client, ClientCall::FundFromWallet)?;
        balance.check_owner(self.client_id)?;
        if raw_amount.is_some_and(|r| r.is_zero()) {
            return Err(Error::invalid_argument("raw_amount must be more than 0"));
        }
        let addresses = client.deposit_addresses().map_err(|_| not_initialized())?;
        let balance = balance.clone();
        let deadline = Deadline::within(client.call_timeout());
        Ok(move |funding: &Funding| match get_address_type(balance.chain_id()) {
            AddressType::Evm => funding.fund_evm(&balance, raw_amount, &addresses.evm, deadline),
            AddressType::Solana => {
                funding.fund_solana(&balance, raw_amount, &addresses.solana, deadline)
            }
        })
    }
}
