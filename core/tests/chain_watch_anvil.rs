//! The chain watcher on real EVM nodes (anvil, `docs/funding.md` §1): native and ERC-20
//! transfers into a watched address are reported with their block; a reorg reports the
//! transfer removed, and included again when it is mined anew; an endpoint that dies and comes
//! back reports what was mined meanwhile, then `Up`. Each test uses a chain of its own (the
//! reorg rewrites its chain's blocks).

mod chains_support;
mod watch_support;

use std::time::Duration;

use alloy_primitives::{Address, U256};
use chains_support::{chains, fresh_seed};
use depositkit_core::TokenType;
use depositkit_core::chain::evm::EvmRpc;
use depositkit_core::chain::watch::NATIVE_TRANSFER_INDEX;
use depositkit_core::chain::watch::signal::{ChainSignal, Inclusion, TransferSeen};
use serde_json::json;
use watch_support::{Relay, fast, included, removed, watcher};

/// A fresh address nobody used.
fn fresh_address() -> String {
    format!("{:#x}", Address::from_slice(&fresh_seed()[12..]))
}

/// Where `tx` was mined, from its receipt (waits for it).
fn mined_at(node: &EvmRpc, tx: &str) -> Inclusion {
    let receipt = node.wait_for_receipt(tx.parse().unwrap(), Duration::from_secs(10)).unwrap();
    assert!(receipt.status, "{tx} reverted");
    let block = node
        .request("eth_getBlockByNumber", json!([format!("{:#x}", receipt.block_number), false]))
        .unwrap();
    Inclusion { height: receipt.block_number, hash: block["hash"].as_str().unwrap().to_owned() }
}

/// Sends `wei` from the unlocked development account `from` to `to`; the transaction hash.
fn send_native(node: &EvmRpc, from: &str, to: &str, wei: u64) -> String {
    let tx = json!({"from": from, "to": to, "value": format!("{wei:#x}")});
    node.send_transaction(&tx).unwrap().to_string()
}

fn transfer(signal: ChainSignal) -> TransferSeen {
    match signal {
        ChainSignal::Included(seen) => seen,
        other => panic!("not an inclusion: {other:?}"),
    }
}

#[test]
fn native_and_erc20_transfers_are_reported_with_their_block() {
    let chains = chains();
    let node = chains.evm(8453);
    let (watcher, mut signals) = watcher(8453, &chains.evm_url(8453), fast());
    let address = fresh_address();
    let checksummed = chains_support::eip55(&address);
    watcher.watch([checksummed.as_str()]).unwrap();
    signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));

    let sender = chains.dev_account(7);
    let native_tx = send_native(&node, &sender, &address, 1_000_000_000_000_000);
    let native_block = mined_at(&node, &native_tx);
    let usdc = chains.token(8453, "USDC");
    chains.mint_erc20(8453, &usdc, &sender, &address, U256::from(2_500_000u64));

    let native = transfer(signals.wait_for("the native transfer", |s| included(s, &native_tx)));
    assert_eq!(native.to, address);
    assert_eq!(native.chain_id, 8453);
    assert_eq!((native.token, native.contract.as_deref()), (Some(TokenType::ETH), None));
    assert_eq!(native.raw_amount, U256::from(1_000_000_000_000_000u64));
    assert_eq!(native.index, NATIVE_TRANSFER_INDEX);
    assert_eq!(native.inclusion, native_block);

    let token = transfer(signals.wait_for(
        "the USDC transfer",
        |s| matches!(s, ChainSignal::Included(seen) if seen.contract.is_some()),
    ));
    assert_eq!(token.to, address);
    assert_eq!(token.token, Some(TokenType::USDC));
    assert_eq!(token.contract, Some(usdc.to_ascii_lowercase()));
    assert_eq!(token.raw_amount, U256::from(2_500_000u64));
    assert_eq!(token.index, 0, "the mint's only log");
    assert_eq!(token.inclusion, mined_at(&node, &token.tx));
    let head = signals.wait_for(
        "a head at the token's block",
        |s| matches!(s, ChainSignal::Head { latest, .. } if *latest >= token.inclusion.height),
    );
    let ChainSignal::Head { safe, finalized, .. } = head else { unreachable!() };
    assert!(safe.is_some() && finalized.is_some(), "anvil answers the safe and finalized tags");

    // Transfers to an address no longer watched are not reported.
    assert_eq!(watcher.unwatch([checksummed.as_str()]), 1);
    let ignored = send_native(&node, &sender, &address, 1);
    let after = mined_at(&node, &ignored);
    signals.wait_for(
        "a head past the ignored transfer",
        |s| matches!(s, ChainSignal::Head { latest, .. } if *latest >= after.height),
    );
    assert!(signals.position(|s| included(s, &ignored)).is_none(), "{:#?}", signals.seen);
}

