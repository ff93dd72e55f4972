//! devnet's chain-backed mode against the real local chains (`tests/chains/launch.py`): deposits
//! made with real transfers, sweeps and refunds that move tokens on the chains, `received`
//! kept across sweeps, idempotent sends (also across a half-done sweep), the balance API and
//! its proxy, the simulated onramp, and the admin endpoints in this mode.
//!
//! All tests share one launcher and one devnet ([`support::shared`]); each uses owners and
//! receivers of its own, and its own anvil development account to fund them.

mod common;
mod support;

use alloy_primitives::U256;
use common::deposit::expect_api_error;
use depositkit_core::TokenType;
use depositkit_core::chain::solana_tx::Signature;
use serde_json::{Value, json};
use support::wallets::{
    airdrop, mint_spl, native_balance, receipt, send_native, send_token, sol_balance, spl_balance,
    token_balance, transfer_sol,
};
use support::{fresh_evm, fresh_owner, fresh_solana, shared};

const USDC_25: u64 = 25_000_000;

fn u(value: u64) -> U256 {
    U256::from(value)
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_else(|| panic!("not a string: {value}")).to_owned()
}

/// `(rawAmount, received)` of a line, as numbers.
fn line(
    net: &support::ChainNet,
    user: &common::deposit::UaUser,
    chain_id: u64,
    token: &str,
) -> (U256, U256) {
    let (raw, received) = net.balance(user, chain_id, token);
    (raw.parse().unwrap(), received.parse().unwrap())
}

#[test]
fn evm_deposits_are_read_from_the_chain_with_their_senders() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let base = net.chains.evm_url(8453);
    let dev = net.chains.dev_account(1);
    let usdc = net.chains.token(8453, "USDC");
    assert!(net.balances(&user).is_empty(), "a new account holds nothing");

    let hash = send_token(&base, &dev, &usdc, &user.evm_address, u(USDC_25));
    assert_eq!(line(net, &user, 8453, "USDC"), (u(USDC_25), u(USDC_25)));
    // The receipt names the real sender and transaction.
    let receipts = net.receipts(&user, 8453, "USDC", "0", "25000000");
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    assert_eq!(receipts[0]["txHash"], hash.to_string());
    assert_eq!(receipts[0]["sender"], dev);
    assert_eq!(
        (receipts[0]["receivedBefore"].clone(), receipts[0]["receivedAfter"].clone()),
        (json!("0"), json!("25000000"))
    );

    let in_process = net
        .devnet(|d| d.receipts(&user.account_id, 8453, TokenType::USDC, "0", "25000000"))
        .unwrap();
    assert_eq!(in_process[0].sender.as_deref(), Some(dev.as_str()));

    // Native ether: no logs, so no sender; the observation's id as hash.
    let wei = u(10_000_000_000_000_000);
    send_native(&base, &dev, &user.evm_address, wei);
    assert_eq!(line(net, &user, 8453, "ETH"), (wei, wei));
    let eth = net.receipts(&user, 8453, "ETH", "0", &wei.to_string());
    assert_eq!((eth.len(), eth[0]["sender"].clone()), (1, Value::Null));

    // A second deposit of the same token is new money on top.
    send_token(&base, &dev, &usdc, &user.evm_address, u(5_000_000));
    assert_eq!(line(net, &user, 8453, "USDC"), (u(30_000_000), u(30_000_000)));
    let history = net.history(&user);
    let receives = history.iter().filter(|t| t["tag"] == "receive").count();
    assert_eq!(receives, 3, "{history:?}");

    // The ledger endpoint and the in-process API read the chain.
    assert_eq!(net.ledger(&user.evm_address, 8453, "USDC"), "30000000");
    let held = net.devnet(|d| d.chain_balance(&user.evm_address, 8453, TokenType::USDC)).unwrap();
    assert_eq!(held, u(30_000_000));
}

