//! The C ABI called from Rust exactly as a C program calls it: raw pointers, NUL-terminated
//! strings, statuses, out parameters and the per-thread last error.

use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

use depositkit::address::*;
use depositkit::chains::*;
use depositkit::status::*;
use depositkit::strings::depositkit_string_free;
use depositkit::tokens::*;
use depositkit::units::*;
use depositkit::*;

const EIP55: &CStr = c"0x52908400098527886E0F7030069857D2E4169EE7";
/// EIP55 with the case of its last letter flipped: the checksum no longer matches.
const EIP55_FLIPPED: &CStr = c"0x52908400098527886E0F7030069857D2E4169Ee7";
const USDC_MINT: &CStr = c"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const U256_MAX: &str =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

const ETH: u32 = depositkit_token_type::Eth as u32;
const USDC: u32 = depositkit_token_type::Usdc as u32;
const USDT: u32 = depositkit_token_type::Usdt as u32;
const BTC: u32 = depositkit_token_type::Btc as u32;
const SOL: u32 = depositkit_token_type::Sol as u32;
const BNB: u32 = depositkit_token_type::Bnb as u32;

/// This thread's last-error message, read the way a C caller does: size first, then copy.
fn last_error() -> String {
    let mut n = usize::MAX;
    let status = unsafe { depositkit_last_error_message(null_mut(), 0, &mut n) };
    assert!(
        matches!(status, depositkit_status::Ok | depositkit_status::BufferTooSmall),
        "{status:?}"
    );
    let mut buf = vec![0x55 as c_char; n + 1];
    let mut n2 = 0;
    let status = unsafe { depositkit_last_error_message(buf.as_mut_ptr(), buf.len(), &mut n2) };
    assert_eq!(status, depositkit_status::Ok);
    assert_eq!(n2, n);
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
    assert_eq!(text.len(), n);
    text.to_owned()
}

/// Takes ownership of a string depositkit handed out, frees it, returns its text.
fn take(p: *mut c_char) -> String {
    assert!(!p.is_null());
    let text = unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned();
    unsafe { depositkit_string_free(p) };
    text
}

/// Puts a known failure into this thread's last error.
fn fail_something() {
    let status = unsafe { depositkit_parse_units(c"-1".as_ptr(), 6, &mut null_mut()) };
    assert_eq!(status, depositkit_status::InvalidArgument);
    assert!(!last_error().is_empty());
}

fn chain_name(id: u64) -> String {
    let mut out = null_mut();
    assert_eq!(unsafe { depositkit_get_chain_name(id, &mut out) }, depositkit_status::Ok);
    take(out)
}

fn format_units(raw: &CStr, decimals: u32) -> Result<String, (depositkit_status, String)> {
    let mut out = null_mut();
    match unsafe { depositkit_format_units(raw.as_ptr(), decimals, &mut out) } {
        depositkit_status::Ok => Ok(take(out)),
        status => {
            assert!(out.is_null(), "out_text written on failure");
            Err((status, last_error()))
        }
    }
}

fn parse_units(text: &CStr, decimals: u32) -> Result<String, (depositkit_status, String)> {
    let mut out = null_mut();
    match unsafe { depositkit_parse_units(text.as_ptr(), decimals, &mut out) } {
        depositkit_status::Ok => Ok(take(out)),
        status => {
            assert!(out.is_null(), "out_raw written on failure");
            Err((status, last_error()))
        }
    }
}

fn destination(token: u32, chain: u64) -> bool {
    let mut out = false;
    assert_eq!(
        unsafe { depositkit_is_supported_destination_token(token, chain, &mut out) },
        depositkit_status::Ok
    );
    out
}

fn onramp(token: u32, chain: u64) -> bool {
    let mut out = false;
    assert_eq!(
        unsafe { depositkit_is_onramp_token_supported(token, chain, &mut out) },
        depositkit_status::Ok
    );
    out
}

