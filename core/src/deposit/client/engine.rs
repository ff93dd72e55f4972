//! The engine's side of a client (`Inner`): initialization, polls and detection, the store's
//! resume, the watch loop.

use super::*;

impl Inner {
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The one guard of the client's own lifecycle: fails in a forked child, and after
    /// `close()` unless [`ClientCall::answers_when_closed`] says `call` still answers.
    pub(crate) fn guard(&self, call: ClientCall) -> Result<()> {
        self.runtime.check_process()?;
        if self.is_closed() && !call.answers_when_closed() {
            return Err(Error::new(ErrorKind::DepositSdk, "the client is closed"));
        }
        Ok(())
    }

    pub fn emit_status(&self, change: Option<ClientStatus>) {
        if let Some(status) = change {
            self.hub.emit(DepositEvent::StatusChanged(status));
        }
    }

    pub fn emit_error(&self, error: &Error) {
        self.hub
            .emit(DepositEvent::Error { kind: error.kind(), message: error.message().to_owned() });
    }

    /// Empties the history caches (the client changed the history).
    pub fn invalidate_history(&self) {
        self.history.lock().unwrap_or_else(|e| e.into_inner()).invalidate();
    }

    /// A lifecycle event of `deposit`.
    pub fn lifecycle(
        phase: DepositPhase,
        deposit: &DetectedDeposit,
        destination: &Destination,
    ) -> DepositLifecycleEvent {
        DepositLifecycleEvent {
            id: deposit.id.clone(),
            phase,
            token: deposit.token,
            chain_id: deposit.chain_id,
            amount: deposit.amount.clone(),
            amount_usd: deposit.amount_usd,
            destination: Some(EventDestination {
                address: destination.address.clone(),
                chain_id: destination.chain_id,
            }),
            transaction_id: None,
            explorer_url: None,
            error: None,
            timestamp: now_ms(),
        }
    }

    pub fn account_id(&self) -> Result<String> {
        self.state().account.as_ref().map(|a| a.account_id.clone()).ok_or_else(not_initialized)
    }

    /// `initialize()`'s network part: session, wallet check, account.
    pub(super) async fn init_async(self: Arc<Self>) -> Result<(AccountInfo, String)> {
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
        if let Some(reason) = evm_address_problem(&wallet) {
            return Err(Error::new(
                ErrorKind::Protocol,
                format!(
                    "the signer returned an invalid wallet address {} ({reason})",
                    quote(&wallet)
                ),
            ));
        }
        if let Some(expected) = &self.config.intermediary
            && !expected.eq_ignore_ascii_case(&wallet)
        {
            return Err(Error::configuration(format!(
                "intermediaryAddress {} does not match the signer's wallet {} for this owner",
                quote(expected),
                quote(&wallet)
            )));
        }
        let info = with_session(&self.session, |jwt| {
            let account = &self.account;
            let wallet = wallet.clone();
            async move { account.init_account(&jwt, &wallet).await }
        })
        .await
        .map_err(|e| {
            e.into_error(ErrorKind::UniversalAccount, "Failed to initialize Universal Account")
        })?;
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

    /// One poll: fetch balances, detect, register and report deposits, queue their sweeps.
    /// Polls never overlap (the detector's lock is held for the whole cycle).
    pub async fn poll_once(self: Arc<Self>) -> Result<Vec<DepositLifecycleEvent>> {
        let mut detector = self.detector.lock().await;
        let (events, _) = self.poll_locked(&mut detector).await?;
        drop(detector);
        Ok(events)
    }

    /// The account's balance lines, read in a batch with other clients' polls of the same
    /// service ([`super::poller`]); alone, with the session renewed once on a 401, when the
    /// service refused the batch.
    pub async fn balance_lines(&self, account_id: &str) -> Result<Vec<BalanceLine>> {
        let failed =
            |e: CallError| e.into_error(ErrorKind::UniversalAccount, "Failed to get balances");
        let session = self.session.get().await.map_err(|e| failed(CallError::Session(e)))?;
        match self.poller.lines(account_id, &session.jwt).await {
            Batched::Lines(lines) => return Ok(lines),
            Batched::Failed(error) => return Err(failed(error)),
            Batched::Refused => {}
        }
        let balances = with_session(&self.session, |jwt| {
            let account = &self.account;
            async move { account.balances(&jwt, &[account_id], &[]).await }
        })
        .await
        .map_err(failed)?;
        Ok(balances.get(account_id).cloned().unwrap_or_default())
    }

    /// A poll with the detector held by the caller; also returns the balance lines read.
    pub async fn poll_locked(
        self: &Arc<Self>,
        detector: &mut Detector,
    ) -> Result<(Vec<DepositLifecycleEvent>, Vec<BalanceLine>)> {
        let account_id = self.account_id()?;
        let lines = self.balance_lines(&account_id).await?;
        let version = detector.version();
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
            for finding in findings {
                match finding {
                    Finding::Deposit(deposit, range) => {
                        if state.deposits.contains_key(&deposit.id)
                            || state.results.contains_key(&deposit.id)
                            || state.refunds.contains_key(&deposit.id)
                        {
                            continue;
                        }
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

    /// Records `sent` as the attempt of deposit `id` now under way, durably, before it is
    /// sent. `Err` (why) when it cannot be recorded: then it must not be sent.
    pub(crate) fn record_in_flight(
        &self,
        id: &str,
        sent: &SentQuote,
    ) -> std::result::Result<(), String> {
        let mut state = self.state();
        let Some(record) = state.deposits.get_mut(id) else {
            return Err(format!("deposit {id} left the table"));
        };
        record.in_flight = Some(sent.clone());
        let change = Change {
            records: state.write_of(id).into_iter().collect(),
            attempts: vec![AttemptWrite {
                quote_id: sent.quote.quote_id.clone(),
                deposit_id: id.to_owned(),
                purpose: sent.purpose,
                outcome: None,
                transaction_id: None,
            }],
            ..Change::default()
        };
        match self.hub.store().commit(change, now_ms()) {
            (_, None) => Ok(()),
            (_, Some(error)) => {
                if let Some(record) = state.deposits.get_mut(id) {
                    record.in_flight = None;
                }
                Err(format!(
                    "nothing was sent: the attempt could not be recorded ({})",
                    error.message()
                ))
            }
        }
    }

    /// Reads what an earlier run of this client left in the store (nothing without one).
    pub(super) fn load_store(&self, account_id: &str) -> Result<Restored> {
        let store = self.hub.store();
        store.bind_account(account_id, now_ms())?;
        store.load()
    }

    /// Puts an earlier run's state back and restarts its work: every deposit where it was,
    /// each quote that may have been sent resolved with that same quote. Called by
    /// `initialize()` with the executor running and the state lock held.
    pub(super) fn resume(self: &Arc<Self>, state: &mut State, restored: Restored) -> Result<()> {
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

    /// One poll now, then one at every multiple of `interval` on the process-wide grid
    /// ([`next_tick`]), so that the polls of all clients with this interval share batches. A
    /// poll longer than the interval skips the ticks it missed (polls never overlap).
    pub(super) async fn watch_loop(weak: Weak<Inner>, interval: Duration) {
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
            if let Err(error) = Arc::clone(&inner).poll_once().await {
                inner.emit_error(&error);
            }
        }
    }
}
