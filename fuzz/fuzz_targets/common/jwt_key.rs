//! An RS256 signing key made once per fuzzing process (like devnet's), its JWK, and tokens
//! signed with it. A fresh key each run: no fuzzed input can carry a valid signature, so any
//! token the library accepts must have been signed here.
//!
//! Tokens are assembled and signed here with the parsed key (PKCS#1 v1.5, SHA-256, no
//! blinding), with a 512-bit modulus: the protocol's keys are 2048-bit, but big-integer
//! arithmetic under the fuzzer's comparison tracing makes a 2048-bit signature cost ~50 ms,
//! and nothing checked here depends on the key's size (the library sets no minimum).

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rsa::pkcs1v15::SigningKey;
use rsa::sha2::Sha256;
use rsa::signature::{SignatureEncoding, Signer};
use rsa::traits::PublicKeyParts;
use serde_json::{Value, json};

/// The key id of the key.
pub const KID: &str = "k1";

pub struct TestKey {
    signing: SigningKey<Sha256>,
    /// Big-endian modulus and exponent.
    pub n: Vec<u8>,
    pub e: Vec<u8>,
}

pub fn key() -> &'static TestKey {
    static KEY: OnceLock<TestKey> = OnceLock::new();
    KEY.get_or_init(|| {
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 512).expect("RSA key");
        TestKey {
            n: key.n().to_bytes_be(),
            e: key.e().to_bytes_be(),
            signing: SigningKey::<Sha256>::new(key),
        }
    })
}

/// The key as a JWK, under key id `kid`.
pub fn jwk(kid: &str) -> Value {
    let k = key();
    json!({
        "kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
        "n": URL_SAFE_NO_PAD.encode(&k.n), "e": URL_SAFE_NO_PAD.encode(&k.e),
    })
}

/// `claims` signed RS256 with the key, its header carrying `kid`.
pub fn sign(kid: Option<&str>, claims: &Value) -> String {
    let mut header = json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = kid {
        header["kid"] = json!(kid);
    }
    let signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key().signing.sign(signed.as_bytes()).to_bytes();
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature))
}

pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// Big-endian bytes without leading zeros, for comparing integers.
#[allow(dead_code)] // not every target that includes this module compares keys
pub fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    &bytes[start..]
}
