//! The deposit services of `docs/protocol.md`: the JWT service (`/jwt`), the auth-core signer
//! (`/signer`) and the universal-account service (`/ua`), plus the devnet administration that
//! drives them (`/devnet/deposits`, `/devnet/ledger`, `/devnet/prices`, sweep and JWT faults).
//!
//! One module per concept: [`jwt`] and [`keyring`] (sessions), [`signer`] (intermediary
//! wallets), [`account`] (accounts and deposit addresses), [`balances`], [`sweeps`] (quotes
//! and sends, sweeps and refunds) with [`fees`] (their arithmetic), [`prices`], [`history`]
//! (transactions), [`receipts`] (incoming transfers by `received` range), [`explorer`] (links),
//! [`faults`], and the HTTP faces [`routes`] and [`admin`].

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
pub mod prices;
pub mod receipts;
pub mod routes;
pub mod signer;
pub mod sweeps;

use std::time::Duration;

use axum::http::HeaderMap;

use crate::error::Result;
use crate::store::Store;
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
}

impl Services {
    /// Services over `store`: JWTs live `jwt_ttl`, quotes `quote_ttl`.
    ///
    /// # Errors
    /// The stored JWT keys cannot be read, or key generation cannot start.
    pub fn new(store: Store, jwt_ttl: Duration, quote_ttl: Duration) -> Result<Self> {
        let keys = KeyRing::open(store.clone())?;
        Ok(Services {
            jwt: JwtService::new(keys, jwt_ttl),
            store,
            prices: Prices::default(),
            faults: ServiceFaults::default(),
            sweep_faults: SweepFaults::default(),
            quote_ttl,
        })
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
        signer::wallet(&self.store, &session.sub).map_err(ApiError::internal)
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
