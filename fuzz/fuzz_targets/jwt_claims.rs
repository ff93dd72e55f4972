//! The claim checks of a correctly signed session token (`verify_with_jwks`, the check every
//! JWT service answer goes through): fuzzed claims and key ids, signed with the process's key.
//!
//! Property: the token is accepted exactly when its key id is the JWKS key's, `iss` is
//! `depositkit-jwt`, `aud` the built-in project id (or a list holding it; `iss` likewise, as
//! jsonwebtoken allows), `sub` is `"ua:" + owner` and `exp` an integer not more than 60 s in
//! the past; and then the claims come back as signed.
#![no_main]

#[path = "common/jwt_key.rs"]
mod jwt_key;

use arbitrary::Arbitrary;
use depositkit_core::ErrorKind;
use depositkit_core::deposit::{BUILTIN_PROJECT_ID, JWT_ISSUER};
use depositkit_core::services::jwt::verify_with_jwks;
use jsonwebtoken::jwk::JwkSet;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

const USER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";
const LEEWAY: i128 = 60;

#[derive(Arbitrary, Debug)]
enum Text {
    Missing,
    Right,
    Upper,
    Other(String),
    List(Vec<String>, bool),
    Number(i64),
    Null,
}

#[derive(Arbitrary, Debug)]
enum Exp {
    Missing,
    /// Seconds from now.
    Offset(i32),
    Raw(u64),
    Negative(i64),
    Float(f64),
    Text(String),
}

#[derive(Arbitrary, Debug)]
struct Input {
    kid: Option<String>,
    right_kid: bool,
    iss: Text,
    aud: Text,
    sub: Text,
    exp: Exp,
    extra: Vec<(String, String)>,
}

fn key_set() -> &'static JwkSet {
    static SET: OnceLock<JwkSet> = OnceLock::new();
    SET.get_or_init(|| {
        serde_json::from_value(json!({"keys": [jwt_key::jwk(jwt_key::KID)]})).unwrap()
    })
}

fn text(choice: &Text, right: &str) -> Option<Value> {
    Some(match choice {
        Text::Missing => return None,
        Text::Right => json!(right),
        Text::Upper => json!(right.to_uppercase()),
        Text::Other(s) => json!(s),
        Text::List(items, with_right) => {
            let mut items: Vec<Value> = items.iter().map(|s| json!(s)).collect();
            if *with_right {
                items.push(json!(right));
            }
            Value::Array(items)
        }
        Text::Number(n) => json!(n),
        Text::Null => Value::Null,
    })
}

/// A string equal to `right`, or a list of strings that holds it.
fn names(value: Option<&Value>, right: &str) -> bool {
    match value {
        Some(Value::String(s)) => s == right,
        Some(Value::Array(items)) => {
            items.iter().all(Value::is_string) && items.iter().any(|v| v == right)
        }
        _ => false,
    }
}

fuzz_target!(|input: Input| {
    let now = jwt_key::now();
    let mut claims = Map::new();
    for (k, v) in &input.extra {
        claims.insert(k.clone(), json!(v));
    }
    let subject = format!("ua:{USER}");
    for (name, choice, right) in [
        ("iss", &input.iss, JWT_ISSUER),
        ("aud", &input.aud, BUILTIN_PROJECT_ID),
        ("sub", &input.sub, subject.as_str()),
    ] {
        if let Some(value) = text(choice, right) {
            claims.insert(name.to_owned(), value);
        }
    }
    let exp = match &input.exp {
        Exp::Missing => None,
        Exp::Offset(s) => Some(json!(now.saturating_add_signed(i64::from(*s)))),
        Exp::Raw(n) => Some(json!(n)),
        Exp::Negative(n) => Some(json!(-1 - (n.unsigned_abs() % 1_000_000_000) as i64)),
        Exp::Float(f) => Some(json!(f)),
        Exp::Text(s) => Some(json!(s)),
    };
    if let Some(exp) = exp {
        claims.insert("exp".to_owned(), exp);
    }
    let kid = if input.right_kid { Some(jwt_key::KID.to_owned()) } else { input.kid.clone() };
    let claims = Value::Object(claims);
    let token = jwt_key::sign(kid.as_deref(), &claims);

    let expected_exp = claims.get("exp").and_then(Value::as_u64);
    if let Some(exp) = expected_exp {
        // Too close to the edge of the leeway to call: the clock moves while this runs.
        if (i128::from(exp) - (i128::from(now) - LEEWAY)).abs() <= 3 {
            return;
        }
    }
    let accept = kid.as_deref() == Some(jwt_key::KID)
        && names(claims.get("iss"), JWT_ISSUER)
        && names(claims.get("aud"), BUILTIN_PROJECT_ID)
        && claims.get("sub") == Some(&json!(subject))
        && expected_exp.is_some_and(|exp| i128::from(exp) >= i128::from(now) - LEEWAY);

    let outcome = verify_with_jwks(&token, USER, key_set());
    if std::env::var_os("FUZZ_SHOW").is_some() {
        // FUZZ_SHOW=1 fuzz/target/…/jwt_claims INPUT…: what each input signs and what became of it.
        eprintln!("kid {kid:?} claims {claims} → {:?}", outcome.as_ref().map_err(|e| e.message()));
    }
    match outcome {
        Ok((sub, exp)) => {
            assert!(accept, "accepted: {claims}");
            assert_eq!(sub, subject);
            assert_eq!(Some(exp), expected_exp);
        }
        Err(err) => {
            assert!(!accept, "refused: {claims}: {err}");
            assert_eq!(err.kind(), ErrorKind::Jwt, "{err}");
        }
    }
});
