//! Amounts on the wire (`particle-ua-wire.md` §3, §4.2): every amount is an 18-decimal
//! fixed-point integer, whatever the token's real decimals; the SDK sends it as lowercase `0x`
//! hex without padding and reads it from anything JS `BigInt()` takes (`"0x…"`, a decimal
//! integer string, a JSON integer).
//!
//! depositkit counts in each token's smallest units, so amounts cross with the token's real
//! decimals: `raw × 10^(18 − real)` out, `⌊v / 10^(18 − real)⌋` in (the SDK's `rawAmount`).

use serde_json::Value;

use crate::describe::{json_kind, quote};
use crate::error::{Error, ErrorKind, Result};
use crate::units::{U256, format_units};

/// The decimals of every amount on the wire.
pub const WIRE_DECIMALS: u32 = 18;

/// `value` as the SDK writes it: lowercase `0x` hex, no padding (`0` → `"0x0"`).
pub fn to_hex(value: U256) -> String {
    format!("{value:#x}")
}

/// `raw` smallest units of a token with `real_decimals` as an 18-decimal wire amount.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] when `real_decimals` is above 18 or the result overflows.
pub fn wire_from_raw(raw: U256, real_decimals: u32) -> Result<U256> {
    let scale = scale(real_decimals)?;
    raw.checked_mul(scale).ok_or_else(|| {
        Error::invalid_argument(format!(
            "amount {raw} at {real_decimals} decimals overflows 256 bits at 18 decimals"
        ))
    })
}

/// An 18-decimal wire amount in smallest units of a token with `real_decimals`, truncated as
/// the SDK truncates its `rawAmount`.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] when `real_decimals` is above 18.
pub fn raw_from_wire(wire: U256, real_decimals: u32) -> Result<U256> {
    Ok(wire / scale(real_decimals)?)
}

fn scale(real_decimals: u32) -> Result<U256> {
    if real_decimals > WIRE_DECIMALS {
        return Err(Error::invalid_argument(format!(
            "a token with {real_decimals} decimals cannot be carried at 18 decimals"
        )));
    }
    Ok(U256::from(10u64).pow(U256::from(WIRE_DECIMALS - real_decimals)))
}

/// A human decimal amount as the SDK's `parseUnits(text, 18)` (viem) makes it: digits with at
/// most one `.`, more than 18 fraction digits rounded half up at the 18th (the rounding is
/// viem's: `Math.round(Number("<18th digit>.<rest>"))`, reproduced with the same binary64
/// parse and round).
///
/// # Errors
/// [`ErrorKind::InvalidArgument`], naming the text, for signs, exponents, spaces, commas, an
/// empty text or no digits, and a result above 2^256 − 1.
pub fn parse_decimal(text: &str) -> Result<U256> {
    let invalid =
        |why: &str| Error::invalid_argument(format!("invalid amount {}: {why}", quote(text)));
    if text.starts_with('-') {
        return Err(invalid("negative amounts are not allowed"));
    }
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits_only(int) || !digits_only(frac) {
        return Err(invalid("expected decimal digits with at most one '.'"));
    }
    if int.is_empty() && frac.is_empty() {
        return Err(invalid("it has no digits"));
    }
    let decimals = WIRE_DECIMALS as usize;
    let mut carry = false;
    let mut frac = frac.to_owned();
    if frac.len() > decimals {
        let (left, rest) = frac.split_at(decimals - 1);
        let (unit, right) = rest.split_at(1);
        // viem: Math.round(Number(`${unit}.${right}`)); JS numbers are binary64.
        let rounded =
            format!("{unit}.{right}").parse::<f64>().map(f64::round).unwrap_or(0.0) as u64;
        frac = if rounded > 9 {
            // `left` is the first 17 fraction digits.
            let bumped = U256::from_str_radix(left, 10).expect("digits") + U256::from(1u8);
            let text = format!("{bumped}0");
            if text.len() > decimals {
                carry = true;
                text[1..].to_owned()
            } else {
                format!("{text:0>decimals$}")
            }
        } else {
            format!("{left}{rounded}")
        };
    }
    let scaled = format!("{int}{frac:0<decimals$}");
    let scaled = scaled.trim_start_matches('0');
    let value = if scaled.is_empty() {
        U256::ZERO
    } else {
        U256::from_str_radix(scaled, 10).map_err(|_| invalid("it exceeds 2^256 - 1"))?
    };
    if carry {
        let one = U256::from(10u64).pow(U256::from(WIRE_DECIMALS));
        return value.checked_add(one).ok_or_else(|| invalid("it exceeds 2^256 - 1"));
    }
    Ok(value)
}

