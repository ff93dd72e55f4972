//! Addresses, blockhashes and signatures (32 and 64 bytes, base58), and the ids of the programs
//! depositkit calls.

use std::fmt;
use std::str::FromStr;

use curve25519_dalek::edwards::CompressedEdwardsY;

use crate::describe::quote;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Error, Result};

macro_rules! base58_bytes {
    ($(#[$meta:meta])* $name:ident, $len:literal, $what:literal) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub(super) [u8; $len]);

        impl $name {
            /// From raw bytes.
            pub const fn new_from_array(bytes: [u8; $len]) -> Self {
                $name(bytes)
            }

            /// From a byte slice of exactly the right length.
            ///
            /// # Errors
            /// [`ErrorKind::InvalidArgument`] for any other length.
            pub fn try_from_slice(bytes: &[u8]) -> Result<Self> {
                let array: [u8; $len] = bytes.try_into().map_err(|_| {
                    Error::invalid_argument(format!(
                        "{} must be {} bytes, got {}",
                        $what,
                        $len,
                        bytes.len()
                    ))
                })?;
                Ok($name(array))
            }

            /// The raw bytes.
            pub const fn to_bytes(&self) -> [u8; $len] {
                self.0
            }

            /// The raw bytes, borrowed.
            pub const fn as_bytes(&self) -> &[u8; $len] {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = Error;

            /// Parses base58.
            fn from_str(text: &str) -> Result<Self> {
                let bytes = bs58::decode(text).into_vec().map_err(|_| {
                    Error::invalid_argument(format!("{} is not base58: {}", $what, quote(text)))
                })?;
                let array: [u8; $len] = bytes.as_slice().try_into().map_err(|_| {
                    Error::invalid_argument(format!(
                        "{} must be {} bytes, {} decodes to {}",
                        $what,
                        $len,
                        quote(text),
                        bytes.len()
                    ))
                })?;
                Ok($name(array))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&bs58::encode(self.0).into_string())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({self})", stringify!($name))
            }
        }
    };
}

base58_bytes!(
    /// A Solana account address: 32 bytes, shown and parsed as base58.
    Pubkey, 32, "a Solana public key"
);
base58_bytes!(
    /// A blockhash: 32 bytes, base58.
    Hash, 32, "a Solana blockhash"
);
base58_bytes!(
    /// An ed25519 signature: 64 bytes, base58. A transaction's first signature is its id.
    Signature, 64, "a Solana signature"
);

impl Pubkey {
    /// Whether the key is a point on the ed25519 curve. Program-derived addresses are exactly
    /// the keys that are not, so that no private key can sign for them.
    pub fn is_on_curve(&self) -> bool {
        CompressedEdwardsY(self.0).decompress().is_some()
    }
}

impl Signature {
    /// The all-zero placeholder of a signature not made yet.
    pub const EMPTY: Signature = Signature([0; 64]);
}

const fn pubkey(base58: &str) -> Pubkey {
    Pubkey(bs58::decode(base58.as_bytes()).into_array_const_unwrap())
}

/// The system program (`11111111111111111111111111111111`).
pub const SYSTEM_PROGRAM: Pubkey = Pubkey([0; 32]);
/// The SPL Token program (`TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA`).
pub const TOKEN_PROGRAM: Pubkey = pubkey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
/// The associated token account program (`ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL`).
pub const ASSOCIATED_TOKEN_PROGRAM: Pubkey = pubkey("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");

/// The size of an SPL Token account, for its rent-exempt minimum.
pub const TOKEN_ACCOUNT_LEN: usize = 165;
