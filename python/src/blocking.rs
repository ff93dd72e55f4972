//! Blocking calls from Python: the one place where a caller waits for Rust work with the GIL
//! released.
//!
//! - [`wait_for`] / [`wait_for_raw`] run a job on a worker thread of a small pool (see [`pool`])
//!   while the calling thread waits for its answer detached from the interpreter, in slices of
//!   [`WAIT_SLICE`]. Between two slices it re-attaches and runs `check_signals()`, so Ctrl-C
//!   interrupts the wait within about 100 ms: the `KeyboardInterrupt` is raised at once and the
//!   abandoned job finishes on its worker by itself (its answer is dropped). Signals are also
//!   checked when the answer comes, so a Ctrl-C is never hidden behind the answer (or the
//!   error) of a call it interrupted. What the job did is kept where the client keeps it (a
//!   sweep's result and events), never lost and never done twice.
//!
//! Ctrl-C reaches the interpreter's thread: the pool's workers, like the depositkit runtime's
//! threads, block the host's signals (`depositkit_core::runtime::block_host_signals`), so a
//! signal never lands on them and never cuts one of their system calls short.
//! - [`wait_sliced`] waits on the calling thread itself, for waits that can be cut into short
//!   polls (an event queue): each slice runs detached, signals are checked between slices.
//!
//! Nothing here calls `block_on` while attached to the interpreter.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use depositkit_core as core;
use depositkit_core::{Error, ErrorKind};
use pyo3::prelude::*;

use crate::errors::to_py_err;

/// How long a caller waits, detached, before it checks for signals again.
pub(crate) const WAIT_SLICE: Duration = Duration::from_millis(100);

/// Runs `job` on a worker thread and waits for its answer with the GIL released, checking for
/// signals every [`WAIT_SLICE`]; a core error becomes the exception of its kind. See
/// [`wait_for_raw`].
pub(crate) fn wait_for<T: Send + 'static>(
    py: Python<'_>,
    job: impl FnOnce() -> core::Result<T> + Send + 'static,
) -> PyResult<T> {
    wait_for_raw(py, job)?.map_err(|err| to_py_err(py, err))
}

/// Runs `job` on a worker thread and waits for its answer with the GIL released, checking for
/// signals every [`WAIT_SLICE`]. When `check_signals()` raises (Ctrl-C), that exception is
/// returned at once; the job runs to its end and its answer is dropped. The job must not touch
/// the interpreter.
pub(crate) fn wait_for_raw<T: Send + 'static>(
    py: Python<'_>,
    job: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (sender, mut receiver) = mpsc::sync_channel(1);
    pool::spawn(Box::new(move || {
        // The caller may have gone (interrupted): then nobody wants the answer.
        let _ = sender.send(job());
    }))
    .map_err(|e| {
        to_py_err(py, Error::new(ErrorKind::Internal, format!("cannot start a worker thread: {e}")))
    })?;
    loop {
        let (back, outcome) = py.detach(move || {
            let outcome = receiver.recv_timeout(WAIT_SLICE);
            (receiver, outcome)
        });
        receiver = back;
        match outcome {
            Ok(answer) => {
                // A Ctrl-C during the call wins over its answer, as if the wait had been cut a
                // moment earlier.
                py.check_signals()?;
                return Ok(answer);
            }
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(to_py_err(
                    py,
                    Error::new(
                        ErrorKind::Internal,
                        "the worker thread stopped without an answer (it panicked)",
                    ),
                ));
            }
        }
    }
}

/// Calls `attempt` with the GIL released, each time with a wait of at most [`WAIT_SLICE`], until
/// it answers `Some`, `timeout` has passed (`None`: never), or a signal handler raises; checks for
/// signals between two attempts. `attempt` gets the longest it may wait this time and must not
/// touch the interpreter. Returns `None` on timeout.
pub(crate) fn wait_sliced<T: Send>(
    py: Python<'_>,
    timeout: Option<Duration>,
    attempt: impl Fn(Duration) -> Option<T> + Sync,
) -> PyResult<Option<T>> {
    let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
    loop {
        let slice = match (timeout, deadline) {
            (None, _) | (Some(_), None) => WAIT_SLICE,
            (Some(_), Some(deadline)) => {
                deadline.saturating_duration_since(Instant::now()).min(WAIT_SLICE)
            }
        };
        if let Some(found) = py.detach(|| attempt(slice)) {
            return Ok(Some(found));
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Ok(None);
        }
        py.check_signals()?;
    }
}

