//! Error messages are for people: they name values plainly and stay short whatever the input.
//!
//! Two guards: every user-facing message produced from hostile input carries no Rust debug text
//! (`Ok(…)`, `Some(…)`, a type path) and is bounded; and no `format!` outside the test modules of
//! the crates' sources writes a value with `{:?}` (Rust's `Debug` form — `Ok(99)`, `2s`,
//! `Some("x")`), so a new message cannot bring it back unnoticed.

use std::path::Path;
use std::time::Duration;

use depositkit_core::describe::MAX_MESSAGE_CHARS;
use depositkit_core::{
    DepositClientConfig, Error, TokenType, UserRpcClient, UserRpcClientOptions, parse_raw_amount,
    parse_units, validate_address_for_chain,
};

const RUST_DEBUG_TEXT: [&str; 6] = ["Ok(", "Err(", "Some(", "None", "::", "\\u{"];

fn assert_plain(error: &Error, input: &str) {
    let message = error.message();
    for text in RUST_DEBUG_TEXT {
        assert!(!message.contains(text), "{text} in the message for {input:.80}: {message}");
    }
    let chars = message.chars().count();
    assert!(chars <= MAX_MESSAGE_CHARS, "{chars} characters for {input:.80}: {message:.200}");
}

fn long(c: char, n: usize) -> String {
    std::iter::repeat_n(c, n).collect()
}

#[test]
fn messages_from_hostile_input_are_plain_and_bounded() {
    let huge = long('k', 5_000);
    let configs = [
        format!(r#"{{"ownerAddress": "0x52908400098527886E0F7030069857D2E4169EE7", "{huge}": 1}}"#),
        format!(r#"{{"ownerAddress": "{huge}", "destination": {{"chainId": 8453}}}}"#),
        format!(
            r#"{{"ownerAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
                "destination": {{"chainId": 8453, "token": "{huge}"}}}}"#
        ),
        format!(
            r#"{{"ownerAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
                "destination": {{"chainId": 8453}}, "servicesUrl": "ftp://{huge}"}}"#
        ),
        format!(
            r#"{{"ownerAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
                "destination": {{"chainId": 8453}}, "refund": {{"{huge}": true}}}}"#
        ),
        r#"{"ownerAddress": 5}"#.to_owned(),
        r#"{"ownerAddress": null, "destination": []}"#.to_owned(),
        format!("[{huge}"),
    ];
    for text in &configs {
        let Err(error) = DepositClientConfig::from_json(text).and_then(|c| c.validate()) else {
            panic!("accepted: {text:.200}");
        };
        assert_plain(&error, text);
    }
    for (address, chain) in [(huge.as_str(), 8453), ("0xzz", 1), ("\n", 101), ("O0", 101)] {
        assert_plain(&validate_address_for_chain(address, chain).unwrap_err(), address);
    }
    for text in [huge.as_str(), "1.2.3", "-1", "1e5", "\u{1F600}"] {
        assert_plain(&parse_units(text, 6).unwrap_err(), text);
        assert_plain(&parse_raw_amount(text).unwrap_err(), text);
        assert_plain(&text.parse::<TokenType>().unwrap_err(), text);
    }
    let options = UserRpcClientOptions { timeout: Duration::ZERO, ..Default::default() };
    let error = UserRpcClient::new("http://127.0.0.1:1/x", "p", "k", options).unwrap_err();
    assert_plain(&error, "timeout 0");
    assert!(error.message().contains("timeout 0 µs is out of range"), "{}", error.message());
    assert!(error.message().contains("at most 86400 s"), "{}", error.message());
    let error = UserRpcClient::new(&format!("http://{huge}"), "p", "k", Default::default());
    if let Err(error) = error {
        assert_plain(&error, "a huge URL");
    }
}

