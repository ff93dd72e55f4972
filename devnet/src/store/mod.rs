//! The devnet's data: projects, users, wallets, identities, sessions and address interactions
//! (the user-lookup service), and the deposit services' keys, universal accounts, balances,
//! ledger, quotes, sweeps and refunds, history and receipts, in one SQLite file (WAL mode,
//! foreign keys on, schema versioned by `PRAGMA user_version`).
//!
//! [`Store`] is a cheap-to-clone handle over a few connections, each behind its own mutex. Every
//! method blocks; the server calls them from `spawn_blocking`.

mod accounts;
mod chain;
mod feed;
mod history;
mod keys;
mod reorg;
mod schema;
mod sweeps;
mod users;

use std::path::Path;
use std::sync::{Arc, MutexGuard};

use depositkit_server::store::sqlite::{SqlitePool, SqliteStore};
use rusqlite::Connection;

pub(crate) use accounts::new_tx_hash;
pub use accounts::{BalanceLine, Credit, Credited, Receipt, TxRecord, UaAccount};
pub use chain::{
    ChainLine, Counter, Leg, LegKind, LegState, LineDelta, Observation, ObservedTransfer,
};
pub use depositkit_server::records::{
    ChainFamily, NewUser, Profile, ProjectCredentials, SessionStatus, User, Wallet, normalize_uuid,
};
pub use feed::{AccountOverview, HistoryEntry, QuoteEntry};
pub use keys::{StoredJwtKey, StoredWallet};
pub use reorg::Uncredit;
pub use schema::SCHEMA_VERSION;
pub use sweeps::{Purpose, QuoteRecord, Settlement, SweepOutcome, SweepPlan, SweepRecord};

use crate::error::Result;

/// Connections a store opens unless told otherwise: enough for the server's concurrent reads.
pub const DEFAULT_CONNECTIONS: usize = depositkit_server::store::sqlite::DEFAULT_CONNECTIONS;

/// A handle to the SQLite store. Clones share the same connections (depositkit-server's
/// [`SqlitePool`]; the user-lookup part is depositkit-server's [`SqliteStore`] over them).
#[derive(Clone)]
pub struct Store {
    pool: Arc<SqlitePool>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.pool.path())
            .field("connections", &self.pool.size())
            .finish()
    }
}

impl Store {
    /// Opens (creating when missing, with the schema) the database at `path`, with
    /// [`DEFAULT_CONNECTIONS`] connections.
    ///
    /// # Errors
    /// The file cannot be opened or created, or was written by a newer schema version.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with_connections(path, DEFAULT_CONNECTIONS)
    }

    /// Like [`Store::open`] with `connections` connections (at least one).
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_with_connections(path: impl AsRef<Path>, connections: usize) -> Result<Self> {
        let pool = SqlitePool::open(path.as_ref(), connections, schema::prepare)?;
        Ok(Store { pool: Arc::new(pool) })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        self.pool.path()
    }

    /// The user-lookup part of the store (projects, users, wallets, identities, sessions,
    /// interactions), as depositkit-server reads and writes it.
    pub fn users(&self) -> SqliteStore {
        SqliteStore::over(Arc::clone(&self.pool))
    }

    /// A free connection if there is one, else waits for the next one in turn.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.pool.conn()
    }

    /// The value stored under `key` in the `meta` table.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| row.get(0))
            .optional()?)
    }

    /// Stores `value` under `key` in the `meta` table.
    pub(crate) fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.conn().execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key, value],
        )?;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::path::PathBuf;

    use super::UaAccount;

    /// The account `acc_1` of owner `0xowner`, with valid EVM and Solana deposit addresses.
    pub fn ua_account() -> UaAccount {
        UaAccount {
            id: "acc_1".into(),
            owner: "0xowner".into(),
            evm_address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed".into(),
            solana_address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".into(),
        }
    }

    /// A fresh database path in the system temp directory (removed with its WAL files on drop).
    pub struct TempDb(pub PathBuf);

    impl TempDb {
        pub fn new() -> Self {
            let dir = std::env::temp_dir().join("depositkit-devnet-unit");
            std::fs::create_dir_all(&dir).unwrap();
            TempDb(dir.join(format!("{}.sqlite", uuid::Uuid::new_v4())))
        }
    }

    impl Drop for TempDb {
        fn drop(&mut self) {
            for suffix in ["", "-wal", "-shm"] {
                let mut p = self.0.clone().into_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        }
    }
}
