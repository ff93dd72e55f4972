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

/// A user holding 0.004 ETH on Base, and a signed quote of 0.001 ETH to USDC on Arbitrum.
fn quoted_sweep(net: &Net) -> (UaUser, serde_json::Value) {
    let user = net.user(OWNER);
    net.deposit(&user.evm_address, 8453, "ETH", "4000000000000000");
    let quote = net.quote(
        &user,
        &json!({
            "accountId": user.account_id,
            "source": {"chainId": 8453, "token": "ETH", "rawAmount": "1000000000000000"},
            "destination": {"chainId": 42161, "token": "USDC", "address": DEST},
        }),
    );
    (user, quote)
}

const DEST: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";

#[test]
fn the_account_service_down_in_the_middle_of_a_sweep_then_back() {
    let net = Net::start();
    let (user, quote) = quoted_sweep(&net);
    let status_path = format!("/ua/v1/sweeps/{}", quote["quoteId"].as_str().unwrap());

    // Only the send fails: nothing moved, and the status says so.
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &Fault::status(503, 1))
        .unwrap();
    expect_api_error(&net.send_quote(&user, &quote), 503, "INJECTED_FAULT");
    expect_api_error(&net.get(&status_path, Some(&user.jwt)), 404, "NOT_SENT");
    assert_eq!(net.balance(&user, 8453, "ETH").0, "4000000000000000");

    // Then the whole service is down, for as long as it takes.
    net.devnet.inject_service_fault(Service::Ua, &Fault::status(503, 10_000)).unwrap();
    for _ in 0..3 {
        expect_api_error(&net.send_quote(&user, &quote), 503, "INJECTED_FAULT");
        expect_api_error(&net.get(&status_path, Some(&user.jwt)), 503, "INJECTED_FAULT");
        let balances = json!({"accountIds": [user.account_id]});
        let reply = net.post("/ua/v1/balances", Some(&user.jwt), &balances);
        expect_api_error(&reply, 503, "INJECTED_FAULT");
    }
    // The other services are up.
    assert_eq!(net.get("/signer/v1/wallet", Some(&user.jwt)).status, 200);

    // Back: the same quote is still unsent and goes through once.
    net.devnet.clear_faults();
    expect_api_error(&net.get(&status_path, Some(&user.jwt)), 404, "NOT_SENT");
    let sent = net.send_quote(&user, &quote);
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert_eq!(sent.json()["status"], "success");
    assert_eq!(net.send_quote(&user, &quote).json(), sent.json());
    assert_eq!(net.get_ok(&user, &status_path), sent.json());
    assert_eq!(net.balance(&user, 8453, "ETH").0, "3000000000000000");
    assert_eq!(net.ledger(DEST, 42161, "USDC"), "2465000");
}

#[test]
fn a_delayed_send_still_runs_after_the_client_gave_up() {
    let net = Net::start();
    let (user, quote) = quoted_sweep(&net);
    let status_path = format!("/ua/v1/sweeps/{}", quote["quoteId"].as_str().unwrap());
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/send"),
            &Fault::delay(Duration::from_millis(800), 1),
        )
        .unwrap();
    // A client with a 200 ms deadline gives up on the send.
    let impatient: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_millis(200)))
        .build()
        .into();
    let signature = net.sign(&user.jwt, quote["rootHash"].as_str().unwrap());
    let body = json!({"quoteId": quote["quoteId"], "signature": signature});
    let started = Instant::now();
    let outcome = impatient
        .post(&net.url("/ua/v1/sweeps/send"))
        .header("Authorization", &format!("Bearer {}", user.jwt))
        .send_json(&body);
    assert!(outcome.is_err(), "the send should have timed out");
    assert!(started.elapsed() < Duration::from_millis(700), "{:?}", started.elapsed());
    // Held: not sent yet.
    expect_api_error(&net.get(&status_path, Some(&user.jwt)), 404, "NOT_SENT");
    // After the delay the held send has run, once.
    let deadline = Instant::now() + Duration::from_secs(10);
    let done = loop {
        let reply = net.get(&status_path, Some(&user.jwt));
        if reply.status == 200 {
            break reply.json();
        }
        assert!(Instant::now() < deadline, "the held send never ran: {}", reply.body);
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(started.elapsed() >= Duration::from_millis(800), "{:?}", started.elapsed());
    assert_eq!(done["status"], "success");
    assert_eq!(net.send_quote(&user, &quote).json(), done);
    assert_eq!(net.balance(&user, 8453, "ETH").0, "3000000000000000");
    assert_eq!(net.ledger(DEST, 42161, "USDC"), "2465000");

    // A delay the client waits out is just slow.
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/balances"),
            &Fault::delay(Duration::from_millis(300), 1),
        )
        .unwrap();
    let started = Instant::now();
    assert_eq!(net.balance(&user, 8453, "ETH").0, "3000000000000000");
    assert!(started.elapsed() >= Duration::from_millis(300), "{:?}", started.elapsed());
}
