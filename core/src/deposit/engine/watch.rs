//! Polls and detection: the account's balances read (batched with other clients'), the
//! detector's findings registered and reported, their sweeps queued; the watch loop.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::{Inner, Job};
use crate::deposit::events::{DepositEvent, DepositLifecycleEvent, DepositPhase};
use crate::deposit::history::MAX_PAGE_SIZE;
use crate::deposit::machine::{self, Effect};
use crate::deposit::model::now_ms;
use crate::deposit::poller::{Batched, next_tick};
use crate::deposit::records::DepositRecord;
use crate::deposit::store::Change;
use crate::deposit::watcher::{Attribution, Detector, Finding, attribute, receive_ids};
use crate::error::{ErrorKind, Result};
use crate::observe;
use crate::services::{AccountBalance, BalanceLine, CallError, UaTransaction, with_session};

impl Inner {
    /// One poll: fetch balances, detect, register and report deposits, queue their sweeps.
    /// Polls never overlap (the detector's lock is held for the whole cycle).
    pub async fn poll_once(self: Arc<Self>) -> Result<Vec<DepositLifecycleEvent>> {
        let mut detector = self.detector.lock().await;
        let (events, _) = self.poll_locked(&mut detector).await?;
        drop(detector);
        Ok(events)
    }

    /// Counts and logs (DEBUG; a failure WARN) a poll that started at `started`, and keeps its
    /// outcome for `health()`.
    pub(crate) fn observe_poll<T>(&self, started: Instant, outcome: &Result<T>) {
        let took = started.elapsed();
        observe::poll_finished(outcome.is_ok(), took);
        let latency_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        let owner = self.session.owner();
        match outcome {
            Ok(_) => {
                self.health.record(observe::Service::Account, Ok(()));
                tracing::debug!(owner, service = "account", latency_ms, "poll");
            }
            Err(error) => {
                self.health.record(observe::Service::Account, Err(error.message()));
                tracing::warn!(owner, service = "account", latency_ms, error = %error, "poll failed");
            }
        }
    }

    /// The account's balance lines. On devnet's protocol they are read in a batch with other
    /// clients' polls of the same service ([`super::poller`]); alone, with the session renewed
    /// once on a 401, when the service refused the batch. On Particle they are the backend's
    /// ([`AccountBackend::balances`](crate::services::AccountBackend::balances)), without a
    /// `received` total.
    pub async fn balance_lines(&self, account_id: &str) -> Result<Vec<AccountBalance>> {
        let Some(poller) = &self.poller else {
            let account = self.services().owner;
            let mut answers = self.backend.balances(std::slice::from_ref(&account)).await;
            return answers.pop().unwrap_or_else(|| Ok(Vec::new()));
        };
        let failed =
            |e: CallError| e.into_error(ErrorKind::UniversalAccount, "Failed to get balances");
        let session = self.session.get().await;
        self.health
            .record(observe::Service::Jwt, session.as_ref().map(|_| ()).map_err(|e| e.message()));
        let session = session.map_err(|e| failed(CallError::Session(e)))?;
        let lines = match poller.lines(account_id, &session.jwt).await {
            Batched::Lines(lines) => lines,
            Batched::Failed(error) => return Err(failed(error)),
            Batched::Refused => {
                let balances = with_session(&self.session, |jwt| {
                    let account = &self.account;
                    async move { account.balances(&jwt, &[account_id], &[]).await }
                })
                .await
                .map_err(failed)?;
                balances.get(account_id).cloned().unwrap_or_default()
            }
        };
        Ok(lines.into_iter().map(AccountBalance::from).collect())
    }