/// An 18-decimal amount as the service sends it: a `"0x…"` hex string, a decimal integer
/// string or a non-negative JSON integer (anything JS `BigInt()` takes; a fraction is refused,
/// as `BigInt("1.5")` throws).
///
/// # Errors
/// [`ErrorKind::Protocol`], naming `field` and the value.
pub fn read_wire(field: &str, value: &Value) -> Result<U256> {
    let bad = |why: String| Error::new(ErrorKind::Protocol, format!("{field}: {why}"));
    match value {
        Value::String(text) => {
            let text = text.trim();
            let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    U256::from_str_radix(hex, 16).ok()
                }
                Some(_) => None,
                None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
                    U256::from_str_radix(text, 10).ok()
                }
                None => None,
            };
            parsed.ok_or_else(|| {
                bad(format!(
                    "{} is not an 18-decimal integer amount (hex or decimal digits)",
                    quote(text)
                ))
            })
        }
        Value::Number(number) => number
            .as_u64()
            .map(U256::from)
            .ok_or_else(|| bad(format!("{number} is not a non-negative integer amount"))),
        other => Err(bad(format!("expected an amount, got {}", json_kind(other)))),
    }
}

/// An 18-decimal amount as a number of whole units, as the SDK's `Number(formatUnits(v, 18))`.
pub fn wire_to_f64(value: U256) -> f64 {
    format_units(value, WIRE_DECIMALS).ok().and_then(|text| text.parse().ok()).unwrap_or(f64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn u(n: u128) -> U256 {
        U256::from(n)
    }

    /// The document's examples (§3).
    #[test]
    fn human_amounts_as_the_sdk_sends_them() {
        assert_eq!(to_hex(parse_decimal("10").unwrap()), "0x8ac7230489e80000");
        assert_eq!(to_hex(parse_decimal("0").unwrap()), "0x0");
        assert_eq!(to_hex(parse_decimal(".5").unwrap()), "0x6f05b59d3b20000");
        assert_eq!(to_hex(parse_decimal("3.25").unwrap()), "0x2d1a51c7e0050000");
        assert_eq!(to_hex(parse_decimal("2").unwrap()), "0x1bc16d674ec80000");
        assert_eq!(parse_decimal("5.").unwrap(), u(5 * 10u128.pow(18)));
    }

    #[test]
    fn more_than_18_fraction_digits_round_half_up_as_viem() {
        assert_eq!(parse_decimal("0.0000000000000000014").unwrap(), u(1));
        assert_eq!(parse_decimal("0.0000000000000000015").unwrap(), u(2));
        assert_eq!(parse_decimal("0.0000000000000000025").unwrap(), u(3));
        // A 9 rounded up carries through the fraction and into the integer part.
        assert_eq!(parse_decimal("0.0000000000000000099").unwrap(), u(10));
        assert_eq!(parse_decimal("0.9999999999999999999").unwrap(), u(10u128.pow(18)));
        assert_eq!(parse_decimal("1.9999999999999999995").unwrap(), u(2 * 10u128.pow(18)));
        // viem's binary64 step: "4.4999999999999999999" parses as 4.5 and rounds up.
        let text = format!("0.{}44{}", "0".repeat(17), "9".repeat(19));
        assert_eq!(parse_decimal(&text).unwrap(), u(5));
    }

    #[test]
    fn what_the_sdk_rejects_is_rejected() {
        for text in ["-1", "1e6", " 1", "1,5", "", ".", "1.2.3", "0x10", "+1"] {
            let e = parse_decimal(text).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{text}");
        }
    }

    #[test]
    fn raw_amounts_cross_with_the_tokens_real_decimals() {
        // 30 USDC (6 decimals) is 30·10^18 on the wire, and back.
        let wire = wire_from_raw(u(30_000_000), 6).unwrap();
        assert_eq!(to_hex(wire), "0x1a055690d9db80000");
        assert_eq!(raw_from_wire(wire, 6).unwrap(), u(30_000_000));
        // Truncated, as the SDK's rawAmount: 1.9999999 units of a 6-decimal token.
        assert_eq!(raw_from_wire(u(1_999_999_900_000_000_000), 6).unwrap(), u(1_999_999));
        assert_eq!(wire_from_raw(u(7), 18).unwrap(), u(7));
        assert_eq!(raw_from_wire(u(5), 9).unwrap(), U256::ZERO);
        assert!(wire_from_raw(u(1), 19).is_err());
        assert!(wire_from_raw(U256::MAX, 6).is_err());
    }

    #[test]
    fn wire_amounts_are_read_as_bigint_reads_them() {
        let thirty = u(30 * 10u128.pow(18));
        assert_eq!(read_wire("amount", &json!("0x1a055690d9db80000")).unwrap(), thirty);
        assert_eq!(read_wire("amount", &json!("30000000000000000000")).unwrap(), thirty);
        assert_eq!(read_wire("amount", &json!(1_000_000)).unwrap(), u(1_000_000));
        assert_eq!(read_wire("amount", &json!("0x0")).unwrap(), U256::ZERO);
        for bad in
            [json!("1.5"), json!(1.5), json!(-1), json!(null), json!("0x"), json!("zz"), json!([])]
        {
            let e = read_wire("assets[0].amount", &bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{bad}");
            assert!(e.message().starts_with("assets[0].amount: "), "{e}");
        }
    }

    #[test]
    fn usd_values_as_numbers() {
        assert_eq!(wire_to_f64(u(30 * 10u128.pow(18))), 30.0);
        assert_eq!(wire_to_f64(u(15 * 10u128.pow(17))), 1.5);
        assert_eq!(wire_to_f64(U256::ZERO), 0.0);
    }
}
