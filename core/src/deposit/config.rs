//! Construction options of the deposit client (spec §4) and their validation.
//!
//! [`DepositClientConfig`] holds every option with the spec's defaults; [`DepositClient::new`]
//! validates it and fails with [`ErrorKind::Configuration`](crate::ErrorKind::Configuration)
//! naming the option and the value. Messages follow the reference SDK's (§8.2).
//!
//! [`DepositClient::new`]: crate::deposit::DepositClient::new

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::chains::{AddressType, Chain};
use crate::describe::quote;
use crate::error::{Error, Result};
use crate::http::RetryPolicy;
use crate::services::{HttpSettings, ServiceUrls};
use crate::tokens::{DEFAULT_SUPPORTED_TOKENS, TokenType, is_supported_destination_token};
use crate::validate::{evm_address_problem, solana_address_problem};

use super::events::DepositLifecycleEvent;

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

/// Where swept deposits go, as the host gives it (spec §2 `DestinationConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestinationConfig {
    /// One of the destination chains (Ethereum, Base, Arbitrum, BNB Chain, Solana).
    pub chain_id: u64,
    /// The receiving address; default the owner address (which only an EVM chain accepts).
    #[serde(default)]
    pub address: Option<String>,
    /// The delivered token; default USDC. Must be deliverable on the chain.
    #[serde(default)]
    pub token: Option<TokenType>,
}

impl DestinationConfig {
    /// USDC to the owner address on `chain_id`.
    pub fn chain(chain_id: u64) -> Self {
        DestinationConfig { chain_id, address: None, token: None }
    }

    /// With an explicit address.
    pub fn with_address(mut self, address: impl Into<String>) -> Self {
        self.address = Some(address.into());
        self
    }

    /// With an explicit token.
    pub fn with_token(mut self, token: TokenType) -> Self {
        self.token = Some(token);
        self
    }
}

/// A validated destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Destination {
    /// The chain id.
    pub chain_id: u64,
    /// The receiving address (EVM lower-cased; Solana exactly as given).
    pub address: String,
    /// The delivered token.
    pub token: TokenType,
}

/// Auto-refund settings (spec §2 `RefundConfig`). Manual refunds
/// ([`refund`](crate::deposit::DepositClient::refund)) are always available; `enabled` turns on
/// the automatic refund of deposits whose sweep failed for good.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RefundConfig {
    /// Enables auto-refund. Default `false`.
    pub enabled: bool,
    /// Delay before the first automatic refund attempt, and between attempts. Default 5000.
    pub delay_ms: u64,
    /// Automatic refund attempts at most (at least 1). Default 2.
    pub max_attempts: u32,
    /// Refund to the original sender when it can be detected. Default `true`.
    pub refund_to_sender: bool,
}

impl Default for RefundConfig {
    fn default() -> Self {
        RefundConfig { enabled: false, delay_ms: 5000, max_attempts: 2, refund_to_sender: true }
    }
}

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $option:literal, { $($(#[$vmeta:meta])* $variant:ident = $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// The spec's spelling.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = Error;

            /// Parses the spec's spelling; anything else is a configuration error.
            fn from_str(text: &str) -> Result<Self> {
                match text {
                    $($text => Ok($name::$variant),)*
                    _ => Err(Error::configuration(format!(
                        "{} must be one of {}, got {}",
                        $option,
                        [$($text),*].join(", "),
                        quote(text)
                    ))),
                }
            }
        }
    };
}

string_enum!(
    /// Screen anchor of the notifications.
    NotificationPosition, "notifications.position", {
        /// Default.
        TopRight = "top-right",
        #[allow(missing_docs)] TopLeft = "top-left",
        #[allow(missing_docs)] BottomRight = "bottom-right",
        #[allow(missing_docs)] BottomLeft = "bottom-left",
        #[allow(missing_docs)] TopCenter = "top-center",
        #[allow(missing_docs)] BottomCenter = "bottom-center",
    }
);

string_enum!(
    /// Colour theme of the notifications.
    NotificationTheme, "notifications.theme", {
        /// Default.
        Dark = "dark",
        #[allow(missing_docs)] Light = "light",
    }
);

string_enum!(
    /// How the onramp widget opens.
    OnrampMode, "onramp.mode", {
        /// An in-page modal that emits order events (default).
        Overlay = "overlay",
        /// A new tab; no order events.
        Redirect = "redirect",
    }
);

/// Notifications (spec §2 `DepositNotificationsProps`): the client keeps notification records
/// ([`notifications`](crate::deposit::DepositClient::notifications)) under these rules.
/// `position`, `theme` and `class_name` are kept and returned for a host UI; the reference's
/// `renderItem` (a React render function) has no headless meaning and does not exist here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct NotificationsConfig {
    /// Screen anchor. Default top-right.
    pub position: NotificationPosition,
    /// Colour theme. Default dark.
    pub theme: NotificationTheme,
    /// Auto-dismiss delay of terminal notifications; 0 disables it. Default 6000.
    pub duration_ms: u64,
    /// Maximum simultaneous notifications, at least 1. Default 5.
    pub max: u32,
    /// Extra classes for the container.
    pub class_name: Option<String>,
}

impl Default for NotificationsConfig {
    fn default() -> Self {
        NotificationsConfig {
            position: NotificationPosition::TopRight,
            theme: NotificationTheme::Dark,
            duration_ms: 6000,
            max: 5,
            class_name: None,
        }
    }
}

/// The balance-data provider's base URL, called with `funding.apiKey` when no
/// `funding.balanceApiUrl` is set (`POST {url}/v1/wallet-balances`, `X-API-Key`).
pub const DEFAULT_BALANCE_API_URL: &str = "https://api.depositkit.dev/balances";
/// The maker's hosted balance proxy, the last balance source (`POST {url}/v1/wallet-balances`,
/// no key: the proxy adds its own).
pub const DEFAULT_BALANCE_PROXY_URL: &str = "https://api.depositkit.dev/balance-proxy";
/// Public JSON-RPC endpoints of the EVM chains that funding covers, used when
/// `funding.evmRpcUrls` has no entry for the chain.
pub const DEFAULT_EVM_RPC_URLS: [(u64, &str); 4] = [
    (1, "https://ethereum-rpc.publicnode.com"),
    (56, "https://bsc-dataseed.bnbchain.org"),
    (8453, "https://mainnet.base.org"),
    (42161, "https://arb1.arbitrum.io/rpc"),
];
/// The public Solana RPC endpoint, used when `funding.solanaRpcUrl` is not set.
pub const DEFAULT_SOLANA_RPC_URL: &str = "https://api.mainnet-beta.solana.com";
/// The onramp widget's base address, used when `onramp.widgetUrl` is not set.
pub const DEFAULT_ONRAMP_WIDGET_URL: &str = "https://onramp.depositkit.dev/widget";
/// The library's built-in onramp partner key, used when `onramp.apiKey` is not set. It is
/// public (it travels in the widget URL) but depositkit still never logs it.
pub const BUILTIN_ONRAMP_PARTNER_KEY: &str = "pk_depositkit_builtin_onramp";

