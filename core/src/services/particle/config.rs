//! Where the service is and who calls it: the endpoint, the project's credentials, the
//! account's name and version, and how HTTP is done — from configuration first, then the
//! environment (`docs/particle.md` §2).

use std::fmt;
use std::time::Duration;

use zeroize::Zeroizing;

use crate::describe::quote;
use crate::error::{Error, Result};
use crate::http::RetryPolicy;

/// The SDK's default URL (`https://universal-rpc-proxy.particle.network`).
pub const PRODUCTION_URL: &str = "https://universal-rpc-proxy.particle.network";
/// The SDK's exported staging URL (`UNIVERSALX_RPC_URL_STAGING`).
pub const STAGING_URL: &str = "https://universal-rpc-staging.particle.network";

/// The endpoint URL; beats every other setting.
pub const RPC_URL_ENV: &str = "DEPOSITKIT_PARTICLE_RPC_URL";
/// The SDK's own URL variable, read after [`RPC_URL_ENV`].
pub const SDK_RPC_URL_ENV: &str = "UNIVERSALX_RPC_URL";
/// `production` (the default) or `staging`, when no URL is set.
pub const ENVIRONMENT_ENV: &str = "DEPOSITKIT_PARTICLE_ENV";
/// The project id.
pub const PROJECT_ID_ENV: &str = "DEPOSITKIT_PARTICLE_PROJECT_ID";
/// The project's client key.
pub const CLIENT_KEY_ENV: &str = "DEPOSITKIT_PARTICLE_CLIENT_KEY";

/// The account name the SDK sends by default.
pub const DEFAULT_ACCOUNT_NAME: &str = "UNIVERSAL";
/// The account version the SDK 2.0.3 sends by default (`UNIVERSAL_ACCOUNT_VERSION`).
pub const DEFAULT_ACCOUNT_VERSION: &str = "2.0.1";
/// The SDK's request timeout (`AXIOS_REQUEST_TIMEOUT`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(15_000);
/// Balance requests in flight at once for many accounts (the service has no batch call).
pub const DEFAULT_BALANCE_CONCURRENCY: usize = 8;
/// The slippage the original deposit SDK asks for, in basis points (1%).
pub const DEFAULT_SLIPPAGE_BPS: u32 = 100;

/// Which service to call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParticleEndpoint {
    /// [`PRODUCTION_URL`].
    Production,
    /// [`STAGING_URL`].
    Staging,
    /// A URL of the host's (devnet's `…/particle`, a proxy); used as given, path and query
    /// included, as the SDK's `rpcUrl`.
    Url(String),
}

impl ParticleEndpoint {
    /// The URL to POST to.
    pub fn url(&self) -> &str {
        match self {
            ParticleEndpoint::Production => PRODUCTION_URL,
            ParticleEndpoint::Staging => STAGING_URL,
            ParticleEndpoint::Url(url) => url,
        }
    }
}

/// The project's credentials, sent in every request's body (`projectId`,
/// `projectClientKey`). Zeroized on drop; `Debug` shows neither, and
/// [`Credentials::scrub`] takes them out of any text a service sends back.
#[derive(Clone)]
pub struct Credentials {
    project_id: Zeroizing<String>,
    client_key: Zeroizing<String>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("project_id", &"<redacted>")
            .field("client_key", &"<redacted>")
            .finish()
    }
}

/// What replaces a credential in a message.
const REDACTED: &str = "<redacted>";

impl Credentials {
    /// The credentials of the project `project_id` with its client key.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when either is empty or
    /// blank; the message does not show them.
    pub fn new(project_id: &str, client_key: &str) -> Result<Credentials> {
        for (name, value) in [("projectId", project_id), ("projectClientKey", client_key)] {
            if value.trim().is_empty() {
                return Err(Error::configuration(format!("the Particle {name} is empty")));
            }
        }
        Ok(Credentials {
            project_id: Zeroizing::new(project_id.to_owned()),
            client_key: Zeroizing::new(client_key.to_owned()),
        })
    }

    pub(super) fn project_id(&self) -> &str {
        &self.project_id
    }

    pub(super) fn client_key(&self) -> &str {
        &self.client_key
    }

    /// `text` with every occurrence of either credential replaced by `<redacted>`: a service
    /// that echoes the request in an error cannot put them in our messages.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        // The longer first, in case one contains the other.
        let mut secrets = [self.client_key.as_str(), self.project_id.as_str()];
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for secret in secrets {
            // A shorter one would blank out ordinary text; no real credential is that short.
            if secret.len() >= 4 {
                out = out.replace(secret, REDACTED);
            }
        }
        out
    }
}