#[test]
fn chain_names_including_unknown_ids() {
    assert_eq!(chain_name(1), "Ethereum");
    assert_eq!(chain_name(depositkit_chain::Bnb as u64), "BNB Chain");
    assert_eq!(chain_name(196), "X Layer");
    assert_eq!(chain_name(7), "Unknown Chain (7)");
    assert_eq!(chain_name(u64::MAX), format!("Unknown Chain ({})", u64::MAX));
    assert_eq!(last_error(), "");
}

#[test]
fn destination_chains_and_address_types() {
    for id in [1, 8453, 42161, 56, 101] {
        assert!(depositkit_is_valid_destination_chain(id), "{id}");
    }
    for id in [0, 10, 137, 196, 7] {
        assert!(!depositkit_is_valid_destination_chain(id), "{id}");
    }
    assert_eq!(depositkit_get_address_type(101), depositkit_address_type::Solana);
    assert_eq!(depositkit_get_address_type(1), depositkit_address_type::Evm);
    assert_eq!(depositkit_get_address_type(123_456), depositkit_address_type::Evm);
}

#[test]
fn destination_matrix_cells() {
    // rows: token; columns: Ethereum, Base, Arbitrum, BNB Chain, Solana
    let cols = [1u64, 8453, 42161, 56, 101];
    let rows = [
        (USDC, [true, true, true, true, true]),
        (USDT, [true, false, true, true, true]),
        (ETH, [true, true, true, true, false]),
        (SOL, [false, false, false, false, true]),
        (BTC, [false; 5]),
        (BNB, [false; 5]),
    ];
    for (token, expected) in rows {
        for (chain, want) in cols.iter().zip(expected) {
            assert_eq!(destination(token, *chain), want, "token {token} on {chain}");
        }
        assert!(!destination(token, 196), "nothing is delivered on X Layer");
    }
}

#[test]
fn onramp_cells() {
    assert!(onramp(USDC, 101));
    assert!(onramp(USDT, 56));
    assert!(onramp(ETH, 8453));
    assert!(!onramp(ETH, 42161));
    assert!(onramp(BNB, 56));
    assert!(!onramp(BNB, 1));
    assert!(!onramp(BTC, 1));
    assert!(!onramp(USDC, 196));
}

#[test]
fn tokens_symbols_and_decimals() {
    let mut token = u32::MAX;
    for (text, want) in [(c"usdc", USDC), (c"Sol", SOL), (c"BNB", BNB)] {
        assert_eq!(
            unsafe { depositkit_token_type_from_str(text.as_ptr(), &mut token) },
            depositkit_status::Ok
        );
        assert_eq!(token, want);
    }

    let mut symbol: *const c_char = null();
    assert_eq!(unsafe { depositkit_token_symbol(USDT, &mut symbol) }, depositkit_status::Ok);
    assert_eq!(unsafe { CStr::from_ptr(symbol) }, c"USDT");

    let decimals = |token, chain| {
        let mut out = 0u8;
        assert_eq!(
            unsafe { depositkit_get_token_decimals(token, chain, &mut out) },
            depositkit_status::Ok
        );
        out
    };
    assert_eq!(decimals(USDC, 56), 18);
    assert_eq!(decimals(USDT, 56), 18);
    assert_eq!(decimals(USDC, 1), 6);
    assert_eq!(decimals(USDC, 0), 6, "chain 0 means no chain");
    assert_eq!(decimals(BTC, 0), 8);
    assert_eq!(decimals(SOL, 101), 9);

    let mut tokens = [u32::MAX; 8];
    assert_eq!(unsafe { depositkit_default_supported_tokens(null_mut(), 0) }, 6);
    assert_eq!(
        unsafe { depositkit_default_supported_tokens(null_mut(), 4) },
        6,
        "NULL writes nothing"
    );
    assert_eq!(unsafe { depositkit_default_supported_tokens(tokens.as_mut_ptr(), 3) }, 6);
    assert_eq!(tokens[..4], [ETH, USDC, USDT, u32::MAX]);
    assert_eq!(
        unsafe { depositkit_default_supported_tokens(tokens.as_mut_ptr(), tokens.len()) },
        6
    );
    assert_eq!(tokens, [ETH, USDC, USDT, BTC, SOL, BNB, u32::MAX, u32::MAX]);
}

