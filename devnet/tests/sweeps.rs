//! Sweeps over HTTP: quote arithmetic and refusals, sending with the owner's signature,
//! idempotency, expiry, balance changes, sweep faults, and `received` never going down.

mod common;

use std::time::Duration;

use common::deposit::*;
use depositkit_devnet::SweepFaultMode;
use serde_json::{Value, json};

const OWNER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const OTHER: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
const DEST_EVM: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";
const DEST_SOL: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const MILLI_ETH: &str = "1000000000000000";

/// `(chainId, token, rawAmount or address)` of a quote's source or destination.
type Leg<'a> = (u64, &'a str, &'a str);

fn quote_body(user: &UaUser, source: Leg, dest: Leg) -> Value {
    json!({
        "accountId": user.account_id,
        "source": {"chainId": source.0, "token": source.1, "rawAmount": source.2},
        "destination": {"chainId": dest.0, "token": dest.1, "address": dest.2},
    })
}

fn quote(net: &Net, user: &UaUser, source: Leg, dest: Leg) -> Value {
    let reply = net.post("/ua/v1/sweeps/quote", Some(&user.jwt), &quote_body(user, source, dest));
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

/// Signs the quote's rootHash with the user's wallet and sends it.
fn send(net: &Net, user: &UaUser, quote: &Value) -> common::Reply {
    let signature = net.sign(&user.jwt, quote["rootHash"].as_str().unwrap());
    net.post(
        "/ua/v1/sweeps/send",
        Some(&user.jwt),
        &json!({"quoteId": quote["quoteId"], "signature": signature}),
    )
}

/// A user holding 0.004 ETH on Base.
fn funded(net: &Net) -> UaUser {
    let user = net.user(OWNER);
    net.deposit(&user.evm_address, 8453, "ETH", "4000000000000000");
    user
}

#[test]
fn quote_math_with_and_without_the_service_fee() {
    let net = Net::start();
    let user = funded(&net);
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    assert!(q["quoteId"].as_str().unwrap().starts_with("q_"));
    assert_eq!(q["rootHash"].as_str().unwrap().len(), 66);
    assert_eq!(q["source"]["decimals"], 18);
    assert_eq!(q["source"]["rawAmount"], MILLI_ETH);
    assert_eq!(q["source"]["valueUSD"], 2.5);
    assert_eq!(q["destination"]["decimals"], 6);
    assert_eq!(q["destination"]["address"], DEST_EVM);
    assert_eq!(
        q["fees"],
        json!({"gasUSD": 0.03, "lpUSD": 0.005, "serviceUSD": 0.0, "totalUSD": 0.035})
    );
    assert_eq!(q["destination"]["rawAmount"], "2465000");
    let expires = q["expiresAt"].as_i64().unwrap() - chrono::Utc::now().timestamp_millis();
    assert!((55_000..=60_000).contains(&expires), "{expires}");

    // With X-UA-Project-Id: 1% more (the protocol's example).
    let body = quote_body(&user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    let reply = net.call(
        "POST",
        "/ua/v1/sweeps/quote",
        Some(&user.jwt),
        &[("X-UA-Project-Id", "host-project")],
        Some(&body),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let q = reply.json();
    assert_eq!(
        q["fees"],
        json!({"gasUSD": 0.03, "lpUSD": 0.005, "serviceUSD": 0.025, "totalUSD": 0.06})
    );
    assert_eq!(q["destination"]["rawAmount"], "2440000");

    // Ethereum gas is 0.50; USDC on BNB Chain has 18 decimals; prices come from the table.
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (1, "USDC", DEST_EVM));
    assert_eq!(q["fees"]["gasUSD"], 0.5);
    assert_eq!(q["destination"]["rawAmount"], "1995000");
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (56, "USDC", DEST_EVM));
    assert_eq!(q["destination"]["decimals"], 18);
    assert_eq!(q["destination"]["rawAmount"], "2465000000000000000");
    let reply = net.call(
        "PUT",
        "/devnet/prices",
        None,
        &[],
        Some(&json!({"ETH": 3000, "gasUSD": {"42161": 0.0}})),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["ETH"], 3000.0);
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    assert_eq!(q["source"]["valueUSD"], 3.0);
    assert_eq!(q["fees"]["gasUSD"], 0.0);
    assert_eq!(q["destination"]["rawAmount"], "2994000");
    net.devnet.set_price(depositkit_core::TokenType::USDC, 2.0).unwrap();
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    assert_eq!(q["destination"]["rawAmount"], "1497000");
    let reply = net.call("PUT", "/devnet/prices", None, &[], Some(&json!({"ETH": -1})));
    expect_api_error(&reply, 400, "INVALID_REQUEST");
}

#[test]
fn quote_refusals() {
    let net = Net::start();
    let user = funded(&net);
    let cases: [(Leg, Leg, u16, &str); 10] = [
        ((8453, "ETH", MILLI_ETH), (8453, "USDT", DEST_EVM), 400, "UNSUPPORTED_ROUTE"),
        ((8453, "ETH", MILLI_ETH), (196, "USDC", DEST_EVM), 400, "UNSUPPORTED_ROUTE"),
        ((8453, "ETH", MILLI_ETH), (101, "ETH", DEST_SOL), 400, "UNSUPPORTED_ROUTE"),
        ((8453, "ETH", "4000000000000001"), (42161, "USDC", DEST_EVM), 400, "INSUFFICIENT_BALANCE"),
        ((1, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM), 400, "INSUFFICIENT_BALANCE"),
        ((8453, "ETH", "1000"), (42161, "USDC", DEST_EVM), 400, "BELOW_MINIMUM"),
        ((8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_SOL), 400, "INVALID_REQUEST"),
        ((8453, "ETH", MILLI_ETH), (101, "USDC", DEST_EVM), 400, "INVALID_REQUEST"),
        ((8453, "ETH", "-1"), (42161, "USDC", DEST_EVM), 400, "INVALID_REQUEST"),
        ((8453, "DOGE", MILLI_ETH), (42161, "USDC", DEST_EVM), 400, "INVALID_REQUEST"),
    ];
    for (source, dest, status, code) in cases {
        let reply =
            net.post("/ua/v1/sweeps/quote", Some(&user.jwt), &quote_body(&user, source, dest));
        expect_api_error(&reply, status, code);
    }
    // Another wallet cannot quote this account; no session at all: 401.
    let other = net.user(OTHER);
    let body = quote_body(&user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    expect_api_error(
        &net.post("/ua/v1/sweeps/quote", Some(&other.jwt), &body),
        403,
        "NOT_YOUR_ACCOUNT",
    );
    expect_api_error(&net.post("/ua/v1/sweeps/quote", None, &body), 401, "INVALID_SESSION");
    // Nothing moved.
    assert_eq!(net.balance(&user, 8453, "ETH").0, "4000000000000000");
}

#[test]
fn send_moves_exactly_the_quote_once() {
    let net = Net::start();
    let user = funded(&net);
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    let quote_id = q["quoteId"].as_str().unwrap();
    let status_path = format!("/ua/v1/sweeps/{quote_id}");
    expect_api_error(&net.get(&status_path, Some(&user.jwt)), 404, "NOT_SENT");

    let reply = send(&net, &user, &q);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sent = reply.json();
    let tx = sent["transactionId"].as_str().unwrap();
    assert_eq!(tx.len(), 66);
    assert_eq!(sent["status"], "success");
    assert_eq!(sent["quoteId"], quote_id);
    assert_eq!(sent["deliveredRawAmount"], q["destination"]["rawAmount"]);
    assert_eq!(sent["explorerUrl"], format!("https://arbiscan.io/tx/{tx}"));
    assert_eq!(
        net.balance(&user, 8453, "ETH"),
        ("3000000000000000".into(), "4000000000000000".into())
    );
    assert_eq!(net.ledger(DEST_EVM, 42161, "USDC"), "2465000");
    assert_eq!(
        net.devnet
            .ledger_balance(&DEST_EVM.to_lowercase(), 42161, depositkit_core::TokenType::USDC)
            .unwrap(),
        "2465000"
    );

    // The same quote again: the same answer, no money moved twice.
    let again = send(&net, &user, &q);
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.json(), sent);
    assert_eq!(net.balance(&user, 8453, "ETH").0, "3000000000000000");
    assert_eq!(net.ledger(DEST_EVM, 42161, "USDC"), "2465000");
    assert_eq!(net.get(&status_path, Some(&user.jwt)).json(), sent);

    // The history shows the sweep first.
    let history = net
        .get(&format!("/ua/v1/transactions?accountId={}", user.account_id), Some(&user.jwt))
        .json();
    let latest = &history["transactions"][0];
    assert_eq!(latest["tag"], "sweep");
    assert_eq!(latest["transactionId"], tx);
    assert_eq!(latest["quoteId"], quote_id);
    assert_eq!(latest["change"]["to"], DEST_EVM);
    assert_eq!(latest["change"]["from"], user.evm_address);
    assert_eq!(latest["change"]["amount"], "0.001");
    assert_eq!(latest["toChains"], json!([42161]));
    assert_eq!(history["transactions"].as_array().unwrap().len(), 2);

    // Another wallet cannot see it.
    let other = net.user(OTHER);
    expect_api_error(&net.get(&status_path, Some(&other.jwt)), 403, "NOT_YOUR_ACCOUNT");
    expect_api_error(&net.get("/ua/v1/sweeps/q_unknown", Some(&user.jwt)), 404, "NOT_SENT");
}

#[test]
fn solana_destination_keeps_the_address_case() {
    let net = Net::start();
    let user = funded(&net);
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (101, "USDC", DEST_SOL));
    assert_eq!(q["destination"]["address"], DEST_SOL);
    assert_eq!(q["fees"]["gasUSD"], 0.01);
    assert_eq!(q["destination"]["rawAmount"], "2485000");
    let sent = send(&net, &user, &q).json();
    assert_eq!(
        sent["explorerUrl"],
        format!("https://solscan.io/tx/{}", sent["transactionId"].as_str().unwrap())
    );
    assert_eq!(net.ledger(DEST_SOL, 101, "USDC"), "2485000");
    assert_eq!(net.ledger(&DEST_SOL.to_lowercase(), 101, "USDC"), "0");
}

