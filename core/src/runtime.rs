//! The tokio runtime depositkit owns: one per process, created on first use, shared by every
//! client through an [`Arc`].
//!
//! Callers never see async. A synchronous method hands its future to the runtime and waits for
//! the answer on its own thread, with a deadline ([`Runtime::block_on`]). That works from any
//! thread that is not one of the runtime's own — including threads of another tokio runtime,
//! which `tokio::runtime::Runtime::block_on` would refuse with a panic. Called from one of the
//! runtime's own threads (a task, or blocking code the runtime runs) it returns an error instead
//! of deadlocking or panicking.
//!
//! Blocking work (HTTP through `ureq`) runs on the runtime's blocking pool
//! ([`Runtime::spawn_blocking`] or `tokio::task::spawn_blocking` from a task).
//!
//! A process that forks gets, in the child, a fresh runtime for new clients: the parent's worker
//! threads do not exist there. A client created before the fork answers every call in the child
//! with an error saying so ([`Runtime::check_process`]).

use std::cell::Cell;
use std::future::Future;
use std::sync::{Arc, Mutex};
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
            .on_thread_start(|| ON_RUNTIME_THREAD.with(|flag| flag.set(true)))
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
                Err(Error::new(
                    ErrorKind::Timeout,
                    format!("{what} did not finish within {} ms", timeout.as_millis()),
                ))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(Error::new(
                ErrorKind::Internal,
                format!("{what} failed: its task panicked or was cancelled"),
            )),
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
}
