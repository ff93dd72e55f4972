//! The deposit addresses one watcher follows: added and removed at run time, cheap for tens of
//! thousands of addresses (a hash set behind a read-write lock; a watcher's step reads a
//! snapshot only when it has new blocks to look at).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use crate::chains::{AddressType, get_address_type};
use crate::error::Result;
use crate::validate::validate_address_for_chain;

/// The watched addresses of one chain, in their canonical form: EVM addresses lower-case hex
/// (the form [`TransferSeen::to`](super::signal::TransferSeen::to) carries), Solana addresses
/// base58 as given.
#[derive(Debug)]
pub struct WatchedAddresses {
    chain_id: u64,
    set: RwLock<HashSet<String>>,
    /// Counts the changes: what was made of the set is remade when it moved.
    generation: AtomicU64,
}

impl WatchedAddresses {
    /// An empty set for `chain_id`.
    pub fn new(chain_id: u64) -> Self {
        WatchedAddresses {
            chain_id,
            set: RwLock::new(HashSet::new()),
            generation: AtomicU64::new(0),
        }
    }

    /// `address` in the form the set keeps, after checking it is an address of the chain.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) naming the address.
    pub fn canonical(&self, address: &str) -> Result<String> {
        validate_address_for_chain(address, self.chain_id)?;
        Ok(match get_address_type(self.chain_id) {
            AddressType::Evm => address.to_ascii_lowercase(),
            AddressType::Solana => address.to_owned(),
        })
    }

    /// Adds `addresses`; returns how many were new.
    ///
    /// # Errors
    /// The first address that is not one of the chain (nothing is added then).
    pub fn add<'a>(&self, addresses: impl IntoIterator<Item = &'a str>) -> Result<usize> {
        let canonical =
            addresses.into_iter().map(|a| self.canonical(a)).collect::<Result<Vec<_>>>()?;
        let mut set = self.set.write().unwrap_or_else(PoisonError::into_inner);
        let added = canonical.into_iter().filter(|a| set.insert(a.clone())).count();
        if added > 0 {
            self.generation.fetch_add(1, Ordering::Release);
        }
        Ok(added)
    }

    /// Removes `addresses` (unknown or malformed ones are ignored); returns how many were there.
    pub fn remove<'a>(&self, addresses: impl IntoIterator<Item = &'a str>) -> usize {
        let canonical: Vec<String> =
            addresses.into_iter().filter_map(|a| self.canonical(a).ok()).collect();
        let mut set = self.set.write().unwrap_or_else(PoisonError::into_inner);
        let removed = canonical.iter().filter(|a| set.remove(*a)).count();
        if removed > 0 {
            self.generation.fetch_add(1, Ordering::Release);
        }
        removed
    }

    /// Whether `canonical` (already in the set's form) is watched.
    pub fn contains(&self, canonical: &str) -> bool {
        self.set.read().unwrap_or_else(PoisonError::into_inner).contains(canonical)
    }

    /// A number that changes whenever addresses are added or removed.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// How many addresses are watched.
    pub fn len(&self) -> usize {
        self.set.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of the set, sorted (so filters are built the same way each time).
    pub fn snapshot(&self) -> Vec<String> {
        let mut all: Vec<String> =
            self.set.read().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect();
        all.sort_unstable();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evm_addresses_are_kept_lower_case_and_checked() {
        let set = WatchedAddresses::new(8453);
        let address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
        assert_eq!(set.add([address, &address.to_ascii_lowercase()]).unwrap(), 1);
        let generation = set.generation();
        set.add([address]).unwrap();
        assert_eq!(set.generation(), generation, "nothing changed");
        assert!(set.contains("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"));
        let err = set.add(["0x1234"]).unwrap_err();
        assert!(err.message().contains("0x1234"), "{err}");
        assert_eq!(set.remove([address]), 1);
        assert!(set.is_empty());
    }

    #[test]
    fn solana_addresses_keep_their_case() {
        let set = WatchedAddresses::new(101);
        set.add(["EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"]).unwrap();
        assert!(set.contains("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"));
        assert!(set.add(["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"]).is_err());
    }
}
