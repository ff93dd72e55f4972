//! The user-facing flow of funding from a wallet (`docs/funding.md` §4), end to end on the real
//! local chains (`tests/chains/launch.py`) with a **chain-backed** devnet (§2): a wallet sends
//! money to the deposit address with `fund_from_wallet`, the client's watcher detects it, the
//! sweep collects it on the source chain and devnet's vault delivers on the destination chain —
//! checked on chain, to the smallest unit, against devnet's fee rules (`docs/protocol.md` §3).
//!
//! One launcher and one chain-backed devnet serve the whole test binary ([`fixture`]): two
//! devnets on the same chains would race for the vault's nonces. Tests run in parallel, so each
//! has an owner of its own and a funding wallet of its own (its own anvil development account,
//! or a fresh Solana key).

mod chains_support;
mod deposit_support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use alloy_primitives::U256;
use chains_support::{Chains, SolanaWallet, chains, eip55};
use deposit_support::{owner, wait_for};
use depositkit_core::chain::evm::EvmRpc;
use depositkit_core::chain::solana_tx::Pubkey;
use depositkit_core::deposit::{
    DepositClient, DepositClientConfig, DepositEvent, DepositLifecycleEvent, DepositPhase,
    DestinationConfig, SweepStatus,
};
use depositkit_core::funding::{EvmProvider, FundingBalance, ProviderError, WalletProvider};
use depositkit_core::{ErrorKind, TokenType};
use depositkit_devnet::{Devnet, DevnetConfig, RunningDevnet};
use serde_json::Value;

const ETHER: u64 = 1_000_000_000_000_000_000;
const MILLI_ETHER: u64 = ETHER / 1000;
const SOL: u64 = 1_000_000_000;
/// How long a funded deposit may take to be credited (it is a few seconds at most).
const CREDIT_TIMEOUT: Duration = Duration::from_secs(60);

// anvil development accounts, one per test (account 0 deployed the tokens).
const ETH_WALLET: usize = 1;
const USDC_WALLET: usize = 2;
const REJECTING_WALLET: usize = 3;

/// The chains and the one devnet backed by them.
struct Fixture {
    chains: &'static Chains,
    // `RunningDevnet` is not `Sync`: calls into it take this lock (briefly).
    devnet: Mutex<RunningDevnet>,
    services_url: String,
}

/// Where the fixture's devnet keeps its database: one file per test process, in cargo's
/// scratch directory for integration tests. The fixture lives in a static and is never
/// dropped, so each start removes the files of processes that are gone.
fn database_path() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("depositkit-funding-flow");
    std::fs::create_dir_all(&dir).unwrap();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name.split('.').next().unwrap_or_default();
            if !pid.is_empty() && !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    dir.join(format!("{}.sqlite", std::process::id()))
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let chains = chains();
        let config = DevnetConfig::new(database_path()).with_chains(chains.devnet_config());
        let devnet = Devnet::start(config).unwrap_or_else(|e| panic!("devnet on the chains: {e}"));
        assert_eq!(devnet.chains(), [1, 56, 8453, 42161, 101], "every chain is chain-backed");
        let services_url = devnet.services_url();
        Fixture { chains, devnet: Mutex::new(devnet), services_url }
    })
}

