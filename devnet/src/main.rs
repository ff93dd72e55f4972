//! `depositkit-devnet`: the command line of the devnet (serve, and seed the store). Exit codes:
//! 0 success, 1 failure, 2 usage error.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use depositkit_devnet::config::{
    ChainsConfig, DB_ENV_VAR, DEFAULT_BALANCE_API_KEY, DEFAULT_DB_PATH, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_SHUTDOWN_GRACE,
};
use depositkit_devnet::server::{base_url, build_runtime};
use depositkit_devnet::services::admin::{self, DepositRequest};
use depositkit_devnet::services::prices::Prices;
use depositkit_devnet::{BoundServer, DevnetConfig, Result, Store, ensure_demo};
use depositkit_server::admin::AdminCommand;
use serde_json::{Value, json};

#[derive(Parser)]
#[command(
    name = "depositkit-devnet",
    version,
    about = "Local emulator of the services depositkit uses: user lookup (JSON-RPC), JWT, signer and universal accounts"
)]
struct Cli {
    /// SQLite database file (created with the schema when missing).
    #[arg(long, global = true, env = DB_ENV_VAR, default_value = DEFAULT_DB_PATH, value_name = "PATH")]
    db: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve every service (/user-rpc, /jwt, /signer, /ua, /devnet) until SIGINT or SIGTERM.
    Serve(ServeArgs),
    /// Projects, users, wallets, identities, sessions, interactions and imports
    /// (depositkit-server's admin commands, on this database).
    #[command(flatten)]
    Admin(AdminCommand),
    /// Credit an incoming transfer to an address (a deposit when a universal account owns it);
    /// prints {"txHash", "accountId", "rawAmount", "decimals"}. A running server sees it at once.
    Deposit(DepositArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    listen: SocketAddr,
    /// Largest accepted request body, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_BODY_BYTES as u64, value_parser = clap::value_parser!(u64).range(1..), value_name = "N")]
    max_body_bytes: u64,
    /// Serve /devnet/faults to inject HTTP errors and delays.
    #[arg(long)]
    enable_fault_injection: bool,
    /// Ensure a demo project and user exist and print their credentials as a JSON line first.
    #[arg(long)]
    demo: bool,
    /// Log one line per request to stderr.
    #[arg(long)]
    verbose: bool,
    /// Lifetime of the JWTs the JWT service issues, in seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..), value_name = "SECONDS")]
    jwt_ttl_seconds: u64,
    /// How long a sweep quote can be sent, in seconds.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..), value_name = "SECONDS")]
    quote_ttl_seconds: u64,
    /// Chains file (the JSON line of tests/chains/launch.py): back its chains with real
    /// transactions; the other chains stay on devnet's ledger.
    #[arg(long, value_name = "FILE")]
    chains: Option<PathBuf>,
    /// The X-API-Key the balance API ({servicesUrl}/balances) accepts.
    #[arg(long, env = "DEPOSITKIT_DEVNET_BALANCE_API_KEY", default_value = DEFAULT_BALANCE_API_KEY, value_name = "KEY")]
    balance_api_key: String,
    /// Milliseconds between the empty blocks of the simulated chains (0: blocks only for
    /// deposits and POST /devnet/chains/{chainId}/mine).
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    sim_block_ms: u64,
    /// How many blocks `safe` (Solana: `confirmed`) trails the newest block of a simulated chain.
    #[arg(long, default_value_t = 2, value_name = "BLOCKS")]
    sim_safe_lag: u64,
    /// How many blocks `finalized` trails the newest block of a simulated chain.
    #[arg(long, default_value_t = 5, value_name = "BLOCKS")]
    sim_finalized_lag: u64,
}

#[derive(Args)]
struct DepositArgs {
    /// Receiving address (an account's EVM or Solana deposit address, or any other address).
    #[arg(long)]
    address: String,
    /// Chain id of the transfer.
    #[arg(long)]
    chain_id: u64,
    /// Token symbol (ETH, USDC, USDT, BTC, SOL, BNB).
    #[arg(long)]
    token: String,
    /// Amount in whole tokens (1.5).
    #[arg(long, required_unless_present = "raw_amount", conflicts_with = "raw_amount")]
    amount: Option<String>,
    /// Amount in the token's smallest units (1500000).
    #[arg(long)]
    raw_amount: Option<String>,
    /// The sender, shown in the account's history.
    #[arg(long)]
    sender: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let message = depositkit_server::error::with_causes(&error);
            eprintln!("depositkit-devnet: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let db = cli.db;
    match cli.command {
        Command::Serve(args) => serve(&db, args),
        Command::Admin(command) => {
            let store = depositkit_server::UserStore::Sqlite(open(&db)?.users());
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| depositkit_devnet::Error::io("cannot start the tokio runtime", e))?;
            let mut out = std::io::stdout().lock();
            runtime.block_on(command.run(&store, &mut out))
        }
        Command::Deposit(args) => {
            let request = DepositRequest {
                address: args.address,
                chain_id: args.chain_id,
                token: args.token,
                amount: args.amount.map(Value::String),
                raw_amount: args.raw_amount,
                sender: args.sender,
            };
            let (credited, raw, decimals) =
                admin::deposit(&open(&db)?, &Prices::default(), &request)
                    .map_err(|e| depositkit_devnet::Error::invalid("deposit", e.message))?;
            print_json(&json!({
                "txHash": credited.tx_hash,
                "accountId": credited.account_id,
                "rawAmount": raw.to_string(),
                "decimals": decimals,
            }));
            Ok(())
        }
    }
}

fn open(db: &Path) -> Result<Store> {
    Store::open_with_connections(db, 1)
}

/// `{"servicesUrl", "jwt", "signer", "ua", "userRpc", "balanceApi", "balanceProxy",
/// "onrampWidget", "particle"}` under `base`.
fn service_urls(base: &str) -> Value {
    json!({
        "servicesUrl": base,
        "jwt": format!("{base}/jwt"),
        "signer": format!("{base}/signer"),
        "ua": format!("{base}/ua"),
        "userRpc": format!("{base}/user-rpc"),
        "balanceApi": format!("{base}/balances"),
        "balanceProxy": format!("{base}/balance-proxy"),
        "onrampWidget": format!("{base}/onramp/widget"),
        "particle": format!("{base}/particle"),
    })
}

fn print_json(value: &impl serde::Serialize) {
    println!("{}", serde_json::to_string(value).expect("records serialize"));
}

fn serve(db: &Path, args: ServeArgs) -> Result<()> {
    let store = Store::open(db)?;
    let demo = if args.demo { Some(ensure_demo(&store)?) } else { None };
    let config = DevnetConfig {
        db_path: db.to_path_buf(),
        listen: args.listen,
        max_body_bytes: usize::try_from(args.max_body_bytes).unwrap_or(usize::MAX),
        fault_injection: args.enable_fault_injection,
        verbose: args.verbose,
        shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        jwt_ttl: Duration::from_secs(args.jwt_ttl_seconds),
        quote_ttl: Duration::from_secs(args.quote_ttl_seconds),
        chains: args.chains.as_deref().map(ChainsConfig::from_file).transpose()?,
        balance_api_key: args.balance_api_key,
        sim_chains: depositkit_devnet::simchain::SimSettings {
            block_time: (args.sim_block_ms > 0).then(|| Duration::from_millis(args.sim_block_ms)),
            safe_lag: args.sim_safe_lag,
            finalized_lag: args.sim_finalized_lag,
        },
    };
    let server = BoundServer::bind(&config, store)?;
    let runtime = build_runtime()?;
    let verbose = args.verbose;
    let result = runtime.block_on(async move {
        // Handlers go in before the ready line: a signal sent right after it must not kill us.
        let stop = depositkit_server::serve::shutdown_signal()
            .map_err(|e| depositkit_devnet::Error::io("cannot install signal handlers", e))?;
        let mut out = std::io::stdout().lock();
        let base = base_url(server.local_addr());
        // One JSON line before the listening line: the service URLs, joined to the demo
        // credentials with --demo (so readers taking the one JSON line as the demo keep working).
        let mut line = service_urls(&base);
        if let Some(demo) = &demo {
            let Value::Object(demo) = serde_json::to_value(demo).expect("credentials serialize")
            else {
                unreachable!("credentials serialize to an object")
            };
            let urls = std::mem::replace(&mut line, Value::Object(demo));
            if let (Value::Object(line), Value::Object(urls)) = (&mut line, urls) {
                line.extend(urls);
            }
        }
        writeln!(out, "{line}").map_err(|e| depositkit_devnet::Error::io("stdout", e))?;
        writeln!(out, "depositkit-devnet listening on {base}")
            .and_then(|()| out.flush())
            .map_err(|e| depositkit_devnet::Error::io("stdout", e))?;
        // After the ready line, best effort: a reader that had what it needed may be gone.
        let dashboard = depositkit_devnet::dashboard::routes::PATH;
        let _ = writeln!(out, "dashboard: {base}{dashboard}").and_then(|()| out.flush());
        drop(out);
        server
            .run(async move {
                let name = stop.await;
                if verbose {
                    eprintln!("depositkit-devnet: {name}: shutting down");
                }
            })
            .await
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}
