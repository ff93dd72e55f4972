//! [`KeySigner`]: one secp256k1 key held in memory.

use std::fmt;
use std::sync::Arc;

use alloy_primitives::{Address, B256, hex};
use k256::ecdsa::SigningKey;
use zeroize::Zeroizing;

use super::{Signature65, Signer, SignerSource, address_of, join, personal_digest};
use crate::error::{Error, ErrorKind, Result};

/// The environment variable [`KeySigner::from_default_env`] reads: the key as 64 hex digits.
pub const SIGNER_KEY_ENV: &str = "DEPOSITKIT_PARTICLE_SIGNER_KEY";

/// A secp256k1 key given by the host. The key is zeroized when the last clone is dropped
/// (k256's `SigningKey` zeroizes its scalar on drop; every copy of the input made here is a
/// [`Zeroizing`] buffer), and it appears in no `Debug` output or error message.
///
/// One key is one universal account: every owner given this signer shares it. Give each
/// owner its own account with a [`SeedSigner`](super::SeedSigner).
#[derive(Clone)]
pub struct KeySigner {
    key: Arc<SigningKey>,
    address: Address,
}

impl fmt::Debug for KeySigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeySigner")
            .field("address", &self.address.to_checksum(None))
            .field("key", &"<redacted>")
            .finish()
    }
}

impl KeySigner {
    /// The key of the 32 big-endian bytes `secret`.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when `secret` is not 32 bytes, or is zero or not below the
    /// curve order. The message never shows the bytes.
    pub fn from_bytes(secret: &[u8]) -> Result<KeySigner> {
        if secret.len() != 32 {
            return Err(Error::configuration(format!(
                "the signer key must be 32 bytes, not {}",
                secret.len()
            )));
        }
        let key = SigningKey::from_slice(secret).map_err(|_| {
            Error::configuration("the signer key is not a valid secp256k1 secret key (zero or not below the curve order)")
        })?;
        Ok(KeySigner::from_signing_key(key))
    }

    /// The key written as 64 hex digits, with or without `0x`, surrounding whitespace ignored.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when the text is not 64 hex digits or not a valid key; the
    /// message gives the text's length, never the text.
    pub fn from_hex(text: &str) -> Result<KeySigner> {
        let secret = decode_secret_hex("signer key", text)?;
        KeySigner::from_bytes(&secret)
    }

    /// The key in the environment variable `name` (hex, as [`KeySigner::from_hex`]).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when it is unset, not Unicode or not a valid key.
    pub fn from_env(name: &str) -> Result<KeySigner> {
        let text = read_secret_env(name)?;
        KeySigner::from_hex(&text)
            .map_err(|e| Error::configuration(format!("{name}: {}", e.message())))
    }

    /// The key in `DEPOSITKIT_PARTICLE_SIGNER_KEY`.
    pub fn from_default_env() -> Result<KeySigner> {
        KeySigner::from_env(SIGNER_KEY_ENV)
    }

    pub(super) fn from_signing_key(key: SigningKey) -> KeySigner {
        let address = address_of(key.verifying_key());
        KeySigner { key: Arc::new(key), address }
    }
}

impl Signer for KeySigner {
    fn address(&self) -> Address {
        self.address
    }

    fn personal_sign(&self, message: &B256) -> Result<Signature65> {
        let digest = personal_digest(message);
        let (signature, recovery) =
            self.key.sign_prehash_recoverable(digest.as_slice()).map_err(|e| {
                Error::new(ErrorKind::Internal, format!("signing with the key failed: {e}"))
            })?;
        Ok(join(&signature, recovery))
    }
}

impl SignerSource for KeySigner {
    /// This key, whatever the owner.
    fn signer_for(&self, _owner_address: &str) -> Result<Arc<dyn Signer>> {
        Ok(Arc::new(self.clone()))
    }
}

