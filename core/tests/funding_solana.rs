//! fund_from_wallet on a real local Solana chain (the SVM JSON-RPC server of
//! `tests/chains/launch.py`), with a plain devnet for the deposit account: SOL and SPL
//! (creating the deposit address's token account) through a host wallet that signs with
//! ed25519 and sends through the RPC, as Phantom's `signAndSendTransaction` does.

mod chains_support;
mod deposit_support;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use chains_support::{Chains, chains};
use deposit_support::{Net, net, owner};
use depositkit_core::chain::solana::SolanaRpc;
use depositkit_core::chain::solana_tx::{Pubkey, Signature, Transaction, associated_token_address};
use depositkit_core::deposit::{DepositClient, DestinationConfig};
use depositkit_core::funding::{FundingBalance, ProviderError, WalletProvider};
use depositkit_core::services::HttpSettings;
use depositkit_core::{ErrorKind, TokenType, U256};
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{Value, json};

const SOL: u64 = 1_000_000_000;
const USDC_MINT: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

fn node(chains: &Chains) -> SolanaRpc {
    SolanaRpc::new(&chains.solana_url(), &HttpSettings::default())
}

/// A Phantom-like wallet: an ed25519 key that signs what it is given and sends it.
struct Phantom {
    key: SigningKey,
    node: SolanaRpc,
    reject: bool,
}

impl Phantom {
    fn new(chains: &Chains) -> Phantom {
        let seed: [u8; 32] = rand_seed();
        Phantom { key: SigningKey::from_bytes(&seed), node: node(chains), reject: false }
    }

    fn pubkey(&self) -> Pubkey {
        Pubkey::new_from_array(self.key.verifying_key().to_bytes())
    }
}

/// A seed nobody used: the hash of a fresh random address.
fn rand_seed() -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(owner().as_bytes()).into()
}

impl WalletProvider for Phantom {
    fn request(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        match method {
            "connect" => Ok(json!({"publicKey": self.pubkey().to_string()})),
            "signAndSendTransaction" if self.reject => {
                Err(ProviderError::rejected("User rejected the request."))
            }
            "signAndSendTransaction" => {
                assert_eq!(params["encoding"], "base64");
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(params["transaction"].as_str().unwrap())
                    .map_err(|e| ProviderError::new(-32602, e.to_string()))?;
                let mut tx = Transaction::deserialize(&bytes)
                    .map_err(|e| ProviderError::new(-32602, e.message().to_owned()))?;
                let signature = self.key.sign(&tx.message_bytes()).to_bytes();
                tx.set_signature(&self.pubkey(), Signature::new_from_array(signature))
                    .map_err(|e| ProviderError::new(-32602, e.message().to_owned()))?;
                let sent = self
                    .node
                    .send_transaction(&tx.serialize())
                    .map_err(|e| ProviderError::new(-32603, e.message().to_owned()))?;
                Ok(json!({"signature": sent.to_string()}))
            }
            other => Err(ProviderError::new(4200, format!("unsupported {other}"))),
        }
    }
}

fn airdrop(chains: &Chains, to: &Pubkey, lamports: u64) {
    let node = node(chains);
    let signature = node.request_airdrop(to, lamports).unwrap();
    node.wait_confirmed(&signature, Duration::from_secs(10)).unwrap();
}

fn mint_usdc(chains: &Chains, to: &Pubkey, raw: u64) {
    node(chains).request("svm_mintTo", json!([USDC_MINT, to.to_string(), raw])).unwrap();
}

fn client(net: &Net, chains: &Chains) -> DepositClient {
    let mut config = deposit_support::config(net, &owner(), DestinationConfig::chain(8453));
    config.funding.enabled = true;
    config.funding.balance_provider = Some("rpc".into());
    config.funding.solana_rpc_url = Some(chains.solana_url());
    let client = DepositClient::new(config).unwrap();
    client.initialize().unwrap();
    client
}

fn connect(client: &DepositClient, wallet: Phantom) -> Pubkey {
    let key = wallet.pubkey();
    client.set_solana_wallet(Arc::new(wallet), None).unwrap();
    assert_eq!(client.connect_solana_wallet().unwrap(), key.to_string());
    key
}

fn find(balances: &[FundingBalance], token: TokenType) -> FundingBalance {
    balances
        .iter()
        .find(|b| b.chain_id() == 101 && b.token() == token)
        .unwrap_or_else(|| panic!("no {token} on Solana in {balances:#?}"))
        .clone()
}

#[test]
fn rpc_discovery_finds_sol_and_usdc_on_the_svm() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let wallet = connect(&client, Phantom::new(chains));
    airdrop(chains, &wallet, 2 * SOL);
    mint_usdc(chains, &wallet, 4_250_000);
    let balances = client.get_wallet_balances().unwrap();
    let summary: Vec<(u64, TokenType, String)> =
        balances.iter().map(|b| (b.chain_id(), b.token(), b.amount().to_owned())).collect();
    assert_eq!(
        summary,
        [(101, TokenType::SOL, "2".to_owned()), (101, TokenType::USDC, "4.25".to_owned())]
    );
    let usdc = &balances[1];
    assert_eq!(usdc.token_address(), Some(USDC_MINT));
    assert_eq!(usdc.wallet_address(), wallet.to_string());
    assert_eq!(usdc.value_usd(), Some(4.25));
}

