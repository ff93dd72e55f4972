//! Which universal-account backend the client talks to (`backend`), and the settings of the
//! `particle` one (`particle`): Particle's endpoint, the project's credentials and the signer
//! (`docs/particle.md` §2, §4, §8).
//!
//! Secrets (the client key, a signer key or seed) are held zeroized, shown as `<redacted>` by
//! `Debug` and by the option's JSON (the default shown in the docs), and never named in a
//! message: an error says which setting is wrong, never its value.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};
use zeroize::Zeroizing;

use super::checks::{check_text, check_url};
use super::option::{OptionArg, OptionError, OptionValue};
use crate::describe::quote;
use crate::error::{Error, Result};
use crate::services::particle::{Credentials, ParticleConfig, ParticleEndpoint};
use crate::signer::{KeySigner, SIGNER_KEY_ENV, SIGNER_SEED_ENV, SeedSigner, SignerSource};

/// The universal-account backend of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// `docs/protocol.md`: devnet's session, signer and account services (the default).
    #[default]
    Devnet,
    /// Particle's Universal Account JSON-RPC with a server-side signer (`docs/particle.md`).
    Particle,
}

impl BackendChoice {
    /// `"devnet"` or `"particle"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            BackendChoice::Devnet => "devnet",
            BackendChoice::Particle => "particle",
        }
    }
}

impl BackendChoice {
    /// Refuses a host signer (`with_signer_source`, the bindings' `signer=`) on a backend that
    /// does not sign with one: on devnet's protocol the signer service signs, and a signer
    /// silently left unused would let the host believe its key owns the account.
    pub(crate) fn check_signer_source(self, given: bool) -> Result<()> {
        match self {
            BackendChoice::Devnet if given => Err(Error::configuration(format!(
                "a host signer (signer source) was given, but backend {} signs with its signer \
                 service and uses none: use backend \"particle\" or give no signer",
                quote(self.as_str())
            ))),
            _ => Ok(()),
        }
    }
}

impl std::str::FromStr for BackendChoice {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text {
            "devnet" => Ok(BackendChoice::Devnet),
            "particle" => Ok(BackendChoice::Particle),
            other => Err(Error::configuration(format!(
                "backend must be \"devnet\" or \"particle\", got {}",
                quote(other)
            ))),
        }
    }
}

impl OptionValue for BackendChoice {
    fn from_json(name: &str, value: serde_json::Value) -> std::result::Result<Self, OptionError> {
        match &value {
            serde_json::Value::String(text) => text.parse().map_err(|_| {
                OptionError::value(format!(
                    "{name} must be \"devnet\" or \"particle\", got {}",
                    quote(text)
                ))
            }),
            other => Err(OptionError::wrong_type(name, "a string", other)),
        }
    }
    fn to_json(&self) -> serde_json::Value {
        serde_json::Value::from(self.as_str())
    }
}

impl OptionArg<BackendChoice> for BackendChoice {
    fn into_option(self) -> BackendChoice {
        self
    }
}

/// Which environment variable holds the signer when neither `signer_key` nor `signer_seed`
/// is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignerKind {
    /// One key for every owner: `DEPOSITKIT_PARTICLE_SIGNER_KEY`.
    Key,
    /// One key per owner, derived from a master seed: `DEPOSITKIT_PARTICLE_SIGNER_SEED`.
    Seed,
}

/// A secret string: zeroized on drop, never shown.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(Zeroizing<String>);

impl Secret {
    /// The secret `text`.
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(Zeroizing::new(text.into()))
    }

    /// The secret itself (for the one place that uses it).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str("<redacted>")
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d).map(Secret::new)
    }
}

/// The `particle` backend's settings (`docs/particle.md` §2), every key optional; what is not
/// given is read from the `DEPOSITKIT_PARTICLE_*` environment variables when the client is
/// made. `Debug` and JSON never show a credential, key or seed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ParticleOptions {
    /// `"production"` (the default) or `"staging"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// A URL of the service of your own (a proxy, devnet's `…/particle`); beats `environment`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpc_url: Option<String>,
    /// The project id (else `DEPOSITKIT_PARTICLE_PROJECT_ID`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Secret>,
    /// The project's client key (else `DEPOSITKIT_PARTICLE_CLIENT_KEY`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_key: Option<Secret>,
    /// One secp256k1 key (64 hex digits) that owns every owner's account.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer_key: Option<Secret>,
    /// A master seed (32 to 128 bytes in hex): one key per owner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer_seed: Option<Secret>,
    /// Which environment variable holds the signer when no key or seed is given: `"key"` or
    /// `"seed"`; unset, whichever of the two is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<SignerKind>,
}

