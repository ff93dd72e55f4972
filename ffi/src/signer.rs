//! A host signing function as the owner's signer on the `particle` backend
//! (`docs/particle.md` section 4): a C function pointer with `user_data`, wrapped as the core's
//! `CallbackSigner` (which checks every signature against the signer's address before it is
//! used). The two other signers, a key and a seed, are options of the configuration JSON.
//!
//! `user_data` belongs to the library from the call of
//! [`depositkit_deposit_client_new_with_signer`] on: a [`HostSigner`] holds it before any
//! argument is checked, so that its `Drop` releases it exactly once whatever happens: at once
//! when the call fails, else when the last reference goes (the client freed, and any signing
//! call still running has returned).

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use depositkit_core::deposit::DepositClientConfig;
use depositkit_core::signer::{CallbackInput, CallbackSigner};
use depositkit_core::{Error, ErrorKind};

use crate::boundary::{self, FfiError, FfiResult};
use crate::deposit::{depositkit_deposit_client, depositkit_user_data_free, new_handle};
use crate::status::depositkit_status;
use crate::strings;

/// `input` of `depositkit_deposit_client_new_with_signer`: the callback gets the EIP-191
/// digest, `keccak256("\x19Ethereum Signed Message:\n32" || root)`, and signs it as it is (a KMS
/// or HSM "sign digest" call: AWS KMS `MessageType=DIGEST`, PKCS#11 `CKM_ECDSA`,
/// libsecp256k1's `secp256k1_ecdsa_sign_recoverable`).
pub const DEPOSITKIT_SIGN_INPUT_DIGEST: u32 = 0;

/// `input` of `depositkit_deposit_client_new_with_signer`: the callback gets the 32-byte root
/// hash itself and applies EIP-191 `personal_sign` on its own (a wallet service's
/// `personal_sign`, ethers' `signMessage(bytes)`).
pub const DEPOSITKIT_SIGN_INPUT_MESSAGE: u32 = 1;

/// The host's signing function, given to `depositkit_deposit_client_new_with_signer`: it signs
/// for the universal account's owner with a key the host keeps (a KMS, an HSM, a wallet
/// service).
///
/// Called with the `user_data` given at creation, the 32 bytes to sign (`message`: the EIP-191
/// digest or the root hash, as `input` chose; borrowed, valid only during the call) and
/// `out_signature`, 65 writable bytes for the secp256k1 signature `r || s || v` (`v` 27/28 or
/// 0/1; a high `s` is accepted and made low). Return 0 when `out_signature` holds the signature;
/// any other value is a failure, reported as `DEPOSITKIT_STATUS_AUTHENTICATION` ("the signer
/// callback failed: it returned N") and nothing is sent.
///
/// Every signature is checked before it is used: it must recover to `signer_address` over the
/// digest, else the signing fails with `DEPOSITKIT_STATUS_AUTHENTICATION` ("the signer
/// callback's answer was refused: the signature is from 0x..., not from the account's owner
/// 0x...") and nothing is sent with it. That catches a wrong key and a callback that signs the
/// wrong bytes (a digest callback given `DEPOSITKIT_SIGN_INPUT_MESSAGE`, or the reverse).
///
/// Threads: the callback runs on a thread owned by the library (a worker of its runtime's
/// blocking pool, never an async worker), while a sweep, a refund or a recovery of the client
/// signs a transfer, in the background or in a blocking call such as
/// `depositkit_deposit_client_sweep`; never on the thread that made that call. A client signs
/// one transfer at a time, but a call the client's watchdog gave up on (`processingTimeoutMs`)
/// may still be running when the next one starts, so it must be safe to call from several
/// threads at once. It may block (a network call to a KMS), within the client's
/// `callTimeoutMs` and `processingTimeoutMs`. It may call the
/// non-blocking depositkit functions; the blocking ones of a deposit client fail there with
/// `DEPOSITKIT_STATUS_INTERNAL`.
///
/// A callback must not unwind (a C++ exception) or `longjmp` out of the call: that is undefined
/// behaviour.
#[allow(non_camel_case_types)]
pub type depositkit_sign_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, message: *const u8, out_signature: *mut u8) -> i32,
>;

type RawSignFn = unsafe extern "C" fn(*mut c_void, *const u8, *mut u8) -> i32;

/// The host's `user_data` with its `user_data_free`, owned by the library: dropping it calls
/// `user_data_free` once.
struct HostUserData {
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
}

// SAFETY: the caller of `depositkit_deposit_client_new_with_signer` promises that the callback
// may be called with `user_data` on the library's threads, several at once, and that
// `user_data_free` may be called on any thread; depositkit never dereferences `user_data`.
unsafe impl Send for HostUserData {}
// SAFETY: as above.
unsafe impl Sync for HostUserData {}

impl Drop for HostUserData {
    fn drop(&mut self) {
        if let Some(free) = self.user_data_free {
            // SAFETY: the caller promised `user_data_free` may be called once with `user_data`,
            // on any thread: `Drop` runs once, after every call of the callback returned (each
            // holds a reference to this value).
            unsafe { free(self.user_data) };
        }
    }
}

/// A C signing function and its `user_data`, as the closure of a `CallbackSigner`.
struct HostSigner {
    sign: RawSignFn,
    data: HostUserData,
}

