//! The JWT service (`docs/protocol.md` §1): the intermediary wallet's session.
//!
//! [`JwtClient`] asks `POST {jwt}/v1/jwt` for a token with the library's built-in credentials
//! and verifies it against the service's JWKS: RS256 only, the key whose `kid` matches (on a
//! miss the JWKS is fetched again once — that is how key rotation is picked up), `iss`
//! `"depositkit-jwt"`, `aud` the built-in project id, `sub` `"ua:" + owner`, `exp` required and
//! in the future with 60 s leeway. The JWKS is cached for an hour per JWKS URL, for the whole
//! process (every client of one service shares it). [`SessionManager`] keeps one verified session per owner and
//! renews it when less than 60 s remain, with concurrent callers sharing one request.
//!
//! Errors: unreachable, 429 or 5xx after the retries, a malformed answer or a token that fails
//! verification → [`ErrorKind::Jwt`]; HTTP 401 → [`ErrorKind::Authentication`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::json;

use super::{CallError, Http, HttpSettings, decode};
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::http::Reply;
use crate::registry::WeakRegistry;

/// The library's built-in project id, sent to the JWT service (spec §5.1: never overridable).
pub const BUILTIN_PROJECT_ID: &str = "depositkit-builtin-project";
/// The library's built-in client key, sent to the JWT service.
pub const BUILTIN_CLIENT_KEY: &str = "ck_depositkit_builtin";
/// The library's built-in app id, sent to the JWT service.
pub const BUILTIN_APP_ID: &str = "depositkit-builtin-app";
/// The `iss` claim of the JWT service's tokens.
pub const JWT_ISSUER: &str = "depositkit-jwt";

/// Clock-skew allowance when checking `exp`, in seconds.
pub const JWT_LEEWAY_SECS: u64 = 60;

/// A session is renewed when less than this many seconds of it remain.
pub const SESSION_REFRESH_MARGIN_SECS: u64 = 60;

/// How long a fetched JWKS is trusted before it is fetched again.
pub const JWKS_CACHE_TTL: Duration = Duration::from_secs(3600);

/// A verified session of the intermediary wallet.
#[derive(Clone, PartialEq, Eq)]
pub struct Session {
    /// The compact JWS. Never printed by `Debug`. Shared: every poll of a client takes the
    /// session, and copying ~800 bytes each time showed in profiles of 100,000 clients.
    pub jwt: Arc<str>,
    /// When it expires, unix seconds (the earlier of the answer's `expiresAt` and the `exp`
    /// claim).
    pub expires_at: u64,
    /// The `sub` claim: `"ua:" + owner`.
    pub subject: String,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("jwt", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field("subject", &self.subject)
            .finish()
    }
}

