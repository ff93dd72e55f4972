//! The one option table: every construction option of the deposit client, declared once.
//!
//! Each entry gives the Rust field and its builder method, the spec name (JSON, C, messages),
//! the shape, the default, the option's own check and its documentation. The documentation
//! names other options by their Rust field in backticks; each face renders it with its own
//! spelling (`docs/options.md`, the Python stub and the C header are generated from this table
//! by `core/tests/option_table.rs`). Checks that span several options (the polling minimum, the
//! service URLs) are in [`super::resolve`].

use super::backend::{BackendChoice, ParticleOptions, check_particle};
use super::chain_watch::{ChainRpcUrls, check_chain_rpc_urls, check_finality};
use super::checks::{check_delay, check_text, check_url, check_usd};
use super::destination::DestinationConfig;
use super::nested::{
    FundingConfig, NotificationsConfig, OnrampConfig, RefundConfig, check_funding,
    check_notifications, check_onramp, check_refund,
};
use super::option::{OptionArg, OptionKind, OptionSpec, OptionValue, deposit_options};
use super::{
    DEFAULT_EVENT_QUEUE_CAPACITY, DEFAULT_POLLING_INTERVAL_MS, DEFAULT_PROCESSING_TIMEOUT_MS,
    DEFAULT_RECONCILE_INTERVAL_MS, DEFAULT_SWEEP_RETRY_DELAY_MS, LifecycleCallback, MAX_DELAY_MS,
    MIN_POLLING_INTERVAL_MS,
};
use crate::chains::Chain;
use crate::deposit::finality::FinalityConfig;
use crate::error::{Error, Result};
use crate::tokens::{DEFAULT_SUPPORTED_TOKENS, TokenType};

/// No check of its own (checked with other options in [`super::resolve`], or any value goes).
fn unchecked<T>(_: &str, _: &T) -> Result<()> {
    Ok(())
}

fn optional_text(name: &str, value: &Option<String>) -> Result<()> {
    value.as_deref().map_or(Ok(()), |text| check_text(name, text))
}

fn optional_url(name: &str, value: &Option<String>) -> Result<()> {
    value.as_deref().map_or(Ok(()), |url| check_url(name, url))
}

/// More than 0 and at most a day.
fn positive_delay(name: &str, value: &u64) -> Result<()> {
    if *value == 0 || *value > MAX_DELAY_MS {
        return Err(Error::configuration(format!(
            "{name} must be more than 0 and at most a day, got {value}"
        )));
    }
    Ok(())
}

fn not_empty<T>(name: &str, list: &[T]) -> Result<()> {
    if list.is_empty() {
        return Err(Error::configuration(format!(
            "{name} is empty: no deposit could ever be detected"
        )));
    }
    Ok(())
}

