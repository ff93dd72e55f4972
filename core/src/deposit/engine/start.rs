//! How a client starts: the session, the signer's wallet and the account (`initialize()`'s
//! network part), then what an earlier run left in the store, resumed.

use std::sync::Arc;

use super::{Inner, Job, State};
use crate::deposit::machine::{Effect, Input};
use crate::deposit::model::now_ms;
use crate::deposit::store::Restored;
use crate::deposit::watcher::Detector;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::services::{AccountInfo, with_session};
use crate::validate::{evm_address_problem, solana_address_problem};

impl Inner {
    /// `initialize()`'s network part: the intermediary wallet (checked against
    /// `intermediary_address`) and the account with its deposit addresses — on devnet's
    /// protocol from the session, signer and account services; on Particle from the backend
    /// ([`AccountBackend::open_account`](crate::services::AccountBackend::open_account): the
    /// owner's signer and its universal account).
    ///
    /// On devnet's protocol, with a store that keeps starts (the fleet's), what the owner's
    /// previous client handed over through the store (`handover.rs`: the account, the wallet
    /// and a session that verifies) is taken instead when it checks out; else, once opened the
    /// full way, it is handed on. Other stores skip both (no trip to the store for nothing).
    pub(crate) async fn init_async(self: Arc<Self>) -> Result<(AccountInfo, String)> {
        let (info, wallet) = if self.speaks_protocol() && !self.hub.store().keeps_starts() {
            self.open_protocol_account().await?
        } else if self.speaks_protocol() {
            self.keep_sessions_handed_over();
            match self.take_over().await {
                Some(started) => started,
                None => {
                    let (info, wallet) = self.open_protocol_account().await?;
                    self.hand_over(&info, &wallet).await;
                    (info, wallet)
                }
            }
        } else {
            let account = self.backend.open_account(&self.config.owner).await?;
            self.check_wallet(&account.signer_address)?;
            let info = AccountInfo {
                account_id: account.account_id,
                owner_address: account.signer_address.clone(),
                evm_address: account.evm_address,
                solana_address: account.solana_address,
            };
            (info, account.signer_address)
        };
        if let Some(reason) = evm_address_problem(&info.evm_address) {
            return Err(Error::new(
                ErrorKind::UniversalAccount,
                format!(
                    "Failed to get EVM smart account address: {} ({reason})",
                    quote(&info.evm_address)
                ),
            ));
        }
        if let Some(reason) = solana_address_problem(&info.solana_address) {
            return Err(Error::new(
                ErrorKind::UniversalAccount,
                format!(
                    "Failed to get Solana smart account address: {} ({reason})",
                    quote(&info.solana_address)
                ),
            ));
        }
        Ok((info, wallet))
    }

    /// The wallet from devnet's signer and the account from its account service.
    async fn open_protocol_account(&self) -> Result<(AccountInfo, String)> {
        self.session.get().await?;
        let wallet = with_session(&self.session, |jwt| {
            let signer = &self.signer;
            async move { signer.wallet(&jwt).await }
        })
        .await
        .map_err(|e| match e {
            crate::services::CallError::Service(s) if s.status == 401 => Error::new(
                ErrorKind::Authentication,
                format!("the signer refused the intermediary session: {s}"),
            ),
            other => {
                other.into_error(ErrorKind::Authentication, "Fetching the intermediary wallet")
            }
        })?;
        self.check_wallet(&wallet)?;
        let info = with_session(&self.session, |jwt| {
            let account = &self.account;
            let wallet = wallet.clone();
            async move { account.init_account(&jwt, &wallet).await }
        })
        .await
        .map_err(|e| {
            e.into_error(ErrorKind::UniversalAccount, "Failed to initialize Universal Account")
        })?;
        Ok((info, wallet))
    }

    /// The intermediary wallet is an EVM address, and the one `intermediary_address` expects.
    pub(super) fn check_wallet(&self, wallet: &str) -> Result<()> {
        if let Some(reason) = evm_address_problem(wallet) {
            return Err(Error::new(
                ErrorKind::Protocol,
                format!(
                    "the signer returned an invalid wallet address {} ({reason})",
                    quote(wallet)
                ),
            ));
        }
        if let Some(expected) = &self.config.intermediary
            && !expected.eq_ignore_ascii_case(wallet)
        {
            return Err(Error::configuration(format!(
                "intermediaryAddress {} does not match the signer's wallet {} for this owner",
                quote(expected),
                quote(wallet)
            )));
        }
        Ok(())
    }

    /// Reads what an earlier run of this client left in the store (nothing without one).
    pub(crate) fn load_store(&self, account_id: &str) -> Result<Restored> {
        let store = self.hub.store();
        store.bind_account(account_id, now_ms())?;
        store.load()
    }

    /// Puts an earlier run's state back and restarts its work: every deposit where it was,
    /// each quote that may have been sent resolved with that same quote. Called by
    /// `initialize()` with the executor running and the state lock held.
    pub(crate) fn resume(self: &Arc<Self>, state: &mut State, restored: Restored) -> Result<()> {
        if let Some(snapshot) = &restored.detector {
            let mut detector = self.detector.try_lock().map_err(|_| {
                Error::new(ErrorKind::Internal, "the watcher ran while the client was starting")
            })?;
            *detector = Detector::restore(snapshot, &restored.known_ids);
        }
        for result in restored.sweep_results {
            state.remember_result(result);
        }
        for result in restored.refund_results {
            state.remember_refund(result);
        }
        state.next_seq = state.next_seq.max(restored.next_seq);
        self.hub.restore_notifications(restored.notifications);
        let Some(jobs) = state.jobs.clone() else { return Ok(()) };
        for mut record in restored.deposits {
            let id = record.deposit.id.clone();
            // A quote that may have been sent is resolved with that same quote, first: the
            // attempt that resumes finds it as the record's unresolved quote.
            let sent = record.in_flight.take().or_else(|| record.unresolved.take());
            record.unresolved = sent;
            let Ok(step) = record.advance(Input::Restarted) else { continue };
            state.deposits.insert(id.clone(), record);
            match step.effect {
                Some(Effect::QueueSweep) => {
                    drop(jobs.send(Job::Sweep { deposit_id: id, reply: None }));
                }
                Some(Effect::QueueRefund) => {
                    drop(jobs.send(Job::Refund { deposit_id: id, reply: None }));
                }
                Some(Effect::ScheduleRetry) => self.schedule_retry(state, &id),
                Some(Effect::ScheduleRefund) => self.schedule_refund(state, &id),
                _ => {}
            }
        }
        Ok(())
    }
}
