//! The deposit lifecycle, in one pure place.
//!
//! Every change of a deposit's state in the crate is a [`step`] of this machine: the engine
//! (client, sweeper, refunds, recovery) says what happened ([`Input`]), and the machine answers
//! the next state and what to do about it ([`Effect`]s, as data), or refuses an input that is not
//! possible in that state. It does no I/O, takes no lock and reads no clock; the engine applies
//! the effects (queues a job, arms a timer) and persists the record with the events that report
//! the change. What a command (`sweep(id)`, `refund(id)`) is admitted in is [`admits`], which
//! `sweep`, `refund` and `can_refund` all ask, so they cannot disagree.
//!
//! The rule that keeps money from moving twice: a deposit with a send whose outcome is unknown
//! (its [`Lifecycle::unknown`]) is never sent anew. Its next attempt — automatic, a manual
//! `sweep(id)` or a manual `refund(id)` — first resolves that send with the same quote
//! ([`Effect::Resolve`]); only a definite "not delivered" lets a new quote be sent.

use std::fmt;

/// Where a deposit that is still in the client's table stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum DepositState {
    /// On a chain with a chain watcher: seen, not final yet under the finality policy
    /// (`deposit/finality/`). Nothing moves it: [`Input::Final`] lets it go on as a detected
    /// deposit, [`Input::Reorged`] sets it aside.
    Confirming,
    /// A reorganisation removed its transfer before it was final: never swept, credited or
    /// refunded. Tracked still: the same transfer included again ([`Input::Included`]) makes it
    /// `Confirming` under the same id.
    Reorged,
    /// Detected, auto-sweep off: waits for `sweep(id)` or `refund(id)`.
    Waiting,
    /// In the executor's queue for a sweep.
    Queued,
    /// Being swept now.
    Sweeping,
    /// Waiting to be tried again after a failure.
    RetryWait,
    /// A sweep's send whose outcome is unknown: resolved automatically (and by `sweep(id)` or
    /// `refund(id)`) with the same quote before anything else.
    Unresolved,
    /// Its sweep failed for good (and any refund failed or was skipped): the money is in the
    /// account; `sweep(id)`, `refund(id)` or `recover_funds()` may move it.
    Failed,
    /// Auto-refund: waiting `refund.delay_ms` before the next attempt.
    RefundWait,
    /// In the executor's queue for a refund.
    RefundQueued,
    /// Being refunded now.
    Refunding,
    /// A refund's send whose outcome is unknown: resolved automatically (and by `refund(id)`)
    /// with the same quote.
    RefundUnresolved,
}

impl DepositState {
    /// Every state.
    pub(crate) const ALL: [DepositState; 12] = [
        DepositState::Confirming,
        DepositState::Reorged,
        DepositState::Waiting,
        DepositState::Queued,
        DepositState::Sweeping,
        DepositState::RetryWait,
        DepositState::Unresolved,
        DepositState::Failed,
        DepositState::RefundWait,
        DepositState::RefundQueued,
        DepositState::Refunding,
        DepositState::RefundUnresolved,
    ];

    /// The name stored in the deposit store.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            DepositState::Confirming => "confirming",
            DepositState::Reorged => "reorged",
            DepositState::Waiting => "waiting",
            DepositState::Queued => "queued",
            DepositState::Sweeping => "sweeping",
            DepositState::RetryWait => "retry_wait",
            DepositState::Unresolved => "unresolved",
            DepositState::Failed => "failed",
            DepositState::RefundWait => "refund_wait",
            DepositState::RefundQueued => "refund_queued",
            DepositState::Refunding => "refunding",
            DepositState::RefundUnresolved => "refund_unresolved",
        }
    }

    /// The state named `name` ([`as_str`](DepositState::as_str)).
    pub(crate) fn parse(name: &str) -> Option<DepositState> {
        DepositState::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Whether money of the deposit is moving or about to: the client's status is `sweeping`.
    pub(crate) fn busy(self) -> bool {
        matches!(
            self,
            DepositState::Queued
                | DepositState::Sweeping
                | DepositState::RetryWait
                | DepositState::RefundWait
                | DepositState::RefundQueued
                | DepositState::Refunding
        )
    }

    /// Whether the deposit's money is spoken for (not stuck): everything but `Failed`.
    pub(crate) fn live(self) -> bool {
        self != DepositState::Failed
    }

    /// Whether a refund owns the deposit now (queued, waiting, running or unresolved).
    const fn refunding(self) -> bool {
        matches!(
            self,
            DepositState::RefundWait
                | DepositState::RefundQueued
                | DepositState::Refunding
                | DepositState::RefundUnresolved
        )
    }
}