/// How to reach Particle's Universal Account service. Every field left `None` is read from the
/// environment when the client is made ([`ParticleConfig::resolve`]).
#[derive(Debug, Clone)]
pub struct ParticleConfig {
    /// The service; `None`: [`RPC_URL_ENV`], then [`SDK_RPC_URL_ENV`], then
    /// [`ENVIRONMENT_ENV`] (`production`/`staging`), then production.
    pub endpoint: Option<ParticleEndpoint>,
    /// The credentials; `None`: [`PROJECT_ID_ENV`] and [`CLIENT_KEY_ENV`].
    pub credentials: Option<Credentials>,
    /// The account object's `name` (default `"UNIVERSAL"`).
    pub account_name: String,
    /// The account object's `version` (default `"2.0.1"`).
    pub account_version: String,
    /// Deadline of one HTTP attempt (default 15 s, the SDK's).
    pub timeout: Duration,
    /// Retries of reads on 429, 5xx and lost connections (never of a send).
    pub retry: RetryPolicy,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// Balance requests in flight at once when many accounts are read (default 8).
    pub balance_concurrency: usize,
    /// The transactions' slippage in basis points (default 100; 0 leaves it to the service).
    pub slippage_bps: u32,
    /// The token types the account may pay with (`usePrimaryTokens`; default the SDK's five).
    pub use_primary_tokens: Vec<String>,
}

impl Default for ParticleConfig {
    fn default() -> Self {
        ParticleConfig {
            endpoint: None,
            credentials: None,
            account_name: DEFAULT_ACCOUNT_NAME.to_owned(),
            account_version: DEFAULT_ACCOUNT_VERSION.to_owned(),
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            user_agent: format!("depositkit/{}", crate::VERSION),
            balance_concurrency: DEFAULT_BALANCE_CONCURRENCY,
            slippage_bps: DEFAULT_SLIPPAGE_BPS,
            use_primary_tokens: super::assets::DEFAULT_PRIMARY_TOKENS
                .iter()
                .map(|t| (*t).to_owned())
                .collect(),
        }
    }
}

/// A configuration with nothing left to read.
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    pub url: String,
    pub credentials: Credentials,
    pub config: ParticleConfig,
}

impl ParticleConfig {
    /// This configuration with its `None` fields read from the process environment.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) naming the setting: no
    /// credentials anywhere, a URL that is not `http(s)://` or carries a user or password, an
    /// unknown environment name, a zero timeout or concurrency.
    pub(super) fn resolve(self) -> Result<Resolved> {
        self.resolve_with(|name| std::env::var(name).ok())
    }

    /// As [`ParticleConfig::resolve`], reading variables through `env`.
    pub(super) fn resolve_with(self, env: impl Fn(&str) -> Option<String>) -> Result<Resolved> {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let endpoint = match &self.endpoint {
            Some(endpoint) => endpoint.clone(),
            None => match set(RPC_URL_ENV).or_else(|| set(SDK_RPC_URL_ENV)) {
                Some(url) => ParticleEndpoint::Url(url.trim().to_owned()),
                None => match set(ENVIRONMENT_ENV).as_deref().map(str::trim) {
                    None => ParticleEndpoint::Production,
                    Some(name) if name.eq_ignore_ascii_case("production") => {
                        ParticleEndpoint::Production
                    }
                    Some(name) if name.eq_ignore_ascii_case("staging") => ParticleEndpoint::Staging,
                    Some(other) => {
                        return Err(Error::configuration(format!(
                            "{ENVIRONMENT_ENV} is {}: expected production or staging",
                            quote(other)
                        )));
                    }
                },
            },
        };
        let url = endpoint.url().to_owned();
        check_url(&url)?;
        let credentials = match &self.credentials {
            Some(credentials) => credentials.clone(),
            None => {
                let id = env(PROJECT_ID_ENV).map(Zeroizing::new);
                let key = env(CLIENT_KEY_ENV).map(Zeroizing::new);
                match (id, key) {
                    (Some(id), Some(key)) => Credentials::new(&id, &key)?,
                    _ => {
                        return Err(Error::configuration(format!(
                            "the Particle project credentials are missing: configure them, or set \
                             {PROJECT_ID_ENV} and {CLIENT_KEY_ENV}"
                        )));
                    }
                }
            }
        };
        if self.timeout.is_zero() {
            return Err(Error::configuration("the Particle request timeout must be above 0"));
        }
        if self.balance_concurrency == 0 {
            return Err(Error::configuration(
                "the Particle balance concurrency must be at least 1",
            ));
        }
        for (name, value) in [("name", &self.account_name), ("version", &self.account_version)] {
            if value.trim().is_empty() {
                return Err(Error::configuration(format!("the Particle account {name} is empty")));
            }
        }
        Ok(Resolved {
            url,
            credentials,
            config: ParticleConfig { endpoint: Some(endpoint), ..self },
        })
    }
}

