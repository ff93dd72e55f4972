//! `depositkit-devnet`: the command line of the devnet (serve, and seed the store). Exit codes:
//! 0 success, 1 failure, 2 usage error.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::{Args, Parser, Subcommand};
use depositkit_devnet::config::{
    ChainsConfig, DB_ENV_VAR, DEFAULT_BALANCE_API_KEY, DEFAULT_DB_PATH, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_SHUTDOWN_GRACE,
};
use depositkit_devnet::server::{base_url, build_runtime};
use depositkit_devnet::services::admin::{self, DepositRequest};
use depositkit_devnet::services::prices::Prices;
use depositkit_devnet::{
    BoundServer, ChainFamily, DevnetConfig, NewUser, Profile, Result, Store, ensure_demo,
};
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
    /// Manage projects.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage user wallets.
    #[command(subcommand)]
    Wallet(WalletCommand),
    /// Manage identities (provider + uid) of users.
    #[command(subcommand)]
    Identity(IdentityCommand),
    /// Manage session tokens of users.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Record addresses that interacted with a project.
    #[command(subcommand)]
    Interaction(InteractionCommand),
    /// Credit an incoming transfer to an address (a deposit when a universal account owns it);
    /// prints {"txHash", "accountId", "rawAmount", "decimals"}. A running server sees it at once.
    Deposit(DepositArgs),
    /// Import users from a JSON array of User records (one transaction; prints their uuids).
    Import {
        /// Project to import into.
        #[arg(long)]
        project: String,
        /// JSON file: [{"email": ..., "wallets": [...], "identities": [...], "sessions": [...]}, ...].
        file: PathBuf,
    },
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

