//! `depositkit-server`: the user-lookup JSON-RPC service and its admin commands. Exit codes:
//! 0 success, 1 failure, 2 usage error.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use depositkit_server::admin::AdminCommand;
use depositkit_server::admin_api::{self, ADMIN_TOKEN_ENV};
use depositkit_server::serve::{self, ServeOptions};
use depositkit_server::{Error, Result, UserStore};

/// Environment variable naming the database.
const DATABASE_ENV_VAR: &str = "DEPOSITKIT_DATABASE_URL";

#[derive(Parser)]
#[command(
    name = "depositkit-server",
    version,
    about = "The user-lookup JSON-RPC service (getUserInfo, getUserInfoByIdentity, isProjectUser) on SQLite or PostgreSQL, and its admin commands"
)]
struct Cli {
    /// The database: sqlite:///path/to/users.sqlite or postgres://user:password@host:port/db
    /// (the schema is created in an empty database).
    #[arg(long, global = true, env = DATABASE_ENV_VAR, value_name = "URL", hide_env_values = true)]
    database: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve POST /user-rpc, GET /healthz and GET /readyz until SIGINT or SIGTERM.
    Serve(ServeArgs),
    #[command(flatten)]
    Admin(AdminCommand),
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    listen: SocketAddr,
    /// Largest accepted request body, in bytes (larger: HTTP 413).
    #[arg(long, default_value_t = serve::DEFAULT_MAX_BODY_BYTES as u64, value_parser = clap::value_parser!(u64).range(1..), value_name = "N")]
    max_body_bytes: u64,
    /// Open client connections served at once; more wait until one closes.
    #[arg(long, default_value_t = serve::DEFAULT_MAX_CONNECTIONS as u64, value_parser = clap::value_parser!(u64).range(1..), value_name = "N")]
    max_connections: u64,
    /// Database connections in the pool.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=1000), value_name = "N")]
    pool_size: u64,
    /// After SIGTERM or SIGINT, how long in-flight requests may take to finish, in seconds.
    #[arg(long, default_value_t = serve::DEFAULT_SHUTDOWN_GRACE.as_secs(), value_name = "SECONDS")]
    shutdown_grace_seconds: u64,
    /// Also serve the admin HTTP API (/admin/...) on this address (keep it private); it
    /// answers only to `Authorization: Bearer $DEPOSITKIT_ADMIN_TOKEN`.
    #[arg(long, value_name = "ADDR")]
    admin_listen: Option<SocketAddr>,
    /// Log one line per request to stderr (never headers, params or bodies).
    #[arg(long)]
    verbose: bool,
}

async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::io(format!("cannot listen on {addr}"), e))
}

fn local_addr(listener: &tokio::net::TcpListener) -> Result<SocketAddr> {
    listener.local_addr().map_err(|e| Error::io("listening socket", e))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!(
                "depositkit-server: error: {}",
                depositkit_server::error::with_causes(&error)
            );
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let Some(database) = cli.database else {
        return Err(Error::invalid(
            "--database",
            format!("is required (or {DATABASE_ENV_VAR}): sqlite:///path or postgres://…"),
        ));
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name("depositkit-server-worker")
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the tokio runtime", e))?;
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Serve(args) => serve_until_signal(&database, args).await,
            Command::Admin(command) => {
                let store = UserStore::open(&database, 1).await?;
                let result = command.run(&store, &mut std::io::stdout().lock()).await;
                store.close();
                result
            }
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

async fn serve_until_signal(database: &str, args: ServeArgs) -> Result<()> {
    let options = ServeOptions {
        max_body_bytes: usize::try_from(args.max_body_bytes).unwrap_or(usize::MAX),
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
        shutdown_grace: Duration::from_secs(args.shutdown_grace_seconds),
        verbose: args.verbose,
    };
    let pool_size = usize::try_from(args.pool_size).unwrap_or(16);
    let store = UserStore::open(database, pool_size).await?;
    let admin = match args.admin_listen {
        Some(addr) => {
            let token = std::env::var(ADMIN_TOKEN_ENV).map_err(|_| {
                Error::invalid(
                    ADMIN_TOKEN_ENV,
                    "must be set to serve the admin API (--admin-listen)",
                )
            })?;
            let router = admin_api::router(store.clone(), &token, options.max_body_bytes)?;
            Some((bind(addr).await?, router))
        }
        None => None,
    };
    let listener = bind(args.listen).await?;
    // Handlers go in before the ready line: a signal sent right after it must not kill us.
    let stop =
        serve::shutdown_signal().map_err(|e| Error::io("cannot install signal handlers", e))?;
    let mut out = std::io::stdout().lock();
    if let Some((admin_listener, _)) = &admin {
        writeln!(out, "depositkit-server admin API on http://{}", local_addr(admin_listener)?)
            .map_err(|e| Error::io("stdout", e))?;
    }
    writeln!(out, "depositkit-server listening on http://{}", local_addr(&listener)?)
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("stdout", e))?;
    drop(out);

    // One signal stops both listeners.
    let (stopped_tx, stopped_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        let name = stop.await;
        eprintln!("depositkit-server: {name}: finishing in-flight requests, then exiting");
        let _ = stopped_tx.send(true);
    });
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stopped| *stopped).await;
    };
    let admin_serving = admin.map(|(admin_listener, router)| {
        let stopped = stopped(stopped_rx.clone());
        tokio::spawn(serve::serve(
            admin_listener,
            router,
            options.max_connections,
            options.shutdown_grace,
            stopped,
        ))
    });
    let router = serve::router(store.clone(), &options);
    let result = serve::serve(
        listener,
        router,
        options.max_connections,
        options.shutdown_grace,
        stopped(stopped_rx),
    )
    .await;
    if let Some(admin_serving) = admin_serving {
        let _ = admin_serving.await;
    }
    store.close();
    result
}
