//! Exact conversion between raw amounts (smallest units, 256-bit) and decimal text.
//!
//! Raw amounts cross the boundary as decimal strings, because C has no 256-bit integer.

use std::ffi::c_char;

use crate::boundary::{self, FfiResult};
use crate::status::depositkit_status;
use crate::strings;

/// The largest decimals count the unit functions accept (10^77 is the largest power of ten
/// below 2^256).
pub const DEPOSITKIT_MAX_DECIMALS: u32 = 77;

/// Formats a raw amount as decimal text with `decimals` fractional digits, trailing zeros
/// trimmed: `("1500000", 6)` gives `"1.5"`, `("2000000", 6)` gives `"2"`, `("1", 6)` gives
/// `"0.000001"`. Exact over the whole 256-bit range.
///
/// `raw` is a non-negative integer in decimal digits, at most 2^256 - 1 (leading zeros are
/// allowed; signs, spaces, points and exponents are not).
///
/// On success `*out_text` is a new string owned by the caller: free it with
/// `depositkit_string_free`. On failure `*out_text` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `raw` is not such an
/// integer or `decimals` is above `DEPOSITKIT_MAX_DECIMALS` (the message quotes the input);
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `raw` or `out_text` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8` when `raw` is not UTF-8.
///
/// # Safety
/// `raw` must be NULL or a NUL-terminated string; `out_text` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_format_units(
    raw: *const c_char,
    decimals: u32,
    out_text: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| -> FfiResult<()> {
        // SAFETY: the caller's contract above.
        let raw = unsafe { strings::str_arg(raw, "raw") }?;
        // SAFETY: the caller's contract above.
        let out_text = unsafe { boundary::out(out_text, "out_text") }?;
        let amount = depositkit_core::parse_raw_amount(raw)?;
        let text = depositkit_core::format_units(amount, decimals)?;
        out_text.write(strings::owned(text)?);
        Ok(())
    })
}

/// Parses decimal text into a raw amount with `decimals` fractional digits, returned as a
/// decimal integer string: `("1.5", 6)` gives `"1500000"`. Exact over the whole 256-bit range.
///
/// `text` is ASCII digits with at most one `.` (`"2"`, `"0.25"`, `".5"`, `"5."`); nothing else is
/// accepted.
///
/// On success `*out_raw` is a new string owned by the caller: free it with
/// `depositkit_string_free`. On failure `*out_raw` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT`, with a message that
/// quotes the text and says why, for: empty text, signs (`"-1"`), exponents (`"1e6"`), spaces,
/// any other non-digit, more than one `.`, more fractional digits than `decimals`
/// (`"1.2345678"` at 6), a result above 2^256 - 1, or `decimals` above
/// `DEPOSITKIT_MAX_DECIMALS`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `text` or `out_raw` is
/// NULL; `DEPOSITKIT_STATUS_INVALID_UTF8` when `text` is not UTF-8.
///
/// # Safety
/// `text` must be NULL or a NUL-terminated string; `out_raw` must be NULL or point to a
/// writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_parse_units(
    text: *const c_char,
    decimals: u32,
    out_raw: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| -> FfiResult<()> {
        // SAFETY: the caller's contract above.
        let text = unsafe { strings::str_arg(text, "text") }?;
        // SAFETY: the caller's contract above.
        let out_raw = unsafe { boundary::out(out_raw, "out_raw") }?;
        let raw = depositkit_core::parse_units(text, decimals)?;
        out_raw.write(strings::owned(raw.to_string())?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn max_decimals_matches_the_core() {
        assert_eq!(super::DEPOSITKIT_MAX_DECIMALS, depositkit_core::MAX_DECIMALS);
    }
}