#[test]
fn token_info_json_and_not_found() {
    let mut out = null_mut();
    assert_eq!(unsafe { depositkit_token_info_json(USDC, 56, &mut out) }, depositkit_status::Ok);
    let json: serde_json::Value = serde_json::from_str(&take(out)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "token": "USDC",
            "chainId": 56,
            "contract": "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d",
            "bridgedContract": null,
            "decimals": 18,
        })
    );

    let mut out = null_mut();
    assert_eq!(unsafe { depositkit_token_info_json(ETH, 8453, &mut out) }, depositkit_status::Ok);
    let json: serde_json::Value = serde_json::from_str(&take(out)).unwrap();
    assert_eq!(json["contract"], serde_json::Value::Null, "native ETH on Base");

    let mut out = null_mut();
    assert_eq!(
        unsafe { depositkit_token_info_json(ETH, 137, &mut out) },
        depositkit_status::NotFound
    );
    assert!(out.is_null());
    assert_eq!(last_error(), "no ETH token is known on Polygon (chain id 137)");
    assert_eq!(
        unsafe { depositkit_token_info_json(USDC, 12345, &mut out) },
        depositkit_status::NotFound
    );
    assert_eq!(last_error(), "no USDC token is known on Unknown Chain (12345) (chain id 12345)");
}

#[test]
fn unknown_tokens_are_invalid_arguments_naming_the_value() {
    let mut token = 77u32;
    assert_eq!(
        unsafe { depositkit_token_type_from_str(c"DOGE".as_ptr(), &mut token) },
        depositkit_status::InvalidArgument
    );
    assert_eq!(token, 77, "out_token is not written on failure");
    assert_eq!(
        last_error(),
        "unknown token \"DOGE\": expected one of ETH, USDC, USDT, BTC, SOL, BNB"
    );

    let expected = "unknown token 99: expected a depositkit_token_type from 0 (ETH) to 5 (BNB)";
    let mut flag = true;
    let mut decimals = 42u8;
    let mut symbol: *const c_char = null();
    let mut json = null_mut();
    let calls: [(&str, depositkit_status); 5] = unsafe {
        [
            ("destination", depositkit_is_supported_destination_token(99, 1, &mut flag)),
            ("onramp", depositkit_is_onramp_token_supported(99, 1, &mut flag)),
            ("decimals", depositkit_get_token_decimals(99, 1, &mut decimals)),
            ("symbol", depositkit_token_symbol(99, &mut symbol)),
            ("json", depositkit_token_info_json(99, 1, &mut json)),
        ]
    };
    for (name, status) in calls {
        assert_eq!(status, depositkit_status::InvalidArgument, "{name}");
    }
    assert_eq!(last_error(), expected);
    assert!(flag && decimals == 42 && symbol.is_null() && json.is_null());
    assert_eq!(
        unsafe { depositkit_token_symbol(u32::MAX, &mut symbol) },
        depositkit_status::InvalidArgument
    );
    assert!(last_error().contains(&u32::MAX.to_string()));
}