/// The one `funding.balanceProvider` value a configuration can name: discovery by RPC at
/// `funding.evmRpcUrls` and `funding.solanaRpcUrl`. A host callable is set with
/// [`set_balance_provider`](crate::deposit::DepositClient::set_balance_provider) instead.
pub const BALANCE_PROVIDER_RPC: &str = "rpc";

/// Fund-from-wallet settings (spec §2 `FundingConfig`; `docs/funding.md` §3–4). `Debug`
/// never shows the API key.
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct FundingConfig {
    /// Master switch. Default `false`.
    pub enabled: bool,
    /// Key of a balance-data provider (development use: it is sent from the client).
    pub api_key: Option<String>,
    /// Base URL of the host's reverse proxy to the balance-data provider.
    pub proxy_url: Option<String>,
    /// `"rpc"`: discover balances directly from the chains' RPC endpoints, ahead of `apiKey`,
    /// `proxyUrl` and the hosted default. The only value accepted here; a host callable is set
    /// with [`set_balance_provider`](crate::deposit::DepositClient::set_balance_provider).
    pub balance_provider: Option<String>,
    /// Base URL of the balance-data provider called with `api_key`; default
    /// [`DEFAULT_BALANCE_API_URL`].
    pub balance_api_url: Option<String>,
    /// Per-chain EVM RPC URLs; default [`DEFAULT_EVM_RPC_URLS`].
    pub evm_rpc_urls: BTreeMap<u64, String>,
    /// Solana RPC URL; default [`DEFAULT_SOLANA_RPC_URL`].
    pub solana_rpc_url: Option<String>,
    /// Minimum USD value of a balance to offer; default the client's `min_value_usd`.
    #[serde(rename = "minValueUSD")]
    pub min_value_usd: Option<f64>,
}

impl fmt::Debug for FundingConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FundingConfig")
            .field("enabled", &self.enabled)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("proxy_url", &self.proxy_url)
            .field("balance_provider", &self.balance_provider)
            .field("balance_api_url", &self.balance_api_url)
            // RPC URLs often carry a key in their path.
            .field("evm_rpc_urls", &self.evm_rpc_urls.keys().collect::<Vec<_>>())
            .field("solana_rpc_url", &self.solana_rpc_url.as_ref().map(|_| "<set>"))
            .field("min_value_usd", &self.min_value_usd)
            .finish()
    }
}

impl FundingConfig {
    /// The RPC URL of EVM chain `chain_id`: `evm_rpc_urls`' entry, else the public default;
    /// `None` for a chain with neither.
    pub fn evm_rpc_url(&self, chain_id: u64) -> Option<&str> {
        self.evm_rpc_urls.get(&chain_id).map(String::as_str).or_else(|| {
            DEFAULT_EVM_RPC_URLS.iter().find(|(id, _)| *id == chain_id).map(|(_, url)| *url)
        })
    }

    /// The Solana RPC URL: `solana_rpc_url`, else [`DEFAULT_SOLANA_RPC_URL`].
    pub fn solana_rpc_url(&self) -> &str {
        self.solana_rpc_url.as_deref().unwrap_or(DEFAULT_SOLANA_RPC_URL)
    }

    /// The balance-data provider's base URL: `balance_api_url`, else
    /// [`DEFAULT_BALANCE_API_URL`].
    pub fn balance_api_url(&self) -> &str {
        self.balance_api_url.as_deref().unwrap_or(DEFAULT_BALANCE_API_URL)
    }
}

/// Fiat onramp settings (spec §2 `OnrampConfig`; `docs/funding.md` §5). `Debug` never shows
/// the partner key.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct OnrampConfig {
    /// Master switch. Default `false`.
    pub enabled: bool,
    /// The onramp partner key; default [`BUILTIN_ONRAMP_PARTNER_KEY`].
    pub api_key: Option<String>,
    /// Overlay (default) or redirect.
    pub mode: OnrampMode,
    /// Three-letter currency code. Default `USD`.
    pub fiat_currency: String,
    /// Pre-filled fiat amount (positive).
    pub default_fiat_amount: Option<f64>,
    /// Preferred payment method (`card`, `apple_pay`, …).
    pub payment_mode: Option<String>,
    /// Override of the widget's base address; default [`DEFAULT_ONRAMP_WIDGET_URL`].
    pub widget_url: Option<String>,
}

impl fmt::Debug for OnrampConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnrampConfig")
            .field("enabled", &self.enabled)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("mode", &self.mode)
            .field("fiat_currency", &self.fiat_currency)
            .field("default_fiat_amount", &self.default_fiat_amount)
            .field("payment_mode", &self.payment_mode)
            .field("widget_url", &self.widget_url)
            .finish()
    }
}

impl Default for OnrampConfig {
    fn default() -> Self {
        OnrampConfig {
            enabled: false,
            api_key: None,
            mode: OnrampMode::Overlay,
            fiat_currency: "USD".to_owned(),
            default_fiat_amount: None,
            payment_mode: None,
            widget_url: None,
        }
    }
}

