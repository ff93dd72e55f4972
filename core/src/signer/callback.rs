//! [`CallbackSigner`]: the host signs (a KMS, an HSM, a wallet service).

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use alloy_primitives::{Address, B256};

use super::{Signature65, Signer, SignerSource, check_signature, personal_digest};
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::validate::evm_address_problem;

/// The host's signing function: 32 bytes in (see [`CallbackInput`]), 65 bytes `r ‖ s ‖ v`
/// out (`v` 27/28 or 0/1; a high `s` is accepted and made low). It may block (a network call
/// to a KMS): depositkit calls it off its async workers.
pub type SignCallback = dyn Fn(&[u8; 32]) -> Result<[u8; 65]> + Send + Sync;

/// What the callback is given to sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackInput {
    /// The EIP-191 digest, `keccak256("\x19Ethereum Signed Message:\n32" ‖ root)`, to be
    /// signed as it is (a KMS or HSM "sign digest" call: AWS KMS `MessageType=DIGEST`, a
    /// PKCS#11 `CKM_ECDSA` over the 32 bytes).
    Digest,
    /// The 32-byte root hash itself, for a signer that applies `personal_sign` on its own
    /// (ethers `signMessage(bytes)`, `eth_sign`/`personal_sign` of a wallet service).
    Message,
}

/// A signer whose key the host keeps. Every signature it returns is checked: it must recover
/// to [`Signer::address`] over the digest, else the call fails with
/// [`ErrorKind::Authentication`] and nothing is sent with it. A panic in the callback is an
/// [`ErrorKind::Internal`] error.
#[derive(Clone)]
pub struct CallbackSigner {
    address: Address,
    input: CallbackInput,
    callback: Arc<SignCallback>,
}

impl fmt::Debug for CallbackSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallbackSigner")
            .field("address", &self.address.to_checksum(None))
            .field("input", &self.input)
            .finish_non_exhaustive()
    }
}

impl CallbackSigner {
    /// A signer for the key of `address` whose `callback` gets what `input` says.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when `address` is not an EVM address.
    pub fn new(
        address: &str,
        input: CallbackInput,
        callback: impl Fn(&[u8; 32]) -> Result<[u8; 65]> + Send + Sync + 'static,
    ) -> Result<CallbackSigner> {
        if let Some(problem) = evm_address_problem(address) {
            return Err(Error::configuration(format!(
                "invalid signer address {}: {problem}",
                quote(address)
            )));
        }
        let address = address.parse().map_err(|_| {
            Error::configuration(format!("invalid signer address {}", quote(address)))
        })?;
        Ok(CallbackSigner { address, input, callback: Arc::new(callback) })
    }

    /// What the callback is given.
    pub fn input(&self) -> CallbackInput {
        self.input
    }
}

impl Signer for CallbackSigner {
    fn address(&self) -> Address {
        self.address
    }

    fn personal_sign(&self, message: &B256) -> Result<Signature65> {
        let digest = personal_digest(message);
        let given = match self.input {
            CallbackInput::Digest => digest,
            CallbackInput::Message => *message,
        };
        let signature = catch_unwind(AssertUnwindSafe(|| (self.callback)(&given.0)))
            .map_err(|_| Error::new(ErrorKind::Internal, "the signer callback panicked"))??;
        check_signature(self.address, &digest, &signature).map_err(|e| {
            Error::new(
                e.kind(),
                format!("the signer callback's answer was refused: {}", e.message()),
            )
        })
    }
}

impl SignerSource for CallbackSigner {
    /// This signer, whatever the owner.
    fn signer_for(&self, _owner_address: &str) -> Result<Arc<dyn Signer>> {
        Ok(Arc::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signer::KeySigner;
    use crate::signer::tests::{ANVIL_ADDRESS, ANVIL_KEY};
    use k256::ecdsa::SigningKey;

    fn raw_key() -> SigningKey {
        SigningKey::from_slice(&alloy_primitives::hex::decode(ANVIL_KEY).unwrap()).unwrap()
    }

    /// A KMS-like callback: signs the 32 bytes it is given, answers v as 0/1.
    fn kms(input: CallbackInput) -> CallbackSigner {
        let key = raw_key();
        CallbackSigner::new(ANVIL_ADDRESS, input, move |bytes| {
            let (sig, recovery) = key.sign_prehash_recoverable(bytes).unwrap();
            let mut out = [0u8; 65];
            out[..64].copy_from_slice(&sig.to_bytes());
            out[64] = recovery.to_byte();
            Ok(out)
        })
        .unwrap()
    }

    #[test]
    fn a_digest_callback_signs_like_the_key_itself() {
        let root = B256::repeat_byte(0xa1);
        let expected = KeySigner::from_hex(ANVIL_KEY).unwrap().personal_sign(&root).unwrap();
        assert_eq!(kms(CallbackInput::Digest).personal_sign(&root).unwrap(), expected);
    }

    #[test]
    fn a_message_callback_gets_the_root_and_must_apply_personal_sign_itself() {
        let root = B256::repeat_byte(0xa1);
        // Given the root, a signer that hashes with the EIP-191 prefix is right…
        let key = raw_key();
        let wallet = CallbackSigner::new(ANVIL_ADDRESS, CallbackInput::Message, move |bytes| {
            let digest = personal_digest(&B256::from(*bytes));
            let (sig, recovery) = key.sign_prehash_recoverable(digest.as_slice()).unwrap();
            Ok(crate::signer::join(&sig, recovery))
        })
        .unwrap();
        let expected = KeySigner::from_hex(ANVIL_KEY).unwrap().personal_sign(&root).unwrap();
        assert_eq!(wallet.personal_sign(&root).unwrap(), expected);
        // …and one that signs the root raw is caught: its signature recovers to another key.
        let e = kms(CallbackInput::Message).personal_sign(&root).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Authentication, "{e}");
        assert!(e.message().contains("refused"), "{e}");
    }

    #[test]
    fn wrong_keys_errors_and_panics_are_typed() {
        let root = B256::repeat_byte(1);
        let other = KeySigner::from_bytes(&[7u8; 32]).unwrap();
        let wrong = CallbackSigner::new(ANVIL_ADDRESS, CallbackInput::Message, move |bytes| {
            other.personal_sign(&B256::from(*bytes))
        })
        .unwrap();
        assert_eq!(wrong.personal_sign(&root).unwrap_err().kind(), ErrorKind::Authentication);
        let failing = CallbackSigner::new(ANVIL_ADDRESS, CallbackInput::Digest, |_| {
            Err(Error::new(ErrorKind::Network, "the KMS is unreachable"))
        })
        .unwrap();
        let e = failing.personal_sign(&root).unwrap_err();
        assert_eq!((e.kind(), e.message()), (ErrorKind::Network, "the KMS is unreachable"));
        let panicking =
            CallbackSigner::new(ANVIL_ADDRESS, CallbackInput::Digest, |_| panic!("boom")).unwrap();
        assert_eq!(panicking.personal_sign(&root).unwrap_err().kind(), ErrorKind::Internal);
        let garbage =
            CallbackSigner::new(ANVIL_ADDRESS, CallbackInput::Digest, |_| Ok([0u8; 65])).unwrap();
        assert_eq!(garbage.personal_sign(&root).unwrap_err().kind(), ErrorKind::Authentication);
        assert_eq!(
            CallbackSigner::new("0x12", CallbackInput::Digest, |_| Ok([0u8; 65]))
                .unwrap_err()
                .kind(),
            ErrorKind::Configuration
        );
    }
}