#[test]
fn a_base_usdc_sweep_to_arbitrum_moves_real_tokens_once() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let (base, arbitrum) = (net.chains.evm_url(8453), net.chains.evm_url(42161));
    let (usdc_base, usdc_arb) = (net.chains.token(8453, "USDC"), net.chains.token(42161, "USDC"));
    send_token(&base, &net.chains.dev_account(2), &usdc_base, &user.evm_address, u(USDC_25));
    let receiver = fresh_evm();

    let quote = net.quote_sweep(&user, (8453, "USDC", "25000000"), (42161, "USDC", &receiver));
    let delivered: U256 = text(&quote["destination"]["rawAmount"]).parse().unwrap();
    let sent = net.send_ok(&user, &quote);
    assert_eq!(sent["status"], "success", "{sent}");
    assert_eq!(sent["deliveredRawAmount"], delivered.to_string());

    // The money moved on both chains, with real, successful transactions.
    assert_eq!(token_balance(&arbitrum, &usdc_arb, &receiver), delivered);
    assert_eq!(token_balance(&base, &usdc_base, &user.evm_address), U256::ZERO);
    let delivery = receipt(&arbitrum, &text(&sent["transactionId"]));
    assert!(delivery.status);
    assert_eq!(delivery.to.unwrap().to_string().to_lowercase(), usdc_arb.to_lowercase());
    let collection = receipt(&base, &text(&sent["sourceTxHash"]));
    assert!(collection.status);
    assert_eq!(collection.from.to_checksum(None), user.evm_address);
    assert_eq!(
        text(&sent["explorerUrl"]),
        format!("https://arbiscan.io/tx/{}", text(&sent["transactionId"]))
    );

    // received is untouched by the sweep.
    assert_eq!(line(net, &user, 8453, "USDC"), (U256::ZERO, u(USDC_25)));

    // The same quote again pays once: same answer, nothing moves.
    let again = net.send_ok(&user, &quote);
    assert_eq!(again, sent);
    assert_eq!(token_balance(&arbitrum, &usdc_arb, &receiver), delivered);
    let status = net.get_ok(&user, &format!("/ua/v1/sweeps/{}", text(&quote["quoteId"])));
    assert_eq!(status, sent);
    let history = net.history(&user);
    let sweep = history.iter().find(|t| t["tag"] == "sweep").expect("a sweep in the history");
    assert_eq!(sweep["transactionId"], sent["transactionId"]);

    // Another quote of the same (now gone) money is refused.
    let reply = net.post(
        "/ua/v1/sweeps/quote",
        Some(&user.jwt),
        &json!({"accountId": user.account_id,
                "source": {"chainId": 8453, "token": "USDC", "rawAmount": "1"},
                "destination": {"chainId": 42161, "token": "USDC", "address": receiver}}),
    );
    expect_api_error(&reply, 400, "INSUFFICIENT_BALANCE");
}

#[test]
fn a_native_eth_sweep_leaves_nothing_behind() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let (base, arbitrum) = (net.chains.evm_url(8453), net.chains.evm_url(42161));
    let wei = u(20_000_000_000_000_000);
    send_native(&base, &net.chains.dev_account(3), &user.evm_address, wei);
    let receiver = fresh_evm();
    let quote = net.quote_sweep(&user, (8453, "ETH", &wei.to_string()), (42161, "ETH", &receiver));
    let sent = net.send_ok(&user, &quote);
    assert_eq!(sent["status"], "success", "{sent}");
    let delivered: U256 = text(&quote["destination"]["rawAmount"]).parse().unwrap();
    assert_eq!(native_balance(&arbitrum, &receiver), delivered);
    // devnet sent exactly the collection's gas: the address is empty, and the gas counts
    // neither as received nor as spent.
    assert_eq!(native_balance(&base, &user.evm_address), U256::ZERO);
    assert_eq!(line(net, &user, 8453, "ETH"), (U256::ZERO, wei));
    assert!(receipt(&base, &text(&sent["sourceTxHash"])).status);
}

