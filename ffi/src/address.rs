//! Address checks: EVM (EIP-55) and Solana (base58 of 32 bytes), and per-chain validation.

use std::ffi::c_char;

use crate::boundary;
use crate::status::depositkit_status;
use crate::strings;

/// Whether `address` is `0x` followed by 40 hex digits whose letter case, when mixed, matches
/// its EIP-55 checksum. All-lower-case and all-upper-case hex carry no checksum and pass.
///
/// NULL or text that is not UTF-8 gives false. Never fails and does not change the last error;
/// use `depositkit_validate_address_for_chain` to learn why an address is invalid.
///
/// # Safety
/// `address` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_is_valid_evm_address(address: *const c_char) -> bool {
    boundary::value(false, || {
        // SAFETY: the caller's contract above.
        unsafe { strings::str_arg(address, "address") }
            .is_ok_and(depositkit_core::is_valid_evm_address)
    })
}

/// Whether `address` is base58 text that decodes to exactly 32 bytes (a Solana public key).
///
/// NULL or text that is not UTF-8 gives false. Never fails and does not change the last error;
/// use `depositkit_validate_address_for_chain` to learn why an address is invalid.
///
/// # Safety
/// `address` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_is_valid_solana_address(address: *const c_char) -> bool {
    boundary::value(false, || {
        // SAFETY: the caller's contract above.
        unsafe { strings::str_arg(address, "address") }
            .is_ok_and(depositkit_core::is_valid_solana_address)
    })
}

/// Checks that `address` is valid for `chain_id`: a Solana address for Solana (101), an EVM
/// address (EIP-55 checksum when mixed-case) for every other known chain.
///
/// Returns `DEPOSITKIT_STATUS_OK` when it is; `DEPOSITKIT_STATUS_CONFIGURATION` for an unknown
/// chain id (`Unknown chain ID: 12345`) or an invalid address, with a message naming the chain,
/// the address and the reason, e.g. `Invalid EVM address format for Ethereum (1): "0x12":
/// expected 40 hex digits after 0x, found 2`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `address`
/// is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8` when it is not UTF-8.
///
/// # Safety
/// `address` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_validate_address_for_chain(
    address: *const c_char,
    chain_id: u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let address = unsafe { strings::str_arg(address, "address") }?;
        depositkit_core::validate_address_for_chain(address, chain_id)?;
        Ok(())
    })
}
