//! The store contract's test suite (feature `store-contract-suite`): every store of the contract
//! must pass it. core runs it on the SQLite store (`core/tests/store_contract.rs`),
//! depositkit-fleet on its PostgreSQL store.
//!
//! ```ignore
//! depositkit_core::deposit::store_contract::suite::check(&|owner| open_my_store(owner));
//! ```
//!
//! `open` opens the store of `owner` in one and the same database each time it is called (a
//! store released and opened again finds its rows). Failures panic with what differed.

use super::{
    AttemptRow, ChangeRows, DepositRow, EventRow, OwnerRows, OwnerStore, ResultRow, START_RESULTS,
    StartRow, StoredDeposit,
};
use crate::error::ErrorKind;

/// Opens the store of an owner.
pub type Open<'a> = &'a dyn Fn(&str) -> Box<dyn OwnerStore>;

/// Runs every case of the contract on stores from `open`, each on owners of its own.
///
/// # Panics
/// When a store breaks the contract: the message names the case.
pub fn check(open: Open<'_>) {
    empty_owner_has_nothing(open);
    a_write_reads_back(open);
    rows_are_upserted_and_events_appended(open);
    a_failed_write_writes_nothing(open);
    owners_do_not_see_each_other(open);
    an_account_binds_once(open);
    rows_outlive_their_store(open);
    results_come_newest_first_up_to_the_limit(open);
}

/// The cases of the handed-over start ([`OwnerStore::save_start`] and
/// [`OwnerStore::load_start`]), for a store that keeps it (the fleet's; the SQLite store keeps
/// none, the default).
///
/// # Panics
/// When the store breaks that part of the contract: the message names the case.
pub fn check_start_handover(open: Open<'_>) {
    a_start_is_handed_to_the_next_store(open);
    a_start_keeps_the_session_that_expires_last(open);
    a_start_read_leaves_the_rows_exact(open);
}

const OWNER_A: &str = "0x00000000000000000000000000000000000000a1";
const OWNER_B: &str = "0x00000000000000000000000000000000000000b2";

