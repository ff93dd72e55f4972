use std::ffi::CStr;

use depositkit_core::TokenType;
use depositkit_core::deposit::ClientStatus;

use super::client_status::CLIENT_STATUSES;
use super::*;

#[test]
fn statuses_match_the_core_names() {
    for (status, name) in CLIENT_STATUSES {
        let core: ClientStatus = name.to_str().unwrap().parse().unwrap();
        assert_eq!(depositkit_client_status::from(core), status);
        // SAFETY: the function returns a static NUL-terminated string.
        let got = unsafe { CStr::from_ptr(depositkit_client_status_str(status as u32)) };
        assert_eq!(got, name);
    }
    // SAFETY: as above.
    let got = unsafe { CStr::from_ptr(depositkit_client_status_str(6)) };
    assert_eq!(got, c"unknown");
}

#[test]
fn destinations_are_read_with_named_errors() {
    let d = destination_arg(r#"{"chainId": 42161, "address": "0xab", "token": "usdt"}"#).unwrap();
    assert_eq!(d, DestinationConfig::chain(42161).with_address("0xab").with_token(TokenType::USDT));
    let d = destination_arg(r#"{"chainId": 8453, "address": null}"#).unwrap();
    assert_eq!(d, DestinationConfig::chain(8453));
    let cases = [
        ("{", "destination_json is not valid JSON"),
        ("[1]", "destination must be an object"),
        (r#"{"chainId": 1, "chain": 2}"#, "unknown key \"chain\""),
        (r#"{"address": "0xab"}"#, "destination.chainId is required"),
        (r#"{"chainId": -1}"#, "Invalid destination chain ID: -1."),
        (r#"{"chainId": 1, "address": 5}"#, "destination.address must be a string, got a number"),
        (r#"{"chainId": 1, "token": "DOGE"}"#, "destination.token must be one of"),
        (r#"{"chainId": 1, "token": true}"#, "destination.token must be a token symbol"),
    ];
    for (json, want) in cases {
        let err = destination_arg(json).unwrap_err();
        assert_eq!(err.status, depositkit_status::Configuration, "{json}");
        assert!(err.message.contains(want), "{json}: {}", err.message);
    }
}
