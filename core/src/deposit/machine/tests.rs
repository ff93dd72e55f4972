//! The machine's properties: for any sequence of inputs from any reachable state a deposit is
//! never both credited and refunded, never sent anew while a send of it may have happened, and
//! never continues once credited or refunded (it leaves the table); every state is reachable; `admits` answers every (state,
//! command) and agrees with what `step` accepts; the restart mapping is idempotent.

use std::collections::{HashSet, VecDeque};

use proptest::prelude::*;

use super::*;

const COMMANDS: [Command; 2] = [Command::Sweep, Command::Refund];
const PURPOSES: [Purpose; 2] = [Purpose::Sweep, Purpose::Refund];

fn every_input() -> Vec<Input> {
    let mut inputs = vec![
        Input::AttemptStarted,
        Input::Delivered,
        Input::Refunded,
        Input::Skipped,
        Input::Due,
        Input::Recovered,
        Input::Restarted,
        Input::Reorged,
        Input::Included,
    ];
    inputs.extend(COMMANDS.map(Input::Requested));
    inputs.extend(PURPOSES.map(Input::OutcomeUnknown));
    for again in [false, true] {
        for auto_refund in [false, true] {
            inputs.push(Input::Failed { again, auto_refund });
        }
        inputs.push(Input::Final { auto_sweep: again });
    }
    inputs
}

fn every_lifecycle() -> Vec<Lifecycle> {
    let unknowns = [None, Some(Purpose::Sweep), Some(Purpose::Refund)];
    DepositState::ALL
        .into_iter()
        .flat_map(|state| unknowns.map(|unknown| Lifecycle { state, unknown }))
        .collect()
}

fn start(auto_sweep: bool) -> Lifecycle {
    detected(auto_sweep).0
}

/// The lifecycles reachable from a detection, by every input.
fn reachable() -> HashSet<Lifecycle> {
    let mut seen: HashSet<Lifecycle> =
        [start(true), start(false), super::seen()].into_iter().collect();
    let mut queue: VecDeque<Lifecycle> = seen.iter().copied().collect();
    while let Some(now) = queue.pop_front() {
        for input in every_input() {
            if let Ok(Step { next: Next::Open(next), .. }) = step(now, input)
                && seen.insert(next)
            {
                queue.push_back(next);
            }
        }
    }
    seen
}

#[test]
fn every_state_is_reachable_and_both_ends_too() {
    let states: HashSet<DepositState> = reachable().iter().map(|l| l.state).collect();
    assert_eq!(states.len(), DepositState::ALL.len(), "reached only {states:?}");
    let ends: HashSet<Next> = reachable()
        .into_iter()
        .flat_map(|now| every_input().into_iter().filter_map(move |i| step(now, i).ok()))
        .map(|s| s.next)
        .filter(|next| !matches!(next, Next::Open(_)))
        .collect();
    assert_eq!(ends, [Next::Credited, Next::Refunded].into_iter().collect());
}

#[test]
fn admits_answers_every_state_and_command_and_step_agrees() {
    for lifecycle in every_lifecycle() {
        for command in COMMANDS {
            let admitted = admits(lifecycle.state, command) == Admission::Admit;
            let accepted = step(lifecycle, Input::Requested(command)).is_ok();
            assert_eq!(admitted, accepted, "{lifecycle:?} {command:?}");
        }
    }
}

/// The decisions, written out: what `sweep(id)` and `refund(id)` / `can_refund(id)` answer in
/// each state. `refund`, `can_refund` and `sweep` ask `admits`, so this is their table too.
#[test]
fn the_admission_table() {
    use Admission::{Admit, Refuse};
    use DepositState as S;
    let table = [
        (S::Waiting, Admit, Admit),
        (S::Queued, Refuse(Refusal::AlreadySweeping), Admit),
        (S::Sweeping, Refuse(Refusal::AlreadySweeping), Refuse(Refusal::SweepRunning)),
        (S::RetryWait, Refuse(Refusal::AlreadySweeping), Admit),
        // Unknown outcome: the admitted attempt resolves the same quote first.
        (S::Unresolved, Admit, Admit),
        (S::Failed, Admit, Admit),
        (S::RefundWait, Refuse(Refusal::BeingRefunded), Admit),
        (S::RefundQueued, Refuse(Refusal::BeingRefunded), Refuse(Refusal::BeingRefunded)),
        (S::Refunding, Refuse(Refusal::BeingRefunded), Refuse(Refusal::BeingRefunded)),
        (S::RefundUnresolved, Refuse(Refusal::BeingRefunded), Admit),
        // Not final on its chain, or reorganised out: nothing moves.
        (S::Confirming, Refuse(Refusal::Unconfirmed), Refuse(Refusal::Unconfirmed)),
        (S::Reorged, Refuse(Refusal::Reorged), Refuse(Refusal::Reorged)),
    ];
    assert_eq!(table.len(), DepositState::ALL.len());
    for (state, sweep, refund) in table {
        assert_eq!(admits(state, Command::Sweep), sweep, "sweep in {state}");
        assert_eq!(admits(state, Command::Refund), refund, "refund in {state}");
    }
}

#[test]
fn an_attempt_with_an_unknown_send_resolves_it_first() {
    for lifecycle in every_lifecycle() {
        if let Ok(Step { effect: Some(effect), .. }) = step(lifecycle, Input::AttemptStarted) {
            match lifecycle.unknown {
                Some(purpose) => assert_eq!(effect, Effect::Resolve(purpose), "{lifecycle:?}"),
                None => assert!(matches!(effect, Effect::Send(_)), "{lifecycle:?}"),
            }
        }
    }
}

