//! Helpers shared by the ABI test files: calling the C functions the way a C program does and
//! checking the output rules (written only on success, the last error cleared on success).

#![allow(dead_code)]

use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

use depositkit::deposit::*;
#[cfg(feature = "devnet")]
use depositkit::devnet::*;
use depositkit::status::*;
use depositkit::strings::depositkit_string_free;
use serde_json::{Value, json};

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

/// A devnet handle, freed on drop. Shareable across threads, as the header promises.
#[cfg(feature = "devnet")]
pub struct Devnet(pub *const depositkit_devnet);

// SAFETY: the handle is documented as usable from any number of threads at once.
#[cfg(feature = "devnet")]
unsafe impl Send for Devnet {}
// SAFETY: as above.
#[cfg(feature = "devnet")]
unsafe impl Sync for Devnet {}

#[cfg(feature = "devnet")]
impl Drop for Devnet {
    fn drop(&mut self) {
        unsafe { depositkit_devnet_free(self.0) };
    }
}

#[cfg(feature = "devnet")]
impl Devnet {
    /// A devnet on a fresh temporary database, with fault injection on.
    pub fn start() -> Devnet {
        let mut out = null();
        check(unsafe { depositkit_devnet_start(null(), true, &mut out) }).unwrap();
        assert!(!out.is_null());
        Devnet(out)
    }

    /// Its services URL.
    pub fn url(&self) -> String {
        string_out(|out| unsafe { depositkit_devnet_services_url(self.0, out) }).unwrap()
    }
}

/// A configuration for tests: polling every 50 ms (allowed by the test knob), short retries,
/// destination Base; `extra` overrides or adds options.
pub fn config(url: &str, owner: &str, extra: Value) -> String {
    let mut config = json!({
        "ownerAddress": owner,
        "destination": {"chainId": 8453},
        "servicesUrl": url,
        "pollingIntervalMs": 50,
        "minPollingIntervalMs": 20,
        "sweepRetryDelayMs": 30,
        "httpInitialBackoffMs": 5,
        "requestTimeoutMs": 3000,
        "callTimeoutMs": 20000,
    });
    for (key, value) in extra.as_object().unwrap() {
        config[key] = value.clone();
    }
    config.to_string()
}

/// A client handle, freed on drop.
pub struct Client(pub *const depositkit_deposit_client);

// SAFETY: the handle is documented as usable from any number of threads at once.
unsafe impl Send for Client {}
// SAFETY: as above.
unsafe impl Sync for Client {}

impl Drop for Client {
    fn drop(&mut self) {
        unsafe { depositkit_deposit_client_free(self.0) };
    }
}

pub fn new_client(config_json: &str) -> Result<Client, Failure> {
    let config_json = c(config_json);
    let mut out: *const depositkit_deposit_client = null();
    match check(unsafe { depositkit_deposit_client_new(config_json.as_ptr(), &mut out) }) {
        Ok(()) => {
            assert!(!out.is_null());
            Ok(Client(out))
        }
        Err(failure) => {
            assert!(out.is_null(), "out_client written on failure");
            Err(failure)
        }
    }
}

/// [`new_client`] for a configuration that must be accepted.
pub fn new_client_ok(config_json: &str) -> Client {
    new_client(config_json).unwrap()
}
