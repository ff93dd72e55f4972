//! What funding needs from devnet in ledger mode (no chains file): the balance API and its
//! proxy over the ledger, the simulated onramp widget and orders, and the chain-backed admin
//! answers when nothing is chain-backed.

mod common;

use common::deposit::*;
use depositkit_core::TokenType;
use serde_json::json;

const HOLDER: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";
const SOL_HOLDER: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

#[test]
fn the_balance_api_reads_the_ledger() {
    let net = Net::start_with(|c| c.with_balance_api_key("k-123"));
    net.deposit(HOLDER, 8453, "USDC", "2500000");
    net.deposit(HOLDER, 8453, "ETH", "1000000000000000");
    net.deposit(HOLDER, 137, "USDT", "1");
    net.deposit(SOL_HOLDER, 101, "USDT", "4000000");
    let user = net.user("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
    net.deposit(&user.evm_address, 56, "USDC", "3000000000000000000");

    let path = "/balances/v1/wallet-balances";
    let with_key = |body: &serde_json::Value| {
        net.call("POST", path, None, &[("X-API-Key", "k-123")], Some(body))
    };
    let request = json!({"evmAddress": HOLDER, "solanaAddress": SOL_HOLDER});
    let reply = with_key(&request);
    assert_eq!(reply.status, 200, "{}", reply.body);
    // Without chainIds: the five funding chains, in their order; Polygon is not among them.
    assert_eq!(
        reply.json()["balances"],
        json!([
            {"chainId": 8453, "token": "ETH", "tokenAddress": null, "decimals": 18,
             "rawAmount": "1000000000000000", "priceUSD": 2500.0, "valueUSD": 2.5},
            {"chainId": 8453, "token": "USDC",
             "tokenAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "decimals": 6,
             "rawAmount": "2500000", "priceUSD": 1.0, "valueUSD": 2.5},
            {"chainId": 101, "token": "USDT",
             "tokenAddress": "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", "decimals": 6,
             "rawAmount": "4000000", "priceUSD": 1.0, "valueUSD": 4.0},
        ])
    );
    // An account's deposit address holds what the account holds.
    let reply = with_key(&json!({"evmAddress": user.evm_address, "chainIds": [56]}));
    assert_eq!(reply.json()["balances"][0]["rawAmount"], "3000000000000000000");
    assert_eq!(reply.json()["balances"][0]["decimals"], 18);
    let reply = with_key(&json!({"evmAddress": HOLDER, "solanaAddress": null, "chainIds": [137]}));
    assert_eq!(reply.json()["balances"].as_array().unwrap().len(), 1);

    expect_api_error(&net.post(path, None, &request), 401, "INVALID_API_KEY");
    let wrong =
        net.call("POST", path, None, &[("X-API-Key", "devnet-balance-key")], Some(&request));
    expect_api_error(&wrong, 401, "INVALID_API_KEY");
    expect_api_error(
        &with_key(&json!({"evmAddress": HOLDER, "chainIds": [7]})),
        400,
        "INVALID_REQUEST",
    );
    expect_api_error(&with_key(&json!({"chainIds": [1]})), 400, "INVALID_REQUEST");
    let swapped = json!({"evmAddress": SOL_HOLDER});
    expect_api_error(&with_key(&swapped), 400, "INVALID_REQUEST");

    let proxied = net.post("/balance-proxy/v1/wallet-balances", None, &request);
    assert_eq!(proxied.status, 200, "{}", proxied.body);
    assert_eq!(proxied.json(), with_key(&request).json());
}

#[test]
fn onramp_orders_credit_the_ledger() {
    let net = Net::start();
    let user = net.user("0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359");
    let order = |body: serde_json::Value| net.post("/onramp/v1/orders", None, &body);

    // Into a deposit address: a deposit of 99 USDC (100 USD, the default amount, less 1%).
    let reply = order(json!({"partnerKey": "pk", "walletAddress": user.evm_address,
                             "network": "arbitrum", "cryptoCurrency": "usdc"}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let answer = reply.json();
    assert_eq!(answer["order"]["cryptoAmount"], "99");
    assert_eq!(answer["order"]["fiatAmount"], 100.0);
    assert_eq!(answer["order"]["fiatCurrency"], "USD");
    assert_eq!(answer["order"]["network"], "arbitrum");
    assert_eq!(answer["messages"][0]["data"]["status"], "created");
    assert_eq!(answer["messages"][0]["data"]["txHash"], serde_json::Value::Null);
    assert_eq!(answer["messages"][2]["data"]["txHash"], answer["order"]["txHash"]);
    assert_eq!(net.balance(&user, 42161, "USDC"), ("99000000".into(), "99000000".into()));
    let history = net.history(&user);
    assert_eq!(history[0]["transactionId"], answer["order"]["txHash"]);

    // Anywhere else: the ledger. BNB on BNB Chain at 600: 60 USD buys 0.099 BNB.
    let reply = order(json!({"partnerKey": "pk", "walletAddress": HOLDER, "network": "BSC",
                             "cryptoCurrency": "BNB", "fiatAmount": "60", "fiatCurrency": "eur"}));
    assert_eq!(reply.json()["order"]["cryptoRawAmount"], "99000000000000000", "{}", reply.body);
    assert_eq!(net.ledger(HOLDER, 56, "BNB"), "99000000000000000");

    // Refusals.
    let base = json!({"partnerKey": "pk", "walletAddress": HOLDER, "network": "base",
                      "cryptoCurrency": "USDC", "fiatAmount": 10});
    let with = |key: &str, value: serde_json::Value| {
        let mut body = base.clone();
        body[key] = value;
        order(body)
    };
    expect_api_error(&with("partnerKey", json!("  ")), 401, "INVALID_PARTNER_KEY");
    expect_api_error(&order(json!({"walletAddress": HOLDER})), 401, "INVALID_PARTNER_KEY");
    expect_api_error(&with("network", json!("polygon")), 400, "INVALID_REQUEST");
    expect_api_error(&with("cryptoCurrency", json!("BNB")), 400, "INVALID_REQUEST");
    expect_api_error(&with("cryptoCurrency", json!("BTC")), 400, "INVALID_REQUEST");
    expect_api_error(&with("walletAddress", json!(SOL_HOLDER)), 400, "INVALID_REQUEST");
    for amount in [json!(0), json!("-5"), json!("abc"), json!(true), json!("1e3")] {
        expect_api_error(&with("fiatAmount", amount), 400, "INVALID_REQUEST");
    }
    expect_api_error(&with("fiatCurrency", json!("dollars")), 400, "INVALID_REQUEST");

    // In process, the same.
    let answer = net
        .devnet
        .complete_onramp_order(&json!({"partnerKey": "pk", "walletAddress": SOL_HOLDER,
                                      "network": "solana", "cryptoCurrency": "SOL", "fiatAmount": 150}))
        .unwrap();
    assert_eq!(answer["order"]["cryptoRawAmount"], "990000000");
    assert_eq!(net.devnet.ledger_balance(SOL_HOLDER, 101, TokenType::SOL).unwrap(), "990000000");
    assert!(net.devnet.complete_onramp_order(&json!({"network": "base"})).is_err());
}

#[test]
fn the_widget_shows_the_order_form() {
    let net = Net::start();
    let reply = net.get(
        "/onramp/widget?partnerKey=pk&walletAddress=%3Cb%3Ex&network=base&cryptoCurrency=USDC\
         &fiatCurrency=USD&fiatAmount=25&mode=overlay&partnerOrderId=po_9",
        None,
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(reply.body.contains("value=\"po_9\""), "{}", reply.body);
    assert!(reply.body.contains("value=\"&lt;b&gt;x\""), "{}", reply.body);
    assert!(!reply.body.contains("<b>x"));
    assert!(reply.body.contains("v1/orders"));
}

#[test]
fn nothing_is_chain_backed_without_a_chains_file() {
    let net = Net::start();
    let reply = net.get("/devnet/chains", None);
    assert_eq!(reply.json(), json!({"chains": []}));
    assert!(net.devnet.chains().is_empty());
    assert!(net.devnet.vault_addresses().is_none());
    assert!(net.devnet.chains_config().is_none());
    assert!(net.devnet.chain_balance(HOLDER, 8453, TokenType::USDC).is_err());
    // Sweeps answer as before, without sourceTxHash.
    let user = net.user("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
    net.deposit(&user.evm_address, 8453, "USDC", "5000000");
    let quote = net.quote(
        &user,
        &json!({"accountId": user.account_id,
                "source": {"chainId": 8453, "token": "USDC", "rawAmount": "5000000"},
                "destination": {"chainId": 42161, "token": "USDC", "address": HOLDER}}),
    );
    let sent = net.send_quote(&user, &quote).json();
    assert_eq!(sent["status"], "success");
    assert!(sent.get("sourceTxHash").is_none(), "{sent}");
}