    /// A poll with the detector held by the caller; also returns the balance lines read.
    pub async fn poll_locked(
        self: &Arc<Self>,
        detector: &mut Detector,
    ) -> Result<(Vec<DepositLifecycleEvent>, Vec<BalanceLine>)> {
        let account_id = self.account_id()?;
        let started = Instant::now();
        let lines = self.balance_lines(&account_id).await;
        self.observe_poll(started, &lines);
        let version = detector.version();
        // Without a `received` total (Particle), the detector keeps one from the increases.
        let balances = lines?;
        let attributions = self.attribute_rises(detector, &balances).await;
        let lines = detector.with_received(balances, &attributions);
        let findings = detector.observe(&account_id, &lines, &self.thresholds, now_ms());
        // New deposits and the baselines that found them are saved together: a restart neither
        // loses them nor reports them again.
        let mut change = Change {
            detector: (detector.version() != version).then(|| detector.snapshot()),
            ..Change::default()
        };
        let mut events = Vec::new();
        let mut status = None;
        {
            let mut state = self.state();
            let destination = state.destination.clone();
            for line in &lines {
                self.chains.note_price(line.chain_id, &line.token, line.price_usd);
            }
            for finding in findings {
                match finding {
                    // On a watched chain, a rise is `seen` (or is the money of deposits the
                    // chain showed first): final later, by the finality policy.
                    Finding::Deposit(deposit, range) if self.watches_chain(deposit.chain_id) => {
                        let found = (deposit, range);
                        self.seen_by_balance(
                            &mut state,
                            &account_id,
                            found,
                            &mut events,
                            &mut change,
                        );
                    }
                    Finding::Deposit(deposit, range) => {
                        if state.deposits.contains_key(&deposit.id)
                            || state.results.contains_key(&deposit.id)
                            || state.refunds.contains_key(&deposit.id)
                        {
                            continue;
                        }
                        observe::deposit_detected(deposit.chain_id, deposit.token.symbol());
                        tracing::info!(
                            owner = self.session.owner(),
                            deposit_id = %deposit.id,
                            chain = deposit.chain_id,
                            token = deposit.token.symbol(),
                            amount = %deposit.amount,
                            "deposit detected"
                        );
                        events.push(Inner::lifecycle(
                            DepositPhase::Detected,
                            &deposit,
                            &destination,
                        ));
                        let auto = self.config.auto_sweep && state.jobs.is_some();
                        let (lifecycle, effect) = machine::detected(auto);
                        let seq = state.next_seq;
                        state.next_seq += 1;
                        let id = deposit.id.clone();
                        state.deposits.insert(
                            id.clone(),
                            DepositRecord::new(deposit, range, seq, lifecycle.state),
                        );
                        change.records.extend(state.write_of(&id));
                        if effect == Some(Effect::QueueSweep)
                            && let Some(tx) = &state.jobs
                        {
                            // The job waits in the queue until the events below are out:
                            // the executor needs this lock to start it.
                            let _ = tx.send(Job::Sweep { deposit_id: id, reply: None });
                        }
                    }
                    Finding::BelowThreshold(deposit, why) => {
                        let mut event =
                            Inner::lifecycle(DepositPhase::BelowThreshold, &deposit, &destination);
                        event.error = Some(why);
                        events.push(event);
                    }
                }
            }
            if !self.config.chain_rpc_urls.is_empty() {
                // The balance fallback, and deposits the chain showed that are held now.
                self.judge_chain(&mut state, None, &mut events, &mut change);
            }
            if !events.is_empty() {
                status = state.recount();
                self.invalidate_history();
            }
            change.events = events.iter().cloned().map(DepositEvent::Lifecycle).collect();
            self.hub.commit(change);
        }
        self.emit_status(status);
        Ok((events, lines))
    }

    /// The rises of `balances` that may hold a sweep's or refund's leftover (Particle, see
    /// `watcher::leftover`), split with the account's receive history into deposits and the
    /// leftover. A rise the history does not (yet) explain, or every rise when the history
    /// cannot be read, is counted whole: the leftover is then part of the deposit, as it was
    /// before this split existed. The transfers seen are remembered as counted.
    async fn attribute_rises(
        &self,
        detector: &mut Detector,
        balances: &[AccountBalance],
    ) -> Vec<Attribution> {
        let unsettled = detector.unsettled(balances);
        if unsettled.is_empty() {
            return Vec::new();
        }
        let transactions = match self.recent_history().await {
            Ok(transactions) => transactions,
            Err(error) => {
                let owner = self.session.owner();
                tracing::warn!(owner, error = %error, "history unread: a rise after a sweep is counted whole");
                return Vec::new();
            }
        };
        let attributed = detector.attributed();
        let mut attributions = Vec::new();
        for rise in &unsettled {
            match attribute(rise, &transactions, &attributed) {
                Some(attribution) => {
                    detector.attribute_transfers(&attribution.seen);
                    attributions.push(attribution);
                }
                None => detector.attribute_transfers(&receive_ids(&transactions, rise)),
            }
        }
        attributions
    }

    /// The account's newest transactions (one page of the backend's history, newest first):
    /// where a backend without receipts (Particle) shows who sent a deposit and how much.
    pub(crate) async fn recent_history(&self) -> Result<Vec<UaTransaction>> {
        let services = self.services();
        let page = services.backend.transactions(&services.owner, 1, MAX_PAGE_SIZE).await?;
        Ok(page.transactions)
    }

    /// One poll now, then one at every multiple of `interval` on the process-wide grid
    /// ([`next_tick`]), so that the polls of all clients with this interval share batches. A
    /// poll longer than the interval skips the ticks it missed (polls never overlap).
    pub(crate) async fn watch_loop(weak: Weak<Inner>, interval: Duration) {
        let mut ticker = tokio::time::interval_at(next_tick(interval), interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut first = true;
        loop {
            if !std::mem::take(&mut first) {
                ticker.tick().await;
            }
            let Some(inner) = weak.upgrade() else { return };
            if inner.is_closed() {
                return;
            }
            // Boxed: inline, the poll's future would sit in every client's task while it
            // waits for the next tick (most of its life).
            if let Err(error) = Box::pin(Arc::clone(&inner).poll_once()).await {
                inner.emit_error(&error);
            }
        }
    }
}
