//! The JWT service's answers (`docs/protocol.md` §1): the token answer of `POST /v1/jwt`
//! (`parse_jwt_answer`), the JWKS (`parse_jwks`) and the verification of a token against a
//! key set (`verify_with_jwks`: header, key choice, key use, signature, claims).
//!
//! Input: byte 0 picks the mode, byte 1 the HTTP status; the rest is the body or the token.
//! Properties: no panic; a token only from a 2xx answer; HTTP 401 is an authentication error,
//! everything else a JWT error; no fuzzed token ever verifies (the key is made at start-up);
//! a fuzzed JWKS verifies the process's own token only when it holds that very key.
#![no_main]

#[path = "common/jwt_key.rs"]
mod jwt_key;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use depositkit_core::ErrorKind;
use depositkit_core::deposit::{BUILTIN_PROJECT_ID, JWT_ISSUER};
use depositkit_core::services::jwt::{parse_jwks, parse_jwt_answer, verify_with_jwks};
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use std::sync::OnceLock;

const STATUSES: [u16; 10] = [200, 200, 200, 201, 204, 400, 401, 403, 429, 500];
const USER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";
const URL: &str = "http://127.0.0.1:1/jwt/.well-known/jwks.json";

/// The JWKS the fuzzed tokens are checked against: the process's key and keys of other kinds.
fn key_set() -> &'static JwkSet {
    static SET: OnceLock<JwkSet> = OnceLock::new();
    SET.get_or_init(|| {
        serde_json::from_value(json!({"keys": [
            jwt_key::jwk(jwt_key::KID),
            {"kty": "oct", "kid": "hmac", "k": URL_SAFE_NO_PAD.encode(b"not a secret")},
            {"kty": "EC", "kid": "ec", "crv": "P-256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "RSA", "kid": "rs512", "alg": "RS512", "n": jwt_key::jwk("x")["n"], "e": "AQAB"},
        ]}))
        .expect("a JWKS")
    })
}

/// A token that passes: the process's key, the right claims, an hour left.
fn good_token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| {
        jwt_key::sign(
            Some(jwt_key::KID),
            &json!({"iss": JWT_ISSUER, "aud": BUILTIN_PROJECT_ID, "sub": format!("ua:{USER}"),
                    "exp": jwt_key::now() + 3600}),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let [mode, s, rest @ ..] = data else { return };
    let status = STATUSES[usize::from(*s) % STATUSES.len()];
    let text = String::from_utf8_lossy(rest).into_owned();
    match mode % 4 {
        0 => answer(status, text),
        1 => forged(&text),
        2 => {
            // Header, payload and signature from the input, base64url-encoded, so that the
            // fuzzer reaches the JSON inside a token without spelling base64.
            let mut parts = rest.splitn(3, |&b| b == 0xff);
            let mut part = || URL_SAFE_NO_PAD.encode(parts.next().unwrap_or_default());
            let token = format!("{}.{}.{}", part(), part(), part());
            forged(&token);
        }
        _ => jwks(status, text),
    }
});

/// The token of an answer, every other field skipped unparsed (the oracle when `Value` refuses a
/// number the parser skips).
#[derive(Deserialize)]
struct TokenOnly {
    jwt: Option<String>,
}

fn answer(status: u16, body: String) {
    let json: Option<Value> = serde_json::from_str(&body).ok();
    let is_json = serde_json::from_str::<IgnoredAny>(&body).is_ok();
    match parse_jwt_answer(status, body.clone()) {
        Ok((jwt, expires_at)) => {
            assert!((200..300).contains(&status), "a token from HTTP {status}");
            assert!(!jwt.is_empty());
            assert!(is_json, "a token from a body that is not JSON: {body:?}");
            // JSON's grammar puts no bound on a number, and `Value` refuses one beyond f64
            // (`1E767225599`) that the parser skips in a field it ignores: then only the
            // grammar and the token's presence are checked.
            if let Some(json) = json {
                assert_eq!(json["jwt"].as_str(), Some(jwt.as_str()));
                assert_eq!(json.get("expiresAt").and_then(Value::as_u64), expires_at);
            } else {
                let token: TokenOnly = serde_json::from_str(&body).expect("a JSON object");
                assert_eq!(token.jwt.as_deref(), Some(jwt.as_str()));
            }
        }
        Err(err) if status == 401 => assert_eq!(err.kind(), ErrorKind::Authentication, "{err}"),
        Err(err) => assert_eq!(err.kind(), ErrorKind::Jwt, "{err}"),
    }
}

fn forged(token: &str) {
    match verify_with_jwks(token, USER, key_set()) {
        Ok(claims) => panic!("a token not signed here verified: {token:?} → {claims:?}"),
        Err(err) => {
            assert_eq!(err.kind(), ErrorKind::Jwt, "{err}");
            assert!(err.message().starts_with("JWT verification failed"), "{err}");
        }
    }
}

fn jwks(status: u16, body: String) {
    let set = match parse_jwks(URL, status, body) {
        Ok(set) => {
            assert!((200..300).contains(&status), "a JWKS from HTTP {status}");
            assert!(!set.keys.is_empty());
            set
        }
        Err(err) => {
            assert_eq!(err.kind(), ErrorKind::Jwt, "{err}");
            return;
        }
    };
    // The process's own token verifies against a fuzzed key set only through its own key.
    if let Ok((sub, _)) = verify_with_jwks(good_token(), USER, &set) {
        assert_eq!(sub, format!("ua:{USER}"));
        let jwk = set.find(jwt_key::KID).expect("verified through the key k1");
        let AlgorithmParameters::RSA(rsa) = &jwk.algorithm else {
            panic!("verified with a key that is not RSA: {jwk:?}");
        };
        let n = URL_SAFE_NO_PAD.decode(&rsa.n).expect("n is base64url");
        let e = URL_SAFE_NO_PAD.decode(&rsa.e).expect("e is base64url");
        let key = jwt_key::key();
        assert_eq!(jwt_key::trim(&n), jwt_key::trim(&key.n), "verified with another modulus");
        assert_eq!(jwt_key::trim(&e), jwt_key::trim(&key.e), "verified with another exponent");
    }
}