/// The Particle backend and the server-side signers: hostile keys, seeds, addresses, amounts,
/// URLs and service answers make plain, bounded messages that never show a secret.
#[test]
fn particle_and_signer_messages_from_hostile_input_are_plain_and_bounded() {
    use depositkit_core::services::particle::{
        Credentials, ParticleClient, ParticleConfig, ParticleEndpoint, amounts, answers,
    };
    use depositkit_core::signer::{CallbackInput, CallbackSigner, KeySigner, SeedSigner};
    use serde_json::json;

    let huge = long('k', 5_000);
    let secret_hex = "ab".repeat(31);
    let mut errors: Vec<(Error, String)> = Vec::new();
    for text in [huge.as_str(), secret_hex.as_str(), "0x", "\u{1F600}", "zz"] {
        for secret in
            [KeySigner::from_hex(text).unwrap_err(), SeedSigner::from_hex(text).unwrap_err()]
        {
            if text.len() >= 16 {
                assert!(!secret.message().contains(&text[..16]), "{}", secret.message());
            }
            errors.push((secret, text.to_owned()));
        }
        let callback = CallbackSigner::new(text, CallbackInput::Digest, |_| Ok([0u8; 65]));
        errors.push((callback.unwrap_err(), text.to_owned()));
        let seed = SeedSigner::from_bytes(&[7u8; 32]).unwrap();
        errors.push((seed.derive(text).unwrap_err(), text.to_owned()));
        errors.push((amounts::parse_decimal(text).unwrap_err(), text.to_owned()));
        errors.push((amounts::read_wire("amount", &json!(text)).unwrap_err(), text.to_owned()));
        let answer = json!([{"smartAccountAddress": text}]);
        errors.push((answers::parse_smart_account(&answer).unwrap_err(), text.to_owned()));
        let answer = json!({"transactionId": "T", "feeQuotes": [{"userOps": [
            {"chainId": 8453, "userOpHash": text, "userOp": {}}]}]});
        errors.push((answers::parse_created(&answer, 0).unwrap_err(), text.to_owned()));
        let answer = json!({"totalAmountInUSD": text, "assets": []});
        errors.push((answers::parse_primary_assets(&answer).unwrap_err(), text.to_owned()));
        let answer = json!([{"status": text}]);
        errors.push((answers::parse_transactions(&answer, 1, 10).unwrap_err(), text.to_owned()));
        let config = ParticleConfig {
            endpoint: Some(ParticleEndpoint::Url(format!("ftp://{text}"))),
            credentials: Some(Credentials::new("pid", "key").unwrap()),
            ..Default::default()
        };
        errors.push((ParticleClient::new(config).unwrap_err(), text.to_owned()));
    }
    let answer = json!({"totalAmountInUSD": "0x0", "assets": [{"amount": "0x0", "amountInUSD": "0x0",
        "chainAggregation": [{"amount": "0x0", "amountInUSD": "0x0", "token": {"realDecimals": 99}}]}]});
    errors.push((answers::parse_primary_assets(&answer).unwrap_err(), "realDecimals 99".into()));
    let config = ParticleConfig {
        endpoint: Some(ParticleEndpoint::Url(format!("https://user:{secret_hex}@host/"))),
        credentials: Some(Credentials::new("pid", "key").unwrap()),
        ..Default::default()
    };
    let error = ParticleClient::new(config).unwrap_err();
    assert!(!error.message().contains(&secret_hex[..16]), "{}", error.message());
    errors.push((error, "a URL with a password".into()));
    for (error, input) in &errors {
        assert_plain(error, input);
    }
}

/// The user-facing sources of the workspace, test modules left out.
fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "tests") {
                // `tests/` folders and `tests.rs` files are test modules.
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default().to_owned();
            out.push((path.display().to_string(), code));
        }
    }
}

#[test]
fn no_message_is_written_with_rusts_debug_form() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for crate_dir in ["core/src", "ffi/src", "python/src", "devnet/src"] {
        sources(&root.join(crate_dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let debug_placeholder = regex_lite_debug();
    let mut found = Vec::new();
    for (path, code) in &files {
        for (n, line) in code.lines().enumerate() {
            // Assertions, panics and Debug impls are for developers; describe.rs quotes with
            // Debug on purpose (string escaping), bounded.
            let for_developers = ["assert", "panic!", "unreachable!", "expect(", "debug_struct"]
                .iter()
                .any(|d| line.contains(d));
            if !for_developers && !path.ends_with("describe.rs") && debug_placeholder(line) {
                found.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "values written with {{:?}} in messages:\n{}", found.join("\n"));
}

/// Whether `line` holds a format placeholder with the `?` (Debug) spec: `{:?}`, `{x:?}`,
/// `{:#?}`, `{x:>8?}`.
fn regex_lite_debug() -> impl Fn(&str) -> bool {
    |line: &str| {
        let bytes = line.as_bytes();
        let mut i = 0;
        while let Some(open) = line[i..].find('{') {
            let start = i + open + 1;
            if bytes.get(start) == Some(&b'{') {
                i = start + 1;
                continue;
            }
            let Some(close) = line[start..].find('}') else { return false };
            let inside = &line[start..start + close];
            if let Some(colon) = inside.find(':') {
                let name = &inside[..colon];
                let spec = &inside[colon + 1..];
                let name_ok = name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
                if name_ok && spec.ends_with('?') && !spec.contains(' ') {
                    return true;
                }
            }
            i = start + close + 1;
        }
        false
    }
}