#[test]
fn sol_transfer_signed_by_the_wallet_lands() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let wallet = connect(&client, Phantom::new(chains));
    airdrop(chains, &wallet, 3 * SOL);
    let balance = find(&client.get_wallet_balances().unwrap(), TokenType::SOL);
    let result = client.fund_from_wallet(&balance, Some(U256::from(SOL / 2))).unwrap();
    let deposit: Pubkey = client.deposit_addresses().unwrap().solana.parse().unwrap();
    assert_eq!(result.to, deposit.to_string());
    assert_eq!(result.from, wallet.to_string());
    assert_eq!(
        (result.amount.as_str(), result.token, result.chain_id),
        ("0.5", TokenType::SOL, 101)
    );
    let node = node(chains);
    assert_eq!(node.balance(&deposit).unwrap(), SOL / 2);
    let status = node.signature_status(&result.tx_hash.parse().unwrap()).unwrap().unwrap();
    assert!(status.err.is_none() && status.is_confirmed(), "{status:?}");
}

#[test]
fn sol_maximum_leaves_only_the_fee() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let wallet = connect(&client, Phantom::new(chains));
    airdrop(chains, &wallet, SOL);
    let balance = find(&client.get_wallet_balances().unwrap(), TokenType::SOL);
    let result = client.fund_from_wallet(&balance, None).unwrap();
    let node = node(chains);
    assert_eq!(node.balance(&wallet).unwrap(), 0, "the whole balance less the fee was sent");
    let deposit: Pubkey = client.deposit_addresses().unwrap().solana.parse().unwrap();
    assert_eq!(U256::from(node.balance(&deposit).unwrap()), result.raw_amount);
    assert!(result.raw_amount < U256::from(SOL));
}

#[test]
fn spl_transfer_creates_the_deposit_token_account() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let wallet = connect(&client, Phantom::new(chains));
    airdrop(chains, &wallet, SOL);
    mint_usdc(chains, &wallet, 12_000_000);
    let balance = find(&client.get_wallet_balances().unwrap(), TokenType::USDC);
    let deposit: Pubkey = client.deposit_addresses().unwrap().solana.parse().unwrap();
    let mint: Pubkey = USDC_MINT.parse().unwrap();
    let node = node(chains);
    assert!(!node.account_exists(&associated_token_address(&deposit, &mint)).unwrap());
    let result = client.fund_from_wallet(&balance, None).unwrap();
    assert_eq!(result.amount, "12");
    let held = node.token_accounts_by_owner(&deposit, &mint).unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].address, associated_token_address(&deposit, &mint));
    assert_eq!(held[0].raw_amount, 12_000_000);
    // A second transfer reuses the account (CreateIdempotent is no longer needed).
    mint_usdc(chains, &wallet, 1_000_000);
    let balance = find(&client.get_wallet_balances().unwrap(), TokenType::USDC);
    client.fund_from_wallet(&balance, None).unwrap();
    assert_eq!(node.token_accounts_by_owner(&deposit, &mint).unwrap()[0].raw_amount, 13_000_000);
}

#[test]
fn spl_without_sol_for_the_fee_is_insufficient_gas_and_a_rejection_moves_nothing() {
    let chains = chains();
    let net = net();
    let client = client(&net, chains);
    let phantom = Phantom::new(chains);
    let key = phantom.pubkey();
    let wallet = connect(&client, phantom);
    assert_eq!(wallet, key);
    mint_usdc(chains, &wallet, 2_000_000);
    let balance = find(&client.get_wallet_balances().unwrap(), TokenType::USDC);
    let err = client.fund_from_wallet(&balance, None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Funding);
    assert!(
        err.message().starts_with("insufficient gas: a USDC transfer on Solana needs"),
        "{err}"
    );
    assert!(err.message().contains("token account"), "{err}");
    // Now with SOL, but the user says no.
    airdrop(chains, &wallet, SOL);
    let mut rejecting = Phantom::new(chains);
    rejecting.reject = true;
    client.set_solana_wallet(Arc::new(rejecting), Some(&wallet.to_string())).unwrap();
    let err = client.fund_from_wallet(&balance, None).unwrap_err();
    assert_eq!(err.message(), "rejected by the wallet (4001): User rejected the request.");
    let deposit: Pubkey = client.deposit_addresses().unwrap().solana.parse().unwrap();
    let mint: Pubkey = USDC_MINT.parse().unwrap();
    assert!(node(chains).token_accounts_by_owner(&deposit, &mint).unwrap().is_empty());
}
