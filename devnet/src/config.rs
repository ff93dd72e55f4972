//! How a devnet server is set up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::chain::config::ChainsConfig;

/// Database file used when neither `--db` nor `DEPOSITKIT_DEVNET_DB` is given.
pub const DEFAULT_DB_PATH: &str = "devnet.sqlite";
/// Environment variable naming the database file.
pub const DB_ENV_VAR: &str = "DEPOSITKIT_DEVNET_DB";
/// Largest request body accepted unless configured otherwise (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// How long a stopping server waits for in-flight requests before dropping them.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// The key the balance API (`{servicesUrl}/balances`) accepts unless configured otherwise.
pub const DEFAULT_BALANCE_API_KEY: &str = "devnet-balance-key";

/// Settings of one devnet server.
#[derive(Debug, Clone)]
pub struct DevnetConfig {
    /// SQLite file; created with the schema when missing.
    pub db_path: PathBuf,
    /// Address to listen on; port 0 picks a free port (see `RunningDevnet::base_url`).
    pub listen: SocketAddr,
    /// Largest accepted request body; larger ones get HTTP 413.
    pub max_body_bytes: usize,
    /// Serve the fault endpoints (`/devnet/faults`, `/devnet/faults/sweeps`,
    /// `/devnet/jwt/forge`, `/devnet/jwt/expire`) for tests.
    pub fault_injection: bool,
    /// Log one line per request to stderr.
    pub verbose: bool,
    /// How long shutdown waits for in-flight requests.
    pub shutdown_grace: Duration,
    /// Lifetime of the JWTs the JWT service issues.
    pub jwt_ttl: Duration,
    /// How long a sweep quote can be sent.
    pub quote_ttl: Duration,
    /// The local chains to back with real transactions (`docs/funding.md` §2); `None` keeps
    /// every chain on devnet's ledger.
    pub chains: Option<ChainsConfig>,
    /// The `X-API-Key` the balance API accepts.
    pub balance_api_key: String,
    /// How the simulated chains of the ledger chains make blocks (`docs/devnet-chains.md`).
    pub sim_chains: crate::simchain::SimSettings,
}

impl DevnetConfig {
    /// Defaults with the database at `db_path`: loopback on a free port, 1 MiB bodies, no fault
    /// injection, quiet, JWTs living 600 s and quotes 60 s, every chain on the ledger, the
    /// balance API key `devnet-balance-key`.
    pub fn new(db_path: impl Into<PathBuf>) -> Self {
        DevnetConfig {
            db_path: db_path.into(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            fault_injection: false,
            verbose: false,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            jwt_ttl: crate::services::jwt::DEFAULT_JWT_TTL,
            quote_ttl: crate::services::DEFAULT_QUOTE_TTL,
            chains: None,
            balance_api_key: DEFAULT_BALANCE_API_KEY.to_owned(),
            sim_chains: crate::simchain::SimSettings::default(),
        }
    }

    /// The same config backed by the chains of `chains` (the chains file of
    /// `tests/chains/launch.py`): those chains are real, the others stay on the ledger.
    #[must_use]
    pub fn with_chains(mut self, chains: ChainsConfig) -> Self {
        self.chains = Some(chains);
        self
    }

    /// The same config with the balance API accepting `key`.
    #[must_use]
    pub fn with_balance_api_key(mut self, key: impl Into<String>) -> Self {
        self.balance_api_key = key.into();
        self
    }

    /// The same config with the simulated chains making blocks as `settings` say.
    #[must_use]
    pub fn with_sim_chains(mut self, settings: crate::simchain::SimSettings) -> Self {
        self.sim_chains = settings;
        self
    }

    /// The same config with fault injection switched on.
    #[must_use]
    pub fn with_fault_injection(mut self) -> Self {
        self.fault_injection = true;
        self
    }
}

impl Default for DevnetConfig {
    fn default() -> Self {
        Self::new(DEFAULT_DB_PATH)
    }
}