#[test]
fn solana_deposits_are_read_and_swept_to_an_evm_chain() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let (svm, base) = (net.chains.solana_url(), net.chains.evm_url(8453));
    let (usdc_sol, usdc_base) = (net.chains.token(101, "USDC"), net.chains.token(8453, "USDC"));
    mint_spl(&svm, &usdc_sol, &user.solana_address, 10_000_000);
    assert_eq!(line(net, &user, 101, "USDC"), (u(10_000_000), u(10_000_000)));

    // SOL by a signed system transfer from a funded wallet.
    let funder = fresh_solana();
    airdrop(&svm, &funder.address(), 2_000_000_000);
    transfer_sol(&svm, &funder, &user.solana_address, 1_000_000_000);
    assert_eq!(line(net, &user, 101, "SOL"), (u(1_000_000_000), u(1_000_000_000)));

    let receiver = fresh_evm();
    let quote = net.quote_sweep(&user, (101, "USDC", "10000000"), (8453, "USDC", &receiver));
    let sent = net.send_ok(&user, &quote);
    assert_eq!(sent["status"], "success", "{sent}");
    let delivered: U256 = text(&quote["destination"]["rawAmount"]).parse().unwrap();
    assert_eq!(token_balance(&base, &usdc_base, &receiver), delivered);
    assert!(receipt(&base, &text(&sent["transactionId"])).status);
    assert_eq!(spl_balance(&svm, &usdc_sol, &user.solana_address), 0);
    // The collection is a Solana signature; the vault paid its fee, so the SOL is untouched.
    text(&sent["sourceTxHash"]).parse::<Signature>().expect("a base58 signature");
    assert_eq!(sol_balance(&svm, &user.solana_address), 1_000_000_000);
    assert_eq!(line(net, &user, 101, "USDC"), (U256::ZERO, u(10_000_000)));

    // The SOL goes too, to an EVM chain.
    let quote = net.quote_sweep(&user, (101, "SOL", "1000000000"), (42161, "USDC", &receiver));
    let sent = net.send_ok(&user, &quote);
    assert_eq!(sent["status"], "success", "{sent}");
    assert_eq!(sol_balance(&svm, &user.solana_address), 0);
    assert_eq!(line(net, &user, 101, "SOL"), (U256::ZERO, u(1_000_000_000)));
}

#[test]
fn evm_deposits_are_swept_to_solana_creating_the_token_account() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let (svm, arbitrum) = (net.chains.solana_url(), net.chains.evm_url(42161));
    let (usdc_sol, usdc_arb) = (net.chains.token(101, "USDC"), net.chains.token(42161, "USDC"));
    send_token(&arbitrum, &net.chains.dev_account(5), &usdc_arb, &user.evm_address, u(40_000_000));
    let receiver = fresh_solana().address();

    let quote = net.quote_sweep(&user, (42161, "USDC", "20000000"), (101, "USDC", &receiver));
    let sent = net.send_ok(&user, &quote);
    assert_eq!(sent["status"], "success", "{sent}");
    let delivered: u64 = text(&quote["destination"]["rawAmount"]).parse().unwrap();
    assert_eq!(spl_balance(&svm, &usdc_sol, &receiver), delivered);
    let signature: Signature = text(&sent["transactionId"]).parse().expect("a signature");
    let status = support::wallets::svm(&svm).signature_status(&signature).unwrap().unwrap();
    assert!(status.err.is_none(), "{status:?}");
    assert!(text(&sent["explorerUrl"]).starts_with("https://solscan.io/tx/"));
    assert_eq!(token_balance(&arbitrum, &usdc_arb, &user.evm_address), u(20_000_000));

    // The rest as SOL to a new account: at least the rent-exempt minimum arrives.
    let sol_receiver = fresh_solana().address();
    let quote = net.quote_sweep(&user, (42161, "USDC", "20000000"), (101, "SOL", &sol_receiver));
    let sent = net.send_ok(&user, &quote);
    assert_eq!(sent["status"], "success", "{sent}");
    let lamports: u64 = text(&quote["destination"]["rawAmount"]).parse().unwrap();
    assert_eq!(sol_balance(&svm, &sol_receiver), lamports);
    assert_eq!(line(net, &user, 42161, "USDC"), (U256::ZERO, u(40_000_000)));

    // Too little SOL for a new account is refused at the quote.
    send_token(&arbitrum, &net.chains.dev_account(5), &usdc_arb, &user.evm_address, u(100_000));
    let reply = net.post(
        "/ua/v1/sweeps/quote",
        Some(&user.jwt),
        &json!({"accountId": user.account_id,
                "source": {"chainId": 42161, "token": "USDC", "rawAmount": "100000"},
                "destination": {"chainId": 101, "token": "SOL", "address": fresh_solana().address()}}),
    );
    let message = expect_api_error(&reply, 400, "BELOW_MINIMUM");
    assert!(message.contains("rent-exempt"), "{message}");
}

