//! Key material of the deposit services: the secp256k1 key of each intermediary wallet (one per
//! JWT `sub`) and the RSA keys that sign JWTs. Devnet-only secrets: they are stored in the clear
//! so that a restarted devnet on the same file keeps its wallets and accepts its old JWTs.

use rusqlite::{OptionalExtension, params};

use super::Store;
use crate::error::Result;
use crate::time;

/// A stored intermediary wallet.
pub struct StoredWallet {
    /// EIP-55 address.
    pub address: String,
    /// The 32-byte secp256k1 secret key.
    pub secret_key: Vec<u8>,
}

impl std::fmt::Debug for StoredWallet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredWallet").field("address", &self.address).finish_non_exhaustive()
    }
}

/// A stored JWT signing key.
pub struct StoredJwtKey {
    /// Key id (the JWT header's `kid`).
    pub kid: String,
    /// PKCS#1 DER of the RSA private key.
    pub private_der: Vec<u8>,
}

impl std::fmt::Debug for StoredJwtKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredJwtKey").field("kid", &self.kid).finish_non_exhaustive()
    }
}

impl Store {
    /// The wallet of `sub`, if it has one.
    ///
    /// # Errors
    /// Database failures.
    pub fn signer_wallet(&self, sub: &str) -> Result<Option<StoredWallet>> {
        Ok(self.conn().prepare_cached(WALLET_SQL)?.query_row([sub], stored_wallet).optional()?)
    }

    /// Stores `wallet` for `sub` unless `sub` already has one; returns the wallet `sub` has
    /// afterwards (the first one written wins a race).
    ///
    /// # Errors
    /// Database failures.
    pub fn insert_signer_wallet(&self, sub: &str, wallet: &StoredWallet) -> Result<StoredWallet> {
        let conn = self.conn();
        // Inserted: one cached statement. Another wallet was there first: no row, read it.
        let inserted = conn
            .prepare_cached(
                "INSERT OR IGNORE INTO signer_wallets (sub, address, secret_key, created_at)
                 VALUES (?1, ?2, ?3, ?4)
                 RETURNING address, secret_key",
            )?
            .query_row(
                params![sub, wallet.address, wallet.secret_key, time::now_ms()],
                stored_wallet,
            )
            .optional()?;
        match inserted {
            Some(stored) => Ok(stored),
            None => Ok(conn.prepare_cached(WALLET_SQL)?.query_row([sub], stored_wallet)?),
        }
    }

    /// The newest JWT signing keys, newest first (at most `limit`).
    ///
    /// # Errors
    /// Database failures.
    pub fn jwt_keys(&self, limit: usize) -> Result<Vec<StoredJwtKey>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT kid, private_der FROM jwt_keys ORDER BY created_at DESC, rowid DESC LIMIT ?1",
        )?;
        let keys = stmt
            .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |row| {
                Ok(StoredJwtKey { kid: row.get(0)?, private_der: row.get(1)? })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(keys)
    }

    /// Adds `key` as the newest JWT signing key and forgets all but the `keep` newest.
    ///
    /// # Errors
    /// Database failures.
    pub fn push_jwt_key(&self, key: &StoredJwtKey, keep: usize) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO jwt_keys (kid, private_der, created_at) VALUES (?1, ?2, ?3)",
            params![key.kid, key.private_der, time::now_ms()],
        )?;
        tx.execute(
            "DELETE FROM jwt_keys WHERE rowid NOT IN
             (SELECT rowid FROM jwt_keys ORDER BY created_at DESC, rowid DESC LIMIT ?1)",
            [i64::try_from(keep).unwrap_or(i64::MAX)],
        )?;
        tx.commit()?;
        Ok(())
    }
}

/// The wallet of a `sub`: read alone, or after an insert that found one there.
const WALLET_SQL: &str = "SELECT address, secret_key FROM signer_wallets WHERE sub = ?1";

fn stored_wallet(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredWallet> {
    Ok(StoredWallet { address: row.get(0)?, secret_key: row.get(1)? })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::TempDb;

    #[test]
    fn first_wallet_wins_and_keys_are_pruned() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        assert!(store.signer_wallet("ua:0xabc").unwrap().is_none());
        let first = StoredWallet { address: "0xA".into(), secret_key: vec![1; 32] };
        let second = StoredWallet { address: "0xB".into(), secret_key: vec![2; 32] };
        assert_eq!(store.insert_signer_wallet("ua:0xabc", &first).unwrap().address, "0xA");
        assert_eq!(store.insert_signer_wallet("ua:0xabc", &second).unwrap().address, "0xA");
        assert!(!format!("{first:?}").contains("secret"));

        for kid in ["k1", "k2", "k3"] {
            let key = StoredJwtKey { kid: kid.into(), private_der: vec![0; 4] };
            store.push_jwt_key(&key, 2).unwrap();
        }
        let kids: Vec<String> = store.jwt_keys(5).unwrap().into_iter().map(|k| k.kid).collect();
        assert_eq!(kids, ["k3", "k2"]);
    }
}
