//! What the tests do on the chains themselves, as a user's wallet would: transfers from anvil's
//! unlocked development accounts (`eth_sendTransaction`), mints of the test token, Solana
//! airdrops, `svm_mintTo` and signed system transfers; and balance reads.

use std::time::Duration;

use alloy_primitives::{Address, B256, U256};
use depositkit_core::chain::erc20;
use depositkit_core::chain::evm::{EvmRpc, Receipt, quantity};
use depositkit_core::chain::solana::SolanaRpc;
use depositkit_core::chain::solana_tx::{Message, Pubkey, Signature, Transaction, system_transfer};
use depositkit_core::services::HttpSettings;
use depositkit_devnet::chain::keys::SolanaKey;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

/// A client of the EVM node at `url`.
pub fn evm(url: &str) -> EvmRpc {
    EvmRpc::new(url, &HttpSettings::default())
}

/// A client of the Solana node at `url`.
pub fn svm(url: &str) -> SolanaRpc {
    SolanaRpc::new(url, &HttpSettings::default())
}

fn address(text: &str) -> Address {
    text.parse().unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// Sends a transaction from an unlocked account and waits for its successful receipt.
fn send(url: &str, tx: serde_json::Value) -> B256 {
    let rpc = evm(url);
    let hash =
        rpc.send_transaction(&tx).unwrap_or_else(|e| panic!("eth_sendTransaction {tx}: {e}"));
    let receipt = rpc.wait_for_receipt(hash, WAIT).unwrap();
    assert!(receipt.status, "{hash} reverted");
    hash
}

/// `value` wei from the unlocked `from` to `to`: the transaction's hash.
pub fn send_native(url: &str, from: &str, to: &str, value: U256) -> B256 {
    send(url, json!({"from": from, "to": to, "value": quantity(value)}))
}

/// The test token's open `mint(to, amount)`, sent by `from`: a `Transfer` from the zero address.
pub fn mint_token(url: &str, from: &str, token: &str, to: &str, amount: U256) -> B256 {
    let data = alloy_primitives::hex::encode_prefixed(erc20::mint_calldata(address(to), amount));
    send(url, json!({"from": from, "to": token, "data": data}))
}

/// `amount` of `token` from `from` to `to` with ERC-20 `transfer` (minting it to `from` first):
/// the transfer's hash.
pub fn send_token(url: &str, from: &str, token: &str, to: &str, amount: U256) -> B256 {
    mint_token(url, from, token, from, amount);
    let data =
        alloy_primitives::hex::encode_prefixed(erc20::transfer_calldata(address(to), amount));
    send(url, json!({"from": from, "to": token, "data": data}))
}

/// The native balance of `owner`.
pub fn native_balance(url: &str, owner: &str) -> U256 {
    evm(url).balance(address(owner)).unwrap()
}

/// `token.balanceOf(owner)`.
pub fn token_balance(url: &str, token: &str, owner: &str) -> U256 {
    erc20::balance_of(&evm(url), address(token), address(owner)).unwrap()
}

/// The receipt of `hash` (which must be mined).
pub fn receipt(url: &str, hash: &str) -> Receipt {
    let hash: B256 = hash.parse().unwrap_or_else(|e| panic!("{hash:?} is not a hash: {e}"));
    evm(url).receipt(hash).unwrap().unwrap_or_else(|| panic!("no receipt of {hash}"))
}

fn pubkey(text: &str) -> Pubkey {
    text.parse().unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// Airdrops `lamports` to `owner` and waits for it.
pub fn airdrop(url: &str, owner: &str, lamports: u64) {
    let rpc = svm(url);
    let signature = rpc.request_airdrop(&pubkey(owner), lamports).unwrap();
    let status = rpc.wait_confirmed(&signature, WAIT).unwrap();
    assert!(status.err.is_none(), "{status:?}");
}

/// `svm_mintTo [mint, owner, raw]`: mints to `owner`'s associated token account.
pub fn mint_spl(url: &str, mint: &str, owner: &str, raw: u64) {
    svm(url).request("svm_mintTo", json!([mint, owner, raw])).unwrap();
}

/// A system transfer of `lamports` signed by `from`: its signature.
pub fn transfer_sol(url: &str, from: &SolanaKey, to: &str, lamports: u64) -> Signature {
    let rpc = svm(url);
    let payer = Pubkey::new_from_array(from.public_key());
    let instruction = system_transfer(&payer, &pubkey(to), lamports);
    let message = Message::new(&[instruction], &payer, rpc.latest_blockhash().unwrap()).unwrap();
    let signature = Signature::new_from_array(from.sign(&message.serialize()));
    let transaction = Transaction::with_signatures(message, vec![signature]).unwrap();
    let sent = rpc.send_transaction(&transaction.serialize()).unwrap();
    let status = rpc.wait_confirmed(&sent, WAIT).unwrap();
    assert!(status.err.is_none(), "{status:?}");
    sent
}

/// Lamports of `owner`.
pub fn sol_balance(url: &str, owner: &str) -> u64 {
    svm(url).balance(&pubkey(owner)).unwrap()
}

/// What `owner` holds of `mint` (all its token accounts).
pub fn spl_balance(url: &str, mint: &str, owner: &str) -> u64 {
    svm(url)
        .token_accounts_by_owner(&pubkey(owner), &pubkey(mint))
        .unwrap()
        .iter()
        .map(|a| a.raw_amount)
        .sum()
}
