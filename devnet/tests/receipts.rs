//! Receipts (`GET /ua/v1/receipts`): every incoming transfer with its range of the cumulative
//! `received`, its sender and hash; ranges covering one or several transfers; refusals; the
//! in-process `RunningDevnet::receipts`.

mod common;

use common::deposit::*;
use depositkit_core::{TokenType, U256};
use serde_json::{Value, json};

const OWNER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const OTHER: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
const SENDER_A: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";
const SENDER_B: &str = "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb";
const DEST: &str = "0x52908400098527886E0F7030069857D2E4169EE7";

fn receipts(net: &Net, user: &UaUser, chain_id: u64, token: &str, from: &str, to: &str) -> Value {
    let path = format!(
        "/ua/v1/receipts?accountId={}&chainId={chain_id}&token={token}&from={from}&to={to}",
        user.account_id
    );
    net.get_ok(user, &path)["receipts"].clone()
}

/// `(txHash, receivedBefore, receivedAfter)` of each receipt.
fn ranges(receipts: &Value) -> Vec<(String, String, String)> {
    receipts
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["txHash"].as_str().unwrap().to_owned(),
                r["receivedBefore"].as_str().unwrap().to_owned(),
                r["receivedAfter"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn one_transfer_with_its_sender() {
    let net = Net::start();
    let user = net.user(OWNER);
    let before = chrono::Utc::now().timestamp_millis();
    let deposit = net.deposit_from(&user.evm_address, 8453, "USDC", "25000000", SENDER_A);
    let found = receipts(&net, &user, 8453, "usdc", "0", "25000000");
    assert_eq!(found.as_array().unwrap().len(), 1);
    let receipt = &found[0];
    assert_eq!(receipt["txHash"], deposit["txHash"]);
    assert_eq!(receipt["sender"], SENDER_A);
    assert_eq!(receipt["rawAmount"], "25000000");
    assert_eq!(receipt["receivedBefore"], "0");
    assert_eq!(receipt["receivedAfter"], "25000000");
    let at = receipt["timestamp"].as_i64().unwrap();
    assert!((before..=chrono::Utc::now().timestamp_millis()).contains(&at), "{at}");
    // The history shows the same sender.
    let history = net.history(&user);
    assert_eq!(history[0]["change"]["from"], SENDER_A);
    assert_eq!(history[0]["transactionId"], deposit["txHash"]);
    // Any part of the range finds it; nothing else.
    assert_eq!(ranges(&receipts(&net, &user, 8453, "USDC", "24999999", "30000000")).len(), 1);
    assert_eq!(receipts(&net, &user, 8453, "USDC", "25000000", "30000000"), json!([]));
    assert_eq!(receipts(&net, &user, 8453, "USDT", "0", "25000000"), json!([]));
    assert_eq!(receipts(&net, &user, 1, "USDC", "0", "25000000"), json!([]));
}

#[test]
fn several_transfers_and_ranges_covering_two() {
    let net = Net::start();
    let user = net.user(OWNER);
    let a = net.deposit_from(&user.evm_address, 8453, "USDC", "10000000", SENDER_A);
    let b = net.deposit_from(&user.evm_address, 8453, "USDC", "20000000", SENDER_B);
    // A sweep out of the account in between changes no range: received is untouched.
    let quote = net.quote(
        &user,
        &json!({
            "accountId": user.account_id,
            "source": {"chainId": 8453, "token": "USDC", "rawAmount": "5000000"},
            "destination": {"chainId": 8453, "token": "USDC", "address": DEST},
        }),
    );
    assert_eq!(net.send_quote(&user, &quote).status, 200);
    let c = net.deposit(&user.evm_address, 8453, "USDC", "30000000");
    let (a, b, c) = (
        a["txHash"].as_str().unwrap().to_owned(),
        b["txHash"].as_str().unwrap().to_owned(),
        c["txHash"].as_str().unwrap().to_owned(),
    );
    let range = |x: &str, before: &str, after: &str| (x.to_owned(), before.into(), after.into());
    let (ra, rb, rc) = (
        range(&a, "0", "10000000"),
        range(&b, "10000000", "30000000"),
        range(&c, "30000000", "60000000"),
    );

    let all = receipts(&net, &user, 8453, "USDC", "0", "60000000");
    assert_eq!(ranges(&all), [ra.clone(), rb.clone(), rc.clone()]);
    assert_eq!(all[1]["sender"], SENDER_B);
    assert_eq!(all[2]["sender"], Value::Null);
    assert_eq!(all[2]["rawAmount"], "30000000");
    // Ranges over two transfers, partly.
    assert_eq!(
        ranges(&receipts(&net, &user, 8453, "USDC", "5000000", "30000000")),
        [ra.clone(), rb.clone()]
    );
    assert_eq!(
        ranges(&receipts(&net, &user, 8453, "USDC", "29999999", "30000001")),
        [rb.clone(), rc]
    );
    // Exactly one transfer's range.
    assert_eq!(ranges(&receipts(&net, &user, 8453, "USDC", "10000000", "30000000")), [rb]);
    assert_eq!(receipts(&net, &user, 8453, "USDC", "60000000", "99000000"), json!([]));
    assert_eq!(net.balance(&user, 8453, "USDC"), ("55000000".into(), "60000000".into()));

    // In process, without a session.
    let found = net
        .devnet
        .receipts(&user.account_id, 8453, TokenType::USDC, "5000000", "30000000")
        .unwrap();
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].sender.as_deref(), Some(SENDER_A));
    assert_eq!(
        (found[1].received_before, found[1].received_after),
        (U256::from(10_000_000u64), U256::from(30_000_000u64))
    );
    assert_eq!(found[1].tx_hash, b);
    assert!(net.devnet.receipts(&user.account_id, 8453, TokenType::USDC, "5", "5").is_err());
    assert!(net.devnet.receipts("acc_nope", 8453, TokenType::USDC, "0", "5").is_err());
    assert!(net.devnet.receipts(&user.account_id, 7, TokenType::USDC, "0", "5").is_err());
}

