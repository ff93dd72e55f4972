//! Finality and reorganisations on real EVM nodes (`docs/finality.md` §8): devnet's
//! chain-backed mode over anvil, a client watching the Base anvil with a rule of 3
//! confirmations and delivering USDC to its owner on the Arbitrum anvil. `anvil_reorg` replaces
//! blocks for real: a deposit reorganised out before its confirmations is reported `reorged`,
//! never swept, and leaves devnet's `received` and receipts; one moved to another block after
//! its confirmations is credited once; one mined again later is the same deposit, swept once.
//!
//! One devnet serves the binary and the tests take turns (`finality_support::turn`): each
//! reorganises Base, and the blocks it counts are its own.

mod chains_support;
mod deposit_support;
mod finality_support;

use std::time::Duration;

use alloy_primitives::U256;
use alloy_primitives::hex::encode_prefixed;
use chains_support::chains;
use deposit_support::{Net, eventually};
use depositkit_core::TokenType;
use depositkit_core::chain::erc20;
use depositkit_core::chain::evm::EvmRpc;
use depositkit_core::deposit::finality::FinalityRule;
use depositkit_core::deposit::{DepositClient, DepositEvent, DepositPhase};
use finality_support::{
    WAIT, delivered, events_told, ids, reorged_and_never_moved, times, turn, wait_credited,
    wait_event_after, wait_linked, wait_phase,
};
use serde_json::json;

const BASE: u64 = 8453;
// The anvil development account that sends the deposits (account 0 deployed the tokens).
const SENDER: usize = 6;

/// A client watching the Base anvil with a rule of 3 confirmations.
fn watching_client(net: &Net, auto_sweep: bool) -> (DepositClient, String) {
    let rule = Some(FinalityRule::Confirmations(3));
    finality_support::watching_client(net, BASE, &chains().evm_url(BASE), rule, auto_sweep)
}

fn base() -> EvmRpc {
    chains().evm(BASE)
}

/// A signed mint of `raw` USDC on Base to `to` from the development account: sent again, the
/// very same transaction (same hash) is mined again.
fn signed_usdc(to: &str, raw: u64) -> String {
    let node = base();
    let sender = chains().dev_account(SENDER);
    let nonce = node.transaction_count(sender.parse().unwrap()).unwrap();
    let gas_price = node.gas_price().unwrap() * U256::from(2u64);
    let data = erc20::mint_calldata(to.parse().unwrap(), U256::from(raw));
    let unsigned = json!({"from": sender, "to": chains().token(BASE, "USDC"),
        "data": encode_prefixed(data), "gas": "0x30d40",
        "gasPrice": format!("{gas_price:#x}"), "nonce": format!("{nonce:#x}")});
    let raw_tx = node.request("eth_signTransaction", json!([unsigned])).unwrap();
    raw_tx.as_str().unwrap().to_owned()
}

/// Sends the signed transaction `raw_tx` and waits until it is mined; its hash and block.
fn mine(raw_tx: &str) -> (String, u64) {
    let node = base();
    let hash = node.request_once("eth_sendRawTransaction", json!([raw_tx])).unwrap();
    let hash = hash.as_str().unwrap().to_ascii_lowercase();
    let receipt = node.wait_for_receipt(hash.parse().unwrap(), Duration::from_secs(10)).unwrap();
    assert!(receipt.status, "{hash} reverted");
    (hash, receipt.block_number)
}

/// Replaces the newest blocks of Base from `block` on with new ones (`anvil_reorg`), the
/// signed transactions `again` in the first of them.
fn reorganise_from(block: u64, again: &[&str]) {
    let node = base();
    let depth = node.block_number().unwrap() - block + 1;
    let again: Vec<_> = again.iter().map(|raw| json!([raw, 0])).collect();
    node.request("anvil_reorg", json!([depth, again])).unwrap();
}

fn block_hash(block: u64) -> String {
    let found = base().request("eth_getBlockByNumber", json!([format!("{block:#x}"), false]));
    found.unwrap()["hash"].as_str().unwrap().to_owned()
}

fn mine_blocks(blocks: u64) {
    base().request("anvil_mine", json!([format!("{blocks:#x}")])).unwrap();
}

