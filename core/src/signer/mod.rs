//! Server-side signers: who signs for an owner's universal account when there is no browser
//! wallet (`docs/particle.md` §4).
//!
//! The account's owner signs one thing: the 32-byte root hash of a transaction's user
//! operations (`services::particle::root`), with EIP-191 `personal_sign` over the **raw 32
//! bytes** — `keccak256("\x19Ethereum Signed Message:\n32" ‖ root)` — exactly what Particle's
//! public examples do (ethers `signMessage(getBytes(rootHash))`, viem
//! `signMessage({message: {raw: rootHash}})`). The signature is 65 bytes `r ‖ s ‖ v` with
//! `v` 27 or 28 and a low `s`, as those libraries produce.
//!
//! Three ways to hold the key, each a [`Signer`]:
//! - [`KeySigner`]: one secp256k1 key given by the host (bytes, hex or an environment
//!   variable), zeroized when dropped, never printed;
//! - [`SeedSigner`]: one key per owner, derived from a master seed and the owner's address by
//!   HKDF-SHA256 (the derivation is in `seed.rs` and `docs/particle.md`), so each owner has its
//!   own universal account and every key can be derived again from the seed;
//! - [`CallbackSigner`]: a host function (a KMS, an HSM) that signs; its answers are checked
//!   against the signer's address before they are used.
//!
//! A [`SignerSource`] gives the signer of an owner: a [`SeedSigner`] derives it, the other two
//! are the same signer for every owner.

mod callback;
mod key;
mod seed;

use std::fmt;
use std::sync::Arc;

use alloy_primitives::{Address, B256, keccak256};
use k256::ecdsa::{RecoveryId, Signature as EcdsaSignature, VerifyingKey};

use crate::error::{Error, ErrorKind, Result};

pub use callback::{CallbackInput, CallbackSigner, SignCallback};
pub use key::{KeySigner, SIGNER_KEY_ENV};
pub use seed::{SEED_DERIVATION_SALT, SIGNER_SEED_ENV, SeedSigner};

/// A secp256k1 signature: `r ‖ s ‖ v`, `v` 27 or 28.
pub type Signature65 = [u8; 65];

/// Who signs for a universal account: its owner's key, wherever it is kept.
pub trait Signer: Send + Sync + fmt::Debug {
    /// The key's address: the universal account's `ownerAddress`.
    fn address(&self) -> Address;

    /// The EIP-191 `personal_sign` signature of the 32 raw bytes `message` (a root hash): the
    /// key's signature of [`personal_digest`]`(message)`, `v` 27 or 28, `s` low.
    ///
    /// # Errors
    /// The signer failed (a host callback's error, a signature from another key:
    /// [`ErrorKind::Authentication`]).
    fn personal_sign(&self, message: &B256) -> Result<Signature65>;
}

/// Where a client finds the signer of an owner's account.
pub trait SignerSource: Send + Sync + fmt::Debug {
    /// The signer of `owner_address`'s universal account.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when `owner_address` is not an EVM address (a
    /// [`SeedSigner`] derives from it).
    fn signer_for(&self, owner_address: &str) -> Result<Arc<dyn Signer>>;
}

/// `keccak256("\x19Ethereum Signed Message:\n32" ‖ message)`: what EIP-191 `personal_sign`
/// signs for a 32-byte message.
pub fn personal_digest(message: &B256) -> B256 {
    let mut prefixed = Vec::with_capacity(28 + 32);
    prefixed.extend_from_slice(b"\x19Ethereum Signed Message:\n32");
    prefixed.extend_from_slice(message.as_slice());
    keccak256(prefixed)
}

/// The address whose key made `signature` over `digest`.
///
/// # Errors
/// [`ErrorKind::Authentication`] when `signature` is not a valid recoverable signature
/// (`v` other than 0, 1, 27 or 28; `r` or `s` zero or out of range).
pub fn recover_address(digest: &B256, signature: &Signature65) -> Result<Address> {
    let (ecdsa, recovery) = split(signature)?;
    let key = VerifyingKey::recover_from_prehash(digest.as_slice(), &ecdsa, recovery)
        .map_err(|_| invalid_signature("no public key recovers from it"))?;
    Ok(address_of(&key))
}

/// `signature` in the canonical form (`v` 27 or 28, `s` in the lower half of the curve order),
/// checked to be `signer`'s over `digest`.
///
/// # Errors
/// [`ErrorKind::Authentication`] when it is malformed or another key made it.
pub fn check_signature(
    signer: Address,
    digest: &B256,
    signature: &Signature65,
) -> Result<Signature65> {
    let (ecdsa, recovery) = split(signature)?;
    let (ecdsa, recovery) = match ecdsa.normalize_s() {
        Some(low) => (low, RecoveryId::new(!recovery.is_y_odd(), recovery.is_x_reduced())),
        None => (ecdsa, recovery),
    };
    let canonical = join(&ecdsa, recovery);
    let recovered = recover_address(digest, &canonical)?;
    if recovered != signer {
        return Err(Error::new(
            ErrorKind::Authentication,
            format!(
                "the signature is from {}, not from the account's owner {}",
                recovered.to_checksum(None),
                signer.to_checksum(None)
            ),
        ));
    }
    Ok(canonical)
}