/// `text` (hex, `0x` optional, whitespace around ignored) as bytes in a zeroized buffer. The
/// error names `what` and the length, never the text.
pub(super) fn decode_secret_hex(what: &str, text: &str) -> Result<Zeroizing<Vec<u8>>> {
    let trimmed = text.trim();
    let digits =
        trimmed.strip_prefix("0x").or_else(|| trimmed.strip_prefix("0X")).unwrap_or(trimmed);
    if digits.is_empty()
        || !digits.len().is_multiple_of(2)
        || !digits.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err(Error::configuration(format!(
            "the {what} must be hex digits (an even number, 0x optional); the text given has {} characters",
            trimmed.chars().count()
        )));
    }
    let mut out = Zeroizing::new(vec![0u8; digits.len() / 2]);
    hex::decode_to_slice(digits, &mut out)
        .map_err(|_| Error::configuration(format!("the {what} is not valid hex")))?;
    Ok(out)
}

/// The environment variable `name` in a zeroized buffer.
pub(super) fn read_secret_env(name: &str) -> Result<Zeroizing<String>> {
    match std::env::var(name) {
        Ok(value) => Ok(Zeroizing::new(value)),
        Err(std::env::VarError::NotPresent) => {
            Err(Error::configuration(format!("the environment variable {name} is not set")))
        }
        Err(std::env::VarError::NotUnicode(_)) => Err(Error::configuration(format!(
            "the environment variable {name} is not valid Unicode"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signer::tests::{ANVIL_ADDRESS, ANVIL_KEY};

    #[test]
    fn keys_from_bytes_hex_and_text_with_0x() {
        let bytes = hex::decode(ANVIL_KEY).unwrap();
        for signer in [
            KeySigner::from_bytes(&bytes).unwrap(),
            KeySigner::from_hex(ANVIL_KEY).unwrap(),
            KeySigner::from_hex(&format!("  0x{ANVIL_KEY}\n")).unwrap(),
            KeySigner::from_hex(&ANVIL_KEY.to_uppercase()).unwrap(),
        ] {
            assert_eq!(signer.address().to_checksum(None), ANVIL_ADDRESS);
        }
    }

    #[test]
    fn bad_keys_are_configuration_errors_that_never_show_the_key() {
        let secret = "ab".repeat(31); // 31 bytes
        let cases = [
            KeySigner::from_hex(&secret).unwrap_err(),
            KeySigner::from_hex(&format!("{ANVIL_KEY}zz")).unwrap_err(),
            KeySigner::from_hex(&format!("{ANVIL_KEY}0")).unwrap_err(),
            KeySigner::from_hex("").unwrap_err(),
            KeySigner::from_bytes(&[0u8; 32]).unwrap_err(),
            KeySigner::from_bytes(&[0xff; 32]).unwrap_err(),
            KeySigner::from_env("DEPOSITKIT_TEST_SURELY_UNSET_VARIABLE").unwrap_err(),
        ];
        for e in cases {
            assert_eq!(e.kind(), ErrorKind::Configuration, "{e}");
            assert!(!e.message().contains("abab"), "{e}");
            assert!(!e.message().contains(&ANVIL_KEY[..16]), "{e}");
        }
    }

    #[test]
    fn debug_shows_the_address_and_not_the_key() {
        let signer = KeySigner::from_hex(ANVIL_KEY).unwrap();
        let text = format!("{signer:?} {signer:#?}");
        assert!(text.contains(ANVIL_ADDRESS), "{text}");
        assert!(text.contains("<redacted>"), "{text}");
        assert!(!text.to_lowercase().contains(&ANVIL_KEY[..8]), "{text}");
    }

    #[test]
    fn one_key_signs_for_every_owner() {
        let signer = KeySigner::from_hex(ANVIL_KEY).unwrap();
        let a = signer.signer_for("0x52908400098527886e0f7030069857d2e4169ee7").unwrap();
        let b = signer.signer_for("anything").unwrap();
        assert_eq!(a.address(), b.address());
    }
}