/// Every construction option of the deposit client (spec §4), with the spec's defaults.
///
/// Build one with [`DepositClientConfig::new`] and set fields directly.
#[derive(Clone)]
pub struct DepositClientConfig {
    /// The owner of the unified account: an EVM address (required).
    pub owner_address: String,
    /// The intermediary wallet, when the host knows it: `initialize()` checks it equals the
    /// signer's wallet.
    pub intermediary_address: Option<String>,
    /// Where swept deposits go.
    pub destination: DestinationConfig,
    /// The host's own project id for unified-account operations (spec §5.2; a 1% fee applies).
    pub ua_project_id: Option<String>,
    /// Auto-refund.
    pub refund: RefundConfig,
    /// Minimum USD value of a deposit (spec `DEFAULT_MIN_VALUE_USD`, 0.5); smaller ones reach
    /// `below_threshold`. 0 disables the check.
    pub min_value_usd: f64,
    /// Notifications (`None`: no notification records are kept).
    pub notifications: Option<NotificationsConfig>,
    /// Fund from wallet (`docs/funding.md` §3–4).
    pub funding: FundingConfig,
    /// Fiat onramp (`docs/funding.md` §5).
    pub onramp: OnrampConfig,
    /// Tokens the watcher reports. Default all six.
    pub supported_tokens: Vec<TokenType>,
    /// Chains the watcher reports. Default all 17.
    pub supported_chains: Vec<u64>,
    /// Polling interval of the watcher. Default 3000, at least 2000.
    pub polling_interval_ms: u64,
    /// **For tests and devnet only**: the lowest `polling_interval_ms` accepted (default and
    /// production value 2000). Lower it so that tests never wait seconds between polls.
    pub min_polling_interval_ms: u64,
    /// Sweep each detected deposit automatically. Default `true`.
    pub auto_sweep: bool,
    /// Wait between attempts of a failed sweep. Default 5000 (lower it in tests).
    pub sweep_retry_delay_ms: u64,
    /// First wait before a sweep or refund whose send outcome is unknown is resolved again
    /// automatically (same quote, never a new one); doubles per round up to ten minutes.
    /// Default 10 000 (lower it in tests).
    pub reconcile_interval_ms: u64,
    /// Watchdog: the longest one sweep, refund or recovery attempt may run; then it is ended
    /// and treated as failed (nothing sent yet) or as an unknown outcome to resolve (a send was
    /// under way). Default 300 000 (lower it in tests).
    pub processing_timeout_ms: u64,
    /// Sets the three service URLs from one base (`{servicesUrl}/jwt`, `/signer`, `/ua`).
    pub services_url: Option<String>,
    /// The JWT service; overrides `services_url`.
    pub jwt_service_url: Option<String>,
    /// The auth-core signer; overrides `services_url`.
    pub signer_url: Option<String>,
    /// The universal-account service; overrides `services_url`.
    pub account_service_url: Option<String>,
    /// Deadline of one HTTP attempt. Default 10 000.
    pub request_timeout_ms: u64,
    /// Retries of one HTTP request (429, 5xx, refused, timed out). Default 3.
    pub http_retries: u32,
    /// First backoff between HTTP retries (doubling, full jitter). Default 100.
    pub http_initial_backoff_ms: u64,
    /// Deadline of one blocking client call (`initialize`, `poll_now`, `sweep`, `refund`,
    /// `can_refund`, `stuck_funds`, `recover_funds`, the history). Default 60 000.
    pub call_timeout_ms: u64,
    /// Capacity of the pull queue of [`next_event`](crate::deposit::DepositClient::next_event);
    /// when full the oldest event is dropped. Default 1024.
    pub event_queue_capacity: usize,
    /// The SQLite file keeping the client's state across restarts (`storePath`): deposit
    /// records with their phase history, sweep and refund attempts, the event log, the
    /// watcher's snapshot and the notification records (`store.rs`). Created if missing; one
    /// process at a time; one live client per owner. `None` (the default): state lives in
    /// memory and a restarted client starts over (what the account holds is reported as
    /// deposits again, with new event ids).
    pub store_path: Option<String>,
    /// Headless callback for lifecycle events (spec §4 `onDepositEvent`).
    pub on_deposit_event: Option<LifecycleCallback>,
}

impl fmt::Debug for DepositClientConfig {
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
            .field("services_url", &self.services_url)
            .finish_non_exhaustive()
    }
}

impl DepositClientConfig {
    /// The defaults for `owner_address`, delivering USDC to the owner on `destination`.
    pub fn new(owner_address: impl Into<String>, destination: DestinationConfig) -> Self {
        DepositClientConfig {
            owner_address: owner_address.into(),
            intermediary_address: None,
            destination,
            ua_project_id: None,
            refund: RefundConfig::default(),
            min_value_usd: crate::DEFAULT_MIN_VALUE_USD,
            notifications: None,
            funding: FundingConfig::default(),
            onramp: OnrampConfig::default(),
            supported_tokens: DEFAULT_SUPPORTED_TOKENS.to_vec(),
            supported_chains: Chain::ALL.iter().map(|c| c.id()).collect(),
            polling_interval_ms: DEFAULT_POLLING_INTERVAL_MS,
            min_polling_interval_ms: MIN_POLLING_INTERVAL_MS,
            auto_sweep: true,
            sweep_retry_delay_ms: DEFAULT_SWEEP_RETRY_DELAY_MS,
            reconcile_interval_ms: DEFAULT_RECONCILE_INTERVAL_MS,
            processing_timeout_ms: DEFAULT_PROCESSING_TIMEOUT_MS,
            services_url: None,
            jwt_service_url: None,
            signer_url: None,
            account_service_url: None,
            request_timeout_ms: 10_000,
            http_retries: 3,
            http_initial_backoff_ms: 100,
            call_timeout_ms: 60_000,
            event_queue_capacity: DEFAULT_EVENT_QUEUE_CAPACITY,
            store_path: None,
            on_deposit_event: None,
        }
    }

