//! The throughput ceiling for `benches/server_throughput.sh`: a minimal axum server on the same
//! axum, hyper and tokio as `depositkit-server`, answering every `POST /user-rpc` with a fixed
//! JSON body and doing nothing else (no auth, no body parsing, no store). Its connections are
//! set up as the server's are (`TCP_NODELAY`), so that the two differ only in the work per
//! request.
//!
//!   fixed_body [ADDR]   (default 127.0.0.1:0; prints "listening on http://ADDR")

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::routing::post;
use axum::serve::ListenerExt;

/// What every request gets: about the size of an `isProjectUser` answer.
const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"result":true}"#;

fn main() -> ExitCode {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let addr: SocketAddr = match addr.parse() {
        Ok(addr) => addr,
        Err(e) => {
            eprintln!("fixed_body: {addr} is not an address like 127.0.0.1:8080: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("fixed_body: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(addr)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fixed_body: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(addr: SocketAddr) -> std::io::Result<()> {
    let router = Router::new()
        .route("/user-rpc", post(|| async { ([(CONTENT_TYPE, "application/json")], BODY) }));
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    std::io::stdout().flush()?;
    // As depositkit-server does (`serve::serve`): replies are not held back by Nagle's algorithm.
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    axum::serve(listener, router).await
}
