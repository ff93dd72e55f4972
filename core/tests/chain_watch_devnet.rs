//! The chain watcher against devnet's simulated chains (`docs/devnet-chains.md`): a deposit
//! made through devnet is reported included with its block; `POST /devnet/chains/{id}/reorg`
//! reports the dropped deposit removed (and its ledger credit goes back down), the kept ones
//! moved, and the re-added one included again at a new height; heads advance with the block
//! clock and `…/mine`. The same watcher follows anvil in `chain_watch_anvil.rs`.

mod watch_support;

use std::time::Duration;

use depositkit_core::TokenType;
use depositkit_core::chain::watch::NATIVE_TRANSFER_INDEX;
use depositkit_core::chain::watch::signal::{ChainSignal, TransferSeen};
use depositkit_devnet::simchain::{ReorgRequest, SimSettings};
use depositkit_devnet::store::UaAccount;
use depositkit_devnet::{Devnet, DevnetConfig, RunningDevnet};
use serde_json::{Value, json};
use watch_support::{fast, included, removed, watcher};

/// A devnet whose simulated chains make blocks every `block_time` (never with `None`),
/// `safe` 2 and `finalized` 5 blocks behind; its database file is removed with it.
struct Net {
    devnet: RunningDevnet,
    db: std::path::PathBuf,
}

impl Drop for Net {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.db.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

fn devnet(block_time: Option<Duration>) -> Net {
    let db = std::env::temp_dir().join(format!(
        "depositkit-watch-devnet-{}-{}.sqlite",
        std::process::id(),
        uuid_like()
    ));
    let settings = SimSettings { block_time, safe_lag: 2, finalized_lag: 5 };
    let devnet = Devnet::start(DevnetConfig::new(&db).with_sim_chains(settings)).unwrap();
    Net { devnet, db }
}

fn uuid_like() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// An account owning the deposit addresses `evm` and `solana`.
fn account(net: &Net, id: &str, evm: &str, solana: &str) {
    let account = UaAccount {
        id: id.into(),
        owner: format!("0x{:0>40}", id.trim_start_matches("acc_")),
        evm_address: evm.into(),
        solana_address: solana.into(),
    };
    net.devnet.store().insert_ua_account(&account).unwrap();
}

fn transfer(signal: ChainSignal) -> TransferSeen {
    match signal {
        ChainSignal::Included(seen) => seen,
        other => panic!("not an inclusion: {other:?}"),
    }
}

fn post(url: &str, body: &Value) -> (u16, Value) {
    let agent: ureq::Agent =
        ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut reply = agent.post(url).send_json(body).unwrap();
    let status = reply.status().as_u16();
    (status, reply.body_mut().read_json().unwrap_or(Value::Null))
}

const EVM: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const SOLANA: &str = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const BASE_USDC: &str = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913";

#[test]
fn evm_deposits_are_included_reorganised_and_readded() {
    let net = devnet(None);
    let devnet = &net.devnet;
    account(&net, "acc_000000000000000000000001", EVM, SOLANA);
    let (watcher, mut signals) = watcher(8453, &devnet.chain_rpc_url(8453), fast());
    watcher.watch([EVM]).unwrap();
    signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));

    let usdc = devnet.deposit(EVM, 8453, TokenType::USDC, "1500000", None).unwrap().tx_hash;
    let usdc_height = devnet.sim_heads(8453).unwrap().latest;
    let eth = devnet.deposit(EVM, 8453, TokenType::ETH, "1000", None).unwrap().tx_hash;
    let seen = transfer(signals.wait_for("the USDC deposit", |s| included(s, &usdc)));
    assert_eq!(seen.to, EVM.to_ascii_lowercase());
    assert_eq!((seen.token, seen.contract.as_deref()), (Some(TokenType::USDC), Some(BASE_USDC)));
    assert_eq!((seen.raw_amount.to::<u64>(), seen.index), (1_500_000, 0));
    assert_eq!(seen.inclusion.height, usdc_height);
    let native = transfer(signals.wait_for("the ETH deposit", |s| included(s, &eth)));
    assert_eq!(
        (native.token, native.contract, native.index),
        (Some(TokenType::ETH), None, NATIVE_TRANSFER_INDEX)
    );
    assert_eq!(native.inclusion.height, usdc_height + 1);

    // A third deposit, then a reorg of the last two blocks dropping it: the ETH deposit is kept
    // (moved into a new block), the USDC one leaves the ledger until it is re-added.
    let late = devnet.deposit(EVM, 8453, TokenType::USDC, "2000000", None).unwrap().tx_hash;
    signals.wait_for("the late deposit", |s| included(s, &late));
    assert_eq!(devnet.ledger_balance(EVM, 8453, TokenType::USDC).unwrap(), "3500000");
    let request = ReorgRequest { depth: 2, drop: vec![late.clone()], readd_after_blocks: Some(2) };
    let done = devnet.reorg(8453, &request).unwrap();
    assert_eq!(done.dropped.len(), 1);
    assert_eq!(done.kept.len(), 1);
    let readd_at = done.readd_at.unwrap();
    signals.find("the dropped deposit's removal", |s| removed(s, &late));
    signals.find("the kept deposit's removal", |s| removed(s, &eth));
    let moved = transfer(signals.wait_for("the kept deposit's new block", |s| {
        included(s, &eth)
            && matches!(s, ChainSignal::Included(x) if x.inclusion != native.inclusion)
    }));
    assert_eq!((moved.tx, moved.index), (native.tx, native.index));
    assert_eq!(
        devnet.ledger_balance(EVM, 8453, TokenType::USDC).unwrap(),
        "1500000",
        "the credit went back"
    );
    assert_eq!(devnet.ledger_balance(EVM, 8453, TokenType::ETH).unwrap(), "1000");

    let heads = devnet.mine_blocks(8453, 2).unwrap();
    assert_eq!(heads.latest, readd_at);
    let back = transfer(signals.wait_for("the re-added deposit", |s| included(s, &late)));
    assert_eq!(back.inclusion.height, readd_at);
    assert_eq!(back.index, 0);
    assert_eq!(devnet.ledger_balance(EVM, 8453, TokenType::USDC).unwrap(), "3500000");
    let head = signals.wait_for(
        "the heads",
        |s| matches!(s, ChainSignal::Head { latest, .. } if *latest == readd_at),
    );
    assert_eq!(
        head,
        ChainSignal::Head {
            chain_id: 8453,
            latest: readd_at,
            safe: Some(readd_at - 2),
            finalized: Some(readd_at - 5)
        }
    );
    let order = |wanted: &dyn Fn(&ChainSignal) -> bool| signals.position(wanted).unwrap();
    assert!(
        order(&|s| removed(s, &late))
            < order(&|s| included(s, &late)
                && matches!(s, ChainSignal::Included(x) if x.inclusion.height == readd_at))
    );
}

