//! Exact conversion between smallest units (a 256-bit integer) and human-readable amounts.
//!
//! `format_units(1_500_000, 6) == "1.5"`, `parse_units("1.5", 6) == 1_500_000`. Both are exact
//! over the whole 256-bit range for every decimals count from 0 to 77 (10^77 is the largest
//! power of ten below 2^256).

pub use alloy_primitives::U256;

use crate::describe::quote;
use crate::error::{Error, Result};

/// The largest supported decimals count.
pub const MAX_DECIMALS: u32 = 77;

fn check_decimals(decimals: u32) -> Result<usize> {
    if decimals > MAX_DECIMALS {
        return Err(Error::invalid_argument(format!(
            "decimals {decimals} is out of range: expected 0 to {MAX_DECIMALS}"
        )));
    }
    Ok(decimals as usize)
}

/// Formats `raw` smallest units as a decimal amount with `decimals` fractional digits,
/// trailing zeros trimmed (`1500000, 6 → "1.5"`, `2000000, 6 → "2"`).
///
/// # Errors
/// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) when `decimals` exceeds 77.
pub fn format_units(raw: U256, decimals: u32) -> Result<String> {
    let decimals = check_decimals(decimals)?;
    let digits = raw.to_string();
    if decimals == 0 {
        return Ok(digits);
    }
    let padded = if digits.len() <= decimals {
        format!("{}{digits}", "0".repeat(decimals + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - decimals);
    let frac = frac.trim_end_matches('0');
    Ok(if frac.is_empty() { int.to_owned() } else { format!("{int}.{frac}") })
}

/// Parses a decimal amount into smallest units with `decimals` fractional digits
/// (`"1.5", 6 → 1500000`). Accepts ASCII digits with at most one `.` (`"2"`, `"0.25"`, `".5"`,
/// `"5."`); nothing else.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument), naming the text, for:
/// empty text, signs, exponents, spaces, any other non-digit, more than one `.`, more fractional
/// digits than `decimals`, a result above 2^256 − 1, or `decimals` above 77.
pub fn parse_units(text: &str, decimals: u32) -> Result<U256> {
    let decimals = check_decimals(decimals)?;
    let invalid =
        |why: String| Error::invalid_argument(format!("invalid amount {}: {why}", quote(text)));
    if text.is_empty() {
        return Err(invalid("it is empty".into()));
    }
    if let Some(c) = text.chars().find(|c| !c.is_ascii_digit() && *c != '.') {
        return Err(invalid(match c {
            '+' | '-' => "signs are not allowed".into(),
            'e' | 'E' => "exponents are not allowed".into(),
            c if c.is_whitespace() => "spaces are not allowed".into(),
            c => format!("{} is not a digit", crate::describe::quote_char(c)),
        }));
    }
    let (int, frac) = match text.split_once('.') {
        None => (text, ""),
        Some((_, frac)) if frac.contains('.') => {
            return Err(invalid("more than one decimal point".into()));
        }
        Some(parts) => parts,
    };
    if int.is_empty() && frac.is_empty() {
        return Err(invalid("it has no digits".into()));
    }
    if frac.len() > decimals {
        return Err(invalid(format!(
            "{} fractional digits is more than the {decimals} decimals allowed",
            frac.len()
        )));
    }
    let mut digits = String::with_capacity(int.len() + decimals);
    digits.push_str(int.trim_start_matches('0'));
    if !digits.is_empty() || !frac.trim_start_matches('0').is_empty() {
        digits.push_str(frac);
        digits.extend(std::iter::repeat_n('0', decimals - frac.len()));
    }
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(U256::ZERO);
    }
    U256::from_str_radix(digits, 10).map_err(|_| {
        invalid(format!("it exceeds the largest 256-bit amount at {decimals} decimals"))
    })
}

/// Parses a raw amount in smallest units: a non-negative decimal integer below 2^256.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument), naming the text, for
/// anything but ASCII digits, or a value above 2^256 − 1.
pub fn parse_raw_amount(text: &str) -> Result<U256> {
    let invalid =
        |why: &str| Error::invalid_argument(format!("invalid raw amount {}: {why}", quote(text)));
    if text.is_empty() {
        return Err(invalid("it is empty"));
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid("expected a non-negative integer in decimal digits"));
    }
    let digits = text.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(U256::ZERO);
    }
    U256::from_str_radix(digits, 10).map_err(|_| invalid("it exceeds 2^256 - 1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use proptest::prelude::*;

    fn u(n: u128) -> U256 {
        U256::from(n)
    }

    #[test]
    fn formats() {
        assert_eq!(format_units(u(1_500_000), 6).unwrap(), "1.5");
        assert_eq!(format_units(u(2_000_000), 6).unwrap(), "2");
        assert_eq!(format_units(u(1), 6).unwrap(), "0.000001");
        assert_eq!(format_units(U256::ZERO, 18).unwrap(), "0");
        assert_eq!(format_units(u(123), 0).unwrap(), "123");
        assert_eq!(format_units(u(400_000_000_000_000_000), 18).unwrap(), "0.4");
        assert_eq!(
            format_units(U256::MAX, 77).unwrap(),
            "1.15792089237316195423570985008687907853269984665640564039457584007913129639935"
        );
        assert_eq!(
            format_units(U256::MAX, 0).unwrap(),
            "115792089237316195423570985008687907853269984665640564039457584007913129639935"
        );
    }

    #[test]
    fn parses() {
        assert_eq!(parse_units("1.5", 6).unwrap(), u(1_500_000));
        assert_eq!(parse_units("0.4", 18).unwrap(), u(400_000_000_000_000_000));
        assert_eq!(parse_units("100", 18).unwrap(), u(100) * u(10u128.pow(18)));
        assert_eq!(parse_units(".5", 1).unwrap(), u(5));
        assert_eq!(parse_units("5.", 1).unwrap(), u(50));
        assert_eq!(parse_units("000.000", 6).unwrap(), U256::ZERO);
        assert_eq!(parse_units("0007", 0).unwrap(), u(7));
        assert_eq!(
            parse_units(
                "115792089237316195423570985008687907853269984665640564039457584007913129639935",
                0
            )
            .unwrap(),
            U256::MAX
        );
        assert_eq!(
            parse_units(
                "1.15792089237316195423570985008687907853269984665640564039457584007913129639935",
                77
            )
            .unwrap(),
            U256::MAX
        );
    }

    #[test]
    fn parse_rejects_and_names_the_input() {
        let cases = [
            ("", "invalid amount \"\": it is empty"),
            ("-1", "invalid amount \"-1\": signs are not allowed"),
            ("+1", "invalid amount \"+1\": signs are not allowed"),
            ("1e6", "invalid amount \"1e6\": exponents are not allowed"),
            ("1 000", "invalid amount \"1 000\": spaces are not allowed"),
            (" 1", "invalid amount \" 1\": spaces are not allowed"),
            ("1,5", "invalid amount \"1,5\": ',' is not a digit"),
            ("1.2.3", "invalid amount \"1.2.3\": more than one decimal point"),
            (".", "invalid amount \".\": it has no digits"),
            (
                "1.2345678",
                "invalid amount \"1.2345678\": 7 fractional digits is more than the 6 decimals allowed",
            ),
            ("0x10", "invalid amount \"0x10\": 'x' is not a digit"),
        ];
        for (text, message) in cases {
            let err = parse_units(text, 6).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument);
            assert_eq!(err.message(), message);
        }
        let over = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
        let err = parse_units(over, 0).unwrap_err();
        assert!(err.message().contains(over) && err.message().contains("exceeds"), "{err}");
        assert!(parse_units("1.2", 0).is_err());
        assert!(parse_units("2", 77).is_err(), "2 * 10^77 overflows");
    }

    #[test]
    fn decimals_above_77_are_rejected() {
        let err = format_units(u(1), 78).unwrap_err();
        assert_eq!(err.message(), "decimals 78 is out of range: expected 0 to 77");
        assert_eq!(parse_units("1", 78).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn raw_amounts() {
        assert_eq!(parse_raw_amount("0").unwrap(), U256::ZERO);
        assert_eq!(parse_raw_amount("1000").unwrap(), u(1000));
        assert!(parse_raw_amount("-1").unwrap_err().message().contains("\"-1\""));
        assert!(parse_raw_amount("").is_err());
        assert!(parse_raw_amount("1.0").is_err());
        assert!(parse_raw_amount(&"9".repeat(79)).unwrap_err().message().contains("2^256"));
    }

    proptest! {
        #[test]
        fn parse_inverts_format(limbs in any::<[u64; 4]>(), decimals in 0u32..=77) {
            let x = U256::from_limbs(limbs);
            let text = format_units(x, decimals).unwrap();
            prop_assert_eq!(parse_units(&text, decimals).unwrap(), x);
        }

        #[test]
        fn format_inverts_parse_for_canonical_text(int in "[1-9][0-9]{0,20}", frac in "[0-9]{0,17}[1-9]") {
            let text = format!("{int}.{frac}");
            let raw = parse_units(&text, 18).unwrap();
            prop_assert_eq!(format_units(raw, 18).unwrap(), text);
        }
    }
}