#[test]
fn a_reorg_removes_a_transfer_and_its_new_mining_includes_it_again() {
    let chains = chains();
    let node = chains.evm(42161);
    let (watcher, mut signals) = watcher(42161, &chains.evm_url(42161), fast());
    let address = fresh_address();
    watcher.watch([chains_support::eip55(&address).as_str()]).unwrap();
    signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));

    // A signed transaction, so that the very same one (same hash) can be mined again.
    let sender = chains.dev_account(8);
    let nonce = node.transaction_count(sender.parse().unwrap()).unwrap();
    let gas_price = node.gas_price().unwrap() * U256::from(2u64);
    let unsigned = json!({"from": sender, "to": address, "value": "0x2386f26fc10000",
        "gas": "0x5208", "gasPrice": format!("{gas_price:#x}"), "nonce": format!("{nonce:#x}")});
    let raw = node.request("eth_signTransaction", json!([unsigned])).unwrap();
    let raw = raw.as_str().unwrap().to_owned();
    let send_raw = || -> String {
        node.request_once("eth_sendRawTransaction", json!([raw])).unwrap().as_str().unwrap().into()
    };
    let tx = send_raw();
    let first = mined_at(&node, &tx);
    let seen = transfer(signals.wait_for("the transfer", |s| included(s, &tx)));
    assert_eq!(seen.inclusion, first);

    // The block with the transfer (and the one after it) are replaced by empty ones.
    node.request("evm_mine", json!([])).unwrap();
    node.request("anvil_reorg", json!([2, []])).unwrap();
    assert!(node.receipt(tx.parse().unwrap()).unwrap().is_none(), "the reorg dropped it");
    let gone = signals.wait_for("the removal", |s| removed(s, &tx));
    assert_eq!(
        gone,
        ChainSignal::Removed { chain_id: 42161, tx: seen.tx.clone(), index: seen.index }
    );

    // Mined again: reported again under the same transaction and index, in another block.
    assert_eq!(send_raw().to_ascii_lowercase(), tx.to_ascii_lowercase());
    let second = mined_at(&node, &tx);
    assert_ne!(second, first);
    let again = transfer(signals.wait_for("the new inclusion", |s| {
        included(s, &tx) && matches!(s, ChainSignal::Included(x) if x.inclusion != first)
    }));
    assert_eq!((again.tx, again.index), (seen.tx, seen.index));
    assert_eq!(again.inclusion, second);
}

#[test]
fn transfers_made_while_the_endpoint_was_down_are_reported_before_up() {
    let chains = chains();
    let node = chains.evm(1);
    let relay = Relay::new(&chains.evm_url(1));
    let (watcher, mut signals) = watcher(1, &relay.url, fast());
    let address = fresh_address();
    watcher.watch([chains_support::eip55(&address).as_str()]).unwrap();
    signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));
    let sender = chains.dev_account(9);

    relay.cut();
    let down = signals.wait_for("down", |s| matches!(s, ChainSignal::Down { .. }));
    let ChainSignal::Down { chain_id, reason } = down else { unreachable!() };
    assert_eq!(chain_id, 1);
    assert!(!reason.is_empty());
    let native_tx = send_native(&node, &sender, &address, 7);
    mined_at(&node, &native_tx);
    let usdt = chains.token(1, "USDT");
    chains.mint_erc20(1, &usdt, &sender, &address, U256::from(9u64));
    // Still down: nothing is reported while the endpoint is gone.
    assert!(signals.position(|s| included(s, &native_tx)).is_none());

    relay.restore();
    signals.wait_for("up", |s| matches!(s, ChainSignal::Up { chain_id: 1 }));
    let up = signals.position(|s| matches!(s, ChainSignal::Up { .. })).unwrap();
    let native = signals.position(|s| included(s, &native_tx)).expect("the native transfer");
    let token = signals
        .position(|s| matches!(s, ChainSignal::Included(x) if x.token == Some(TokenType::USDT)))
        .expect("the USDT transfer");
    assert!(native < up && token < up, "caught up before Up: {:#?}", signals.seen);
}
