//! Refunds over HTTP: `"purpose": "refund"` quotes (gas-only fees, same chain and token, no
//! destination matrix), sending them back to the receiver's ledger once, `depositId` echoed
//! everywhere, and the `refund` tag in the history.

mod common;

use common::deposit::*;
use depositkit_devnet::SweepFaultMode;
use serde_json::{Value, json};

const OWNER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const OTHER: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
const SENDER: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";
const SOL_ADDRESS: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const USDC_25: &str = "25000000";

/// A refund quote body: `source` = (chainId, token, rawAmount), `dest` = (chainId, token,
/// address).
fn refund_body(
    user: &UaUser,
    deposit_id: Option<&str>,
    source: (u64, &str, &str),
    dest: (u64, &str, &str),
) -> Value {
    let mut body = json!({
        "accountId": user.account_id,
        "purpose": "refund",
        "source": {"chainId": source.0, "token": source.1, "rawAmount": source.2},
        "destination": {"chainId": dest.0, "token": dest.1, "address": dest.2},
    });
    if let Some(id) = deposit_id {
        body["depositId"] = json!(id);
    }
    body
}

/// A user who received 25 USDC on Base from `SENDER`.
fn funded(net: &Net) -> UaUser {
    let user = net.user(OWNER);
    net.deposit_from(&user.evm_address, 8453, "USDC", USDC_25, SENDER);
    user
}