impl Session {
    /// Whether at least `margin` seconds of the session remain at `now` (unix seconds).
    pub fn is_fresh(&self, now: u64, margin: u64) -> bool {
        self.expires_at > now.saturating_add(margin)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JwtAnswer {
    jwt: Option<String>,
    expires_at: Option<u64>,
}

#[derive(Deserialize)]
struct Claims {
    sub: String,
    exp: u64,
}

struct CachedJwks {
    set: JwkSet,
    fetched: Instant,
    generation: u64,
}

/// The JWKS of one JWT service, shared by every client of the process that uses that service
/// ([`JwksCache::for_url`]): 10,000 clients fetch it once, not 10,000 times.
struct JwksCache {
    cached: tokio::sync::Mutex<Option<CachedJwks>>,
    /// Bumped at every fetch, so a caller that waited while another fetched can tell.
    generation: AtomicU64,
}

/// The process's JWKS caches by JWKS URL, weakly held and per process ([`WeakRegistry`]): a
/// cache goes with the last client using it, and in a forked child the parent's caches (whose
/// locks may be held by tasks that do not exist there) are not used.
static JWKS_CACHES: WeakRegistry<String, JwksCache> = WeakRegistry::new();

impl JwksCache {
    fn for_url(url: &str) -> Arc<JwksCache> {
        JWKS_CACHES.get_or_insert(url.to_owned(), || JwksCache {
            cached: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
        })
    }
}

/// Client of the JWT service.
pub struct JwtClient {
    base_url: String,
    http: Http,
    jwks: Arc<JwksCache>,
}

impl std::fmt::Debug for JwtClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtClient").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

impl JwtClient {
    /// A client of the JWT service at `base_url`.
    pub fn new(base_url: &str, settings: &HttpSettings) -> JwtClient {
        // Exactly one crypto backend must serve jsonwebtoken; choose it explicitly so that a
        // feature enabled elsewhere in a build cannot make verification panic (RustCrypto,
        // with RS256 by ring: `rs256`).
        super::rs256::install();
        let base_url = base_url.trim_end_matches('/').to_owned();
        JwtClient {
            jwks: JwksCache::for_url(&jwks_url(&base_url)),
            base_url,
            http: Http::new(settings),
        }
    }

    /// The service's base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Asks for a session for `owner` (lower-cased here) and verifies it.
    ///
    /// # Errors
    /// [`ErrorKind::Authentication`] on HTTP 401; [`ErrorKind::Jwt`] for everything else.
    pub async fn fetch_session(&self, owner: &str) -> Result<Session> {
        let user_id = owner.to_ascii_lowercase();
        let url = format!("{}/v1/jwt", self.base_url);
        let body = json!({
            "projectId": BUILTIN_PROJECT_ID,
            "clientKey": BUILTIN_CLIENT_KEY,
            "appId": BUILTIN_APP_ID,
            "userId": user_id,
        })
        .to_string();
        let headers = vec![
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json".to_owned()),
        ];
        let reply = self.http.post(url.clone(), headers, body).await.map_err(|e| {
            Error::new(ErrorKind::Jwt, format!("Failed to connect to JWT service: {}", e.message()))
                .with_source(e)
        })?;
        let (jwt, answer_expires_at) = parse_jwt_answer(reply.status, reply.body)?;
        let claims = self.verify(&jwt, &user_id).await?;
        let expires_at = answer_expires_at.map_or(claims.exp, |at| at.min(claims.exp));
        Ok(Session { jwt: jwt.into(), expires_at, subject: claims.sub })
    }

    /// Verifies `jwt` for the user `user_id` (lower-case owner address).
    async fn verify(&self, jwt: &str, user_id: &str) -> Result<Claims> {
        let kid = token_kid(jwt)?;
        let jwk = self.key(&kid).await?;
        verify_with_key(jwt, &kid, &jwk, user_id)
    }

    /// The JWKS key `kid`: from the cache while it is fresh, else fetched; on a miss the JWKS
    /// is fetched again once, unless another caller fetched it while this one waited.
    async fn key(&self, kid: &str) -> Result<Jwk> {
        let seen_generation = self.jwks.generation.load(Ordering::Acquire);
        let mut cache = self.jwks.cached.lock().await;
        if let Some(cached) = cache.as_ref() {
            let fresh = cached.fetched.elapsed() < JWKS_CACHE_TTL;
            let refetched_meanwhile = cached.generation != seen_generation;
            if fresh || refetched_meanwhile {
                if let Some(jwk) = cached.set.find(kid) {
                    return Ok(jwk.clone());
                }
                if refetched_meanwhile {
                    return Err(unknown_kid(kid));
                }
            }
        }
        let set = self.fetch_jwks().await?;
        let generation = self.jwks.generation.fetch_add(1, Ordering::AcqRel) + 1;
        let found = set.find(kid).cloned();
        *cache = Some(CachedJwks { set, fetched: Instant::now(), generation });
        found.ok_or_else(|| unknown_kid(kid))
    }

    async fn fetch_jwks(&self) -> Result<JwkSet> {
        let url = jwks_url(&self.base_url);
        let headers = vec![("Accept", "application/json".to_owned())];
        let reply = self.http.get(url.clone(), headers).await.map_err(|e| {
            Error::new(ErrorKind::Jwt, format!("Failed to fetch JWKS from {url}: {}", e.message()))
                .with_source(e)
        })?;
        parse_jwks(&url, reply.status, reply.body)
    }
}

fn jwks_url(base_url: &str) -> String {
    format!("{base_url}/.well-known/jwks.json")
}

// The parsing and checking of the service's answers, apart from the HTTP so that it is pure: the
// entry points of the fuzz targets (`fuzz/`), not part of the API.

/// The answer of `POST {jwt}/v1/jwt` (HTTP `status`, `body`): the token, not yet verified, and
/// the answer's `expiresAt`.
#[doc(hidden)]
pub fn parse_jwt_answer(status: u16, body: String) -> Result<(String, Option<u64>)> {
    let answer: JwtAnswer = match decode("JWT service", Reply { status, body }) {
        Ok(answer) => answer,
        Err(CallError::Service(e)) if e.status == 401 => {
            return Err(Error::new(
                ErrorKind::Authentication,
                format!("Invalid project credentials: {} ({})", e.message, e.code),
            ));
        }
        Err(CallError::Service(e)) => {
            return Err(Error::new(
                ErrorKind::Jwt,
                format!("JWT request failed (HTTP {}, {}): {}", e.status, e.code, e.message),
            ));
        }
        Err(CallError::Transport(e) | CallError::Session(e)) => {
            return Err(Error::new(
                ErrorKind::Jwt,
                format!("JWT service did not return a valid token: {}", e.message()),
            ));
        }
    };
    let Some(jwt) = answer.jwt.filter(|j| !j.is_empty()) else {
        return Err(Error::new(ErrorKind::Jwt, "JWT service did not return a valid token"));
    };
    Ok((jwt, answer.expires_at))
}

/// The answer of the JWKS endpoint at `url`: a non-empty key set.
#[doc(hidden)]
pub fn parse_jwks(url: &str, status: u16, body: String) -> Result<JwkSet> {
    let set: JwkSet = decode("JWKS endpoint", Reply { status, body })
        .map_err(|e| Error::new(ErrorKind::Jwt, format!("Failed to fetch JWKS from {url}: {e}")))?;
    if set.keys.is_empty() {
        return Err(Error::new(ErrorKind::Jwt, "JWKS endpoint returned an empty key set"));
    }
    Ok(set)
}

/// Verifies `jwt` for the user `user_id` against the keys of `set` (never fetched again):
/// the `sub` and `exp` claims of a token that passes.
#[doc(hidden)]
pub fn verify_with_jwks(jwt: &str, user_id: &str, set: &JwkSet) -> Result<(String, u64)> {
    super::rs256::install();
    let kid = token_kid(jwt)?;
    let jwk = set.find(&kid).ok_or_else(|| unknown_kid(&kid))?;
    let claims = verify_with_key(jwt, &kid, jwk, user_id)?;
    Ok((claims.sub, claims.exp))
}

/// The algorithm's name as the JOSE header writes it ("HS256"), not its Rust `Debug` form.
fn algorithm_name(algorithm: Algorithm) -> String {
    serde_json::to_value(algorithm)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| "(unnamed)".to_owned())
}

fn verification_failed(why: String) -> Error {
    Error::new(ErrorKind::Jwt, format!("JWT verification failed: {why}"))
}

/// The `kid` of an RS256 token's header.
fn token_kid(jwt: &str) -> Result<String> {
    let header = jsonwebtoken::decode_header(jwt)
        .map_err(|e| verification_failed(format!("malformed token: {}", describe(&e))))?;
    if header.alg != Algorithm::RS256 {
        return Err(verification_failed(format!(
            "algorithm {} is not allowed, only RS256",
            algorithm_name(header.alg)
        )));
    }
    header.kid.ok_or_else(|| verification_failed("the token header has no kid".into()))
}

/// Verifies `jwt` for the user `user_id` with `jwk`, the JWKS key `kid`.
fn verify_with_key(jwt: &str, kid: &str, jwk: &Jwk, user_id: &str) -> Result<Claims> {
    let fail = verification_failed;
    if jwk.common.key_algorithm.is_some_and(|alg| alg != jsonwebtoken::jwk::KeyAlgorithm::RS256) {
        return Err(fail(format!("JWKS key {} is not an RS256 key", quote(kid))));
    }
    let key = DecodingKey::from_jwk(jwk)
        .map_err(|e| fail(format!("JWKS key {} is unusable: {}", quote(kid), describe(&e))))?;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.leeway = JWT_LEEWAY_SECS;
    validation.set_issuer(&[JWT_ISSUER]);
    validation.set_audience(&[BUILTIN_PROJECT_ID]);
    validation.sub = Some(format!("ua:{user_id}"));
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let data =
        jsonwebtoken::decode::<Claims>(jwt, &key, &validation).map_err(|e| fail(describe(&e)))?;
    Ok(data.claims)
}

fn unknown_kid(kid: &str) -> Error {
    Error::new(
        ErrorKind::Jwt,
        format!(
            "JWT verification failed: no key with kid {} in the JWKS (fetched again to pick up a rotation)",
            quote(kid)
        ),
    )
}

fn describe(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match error.kind() {
        K::InvalidSignature => "bad signature".into(),
        K::ExpiredSignature => "the token has expired".into(),
        K::InvalidIssuer => format!("issuer is not {}", quote(JWT_ISSUER)),
        K::InvalidAudience => format!("audience is not {}", quote(BUILTIN_PROJECT_ID)),
        K::InvalidSubject => "subject is not \"ua:\" + the owner address".into(),
        K::MissingRequiredClaim(claim) => format!("required claim {} is missing", quote(claim)),
        K::InvalidAlgorithm => "algorithm is not RS256".into(),
        K::InvalidToken => "not a compact JWS".into(),
        _ => error.to_string(),
    }
}

/// The verified session of one owner, renewed when less than 60 s remain; callers that need
/// it at the same time share one request.
pub struct SessionManager {
    client: Arc<JwtClient>,
    owner: String,
    current: tokio::sync::Mutex<Option<Session>>,
    /// Called with every session fetched from the service ([`on_fetched`](Self::on_fetched)).
    fetched: std::sync::OnceLock<FetchedHook>,
}

/// What a [`SessionManager`] calls with each session it fetched.
type FetchedHook = Box<dyn Fn(&Session) + Send + Sync>;

impl std::fmt::Debug for SessionManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionManager").field("owner", &self.owner).finish_non_exhaustive()
    }
}

