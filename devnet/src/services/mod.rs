//! The deposit services of `docs/protocol.md`: the JWT service (`/jwt`), the auth-core signer
//! (`/signer`) and the universal-account service (`/ua`), plus the devnet administration that
//! drives them (`/devnet/deposits`, `/devnet/ledger`, `/devnet/prices`, sweep and JWT faults).
//!
//! One module per concept: [`jwt`] and [`keyring`] (sessions), [`signer`] (intermediary
//! wallets), [`account`] (accounts and deposit addresses), [`balances`], [`sweeps`] (quotes
//! and sends, sweeps and refunds) with [`fees`] (their arithmetic), [`prices`], [`history`]
//! (transactions), [`receipts`] (incoming transfers by `received` range), [`explorer`] (links),
//! [`faults`], [`stats`] (request counters), and the HTTP faces [`routes`] and [`admin`]. Beside them, what funding needs
//! (`docs/funding.md`): the balance API and its proxy ([`wallet_balances`]) and the simulated
//! onramp ([`onramp`]). The same state is also served as Particle's Universal Account
//! JSON-RPC ([`particle`], `POST /particle`). With a chains file, the chain-backed chains are
//! read and moved through [`crate::chain`].

pub mod account;
pub mod admin;
pub mod api;
pub mod balances;
pub mod explorer;
pub mod faults;
pub mod fees;
pub mod history;
pub mod jwt;
pub mod keyring;
pub mod onramp;
pub mod particle;
pub mod prices;
pub mod receipts;
pub mod routes;
pub mod signer;
pub mod stats;
pub mod sweeps;
pub mod wallet_balances;

use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;

use crate::chain::Chains;
use crate::chain::ledger_sync::{self, Scope};
use crate::error::Result;
use crate::store::{Store, UaAccount};
use api::{ApiError, ApiResult};
use faults::{ServiceFaults, SweepFaults};
use jwt::{JwtService, Session};
use keyring::KeyRing;
use prices::Prices;
use signer::Wallet;

/// How long a quote can be sent unless configured otherwise.
pub const DEFAULT_QUOTE_TTL: Duration = Duration::from_secs(60);

/// The state the deposit services share within one server.
#[derive(Debug)]
pub struct Services {
    pub(crate) store: Store,
    pub(crate) jwt: JwtService,
    pub(crate) prices: Prices,
    pub(crate) faults: ServiceFaults,
    pub(crate) sweep_faults: SweepFaults,
    pub(crate) quote_ttl: Duration,
    /// The chain-backed chains, when a chains file was given.
    pub(crate) chains: Option<Arc<Chains>>,
    /// The `X-API-Key` the balance API accepts.
    pub(crate) balance_api_key: String,
    /// Request counters (`GET /devnet/stats`).
    pub(crate) stats: stats::ServiceStats,
    /// The requests the Particle JSON-RPC received (`GET /devnet/particle/requests`).
    pub(crate) particle_log: particle::log::RequestLog,
    /// Particle answers to lose after the request ran (a fault for tests).
    pub(crate) particle_lost: particle::LostAnswers,
    /// What the dashboard shows (`crate::dashboard`).
    pub(crate) activity: crate::dashboard::Activity,
    /// The simulated chains of the ledger chains (`crate::simchain`).
    pub(crate) simchains: Arc<crate::simchain::SimChains>,
    /// The signer's wallets read so far.
    pub(crate) wallets: signer::Wallets,
    /// The accounts read or opened so far.
    pub(crate) accounts: account::Accounts,
}

impl Services {
    /// Services over `store`: JWTs live `jwt_ttl`, quotes `quote_ttl`; every chain on the
    /// ledger (see [`Services::with_chains`]), the default balance API key.
    ///
    /// # Errors
    /// The stored JWT keys cannot be read, or key generation cannot start.
    pub fn new(store: Store, jwt_ttl: Duration, quote_ttl: Duration) -> Result<Self> {
        let keys = KeyRing::open(store.clone())?;
        let simchains = crate::simchain::SimChains::new(store.clone(), Default::default());
        Ok(Services {
            jwt: JwtService::new(keys, jwt_ttl),
            store,
            simchains: Arc::new(simchains),
            prices: Prices::default(),
            faults: ServiceFaults::default(),
            sweep_faults: SweepFaults::default(),
            quote_ttl,
            chains: None,
            balance_api_key: crate::config::DEFAULT_BALANCE_API_KEY.to_owned(),
            stats: stats::ServiceStats::default(),
            particle_log: particle::log::RequestLog::default(),
            particle_lost: particle::LostAnswers::default(),
            wallets: signer::Wallets::default(),
            accounts: account::Accounts::default(),
            activity: crate::dashboard::Activity::default(),
        })
    }

    /// The same services backed by `chains`, the balance API accepting `balance_api_key`.
    #[must_use]
    pub fn with_chains(mut self, chains: Option<Arc<Chains>>, balance_api_key: String) -> Self {
        self.chains = chains;
        self.balance_api_key = balance_api_key;
        self
    }

    /// The same services with simulated chains making blocks as `settings` say.
    #[must_use]
    pub fn with_sim_chains(mut self, settings: crate::simchain::SimSettings) -> Self {
        self.simchains = Arc::new(crate::simchain::SimChains::new(self.store.clone(), settings));
        self
    }

    /// The chains, when `chain_id` is chain-backed.
    pub fn chain_backed(&self, chain_id: u64) -> Option<&Chains> {
        self.chains.as_deref().filter(|c| c.is_chain_backed(chain_id))
    }

    /// Reads the chain-backed lines of `account` in `scope` and records what arrived, under the
    /// account's lock (nothing to do in ledger mode). Blocking.
    ///
    /// # Errors
    /// 502 `CHAIN_UNAVAILABLE` naming the chain; 500 on database failures.
    pub fn observe(&self, account: &UaAccount, scope: Scope) -> ApiResult<()> {
        let Some(chains) = self.chains.as_deref() else {
            return Ok(());
        };
        if let Scope::Line(chain_id, _) = scope
            && !chains.is_chain_backed(chain_id)
        {
            return Ok(());
        }
        chains
            .with_account(&account.id, || {
                ledger_sync::observe(chains, &self.store, &self.prices, account, scope)
            })
            .map_err(ApiError::from)
    }

    /// The session of `Authorization: Bearer <jwt>`. Blocking (it may wait for the first key).
    ///
    /// # Errors
    /// 401 `INVALID_SESSION`.
    pub fn session(&self, headers: &HeaderMap) -> ApiResult<Session> {
        self.jwt.verify(&api::bearer(headers)?)
    }

    /// The intermediary wallet of a session, created on first use. Blocking.
    ///
    /// # Errors
    /// 500 on database failures.
    pub fn wallet(&self, session: &Session) -> ApiResult<Wallet> {
        self.wallets.get(&self.store, &session.sub).map_err(ApiError::internal)
    }

    /// The wallet address (lower-case) of a session, created on first use. Blocking.
    ///
    /// # Errors
    /// 500 on database failures.
    pub fn wallet_owner(&self, session: &Session) -> ApiResult<String> {
        self.wallets
            .address(&self.store, &session.sub)
            .map(|address| address.to_ascii_lowercase())
            .map_err(ApiError::internal)
    }

    /// The wallet of the request's session. Blocking.
    ///
    /// # Errors
    /// 401 `INVALID_SESSION`; 500 on database failures.
    pub fn session_wallet(&self, headers: &HeaderMap) -> ApiResult<Wallet> {
        let session = self.session(headers)?;
        self.wallet(&session)
    }
}
