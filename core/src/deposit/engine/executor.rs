//! The serial executor: one per client, it runs every job that moves money — sweeps
//! (`sweeper.rs`), refunds (`refund/`) and recoveries (`recovery.rs`) — one at a time, from
//! one unbounded FIFO, so that a deposit is never swept and refunded at the same time
//! (reference defect 17) and the decision that ends a deposit is taken by that one task. And
//! the timers that queue a deposit's job again when the machine armed one (retry, refund
//! delay, reconciliation of an unknown outcome).

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::{Inner, State};
use crate::deposit::machine::{DepositState, Effect, Input};
use crate::deposit::model::{RecoveryResult, RefundResult, SweepResult};
use crate::error::Result;

/// The longest wait between two automatic resolutions of an unknown outcome.
const MAX_RECONCILE_INTERVAL: Duration = Duration::from_secs(600);

/// A job of the serial executor.
#[derive(Debug)]
pub(crate) enum Job {
    /// Sweep a deposit. With a reply: a manual sweep, one attempt, its result sent there.
    Sweep { deposit_id: String, reply: Option<oneshot::Sender<SweepResult>> },
    /// Refund a deposit (its reason and mode are in its record). With a reply: a manual
    /// refund.
    Refund { deposit_id: String, reply: Option<oneshot::Sender<Result<RefundResult>>> },
    /// Recover the stuck funds.
    Recover { reply: oneshot::Sender<Result<Vec<RecoveryResult>>> },
}

impl Inner {
    pub(crate) async fn executor_loop(weak: Weak<Inner>, mut jobs: mpsc::UnboundedReceiver<Job>) {
        // Each job's future is boxed: inline, the largest (a sweep's) would sit in every
        // client's idle task (a few KiB per owner, most of the time waiting for a job).
        while let Some(job) = jobs.recv().await {
            let Some(inner) = weak.upgrade() else { return };
            if inner.is_closed() {
                return;
            }
            match job {
                Job::Sweep { deposit_id, reply } => {
                    let manual = reply.is_some();
                    let result = Box::pin(Arc::clone(&inner).run_sweep(&deposit_id, manual)).await;
                    if let (Some(reply), Some(result)) = (reply, result) {
                        let _ = reply.send(result);
                    }
                }
                Job::Refund { deposit_id, reply } => {
                    let manual = reply.is_some();
                    let result = Box::pin(Arc::clone(&inner).run_refund(&deposit_id, manual)).await;
                    if let (Some(reply), Some(result)) = (reply, result) {
                        let _ = reply.send(result);
                    }
                }
                Job::Recover { reply } => {
                    let result = Box::pin(Arc::clone(&inner).run_recovery()).await;
                    let _ = reply.send(result);
                }
            }
        }
    }

    /// Resolves `deposit_id`'s unknown outcome again after a while (its sweep's or its
    /// refund's, whichever is unresolved then).
    pub(crate) fn schedule_reconcile(
        self: &Arc<Self>,
        state: &mut State,
        deposit_id: &str,
        rounds: u32,
    ) {
        if self.is_closed() {
            return;
        }
        let factor = 2u32.saturating_pow(rounds.saturating_sub(1).min(16));
        let delay =
            self.config.reconcile_interval.saturating_mul(factor).min(MAX_RECONCILE_INTERVAL);
        let weak = Arc::downgrade(self);
        let id = deposit_id.to_owned();
        state.after(&self.runtime, delay, async move {
            if let Some(inner) = weak.upgrade() {
                inner.due(&id, &[DepositState::Unresolved, DepositState::RefundUnresolved]);
            }
        });
    }

    /// The sweep of `deposit_id` again after `sweep_retry_delay_ms`.
    pub(crate) fn schedule_retry(self: &Arc<Self>, state: &mut State, deposit_id: &str) {
        let weak = Arc::downgrade(self);
        let id = deposit_id.to_owned();
        state.after(&self.runtime, self.config.sweep_retry_delay, async move {
            if let Some(inner) = weak.upgrade() {
                inner.due(&id, &[DepositState::RetryWait]);
            }
        });
    }

    /// A timer armed for `deposit_id` in one of the states `armed_in` fired
    /// ([`Input::Due`]): the machine queues its sweep or refund again. A timer that no longer
    /// applies (the deposit moved on since) does nothing.
    pub(crate) fn due(&self, deposit_id: &str, armed_in: &[DepositState]) {
        let change = {
            let mut state = self.state();
            let Some(tx) = state.jobs.clone() else { return };
            let Some(record) = state.deposits.get_mut(deposit_id) else { return };
            if !armed_in.contains(&record.state) {
                return;
            }
            let job = match record.advance(Input::Due).map(|step| step.effect) {
                Ok(Some(Effect::QueueSweep)) => {
                    Job::Sweep { deposit_id: deposit_id.to_owned(), reply: None }
                }
                Ok(Some(Effect::QueueRefund)) => {
                    Job::Refund { deposit_id: deposit_id.to_owned(), reply: None }
                }
                _ => return,
            };
            let _ = tx.send(job);
            state.recount()
        };
        self.emit_status(change);
    }

    /// The next refund attempt of `deposit_id` after `refund.delay_ms`.
    pub(crate) fn schedule_refund(self: &Arc<Self>, state: &mut State, deposit_id: &str) {
        let weak = Arc::downgrade(self);
        let id = deposit_id.to_owned();
        let delay = Duration::from_millis(self.config.refund.delay_ms);
        state.after(&self.runtime, delay, async move {
            if let Some(inner) = weak.upgrade() {
                inner.due(&id, &[DepositState::RefundWait]);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Weak;
    use std::time::Duration;

    use super::Inner;

    /// Every client keeps these two tasks for its whole life, mostly idle: their futures must
    /// not carry a poll's, a sweep's or a refund's state inline (memory per owner).
    #[test]
    fn a_clients_idle_tasks_stay_small() {
        let (_jobs, rx) = tokio::sync::mpsc::unbounded_channel();
        let executor = Inner::executor_loop(Weak::new(), rx);
        let watcher = Inner::watch_loop(Weak::new(), Duration::from_secs(2));
        let (executor, watcher) = (size_of_val(&executor), size_of_val(&watcher));
        assert!(executor <= 256, "the executor loop's future is {executor} bytes");
        assert!(watcher <= 256, "the watch loop's future is {watcher} bytes");
    }
}