#[test]
fn a_sweep_to_another_account_is_a_deposit_there() {
    let net = Net::start();
    let user = funded(&net);
    let other = net.user(OTHER);
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (8453, "USDC", &other.evm_address));
    assert_eq!(send(&net, &user, &q).status, 200);
    assert_eq!(net.balance(&other, 8453, "USDC"), ("2465000".into(), "2465000".into()));
    let history = net
        .get(&format!("/ua/v1/transactions?accountId={}", other.account_id), Some(&other.jwt))
        .json();
    assert_eq!(history["transactions"][0]["tag"], "receive");
    assert_eq!(history["transactions"][0]["change"]["from"], user.evm_address);
}

#[test]
fn bad_signatures_are_refused() {
    let net = Net::start();
    let user = funded(&net);
    let other = net.user(OTHER);
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    let root = q["rootHash"].as_str().unwrap();
    let wrong_message =
        net.sign(&user.jwt, "0x2222222222222222222222222222222222222222222222222222222222222222");
    let wrong_signer = net.sign(&other.jwt, root);
    for signature in [wrong_message.as_str(), wrong_signer.as_str(), "0x1234", "nope"] {
        let body = json!({"quoteId": q["quoteId"], "signature": signature});
        let reply = net.post("/ua/v1/sweeps/send", Some(&user.jwt), &body);
        expect_api_error(&reply, 400, "BAD_SIGNATURE");
    }
    let body = json!({"quoteId": "q_unknown", "signature": wrong_message});
    expect_api_error(&net.post("/ua/v1/sweeps/send", Some(&user.jwt), &body), 404, "UNKNOWN_QUOTE");
    assert_eq!(net.balance(&user, 8453, "ETH").0, "4000000000000000");
    // The right signature still works afterwards.
    assert_eq!(send(&net, &user, &q).status, 200);
}

