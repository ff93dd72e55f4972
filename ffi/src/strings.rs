//! Strings across the boundary.
//!
//! In: NUL-terminated `const char *`, checked for NULL and validated as UTF-8 before use
//! ([`str_arg`]). Out: either a static string (`const char *`, never freed) or an owned string
//! (`char *`) that the caller releases with [`depositkit_string_free`] and nothing else
//! ([`owned`]).

use std::ffi::{CStr, CString, c_char};

use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;

/// Reads a NUL-terminated input string.
///
/// # Errors
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `ptr` is NULL, `DEPOSITKIT_STATUS_INVALID_UTF8` when
/// the bytes are not UTF-8; both messages name `param`.
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string that stays valid and unchanged for
/// `'a` (the duration of the call).
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, param: &str) -> FfiResult<&'a str> {
    if ptr.is_null() {
        return Err(FfiError::null_argument(param));
    }
    // SAFETY: not NULL, and the caller promises a valid NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        FfiError::new(
            depositkit_status::InvalidUtf8,
            format!(
                "{param} is not valid UTF-8: invalid byte 0x{:02x} at offset {}",
                bytes[e.valid_up_to()],
                e.valid_up_to()
            ),
        )
    })
}

/// Reads an optional NUL-terminated input string: `None` when `ptr` is NULL, else as
/// [`str_arg`].
///
/// # Errors
/// `DEPOSITKIT_STATUS_INVALID_UTF8` naming `param` when the bytes are not UTF-8.
///
/// # Safety
/// As [`str_arg`].
pub(crate) unsafe fn opt_str_arg<'a>(
    ptr: *const c_char,
    param: &str,
) -> FfiResult<Option<&'a str>> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's contract above.
    unsafe { str_arg(ptr, param) }.map(Some)
}

/// Turns `text` into a string owned by the caller, to be released with
/// [`depositkit_string_free`].
///
/// # Errors
/// `DEPOSITKIT_STATUS_INTERNAL` if `text` contains a NUL byte (no depositkit output does).
pub(crate) fn owned(text: String) -> FfiResult<*mut c_char> {
    CString::new(text).map(CString::into_raw).map_err(|e| {
        FfiError::new(
            depositkit_status::Internal,
            format!("an output string contains a NUL byte at offset {}", e.nul_position()),
        )
    })
}

/// Frees a string that depositkit returned as `char *` (through an `out_*` parameter such as
/// `out_name`, `out_text`, `out_raw` or `out_json`).
///
/// NULL is accepted and ignored. Strings returned as `const char *` are static and must not be
/// passed here.
///
/// # Safety
/// `s` must be NULL or a `char *` returned by depositkit that has not been freed yet; after this
/// call it must not be used again. Strings from `malloc` or any other allocator must not be
/// passed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_string_free(s: *mut c_char) {
    boundary::value((), || {
        if !s.is_null() {
            // SAFETY: the caller promises `s` came from `CString::into_raw` in `owned` and is
            // freed only once.
            drop(unsafe { CString::from_raw(s) });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_valid_utf8_and_names_the_parameter_on_errors() {
        let s = unsafe { str_arg(c"héllo".as_ptr(), "text") }.unwrap();
        assert_eq!(s, "héllo");

        let err = unsafe { str_arg(std::ptr::null(), "address") }.unwrap_err();
        assert_eq!(err.status, depositkit_status::NullArgument);
        assert_eq!(err.message, "address must not be NULL");

        let bad = c"ab\xffcd";
        let err = unsafe { str_arg(bad.as_ptr(), "symbol") }.unwrap_err();
        assert_eq!(err.status, depositkit_status::InvalidUtf8);
        assert_eq!(err.message, "symbol is not valid UTF-8: invalid byte 0xff at offset 2");
    }

    #[test]
    fn owned_strings_round_trip_and_free() {
        let p = owned("Base".to_owned()).unwrap();
        assert_eq!(unsafe { CStr::from_ptr(p) }, c"Base");
        unsafe { depositkit_string_free(p) };
        unsafe { depositkit_string_free(std::ptr::null_mut()) };
        let err = owned("a\0b".to_owned()).unwrap_err();
        assert_eq!(err.status, depositkit_status::Internal);
    }
}
