//! HTTP faults of the deposit services: per service, per path, over HTTP and in process,
//! listed and cleared together with the user-lookup faults.

mod common;

use std::time::{Duration, Instant};

use common::deposit::*;
use depositkit_devnet::{Fault, Service};
use serde_json::json;

const OWNER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

#[test]
fn status_with_retry_after_then_normal_service() {
    let net = Net::start();
    let user = net.user(OWNER);
    let body = json!({"service": "ua", "status": 429, "retryAfter": 1, "count": 2});
    let reply = net.post("/devnet/faults", None, &body);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.json()["pending"],
        json!([{"service": "ua", "status": 429, "retryAfter": 1, "count": 2}])
    );

    let balances = json!({"accountIds": [user.account_id]});
    for _ in 0..2 {
        let reply = net.post("/ua/v1/balances", Some(&user.jwt), &balances);
        let message = expect_api_error(&reply, 429, "INJECTED_FAULT");
        assert!(message.contains("429"), "{message}");
        assert_eq!(reply.header("retry-after"), Some("1"));
    }
    assert_eq!(net.post("/ua/v1/balances", Some(&user.jwt), &balances).status, 200);
    // Other services were never affected.
    assert_eq!(net.get("/signer/v1/wallet", Some(&user.jwt)).status, 200);
}

#[test]
fn faults_per_path_and_delays() {
    let net = Net::start();
    let user = net.user(OWNER);
    let body = json!({"service": "ua", "path": "/ua/v1/sweeps", "status": 503, "count": 1});
    assert_eq!(net.post("/devnet/faults", None, &body).status, 200);
    let balances = json!({"accountIds": [user.account_id]});
    assert_eq!(net.post("/ua/v1/balances", Some(&user.jwt), &balances).status, 200);
    let reply = net.get("/ua/v1/sweeps/q_x", Some(&user.jwt));
    expect_api_error(&reply, 503, "INJECTED_FAULT");
    assert_eq!(reply.header("retry-after"), None);

    let body = json!({"service": "jwt", "path": "/v1/jwt", "delayMs": 200});
    assert_eq!(net.post("/devnet/faults", None, &body).status, 200);
    assert_eq!(net.get("/jwt/.well-known/jwks.json", None).status, 200);
    let started = Instant::now();
    net.mint(OWNER);
    assert!(started.elapsed() >= Duration::from_millis(200), "{:?}", started.elapsed());

    // In process: the signer only.
    net.devnet.inject_service_fault(Service::Signer, &Fault::status(500, 1)).unwrap();
    expect_api_error(&net.get("/signer/v1/wallet", Some(&user.jwt)), 500, "INJECTED_FAULT");
    assert_eq!(net.get("/signer/v1/wallet", Some(&user.jwt)).status, 200);
    assert!(net.devnet.inject_service_fault(Service::Ua, &Fault::status(200, 1)).is_err());
}

#[test]
fn listing_and_clearing_cover_every_service() {
    let net = Net::start();
    for body in [
        json!({"status": 502, "count": 3}),
        json!({"service": "user-rpc", "delayMs": 10}),
        json!({"service": "signer", "status": 500}),
    ] {
        let reply = net.post("/devnet/faults", None, &body);
        assert_eq!(reply.status, 200, "{body}: {}", reply.body);
    }
    net.post("/devnet/faults/sweeps", None, &json!({"count": 2, "mode": "fail"}));
    net.post("/devnet/jwt/forge", None, &json!({"count": 1}));
    let listed = net.get("/devnet/faults", None).json();
    assert_eq!(
        listed["pending"],
        json!([
            {"status": 502, "count": 3},
            {"delayMs": 10, "count": 1},
            {"service": "signer", "status": 500, "count": 1},
        ])
    );
    assert_eq!(listed["sweeps"], json!({"mode": "fail", "count": 2}));
    assert_eq!(listed["forgedJwts"], 1);

    let cleared = net.call("DELETE", "/devnet/faults", None, &[], None).json();
    assert_eq!(cleared["pending"], json!([]));
    assert!(cleared["sweeps"].is_null());
    assert_eq!(cleared["forgedJwts"], 0);
    let jwt = net.mint(OWNER);
    assert_eq!(net.get("/signer/v1/wallet", Some(&jwt)).status, 200);

    for bad in [
        json!({"service": "nope", "status": 500}),
        json!({"service": "user-rpc", "path": "/x", "status": 500}),
        json!({"service": "ua", "path": "v1", "status": 500}),
        json!({"service": "ua"}),
    ] {
        let reply = net.post("/devnet/faults", None, &bad);
        assert_eq!(reply.status, 400, "{bad}");
        assert!(reply.json()["error"].is_string());
    }
}
