//! fund_from_wallet on real local EVM chains (anvil, `tests/chains/launch.py`), with a plain
//! devnet for the deposit account: native and ERC-20 transfers through a URL wallet, the
//! gas-adjusted maximum, the gas check, and a wallet that rejects.

mod chains_support;
mod deposit_support;

use std::sync::Arc;

use alloy_primitives::{Address, U256};
use chains_support::{Chains, chains, eip55};
use deposit_support::{Net, net, owner};
use depositkit_core::chain::erc20;
use depositkit_core::chain::evm::{EvmRpc, quantity};
use depositkit_core::deposit::{DepositClient, DestinationConfig};
use depositkit_core::funding::{EvmProvider, FundingBalance, ProviderError, WalletProvider};
use depositkit_core::services::HttpSettings;
use depositkit_core::{ErrorKind, TokenType, token_info};
use serde_json::{Value, json};

const ETHER: u64 = 1_000_000_000_000_000_000;

fn rpc(url: &str) -> EvmRpc {
    EvmRpc::new(url, &HttpSettings::default())
}

fn usdc(chain_id: u64) -> Address {
    let chain = depositkit_core::Chain::from_id(chain_id).unwrap();
    token_info(TokenType::USDC, chain).unwrap().contract.unwrap().parse().unwrap()
}

/// A fresh address nobody used, unlocked on every anvil (impersonated) with `wei` native.
fn fresh_wallet(chains: &Chains, wei: U256) -> String {
    let address = owner();
    for (_, url) in chains.evm_urls() {
        let node = rpc(&url);
        node.request("anvil_impersonateAccount", json!([address])).unwrap();
        node.request("anvil_setBalance", json!([address, quantity(wei)])).unwrap();
    }
    address
}

/// Mints `amount` of the test token at `token` to `to` (its `mint` is open).
fn mint(chains: &Chains, chain_id: u64, token: Address, to: &str, amount: U256) {
    let node = rpc(&chains.evm_url(chain_id));
    let data = erc20::mint_calldata(to.parse().unwrap(), amount);
    let tx = json!({"from": chains.dev_account(9), "to": token.to_string(),
                    "data": alloy_primitives::hex::encode_prefixed(data)});
    let hash = node.send_transaction(&tx).unwrap();
    let receipt = node.wait_for_receipt(hash, std::time::Duration::from_secs(10)).unwrap();
    assert!(receipt.status, "mint reverted");
}

/// An initialized client on a plain devnet whose funding reads the local chains by RPC.
fn client(net: &Net, chains: &Chains) -> DepositClient {
    client_with(net, chains, |_| {})
}

fn client_with(
    net: &Net,
    chains: &Chains,
    tune: impl FnOnce(&mut depositkit_core::DepositClientConfig),
) -> DepositClient {
    let mut config = deposit_support::config(net, &owner(), DestinationConfig::chain(8453));
    config.funding.enabled = true;
    config.funding.balance_provider = Some("rpc".into());
    for (id, url) in chains.evm_urls() {
        config.funding.evm_rpc_urls.insert(id, url);
    }
    config.funding.solana_rpc_url = Some(chains.solana_url());
    tune(&mut config);
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    client
}

fn find(balances: &[FundingBalance], chain_id: u64, token: TokenType) -> FundingBalance {
    balances
        .iter()
        .find(|b| b.chain_id() == chain_id && b.token() == token)
        .unwrap_or_else(|| panic!("no {token} on {chain_id} in {balances:#?}"))
        .clone()
}