/// The address of a public key: the last 20 bytes of keccak256 of its uncompressed point.
pub(crate) fn address_of(key: &VerifyingKey) -> Address {
    let point = key.to_encoded_point(false);
    Address::from_raw_public_key(&point.as_bytes()[1..])
}

/// `r ‖ s ‖ (27 + recovery id)`.
pub(crate) fn join(signature: &EcdsaSignature, recovery: RecoveryId) -> Signature65 {
    let mut out = [0u8; 65];
    out[..64].copy_from_slice(&signature.to_bytes());
    out[64] = 27 + recovery.to_byte();
    out
}

fn split(signature: &Signature65) -> Result<(EcdsaSignature, RecoveryId)> {
    let v = match signature[64] {
        v @ (0 | 1) => v,
        v @ (27 | 28) => v - 27,
        v => return Err(invalid_signature(&format!("v is {v}, expected 27 or 28 (or 0 or 1)"))),
    };
    let ecdsa = EcdsaSignature::from_slice(&signature[..64])
        .map_err(|_| invalid_signature("r or s is zero or not below the curve order"))?;
    let recovery = RecoveryId::from_byte(v).expect("0 or 1");
    Ok((ecdsa, recovery))
}

fn invalid_signature(why: &str) -> Error {
    Error::new(ErrorKind::Authentication, format!("invalid signature: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{b256, hex};

    /// The well-known first key of the `test test … junk` mnemonic (anvil's account 0).
    pub(crate) const ANVIL_KEY: &str =
        "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    pub(crate) const ANVIL_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

    #[test]
    fn the_personal_digest_is_eip_191_over_the_raw_32_bytes() {
        let root = b256!("8069143401a704a34e41e4f1472f65f851b409b85020f7553010c0e92c44a4dd");
        let mut text = b"\x19Ethereum Signed Message:\n32".to_vec();
        text.extend_from_slice(root.as_slice());
        assert_eq!(personal_digest(&root), keccak256(&text));
        // Not the hex string signed as text (66 characters).
        let as_text = format!("\x19Ethereum Signed Message:\n66{root}");
        assert_ne!(personal_digest(&root), keccak256(as_text.as_bytes()));
    }

    #[test]
    fn a_signature_is_checked_and_made_canonical() {
        let signer = KeySigner::from_hex(ANVIL_KEY).unwrap();
        assert_eq!(signer.address().to_checksum(None), ANVIL_ADDRESS);
        let root = B256::repeat_byte(0x42);
        let signature = signer.personal_sign(&root).unwrap();
        assert!(matches!(signature[64], 27 | 28));
        let digest = personal_digest(&root);
        assert_eq!(check_signature(signer.address(), &digest, &signature).unwrap(), signature);
        // v as 0/1 is accepted and put back as 27/28.
        let mut zero_one = signature;
        zero_one[64] -= 27;
        assert_eq!(check_signature(signer.address(), &digest, &zero_one).unwrap(), signature);
        // A high s (the same signature mirrored) is put back low, v flipped.
        let (ecdsa, recovery) = split(&signature).unwrap();
        let n_minus_s = -*ecdsa.s();
        let high =
            EcdsaSignature::from_scalars(ecdsa.r().to_bytes(), n_minus_s.to_bytes()).unwrap();
        let high = join(&high, RecoveryId::new(!recovery.is_y_odd(), false));
        assert_ne!(high, signature);
        assert_eq!(check_signature(signer.address(), &digest, &high).unwrap(), signature);
        // Another key's signature, another digest, a bad v: refused.
        let other = Address::repeat_byte(7);
        let e = check_signature(other, &digest, &signature).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication);
        assert!(e.message().contains(ANVIL_ADDRESS), "{e}");
        let e = check_signature(signer.address(), &B256::ZERO, &signature).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication);
        let mut bad_v = signature;
        bad_v[64] = 29;
        assert!(
            check_signature(signer.address(), &digest, &bad_v)
                .unwrap_err()
                .message()
                .contains("v is 29")
        );
        assert!(recover_address(&digest, &[0u8; 65]).is_err());
    }

    /// RFC 6979: the same key and root always give the same bytes (that they are viem's bytes is
    /// checked against the SDK fixture in `core/tests/particle_rpc.rs`).
    #[test]
    fn signatures_are_deterministic_rfc_6979() {
        let signer = KeySigner::from_hex(ANVIL_KEY).unwrap();
        let root = B256::repeat_byte(0x42);
        let first = signer.personal_sign(&root).unwrap();
        assert_eq!(first, signer.personal_sign(&root).unwrap());
        assert_eq!(
            recover_address(&personal_digest(&root), &first).unwrap(),
            signer.address(),
            "{}",
            hex::encode(first)
        );
    }
}