impl fmt::Display for DepositState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a send was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Purpose {
    Sweep,
    Refund,
}

/// What the machine knows of a deposit in the table: its state and, when a send of it may
/// have happened without a definite answer, what that send was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Lifecycle {
    pub state: DepositState,
    /// A signed quote that may have been sent (its outcome unknown, or an attempt under way
    /// when the process died): resolved with that same quote before anything is sent anew.
    pub unknown: Option<Purpose>,
}

/// A host's request about one deposit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Command {
    /// `sweep(id)`.
    Sweep,
    /// `refund(id)` (and the question `can_refund(id)`).
    Refund,
}

/// Whether a [`Command`] is admitted in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Admission {
    /// Admitted: the command queues an attempt.
    Admit,
    /// Refused, for this reason.
    Refuse(Refusal),
}

/// Why a command is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Refusal {
    /// A sweep is queued, running or waiting to retry.
    AlreadySweeping,
    /// A sweep is running now (a refund must wait for it to fail).
    SweepRunning,
    /// A refund owns the deposit.
    BeingRefunded,
    /// Its transfer is not final on its chain yet.
    Unconfirmed,
    /// A reorganisation removed its transfer.
    Reorged,
}

impl Refusal {
    /// The message of the refusal, naming the deposit (`id` already quoted).
    pub(crate) fn message(self, id: &str) -> String {
        match self {
            Refusal::AlreadySweeping => format!("Deposit {id} is already being swept"),
            Refusal::SweepRunning => {
                format!("Deposit {id} is being swept now; it can be refunded if the sweep fails")
            }
            Refusal::BeingRefunded => format!("Deposit {id} is already being refunded"),
            Refusal::Unconfirmed => format!(
                "Deposit {id} is not final on its chain yet (confirming); it can be swept or refunded once it is confirmed"
            ),
            Refusal::Reorged => format!(
                "Deposit {id} was removed from its chain by a reorganisation; there is nothing to sweep or refund"
            ),
        }
    }
}

/// Whether `command` is admitted in `state` — the one answer `sweep`, `refund` and
/// `can_refund` share.
///
/// A deposit whose send outcome is unknown (`Unresolved`, `RefundUnresolved`) admits the
/// command that can resolve it: the attempt it queues resolves that send with the same quote
/// first ([`Effect::Resolve`]) and sends nothing new unless the send is known not to have been
/// delivered. So `refund(id)` of an `Unresolved` deposit either finds its sweep delivered (the
/// deposit is credited, the refund skipped) or refunds it; never both.
///
/// A deposit whose transfer is not final (`Confirming`) or was reorganised out (`Reorged`)
/// admits neither: no money of it may move before its chain says it is there for good. (A host
/// that accepts the risk on small amounts sets `finality.instantBelowUsd`: such deposits are
/// final as soon as they are seen, and never wait here.)
pub(crate) const fn admits(state: DepositState, command: Command) -> Admission {
    use DepositState as S;
    match (command, state) {
        (_, S::Confirming) => Admission::Refuse(Refusal::Unconfirmed),
        (_, S::Reorged) => Admission::Refuse(Refusal::Reorged),
        (Command::Sweep, S::Waiting | S::Failed | S::Unresolved) => Admission::Admit,
        (Command::Sweep, S::Queued | S::Sweeping | S::RetryWait) => {
            Admission::Refuse(Refusal::AlreadySweeping)
        }
        (Command::Sweep, S::RefundWait | S::RefundQueued | S::Refunding | S::RefundUnresolved) => {
            Admission::Refuse(Refusal::BeingRefunded)
        }
        (Command::Refund, S::Sweeping) => Admission::Refuse(Refusal::SweepRunning),
        (Command::Refund, S::RefundQueued | S::Refunding) => {
            Admission::Refuse(Refusal::BeingRefunded)
        }
        (
            Command::Refund,
            S::Waiting
            | S::Queued
            | S::RetryWait
            | S::Unresolved
            | S::Failed
            | S::RefundWait
            | S::RefundUnresolved,
        ) => Admission::Admit,
    }
}

