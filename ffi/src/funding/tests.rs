use depositkit_core::funding::ProviderError;
use serde_json::Value;

use super::callback::{Answer, PendingReply, answer};
use super::provider::contained;
use crate::boundary::FfiError;
use crate::status::depositkit_status;

#[test]
fn reply_handles_are_numbers_never_reused() {
    let a = PendingReply::open();
    let b = PendingReply::open();
    assert_ne!(a.handle(), b.handle());
    assert!(!a.handle().is_null());
    let handle = a.handle();
    answer(handle, || Ok(Answer::Result(Value::from(7)))).unwrap();
    let again = answer(handle, || Ok(Answer::Result(Value::Null))).unwrap_err();
    assert_eq!(again.status, depositkit_status::InvalidArgument);
    assert!(again.message.contains("answered already"), "{}", again.message);
    assert!(matches!(a.take(), Some(Answer::Result(v)) if v == 7));
    drop(a);
    let late = answer(handle, || Ok(Answer::Result(Value::Null))).unwrap_err();
    assert!(late.message.contains("not a pending provider request"), "{}", late.message);
    // A failing answer leaves the request unanswered.
    let bad = answer(b.handle(), || Err(FfiError::new(depositkit_status::InvalidArgument, "bad")));
    assert!(bad.is_err());
    assert!(b.take().is_none());
}

#[test]
fn a_panic_in_the_bridging_is_a_provider_failure() {
    let err = contained("eth_chainId", || panic!("bridging bug")).unwrap_err();
    assert_eq!(err.code, ProviderError::INTERNAL);
    assert!(err.message.contains("panicked while calling the provider for eth_chainId"));
    assert_eq!(contained("x", || Ok(Value::from(1))).unwrap(), Value::from(1));
    // A pending reply is closed when the call unwinds: a late answer finds nothing.
    let mut handle = std::ptr::null_mut();
    let _ = contained("eth_accounts", || {
        let reply = PendingReply::open();
        handle = reply.handle();
        panic!("after opening a reply")
    });
    let late = answer(handle, || Ok(Answer::Result(Value::Null))).unwrap_err();
    assert_eq!(late.status, depositkit_status::InvalidArgument);
}