#[test]
fn addresses() {
    unsafe {
        assert!(depositkit_is_valid_evm_address(EIP55.as_ptr()));
        assert!(depositkit_is_valid_evm_address(
            c"0x52908400098527886e0f7030069857d2e4169ee7".as_ptr()
        ));
        assert!(!depositkit_is_valid_evm_address(EIP55_FLIPPED.as_ptr()));
        assert!(!depositkit_is_valid_evm_address(null()));
        assert!(!depositkit_is_valid_evm_address(c"0x\xff".as_ptr()));

        assert!(depositkit_is_valid_solana_address(USDC_MINT.as_ptr()));
        let key31 = CString::new(bs58_31_bytes()).unwrap();
        assert!(!depositkit_is_valid_solana_address(key31.as_ptr()));
        assert!(!depositkit_is_valid_solana_address(null()));
        assert!(!depositkit_is_valid_solana_address(c"\xc3\x28".as_ptr()));

        assert_eq!(
            depositkit_validate_address_for_chain(EIP55.as_ptr(), 8453),
            depositkit_status::Ok
        );
        assert_eq!(
            depositkit_validate_address_for_chain(USDC_MINT.as_ptr(), 101),
            depositkit_status::Ok
        );
        assert_eq!(
            depositkit_validate_address_for_chain(EIP55_FLIPPED.as_ptr(), 1),
            depositkit_status::Configuration
        );
    }
    let msg = last_error();
    assert!(msg.starts_with("Invalid EVM address format for Ethereum (1): "), "{msg}");
    assert!(msg.contains(EIP55_FLIPPED.to_str().unwrap()), "{msg}");
    assert!(msg.contains("EIP-55"), "{msg}");

    assert_eq!(
        unsafe { depositkit_validate_address_for_chain(EIP55.as_ptr(), 101) },
        depositkit_status::Configuration
    );
    assert!(last_error().starts_with("Invalid Solana address format for Solana (101)"));
    assert_eq!(
        unsafe { depositkit_validate_address_for_chain(EIP55.as_ptr(), 12345) },
        depositkit_status::Configuration
    );
    assert_eq!(last_error(), "Unknown chain ID: 12345");
}