#[test]
fn the_admin_endpoints_and_the_rpc_answer_over_http() {
    let net = devnet(None);
    let base = net.devnet.base_url();
    let (status, body) = post(
        &net.devnet.chain_rpc_url(8453),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"}),
    );
    assert_eq!((status, body["result"].clone()), (200, json!("0x2105")));
    let (_, body) = post(
        &net.devnet.chain_rpc_url(8453),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "eth_mine"}),
    );
    assert_eq!(body["error"]["code"], -32601, "{body}");

    let (status, body) = post(&format!("{base}/devnet/chains/8453/mine"), &json!({"blocks": 6}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["heads"], json!({"latest": 6, "safe": 4, "finalized": 1}));
    let (status, body) = post(&format!("{base}/devnet/chains/8453/reorg"), &json!({"depth": 6}));
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().unwrap().contains("finalized"), "{body}");
    let (status, body) =
        post(&format!("{base}/devnet/chains/8453/reorg"), &json!({"depth": 1, "drop": ["0xabc"]}));
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().unwrap().contains("0xabc"), "{body}");
    let (status, body) = post(&format!("{base}/devnet/chains/8453/reorg"), &json!({"depth": 2}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["replacedBlocks"], json!([5, 6]));
    let (status, body) = post(&format!("{base}/devnet/chains/7/mine"), &json!({}));
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().unwrap().contains('7'), "{body}");
}

#[test]
fn heads_advance_with_the_block_clock() {
    let net = devnet(Some(Duration::from_millis(20)));
    let (_watcher, mut signals) = watcher(42161, &net.devnet.chain_rpc_url(42161), fast());
    let first = signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));
    let ChainSignal::Head { latest: start, .. } = first else { unreachable!() };
    signals.wait_for(
        "three more blocks",
        |s| matches!(s, ChainSignal::Head { latest, .. } if *latest >= start + 3),
    );
}

#[test]
fn solana_deposits_are_included_and_reorganised() {
    let net = devnet(None);
    let devnet = &net.devnet;
    account(&net, "acc_000000000000000000000002", EVM, SOLANA);
    let (watcher, mut signals) = watcher(101, &devnet.chain_rpc_url(101), fast());
    watcher.watch([SOLANA]).unwrap();
    signals.wait_for("a head", |s| matches!(s, ChainSignal::Head { .. }));

    let sol = devnet.deposit(SOLANA, 101, TokenType::SOL, "250000000", None).unwrap().tx_hash;
    let slot = devnet.sim_heads(101).unwrap().latest;
    let usdc = devnet.deposit(SOLANA, 101, TokenType::USDC, "4000000", None).unwrap().tx_hash;
    devnet.mine_blocks(101, 2).unwrap(); // `confirmed` trails by two slots
    let lamports = transfer(signals.wait_for("the SOL deposit", |s| included(s, &sol)));
    assert_eq!(
        (lamports.to.as_str(), lamports.token, lamports.contract),
        (SOLANA, Some(TokenType::SOL), None)
    );
    assert_eq!(lamports.raw_amount.to::<u64>(), 250_000_000);
    assert_eq!(lamports.inclusion.height, slot);
    assert!(!lamports.inclusion.hash.is_empty());
    let token = transfer(signals.wait_for("the USDC deposit", |s| included(s, &usdc)));
    assert_eq!(token.token, Some(TokenType::USDC));
    assert_eq!(token.contract.as_deref(), Some("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"));
    assert_eq!(token.raw_amount.to::<u64>(), 4_000_000);

    // Drop the USDC deposit (3 slots back), re-add it a slot after the new tip.
    let request = ReorgRequest { depth: 3, drop: vec![usdc.clone()], readd_after_blocks: Some(1) };
    devnet.reorg(101, &request).unwrap();
    assert_eq!(devnet.ledger_balance(SOLANA, 101, TokenType::USDC).unwrap(), "0");
    devnet.mine_blocks(101, 1).unwrap();
    signals.wait_for("the removal", |s| removed(s, &usdc));
    devnet.mine_blocks(101, 2).unwrap();
    let back = transfer(signals.wait_for("the re-added deposit", |s| {
        included(s, &usdc)
            && matches!(s, ChainSignal::Included(x) if x.inclusion.height > token.inclusion.height)
    }));
    assert_eq!((back.tx, back.index), (token.tx, token.index));
    assert_eq!(devnet.ledger_balance(SOLANA, 101, TokenType::USDC).unwrap(), "4000000");
    assert!(
        signals.position(|s| removed(s, &sol)).is_none(),
        "the SOL deposit was not reorganised"
    );
}