#[test]
fn expired_quotes_are_gone() {
    let net = Net::start_with(|config| {
        let mut config = config.with_fault_injection();
        config.quote_ttl = Duration::from_millis(150);
        config
    });
    let user = funded(&net);
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    sleep(Duration::from_millis(250));
    expect_api_error(&send(&net, &user, &q), 410, "QUOTE_EXPIRED");
    assert_eq!(net.balance(&user, 8453, "ETH").0, "4000000000000000");
    assert_eq!(net.ledger(DEST_EVM, 42161, "USDC"), "0");
}

#[test]
fn a_balance_spent_since_the_quote_conflicts() {
    let net = Net::start();
    let user = funded(&net);
    let all = "4000000000000000";
    let first = quote(&net, &user, (8453, "ETH", all), (42161, "USDC", DEST_EVM));
    let second = quote(&net, &user, (8453, "ETH", all), (42161, "USDC", DEST_EVM));
    assert_eq!(send(&net, &user, &first).status, 200);
    expect_api_error(&send(&net, &user, &second), 409, "INSUFFICIENT_BALANCE");
    assert_eq!(net.balance(&user, 8453, "ETH"), ("0".into(), all.into()));
    expect_api_error(
        &net.get(
            &format!("/ua/v1/sweeps/{}", second["quoteId"].as_str().unwrap()),
            Some(&user.jwt),
        ),
        404,
        "NOT_SENT",
    );
}