#[test]
fn received_only_grows_across_sweeps() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let base = net.chains.evm_url(8453);
    let usdc = net.chains.token(8453, "USDC");
    let dev = net.chains.dev_account(6);
    send_token(&base, &dev, &usdc, &user.evm_address, u(10_000_000));
    let quote = net.quote_sweep(&user, (8453, "USDC", "10000000"), (8453, "USDC", &fresh_evm()));
    assert_eq!(net.send_ok(&user, &quote)["status"], "success");
    assert_eq!(line(net, &user, 8453, "USDC"), (U256::ZERO, u(10_000_000)));
    send_token(&base, &dev, &usdc, &user.evm_address, u(5_000_000));
    assert_eq!(line(net, &user, 8453, "USDC"), (u(5_000_000), u(15_000_000)));
    let receipts = net.receipts(&user, 8453, "USDC", "0", "15000000");
    let ranges: Vec<(String, String)> =
        receipts.iter().map(|r| (text(&r["receivedBefore"]), text(&r["receivedAfter"]))).collect();
    assert_eq!(ranges, [("0".into(), "10000000".into()), ("10000000".into(), "15000000".into())]);
    // Only the second deposit is in the range above the first.
    let newer = net.receipts(&user, 8453, "USDC", "10000000", "15000000");
    assert_eq!(newer.len(), 1);
}

#[test]
fn a_refund_goes_back_to_the_sender_on_the_chain() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let base = net.chains.evm_url(8453);
    let usdc = net.chains.token(8453, "USDC");
    let sender = net.chains.dev_account(7);
    send_token(&base, &sender, &usdc, &user.evm_address, u(USDC_25));
    let receipts = net.receipts(&user, 8453, "USDC", "0", "25000000");
    assert_eq!(receipts[0]["sender"], sender);
    let before = token_balance(&base, &usdc, &sender);

    let quote = net.quote(
        &user,
        &json!({"accountId": user.account_id, "purpose": "refund", "depositId": "dep_chain",
                "source": {"chainId": 8453, "token": "USDC", "rawAmount": "25000000"},
                "destination": {"chainId": 8453, "token": "USDC", "address": sender}}),
    );
    assert_eq!(quote["destination"]["rawAmount"], "24970000");
    let sent = net.send_ok(&user, &quote);
    assert_eq!(
        (sent["status"].clone(), sent["depositId"].clone()),
        (json!("success"), json!("dep_chain"))
    );
    assert_eq!(token_balance(&base, &usdc, &sender), before + u(24_970_000));
    assert_eq!(token_balance(&base, &usdc, &user.evm_address), U256::ZERO);
    assert!(receipt(&base, &text(&sent["transactionId"])).status);
    assert!(receipt(&base, &text(&sent["sourceTxHash"])).status);
    let history = net.history(&user);
    let refund = history.iter().find(|t| t["tag"] == "refund").expect("a refund");
    assert_eq!(refund["depositId"], "dep_chain");
    assert_eq!(line(net, &user, 8453, "USDC"), (U256::ZERO, u(USDC_25)));
}

#[test]
fn a_half_done_sweep_is_completed_without_collecting_twice() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let (base, arbitrum) = (net.chains.evm_url(8453), net.chains.evm_url(42161));
    let wei = u(30_000_000_000_000_000);
    send_native(&base, &net.chains.dev_account(9), &user.evm_address, wei);
    // A receiver whose code refuses ether: the delivery cannot go through.
    let receiver = fresh_evm();
    let set_code = |code: &str| {
        support::wallets::evm(&arbitrum).request("anvil_setCode", json!([receiver, code])).unwrap();
    };
    set_code("0x60006000fd");
    let quote = net.quote_sweep(&user, (8453, "ETH", &wei.to_string()), (42161, "ETH", &receiver));
    let reply = net.send_quote(&user, &quote);
    let message = expect_api_error(&reply, 502, "CHAIN_UNAVAILABLE");
    assert!(message.contains("Arbitrum"), "{message}");
    assert_eq!(reply.header("retry-after"), Some("1"));
    // Collected, not delivered; received untouched; the status resumes and fails again.
    assert_eq!(native_balance(&base, &user.evm_address), U256::ZERO);
    assert_eq!(line(net, &user, 8453, "ETH"), (U256::ZERO, wei));
    let path = format!("/ua/v1/sweeps/{}", text(&quote["quoteId"]));
    expect_api_error(&net.get(&path, Some(&user.jwt)), 502, "CHAIN_UNAVAILABLE");

    // Once the receiver accepts ether, asking for the status completes the sweep.
    set_code("0x");
    let done = net.get_ok(&user, &path);
    assert_eq!(done["status"], "success", "{done}");
    let delivered: U256 = text(&quote["destination"]["rawAmount"]).parse().unwrap();
    assert_eq!(native_balance(&arbitrum, &receiver), delivered);
    // Sending it again pays nothing more.
    assert_eq!(net.send_ok(&user, &quote), done);
    assert_eq!(native_balance(&arbitrum, &receiver), delivered);
    assert_eq!(line(net, &user, 8453, "ETH"), (U256::ZERO, wei));
}