fn deposit(id: &str, seq: u64, state: &str, open: bool) -> DepositRow {
    DepositRow {
        id: id.to_owned(),
        seq,
        state: state.to_owned(),
        open,
        record: format!(r#"{{"id":"{id}","state":"{state}"}}"#),
    }
}

fn event(id: u64, deposit_id: Option<&str>) -> EventRow {
    EventRow {
        id,
        at: 1_700_000_000_000 + id,
        kind: "deposit:detected".to_owned(),
        deposit_id: deposit_id.map(str::to_owned),
        event: format!(r#"{{"n":{id}}}"#),
    }
}

/// A change of deposit rows and events only.
fn change(now: u64, deposits: Vec<DepositRow>, events: Vec<EventRow>) -> ChangeRows {
    ChangeRows { now, deposits, events, ..ChangeRows::default() }
}

fn write(store: &dyn OwnerStore, change: ChangeRows, case: &str) {
    if let Err(e) = store.write(&change) {
        panic!("{case}: write failed: {e}");
    }
}

fn load(store: &dyn OwnerStore, case: &str) -> OwnerRows {
    store.load(100).unwrap_or_else(|e| panic!("{case}: load failed: {e}"))
}

fn event_ids(rows: &[EventRow]) -> Vec<u64> {
    rows.iter().map(|e| e.id).collect()
}

fn empty_owner_has_nothing(open: Open<'_>) {
    let case = "empty owner";
    let store = open("0x0e");
    assert_eq!(store.last_event_id().expect("last_event_id"), 0, "{case}");
    assert_eq!(load(&*store, case), OwnerRows::default(), "{case}");
    assert!(store.events_after(0, 10).expect("events_after").is_empty(), "{case}");
    assert!(store.deposit_events("d").expect("deposit_events").is_empty(), "{case}");
    assert!(!store.owner_lost(), "{case}: a store starts holding its owner");
    store.release();
}

fn a_write_reads_back(open: Open<'_>) {
    let case = "a write reads back";
    let store = open("0x0w");
    write(
        &*store,
        ChangeRows {
            detector: Some(r#"{"snapshot":1}"#.to_owned()),
            attempts: vec![AttemptRow {
                quote_id: "q1".into(),
                deposit_id: "d1".into(),
                purpose: "sweep".into(),
                outcome: None,
                transaction_id: None,
            }],
            results: vec![ResultRow {
                deposit_id: "d2".into(),
                kind: "sweep".into(),
                result: r#"{"r":2}"#.into(),
            }],
            ..change(
                10,
                vec![deposit("d1", 0, "detected", true), deposit("d2", 1, "credited", false)],
                vec![event(1, Some("d1")), event(2, None), event(3, Some("d1"))],
            )
        },
        case,
    );
    store.save_notifications(r#"[{"n":1}]"#, 11).expect("save_notifications");
    let rows = load(&*store, case);
    assert_eq!(rows.detector.as_deref(), Some(r#"{"snapshot":1}"#), "{case}: detector");
    assert_eq!(rows.notifications.as_deref(), Some(r#"[{"n":1}]"#), "{case}: notifications");
    assert_eq!(
        rows.deposits,
        vec![
            StoredDeposit {
                id: "d1".into(),
                open: true,
                record: deposit("d1", 0, "detected", true).record,
                seq: 0
            },
            StoredDeposit {
                id: "d2".into(),
                open: false,
                record: deposit("d2", 1, "credited", false).record,
                seq: 1
            },
        ],
        "{case}: deposits"
    );
    assert_eq!(rows.results, vec![("sweep".to_owned(), r#"{"r":2}"#.to_owned())], "{case}");
    assert_eq!(store.last_event_id().expect("last_event_id"), 3, "{case}");
    let all = store.events_after(0, 10).expect("events_after");
    assert_eq!(all, vec![event(1, Some("d1")), event(2, None), event(3, Some("d1"))], "{case}");
    assert_eq!(event_ids(&store.events_after(1, 1).expect("events_after")), [2], "{case}");
    assert!(store.events_after(3, 10).expect("events_after").is_empty(), "{case}");
    assert_eq!(event_ids(&store.deposit_events("d1").expect("deposit_events")), [1, 3], "{case}");
    store.release();
}

fn rows_are_upserted_and_events_appended(open: Open<'_>) {
    let case = "upserts";
    let store = open("0x0u");
    write(
        &*store,
        change(1, vec![deposit("d1", 0, "detected", true)], vec![event(1, Some("d1"))]),
        case,
    );
    write(
        &*store,
        ChangeRows {
            detector: Some("{}".into()),
            ..change(2, vec![deposit("d1", 0, "credited", false)], vec![event(2, Some("d1"))])
        },
        case,
    );
    let rows = load(&*store, case);
    assert_eq!(rows.deposits.len(), 1, "{case}: one row per deposit");
    assert!(!rows.deposits[0].open, "{case}: the later state wins");
    assert_eq!(rows.deposits[0].record, deposit("d1", 0, "credited", false).record, "{case}");
    assert_eq!(event_ids(&store.events_after(0, 10).expect("events")), [1, 2], "{case}");
    store.release();
}

fn a_failed_write_writes_nothing(open: Open<'_>) {
    let case = "a failed write writes nothing";
    let store = open("0x0f");
    write(&*store, change(1, Vec::new(), vec![event(1, None)]), case);
    // Event 1 again: events are appended, never replaced, so the whole write is refused.
    let refused = store.write(&change(
        2,
        vec![deposit("d9", 0, "detected", true)],
        vec![event(2, None), event(1, None)],
    ));
    assert!(refused.is_err(), "{case}: a repeated event id must be refused");
    assert!(load(&*store, case).deposits.is_empty(), "{case}: no deposit row");
    assert_eq!(store.last_event_id().expect("last_event_id"), 1, "{case}: no event 2");
    store.release();
}

fn owners_do_not_see_each_other(open: Open<'_>) {
    let case = "owners apart";
    let a = open(OWNER_A);
    let b = open(OWNER_B);
    write(
        &*a,
        change(1, vec![deposit("d1", 0, "detected", true)], vec![event(1, Some("d1"))]),
        case,
    );
    assert_eq!(b.last_event_id().expect("last_event_id"), 0, "{case}");
    assert!(load(&*b, case).deposits.is_empty(), "{case}");
    assert!(b.deposit_events("d1").expect("deposit_events").is_empty(), "{case}");
    write(&*b, change(2, Vec::new(), vec![event(1, None)]), case);
    assert_eq!(a.events_after(0, 10).expect("events")[0], event(1, Some("d1")), "{case}");
    a.release();
    b.release();
}

fn an_account_binds_once(open: Open<'_>) {
    let case = "account";
    let store = open("0x0a");
    store.bind_account("acct-1", 1).expect("first bind");
    store.bind_account("acct-1", 2).expect("the same account again");
    let error = store.bind_account("acct-2", 3).expect_err("another account is refused");
    assert_eq!(error.kind(), ErrorKind::Configuration, "{case}: {error}");
    assert!(error.message().contains("acct-1") && error.message().contains("acct-2"), "{error}");
    assert_eq!(load(&*store, case).account_id.as_deref(), Some("acct-1"), "{case}");
    store.release();
}

fn rows_outlive_their_store(open: Open<'_>) {
    let case = "reopen";
    let name = "0x0r";
    let store = open(name);
    write(
        &*store,
        change(
            1,
            vec![deposit("d1", 4, "detected", true)],
            vec![event(1, Some("d1")), event(2, Some("d1"))],
        ),
        case,
    );
    store.release();
    drop(store);
    let again = open(name);
    assert_eq!(again.last_event_id().expect("last_event_id"), 2, "{case}");
    assert_eq!(load(&*again, case).deposits[0].seq, 4, "{case}");
    again.release();
}

fn results_come_newest_first_up_to_the_limit(open: Open<'_>) {
    let case = "results";
    let store = open("0x0s");
    for n in 0..5u64 {
        write(
            &*store,
            ChangeRows {
                now: 100 + n,
                results: vec![ResultRow {
                    deposit_id: format!("d{n}"),
                    kind: if n % 2 == 0 { "sweep" } else { "refund" }.into(),
                    result: n.to_string(),
                }],
                ..ChangeRows::default()
            },
            case,
        );
    }
    let results = store.load(3).expect("load").results;
    let order: Vec<&str> = results.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(order, ["4", "3", "2"], "{case}: newest first, at most the limit");
    store.release();
}

fn start(account: &str, jwt: &str, expires_at: u64) -> StartRow {
    StartRow {
        account: format!(r#"{{"account":"{account}"}}"#),
        session_jwt: Some(jwt.to_owned()),
        session_expires_at: expires_at,
    }
}

fn load_start(store: &dyn OwnerStore, case: &str) -> Option<StartRow> {
    store.load_start().unwrap_or_else(|e| panic!("{case}: load_start failed: {e}"))
}

fn save_start(store: &dyn OwnerStore, start: &StartRow, case: &str) {
    if let Err(e) = store.save_start(start, 1) {
        panic!("{case}: save_start failed: {e}");
    }
}

fn a_start_is_handed_to_the_next_store(open: Open<'_>) {
    let case = "start handed over";
    let store = open("0x0h");
    assert!(store.keeps_starts(), "{case}: a store that keeps starts says so");
    assert_eq!(load_start(&*store, case), None, "{case}: nothing before a save");
    let first = start("acct-1", "jwt-1", 1000);
    save_start(&*store, &first, case);
    assert!(!format!("{first:?}").contains("jwt-1"), "{case}: Debug shows the JWT");
    let other = open("0x0i");
    assert_eq!(load_start(&*other, case), None, "{case}: another owner's start shows");
    assert!(load(&*store, case).deposits.is_empty(), "{case}: a start is no deposit");
    store.release();
    drop(store);
    let again = open("0x0h");
    assert_eq!(load_start(&*again, case), Some(first), "{case}: the next store reads it");
    other.release();
    again.release();
}

fn a_start_keeps_the_session_that_expires_last(open: Open<'_>) {
    let case = "latest session";
    let store = open("0x0l");
    save_start(&*store, &start("acct-1", "jwt-late", 2000), case);
    save_start(&*store, &start("acct-1", "jwt-early", 1500), case);
    let kept = load_start(&*store, case).map(|s| s.session_jwt);
    assert_eq!(kept, Some(Some("jwt-late".to_owned())), "{case}: an older session landing late");
    save_start(&*store, &start("acct-1", "jwt-later", 2500), case);
    let kept = load_start(&*store, case).map(|s| s.session_jwt);
    assert_eq!(kept, Some(Some("jwt-later".to_owned())), "{case}: a renewal replaces it");
    let other_account = start("acct-2", "jwt-other", 100);
    save_start(&*store, &other_account, case);
    assert_eq!(load_start(&*store, case), Some(other_account), "{case}: another account");
    store.release();
}

/// A store may read the owner's rows ahead with the start (the fleet's does): what `load`,
/// `bind_account` and `last_event_id` then give must still be what the store holds, after
/// writes made in between too.
fn a_start_read_leaves_the_rows_exact(open: Open<'_>) {
    let case = "start read ahead";
    let name = "0x0k";
    let first = open(name);
    first.bind_account("acct-1", 1).expect("bind");
    write(&*first, change(1, vec![deposit("d1", 1, "detected", true)], vec![event(1, None)]), case);
    save_start(&*first, &start("acct-1", "jwt-1", 1000), case);
    first.release();
    drop(first);

    // Read ahead, then loaded as read.
    let second = open(name);
    assert!(load_start(&*second, case).is_some(), "{case}: the start");
    second.bind_account("acct-1", 2).expect("the same account");
    let error = second.bind_account("acct-2", 2).expect_err("another account is refused");
    assert_eq!(error.kind(), ErrorKind::Configuration, "{case}: {error}");
    let rows = second.load(START_RESULTS).expect("load");
    assert_eq!(rows.account_id.as_deref(), Some("acct-1"), "{case}");
    assert_eq!(rows.deposits.len(), 1, "{case}: d1");
    second.release();
    drop(second);

    // Read ahead, then written (a deposit, events alone, notifications), then loaded: the
    // writes are in it.
    let third = open(name);
    assert!(load_start(&*third, case).is_some(), "{case}: the start");
    write(&*third, change(3, Vec::new(), vec![event(2, None)]), case);
    write(&*third, change(3, vec![deposit("d2", 2, "detected", true)], Vec::new()), case);
    third.save_notifications("[1]", 3).expect("save_notifications");
    let rows = third.load(START_RESULTS).expect("load");
    let ids: Vec<&str> = rows.deposits.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["d1", "d2"], "{case}: the deposit written after the start's read");
    assert_eq!(rows.notifications.as_deref(), Some("[1]"), "{case}: the notifications");
    assert_eq!(third.last_event_id().expect("last_event_id"), 2, "{case}");
    // A second load reads again (what was read ahead is taken once).
    write(&*third, change(4, vec![deposit("d3", 3, "detected", true)], Vec::new()), case);
    assert_eq!(third.load(START_RESULTS).expect("load").deposits.len(), 3, "{case}: d3");
    third.release();
}