/// Mines the signed deposit `raw_tx` and waits until the client follows it. The deposit's id,
/// the transaction and its block.
fn deposit_followed(
    client: &DepositClient,
    raw_tx: &str,
    pulled: &mut Vec<DepositEvent>,
) -> (String, String, u64) {
    let (tx, block) = mine(raw_tx);
    (wait_linked(client, &tx, pulled), tx, block)
}

/// Devnet's receipts of the client's USDC on Base (`GET /ua/v1/receipts`, read from the chain
/// now): (transaction, range of `received`).
fn receipts(net: &Net, client: &DepositClient) -> Vec<(String, (u64, u64))> {
    let account = client.account_id().unwrap().expect("an account");
    let found = net.devnet.receipts(&account, BASE, TokenType::USDC, "0", "1000000000000").unwrap();
    found
        .into_iter()
        .map(|r| {
            let range = (r.received_before.to::<u64>(), r.received_after.to::<u64>());
            (r.tx_hash.to_ascii_lowercase(), range)
        })
        .collect()
}

/// Checks that `id` is the only deposit among `pulled` and was credited once, never reorged
/// when `reorged` is false.
fn credited_once_alone(pulled: &[DepositEvent], id: &str, reorged: bool) {
    let story = events_told(pulled);
    assert_eq!(ids(pulled), [id.to_owned()].into(), "one deposit:\n{story}");
    assert_eq!(times(pulled, id, DepositPhase::Credited), 1, "{story}");
    assert_eq!(times(pulled, id, DepositPhase::Reorged) > 0, reorged, "{story}");
}

#[test]
fn a_deposit_reorganised_out_before_its_confirmations_is_never_credited() {
    let net = turn();
    let (client, owner) = watching_client(&net, true);
    let address = client.deposit_addresses().unwrap().evm;
    let mut pulled = Vec::new();
    let (id, tx, block) =
        deposit_followed(&client, &signed_usdc(&address, 25_000_000), &mut pulled);
    // devnet counted it received (the balance showed it) before the chain lost it.
    assert_eq!(receipts(&net, &client), [(tx.clone(), (0, 25_000_000))]);
    reorganise_from(block, &[]);
    assert!(base().receipt(tx.parse().unwrap()).unwrap().is_none(), "the reorg dropped it");
    let reorged = wait_phase(&client, &id, DepositPhase::Reorged, &mut pulled);
    assert_eq!(reorged.source_tx_hash.map(|t| t.to_ascii_lowercase()), Some(tx.clone()));
    // devnet's `received` follows the chain: the transfer never happened.
    let gone = || receipts(&net, &client).is_empty();
    assert!(eventually(WAIT, gone), "{:?}", receipts(&net, &client));
    // Far past its confirmations, and a second deposit credited after it: the first never moved.
    mine_blocks(4);
    let (second, second_tx, _) =
        deposit_followed(&client, &signed_usdc(&address, 7_000_000), &mut pulled);
    mine_blocks(2);
    let swept = wait_credited(&client, &second, &mut pulled);
    reorged_and_never_moved(&client, &pulled, &id);
    let told = events_told(&pulled);
    assert_eq!(ids(&pulled), [id, second].into(), "no deposit of money that is gone:\n{told}");
    // The second deposit is all the account ever received, and all that arrived.
    assert_eq!(receipts(&net, &client), [(second_tx, (0, 7_000_000))]);
    assert_eq!(delivered(&owner), swept, "only the second arrived");
    assert!(swept > U256::from(6_000_000u64) && swept < U256::from(7_000_000u64), "{swept}");
    client.close().unwrap();
}

