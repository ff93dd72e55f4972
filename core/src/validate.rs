//! Address checks (spec §4): EVM addresses with EIP-55 checksums, Solana base58 public keys.

use alloy_primitives::Address;

use crate::chains::{AddressType, Chain};
use crate::describe::quote;
use crate::error::{Error, Result};

/// Longest base58 text that can decode to 32 bytes; longer text is rejected before decoding.
const MAX_SOLANA_ADDRESS_LEN: usize = 44;

/// Whether `address` is `0x` followed by 40 hex digits whose letter case, when mixed, matches
/// its EIP-55 checksum. All-lower-case and all-upper-case hex carry no checksum and pass.
pub fn is_valid_evm_address(address: &str) -> bool {
    evm_address_problem(address).is_none()
}

/// Whether `address` is base58 text that decodes to exactly 32 bytes (a Solana public key).
pub fn is_valid_solana_address(address: &str) -> bool {
    decodes_to_32_bytes(address)
}

/// Checks `address` against the address type of `chain_id` and returns that type.
///
/// # Errors
/// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) for an unknown chain id, or an
/// address that is not valid for the chain, with a message naming the address and the reason.
pub fn validate_address_for_chain(address: &str, chain_id: u64) -> Result<AddressType> {
    let chain = Chain::from_id(chain_id)
        .ok_or_else(|| Error::configuration(format!("Unknown chain ID: {chain_id}")))?;
    let address_type = chain.address_type();
    let problem = match address_type {
        AddressType::Evm => evm_address_problem(address),
        AddressType::Solana => solana_address_problem(address),
    };
    match problem {
        None => Ok(address_type),
        Some(reason) => Err(Error::configuration(format!(
            "Invalid {} address format for {} ({chain_id}): {}: {reason}",
            match address_type {
                AddressType::Evm => "EVM",
                AddressType::Solana => "Solana",
            },
            chain.name(),
            quote(address),
        ))),
    }
}

/// Why `address` is not a valid EVM address, or `None` when it is.
pub(crate) fn evm_address_problem(address: &str) -> Option<String> {
    let Some(hex) = address.strip_prefix("0x") else {
        return Some("expected it to start with 0x".into());
    };
    if hex.len() != 40 {
        return Some(format!("expected 40 hex digits after 0x, found {}", hex.chars().count()));
    }
    if let Some(bad) = hex.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Some(format!("{} is not a hex digit", crate::describe::quote_char(bad)));
    }
    let has_lower = hex.bytes().any(|b| b.is_ascii_lowercase());
    let has_upper = hex.bytes().any(|b| b.is_ascii_uppercase());
    if has_lower && has_upper {
        let parsed: Address = address.parse().ok()?;
        let expected = parsed.to_checksum(None);
        if expected != address {
            return Some(format!(
                "mixed-case checksum does not match EIP-55 (expected {expected})"
            ));
        }
    }
    None
}

/// Why `address` is not a valid Solana address, or `None` when it is.
pub(crate) fn solana_address_problem(address: &str) -> Option<String> {
    if decodes_to_32_bytes(address) {
        return None;
    }
    // Only a bad address pays for the allocating decoder, which says what is wrong with it.
    if address.is_empty() {
        return Some("it is empty".into());
    }
    if address.len() > MAX_SOLANA_ADDRESS_LEN {
        return Some(format!(
            "{} characters is longer than a 32-byte key can be ({MAX_SOLANA_ADDRESS_LEN})",
            address.chars().count()
        ));
    }
    match bs58::decode(address).into_vec() {
        Ok(bytes) if bytes.len() == 32 => None,
        Ok(bytes) => Some(format!("decodes to {} bytes, expected 32", bytes.len())),
        Err(bs58::decode::Error::InvalidCharacter { character, .. }) => {
            Some(format!("{} is not a base58 character", crate::describe::quote_char(character)))
        }
        Err(e) => Some(format!("not base58: {e}")),
    }
}