    /// Reads a configuration from JSON with the spec's camelCase option names (`ownerAddress`,
    /// `destination: {chainId, address?, token?}`, `minValueUSD`, `pollingIntervalMs`,
    /// `notifications` (an object, or `true` for the defaults), `servicesUrl`, …; every field of
    /// this struct, camelCased). Token symbols are accepted in any letter case. The result is
    /// not validated yet: [`DepositClient::new`](crate::deposit::DepositClient::new) does that.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) for malformed JSON, an
    /// unknown option, a value of the wrong type, or an unknown token symbol.
    pub fn from_json(json: &str) -> Result<Self> {
        let raw: JsonConfig = serde_json::from_str(json)
            .map_err(|e| Error::configuration(format!("invalid configuration JSON: {e}")))?;
        let token = |option: &str, text: &str| -> Result<TokenType> {
            text.parse::<TokenType>().map_err(|_| {
                Error::configuration(format!(
                    "{option} must be one of ETH, USDC, USDT, BTC, SOL, BNB, got {}",
                    quote(text)
                ))
            })
        };
        let destination = DestinationConfig {
            chain_id: raw.destination.chain_id,
            address: raw.destination.address,
            token: raw
                .destination
                .token
                .as_deref()
                .map(|t| token("destination.token", t))
                .transpose()?,
        };
        let mut config = DepositClientConfig::new(raw.owner_address, destination);
        config.intermediary_address = raw.intermediary_address;
        config.ua_project_id = raw.ua_project_id;
        if let Some(refund) = raw.refund {
            config.refund = refund;
        }
        if let Some(min) = raw.min_value_usd {
            config.min_value_usd = min;
        }
        config.notifications = match raw.notifications {
            None | Some(JsonNotifications::Enabled(false)) => None,
            Some(JsonNotifications::Enabled(true)) => Some(NotificationsConfig::default()),
            Some(JsonNotifications::Config(n)) => Some(n),
        };
        if let Some(funding) = raw.funding {
            config.funding = funding;
        }
        if let Some(onramp) = raw.onramp {
            config.onramp = onramp;
        }
        if let Some(tokens) = raw.supported_tokens {
            config.supported_tokens =
                tokens.iter().map(|t| token("supportedTokens", t)).collect::<Result<_>>()?;
        }
        if let Some(chains) = raw.supported_chains {
            config.supported_chains = chains;
        }
        macro_rules! take {
            ($($field:ident),*) => { $(if let Some(v) = raw.$field { config.$field = v; })* };
        }
        take!(
            polling_interval_ms,
            min_polling_interval_ms,
            auto_sweep,
            sweep_retry_delay_ms,
            reconcile_interval_ms,
            processing_timeout_ms,
            request_timeout_ms,
            http_retries,
            http_initial_backoff_ms,
            call_timeout_ms,
            event_queue_capacity
        );
        config.services_url = raw.services_url;
        config.jwt_service_url = raw.jwt_service_url;
        config.signer_url = raw.signer_url;
        config.account_service_url = raw.account_service_url;
        config.store_path = raw.store_path;
        Ok(config)
    }

    /// Sets `services_url`.
    pub fn with_services_url(mut self, url: impl Into<String>) -> Self {
        self.services_url = Some(url.into());
        self
    }

    /// Sets `store_path`: the client's state survives restarts in this SQLite file.
    pub fn with_store_path(mut self, path: impl Into<String>) -> Self {
        self.store_path = Some(path.into());
        self
    }

    /// Checks every option.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) naming the first bad
    /// option and its value.
    pub fn validate(&self) -> Result<()> {
        self.resolve().map(|_| ())
    }

    pub(crate) fn resolve(&self) -> Result<ResolvedConfig> {
        let owner = resolve_owner(&self.owner_address)?;
        let intermediary = match &self.intermediary_address {
            None => None,
            Some(address) => {
                if address.is_empty() {
                    return Err(Error::configuration(
                        "intermediaryAddress is empty: leave it unset to use the signer's wallet",
                    ));
                }
                if let Some(reason) = evm_address_problem(address) {
                    return Err(Error::configuration(format!(
                        "intermediaryAddress must be a valid EVM address: {} ({reason})",
                        quote(address)
                    )));
                }
                Some(address.to_ascii_lowercase())
            }
        };
        let destination = resolve_destination(&self.destination, &owner)?;
        if let Some(project) = &self.ua_project_id {
            check_text("uaProjectId", project)?;
        }
        check_refund(&self.refund)?;
        check_usd("minValueUSD", self.min_value_usd)?;
        if let Some(n) = &self.notifications {
            check_notifications(n)?;
        }
        check_funding(&self.funding)?;
        check_onramp(&self.onramp)?;
        if self.supported_tokens.is_empty() {
            return Err(Error::configuration(
                "supportedTokens is empty: no deposit could ever be detected",
            ));
        }
        if self.supported_chains.is_empty() {
            return Err(Error::configuration(
                "supportedChains is empty: no deposit could ever be detected",
            ));
        }
        if let Some(bad) = self.supported_chains.iter().find(|id| Chain::from_id(**id).is_none()) {
            return Err(Error::configuration(format!(
                "supportedChains contains an unknown chain ID: {bad}. Use chains from the CHAIN constant."
            )));
        }
        if self.min_polling_interval_ms == 0
            || self.min_polling_interval_ms > MIN_POLLING_INTERVAL_MS
        {
            return Err(Error::configuration(format!(
                "minPollingIntervalMs must be between 1 and {MIN_POLLING_INTERVAL_MS} ms (a test knob that only lowers the minimum), got {}",
                self.min_polling_interval_ms
            )));
        }
        if self.polling_interval_ms < self.min_polling_interval_ms
            || self.polling_interval_ms > MAX_DELAY_MS
        {
            return Err(Error::configuration(format!(
                "pollingIntervalMs must be at least {} ms (and at most a day), got {}",
                self.min_polling_interval_ms, self.polling_interval_ms
            )));
        }
        check_delay("sweepRetryDelayMs", self.sweep_retry_delay_ms)?;
        if self.reconcile_interval_ms == 0 || self.reconcile_interval_ms > MAX_DELAY_MS {
            return Err(Error::configuration(format!(
                "reconcileIntervalMs must be more than 0 and at most a day, got {}",
                self.reconcile_interval_ms
            )));
        }
        if self.processing_timeout_ms == 0 || self.processing_timeout_ms > MAX_DELAY_MS {
            return Err(Error::configuration(format!(
                "processingTimeoutMs must be more than 0 and at most a day, got {}",
                self.processing_timeout_ms
            )));
        }
        let urls = self.resolve_urls()?;
        if self.request_timeout_ms == 0 || self.request_timeout_ms > MAX_DELAY_MS {
            return Err(Error::configuration(format!(
                "requestTimeoutMs must be more than 0 and at most a day, got {}",
                self.request_timeout_ms
            )));
        }
        if self.call_timeout_ms == 0 || self.call_timeout_ms > MAX_DELAY_MS {
            return Err(Error::configuration(format!(
                "callTimeoutMs must be more than 0 and at most a day, got {}",
                self.call_timeout_ms
            )));
        }
        check_delay("httpInitialBackoffMs", self.http_initial_backoff_ms)?;
        if self.http_retries > 20 {
            return Err(Error::configuration(format!(
                "httpRetries must be at most 20, got {}",
                self.http_retries
            )));
        }
        if self.event_queue_capacity == 0 {
            return Err(Error::configuration("eventQueueCapacity must be at least 1, got 0"));
        }
        let store_path = match &self.store_path {
            Some(path) if path.trim().is_empty() || path.contains('\0') => {
                return Err(Error::configuration(format!(
                    "storePath must be a file path, got {}",
                    quote(path)
                )));
            }
            Some(path) => Some(std::path::PathBuf::from(path)),
            None => None,
        };
        let mut supported_tokens = self.supported_tokens.clone();
        supported_tokens.sort();
        supported_tokens.dedup();
        Ok(ResolvedConfig {
            owner,
            intermediary,
            destination,
            ua_project_id: self.ua_project_id.clone(),
            min_value_usd: self.min_value_usd,
            supported_tokens,
            supported_chains: self.supported_chains.clone(),
            polling_interval: Duration::from_millis(self.polling_interval_ms),
            auto_sweep: self.auto_sweep,
            sweep_retry_delay: Duration::from_millis(self.sweep_retry_delay_ms),
            reconcile_interval: Duration::from_millis(self.reconcile_interval_ms),
            processing_timeout: Duration::from_millis(self.processing_timeout_ms),
            refund: self.refund.clone(),
            notifications: self.notifications.clone(),
            urls,
            http: HttpSettings {
                timeout: Duration::from_millis(self.request_timeout_ms),
                retry: RetryPolicy {
                    max_retries: self.http_retries,
                    initial_backoff: Duration::from_millis(self.http_initial_backoff_ms),
                    ..RetryPolicy::default()
                },
                ..HttpSettings::default()
            },
            call_timeout: Duration::from_millis(self.call_timeout_ms),
            event_queue_capacity: self.event_queue_capacity,
            store_path,
            funding: self.funding.clone(),
            onramp: self.onramp.clone(),
        })
    }

