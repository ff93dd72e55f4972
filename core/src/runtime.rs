//! The tokio runtime depositkit owns: one per process, created on first use, shared by every
//! client through an [`Arc`].
//!
//! Synchronous callers never see async: a synchronous method hands its future to the runtime
//! and waits for the answer on its own thread, with a deadline ([`Runtime::block_on`]). That
//! works from any thread that is not one of the runtime's own — including threads of another
//! tokio runtime, which `tokio::runtime::Runtime::block_on` would refuse with a panic. Called
//! from one of the runtime's own threads (a task, or blocking code the runtime runs) it returns
//! an error instead of deadlocking or panicking.
//!
//! Blocking work (HTTP through `ureq`) runs on the runtime's blocking pool
//! ([`Runtime::spawn_blocking`] or `tokio::task::spawn_blocking` from a task).
//!
//! Async callers (the Python asyncio faces, Rust hosts on any executor) get a [`Task`]: the
//! future runs as a task of the runtime ([`Runtime::run`]) and the task's outcome is what they
//! await, from any executor. Whether dropping the [`Task`] stops the work or only the wait is
//! chosen per call ([`WhenDropped`]).
//!
//! A process that forks gets, in the child, a fresh runtime for new clients: the parent's worker
//! threads do not exist there. A client created before the fork answers every call in the child
//! with an error saying so ([`Runtime::check_process`]).
//!
//! Signals: every thread the runtime starts blocks the signals a host handles itself (Ctrl-C's
//! `SIGINT`, `SIGTERM`, …; [`block_host_signals`]), so they reach the host's own threads — for
//! Python, the main thread, where the interpreter turns them into `KeyboardInterrupt` — and a
//! system call of depositkit's never fails with `EINTR` because of them.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use crate::error::{Error, ErrorKind, Result};

/// Worker threads of the runtime. The work is I/O-bound and the blocking HTTP calls run on the
/// blocking pool, so two workers serve many clients.
const WORKER_THREADS: usize = 2;

/// Upper bound of the blocking pool (threads doing blocking HTTP at the same time).
const MAX_BLOCKING_THREADS: usize = 64;

thread_local! {
    /// Set on every thread the depositkit runtime starts (workers and blocking pool).
    static ON_RUNTIME_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// The shared runtime of this process (replaced in a forked child).
static SHARED: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);

/// depositkit's tokio runtime.
#[derive(Debug)]
pub struct Runtime {
    runtime: tokio::runtime::Runtime,
    pid: u32,
}

