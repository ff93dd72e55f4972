//! The dashboard in chain-backed mode, against the real local chains (`tests/chains/launch.py`):
//! a deposit made with a real transfer and its sweep show in the events, and their transactions
//! open as the local chain has them (`GET /dashboard/api/chain-tx`).

mod common;
mod support;

use alloy_primitives::U256;
use common::deposit::expect_api_error;
use serde_json::{Value, json};
use support::wallets::send_token;
use support::{fresh_evm, fresh_owner, shared};

#[test]
fn a_real_deposit_and_its_sweep_link_to_the_local_chains() {
    let net = shared();
    let user = net.user(&fresh_owner());
    let usdc_base = net.chains.token(8453, "USDC");
    let base = net.chains.evm_url(8453);
    send_token(
        &base,
        &net.chains.dev_account(4),
        &usdc_base,
        &user.evm_address,
        U256::from(25_000_000u64),
    );
    let receiver = fresh_evm();
    let quote = net.quote_sweep(&user, (8453, "USDC", "25000000"), (42161, "USDC", &receiver));
    let sent = net.send_ok(&user, &quote);

    let state = net.get("/dashboard/api/state", None).json();
    let chain_backed = state["chainBacked"].as_array().unwrap();
    assert!(chain_backed.contains(&json!(8453)) && chain_backed.contains(&json!(42161)));
    let events = state["events"].as_array().unwrap();
    let of_account = |kind: &str| -> Value {
        events
            .iter()
            .find(|e| e["kind"] == kind && e["accountId"] == user.account_id.as_str())
            .unwrap_or_else(|| panic!("no {kind} event of the account in {events:?}"))
            .clone()
    };
    let (detected, credited) = (of_account("deposit"), of_account("sweep"));
    assert_eq!(detected["rawAmount"], "25000000");
    assert_eq!(credited["phase"], "credited");
    assert_eq!(credited["depositId"], detected["depositId"]);
    assert_eq!(credited["transactionId"], sent["transactionId"]);
    assert_eq!(credited["sourceTxHash"], sent["sourceTxHash"]);

    // The delivery on Arbitrum and the collection on Base, as the local chains answer.
    for (chain_id, hash) in [(42161, &sent["transactionId"]), (8453, &sent["sourceTxHash"])] {
        let hash = hash.as_str().unwrap();
        let reply =
            net.get(&format!("/dashboard/api/chain-tx?chainId={chain_id}&hash={hash}"), None);
        assert_eq!(reply.status, 200, "{}", reply.body);
        let found = reply.json();
        assert_eq!(found["transaction"]["hash"], hash);
        assert_eq!(found["receipt"]["status"], "0x1");
    }
    let bad = net.get("/dashboard/api/chain-tx?chainId=8453&hash=0x12", None);
    assert!(expect_api_error(&bad, 400, "INVALID_REQUEST").contains("\"0x12\""));

    // Money arrives on a chain-backed chain only by real transfers.
    let form = json!({"to": user.owner, "chainId": 8453, "token": "USDC", "amount": "1"});
    expect_api_error(&net.post("/dashboard/api/deposits", None, &form), 400, "CHAIN_BACKED");
}
