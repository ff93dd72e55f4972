//! The chains depositkit knows (spec §4 `CHAIN`) and what each one allows.

use serde::{Deserialize, Serialize};

/// The kind of address a chain uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressType {
    /// `0x` + 40 hex digits.
    Evm,
    /// Base58 of a 32-byte public key.
    Solana,
}

impl AddressType {
    /// `"evm"` or `"solana"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            AddressType::Evm => "evm",
            AddressType::Solana => "solana",
        }
    }
}

macro_rules! chains {
    ($($variant:ident = $id:literal, $name:literal;)*) => {
        /// One of the 17 chains of the spec's `CHAIN` table. The discriminant is the chain id.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u64)]
        pub enum Chain {
            $(
                #[doc = $name]
                $variant = $id,
            )*
        }

        impl Chain {
            /// Every chain, in the order of the spec's table.
            pub const ALL: [Chain; 17] = [$(Chain::$variant),*];

            /// The chain with this id, if depositkit knows it.
            pub const fn from_id(id: u64) -> Option<Chain> {
                match id {
                    $($id => Some(Chain::$variant),)*
                    _ => None,
                }
            }

            /// The human name (`"Ethereum"`, `"BNB Chain"`, …).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Chain::$variant => $name,)*
                }
            }

            /// The constant's name in the spec's table (`"ETHEREUM"`, `"BNB"`, …).
            pub const fn constant_name(self) -> &'static str {
                match self {
                    $(Chain::$variant => stringify!($variant),)*
                }
            }
        }
    };
}

chains! {
    ETHEREUM = 1, "Ethereum";
    OPTIMISM = 10, "OP (Optimism)";
    BNB = 56, "BNB Chain";
    POLYGON = 137, "Polygon";
    MONAD = 143, "Monad";
    SONIC = 146, "Sonic";
    XLAYER = 196, "X Layer";
    HYPERVM = 999, "HyperEVM";
    MERLIN = 4200, "Merlin";
    MANTLE = 5000, "Mantle";
    BASE = 8453, "Base";
    ARBITRUM = 42161, "Arbitrum";
    AVALANCHE = 43114, "Avalanche";
    LINEA = 59144, "Linea";
    PLASMA = 9745, "Plasma";
    BERACHAIN = 80094, "Berachain";
    SOLANA = 101, "Solana";
}

impl Chain {
    /// The chain id.
    pub const fn id(self) -> u64 {
        self as u64
    }

    /// Solana for [`Chain::SOLANA`], EVM for every other chain.
    pub const fn address_type(self) -> AddressType {
        match self {
            Chain::SOLANA => AddressType::Solana,
            _ => AddressType::Evm,
        }
    }

    /// Whether deposits can be delivered to this chain: the columns of the spec's destination
    /// matrix (Ethereum, Base, Arbitrum, BNB Chain, Solana). X Layer is a source only.
    pub const fn is_destination(self) -> bool {
        matches!(self, Chain::ETHEREUM | Chain::BASE | Chain::ARBITRUM | Chain::BNB | Chain::SOLANA)
    }

    /// Whether the fiat onramp serves this chain (Ethereum, BNB Chain, Base, Arbitrum, Solana).
    pub const fn is_onramp_chain(self) -> bool {
        matches!(self, Chain::ETHEREUM | Chain::BNB | Chain::BASE | Chain::ARBITRUM | Chain::SOLANA)
    }
}

/// The human name of a chain id; `"Unknown Chain (<id>)"` for an id depositkit does not know.
pub fn get_chain_name(chain_id: u64) -> String {
    match Chain::from_id(chain_id) {
        Some(chain) => chain.name().to_owned(),
        None => format!("Unknown Chain ({chain_id})"),
    }
}

/// Whether `chain_id` can be a sweep destination (spec §4, destination rules).
pub fn is_valid_destination_chain(chain_id: u64) -> bool {
    Chain::from_id(chain_id).is_some_and(Chain::is_destination)
}

/// The address type of a chain id: Solana for Solana's id, EVM for anything else (spec §4).
pub fn get_address_type(chain_id: u64) -> AddressType {
    match Chain::from_id(chain_id) {
        Some(chain) => chain.address_type(),
        None => AddressType::Evm,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_the_seventeen_ids_of_the_spec() {
        let ids: Vec<u64> = Chain::ALL.iter().map(|c| c.id()).collect();
        assert_eq!(
            ids,
            [
                1, 10, 56, 137, 143, 146, 196, 999, 4200, 5000, 8453, 42161, 43114, 59144, 9745,
                80094, 101
            ]
        );
        for chain in Chain::ALL {
            assert_eq!(Chain::from_id(chain.id()), Some(chain));
        }
        assert_eq!(Chain::from_id(2), None);
    }

    #[test]
    fn names_and_unknown_ids() {
        assert_eq!(get_chain_name(8453), "Base");
        assert_eq!(get_chain_name(56), "BNB Chain");
        assert_eq!(get_chain_name(7), "Unknown Chain (7)");
        assert_eq!(Chain::XLAYER.constant_name(), "XLAYER");
    }

    #[test]
    fn destinations_are_the_five_matrix_columns() {
        let dest: Vec<u64> =
            Chain::ALL.iter().filter(|c| c.is_destination()).map(|c| c.id()).collect();
        assert_eq!(dest, [1, 56, 8453, 42161, 101]);
        assert!(!is_valid_destination_chain(196), "X Layer is never a destination");
        assert!(!is_valid_destination_chain(0));
    }

    #[test]
    fn address_types() {
        assert_eq!(get_address_type(101), AddressType::Solana);
        assert_eq!(get_address_type(1), AddressType::Evm);
        assert_eq!(get_address_type(123_456), AddressType::Evm);
    }
}