impl Runtime {
    /// The runtime of this process, created on first use.
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] when the operating system refuses to start its threads.
    pub fn shared() -> Result<Arc<Runtime>> {
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        let pid = std::process::id();
        if let Some(runtime) = shared.as_ref()
            && runtime.pid == pid
        {
            return Ok(Arc::clone(runtime));
        }
        if let Some(inherited) = shared.take() {
            // Inherited through fork: its threads are gone. Dropping it would wait for them, so
            // it is leaked on purpose; clients still holding it report the fork.
            std::mem::forget(inherited);
        }
        let runtime = Arc::new(Runtime::build(pid)?);
        *shared = Some(Arc::clone(&runtime));
        Ok(runtime)
    }

    fn build(pid: u32) -> Result<Runtime> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKER_THREADS)
            .max_blocking_threads(MAX_BLOCKING_THREADS)
            .thread_name("depositkit-rt")
            .on_thread_start(|| {
                block_host_signals();
                ON_RUNTIME_THREAD.with(|flag| flag.set(true));
            })
            .enable_all()
            .build()
            .map_err(|e| {
                Error::new(ErrorKind::Internal, format!("cannot start the depositkit runtime: {e}"))
                    .with_source(e)
            })?;
        Ok(Runtime { runtime, pid })
    }

    /// The id of the process that created this runtime.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the current thread is one of this runtime's threads (any depositkit runtime).
    pub fn on_runtime_thread() -> bool {
        ON_RUNTIME_THREAD.with(Cell::get)
    }

    /// Fails when the process forked since this runtime was created.
    ///
    /// # Errors
    /// [`ErrorKind::Internal`]: "depositkit was forked; create new clients in the child".
    pub fn check_process(&self) -> Result<()> {
        if std::process::id() != self.pid {
            return Err(Error::new(
                ErrorKind::Internal,
                "depositkit was forked; create new clients in the child",
            ));
        }
        Ok(())
    }

    /// A handle for spawning tasks.
    pub fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime.handle()
    }

    /// Spawns a task on the runtime.
    pub fn spawn<F>(&self, future: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.runtime.spawn(future)
    }

    /// Runs blocking code on the runtime's blocking pool.
    pub fn spawn_blocking<F, R>(&self, work: F) -> tokio::task::JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.runtime.spawn_blocking(work)
    }

    /// Runs `future` on the runtime and waits for it on the calling thread, at most `timeout`.
    /// On timeout the task is cancelled (dropped at its next await point).
    ///
    /// # Errors
    /// - [`ErrorKind::Internal`] when called from one of the runtime's own threads (a callback
    ///   must not run there; depositkit never does it), when the process forked since the
    ///   runtime was created, or when the task panicked;
    /// - [`ErrorKind::Timeout`] when `timeout` passed first; `what` names the operation.
    pub fn block_on<F>(&self, what: &str, timeout: Duration, future: F) -> Result<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.check_process()?;
        if Runtime::on_runtime_thread() {
            return Err(Error::new(
                ErrorKind::Internal,
                format!(
                    "{what} was called from inside the depositkit runtime (a runtime thread); \
                     call blocking depositkit methods from your own threads"
                ),
            ));
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let task = self.runtime.spawn(async move {
            let _ = tx.send(future.await);
        });
        match rx.recv_timeout(timeout) {
            Ok(value) => Ok(value),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                task.abort();
                Err(timed_out(what, timeout))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(task_lost(what)),
        }
    }

    /// Runs `future` as a task of this runtime and returns the [`Task`] to await for its
    /// outcome, from any executor (or none: a `Task` is a plain future). `dropped` says what
    /// dropping the `Task` before the end does: stop the work, or only the wait. Never blocks.
    ///
    /// The [`Task`] answers [`ErrorKind::Internal`] when the process forked since the runtime
    /// was created (nothing is started) or when the task panicked.
    pub fn run<T, F>(&self, what: &str, dropped: WhenDropped, future: F) -> Task<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        if let Err(error) = self.check_process() {
            return Task::failed(error);
        }
        Task {
            what: what.to_owned(),
            state: TaskState::Running(self.runtime.spawn(future)),
            dropped,
        }
    }

    /// Waits on the calling thread for `task` (a call's [`Task`], which carries its own
    /// deadline): the synchronous form of an async call.
    ///
    /// # Errors
    /// The task's error; [`ErrorKind::Internal`] when called from one of the runtime's own
    /// threads (as [`Runtime::block_on`]).
    pub fn wait<T: Send + 'static>(&self, task: Task<T>) -> Result<T> {
        let what =
            if task.what.is_empty() { "a depositkit call".to_owned() } else { task.what.clone() };
        self.block_on(&what, Duration::MAX, task).and_then(|r| r)
    }

    /// `future`'s output, or [`ErrorKind::Timeout`] ("`what` did not finish within … ms", as
    /// [`Runtime::block_on`] says it) when `timeout` passes first; `future` is then dropped.
    /// Must be awaited inside a tokio runtime with timers (this one's tasks are).
    ///
    /// # Errors
    /// [`ErrorKind::Timeout`].
    pub async fn within<F: Future>(what: &str, timeout: Duration, future: F) -> Result<F::Output> {
        tokio::time::timeout(timeout, future).await.map_err(|_| timed_out(what, timeout))
    }
}

/// The error of a call that did not finish in time.
fn timed_out(what: &str, timeout: Duration) -> Error {
    Error::new(
        ErrorKind::Timeout,
        format!("{what} did not finish within {} ms", timeout.as_millis()),
    )
}

/// The error of a call whose task ended without an answer.
fn task_lost(what: &str) -> Error {
    Error::new(ErrorKind::Internal, format!("{what} failed: its task panicked or was cancelled"))
}

/// What dropping a [`Task`] before its end does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenDropped {
    /// The task is aborted at its next await point: for work that changes nothing, or whose
    /// changes are owned elsewhere (waiting for a reply of the client's serial executor).
    Abort,
    /// The task runs to its end and its outcome is dropped: for work that must not stop half
    /// way (initializing a client, a poll, a transfer from a wallet).
    Finish,
}

/// A call running as a task of the depositkit runtime ([`Runtime::run`]): a future of its
/// outcome that any executor may await. It needs no runtime of its own to be polled.
#[derive(Debug)]
#[must_use = "a Task does nothing visible unless awaited (what it started may go on)"]
pub struct Task<T> {
    what: String,
    state: TaskState<T>,
    dropped: WhenDropped,
}

#[derive(Debug)]
enum TaskState<T> {
    /// Refused before it started: the error, until it is taken.
    Failed(Option<Error>),
    Running(tokio::task::JoinHandle<Result<T>>),
}

impl<T> Task<T> {
    /// A task that answers `error` at once (a call refused before anything started).
    pub fn failed(error: Error) -> Task<T> {
        Task {
            what: String::new(),
            state: TaskState::Failed(Some(error)),
            dropped: WhenDropped::Abort,
        }
    }

