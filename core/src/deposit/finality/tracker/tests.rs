//! The tracker's decisions over signals a chain watcher would send.

use super::*;
use crate::deposit::finality::policy::{FinalityConfig, FinalityRule};

const BASE: u64 = 8453;

fn three_blocks() -> FinalityPolicy {
    FinalityPolicy::new(FinalityConfig {
        chains: [(BASE, FinalityRule::Confirmations(3))].into_iter().collect(),
        instant_below_usd: 1.0,
        balance_fallback_ms: Some(60_000),
    })
}

fn head(latest: u64) -> ChainSignal {
    ChainSignal::Head { chain_id: BASE, latest, safe: None, finalized: None }
}

fn included(height: u64) -> ChainLink {
    ChainLink {
        tx: Some("0xab".into()),
        height: Some(height),
        block_hash: Some(format!("0x{height:x}")),
        in_balance: true,
        ..ChainLink::default()
    }
}

#[test]
fn a_transfer_confirms_block_by_block_then_is_final() {
    let policy = three_blocks();
    let mut view = ChainView::default();
    let link = included(100);
    let at = |view: &ChainView| judge(&link, BASE, 50.0, 0, view, &policy);
    assert_eq!(view.apply(&head(100)), BASE);
    let Verdict::Confirming(Some(progress)) = at(&view) else { panic!("{:?}", at(&view)) };
    assert_eq!((progress.confirmations, progress.required), (1, Some(3)));
    view.apply(&head(101));
    assert!(matches!(at(&view), Verdict::Confirming(Some(p)) if p.confirmations == 2));
    view.apply(&head(102));
    assert_eq!(at(&view), Verdict::Final(FinalBy::Policy));
}

#[test]
fn a_removed_transfer_is_reorged_and_an_unshown_one_waits_for_the_balance() {
    let policy = three_blocks();
    let mut view = ChainView::default();
    view.apply(&head(200));
    let removed = ChainLink { removed: true, height: None, ..included(100) };
    assert_eq!(judge(&removed, BASE, 50.0, 0, &view, &policy), Verdict::Reorged);
    // Final on the chain, but the account does not hold it yet: not swept yet.
    let unshown = ChainLink { in_balance: false, ..included(100) };
    assert!(matches!(judge(&unshown, BASE, 50.0, 0, &view, &policy), Verdict::Confirming(_)));
}

#[test]
fn small_deposits_are_instant_and_balance_only_ones_fall_back() {
    let policy = three_blocks();
    let mut view = ChainView::default();
    view.apply(&head(100));
    assert_eq!(
        judge(&included(100), BASE, 0.5, 0, &view, &policy),
        Verdict::Final(FinalBy::Instant)
    );
    let balance_only =
        ChainLink { in_balance: true, unexplained: U256::from(5u64), ..ChainLink::default() };
    let down = ChainSignal::Down { chain_id: BASE, reason: "connection refused".into() };
    view.apply(&down);
    assert!(view.is_down(BASE));
    assert_eq!(judge(&balance_only, BASE, 50.0, 59_999, &view, &policy), Verdict::Confirming(None));
    assert_eq!(
        judge(&balance_only, BASE, 50.0, 60_000, &view, &policy),
        Verdict::Final(FinalBy::Fallback)
    );
    assert_eq!(
        judge(&balance_only, BASE, 0.5, 0, &view, &policy),
        Verdict::Final(FinalBy::Instant)
    );
    view.apply(&ChainSignal::Up { chain_id: BASE });
    assert!(!view.is_down(BASE));
}

#[test]
fn safe_and_finalized_heads_never_go_back() {
    let mut view = ChainView::default();
    view.apply(&ChainSignal::Head { chain_id: 1, latest: 50, safe: Some(40), finalized: Some(30) });
    view.apply(&ChainSignal::Head { chain_id: 1, latest: 45, safe: None, finalized: Some(20) });
    assert_eq!(view.heads(1), Heads { latest: 45, safe: Some(40), finalized: Some(30) });
    assert_eq!(view.heads(10), Heads::default());
    // A transfer in a block newer than the last head: that block exists.
    let transfer = crate::chain::watch::signal::TransferSeen {
        chain_id: 1,
        to: "0xab".into(),
        token: None,
        contract: None,
        raw_amount: U256::from(1u64),
        tx: "0x01".into(),
        index: 0,
        inclusion: crate::chain::watch::signal::Inclusion { height: 47, hash: "0x2f".into() },
    };
    assert_eq!(view.apply(&ChainSignal::Included(transfer)), 1);
    assert_eq!(view.heads(1).latest, 47);
}

#[test]
fn rises_and_transfers_are_one_deposit_whichever_came_first() {
    let raw = |n: u64| U256::from(n);
    // The chain saw 5 and 7; the balance rose by 12 and then by 3 more.
    let chain_first = vec![("a".to_owned(), raw(5)), ("b".to_owned(), raw(7))];
    assert_eq!(claim_rise(raw(12), &chain_first), (vec!["a".into(), "b".into()], raw(0)));
    assert_eq!(claim_rise(raw(15), &chain_first), (vec!["a".into(), "b".into()], raw(3)));
    assert_eq!(claim_rise(raw(6), &chain_first), (vec!["a".into()], raw(1)));
    assert_eq!(claim_rise(raw(4), &chain_first), (vec![], raw(4)));
    // The balance saw 9 (two transfers of 4 and 5) and then 5.
    let balance_first = vec![("x".to_owned(), raw(9)), ("y".to_owned(), raw(5))];
    assert_eq!(link_transfer(raw(5), &balance_first).as_deref(), Some("y"), "exact first");
    assert_eq!(link_transfer(raw(4), &balance_first).as_deref(), Some("x"), "else it fits");
    assert_eq!(link_transfer(raw(10), &balance_first), None, "a deposit of its own");
}
