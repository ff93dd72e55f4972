//! Units: `parse_units`, `format_units` and `parse_raw_amount`.
//!
//! Input: byte 0 is the decimals count (0–79, so 78 and 79 test the limit); bytes 1..33 are a
//! 256-bit amount; bytes 1.. as UTF-8 (lossily) are amount text.
//! Properties: no panic; `parse(format(x)) == x` for every amount; `format(parse(t))` is the
//! canonical spelling of `t`; what parses is exactly what the documented grammar allows.
#![no_main]

use depositkit_core::describe::{bound_message, quote};
use depositkit_core::{ErrorKind, MAX_DECIMALS, U256, format_units, parse_raw_amount, parse_units};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let decimals = u32::from(first) % 80;
    if rest.len() >= 32 {
        let raw = U256::from_be_slice(&rest[..32]);
        format_round_trip(raw, decimals);
        format_round_trip(raw, decimals % (MAX_DECIMALS + 1));
    }
    let text = String::from_utf8_lossy(rest);
    parse_properties(&text, decimals);
    raw_properties(&text);
});

/// Any 256-bit amount formats and parses back to itself.
fn format_round_trip(raw: U256, decimals: u32) {
    let formatted = match format_units(raw, decimals) {
        Ok(text) => text,
        Err(err) => {
            assert!(decimals > MAX_DECIMALS, "format_units({raw}, {decimals}): {err}");
            assert_eq!(err.kind(), ErrorKind::InvalidArgument);
            return;
        }
    };
    assert!(decimals <= MAX_DECIMALS);
    assert_eq!(
        formatted,
        canonical(&formatted),
        "format_units({raw}, {decimals}) is not canonical"
    );
    assert_eq!(parse_units(&formatted, decimals).unwrap(), raw, "{formatted} at {decimals}");
    assert_eq!(parse_raw_amount(&raw.to_string()).unwrap(), raw);
}

/// `parse_units` accepts exactly digits with at most one point, at most `decimals` fractional
/// digits, below 2^256 units; and then formats back to the text's canonical spelling.
fn parse_properties(text: &str, decimals: u32) {
    match parse_units(text, decimals) {
        Ok(raw) => {
            assert!(decimals <= MAX_DECIMALS);
            assert!(text.bytes().all(|b| b.is_ascii_digit() || b == b'.'), "{text:?}");
            assert!(text.bytes().filter(|&b| b == b'.').count() <= 1, "{text:?}");
            assert!(text.bytes().any(|b| b.is_ascii_digit()), "{text:?}");
            let frac = text.split_once('.').map_or("", |(_, f)| f);
            assert!(frac.len() <= decimals as usize, "{text:?} at {decimals}");
            let formatted = format_units(raw, decimals).unwrap();
            assert_eq!(formatted, canonical(text), "{text:?} at {decimals}");
        }
        Err(err) => {
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
            if decimals <= MAX_DECIMALS {
                // Refusals name the text, cut short (`describe::quote`): a huge input never
                // floods the message. Every message then goes through `bound_message`, which
                // cuts a quoted part longer than 300 characters once escaped (80 control
                // characters escape to 480): the message holds the quote as that leaves it.
                let quoted = bound_message(&quote(text));
                assert!(err.message().contains(&quoted), "{err}");
                let chars = err.message().chars().count();
                assert!(chars <= quoted.chars().count() + 200, "{chars} characters: {err}");
            }
            if decimals <= MAX_DECIMALS && grammatical(text, decimals) {
                // Only the range can fail then: the value must not fit in 256 bits.
                assert!(err.message().contains("exceeds"), "{text:?} at {decimals}: {err}");
                let digits = text.replace('.', "");
                let digits = digits.trim_start_matches('0');
                let frac_len = text.split_once('.').map_or(0, |(_, f)| f.len());
                assert!(
                    digits.len() + (decimals as usize - frac_len) >= 78,
                    "{text:?} at {decimals} is below 2^256 units but was refused: {err}"
                );
            }
        }
    }
}

/// `parse_raw_amount` is `parse_units` at 0 decimals, without the point.
fn raw_properties(text: &str) {
    match parse_raw_amount(text) {
        Ok(raw) => {
            assert!(!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()), "{text:?}");
            assert_eq!(parse_units(text, 0).unwrap(), raw);
            assert_eq!(raw.to_string(), canonical(text));
        }
        Err(err) => {
            assert_eq!(err.kind(), ErrorKind::InvalidArgument);
            if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
                assert!(parse_units(text, 0).is_err(), "{text:?}");
            }
        }
    }
}

/// Digits with at most one point, at least one digit, at most `decimals` after the point.
fn grammatical(text: &str, decimals: u32) -> bool {
    text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && text.bytes().filter(|&b| b == b'.').count() <= 1
        && text.bytes().any(|b| b.is_ascii_digit())
        && text.split_once('.').map_or(0, |(_, f)| f.len()) <= decimals as usize
}

/// The canonical spelling of a grammatical amount: no leading zeros in the whole part (but one
/// zero for none), no trailing zeros in the fraction, no point without a fraction.
fn canonical(text: &str) -> String {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { int.to_owned() } else { format!("{int}.{frac}") }
}
