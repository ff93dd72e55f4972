//! The process's JWT crypto: jsonwebtoken's RustCrypto backend, with RS256 done by `ring`
//! (already in every build, through rustls) where ring can.
//!
//! Why: starting 10,000 clients verifies 10,000 RS256 sessions (one per owner: the protocol's
//! `sub` is the owner), and a JWT service mints as many. RustCrypto's RSA (`num-bigint-dig`)
//! spends ~5× ring's time on both (`cargo bench -p depositkit-benches --bench session`,
//! docs/benchmarks.md "Start-up"). The results are the same: a PKCS#1 v1.5 signature is
//! deterministic, and a signature ring accepts is one RustCrypto accepts. Whenever ring does not
//! accept (a bad signature, a key outside the sizes both take: 2048 to 4096 bits) the RustCrypto
//! backend decides, so every answer and error is the one it gives alone.

use std::sync::{Arc, Mutex, OnceLock};

use jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER as RUST_CRYPTO;
use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier};
use jsonwebtoken::signature::{Error as SignatureError, Signer, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::signature::{
    RSA_PKCS1_2048_8192_SHA256, RSA_PKCS1_SHA256, RsaKeyPair, RsaPublicKeyComponents,
};

/// RSA moduli ring handles here: from its minimum to RustCrypto's maximum, so that ring never
/// accepts a key RustCrypto refuses.
const RING_MODULUS_BITS: std::ops::RangeInclusive<usize> = 2048..=4096;

/// Installs the provider as the process's jsonwebtoken default (once; if another default was
/// installed first, that one stays — it gives the same results).
pub fn install() {
    static PROVIDER: OnceLock<CryptoProvider> = OnceLock::new();
    let provider = PROVIDER.get_or_init(|| CryptoProvider {
        signer_factory: signer,
        verifier_factory: verifier,
        key_utils: RUST_CRYPTO.key_utils.clone(),
    });
    let _ = provider.install_default();
}

fn signer(
    algorithm: &Algorithm,
    key: &EncodingKey,
) -> jsonwebtoken::errors::Result<Box<dyn JwtSigner>> {
    let fallback = (RUST_CRYPTO.signer_factory)(algorithm, key)?;
    if *algorithm != Algorithm::RS256 {
        return Ok(fallback);
    }
    match key_pair(key.as_bytes()) {
        Some(pair) => Ok(Box::new(RingSigner { pair, fallback })),
        None => Ok(fallback),
    }
}

/// The ring key pair of an RSA encoding key (PKCS#1 DER), when ring takes it. The last one is
/// kept: a JWT service signs every token with its current key, and reading and checking the
/// key costs about as much as a signature.
fn key_pair(der: &[u8]) -> Option<Arc<RsaKeyPair>> {
    static LAST: Mutex<Option<(Vec<u8>, Arc<RsaKeyPair>)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((kept, pair)) = last.as_ref()
        && kept.as_slice() == der
    {
        return Some(Arc::clone(pair));
    }
    let pair = RsaKeyPair::from_der(der).ok()?;
    if !RING_MODULUS_BITS.contains(&(pair.public().modulus_len() * 8)) {
        return None;
    }
    let pair = Arc::new(pair);
    *last = Some((der.to_vec(), Arc::clone(&pair)));
    Some(pair)
}

fn verifier(
    algorithm: &Algorithm,
    key: &DecodingKey,
) -> jsonwebtoken::errors::Result<Box<dyn JwtVerifier>> {
    let fallback = (RUST_CRYPTO.verifier_factory)(algorithm, key)?;
    match (algorithm, key.kind()) {
        (Algorithm::RS256, DecodingKeyKind::RsaModulusExponent { n, e }) => {
            Ok(Box::new(RingVerifier { n: n.clone(), e: e.clone(), fallback }))
        }
        _ => Ok(fallback),
    }
}

struct RingSigner {
    pair: Arc<RsaKeyPair>,
    fallback: Box<dyn JwtSigner>,
}

impl Signer<Vec<u8>> for RingSigner {
    fn try_sign(&self, message: &[u8]) -> Result<Vec<u8>, SignatureError> {
        let mut signature = vec![0; self.pair.public().modulus_len()];
        let rng = ring::rand::SystemRandom::new();
        match self.pair.sign(&RSA_PKCS1_SHA256, &rng, message, &mut signature) {
            Ok(()) => Ok(signature),
            Err(_) => self.fallback.try_sign(message),
        }
    }
}

impl JwtSigner for RingSigner {
    fn algorithm(&self) -> Algorithm {
        Algorithm::RS256
    }
}

struct RingVerifier {
    n: Vec<u8>,
    e: Vec<u8>,
    fallback: Box<dyn JwtVerifier>,
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> Result<(), SignatureError> {
        let modulus = self.n.iter().skip_while(|&&b| b == 0).count();
        let key = RsaPublicKeyComponents { n: &self.n, e: &self.e };
        if RING_MODULUS_BITS.contains(&(modulus * 8))
            && key.verify(&RSA_PKCS1_2048_8192_SHA256, message, signature).is_ok()
        {
            return Ok(());
        }
        self.fallback.verify(message, signature)
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        Algorithm::RS256
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{Header, Validation};
    use rsa::pkcs1::EncodeRsaPrivateKey;
    use rsa::traits::PublicKeyParts;
    use serde_json::{Value, json};

    use super::*;

    fn keys(bits: usize) -> (EncodingKey, DecodingKey) {
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, bits).unwrap();
        let der = key.to_pkcs1_der().unwrap();
        let decoding =
            DecodingKey::from_rsa_raw_components(&key.n().to_bytes_be(), &key.e().to_bytes_be());
        (EncodingKey::from_rsa_der(der.as_bytes()), decoding)
    }

    /// ring and RustCrypto sign the same bytes and accept and refuse the same tokens, for a
    /// key ring handles (2048 bits) and one it does not (1024: RustCrypto alone).
    #[test]
    fn ring_and_rust_crypto_agree() {
        install();
        let claims = json!({"sub": "ua:0xabc", "exp": 4_000_000_000_u64});
        let header = Header::new(Algorithm::RS256);
        let validation = Validation::new(Algorithm::RS256);
        for bits in [2048, 1024] {
            let (encoding, decoding) = keys(bits);
            let ours = signer(&Algorithm::RS256, &encoding).unwrap().try_sign(b"m").unwrap();
            let theirs =
                (RUST_CRYPTO.signer_factory)(&Algorithm::RS256, &encoding).unwrap().try_sign(b"m");
            assert_eq!(ours, theirs.unwrap(), "{bits} bits");
            let token = jsonwebtoken::encode(&header, &claims, &encoding).unwrap();
            let data = jsonwebtoken::decode::<Value>(&token, &decoding, &validation).unwrap();
            assert_eq!(data.claims["sub"], "ua:0xabc");
            let (_, other) = keys(bits);
            let wrong = jsonwebtoken::decode::<Value>(&token, &other, &validation).unwrap_err();
            assert_eq!(*wrong.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature);
            let mut forged = token.clone();
            forged.replace_range(forged.len() - 4.., "AAAA");
            let bad = jsonwebtoken::decode::<Value>(&forged, &decoding, &validation).unwrap_err();
            assert_eq!(*bad.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature);
            let verifier = verifier(&Algorithm::RS256, &decoding).unwrap();
            let signature = ours.clone();
            assert!(verifier.verify(b"m", &signature).is_ok());
            assert!(verifier.verify(b"n", &signature).is_err());
        }
    }
}
