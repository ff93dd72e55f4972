//! The history beyond plain pages: one token's transactions by cursor
//! (`GET /ua/v1/transactions/by-token`), stable while new transfers arrive, with refused
//! cursors; and single transactions (`GET /ua/v1/transactions/{transactionId}`).

mod common;

use common::deposit::*;
use serde_json::{Value, json};

const OWNER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const OTHER: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
const DEST: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";
const USDC_BASE: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ZERO: &str = "0x0000000000000000000000000000000000000000";

fn by_token_path(user: &UaUser, chain_id: u64, address: &str, extra: &str) -> String {
    format!(
        "/ua/v1/transactions/by-token?accountId={}&chainId={chain_id}&address={address}{extra}",
        user.account_id
    )
}

/// The `change.rawAmount`s of a page.
fn amounts(page: &Value) -> Vec<String> {
    page["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["change"]["rawAmount"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn one_token_by_cursor_across_three_pages() {
    let net = Net::start();
    let user = net.user(OWNER);
    // Seven USDC deposits on Base (1..=7 USDC), interleaved with other tokens and chains.
    for n in 1..=7u64 {
        net.deposit(&user.evm_address, 8453, "USDC", &(n * 1_000_000).to_string());
        net.deposit(&user.evm_address, 8453, "ETH", "1000000000000000");
        net.deposit(&user.evm_address, 42161, "USDC", "1000000");
    }
    let first = net.get_ok(&user, &by_token_path(&user, 8453, USDC_BASE, "&pageSize=3"));
    assert_eq!(amounts(&first), ["7000000", "6000000", "5000000"]);
    let entry = &first["transactions"][0];
    assert_eq!(entry["targetToken"]["address"], USDC_BASE);
    assert_eq!(entry["targetToken"]["chainId"], 8453);
    assert_eq!(entry["tag"], "receive");
    let token = first["nextPageToken"].as_str().unwrap().to_owned();

    // New transfers meanwhile do not shift the next pages.
    net.deposit(&user.evm_address, 8453, "USDC", "8000000");
    let path = by_token_path(&user, 8453, &USDC_BASE.to_lowercase(), "&pageSize=3");
    let second = net.get_ok(&user, &format!("{path}&pageToken={token}"));
    assert_eq!(amounts(&second), ["4000000", "3000000", "2000000"]);
    let token = second["nextPageToken"].as_str().unwrap().to_owned();
    let third = net.get_ok(&user, &format!("{path}&pageToken={token}"));
    assert_eq!(amounts(&third), ["1000000"]);
    assert!(third.get("nextPageToken").is_none(), "{third}");
    // The same token again gives the same page.
    assert_eq!(net.get_ok(&user, &format!("{path}&pageToken={token}")), third);

    // From the start: the newest first; a page exactly at the end has no next token.
    let all = net.get_ok(&user, &by_token_path(&user, 8453, USDC_BASE, "&pageSize=8"));
    assert_eq!(amounts(&all).len(), 8);
    assert!(all.get("nextPageToken").is_none(), "{all}");
    let default = net.get_ok(&user, &by_token_path(&user, 8453, USDC_BASE, ""));
    assert_eq!(amounts(&default).len(), 8);

    // Native ETH is named by the zero address; USDC on Arbitrum is another query.
    let eth = net.get_ok(&user, &by_token_path(&user, 8453, ZERO, "&pageSize=100"));
    assert_eq!(amounts(&eth), vec!["1000000000000000"; 7]);
    assert_eq!(eth["transactions"][0]["targetToken"]["symbol"], "ETH");
    let arb = by_token_path(&user, 42161, "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "");
    assert_eq!(amounts(&net.get_ok(&user, &arb)), vec!["1000000"; 7]);
    // A token the account never had: an empty last page.
    let usdt = by_token_path(&user, 8453, "0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2", "");
    assert_eq!(net.get_ok(&user, &usdt), json!({"transactions": []}));

    // Sweeps and refunds of the token are listed too (the token that left).
    let quote = net.quote(
        &user,
        &json!({
            "accountId": user.account_id,
            "depositId": "dep_1",
            "source": {"chainId": 8453, "token": "USDC", "rawAmount": "2000000"},
            "destination": {"chainId": 42161, "token": "USDC", "address": DEST},
        }),
    );
    assert_eq!(quote["depositId"], "dep_1");
    let sent = net.send_quote(&user, &quote).json();
    assert_eq!(sent["depositId"], "dep_1");
    let newest = net.get_ok(&user, &by_token_path(&user, 8453, USDC_BASE, "&pageSize=1"));
    assert_eq!(newest["transactions"][0]["tag"], "sweep");
    assert_eq!(newest["transactions"][0]["transactionId"], sent["transactionId"]);
    assert_eq!(newest["transactions"][0]["depositId"], "dep_1");
}

#[test]
fn unknown_and_stale_page_tokens_are_refused() {
    let net = Net::start();
    let user = net.user(OWNER);
    let other = net.user(OTHER);
    for _ in 0..3 {
        net.deposit(&user.evm_address, 8453, "USDC", "1000000");
        net.deposit(&other.evm_address, 8453, "USDC", "1000000");
        net.deposit(&user.evm_address, 8453, "ETH", "1000000000000000");
    }
    let page = net.get_ok(&user, &by_token_path(&user, 8453, USDC_BASE, "&pageSize=1"));
    let token = page["nextPageToken"].as_str().unwrap().to_owned();
    let other_page = net.get_ok(&other, &by_token_path(&other, 8453, USDC_BASE, "&pageSize=1"));
    let other_token = other_page["nextPageToken"].as_str().unwrap().to_owned();
    for bad in ["garbage", "%21%21", "djE6eDp5", other_token.as_str()] {
        let path = by_token_path(&user, 8453, USDC_BASE, &format!("&pageToken={bad}"));
        let message = expect_api_error(&net.get(&path, Some(&user.jwt)), 400, "INVALID_REQUEST");
        assert!(message.contains("pageToken"), "{message}");
    }
    // A token only serves the query it came from (here: another token of the same account).
    let path = by_token_path(&user, 8453, ZERO, &format!("&pageToken={token}"));
    expect_api_error(&net.get(&path, Some(&user.jwt)), 400, "INVALID_REQUEST");
    let path = by_token_path(&user, 1, USDC_BASE, &format!("&pageToken={token}"));
    expect_api_error(&net.get(&path, Some(&user.jwt)), 400, "INVALID_REQUEST");

    for bad in [
        by_token_path(&user, 8453, USDC_BASE, "&pageSize=0"),
        by_token_path(&user, 8453, USDC_BASE, "&pageSize=101"),
        by_token_path(&user, 7, USDC_BASE, ""),
        by_token_path(&user, 8453, "0x1234", ""),
        by_token_path(&user, 101, USDC_BASE, ""),
        format!("/ua/v1/transactions/by-token?accountId={}&chainId=8453", user.account_id),
    ] {
        expect_api_error(&net.get(&bad, Some(&user.jwt)), 400, "INVALID_REQUEST");
    }
    let path = by_token_path(&user, 8453, USDC_BASE, "");
    expect_api_error(&net.get(&path, Some(&other.jwt)), 403, "NOT_YOUR_ACCOUNT");
    expect_api_error(&net.get(&path, None), 401, "INVALID_SESSION");
}

#[test]
fn single_transactions() {
    let net = Net::start();
    let user = net.user(OWNER);
    let other = net.user(OTHER);
    let deposit = net.deposit_from(&user.evm_address, 8453, "USDC", "3000000", DEST);
    let tx = deposit["txHash"].as_str().unwrap();
    let path = |id: &str| format!("/ua/v1/transactions/{id}?accountId={}", user.account_id);
    let found = net.get_ok(&user, &path(tx));
    assert_eq!(found, net.history(&user)[0]);
    assert_eq!(found["tag"], "receive");
    assert_eq!(found["change"]["from"], DEST);
    // Hashes compare case-insensitively.
    assert_eq!(net.get_ok(&user, &path(&tx.to_uppercase().replacen("0X", "0x", 1))), found);

    let unknown = format!("0x{}", "ab".repeat(32));
    let message = expect_api_error(&net.get(&path(&unknown), Some(&user.jwt)), 404, "NOT_FOUND");
    assert!(message.contains(&unknown), "{message}");
    // Another account's transaction is not this account's.
    let theirs = net.deposit(&other.evm_address, 8453, "USDC", "1000000");
    let theirs = theirs["txHash"].as_str().unwrap();
    expect_api_error(&net.get(&path(theirs), Some(&user.jwt)), 404, "NOT_FOUND");
    expect_api_error(&net.get(&path(tx), Some(&other.jwt)), 403, "NOT_YOUR_ACCOUNT");
    let no_account = format!("/ua/v1/transactions/{tx}");
    expect_api_error(&net.get(&no_account, Some(&user.jwt)), 400, "INVALID_REQUEST");
    expect_api_error(&net.get(&path(tx), None), 401, "INVALID_SESSION");
}

#[test]
fn a_sweep_to_the_accounts_own_deposit_address_is_listed_twice() {
    let net = Net::start();
    let user = net.user(OWNER);
    net.deposit(&user.evm_address, 8453, "ETH", "4000000000000000");
    let quote = net.quote(
        &user,
        &json!({
            "accountId": user.account_id,
            "source": {"chainId": 8453, "token": "ETH", "rawAmount": "1000000000000000"},
            "destination": {"chainId": 8453, "token": "USDC", "address": user.evm_address},
        }),
    );
    let reply = net.send_quote(&user, &quote);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let tx = reply.json()["transactionId"].as_str().unwrap().to_owned();
    let history = net.history(&user);
    let tags: Vec<&Value> = history.iter().map(|t| &t["tag"]).collect();
    assert_eq!(tags, [&json!("sweep"), &json!("receive"), &json!("receive")]);
    assert_eq!(history[0]["transactionId"], tx);
    assert_eq!(history[1]["transactionId"], tx);
    assert_eq!(net.balance(&user, 8453, "USDC"), ("2465000".into(), "2465000".into()));
    let single =
        net.get_ok(&user, &format!("/ua/v1/transactions/{tx}?accountId={}", user.account_id));
    assert_eq!(single["tag"], "sweep");
}