/// The value of each byte as a base58 digit (Bitcoin's alphabet, which Solana uses), or
/// [`NOT_BASE58`].
const BASE58_DIGITS: [u8; 256] = {
    let alphabet = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut table = [NOT_BASE58; 256];
    let mut i = 0;
    while i < alphabet.len() {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};
const NOT_BASE58: u8 = 0xff;

/// 32-bit limbs holding any number 44 base58 digits can write (58^44 < 2^288).
const LIMBS: usize = 9;

/// Whether `address` is base58 text that decodes to exactly 32 bytes, as `bs58` decodes it
/// (each leading `1` is a zero byte, then the number's big-endian bytes without leading zeros)
/// — without allocating: the number is built in fixed limbs, five digits at a time
/// (58^5 < 2^32). The hot path of [`is_valid_solana_address`].
fn decodes_to_32_bytes(address: &str) -> bool {
    let text = address.as_bytes();
    if text.is_empty() || text.len() > MAX_SOLANA_ADDRESS_LEN {
        return false;
    }
    let zeros = text.iter().take_while(|&&b| b == b'1').count();
    // Little-endian limbs of the number written by the digits after the leading `1`s.
    let mut number = [0u32; LIMBS];
    for group in text[zeros..].chunks(5) {
        let (mut chunk, mut scale) = (0u64, 1u64);
        for &byte in group {
            let digit = BASE58_DIGITS[usize::from(byte)];
            if digit == NOT_BASE58 {
                return false;
            }
            chunk = chunk * 58 + u64::from(digit);
            scale *= 58;
        }
        let mut carry = chunk;
        for limb in &mut number {
            let value = u64::from(*limb) * scale + carry;
            *limb = value as u32;
            carry = value >> 32;
        }
        // 44 digits fit in the limbs, so nothing carries out.
        debug_assert_eq!(carry, 0);
    }
    let bits = number
        .iter()
        .rposition(|&limb| limb != 0)
        .map_or(0, |top| top * 32 + 32 - number[top].leading_zeros() as usize);
    zeros + bits.div_ceil(8) == 32
}

#[cfg(test)]
mod tests {
    use super::*;

    // The EIP-55 test vectors.
    const EIP55: [&str; 8] = [
        "0x52908400098527886E0F7030069857D2E4169EE7",
        "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
        "0xde709f2102306220921060314715629080e2fb77",
        "0x27b1fdb04752bbc536007a920d24acb045561c26",
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
        "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    ];

    #[test]
    fn eip55_vectors_pass_and_flipped_case_fails() {
        for addr in EIP55 {
            assert!(is_valid_evm_address(addr), "{addr}");
            assert!(is_valid_evm_address(&addr.to_lowercase()), "{addr} lower");
            assert!(
                is_valid_evm_address(&format!("0x{}", addr[2..].to_uppercase())),
                "{addr} upper"
            );
        }
        // Flip the case of one letter of a mixed-case vector: the checksum no longer matches.
        let bad = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD";
        assert!(!is_valid_evm_address(bad));
        let reason = evm_address_problem(bad).unwrap();
        assert!(reason.contains("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"), "{reason}");
    }

    #[test]
    fn evm_format_errors() {
        for bad in [
            "",
            "0x",
            "52908400098527886E0F7030069857D2E4169EE7",
            "0X52908400098527886E0F7030069857D2E4169EE7",
            "0x52908400098527886E0F7030069857D2E4169EE",
            "0x52908400098527886E0F7030069857D2E4169EE77",
            "0x52908400098527886E0F7030069857D2E4169EEG",
            " 0x52908400098527886E0F7030069857D2E4169EE7",
            "0x52908400098527886E0F7030069857D2E4169EÉ",
        ] {
            assert!(!is_valid_evm_address(bad), "{bad:?}");
        }
    }

    #[test]
    fn solana_vectors() {
        for good in [
            "11111111111111111111111111111111",
            "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
            "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
            "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
            "So11111111111111111111111111111111111111112",
        ] {
            assert!(is_valid_solana_address(good), "{good}");
        }
        let key31 = bs58::encode([7u8; 31]).into_string();
        // 33 bytes whose base58 is short enough to reach the decoder: 32 zero bytes and a 1.
        let mut bytes33 = [0u8; 33];
        bytes33[32] = 1;
        let key33 = bs58::encode(bytes33).into_string();
        assert_eq!(solana_address_problem(&key31).unwrap(), "decodes to 31 bytes, expected 32");
        assert_eq!(solana_address_problem(&key33).unwrap(), "decodes to 33 bytes, expected 32");
        // 0 O I l are not in the base58 alphabet.
        for c in ['0', 'O', 'I', 'l'] {
            let mut s = String::from("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1");
            s.push(c);
            let reason = solana_address_problem(&s).unwrap();
            assert!(reason.contains(&format!("{c:?}")), "{reason}");
        }
        assert!(!is_valid_solana_address(""));
        assert!(!is_valid_solana_address(&"1".repeat(45)));
    }

    /// The allocation-free check agrees with `bs58` on encoded keys of every length near 32
    /// bytes (with leading zero bytes), on random base58 text of every length up to the limit,
    /// and on text with a character outside the alphabet.
    #[test]
    fn the_fast_solana_check_agrees_with_bs58() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let by_bs58 = |s: &str| bs58::decode(s).into_vec().is_ok_and(|v| v.len() == 32);
        let alphabet = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
        for round in 0..20_000 {
            let text = match round % 3 {
                0 => {
                    let mut bytes = vec![0u8; 28 + (next() % 8) as usize];
                    let zeros = (next() % 4) as usize;
                    for (i, b) in bytes.iter_mut().enumerate() {
                        *b = if i < zeros { 0 } else { next() as u8 };
                    }
                    bs58::encode(bytes).into_string()
                }
                1 => (0..=(next() % 45))
                    .map(|_| alphabet[(next() % 58) as usize] as char)
                    .collect::<String>(),
                _ => {
                    let mut text = bs58::encode((next() as u128).to_le_bytes().repeat(2))
                        .into_string()
                        .into_bytes();
                    let at = (next() as usize) % text.len();
                    text[at] = [b'0', b'O', b'I', b'l', b'-', b' '][(next() % 6) as usize];
                    String::from_utf8(text).unwrap()
                }
            };
            assert_eq!(is_valid_solana_address(&text), by_bs58(&text), "{text}");
            assert_eq!(solana_address_problem(&text).is_none(), by_bs58(&text), "{text}");
        }
        assert!(!is_valid_solana_address("é"));
        assert!(is_valid_solana_address(&bs58::encode([0xffu8; 32]).into_string()));
        assert!(is_valid_solana_address(&bs58::encode([0u8; 32]).into_string()));
    }

    #[test]
    fn validate_for_chain_names_chain_address_and_reason() {
        assert_eq!(validate_address_for_chain(EIP55[0], 8453).unwrap(), AddressType::Evm);
        assert_eq!(
            validate_address_for_chain("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 101)
                .unwrap(),
            AddressType::Solana
        );
        let err = validate_address_for_chain(EIP55[0], 101).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Configuration);
        assert!(
            err.message().starts_with("Invalid Solana address format for Solana (101)"),
            "{err}"
        );
        assert!(err.message().contains(EIP55[0]), "{err}");
        let err = validate_address_for_chain("0x12", 1).unwrap_err();
        assert_eq!(
            err.message(),
            "Invalid EVM address format for Ethereum (1): \"0x12\": expected 40 hex digits after 0x, found 2"
        );
        let err = validate_address_for_chain(EIP55[0], 12345).unwrap_err();
        assert_eq!(err.message(), "Unknown chain ID: 12345");
    }
}
