//! Shared HTTP plumbing: pooled agents shared by the whole process (one per timeout and
//! `User-Agent`), bounded retries with exponential backoff and full jitter, `Retry-After`, and
//! error messages that never carry credentials.

use std::io::ErrorKind as IoKind;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

use crate::error::{Error, ErrorKind, Result};
use crate::observe;
use crate::registry::WeakRegistry;

/// The largest response body read; a bigger one is a protocol error, not an allocation.
const MAX_RESPONSE_BYTES: u64 = 8 * 1024 * 1024;

/// How a request is retried when the server is busy or unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retrying).
    pub max_retries: u32,
    /// The first backoff; each retry doubles it, up to `max_backoff`, and a random part of it
    /// is waited ("full jitter") so that many clients do not retry in lockstep.
    pub initial_backoff: Duration,
    /// The largest backoff between two attempts.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured; a server asking for more gets this much.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based), given the server's `Retry-After`.
    pub(crate) fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let cap =
            self.initial_backoff.saturating_mul(2u32.saturating_pow(retry)).min(self.max_backoff);
        cap.mul_f64(rand::random::<f64>())
    }
}

/// A response the caller has to interpret: any status that is not retried.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub body: String,
}

/// One attempt's outcome, when it should be retried.
enum Retryable {
    Status {
        status: u16,
        retry_after: Option<Duration>,
    },
    Transport {
        timed_out: bool,
        what: String,
    },
    /// A system call was cut short by a signal (`EINTR`) on this thread: nothing is wrong with
    /// the server, so it is tried again at once, without using up a retry (at most
    /// [`MAX_INTERRUPTIONS`] times in a row).
    Interrupted,
}

/// How many interrupted attempts in a row are tried again before the request fails. depositkit's
/// own threads block the host's signals (`runtime::block_host_signals`), and ureq resumes a
/// socket read cut short while a timeout applies, so this is the last line: an attempt that
/// still ends `Interrupted` (a connect, a write) on a host thread.
const MAX_INTERRUPTIONS: u32 = 8;

/// A pooled, thread-safe HTTP client for JSON POSTs to one service.
#[derive(Debug, Clone)]
pub(crate) struct JsonPoster {
    agent: Arc<ureq::Agent>,
    retry: RetryPolicy,
}

/// Idle keep-alive connections kept per host by one agent: enough for the runtime's blocking
/// pool (64 threads) to find a warm connection for most requests.
const MAX_IDLE_PER_HOST: usize = 64;
/// Idle keep-alive connections kept by one agent in all.
const MAX_IDLE: usize = 256;

/// The process's agents, by timeout and `User-Agent`: every client with the same settings
/// shares one connection pool, so many clients do not keep a pool (and sockets) each. Weakly
/// held and per process ([`WeakRegistry`]): an agent and its idle connections go with the last
/// client using it, and a forked child does not reuse the parent's pooled connections.
static AGENTS: WeakRegistry<(Duration, String), ureq::Agent> = WeakRegistry::new();

fn shared_agent(timeout: Duration, user_agent: &str) -> Arc<ureq::Agent> {
    AGENTS.get_or_insert((timeout, user_agent.to_owned()), || {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(user_agent)
            .max_idle_connections(MAX_IDLE)
            .max_idle_connections_per_host(MAX_IDLE_PER_HOST)
            .build();
        ureq::Agent::with_parts(config, DefaultConnector::new(), LiteralFirstResolver::default())
    })
}

impl JsonPoster {
    /// A poster over the process's agent for `timeout` and `user_agent` (see [`AGENTS`]).
    pub(crate) fn new(timeout: Duration, user_agent: &str, retry: RetryPolicy) -> Self {
        JsonPoster { agent: shared_agent(timeout, user_agent), retry }
    }

    /// POSTs `body` to `url` with `headers`, retrying 429, 5xx, refused connections and
    /// timeouts as the policy says. `url` must not hold credentials: it appears in messages.
    pub(crate) fn post(&self, url: &str, headers: &[(&str, &str)], body: &str) -> Result<Reply> {
        self.with_retries(url, headers, Some(body))
    }

    /// GETs `url` with `headers`, retrying like [`JsonPoster::post`].
    pub(crate) fn get(&self, url: &str, headers: &[(&str, &str)]) -> Result<Reply> {
        self.with_retries(url, headers, None)
    }