#[test]
fn a_deposit_moved_to_another_block_after_its_confirmations_is_credited_once() {
    let net = turn();
    let (client, owner) = watching_client(&net, false);
    let address = client.deposit_addresses().unwrap().evm;
    let mut pulled = Vec::new();
    let raw_tx = signed_usdc(&address, 25_000_000);
    let (id, tx, block) = deposit_followed(&client, &raw_tx, &mut pulled);
    mine_blocks(2);
    let confirmed = wait_phase(&client, &id, DepositPhase::Confirmed, &mut pulled);
    assert_eq!(confirmed.confirmations, Some(3));
    // Its block and the two over it are replaced; the transfer is in the first new block.
    let before = block_hash(block);
    reorganise_from(block, &[&raw_tx]);
    let moved = base().receipt(tx.parse().unwrap()).unwrap().expect("mined again");
    assert_eq!(moved.block_number, block);
    assert_ne!(block_hash(block), before, "a new block");
    let result = client.sweep(&id).unwrap();
    assert!(result.delivered.is_some(), "{result:?}");
    let swept = wait_credited(&client, &id, &mut pulled);
    client.poll_now().unwrap();
    credited_once_alone(&pulled, &id, false);
    assert_eq!(receipts(&net, &client), [(tx, (0, 25_000_000))]);
    assert_eq!(delivered(&owner), swept, "credited once");
    client.close().unwrap();
}

#[test]
fn a_deposit_mined_again_later_keeps_its_id_and_is_credited_once() {
    let net = turn();
    let (client, owner) = watching_client(&net, true);
    let address = client.deposit_addresses().unwrap().evm;
    let mut pulled = Vec::new();
    let raw_tx = signed_usdc(&address, 25_000_000);
    let (id, tx, block) = deposit_followed(&client, &raw_tx, &mut pulled);
    assert_eq!(receipts(&net, &client), [(tx.clone(), (0, 25_000_000))]);
    reorganise_from(block, &[]);
    wait_phase(&client, &id, DepositPhase::Reorged, &mut pulled);
    assert!(eventually(WAIT, || receipts(&net, &client).is_empty()));
    // Two blocks later the very same transaction is mined again: seen again, under its id.
    mine_blocks(2);
    let (again, again_block) = mine(&raw_tx);
    assert_eq!((again.as_str(), again_block > block), (tx.as_str(), true));
    let is_reorged = |e: &DepositEvent| {
        e.lifecycle().is_some_and(|l| l.id == id && l.phase == DepositPhase::Reorged)
    };
    let reorged_at = pulled.iter().position(is_reorged).unwrap();
    wait_event_after(&client, &mut pulled, reorged_at, |l| {
        l.id == id && l.phase == DepositPhase::Seen
    });
    mine_blocks(2);
    wait_phase(&client, &id, DepositPhase::Confirmed, &mut pulled);
    let swept = wait_credited(&client, &id, &mut pulled);
    assert_eq!(times(&pulled, &id, DepositPhase::Seen), 2, "{}", events_told(&pulled));
    credited_once_alone(&pulled, &id, true);
    // Received once, in the same range, under its own hash; delivered once.
    assert_eq!(receipts(&net, &client), [(tx, (0, 25_000_000))]);
    assert_eq!(delivered(&owner), swept, "swept once");
    client.close().unwrap();
}

/// The same chain watched through the node's websocket (`ws://`, `eth_subscribe` to new heads):
/// the deposit is seen, confirmed after its 3 confirmations, and credited once at the
/// destination.
#[test]
fn a_deposit_watched_through_a_websocket_endpoint_is_confirmed_and_credited_once() {
    let net = turn();
    let ws = chains().evm_url(BASE).replacen("http://", "ws://", 1);
    assert!(ws.starts_with("ws://"), "{ws}");
    let rule = Some(FinalityRule::Confirmations(3));
    let (client, owner) = finality_support::watching_client(&net, BASE, &ws, rule, true);
    let address = client.deposit_addresses().unwrap().evm;
    let mut pulled = Vec::new();
    let (id, tx, _) = deposit_followed(&client, &signed_usdc(&address, 9_000_000), &mut pulled);
    mine_blocks(2);
    let confirmed = wait_phase(&client, &id, DepositPhase::Confirmed, &mut pulled);
    assert_eq!(confirmed.confirmations, Some(3));
    let swept = wait_credited(&client, &id, &mut pulled);
    credited_once_alone(&pulled, &id, false);
    assert_eq!(receipts(&net, &client), [(tx, (0, 9_000_000))]);
    assert_eq!(delivered(&owner), swept, "credited once");
    assert!(swept > U256::from(8_000_000u64) && swept < U256::from(9_000_000u64), "{swept}");
    client.close().unwrap();
}