impl SessionManager {
    /// Sessions for `owner` from `client`.
    pub fn new(client: Arc<JwtClient>, owner: &str) -> SessionManager {
        SessionManager {
            client,
            owner: owner.to_ascii_lowercase(),
            current: tokio::sync::Mutex::new(None),
            fetched: std::sync::OnceLock::new(),
        }
    }

    /// Calls `hook` with every session fetched from the service from now on (renewals
    /// included; not with one [adopted](Self::adopt)): how a client keeps the session it hands
    /// to the owner's next client current. Set once; later calls are ignored.
    pub fn on_fetched(&self, hook: impl Fn(&Session) + Send + Sync + 'static) {
        let _ = self.fetched.set(Box::new(hook));
    }

    /// Takes `jwt`, a session of this owner that an earlier client held (handed over through
    /// a store), when it verifies against the service's keys — the process's cached JWKS: no
    /// request to the JWT service while that is fresh — and more than `margin` seconds of it
    /// remain. `expires_at` (unix seconds) is what the earlier client was told; the earlier of
    /// it and the `exp` claim counts. A session already held is kept.
    ///
    /// # Errors
    /// [`ErrorKind::Jwt`] when the token fails verification or too little of it remains:
    /// nothing is taken, and the next [`get`](Self::get) fetches a session.
    pub async fn adopt(&self, jwt: &str, expires_at: u64, margin: u64) -> Result<()> {
        let mut current = self.current.lock().await;
        if current.as_ref().is_some_and(|s| s.is_fresh(now_secs(), margin)) {
            return Ok(());
        }
        let claims = self.client.verify(jwt, &self.owner).await?;
        let session = Session {
            jwt: jwt.into(),
            expires_at: expires_at.min(claims.exp),
            subject: claims.sub,
        };
        if !session.is_fresh(now_secs(), margin) {
            return Err(Error::new(
                ErrorKind::Jwt,
                format!("the handed-over session has less than {margin} s left"),
            ));
        }
        *current = Some(session);
        Ok(())
    }

