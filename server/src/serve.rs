//! Serving: the routes of `depositkit-server` (`POST /user-rpc`, `GET /healthz`, `GET /readyz`
//! and nothing else), a cap on open connections, and graceful shutdown: on the shutdown signal
//! the listener closes, in-flight requests finish (up to a grace period), idle connections close.

use std::future::{Future, IntoFuture};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, Result};
use crate::http::{self, RpcMethods, RpcState, USER_RPC_PATH, json_response};
use crate::store::UserStore;

/// Largest request body accepted unless configured: 1 MiB (a batch of a few thousand calls).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Open connections served at once unless configured; more wait in the kernel's backlog.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// How long in-flight requests may take to finish after the shutdown signal.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// Realm of the `WWW-Authenticate` challenge.
pub const REALM: &str = "depositkit";

/// How a server serves.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Largest accepted request body, in bytes (larger: 413).
    pub max_body_bytes: usize,
    /// Open connections served at once.
    pub max_connections: usize,
    /// How long in-flight requests may take after the shutdown signal.
    pub shutdown_grace: Duration,
    /// One line per request on stderr (method, path, status, JSON-RPC method names, duration).
    pub verbose: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            verbose: false,
        }
    }
}

/// The routes of the server.
pub fn router(store: UserStore, options: &ServeOptions) -> Router {
    let rpc = Arc::new(RpcState {
        store: store.clone(),
        max_body_bytes: options.max_body_bytes,
        realm: REALM,
    });
    let router = http::user_rpc_router(rpc)
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz).with_state(store))
        .fallback(not_found);
    if options.verbose {
        router.layer(middleware::from_fn(|request, next| {
            log_request("depositkit-server", request, next)
        }))
    } else {
        router
    }
}

/// `GET /healthz`: the process answers.
async fn healthz() -> Response {
    json_response(StatusCode::OK, &json!({ "status": "ok" }))
}

/// `GET /readyz`: the store answers too (503 with the reason otherwise).
async fn readyz(State(store): State<UserStore>) -> Response {
    match store.verify_server_key("00000000-0000-0000-0000-000000000000", "").await {
        Ok(_) => json_response(StatusCode::OK, &json!({ "status": "ok" })),
        Err(e) => json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({ "status": "unavailable", "error": e.to_string() }),
        ),
    }
}

pub async fn not_found(request: Request) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        &json!({
            "error": format!("no route for {}", request.uri().path()),
            "hint": format!("the JSON-RPC service is POST {USER_RPC_PATH}"),
        }),
    )
}

/// One line per request on stderr, after `name`: HTTP method, path, status, JSON-RPC methods, duration.
/// Never headers, params or bodies: they carry keys and session tokens.
pub async fn log_request(name: &'static str, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let methods = response
        .extensions()
        .get::<RpcMethods>()
        .map(|m| format!(" [{}]", m.0.join(",")))
        .unwrap_or_default();
    eprintln!(
        "{name}: {method} {path} -> {}{methods} in {:.1} ms",
        response.status().as_u16(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    response
}

/// Serves `router` on `listener` with at most `max_connections` open connections until
/// `shutdown` completes; then stops accepting, lets in-flight requests finish for up to
/// `grace`, and returns. Must run inside a tokio runtime.
///
/// # Errors
/// Serving failed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    max_connections: usize,
    grace: Duration,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let listener = LimitedListener {
        inner: listener,
        permits: Arc::new(Semaphore::new(max_connections.max(1))),
    };
    let (drain_tx, drain_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = axum::serve(listener, router).with_graceful_shutdown(async move {
        let _ = drain_rx.await;
    });
    let mut serving = tokio::spawn(serving.into_future());
    tokio::select! {
        finished = &mut serving => return join_result(finished),
        () = shutdown => {}
    }
    let _ = drain_tx.send(());
    match tokio::time::timeout(grace, &mut serving).await {
        Ok(finished) => join_result(finished),
        Err(_) => {
            serving.abort();
            Ok(())
        }
    }
}

fn join_result(finished: Result<io::Result<()>, tokio::task::JoinError>) -> Result<()> {
    match finished {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Error::io("serving HTTP", e)),
        Err(e) => Err(Error::io("serving HTTP", io::Error::other(e.to_string()))),
    }
}

/// A TCP listener that accepts a connection only while fewer than its permits are open.
struct LimitedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
}

impl axum::serve::Listener for LimitedListener {
    type Io = LimitedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // The semaphore is never closed, so acquiring only waits.
        let permit = Arc::clone(&self.permits).acquire_owned().await;
        let (stream, addr) = axum::serve::Listener::accept(&mut self.inner).await;
        let _ = stream.set_nodelay(true);
        (LimitedStream { stream, _permit: permit.ok() }, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection holding one permit of its listener until it closes.
struct LimitedStream {
    stream: TcpStream,
    _permit: Option<OwnedSemaphorePermit>,
}

impl AsyncRead for LimitedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for LimitedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// Installs SIGINT and SIGTERM handlers (Ctrl-C elsewhere); the future resolves with the
/// signal's name. Install before announcing readiness: a signal sent right after must not kill
/// the process.
///
/// # Errors
/// The handlers cannot be installed.
#[cfg(unix)]
pub fn shutdown_signal() -> io::Result<impl Future<Output = &'static str>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
        }
    })
}

/// Installs the Ctrl-C handler; the future resolves with the signal's name.
///
/// # Errors
/// Never here; the signature matches the Unix one.
#[cfg(not(unix))]
pub fn shutdown_signal() -> io::Result<impl Future<Output = &'static str>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    })
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::task::Waker;

    use axum::serve::Listener;

    use super::*;

    #[tokio::test]
    async fn a_connection_waits_while_the_cap_is_reached() {
        let inner = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = inner.local_addr().unwrap();
        let mut listener = LimitedListener { inner, permits: Arc::new(Semaphore::new(1)) };
        let _a = TcpStream::connect(addr).await.unwrap();
        let (first, _) = Listener::accept(&mut listener).await;
        let _b = TcpStream::connect(addr).await.unwrap();
        let mut second = std::pin::pin!(Listener::accept(&mut listener));
        // The second client is connected, but not accepted while the first holds the one permit.
        let mut cx = Context::from_waker(Waker::noop());
        assert!(second.as_mut().poll(&mut cx).is_pending());
        drop(first);
        let (_second, peer) = second.await;
        assert_eq!(peer.ip(), addr.ip());
    }
}