#[test]
fn sweep_faults_reject_or_fail_without_moving_money() {
    let net = Net::start();
    let user = funded(&net);
    let reply = net.post("/devnet/faults/sweeps", None, &json!({"count": 1, "mode": "reject"}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["sweeps"], json!({"mode": "reject", "count": 1}));
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    expect_api_error(&send(&net, &user, &q), 400, "ROUTE_FAILED");
    expect_api_error(
        &net.get(&format!("/ua/v1/sweeps/{}", q["quoteId"].as_str().unwrap()), Some(&user.jwt)),
        404,
        "NOT_SENT",
    );
    assert_eq!(net.balance(&user, 8453, "ETH").0, "4000000000000000");
    // Rejected before anything happened: the same quote can be sent now.
    assert_eq!(send(&net, &user, &q).json()["status"], "success");

    net.devnet.fail_next_sweeps(1, SweepFaultMode::Fail);
    let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
    let reply = send(&net, &user, &q);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let failed = reply.json();
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["deliveredRawAmount"], "0");
    assert!(failed["error"].is_string());
    assert!(failed.get("explorerUrl").is_none());
    assert_eq!(net.balance(&user, 8453, "ETH").0, "3000000000000000");
    assert_eq!(net.ledger(DEST_EVM, 42161, "USDC"), "2465000");
    // Idempotent too: the failure is the quote's outcome.
    assert_eq!(send(&net, &user, &q).json(), failed);
    assert_eq!(
        net.get(&format!("/ua/v1/sweeps/{}", q["quoteId"].as_str().unwrap()), Some(&user.jwt))
            .json(),
        failed
    );
    let bad = net.post("/devnet/faults/sweeps", None, &json!({"count": 1, "mode": "explode"}));
    expect_api_error(&bad, 400, "INVALID_REQUEST");
}

#[test]
fn received_never_decreases() {
    let net = Net::start();
    let user = funded(&net);
    let mut last_received = 0u128;
    for step in 0..3 {
        let q = quote(&net, &user, (8453, "ETH", MILLI_ETH), (42161, "USDC", DEST_EVM));
        assert_eq!(send(&net, &user, &q).status, 200);
        if step == 1 {
            // A deposit arriving between sweeps raises received by exactly its amount.
            net.deposit(&user.evm_address, 8453, "ETH", "500000000000000");
        }
        let (raw, received) = net.balance(&user, 8453, "ETH");
        let received: u128 = received.parse().unwrap();
        assert!(received >= last_received, "step {step}: {received} < {last_received}");
        last_received = received;
        assert!(raw.parse::<u128>().unwrap() <= received);
    }
    assert_eq!(
        net.balance(&user, 8453, "ETH"),
        ("1500000000000000".into(), "4500000000000000".into())
    );
}
