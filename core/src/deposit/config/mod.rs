//! Construction options of the deposit client (spec §4) and their validation.
//!
//! - [`options`]: the one option table — each option declared once (field, builder, spec name,
//!   shape, default, check, doc); [`DepositClientConfig`] and [`OPTIONS`] come from it.
//! - [`option`]: the machinery of that table (how a value is read from JSON, [`OptionSpec`]).
//! - [`destination`]: the one destination reader and resolver; [`nested`]: the settings
//!   objects (`refund`, `notifications`, `funding`, `onramp`); [`checks`]: shared checks.
//! - [`resolve`]: validation, into the configuration the client runs on.
//!
//! [`DepositClient::new`](crate::deposit::DepositClient::new) validates a configuration and
//! fails with [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) naming the option
//! and the value. Messages follow the reference SDK's (§8.2).

mod backend;
mod chain_watch;
mod checks;
mod destination;
mod nested;
mod option;
mod options;
mod resolve;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::describe::{json_kind, quote};
use crate::error::{Error, Result};

use super::events::DepositLifecycleEvent;

pub use backend::{BackendChoice, ParticleOptions, Secret, SignerKind};
pub use chain_watch::ChainRpcUrls;
pub(crate) use checks::check_url;
pub use destination::{Destination, DestinationConfig, resolve_destination};
pub use nested::{
    BALANCE_PROVIDER_RPC, BUILTIN_ONRAMP_PARTNER_KEY, DEFAULT_BALANCE_API_URL,
    DEFAULT_BALANCE_PROXY_URL, DEFAULT_EVM_RPC_URLS, DEFAULT_ONRAMP_WIDGET_URL,
    DEFAULT_SOLANA_RPC_URL, FundingConfig, NotificationPosition, NotificationTheme,
    NotificationsConfig, OnrampConfig, OnrampMode, RefundConfig,
};
pub use option::{NESTED_OPTION_NAMES, OptionArg, OptionError, OptionKind, OptionSpec};
pub use options::{DepositClientConfig, OPTIONS, option_by_field, option_named};
pub(crate) use resolve::{ResolvedBackend, ResolvedConfig};

/// The watcher's default polling interval (spec §8), milliseconds.
pub const DEFAULT_POLLING_INTERVAL_MS: u64 = crate::DEFAULT_POLLING_INTERVAL_MS;
/// The shortest polling interval allowed in production, milliseconds.
pub const MIN_POLLING_INTERVAL_MS: u64 = 2000;
/// The wait between two attempts of a failed sweep (reference §8.6), milliseconds.
pub const DEFAULT_SWEEP_RETRY_DELAY_MS: u64 = 5000;
/// Attempts of one sweep in total (reference §8.6 `MAX_SWEEP_RETRIES`).
pub const MAX_SWEEP_ATTEMPTS: u32 = 3;
/// The first wait before an unknown send outcome is resolved again automatically
/// (milliseconds); it doubles after each unresolved round, up to ten minutes.
pub const DEFAULT_RECONCILE_INTERVAL_MS: u64 = 10_000;
/// The longest a sweep, refund or recovery attempt may run before the watchdog ends it
/// (milliseconds).
pub const DEFAULT_PROCESSING_TIMEOUT_MS: u64 = 300_000;
/// Default capacity of the pull queue of events.
pub const DEFAULT_EVENT_QUEUE_CAPACITY: usize = 1024;
/// The longest delay any option accepts (one day): larger values are unit mistakes.
pub const MAX_DELAY_MS: u64 = 24 * 60 * 60 * 1000;

/// A headless callback for lifecycle events (spec §4 `onDepositEvent`).
pub type LifecycleCallback = Arc<dyn Fn(&DepositLifecycleEvent) + Send + Sync>;

impl fmt::Debug for DepositClientConfig {
    /// The options that say what the client does; never a key (nested `Debug`s redact theirs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DepositClientConfig")
            .field("owner_address", &self.owner_address)
            .field("intermediary_address", &self.intermediary_address)
            .field("destination", &self.destination)
            .field("ua_project_id", &self.ua_project_id)
            .field("refund", &self.refund)
            .field("min_value_usd", &self.min_value_usd)
            .field("notifications", &self.notifications)
            .field("funding.enabled", &self.funding.enabled)
            .field("onramp.enabled", &self.onramp.enabled)
            .field("supported_tokens", &self.supported_tokens)
            .field("supported_chains", &self.supported_chains)
            .field("polling_interval_ms", &self.polling_interval_ms)
            .field("auto_sweep", &self.auto_sweep)
            .field("backend", &self.backend)
            .field("particle", &self.particle)
            .field("services_url", &self.services_url)
            .field("signer_source", &self.signer_source)
            .finish_non_exhaustive()
    }
}

impl DepositClientConfig {
    /// Signs with `source` (e.g. one [`CallbackSigner`](crate::signer::CallbackSigner) for
    /// every owner, a KMS or HSM behind it) on the `particle` backend. It overrides the signer
    /// options (`signer`); it is not an option of the table, since JSON cannot hold it.
    #[must_use]
    pub fn with_signer_source(mut self, source: Arc<dyn crate::signer::SignerSource>) -> Self {
        self.signer_source = Some(source);
        self
    }

    /// The host-provided signer source, when [`with_signer_source`](Self::with_signer_source)
    /// set one.
    pub fn signer_source(&self) -> Option<&Arc<dyn crate::signer::SignerSource>> {
        self.signer_source.as_ref()
    }

    /// Reads a configuration from JSON with the spec's camelCase option names: `ownerAddress`
    /// and `destination` (`{chainId, address?, token?}`) required, then any option of
    /// [`OPTIONS`] by its spec name (`minValueUSD`, `pollingIntervalMs`, `notifications` (an
    /// object, or `true` for the defaults), `servicesUrl`, …; `docs/options.md`). Token symbols
    /// are accepted in any letter case; `null` keeps an option's default. The result is not
    /// validated yet: [`DepositClient::new`](crate::deposit::DepositClient::new) does that.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) for malformed JSON, an
    /// unknown option, a value of the wrong type, or an unknown token symbol.
    pub fn from_json(json: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(json)
            .map_err(|e| Error::configuration(format!("invalid configuration JSON: {e}")))?;
        let Value::Object(mut options) = value else {
            return Err(Error::configuration(format!(
                "invalid configuration JSON: it must be an object, got {}",
                json_kind(&value)
            )));
        };
        let owner = match options.remove("ownerAddress") {
            Some(Value::String(owner)) => owner,
            None | Some(Value::Null) => {
                return Err(Error::configuration("ownerAddress is required"));
            }
            Some(other) => {
                return Err(OptionError::wrong_type("ownerAddress", "a string", &other).into());
            }
        };
        let destination = match options.remove("destination") {
            None | Some(Value::Null) => {
                return Err(Error::configuration("destination is required"));
            }
            Some(destination) => DestinationConfig::from_json_value(destination)?,
        };
        let mut config = DepositClientConfig::new(owner, destination);
        for (name, value) in options {
            let Some(spec) = option_named(&name) else {
                return Err(Error::configuration(format!(
                    "unknown option {}; the options are ownerAddress, destination, {}",
                    quote(&name),
                    OPTIONS.iter().map(|spec| spec.name).collect::<Vec<_>>().join(", ")
                )));
            };
            spec.set(&mut config, value)?;
        }
        Ok(config)
    }
}
