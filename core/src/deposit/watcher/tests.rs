//! The watcher's unit tests: detection from `received`, from balance increases, thresholds.

use super::*;
use std::collections::HashSet;

use crate::services::UaTransaction;
use crate::tokens::DEFAULT_SUPPORTED_TOKENS;

fn thresholds() -> Thresholds {
    Thresholds {
        min_value_usd: 0.5,
        supported_tokens: DEFAULT_SUPPORTED_TOKENS.to_vec(),
        supported_chains: Chain::ALL.iter().map(|c| c.id()).collect(),
    }
}

fn line(
    chain_id: u64,
    token: &str,
    decimals: u32,
    raw: u128,
    received: u128,
    price: f64,
) -> BalanceLine {
    BalanceLine {
        chain_id,
        token: token.into(),
        decimals,
        raw_amount: U256::from(raw),
        received: U256::from(received),
        price_usd: price,
        value_usd: 0.0,
    }
}

fn deposits(findings: &[Finding]) -> Vec<(String, String)> {
    findings
        .iter()
        .map(|f| match f {
            Finding::Deposit(d, _) => ("detected".into(), d.amount.clone()),
            Finding::BelowThreshold(d, _) => ("below".into(), d.amount.clone()),
        })
        .collect()
}

#[test]
fn first_poll_reports_what_is_held_then_received_deltas() {
    let mut d = Detector::default();
    let t = thresholds();
    // 12.5 USDC held of 42.5 ever received: one existing deposit of 12.5.
    let f = d.observe("acc", &[line(8453, "USDC", 6, 12_500_000, 42_500_000, 1.0)], &t, 1);
    assert_eq!(deposits(&f), [("detected".to_string(), "12.5".to_string())]);
    assert!(d.has_baseline());
    // Nothing new.
    assert!(
        d.observe("acc", &[line(8453, "USDC", 6, 12_500_000, 42_500_000, 1.0)], &t, 2).is_empty()
    );
    // Swept to zero, then 3 USDC more arrived: only the 3 is new.
    let f = d.observe("acc", &[line(8453, "USDC", 6, 3_000_000, 45_500_000, 1.0)], &t, 3);
    assert_eq!(deposits(&f), [("detected".to_string(), "3".to_string())]);
    // A second deposit of the same token and chain, while the first is still held.
    let f = d.observe("acc", &[line(8453, "USDC", 6, 5_000_000, 47_500_000, 1.0)], &t, 4);
    assert_eq!(deposits(&f), [("detected".to_string(), "2".to_string())]);
}

/// A line of a backend without `received` (Particle's).
fn held(chain_id: u64, raw: u128) -> AccountBalance {
    AccountBalance {
        chain_id,
        token: "USDC".into(),
        decimals: 6,
        raw_amount: U256::from(raw),
        received: None,
        price_usd: 1.0,
        value_usd: 0.0,
    }
}

