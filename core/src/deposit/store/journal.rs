//! The event journal: changes of events alone, appended to a file beside the store
//! (`<store>-events`) with one `write` each, and folded into the SQLite file in batches.
//!
//! Why: most of a client's writes are events and nothing else, and a SQLite commit costs a few
//! page writes to the WAL whatever it holds (~100 µs here), so one commit per event capped a
//! durable client near 10,000 events/s. An appended record costs one `write` call. The
//! durability is the SQLite file's (WAL with `synchronous=NORMAL`): once `write` returns the
//! record is in the OS, so it survives the process being killed; like the WAL's last commits,
//! the last records may be lost with a power loss. Nothing is acknowledged before its record
//! is written whole: a write that fails is cut off again and is the caller's error.
//!
//! Folding: every whole record goes into the `events` table in one transaction
//! (`INSERT OR IGNORE` on the primary key (owner, id), so a fold repeated after a crash between
//! its commit and the truncation is harmless), then the file is truncated. The store folds when
//! the journal holds [`FOLD_RECORDS`] records or [`FOLD_BYTES`] bytes, before every other write
//! and every read (so a read sees every acknowledged event, and events keep their order), when
//! the file is opened (recovery: every whole record with a valid checksum, a torn tail
//! ignored), and when the last client of the file closes.
//!
//! Only the process that holds the file (`locking_mode=EXCLUSIVE`) opens its journal: one
//! journal per file, shared by the process's clients under a lock, like the connection.
//!
//! A record: payload length (u32), CRC-32 of the payload (u32), then the payload: the format
//! (1), the owner, the number of events, and each event's id, time, type, deposit and JSON
//! (integers little-endian, strings as a u32 length and UTF-8 bytes).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, params};

use super::contract::EventRow;
use super::file::store_error;
use super::lock;
use crate::describe::quote_path;
use crate::error::Result;

/// The journal holds at most this many records before it is folded.
pub(super) const FOLD_RECORDS: usize = 4096;

/// The journal holds at most about this many bytes before it is folded.
pub(super) const FOLD_BYTES: usize = 1 << 20;

/// The payload format this code writes and reads.
const FORMAT: u8 = 1;

/// Length and checksum before each payload.
const HEADER: usize = 8;

/// The journal of the store at `store`: `<store>-events`.
pub(super) fn journal_path(store: &Path) -> PathBuf {
    let mut path = store.as_os_str().to_owned();
    path.push("-events");
    PathBuf::from(path)
}

/// Appends one record of `owner`'s `events` to `out`; `false` (and `out` as it was) when the
/// record would not fit its u32 lengths (such a change goes to SQLite directly).
pub(super) fn encode_record(out: &mut Vec<u8>, owner: &str, events: &[EventRow]) -> bool {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER]);
    out.push(FORMAT);
    put_str(out, owner);
    put_len(out, events.len());
    for event in events {
        out.extend_from_slice(&event.id.to_le_bytes());
        out.extend_from_slice(&event.at.to_le_bytes());
        put_str(out, &event.kind);
        match &event.deposit_id {
            Some(id) => {
                out.push(1);
                put_str(out, id);
            }
            None => out.push(0),
        }
        put_str(out, &event.event);
    }
    let payload = &out[start + HEADER..];
    let Ok(length) = u32::try_from(payload.len()) else {
        out.truncate(start);
        return false;
    };
    let checksum = crc32fast::hash(payload);
    out[start..start + 4].copy_from_slice(&length.to_le_bytes());
    out[start + 4..start + HEADER].copy_from_slice(&checksum.to_le_bytes());
    true
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(&(len as u32).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// The payloads of the whole records at the start of `bytes` with a valid checksum, and how
/// many bytes they take; what follows the first record that is not (a torn tail) is left.
pub(super) fn whole_records(bytes: &[u8]) -> (Vec<&[u8]>, usize) {
    let mut payloads = Vec::new();
    let mut at = 0;
    while let Some(header) = bytes.get(at..at + HEADER) {
        let length = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let checksum = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let Some(payload) = bytes.get(at + HEADER..at + HEADER + length) else { break };
        if crc32fast::hash(payload) != checksum {
            break;
        }
        payloads.push(payload);
        at += HEADER + length;
    }
    (payloads, at)
}

/// One event of a record, borrowed from the journal's bytes.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct JournaledEvent<'a> {
    pub id: u64,
    pub at: u64,
    pub kind: &'a str,
    pub deposit_id: Option<&'a str>,
    pub event: &'a str,
}

