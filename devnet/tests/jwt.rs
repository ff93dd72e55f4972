//! The JWT service over HTTP: minting with the built-in credentials, verification against the
//! JWKS with jsonwebtoken, key rotation, forged JWTs and expired sessions.

mod common;

use std::time::Duration;

use common::deposit::*;
use depositkit_devnet::BUILTIN_PROJECT_ID;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};

const OWNER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

/// Verifies `jwt` against the devnet's current JWKS the way a client does.
fn verify(net: &Net, jwt: &str) -> Result<Value, jsonwebtoken::errors::Error> {
    let jwks: JwkSet =
        serde_json::from_str(&net.get("/jwt/.well-known/jwks.json", None).body).unwrap();
    let header = jsonwebtoken::decode_header(jwt)?;
    assert_eq!(header.alg, Algorithm::RS256);
    assert_eq!(header.typ.as_deref(), Some("JWT"));
    let jwk = jwks.find(header.kid.as_deref().unwrap()).expect("kid in the JWKS");
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_issuer(&["depositkit-jwt"]);
    validation.set_audience(&[BUILTIN_PROJECT_ID]);
    validation.sub = Some(format!("ua:{}", OWNER.to_lowercase()));
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    jsonwebtoken::decode::<Value>(jwt, &DecodingKey::from_jwk(jwk)?, &validation).map(|d| d.claims)
}

#[test]
fn minted_jwts_verify_with_the_jwks() {
    let net = Net::start();
    let minted = net.mint_reply(OWNER);
    let sub = format!("ua:{}", OWNER.to_lowercase());
    assert_eq!(minted["sub"], sub);
    assert_eq!(minted["expiresIn"], 600);
    let claims = verify(&net, minted["jwt"].as_str().unwrap()).unwrap();
    assert_eq!(claims["iss"], "depositkit-jwt");
    assert_eq!(claims["aud"], BUILTIN_PROJECT_ID);
    assert_eq!(claims["sub"], sub);
    assert_eq!(claims["exp"], minted["expiresAt"]);
    assert_eq!(claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(), 600);

    let jwks = net.get("/jwt/.well-known/jwks.json", None).json();
    let keys = jwks["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    for field in ["kty", "kid", "use", "alg", "n", "e"] {
        assert!(keys[0][field].is_string(), "{field}: {jwks}");
    }
    assert_eq!(keys[0]["e"], "AQAB");
    assert_eq!(net.get("/jwt/health", None).status, 200);
}

#[test]
fn bad_credentials_and_requests() {
    let net = Net::start();
    let mut body = json!({
        "projectId": BUILTIN_PROJECT_ID,
        "clientKey": "ck_wrong",
        "appId": depositkit_devnet::BUILTIN_APP_ID,
        "userId": OWNER,
    });
    expect_api_error(&net.post("/jwt/v1/jwt", None, &body), 401, "INVALID_CREDENTIALS");
    body["clientKey"] = json!(depositkit_devnet::BUILTIN_CLIENT_KEY);
    body["userId"] = json!("");
    expect_api_error(&net.post("/jwt/v1/jwt", None, &body), 400, "INVALID_REQUEST");
    let reply =
        net.call("POST", "/jwt/v1/jwt", None, &[("Content-Type", "application/json")], None);
    expect_api_error(&reply, 401, "INVALID_CREDENTIALS");
    let garbage = net.call("POST", "/jwt/v1/jwt", None, &[], Some(&json!([1])));
    expect_api_error(&garbage, 400, "INVALID_REQUEST");
}

#[test]
fn rotation_keeps_the_previous_key_for_one_rotation() {
    let net = Net::start();
    let old = net.mint(OWNER);
    let old_kid = jsonwebtoken::decode_header(&old).unwrap().kid.unwrap();
    let wallet = net.wallet(&old);

    let rotated = net.post("/devnet/jwt/rotate", None, &json!({}));
    assert_eq!(rotated.status, 200, "{}", rotated.body);
    let new_kid = rotated.json()["kid"].as_str().unwrap().to_owned();
    assert_ne!(new_kid, old_kid);
    let jwks = net.get("/jwt/.well-known/jwks.json", None).json();
    let kids: Vec<&str> =
        jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert_eq!(kids, [new_kid.as_str(), old_kid.as_str()]);

    // The old JWT still verifies (client and services); new JWTs use the new key.
    verify(&net, &old).unwrap();
    assert_eq!(net.wallet(&old), wallet);
    let new = net.mint(OWNER);
    assert_eq!(jsonwebtoken::decode_header(&new).unwrap().kid.unwrap(), new_kid);
    verify(&net, &new).unwrap();

    // One more rotation drops the old key: its JWTs are refused.
    let third = net.devnet.rotate_jwt_key().unwrap();
    let jwks = net.get("/jwt/.well-known/jwks.json", None).json();
    let kids: Vec<&str> =
        jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert_eq!(kids, [third.as_str(), new_kid.as_str()]);
    let reply = net.get("/signer/v1/wallet", Some(&old));
    expect_api_error(&reply, 401, "INVALID_SESSION");
    assert_eq!(net.wallet(&new), wallet);
}