#[test]
fn in_process_deposits_and_solana_transfers_have_receipts() {
    let net = Net::start();
    let user = net.user(OWNER);
    let deposit = net
        .devnet
        .deposit(&user.solana_address, 101, TokenType::SOL, "2000000000", Some("solSender"))
        .unwrap();
    let found = receipts(&net, &user, 101, "SOL", "0", "1");
    assert_eq!(found[0]["txHash"], deposit.tx_hash.as_str());
    assert_eq!(found[0]["sender"], "solSender");
    assert_eq!(found[0]["receivedAfter"], "2000000000");
}

#[test]
fn bad_queries_are_refused() {
    let net = Net::start();
    let user = net.user(OWNER);
    let other = net.user(OTHER);
    net.deposit(&user.evm_address, 8453, "USDC", "10");
    let id = &user.account_id;
    for query in [
        format!("accountId={id}&chainId=8453&token=USDC&from=10&to=10"),
        format!("accountId={id}&chainId=8453&token=USDC&from=11&to=10"),
        format!("accountId={id}&chainId=7&token=USDC&from=0&to=10"),
        format!("accountId={id}&chainId=8453&token=DOGE&from=0&to=10"),
        format!("accountId={id}&chainId=8453&token=USDC&from=-1&to=10"),
        format!("accountId={id}&chainId=8453&token=USDC&from=0&to=1.5"),
        format!("accountId={id}&chainId=8453&token=USDC&from=0"),
        format!("accountId={id}&chainId=base&token=USDC&from=0&to=10"),
        "chainId=8453&token=USDC&from=0&to=10".to_owned(),
    ] {
        let reply = net.get(&format!("/ua/v1/receipts?{query}"), Some(&user.jwt));
        expect_api_error(&reply, 400, "INVALID_REQUEST");
    }
    let path = format!("/ua/v1/receipts?accountId={id}&chainId=8453&token=USDC&from=0&to=10");
    expect_api_error(&net.get(&path, Some(&other.jwt)), 403, "NOT_YOUR_ACCOUNT");
    expect_api_error(&net.get(&path, None), 401, "INVALID_SESSION");
    let unknown = "/ua/v1/receipts?accountId=acc_x&chainId=8453&token=USDC&from=0&to=10";
    expect_api_error(&net.get(unknown, Some(&user.jwt)), 403, "NOT_YOUR_ACCOUNT");
}