/// A record's owner and events; `None` for a payload this version cannot read (a checksum that
/// matches but a format or a layout it does not know).
pub(super) fn decode_payload(payload: &[u8]) -> Option<(&str, Vec<JournaledEvent<'_>>)> {
    let mut reader = Reader { bytes: payload };
    if reader.take(1)? != [FORMAT] {
        return None;
    }
    let owner = reader.str()?;
    let count = reader.u32()? as usize;
    let mut events = Vec::with_capacity(count.min(payload.len()));
    for _ in 0..count {
        let id = reader.u64()?;
        let at = reader.u64()?;
        let kind = reader.str()?;
        let deposit_id = match reader.take(1)? {
            [0] => None,
            [1] => Some(reader.str()?),
            _ => return None,
        };
        events.push(JournaledEvent { id, at, kind, deposit_id, event: reader.str()? });
    }
    reader.bytes.is_empty().then_some((owner, events))
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.bytes.split_at_checked(n)?;
        self.bytes = rest;
        Some(taken)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn str(&mut self) -> Option<&'a str> {
        let len = self.u32()? as usize;
        std::str::from_utf8(self.take(len)?).ok()
    }
}

/// Inserts the events of `payloads` (ignoring those already stored), inside the caller's
/// transaction.
fn insert_payloads(conn: &Connection, path: &Path, payloads: &[&[u8]]) -> Result<()> {
    let journal = journal_path(path);
    let mut insert = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO events (owner, id, at, type, deposit_id, event)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(|e| store_error(path, "folding the event journal", e))?;
    for payload in payloads {
        let (owner, events) = decode_payload(payload).ok_or_else(|| {
            store_error(
                path,
                &format!("reading the event journal {}", quote_path(&journal)),
                "a record this version cannot read",
            )
        })?;
        for e in events {
            insert
                .execute(params![owner, e.id as i64, e.at as i64, e.kind, e.deposit_id, e.event])
                .map_err(|e| store_error(path, "folding the event journal", e))?;
        }
    }
    Ok(())
}

/// Runs `body` in one `BEGIN IMMEDIATE` … `COMMIT` on `conn`, rolled back when it fails.
fn in_transaction<T>(
    conn: &Connection,
    path: &Path,
    body: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let sql = |sql: &str| {
        conn.prepare_cached(sql)
            .and_then(|mut s| s.execute([]).map(drop))
            .map_err(|e| store_error(path, "folding the event journal", e))
    };
    sql("BEGIN IMMEDIATE")?;
    let done = body().and_then(|value| sql("COMMIT").map(|()| value));
    if done.is_err() && !conn.is_autocommit() {
        let _ = sql("ROLLBACK");
    }
    done
}

/// The journal file and what it holds since the last fold.
struct JournalFile {
    /// Opened for appending: every `write` lands at the end.
    file: File,
    /// The whole records written since the last fold: the bytes the file holds.
    pending: Vec<u8>,
    records: usize,
    /// The file may hold more than `pending` (a write that failed part-way, a truncation that
    /// failed): it is cut back before the next record.
    dirty: bool,
}

/// The event journal of one store file (see the module docs).
pub(super) struct EventJournal {
    /// The store's path (errors name it); the journal is [`journal_path`] of it.
    store: PathBuf,
    /// The process that opened the file: a forked child (whose inherited clients write nothing:
    /// it makes its own) never folds or removes it.
    pid: u32,
    file: Mutex<JournalFile>,
}