#[test]
fn without_received_deposits_are_increases_over_a_baseline_that_sweeps_lower() {
    let t = thresholds();
    let mut d = Detector::default();
    let poll = |d: &mut Detector, raw: u128| {
        let lines = d.with_received(vec![held(8453, raw)], &[]);
        deposits(&d.observe("acc", &lines, &t, 1))
    };
    let found = |amount: &str| vec![("detected".to_string(), amount.to_string())];
    // What is held at the first poll is one deposit; nothing new, nothing reported.
    assert_eq!(poll(&mut d, 25_000_000), found("25"));
    assert!(poll(&mut d, 25_000_000).is_empty());
    // Swept (0.03 left) while 5 arrived, seen in one poll: the fall hides the 5…
    assert!(poll(&mut d, 5_030_000).is_empty());
    // …until the delivered sweep lowers the baseline: then the 5 (and what was left) shows.
    assert!(d.spent(8453, TokenType::USDC, U256::from(25_000_000u64)));
    assert_eq!(poll(&mut d, 5_030_000), found("5.03"));
    // The same the other way round: the sweep's outcome first, then the poll.
    assert!(d.spent(8453, TokenType::USDC, U256::from(5_030_000u64)));
    assert_eq!(poll(&mut d, 2_000_000), found("2"));
    // A line the backend stops listing holds nothing.
    assert!(d.with_received(vec![], &[]).is_empty());
    assert_eq!(poll(&mut d, 1_000_000), found("1"));
    // The baseline and total survive a restart: nothing again, only new money.
    let snapshot = d.snapshot();
    assert_eq!(snapshot.held, [(8453, "USDC".to_string(), "1000000".to_string())]);
    let json = serde_json::to_string(&snapshot).unwrap();
    let mut again = Detector::restore(&serde_json::from_str(&json).unwrap(), &[]);
    assert!(poll(&mut again, 1_000_000).is_empty());
    assert_eq!(poll(&mut again, 4_000_000), found("3"));
    // Lines with a `received` total keep no held baseline, and old snapshots read.
    assert!(!again.spent(1, TokenType::USDC, U256::from(1u8)));
    let old: DetectorSnapshot =
        serde_json::from_str(r#"{"firstDone":true,"baselines":[]}"#).unwrap();
    assert!(old.held.is_empty());
    assert!(!serde_json::to_string(&old).unwrap().contains("held"));
}

#[test]
fn ids_are_stable_across_detectors_for_the_same_deposit() {
    let t = thresholds();
    let mut a = Detector::default();
    a.observe("acc", &[line(1, "USDC", 6, 0, 0, 1.0)], &t, 1);
    let fa = a.observe("acc", &[line(1, "USDC", 6, 5_000_000, 5_000_000, 1.0)], &t, 2);
    // A restarted client sees the unswept deposit on its first poll: same range, same id.
    let mut b = Detector::default();
    let fb = b.observe("acc", &[line(1, "USDC", 6, 5_000_000, 5_000_000, 1.0)], &t, 99);
    let id = |f: &Finding| match f {
        Finding::Deposit(d, _) | Finding::BelowThreshold(d, _) => d.id.clone(),
    };
    assert_eq!(id(&fa[0]), id(&fb[0]));
}

#[test]
fn thresholds_dust_min_value_and_token_minimum() {
    let t = thresholds();
    let mut d = Detector::default();
    d.observe("acc", &[], &t, 0);
    // $0.05: dust, silent.
    assert!(d.observe("acc", &[line(8453, "USDC", 6, 50_000, 50_000, 1.0)], &t, 1).is_empty());
    // $0.30 USDC: below minValueUSD.
    let f = d.observe("acc", &[line(8453, "USDC", 6, 350_000, 350_000, 1.0)], &t, 2);
    assert_eq!(deposits(&f), [("below".to_string(), "0.3".to_string())]);
    // $0.49 passes the 2% tolerance of $0.50.
    let f = d.observe("acc", &[line(8453, "USDC", 6, 840_000, 840_000, 1.0)], &t, 3);
    assert_eq!(deposits(&f), [("detected".to_string(), "0.49".to_string())]);
    // 0.0003 ETH at $2500 = $0.75: above minValueUSD but below the 0.0004 ETH minimum.
    let f = d.observe(
        "acc",
        &[line(1, "ETH", 18, 300_000_000_000_000, 300_000_000_000_000, 2500.0)],
        &t,
        4,
    );
    match &f[0] {
        Finding::BelowThreshold(_, why) => assert!(why.contains("0.0004 ETH"), "{why}"),
        other => panic!("{other:?}"),
    }
    // 0.0001 ETH = $0.25: below threshold (the reference's own example, at $2000).
    let f = d.observe(
        "acc",
        &[line(1, "ETH", 18, 400_000_000_000_000, 400_000_000_000_000, 2500.0)],
        &t,
        5,
    );
    assert_eq!(deposits(&f), [("below".to_string(), "0.0001".to_string())]);
}

#[test]
fn bnb_chain_usdc_has_18_decimals() {
    let t = thresholds();
    let mut d = Detector::default();
    let one = 1_000_000_000_000_000_000u128;
    let f = d.observe("acc", &[line(56, "USDC", 18, 2 * one, 2 * one, 1.0)], &t, 1);
    assert_eq!(deposits(&f), [("detected".to_string(), "2".to_string())]);
    assert!(meets_token_minimum(TokenType::USDC, U256::from(one / 5), 18));
    assert!(!meets_token_minimum(TokenType::USDC, U256::from(one / 5 - 1), 18));
    assert!(meets_token_minimum(TokenType::BTC, U256::from(500u32), 8));
    assert!(!meets_token_minimum(TokenType::BTC, U256::from(499u32), 8));
}

#[test]
fn unsupported_and_unknown_lines_are_skipped_but_tracked() {
    let mut t = thresholds();
    t.supported_tokens = vec![TokenType::USDC];
    t.supported_chains = vec![8453];
    let mut d = Detector::default();
    let lines = [
        line(1, "USDC", 6, 5_000_000, 5_000_000, 1.0),
        line(8453, "USDT", 6, 5_000_000, 5_000_000, 1.0),
        line(8453, "MNT", 18, 5, 5, 1.0),
        line(8453, "usdc", 6, 5_000_000, 5_000_000, 1.0),
    ];
    let f = d.observe("acc", &lines, &t, 1);
    assert_eq!(deposits(&f), [("detected".to_string(), "5".to_string())]);
}

/// A receive transfer of `raw` USDC on Base in an account's history.
fn receive(id: &str, raw: u128) -> UaTransaction {
    let mut transfer =
        UaTransaction { transaction_id: id.into(), tag: "receive".into(), ..Default::default() };
    transfer.target_token.chain_id = 8453;
    transfer.target_token.symbol = "USDC".into();
    transfer.change.raw_amount = Some(raw.to_string());
    transfer
}

#[test]
fn a_rise_after_a_sweep_is_split_into_the_deposits_and_the_sweeps_leftover() {
    let t = thresholds();
    let mut d = Detector::default();
    let found = |amount: &str| vec![("detected".to_string(), amount.to_string())];
    let lines = d.with_received(vec![held(8453, 25_000_000)], &[]);
    assert_eq!(deposits(&d.observe("acc", &lines, &t, 1)), found("25"));
    // Swept (0.03 left), then 5 arrived before the next poll: the rise holds both.
    assert!(d.unsettled(&[held(8453, 25_000_000)]).is_empty(), "no sweep yet");
    assert!(d.spent(8453, TokenType::USDC, U256::from(25_000_000u64)));
    let balances = vec![held(8453, 5_030_000)];
    let rises = d.unsettled(&balances);
    assert_eq!(rises.len(), 1);
    assert_eq!(rises[0].rise, U256::from(5_030_000u64));
    let mut sweep = receive("s1", 25_000_000);
    sweep.tag = "sweep".into();
    let history = [receive("r2", 5_000_000), sweep, receive("r1", 25_000_000)];
    let split = attribute(&rises[0], &history, &d.attributed()).unwrap();
    assert_eq!(split.deposit, U256::from(5_000_000u64));
    assert_eq!(split.seen, ["r2", "r1"]);
    d.attribute_transfers(&split.seen);
    // Kept across a restart (an old file reads: none of either).
    let snapshot = d.snapshot();
    assert_eq!(snapshot.unsettled, [(8453, "USDC".to_string())]);
    let json = serde_json::to_string(&snapshot).unwrap();
    let mut d = Detector::restore(&serde_json::from_str(&json).unwrap(), &[]);
    assert_eq!(d.attributed().len(), 2);
    let lines = d.with_received(balances.clone(), &[split]);
    assert_eq!(deposits(&d.observe("acc", &lines, &t, 2)), found("5"), "not 5.03");
    // The leftover joined the held baseline: nothing new, nothing to split.
    assert!(d.unsettled(&balances).is_empty());
    let lines = d.with_received(balances.clone(), &[]);
    assert!(d.observe("acc", &lines, &t, 3).is_empty());
    let old: DetectorSnapshot =
        serde_json::from_str(r#"{"firstDone":true,"baselines":[],"held":[]}"#).unwrap();
    assert!(old.unsettled.is_empty() && old.attributed.is_empty());
}

#[test]
fn a_rise_the_history_does_not_explain_is_counted_whole() {
    let rise = |raw: u128, price_usd: f64| Unsettled {
        chain_id: 8453,
        token: "USDC".into(),
        decimals: 6,
        price_usd,
        rise: U256::from(raw),
    };
    let none = HashSet::new();
    // The new transfer not (yet) in the history: the rest is more than dust.
    assert_eq!(attribute(&rise(5_030_000, 1.0), &[receive("r1", 25_000_000)], &none), None);
    // A transfer already counted is not counted again.
    let counted: HashSet<String> = ["r2".to_string()].into();
    let history = [receive("r2", 5_000_000)];
    assert_eq!(attribute(&rise(5_030_000, 1.0), &history, &counted), None);
    // A price unknown: no telling dust from a deposit.
    assert_eq!(attribute(&rise(5_030_000, 0.0), &history, &none), None);
    // A transfer without its amount.
    let mut unknown = receive("r3", 0);
    unknown.change.raw_amount = None;
    assert_eq!(attribute(&rise(5_030_000, 1.0), &[unknown], &none), None);
    // Only the leftover: no deposit in it.
    let dust = attribute(&rise(30_000, 1.0), &[receive("r1", 25_000_000)], &none).unwrap();
    assert_eq!(dust.deposit, U256::ZERO);
    // Two new deposits and the leftover: both, newest first.
    let history = [receive("r3", 2_000_000), receive("r2", 5_000_000), receive("r1", 9)];
    let both = attribute(&rise(7_030_000, 1.0), &history, &none).unwrap();
    assert_eq!(both.deposit, U256::from(7_000_000u64));
}