    /// POSTs `body` exactly once, for requests that must not be repeated blindly. Every status
    /// comes back as a [`Reply`] (429 and 5xx included); a transport failure says whether the
    /// request may have reached the server.
    pub(crate) fn post_once(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> std::result::Result<Reply, OnceFailure> {
        let mut request = self.agent.post(url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let started = Instant::now();
        let service = observe::service_of(url);
        let response = match request.send(body) {
            Ok(response) => response,
            Err(e) => {
                let failure = once_failure(url, e);
                observed(&service, failure_label(&failure.error), started);
                return Err(failure);
            }
        };
        let status = response.status().as_u16();
        observed(&service, &status.to_string(), started);
        let read = response.into_body().with_config().limit(MAX_RESPONSE_BYTES).read_to_string();
        match read {
            Ok(body) => Ok(Reply { status, body }),
            // The server answered: whatever it did, it did.
            Err(e) => Err(OnceFailure {
                error: Error::new(
                    ErrorKind::Network,
                    format!("reading the response of {url} (HTTP {status}) failed: {e}"),
                ),
                maybe_sent: true,
            }),
        }
    }

    fn with_retries(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Result<Reply> {
        let attempts = self.retry.max_retries.saturating_add(1);
        let mut retry = 0;
        let mut interruptions = 0;
        loop {
            let outcome = self.attempt(url, headers, body)?;
            let failure = match outcome {
                Ok(reply) => return Ok(reply),
                Err(Retryable::Interrupted) if interruptions < MAX_INTERRUPTIONS => {
                    interruptions += 1;
                    continue;
                }
                Err(failure) => failure,
            };
            interruptions = 0;
            if retry >= self.retry.max_retries {
                return Err(exhausted(url, attempts, failure));
            }
            let (retry_after, why) = match &failure {
                Retryable::Status { retry_after, status } => (*retry_after, status.to_string()),
                Retryable::Transport { what, .. } => (None, what.clone()),
                Retryable::Interrupted => (None, INTERRUPTED.to_owned()),
            };
            let delay = self.retry.delay(retry, retry_after);
            let service = observe::service_of(url);
            observe::http_retry(&service);
            tracing::warn!(
                service = %service,
                attempt = retry + 1,
                reason = %why,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                "HTTP request retried"
            );
            std::thread::sleep(delay);
            retry += 1;
        }
    }

    /// One request. The outer `Result` is a final error, the inner one a retryable failure.
    fn attempt(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Result<std::result::Result<Reply, Retryable>> {
        let started = Instant::now();
        let sent = match body {
            Some(body) => {
                let mut request = self.agent.post(url);
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                request.send(body)
            }
            None => {
                let mut request = self.agent.get(url);
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                request.call()
            }
        };
        let service = observe::service_of(url);
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                let failure = transport_failure(url, e);
                let label = match &failure {
                    Ok(Retryable::Transport { timed_out: true, .. }) => "timeout",
                    Ok(_) => "network",
                    Err(error) => failure_label(error),
                };
                observed(&service, label, started);
                return failure.map(Err);
            }
        };
        let status = response.status().as_u16();
        observed(&service, &status.to_string(), started);
        if status == 429 || (500..600).contains(&status) {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            return Ok(Err(Retryable::Status { status, retry_after }));
        }
        let read = response.into_body().with_config().limit(MAX_RESPONSE_BYTES).read_to_string();
        match read {
            Ok(body) => Ok(Ok(Reply { status, body })),
            Err(ureq::Error::BodyExceedsLimit(limit)) => Err(Error::new(
                ErrorKind::Protocol,
                format!("response from {url} is larger than {limit} bytes"),
            )),
            Err(e) => transport_failure(url, e).map(Err),
        }
    }
}

/// Counts and logs (DEBUG) one request to `service` that ended as `status`.
fn observed(service: &str, status: &str, started: Instant) {
    let took = started.elapsed();
    observe::http_request(service, status, took);
    tracing::debug!(
        service = %service,
        http_status = %status,
        latency_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        "HTTP request"
    );
}

/// Why an interrupted request failed.
const INTERRUPTED: &str = "interrupted by a signal";

/// The status label of a request that got no answer.
fn failure_label(error: &Error) -> &'static str {
    if error.kind() == ErrorKind::Timeout { "timeout" } else { "network" }
}

/// Why a [`JsonPoster::post_once`] request got no answer.
#[derive(Debug)]
pub(crate) struct OnceFailure {
    /// What went wrong ([`ErrorKind::Network`], [`ErrorKind::Timeout`], …).
    pub error: Error,
    /// `false` only when the request certainly never reached the server (the connection was
    /// refused or never made); `true` when it may have been received and acted on.
    pub maybe_sent: bool,
}

fn once_failure(url: &str, error: ureq::Error) -> OnceFailure {
    let not_sent = matches!(
        &error,
        ureq::Error::ConnectionFailed | ureq::Error::HostNotFound | ureq::Error::BadUri(_)
    ) || matches!(&error, ureq::Error::Io(e) if e.kind() == IoKind::ConnectionRefused);
    let error = match transport_failure(url, error) {
        Ok(Retryable::Transport { timed_out: true, .. }) => {
            Error::new(ErrorKind::Timeout, format!("request to {url} timed out"))
        }
        Ok(Retryable::Transport { what, .. }) => {
            Error::new(ErrorKind::Network, format!("request to {url} failed: {what}"))
        }
        Ok(Retryable::Status { status, .. }) => {
            Error::new(ErrorKind::Network, format!("{url} answered HTTP {status}"))
        }
        Ok(Retryable::Interrupted) => {
            Error::new(ErrorKind::Network, format!("request to {url} failed: {INTERRUPTED}"))
        }
        Err(e) => e,
    };
    OnceFailure { error, maybe_sent: !not_sent }
}

/// Resolves IP-literal hosts without a lookup, and names through ureq's default resolver.
///
/// With a timeout set, ureq's default resolver starts a thread on every request — even for
/// `127.0.0.1`, even when a pooled connection is then reused — which made a loopback round trip
/// about twice as slow (see `docs/benchmarks.md`).
#[derive(Debug, Default)]
struct LiteralFirstResolver(DefaultResolver);

impl Resolver for LiteralFirstResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> std::result::Result<ResolvedSocketAddrs, ureq::Error> {
        if let Some(authority) = uri.authority() {
            let host = authority.host().trim_start_matches('[').trim_end_matches(']');
            if let Ok(ip) = host.parse::<IpAddr>() {
                let default_port = if uri.scheme_str() == Some("https") { 443 } else { 80 };
                let mut addrs = self.empty();
                addrs.push(SocketAddr::new(ip, authority.port_u16().unwrap_or(default_port)));
                return Ok(addrs);
            }
        }
        self.0.resolve(uri, config, timeout)
    }
}

