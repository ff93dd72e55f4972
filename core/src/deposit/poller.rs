//! Balance polls batched per service: one `POST /v1/balances` for many clients
//! (`docs/protocol.md` §3, "Batching").
//!
//! Every client of the process that talks to the same account service with the same settings
//! (base URL, `X-UA-Project-Id`, HTTP settings) shares one [`BalancePoller`]. A poll hands it
//! the account id and the client's session JWT and waits for the account's lines. The poller
//! gathers polls while they keep coming — until none joined for [`BATCH_QUIET`], at most
//! [`BATCH_WINDOW`] after the first; the watchers tick on a process-wide grid ([`next_tick`]),
//! so clients with the same interval arrive in one burst — and sends them as one request: the
//! first JWT as the bearer, the other distinct JWTs in `X-Batch-Sessions`. A batch is sent at once when it is full: [`MAX_BATCH_ACCOUNTS`] ids (the
//! protocol's limit) or [`MAX_BATCH_SESSIONS_BYTES`] of JWTs in the header. At most
//! [`MAX_CONCURRENT_BATCHES`] requests of one poller are in flight.
//!
//! One refused session makes the service refuse the whole batch (401, or 403 for an account no
//! session owns): then each client of that batch is answered [`Batched::Refused`] and polls on
//! its own, with its own session renewal, so errors stay per client. Other failures (the
//! service unreachable, 5xx after the retries, a malformed answer) are every client's error:
//! asking again one by one would only multiply the load on a service that is down.
//!
//! In a forked child the parent's pollers are not used (their tasks ran on the parent's
//! runtime): new ones are made.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio::sync::{Semaphore, oneshot};

use crate::error::{Error, ErrorKind};
use crate::registry::WeakRegistry;
use crate::services::{AccountClient, BalanceLine, CallError, HttpSettings};

/// Most account ids in one request (the protocol's limit).
pub const MAX_BATCH_ACCOUNTS: usize = 1000;
/// Most bytes of JWTs in one request's `X-Batch-Sessions` header: 64 KiB, about 90 sessions of
/// ~700 bytes. Devnet (hyper) takes headers up to ~400 KiB in all, but common proxies refuse far
/// less, and devnet verifies every JWT of a request in turn: more, smaller requests spread that
/// over its threads (see `docs/benchmarks.md`).
pub const MAX_BATCH_SESSIONS_BYTES: usize = 64 * 1024;
/// A batch is sent when no poll joined it for this long (the burst of a round is over)…
pub const BATCH_QUIET: Duration = Duration::from_millis(10);
/// …or at the latest this long after its first poll.
pub const BATCH_WINDOW: Duration = Duration::from_millis(100);
/// Requests of one poller in flight at once (each takes a blocking thread while it runs).
pub const MAX_CONCURRENT_BATCHES: usize = 8;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a batched poll got.
#[derive(Debug)]
pub(crate) enum Batched {
    /// The account's lines (empty when the service did not list the account).
    Lines(Vec<BalanceLine>),
    /// The service refused the batch (401/403): poll alone.
    Refused,
    /// The batch failed for everyone in it.
    Failed(CallError),
}

/// What must match for polls to share a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BatchKey {
    account_url: String,
    ua_project_id: Option<String>,
    http: HttpSettings,
}

struct Request {
    account_id: String,
    jwt: Arc<str>,
    reply: oneshot::Sender<Batched>,
}

/// A session's identity within a batch: its client's one shared copy of the JWT. Telling
/// sessions apart by address hashes 8 bytes, not the ~800 of a JWT, for every poll; a renewed
/// session is a new copy and so a distinct session. Two equal JWTs in two copies would both be
/// sent, which the service accepts.
fn session_id(jwt: &Arc<str>) -> usize {
    Arc::as_ptr(jwt).cast::<u8>() as usize
}

/// Polls waiting to be sent.
#[derive(Default)]
struct Pending {
    requests: Vec<Request>,
    /// Distinct sessions of `requests` ([`session_id`]).
    sessions: HashSet<usize>,
    /// Bytes of `sessions` joined with commas.
    session_bytes: usize,
    /// A task waits to send the batch when it is due.
    timer_armed: bool,
    /// When the first poll of the batch came.
    first_at: Option<tokio::time::Instant>,
    /// When the last poll joined it.
    last_at: Option<tokio::time::Instant>,
}

impl Pending {
    /// Whether `jwt` can join without going over a limit.
    fn fits(&self, jwt: &Arc<str>) -> bool {
        if self.requests.is_empty() {
            return true;
        }
        let extra = if self.sessions.contains(&session_id(jwt)) { 0 } else { jwt.len() + 1 };
        self.requests.len() < MAX_BATCH_ACCOUNTS
            && self.session_bytes + extra <= MAX_BATCH_SESSIONS_BYTES
    }

