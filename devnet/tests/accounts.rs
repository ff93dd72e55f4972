//! The universal-account service over HTTP: accounts and their deposit addresses, deposits
//! through the admin endpoint, balances (single and batched across wallets) and history.

mod common;

use common::deposit::*;
use depositkit_core::{TokenType, validate_address_for_chain};
use serde_json::json;

const OWNER_A: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const OWNER_B: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
const SENDER: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";

#[test]
fn accounts_are_stable_per_owner_with_valid_addresses() {
    let net = Net::start();
    let a = net.user(OWNER_A);
    assert!(a.account_id.starts_with("acc_"));
    validate_address_for_chain(&a.evm_address, 8453).unwrap();
    validate_address_for_chain(&a.solana_address, 101).unwrap();
    assert_ne!(a.evm_address, a.evm_address.to_lowercase(), "EIP-55");
    assert_ne!(a.evm_address, a.wallet, "the deposit address is not the wallet");

    // Again, with the wallet lower-cased and a new JWT: the same account.
    let jwt = net.mint(OWNER_A);
    let reply =
        net.post("/ua/v1/accounts", Some(&jwt), &json!({"ownerAddress": a.wallet.to_lowercase()}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let again = reply.json();
    assert_eq!(again["accountId"], a.account_id);
    assert_eq!(again["ownerAddress"], a.wallet);
    assert_eq!(again["evmAddress"], a.evm_address);
    assert_eq!(again["solanaAddress"], a.solana_address);

    let b = net.user(OWNER_B);
    assert_ne!(b.account_id, a.account_id);
    assert_ne!(b.evm_address, a.evm_address);

    // Someone else's wallet as owner: 403; no owner: 400; no session: 401.
    let reply = net.post("/ua/v1/accounts", Some(&a.jwt), &json!({"ownerAddress": b.wallet}));
    expect_api_error(&reply, 403, "OWNER_MISMATCH");
    expect_api_error(
        &net.post("/ua/v1/accounts", Some(&a.jwt), &json!({})),
        400,
        "INVALID_REQUEST",
    );
    expect_api_error(
        &net.post("/ua/v1/accounts", None, &json!({"ownerAddress": a.wallet})),
        401,
        "INVALID_SESSION",
    );
}

#[test]
fn deposits_show_in_balances_as_raw_amount_and_received() {
    let net = Net::start();
    let a = net.user(OWNER_A);
    assert!(net.balances(&a).is_empty());
    let body = json!({"address": a.evm_address.to_lowercase(), "chainId": 8453, "token": "USDC", "amount": "1.5", "sender": SENDER});
    let reply = net.post("/devnet/deposits", None, &body);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let deposited = reply.json();
    assert_eq!(deposited["accountId"], a.account_id);
    assert_eq!(deposited["rawAmount"], "1500000");
    assert_eq!(deposited["decimals"], 6);
    assert!(deposited["txHash"].as_str().unwrap().starts_with("0x"));

    net.deposit(&a.solana_address, 101, "SOL", "2000000000");
    net.devnet.deposit(&a.evm_address, 8453, TokenType::USDC, "500000", None).unwrap();
    let lines = net.balances(&a);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let usdc = lines.iter().find(|l| l["token"] == "USDC").unwrap();
    assert_eq!(usdc["chainId"], 8453);
    assert_eq!(usdc["decimals"], 6);
    assert_eq!(usdc["rawAmount"], "2000000");
    assert_eq!(usdc["received"], "2000000");
    assert_eq!(usdc["priceUSD"], 1.0);
    assert_eq!(usdc["valueUSD"], 2.0);
    let sol = lines.iter().find(|l| l["token"] == "SOL").unwrap();
    assert_eq!(
        (sol["rawAmount"].as_str(), sol["decimals"].as_u64()),
        (Some("2000000000"), Some(9))
    );
    assert_eq!(sol["valueUSD"], 300.0);

    // The ledger view of a deposit address is the account's balance.
    assert_eq!(net.ledger(&a.evm_address, 8453, "USDC"), "2000000");
    assert_eq!(
        net.devnet.ledger_balance(&a.solana_address, 101, TokenType::SOL).unwrap(),
        "2000000000"
    );

    // History: newest first, receives with their sender.
    let reply = net.get(
        &format!("/ua/v1/transactions?accountId={}&page=1&pageSize=10", a.account_id),
        Some(&a.jwt),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let history = reply.json();
    assert_eq!(history["page"], 1);
    assert_eq!(history["pageSize"], 10);
    let txs = history["transactions"].as_array().unwrap();
    assert_eq!(txs.len(), 3);
    assert!(txs.iter().all(|t| t["tag"] == "receive" && t["status"] == 1));
    let first = &txs[2];
    assert_eq!(first["transactionId"], deposited["txHash"]);
    assert_eq!(first["change"]["from"], SENDER);
    assert_eq!(first["change"]["to"], a.evm_address);
    assert_eq!(first["change"]["amount"], "1.5");
    assert_eq!(first["change"]["amountInUSD"], "1.5");
    assert_eq!(first["targetToken"]["symbol"], "USDC");
    assert_eq!(first["targetToken"]["address"], "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
    assert_eq!(first["fromChains"], json!([8453]));
    assert!(first["createdAt"].as_str().unwrap().ends_with('Z'));
    assert!(txs[0]["change"]["from"].is_null());
    let page2 = net.get(
        &format!("/ua/v1/transactions?accountId={}&page=2&pageSize=2", a.account_id),
        Some(&a.jwt),
    );
    assert_eq!(page2.json()["transactions"].as_array().unwrap().len(), 1);
    let reply = net
        .get(&format!("/ua/v1/transactions?accountId={}&pageSize=0", a.account_id), Some(&a.jwt));
    expect_api_error(&reply, 400, "INVALID_REQUEST");
}

#[test]
fn bad_deposits_are_refused_and_other_addresses_use_the_ledger() {
    let net = Net::start();
    let a = net.user(OWNER_A);
    for body in [
        json!({"address": a.evm_address, "chainId": 101, "token": "USDC", "rawAmount": "1"}),
        json!({"address": a.evm_address, "chainId": 7, "token": "USDC", "rawAmount": "1"}),
        json!({"address": a.evm_address, "chainId": 1, "token": "DOGE", "rawAmount": "1"}),
        json!({"address": a.evm_address, "chainId": 1, "token": "USDC", "rawAmount": "0"}),
        json!({"address": a.evm_address, "chainId": 1, "token": "USDC", "amount": "1.0000001"}),
        json!({"address": a.evm_address, "chainId": 1, "token": "USDC", "amount": "1", "rawAmount": "1"}),
        json!({"address": a.evm_address, "chainId": 1, "token": "USDC"}),
        json!({"address": a.evm_address, "chainId": 1, "token": "USDC", "rawAmount": "1", "extra": 1}),
    ] {
        expect_api_error(&net.post("/devnet/deposits", None, &body), 400, "INVALID_REQUEST");
    }
    // An address no account owns: credited to its ledger.
    let reply = net.post(
        "/devnet/deposits",
        None,
        &json!({"address": SENDER, "chainId": 1, "token": "ETH", "amount": 0.25}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.json()["accountId"].is_null());
    assert_eq!(net.ledger(&SENDER.to_lowercase(), 1, "ETH"), "250000000000000000");
    assert_eq!(net.ledger(SENDER, 8453, "ETH"), "0");
    expect_api_error(&net.get("/devnet/ledger?address=x&chainId=1", None), 400, "INVALID_REQUEST");
}

#[test]
fn batch_balances_across_wallets_need_every_session() {
    let net = Net::start();
    let a = net.user(OWNER_A);
    let b = net.user(OWNER_B);
    net.deposit(&a.evm_address, 42161, "USDT", "7000000");
    net.deposit(&b.solana_address, 101, "USDC", "3000000");
    let body = json!({"accountIds": [a.account_id, b.account_id]});

    // Without the other wallet's session: 403.
    let reply = net.post("/ua/v1/balances", Some(&a.jwt), &body);
    let message = expect_api_error(&reply, 403, "NOT_YOUR_ACCOUNT");
    assert!(message.contains(&b.account_id), "{message}");

    let sessions = format!("{},{}", b.jwt, a.jwt);
    let reply = net.call(
        "POST",
        "/ua/v1/balances",
        Some(&a.jwt),
        &[("X-Batch-Sessions", &sessions)],
        Some(&body),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let all = reply.json();
    assert!(all["asOf"].as_i64().unwrap() > 0);
    assert_eq!(all["accounts"][&a.account_id]["balances"][0]["received"], "7000000");
    assert_eq!(all["accounts"][&b.account_id]["balances"][0]["rawAmount"], "3000000");

    // A bad JWT in the batch: 401. An unknown account: 403. Too many: 400.
    let bad = format!("{},not.a.jwt", b.jwt);
    let reply = net.call(
        "POST",
        "/ua/v1/balances",
        Some(&a.jwt),
        &[("X-Batch-Sessions", &bad)],
        Some(&body),
    );
    expect_api_error(&reply, 401, "INVALID_SESSION");
    let reply = net.post("/ua/v1/balances", Some(&a.jwt), &json!({"accountIds": ["acc_nope"]}));
    expect_api_error(&reply, 403, "NOT_YOUR_ACCOUNT");
    let many: Vec<String> = (0..1001).map(|i| format!("acc_{i}")).collect();
    let reply = net.post("/ua/v1/balances", Some(&a.jwt), &json!({ "accountIds": many }));
    expect_api_error(&reply, 400, "TOO_MANY_ACCOUNTS");
    let reply = net.post("/ua/v1/balances", Some(&a.jwt), &json!({"accountIds": []}));
    assert_eq!(reply.json()["accounts"], json!({}));
    // The history of someone else's account: 403.
    let reply = net.get(&format!("/ua/v1/transactions?accountId={}", b.account_id), Some(&a.jwt));
    expect_api_error(&reply, 403, "NOT_YOUR_ACCOUNT");
}
