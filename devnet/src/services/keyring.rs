//! The RSA keys that sign JWTs: the current key and the one before it (kept one rotation longer
//! so that JWTs it signed still verify). Keys live in the store, so a restarted devnet keeps them.
//!
//! A fresh database has none: the first key is generated on a thread of its own when the server
//! starts (RSA-2048 takes 0.1–0.4 s with the dev-profile overrides), so starting stays instant;
//! the first request that needs a key waits for it.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{DecodingKey, EncodingKey};
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::traits::PublicKeyParts;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::store::{Store, StoredJwtKey};

/// RSA modulus size of generated keys.
pub const RSA_BITS: usize = 2048;
/// How many keys the JWKS lists (and the store keeps): the current and the previous one.
const KEPT_KEYS: usize = 2;
/// Longest wait for the first key before requests fail.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// One RSA signing key. `Debug` shows only the key id.
pub struct RsaKey {
    /// Key id: the first 8 bytes of SHA-256 of the modulus, in hex.
    pub kid: String,
    pub(crate) encoding: EncodingKey,
    pub(crate) decoding: DecodingKey,
    modulus: Vec<u8>,
    exponent: Vec<u8>,
}

impl std::fmt::Debug for RsaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RsaKey").field("kid", &self.kid).finish_non_exhaustive()
    }
}

impl RsaKey {
    /// A new random key and its PKCS#1 DER.
    ///
    /// # Errors
    /// The system RNG or the encoder failed.
    pub fn generate() -> Result<(RsaKey, Vec<u8>)> {
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, RSA_BITS)
            .map_err(|e| key_error("cannot generate an RSA key", e))?;
        let der = key.to_pkcs1_der().map_err(|e| key_error("cannot encode an RSA key", e))?;
        let der = der.as_bytes().to_vec();
        Ok((Self::from_key(&key, &der), der))
    }

    /// The key stored as PKCS#1 DER.
    ///
    /// # Errors
    /// The DER is not an RSA private key.
    pub fn from_der(der: &[u8]) -> Result<RsaKey> {
        let key = rsa::RsaPrivateKey::from_pkcs1_der(der)
            .map_err(|e| key_error("stored JWT key is not PKCS#1 DER", e))?;
        Ok(Self::from_key(&key, der))
    }

    fn from_key(key: &rsa::RsaPrivateKey, der: &[u8]) -> RsaKey {
        let modulus = key.n().to_bytes_be();
        let exponent = key.e().to_bytes_be();
        let kid = alloy_primitives::hex::encode(&Sha256::digest(&modulus)[..8]);
        RsaKey {
            kid,
            encoding: EncodingKey::from_rsa_der(der),
            decoding: DecodingKey::from_rsa_raw_components(&modulus, &exponent),
            modulus,
            exponent,
        }
    }

    /// The public key as a JWK.
    pub fn jwk(&self) -> Value {
        json!({
            "kty": "RSA",
            "kid": self.kid,
            "use": "sig",
            "alg": "RS256",
            "n": URL_SAFE_NO_PAD.encode(&self.modulus),
            "e": URL_SAFE_NO_PAD.encode(&self.exponent),
        })
    }
}

/// The current and previous keys.
#[derive(Debug, Clone)]
pub struct Keys {
    pub current: Arc<RsaKey>,
    pub previous: Option<Arc<RsaKey>>,
}

impl Keys {
    /// The key with id `kid`, current or previous.
    pub fn find(&self, kid: &str) -> Option<&Arc<RsaKey>> {
        std::iter::once(&self.current).chain(&self.previous).find(|key| key.kid == kid)
    }
}

enum State {
    Generating,
    Ready(Keys),
    Failed(String),
}

/// The keys of one server.
pub struct KeyRing {
    store: Store,
    state: Mutex<State>,
    ready: Condvar,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyRing").finish_non_exhaustive()
    }
}

impl KeyRing {
    /// The keys stored in `store`, or (with none stored) a first key being generated on a
    /// background thread.
    ///
    /// # Errors
    /// Database failures, a corrupt stored key, or the thread cannot start.
    pub fn open(store: Store) -> Result<Arc<KeyRing>> {
        let stored = store.jwt_keys(KEPT_KEYS)?;
        let mut keys = stored.iter().map(|k| RsaKey::from_der(&k.private_der).map(Arc::new));
        let state = match keys.next().transpose()? {
            Some(current) => State::Ready(Keys { current, previous: keys.next().transpose()? }),
            None => State::Generating,
        };
        let generating = matches!(state, State::Generating);
        let ring = Arc::new(KeyRing { store, state: Mutex::new(state), ready: Condvar::new() });
        if generating {
            let ring = Arc::clone(&ring);
            std::thread::Builder::new()
                .name("depositkit-devnet-keygen".into())
                .spawn(move || {
                    let outcome = ring.new_key();
                    let mut state = ring.lock();
                    *state = match outcome {
                        Ok(current) => State::Ready(Keys { current, previous: None }),
                        Err(e) => State::Failed(e.to_string()),
                    };
                    ring.ready.notify_all();
                })
                .map_err(|e| Error::io("cannot start the key generation thread", e))?;
        }
        Ok(ring)
    }

    /// The current keys, waiting for the first one if it is still being generated.
    ///
    /// # Errors
    /// Generating the first key failed or took longer than a minute.
    pub fn keys(&self) -> Result<Keys> {
        let state = self.lock();
        let (state, _) = self
            .ready
            .wait_timeout_while(state, READY_TIMEOUT, |s| matches!(s, State::Generating))
            .unwrap_or_else(PoisonError::into_inner);
        match &*state {
            State::Ready(keys) => Ok(keys.clone()),
            State::Failed(message) => Err(key_error("no JWT signing key", message)),
            State::Generating => Err(key_error("no JWT signing key", "still generating")),
        }
    }

    /// Makes a new key current; the current one becomes the previous one (the one before is
    /// dropped). Returns the new key id.
    ///
    /// # Errors
    /// Generating or storing the key failed.
    pub fn rotate(&self) -> Result<String> {
        let old = self.keys()?;
        let current = self.new_key()?;
        let kid = current.kid.clone();
        *self.lock() = State::Ready(Keys { current, previous: Some(old.current) });
        Ok(kid)
    }

    fn new_key(&self) -> Result<Arc<RsaKey>> {
        let (key, der) = RsaKey::generate()?;
        self.store
            .push_jwt_key(&StoredJwtKey { kid: key.kid.clone(), private_der: der }, KEPT_KEYS)?;
        Ok(Arc::new(key))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn key_error(context: &str, detail: impl std::fmt::Display) -> Error {
    Error::io(context, std::io::Error::other(detail.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::TempDb;

    #[test]
    fn keys_are_generated_rotated_and_reloaded() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let ring = KeyRing::open(store.clone()).unwrap();
        let first = ring.keys().unwrap();
        assert!(first.previous.is_none());
        assert_eq!(first.current.jwk()["kty"], "RSA");
        let kid = ring.rotate().unwrap();
        let rotated = ring.keys().unwrap();
        assert_eq!(rotated.current.kid, kid);
        assert_eq!(rotated.previous.as_ref().unwrap().kid, first.current.kid);
        assert!(rotated.find(&first.current.kid).is_some());
        assert!(!format!("{:?}", rotated.current).contains("encoding"));

        let reopened = KeyRing::open(store).unwrap().keys().unwrap();
        assert_eq!(reopened.current.kid, kid);
        assert_eq!(reopened.previous.unwrap().kid, first.current.kid);
    }
}