#[test]
fn rpc_discovery_finds_native_and_usdc_on_anvil() {
    let chains = chains();
    let net = net();
    // "rpc" comes before the API key and the proxy (both unreachable here).
    let client = client_with(&net, chains, |c| {
        c.funding.api_key = Some("unused-key".into());
        c.funding.proxy_url = Some("http://127.0.0.1:1".into());
    });
    let wallet = fresh_wallet(chains, U256::ZERO);
    rpc(&chains.evm_url(8453))
        .request("anvil_setBalance", json!([wallet, quantity(U256::from(ETHER))]))
        .unwrap();
    mint(chains, 8453, usdc(8453), &wallet, U256::from(25_000_000u64));
    // The wallet sits on Ethereum's node; discovery reads every chain's own node.
    client.set_evm_wallet(EvmProvider::Url(chains.evm_url(1)), Some(&wallet)).unwrap();
    let balances = client.get_wallet_balances().unwrap();
    let summary: Vec<(u64, TokenType, String)> =
        balances.iter().map(|b| (b.chain_id(), b.token(), b.raw_amount().to_string())).collect();
    assert_eq!(
        summary,
        [(8453, TokenType::ETH, ETHER.to_string()), (8453, TokenType::USDC, "25000000".to_owned()),]
    );
    let usdc_line = &balances[1];
    assert_eq!(usdc_line.value_usd(), Some(25.0), "stablecoins are priced at 1");
    assert_eq!(balances[0].value_usd(), None, "native is unpriced, and still offered");
    assert_eq!(usdc_line.wallet_address(), eip55(&wallet));
    assert_eq!(usdc_line.to_json()["source"], "rpc");
}

#[test]
fn native_transfer_through_a_url_wallet_lands_on_chain() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let wallet = chains.dev_account(1);
    // Starts on Ethereum's node: funding on Base switches it (wallet_switchEthereumChain).
    client.set_evm_wallet(EvmProvider::Url(chains.evm_url(1)), None).unwrap();
    let connected = client.connect_evm_wallet().unwrap();
    assert!(connected.eq_ignore_ascii_case(&chains.dev_account(0)), "{connected}");
    client.set_evm_wallet(EvmProvider::Url(chains.evm_url(1)), Some(&wallet)).unwrap();
    let balance = find(&client.get_wallet_balances().unwrap(), 8453, TokenType::ETH);
    let half = U256::from(ETHER / 2);
    let result = client.fund_from_wallet(&balance, Some(half)).unwrap();
    let deposit = client.deposit_addresses().unwrap().evm;
    assert_eq!(result.to, deposit);
    assert_eq!(result.from, eip55(&wallet), "addresses come out in EIP-55 form");
    assert_eq!(
        (result.chain_id, result.token, result.amount.as_str()),
        (8453, TokenType::ETH, "0.5")
    );
    let base = rpc(&chains.evm_url(8453));
    assert_eq!(base.balance(deposit.parse().unwrap()).unwrap(), half);
    let receipt = base.receipt(result.tx_hash.parse().unwrap()).unwrap().unwrap();
    assert!(receipt.status);
    assert_eq!(rpc(&chains.evm_url(1)).balance(deposit.parse().unwrap()).unwrap(), U256::ZERO);
}

#[test]
fn erc20_transfer_sends_the_whole_token_balance_by_default() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let wallet = fresh_wallet(chains, U256::from(ETHER));
    mint(chains, 42161, usdc(42161), &wallet, U256::from(7_500_000u64));
    client.set_evm_wallet(EvmProvider::Url(chains.evm_url(42161)), Some(&wallet)).unwrap();
    let balance = find(&client.get_wallet_balances().unwrap(), 42161, TokenType::USDC);
    let result = client.fund_from_wallet(&balance, None).unwrap();
    assert_eq!(result.amount, "7.5");
    let deposit: Address = client.deposit_addresses().unwrap().evm.parse().unwrap();
    let node = rpc(&chains.evm_url(42161));
    assert_eq!(erc20::balance_of(&node, usdc(42161), deposit).unwrap(), U256::from(7_500_000u64));
    assert_eq!(erc20::balance_of(&node, usdc(42161), wallet.parse().unwrap()).unwrap(), U256::ZERO);
    let receipt = node.receipt(result.tx_hash.parse().unwrap()).unwrap().unwrap();
    let transfer = receipt.logs.iter().find_map(erc20::decode_transfer_log).unwrap();
    assert_eq!((transfer.to, transfer.value), (deposit, U256::from(7_500_000u64)));
}

