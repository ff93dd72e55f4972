//! The RS256 work of one owner's session (docs/protocol.md §1), the cost that bounds starting
//! many clients: the JWT service signs one token per owner (`sub` is the owner) and the client
//! verifies it. RustCrypto's RSA (jsonwebtoken's `rust_crypto` backend) against the provider of
//! `depositkit_core::services::rs256` (RS256 by ring), on one RSA-2048 key.
//!
//! Run: `cargo bench -p depositkit-benches --bench session -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use depositkit_core::services::jwt::{BUILTIN_PROJECT_ID, JWT_ISSUER, verify_with_jwks};
use depositkit_core::services::rs256;
use jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER as RUST_CRYPTO;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header};
use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::traits::PublicKeyParts;
use serde_json::json;

const OWNER: &str = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";

struct Key {
    encoding: EncodingKey,
    decoding: DecodingKey,
    jwks: JwkSet,
}

fn key() -> Key {
    let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).unwrap();
    let der = key.to_pkcs1_der().unwrap();
    let (n, e) = (key.n().to_bytes_be(), key.e().to_bytes_be());
    let jwks = json!({"keys": [{"kty": "RSA", "kid": "0123456789abcdef", "use": "sig",
        "alg": "RS256", "n": URL_SAFE_NO_PAD.encode(&n), "e": URL_SAFE_NO_PAD.encode(&e)}]});
    Key {
        encoding: EncodingKey::from_rsa_der(der.as_bytes()),
        decoding: DecodingKey::from_rsa_raw_components(&n, &e),
        jwks: serde_json::from_value(jwks).unwrap(),
    }
}

/// A session token as devnet mints it.
fn token(key: &Key) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.typ = Some("JWT".into());
    header.kid = Some("0123456789abcdef".into());
    let claims = json!({"iss": JWT_ISSUER, "aud": BUILTIN_PROJECT_ID, "sub": format!("ua:{OWNER}"),
        "iat": 1_764_000_000_u64, "exp": 4_000_000_000_u64, "jti": "1"});
    jsonwebtoken::encode(&header, &claims, &key.encoding).unwrap()
}

fn session(c: &mut Criterion) {
    rs256::install();
    let key = key();
    let jwt = token(&key);
    let (message, signature) = jwt.rsplit_once('.').unwrap();
    let signature = URL_SAFE_NO_PAD.decode(signature).unwrap();
    let mut g = c.benchmark_group("session");
    g.bench_function("sign_rs256_rust_crypto", |b| {
        b.iter(|| {
            let signer = (RUST_CRYPTO.signer_factory)(&Algorithm::RS256, &key.encoding).unwrap();
            signer.try_sign(black_box(message.as_bytes())).unwrap()
        })
    });
    g.bench_function("sign_rs256_ring", |b| {
        b.iter(|| {
            jsonwebtoken::crypto::sign(
                black_box(message.as_bytes()),
                &key.encoding,
                Algorithm::RS256,
            )
        })
    });
    g.bench_function("verify_rs256_rust_crypto", |b| {
        b.iter(|| {
            let verifier =
                (RUST_CRYPTO.verifier_factory)(&Algorithm::RS256, &key.decoding).unwrap();
            verifier.verify(black_box(message.as_bytes()), &signature).unwrap()
        })
    });
    g.bench_function("verify_rs256_ring", |b| {
        b.iter(|| {
            let encoded = URL_SAFE_NO_PAD.encode(&signature);
            jsonwebtoken::crypto::verify(
                &encoded,
                black_box(message.as_bytes()),
                &key.decoding,
                Algorithm::RS256,
            )
        })
    });
    // The client's whole check of one session: header, JWKS key, signature, claims.
    g.bench_function("client_verify_session", |b| {
        b.iter(|| verify_with_jwks(black_box(&jwt), OWNER, &key.jwks).unwrap())
    });
    g.finish();
}

criterion_group!(benches, session);
criterion_main!(benches);