#[test]
fn the_balance_api_needs_its_key_and_the_proxy_does_not() {
    let net = shared();
    let base = net.chains.evm_url(8453);
    let usdc = net.chains.token(8453, "USDC");
    let dev = net.chains.dev_account(8);
    let holder = fresh_evm();
    send_native(&base, &dev, &holder, u(1_000_000_000_000_000_000));
    support::wallets::mint_token(&base, &dev, &usdc, &holder, u(5_000_000));
    // Polygon is on the ledger: a devnet deposit gives the address a balance there.
    net.deposit(&holder, 137, "USDC", "7000000");
    let solana = fresh_solana().address();
    airdrop(&net.chains.solana_url(), &solana, 3_000_000_000);
    let request =
        json!({"evmAddress": holder, "solanaAddress": solana, "chainIds": [8453, 137, 101, 1]});

    let path = "/balances/v1/wallet-balances";
    expect_api_error(&net.post(path, None, &request), 401, "INVALID_API_KEY");
    let wrong = net.call("POST", path, None, &[("X-API-Key", "nope")], Some(&request));
    expect_api_error(&wrong, 401, "INVALID_API_KEY");
    let reply =
        net.call("POST", path, None, &[("X-API-Key", "devnet-balance-key")], Some(&request));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let balances = reply.json()["balances"].clone();
    assert_eq!(
        balances,
        json!([
            {"chainId": 8453, "token": "ETH", "tokenAddress": null, "decimals": 18,
             "rawAmount": "1000000000000000000", "priceUSD": 2500.0, "valueUSD": 2500.0},
            {"chainId": 8453, "token": "USDC", "tokenAddress": usdc, "decimals": 6,
             "rawAmount": "5000000", "priceUSD": 1.0, "valueUSD": 5.0},
            {"chainId": 137, "token": "USDC", "tokenAddress": "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
             "decimals": 6, "rawAmount": "7000000", "priceUSD": 1.0, "valueUSD": 7.0},
            {"chainId": 101, "token": "SOL", "tokenAddress": null, "decimals": 9,
             "rawAmount": "3000000000", "priceUSD": 150.0, "valueUSD": 450.0},
        ])
    );
    // The proxy answers the same without a key.
    let proxied = net.post("/balance-proxy/v1/wallet-balances", None, &request);
    assert_eq!(proxied.status, 200, "{}", proxied.body);
    assert_eq!(proxied.json()["balances"], balances);
    let bad = net.post("/balance-proxy/v1/wallet-balances", None, &json!({"evmAddress": "0x12"}));
    expect_api_error(&bad, 400, "INVALID_REQUEST");
}

