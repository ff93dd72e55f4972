//! The signer wrapper alone: its failure and the release of `user_data` (the C flow is
//! `tests/c/test_particle_signers.c`).

use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};

use depositkit_core::signer::SignerSource;

use super::*;

/// How many times `count_free` ran.
static FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_free(_user_data: *mut c_void) {
    FREED.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn refuse(_user_data: *mut c_void, _message: *const u8, _out: *mut u8) -> i32 {
    7
}

#[test]
fn a_nonzero_answer_is_an_authentication_error_and_user_data_is_freed_once() {
    let before = FREED.load(Ordering::SeqCst);
    let host = HostSigner {
        sign: refuse,
        data: HostUserData { user_data: null_mut(), user_data_free: Some(count_free) },
    };
    let signer = CallbackSigner::new(
        "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        CallbackInput::Digest,
        move |message| host.call(message),
    )
    .unwrap();
    let owner = signer.signer_for("0x52908400098527886e0f7030069857d2e4169ee7").unwrap();
    let e = owner.personal_sign(&Default::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication);
    assert_eq!(e.message(), "the signer callback failed: it returned 7");
    assert_eq!(FREED.load(Ordering::SeqCst), before);
    drop(owner);
    drop(signer);
    assert_eq!(FREED.load(Ordering::SeqCst), before + 1);
}

#[test]
fn input_is_checked() {
    assert_eq!(input_arg(0).unwrap(), CallbackInput::Digest);
    assert_eq!(input_arg(1).unwrap(), CallbackInput::Message);
    let e = input_arg(2).unwrap_err();
    assert_eq!(e.status, depositkit_status::InvalidArgument);
    assert!(e.message.contains("not 2"), "{}", e.message);
}