impl EventJournal {
    /// Opens the journal of the store at `store`, whose connection `conn` holds the file's lock,
    /// and folds what a process that died left in it (every whole record with a valid
    /// checksum), then empties it.
    ///
    /// # Errors
    /// When the journal cannot be read or folded.
    pub fn recover(store: &Path, conn: &Connection) -> Result<EventJournal> {
        let path = journal_path(store);
        let shown = quote_path(&path);
        let io = |what: &str, e: std::io::Error| {
            store_error(store, &format!("{what} the event journal {shown}"), e)
        };
        // Inside a write transaction: the file's lock is this connection's (and, with
        // `locking_mode=EXCLUSIVE`, stays so) before the journal is touched.
        let (file, folded) = in_transaction(conn, store, || {
            let mut file = OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .open(&path)
                .map_err(|e| io("opening", e))?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).map_err(|e| io("reading", e))?;
            let (payloads, _) = whole_records(&bytes);
            insert_payloads(conn, store, &payloads)?;
            Ok((file, !bytes.is_empty()))
        })?;
        if folded {
            file.set_len(0).map_err(|e| io("emptying", e))?;
        }
        Ok(EventJournal {
            store: store.to_path_buf(),
            pid: std::process::id(),
            file: Mutex::new(JournalFile { file, pending: Vec::new(), records: 0, dirty: false }),
        })
    }

    /// Appends `owner`'s `events` as one record with one `write`; returns once the record is
    /// in the OS (then folds, when the journal holds enough). `false`: a change too large for a
    /// record, not written (the caller writes it to SQLite).
    ///
    /// # Errors
    /// When the record could not be written whole (nothing of it stays).
    pub fn append(
        &self,
        conn: &Mutex<Connection>,
        owner: &str,
        events: &[EventRow],
    ) -> Result<bool> {
        let mut journal = lock(&self.file);
        let journal = &mut *journal;
        let fail = |e: std::io::Error| {
            store_error(
                &self.store,
                &format!("writing the event journal {}", quote_path(&journal_path(&self.store))),
                e,
            )
        };
        if journal.dirty {
            journal.file.set_len(journal.pending.len() as u64).map_err(fail)?;
            journal.dirty = false;
        }
        let start = journal.pending.len();
        if !encode_record(&mut journal.pending, owner, events) {
            return Ok(false);
        }
        if let Err(e) = journal.file.write_all(&journal.pending[start..]) {
            journal.pending.truncate(start);
            journal.dirty = journal.file.set_len(start as u64).is_err();
            return Err(fail(e));
        }
        journal.records += 1;
        if journal.records >= FOLD_RECORDS || journal.pending.len() >= FOLD_BYTES {
            // The record is written: a fold that fails now is tried again by the next one.
            let _ = self.fold_locked(journal, conn);
        }
        Ok(true)
    }

    /// Folds every record into the SQLite file and empties the journal (nothing to do when it
    /// is empty).
    ///
    /// # Errors
    /// When the fold's transaction fails: the records stay in the journal.
    pub fn fold(&self, conn: &Mutex<Connection>) -> Result<()> {
        if std::process::id() != self.pid {
            return Ok(());
        }
        let mut journal = lock(&self.file);
        if journal.records == 0 {
            return Ok(());
        }
        self.fold_locked(&mut journal, conn)
    }

    fn fold_locked(&self, journal: &mut JournalFile, conn: &Mutex<Connection>) -> Result<()> {
        let (payloads, _) = whole_records(&journal.pending);
        let conn = lock(conn);
        in_transaction(&conn, &self.store, || insert_payloads(&conn, &self.store, &payloads))?;
        drop(conn);
        journal.pending.clear();
        journal.records = 0;
        // Records left in the file after a failed truncation are folded again harmlessly.
        journal.dirty = journal.file.set_len(0).is_err();
        Ok(())
    }

    /// Folds the journal and removes its file (the last client of the store closes).
    pub fn close(&self, conn: &Mutex<Connection>) {
        if self.fold(conn).is_ok() && std::process::id() == self.pid && !lock(&self.file).dirty {
            let _ = std::fs::remove_file(journal_path(&self.store));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: u64, deposit_id: Option<&str>) -> EventRow {
        EventRow {
            id,
            at: 1_700_000_000_000 + id,
            kind: "status:change".to_owned(),
            deposit_id: deposit_id.map(str::to_owned),
            event: format!(r#"{{"n":{id},"s":"ü"}}"#),
        }
    }

    #[test]
    fn a_record_reads_back_and_a_torn_tail_is_left() {
        let mut bytes = Vec::new();
        assert!(encode_record(&mut bytes, "0xa", &[event(1, Some("dep_1")), event(2, None)]));
        let first = bytes.len();
        assert!(encode_record(&mut bytes, "0xb", &[event(7, None)]));
        let whole = bytes.len();
        let (payloads, used) = whole_records(&bytes);
        assert_eq!(used, whole);
        let (owner, events) = decode_payload(payloads[0]).unwrap();
        assert_eq!(owner, "0xa");
        let ids: Vec<_> = events.iter().map(|e| (e.id, e.deposit_id)).collect();
        assert_eq!(ids, [(1, Some("dep_1")), (2, None)]);
        assert_eq!(events[1].event, r#"{"n":2,"s":"ü"}"#);
        assert_eq!(events[1].at, 1_700_000_000_002);
        // Every cut inside the second record leaves the first alone.
        for cut in first..whole {
            let (payloads, used) = whole_records(&bytes[..cut]);
            assert_eq!((payloads.len(), used), (1, first), "cut at {cut}");
        }
        // A flipped byte fails the checksum: that record and everything after it are left.
        bytes[first + HEADER + 3] ^= 0x40;
        assert_eq!(whole_records(&bytes).1, first);
    }

    #[test]
    fn a_payload_of_another_format_is_not_read() {
        let mut bytes = Vec::new();
        assert!(encode_record(&mut bytes, "0xa", &[event(1, None)]));
        let mut payload = bytes[HEADER..].to_vec();
        assert!(decode_payload(&payload).is_some());
        payload[0] = FORMAT + 1;
        assert!(decode_payload(&payload).is_none());
        payload[0] = FORMAT;
        payload.push(0);
        assert!(decode_payload(&payload).is_none(), "trailing bytes");
    }
}
