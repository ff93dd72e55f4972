//! The SQLite store's event journal (`<store>-events`, `deposit/store/journal.rs`): changes of
//! events alone are appended there and folded into the file. Every acknowledged event survives
//! a killed process exactly once, in order; a torn tail is ignored; reads see journaled events
//! at once; a change with rows after journaled events keeps the ids' order; a record this
//! version cannot read is refused, naming the journal.
//!
//! The crash cases run a child: this test binary again, with `DEPOSITKIT_JOURNAL_CHILD` naming
//! the store, which emits events through a real `DepositClient` and prints each acknowledged id.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use depositkit_core::ErrorKind;
use depositkit_core::deposit::store_contract::{
    ChangeRows, DepositRow, EventRow, OwnerStore, SqliteOwnerStore,
};
use depositkit_core::deposit::{DepositClient, DepositClientConfig, DepositEvent};
use serde_json::{Value, json};

const OWNER: &str = "0x00000000000000000000000000000000000000e1";

/// The child's store (set only in the child).
const CHILD_STORE: &str = "DEPOSITKIT_JOURNAL_CHILD";
/// How many events the child emits before it waits to be killed (unset: until killed).
const CHILD_EVENTS: &str = "DEPOSITKIT_JOURNAL_CHILD_EVENTS";

/// A store file in a directory of its own, removed with everything in it when dropped.
struct TempStore {
    path: PathBuf,
}

