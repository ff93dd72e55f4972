//! The JWT service (`docs/protocol.md` §1): mints RS256 JWTs for the library's built-in
//! credentials, publishes the JWKS, and verifies the JWTs the other services receive. Devnet
//! controls: key rotation, forged JWTs (signed by a key outside the JWKS), and expiring every
//! JWT issued so far, for one user or all.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::api::{ApiError, ApiResult, codes};
use super::keyring::{KeyRing, RsaKey};
use crate::error::Result;

/// The library's built-in project id (spec §5.1: it cannot be overridden).
pub const BUILTIN_PROJECT_ID: &str = "depositkit-builtin-project";
/// The library's built-in client key.
pub const BUILTIN_CLIENT_KEY: &str = "ck_depositkit_builtin";
/// The library's built-in app id.
pub const BUILTIN_APP_ID: &str = "depositkit-builtin-app";
/// `iss` of every JWT.
pub const ISSUER: &str = "depositkit-jwt";
/// `sub` is this prefix and the user id.
pub const SUB_PREFIX: &str = "ua:";
/// Lifetime of a JWT unless configured otherwise.
pub const DEFAULT_JWT_TTL: Duration = Duration::from_secs(600);
/// Longest accepted `userId`.
const MAX_USER_ID_CHARS: usize = 128;

/// The claims of a devnet JWT. `jti` is a number that only grows, which is how "every JWT
/// issued so far" is told apart from later ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub aud: String,
    pub sub: String,
    pub iat: u64,
    pub exp: u64,
    pub jti: String,
}

/// `POST /v1/jwt`'s body.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MintRequest {
    pub project_id: Option<String>,
    pub client_key: Option<String>,
    pub app_id: Option<String>,
    pub user_id: Option<String>,
}

/// A verified session: whose JWT it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// `ua:` + the user id.
    pub sub: String,
}

/// JWTs of one server.
pub struct JwtService {
    keys: Arc<KeyRing>,
    ttl: Duration,
    next_jti: AtomicU64,
    forged_left: Mutex<u32>,
    forge_key: OnceLock<RsaKey>,
    revoked: Mutex<Revoked>,
    verified: Mutex<VerifiedTokens>,
}

impl std::fmt::Debug for JwtService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtService").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

/// What a token whose signature verified says (its claims that later checks need, and its key).
#[derive(Clone)]
struct VerifiedToken {
    sub: String,
    exp: u64,
    jti: u64,
    kid: String,
}

/// Tokens whose signature verified, by token, each until its `exp`. Expired ones are dropped
/// when the map reaches [`VerifiedTokens::PRUNE_AT`] (and the rest, should every one still
/// live): its size follows the sessions in use, not the requests.
#[derive(Default)]
struct VerifiedTokens {
    by_token: HashMap<String, VerifiedToken>,
}

impl VerifiedTokens {
    const PRUNE_AT: usize = 200_000;

    fn get(&self, token: &str, now: u64) -> Option<VerifiedToken> {
        self.by_token.get(token).filter(|v| now < v.exp).cloned()
    }

    fn remember(&mut self, token: &str, verified: &VerifiedToken, now: u64) {
        if self.by_token.len() >= Self::PRUNE_AT {
            self.by_token.retain(|_, v| now < v.exp);
            if self.by_token.len() >= Self::PRUNE_AT {
                self.by_token.clear();
            }
        }
        self.by_token.insert(token.to_owned(), verified.clone());
    }
}

/// JWTs with a `jti` at or below a cut-off are refused.
#[derive(Debug, Default)]
struct Revoked {
    everyone: u64,
    by_sub: HashMap<String, u64>,
}

impl JwtService {
    /// A service signing with `keys`, issuing JWTs that live `ttl`.
    pub fn new(keys: Arc<KeyRing>, ttl: Duration) -> Self {
        // RS256 by ring: signing a session JWT is ~3x faster than RustCrypto's, which was most
        // of devnet's time when thousands of owners start (docs/benchmarks.md, issue 19).
        depositkit_core::services::rs256::install();
        // Start above every jti a previous run on the same database can have issued.
        let start = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap_or(1);
        JwtService {
            keys,
            ttl,
            next_jti: AtomicU64::new(start),
            forged_left: Mutex::new(0),
            forge_key: OnceLock::new(),
            revoked: Mutex::new(Revoked::default()),
            verified: Mutex::new(VerifiedTokens::default()),
        }
    }