/// What happened to a deposit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Input {
    /// A host command that [`admits`] admitted.
    Requested(Command),
    /// The executor took the queued job: an attempt starts.
    AttemptStarted,
    /// The attempt found the deposit's sweep delivered (its own send, or an earlier one it
    /// resolved): credited.
    Delivered,
    /// The refund was delivered.
    Refunded,
    /// The attempt failed with a definite answer (nothing moved). `again`: the attempt is
    /// automatic and has attempts left; `auto_refund`: a sweep failed for good starts the
    /// automatic refund.
    Failed { again: bool, auto_refund: bool },
    /// The refund cannot be made (no receiver of the deposit's chain type).
    Skipped,
    /// A send of this purpose has no definite answer.
    OutcomeUnknown(Purpose),
    /// A timer the machine asked for fired.
    Due,
    /// `recover_funds()` moved the stuck money of a failed deposit.
    Recovered,
    /// The client started again on its store after the process stopped (a crash, a kill).
    Restarted,
    /// A `Confirming` deposit met its chain's finality policy (or the instant rule, or the
    /// balance fallback): it goes on as a detected deposit (queued with `auto_sweep`).
    Final { auto_sweep: bool },
    /// The chain no longer holds the transfer of a `Confirming` deposit.
    Reorged,
    /// The transfer of a `Reorged` deposit is in the chain again.
    Included,
}

/// Where a deposit goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Next {
    /// It stays in the table, in this lifecycle.
    Open(Lifecycle),
    /// It leaves the table credited (swept to its destination, or recovered).
    Credited,
    /// It leaves the table refunded.
    Refunded,
}

/// What the engine does about a step (besides persisting the record and its events, which
/// every step implies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Effect {
    /// Queue a sweep job.
    QueueSweep,
    /// Queue a refund job.
    QueueRefund,
    /// Queue the sweep again after `sweep_retry_delay_ms` (then [`Input::Due`]).
    ScheduleRetry,
    /// Queue the refund after `refund.delay_ms` (then [`Input::Due`]).
    ScheduleRefund,
    /// Try to resolve the unknown outcome after the reconcile interval (then [`Input::Due`]).
    ScheduleReconcile,
    /// The attempt starting now sends a new quote of this purpose.
    Send(Purpose),
    /// The attempt starting now first resolves the earlier send of this purpose with its same
    /// quote; it sends anew only when that send is known not to have been delivered.
    Resolve(Purpose),
}

/// The machine's answer to an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Step {
    pub next: Next,
    pub effect: Option<Effect>,
}

/// An input that is not possible in the state it came in (a bug, or a stale job: the engine
/// leaves the deposit as it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Illegal {
    pub state: DepositState,
    pub input: Input,
}

/// A deposit just seen on a chain with a chain watcher: confirming until its chain's policy is
/// met.
pub(crate) const fn seen() -> Lifecycle {
    Lifecycle { state: DepositState::Confirming, unknown: None }
}

/// A deposit just detected: queued for its sweep with auto-sweep, else waiting for the host.
pub(crate) const fn detected(auto_sweep: bool) -> (Lifecycle, Option<Effect>) {
    if auto_sweep {
        (Lifecycle { state: DepositState::Queued, unknown: None }, Some(Effect::QueueSweep))
    } else {
        (Lifecycle { state: DepositState::Waiting, unknown: None }, None)
    }
}

const fn open(state: DepositState, unknown: Option<Purpose>, effect: Option<Effect>) -> Step {
    Step { next: Next::Open(Lifecycle { state, unknown }), effect }
}

