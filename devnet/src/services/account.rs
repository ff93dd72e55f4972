//! Universal accounts (`docs/protocol.md` §3): one per owner, with deposit addresses derived
//! deterministically from the owner, so the same owner gets the same addresses on any devnet.
//!
//! - account id: `acc_` + hex of the first 12 bytes of keccak256(`depositkit-devnet/ua/account/` + owner)
//! - EVM deposit address: the address of the secp256k1 key
//!   keccak256(`depositkit-devnet/ua/evm-key/` + owner), EIP-55
//! - Solana deposit address: the ed25519 public key of the seed
//!   sha256(`depositkit-devnet/ua/solana-key/` + owner), base58
//!
//! where owner is the lower-case owner address ([`crate::chain::keys`]). The deposit addresses are
//! real keys' addresses so that chain-backed chains can move what they receive; they are the same
//! in ledger mode. Accounts stored by earlier devnets keep the addresses they were opened with.

use std::collections::HashMap;

use alloy_primitives::{hex, keccak256};

use crate::chain::keys::KeyPair;
use crate::error::Result;
use crate::store::{Store, UaAccount};

/// The account `owner` has (or would have), without touching the store.
pub fn derive(owner: &str) -> UaAccount {
    let owner = owner.trim().to_ascii_lowercase();
    let id = keccak256(format!("depositkit-devnet/ua/account/{owner}"));
    let keys = KeyPair::of_owner(&owner);
    UaAccount {
        id: format!("acc_{}", hex::encode(&id[..12])),
        evm_address: keys.evm_address(),
        solana_address: keys.solana_address(),
        owner,
    }
}

/// The account of `owner`, created on first use.
///
/// # Errors
/// Database failures.
pub fn open(store: &Store, owner: &str) -> Result<UaAccount> {
    store.insert_ua_account(&derive(owner))
}

/// The accounts read or opened so far, by id. An account row is written once and never
/// changed or deleted, so what was read stays true; without this, every balance poll read each
/// of its (up to 1,000) accounts from SQLite again: most of devnet's CPU for 20,000 polling
/// owners.
#[derive(Debug, Default)]
pub struct Accounts(std::sync::Mutex<HashMap<String, UaAccount>>);

impl Accounts {
    /// [`open`], remembered.
    ///
    /// # Errors
    /// Database failures.
    pub fn open(&self, store: &Store, owner: &str) -> Result<UaAccount> {
        let account = open(store, owner)?;
        self.known().insert(account.id.clone(), account.clone());
        Ok(account)
    }

    /// The accounts among `ids` (absent: no such account), from memory once read.
    ///
    /// # Errors
    /// Database failures.
    pub fn find(&self, store: &Store, ids: &[String]) -> Result<HashMap<String, UaAccount>> {
        let mut found = HashMap::with_capacity(ids.len());
        let mut missing = Vec::new();
        {
            let known = self.known();
            for id in ids {
                match known.get(id) {
                    Some(account) => {
                        found.insert(id.clone(), account.clone());
                    }
                    None => missing.push(id.clone()),
                }
            }
        }
        if !missing.is_empty() {
            let read = store.ua_accounts(&missing)?;
            let mut known = self.known();
            for (id, account) in read {
                known.insert(id.clone(), account.clone());
                found.insert(id, account);
            }
        }
        Ok(found)
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, UaAccount>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use depositkit_core::{AddressType, validate_address_for_chain};

    use super::*;

    #[test]
    fn derived_addresses_are_valid_stable_and_distinct() {
        let a = derive("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
        assert_eq!(a, derive("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"));
        assert_eq!(validate_address_for_chain(&a.evm_address, 1).unwrap(), AddressType::Evm);
        assert_eq!(
            validate_address_for_chain(&a.solana_address, 101).unwrap(),
            AddressType::Solana
        );
        assert!(a.id.starts_with("acc_") && a.id.len() == 28, "{}", a.id);
        assert_ne!(a.evm_address, a.evm_address.to_lowercase(), "EIP-55 mixed case");
        let b = derive("0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359");
        assert_ne!(a.id, b.id);
        assert_ne!(a.evm_address, b.evm_address);
        assert_ne!(a.solana_address, b.solana_address);
        // The addresses are the derived keys'.
        let keys = KeyPair::of_owner("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed");
        assert_eq!(a.evm_address, keys.evm.address().to_checksum(None));
        assert_eq!(a.solana_address, keys.solana.address());
    }

    #[test]
    fn accounts_are_found_once_opened_here_or_by_another_process() {
        let db = crate::store::test_support::TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let accounts = Accounts::default();
        let here = accounts.open(&store, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed").unwrap();
        // Opened through another store on the same file (another devnet process).
        let other = Store::open(&db.0).unwrap();
        let there = open(&other, "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359").unwrap();

        let ids = [here.id.clone(), there.id.clone(), "acc_nope".to_owned()];
        for _ in 0..2 {
            // The second round answers from memory what the first read.
            let found = accounts.find(&store, &ids).unwrap();
            assert_eq!(found.len(), 2);
            assert_eq!(found[&here.id], here);
            assert_eq!(found[&there.id], there);
        }
        // Opening again gives the stored account.
        assert_eq!(
            accounts.open(&store, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed").unwrap(),
            here
        );
    }
}