#[test]
fn forged_jwts_fail_verification_and_are_refused() {
    let net = Net::start();
    let user = net.user(OWNER);
    let reply = net.post("/devnet/jwt/forge", None, &json!({"count": 1}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["forgedJwts"], 1);
    let forged = net.mint(OWNER);
    let error = verify(&net, &forged).unwrap_err();
    assert_eq!(*error.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature);
    let reply = net.post("/ua/v1/accounts", Some(&forged), &json!({"ownerAddress": user.wallet}));
    let message = expect_api_error(&reply, 401, "INVALID_SESSION");
    assert!(message.contains("signature"), "{message}");
    expect_api_error(&net.get("/signer/v1/wallet", Some(&forged)), 401, "INVALID_SESSION");
    // Only the next one was forged.
    let good = net.mint(OWNER);
    verify(&net, &good).unwrap();
    assert_eq!(net.wallet(&good), user.wallet);
}

#[test]
fn expired_sessions_are_refused_until_a_new_jwt() {
    let net = Net::start();
    let a = net.user(OWNER);
    let b = net.user("0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359");
    let reply = net.post("/devnet/jwt/expire", None, &json!({"userId": OWNER}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = json!({"accountIds": [a.account_id]});
    expect_api_error(&net.post("/ua/v1/balances", Some(&a.jwt), &body), 401, "INVALID_SESSION");
    expect_api_error(&net.get("/signer/v1/wallet", Some(&a.jwt)), 401, "INVALID_SESSION");
    // The other user is unaffected, and a new JWT works again.
    assert_eq!(net.wallet(&b.jwt), b.wallet);
    let fresh = net.mint(OWNER);
    assert_eq!(net.post("/ua/v1/balances", Some(&fresh), &body).status, 200);

    // Everyone, in process.
    net.devnet.expire_sessions(None);
    expect_api_error(&net.get("/signer/v1/wallet", Some(&b.jwt)), 401, "INVALID_SESSION");
    expect_api_error(&net.get("/signer/v1/wallet", Some(&fresh)), 401, "INVALID_SESSION");
}

#[test]
fn jwts_expire_after_their_ttl() {
    let net = Net::start_with(|config| {
        let mut config = config.with_fault_injection();
        config.jwt_ttl = Duration::from_secs(1);
        config
    });
    let minted = net.mint_reply(OWNER);
    assert_eq!(minted["expiresIn"], 1);
    let jwt = minted["jwt"].as_str().unwrap();
    assert_eq!(net.get("/signer/v1/wallet", Some(jwt)).status, 200);
    sleep(Duration::from_millis(2100));
    let message =
        expect_api_error(&net.get("/signer/v1/wallet", Some(jwt)), 401, "INVALID_SESSION");
    assert!(message.contains("expired"), "{message}");
}

#[test]
fn fault_endpoints_are_off_without_fault_injection_but_rotation_is_on() {
    let net = Net::start_with(|config| config);
    for (path, body) in [
        ("/devnet/jwt/forge", json!({"count": 1})),
        ("/devnet/jwt/expire", json!({})),
        ("/devnet/faults/sweeps", json!({"count": 1, "mode": "fail"})),
    ] {
        expect_api_error(&net.post(path, None, &body), 404, "FAULT_INJECTION_OFF");
    }
    assert_eq!(net.post("/devnet/jwt/rotate", None, &json!({})).status, 200);
    // No session at all.
    expect_api_error(&net.get("/signer/v1/wallet", None), 401, "INVALID_SESSION");
    expect_api_error(&net.get("/signer/v1/wallet", Some("a.b.c")), 401, "INVALID_SESSION");
}