impl HostSigner {
    /// One signature: the callback's answer, or the failure it returned.
    fn call(&self, message: &[u8; 32]) -> depositkit_core::Result<[u8; 65]> {
        let mut signature = [0u8; 65];
        // SAFETY: the caller of `depositkit_deposit_client_new_with_signer` promised a callback
        // that reads 32 bytes of `message` and writes at most 65 bytes to `out_signature`
        // during the call, may be called with its `user_data` on this thread and never
        // unwinds; both buffers live until the call returns.
        let status =
            unsafe { (self.sign)(self.data.user_data, message.as_ptr(), signature.as_mut_ptr()) };
        if status != 0 {
            return Err(Error::new(
                ErrorKind::Authentication,
                format!("the signer callback failed: it returned {status}"),
            ));
        }
        Ok(signature)
    }
}

/// `input` as the core's [`CallbackInput`]: `DEPOSITKIT_STATUS_INVALID_ARGUMENT` naming it when
/// it is neither constant.
fn input_arg(input: u32) -> FfiResult<CallbackInput> {
    match input {
        DEPOSITKIT_SIGN_INPUT_DIGEST => Ok(CallbackInput::Digest),
        DEPOSITKIT_SIGN_INPUT_MESSAGE => Ok(CallbackInput::Message),
        other => Err(FfiError::new(
            depositkit_status::InvalidArgument,
            format!(
                "input must be DEPOSITKIT_SIGN_INPUT_DIGEST (0) or DEPOSITKIT_SIGN_INPUT_MESSAGE \
                 (1), not {other}"
            ),
        )),
    }
}

/// Creates a deposit client, as `depositkit_deposit_client_new` does from the same
/// `config_json`, whose owner signs through the host's function `sign`: the third signer of
/// the `particle` backend (`docs/particle.md` section 4.2), for a key kept in a KMS, an HSM or a
/// wallet service. The two others, a key and a master seed, are options of `config_json`
/// (`docs/options.md`); a signer given here takes their place.
///
/// - `signer_address`: the address of the key `sign` signs with (an EVM address, any letter
///   case). It is the owner of the universal account: its deposit addresses are that account's.
/// - `input`: what `sign` is given, `DEPOSITKIT_SIGN_INPUT_DIGEST` (the EIP-191 digest, to sign
///   as it is) or `DEPOSITKIT_SIGN_INPUT_MESSAGE` (the root hash, to `personal_sign`).
/// - `sign`: the function (see `depositkit_sign_fn` for what it must do, its threads and how
///   its answers are checked), called with `user_data`.
/// - `user_data_free` (NULL: none) releases `user_data`.
///
/// Ownership of `user_data` passes to the library with this call, whatever it returns:
/// `user_data_free` is called with it exactly once, on failure before this returns, on success
/// when the client is freed (`depositkit_deposit_client_free`) or, when a call of `sign` is
/// running then, on that call's thread right after it returns. Never while a call of `sign` is
/// running. `depositkit_deposit_client_close` does not release it.
///
/// Nothing is sent and `sign` is not called here: it is called when a transfer is signed.
///
/// On success `*out_client` is a new handle owned by the caller: release it with
/// `depositkit_deposit_client_free`. On failure `*out_client` is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` for what
/// `depositkit_deposit_client_new` refuses, and when `signer_address` is not an EVM address
/// (the message quotes it); `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `input` is neither
/// constant; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `config_json`, `signer_address`, `sign` or
/// `out_client` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8` when a string is not UTF-8;
/// `DEPOSITKIT_STATUS_INTERNAL` when a thread cannot be started.
///
/// Thread-safe; does not block.
///
/// # Safety
/// `config_json` and `signer_address` must be NULL or NUL-terminated strings; `out_client` must
/// be NULL or point to a writable `const depositkit_deposit_client *`. `sign` must follow the
/// rules of `depositkit_sign_fn`; `user_data` (which may be NULL) must stay valid for it until
/// `user_data_free` is called (without `user_data_free`, until the client is freed) and may be
/// used on the library's threads, by several calls at once; `user_data_free` must be safe to
/// call on any thread and must not unwind or `longjmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_new_with_signer(
    config_json: *const c_char,
    signer_address: *const c_char,
    input: u32,
    sign: depositkit_sign_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    out_client: *mut *const depositkit_deposit_client,
) -> depositkit_status {
    // Held first: every early return below releases `user_data`.
    let data = HostUserData { user_data, user_data_free };
    boundary::status(move || {
        // SAFETY: the caller's contract above.
        let config_json = unsafe { strings::str_arg(config_json, "config_json") }?;
        // SAFETY: the caller's contract above.
        let signer_address = unsafe { strings::str_arg(signer_address, "signer_address") }?;
        let input = input_arg(input)?;
        let sign = sign.ok_or_else(|| FfiError::null_argument("sign"))?;
        // SAFETY: the caller's contract above.
        let out_client = unsafe { boundary::out(out_client, "out_client") }?;
        let host = HostSigner { sign, data };
        let signer = CallbackSigner::new(signer_address, input, move |message| host.call(message))?;
        let config =
            DepositClientConfig::from_json(config_json)?.with_signer_source(Arc::new(signer));
        out_client.write(new_handle(config)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests;