impl Fixture {
    fn devnet<T>(&self, f: impl FnOnce(&RunningDevnet) -> T) -> T {
        f(&self.devnet.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// What `address` holds of `token` on `chain_id`, read from the chain by devnet.
    fn chain_balance(&self, address: &str, chain_id: u64, token: TokenType) -> U256 {
        self.devnet(|d| d.chain_balance(address, chain_id, token))
            .unwrap_or_else(|e| panic!("chain_balance({address}, {chain_id}, {token}): {e}"))
    }

    /// An initialized client of `owner` delivering to `destination`, with the fast knobs of
    /// the deposit tests (`deposit_support::config`) and funding on (RPC discovery on the
    /// local chains).
    fn client(&self, owner: &str, destination: DestinationConfig) -> DepositClient {
        let mut config =
            DepositClientConfig::new(owner, destination).with_services_url(&self.services_url);
        config.min_polling_interval_ms = 20;
        config.polling_interval_ms = 50;
        config.sweep_retry_delay_ms = 30;
        config.http_retries = 3;
        config.http_initial_backoff_ms = 5;
        config.request_timeout_ms = 3000;
        config.call_timeout_ms = 20_000;
        config.funding.enabled = true;
        config.funding.balance_provider = Some("rpc".into());
        for (id, url) in self.chains.evm_urls() {
            config.funding.evm_rpc_urls.insert(id, url);
        }
        config.funding.solana_rpc_url = Some(self.chains.solana_url());
        let client = DepositClient::new(config).unwrap();
        client.initialize().unwrap();
        client
    }
}

/// What devnet delivers for `raw` of a token (`src_decimals`, `src_price` USD) swept to a token
/// of `dst_decimals` at `dst_price` USD with `gas_usd` of destination gas, no service fee (the
/// clients send no `uaProjectId`) — `docs/protocol.md` §3, in integers of 10⁻¹⁸ USD:
/// `value = ⌊raw × price / 10^src⌋`, `lp = ⌊value × 0.002⌋`,
/// `delivered = ⌊(value − gas − lp) × 10^dst / dstPrice⌋`. Prices and gas are given in 10⁻⁹ USD.
fn expected_delivered(
    raw: U256,
    src_decimals: u32,
    src_price_nano: u64,
    dst_decimals: u32,
    dst_price_nano: u64,
    gas_nano: u64,
) -> U256 {
    let pow10 = |e: u32| U256::from(10u64).pow(U256::from(e));
    let nano_to_atto = pow10(9);
    let value = raw * U256::from(src_price_nano) * nano_to_atto / pow10(src_decimals);
    let lp = value * U256::from(20u64) / U256::from(10_000u64);
    let gas = U256::from(gas_nano) * nano_to_atto;
    (value - gas - lp) * pow10(dst_decimals) / (U256::from(dst_price_nano) * nano_to_atto)
}

const USD: u64 = 1_000_000_000; // 1 USD in 10⁻⁹ USD
const ETH_PRICE: u64 = 2500 * USD;
const SOL_PRICE: u64 = 150 * USD;
const GAS_EVM: u64 = 30_000_000; // 0.03 USD: Base, Arbitrum, BNB Chain
const GAS_SOLANA: u64 = 10_000_000; // 0.01 USD

fn find(balances: &[FundingBalance], chain_id: u64, token: TokenType) -> FundingBalance {
    balances
        .iter()
        .find(|b| b.chain_id() == chain_id && b.token() == token)
        .unwrap_or_else(|| panic!("no {token} on {chain_id} in {balances:#?}"))
        .clone()
}

/// `(chain, token, raw amount)` of every line, for comparisons.
fn summary(balances: &[FundingBalance]) -> Vec<(u64, TokenType, U256)> {
    balances.iter().map(|b| (b.chain_id(), b.token(), b.raw_amount())).collect()
}

/// Polls once and returns the one deposit it detected.
fn poll_detected(client: &DepositClient) -> DepositLifecycleEvent {
    let found = client.poll_now().unwrap();
    let detected: Vec<_> =
        found.into_iter().filter(|e| e.phase == DepositPhase::Detected).collect();
    assert_eq!(detected.len(), 1, "one deposit detected: {detected:#?}");
    detected.into_iter().next().unwrap()
}

/// Pulls events until `id` is credited or failed; returns the terminal event and every event.
fn wait_settled(client: &DepositClient, id: &str) -> (DepositLifecycleEvent, Vec<DepositEvent>) {
    let events = wait_for(client, CREDIT_TIMEOUT, |e| {
        e.id == id && matches!(e.phase, DepositPhase::Credited | DepositPhase::Failed)
    });
    let last = events.last().and_then(DepositEvent::lifecycle).unwrap().clone();
    assert_eq!(last.phase, DepositPhase::Credited, "{last:#?}\nevents: {events:#?}");
    (last, events)
}

/// The delivered raw amount of `id`'s successful sweep, checked against its credited event.
fn delivered(client: &DepositClient, credited: &DepositLifecycleEvent) -> U256 {
    let result = client.sweep_result(&credited.id).unwrap().expect("a sweep result");
    assert_eq!(result.status, SweepStatus::Success, "{result:#?}");
    assert_eq!(credited.transaction_id.as_deref(), Some(result.transaction_id.as_str()));
    let delivered = result.delivered.expect("the delivered amount");
    delivered.raw_amount.parse().unwrap()
}

/// After the sweep: another poll detects nothing and no deposit is pending.
fn assert_nothing_new(client: &DepositClient) {
    let found = client.poll_now().unwrap();
    assert!(found.is_empty(), "nothing new after the sweep: {found:#?}");
    assert!(
        client.pending_deposits().unwrap().is_empty(),
        "{:#?}",
        client.pending_deposits().unwrap()
    );
}

#[test]
fn native_eth_from_a_url_wallet_is_credited_as_usdc_on_arbitrum() {
    let fx = fixture();
    let owner = owner();
    let client = fx.client(&owner, DestinationConfig::chain(42161));
    let deposit = client.deposit_addresses().unwrap().evm;
    client.start_watching().unwrap();

    let wallet = fx.chains.dev_account(ETH_WALLET);
    client.set_evm_wallet(EvmProvider::Url(fx.chains.evm_url(8453)), Some(&wallet)).unwrap();
    let eth = find(&client.get_wallet_balances().unwrap(), 8453, TokenType::ETH);
    assert!(eth.raw_amount() >= U256::from(ETHER), "{eth:?}");
    let before = fx.chains.native_balance(8453, &wallet);

    let amount = U256::from(MILLI_ETHER);
    let sent = client.fund_from_wallet(&eth, Some(amount)).unwrap();
    assert_eq!((sent.chain_id, sent.token, sent.amount.as_str()), (8453, TokenType::ETH, "0.001"));
    assert_eq!((sent.raw_amount, sent.to.as_str()), (amount, deposit.as_str()));
    assert_eq!(sent.from, eip55(&wallet));
    let base = fx.chains.evm(8453);
    let funding = base.receipt(sent.tx_hash.parse().unwrap()).unwrap().expect("mined");
    assert!(funding.status);
    assert_eq!(fx.chains.native_balance(8453, &wallet), before - amount - funding.fee());

    // The watcher (already running) detects the transfer and sweeps it.
    let detected = wait_for(&client, CREDIT_TIMEOUT, |e| e.phase == DepositPhase::Detected);
    let detected = detected.last().and_then(DepositEvent::lifecycle).unwrap().clone();
    assert_eq!((detected.chain_id, detected.token), (8453, TokenType::ETH));
    assert_eq!((detected.amount.as_str(), detected.amount_usd), ("0.001", 2.5));
    let (credited, events) = wait_settled(&client, &detected.id);
    let phases: Vec<_> = events
        .iter()
        .filter_map(DepositEvent::lifecycle)
        .filter(|e| e.id == detected.id)
        .map(|e| e.phase)
        .collect();
    assert_eq!(phases, [DepositPhase::Processing, DepositPhase::Credited], "{events:#?}");
    let destination = credited.destination.clone().unwrap();
    assert_eq!((destination.address.as_str(), destination.chain_id), (owner.as_str(), 42161));

    // 0.001 ETH at 2500 = 2.50 USD − 0.03 gas − 0.005 LP = 2.465 USDC.
    let expected = expected_delivered(amount, 18, ETH_PRICE, 6, USD, GAS_EVM);
    assert_eq!(expected, U256::from(2_465_000u64));
    assert_eq!(delivered(&client, &credited), expected);
    assert_eq!(fx.chain_balance(&owner, 42161, TokenType::USDC), expected);
    // The delivery is a real transaction on Arbitrum.
    let delivery = credited.transaction_id.clone().unwrap();
    let receipt = fx.chains.evm(42161).receipt(delivery.parse().unwrap()).unwrap().expect("mined");
    assert!(receipt.status);
    // Collected: devnet sent the deposit address exactly the collection's gas, nothing is left.
    assert_eq!(fx.chain_balance(&deposit, 8453, TokenType::ETH), U256::ZERO);
    client.stop_watching().unwrap();
    assert_nothing_new(&client);
}

#[test]
fn usdc_on_base_sends_the_whole_token_balance_and_is_credited_on_arbitrum() {
    let fx = fixture();
    let owner = owner();
    let client = fx.client(&owner, DestinationConfig::chain(42161));
    let deposit = client.deposit_addresses().unwrap().evm;
    let wallet = fx.chains.dev_account(USDC_WALLET);
    let usdc_base = fx.chains.token(8453, "USDC");
    let minted = U256::from(10_000_000u64);
    assert_eq!(fx.chains.erc20_balance(8453, &usdc_base, &wallet), U256::ZERO);
    fx.chains.mint_erc20(8453, &usdc_base, &wallet, &wallet, minted);

    client.set_evm_wallet(EvmProvider::Url(fx.chains.evm_url(8453)), Some(&wallet)).unwrap();
    let usdc = find(&client.get_wallet_balances().unwrap(), 8453, TokenType::USDC);
    assert_eq!((usdc.raw_amount(), usdc.value_usd()), (minted, Some(10.0)));
    let sent = client.fund_from_wallet(&usdc, None).unwrap();
    assert_eq!((sent.raw_amount, sent.amount.as_str()), (minted, "10"));
    assert_eq!(sent.to, deposit);
    assert_eq!(fx.chains.erc20_balance(8453, &usdc_base, &wallet), U256::ZERO);
    assert_eq!(fx.chain_balance(&deposit, 8453, TokenType::USDC), minted);

    let detected = poll_detected(&client);
    assert_eq!(
        (detected.chain_id, detected.token, detected.amount.as_str()),
        (8453, TokenType::USDC, "10")
    );
    let (credited, _) = wait_settled(&client, &detected.id);

    // 10 USDC − 0.03 gas − 0.02 LP = 9.95 USDC.
    let expected = expected_delivered(minted, 6, USD, 6, USD, GAS_EVM);
    assert_eq!(expected, U256::from(9_950_000u64));
    assert_eq!(delivered(&client, &credited), expected);
    assert_eq!(fx.chain_balance(&owner, 42161, TokenType::USDC), expected);
    assert_eq!(fx.chain_balance(&deposit, 8453, TokenType::USDC), U256::ZERO, "collected");
    assert_eq!(fx.chains.erc20_balance(8453, &usdc_base, &wallet), U256::ZERO);
    // What the collection did not burn of the gas devnet sent stays as native dust, which is
    // no deposit.
    assert_nothing_new(&client);
}

/// A fresh Solana wallet holding `lamports`, set as the client's Solana funding wallet.
fn connect_solana(fx: &Fixture, client: &DepositClient, lamports: u64) -> Pubkey {
    let wallet = SolanaWallet::new(fx.chains);
    let key = wallet.pubkey();
    fx.chains.airdrop(&key, lamports);
    client.set_solana_wallet(Arc::new(wallet), None).unwrap();
    assert_eq!(client.connect_solana_wallet().unwrap(), key.to_string());
    key
}

#[test]
fn sol_from_a_signing_wallet_is_credited_as_usdc_on_arbitrum() {
    let fx = fixture();
    let owner = owner();
    let client = fx.client(&owner, DestinationConfig::chain(42161));
    let deposit = client.deposit_addresses().unwrap().solana;
    let wallet = connect_solana(fx, &client, SOL);

    let sol = find(&client.get_wallet_balances().unwrap(), 101, TokenType::SOL);
    assert_eq!(sol.raw_amount(), U256::from(SOL));
    let amount = U256::from(SOL / 10);
    let sent = client.fund_from_wallet(&sol, Some(amount)).unwrap();
    assert_eq!((sent.chain_id, sent.token, sent.amount.as_str()), (101, TokenType::SOL, "0.1"));
    assert_eq!((sent.from, sent.to.as_str()), (wallet.to_string(), deposit.as_str()));
    assert_eq!(fx.chain_balance(&deposit, 101, TokenType::SOL), amount);

    let detected = poll_detected(&client);
    assert_eq!(
        (detected.chain_id, detected.token, detected.amount.as_str()),
        (101, TokenType::SOL, "0.1")
    );
    let (credited, _) = wait_settled(&client, &detected.id);

    // 0.1 SOL at 150 = 15 USD − 0.03 gas − 0.03 LP = 14.94 USDC.
    let expected = expected_delivered(amount, 9, SOL_PRICE, 6, USD, GAS_EVM);
    assert_eq!(expected, U256::from(14_940_000u64));
    assert_eq!(delivered(&client, &credited), expected);
    assert_eq!(fx.chain_balance(&owner, 42161, TokenType::USDC), expected);
    // Collected whole: the vault paid the collection's fee.
    assert_eq!(fx.chain_balance(&deposit, 101, TokenType::SOL), U256::ZERO);
    assert_nothing_new(&client);
}

#[test]
fn spl_usdc_from_a_signing_wallet_is_credited_on_solana() {
    let fx = fixture();
    let owner = owner();
    let receiver = SolanaWallet::new(fx.chains).pubkey().to_string();
    let destination = DestinationConfig::chain(101).with_address(receiver.clone());
    let client = fx.client(&owner, destination);
    let deposit = client.deposit_addresses().unwrap().solana;
    let wallet = connect_solana(fx, &client, SOL / 20); // the fee and the token account's rent
    let usdc_mint = fx.chains.token(101, "USDC");
    let minted = 5_000_000u64;
    fx.chains.mint_spl(&usdc_mint, &wallet, minted);

    let usdc = find(&client.get_wallet_balances().unwrap(), 101, TokenType::USDC);
    assert_eq!(usdc.raw_amount(), U256::from(minted));
    let sent = client.fund_from_wallet(&usdc, None).unwrap();
    assert_eq!((sent.raw_amount, sent.amount.as_str()), (U256::from(minted), "5"));
    assert_eq!(sent.to, deposit);
    assert_eq!(fx.chains.spl_balance(&usdc_mint, &wallet), 0);
    assert_eq!(fx.chain_balance(&deposit, 101, TokenType::USDC), U256::from(minted));

    let detected = poll_detected(&client);
    assert_eq!(
        (detected.chain_id, detected.token, detected.amount.as_str()),
        (101, TokenType::USDC, "5")
    );
    let (credited, _) = wait_settled(&client, &detected.id);
    let destination = credited.destination.clone().unwrap();
    assert_eq!((destination.address.as_str(), destination.chain_id), (receiver.as_str(), 101));

    // 5 USDC − 0.01 gas (to Solana) − 0.01 LP = 4.98 USDC, in the receiver's new token account.
    let expected = expected_delivered(U256::from(minted), 6, USD, 6, USD, GAS_SOLANA);
    assert_eq!(expected, U256::from(4_980_000u64));
    assert_eq!(delivered(&client, &credited), expected);
    assert_eq!(fx.chain_balance(&receiver, 101, TokenType::USDC), expected);
    assert_eq!(fx.chain_balance(&deposit, 101, TokenType::USDC), U256::ZERO, "collected");
    assert_nothing_new(&client);
}

/// A host EVM wallet that reads through a node and refuses to send (the user said no).
struct RejectingEvm {
    node: EvmRpc,
    sends: std::sync::atomic::AtomicUsize,
}

impl WalletProvider for RejectingEvm {
    fn request(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        if method == "eth_sendTransaction" {
            self.sends.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Err(ProviderError::rejected("User denied transaction signature."));
        }
        self.node
            .request(method, params.clone())
            .map_err(|e| ProviderError::new(ProviderError::INTERNAL, e.message().to_owned()))
    }
}

#[test]
fn a_wallet_that_rejects_loses_nothing_and_no_deposit_appears() {
    let fx = fixture();
    let owner = owner();
    let client = fx.client(&owner, DestinationConfig::chain(42161));
    let addresses = client.deposit_addresses().unwrap();
    let wallet = fx.chains.dev_account(REJECTING_WALLET);
    let usdc_base = fx.chains.token(8453, "USDC");
    fx.chains.mint_erc20(8453, &usdc_base, &wallet, &wallet, U256::from(3_000_000u64));
    let host = Arc::new(RejectingEvm { node: fx.chains.evm(8453), sends: Default::default() });
    client.set_evm_wallet(EvmProvider::Host(host.clone()), Some(&wallet)).unwrap();
    let solana = connect_solana_rejecting(fx, &client);

    let before = client.get_wallet_balances().unwrap();
    let nonce = fx.chains.evm(8453).transaction_count(wallet.parse().unwrap()).unwrap();
    let attempts = [
        (find(&before, 8453, TokenType::ETH), Some(U256::from(MILLI_ETHER))),
        (find(&before, 8453, TokenType::USDC), None),
        (find(&before, 101, TokenType::SOL), Some(U256::from(SOL / 10))),
    ];
    for (balance, amount) in &attempts {
        let err = client.fund_from_wallet(balance, *amount).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Funding, "{err}");
        assert!(err.message().starts_with("rejected by the wallet (4001): "), "{err}");
    }
    assert_eq!(host.sends.load(std::sync::atomic::Ordering::SeqCst), 2, "asked once per EVM send");

    // Nothing moved: the wallets hold what they held, the deposit addresses nothing.
    let after = client.get_wallet_balances().unwrap();
    assert_eq!(summary(&after), summary(&before));
    assert_eq!(fx.chains.evm(8453).transaction_count(wallet.parse().unwrap()).unwrap(), nonce);
    assert_eq!(fx.chains.svm().balance(&solana).unwrap(), SOL);
    for (chain_id, token, address) in [
        (8453, TokenType::ETH, &addresses.evm),
        (8453, TokenType::USDC, &addresses.evm),
        (101, TokenType::SOL, &addresses.solana),
    ] {
        assert_eq!(fx.chain_balance(address, chain_id, token), U256::ZERO, "{token} on {chain_id}");
    }
    // And the watcher finds nothing.
    let found = client.poll_now().unwrap();
    assert!(found.is_empty(), "{found:#?}");
    assert!(client.pending_deposits().unwrap().is_empty());
}

/// A fresh Solana wallet holding 1 SOL that rejects every transaction.
fn connect_solana_rejecting(fx: &Fixture, client: &DepositClient) -> Pubkey {
    let mut wallet = SolanaWallet::new(fx.chains);
    wallet.reject = true;
    let key = wallet.pubkey();
    fx.chains.airdrop(&key, SOL);
    client.set_solana_wallet(Arc::new(wallet), None).unwrap();
    assert_eq!(client.connect_solana_wallet().unwrap(), key.to_string());
    key
}
