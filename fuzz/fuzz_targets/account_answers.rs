//! The account service's answers (`docs/protocol.md` §3), parsed by the pure functions the
//! client runs on each HTTP reply: balances, sweep quote, sweep send, sweep status, receipts.
//!
//! Input: byte 0 picks the answer, byte 1 the HTTP status; the rest, as UTF-8 (lossily), is the
//! body.
//! Properties: no panic; only a 2xx body parses to a value (every amount in it a decimal below
//! 2^256, read exactly); a send's 429/5xx is an unknown outcome, any other non-2xx a refusal;
//! a sweep status is `None` only for 404 `NOT_SENT`; a send result re-serialises to itself.
#![no_main]

use depositkit_core::ErrorKind;
use depositkit_core::services::account::{
    parse_balances, parse_quote, parse_receipts, parse_send, parse_sweep_status,
};
use depositkit_core::services::{CallError, SendError, SendResult};
use depositkit_core::units::{U256, parse_raw_amount};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const STATUSES: [u16; 14] = [200, 200, 200, 200, 201, 299, 302, 400, 401, 404, 409, 429, 500, 503];

fuzz_target!(|data: &[u8]| {
    let [which, s, rest @ ..] = data else { return };
    let status = STATUSES[usize::from(*s) % STATUSES.len()];
    let body = String::from_utf8_lossy(rest).into_owned();
    let json: Option<Value> = serde_json::from_str(&body).ok();
    let ok_status = (200..300).contains(&status);
    match which % 5 {
        0 => match parse_balances(status, body) {
            Ok(accounts) => {
                assert!(ok_status);
                let json = json.expect("parsed from JSON");
                for (id, lines) in &accounts {
                    let sent = json["accounts"][id]["balances"].as_array().expect("as sent");
                    assert_eq!(sent.len(), lines.len());
                    for (line, sent) in lines.iter().zip(sent) {
                        assert_eq!(Some(line.raw_amount), amount(&sent["rawAmount"]));
                        assert_eq!(Some(line.received), amount(&sent["received"]));
                        assert_eq!(sent["token"].as_str(), Some(line.token.as_str()));
                    }
                }
            }
            Err(err) => call_error(status, err),
        },
        1 => match parse_quote(status, body) {
            Ok(quote) => {
                assert!(ok_status);
                let json = json.expect("parsed from JSON");
                assert_eq!(
                    Some(quote.destination_raw_amount),
                    amount(&json["destination"]["rawAmount"])
                );
                assert_eq!(json["quoteId"].as_str(), Some(quote.quote_id.as_str()));
            }
            Err(err) => call_error(status, err),
        },
        2 => match parse_send(status, body) {
            Ok(result) => {
                assert!(ok_status);
                send_result_round_trip(&result);
            }
            Err(SendError::Unknown { error, maybe_sent }) => {
                assert!(maybe_sent, "an answered send may have been executed");
                if status == 429 || status >= 500 {
                    assert_eq!(error.kind(), ErrorKind::Network, "{error}");
                } else {
                    assert!(ok_status, "HTTP {status}: {error}");
                    assert_eq!(error.kind(), ErrorKind::Protocol, "{error}");
                }
            }
            Err(SendError::Refused(e)) => {
                assert!(!ok_status && status != 429 && status < 500, "HTTP {status} refused");
                assert_eq!(e.status, status);
            }
        },
        3 => match parse_sweep_status(status, body) {
            Ok(Some(result)) => {
                assert!(ok_status);
                send_result_round_trip(&result);
            }
            Ok(None) => {
                assert_eq!(status, 404);
                assert_eq!(json.expect("JSON")["error"]["code"], "NOT_SENT");
            }
            Err(err) => call_error(status, err),
        },
        _ => match parse_receipts(status, body) {
            Ok(receipts) => {
                assert!(ok_status);
                let json = json.expect("parsed from JSON");
                let sent = json["receipts"].as_array().expect("as sent");
                assert_eq!(sent.len(), receipts.len());
                for (r, sent) in receipts.iter().zip(sent) {
                    assert_eq!(Some(r.raw_amount), amount(&sent["rawAmount"]));
                    assert_eq!(Some(r.received_before), amount(&sent["receivedBefore"]));
                    assert_eq!(Some(r.received_after), amount(&sent["receivedAfter"]));
                    assert!(r.sender.as_ref().is_none_or(|s| !s.trim().is_empty()));
                }
            }
            Err(err) => call_error(status, err),
        },
    }
});

/// A decimal amount as the service sends it, read independently of the library.
fn amount(value: &Value) -> Option<U256> {
    let text = value.as_str()?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let parsed = U256::from_str_radix(text, 10).ok()?;
    assert_eq!(parse_raw_amount(text).ok(), Some(parsed));
    Some(parsed)
}

/// A non-2xx status is the service's error; a 2xx one that did not parse is a protocol error.
fn call_error(status: u16, err: CallError) {
    match err {
        CallError::Service(e) => {
            assert!(!(200..300).contains(&status), "a 2xx answer taken for an error");
            assert_eq!(e.status, status);
            assert!(!e.code.is_empty());
        }
        CallError::Transport(e) => {
            assert!((200..300).contains(&status), "HTTP {status}: {e}");
            assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
        }
        CallError::Session(e) => panic!("no session is involved in parsing: {e}"),
    }
}

fn send_result_round_trip(result: &SendResult) {
    let text = serde_json::to_string(result).unwrap();
    let again: SendResult = serde_json::from_str(&text).unwrap();
    assert_eq!(&again, result);
}