    /// `started`'s task, or a task that answers its error at once.
    pub fn from_result(started: Result<Task<T>>) -> Task<T> {
        started.unwrap_or_else(Task::failed)
    }
}

impl<T> Future for Task<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let this = &mut *self;
        match &mut this.state {
            TaskState::Failed(error) => Poll::Ready(Err(error.take().unwrap_or_else(|| {
                Error::new(ErrorKind::Internal, "a depositkit Task was awaited after its end")
            }))),
            TaskState::Running(handle) => Pin::new(handle)
                .poll(cx)
                .map(|joined| joined.unwrap_or_else(|_| Err(task_lost(&this.what)))),
        }
    }
}

impl<T> Drop for Task<T> {
    fn drop(&mut self) {
        if let (WhenDropped::Abort, TaskState::Running(handle)) = (self.dropped, &self.state) {
            handle.abort();
        }
    }
}

/// The signals a host handles itself: interrupt (Ctrl-C), termination, hang-up, quit and the
/// two user signals.
#[cfg(unix)]
const HOST_SIGNALS: [libc::c_int; 6] =
    [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2];

/// Blocks the host's signals (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT`, `SIGUSR1`, `SIGUSR2`)
/// on the calling thread, for threads depositkit starts: the kernel then delivers them to a
/// host thread, whose handler runs there (Python's main thread raises `KeyboardInterrupt`),
/// and depositkit's own blocking calls (sockets, sleeps) are never cut short with `EINTR`.
/// Threads the calling thread starts afterwards inherit the mask. Does nothing off Unix.
pub fn block_host_signals() {
    #[cfg(unix)]
    {
        // SAFETY: `set` is a local signal set initialised by `sigemptyset` before use, and
        // `pthread_sigmask` only changes the calling thread's mask (the old mask is not asked
        // for: null is allowed). The calls cannot fail with these valid signal numbers.
        unsafe {
            let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(set.as_mut_ptr());
            for signal in HOST_SIGNALS {
                libc::sigaddset(set.as_mut_ptr(), signal);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, set.as_ptr(), std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_runtime_per_process() {
        let a = Runtime::shared().unwrap();
        let b = Runtime::shared().unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.pid(), std::process::id());
        a.check_process().unwrap();
    }

    #[test]
    fn block_on_returns_the_value_and_times_out() {
        let rt = Runtime::shared().unwrap();
        assert_eq!(rt.block_on("add", Duration::from_secs(5), async { 1 + 1 }).unwrap(), 2);
        let err = rt
            .block_on("sleepy", Duration::from_millis(20), async {
                tokio::time::sleep(Duration::from_secs(10)).await;
            })
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout);
        assert!(err.message().contains("sleepy"), "{err}");
    }

    #[test]
    fn block_on_from_a_runtime_thread_is_an_error_not_a_panic() {
        let rt = Runtime::shared().unwrap();
        let inner = Arc::clone(&rt);
        let answer = rt
            .block_on("outer", Duration::from_secs(5), async move {
                inner.block_on("inner", Duration::from_secs(1), async { 7 })
            })
            .unwrap();
        let err = answer.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
        assert!(err.message().contains("called from inside the depositkit runtime"), "{err}");
    }

    #[test]
    fn block_on_from_another_tokio_runtime_works() {
        let rt = Runtime::shared().unwrap();
        let other = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let value = other.block_on(async {
            rt.block_on("nested", Duration::from_secs(5), async { "ok" }).unwrap()
        });
        assert_eq!(value, "ok");
    }

    #[test]
    fn a_runtime_from_another_process_is_refused() {
        // What a forked child sees: the runtime was created by another pid.
        let inherited = Runtime::build(std::process::id().wrapping_add(1)).unwrap();
        let err = inherited.check_process().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
        assert_eq!(err.message(), "depositkit was forked; create new clients in the child");
        let err = inherited.block_on("x", Duration::from_secs(1), async {}).unwrap_err();
        assert_eq!(err.message(), "depositkit was forked; create new clients in the child");
    }

    #[test]
    fn a_panicking_task_is_an_internal_error() {
        let rt = Runtime::shared().unwrap();
        let err = rt
            .block_on("boom", Duration::from_secs(5), async {
                if rt_true() {
                    panic!("boom");
                }
            })
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
    }

    fn rt_true() -> bool {
        true
    }

    /// Whether `signal` is blocked on the calling thread.
    #[cfg(unix)]
    fn blocked(signal: libc::c_int) -> bool {
        // SAFETY: asks for the calling thread's mask only (no new mask), into a local set.
        unsafe {
            let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(old.as_mut_ptr());
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), old.as_mut_ptr());
            libc::sigismember(old.as_ptr(), signal) == 1
        }
    }

    #[cfg(unix)]
    #[test]
    fn runtime_threads_block_the_hosts_signals() {
        let rt = Runtime::shared().unwrap();
        let on_worker = rt
            .block_on("mask", Duration::from_secs(5), async {
                HOST_SIGNALS.iter().all(|&s| blocked(s)) && !blocked(libc::SIGSEGV)
            })
            .unwrap();
        assert!(on_worker);
        let on_blocking_pool = rt
            .block_on("mask", Duration::from_secs(5), async {
                tokio::task::spawn_blocking(|| blocked(libc::SIGINT)).await.unwrap()
            })
            .unwrap();
        assert!(on_blocking_pool);
        // The caller's own thread is left alone until it asks.
        let host = std::thread::spawn(|| {
            let before = blocked(libc::SIGINT);
            block_host_signals();
            (before, blocked(libc::SIGTERM))
        });
        assert_eq!(host.join().unwrap(), (false, true));
    }

    /// Polls `task` to its end on a plain thread (no runtime of the caller's).
    fn wait<T: Send + 'static>(task: Task<T>) -> Result<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        let rt = Runtime::shared().unwrap();
        rt.spawn(async move { tx.send(task.await).unwrap() });
        rx.recv_timeout(Duration::from_secs(10)).unwrap()
    }

    #[test]
    fn a_task_answers_its_outcome_to_any_executor() {
        let rt = Runtime::shared().unwrap();
        assert_eq!(wait(rt.run("add", WhenDropped::Abort, async { Ok(40 + 2) })).unwrap(), 42);
        let other = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let task = rt.run("other", WhenDropped::Abort, async { Ok("ok") });
        assert_eq!(other.block_on(task).unwrap(), "ok");
        let refused = Task::<u8>::failed(Error::invalid_argument("bad value \"x\""));
        assert_eq!(wait(refused).unwrap_err().message(), "bad value \"x\"");
        let panicked = rt.run("boom", WhenDropped::Abort, async {
            if rt_true() {
                panic!("boom");
            }
            Ok(())
        });
        let err = wait(panicked).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
        assert_eq!(err.message(), "boom failed: its task panicked or was cancelled");
    }

    #[test]
    fn dropping_a_task_aborts_it_or_lets_it_finish_as_asked() {
        let rt = Runtime::shared().unwrap();
        for (dropped, finishes) in [(WhenDropped::Abort, false), (WhenDropped::Finish, true)] {
            let (started_tx, started_rx) = std::sync::mpsc::channel();
            let (done_tx, done_rx) = std::sync::mpsc::channel();
            let task = rt.run("slow", dropped, async move {
                started_tx.send(()).unwrap();
                tokio::time::sleep(Duration::from_millis(200)).await;
                done_tx.send(()).unwrap();
                Ok(())
            });
            started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
            drop(task);
            let finished = done_rx.recv_timeout(Duration::from_secs(5)).is_ok();
            assert_eq!(finished, finishes, "{dropped:?}");
        }
    }

    #[test]
    fn wait_is_the_synchronous_form_of_a_task() {
        let rt = Runtime::shared().unwrap();
        assert_eq!(rt.wait(rt.run("add", WhenDropped::Abort, async { Ok(1 + 2) })).unwrap(), 3);
        let late = rt.run("late", WhenDropped::Abort, async {
            Runtime::within("late()", Duration::from_millis(20), std::future::pending::<()>()).await
        });
        assert_eq!(rt.wait(late).unwrap_err().message(), "late() did not finish within 20 ms");
        let inner = Arc::clone(&rt);
        let nested = rt
            .block_on("outer", Duration::from_secs(5), async move {
                inner.wait(inner.run("inner()", WhenDropped::Abort, async { Ok(()) }))
            })
            .unwrap();
        assert!(nested.unwrap_err().message().starts_with("inner() was called from inside"));
    }

    #[test]
    fn within_times_out_with_the_block_on_message() {
        let rt = Runtime::shared().unwrap();
        let task = rt.run("patient", WhenDropped::Abort, async {
            Runtime::within("sweep()", Duration::from_millis(20), async {
                tokio::time::sleep(Duration::from_secs(10)).await;
            })
            .await
        });
        let err = wait(task).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout);
        assert_eq!(err.message(), "sweep() did not finish within 20 ms");
        let inherited = Runtime::build(std::process::id().wrapping_add(1)).unwrap();
        let task = inherited.run("x", WhenDropped::Finish, async { Ok(()) });
        assert_eq!(
            wait(task).unwrap_err().message(),
            "depositkit was forked; create new clients in the child"
        );
    }
}