#[test]
fn gas_adjusted_maximum_empties_the_wallet_and_lands() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let start = U256::from(ETHER / 100);
    let wallet = fresh_wallet(chains, start);
    client.set_evm_wallet(EvmProvider::Url(chains.evm_url(56)), Some(&wallet)).unwrap();
    let balance = find(&client.get_wallet_balances().unwrap(), 56, TokenType::BNB);
    assert_eq!(balance.raw_amount(), start);
    let result = client.fund_from_wallet(&balance, None).unwrap();
    let node = rpc(&chains.evm_url(56));
    let deposit: Address = client.deposit_addresses().unwrap().evm.parse().unwrap();
    assert_eq!(node.balance(deposit).unwrap(), result.raw_amount);
    let receipt = node.receipt(result.tx_hash.parse().unwrap()).unwrap().unwrap();
    let left = node.balance(wallet.parse().unwrap()).unwrap();
    // Sent as a legacy gasPrice: the cost is exactly gas × price, all of what was left.
    assert_eq!(left + result.raw_amount + receipt.fee(), start);
    assert!(result.raw_amount < start);
}

#[test]
fn insufficient_gas_for_an_erc20_transfer_sends_nothing() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let wallet = fresh_wallet(chains, U256::ZERO);
    mint(chains, 1, usdc(1), &wallet, U256::from(3_000_000u64));
    client.set_evm_wallet(EvmProvider::Url(chains.evm_url(1)), Some(&wallet)).unwrap();
    let balances = client.get_wallet_balances().unwrap();
    assert_eq!(balances.len(), 1, "no native line for an empty wallet: {balances:#?}");
    let err = client.fund_from_wallet(&balances[0], None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Funding);
    assert!(
        err.message().starts_with("insufficient gas: a USDC transfer on Ethereum needs"),
        "{err}"
    );
    assert!(err.message().contains("the wallet holds 0 ETH"), "{err}");
    let node = rpc(&chains.evm_url(1));
    let deposit: Address = client.deposit_addresses().unwrap().evm.parse().unwrap();
    assert_eq!(
        erc20::balance_of(&node, usdc(1), wallet.parse().unwrap()).unwrap(),
        U256::from(3_000_000u64)
    );
    assert_eq!(erc20::balance_of(&node, usdc(1), deposit).unwrap(), U256::ZERO);
    assert_eq!(node.transaction_count(wallet.parse().unwrap()).unwrap(), 0);
}

/// A host wallet that reads through anvil and rejects every transaction (user said no).
struct Rejecting {
    node: EvmRpc,
    sends: std::sync::atomic::AtomicUsize,
}

impl WalletProvider for Rejecting {
    fn request(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        if method == "eth_sendTransaction" {
            self.sends.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Err(ProviderError::rejected("User denied transaction signature."));
        }
        self.node
            .request(method, params.clone())
            .map_err(|e| ProviderError::new(-32603, e.message().to_owned()))
    }
}

#[test]
fn a_wallet_that_rejects_is_a_funding_error_and_nothing_moves() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let wallet = chains.dev_account(2);
    let host = Arc::new(Rejecting { node: rpc(&chains.evm_url(8453)), sends: Default::default() });
    client.set_evm_wallet(EvmProvider::Host(host.clone()), Some(&wallet)).unwrap();
    let node = rpc(&chains.evm_url(8453));
    let nonce = node.transaction_count(wallet.parse().unwrap()).unwrap();
    let balance = find(&client.get_wallet_balances().unwrap(), 8453, TokenType::ETH);
    let err = client.fund_from_wallet(&balance, Some(U256::from(ETHER))).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Funding);
    assert_eq!(err.message(), "rejected by the wallet (4001): User denied transaction signature.");
    assert_eq!(host.sends.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(node.transaction_count(wallet.parse().unwrap()).unwrap(), nonce);
    let deposit: Address = client.deposit_addresses().unwrap().evm.parse().unwrap();
    assert_eq!(node.balance(deposit).unwrap(), U256::ZERO);
}
