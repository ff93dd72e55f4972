//! Who receives a refund: the deposit's one known sender when asked and when it fits the
//! source chain, else the owner when it fits, else nobody (`address_type_mismatch`).

use super::Inner;
use crate::chains::{AddressType, Chain};
use crate::deposit::model::DetectedDeposit;
use crate::deposit::watcher::receives_on;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::services::{UaTransaction, with_session};
use crate::units::{U256, parse_raw_amount};
use crate::validate::{evm_address_problem, solana_address_problem};

/// Who receives a refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// This address; `to_sender` when it is the deposit's original sender.
    To { address: String, to_sender: bool },
    /// Nobody fits the source chain's address type.
    Mismatch(String),
}

fn address_fits(address: &str, kind: AddressType) -> bool {
    match kind {
        AddressType::Evm => evm_address_problem(address).is_none(),
        AddressType::Solana => solana_address_problem(address).is_none(),
    }
}

/// Chooses the receiver of a refund from the deposit's receipts' senders (`None`: not
/// looked up), the owner, and the source chain's address type.
pub(crate) fn choose_receiver(
    chain_id: u64,
    senders: Option<&[Option<String>]>,
    owner: &str,
) -> Receiver {
    let Some(chain) = Chain::from_id(chain_id) else {
        return Receiver::Mismatch(format!("Unknown chain: {chain_id}"));
    };
    let kind = chain.address_type();
    let mut note = String::new();
    if let Some(senders) = senders {
        let known: Vec<&str> = senders.iter().flatten().map(String::as_str).collect();
        let mut distinct: Vec<String> = known
            .iter()
            .map(
                |s| if kind == AddressType::Evm { s.to_ascii_lowercase() } else { (*s).to_owned() },
            )
            .collect();
        distinct.sort();
        distinct.dedup();
        if senders.is_empty() {
            note = "; no incoming transfer of the deposit was found".to_owned();
        } else if known.len() < senders.len() {
            note = "; the sender of the deposit is not known".to_owned();
        } else if distinct.len() > 1 {
            note = format!("; the deposit came from {} different senders", distinct.len());
        } else if address_fits(known[0], kind) {
            return Receiver::To { address: known[0].to_owned(), to_sender: true };
        } else {
            note = format!(
                "; its sender {} is not a valid {} address",
                quote(known[0]),
                kind.as_str()
            );
        }
    }
    if address_fits(owner, kind) {
        return Receiver::To { address: owner.to_owned(), to_sender: false };
    }
    let owner_kind = if evm_address_problem(owner).is_none() { "evm" } else { "solana" };
    Receiver::Mismatch(format!(
        "Address type mismatch: owner address is {owner_kind}, but source chain {} requires {}{note}",
        chain.name(),
        kind.as_str()
    ))
}

impl Inner {
    /// The receiver of a refund of `deposit` (receipts read when `refund_to_sender`).
    pub(super) async fn refund_receiver(
        &self,
        deposit: &DetectedDeposit,
        range: (U256, U256),
    ) -> Result<Receiver> {
        let owner = &self.config.owner;
        if !self.config.refund.refund_to_sender || range.0 >= range.1 {
            return Ok(choose_receiver(deposit.chain_id, None, owner));
        }
        if !self.speaks_protocol() {
            let senders = self.senders_from_history(deposit).await?;
            return Ok(choose_receiver(deposit.chain_id, Some(&senders), owner));
        }
        let account_id = self.account_id()?;
        let receipts =
            with_session(&self.session, |jwt| {
                let account = &self.account;
                let (id, token) = (&account_id, deposit.token.symbol());
                async move {
                    account.receipts(&jwt, id, deposit.chain_id, token, range.0, range.1).await
                }
            })
            .await
            .map_err(|e| {
                e.into_error(ErrorKind::UniversalAccount, "Reading the deposit's receipts")
            })?;
        let senders: Vec<Option<String>> = receipts.into_iter().map(|r| r.sender).collect();
        Ok(choose_receiver(deposit.chain_id, Some(&senders), owner))
    }

    /// The senders of `deposit` from the account's history, for a backend without receipts
    /// (Particle): the newest incoming transfers (`receive`) of its token on its chain until
    /// they add up to its amount, each one's `change.from` (`None` when empty).
    async fn senders_from_history(&self, deposit: &DetectedDeposit) -> Result<Vec<Option<String>>> {
        let transactions = self.recent_history().await.map_err(|e| {
            Error::new(e.kind(), format!("Reading the deposit's senders failed: {}", e.message()))
        })?;
        Ok(senders_of(&transactions, deposit))
    }
}

/// The senders of the newest `receive` transfers of `deposit`'s token and chain in
/// `transactions` (newest first) that add up to its amount.
pub(crate) fn senders_of(
    transactions: &[UaTransaction],
    deposit: &DetectedDeposit,
) -> Vec<Option<String>> {
    let mut senders = Vec::new();
    let mut covered = U256::ZERO;
    let incoming =
        transactions.iter().filter(|t| receives_on(t, deposit.chain_id, deposit.token.symbol()));
    for transfer in incoming {
        if covered >= deposit.raw_amount {
            break;
        }
        let raw = transfer.change.raw_amount.as_deref().and_then(|r| parse_raw_amount(r).ok());
        // Without its raw amount a transfer covers the rest: the sender is still one of them.
        covered = raw.map_or(deposit.raw_amount, |raw| covered.saturating_add(raw));
        let from = transfer.change.from.trim();
        senders.push((!from.is_empty()).then(|| from.to_owned()));
    }
    senders
}