    /// Mints a JWT for the request's `userId` when the credentials are the built-in ones.
    ///
    /// # Errors
    /// 400 for a missing or bad `userId`, 401 `INVALID_CREDENTIALS`, 500 without a key.
    pub fn mint(&self, request: &MintRequest) -> ApiResult {
        let credentials = [
            (&request.project_id, BUILTIN_PROJECT_ID),
            (&request.client_key, BUILTIN_CLIENT_KEY),
            (&request.app_id, BUILTIN_APP_ID),
        ];
        if credentials.iter().any(|(given, builtin)| given.as_deref() != Some(*builtin)) {
            return Err(ApiError::new(
                axum::http::StatusCode::UNAUTHORIZED,
                codes::INVALID_CREDENTIALS,
                "unknown projectId, clientKey or appId",
            ));
        }
        let user = user_id(request.user_id.as_deref())?;
        let now = now_seconds();
        let exp = now + self.ttl.as_secs();
        let claims = Claims {
            iss: ISSUER.into(),
            aud: BUILTIN_PROJECT_ID.into(),
            sub: format!("{SUB_PREFIX}{user}"),
            iat: now,
            exp,
            jti: self.next_jti.fetch_add(1, Ordering::Relaxed).to_string(),
        };
        let keys = self.keys.keys().map_err(ApiError::internal)?;
        let forged = self.take_forged();
        let signing = match forged {
            Some(key) => key,
            None => &keys.current,
        };
        let mut header = Header::new(Algorithm::RS256);
        header.typ = Some("JWT".into());
        // A forged JWT names the current key: it fails on its signature, not on an unknown kid.
        header.kid = Some(keys.current.kid.clone());
        let jwt = jsonwebtoken::encode(&header, &claims, &signing.encoding)
            .map_err(|e| ApiError::internal(format!("cannot sign a JWT: {e}")))?;
        Ok(json!({
            "jwt": jwt,
            "expiresAt": exp,
            "expiresIn": self.ttl.as_secs(),
            "sub": claims.sub,
        }))
    }

    /// `{"keys": [current, previous?]}`.
    ///
    /// # Errors
    /// 500 without a key.
    pub fn jwks(&self) -> ApiResult {
        let keys = self.keys.keys().map_err(ApiError::internal)?;
        let listed: Vec<Value> =
            std::iter::once(&keys.current).chain(&keys.previous).map(|k| k.jwk()).collect();
        Ok(json!({ "keys": listed }))
    }

    /// Checks a JWT the way the services do: RS256 signature by the current or previous key,
    /// `iss`, `aud`, `exp` (no leeway), a `ua:` subject, not expired through the devnet.
    ///
    /// A token whose signature verified is remembered until its `exp` ([`VerifiedTokens`]):
    /// the balances of thousands of owners polled in batches every second
    /// (`X-Batch-Sessions`) cost a lookup each, not an RS256 verification. Revocation
    /// ([`expire`](Self::expire)) and the key leaving the JWKS are still checked at every use.
    ///
    /// # Errors
    /// 401 `INVALID_SESSION` saying what failed; 500 without a key.
    pub fn verify(&self, token: &str) -> ApiResult<Session> {
        let now = now_seconds();
        let remembered = self.lock_verified().get(token, now);
        let verified = match remembered {
            Some(verified)
                if self.keys.keys().is_ok_and(|keys| keys.find(&verified.kid).is_some()) =>
            {
                verified
            }
            _ => {
                let verified = self.verify_signature(token)?;
                self.lock_verified().remember(token, &verified, now);
                verified
            }
        };
        let revoked = self.lock_revoked();
        let cutoff = revoked.by_sub.get(&verified.sub).copied().unwrap_or(0).max(revoked.everyone);
        if verified.jti <= cutoff {
            return Err(ApiError::session("the session has expired"));
        }
        Ok(Session { sub: verified.sub })
    }