deposit_options! {
    /// The intermediary wallet, when the host knows it: `initialize()` checks it equals the
    /// signer's wallet.
    intermediary_address / with_intermediary_address: Option<String> = None,
        "intermediaryAddress", Text, check unchecked;
    /// The host's own project id for unified-account operations (spec §5.2; a 1% service fee
    /// applies to sweeps, spec §5.3).
    ua_project_id / with_ua_project_id: Option<String> = None,
        "uaProjectId", Text, check optional_text;
    /// Minimum USD value of a deposit; smaller deposits reach `below_threshold` (applied with 2%
    /// tolerance; 0 disables the check). Deposits worth $0.10 or less are dust and ignored.
    /// Default 0.5 (spec `DEFAULT_MIN_VALUE_USD`).
    min_value_usd / with_min_value_usd: f64 = crate::DEFAULT_MIN_VALUE_USD,
        "minValueUSD", Number, check |name, value| check_usd(name, *value);
    /// The tokens the watcher reports, as symbols in any letter case. Default all six.
    supported_tokens / with_supported_tokens: Vec<TokenType> = DEFAULT_SUPPORTED_TOKENS.to_vec(),
        "supportedTokens", Tokens, check |name, tokens| not_empty(name, tokens);
    /// The chain ids the watcher reports. Default all 17.
    supported_chains / with_supported_chains: Vec<u64> = Chain::ALL.iter().map(|c| c.id()).collect(),
        "supportedChains", Chains, check |name, chains| {
            not_empty(name, chains)?;
            match chains.iter().find(|id| Chain::from_id(**id).is_none()) {
                Some(bad) => Err(Error::configuration(format!(
                    "{name} contains an unknown chain ID: {bad}. Use chains from the CHAIN constant."
                ))),
                None => Ok(()),
            }
        };
    /// The watcher's polling interval in milliseconds: at least `min_polling_interval_ms`
    /// (2000 in production), at most a day. Default 3000.
    polling_interval_ms / with_polling_interval_ms: u64 = DEFAULT_POLLING_INTERVAL_MS,
        "pollingIntervalMs", Integer, check unchecked;
    /// Sweep each detected deposit automatically; without it, call `sweep(id)`. Default true.
    auto_sweep / with_auto_sweep: bool = true,
        "autoSweep", Bool, check unchecked;
    /// Auto-refund (spec §2 `RefundConfig`), every key optional: `enabled` (default false:
    /// refund deposits whose sweep failed for good automatically), `delay_ms` (default 5000:
    /// the wait before the first attempt and between attempts), `max_attempts` (default 2,
    /// 1 to 100), `refund_to_sender` (default true: to the original sender when known, else the
    /// owner). Manual refunds work either way.
    refund / with_refund: RefundConfig = RefundConfig::default(),
        "refund", Object, check |_, refund| check_refund(refund);
    /// Notification records (spec §2 `DepositNotificationsProps`): true for the defaults, or an
    /// object, every key optional: `duration_ms` (default 6000; auto-dismiss delay of terminal
    /// records, 0 never), `max` (default 5; records kept), and `position`, `theme`,
    /// `class_name`, which are only kept for a host UI. The spec's `render_item` has no
    /// headless meaning and is refused as an unknown key. Default off.
    notifications / with_notifications: Option<NotificationsConfig> = None,
        "notifications", ObjectOrBool, check |_, n| n.as_ref().map_or(Ok(()), check_notifications);
    /// Fund from wallet (spec §2 `FundingConfig`; `docs/funding.md` §3–4), every key optional:
    /// `enabled` (default false: every funding call is refused), `api_key` (of the balance API,
    /// sent from this process: development use), `balance_api_url` (that API's base URL),
    /// `proxy_url` (the host's reverse proxy to it, which adds the key), `balance_provider`
    /// (`"rpc"`: read balances from the chains' nodes), `evm_rpc_urls` (chain id → node URL),
    /// `solana_rpc_url`, `min_value_usd` (smallest balance offered; default the client's).
    funding / with_funding: FundingConfig = FundingConfig::default(),
        "funding", Object, check |_, funding| check_funding(funding);
    /// The fiat onramp (spec §2 `OnrampConfig`; `docs/funding.md` §5), every key optional:
    /// `enabled` (default false), `api_key` (the partner key; never shown), `mode`
    /// (`"overlay"`, the default, or `"redirect"`), `fiat_currency` (default `"USD"`),
    /// `default_fiat_amount`, `payment_mode`, `widget_url`.
    onramp / with_onramp: OnrampConfig = OnrampConfig::default(),
        "onramp", Object, check |_, onramp| check_onramp(onramp);
    /// Chain watchers (`docs/finality.md`): chain id (a number, or its text) → the chain's
    /// JSON-RPC endpoint (an EVM node, or Solana's): `http(s)://`, polled every 100 ms, or for
    /// an EVM chain `ws(s)://`, told of new heads by `eth_subscribe` (polled over the socket
    /// when the endpoint refuses subscriptions). A watched chain's deposits are `seen` when
    /// their transfer is included, `confirming` as blocks come, `confirmed` when the chain's
    /// finality rule (`finality`) is met, and only then swept; one a reorganisation removes
    /// first is `reorged` and never swept. Balance polling goes on beside them, so a deposit is found
    /// while an endpoint is down. Endpoints are never shown (their path may hold a key).
    /// Default none: every chain's deposits are the balance's rises, swept at once.
    chain_rpc_urls / with_chain_rpc_urls: ChainRpcUrls = ChainRpcUrls::default(),
        "chainRpcUrls", Object, check check_chain_rpc_urls;
    /// When a deposit on a watched chain (`chain_rpc_urls`) is final (`docs/finality.md`),
    /// every key optional: `chains` (chain id → `{"confirmations": n}`, `"safe"` (Solana's
    /// `"confirmed"`) or `"finalized"`, replacing that chain's documented default),
    /// `instant_below_usd` (default 0: deposits worth less are swept as soon as they are seen,
    /// the host accepting the risk of a reorganisation on them), `balance_fallback_ms` (how
    /// long a deposit only the balance shows waits before it is taken as final; default the
    /// chain's typical time to finality).
    finality / with_finality: FinalityConfig = FinalityConfig::default(),
        "finality", Object, check |_, finality| check_finality(finality);
    /// The universal-account backend: `"devnet"` (the default: `docs/protocol.md`, the services
    /// under `services_url`) or `"particle"` (Particle's Universal Account JSON-RPC with a
    /// server-side signer, set up by `particle`; `docs/particle.md`).
    backend / with_backend: BackendChoice = BackendChoice::Devnet,
        "backend", Text, check unchecked;
    /// The `particle` backend's settings (`docs/particle.md` §8), every key optional:
    /// `environment` (`"production"`, the default, or `"staging"`), `rpc_url` (a URL of your
    /// own, e.g. devnet's `…/particle`; beats `environment`), `project_id` and `client_key`
    /// (the project's credentials; else `DEPOSITKIT_PARTICLE_PROJECT_ID` and
    /// `DEPOSITKIT_PARTICLE_CLIENT_KEY`), and the signer: `signer_key` (one key, 64 hex
    /// digits), `signer_seed` (a master seed in hex: one key per owner), or `signer` (`"key"`
    /// or `"seed"`: read `DEPOSITKIT_PARTICLE_SIGNER_KEY` or `DEPOSITKIT_PARTICLE_SIGNER_SEED`;
    /// unset, whichever is set). A host signer (a KMS callback) overrides these. Secrets are
    /// never shown.
    particle / with_particle: ParticleOptions = ParticleOptions::default(),
        "particle", Object, check |_, particle| check_particle(particle);
    /// Base URL of the three services (`{services_url}/jwt`, `/signer`, `/ua`), e.g. a
    /// devnet's. Either it or each of `jwt_service_url`, `signer_url` and
    /// `account_service_url` is required.
    services_url / with_services_url: Option<String> = None,
        "servicesUrl", Text, check optional_url;
    /// The JWT service; overrides `services_url`.
    jwt_service_url / with_jwt_service_url: Option<String> = None,
        "jwtServiceUrl", Text, check optional_url;
    /// The auth-core signer; overrides `services_url`.
    signer_url / with_signer_url: Option<String> = None,
        "signerUrl", Text, check optional_url;
    /// The universal-account service; overrides `services_url`.
    account_service_url / with_account_service_url: Option<String> = None,
        "accountServiceUrl", Text, check optional_url;
    /// Milliseconds between the 3 attempts of a failed sweep (at most a day). Default 5000
    /// (lower it in tests).
    sweep_retry_delay_ms / with_sweep_retry_delay_ms: u64 = DEFAULT_SWEEP_RETRY_DELAY_MS,
        "sweepRetryDelayMs", Integer, check |name, value| check_delay(name, *value);
    /// First wait in milliseconds before a sweep or refund whose send outcome is unknown (a
    /// timeout, 5xx or 429 on the send) is resolved again automatically, with the same quote,
    /// never a new one; doubles per round up to ten minutes. Default 10000 (lower it in tests).
    reconcile_interval_ms / with_reconcile_interval_ms: u64 = DEFAULT_RECONCILE_INTERVAL_MS,
        "reconcileIntervalMs", Integer, check positive_delay;
    /// The watchdog: the longest one sweep, refund or recovery attempt may run, in
    /// milliseconds; then it is ended as a failed attempt (nothing sent yet) or as an unknown
    /// outcome to resolve (a send was under way). Default 300000 (lower it in tests).
    processing_timeout_ms / with_processing_timeout_ms: u64 = DEFAULT_PROCESSING_TIMEOUT_MS,
        "processingTimeoutMs", Integer, check positive_delay;
    /// **A test and devnet knob** (1 to 2000): lowers the smallest `polling_interval_ms`
    /// accepted, so that tests never wait seconds between polls. Default 2000.
    min_polling_interval_ms / with_min_polling_interval_ms: u64 = MIN_POLLING_INTERVAL_MS,
        "minPollingIntervalMs", Integer, check |name, value| {
            if *value == 0 || *value > MIN_POLLING_INTERVAL_MS {
                return Err(Error::configuration(format!(
                    "{name} must be between 1 and {MIN_POLLING_INTERVAL_MS} ms (a test knob that only lowers the minimum), got {value}"
                )));
            }
            Ok(())
        };
    /// Deadline of one HTTP attempt in milliseconds (more than 0, at most a day). Default
    /// 10000.
    request_timeout_ms / with_request_timeout_ms: u64 = 10_000,
        "requestTimeoutMs", Integer, check positive_delay;
    /// Retries of one HTTP request answered 429 or 5xx, refused or timed out (0 to 20).
    /// Default 3.
    http_retries / with_http_retries: u32 = 3,
        "httpRetries", Integer, check |name, value| {
            if *value > 20 {
                return Err(Error::configuration(format!("{name} must be at most 20, got {value}")));
            }
            Ok(())
        };
    /// First backoff between HTTP retries in milliseconds (doubling, full jitter). Default 100.
    http_initial_backoff_ms / with_http_initial_backoff_ms: u64 = 100,
        "httpInitialBackoffMs", Integer, check |name, value| check_delay(name, *value);
    /// Deadline of one blocking call (`initialize`, `poll_now`, `sweep`, `refund`,
    /// `can_refund`, `stuck_funds`, `recover_funds`, the history calls) in milliseconds.
    /// Default 60000.
    call_timeout_ms / with_call_timeout_ms: u64 = 60_000,
        "callTimeoutMs", Integer, check positive_delay;
    /// Size of the pull queue of events (at least 1); when full the oldest event is dropped.
    /// Without `store_path` also how many events `events_since` can replay. Default 1024.
    event_queue_capacity / with_event_queue_capacity: usize = DEFAULT_EVENT_QUEUE_CAPACITY,
        "eventQueueCapacity", Integer, check |name, value| {
            if *value == 0 {
                return Err(Error::configuration(format!("{name} must be at least 1, got 0")));
            }
            Ok(())
        };
    /// A SQLite file (created if missing) that keeps the client's state across restarts:
    /// deposit records with their phase history, sweep and refund attempts, the event log, the
    /// watcher's snapshot and the notification records. A client started again on it (even
    /// after its process was killed mid-sweep) resumes every deposit where it was, resolves a
    /// send that may have happened with the same quote (never a second one), and continues the
    /// event ids. One process at a time: of processes starting on one file at once exactly one
    /// wins, the others wait up to 2 s and are refused ("… is in use by another process");
    /// openings are serialised through `<store_path>-lock` beside it. Events are appended to
    /// `<store_path>-events` first and folded into the file in batches: keep, copy or delete it
    /// with the file (as SQLite's `-wal`). One live client per owner (several owners may share
    /// a file). A file this version cannot read is refused naming the path. Unset (the
    /// default): state lives in memory and a new client starts over.
    store_path / with_store_path: Option<String> = None,
        "storePath", Path, check |name, path| match path {
            Some(path) if path.trim().is_empty() || path.contains('\0') => {
                Err(Error::configuration(format!(
                    "{name} must be a file path, got {}",
                    crate::describe::quote(path)
                )))
            }
            _ => Ok(()),
        };
}

/// The option whose spec name is `name` (`pollingIntervalMs`).
pub fn option_named(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|spec| spec.name == name)
}

/// The option whose Rust field (and Python keyword) is `field` (`polling_interval_ms`).
pub fn option_by_field(field: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|spec| spec.field == field)
}