    fn add(&mut self, request: Request) {
        let now = tokio::time::Instant::now();
        self.first_at.get_or_insert(now);
        self.last_at = Some(now);
        if self.sessions.insert(session_id(&request.jwt)) {
            self.session_bytes += request.jwt.len() + 1;
        }
        self.requests.push(request);
    }

    fn is_full(&self) -> bool {
        self.requests.len() >= MAX_BATCH_ACCOUNTS
    }

    /// When the batch is due: [`BATCH_QUIET`] after the last poll, at most [`BATCH_WINDOW`]
    /// after the first (`None` when empty).
    fn due(&self) -> Option<tokio::time::Instant> {
        let (first, last) = (self.first_at?, self.last_at?);
        Some((last + BATCH_QUIET).min(first + BATCH_WINDOW))
    }

    fn take(&mut self) -> Vec<Request> {
        self.sessions.clear();
        self.session_bytes = 0;
        self.first_at = None;
        self.last_at = None;
        std::mem::take(&mut self.requests)
    }
}

/// The batcher of one account service (see the module's documentation).
pub(crate) struct BalancePoller {
    account: AccountClient,
    pending: Mutex<Pending>,
    in_flight: Semaphore,
}

/// The pollers of this process, by what must match (weakly held: a poller, with its HTTP agent
/// and idle connections, goes with the last client using it).
static POLLERS: WeakRegistry<BatchKey, BalancePoller> = WeakRegistry::new();

impl BalancePoller {
    /// The process's poller for the account service at `account_url` with these settings.
    pub fn shared(
        account_url: &str,
        http: &HttpSettings,
        ua_project_id: Option<&str>,
    ) -> Arc<BalancePoller> {
        let key = BatchKey {
            account_url: account_url.trim_end_matches('/').to_owned(),
            ua_project_id: ua_project_id.map(str::to_owned),
            http: http.clone(),
        };
        POLLERS.get_or_insert(key, || BalancePoller {
            account: AccountClient::new(account_url, http, ua_project_id),
            pending: Mutex::new(Pending::default()),
            in_flight: Semaphore::new(MAX_CONCURRENT_BATCHES),
        })
    }

    /// The lines of `account_id`, read with the session `jwt` in a batch. Must run on the
    /// depositkit runtime.
    pub async fn lines(self: &Arc<Self>, account_id: &str, jwt: &Arc<str>) -> Batched {
        let (reply, answer) = oneshot::channel();
        let request = Request { account_id: account_id.to_owned(), jwt: Arc::clone(jwt), reply };
        let (full, arm) = {
            let mut pending = lock(&self.pending);
            let full = if pending.fits(jwt) { None } else { Some(pending.take()) };
            pending.add(request);
            let full = match full {
                Some(batch) => Some(batch),
                None if pending.is_full() => Some(pending.take()),
                None => None,
            };
            let arm = !pending.requests.is_empty() && !pending.timer_armed;
            if arm {
                pending.timer_armed = true;
            }
            (full, arm)
        };
        if let Some(batch) = full {
            tokio::spawn(Arc::clone(self).send(batch));
        }
        if arm {
            tokio::spawn(Arc::clone(self).send_when_due());
        }
        answer.await.unwrap_or_else(|_| {
            Batched::Failed(CallError::Transport(Error::new(
                ErrorKind::Internal,
                "the balance batch was dropped",
            )))
        })
    }

    /// The one task (`timer_armed`) that sends the pending batch when it is due. Polls that
    /// join after a full batch left form the next one; it stops once nothing is pending.
    async fn send_when_due(self: Arc<Self>) {
        loop {
            let step = {
                let mut pending = lock(&self.pending);
                match pending.due() {
                    None => {
                        pending.timer_armed = false;
                        return;
                    }
                    Some(due) if due <= tokio::time::Instant::now() => {
                        pending.timer_armed = false;
                        Err(pending.take())
                    }
                    Some(due) => Ok(due),
                }
            };
            match step {
                Ok(due) => tokio::time::sleep_until(due).await,
                Err(batch) => return self.send(batch).await,
            }
        }
    }