/// Classifies a transport error: refused, reset and timed-out requests are retried; anything
/// else (a bad URL, a TLS failure) is final.
fn transport_failure(url: &str, error: ureq::Error) -> Result<Retryable> {
    match error {
        ureq::Error::Timeout(_) => {
            Ok(Retryable::Transport { timed_out: true, what: "timed out".into() })
        }
        ureq::Error::Io(e) if e.kind() == IoKind::TimedOut || e.kind() == IoKind::WouldBlock => {
            Ok(Retryable::Transport { timed_out: true, what: "timed out".into() })
        }
        ureq::Error::Io(e) if e.kind() == IoKind::Interrupted => Ok(Retryable::Interrupted),
        ureq::Error::Io(e) => Ok(Retryable::Transport { timed_out: false, what: io_reason(&e) }),
        ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => {
            Ok(Retryable::Transport { timed_out: false, what: error.to_string() })
        }
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => Err(Error::configuration(format!(
            "invalid service URL {}: {error}",
            crate::describe::quote(url)
        ))),
        ureq::Error::Protocol(_)
        | ureq::Error::LargeResponseHeader(..)
        | ureq::Error::Decompress(..) => Err(Error::new(
            ErrorKind::Protocol,
            format!("malformed HTTP response from {url}: {error}"),
        )),
        other => Err(Error::new(ErrorKind::Network, format!("request to {url} failed: {other}"))),
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        IoKind::ConnectionRefused => "connection refused".into(),
        IoKind::ConnectionReset => "connection reset".into(),
        IoKind::ConnectionAborted => "connection aborted".into(),
        IoKind::UnexpectedEof => "connection closed before the response was complete".into(),
        _ => e.to_string(),
    }
}

fn exhausted(url: &str, attempts: u32, failure: Retryable) -> Error {
    let tries =
        if attempts == 1 { "1 attempt".to_string() } else { format!("{attempts} attempts") };
    match failure {
        Retryable::Status { status, .. } => Error::new(
            ErrorKind::Network,
            format!("{url} answered HTTP {status} ({}) after {tries}", status_reason(status)),
        ),
        Retryable::Transport { timed_out: true, .. } => {
            Error::new(ErrorKind::Timeout, format!("request to {url} timed out after {tries}"))
        }
        Retryable::Transport { what, .. } => {
            Error::new(ErrorKind::Network, format!("request to {url} failed after {tries}: {what}"))
        }
        Retryable::Interrupted => Error::new(
            ErrorKind::Network,
            format!("request to {url} failed after {tries}: {INTERRUPTED}"),
        ),
    }
}

