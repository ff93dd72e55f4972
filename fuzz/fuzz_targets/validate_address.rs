//! Address validation: `is_valid_evm_address`, `is_valid_solana_address` and
//! `validate_address_for_chain` on arbitrary text, plus round-trips from arbitrary key bytes.
//!
//! Input: byte 0 picks a chain id (an index into `Chain::ALL`, or a raw unknown id); bytes 1..33
//! are key material; the whole input, as UTF-8 (lossily), is the address text.
#![no_main]

use alloy_primitives::Address;
use depositkit_core::chains::{AddressType, Chain};
use depositkit_core::describe::{bound_message, quote};
use depositkit_core::{
    ErrorKind, is_valid_evm_address, is_valid_solana_address, validate_address_for_chain,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check_text(&text);
    if let Some(tail) = data.get(1..) {
        check_text(&String::from_utf8_lossy(tail));
    }
    let chain_id = match data.first() {
        Some(&b) if (b as usize) < Chain::ALL.len() => Chain::ALL[b as usize].id(),
        Some(&b) => u64::from(b) * 1_000_003,
        None => 1,
    };
    check_for_chain(&text, chain_id);
    if data.len() >= 33 {
        round_trips(&data[1..33]);
    }
});

/// Properties of any text.
fn check_text(text: &str) {
    if is_valid_evm_address(text) {
        let hex = text.strip_prefix("0x").expect("a valid EVM address starts with 0x");
        assert_eq!(hex.len(), 40, "{text:?}");
        assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()), "{text:?}");
        let parsed: Address = text.parse().expect("a valid EVM address parses");
        // Case carries only the checksum: every case variant of the same bytes agrees with it.
        assert!(is_valid_evm_address(&text.to_ascii_lowercase()), "{text:?}");
        assert!(is_valid_evm_address(&format!("0x{}", hex.to_ascii_uppercase())), "{text:?}");
        let mixed = hex.bytes().any(|b| b.is_ascii_lowercase())
            && hex.bytes().any(|b| b.is_ascii_uppercase());
        if mixed {
            assert_eq!(parsed.to_checksum(None), text, "a mixed-case address must be EIP-55");
        }
    }
    if is_valid_solana_address(text) {
        let bytes = bs58::decode(text).into_vec().expect("a valid Solana address is base58");
        assert_eq!(bytes.len(), 32, "{text:?}");
        // Base58 is one-to-one: the key encodes back to exactly the text.
        assert_eq!(bs58::encode(&bytes).into_string(), text);
    }
    // The two formats never overlap ('0' and 'x' are not base58).
    assert!(!(is_valid_evm_address(text) && is_valid_solana_address(text)), "{text:?}");
    for chain in Chain::ALL {
        check_for_chain(text, chain.id());
    }
}

/// `validate_address_for_chain` agrees with the per-format checks and explains its refusals.
fn check_for_chain(text: &str, chain_id: u64) {
    let result = validate_address_for_chain(text, chain_id);
    let Some(chain) = Chain::from_id(chain_id) else {
        let err = result.expect_err("an unknown chain id is refused");
        assert_eq!(err.kind(), ErrorKind::Configuration);
        assert_eq!(err.message(), format!("Unknown chain ID: {chain_id}"));
        return;
    };
    let valid = match chain.address_type() {
        AddressType::Evm => is_valid_evm_address(text),
        AddressType::Solana => is_valid_solana_address(text),
    };
    match result {
        Ok(kind) => {
            assert!(valid, "{text:?} accepted for {chain_id}");
            assert_eq!(kind, chain.address_type());
        }
        Err(err) => {
            assert!(!valid, "{text:?} refused for {chain_id}: {err}");
            assert_eq!(err.kind(), ErrorKind::Configuration);
            assert!(err.message().contains(&format!("({chain_id})")), "{err}");
            // The message quotes the address, cut short (`describe::quote`): a huge input
            // cannot flood it. `bound_message` (every message) cuts a quote longer than 300
            // characters once escaped; the message holds the quote as that leaves it.
            let quoted = bound_message(&quote(text));
            assert!(err.message().contains(&quoted), "{err}");
            assert!(
                err.message().chars().count() <= quoted.chars().count() + 200,
                "message of {} characters",
                err.message().chars().count()
            );
        }
    }
}

/// Addresses made from key bytes are valid in every spelling the format allows.
fn round_trips(key: &[u8]) {
    let address = Address::from_slice(&key[..20]);
    let checksummed = address.to_checksum(None);
    assert!(is_valid_evm_address(&checksummed), "{checksummed}");
    assert!(is_valid_evm_address(&checksummed.to_ascii_lowercase()));
    assert!(is_valid_evm_address(&format!("0x{}", checksummed[2..].to_ascii_uppercase())));
    assert_eq!(validate_address_for_chain(&checksummed, 8453).unwrap(), AddressType::Evm);
    // Flip the case of one letter of the checksum: still mixed case, it must fail.
    let hex = &checksummed[2..];
    if let Some(i) = hex.bytes().position(|b| b.is_ascii_alphabetic()) {
        let mut flipped: Vec<u8> = hex.bytes().collect();
        flipped[i] ^= 0x20;
        let has_lower = flipped.iter().any(u8::is_ascii_lowercase);
        let has_upper = flipped.iter().any(u8::is_ascii_uppercase);
        let flipped = format!("0x{}", String::from_utf8(flipped).unwrap());
        assert_eq!(is_valid_evm_address(&flipped), !(has_lower && has_upper), "{flipped}");
    }
    let solana = bs58::encode(key).into_string();
    assert!(is_valid_solana_address(&solana), "{solana}");
    assert_eq!(validate_address_for_chain(&solana, 101).unwrap(), AddressType::Solana);
    assert!(validate_address_for_chain(&solana, 1).is_err());
    assert!(validate_address_for_chain(&checksummed, 101).is_err());
}
