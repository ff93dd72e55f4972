//! The user-lookup client's JSON-RPC response handling: `users::interpret_reply` (the HTTP
//! status and body of an answer → the `result`, or the error it stands for), then what each
//! method makes of its `result` (`user_from_result`, `project_user_answer`).
//!
//! Input: byte 0 picks the HTTP status, byte 1 the method and the request id; the rest, as
//! UTF-8 (lossily), is the body.
//! Properties: no panic; a result only from a 200 JSON-RPC 2.0 object with the request's id;
//! credentials refusals are authentication errors; a parsed user re-serialises to itself.
#![no_main]

use depositkit_core::ErrorKind;
use depositkit_core::users::{User, interpret_reply, project_user_answer, user_from_result};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const STATUSES: [u16; 12] = [200, 200, 200, 200, 201, 204, 400, 401, 403, 404, 429, 500];
const METHODS: [&str; 3] = ["getUserInfo", "getUserInfoByIdentity", "isProjectUser"];
const PROJECT: &str = "proj_fuzz";

fuzz_target!(|data: &[u8]| {
    let [a, b, rest @ ..] = data else { return };
    let status = STATUSES[usize::from(*a) % STATUSES.len()];
    let method = METHODS[usize::from(*b) % METHODS.len()];
    // Ids 1 to 8: the seeds use small ids, so the fuzzer reaches both matching and not.
    let id = u64::from(*b / 3 % 8) + 1;
    let body = String::from_utf8_lossy(rest);

    let outcome = interpret_reply(PROJECT, method, id, status, &body);
    let envelope: Option<Value> = serde_json::from_str(&body).ok();
    match outcome {
        Ok(result) => {
            assert_eq!(status, 200, "a result from HTTP {status}");
            let envelope = envelope.as_ref().expect("a result from a body that is not JSON");
            assert_eq!(envelope["jsonrpc"], "2.0");
            assert_eq!(envelope["id"].as_u64(), Some(id));
            assert!(envelope.get("error").is_none(), "a result from an error answer");
            assert_eq!(envelope.get("result"), Some(&result));
            method_result(method, result);
        }
        Err(err) => {
            if status == 401 || status == 403 {
                assert_eq!(err.kind(), ErrorKind::Authentication, "{err}");
            } else {
                assert!(
                    matches!(
                        err.kind(),
                        ErrorKind::Protocol
                            | ErrorKind::Rpc
                            | ErrorKind::Authentication
                            | ErrorKind::NotFound
                    ),
                    "{:?}: {err}",
                    err.kind()
                );
            }
            if err.kind() == ErrorKind::Rpc || err.kind() == ErrorKind::NotFound {
                let rpc = err.rpc_error().expect("an RPC error keeps the error object");
                let object = &envelope.as_ref().expect("JSON")["error"];
                assert_eq!(object["code"].as_i64(), Some(rpc.code));
            }
        }
    }
    // The `result` parsers on their own, on any JSON at all.
    if let Some(value) = envelope {
        method_result(METHODS[usize::from(*a) % METHODS.len()], value);
    }
});

fn method_result(method: &str, result: Value) {
    if method == "isProjectUser" {
        match project_user_answer(result.clone()) {
            Ok(answer) => assert_eq!(result, Value::Bool(answer)),
            Err(err) => {
                assert_eq!(err.kind(), ErrorKind::Protocol);
                assert!(!result.is_boolean());
            }
        }
        return;
    }
    match user_from_result(method, result) {
        Ok(user) => {
            assert!(user.created_at_time().is_some(), "{:?}", user.created_at);
            assert!(user.updated_at_time().is_some(), "{:?}", user.updated_at);
            // The record as the service sends it reads back as the same record.
            let again = user_from_result(method, user.to_json()).expect("a user's own JSON");
            assert_eq!(again, user);
            let text = serde_json::to_string(&user).unwrap();
            assert_eq!(serde_json::from_str::<User>(&text).unwrap(), user);
        }
        Err(err) => {
            assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
            assert!(
                err.message().starts_with(&format!("{method} returned a malformed user record"))
            );
        }
    }
}
