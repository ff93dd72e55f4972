//! [`SeedSigner`]: one key per owner, derived from a master seed.
//!
//! The derivation (HKDF-SHA256, RFC 5869), which `docs/particle.md` repeats for re-deriving a
//! key elsewhere:
//!
//! ```text
//! salt    = "depositkit/particle/owner-key/v1"             (32 ASCII bytes)
//! IKM     = the master seed                                  (32 to 128 bytes)
//! info    = the owner's 20 address bytes ‖ counter           (21 bytes; counter = 0x00 first)
//! key     = HKDF-SHA256(salt, IKM, info, L = 32), big-endian
//! ```
//!
//! A key of zero or not below the secp256k1 order (probability below 2^-127) is skipped by
//! taking the next counter. The owner's address is read case-insensitively, so the checksummed
//! and lower-case spellings derive the same key.

use std::fmt;
use std::sync::Arc;

use alloy_primitives::Address;
use hkdf::Hkdf;
use k256::ecdsa::SigningKey;
use k256::sha2::Sha256;
use zeroize::Zeroizing;

use super::key::{decode_secret_hex, read_secret_env};
use super::{KeySigner, Signer, SignerSource};
use crate::describe::quote;
use crate::error::{Error, Result};
use crate::validate::evm_address_problem;

/// The environment variable [`SeedSigner::from_default_env`] reads: the seed in hex.
pub const SIGNER_SEED_ENV: &str = "DEPOSITKIT_PARTICLE_SIGNER_SEED";

/// The HKDF salt of the derivation; its `v1` changes if the derivation ever does.
pub const SEED_DERIVATION_SALT: &[u8] = b"depositkit/particle/owner-key/v1";

/// Shortest master seed accepted: 256 bits.
const MIN_SEED_BYTES: usize = 32;
/// Longest master seed accepted (a BIP-39 seed is 64 bytes).
const MAX_SEED_BYTES: usize = 128;

/// Per-owner keys from one master seed: every owner gets its own key, hence its own universal
/// account (one intermediary wallet per user, as in the original SDK), and any owner's key can
/// be derived again from the seed after a disaster. The seed is held in a zeroized buffer and
/// appears in no `Debug` output or error message; derived keys are [`KeySigner`]s.
#[derive(Clone)]
pub struct SeedSigner {
    seed: Arc<Zeroizing<Vec<u8>>>,
}

impl fmt::Debug for SeedSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeedSigner").field("seed", &"<redacted>").finish()
    }
}

impl SeedSigner {
    /// A master seed of 32 to 128 bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) for another length.
    pub fn from_bytes(seed: &[u8]) -> Result<SeedSigner> {
        if !(MIN_SEED_BYTES..=MAX_SEED_BYTES).contains(&seed.len()) {
            return Err(Error::configuration(format!(
                "the signer seed must be {MIN_SEED_BYTES} to {MAX_SEED_BYTES} bytes, not {}",
                seed.len()
            )));
        }
        Ok(SeedSigner { seed: Arc::new(Zeroizing::new(seed.to_vec())) })
    }

    /// The seed written in hex, `0x` optional, surrounding whitespace ignored.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when it is not hex or not
    /// 32 to 128 bytes; the message never shows the text.
    pub fn from_hex(text: &str) -> Result<SeedSigner> {
        SeedSigner::from_bytes(&decode_secret_hex("signer seed", text)?)
    }

    /// The seed in the environment variable `name` (hex).
    pub fn from_env(name: &str) -> Result<SeedSigner> {
        let text = read_secret_env(name)?;
        SeedSigner::from_hex(&text)
            .map_err(|e| Error::configuration(format!("{name}: {}", e.message())))
    }

    /// The seed in `DEPOSITKIT_PARTICLE_SIGNER_SEED`.
    pub fn from_default_env() -> Result<SeedSigner> {
        SeedSigner::from_env(SIGNER_SEED_ENV)
    }