#[test]
fn refund_quotes_pay_the_gas_only() {
    let net = Net::start();
    let user = funded(&net);
    // Even with X-UA-Project-Id: no LP or service fee on a refund.
    let body = refund_body(&user, Some("dep_1"), (8453, "USDC", USDC_25), (8453, "usdc", SENDER));
    let reply = net.call(
        "POST",
        "/ua/v1/sweeps/quote",
        Some(&user.jwt),
        &[("X-UA-Project-Id", "host-project")],
        Some(&body),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let q = reply.json();
    assert_eq!(q["purpose"], "refund");
    assert_eq!(q["depositId"], "dep_1");
    assert_eq!(q["source"]["valueUSD"], 25.0);
    assert_eq!(
        q["fees"],
        json!({"gasUSD": 0.03, "lpUSD": 0.0, "serviceUSD": 0.0, "totalUSD": 0.03})
    );
    assert_eq!(q["destination"]["token"], "USDC");
    assert_eq!(q["destination"]["chainId"], 8453);
    assert_eq!(q["destination"]["address"], SENDER);
    assert_eq!(q["destination"]["decimals"], 6);
    assert_eq!(q["destination"]["rawAmount"], "24970000");

    // Ethereum gas is 0.50 USD; ETH pays its gas in ETH (0.03 USD at 2500 = 0.000012 ETH).
    net.deposit(&user.evm_address, 1, "USDC", "1000000");
    let q =
        net.quote(&user, &refund_body(&user, None, (1, "USDC", "1000000"), (1, "USDC", SENDER)));
    assert_eq!(q["destination"]["rawAmount"], "500000");
    assert!(q.get("depositId").is_none());
    net.deposit(&user.evm_address, 8453, "ETH", "1000000000000000");
    let body = refund_body(&user, None, (8453, "ETH", "1000000000000000"), (8453, "ETH", SENDER));
    let q = net.quote(&user, &body);
    assert_eq!(q["destination"]["rawAmount"], "988000000000000");
    assert_eq!(q["fees"]["totalUSD"], 0.03);

    // A plain sweep quote says its purpose too.
    let sweep = json!({
        "accountId": user.account_id,
        "source": {"chainId": 8453, "token": "USDC", "rawAmount": USDC_25},
        "destination": {"chainId": 42161, "token": "USDC", "address": SENDER},
    });
    assert_eq!(net.quote(&user, &sweep)["purpose"], "sweep");
}

#[test]
fn refunds_go_back_on_the_source_chain_in_the_source_token() {
    let net = Net::start();
    let user = funded(&net);
    let long_id = "d".repeat(129);
    let cases: [(Value, &str); 7] = [
        // Another chain or another token.
        (
            refund_body(&user, None, (8453, "USDC", USDC_25), (42161, "USDC", SENDER)),
            "INVALID_REQUEST",
        ),
        (
            refund_body(&user, None, (8453, "USDC", USDC_25), (8453, "USDT", SENDER)),
            "INVALID_REQUEST",
        ),
        // An address of the wrong family.
        (
            refund_body(&user, None, (8453, "USDC", USDC_25), (8453, "USDC", SOL_ADDRESS)),
            "INVALID_REQUEST",
        ),
        // Gas (0.03 USD) not covered.
        (
            refund_body(&user, None, (8453, "USDC", "30000"), (8453, "USDC", SENDER)),
            "BELOW_MINIMUM",
        ),
        (
            refund_body(&user, None, (8453, "USDC", "25000001"), (8453, "USDC", SENDER)),
            "INSUFFICIENT_BALANCE",
        ),
        (
            refund_body(&user, Some(&long_id), (8453, "USDC", USDC_25), (8453, "USDC", SENDER)),
            "INVALID_REQUEST",
        ),
        (
            {
                let mut body =
                    refund_body(&user, None, (8453, "USDC", USDC_25), (8453, "USDC", SENDER));
                body["purpose"] = json!("gift");
                body
            },
            "INVALID_REQUEST",
        ),
    ];
    for (body, code) in cases {
        let reply = net.post("/ua/v1/sweeps/quote", Some(&user.jwt), &body);
        expect_api_error(&reply, 400, code);
    }
    // Just above the gas: one smallest unit goes back.
    let body = refund_body(&user, None, (8453, "USDC", "30001"), (8453, "USDC", SENDER));
    assert_eq!(net.quote(&user, &body)["destination"]["rawAmount"], "1");
    // A depositId of 128 characters is fine.
    let id = "d".repeat(128);
    let body = refund_body(&user, Some(&id), (8453, "USDC", USDC_25), (8453, "USDC", SENDER));
    assert_eq!(net.quote(&user, &body)["depositId"], id);

    // BTC on Polygon can be refunded though it can be delivered nowhere.
    net.deposit(&user.evm_address, 137, "BTC", "100000000");
    let sweep = json!({
        "accountId": user.account_id,
        "source": {"chainId": 137, "token": "BTC", "rawAmount": "100000000"},
        "destination": {"chainId": 137, "token": "BTC", "address": SENDER},
    });
    let reply = net.post("/ua/v1/sweeps/quote", Some(&user.jwt), &sweep);
    expect_api_error(&reply, 400, "UNSUPPORTED_ROUTE");
    let body = refund_body(&user, None, (137, "BTC", "100000000"), (137, "BTC", SENDER));
    let q = net.quote(&user, &body);
    // 0.03 USD of gas at 60000 USD = 50 satoshi.
    assert_eq!(q["destination"]["rawAmount"], "99999950");
    assert_eq!(q["destination"]["decimals"], 8);

    // Another wallet cannot refund from this account.
    let other = net.user(OTHER);
    let body = refund_body(&user, None, (8453, "USDC", USDC_25), (8453, "USDC", SENDER));
    let reply = net.post("/ua/v1/sweeps/quote", Some(&other.jwt), &body);
    expect_api_error(&reply, 403, "NOT_YOUR_ACCOUNT");
    assert_eq!(net.balance(&user, 8453, "USDC"), (USDC_25.into(), USDC_25.into()));
}

#[test]
fn a_refund_moves_the_money_back_once() {
    let net = Net::start();
    let user = funded(&net);
    let body = refund_body(&user, Some("dep_7"), (8453, "USDC", USDC_25), (8453, "USDC", SENDER));
    let q = net.quote(&user, &body);
    let quote_id = q["quoteId"].as_str().unwrap();
    let status_path = format!("/ua/v1/sweeps/{quote_id}");
    expect_api_error(&net.get(&status_path, Some(&user.jwt)), 404, "NOT_SENT");

    let reply = net.send_quote(&user, &q);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sent = reply.json();
    let tx = sent["transactionId"].as_str().unwrap();
    assert_eq!(sent["status"], "success");
    assert_eq!(sent["quoteId"], quote_id);
    assert_eq!(sent["depositId"], "dep_7");
    assert_eq!(sent["deliveredRawAmount"], "24970000");
    assert_eq!(sent["explorerUrl"], format!("https://basescan.org/tx/{tx}"));
    // The account paid exactly the source amount; received is untouched.
    assert_eq!(net.balance(&user, 8453, "USDC"), ("0".into(), USDC_25.into()));
    assert_eq!(net.ledger(SENDER, 8453, "USDC"), "24970000");

    // Idempotent per quote: the same answer, nothing moved twice.
    let again = net.send_quote(&user, &q);
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.json(), sent);
    assert_eq!(net.get_ok(&user, &status_path), sent);
    assert_eq!(net.ledger(SENDER, 8453, "USDC"), "24970000");

    // The history lists it as a refund with its depositId; so does the lookup by id.
    let history = net.history(&user);
    assert_eq!(history.len(), 2);
    let refund = &history[0];
    assert_eq!(refund["tag"], "refund");
    assert_eq!(refund["transactionId"], tx);
    assert_eq!(refund["quoteId"], quote_id);
    assert_eq!(refund["depositId"], "dep_7");
    assert_eq!(refund["status"], 1);
    assert_eq!(refund["change"]["rawAmount"], USDC_25);
    assert_eq!(refund["change"]["from"], user.evm_address);
    assert_eq!(refund["change"]["to"], SENDER);
    assert_eq!(refund["fromChains"], json!([8453]));
    assert_eq!(refund["toChains"], json!([8453]));
    assert_eq!(history[1]["tag"], "receive");
    assert!(history[1].get("depositId").is_none());
    let path = format!("/ua/v1/transactions/{tx}?accountId={}", user.account_id);
    assert_eq!(&net.get_ok(&user, &path), refund);
}

