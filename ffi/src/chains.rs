//! Chains: ids, names, destinations and address types (spec §4).

use std::ffi::c_char;

use depositkit_core::{AddressType, Chain};

use crate::boundary::{self, FfiResult};
use crate::status::depositkit_status;
use crate::strings;

/// The chains depositkit knows. The value of each constant is the chain id, so it can be passed
/// wherever a `uint64_t chain_id` is taken; ids outside this list are accepted too and treated
/// as unknown chains.
#[allow(non_camel_case_types)]
#[repr(u64)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum depositkit_chain {
    /// Ethereum.
    Ethereum = 1,
    /// OP (Optimism).
    Optimism = 10,
    /// BNB Chain.
    Bnb = 56,
    /// Polygon.
    Polygon = 137,
    /// Monad.
    Monad = 143,
    /// Sonic.
    Sonic = 146,
    /// X Layer (a source chain only, never a destination).
    Xlayer = 196,
    /// HyperEVM.
    Hypervm = 999,
    /// Merlin.
    Merlin = 4200,
    /// Mantle.
    Mantle = 5000,
    /// Base.
    Base = 8453,
    /// Arbitrum.
    Arbitrum = 42161,
    /// Avalanche.
    Avalanche = 43114,
    /// Linea.
    Linea = 59144,
    /// Plasma.
    Plasma = 9745,
    /// Berachain.
    Berachain = 80094,
    /// Solana (the only chain with Solana addresses).
    Solana = 101,
}

impl From<Chain> for depositkit_chain {
    /// Exhaustive on purpose: a chain added to the core does not compile here until it gets
    /// its constant.
    fn from(chain: Chain) -> Self {
        match chain {
            Chain::ETHEREUM => depositkit_chain::Ethereum,
            Chain::OPTIMISM => depositkit_chain::Optimism,
            Chain::BNB => depositkit_chain::Bnb,
            Chain::POLYGON => depositkit_chain::Polygon,
            Chain::MONAD => depositkit_chain::Monad,
            Chain::SONIC => depositkit_chain::Sonic,
            Chain::XLAYER => depositkit_chain::Xlayer,
            Chain::HYPERVM => depositkit_chain::Hypervm,
            Chain::MERLIN => depositkit_chain::Merlin,
            Chain::MANTLE => depositkit_chain::Mantle,
            Chain::BASE => depositkit_chain::Base,
            Chain::ARBITRUM => depositkit_chain::Arbitrum,
            Chain::AVALANCHE => depositkit_chain::Avalanche,
            Chain::LINEA => depositkit_chain::Linea,
            Chain::PLASMA => depositkit_chain::Plasma,
            Chain::BERACHAIN => depositkit_chain::Berachain,
            Chain::SOLANA => depositkit_chain::Solana,
        }
    }
}

/// The kind of address a chain uses.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum depositkit_address_type {
    /// `0x` followed by 40 hex digits, with an EIP-55 checksum when mixed-case.
    Evm = 0,
    /// Base58 text of a 32-byte public key.
    Solana = 1,
}

impl From<AddressType> for depositkit_address_type {
    fn from(t: AddressType) -> Self {
        match t {
            AddressType::Evm => depositkit_address_type::Evm,
            AddressType::Solana => depositkit_address_type::Solana,
        }
    }
}

/// The human name of a chain: `"Ethereum"`, `"BNB Chain"`, `"X Layer"`, ... For an id depositkit
/// does not know, `"Unknown Chain (<id>)"`, e.g. `"Unknown Chain (7)"`; that is still a success.
///
/// On success `*out_name` is a new string owned by the caller: free it with
/// `depositkit_string_free`. On failure `*out_name` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `out_name` is NULL.
///
/// # Safety
/// `out_name` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_get_chain_name(
    chain_id: u64,
    out_name: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| -> FfiResult<()> {
        // SAFETY: the caller's contract above.
        let out_name = unsafe { boundary::out(out_name, "out_name") }?;
        out_name.write(strings::owned(depositkit_core::get_chain_name(chain_id))?);
        Ok(())
    })
}

/// Whether deposits can be delivered to `chain_id`: true for Ethereum, Base, Arbitrum, BNB Chain
/// and Solana; false for every other chain (X Layer is a source only) and for unknown ids.
///
/// Never fails and does not change the last error.
#[unsafe(no_mangle)]
pub extern "C" fn depositkit_is_valid_destination_chain(chain_id: u64) -> bool {
    boundary::value(false, || depositkit_core::is_valid_destination_chain(chain_id))
}

/// The address type of `chain_id`: `DEPOSITKIT_ADDRESS_TYPE_SOLANA` for Solana (101),
/// `DEPOSITKIT_ADDRESS_TYPE_EVM` for every other id, unknown ids included.
///
/// Never fails and does not change the last error.
#[unsafe(no_mangle)]
pub extern "C" fn depositkit_get_address_type(chain_id: u64) -> depositkit_address_type {
    boundary::value(depositkit_address_type::Evm, || {
        depositkit_core::get_address_type(chain_id).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_chain_has_its_constant_with_the_same_id() {
        assert_eq!(Chain::ALL.len(), 17);
        for chain in Chain::ALL {
            let c = depositkit_chain::from(chain);
            assert_eq!(c as u64, chain.id(), "{chain:?}");
            // The C name is DEPOSITKIT_CHAIN_ + the spec's constant name.
            assert_eq!(format!("{c:?}").to_ascii_uppercase(), chain.constant_name(), "{chain:?}");
        }
    }
}
