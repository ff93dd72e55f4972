//! A `DepositClient` call's two forms, from one admission and one work: the synchronous
//! method waits for the work on the calling thread ([`Runtime::block_on`]: at most
//! `call_timeout_ms`, refused on one of the runtime's threads); its `…_async` twin
//! (`async_api.rs`) returns the work as a [`Task`] ([`Runtime::run`] under
//! [`Runtime::within`]: the same timeout and its message). The checks and the admission run at
//! once, on the caller's thread, for both.

use std::pin::Pin;

use tokio::sync::oneshot;

use super::*;
use crate::runtime::{Task, WhenDropped};

/// A call's work, run on depositkit's runtime.
type Work<V> = Pin<Box<dyn Future<Output = Result<V>> + Send>>;

/// A call checked and admitted on the caller's thread: its work, which runs on the runtime
/// under `call_timeout_ms`, and `finish`, which makes the answer of the work's outcome (its
/// timeout included). Both forms of a call share it: the synchronous method waits for it
/// ([`DepositClient::wait_for`]), the `…_async` one returns it as a [`Task`]
/// ([`DepositClient::task_for`]).
pub(super) struct Admitted<V, T = V> {
    /// The call, as its errors name it: `sweep()`.
    what: &'static str,
    /// What dropping the async form's [`Task`] before its end does.
    dropped: WhenDropped,
    work: Work<V>,
    finish: Box<dyn FnOnce(Result<V>) -> Result<T> + Send>,
}

impl<V: Send + 'static> Admitted<V> {
    /// A call whose answer is its work's outcome.
    pub(super) fn new(
        what: &'static str,
        dropped: WhenDropped,
        work: impl Future<Output = Result<V>> + Send + 'static,
    ) -> Admitted<V> {
        Admitted::finished_by(what, dropped, work, |outcome| outcome)
    }
}

impl<V: Send + 'static, T> Admitted<V, T> {
    /// A call whose answer `finish` makes of its work's outcome.
    pub(super) fn finished_by(
        what: &'static str,
        dropped: WhenDropped,
        work: impl Future<Output = Result<V>> + Send + 'static,
        finish: impl FnOnce(Result<V>) -> Result<T> + Send + 'static,
    ) -> Admitted<V, T> {
        Admitted { what, dropped, work: Box::pin(work), finish: Box::new(finish) }
    }
}

impl DepositClient {
    /// The synchronous form of a call: its refusal, or its work waited for on the calling
    /// thread ([`Runtime::block_on`]: at most `call_timeout_ms`, refused on a runtime thread)
    /// and finished there.
    pub(super) fn wait_for<V: Send + 'static, T>(
        &self,
        admitted: Result<Admitted<V, T>>,
    ) -> Result<T> {
        let Admitted { what, work, finish, .. } = admitted?;
        let timeout = self.inner.config.call_timeout;
        finish(self.inner.runtime.block_on(what, timeout, work).and_then(|r| r))
    }

    /// The async form of a call: a [`Task`] answering its refusal at once, or running its work
    /// (at most `call_timeout_ms`) and `finish` on the runtime.
    pub(super) fn task_for<V: Send + 'static, T: Send + 'static>(
        &self,
        admitted: Result<Admitted<V, T>>,
    ) -> Task<T> {
        let Admitted { what, dropped, work, finish } = match admitted {
            Ok(admitted) => admitted,
            Err(error) => return Task::failed(error),
        };
        let timeout = self.inner.config.call_timeout;
        self.inner.runtime.run(what, dropped, async move {
            finish(Runtime::within(what, timeout, work).await.and_then(|r| r))
        })
    }
}

/// The work of a job queued for the client's serial executor: waiting for its reply, which
/// `answer` turns into the call's. Dropping it drops only the wait: the executor owns the job.
pub(super) fn awaiting_reply<V: Send + 'static, T: Send + 'static>(
    what: &'static str,
    job: &'static str,
    reply: oneshot::Receiver<V>,
    answer: fn(V) -> Result<T>,
) -> Admitted<T> {
    Admitted::new(what, WhenDropped::Abort, async move {
        let replied = reply.await.map_err(|_| {
            Error::new(
                ErrorKind::DepositSdk,
                format!("the client closed before the {job} finished"),
            )
        })?;
        answer(replied)
    })
}

/// A history call admitted: its fresh cached answer, or the read to run.
pub(super) enum CachedRead<T> {
    /// Answered from the cache, at once: on the caller's thread for the synchronous form.
    Cached {
        what: &'static str,
        answer: T,
    },
    Read(Admitted<T>),
}

impl DepositClient {
    /// The synchronous form of a history call: its refusal, its cached answer, or its read
    /// waited for ([`DepositClient::wait_for`]).
    pub(super) fn wait_for_cached<T: Send + 'static>(
        &self,
        admitted: Result<CachedRead<T>>,
    ) -> Result<T> {
        match admitted? {
            CachedRead::Cached { answer, .. } => Ok(answer),
            CachedRead::Read(read) => self.wait_for(Ok(read)),
        }
    }

    /// The async form of a history call ([`DepositClient::task_for`]); a cached answer is the
    /// [`Task`]'s at once.
    pub(super) fn cached_task<T: Send + 'static>(
        &self,
        admitted: Result<CachedRead<T>>,
    ) -> Task<T> {
        match admitted {
            Ok(CachedRead::Cached { what, answer }) => {
                self.inner.runtime.run(what, WhenDropped::Abort, async move { Ok(answer) })
            }
            Ok(CachedRead::Read(read)) => self.task_for(Ok(read)),
            Err(error) => Task::failed(error),
        }
    }
}
