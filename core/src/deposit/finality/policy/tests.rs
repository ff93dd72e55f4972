//! The policy's rules, its option's reading and checks, and its defaults against the docs.

use super::*;

fn heads(latest: u64, safe: Option<u64>, finalized: Option<u64>) -> Heads {
    Heads { latest, safe, finalized }
}

/// `12 s`, `5 min`: how `docs/finality.md` writes a typical time.
fn typical(ms: u64) -> String {
    if ms.is_multiple_of(60_000) {
        format!("{} min", ms / 60_000)
    } else {
        format!("{} s", ms / 1000)
    }
}

#[test]
fn every_chain_has_one_default_and_the_docs_list_the_same() {
    let ids: std::collections::HashSet<u64> =
        DEFAULT_FINALITY.iter().map(|d| d.chain.id()).collect();
    assert_eq!(ids.len(), Chain::ALL.len());
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/finality.md"))
        .expect("docs/finality.md");
    let rows: Vec<Vec<String>> = docs
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| Chain"))
        .map(|line| line.split('|').map(|cell| cell.trim().replace('`', "")).collect())
        .filter(|cells: &Vec<String>| cells.len() >= 5 && cells[2].parse::<u64>().is_ok())
        .collect();
    assert_eq!(rows.len(), DEFAULT_FINALITY.len(), "the defaults table of docs/finality.md");
    for d in DEFAULT_FINALITY {
        let id = d.chain.id();
        let row = rows
            .iter()
            .find(|cells| cells[2] == id.to_string())
            .unwrap_or_else(|| panic!("docs/finality.md has no row for chain {id}"));
        assert_eq!(row[1], d.chain.name(), "chain {id}");
        assert_eq!(row[3], rule_name(id, d.rule), "the rule of chain {id}");
        assert_eq!(row[4], typical(d.typical_ms), "the typical time of chain {id}");
    }
}

#[test]
fn confirmations_count_the_transfers_own_block() {
    let policy = FinalityPolicy::new(FinalityConfig {
        chains: [(8453, FinalityRule::Confirmations(3))].into_iter().collect(),
        ..FinalityConfig::default()
    });
    let at = |latest| policy.progress(8453, 100, &heads(latest, None, None));
    assert_eq!(at(99), Progress { confirmations: 0, required: Some(3), met: false });
    assert_eq!(at(100), Progress { confirmations: 1, required: Some(3), met: false });
    assert_eq!(at(101).confirmations, 2);
    assert!(at(102).met && at(500).met);
}

#[test]
fn tags_are_met_when_the_head_reaches_the_block() {
    let policy = FinalityPolicy::default();
    // Ethereum: finalized; the safe head alone is not enough.
    assert!(!policy.progress(1, 100, &heads(140, Some(120), Some(99))).met);
    assert!(policy.progress(1, 100, &heads(140, Some(120), Some(100))).met);
    // Base: safe, or finalized when the endpoint gives no safe head.
    let base = policy.progress(8453, 100, &heads(110, Some(100), None));
    assert_eq!(base, Progress { confirmations: 11, required: None, met: true });
    assert!(policy.progress(8453, 100, &heads(110, None, Some(100))).met);
    assert!(!policy.progress(8453, 100, &heads(110, Some(99), Some(50))).met);
    // BNB: 15 confirmations by default.
    assert_eq!(policy.rule(56), FinalityRule::Confirmations(15));
    assert_eq!(policy.rule(101), FinalityRule::Finalized);
}

#[test]
fn the_option_reads_every_rule_spelling_and_refuses_the_rest() {
    let config: FinalityConfig = serde_json::from_value(serde_json::json!({
        "chains": {"1": {"confirmations": 12}, "8453": "finalized", "101": "confirmed", "10": "safe"},
        "instantBelowUsd": 5,
        "balanceFallbackMs": 1000,
    }))
    .unwrap();
    let policy = FinalityPolicy::new(config.clone());
    assert_eq!(policy.rule(1), FinalityRule::Confirmations(12));
    assert_eq!(policy.rule(8453), FinalityRule::Finalized);
    assert_eq!(policy.rule(101), FinalityRule::Safe);
    assert_eq!(policy.rule(42161), FinalityRule::Safe, "a default");
    assert!(policy.instant(4.99) && !policy.instant(5.0));
    assert_eq!(policy.fallback_ms(1), 1000);
    assert_eq!(FinalityPolicy::default().fallback_ms(1), 15 * 60_000);
    assert!(!FinalityPolicy::default().instant(0.0), "never instant by default");
    // Written back the way it is read.
    let json = serde_json::to_value(&config).unwrap();
    assert_eq!(json["chains"]["1"], serde_json::json!({"confirmations": 12}));
    assert_eq!(json["chains"]["101"], "safe");
    assert_eq!(finality_problem(&config), None);

    let bad =
        serde_json::from_value::<FinalityConfig>(serde_json::json!({"chains": {"1": "soon"}}));
    let message = bad.unwrap_err().to_string();
    assert!(message.contains("\"safe\", \"confirmed\", \"finalized\""), "{message}");
    let unknown = FinalityConfig {
        chains: [(7, FinalityRule::Safe)].into_iter().collect(),
        ..FinalityConfig::default()
    };
    assert_eq!(
        finality_problem(&unknown).as_deref(),
        Some("finality.chains has an unknown chain ID: 7")
    );
    let zero = FinalityConfig {
        chains: [(56, FinalityRule::Confirmations(0))].into_iter().collect(),
        ..FinalityConfig::default()
    };
    assert!(finality_problem(&zero).unwrap().contains("BNB Chain (56) must ask for 1 to"));
    let negative = FinalityConfig { instant_below_usd: -1.0, ..FinalityConfig::default() };
    assert!(finality_problem(&negative).unwrap().starts_with("finality.instantBelowUsd"));
}