    fn resolve_urls(&self) -> Result<ServiceUrls> {
        let base = match &self.services_url {
            Some(url) => {
                check_url("servicesUrl", url)?;
                Some(ServiceUrls::under(url))
            }
            None => None,
        };
        let pick = |option: &str,
                    own: &Option<String>,
                    from_base: Option<&String>|
         -> Result<String> {
            match (own, from_base) {
                (Some(url), _) => {
                    check_url(option, url)?;
                    Ok(url.trim_end_matches('/').to_owned())
                }
                (None, Some(url)) => Ok(url.clone()),
                (None, None) => Err(Error::configuration(format!(
                    "{option} is required: set servicesUrl (for example a devnet's base URL) or {option}"
                ))),
            }
        };
        Ok(ServiceUrls {
            jwt: pick("jwtServiceUrl", &self.jwt_service_url, base.as_ref().map(|b| &b.jwt))?,
            signer: pick("signerUrl", &self.signer_url, base.as_ref().map(|b| &b.signer))?,
            account: pick(
                "accountServiceUrl",
                &self.account_service_url,
                base.as_ref().map(|b| &b.account),
            )?,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsonDestination {
    chain_id: u64,
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    token: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum JsonNotifications {
    Enabled(bool),
    Config(NotificationsConfig),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct JsonConfig {
    owner_address: String,
    #[serde(default)]
    intermediary_address: Option<String>,
    destination: JsonDestination,
    #[serde(default)]
    ua_project_id: Option<String>,
    #[serde(default)]
    refund: Option<RefundConfig>,
    #[serde(default, rename = "minValueUSD")]
    min_value_usd: Option<f64>,
    #[serde(default)]
    notifications: Option<JsonNotifications>,
    #[serde(default)]
    funding: Option<FundingConfig>,
    #[serde(default)]
    onramp: Option<OnrampConfig>,
    #[serde(default)]
    supported_tokens: Option<Vec<String>>,
    #[serde(default)]
    supported_chains: Option<Vec<u64>>,
    #[serde(default)]
    polling_interval_ms: Option<u64>,
    #[serde(default)]
    min_polling_interval_ms: Option<u64>,
    #[serde(default)]
    auto_sweep: Option<bool>,
    #[serde(default)]
    sweep_retry_delay_ms: Option<u64>,
    #[serde(default)]
    reconcile_interval_ms: Option<u64>,
    #[serde(default)]
    processing_timeout_ms: Option<u64>,
    #[serde(default)]
    services_url: Option<String>,
    #[serde(default)]
    jwt_service_url: Option<String>,
    #[serde(default)]
    signer_url: Option<String>,
    #[serde(default)]
    account_service_url: Option<String>,
    #[serde(default)]
    request_timeout_ms: Option<u64>,
    #[serde(default)]
    http_retries: Option<u32>,
    #[serde(default)]
    http_initial_backoff_ms: Option<u64>,
    #[serde(default)]
    call_timeout_ms: Option<u64>,
    #[serde(default)]
    event_queue_capacity: Option<usize>,
    #[serde(default)]
    store_path: Option<String>,
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedConfig {
    pub owner: String,
    pub intermediary: Option<String>,
    pub destination: Destination,
    pub ua_project_id: Option<String>,
    pub min_value_usd: f64,
    pub supported_tokens: Vec<TokenType>,
    pub supported_chains: Vec<u64>,
    pub polling_interval: Duration,
    pub auto_sweep: bool,
    pub sweep_retry_delay: Duration,
    pub reconcile_interval: Duration,
    pub processing_timeout: Duration,
    pub refund: RefundConfig,
    pub notifications: Option<NotificationsConfig>,
    pub urls: ServiceUrls,
    pub http: HttpSettings,
    pub call_timeout: Duration,
    pub event_queue_capacity: usize,
    pub store_path: Option<std::path::PathBuf>,
    pub funding: FundingConfig,
    pub onramp: OnrampConfig,
}

fn resolve_owner(owner: &str) -> Result<String> {
    if owner.is_empty() {
        return Err(Error::configuration("ownerAddress is required"));
    }
    if let Some(reason) = evm_address_problem(owner) {
        return Err(Error::configuration(format!(
            "ownerAddress must be a valid EVM address: {} ({reason})",
            quote(owner)
        )));
    }
    Ok(owner.to_ascii_lowercase())
}

/// The destination chains, for messages.
fn destination_chains() -> String {
    Chain::ALL
        .iter()
        .filter(|c| c.is_destination())
        .map(|c| format!("{} ({})", c.name(), c.id()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Validates `config` and fills in its defaults (`address`: `owner`; `token`: USDC).
///
/// # Errors
/// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) for an unknown chain, a chain
/// that cannot be a destination (X Layer among them), an address invalid for the chain's type,
/// or a token not deliverable on the chain.
pub fn resolve_destination(config: &DestinationConfig, owner: &str) -> Result<Destination> {
    let chain_id = config.chain_id;
    let Some(chain) = Chain::from_id(chain_id) else {
        return Err(Error::configuration(format!(
            "Invalid destination chain ID: {chain_id}. Use a chain from the CHAIN constant."
        )));
    };
    if chain == Chain::XLAYER {
        return Err(Error::configuration(format!(
            "destination.chainId {chain_id}: X Layer is a deposit source only and cannot be a destination. Destination chains: {}.",
            destination_chains()
        )));
    }
    if !chain.is_destination() {
        return Err(Error::configuration(format!(
            "destination.chainId {chain_id}: {} cannot be a destination. Destination chains: {}.",
            chain.name(),
            destination_chains()
        )));
    }
    let (address, defaulted) = match &config.address {
        Some(address) => (address.as_str(), false),
        None => (owner, true),
    };
    let address = match chain.address_type() {
        AddressType::Solana => {
            if let Some(reason) = solana_address_problem(address) {
                let hint = if defaulted {
                    "; the default is the owner's EVM address, so a Solana destination needs destination.address"
                } else {
                    ""
                };
                return Err(Error::configuration(format!(
                    "Invalid Solana address format for destination on {}: {} ({reason}{hint})",
                    chain.name(),
                    quote(address)
                )));
            }
            address.to_owned()
        }
        AddressType::Evm => {
            if let Some(reason) = evm_address_problem(address) {
                return Err(Error::configuration(format!(
                    "Invalid EVM address format for destination on {}: {} ({reason})",
                    chain.name(),
                    quote(address)
                )));
            }
            address.to_ascii_lowercase()
        }
    };
    let token = config.token.unwrap_or(TokenType::USDC);
    if !is_supported_destination_token(token, chain_id) {
        let deliverable: Vec<&str> = DEFAULT_SUPPORTED_TOKENS
            .iter()
            .filter(|t| is_supported_destination_token(**t, chain_id))
            .map(|t| t.symbol())
            .collect();
        return Err(Error::configuration(format!(
            "destination.token {token} cannot be delivered on {} ({chain_id}); deliverable there: {}",
            chain.name(),
            deliverable.join(", ")
        )));
    }
    Ok(Destination { chain_id, address, token })
}

fn check_text(option: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::configuration(format!("{option} is empty")));
    }
    if value.chars().any(char::is_control) {
        return Err(Error::configuration(format!(
            "{option} contains control characters: {}",
            quote(value)
        )));
    }
    Ok(())
}

fn check_usd(option: &str, value: f64) -> Result<()> {
    if !value.is_finite() || value < 0.0 {
        return Err(Error::configuration(format!(
            "{option} must be a finite number of at least 0, got {value}"
        )));
    }
    Ok(())
}

fn check_delay(option: &str, value: u64) -> Result<()> {
    if value > MAX_DELAY_MS {
        return Err(Error::configuration(format!("{option} must be at most a day, got {value}")));
    }
    Ok(())
}

/// Checks an `http://` or `https://` URL without credentials; the value is echoed only when it
/// carries none.
pub(crate) fn check_url(option: &str, url: &str) -> Result<()> {
    let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
        return Err(Error::configuration(format!(
            "{option} must be an http:// or https:// URL, got {}",
            quote(url)
        )));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(Error::configuration(format!(
            "{option} must not carry credentials in the URL"
        )));
    }
    if authority.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::configuration(format!("{option} is not a valid URL: {}", quote(url))));
    }
    Ok(())
}

fn check_refund(refund: &RefundConfig) -> Result<()> {
    check_delay("refund.delayMs", refund.delay_ms)?;
    if refund.max_attempts == 0 || refund.max_attempts > 100 {
        return Err(Error::configuration(format!(
            "refund.maxAttempts must be between 1 and 100, got {}",
            refund.max_attempts
        )));
    }
    Ok(())
}

fn check_notifications(n: &NotificationsConfig) -> Result<()> {
    check_delay("notifications.durationMs", n.duration_ms)?;
    if n.max == 0 {
        return Err(Error::configuration("notifications.max must be at least 1, got 0"));
    }
    if let Some(class) = &n.class_name
        && class.chars().any(char::is_control)
    {
        return Err(Error::configuration(format!(
            "notifications.className contains control characters: {}",
            quote(class)
        )));
    }
    Ok(())
}

fn check_funding(f: &FundingConfig) -> Result<()> {
    if let Some(key) = &f.api_key
        && (key.is_empty() || key.chars().any(char::is_control))
    {
        // Never echo a key.
        return Err(Error::configuration("funding.apiKey is empty or contains control characters"));
    }
    if let Some(url) = &f.proxy_url {
        check_url("funding.proxyUrl", url)?;
    }
    if let Some(provider) = &f.balance_provider
        && provider != BALANCE_PROVIDER_RPC
    {
        return Err(Error::configuration(format!(
            "funding.balanceProvider must be \"rpc\" (a host callable is set with set_balance_provider), got {}",
            quote(provider)
        )));
    }
    if let Some(url) = &f.balance_api_url {
        check_url("funding.balanceApiUrl", url)?;
    }
    for (chain_id, url) in &f.evm_rpc_urls {
        match Chain::from_id(*chain_id) {
            None => {
                return Err(Error::configuration(format!(
                    "funding.evmRpcUrls has an unknown chain ID: {chain_id}"
                )));
            }
            Some(chain) if chain.address_type() != AddressType::Evm => {
                return Err(Error::configuration(format!(
                    "funding.evmRpcUrls has {} ({chain_id}), which is not an EVM chain; use funding.solanaRpcUrl",
                    chain.name()
                )));
            }
            Some(_) => check_url(&format!("funding.evmRpcUrls[{chain_id}]"), url)?,
        }
    }
    if let Some(url) = &f.solana_rpc_url {
        check_url("funding.solanaRpcUrl", url)?;
    }
    if let Some(min) = f.min_value_usd {
        check_usd("funding.minValueUSD", min)?;
    }
    Ok(())
}

fn check_onramp(o: &OnrampConfig) -> Result<()> {
    if let Some(key) = &o.api_key
        && (key.is_empty() || key.chars().any(char::is_control))
    {
        return Err(Error::configuration("onramp.apiKey is empty or contains control characters"));
    }
    if o.fiat_currency.len() != 3 || !o.fiat_currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(Error::configuration(format!(
            "onramp.fiatCurrency must be a three-letter currency code such as \"USD\", got {}",
            quote(&o.fiat_currency)
        )));
    }
    if let Some(amount) = o.default_fiat_amount
        && (!amount.is_finite() || amount <= 0.0)
    {
        return Err(Error::configuration(format!(
            "onramp.defaultFiatAmount must be a positive number, got {amount}"
        )));
    }
    if let Some(mode) = &o.payment_mode {
        check_text("onramp.paymentMode", mode)?;
    }
    if let Some(url) = &o.widget_url {
        check_url("onramp.widgetUrl", url)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    const OWNER: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
    const SOL: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

    fn config() -> DepositClientConfig {
        DepositClientConfig::new(OWNER, DestinationConfig::chain(8453))
            .with_services_url("http://127.0.0.1:1")
    }

    fn message(config: &DepositClientConfig) -> String {
        let err = config.validate().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Configuration, "{err}");
        err.message().to_owned()
    }

    #[test]
    fn defaults_resolve() {
        let resolved = config().resolve().unwrap();
        assert_eq!(resolved.owner, OWNER.to_ascii_lowercase());
        assert_eq!(
            resolved.destination,
            Destination {
                chain_id: 8453,
                address: OWNER.to_ascii_lowercase(),
                token: TokenType::USDC
            }
        );
        assert_eq!(resolved.polling_interval, Duration::from_millis(3000));
        assert_eq!(resolved.urls.account, "http://127.0.0.1:1/ua");
        assert!(resolved.auto_sweep);
        assert_eq!(resolved.min_value_usd, 0.5);
    }

    #[test]
    fn owner_is_required_and_must_be_evm() {
        let mut c = config();
        c.owner_address = String::new();
        assert_eq!(message(&c), "ownerAddress is required");
        c.owner_address = SOL.into();
        let m = message(&c);
        assert!(m.starts_with("ownerAddress must be a valid EVM address: \"EPjF"), "{m}");
        c.owner_address = "0x1234".into();
        assert!(message(&c).contains("\"0x1234\""));
    }

    #[test]
    fn destination_rules() {
        let owner = OWNER.to_ascii_lowercase();
        let m = resolve_destination(&DestinationConfig::chain(7), &owner).unwrap_err();
        assert_eq!(
            m.message(),
            "Invalid destination chain ID: 7. Use a chain from the CHAIN constant."
        );
        let m = resolve_destination(&DestinationConfig::chain(196), &owner).unwrap_err();
        assert!(m.message().contains("X Layer is a deposit source only"), "{m}");
        let m = resolve_destination(&DestinationConfig::chain(10), &owner).unwrap_err();
        assert!(m.message().contains("OP (Optimism) cannot be a destination"), "{m}");
        let m = resolve_destination(&DestinationConfig::chain(101), &owner).unwrap_err();
        assert!(
            m.message().starts_with("Invalid Solana address format for destination on Solana"),
            "{m}"
        );
        assert!(m.message().contains("needs destination.address"), "{m}");
        let m = resolve_destination(&DestinationConfig::chain(1).with_address(SOL), &owner)
            .unwrap_err();
        assert!(
            m.message().starts_with("Invalid EVM address format for destination on Ethereum"),
            "{m}"
        );
        let m =
            resolve_destination(&DestinationConfig::chain(8453).with_token(TokenType::SOL), &owner)
                .unwrap_err();
        assert_eq!(
            m.message(),
            "destination.token SOL cannot be delivered on Base (8453); deliverable there: ETH, USDC"
        );
        let d =
            resolve_destination(&DestinationConfig::chain(101).with_address(SOL), &owner).unwrap();
        assert_eq!(d.address, SOL, "Solana keeps its case");
        let d = resolve_destination(
            &DestinationConfig::chain(56).with_address(OWNER).with_token(TokenType::ETH),
            &owner,
        )
        .unwrap();
        assert_eq!(d.address, owner);
    }

    #[test]
    fn from_json_reads_the_spec_names() {
        let c = DepositClientConfig::from_json(&format!(
            r#"{{"ownerAddress": "{OWNER}", "destination": {{"chainId": 101, "address": "{SOL}", "token": "usdt"}},
               "minValueUSD": 1.5, "supportedTokens": ["usdc", "Eth"], "notifications": true,
               "refund": {{"enabled": true}}, "onramp": {{"mode": "redirect"}},
               "servicesUrl": "http://127.0.0.1:1", "pollingIntervalMs": 100, "minPollingIntervalMs": 50}}"#
        ))
        .unwrap();
        let resolved = c.resolve().unwrap();
        assert_eq!(resolved.destination.token, TokenType::USDT);
        assert_eq!(resolved.destination.address, SOL);
        assert_eq!(resolved.supported_tokens, [TokenType::ETH, TokenType::USDC]);
        assert_eq!(c.min_value_usd, 1.5);
        assert_eq!(c.notifications, Some(NotificationsConfig::default()));
        assert!(c.refund.enabled && c.refund.max_attempts == 2);
        assert_eq!(c.onramp.mode, OnrampMode::Redirect);
        assert_eq!(resolved.polling_interval, Duration::from_millis(100));
        let err = DepositClientConfig::from_json(
            r#"{"ownerAddress": "x", "destination": {"chainId": 1}, "bogus": 1}"#,
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Configuration);
        assert!(err.message().contains("bogus"), "{err}");
        let err = DepositClientConfig::from_json(
            r#"{"ownerAddress": "x", "destination": {"chainId": 1, "token": "DOGE"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "destination.token must be one of ETH, USDC, USDT, BTC, SOL, BNB, got \"DOGE\""
        );
    }

    #[test]
    fn funding_defaults_and_json() {
        let c = DepositClientConfig::from_json(&format!(
            r#"{{"ownerAddress": "{OWNER}", "destination": {{"chainId": 8453}},
               "funding": {{"enabled": true, "balanceProvider": "rpc",
                           "balanceApiUrl": "http://127.0.0.1:9/balances",
                           "evmRpcUrls": {{"8453": "http://127.0.0.1:8545"}}}},
               "onramp": {{"enabled": true, "apiKey": "pk_secret"}}}}"#
        ))
        .unwrap();
        let f = &c.funding;
        assert_eq!(f.balance_provider.as_deref(), Some("rpc"));
        assert_eq!(f.balance_api_url(), "http://127.0.0.1:9/balances");
        assert_eq!(f.evm_rpc_url(8453), Some("http://127.0.0.1:8545"));
        assert_eq!(f.evm_rpc_url(1), Some("https://ethereum-rpc.publicnode.com"));
        assert_eq!(f.evm_rpc_url(10), None);
        assert_eq!(f.solana_rpc_url(), DEFAULT_SOLANA_RPC_URL);
        assert_eq!(FundingConfig::default().balance_api_url(), DEFAULT_BALANCE_API_URL);
        let debug = format!("{c:?} {:?}", c.onramp);
        assert!(!debug.contains("pk_secret"), "{debug}");
    }