/// The option's own check: well-formed values (the environment is read later).
pub(crate) fn check_particle(options: &ParticleOptions) -> Result<()> {
    if let Some(environment) = &options.environment {
        endpoint_named(environment)?;
    }
    if let Some(url) = &options.rpc_url {
        check_url("particle.rpcUrl", url)?;
    }
    for (name, secret) in [("projectId", &options.project_id), ("clientKey", &options.client_key)] {
        if let Some(secret) = secret
            && check_text(name, secret.expose()).is_err()
        {
            return Err(Error::configuration(format!(
                "particle.{name} is empty or holds control characters"
            )));
        }
    }
    if options.signer_key.is_some() && options.signer_seed.is_some() {
        return Err(Error::configuration(
            "particle gives both signerKey and signerSeed: choose one signer",
        ));
    }
    Ok(())
}

fn endpoint_named(name: &str) -> Result<ParticleEndpoint> {
    match name {
        "production" => Ok(ParticleEndpoint::Production),
        "staging" => Ok(ParticleEndpoint::Staging),
        other => Err(Error::configuration(format!(
            "particle.environment must be \"production\" or \"staging\", got {}",
            quote(other)
        ))),
    }
}

impl ParticleOptions {
    /// The client configuration: endpoint and credentials from these options, the rest from
    /// the environment ([`ParticleConfig`]'s own rules).
    pub(crate) fn client_config(&self) -> Result<ParticleConfig> {
        let endpoint = match (&self.rpc_url, &self.environment) {
            (Some(url), _) => Some(ParticleEndpoint::Url(url.clone())),
            (None, Some(name)) => Some(endpoint_named(name)?),
            (None, None) => None,
        };
        let credentials = match (&self.project_id, &self.client_key) {
            (Some(id), Some(key)) => Some(Credentials::new(id.expose(), key.expose())?),
            (None, None) => None,
            _ => {
                return Err(Error::configuration(
                    "particle needs both projectId and clientKey (or neither: then both come from \
                     DEPOSITKIT_PARTICLE_PROJECT_ID and DEPOSITKIT_PARTICLE_CLIENT_KEY)",
                ));
            }
        };
        Ok(ParticleConfig { endpoint, credentials, ..ParticleConfig::default() })
    }

    /// The signer: `signer_key`, `signer_seed`, else the environment variable `signer` names
    /// (unset: whichever of the two variables is set).
    pub(crate) fn signer_source(&self) -> Result<Arc<dyn SignerSource>> {
        self.signer_source_with(|name| std::env::var(name).ok())
    }

    fn signer_source_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn SignerSource>> {
        let key = |text: &str| -> Result<Arc<dyn SignerSource>> {
            Ok(Arc::new(KeySigner::from_hex(text).map_err(|e| named("signerKey", &e))?))
        };
        let seed = |text: &str| -> Result<Arc<dyn SignerSource>> {
            Ok(Arc::new(SeedSigner::from_hex(text).map_err(|e| named("signerSeed", &e))?))
        };
        if let Some(secret) = &self.signer_key {
            return key(secret.expose());
        }
        if let Some(secret) = &self.signer_seed {
            return seed(secret.expose());
        }
        let read = |name: &str| env(name).filter(|v| !v.trim().is_empty()).map(Zeroizing::new);
        match self.signer {
            Some(SignerKind::Key) => match read(SIGNER_KEY_ENV) {
                Some(text) => key(&text),
                None => Err(missing(&format!("{SIGNER_KEY_ENV} is not set"))),
            },
            Some(SignerKind::Seed) => match read(SIGNER_SEED_ENV) {
                Some(text) => seed(&text),
                None => Err(missing(&format!("{SIGNER_SEED_ENV} is not set"))),
            },
            None => match (read(SIGNER_KEY_ENV), read(SIGNER_SEED_ENV)) {
                (Some(text), None) => key(&text),
                (None, Some(text)) => seed(&text),
                (Some(_), Some(_)) => Err(missing(&format!(
                    "both {SIGNER_KEY_ENV} and {SIGNER_SEED_ENV} are set: choose one with \
                     particle.signer (\"key\" or \"seed\")"
                ))),
                (None, None) => Err(missing(&format!(
                    "give particle.signerKey or particle.signerSeed, set {SIGNER_KEY_ENV} or \
                     {SIGNER_SEED_ENV}, or provide a signer source (with_signer_source)"
                ))),
            },
        }
    }
}