#[derive(Subcommand)]
enum ProjectCommand {
    /// Create a project; prints {"projectId", "serverKey"} (the key is shown only now).
    Create {
        /// Display name of the project.
        #[arg(long)]
        name: String,
    },
    /// Replace a project's server key; prints {"projectId", "serverKey"}.
    RotateKey {
        /// Project id.
        #[arg(long)]
        project: String,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Add a user to a project; prints its uuid.
    Add(Box<UserAddArgs>),
}

#[derive(Args)]
struct UserAddArgs {
    /// Project id the user belongs to.
    #[arg(long)]
    project: String,
    /// The user's uuid (a random v4 uuid when omitted).
    #[arg(long)]
    uuid: Option<String>,
    /// E-mail (required); every other profile field is optional.
    #[arg(long)]
    email: String,
    #[arg(long)]
    phone: Option<String>,
    #[arg(long)]
    name: Option<String>,
    #[arg(long)]
    avatar: Option<String>,
    #[arg(long)]
    facebook_id: Option<String>,
    #[arg(long)]
    facebook_email: Option<String>,
    #[arg(long)]
    google_id: Option<String>,
    #[arg(long)]
    google_email: Option<String>,
    #[arg(long)]
    apple_id: Option<String>,
    #[arg(long)]
    apple_email: Option<String>,
    #[arg(long)]
    twitter_id: Option<String>,
    #[arg(long)]
    twitter_email: Option<String>,
    #[arg(long)]
    telegram_id: Option<String>,
    #[arg(long)]
    telegram_phone: Option<String>,
    #[arg(long)]
    discord_id: Option<String>,
    #[arg(long)]
    discord_email: Option<String>,
    #[arg(long)]
    github_id: Option<String>,
    #[arg(long)]
    github_email: Option<String>,
    #[arg(long)]
    twitch_id: Option<String>,
    #[arg(long)]
    twitch_email: Option<String>,
    #[arg(long)]
    microsoft_id: Option<String>,
    #[arg(long)]
    microsoft_email: Option<String>,
    #[arg(long)]
    linkedin_id: Option<String>,
    #[arg(long)]
    linkedin_email: Option<String>,
}

impl UserAddArgs {
    fn into_new_user(self) -> (String, NewUser) {
        let profile = Profile {
            phone: self.phone,
            email: self.email,
            name: self.name,
            avatar: self.avatar,
            facebook_id: self.facebook_id,
            facebook_email: self.facebook_email,
            google_id: self.google_id,
            google_email: self.google_email,
            apple_id: self.apple_id,
            apple_email: self.apple_email,
            twitter_id: self.twitter_id,
            twitter_email: self.twitter_email,
            telegram_id: self.telegram_id,
            telegram_phone: self.telegram_phone,
            discord_id: self.discord_id,
            discord_email: self.discord_email,
            github_id: self.github_id,
            github_email: self.github_email,
            twitch_id: self.twitch_id,
            twitch_email: self.twitch_email,
            microsoft_id: self.microsoft_id,
            microsoft_email: self.microsoft_email,
            linkedin_id: self.linkedin_id,
            linkedin_email: self.linkedin_email,
        };
        (self.project, NewUser { uuid: self.uuid, profile })
    }
}

#[derive(Subcommand)]
enum WalletCommand {
    /// Add a wallet to a user (EVM addresses are stored lower-cased).
    Add {
        /// User uuid.
        #[arg(long)]
        user: String,
        #[arg(long, value_parser = parse_chain)]
        chain: ChainFamily,
        #[arg(long)]
        address: String,
    },
}

#[derive(Subcommand)]
enum IdentityCommand {
    /// Link an identity to a user (getUserInfoByIdentity looks up provider "jwt").
    Add {
        /// User uuid.
        #[arg(long)]
        user: String,
        #[arg(long, default_value = "jwt")]
        provider: String,
        #[arg(long)]
        uid: String,
    },
}

#[derive(Subcommand)]
enum SessionCommand {
    /// Create a session token for a user; prints the token (shown only now).
    Add {
        /// User uuid.
        #[arg(long)]
        user: String,
        /// Lifetime in seconds; negative values create an already expired token.
        #[arg(long, default_value_t = 86_400, allow_negative_numbers = true)]
        ttl_seconds: i64,
        /// Use this token instead of a random one.
        #[arg(long)]
        token: Option<String>,
    },
}

#[derive(Subcommand)]
enum InteractionCommand {
    /// Record that an address interacted with a project (isProjectUser then answers true).
    Add {
        /// Project id.
        #[arg(long)]
        project: String,
        /// evm_chain or solana.
        #[arg(long, value_parser = parse_chain)]
        chain: ChainFamily,
        #[arg(long)]
        address: String,
    },
}

fn parse_chain(text: &str) -> std::result::Result<ChainFamily, String> {
    ChainFamily::parse(text).ok_or_else(|| {
        format!("expected evm_chain or solana, got {}", depositkit_core::describe::quote(text))
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let mut message = error.to_string();
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                let text = cause.to_string();
                if !message.contains(&text) {
                    message = format!("{message}: {text}");
                }
                source = cause.source();
            }
            eprintln!("depositkit-devnet: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let db = cli.db;
    match cli.command {
        Command::Serve(args) => serve(&db, args),
        Command::Project(ProjectCommand::Create { name }) => {
            print_json(&open(&db)?.create_project(&name)?);
            Ok(())
        }
        Command::Project(ProjectCommand::RotateKey { project }) => {
            print_json(&open(&db)?.rotate_server_key(&project)?);
            Ok(())
        }
        Command::User(UserCommand::Add(args)) => {
            let (project, user) = args.into_new_user();
            println!("{}", open(&db)?.add_user(&project, &user)?);
            Ok(())
        }
        Command::Wallet(WalletCommand::Add { user, chain, address }) => {
            open(&db)?.add_wallet(&user, chain, &address)
        }
        Command::Identity(IdentityCommand::Add { user, provider, uid }) => {
            open(&db)?.add_identity(&user, &provider, &uid)
        }
        Command::Session(SessionCommand::Add { user, ttl_seconds, token }) => {
            let ttl = Duration::from_secs(ttl_seconds.unsigned_abs());
            let now = SystemTime::now();
            let expires_at = if ttl_seconds >= 0 { now + ttl } else { now - ttl };
            let store = open(&db)?;
            let token = match token {
                Some(token) => {
                    store.add_session_with_token(&user, &token, expires_at)?;
                    token
                }
                None => store.add_session(&user, expires_at)?,
            };
            println!("{token}");
            Ok(())
        }
        Command::Interaction(InteractionCommand::Add { project, chain, address }) => {
            open(&db)?.add_interaction(&project, chain, &address)
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
        Command::Import { project, file } => {
            for uuid in open(&db)?.import_file(&project, &file)? {
                println!("{uuid}");
            }
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
    };
    let server = BoundServer::bind(&config, store)?;
    let runtime = build_runtime()?;
    let verbose = args.verbose;
    let result = runtime.block_on(async move {
        // Handlers go in before the ready line: a signal sent right after it must not kill us.
        let stop = signals::install()
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

mod signals {
    use std::future::Future;

    /// Installs SIGINT and SIGTERM handlers; the future resolves with the signal's name.
    #[cfg(unix)]
    pub fn install() -> std::io::Result<impl Future<Output = &'static str>> {
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
    #[cfg(not(unix))]
    pub fn install() -> std::io::Result<impl Future<Output = &'static str>> {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        })
    }
}