    #[test]
    fn reconcile_and_watchdog_knobs() {
        let resolved = config().resolve().unwrap();
        assert_eq!(resolved.reconcile_interval, Duration::from_millis(10_000));
        assert_eq!(resolved.processing_timeout, Duration::from_millis(300_000));
        assert_eq!(resolved.refund, RefundConfig::default());
        let json = format!(
            r#"{{"ownerAddress": "{OWNER}", "destination": {{"chainId": 8453}},
                "reconcileIntervalMs": 50, "processingTimeoutMs": 700,
                "refund": {{"enabled": true, "delayMs": 10, "maxAttempts": 4, "refundToSender": false}}}}"#
        );
        let c = DepositClientConfig::from_json(&json).unwrap();
        assert_eq!((c.reconcile_interval_ms, c.processing_timeout_ms), (50, 700));
        assert_eq!(
            c.refund,
            RefundConfig { enabled: true, delay_ms: 10, max_attempts: 4, refund_to_sender: false }
        );
        let mut c = config();
        c.reconcile_interval_ms = 0;
        assert!(message(&c).starts_with("reconcileIntervalMs must be more than 0"));
        let mut c = config();
        c.processing_timeout_ms = 0;
        assert!(message(&c).starts_with("processingTimeoutMs must be more than 0"));
    }

    #[test]
    fn polling_minimum_and_test_knob() {
        let mut c = config();
        c.polling_interval_ms = 500;
        assert_eq!(
            message(&c),
            "pollingIntervalMs must be at least 2000 ms (and at most a day), got 500"
        );
        c.min_polling_interval_ms = 10;
        c.validate().unwrap();
        c.min_polling_interval_ms = 5000;
        assert!(message(&c).starts_with("minPollingIntervalMs must be between 1 and 2000"));
    }

    #[test]
    fn other_options() {
        let mut c = config();
        c.min_value_usd = -1.0;
        assert!(message(&c).starts_with("minValueUSD must be a finite number"));
        let mut c = config();
        c.intermediary_address = Some("nope".into());
        assert!(
            message(&c).starts_with("intermediaryAddress must be a valid EVM address: \"nope\"")
        );
        let mut c = config();
        c.services_url = None;
        assert!(message(&c).starts_with("jwtServiceUrl is required"));
        let mut c = config();
        c.services_url = Some("ftp://x".into());
        assert!(message(&c).starts_with("servicesUrl must be an http:// or https:// URL"));
        let mut c = config();
        c.services_url = Some("http://user:secret@host".into());
        let m = message(&c);
        assert!(!m.contains("secret"), "{m}");
        let mut c = config();
        c.supported_chains = vec![1, 7];
        assert!(message(&c).contains("unknown chain ID: 7"));
        let mut c = config();
        c.supported_tokens.clear();
        assert!(message(&c).starts_with("supportedTokens is empty"));
        let mut c = config();
        c.refund.max_attempts = 0;
        assert!(message(&c).starts_with("refund.maxAttempts must be between 1 and 100, got 0"));
        let mut c = config();
        c.notifications = Some(NotificationsConfig { max: 0, ..Default::default() });
        assert!(message(&c).starts_with("notifications.max must be at least 1"));
        let mut c = config();
        c.onramp.fiat_currency = "usd".into();
        assert!(message(&c).contains("\"usd\""));
        let mut c = config();
        c.onramp.default_fiat_amount = Some(0.0);
        assert!(message(&c).starts_with("onramp.defaultFiatAmount must be a positive number"));
        let mut c = config();
        c.funding.evm_rpc_urls.insert(101, "http://x".into());
        assert!(message(&c).contains("not an EVM chain"));
        let mut c = config();
        c.funding.api_key = Some(String::new());
        assert!(message(&c).starts_with("funding.apiKey"));
        let mut c = config();
        c.funding.balance_provider = Some("moralis".into());
        assert_eq!(
            message(&c),
            "funding.balanceProvider must be \"rpc\" (a host callable is set with set_balance_provider), got \"moralis\""
        );
        c.funding.balance_provider = Some("rpc".into());
        c.validate().unwrap();
        c.funding.balance_api_url = Some("ftp://x".into());
        assert!(
            message(&c).starts_with("funding.balanceApiUrl must be an http:// or https:// URL")
        );
        let mut c = config();
        c.ua_project_id = Some(" ".into());
        assert_eq!(message(&c), "uaProjectId is empty");
        assert!(
            "middle"
                .parse::<NotificationPosition>()
                .unwrap_err()
                .message()
                .starts_with("notifications.position must be one of top-right, top-left")
        );
        assert_eq!("light".parse::<NotificationTheme>().unwrap(), NotificationTheme::Light);
        assert_eq!("redirect".parse::<OnrampMode>().unwrap(), OnrampMode::Redirect);
    }
}