/// The signer error of setting `name`: its message (which never shows the secret) under the
/// setting's name.
fn named(name: &str, e: &Error) -> Error {
    Error::configuration(format!("particle.{name}: {}", e.message()))
}

fn missing(why: &str) -> Error {
    Error::configuration(format!("the particle backend has no signer: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    const KEY: &str = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

    fn options(json: serde_json::Value) -> ParticleOptions {
        ParticleOptions::from_json("particle", json).unwrap()
    }

    #[test]
    fn secrets_are_never_shown() {
        let o = options(serde_json::json!({
            "projectId": "PID-123", "clientKey": "CKEY-456", "signerKey": KEY
        }));
        let shown = format!("{o:?} {}", o.to_json());
        for secret in ["PID-123", "CKEY-456", KEY] {
            assert!(!shown.contains(secret), "{shown}");
        }
        let bad = options(serde_json::json!({"signerKey": "0x12ab"}));
        let e = bad.signer_source_with(|_| None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration);
        assert!(e.message().contains("signerKey") && !e.message().contains("12ab"), "{e}");
    }

    #[test]
    fn the_signer_comes_from_the_options_then_the_environment() {
        let none = ParticleOptions::default();
        let e = none.signer_source_with(|_| None).unwrap_err();
        assert!(e.message().contains("with_signer_source"), "{e}");
        let both = |name: &str| Some(if name == SIGNER_KEY_ENV { KEY } else { "00" }.to_owned());
        assert!(none.signer_source_with(both).unwrap_err().message().contains("both"));
        let key_env = |name: &str| (name == SIGNER_KEY_ENV).then(|| KEY.to_owned());
        let source = none.signer_source_with(key_env).unwrap();
        let signer = source.signer_for("0x52908400098527886e0f7030069857d2e4169ee7").unwrap();
        assert_eq!(
            signer.address().to_checksum(None),
            "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
        );
        let seed = ParticleOptions { signer: Some(SignerKind::Seed), ..Default::default() };
        assert!(seed.signer_source_with(key_env).unwrap_err().message().contains("SEED"));
        let e = options(serde_json::json!({"signerKey": KEY, "signerSeed": KEY}));
        assert!(check_particle(&e).unwrap_err().message().contains("both"));
    }

    #[test]
    fn a_host_signer_is_refused_on_devnet() {
        let e = BackendChoice::Devnet.check_signer_source(true).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Configuration);
        assert!(e.message().contains("backend \"devnet\""), "{e}");
        assert!(BackendChoice::Devnet.check_signer_source(false).is_ok());
        assert!(BackendChoice::Particle.check_signer_source(true).is_ok());
    }

    #[test]
    fn endpoint_and_credentials() {
        let o = options(serde_json::json!({"environment": "staging"}));
        assert_eq!(o.client_config().unwrap().endpoint, Some(ParticleEndpoint::Staging));
        let o = options(serde_json::json!({"environment": "dev"}));
        assert!(check_particle(&o).unwrap_err().message().contains("\"dev\""));
        let o = options(serde_json::json!({"projectId": "PID-123"}));
        let e = o.client_config().unwrap_err();
        assert!(e.message().contains("clientKey") && !e.message().contains("PID-123"), "{e}");
        let e = ParticleOptions::from_json("particle", serde_json::json!({"rpc": 1})).unwrap_err();
        assert!(e.message.contains("rpc"), "{}", e.message);
    }
}