    /// A session from the service, told to the [`on_fetched`](Self::on_fetched) hook.
    async fn fetch(&self) -> Result<Session> {
        let session = self.client.fetch_session(&self.owner).await?;
        if let Some(hook) = self.fetched.get() {
            hook(&session);
        }
        Ok(session)
    }

    /// A session with at least 60 s left, fetched when needed.
    pub async fn get(&self) -> Result<Session> {
        let mut current = self.current.lock().await;
        if let Some(session) = current.as_ref()
            && session.is_fresh(now_secs(), SESSION_REFRESH_MARGIN_SECS)
        {
            return Ok(session.clone());
        }
        let session = self.fetch().await?;
        *current = Some(session.clone());
        Ok(session)
    }

    /// A new session because a service refused `stale`; when another caller already replaced
    /// it, that session is returned instead of fetching again.
    pub async fn refresh(&self, stale: &str) -> Result<Session> {
        let mut current = self.current.lock().await;
        if let Some(session) = current.as_ref()
            && *session.jwt != *stale
            && session.is_fresh(now_secs(), SESSION_REFRESH_MARGIN_SECS)
        {
            return Ok(session.clone());
        }
        *current = None;
        let session = self.fetch().await?;
        *current = Some(session.clone());
        Ok(session)
    }

    /// Whether a session is held and has not expired (false while one is being fetched).
    pub fn is_valid_now(&self) -> bool {
        self.current
            .try_lock()
            .is_ok_and(|current| current.as_ref().is_some_and(|s| s.is_fresh(now_secs(), 0)))
    }

    /// Forgets the session.
    pub async fn clear(&self) {
        *self.current.lock().await = None;
    }

    /// The owner address (lower-case).
    pub fn owner(&self) -> &str {
        &self.owner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freshness_keeps_a_margin() {
        let s = Session { jwt: "x".into(), expires_at: 1000, subject: "ua:0x".into() };
        assert!(s.is_fresh(900, 60));
        assert!(!s.is_fresh(940, 60));
        assert!(!s.is_fresh(2000, 60));
        assert!(!format!("{s:?}").contains("\"x\""));
    }
}