/// An `http://` or `https://` URL without a user or password (it appears in messages).
fn check_url(url: &str) -> Result<()> {
    let rest =
        url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")).ok_or_else(|| {
            Error::configuration(format!(
                "the Particle RPC URL {} must start with http:// or https://",
                quote(url)
            ))
        })?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err(Error::configuration(format!(
            "the Particle RPC URL {} has no host",
            quote(url)
        )));
    }
    if authority.contains('@') {
        return Err(Error::configuration(
            "the Particle RPC URL must not carry a user or password: the credentials go in the configuration",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |name| map.get(name).cloned()
    }

    const CREDENTIALS: [(&str, &str); 2] =
        [(PROJECT_ID_ENV, "PID-123"), (CLIENT_KEY_ENV, "CKEY-456")];

    #[test]
    fn the_url_comes_from_config_then_our_variable_then_the_sdks_then_the_environment_name() {
        let url = |config: ParticleConfig, vars: &[(&str, &str)]| {
            let mut all = CREDENTIALS.to_vec();
            all.extend_from_slice(vars);
            config.resolve_with(env(&all)).unwrap().url
        };
        let both =
            [(RPC_URL_ENV, "http://127.0.0.1:1/ours"), (SDK_RPC_URL_ENV, "http://127.0.0.1:2/sdk")];
        assert_eq!(url(ParticleConfig::default(), &[]), PRODUCTION_URL);
        assert_eq!(url(ParticleConfig::default(), &both), "http://127.0.0.1:1/ours");
        assert_eq!(url(ParticleConfig::default(), &both[1..]), "http://127.0.0.1:2/sdk");
        assert_eq!(url(ParticleConfig::default(), &[(ENVIRONMENT_ENV, "staging")]), STAGING_URL);
        assert_eq!(
            url(ParticleConfig::default(), &[(ENVIRONMENT_ENV, "Production")]),
            PRODUCTION_URL
        );
        let staging =
            ParticleConfig { endpoint: Some(ParticleEndpoint::Staging), ..Default::default() };
        assert_eq!(url(staging, &both), STAGING_URL);
        let own = ParticleConfig {
            endpoint: Some(ParticleEndpoint::Url("http://127.0.0.1:7420/particle?x=1".into())),
            ..Default::default()
        };
        assert_eq!(url(own, &both), "http://127.0.0.1:7420/particle?x=1");
    }

    #[test]
    fn credentials_from_config_or_environment_and_never_shown() {
        let resolved = ParticleConfig::default().resolve_with(env(&CREDENTIALS)).unwrap();
        assert_eq!(resolved.credentials.project_id(), "PID-123");
        assert_eq!(resolved.credentials.client_key(), "CKEY-456");
        let text = format!("{resolved:?}");
        assert!(!text.contains("PID-123") && !text.contains("CKEY-456"), "{text}");
        let given = ParticleConfig {
            credentials: Some(Credentials::new("mine", "my-key").unwrap()),
            ..Default::default()
        };
        let resolved = given.resolve_with(env(&CREDENTIALS)).unwrap();
        assert_eq!(resolved.credentials.client_key(), "my-key");
        let e = ParticleConfig::default().resolve_with(env(&CREDENTIALS[..1])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration);
        assert!(e.message().contains(CLIENT_KEY_ENV) && !e.message().contains("PID-123"), "{e}");
        assert!(Credentials::new(" ", "k").is_err());
    }

    #[test]
    fn scrub_takes_the_credentials_out_of_text() {
        let credentials = Credentials::new("PID-123", "CKEY-456").unwrap();
        let echoed = r#"bad request {"projectId":"PID-123","projectClientKey":"CKEY-456"}"#;
        assert_eq!(
            credentials.scrub(echoed),
            r#"bad request {"projectId":"<redacted>","projectClientKey":"<redacted>"}"#
        );
    }

    #[test]
    fn bad_settings_are_configuration_errors() {
        let bad = |config: ParticleConfig, vars: &[(&str, &str)]| {
            let mut all = CREDENTIALS.to_vec();
            all.extend_from_slice(vars);
            config.resolve_with(env(&all)).unwrap_err()
        };
        let e = bad(ParticleConfig::default(), &[(ENVIRONMENT_ENV, "dev")]);
        assert!(e.message().contains("\"dev\""), "{e}");
        let e = bad(ParticleConfig::default(), &[(RPC_URL_ENV, "ftp://x")]);
        assert!(e.message().contains("http://"), "{e}");
        let e = bad(ParticleConfig::default(), &[(RPC_URL_ENV, "https://user:CKEY@host/")]);
        assert!(!e.message().contains("CKEY"), "{e}");
        assert!(
            bad(ParticleConfig::default(), &[(RPC_URL_ENV, "https://")])
                .message()
                .contains("no host")
        );
        let zero = ParticleConfig { timeout: Duration::ZERO, ..Default::default() };
        assert_eq!(bad(zero, &[]).kind(), ErrorKind::Configuration);
        let zero = ParticleConfig { balance_concurrency: 0, ..Default::default() };
        assert_eq!(bad(zero, &[]).kind(), ErrorKind::Configuration);
    }
}