impl TempStore {
    fn new(case: &str) -> TempStore {
        let name = format!("depositkit-store-journal-{}-{case}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempStore { path: dir.join("deposits.sqlite") }
    }
}

impl std::ops::Deref for TempStore {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempStore {
    fn drop(&mut self) {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn journal_of(store: &Path) -> PathBuf {
    PathBuf::from(format!("{}-events", store.display()))
}

fn journal_len(store: &Path) -> u64 {
    std::fs::metadata(journal_of(store)).map_or(0, |m| m.len())
}

/// A client of `OWNER` on `store`, no services needed (onramp messages make its events).
fn client(store: &Path) -> DepositClient {
    let config = json!({
        "ownerAddress": OWNER,
        "destination": {"chainId": 8453},
        "servicesUrl": "http://127.0.0.1:9",
        "onramp": {"enabled": true},
        "storePath": store.display().to_string(),
    });
    DepositClient::new(DepositClientConfig::from_json(&config.to_string()).unwrap()).unwrap()
}

/// Emits the `n`th event: an `onramp:order_processing` carrying `n`.
fn emit(client: &DepositClient, n: u64) {
    let message = json!({"event": "order_processing", "data": {"status": "processing", "n": n}});
    assert!(client.handle_onramp_message(&message).unwrap());
}

/// The `n` an emitted event carries.
fn carried(event: &DepositEvent) -> Option<u64> {
    fn find(value: &Value) -> Option<u64> {
        match value {
            Value::Object(map) => {
                map.get("n").and_then(Value::as_u64).or_else(|| map.values().find_map(find))
            }
            Value::Array(items) => items.iter().find_map(find),
            _ => None,
        }
    }
    find(&event.to_json())
}

/// The child's part: emits events on the store named by `CHILD_STORE`, printing each id once
/// its write returned, then (with `CHILD_EVENTS`) says `done` and waits to be killed.
#[test]
#[ignore = "the crash cases' child: they run it in a process of its own"]
fn journal_child() {
    let store = std::env::var(CHILD_STORE).expect("run by the crash cases");
    let count: u64 = std::env::var(CHILD_EVENTS).map_or(u64::MAX, |n| n.parse().unwrap());
    let client = client(Path::new(&store));
    let mut out = std::io::stdout().lock();
    for n in 1..=count {
        emit(&client, n);
        writeln!(out, "acked {}", client.last_event_id()).unwrap();
        out.flush().unwrap();
    }
    writeln!(out, "done").unwrap();
    out.flush().unwrap();
    // Held open until the parent kills this process.
    let _ = std::io::stdin().read(&mut [0; 1]);
}

/// This test binary again, as the child on `store`.
fn spawn_child(store: &Path, events: Option<u64>) -> (Child, BufReader<ChildStdout>) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["journal_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_STORE, store)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(events) = events {
        command.env(CHILD_EVENTS, events.to_string());
    }
    let mut child = command.spawn().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdout)
}

/// Reads the child's lines until `stop` says so or the output ends; the acknowledged ids.
fn read_acks(stdout: &mut BufReader<ChildStdout>, stop: impl Fn(&[u64], &str) -> bool) -> Vec<u64> {
    let mut acked = Vec::new();
    let mut line = String::new();
    while {
        line.clear();
        stdout.read_line(&mut line).unwrap() > 0
    } {
        // The harness's own `test journal_child ... ` may start the first line.
        if let Some((_, id)) = line.trim().split_once("acked ") {
            acked.push(id.parse().unwrap());
        }
        if stop(&acked, line.trim()) {
            break;
        }
    }
    acked
}

/// Every stored event of `OWNER`: (id, carried n).
fn stored(client: &DepositClient) -> Vec<(u64, Option<u64>)> {
    client.events_since(0, usize::MAX).unwrap().iter().map(|e| (e.id, carried(&e.event))).collect()
}

/// Checks the stored log of `client`: ids 1, 2, … each once, in order, and the onramp events'
/// `n`s 1, 2, … in order (the client's own status events sit between them); the last id and
/// the last `n`.
fn check_log(client: &DepositClient) -> (u64, u64) {
    let events = stored(client);
    let ids: Vec<u64> = events.iter().map(|e| e.0).collect();
    let contiguous = ids.iter().enumerate().all(|(i, id)| *id == i as u64 + 1);
    assert!(contiguous, "ids 1.. each once, in order: {:?}", &ids[..ids.len().min(20)]);
    let carried: Vec<u64> = events.iter().filter_map(|e| e.1).collect();
    let in_order = carried.iter().enumerate().all(|(i, n)| *n == i as u64 + 1);
    assert!(
        in_order,
        "every emitted event once, in order: {:?}",
        &carried[..carried.len().min(20)]
    );
    (ids.last().copied().unwrap_or(0), carried.last().copied().unwrap_or(0))
}

#[test]
fn every_acknowledged_event_survives_a_killed_process_once_in_order() {
    let store = TempStore::new("killed");
    let (mut child, mut stdout) = spawn_child(&store, None);
    // Past the journal's first fold (4,096 records), so the kill may land in any phase.
    let mut acked = read_acks(&mut stdout, |acked, _| acked.len() >= 6000);
    child.kill().unwrap();
    // What the child printed before it died was acknowledged too.
    acked.extend(read_acks(&mut stdout, |_, _| false));
    child.wait().unwrap();
    let last_acked = *acked.last().unwrap();
    assert!(acked.windows(2).all(|w| w[0] < w[1]), "ids rise");

    let reopened = client(&store);
    let (last, emitted) = check_log(&reopened);
    assert!(last >= last_acked, "every acknowledged id is stored: {last} < {last_acked}");
    // The event whose write returned but whose id was not printed yet may be there too.
    let printed = acked.len() as u64;
    assert!(emitted == printed || emitted == printed + 1, "{emitted} stored, {printed} acked");
    assert!(reopened.last_event_id() >= last);
    emit(&reopened, emitted + 1);
    let (after, emitted_after) = check_log(&reopened);
    assert!(after > last, "ids continue after the last");
    assert_eq!(emitted_after, emitted + 1);
    reopened.close().unwrap();
}

#[test]
fn a_torn_tail_is_ignored_and_the_store_stays_usable() {
    let store = TempStore::new("torn");
    let (mut child, mut stdout) = spawn_child(&store, Some(10));
    let acked = read_acks(&mut stdout, |_, line| line.ends_with("done"));
    assert_eq!(acked.len(), 10);
    child.kill().unwrap();
    child.wait().unwrap();
    // The ten records wait in the journal; a record cut short by the crash follows them.
    let journal = std::fs::read(journal_of(&store)).unwrap();
    assert!(!journal.is_empty(), "the events were journaled");
    let torn = &journal[..journal.len().min(8 + 30)];
    std::fs::OpenOptions::new()
        .append(true)
        .open(journal_of(&store))
        .unwrap()
        .write_all(torn)
        .unwrap();

    let reopened = client(&store);
    assert_eq!(journal_len(&store), 0, "folded and emptied on opening");
    let (last, emitted) = check_log(&reopened);
    assert_eq!((emitted, last >= *acked.last().unwrap()), (10, true));
    emit(&reopened, 11);
    emit(&reopened, 12);
    let (after, emitted) = check_log(&reopened);
    assert_eq!((emitted, after > last), (12, true));
    reopened.close().unwrap();
    drop(reopened);
    assert!(!journal_of(&store).exists(), "the last client's close folds and removes it");
    let again = client(&store);
    assert_eq!(check_log(&again), (after, 12));
    again.close().unwrap();
}

fn event(id: u64, deposit_id: Option<&str>) -> EventRow {
    EventRow {
        id,
        at: 1_000 + id,
        kind: "status:change".to_owned(),
        deposit_id: deposit_id.map(str::to_owned),
        event: format!(r#"{{"n":{id}}}"#),
    }
}

fn events_only(ids: &[u64]) -> ChangeRows {
    ChangeRows {
        now: 1,
        events: ids.iter().map(|&id| event(id, None)).collect(),
        ..ChangeRows::default()
    }
}

fn ids(rows: &[EventRow]) -> Vec<u64> {
    rows.iter().map(|e| e.id).collect()
}

#[test]
fn reads_see_journaled_events_at_once() {
    let store = TempStore::new("reads");
    let owner = SqliteOwnerStore::open(&store, OWNER).unwrap();
    owner.write(&events_only(&[1, 2])).unwrap();
    owner.write(&events_only(&[3])).unwrap();
    assert!(journal_len(&store) > 0, "events alone are journaled");
    assert_eq!(ids(&owner.events_after(1, 10).unwrap()), [2, 3]);
    assert_eq!(journal_len(&store), 0, "a read folds the journal first");
    owner.write(&events_only(&[4])).unwrap();
    assert_eq!(owner.last_event_id().unwrap(), 4);
    owner.release();
}

#[test]
fn a_change_with_rows_after_journaled_events_keeps_the_order_of_ids() {
    let store = TempStore::new("rows-after");
    let owner = SqliteOwnerStore::open(&store, OWNER).unwrap();
    owner.write(&events_only(&[1, 2, 3])).unwrap();
    let with_rows = ChangeRows {
        now: 2,
        deposits: vec![DepositRow {
            id: "dep_1".to_owned(),
            seq: 0,
            state: "detected".to_owned(),
            open: true,
            record: "{}".to_owned(),
        }],
        events: vec![event(4, Some("dep_1")), event(5, Some("dep_1"))],
        ..ChangeRows::default()
    };
    owner.write(&with_rows).unwrap();
    owner.write(&events_only(&[6])).unwrap();
    // An id already stored is refused, journaled or not: events are appended, never replaced.
    let refused = owner.write(&events_only(&[6])).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Internal, "{refused}");
    assert!(refused.message().contains("UNIQUE"), "{refused}");
    assert_eq!(ids(&owner.events_after(0, 10).unwrap()), [1, 2, 3, 4, 5, 6]);
    assert_eq!(ids(&owner.deposit_events("dep_1").unwrap()), [4, 5]);
    owner.release();
    drop(owner);
    let again = SqliteOwnerStore::open(&store, OWNER).unwrap();
    assert_eq!(ids(&again.events_after(0, 10).unwrap()), [1, 2, 3, 4, 5, 6]);
    assert_eq!(again.load(10).unwrap().deposits.len(), 1);
    again.release();
}

#[test]
fn a_journal_record_of_another_format_is_refused_naming_the_journal() {
    let store = TempStore::new("other-format");
    // A whole record with a valid checksum, of a format this version does not know.
    let payload = [9u8, 0, 0, 0, 0];
    let mut record = (payload.len() as u32).to_le_bytes().to_vec();
    record.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    record.extend_from_slice(&payload);
    std::fs::write(journal_of(&store), &record).unwrap();
    let error = SqliteOwnerStore::open(&store, OWNER).err().expect("refused");
    assert_eq!(error.kind(), ErrorKind::Configuration, "{error}");
    let message = error.message();
    assert!(message.contains("is not a depositkit store this version can read"), "{message}");
    assert!(message.contains("deposits.sqlite-events"), "{message}");
    assert_eq!(std::fs::read(journal_of(&store)).unwrap(), record, "left as it was");
}

/// The schema version of the file at `store`.
fn schema_version(store: &Path) -> String {
    let conn = rusqlite::Connection::open(store).unwrap();
    conn.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |row| row.get(0))
        .unwrap()
}

#[test]
fn a_file_of_schema_version_1_is_brought_up_to_2_which_older_readers_refuse() {
    let store = TempStore::new("upgrade");
    drop(SqliteOwnerStore::open(&store, OWNER).unwrap());
    assert_eq!(schema_version(&store), "2", "the journal's version");
    // As a file written before the journal: version 1, with the index over every event.
    let conn = rusqlite::Connection::open(&*store).unwrap();
    conn.execute_batch(
        "UPDATE meta SET value = '1' WHERE key = 'schema_version'; \
         CREATE INDEX events_by_deposit ON events (owner, deposit_id, id);",
    )
    .unwrap();
    drop(conn);
    let opened = SqliteOwnerStore::open(&store, OWNER).unwrap();
    opened.write(&events_only(&[1, 2])).unwrap();
    assert_eq!(ids(&opened.events_after(0, 10).unwrap()), [1, 2]);
    drop(opened);
    assert_eq!(schema_version(&store), "2", "brought up to 2");
    let conn = rusqlite::Connection::open(&*store).unwrap();
    let old_index: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'events_by_deposit'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(old_index, 0, "the index over every event is gone");
}