    /// The checks of [`verify`](Self::verify) but revocation: the signature and the claims.
    fn verify_signature(&self, token: &str) -> ApiResult<VerifiedToken> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| ApiError::session("the JWT is malformed"))?;
        if header.alg != Algorithm::RS256 {
            return Err(ApiError::session("the JWT is not RS256"));
        }
        let keys = self.keys.keys().map_err(ApiError::internal)?;
        let (kid, key) = header
            .kid
            .as_deref()
            .and_then(|kid| Some((kid, keys.find(kid)?)))
            .ok_or_else(|| ApiError::session("the JWT's key id is not in the JWKS"))?;
        let mut validation = Validation::new(Algorithm::RS256);
        validation.leeway = 0;
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[BUILTIN_PROJECT_ID]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data =
            jsonwebtoken::decode::<Claims>(token, &key.decoding, &validation).map_err(|e| {
                ApiError::session(match e.kind() {
                    ErrorKind::ExpiredSignature => "the JWT has expired",
                    ErrorKind::InvalidSignature => "the JWT's signature does not verify",
                    ErrorKind::InvalidIssuer => "the JWT's issuer is wrong",
                    ErrorKind::InvalidAudience => "the JWT's audience is wrong",
                    _ => "the JWT does not verify",
                })
            })?;
        let claims = data.claims;
        if !claims.sub.starts_with(SUB_PREFIX) || claims.sub.len() == SUB_PREFIX.len() {
            return Err(ApiError::session("the JWT's subject is not a user"));
        }
        let jti: u64 = claims.jti.parse().map_err(|_| ApiError::session("the JWT has no jti"))?;
        Ok(VerifiedToken { sub: claims.sub, exp: claims.exp, jti, kid: kid.to_owned() })
    }

    /// A new signing key (the JWKS lists it first, then the previous one). Returns its id.
    ///
    /// # Errors
    /// Generating or storing the key failed.
    pub fn rotate(&self) -> Result<String> {
        self.keys.rotate()
    }

    /// The next `count` JWTs are signed by a key outside the JWKS.
    ///
    /// # Errors
    /// Generating the forging key failed.
    pub fn forge_next(&self, count: u32) -> Result<()> {
        if self.forge_key.get().is_none() {
            let (key, _) = RsaKey::generate()?;
            let _ = self.forge_key.set(key);
        }
        *self.forged_left.lock().unwrap_or_else(PoisonError::into_inner) = count;
        Ok(())
    }

    /// Issues no more forged JWTs.
    pub fn clear_forged(&self) {
        *self.forged_left.lock().unwrap_or_else(PoisonError::into_inner) = 0;
    }

    /// How many forged JWTs are still to be issued.
    pub fn forged_pending(&self) -> u32 {
        *self.forged_left.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every JWT issued so far (to `user_id` only, when given) fails verification from now on.
    pub fn expire(&self, user_id: Option<&str>) {
        let cutoff = self.next_jti.load(Ordering::Relaxed).saturating_sub(1);
        let mut revoked = self.lock_revoked();
        match user_id {
            Some(user) => {
                let sub = format!("{SUB_PREFIX}{}", user.trim().to_lowercase());
                let entry = revoked.by_sub.entry(sub).or_default();
                *entry = (*entry).max(cutoff);
            }
            None => revoked.everyone = revoked.everyone.max(cutoff),
        }
    }

    fn take_forged(&self) -> Option<&RsaKey> {
        let mut left = self.forged_left.lock().unwrap_or_else(PoisonError::into_inner);
        if *left == 0 {
            return None;
        }
        *left -= 1;
        self.forge_key.get()
    }

    fn lock_revoked(&self) -> std::sync::MutexGuard<'_, Revoked> {
        self.revoked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_verified(&self) -> std::sync::MutexGuard<'_, VerifiedTokens> {
        self.verified.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The user id of a mint request: trimmed, lower-cased, printable ASCII.
fn user_id(given: Option<&str>) -> ApiResult<String> {
    let user = given.map(str::trim).unwrap_or_default();
    if user.is_empty() {
        return Err(ApiError::invalid("\"userId\" is required"));
    }
    if user.chars().count() > MAX_USER_ID_CHARS || !user.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::invalid(format!(
            "\"userId\" must be at most {MAX_USER_ID_CHARS} printable ASCII characters"
        )));
    }
    Ok(user.to_ascii_lowercase())
}