#[test]
fn a_refund_to_a_deposit_address_is_a_deposit_there() {
    let net = Net::start();
    let user = funded(&net);
    let other = net.user(OTHER);
    let body = refund_body(
        &user,
        None,
        (8453, "USDC", "10000000"),
        (8453, "USDC", &other.evm_address.to_lowercase()),
    );
    let q = net.quote(&user, &body);
    let sent = net.send_quote(&user, &q).json();
    assert!(sent.get("depositId").is_none());
    assert_eq!(net.balance(&other, 8453, "USDC"), ("9970000".into(), "9970000".into()));
    assert_eq!(net.balance(&user, 8453, "USDC"), ("15000000".into(), USDC_25.into()));
    let received = &net.history(&other)[0];
    assert_eq!(received["tag"], "receive");
    assert_eq!(received["transactionId"], sent["transactionId"]);
    assert_eq!(received["change"]["from"], user.evm_address);
    let receipts = net.get_ok(
        &other,
        &format!(
            "/ua/v1/receipts?accountId={}&chainId=8453&token=USDC&from=0&to=9970000",
            other.account_id
        ),
    );
    assert_eq!(receipts["receipts"][0]["sender"], user.evm_address);
}

#[test]
fn failed_refunds_keep_the_money_and_are_listed_failed() {
    let net = Net::start();
    let user = funded(&net);
    net.devnet.fail_next_sweeps(1, SweepFaultMode::Fail);
    let body = refund_body(&user, Some("dep_9"), (8453, "USDC", USDC_25), (8453, "USDC", SENDER));
    let q = net.quote(&user, &body);
    let failed = net.send_quote(&user, &q).json();
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["depositId"], "dep_9");
    assert_eq!(failed["deliveredRawAmount"], "0");
    assert_eq!(net.balance(&user, 8453, "USDC"), (USDC_25.into(), USDC_25.into()));
    assert_eq!(net.ledger(SENDER, 8453, "USDC"), "0");
    let listed = &net.history(&user)[0];
    assert_eq!((&listed["tag"], &listed["status"]), (&json!("refund"), &json!(-1)));
    assert_eq!(listed["change"]["amount"], "0");
    // The quote's outcome is final: a new quote refunds.
    let q = net.quote(&user, &body);
    assert_eq!(net.send_quote(&user, &q).json()["status"], "success");
    assert_eq!(net.ledger(SENDER, 8453, "USDC"), "24970000");
}
