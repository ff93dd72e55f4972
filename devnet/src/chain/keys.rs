//! The keys behind devnet's addresses (`docs/funding.md` §2): per account a secp256k1 key (its
//! EVM deposit address) and an ed25519 key (its Solana deposit address), derived from the
//! lower-case owner; and the vault's, derived the same way from the name `vault`.
//!
//! - EVM secret key: keccak256(`depositkit-devnet/ua/evm-key/` + owner)
//! - Solana secret seed: sha256(`depositkit-devnet/ua/solana-key/` + owner)
//!
//! The derivation is public on purpose: devnet is an emulator, never a custodian of real money,
//! and anyone (tests included) can recompute the addresses. An owner is always an EVM address,
//! so no owner is named `vault`.

use alloy_primitives::{Address, B256, keccak256};
use ed25519_dalek::Signer as _;
use k256::ecdsa::SigningKey;
use sha2::{Digest, Sha256};

/// The name the vault's keys are derived from.
pub const VAULT_NAME: &str = "vault";

/// A secp256k1 key and its EVM address. `Debug` shows only the address.
#[derive(Clone)]
pub struct EvmKey {
    key: SigningKey,
    address: Address,
}

impl std::fmt::Debug for EvmKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvmKey").field("address", &self.address).finish_non_exhaustive()
    }
}

impl EvmKey {
    /// The key whose secret is `seed`; should `seed` not be a valid secret (zero or above the
    /// curve order, a 2^-128 chance), keccak256 of it, and so on.
    pub fn from_seed(seed: B256) -> Self {
        let mut secret = seed;
        loop {
            if let Ok(key) = SigningKey::from_slice(secret.as_slice()) {
                let address = Address::from_private_key(&key);
                return EvmKey { key, address };
            }
            secret = keccak256(secret);
        }
    }

    /// The key of a `0x` + 64 hex digits secret (an anvil development account's).
    pub fn from_hex(secret: &str) -> Option<Self> {
        let secret: B256 = secret.trim().parse().ok()?;
        let key = SigningKey::from_slice(secret.as_slice()).ok()?;
        Some(EvmKey { address: Address::from_private_key(&key), key })
    }

    /// The address.
    pub fn address(&self) -> Address {
        self.address
    }

    /// Signs a 32-byte hash: `(r, s, y_parity)` with a low `s`.
    ///
    /// # Errors
    /// The signer's message (it does not fail for a valid key).
    pub fn sign_hash(&self, hash: B256) -> Result<(B256, B256, bool), String> {
        let (signature, recovery) =
            self.key.sign_prehash_recoverable(hash.as_slice()).map_err(|e| e.to_string())?;
        let (r, s) = signature.split_bytes();
        Ok((B256::from_slice(&r), B256::from_slice(&s), recovery.is_y_odd()))
    }
}

/// An ed25519 key and its Solana address. `Debug` shows only the address.
#[derive(Clone)]
pub struct SolanaKey {
    key: ed25519_dalek::SigningKey,
}

impl std::fmt::Debug for SolanaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolanaKey").field("address", &self.address()).finish_non_exhaustive()
    }
}

impl SolanaKey {
    /// The key of a 32-byte seed (every seed is a valid ed25519 secret).
    pub fn from_seed(seed: [u8; 32]) -> Self {
        SolanaKey { key: ed25519_dalek::SigningKey::from_bytes(&seed) }
    }

    /// The public key: the account's address bytes.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The base58 address.
    pub fn address(&self) -> String {
        bs58::encode(self.public_key()).into_string()
    }

    /// The 64-byte ed25519 signature of `message` (a serialized Solana message).
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }
}

/// The two keys of one owner (an account, or the vault).
#[derive(Debug, Clone)]
pub struct KeyPair {
    pub evm: EvmKey,
    pub solana: SolanaKey,
}

impl KeyPair {
    /// The keys of `owner` (trimmed and lower-cased first).
    pub fn of_owner(owner: &str) -> Self {
        let owner = owner.trim().to_ascii_lowercase();
        let evm = EvmKey::from_seed(keccak256(format!("depositkit-devnet/ua/evm-key/{owner}")));
        let seed: [u8; 32] =
            Sha256::digest(format!("depositkit-devnet/ua/solana-key/{owner}")).into();
        KeyPair { evm, solana: SolanaKey::from_seed(seed) }
    }

    /// The vault's keys: devnet's inventory and collection address on every chain.
    pub fn vault() -> Self {
        Self::of_owner(VAULT_NAME)
    }

    /// The EIP-55 EVM address.
    pub fn evm_address(&self) -> String {
        self.evm.address().to_checksum(None)
    }

    /// The base58 Solana address.
    pub fn solana_address(&self) -> String {
        self.solana.address()
    }
}

#[cfg(test)]
mod tests {
    use alloy_primitives::Signature;

    use super::*;

    #[test]
    fn derivation_is_stable_case_blind_and_signs() {
        let a = KeyPair::of_owner("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
        let b = KeyPair::of_owner(" 0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed ");
        assert_eq!(a.evm_address(), b.evm_address());
        assert_eq!(a.solana_address(), b.solana_address());
        let vault = KeyPair::vault();
        assert_ne!(vault.evm_address(), a.evm_address());
        assert!(!format!("{a:?}").contains("key:"));

        // The EVM address is the key's: a signature recovers to it.
        let hash = keccak256(b"message");
        let (r, s, odd) = a.evm.sign_hash(hash).unwrap();
        let signature = Signature::from_scalars_and_parity(r, s, odd);
        assert_eq!(signature.recover_address_from_prehash(&hash).unwrap(), a.evm.address());

        // The Solana address is the ed25519 public key: a signature verifies with it.
        let message = b"solana message";
        let sig = ed25519_dalek::Signature::from_bytes(&a.solana.sign(message));
        let public = ed25519_dalek::VerifyingKey::from_bytes(&a.solana.public_key()).unwrap();
        assert!(public.verify_strict(message, &sig).is_ok());
        assert_eq!(bs58::decode(a.solana_address()).into_vec().unwrap(), a.solana.public_key());
    }

    #[test]
    fn anvil_development_key() {
        let key =
            EvmKey::from_hex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
                .unwrap();
        assert_eq!(key.address().to_checksum(None), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
        assert!(EvmKey::from_hex("0x12").is_none());
    }
}
