//! Group commit: the changes that reach a store file while a commit is under way are written
//! together, in the next transaction.
//!
//! Why: with WAL and `synchronous=NORMAL` a commit costs a few `pwrite`s of whole pages (and,
//! every thousand pages, a checkpoint with its `fsync`s) whatever it holds, so the owners of a
//! file (and the threads of one owner) that commit at the same time share that cost. Nothing is
//! acknowledged early: every caller still returns only once its own change is committed (or
//! failed), so "committed before the events reach the host" holds as before. Each change keeps
//! its all-or-nothing: it runs under a savepoint of the shared transaction, and a change that
//! fails is rolled back alone (its caller gets the error; the others commit). A caller never
//! waits for a window: a lone writer commits at once, as before.
//!
//! Leader and followers: a caller queues its change; if no commit is under way it becomes the
//! leader, takes every queued change, writes them in one transaction and wakes the followers;
//! a follower whose change was queued too late for that transaction becomes the next leader.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

use rusqlite::Connection;

use super::contract::ChangeRows;
use super::file::{SharedDb, StoreCause, store_error};
use super::{lock, rows};
use crate::error::{Error, Result};

/// One queued change: whose, and which.
struct Job {
    ticket: u64,
    owner: String,
    change: ChangeRows,
}

#[derive(Default)]
struct Pending {
    /// Changes waiting for the next transaction, in arrival order.
    queue: Vec<Job>,
    /// The ticket the next change gets.
    next_ticket: u64,
    /// Every ticket below this one is finished (committed or failed).
    finished_below: u64,
    /// The failed tickets' errors, until their callers take them.
    failures: HashMap<u64, Error>,
    /// Whether a leader is writing now.
    leading: bool,
}

/// The group commit of one store file (see the module docs).
#[derive(Default)]
pub(super) struct GroupCommit {
    pending: Mutex<Pending>,
    finished: Condvar,
}