/// Base58 of 31 bytes (0x07 each): a well-formed key of the wrong length. Encoded here by long
/// division (no leading zero bytes, so no leading '1's) so the test needs no base58 library.
fn bs58_31_bytes() -> String {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut num = [7u8; 31];
    let mut out = Vec::new();
    while num.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in num.iter_mut() {
            let acc = (rem << 8) | u32::from(*b);
            *b = (acc / 58) as u8;
            rem = acc % 58;
        }
        out.push(ALPHABET[rem as usize]);
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

#[test]
fn units_success() {
    assert_eq!(format_units(c"1500000", 6).unwrap(), "1.5");
    assert_eq!(format_units(c"2000000", 6).unwrap(), "2");
    assert_eq!(format_units(c"0001", 6).unwrap(), "0.000001");
    let max = CString::new(U256_MAX).unwrap();
    assert_eq!(format_units(&max, 77).unwrap(), format!("1.{}", &U256_MAX[1..]));
    assert_eq!(parse_units(c"1.5", 6).unwrap(), "1500000");
    assert_eq!(parse_units(c"0.4", 18).unwrap(), "400000000000000000");
    assert_eq!(parse_units(&max, 0).unwrap(), U256_MAX);
    assert_eq!(last_error(), "");
}

#[test]
fn units_errors_keep_the_core_messages() {
    let bad = depositkit_status::InvalidArgument;
    let cases: [(&CStr, u32, &str); 4] = [
        (c"-1", 6, "invalid amount \"-1\": signs are not allowed"),
        (c"1e6", 6, "invalid amount \"1e6\": exponents are not allowed"),
        (
            c"1.2345678",
            6,
            "invalid amount \"1.2345678\": 7 fractional digits is more than the 6 decimals allowed",
        ),
        (c"1", 78, "decimals 78 is out of range: expected 0 to 77"),
    ];
    for (text, decimals, message) in cases {
        assert_eq!(parse_units(text, decimals), Err((bad, message.to_owned())), "{text:?}");
    }
    let over = c"115792089237316195423570985008687907853269984665640564039457584007913129639936";
    let (status, msg) = parse_units(over, 0).unwrap_err();
    assert_eq!(status, bad);
    assert!(msg.contains(over.to_str().unwrap()) && msg.contains("exceeds"));

    assert_eq!(
        format_units(c"-1", 6),
        Err((
            bad,
            "invalid raw amount \"-1\": expected a non-negative integer in decimal digits"
                .to_owned()
        ))
    );
    assert_eq!(
        format_units(over, 0),
        Err((bad, format!("invalid raw amount {over:?}: it exceeds 2^256 - 1")))
    );
    assert_eq!(
        format_units(c"1", 78),
        Err((bad, "decimals 78 is out of range: expected 0 to 77".to_owned()))
    );
}

#[test]
fn null_arguments_name_the_parameter_and_write_nothing() {
    let mut token = 7u32;
    let mut out = null_mut();
    let check = |status: depositkit_status, param: &str| {
        assert_eq!(status, depositkit_status::NullArgument, "{param}");
        assert_eq!(last_error(), format!("{param} must not be NULL"));
    };
    unsafe {
        check(depositkit_get_chain_name(1, null_mut()), "out_name");
        check(depositkit_token_type_from_str(null(), &mut token), "symbol");
        check(depositkit_token_type_from_str(c"usdc".as_ptr(), null_mut()), "out_token");
        check(depositkit_token_symbol(USDC, null_mut()), "out_symbol");
        check(depositkit_is_supported_destination_token(USDC, 1, null_mut()), "out_supported");
        check(depositkit_is_onramp_token_supported(USDC, 1, null_mut()), "out_supported");
        check(depositkit_get_token_decimals(USDC, 1, null_mut()), "out_decimals");
        check(depositkit_token_info_json(USDC, 1, null_mut()), "out_json");
        check(depositkit_format_units(null(), 6, &mut out), "raw");
        check(depositkit_format_units(c"1".as_ptr(), 6, null_mut()), "out_text");
        check(depositkit_parse_units(null(), 6, &mut out), "text");
        check(depositkit_parse_units(c"1".as_ptr(), 6, null_mut()), "out_raw");
        check(depositkit_validate_address_for_chain(null(), 1), "address");
    }
    assert_eq!(token, 7);
    assert!(out.is_null());
}

#[test]
fn invalid_utf8_names_the_parameter() {
    let mut out = null_mut();
    let mut token = 0u32;
    unsafe {
        assert_eq!(
            depositkit_parse_units(c"1.\xff".as_ptr(), 6, &mut out),
            depositkit_status::InvalidUtf8
        );
        assert_eq!(last_error(), "text is not valid UTF-8: invalid byte 0xff at offset 2");
        assert_eq!(
            depositkit_format_units(c"\xc3".as_ptr(), 6, &mut out),
            depositkit_status::InvalidUtf8
        );
        assert!(last_error().starts_with("raw is not valid UTF-8"));
        assert_eq!(
            depositkit_token_type_from_str(c"US\xe2\x82DC".as_ptr(), &mut token),
            depositkit_status::InvalidUtf8
        );
        assert!(last_error().starts_with("symbol is not valid UTF-8"));
        assert_eq!(
            depositkit_validate_address_for_chain(c"0x\x80".as_ptr(), 1),
            depositkit_status::InvalidUtf8
        );
        assert!(last_error().starts_with("address is not valid UTF-8"));
    }
    assert!(out.is_null());
}

#[test]
fn last_error_buffer_too_small_truncates_like_snprintf() {
    fail_something();
    let full = last_error();
    assert_eq!(full, "invalid amount \"-1\": signs are not allowed");

    // Size query: NULL buffer, length 0.
    let mut n = 0;
    assert_eq!(
        unsafe { depositkit_last_error_message(null_mut(), 0, &mut n) },
        depositkit_status::BufferTooSmall
    );
    assert_eq!(n, full.len());

    // A buffer of 8: 7 bytes of the message and a NUL.
    let mut buf = [0x55 as c_char; 8];
    let mut n = 0;
    assert_eq!(
        unsafe { depositkit_last_error_message(buf.as_mut_ptr(), buf.len(), &mut n) },
        depositkit_status::BufferTooSmall
    );
    assert_eq!(n, full.len());
    assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(), &full[..7]);

    // Exactly the length without room for the NUL is still too small.
    let mut buf = vec![0 as c_char; full.len()];
    assert_eq!(
        unsafe { depositkit_last_error_message(buf.as_mut_ptr(), buf.len(), &mut n) },
        depositkit_status::BufferTooSmall
    );

    // NULL out_n, or NULL buffer with a length: NULL_ARGUMENT, and the message survives.
    assert_eq!(
        unsafe { depositkit_last_error_message(buf.as_mut_ptr(), buf.len(), null_mut()) },
        depositkit_status::NullArgument
    );
    assert_eq!(
        unsafe { depositkit_last_error_message(null_mut(), 5, &mut n) },
        depositkit_status::NullArgument
    );
    assert_eq!(last_error(), full, "reading never changes the last error");
}

