//! Helpers shared by the ABI test files: calling the C functions the way a C program does and
//! checking the output rules (written only on success, the last error cleared on success).

#![allow(dead_code)]

use std::ffi::{CStr, CString, c_char};
use std::ptr::null_mut;

use depositkit::status::*;
use depositkit::strings::depositkit_string_free;
use serde_json::Value;

pub fn c(text: &str) -> CString {
    CString::new(text).unwrap()
}

/// This thread's last-error message, read the way a C caller does: size first, then copy.
pub fn last_error() -> String {
    let mut n = 0;
    let status = unsafe { depositkit_last_error_message(null_mut(), 0, &mut n) };
    assert!(
        matches!(status, depositkit_status::Ok | depositkit_status::BufferTooSmall),
        "{status:?}"
    );
    let mut buf = vec![0 as c_char; n + 1];
    let status = unsafe { depositkit_last_error_message(buf.as_mut_ptr(), buf.len(), &mut n) };
    assert_eq!(status, depositkit_status::Ok);
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_owned()
}

/// Takes ownership of a string depositkit handed out, frees it, returns its text.
pub fn take(p: *mut c_char) -> String {
    assert!(!p.is_null());
    let text = unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned();
    unsafe { depositkit_string_free(p) };
    text
}

pub type Failure = (depositkit_status, String);

/// `Ok(())` or the status and last-error message of a failed call.
pub fn check(status: depositkit_status) -> Result<(), Failure> {
    if status == depositkit_status::Ok {
        assert_eq!(last_error(), "", "success clears the last error");
        Ok(())
    } else {
        Err((status, last_error()))
    }
}

/// A string output: checks it is written only on success.
pub fn string_out(
    call: impl FnOnce(*mut *mut c_char) -> depositkit_status,
) -> Result<String, Failure> {
    let mut out = null_mut();
    match check(call(&mut out)) {
        Ok(()) => Ok(take(out)),
        Err(failure) => {
            assert!(out.is_null(), "an output written on failure");
            Err(failure)
        }
    }
}

pub fn json_out(
    call: impl FnOnce(*mut *mut c_char) -> depositkit_status,
) -> Result<Value, Failure> {
    string_out(call).map(|text| serde_json::from_str(&text).unwrap())
}
