//! From options to the validated configuration the client runs on: each option's own check
//! (declared in the table), then the checks that span several options, then the derived values
//! (durations, service URLs, HTTP settings).

use std::sync::Arc;
use std::time::Duration;

use crate::deposit::finality::FinalityPolicy;
use crate::describe::quote;
use crate::error::{Error, Result};
use crate::http::RetryPolicy;
use crate::services::particle::ParticleConfig;
use crate::services::{HttpSettings, ServiceUrls};
use crate::signer::SignerSource;
use crate::tokens::TokenType;
use crate::validate::evm_address_problem;

use super::backend::BackendChoice;
use super::checks::check_url;
use super::destination::{Destination, resolve_destination};
use super::nested::{FundingConfig, NotificationsConfig, OnrampConfig, RefundConfig};
use super::{DepositClientConfig, MAX_DELAY_MS};

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
    pub backend: ResolvedBackend,
    /// The watched chains' endpoints (`chainRpcUrls`).
    pub chain_rpc_urls: super::ChainRpcUrls,
    /// When a deposit on a watched chain is final (`finality`).
    pub finality: FinalityPolicy,
}

/// The backend the client runs on, with what it needs.
#[derive(Debug, Clone)]
pub(crate) enum ResolvedBackend {
    /// `docs/protocol.md` at [`ResolvedConfig::urls`].
    Devnet,
    /// Particle's service and the owners' signers.
    Particle { client: Box<ParticleConfig>, signers: Arc<dyn SignerSource> },
}
impl DepositClientConfig {
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
        let intermediary =
            self.intermediary_address.as_deref().map(resolve_intermediary).transpose()?;
        let destination = resolve_destination(&self.destination, &owner)?;
        self.check_options()?;
        // Across options: the polling interval against the test knob's minimum.
        if self.polling_interval_ms < self.min_polling_interval_ms
            || self.polling_interval_ms > MAX_DELAY_MS
        {
            return Err(Error::configuration(format!(
                "pollingIntervalMs must be at least {} ms (and at most a day), got {}",
                self.min_polling_interval_ms, self.polling_interval_ms
            )));
        }
        self.backend.check_signer_source(self.signer_source.is_some())?;
        let backend = match self.backend {
            BackendChoice::Devnet => ResolvedBackend::Devnet,
            BackendChoice::Particle => ResolvedBackend::Particle {
                client: Box::new(self.particle.client_config()?),
                signers: match &self.signer_source {
                    Some(source) => Arc::clone(source),
                    None => self.particle.signer_source()?,
                },
            },
        };
        let urls = match (&backend, self.resolve_urls()) {
            (_, Ok(urls)) => urls,
            // Particle's backend uses none of the three services.
            (ResolvedBackend::Particle { .. }, Err(_)) => ServiceUrls::under(""),
            (ResolvedBackend::Devnet, Err(e)) => return Err(e),
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
            store_path: self.store_path.as_ref().map(std::path::PathBuf::from),
            funding: self.funding.clone(),
            onramp: self.onramp.clone(),
            chain_rpc_urls: self.chain_rpc_urls.clone(),
            finality: FinalityPolicy::new(self.finality.clone()),
            backend,
        })
    }

    /// The three service URLs: each its own option, else under `servicesUrl`.
    fn resolve_urls(&self) -> Result<ServiceUrls> {
        let base = self.services_url.as_deref().map(ServiceUrls::under);
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

fn resolve_intermediary(address: &str) -> Result<String> {
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
    Ok(address.to_ascii_lowercase())
}
