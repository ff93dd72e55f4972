//! The auth-core signer (`docs/protocol.md` §2): one secp256k1 wallet per JWT `sub`, created on
//! first use and kept in the store, signing 32-byte messages with EIP-191 `personal_sign`.

use alloy_primitives::{Address, Signature, eip191_hash_message};
use k256::ecdsa::SigningKey;

use crate::error::{Error, Result};
use crate::store::{Store, StoredWallet};

/// The intermediary wallet of one `sub`. `Debug` shows only the address.
#[derive(Clone)]
pub struct Wallet {
    pub address: Address,
    key: SigningKey,
}

impl std::fmt::Debug for Wallet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wallet").field("address", &self.address).finish_non_exhaustive()
    }
}

impl Wallet {
    /// The EIP-55 address.
    pub fn checksummed(&self) -> String {
        self.address.to_checksum(None)
    }

    /// The 65-byte `r ‖ s ‖ v` EIP-191 signature of `message` (`v` is 27 or 28).
    ///
    /// # Errors
    /// Signing failed (it does not for a valid key).
    pub fn personal_sign(&self, message: &[u8]) -> Result<[u8; 65]> {
        personal_sign(&self.key, message)
    }
}

/// The 65-byte `r ‖ s ‖ v` EIP-191 (`personal_sign`) signature of `message` by `key` (`v` is 27
/// or 28).
///
/// # Errors
/// Signing failed (it does not for a valid key).
pub fn personal_sign(key: &SigningKey, message: &[u8]) -> Result<[u8; 65]> {
    let hash = eip191_hash_message(message);
    let (signature, recovery) = key
        .sign_prehash_recoverable(hash.as_slice())
        .map_err(|e| Error::io("signing", std::io::Error::other(e.to_string())))?;
    Ok(Signature::from_signature_and_parity(signature, recovery.is_y_odd()).as_bytes())
}

/// The wallet of `sub`, created (and stored) on first use.
///
/// # Errors
/// Database failures, or a stored key that is not a secp256k1 key.
pub fn wallet(store: &Store, sub: &str) -> Result<Wallet> {
    // Insert first: a sub seen for the first time (every owner starting) costs one statement,
    // not a read that finds nothing and then the insert. A sub that has a wallet already (a
    // restarted devnet) wastes the fresh key and reads the stored one.
    let key = random_key();
    let address = Address::from_private_key(&key);
    let fresh =
        StoredWallet { address: address.to_checksum(None), secret_key: key.to_bytes().to_vec() };
    let stored = store.insert_signer_wallet(sub, &fresh)?;
    if stored.secret_key == fresh.secret_key {
        return Ok(Wallet { address, key });
    }
    // Parsing the key computes its public key (a scalar multiplication): once per wallet.
    let key = SigningKey::from_slice(&stored.secret_key)
        .map_err(|_| Error::invalid("signer_wallets.secret_key", "not a secp256k1 key"))?;
    Ok(Wallet { address: Address::from_private_key(&key), key })
}

/// The wallets read so far, by `sub`. A wallet is created once and never changes, so what was
/// read stays true; without this, every request of a session parsed its wallet's key again (a
/// secp256k1 scalar multiplication: ~10% of devnet's CPU when thousands of owners start).
/// `Debug` shows the addresses only (as [`Wallet`]'s).
#[derive(Debug, Default)]
pub struct Wallets(std::sync::Mutex<std::collections::HashMap<String, Wallet>>);

impl Wallets {
    /// [`wallet`] of `sub`, from memory once read.
    ///
    /// # Errors
    /// What [`wallet`] returns.
    pub fn get(&self, store: &Store, sub: &str) -> Result<Wallet> {
        let known = self.known().get(sub).cloned();
        if let Some(wallet) = known {
            return Ok(wallet);
        }
        let wallet = wallet(store, sub)?;
        self.known().insert(sub.to_owned(), wallet.clone());
        Ok(wallet)
    }

    /// [`wallet_address`] of `sub`, from memory once its wallet was read (a batch of balance
    /// polls names hundreds of sessions: no store read each).
    ///
    /// # Errors
    /// What [`wallet_address`] returns.
    pub fn address(&self, store: &Store, sub: &str) -> Result<String> {
        let known = self.known().get(sub).map(Wallet::checksummed);
        match known {
            Some(address) => Ok(address),
            None => wallet_address(store, sub),
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Wallet>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The address (EIP-55) of the intermediary wallet of `sub`, created on first use: what
/// [`wallet`] would give, read from the store without deriving the key again (a batch of balance
/// polls names hundreds of wallets).
///
/// # Errors
/// Database failures.
pub fn wallet_address(store: &Store, sub: &str) -> Result<String> {
    match store.signer_wallet(sub)? {
        Some(stored) => Ok(stored.address),
        None => Ok(wallet(store, sub)?.checksummed()),
    }
}

/// The address `signature` (65 bytes, `v` 0/1/27/28) of EIP-191 `message` recovers to.
pub fn recover(message: &[u8], signature: &[u8]) -> Option<Address> {
    Signature::from_raw(signature).ok()?.recover_address_from_msg(message).ok()
}

fn random_key() -> SigningKey {
    loop {
        // Fails only for zero or a value at or above the curve order: try again.
        if let Ok(key) = SigningKey::from_slice(&rand::random::<[u8; 32]>()) {
            return key;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::TempDb;

    #[test]
    fn wallets_are_stable_and_signatures_recover() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let a = wallet(&store, "ua:0xa").unwrap();
        assert_eq!(wallet(&store, "ua:0xa").unwrap().address, a.address);
        assert_ne!(wallet(&store, "ua:0xb").unwrap().address, a.address);
        assert!(!format!("{a:?}").contains("key"));

        let message = [7u8; 32];
        let signature = a.personal_sign(&message).unwrap();
        assert!(matches!(signature[64], 27 | 28));
        assert_eq!(recover(&message, &signature), Some(a.address));
        assert_ne!(recover(&[8u8; 32], &signature), Some(a.address));
        assert_eq!(recover(&message, &signature[..64]), None);
    }
}