#[test]
fn the_restart_mapping_is_idempotent_and_keeps_the_unknown_send() {
    for lifecycle in every_lifecycle() {
        let once = step(lifecycle, Input::Restarted).expect("any open deposit restarts");
        let Next::Open(after) = once.next else { panic!("{lifecycle:?} left the table") };
        assert_eq!(after.unknown, lifecycle.unknown, "{lifecycle:?}");
        let twice = step(after, Input::Restarted).expect("restarts again");
        assert_eq!(twice, once, "{lifecycle:?}");
        // A deposit that was mid-attempt or had an unknown send gets its job back.
        if lifecycle.unknown.is_some() || matches!(lifecycle.state, DepositState::Sweeping) {
            assert!(
                matches!(once.effect, Some(Effect::QueueSweep | Effect::QueueRefund)),
                "{lifecycle:?} → {once:?}"
            );
        }
    }
}

/// A model of the money, checked after every step: the machine's record of an unknown send
/// matches what happened, no new send while one may be out, one end at most.
#[derive(Debug, Default)]
struct Money {
    /// A send whose outcome no definite answer has told.
    out: Option<Purpose>,
    /// The attempt running now sent (or resolved) this purpose.
    attempt: Option<Purpose>,
}

fn input_strategy() -> impl Strategy<Value = Input> {
    proptest::sample::select(every_input())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_keeps_the_money_rules(
        auto_sweep in any::<bool>(),
        from_chain in any::<bool>(),
        inputs in proptest::collection::vec(input_strategy(), 0..60),
    ) {
        let mut now = if from_chain { super::seen() } else { start(auto_sweep) };
        let mut money = Money::default();
        for input in inputs {
            let Ok(stepped) = step(now, input) else { continue };
            match stepped.effect {
                Some(Effect::Send(purpose)) => {
                    prop_assert!(money.out.is_none(), "sent {purpose:?} anew with {:?} out", money.out);
                    money.attempt = Some(purpose);
                    money.out = Some(purpose);
                }
                Some(Effect::Resolve(purpose)) => {
                    prop_assert_eq!(money.out, Some(purpose), "resolved a send that is not out");
                    money.attempt = Some(purpose);
                }
                _ => {}
            }
            let attempt = money.attempt;
            match input {
                Input::OutcomeUnknown(purpose) => money.out = Some(purpose),
                Input::Delivered | Input::Refunded | Input::Failed { .. } | Input::Skipped => {
                    money.out = None;
                    money.attempt = None;
                }
                _ => {}
            }
            match stepped.next {
                Next::Open(next) => {
                    prop_assert_eq!(next.unknown, money.out, "{:?} after {:?}", next, input);
                    now = next;
                }
                // The record leaves the table: credited or refunded, once, and nothing after.
                Next::Credited => {
                    prop_assert!(attempt == Some(Purpose::Sweep) || input == Input::Recovered);
                    break;
                }
                // A refund attempt sent a refund, or resolved an earlier sweep as not delivered
                // and then sent one.
                Next::Refunded => {
                    prop_assert!(attempt.is_some() && now.state == DepositState::Refunding);
                    break;
                }
            }
        }
    }
}

/// The finality rules: a deposit seen on a chain moves no money, whatever happens, until it is
/// final; a reorganised one never does until its transfer is back and final; once it went on
/// (final), the chain's word no longer applies.
#[test]
fn nothing_moves_before_a_deposit_is_final() {
    let mut unfinal: HashSet<Lifecycle> = [super::seen()].into_iter().collect();
    let mut queue: VecDeque<Lifecycle> = unfinal.iter().copied().collect();
    while let Some(now) = queue.pop_front() {
        for input in every_input() {
            let Ok(stepped) = step(now, input) else { continue };
            if matches!(input, Input::Final { .. }) {
                assert_eq!(now.state, DepositState::Confirming, "final from {now:?}");
                continue;
            }
            assert_eq!(stepped.effect, None, "{now:?} {input:?}");
            let Next::Open(next) = stepped.next else { panic!("{now:?} {input:?} ended") };
            if unfinal.insert(next) {
                queue.push_back(next);
            }
        }
    }
    let states: HashSet<DepositState> = unfinal.iter().map(|l| l.state).collect();
    assert_eq!(states, [DepositState::Confirming, DepositState::Reorged].into_iter().collect());
    // Seen → reorged → included again → final: the same record goes on as detected.
    let reorged = step(super::seen(), Input::Reorged).unwrap();
    let Next::Open(reorged) = reorged.next else { panic!("reorged left the table") };
    assert!(step(reorged, Input::Final { auto_sweep: true }).is_err(), "final while removed");
    let back = step(reorged, Input::Included).unwrap();
    let Next::Open(back) = back.next else { panic!("included left the table") };
    let went_on = step(back, Input::Final { auto_sweep: true }).unwrap();
    assert_eq!(went_on.next, Next::Open(detected(true).0));
    assert_eq!(went_on.effect, Some(Effect::QueueSweep));
    let waiting = step(back, Input::Final { auto_sweep: false }).unwrap();
    assert_eq!((waiting.next, waiting.effect), (Next::Open(detected(false).0), None));
    // After it went on, a removal of its transfer is not an input of the machine.
    for state in DepositState::ALL.into_iter().filter(|s| *s != DepositState::Confirming) {
        let now = Lifecycle { state, unknown: None };
        assert!(step(now, Input::Reorged).is_err(), "{state}");
    }
}