/// A pool of worker threads for blocking calls that grows on demand and shrinks when idle.
///
/// A job goes to an idle worker when there is one, else to a new thread, so concurrent calls
/// never wait for each other. Workers never touch the interpreter. After `fork()` the child
/// starts a fresh pool (the parent's workers do not exist there).
mod pool {
    use std::collections::VecDeque;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
    use std::time::Duration;

    pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

    /// How long a worker waits for a job before it exits.
    const IDLE_EXIT: Duration = Duration::from_secs(30);

    struct Pool {
        pid: u32,
        state: Mutex<State>,
        wake: Condvar,
    }

    #[derive(Default)]
    struct State {
        jobs: VecDeque<Job>,
        idle: usize,
    }

    static CURRENT: Mutex<Option<Arc<Pool>>> = Mutex::new(None);

    fn current() -> Arc<Pool> {
        let pid = std::process::id();
        let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
        match &*current {
            Some(pool) if pool.pid == pid => Arc::clone(pool),
            _ => {
                let pool = Arc::new(Pool { pid, state: Mutex::default(), wake: Condvar::new() });
                *current = Some(Arc::clone(&pool));
                pool
            }
        }
    }

    /// Runs `job` on a worker.
    pub(crate) fn spawn(job: Job) -> std::io::Result<()> {
        let pool = current();
        let mut state = pool.lock();
        if state.idle > state.jobs.len() {
            state.jobs.push_back(job);
            drop(state);
            pool.wake.notify_one();
            return Ok(());
        }
        drop(state);
        let worker = Arc::clone(&pool);
        std::thread::Builder::new()
            .name("depositkit-rpc".into())
            .spawn(move || {
                depositkit_core::runtime::block_host_signals();
                worker.work(job)
            })
            .map(drop)
    }

    impl Pool {
        fn lock(&self) -> MutexGuard<'_, State> {
            self.state.lock().unwrap_or_else(PoisonError::into_inner)
        }

        fn work(&self, first: Job) {
            run(first);
            let mut state = self.lock();
            loop {
                if let Some(job) = state.jobs.pop_front() {
                    drop(state);
                    run(job);
                    state = self.lock();
                    continue;
                }
                state.idle += 1;
                let (next, wait) = self
                    .wake
                    .wait_timeout(state, IDLE_EXIT)
                    .unwrap_or_else(PoisonError::into_inner);
                state = next;
                state.idle -= 1;
                if wait.timed_out() && state.jobs.is_empty() {
                    return;
                }
            }
        }
    }

    /// A panicking job drops its answer channel, which the waiting caller reports; the worker
    /// itself lives on.
    fn run(job: Job) {
        let _ = catch_unwind(AssertUnwindSafe(job));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn the_pool_runs_concurrent_jobs_and_reuses_workers() {
        let (sender, receiver) = mpsc::channel();
        let barrier = Arc::new(std::sync::Barrier::new(4));
        for i in 0..4 {
            let sender = sender.clone();
            let barrier = Arc::clone(&barrier);
            // All four must run at once, or the barrier never opens.
            pool::spawn(Box::new(move || {
                barrier.wait();
                sender.send(i).unwrap();
            }))
            .unwrap();
        }
        let mut got: Vec<i32> =
            (0..4).map(|_| receiver.recv_timeout(Duration::from_secs(10)).unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, [0, 1, 2, 3]);
        for i in 0..100 {
            let sender = sender.clone();
            pool::spawn(Box::new(move || sender.send(i).unwrap())).unwrap();
            assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), i);
        }
    }

    #[test]
    fn a_panicking_job_leaves_the_pool_working() {
        let (sender, receiver) = mpsc::channel::<i32>();
        let doomed = sender.clone();
        pool::spawn(Box::new(move || {
            let _keep = doomed;
            panic!("job failed");
        }))
        .unwrap();
        pool::spawn(Box::new(move || sender.send(7).unwrap())).unwrap();
        assert_eq!(receiver.recv_timeout(Duration::from_secs(10)).unwrap(), 7);
    }
}