    /// The key of `owner_address` (an EVM address, any letter case; mixed case must carry a
    /// valid checksum).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when it is not an EVM
    /// address.
    pub fn derive(&self, owner_address: &str) -> Result<KeySigner> {
        if let Some(problem) = evm_address_problem(owner_address) {
            return Err(Error::configuration(format!(
                "cannot derive a signer key for owner {}: {problem}",
                quote(owner_address)
            )));
        }
        let owner: Address = owner_address.parse().map_err(|_| {
            Error::configuration(format!("invalid owner address {}", quote(owner_address)))
        })?;
        let hkdf = Hkdf::<Sha256>::new(Some(SEED_DERIVATION_SALT), &self.seed);
        let mut info = [0u8; 21];
        info[..20].copy_from_slice(owner.as_slice());
        for counter in 0..=u8::MAX {
            info[20] = counter;
            let mut okm = Zeroizing::new([0u8; 32]);
            hkdf.expand(&info, okm.as_mut()).expect("32 bytes is a valid HKDF-SHA256 length");
            if let Ok(key) = SigningKey::from_slice(okm.as_ref()) {
                return Ok(KeySigner::from_signing_key(key));
            }
        }
        unreachable!("256 HKDF outputs in a row outside the secp256k1 order")
    }
}

impl SignerSource for SeedSigner {
    /// The derived key of `owner_address`.
    fn signer_for(&self, owner_address: &str) -> Result<Arc<dyn Signer>> {
        Ok(Arc::new(self.derive(owner_address)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use alloy_primitives::hex;

    const OWNER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";

    fn seed() -> SeedSigner {
        SeedSigner::from_bytes(&(0u8..32).collect::<Vec<_>>()).unwrap()
    }

    /// The vector was computed apart from this code, with Python's `hmac` and `hashlib`
    /// (RFC 5869 written out: `docs/particle.md` §4.2 has the snippet): seed 0x00..0x1f.
    #[test]
    fn the_derivation_is_stable_hkdf_sha256() {
        let expected = [
            (OWNER, "85b008ee24e4306336745a5266279934f5761a8c99ec4e390cc383cc313b13ea"),
            (
                "0x1111111111111111111111111111111111111111",
                "6564b62cd0e04397b7c12af5909d8d281d970b853bdaf3fa4b0a96b02317cf4c",
            ),
        ];
        for (owner, key) in expected {
            let derived = seed().derive(owner).unwrap();
            let direct = KeySigner::from_hex(key).unwrap();
            assert_eq!(derived.address(), direct.address(), "{owner}");
        }
    }

    #[test]
    fn owners_get_different_keys_and_letter_case_does_not_matter() {
        let seed = seed();
        let a = seed.derive(OWNER).unwrap();
        let checksummed = OWNER.parse::<Address>().unwrap().to_checksum(None);
        assert_eq!(a.address(), seed.derive(&checksummed).unwrap().address());
        assert_eq!(a.address(), seed.signer_for(OWNER).unwrap().address());
        let b = seed.derive("0x1111111111111111111111111111111111111111").unwrap();
        assert_ne!(a.address(), b.address());
        let other_seed = SeedSigner::from_bytes(&[9u8; 32]).unwrap();
        assert_ne!(a.address(), other_seed.derive(OWNER).unwrap().address());
    }

    #[test]
    fn bad_seeds_and_owners_are_configuration_errors_without_the_seed() {
        let short = "cd".repeat(31);
        for e in [
            SeedSigner::from_hex(&short).unwrap_err(),
            SeedSigner::from_bytes(&[1u8; 129]).unwrap_err(),
            SeedSigner::from_hex("not hex").unwrap_err(),
            seed().derive("0x1234").unwrap_err(),
            seed().derive("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin").unwrap_err(),
        ] {
            assert_eq!(e.kind(), ErrorKind::Configuration, "{e}");
            assert!(!e.message().contains("cdcd"), "{e}");
        }
        let text = format!("{:?}", SeedSigner::from_hex(&hex::encode([0x5au8; 32])).unwrap());
        assert!(!text.contains("5a5a"), "{text}");
    }
}