#[test]
fn truncation_never_splits_a_utf8_character() {
    let mut out = null_mut();
    assert_eq!(
        unsafe { depositkit_parse_units(c"\xc3\xa9".as_ptr(), 6, &mut out) },
        depositkit_status::InvalidArgument
    );
    let full = last_error();
    assert_eq!(full, "invalid amount \"\u{e9}\": '\u{e9}' is not a digit");
    // "invalid amount \"" is 16 bytes; the 2-byte character follows. A 18-byte buffer leaves
    // room for 17 bytes, which would split it.
    let mut buf = [0x55 as c_char; 18];
    let mut n = 0;
    assert_eq!(
        unsafe { depositkit_last_error_message(buf.as_mut_ptr(), buf.len(), &mut n) },
        depositkit_status::BufferTooSmall
    );
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
    assert_eq!(text, "invalid amount \"");
}

#[test]
fn success_clears_the_last_error() {
    fail_something();
    assert_eq!(chain_name(1), "Ethereum");
    assert_eq!(last_error(), "");

    fail_something();
    // Functions that return a plain value leave it alone.
    assert!(depositkit_is_valid_destination_chain(1));
    assert!(!unsafe { depositkit_is_valid_evm_address(null()) });
    assert!(!last_error().is_empty());
    assert_eq!(
        unsafe { depositkit_validate_address_for_chain(EIP55.as_ptr(), 1) },
        depositkit_status::Ok
    );
    assert_eq!(last_error(), "");
}

#[test]
fn the_last_error_is_per_thread() {
    fail_something();
    let here = last_error();
    std::thread::spawn(|| {
        assert_eq!(last_error(), "", "a new thread starts without an error");
        let mut token = 0;
        assert_eq!(
            unsafe { depositkit_token_type_from_str(c"DOGE".as_ptr(), &mut token) },
            depositkit_status::InvalidArgument
        );
        assert!(last_error().contains("DOGE"));
    })
    .join()
    .unwrap();
    assert_eq!(last_error(), here, "the other thread's failure did not leak here");
}

#[test]
fn string_free_accepts_null() {
    unsafe { depositkit_string_free(null_mut()) };
}

#[test]
fn status_names_and_version() {
    let name = |s: u32| unsafe { CStr::from_ptr(depositkit_status_str(s)) };
    assert_eq!(name(depositkit_status::Ok as u32), c"DEPOSITKIT_STATUS_OK");
    assert_eq!(name(depositkit_status::NullArgument as u32), c"DEPOSITKIT_STATUS_NULL_ARGUMENT");
    assert_eq!(name(901), c"DEPOSITKIT_STATUS_PANIC");
    assert_eq!(name(4_000_000_000), c"DEPOSITKIT_STATUS_UNKNOWN");
    let version = unsafe { CStr::from_ptr(depositkit_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
#[allow(clippy::float_cmp)]
fn constants() {
    assert_eq!(DEPOSITKIT_DEFAULT_MIN_VALUE_USD, 0.5);
    assert_eq!(DEPOSITKIT_DEFAULT_POLLING_INTERVAL_MS, 3000);
    assert_eq!(DEPOSITKIT_MAX_DECIMALS, 77);
}