/// The next lifecycle of a deposit in `now` that `input` happened to.
///
/// # Errors
/// [`Illegal`] when `input` cannot happen in `now.state`.
pub(crate) fn step(now: Lifecycle, input: Input) -> Result<Step, Illegal> {
    use DepositState as S;
    let illegal = Err(Illegal { state: now.state, input });
    let unknown = now.unknown;
    Ok(match (now.state, input) {
        (state, Input::Requested(command)) => match (admits(state, command), command) {
            (Admission::Refuse(_), _) => return illegal,
            (Admission::Admit, Command::Sweep) => {
                open(S::Queued, unknown, Some(Effect::QueueSweep))
            }
            (Admission::Admit, Command::Refund) => {
                open(S::RefundQueued, unknown, Some(Effect::QueueRefund))
            }
        },
        // From here on a send may be out: the engine records the signed quote before it
        // sends it, so a restart finds it and resolves it.
        (S::Queued, Input::AttemptStarted) => {
            let (effect, purpose) = attempt(now);
            open(S::Sweeping, Some(purpose), Some(effect))
        }
        (S::RefundQueued, Input::AttemptStarted) => {
            let (effect, purpose) = attempt(now);
            open(S::Refunding, Some(purpose), Some(effect))
        }
        (S::Sweeping, Input::Delivered) => Step { next: Next::Credited, effect: None },
        // A refund attempt resolving an earlier sweep found it delivered.
        (S::Refunding, Input::Delivered) if matches!(unknown, Some(Purpose::Sweep)) => {
            Step { next: Next::Credited, effect: None }
        }
        (S::Refunding, Input::Refunded) => Step { next: Next::Refunded, effect: None },
        (S::Sweeping, Input::Failed { again: true, .. }) => {
            open(S::RetryWait, None, Some(Effect::ScheduleRetry))
        }
        (S::Sweeping, Input::Failed { again: false, auto_refund: true }) => {
            open(S::RefundWait, None, Some(Effect::ScheduleRefund))
        }
        (S::Sweeping, Input::Failed { again: false, auto_refund: false }) => {
            open(S::Failed, None, None)
        }
        (S::Refunding, Input::Failed { again: true, .. }) => {
            open(S::RefundWait, None, Some(Effect::ScheduleRefund))
        }
        (S::Refunding, Input::Failed { again: false, .. } | Input::Skipped) => {
            open(S::Failed, None, None)
        }
        (S::Sweeping, Input::OutcomeUnknown(Purpose::Sweep)) => {
            open(S::Unresolved, Some(Purpose::Sweep), Some(Effect::ScheduleReconcile))
        }
        // A refund attempt that resolves an earlier sweep learns nothing more of it.
        (S::Refunding, Input::OutcomeUnknown(Purpose::Sweep))
            if matches!(unknown, Some(Purpose::Sweep)) =>
        {
            open(S::Unresolved, Some(Purpose::Sweep), Some(Effect::ScheduleReconcile))
        }
        (S::Refunding, Input::OutcomeUnknown(Purpose::Refund)) => {
            open(S::RefundUnresolved, Some(Purpose::Refund), Some(Effect::ScheduleReconcile))
        }
        (S::RetryWait | S::Unresolved, Input::Due) => {
            open(S::Queued, unknown, Some(Effect::QueueSweep))
        }
        (S::RefundWait | S::RefundUnresolved, Input::Due) => {
            open(S::RefundQueued, unknown, Some(Effect::QueueRefund))
        }
        (S::Failed, Input::Recovered) => Step { next: Next::Credited, effect: None },
        // Nothing was ever sent of a deposit before it was final.
        (S::Confirming, Input::Final { auto_sweep }) if unknown.is_none() => {
            let (next, effect) = detected(auto_sweep);
            Step { next: Next::Open(next), effect }
        }
        (S::Confirming, Input::Reorged) => open(S::Reorged, unknown, None),
        (S::Reorged, Input::Included) => open(S::Confirming, unknown, None),
        (state, Input::Restarted) => restarted(state, unknown),
        _ => return illegal,
    })
}

/// The send an attempt starts with (the earlier send resolved first when there is one), and
/// the purpose of the send that may be out from then on.
const fn attempt(now: Lifecycle) -> (Effect, Purpose) {
    match (now.unknown, now.state) {
        (Some(purpose), _) => (Effect::Resolve(purpose), purpose),
        (None, DepositState::RefundQueued) => (Effect::Send(Purpose::Refund), Purpose::Refund),
        (None, _) => (Effect::Send(Purpose::Sweep), Purpose::Sweep),
    }
}

/// Where a deposit found in the store resumes. A send that may have happened is resolved first
/// (the job queued for it carries its quote); states waiting for a timer get it again; a
/// deposit that was mid-attempt is queued again. Idempotent: a client killed while starting
/// again resumes the same way.
const fn restarted(state: DepositState, unknown: Option<Purpose>) -> Step {
    use DepositState as S;
    let refunding = state.refunding();
    match (unknown, state) {
        // A refund owned it (it may have been resolving an earlier sweep): the refund resumes.
        (Some(_), _) if refunding => open(S::RefundQueued, unknown, Some(Effect::QueueRefund)),
        (Some(Purpose::Refund), _) => open(S::RefundQueued, unknown, Some(Effect::QueueRefund)),
        (Some(Purpose::Sweep), _) => open(S::Queued, unknown, Some(Effect::QueueSweep)),
        (None, S::Waiting) => open(S::Waiting, None, None),
        // The chain watcher reports the transfer and the heads again when it starts.
        (None, S::Confirming) => open(S::Confirming, None, None),
        (None, S::Reorged) => open(S::Reorged, None, None),
        (None, S::Failed) => open(S::Failed, None, None),
        (None, S::RetryWait) => open(S::RetryWait, None, Some(Effect::ScheduleRetry)),
        (None, S::RefundWait) => open(S::RefundWait, None, Some(Effect::ScheduleRefund)),
        (None, S::Queued | S::Sweeping | S::Unresolved) => {
            open(S::Queued, None, Some(Effect::QueueSweep))
        }
        (None, S::RefundQueued | S::Refunding | S::RefundUnresolved) => {
            open(S::RefundQueued, None, Some(Effect::QueueRefund))
        }
    }
}

#[cfg(test)]
mod tests;