    /// Sends one batch and answers each poll in it.
    async fn send(self: Arc<Self>, batch: Vec<Request>) {
        let Some(first) = batch.first() else { return };
        let _permit = self.in_flight.acquire().await;
        let bearer = Arc::clone(&first.jwt);
        let mut ids: Vec<&str> = Vec::with_capacity(batch.len());
        let mut seen_ids = HashSet::with_capacity(batch.len());
        let mut sessions: Vec<&str> = Vec::new();
        let mut seen_sessions = HashSet::from([session_id(&bearer)]);
        for request in &batch {
            if seen_ids.insert(request.account_id.as_str()) {
                ids.push(&request.account_id);
            }
            if seen_sessions.insert(session_id(&request.jwt)) {
                sessions.push(&request.jwt);
            }
        }
        let outcome = self.account.balances(&bearer, &ids, &sessions).await;
        match outcome {
            Ok(mut accounts) => {
                // The last poll of an id takes the lines; earlier ones (the same account polled
                // by two clients) get copies.
                let mut left: HashMap<&str, usize> = HashMap::new();
                for request in &batch {
                    *left.entry(request.account_id.as_str()).or_default() += 1;
                }
                let mut answers = Vec::with_capacity(batch.len());
                for request in &batch {
                    let count = left.get_mut(request.account_id.as_str()).expect("counted");
                    *count -= 1;
                    let lines = if *count == 0 {
                        accounts.remove(&request.account_id).unwrap_or_default()
                    } else {
                        accounts.get(&request.account_id).cloned().unwrap_or_default()
                    };
                    answers.push(lines);
                }
                for (request, lines) in batch.into_iter().zip(answers) {
                    let _ = request.reply.send(Batched::Lines(lines));
                }
            }
            Err(CallError::Service(e)) if e.status == 401 || e.status == 403 => {
                for request in batch {
                    let _ = request.reply.send(Batched::Refused);
                }
            }
            Err(error) => {
                for request in batch {
                    let _ = request.reply.send(Batched::Failed(copy(&error)));
                }
            }
        }
    }
}

/// The same failure for another poll of the batch.
fn copy(error: &CallError) -> CallError {
    match error {
        CallError::Service(e) => CallError::Service(e.clone()),
        CallError::Transport(e) => CallError::Transport(Error::new(e.kind(), e.message())),
        CallError::Session(e) => CallError::Session(Error::new(e.kind(), e.message())),
    }
}

/// The first tick of a watcher polling every `interval`: the next multiple of `interval` since
/// a process-wide epoch, so that every watcher with that interval ticks at the same instants
/// and their polls share batches.
pub(crate) fn next_tick(interval: Duration) -> tokio::time::Instant {
    static EPOCH: OnceLock<tokio::time::Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(tokio::time::Instant::now);
    epoch + first_tick_offset(tokio::time::Instant::now() - epoch, interval)
}

/// The first multiple of `interval` after `since` (the time since the epoch).
fn first_tick_offset(since: Duration, interval: Duration) -> Duration {
    let interval_ns = interval.as_nanos().max(1);
    let periods = since.as_nanos() / interval_ns + 1;
    Duration::from_nanos(u64::try_from(periods.saturating_mul(interval_ns)).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &str, jwt: &Arc<str>) -> Request {
        Request { account_id: id.into(), jwt: Arc::clone(jwt), reply: oneshot::channel().0 }
    }

    #[test]
    fn a_batch_is_bounded_by_ids_and_session_bytes() {
        let mut pending = Pending::default();
        let jwt: Arc<str> = "x".repeat(700).into();
        assert!(pending.fits(&jwt));
        pending.add(request("acc_0", &jwt));
        // The same session again (its client's one copy) costs no header bytes.
        assert!(pending.fits(&jwt));
        let mut n = 1;
        loop {
            let other: Arc<str> = format!("{n:0>700}").into();
            if !pending.fits(&other) {
                break;
            }
            pending.add(request(&format!("acc_{n}"), &other));
            n += 1;
        }
        assert!(pending.session_bytes <= MAX_BATCH_SESSIONS_BYTES);
        assert_eq!(pending.requests.len(), MAX_BATCH_SESSIONS_BYTES / 701);
        assert_eq!(pending.take().len(), n);
        assert_eq!(pending.session_bytes, 0);
        let one: Arc<str> = "one".into();
        for n in 0..MAX_BATCH_ACCOUNTS {
            pending.add(request(&format!("acc_{n}"), &one));
        }
        assert!(pending.is_full() && !pending.fits(&one));
    }

    #[test]
    fn watchers_tick_on_one_grid() {
        let ms = Duration::from_millis;
        assert_eq!(first_tick_offset(ms(0), ms(2000)), ms(2000));
        assert_eq!(first_tick_offset(ms(700), ms(2000)), ms(2000));
        assert_eq!(first_tick_offset(ms(1999), ms(2000)), ms(2000));
        assert_eq!(first_tick_offset(ms(2000), ms(2000)), ms(4000));
        assert_eq!(first_tick_offset(ms(4100), ms(50)), ms(4150));
        assert!(next_tick(ms(50)) > tokio::time::Instant::now());
    }
}
