//! `can_refund(id)`: the machine's admission, the receiver, and a refund quote that prices it.

use std::sync::Arc;

use super::Inner;
use super::receiver::Receiver;
use crate::deposit::config::Destination;
use crate::deposit::machine::{self, Admission, Command, DepositState};
use crate::deposit::model::{RefundEligibility, RefundReason};
use crate::describe::quote;
use crate::error::{ErrorKind, Result};
use crate::services::{BELOW_MINIMUM, CallError};

impl Inner {
    /// `can_refund(id)`.
    pub(crate) async fn eligibility(
        self: Arc<Self>,
        deposit_id: &str,
    ) -> Result<RefundEligibility> {
        let not = |message: String| RefundEligibility {
            eligible: false,
            reason: None,
            message,
            refund_address: None,
            refund_to_sender: None,
        };
        let (deposit, range, sweep_failed, caveat) = {
            let state = self.state();
            let Some(record) = state.deposits.get(deposit_id) else {
                return Ok(not(state
                    .gone_reason(deposit_id)
                    .unwrap_or_else(|| format!("Deposit {} not found", quote(deposit_id)))));
            };
            // The same answer `refund` acts on (`machine::admits`).
            if let Admission::Refuse(why) = machine::admits(record.state, Command::Refund) {
                return Ok(not(why.message(&quote(deposit_id))));
            }
            let caveat = match record.state {
                DepositState::Unresolved => Some(
                    "; its earlier sweep's outcome is unknown: refund() first resolves that sweep \
                     with its same quote and refunds only if it was not delivered (if it was, \
                     the deposit is credited instead)",
                ),
                DepositState::RefundUnresolved => Some(
                    "; its earlier refund's outcome is unknown: refund() resolves it with the same \
                     quote (never a second refund)",
                ),
                _ => None,
            };
            (record.deposit.clone(), record.range, record.sweep_failed, caveat)
        };
        let (address, to_sender) = match self.refund_receiver(&deposit, range).await? {
            Receiver::To { address, to_sender } => (address, to_sender),
            Receiver::Mismatch(message) => {
                return Ok(RefundEligibility {
                    reason: Some(RefundReason::AddressTypeMismatch),
                    ..not(message)
                });
            }
        };
        let destination = Destination {
            chain_id: deposit.chain_id,
            address: address.clone(),
            token: deposit.token,
        };
        match self.refund_quote(&deposit, &destination).await {
            Ok(_) => {}
            Err(CallError::Service(e)) if e.code == BELOW_MINIMUM => {
                return Ok(RefundEligibility {
                    reason: Some(RefundReason::BelowMinimum),
                    refund_address: Some(address),
                    refund_to_sender: Some(to_sender),
                    ..not(format!("The deposit does not cover the refund's gas: {e}"))
                });
            }
            Err(CallError::Service(e)) => {
                return Ok(not(format!("The refund cannot be priced: {e}")));
            }
            Err(e) => {
                return Err(e.into_error(ErrorKind::UniversalAccount, "Pricing the refund"));
            }
        }
        let whom = if to_sender { "its original sender" } else { "the owner" };
        Ok(RefundEligibility {
            eligible: true,
            reason: Some(if sweep_failed {
                RefundReason::SweepFailed
            } else {
                RefundReason::UserRequested
            }),
            message: format!("Refundable to {whom} {address}{}", caveat.unwrap_or_default()),
            refund_address: Some(address),
            refund_to_sender: Some(to_sender),
        })
    }
}