#[test]
fn onramp_orders_credit_the_destination_on_the_chain() {
    let net = shared();
    let base = net.chains.evm_url(8453);
    let usdc = net.chains.token(8453, "USDC");
    let wallet = fresh_evm();
    let reply = net.post(
        "/onramp/v1/orders",
        None,
        &json!({"partnerKey": "pk_test", "walletAddress": wallet, "network": "base",
                "cryptoCurrency": "USDC", "fiatCurrency": "USD", "fiatAmount": 25,
                "partnerOrderId": "po_1", "mode": "overlay"}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let answer = reply.json();
    let order = &answer["order"];
    assert_eq!(
        (order["cryptoAmount"].clone(), order["cryptoRawAmount"].clone()),
        (json!("24.75"), json!("24750000"))
    );
    assert_eq!(
        (order["status"].clone(), order["partnerOrderId"].clone()),
        (json!("completed"), json!("po_1"))
    );
    assert_eq!(token_balance(&base, &usdc, &wallet), u(24_750_000));
    assert!(receipt(&base, &text(&order["txHash"])).status);
    let events: Vec<&str> = answer["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["order_created", "order_processing", "order_completed"]);
    assert_eq!(answer["messages"][2]["data"], *order);

    // In process, SOL on Solana.
    let receiver = fresh_solana().address();
    let answer = net
        .devnet(|d| {
            d.complete_onramp_order(&json!({"partnerKey": "pk", "walletAddress": receiver,
                "network": "solana", "cryptoCurrency": "SOL", "fiatAmount": "15"}))
        })
        .unwrap();
    assert_eq!(answer["order"]["cryptoRawAmount"], "99000000");
    assert_eq!(sol_balance(&net.chains.solana_url(), &receiver), 99_000_000);

    // Into a deposit address it is a deposit like any other.
    let user = net.user(&fresh_owner());
    net.devnet(|d| {
        d.complete_onramp_order(&json!({"partnerKey": "pk", "walletAddress": user.evm_address,
            "network": "ethereum", "cryptoCurrency": "ETH", "fiatAmount": 100}))
    })
    .unwrap();
    let wei = u(39_600_000_000_000_000);
    assert_eq!(line(net, &user, 1, "ETH"), (wei, wei));

    let refused = net.post("/onramp/v1/orders", None, &json!({"partnerKey": "", "walletAddress": wallet, "network": "base", "cryptoCurrency": "USDC"}));
    expect_api_error(&refused, 401, "INVALID_PARTNER_KEY");
}

#[test]
fn admin_endpoints_know_the_chain_backed_chains() {
    let net = shared();
    let reply = net.get("/devnet/chains", None);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let vault = net.devnet(|d| d.vault_addresses()).expect("a vault");
    assert_eq!(
        reply.json(),
        json!({"chains": [1, 56, 8453, 42161, 101], "vault": {"evm": vault.evm, "solana": vault.solana}})
    );
    assert_eq!(net.devnet(|d| d.chains()), [1, 56, 8453, 42161, 101]);
    // The vault is stocked.
    let stocked = net.devnet(|d| d.chain_balance(&vault.evm, 56, TokenType::USDT)).unwrap();
    assert!(stocked > U256::ZERO);

    let user = net.user(&fresh_owner());
    let body =
        json!({"address": user.evm_address, "chainId": 8453, "token": "USDC", "rawAmount": "5"});
    let message = expect_api_error(&net.post("/devnet/deposits", None, &body), 400, "CHAIN_BACKED");
    assert!(message.contains("Base"), "{message}");
    let refused = net.devnet(|d| d.deposit(&user.evm_address, 101, TokenType::SOL, "5", None));
    assert!(refused.unwrap_err().to_string().contains("chain-backed"));
    // Ledger chains work as before.
    net.deposit(&user.evm_address, 137, "USDC", "5000000");
    assert_eq!(line(net, &user, 137, "USDC"), (u(5_000_000), u(5_000_000)));

    // A token that is not deployed on a chain-backed chain cannot be delivered there.
    let reply = net.post(
        "/ua/v1/sweeps/quote",
        Some(&user.jwt),
        &json!({"accountId": user.account_id,
                "source": {"chainId": 137, "token": "USDC", "rawAmount": "5000000"},
                "destination": {"chainId": 56, "token": "ETH", "address": fresh_evm()}}),
    );
    expect_api_error(&reply, 400, "UNSUPPORTED_ROUTE");

    // A ledger deposit swept to a chain-backed chain is delivered for real.
    let receiver = fresh_evm();
    let quote = net.quote_sweep(&user, (137, "USDC", "5000000"), (56, "USDT", &receiver));
    let sent = net.send_ok(&user, &quote);
    assert_eq!(sent["status"], "success", "{sent}");
    assert!(sent.get("sourceTxHash").is_none(), "{sent}");
    let bsc = net.chains.evm_url(56);
    let delivered: U256 = text(&quote["destination"]["rawAmount"]).parse().unwrap();
    assert_eq!(token_balance(&bsc, &net.chains.token(56, "USDT"), &receiver), delivered);
    assert_eq!(line(net, &user, 137, "USDC"), (U256::ZERO, u(5_000_000)));
}

#[test]
fn two_sends_of_one_quote_at_once_pay_once() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let base = net.chains.evm_url(8453);
    let usdc = net.chains.token(8453, "USDC");
    send_token(&base, &net.chains.dev_account(0), &usdc, &user.evm_address, u(8_000_000));
    let receiver = fresh_evm();
    let quote = net.quote_sweep(&user, (8453, "USDC", "8000000"), (8453, "USDC", &receiver));
    let answers: Vec<Value> = std::thread::scope(|scope| {
        let sends: Vec<_> = (0..2).map(|_| scope.spawn(|| net.send_ok(&user, &quote))).collect();
        sends.into_iter().map(|s| s.join().unwrap()).collect()
    });
    assert_eq!(answers[0], answers[1]);
    let delivered: U256 = text(&quote["destination"]["rawAmount"]).parse().unwrap();
    assert_eq!(token_balance(&base, &usdc, &receiver), delivered);
    assert_eq!(line(net, &user, 8453, "USDC"), (U256::ZERO, u(8_000_000)));
}