impl GroupCommit {
    /// Writes `change` of `owner` to `db` in a transaction (shared with the changes that arrive
    /// meanwhile); returns once it is committed, or with the error that kept it out.
    pub fn write(&self, db: &SharedDb, owner: &str, change: &ChangeRows) -> Result<()> {
        let mut pending = lock(&self.pending);
        let ticket = pending.next_ticket;
        pending.next_ticket += 1;
        pending.queue.push(Job { ticket, owner: owner.to_owned(), change: change.clone() });
        loop {
            if ticket < pending.finished_below {
                return pending.failures.remove(&ticket).map_or(Ok(()), Err);
            }
            if !pending.leading {
                pending.leading = true;
                let jobs = std::mem::take(&mut pending.queue);
                drop(pending);
                let outcomes = commit_jobs(db, &jobs);
                pending = lock(&self.pending);
                pending.leading = false;
                if let Some(last) = jobs.last() {
                    pending.finished_below = last.ticket + 1;
                }
                for (job, outcome) in jobs.iter().zip(outcomes) {
                    if let Err(error) = outcome {
                        pending.failures.insert(job.ticket, error);
                    }
                }
                // The followers: those finished, and the next leader among the others.
                self.finished.notify_all();
                continue;
            }
            pending = self.finished.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Why a whole transaction failed, for each of its changes' callers.
struct CommitFailure {
    message: String,
    unreadable: bool,
}

impl std::fmt::Display for CommitFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl StoreCause for CommitFailure {
    fn unreadable(&self) -> bool {
        self.unreadable
    }
}

/// Writes `jobs` in one transaction, each under its own savepoint; the outcome of each.
fn commit_jobs(db: &SharedDb, jobs: &[Job]) -> Vec<Result<()>> {
    let conn = lock(&db.conn);
    let whole =
        |e: &rusqlite::Error| CommitFailure { message: e.to_string(), unreadable: e.unreadable() };
    let all_failed = |cause: CommitFailure| -> Vec<Result<()>> {
        jobs.iter()
            .map(|_| {
                Err(store_error(
                    &db.path,
                    "writing",
                    CommitFailure { message: cause.message.clone(), unreadable: cause.unreadable },
                ))
            })
            .collect()
    };
    if let Err(e) = run(&conn, "BEGIN") {
        return all_failed(whole(&e));
    }
    let mut outcomes = Vec::with_capacity(jobs.len());
    for job in jobs {
        let grouped = jobs.len() > 1;
        let written = (|| {
            if grouped {
                run(&conn, "SAVEPOINT change")?;
            }
            rows::write_change(&conn, &job.owner, &job.change)?;
            if grouped {
                run(&conn, "RELEASE change")?;
            }
            Ok(())
        })();
        match written {
            Ok(()) => outcomes.push(Ok(())),
            Err(e) if grouped && !conn.is_autocommit() => {
                // This change alone is undone; the transaction goes on with the others.
                let undone =
                    run(&conn, "ROLLBACK TO change").and_then(|()| run(&conn, "RELEASE change"));
                if let Err(undo) = undone {
                    let _ = run(&conn, "ROLLBACK");
                    return all_failed(whole(&undo));
                }
                outcomes.push(Err(store_error(&db.path, "writing", e)));
            }
            Err(e) => {
                // SQLite ended the transaction itself (or a lone change failed): nothing of it
                // stays.
                if !conn.is_autocommit() {
                    let _ = run(&conn, "ROLLBACK");
                }
                return all_failed(whole(&e));
            }
        }
    }
    if let Err(e) = run(&conn, "COMMIT") {
        if !conn.is_autocommit() {
            let _ = run(&conn, "ROLLBACK");
        }
        return all_failed(whole(&e));
    }
    outcomes
}

/// Runs one statement without parameters from the connection's statement cache.
fn run(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deposit::store::contract::{DepositRow, EventRow, OwnerStore};
    use crate::deposit::store::file::shared_db;
    use crate::deposit::store::sqlite::SqliteOwnerStore;

    fn fresh_path(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("depositkit-group-commit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("store.sqlite")
    }

    fn event(id: u64) -> EventRow {
        EventRow {
            id,
            at: 1,
            kind: "status:change".to_owned(),
            deposit_id: None,
            event: format!(r#"{{"n":{id}}}"#),
        }
    }

    fn change(deposit: &str, events: &[u64]) -> ChangeRows {
        ChangeRows {
            now: 1,
            deposits: vec![DepositRow {
                id: deposit.to_owned(),
                seq: 0,
                state: "waiting".to_owned(),
                open: true,
                record: "{}".to_owned(),
            }],
            events: events.iter().map(|&id| event(id)).collect(),
            ..ChangeRows::default()
        }
    }

    fn job(ticket: u64, owner: &str, change: ChangeRows) -> Job {
        Job { ticket, owner: owner.to_owned(), change }
    }

    #[test]
    fn a_failing_change_of_a_group_is_undone_alone() {
        let path = fresh_path("undone-alone");
        let db = shared_db(&path).unwrap();
        let jobs = [
            job(0, "0xa", change("dep_1", &[1, 2])),
            // Event 2 of 0xa exists by then: the whole change, its deposit row too, is undone.
            job(1, "0xa", change("dep_2", &[3, 2])),
            job(2, "0xb", change("dep_3", &[1])),
        ];
        let outcomes = commit_jobs(&db, &jobs);
        assert!(outcomes[0].is_ok() && outcomes[2].is_ok(), "{outcomes:?}");
        let error = outcomes[1].as_ref().unwrap_err();
        assert!(error.message().contains("writing: UNIQUE constraint failed"), "{error}");
        let a = SqliteOwnerStore::open(&path, "0xa").unwrap();
        let deposits: Vec<_> = a.load(10).unwrap().deposits.into_iter().map(|d| d.id).collect();
        assert_eq!(deposits, ["dep_1"], "dep_2 went with its failed change");
        let ids: Vec<_> = a.events_after(0, 10).unwrap().iter().map(|e| e.id).collect();
        assert_eq!(ids, [1, 2]);
        assert_eq!(SqliteOwnerStore::open(&path, "0xb").unwrap().last_event_id().unwrap(), 1);
    }

    #[test]
    fn a_lone_change_fails_as_a_whole() {
        let path = fresh_path("lone");
        let db = shared_db(&path).unwrap();
        assert!(commit_jobs(&db, &[job(0, "0xa", change("dep_1", &[1]))])[0].is_ok());
        let outcomes = commit_jobs(&db, &[job(1, "0xa", change("dep_2", &[2, 1]))]);
        assert!(outcomes[0].as_ref().is_err_and(|e| e.message().contains("UNIQUE")));
        let a = SqliteOwnerStore::open(&path, "0xa").unwrap();
        assert_eq!(a.load(10).unwrap().deposits.len(), 1);
        assert_eq!(a.last_event_id().unwrap(), 1);
    }

    #[test]
    fn concurrent_writers_all_commit_in_order() {
        let path = fresh_path("concurrent");
        let owners: Vec<String> = (0..8).map(|i| format!("0x{i:040x}")).collect();
        let stores: Vec<SqliteOwnerStore> =
            owners.iter().map(|o| SqliteOwnerStore::open(&path, o).unwrap()).collect();
        std::thread::scope(|scope| {
            for store in &stores {
                scope.spawn(move || {
                    for id in 1..=200 {
                        let rows = ChangeRows { events: vec![event(id)], ..ChangeRows::default() };
                        store.write(&rows).unwrap();
                        assert_eq!(store.last_event_id().unwrap(), id, "committed on return");
                    }
                });
            }
        });
        for store in &stores {
            let ids: Vec<_> = store.events_after(0, 1000).unwrap().iter().map(|e| e.id).collect();
            assert_eq!(ids, (1..=200).collect::<Vec<_>>());
        }
    }
}
