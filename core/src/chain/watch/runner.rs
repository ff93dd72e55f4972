//! A watcher's thread: steps its follower, pauses `poll_interval` when it is caught up, backs
//! off while the endpoint fails, and says so — [`Down`](ChainSignal::Down) at the first failure,
//! [`Up`](ChainSignal::Up) once it reached the endpoint again and caught up from the height it
//! had processed (nothing is skipped: the follower resumes where it stopped).

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use super::WatchSettings;
use super::evm::EvmFollower;
use super::signal::ChainSignal;
use super::solana::SolanaFollower;
use crate::error::{Error, ErrorKind, Result};

/// The followers a runner can drive.
#[derive(Debug)]
pub(super) enum Follower {
    Evm(Box<EvmFollower>),
    Solana(Box<SolanaFollower>),
}

impl Follower {
    fn step(&mut self, emit: &mut dyn FnMut(ChainSignal)) -> Result<bool> {
        match self {
            Follower::Evm(f) => f.step(emit),
            Follower::Solana(f) => f.step(emit),
        }
    }

    /// The pause after a step that caught up (a websocket endpoint: until its next head);
    /// `false` once stopped.
    fn pause(&self, control: &Control, settings: &WatchSettings) -> bool {
        match self {
            Follower::Evm(f) => f.pause(control, settings),
            Follower::Solana(_) => control.pause(settings.poll_interval),
        }
    }
}

/// What the handle asked of the thread, taken without waiting ([`Control::interrupt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Interrupt {
    Stop,
    Wake,
}

/// Stop and wake-up requests from the handle to its thread.
#[derive(Debug, Default)]
pub(super) struct Control {
    state: Mutex<Requests>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Requests {
    stop: bool,
    wake: bool,
}

impl Control {
    pub(super) fn stop(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).stop = true;
        self.changed.notify_all();
    }

    pub(super) fn wake(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).wake = true;
        self.changed.notify_all();
    }

    /// The stop or wake-up asked since the last look, without waiting (a wake-up is taken).
    pub(super) fn interrupt(&self) -> Option<Interrupt> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.stop {
            return Some(Interrupt::Stop);
        }
        std::mem::take(&mut state.wake).then_some(Interrupt::Wake)
    }

    /// Waits `pause`, or less when woken; `false` once stopped.
    pub(super) fn pause(&self, pause: Duration) -> bool {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut state, _) = self
            .changed
            .wait_timeout_while(state, pause, |r| !r.stop && !r.wake)
            .unwrap_or_else(PoisonError::into_inner);
        state.wake = false;
        !state.stop
    }

    fn stopped(&self) -> bool {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).stop
    }
}

pub(super) type Sink = Box<dyn Fn(ChainSignal) + Send>;

pub(super) fn spawn(
    chain_id: u64,
    mut follower: Follower,
    settings: WatchSettings,
    control: std::sync::Arc<Control>,
    sink: Sink,
) -> Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("depositkit-watch-{chain_id}"))
        .spawn(move || run(chain_id, &mut follower, &settings, &control, &*sink))
        .map_err(|e| {
            Error::new(
                ErrorKind::Internal,
                format!("cannot start the chain watcher of chain {chain_id}: {e}"),
            )
        })
}

fn run(
    chain_id: u64,
    follower: &mut Follower,
    settings: &WatchSettings,
    control: &Control,
    sink: &dyn Fn(ChainSignal),
) {
    let mut down = false;
    let mut backoff = settings.poll_interval;
    while !control.stopped() {
        let mut emit = |signal: ChainSignal| sink(signal);
        match follower.step(&mut emit) {
            Ok(more) => {
                backoff = settings.poll_interval;
                if more {
                    continue;
                }
                if down {
                    down = false;
                    sink(ChainSignal::Up { chain_id });
                }
                if !follower.pause(control, settings) {
                    return;
                }
            }
            Err(e) => {
                if !down {
                    down = true;
                    sink(ChainSignal::Down { chain_id, reason: e.message().to_owned() });
                }
                if !control.pause(backoff) {
                    return;
                }
                backoff = (backoff * 2).min(settings.max_backoff.max(settings.poll_interval));
            }
        }
    }
}
