//! The nested settings objects of the deposit client's options — `refund`, `notifications`,
//! `funding`, `onramp` — with their defaults and their own checks. Each is read from JSON by
//! serde (spec names, unknown keys refused) and `Debug` never shows a key.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::chains::{AddressType, Chain};
use crate::describe::quote;
use crate::error::{Error, Result};

use super::checks::{check_delay, check_text, check_url, check_usd};

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

pub(super) fn check_refund(refund: &RefundConfig) -> Result<()> {
    check_delay("refund.delayMs", refund.delay_ms)?;
    if refund.max_attempts == 0 || refund.max_attempts > 100 {
        return Err(Error::configuration(format!(
            "refund.maxAttempts must be between 1 and 100, got {}",
            refund.max_attempts
        )));
    }
    Ok(())
}

pub(super) fn check_notifications(n: &NotificationsConfig) -> Result<()> {
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

pub(super) fn check_funding(f: &FundingConfig) -> Result<()> {
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

pub(super) fn check_onramp(o: &OnrampConfig) -> Result<()> {
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