fn status_reason(status: u16) -> &'static str {
    match status {
        429 => "too many requests",
        500 => "internal server error",
        502 => "bad gateway",
        503 => "service unavailable",
        504 => "gateway timeout",
        _ => "server error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_bounded_and_honours_retry_after() {
        let policy = RetryPolicy::default();
        for retry in 0..40 {
            assert!(policy.delay(retry, None) <= policy.max_backoff);
        }
        assert!(policy.delay(0, None) <= policy.initial_backoff);
        assert_eq!(policy.delay(0, Some(Duration::from_secs(2))), Duration::from_secs(2));
        assert_eq!(policy.delay(0, Some(Duration::from_secs(3600))), policy.max_retry_after);
    }

    #[test]
    fn ip_literals_resolve_to_themselves() {
        let resolver = LiteralFirstResolver::default();
        let config = ureq::Agent::config_builder().build();
        let resolve = |url: &str| {
            let uri: Uri = url.parse().unwrap();
            resolver.resolve(&uri, &config, NextTimeout::default()).unwrap().to_vec()
        };
        assert_eq!(resolve("http://127.0.0.1:7420/x"), ["127.0.0.1:7420".parse().unwrap()]);
        assert_eq!(resolve("https://10.1.2.3/x"), ["10.1.2.3:443".parse().unwrap()]);
        assert_eq!(resolve("http://[::1]:8080/"), ["[::1]:8080".parse().unwrap()]);
        assert!(resolve("http://localhost:7420/").iter().any(|a| a.ip().is_loopback()));
    }

    #[test]
    fn refused_connection_is_a_network_error_after_all_attempts() {
        // Bind then drop a listener: the port is closed, so the connection is refused.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let policy = RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(1),
            ..Default::default()
        };
        let poster = JsonPoster::new(Duration::from_secs(2), "depositkit-test", policy);
        let url = format!("http://127.0.0.1:{port}/x");
        let err = poster.post(&url, &[], "{}").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Network);
        assert!(err.message().contains("after 3 attempts"), "{err}");
        assert!(err.message().contains(&url), "{err}");
    }

    /// A signal handler that does nothing, installed without `SA_RESTART` (as Python installs
    /// its own): a blocking system call on a thread that gets the signal fails with `EINTR`.
    #[cfg(unix)]
    extern "C" fn ignore_signal(_: libc::c_int) {}

    #[cfg(unix)]
    #[test]
    fn a_signal_during_a_request_does_not_fail_it() {
        use std::io::{Read, Write};
        use std::sync::{Condvar, Mutex};
        // SAFETY: installs a handler that does nothing (async-signal-safe) for SIGUSR2, which
        // nothing else in this test binary uses; the struct is zeroed then filled.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut());
        }
        // A server that holds every answer until the test has interrupted the caller: it says
        // when a request has arrived, then waits to be released (no timing guesses).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/x", listener.local_addr().unwrap());
        let (arrived_tx, arrived_rx) = std::sync::mpsc::channel::<()>();
        let released = Arc::new((Mutex::new(false), Condvar::new()));
        let server_released = Arc::clone(&released);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let arrived_tx = arrived_tx.clone();
                let released = Arc::clone(&server_released);
                std::thread::spawn(move || {
                    let mut request = [0u8; 4096];
                    let _ = stream.read(&mut request);
                    let _ = arrived_tx.send(());
                    let (lock, ready) = &*released;
                    let mut go = lock.lock().unwrap();
                    while !*go {
                        go = ready.wait(go).unwrap();
                    }
                    drop(go);
                    let body = "{}";
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(format!("{head}{body}").as_bytes());
                });
            }
        });
        let policy = RetryPolicy { max_retries: 0, ..Default::default() };
        let poster = JsonPoster::new(Duration::from_secs(5), "depositkit-test", policy);
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let caller = std::thread::spawn(move || {
            // SAFETY: the calling thread's own id.
            started_tx.send(unsafe { libc::pthread_self() }).unwrap();
            poster.get(&url, &[])
        });
        let thread = started_rx.recv().unwrap();
        // The request is on the wire: the caller now waits for its answer.
        arrived_rx.recv_timeout(Duration::from_secs(5)).unwrap();
        // SAFETY: `thread` is still running (it waits for the late answer), and SIGUSR2 has the
        // handler above.
        unsafe { libc::pthread_kill(thread, libc::SIGUSR2) };
        let (lock, ready) = &*released;
        *lock.lock().unwrap() = true;
        ready.notify_all();
        // No retry is allowed (max_retries 0), yet the interrupted request is answered: ureq
        // resumes a read cut short while a timeout applies, and `with_retries` tries again an
        // attempt that still ends `Interrupted`.
        let reply = caller.join().unwrap().unwrap();
        assert_eq!((reply.status, reply.body.as_str()), (200, "{}"));
    }
}