fn now_seconds() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::store::test_support::TempDb;

    fn request(user: &str) -> MintRequest {
        MintRequest {
            project_id: Some(BUILTIN_PROJECT_ID.into()),
            client_key: Some(BUILTIN_CLIENT_KEY.into()),
            app_id: Some(BUILTIN_APP_ID.into()),
            user_id: Some(user.into()),
        }
    }

    #[test]
    fn mint_verify_expire() {
        let db = TempDb::new();
        let ring = KeyRing::open(Store::open(&db.0).unwrap()).unwrap();
        let service = JwtService::new(ring, DEFAULT_JWT_TTL);
        let a = service.mint(&request(" 0xABC ")).unwrap();
        assert_eq!(a["sub"], "ua:0xabc");
        assert_eq!(a["expiresIn"], 600);
        let jwt_a = a["jwt"].as_str().unwrap();
        assert_eq!(service.verify(jwt_a).unwrap().sub, "ua:0xabc");
        let b = service.mint(&request("0xdef")).unwrap();
        let jwt_b = b["jwt"].as_str().unwrap();

        service.expire(Some("0xABC"));
        assert_eq!(service.verify(jwt_a).unwrap_err().code, codes::INVALID_SESSION);
        assert!(service.verify(jwt_b).is_ok());
        let fresh = service.mint(&request("0xabc")).unwrap();
        assert!(service.verify(fresh["jwt"].as_str().unwrap()).is_ok());
        service.expire(None);
        assert!(service.verify(jwt_b).is_err());

        let mut wrong = request("0xabc");
        wrong.client_key = Some("ck_other".into());
        assert_eq!(service.mint(&wrong).unwrap_err().code, codes::INVALID_CREDENTIALS);
        assert_eq!(service.mint(&request("  ")).unwrap_err().code, codes::INVALID_REQUEST);
        assert!(service.verify("not.a.jwt").is_err());
    }

    #[test]
    fn a_remembered_token_fails_once_revoked_or_its_key_left_the_jwks() {
        let db = TempDb::new();
        let ring = KeyRing::open(Store::open(&db.0).unwrap()).unwrap();
        let service = JwtService::new(ring, DEFAULT_JWT_TTL);
        let minted = service.mint(&request("0xabc")).unwrap();
        let jwt = minted["jwt"].as_str().unwrap();
        for _ in 0..3 {
            assert_eq!(service.verify(jwt).unwrap().sub, "ua:0xabc", "verified, then remembered");
        }
        // One rotation keeps the previous key in the JWKS; the second drops it.
        service.rotate().unwrap();
        assert!(service.verify(jwt).is_ok());
        service.rotate().unwrap();
        let error = service.verify(jwt).unwrap_err();
        assert!(error.message.contains("key id"), "{error:?}");

        let other = service.mint(&request("0xdef")).unwrap();
        let other = other["jwt"].as_str().unwrap();
        assert!(service.verify(other).is_ok());
        service.expire(Some("0xdef"));
        assert_eq!(service.verify(other).unwrap_err().code, codes::INVALID_SESSION);
    }

    #[test]
    fn forged_jwts_do_not_verify() {
        let db = TempDb::new();
        let ring = KeyRing::open(Store::open(&db.0).unwrap()).unwrap();
        let service = JwtService::new(ring, DEFAULT_JWT_TTL);
        service.forge_next(1).unwrap();
        let forged = service.mint(&request("0xabc")).unwrap();
        assert_eq!(service.forged_pending(), 0);
        let error = service.verify(forged["jwt"].as_str().unwrap()).unwrap_err();
        assert!(error.message.contains("signature"), "{error:?}");
        let real = service.mint(&request("0xabc")).unwrap();
        assert!(service.verify(real["jwt"].as_str().unwrap()).is_ok());
    }
}
