//! Malformed requests to every route of one devnet (issue 7, hardened boundaries): invalid JSON,
//! JSON of the wrong type at the top level and per field (strings where numbers go, huge and
//! negative numbers, nested arrays, nulls, unicode, very long strings), missing and unknown
//! fields, wrong methods and content types, bodies just over the size limit, unknown paths and
//! path parameters with odd characters — mostly behind a valid session, API key or project key,
//! where malformed input reaches the handlers. Every answer must be a 4xx with a JSON error in the
//! shape of its service (JSON-RPC error objects for `/user-rpc`, whose protocol errors are
//! HTTP 200 by design), never a 5xx or a dropped connection, and the server must answer a good
//! request afterwards.
//!
//! The requests go over a raw HTTP/1.1 connection (one per request) so that methods, paths,
//! headers and bodies are exactly what the case says. The devnet runs without chains (no
//! `CHAIN_UNAVAILABLE`) and with fault injection on, so the fault endpoints parse what they are
//! sent; no case arms a fault (checked after every case).

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::deposit::{Api, UaUser};
use common::{Fixture, SOL_A, basic};
use depositkit_core::onramp::network_chain_id;
use depositkit_core::{
    Chain, TokenType, U256, is_onramp_token_supported, parse_raw_amount, parse_units,
    validate_address_for_chain,
};
use depositkit_devnet::store::Purpose;
use depositkit_devnet::{
    BUILTIN_APP_ID, BUILTIN_CLIENT_KEY, BUILTIN_PROJECT_ID, ChainFamily, DevnetConfig,
};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};

/// The body limit of the devnet under test: small, so that oversize bodies are cheap.
const MAX_BODY: usize = 64 * 1024;
/// Cases per route group.
const CASES: u32 = 64;
/// How long one exchange may take before it counts as a hung connection.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A holder that is no account's deposit address.
const HOLDER: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";
/// Another valid EVM address (a sweep destination).
const EVM_B: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
/// USDC on Base, the token address of the by-token history.
const USDC_BASE: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
/// 2^256: one more than any amount.
const TWO_POW_256: &str =
    "115792089237316195423570985008687907853269984665640564039457584007913129639936";

// ---------------------------------------------------------------------------------------------
// A raw HTTP/1.1 client.

/// One request, exactly as sent.
#[derive(Clone)]
struct Probe {
    method: String,
    /// Path and query, already percent-encoded.
    target: String,
    headers: Headers,
    body: Vec<u8>,
}

impl std::fmt::Debug for Probe {
    /// The request as text, a long body cut short.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{} {}", self.method, self.target)?;
        for (name, value) in &self.headers {
            writeln!(f, "{name}: {}", String::from_utf8_lossy(value))?;
        }
        let body = String::from_utf8_lossy(&self.body);
        let shown: String = body.chars().take(1000).collect();
        write!(f, "[{} bytes] {shown:?}", self.body.len())
    }
}

impl Probe {
    fn new(method: &str, target: impl Into<String>) -> Self {
        Probe {
            method: method.into(),
            target: target.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    fn header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    fn json(self, body: &Value) -> Self {
        let mut probe = self.header("Content-Type", "application/json");
        probe.body = body.to_string().into_bytes();
        probe
    }
}

/// A response.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        text.chars().take(600).collect()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// Sends `probe` on a connection of its own (`Connection: close`) and reads the whole answer.
/// A client that could not write all of its body still reads the answer, as browsers and curl
/// do; an answer that never comes is the error.
fn exchange(addr: SocketAddr, probe: &Probe) -> Result<Answer, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        probe.method,
        probe.target,
        probe.body.len()
    )
    .into_bytes();
    for (name, value) in &probe.headers {
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    let wrote = stream.write_all(&head).and_then(|()| stream.write_all(&probe.body));
    let mut raw = Vec::new();
    let read = stream.read_to_end(&mut raw);
    parse_answer(&raw).ok_or_else(|| {
        format!(
            "no complete HTTP answer (write: {wrote:?}, read: {read:?}, {} bytes: {:?})",
            raw.len(),
            String::from_utf8_lossy(&raw[..raw.len().min(300)])
        )
    })
}

/// Parses one HTTP/1.1 response, skipping interim (1xx) ones.
fn parse_answer(mut raw: &[u8]) -> Option<Answer> {
    loop {
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = std::str::from_utf8(&raw[..end]).ok()?;
        let rest = &raw[end + 4..];
        let mut lines = head.split("\r\n");
        let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
            .collect();
        if (100..200).contains(&status) {
            raw = rest;
            continue;
        }
        let get = |name: &str| {
            headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
        };
        let body = if let Some(length) = get("content-length") {
            let length: usize = length.parse().ok()?;
            rest.get(..length)?.to_vec()
        } else if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
            dechunk(rest)?
        } else {
            rest.to_vec()
        };
        return Some(Answer { status, headers, body });
    }
}

fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&raw[..line_end]).ok()?.split(';').next()?.trim();
        let size = usize::from_str_radix(size, 16).ok()?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(raw.get(..size)?);
        raw = raw.get(size + 2..)?;
    }
}

/// Percent-encodes every byte but the unreserved ones.
fn encode(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// What an answer must look like.

/// The error shape of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The deposit services, their administration and funding: `{"error": {"code", "message"}}`.
    Service,
    /// `/user-rpc`: JSON-RPC error objects (one, or a batch of them).
    Rpc,
    /// `/devnet/faults`, `/devnet/health` and unknown paths: `{"error": "<message>"}`.
    Plain,
    /// The onramp widget: its HTML page (it shows whatever it is given), or a `Service` error.
    Page,
}

/// One generated request and what its answer must be.
#[derive(Debug, Clone)]
struct Case {
    probe: Probe,
    shape: Shape,
    /// The exact status when the case calls for one (413 for an oversize body, 405 for a wrong
    /// method, 404 for an unknown path).
    status: Option<u16>,
}

/// Checks an answer to a malformed request: a 4xx (for `/user-rpc` also the 200 of a
/// JSON-RPC-level error) with a JSON error of `shape`.
fn check_error(shape: Shape, status: Option<u16>, answer: &Answer) -> Result<(), String> {
    if shape == Shape::Page {
        let html = answer.header("content-type").unwrap_or_default().starts_with("text/html");
        if answer.status == 200 && html {
            return Ok(());
        }
        return check_error(Shape::Service, status, answer);
    }
    let rpc_level = shape == Shape::Rpc && answer.status == 200;
    if !(400..500).contains(&answer.status) && !rpc_level {
        return Err(format!("status {}, expected a 4xx: {}", answer.status, answer.text()));
    }
    if let Some(expected) = status
        && answer.status != expected
    {
        return Err(format!("status {}, expected {expected}: {}", answer.status, answer.text()));
    }
    let content_type = answer.header("content-type").unwrap_or_default();
    if !content_type.starts_with("application/json") {
        return Err(format!(
            "status {} with Content-Type {content_type:?}, not JSON: {:?}",
            answer.status,
            answer.text()
        ));
    }
    let body: Value = serde_json::from_slice(&answer.body).map_err(|e| {
        format!("status {}: body is not JSON ({e}): {}", answer.status, answer.text())
    })?;
    let clear = |v: &Value| v.as_str().is_some_and(|s| !s.trim().is_empty());
    let ok = match shape {
        Shape::Service => {
            let code = &body["error"]["code"];
            clear(code)
                && code.as_str().unwrap().bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                && clear(&body["error"]["message"])
        }
        Shape::Plain => clear(&body["error"]),
        Shape::Page => unreachable!(),
        Shape::Rpc => {
            let one = |v: &Value| {
                v["jsonrpc"] == "2.0"
                    && v.get("id").is_some()
                    && v.get("result").is_none()
                    && v["error"]["code"].is_i64()
                    && clear(&v["error"]["message"])
            };
            match &body {
                Value::Array(batch) => !batch.is_empty() && batch.iter().all(one),
                one_reply => one(one_reply),
            }
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("status {}: not a {shape:?} error: {body}", answer.status))
    }
}

// ---------------------------------------------------------------------------------------------
// Generated JSON: kept as text so that numbers no JSON library holds (2^64, 1e400) can be sent.

/// A JSON value as sent.
#[derive(Debug, Clone)]
enum J {
    Null,
    Bool(bool),
    /// Number text, e.g. `18446744073709551616`, `-1`, `1.5`, `1e400`.
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    fn text(&self) -> String {
        match self {
            J::Null => "null".into(),
            J::Bool(b) => b.to_string(),
            J::Num(n) => n.clone(),
            J::Str(s) => Value::from(s.as_str()).to_string(),
            J::Arr(items) => {
                format!("[{}]", items.iter().map(J::text).collect::<Vec<_>>().join(","))
            }
            J::Obj(entries) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), v.text()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as serde reads an unsigned integer field.
    fn as_u64(&self) -> Option<u64> {
        match self {
            J::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// The value as serde reads a `serde_json::Value` (`None` when that fails, e.g. `1e400`).
    fn as_value(&self) -> Option<Value> {
        serde_json::from_str(&self.text()).ok()
    }

    fn is_null(&self) -> bool {
        matches!(self, J::Null)
    }

    /// `self` with `path` set to `value` (`None` removes it).
    fn with(&self, path: &[&str], value: Option<J>) -> J {
        let J::Obj(entries) = self else { return self.clone() };
        let mut entries = entries.clone();
        let position = entries.iter().position(|(k, _)| k == path[0]);
        match (path.len(), value, position) {
            (1, None, Some(i)) => {
                entries.remove(i);
            }
            (1, None, None) => {}
            (1, Some(value), Some(i)) => entries[i].1 = value,
            (1, Some(value), None) => entries.push((path[0].into(), value)),
            (_, value, Some(i)) => entries[i].1 = entries[i].1.with(&path[1..], value),
            (_, _, None) => {}
        }
        J::Obj(entries)
    }
}

fn s(text: &str) -> J {
    J::Str(text.into())
}

fn n(number: u64) -> J {
    J::Num(number.to_string())
}

fn obj(entries: &[(&str, J)]) -> J {
    J::Obj(entries.iter().map(|(k, v)| ((*k).into(), v.clone())).collect())
}

/// Strings that break parsers and validators.
const ODD_STRINGS: &[&str] = &[
    "",
    " ",
    "\t\n",
    "null",
    "true",
    "0",
    "-1",
    "+1",
    "1.5",
    "1e400",
    "NaN",
    "Infinity",
    "\u{0}",
    "\u{feff}",
    "\u{202e}gnp.exe",
    "💸💸💸",
    "🙂‍↔️",
    "ﷺ",
    "../../etc/passwd",
    "%00",
    "%FF",
    "' OR 1=1 --",
    "<script>alert(1)</script>",
    "\\",
    "\"",
    "{}",
    "[]",
    "ua:",
    "Bearer",
    "v1:",
    "acc_",
    "q_",
    "0x",
    "0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD",
    "0x0000000000000000000000000000000000000000",
    "11111111111111111111111111111111",
    TWO_POW_256,
    "-115792089237316195423570985008687907853269984665640564039457584007913129639935",
    "0.0000000000000000000000000000000000000001",
];

/// Strings: arbitrary unicode, printable ASCII, the odd ones, hex and digit runs, and (rarely)
/// very long ones. `max_long` bounds the long ones (in characters).
fn junk_string(max_long: usize) -> BoxedStrategy<String> {
    prop_oneof![
        4 => any::<String>(),
        3 => "[ -~]{0,24}",
        2 => select(ODD_STRINGS).prop_map(str::to_owned),
        1 => "0[xX][0-9a-fA-F]{0,70}",
        1 => "-?[0-9]{1,90}(\\.[0-9]{0,30})?",
        1 => (1usize..max_long, select(vec!['x', 'é', '💸', '\u{0}', ' ', '%']))
            .prop_map(|(count, c)| std::iter::repeat_n(c, count).collect()),
    ]
    .boxed()
}

/// Number texts: any u64 and i64, floats, and the out-of-range ones.
fn junk_number() -> BoxedStrategy<String> {
    prop_oneof![
        2 => any::<u64>().prop_map(|n| n.to_string()),
        2 => any::<i64>().prop_map(|n| n.to_string()),
        1 => (0u64..700).prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("{f:?}")),
        2 => select(vec![
            "18446744073709551616",
            "-9223372036854775809",
            "4294967296",
            "65536",
            "1e400",
            "-1e400",
            "1e-400",
            "1E+2",
            "-1",
            "1.5",
            "0.0",
            TWO_POW_256,
            "99999999999999999999999999999999999999999999999999999999999999999999999999999999",
        ])
        .prop_map(str::to_owned),
    ]
    .boxed()
}

/// Any JSON value: scalars, arrays and objects of them, and arrays nested up to 300 deep.
fn junk() -> BoxedStrategy<J> {
    let leaf = prop_oneof![
        1 => Just(J::Null),
        1 => any::<bool>().prop_map(J::Bool),
        3 => junk_number().prop_map(J::Num),
        4 => junk_string(12_000).prop_map(J::Str),
    ];
    let tree = leaf.prop_recursive(3, 16, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(J::Arr),
            prop::collection::vec((junk_string(40), inner), 0..5).prop_map(J::Obj),
        ]
    });
    prop_oneof![
        12 => tree,
        1 => (1usize..300).prop_map(|depth| {
            (0..depth).fold(J::Arr(Vec::new()), |inner, _| J::Arr(vec![inner]))
        }),
    ]
    .boxed()
}

/// A value for one field: mostly strings and numbers (what validators see), else anything.
fn junk_field() -> BoxedStrategy<J> {
    prop_oneof![
        4 => junk_string(12_000).prop_map(J::Str),
        3 => junk_number().prop_map(J::Num),
        1 => prop_oneof![Just(J::Null), any::<bool>().prop_map(J::Bool)],
        2 => junk(),
    ]
    .boxed()
}

/// Bytes that are not JSON: random bytes, the template cut short or with a byte changed, and
/// classic near-misses. Whitespace alone is left out: an empty body reads as `{}`.
fn not_json(template: String) -> BoxedStrategy<Vec<u8>> {
    let classics: Vec<Vec<u8>> = [
        "{",
        "}",
        "{\"a\":}",
        "{'a': 1}",
        "[1,]",
        "{\"a\":1,}",
        "\u{feff}{}",
        "NaN",
        "{\"a\": NaN}",
        "\"\\ud800\"",
        "{\"a\": \"\\ud800\"}",
        "{\"a\":1}{\"b\":2}",
        "{} x",
        "nul",
        "tru",
        "{\"a\":\"\u{1}\"}",
        "/* c */ {}",
        "1e400",
        "{\"a\": 01}",
        "{\"a\": +1}",
        "{\"a\": .5}",
        "{\"a\": 0x10}",
        "{\"a\": \"\\x41\"}",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .chain([
        b"{\"a\":\"\xff\xfe\"}".to_vec(),
        b"\xff\xfe{\x00}".to_vec(),
        "[".repeat(1000).into_bytes(),
        format!("{}1{}", "{\"a\":".repeat(200), "}".repeat(200)).into_bytes(),
        format!("{}{}", "[".repeat(129), "]".repeat(129)).into_bytes(),
    ])
    .collect();
    let length = template.len();
    let cut = template.clone();
    let changed = template;
    prop_oneof![
        2 => prop::collection::vec(any::<u8>(), 1..200),
        2 => (1..length).prop_map(move |at| cut.as_bytes()[..at].to_vec()),
        2 => (0..length, any::<u8>()).prop_map(move |(at, byte)| {
            let mut bytes = changed.clone().into_bytes();
            bytes[at] = byte;
            bytes
        }),
        3 => select(classics),
    ]
    .prop_filter("not JSON", |bytes| {
        !bytes.iter().all(u8::is_ascii_whitespace)
            && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_err()
    })
    .boxed()
}

/// JSON of the wrong type at the top level: a scalar, or an array (a struct read from an array
/// takes its fields in order; the first element here is an object, which no first field takes).
fn not_an_object() -> BoxedStrategy<J> {
    prop_oneof![
        junk().prop_filter("scalar", |j| !matches!(j, J::Obj(_) | J::Arr(_))),
        (junk(), prop::collection::vec(junk(), 0..3)).prop_map(|(first, rest)| {
            let first = match first {
                J::Obj(entries) => J::Obj(entries),
                other => J::Obj(vec![("x".into(), other)]),
            };
            J::Arr(std::iter::once(first).chain(rest).collect())
        }),
    ]
    .boxed()
}

/// Header-safe bytes of a string (no control characters).
fn header_bytes(text: &str) -> Vec<u8> {
    text.bytes().filter(|&b| b == b'\t' || b >= 0x20 && b != 0x7f).collect()
}

/// Content types, `application/json` with weight `json` against 4 for the wrong ones (the
/// deposit services do not look at it; `/user-rpc` refuses the wrong ones first).
fn content_type(json: u32) -> BoxedStrategy<Option<Vec<u8>>> {
    prop_oneof![
        json => Just(Some(b"application/json".to_vec())),
        1 => select(vec![
            "application/json; charset=utf-8",
            "Application/JSON",
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json; charset=latin1",
            "*/*",
            "",
        ])
        .prop_map(|t| Some(t.as_bytes().to_vec())),
        1 => Just(None),
        1 => junk_string(100).prop_map(|t| Some(header_bytes(&t))),
    ]
    .boxed()
}

/// Headers that should change nothing: odd `Accept`, `Expect: 100-continue`, a gzip claim, the
/// headers of other endpoints with junk values.
fn noise_headers() -> BoxedStrategy<Headers> {
    let one = prop_oneof![
        junk_string(200).prop_map(|v| ("Accept".to_owned(), header_bytes(&v))),
        Just(("Expect".to_owned(), b"100-continue".to_vec())),
        Just(("Content-Encoding".to_owned(), b"gzip".to_vec())),
        junk_string(200).prop_map(|v| ("X-UA-Project-Id".to_owned(), header_bytes(&v))),
        junk_string(200).prop_map(|v| ("X-Api-Key".to_owned(), header_bytes(&v))),
        (1usize..4000).prop_map(|n| ("X-Padding".to_owned(), vec![b'p'; n])),
    ];
    prop::collection::vec(one, 0..3).boxed()
}

// ---------------------------------------------------------------------------------------------
// Credentials, right and wrong.

/// A base64url JWT-like token of three junk parts, or the session's JWT with one character
/// changed, or a header naming another algorithm.
fn junk_jwt(valid: String) -> BoxedStrategy<String> {
    let b64 = |bytes: &[u8]| URL_SAFE_NO_PAD.encode(bytes);
    let tampered = valid.clone();
    prop_oneof![
        "[!-~]{1,80}",
        (junk(), junk(), prop::collection::vec(any::<u8>(), 0..64)).prop_map(move |(h, c, sig)| {
            format!("{}.{}.{}", b64(h.text().as_bytes()), b64(c.text().as_bytes()), b64(&sig))
        }),
        (select(vec!["none", "HS256", "RS512", "ES256", "RS256"]), junk_string(40), junk())
            .prop_map(move |(alg, kid, claims)| {
                let header = json!({"alg": alg, "kid": kid, "typ": "JWT"}).to_string();
                format!("{}.{}.", b64(header.as_bytes()), b64(claims.text().as_bytes()))
            }),
        (any::<prop::sample::Index>(), "[A-Za-z0-9_.-]").prop_map(move |(at, c)| {
            let mut chars: Vec<char> = tampered.chars().collect();
            let at = at.index(chars.len());
            let replacement = c.chars().next().unwrap();
            chars[at] = if chars[at] == replacement { '-' } else { replacement };
            chars.into_iter().collect()
        }),
    ]
    .boxed()
}

/// How a request authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auth {
    /// None needed.
    Open,
    /// `Authorization: Bearer <session JWT>`.
    Bearer,
    /// `X-API-Key` of the balance API.
    ApiKey,
    /// `Authorization: Basic` project credentials of `/user-rpc`.
    Basic,
}

/// The session and keys of the run.
struct Ctx {
    addr: SocketAddr,
    user: UaUser,
    basic: String,
    api_key: String,
}

/// Authentication headers: mostly the right ones (malformed requests behind valid credentials
/// are the interesting ones), else missing or junk.
fn auth_headers(auth: Auth, ctx: &Ctx) -> BoxedStrategy<Headers> {
    let header = |name: &str, value: Vec<u8>| vec![(name.to_owned(), value)];
    match auth {
        Auth::Open => prop_oneof![
            3 => Just(Vec::new()),
            1 => junk_string(100).prop_map(move |v| header("Authorization", header_bytes(&v))),
        ]
        .boxed(),
        Auth::Bearer => {
            let valid = format!("Bearer {}", ctx.user.jwt).into_bytes();
            let lower = format!("bearer  {} ", ctx.user.jwt).into_bytes();
            prop_oneof![
                16 => Just(header("Authorization", valid)),
                1 => Just(header("Authorization", lower)),
                1 => Just(Vec::new()),
                1 => select(vec!["Bearer", "Bearer ", "Basic Zm9vOmJhcg==", "Bearer é", "Token x"])
                    .prop_map(move |v| header("Authorization", v.as_bytes().to_vec())),
                2 => junk_jwt(ctx.user.jwt.clone()).prop_map(move |t| {
                    header("Authorization", header_bytes(&format!("Bearer {t}")))
                }),
            ]
            .boxed()
        }
        Auth::ApiKey => {
            let valid = ctx.api_key.clone().into_bytes();
            prop_oneof![
                6 => Just(header("X-API-Key", valid)),
                1 => Just(Vec::new()),
                1 => junk_string(100).prop_map(move |v| header("X-API-Key", header_bytes(&v))),
            ]
            .boxed()
        }
        Auth::Basic => {
            let valid = ctx.basic.clone().into_bytes();
            prop_oneof![
                16 => Just(header("Authorization", valid)),
                1 => Just(Vec::new()),
                1 => select(vec!["Basic", "Basic !!!", "Bearer x", "Basic Zm9vOmJhcg=="])
                    .prop_map(move |v| header("Authorization", v.as_bytes().to_vec())),
                1 => junk_string(100).prop_map(move |v| header("Authorization", header_bytes(&v))),
            ]
            .boxed()
        }
    }
}

fn good_auth(auth: Auth, ctx: &Ctx) -> Headers {
    match auth {
        Auth::Open => Vec::new(),
        Auth::Bearer => vec![("Authorization".into(), format!("Bearer {}", ctx.user.jwt).into())],
        Auth::ApiKey => vec![("X-API-Key".into(), ctx.api_key.clone().into())],
        Auth::Basic => vec![("Authorization".into(), ctx.basic.clone().into())],
    }
}

// ---------------------------------------------------------------------------------------------
// Routes with a JSON body.

/// Whether a value of a field is surely refused.
type Check = Arc<dyn Fn(&J) -> bool + Send + Sync>;

/// Whether a query value is surely refused.
type TextCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Header names and values.
type Headers = Vec<(String, Vec<u8>)>;

#[derive(Clone)]
struct Field {
    path: Vec<&'static str>,
    /// Leaving it out is refused.
    required: bool,
    refused: Check,
}

fn field(
    path: &'static str,
    required: bool,
    refused: impl Fn(&J) -> bool + Send + Sync + 'static,
) -> Field {
    Field { path: path.split('.').collect(), required, refused: Arc::new(refused) }
}

/// A required string field: refused unless a string `valid` accepts.
fn string_field(path: &'static str, valid: impl Fn(&str) -> bool + Send + Sync + 'static) -> Field {
    field(path, true, move |j| !j.as_str().is_some_and(&valid))
}

/// An optional string field: refused when a string `valid` refuses, or not a string nor null.
fn optional_string(
    path: &'static str,
    valid: impl Fn(&str) -> bool + Send + Sync + 'static,
) -> Field {
    field(path, false, move |j| match j {
        J::Null => false,
        J::Str(text) => !valid(text),
        _ => true,
    })
}

/// A required unsigned integer field of at most `max`: refused unless `valid` accepts it.
fn integer_field(
    path: &'static str,
    max: u64,
    valid: impl Fn(u64) -> bool + Send + Sync + 'static,
) -> Field {
    field(path, true, move |j| !j.as_u64().is_some_and(|v| v <= max && valid(v)))
}

/// A route taking a JSON object.
struct BodyRoute {
    name: &'static str,
    method: &'static str,
    path: &'static str,
    auth: Auth,
    shape: Shape,
    /// A request the route accepts, or (for routes where every request is refused) the closest.
    template: J,
    /// Whether `template` is answered 200 (the good request after the cases).
    template_ok: bool,
    fields: Vec<Field>,
    /// Unknown fields are refused.
    deny_unknown: bool,
    /// Extra headers this route reads (with junk values they are refused).
    extra: Option<(&'static str, BoxedStrategy<Vec<u8>>)>,
}

/// How a body is broken.
#[derive(Debug, Clone)]
enum Break {
    NotJson(Vec<u8>),
    TopLevel(J),
    Field(usize, J),
    Missing(usize),
    Unknown(String, J),
    /// `/user-rpc` only: the broken request inside a batch with junk.
    Batch(Box<Break>, Vec<J>),
}

fn body_cases(route: Rc<BodyRoute>, ctx: &Ctx) -> BoxedStrategy<Case> {
    let mut breaks: Vec<(u32, BoxedStrategy<Break>)> = vec![
        (2, not_json(route.template.text()).prop_map(Break::NotJson).boxed()),
        (2, not_an_object().prop_map(Break::TopLevel).boxed()),
    ];
    for (i, f) in route.fields.iter().enumerate() {
        let refused = Arc::clone(&f.refused);
        breaks.push((
            3,
            junk_field()
                .prop_filter("a refused value", move |j| refused(j))
                .prop_map(move |j| Break::Field(i, j))
                .boxed(),
        ));
        if f.required {
            breaks.push((1, Just(Break::Missing(i)).boxed()));
        }
    }
    let known: Vec<&'static str> = route.fields.iter().map(|f| f.path[0]).collect();
    let unknown_key = move |k: &String| {
        !known.contains(&k.as_str()) && k.parse::<TokenType>().is_err() && k != "gasUSD"
    };
    if route.deny_unknown {
        let key_ok = unknown_key.clone();
        breaks.push((
            2,
            (junk_string(40).prop_filter("unknown", move |k| key_ok(k)), junk())
                .prop_map(|(k, v)| Break::Unknown(k, v))
                .boxed(),
        ));
    }
    let mut breaks = proptest::strategy::Union::new_weighted(breaks).boxed();
    if route.shape == Shape::Rpc {
        breaks = prop_oneof![
            4 => breaks.clone(),
            1 => (breaks, prop::collection::vec(junk(), 0..3))
                .prop_map(|(b, others)| Break::Batch(Box::new(b), others)),
        ]
        .boxed();
    }
    let noise =
        prop::collection::vec((junk_string(40).prop_filter("unknown", unknown_key), junk()), 0..3);
    let extra = match &route.extra {
        Some((name, values)) => {
            let name = *name;
            prop::option::weighted(0.3, values.clone().prop_map(move |v| (name.to_owned(), v)))
                .boxed()
        }
        None => Just(None).boxed(),
    };
    let json = if route.shape == Shape::Rpc { 30 } else { 3 };
    (breaks, noise, auth_headers(route.auth, ctx), content_type(json), noise_headers(), extra)
        .prop_map(move |(b, noise, auth, content_type, mut headers, extra)| {
            let body = broken_body(&route, &b, &noise);
            headers.extend(auth);
            headers.extend(extra);
            if let Some(content_type) = content_type {
                headers.push(("Content-Type".into(), content_type));
            }
            let probe =
                Probe { method: route.method.into(), target: route.path.into(), headers, body };
            Case { probe, shape: route.shape, status: None }
        })
        .boxed()
}

fn broken_json(route: &BodyRoute, b: &Break, noise: &[(String, J)]) -> J {
    let add_noise = |j: J| match j {
        J::Obj(mut entries) => {
            entries.extend(noise.iter().cloned());
            J::Obj(entries)
        }
        other => other,
    };
    match b {
        Break::NotJson(_) => unreachable!(),
        Break::TopLevel(j) => j.clone(),
        Break::Field(i, value) => {
            add_noise(route.template.with(&route.fields[*i].path, Some(value.clone())))
        }
        Break::Missing(i) => add_noise(route.template.with(&route.fields[*i].path, None)),
        Break::Unknown(k, v) => add_noise(route.template.with(&[k.as_str()], Some(v.clone()))),
        Break::Batch(inner, others) => {
            let one = match inner.as_ref() {
                Break::NotJson(bytes) => J::Str(String::from_utf8_lossy(bytes).into_owned()),
                other => broken_json(route, other, noise),
            };
            J::Arr(std::iter::once(one).chain(others.iter().cloned()).collect())
        }
    }
}

fn broken_body(route: &BodyRoute, b: &Break, noise: &[(String, J)]) -> Vec<u8> {
    match b {
        Break::NotJson(bytes) => bytes.clone(),
        other => broken_json(route, other, noise).text().into_bytes(),
    }
}

fn good_body_probe(route: &BodyRoute, ctx: &Ctx) -> Probe {
    let mut probe = Probe::new(route.method, route.path);
    probe.headers = good_auth(route.auth, ctx);
    probe.headers.push(("Content-Type".into(), b"application/json".to_vec()));
    probe.body = route.template.text().into_bytes();
    probe
}

fn evm_ok(chain_id: u64) -> impl Fn(&str) -> bool + Send + Sync + Clone {
    move |a: &str| validate_address_for_chain(a, chain_id).is_ok()
}

fn token_ok(t: &str) -> bool {
    t.parse::<TokenType>().is_ok()
}

fn known_chain(id: u64) -> bool {
    Chain::from_id(id).is_some()
}

fn positive_raw(t: &str) -> bool {
    parse_raw_amount(t).is_ok_and(|v| !v.is_zero())
}

/// A USD amount as the onramp reads it: a positive decimal up to 10^9.
fn fiat_ok(text: &str) -> bool {
    let max = U256::from(1_000_000_000u64) * U256::from(10u64).pow(U256::from(18u64));
    parse_units(text, 18).is_ok_and(|v| !v.is_zero() && v <= max)
}

/// A USD price as `PUT /devnet/prices` takes it.
fn price_ok(j: &J, zero_ok: bool) -> bool {
    let Some(usd) = j.as_value().as_ref().and_then(Value::as_f64) else { return false };
    let low = if zero_ok { 0.0 } else { 1e-9 };
    matches!(j, J::Num(_)) && usd.is_finite() && usd >= low && usd <= 1e12
}

fn body_routes(ctx: &Ctx) -> Vec<BodyRoute> {
    let account = ctx.user.account_id.clone();
    let wallet = ctx.user.wallet.clone();
    let batch_sessions = prop::collection::vec(junk_string(80), 1..4)
        .prop_map(|jwts| header_bytes(&jwts.join(",")))
        .prop_filter("a token", |v| v.iter().any(|b| !b.is_ascii_whitespace() && *b != b','))
        .boxed();
    let builtin = |value: &'static str| move |t: &str| t == value;
    let user_id_ok = |t: &str| {
        let t = t.trim();
        !t.is_empty() && t.chars().count() <= 128 && t.bytes().all(|b| b.is_ascii_graphic())
    };
    let signer_message_ok = |t: &str| {
        t.strip_prefix("0x")
            .and_then(|m| alloy_primitives::hex::decode(m).ok())
            .is_some_and(|b| b.len() == 32)
    };
    let balances_account = account.clone();
    let quote_account = account.clone();
    vec![
        BodyRoute {
            name: "POST /jwt/v1/jwt",
            method: "POST",
            path: "/jwt/v1/jwt",
            auth: Auth::Open,
            shape: Shape::Service,
            template: obj(&[
                ("projectId", s(BUILTIN_PROJECT_ID)),
                ("clientKey", s(BUILTIN_CLIENT_KEY)),
                ("appId", s(BUILTIN_APP_ID)),
                ("userId", s("malformed-probe")),
            ]),
            template_ok: true,
            fields: vec![
                string_field("projectId", builtin(BUILTIN_PROJECT_ID)),
                string_field("clientKey", builtin(BUILTIN_CLIENT_KEY)),
                string_field("appId", builtin(BUILTIN_APP_ID)),
                string_field("userId", user_id_ok),
            ],
            deny_unknown: false,
            extra: None,
        },
        BodyRoute {
            name: "POST /signer/v1/sign",
            method: "POST",
            path: "/signer/v1/sign",
            auth: Auth::Bearer,
            shape: Shape::Service,
            template: obj(&[("message", s(&format!("0x{}", "11".repeat(32))))]),
            template_ok: true,
            fields: vec![string_field("message", signer_message_ok)],
            deny_unknown: false,
            extra: None,
        },
        BodyRoute {
            name: "POST /ua/v1/accounts",
            method: "POST",
            path: "/ua/v1/accounts",
            auth: Auth::Bearer,
            shape: Shape::Service,
            template: obj(&[("ownerAddress", s(&wallet))]),
            template_ok: true,
            fields: vec![string_field("ownerAddress", move |t| {
                t.trim().eq_ignore_ascii_case(&wallet)
            })],
            deny_unknown: false,
            extra: None,
        },
        BodyRoute {
            name: "POST /ua/v1/balances",
            method: "POST",
            path: "/ua/v1/balances",
            auth: Auth::Bearer,
            shape: Shape::Service,
            template: obj(&[("accountIds", J::Arr(vec![s(&account)]))]),
            template_ok: true,
            fields: vec![field("accountIds", true, move |j| match j {
                J::Arr(ids) => !ids.iter().all(|id| id.as_str() == Some(&balances_account)),
                _ => true,
            })],
            deny_unknown: false,
            extra: Some(("X-Batch-Sessions", batch_sessions)),
        },
        BodyRoute {
            name: "POST /ua/v1/sweeps/quote",
            method: "POST",
            path: "/ua/v1/sweeps/quote",
            auth: Auth::Bearer,
            shape: Shape::Service,
            template: obj(&[
                ("accountId", s(&account)),
                (
                    "source",
                    obj(&[("chainId", n(8453)), ("token", s("USDC")), ("rawAmount", s("1000000"))]),
                ),
                (
                    "destination",
                    obj(&[("chainId", n(42161)), ("token", s("USDC")), ("address", s(EVM_B))]),
                ),
            ]),
            template_ok: true,
            fields: vec![
                string_field("accountId", move |t| t == quote_account),
                optional_string("purpose", |t| Purpose::parse(t).is_some()),
                optional_string("depositId", |t| t.chars().count() <= 128),
                field("source", true, |j| !matches!(j, J::Obj(_))),
                integer_field("source.chainId", u64::MAX, known_chain),
                string_field("source.token", token_ok),
                string_field("source.rawAmount", positive_raw),
                field("destination", true, |j| !matches!(j, J::Obj(_))),
                integer_field("destination.chainId", u64::MAX, known_chain),
                string_field("destination.token", token_ok),
                string_field("destination.address", evm_ok(42161)),
            ],
            deny_unknown: false,
            extra: None,
        },
        BodyRoute {
            name: "POST /ua/v1/sweeps/send",
            method: "POST",
            path: "/ua/v1/sweeps/send",
            auth: Auth::Bearer,
            shape: Shape::Service,
            // No quote has this id: every request is refused.
            template: obj(&[("quoteId", s("q_0")), ("signature", s("0x00"))]),
            template_ok: false,
            fields: vec![field("quoteId", true, |_| true), field("signature", true, |_| true)],
            deny_unknown: false,
            extra: None,
        },
        BodyRoute {
            name: "POST /devnet/deposits",
            method: "POST",
            path: "/devnet/deposits",
            auth: Auth::Open,
            shape: Shape::Service,
            template: obj(&[
                ("address", s(HOLDER)),
                ("chainId", n(8453)),
                ("token", s("USDC")),
                ("rawAmount", s("1")),
            ]),
            template_ok: true,
            fields: vec![
                string_field("address", evm_ok(8453)),
                integer_field("chainId", u64::MAX, |id| {
                    known_chain(id) && validate_address_for_chain(HOLDER, id).is_ok()
                }),
                string_field("token", token_ok),
                string_field("rawAmount", positive_raw),
                // Besides rawAmount: refused (exactly one of the two), unless null (absent).
                field("amount", false, |j| !j.is_null()),
                optional_string("sender", |t| {
                    !t.is_empty()
                        && t.chars().count() <= 128
                        && t.bytes().all(|b| b.is_ascii_graphic())
                }),
            ],
            deny_unknown: true,
            extra: None,
        },
        BodyRoute {
            name: "PUT /devnet/prices",
            method: "PUT",
            path: "/devnet/prices",
            auth: Auth::Open,
            shape: Shape::Service,
            // The defaults: setting them changes nothing.
            template: obj(&[
                ("ETH", J::Num("2500.0".into())),
                ("gasUSD", obj(&[("8453", J::Num("0.03".into()))])),
            ]),
            template_ok: true,
            fields: vec![
                field("ETH", false, |j| !price_ok(j, false)),
                field("gasUSD", false, |j| match j {
                    J::Obj(entries) => !entries.iter().all(|(chain, usd)| {
                        chain.parse::<u64>().is_ok_and(known_chain) && price_ok(usd, true)
                    }),
                    _ => true,
                }),
            ],
            deny_unknown: true,
            extra: None,
        },
        BodyRoute {
            name: "POST /devnet/faults/sweeps",
            method: "POST",
            path: "/devnet/faults/sweeps",
            auth: Auth::Open,
            shape: Shape::Service,
            // Count 0 disarms: the good request arms nothing.
            template: obj(&[("count", n(0)), ("mode", s("reject"))]),
            template_ok: true,
            fields: vec![
                integer_field("count", u64::from(u32::MAX), |_| true),
                string_field("mode", |t| t == "reject" || t == "fail"),
            ],
            deny_unknown: true,
            extra: None,
        },
        BodyRoute {
            name: "POST /devnet/jwt/forge",
            method: "POST",
            path: "/devnet/jwt/forge",
            auth: Auth::Open,
            shape: Shape::Service,
            template: obj(&[("count", n(0))]),
            template_ok: true,
            fields: vec![integer_field("count", u64::from(u32::MAX), |_| true)],
            deny_unknown: true,
            extra: None,
        },
        BodyRoute {
            name: "POST /devnet/jwt/expire",
            method: "POST",
            path: "/devnet/jwt/expire",
            auth: Auth::Open,
            shape: Shape::Service,
            // A user nobody has a session of; null or no userId would expire every session.
            template: obj(&[("userId", s("malformed-nobody"))]),
            template_ok: true,
            fields: vec![field("userId", false, |j| !matches!(j, J::Str(_) | J::Null))],
            deny_unknown: true,
            extra: None,
        },
        BodyRoute {
            name: "POST /devnet/faults",
            method: "POST",
            path: "/devnet/faults",
            auth: Auth::Open,
            shape: Shape::Plain,
            // Neither status nor delayMs: refused, whatever else it says.
            template: obj(&[("service", s("ua")), ("count", n(1))]),
            template_ok: false,
            fields: vec![
                field("service", false, |_| true),
                field("path", false, |_| true),
                field("retryAfter", false, |_| true),
                field("count", false, |_| true),
                field("status", false, |j| !j.as_u64().is_some_and(|s| (400..=599).contains(&s))),
                field("delayMs", false, |j| j.as_u64().is_none_or(|ms| ms > 60_000)),
            ],
            deny_unknown: true,
            extra: None,
        },
        wallet_balances_route(
            "POST /balances/v1/wallet-balances",
            "/balances/v1/wallet-balances",
            Auth::ApiKey,
        ),
        wallet_balances_route(
            "POST /balance-proxy/v1/wallet-balances",
            "/balance-proxy/v1/wallet-balances",
            Auth::Open,
        ),
        BodyRoute {
            name: "POST /onramp/v1/orders",
            method: "POST",
            path: "/onramp/v1/orders",
            auth: Auth::Open,
            shape: Shape::Service,
            template: obj(&[
                ("partnerKey", s("pk-probe")),
                ("walletAddress", s(HOLDER)),
                ("network", s("base")),
                ("cryptoCurrency", s("USDC")),
                ("fiatAmount", s("25")),
            ]),
            template_ok: true,
            fields: vec![
                string_field("partnerKey", |t| !t.trim().is_empty()),
                string_field("walletAddress", |t| {
                    validate_address_for_chain(t.trim(), 8453).is_ok()
                }),
                string_field("network", |t| network_chain_id(t.trim()).is_some()),
                string_field("cryptoCurrency", |t| {
                    t.trim()
                        .parse::<TokenType>()
                        .is_ok_and(|token| is_onramp_token_supported(token, 8453))
                }),
                optional_string("fiatCurrency", |t| {
                    let code = t.trim();
                    code.len() == 3 && code.bytes().all(|b| b.is_ascii_alphabetic())
                }),
                field("fiatAmount", false, |j| match j {
                    J::Null => false,
                    J::Str(t) => !fiat_ok(t.trim()),
                    J::Num(_) => {
                        !matches!(j.as_value(), Some(Value::Number(v)) if fiat_ok(&v.to_string()))
                    }
                    _ => true,
                }),
                optional_string("paymentMethod", |_| true),
                optional_string("mode", |_| true),
                optional_string("partnerOrderId", |_| true),
            ],
            deny_unknown: false,
            extra: None,
        },
        BodyRoute {
            name: "POST /user-rpc",
            method: "POST",
            path: "/user-rpc",
            auth: Auth::Basic,
            shape: Shape::Rpc,
            template: obj(&[
                ("jsonrpc", s("2.0")),
                ("id", n(1)),
                ("method", s("isProjectUser")),
                ("params", J::Arr(vec![s("solana"), s(SOL_A)])),
            ]),
            template_ok: true,
            fields: vec![
                string_field("jsonrpc", |t| t == "2.0"),
                field("id", false, |j| match j {
                    J::Null | J::Str(_) => false,
                    J::Num(n) => n.parse::<i64>().is_err() && n.parse::<u64>().is_err(),
                    _ => true,
                }),
                string_field("method", |t| t == "isProjectUser"),
                field("params", true, |j| {
                    let J::Arr(params) = j else { return true };
                    let [J::Str(chain), J::Str(address)] = params.as_slice() else { return true };
                    !ChainFamily::parse(chain).is_some_and(|f| f.looks_like_address(address))
                }),
            ],
            deny_unknown: false,
            extra: None,
        },
    ]
}

fn wallet_balances_route(name: &'static str, path: &'static str, auth: Auth) -> BodyRoute {
    let address_refused = |chain_id: u64, blank_ok: bool| {
        move |j: &J| match j {
            J::Null => !blank_ok,
            J::Str(t) if t.trim().is_empty() => !blank_ok,
            J::Str(t) => validate_address_for_chain(t.trim(), chain_id).is_err(),
            _ => true,
        }
    };
    BodyRoute {
        name,
        method: "POST",
        path,
        auth,
        shape: Shape::Service,
        template: obj(&[("evmAddress", s(HOLDER)), ("chainIds", J::Arr(vec![n(8453)]))]),
        template_ok: true,
        fields: vec![
            // The only address of the template: without it there is none.
            field("evmAddress", true, address_refused(1, false)),
            field("solanaAddress", false, address_refused(101, true)),
            field("chainIds", false, |j| match j {
                J::Null => false,
                J::Arr(ids) => {
                    ids.len() > 32 || !ids.iter().all(|id| id.as_u64().is_some_and(known_chain))
                }
                _ => true,
            }),
        ],
        deny_unknown: false,
        extra: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Routes with a query (and path parameters).

/// A query parameter and whether a value of it is surely refused.
struct Param {
    name: &'static str,
    template: Option<String>,
    required: bool,
    /// `None`: every value is taken (only leaving it out is refused).
    refused: Option<TextCheck>,
}

fn param(
    name: &'static str,
    template: Option<&str>,
    required: bool,
    refused: impl Fn(&str) -> bool + Send + Sync + 'static,
) -> Param {
    Param {
        name,
        template: template.map(str::to_owned),
        required,
        refused: Some(Arc::new(refused)),
    }
}

/// A GET route with a query string; `path_param` routes end in an odd path parameter.
struct QueryRoute {
    name: &'static str,
    path: &'static str,
    auth: Auth,
    /// The path ends with a parameter: `path` + `/` + an odd value.
    path_param: bool,
    params: Vec<Param>,
}

#[derive(Debug, Clone)]
enum QueryBreak {
    /// Only the path parameter is odd (it names nothing).
    PathOnly,
    Missing(usize),
    Value(usize, String),
    Duplicate(usize),
}

/// Odd path parameters: any bytes (percent-encoded; invalid UTF-8 included), unicode, dots.
fn odd_segment() -> BoxedStrategy<String> {
    prop_oneof![
        2 => prop::collection::vec(any::<u8>(), 1..64).prop_map(|b| encode(&b)),
        2 => junk_string(600)
            .prop_filter("non-empty", |t| !t.is_empty())
            .prop_map(|t| encode(t.as_bytes())),
        1 => select(vec![
            "%FF", "%C0%AF", "%00", "%2F", "..", ".", "%2e%2e", "~", "%", "%ZZ", "%E2%80%AE",
        ])
        .prop_map(str::to_owned),
    ]
    .boxed()
}

fn query_cases(route: Rc<QueryRoute>, ctx: &Ctx) -> BoxedStrategy<Case> {
    let mut breaks: Vec<(u32, BoxedStrategy<QueryBreak>)> = Vec::new();
    if route.path_param {
        breaks.push((3, Just(QueryBreak::PathOnly).boxed()));
    }
    for (i, p) in route.params.iter().enumerate() {
        if let Some(refused) = p.refused.clone() {
            breaks.push((
                3,
                junk_string(1500)
                    .prop_filter("a refused value", move |v| refused(v))
                    .prop_map(move |v| QueryBreak::Value(i, v))
                    .boxed(),
            ));
        }
        if p.required {
            breaks.push((1, Just(QueryBreak::Missing(i)).boxed()));
        }
        if p.template.is_some() {
            breaks.push((1, Just(QueryBreak::Duplicate(i)).boxed()));
        }
    }
    let names: Vec<&'static str> = route.params.iter().map(|p| p.name).collect();
    let noise = prop::collection::vec(
        prop_oneof![
            (
                junk_string(40).prop_filter("unknown", move |k| !names.contains(&k.as_str())),
                junk_string(200)
            )
                .prop_map(|(k, v)| format!(
                    "{}={}",
                    encode(k.as_bytes()),
                    encode(v.as_bytes())
                )),
            select(vec!["", "&", "=", "==x", "%", "%G1", "%FF=%FE", "a=%", "x%5B%5D=1", "+=+"])
                .prop_map(str::to_owned),
        ],
        0..3,
    );
    (
        proptest::strategy::Union::new_weighted(breaks),
        odd_segment(),
        noise,
        auth_headers(route.auth, ctx),
        noise_headers(),
    )
        .prop_map(move |(b, segment, noise, auth, mut headers)| {
            let mut pairs: Vec<String> = Vec::new();
            for (i, p) in route.params.iter().enumerate() {
                let value = match &b {
                    QueryBreak::Missing(m) if *m == i => continue,
                    QueryBreak::Value(m, v) if *m == i => Some(v.clone()),
                    _ => p.template.clone(),
                };
                if let Some(value) = value {
                    pairs.push(format!("{}={}", p.name, encode(value.as_bytes())));
                    if matches!(b, QueryBreak::Duplicate(m) if m == i) {
                        pairs.push(format!("{}={}", p.name, encode(value.as_bytes())));
                    }
                }
            }
            pairs.extend(noise);
            let path = if route.path_param {
                let segment = if matches!(b, QueryBreak::PathOnly) { segment } else { "x".into() };
                format!("{}/{segment}", route.path)
            } else {
                route.path.to_owned()
            };
            headers.extend(auth);
            let probe = Probe {
                method: "GET".into(),
                target: format!("{path}?{}", pairs.join("&")),
                headers,
                body: Vec::new(),
            };
            Case { probe, shape: Shape::Service, status: None }
        })
        .boxed()
}

/// The onramp widget with odd queries: the widget's parameters with any values, repeated,
/// unknown ones, broken percent-encoding.
fn widget_cases() -> BoxedStrategy<Case> {
    let names = vec![
        "partnerKey",
        "walletAddress",
        "network",
        "cryptoCurrency",
        "fiatCurrency",
        "fiatAmount",
        "paymentMethod",
        "mode",
        "partnerOrderId",
    ];
    let pair = prop_oneof![
        4 => (select(names), junk_string(1500))
            .prop_map(|(k, v)| format!("{k}={}", encode(v.as_bytes()))),
        2 => (junk_string(40), junk_string(200))
            .prop_map(|(k, v)| format!("{}={}", encode(k.as_bytes()), encode(v.as_bytes()))),
        1 => select(vec!["", "&", "=", "==x", "%", "%G1", "%FF=%FE", "a=%", "+=+", "a=1=2"])
            .prop_map(str::to_owned),
    ];
    (prop::collection::vec(pair, 0..8), noise_headers())
        .prop_map(|(pairs, headers)| {
            let mut probe = Probe::new("GET", format!("/onramp/widget?{}", pairs.join("&")));
            probe.headers = headers;
            Case { probe, shape: Shape::Page, status: None }
        })
        .boxed()
}

fn query_routes(ctx: &Ctx) -> Vec<QueryRoute> {
    let account = ctx.user.account_id.clone();
    let mine = move |id: &str| id != account;
    let not_u32 = |v: &str| v.parse::<u32>().is_err();
    let page_size_refused = |v: &str| !v.parse::<u32>().is_ok_and(|n| (1..=100).contains(&n));
    let chain_refused = |v: &str| !v.parse::<u64>().is_ok_and(known_chain);
    let id = ctx.user.account_id.as_str();
    vec![
        QueryRoute {
            name: "GET /ua/v1/transactions",
            path: "/ua/v1/transactions",
            auth: Auth::Bearer,
            path_param: false,
            params: vec![
                param("accountId", Some(id), true, mine.clone()),
                param("page", Some("1"), false, move |v| not_u32(v) || v.parse::<u32>() == Ok(0)),
                param("pageSize", Some("10"), false, page_size_refused),
            ],
        },
        QueryRoute {
            name: "GET /ua/v1/transactions/by-token",
            path: "/ua/v1/transactions/by-token",
            auth: Auth::Bearer,
            path_param: false,
            params: vec![
                param("accountId", Some(id), true, mine.clone()),
                param("chainId", Some("8453"), true, chain_refused),
                param("address", Some(USDC_BASE), true, |v| {
                    validate_address_for_chain(v, 8453).is_err()
                }),
                param("pageToken", None, false, |v| !v.is_empty()),
                param("pageSize", Some("10"), false, page_size_refused),
            ],
        },
        QueryRoute {
            name: "GET /ua/v1/transactions/{transactionId}",
            path: "/ua/v1/transactions",
            auth: Auth::Bearer,
            path_param: true,
            params: vec![param("accountId", Some(id), true, mine.clone())],
        },
        QueryRoute {
            name: "GET /ua/v1/sweeps/{quoteId}",
            path: "/ua/v1/sweeps",
            auth: Auth::Bearer,
            path_param: true,
            params: Vec::new(),
        },
        QueryRoute {
            name: "GET /ua/v1/receipts",
            path: "/ua/v1/receipts",
            auth: Auth::Bearer,
            path_param: false,
            params: vec![
                param("accountId", Some(id), true, mine),
                param("chainId", Some("8453"), true, chain_refused),
                param("token", Some("USDC"), true, |v| !token_ok(v)),
                // from must be below to (1): only 0 is.
                param("from", Some("0"), true, |v| {
                    parse_raw_amount(v).map_or(true, |a| !a.is_zero())
                }),
                param("to", Some("1"), true, |v| parse_raw_amount(v).map_or(true, |a| a.is_zero())),
            ],
        },
        QueryRoute {
            name: "GET /devnet/ledger",
            path: "/devnet/ledger",
            auth: Auth::Open,
            path_param: false,
            params: vec![
                // Any address has a ledger balance: only leaving it out is refused.
                Param {
                    name: "address",
                    template: Some(HOLDER.into()),
                    required: true,
                    refused: None,
                },
                param("chainId", Some("8453"), true, chain_refused),
                param("token", Some("USDC"), true, |v| !token_ok(v)),
            ],
        },
    ]
}

fn good_query_probe(route: &QueryRoute, ctx: &Ctx) -> Option<Probe> {
    if route.path_param {
        return None;
    }
    let pairs: Vec<String> = route
        .params
        .iter()
        .filter_map(|p| Some(format!("{}={}", p.name, encode(p.template.as_ref()?.as_bytes()))))
        .collect();
    let mut probe = Probe::new("GET", format!("{}?{}", route.path, pairs.join("&")));
    probe.headers = good_auth(route.auth, ctx);
    Some(probe)
}

// ---------------------------------------------------------------------------------------------
// Wrong methods, unknown paths, oversize bodies.

/// Every route: path, the methods it takes, its auth and its error shape.
fn all_routes() -> Vec<(&'static str, &'static [&'static str], Auth, Shape)> {
    const GET: &[&str] = &["GET", "HEAD"];
    const POST: &[&str] = &["POST"];
    vec![
        ("/user-rpc", POST, Auth::Basic, Shape::Rpc),
        ("/devnet/health", GET, Auth::Open, Shape::Plain),
        ("/devnet/faults", &["GET", "HEAD", "POST", "DELETE"], Auth::Open, Shape::Plain),
        ("/jwt/v1/jwt", POST, Auth::Open, Shape::Service),
        ("/jwt/.well-known/jwks.json", GET, Auth::Open, Shape::Service),
        ("/jwt/health", GET, Auth::Open, Shape::Service),
        ("/signer/v1/wallet", GET, Auth::Bearer, Shape::Service),
        ("/signer/v1/sign", POST, Auth::Bearer, Shape::Service),
        ("/ua/v1/accounts", POST, Auth::Bearer, Shape::Service),
        ("/ua/v1/balances", POST, Auth::Bearer, Shape::Service),
        ("/ua/v1/sweeps/quote", POST, Auth::Bearer, Shape::Service),
        ("/ua/v1/sweeps/send", POST, Auth::Bearer, Shape::Service),
        ("/ua/v1/sweeps/q_0", GET, Auth::Bearer, Shape::Service),
        ("/ua/v1/transactions", GET, Auth::Bearer, Shape::Service),
        ("/ua/v1/transactions/by-token", GET, Auth::Bearer, Shape::Service),
        ("/ua/v1/transactions/0x00", GET, Auth::Bearer, Shape::Service),
        ("/ua/v1/receipts", GET, Auth::Bearer, Shape::Service),
        ("/devnet/deposits", POST, Auth::Open, Shape::Service),
        ("/devnet/ledger", GET, Auth::Open, Shape::Service),
        ("/devnet/chains", GET, Auth::Open, Shape::Service),
        ("/devnet/prices", &["GET", "HEAD", "PUT"], Auth::Open, Shape::Service),
        ("/devnet/faults/sweeps", POST, Auth::Open, Shape::Service),
        ("/devnet/jwt/rotate", POST, Auth::Open, Shape::Service),
        ("/devnet/jwt/forge", POST, Auth::Open, Shape::Service),
        ("/devnet/jwt/expire", POST, Auth::Open, Shape::Service),
        ("/balances/v1/wallet-balances", POST, Auth::ApiKey, Shape::Service),
        ("/balance-proxy/v1/wallet-balances", POST, Auth::Open, Shape::Service),
        ("/onramp/widget", GET, Auth::Open, Shape::Service),
        ("/onramp/v1/orders", POST, Auth::Open, Shape::Service),
    ]
}

/// Methods, standard and not (HEAD is left out: its answers have no body to check).
const METHODS: &[&str] = &[
    "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "FOO", "get", "Post",
];

fn wrong_method_cases(ctx: &Ctx) -> BoxedStrategy<Case> {
    let routes = all_routes();
    let auths: Vec<BoxedStrategy<Headers>> =
        routes.iter().map(|(_, _, auth, _)| auth_headers(*auth, ctx)).collect();
    (0..routes.len())
        .prop_flat_map(move |i| {
            let (path, allowed, _, shape) = routes[i];
            (
                select(METHODS).prop_filter("not allowed", move |m| !allowed.contains(m)),
                auths[i].clone(),
                prop::option::of(junk()),
                content_type(3),
            )
                .prop_map(move |(method, mut headers, body, content_type)| {
                    headers.extend(content_type.map(|t| ("Content-Type".to_owned(), t)));
                    let body = body.map(|b| b.text().into_bytes()).unwrap_or_default();
                    // The services refuse an oversize body before they look at the method.
                    let status = (body.len() <= MAX_BODY).then_some(405);
                    let probe = Probe { method: method.into(), target: path.into(), headers, body };
                    Case { probe, shape, status }
                })
        })
        .boxed()
}

fn unknown_path_cases(ctx: &Ctx) -> BoxedStrategy<Case> {
    // Prefixes of real routes: what follows them here is never a route.
    let prefixes = vec![
        "",
        "/ua",
        "/ua/v1",
        "/ua/v1/sweeps/q_0",
        "/ua/v1/transactions/0x00",
        "/jwt",
        "/jwt/v1",
        "/signer",
        "/signer/v1",
        "/devnet",
        "/devnet/jwt",
        "/devnet/faults",
        "/balances",
        "/balances/v1",
        "/balance-proxy",
        "/onramp",
        "/onramp/v1",
        "/user-rpc",
        "/devnet/health",
    ];
    let routes: Vec<&'static str> = all_routes().iter().map(|(p, ..)| *p).collect();
    let known = routes.clone();
    let path = prop_oneof![
        // A prefix and segments that name nothing (`_` + anything: no route segment starts so).
        3 => (select(prefixes), prop::collection::vec(odd_segment(), 1..4))
            .prop_map(|(prefix, segments)| format!("{prefix}/_{}", segments.join("/"))),
        // A real route with a trailing slash, a doubled slash or a changed case.
        1 => (select(routes), 0..3usize).prop_map(|(route, how)| match how {
            0 => format!("{route}/"),
            1 => format!("/{route}"),
            _ => route.to_uppercase(),
        }),
    ]
    .prop_filter("not a route", move |p| !known.contains(&p.as_str()));
    (
        path,
        select(METHODS),
        auth_headers(Auth::Bearer, ctx),
        prop::option::of(junk()),
        prop::option::of("[a-zA-Z0-9=&%]{0,40}"),
    )
        .prop_map(|(path, method, headers, body, query)| {
            let target = match query {
                Some(query) => format!("{path}?{query}"),
                None => path,
            };
            let probe = Probe {
                method: method.into(),
                target,
                headers,
                body: body.map(|b| b.text().into_bytes()).unwrap_or_default(),
            };
            Case { probe, shape: Shape::Plain, status: Some(404) }
        })
        .boxed()
}

fn oversize_cases(ctx: &Ctx) -> BoxedStrategy<Case> {
    // The routes that read a body, with the method they take (GET routes of the services read
    // bodies too, and refuse oversize ones).
    let routes: Vec<(&'static str, &'static str, Auth, Shape)> = all_routes()
        .into_iter()
        .filter(|(path, ..)| !["/devnet/health", "/onramp/widget", "/devnet/prices"].contains(path))
        .map(|(path, methods, auth, shape)| {
            let method = if path == "/devnet/faults" { "POST" } else { methods[0] };
            (path, method, auth, shape)
        })
        .chain([("/devnet/prices", "PUT", Auth::Open, Shape::Service)])
        .collect();
    let auths: Vec<BoxedStrategy<Headers>> =
        routes.iter().map(|(_, _, auth, _)| auth_headers(*auth, ctx)).collect();
    let good_auths: Vec<Headers> =
        routes.iter().map(|(_, _, auth, _)| good_auth(*auth, ctx)).collect();
    (0..routes.len())
        .prop_flat_map(move |i| {
            let (path, method, _, shape) = routes[i];
            let good = good_auths[i].clone();
            (
                prop_oneof![3 => 1usize..64, 1 => 64usize..200_000],
                prop_oneof![2 => Just(good).boxed(), 1 => auths[i].clone()],
                select(vec![b' ', b'x', b'[', b'{']),
            )
                .prop_map(move |(over, mut headers, fill)| {
                    headers.push(("Content-Type".into(), b"application/json".to_vec()));
                    let probe = Probe {
                        method: method.into(),
                        target: path.into(),
                        headers,
                        body: vec![fill; MAX_BODY + over],
                    };
                    Case { probe, shape, status: Some(413) }
                })
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// The run.

impl Ctx {
    fn send(&self, probe: &Probe) -> Result<Answer, String> {
        exchange(self.addr, probe)
    }

    /// Sends `case`, checks its answer, then that the server still answers and no fault is
    /// armed.
    fn probe(&self, case: &Case) -> Result<(), String> {
        let answer = self.send(&case.probe)?;
        check_error(case.shape, case.status, &answer)?;
        if case.status == Some(405)
            && case.shape != Shape::Plain
            && answer.header("allow").is_none()
        {
            return Err("405 without Allow".into());
        }
        self.still_fine()
    }

    /// The server answers a good request and nothing is armed.
    fn still_fine(&self) -> Result<(), String> {
        let faults = self.send(&Probe::new("GET", "/devnet/faults"))?;
        if faults.status != 200 {
            return Err(format!(
                "GET /devnet/faults afterwards: {} {}",
                faults.status,
                faults.text()
            ));
        }
        let faults = faults.json();
        if faults != json!({"pending": [], "sweeps": null, "forgedJwts": 0}) {
            // Disarm, so that one failure does not cascade.
            let _ = self.send(&Probe::new("DELETE", "/devnet/faults"));
            return Err(format!("the request armed a fault: {faults}"));
        }
        Ok(())
    }

    fn expect_ok(&self, what: &str, probe: &Probe) {
        let answer = self.send(probe).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(answer.status, 200, "{what}: good request afterwards: {}", answer.text());
    }
}

/// Runs the cases of one group; a failure (with its minimal case) goes into `failures`.
fn run(
    ctx: &Ctx,
    failures: &mut Vec<String>,
    name: &str,
    cases: BoxedStrategy<Case>,
    good: Option<Probe>,
) {
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        max_shrink_iters: 512,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let outcome = runner.run(&cases, |case| ctx.probe(&case).map_err(TestCaseError::fail));
    if let Err(error) = outcome {
        failures.push(format!("{name}: {error}"));
    }
    if let Some(good) = good {
        ctx.expect_ok(name, &good);
    }
}

#[test]
fn malformed_requests_get_a_4xx_with_a_json_error() {
    let started = Instant::now();
    let fixture = Fixture::start_with(|config| DevnetConfig {
        max_body_bytes: MAX_BODY,
        ..config.with_fault_injection()
    });
    let api = Api { base: fixture.devnet.services_url(), agent: common::agent() };
    let user = api.user("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
    // 10 USDC on Base: the quote template can be priced.
    api.deposit(&user.evm_address, 8453, "USDC", "10000000");
    let ctx = Ctx {
        addr: fixture.devnet.local_addr(),
        user,
        basic: basic(&fixture.a.project_id, &fixture.a.server_key),
        api_key: depositkit_devnet::config::DEFAULT_BALANCE_API_KEY.into(),
    };
    ctx.still_fine().unwrap();
    let mut failures = Vec::new();

    for route in body_routes(&ctx) {
        let good = route.template_ok.then(|| good_body_probe(&route, &ctx));
        let name = route.name;
        run(&ctx, &mut failures, name, body_cases(Rc::new(route), &ctx), good);
    }
    for route in query_routes(&ctx) {
        let good = good_query_probe(&route, &ctx);
        let name = route.name;
        run(&ctx, &mut failures, name, query_cases(Rc::new(route), &ctx), good);
    }
    let widget = Probe::new("GET", "/onramp/widget?network=base");
    run(&ctx, &mut failures, "GET /onramp/widget", widget_cases(), Some(widget));
    let health = Probe::new("GET", "/devnet/health");
    run(&ctx, &mut failures, "wrong methods", wrong_method_cases(&ctx), Some(health.clone()));
    run(&ctx, &mut failures, "unknown paths", unknown_path_cases(&ctx), Some(health.clone()));
    run(&ctx, &mut failures, "oversize bodies", oversize_cases(&ctx), Some(health));

    // The session survived everything (no case expired or forged it).
    let wallet = Probe::new("GET", "/signer/v1/wallet")
        .header("Authorization", format!("Bearer {}", ctx.user.jwt));
    ctx.expect_ok("the session afterwards", &wallet);
    assert!(failures.is_empty(), "{} groups failed:\n\n{}", failures.len(), failures.join("\n\n"));
    eprintln!("malformed requests: done in {:.1} s", started.elapsed().as_secs_f64());
}

// ---------------------------------------------------------------------------------------------
// Regressions: what the property test found.

/// A devnet with the body limit of the property test, and a session with its account.
fn small_net() -> (Fixture, UaUser) {
    let fixture = Fixture::start_with(|config| DevnetConfig {
        max_body_bytes: MAX_BODY,
        ..config.with_fault_injection()
    });
    let api = Api { base: fixture.devnet.services_url(), agent: common::agent() };
    let user = api.user("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
    (fixture, user)
}

fn expect(shape: Shape, status: u16, answer: &Answer) -> Value {
    check_error(shape, Some(status), answer).unwrap();
    answer.json()
}

/// Wrong methods on known paths were a bare 405 (axum's, no body): now the error of the route's
/// service, with `Allow`.
#[test]
fn a_wrong_method_is_a_405_with_a_json_error() {
    let (fixture, user) = small_net();
    let addr = fixture.devnet.local_addr();
    let bearer = format!("Bearer {}", user.jwt);

    let answer =
        exchange(addr, &Probe::new("GET", "/ua/v1/balances").header("Authorization", bearer))
            .unwrap();
    let body = expect(Shape::Service, 405, &answer);
    assert_eq!(body["error"]["code"], "METHOD_NOT_ALLOWED");
    assert!(body["error"]["message"].as_str().unwrap().contains("GET"), "{body}");
    assert_eq!(answer.header("allow"), Some("POST"));

    // With a body, which is read (the connection stays usable).
    let probe = Probe::new("DELETE", "/devnet/prices").json(&json!({"ETH": 1}));
    let answer = exchange(addr, &probe).unwrap();
    expect(Shape::Service, 405, &answer);
    assert_eq!(answer.header("allow"), Some("GET,HEAD,PUT"));

    let answer = exchange(addr, &Probe::new("POST", "/devnet/health")).unwrap();
    let body = expect(Shape::Plain, 405, &answer);
    assert!(body["error"].as_str().unwrap().contains("use GET"), "{body}");
    assert_eq!(answer.header("allow"), Some("GET,HEAD"));
}

/// A path parameter that is not UTF-8 once percent-decoded was axum's plain-text 400: now
/// 400 `INVALID_REQUEST`, after the session check.
#[test]
fn a_path_parameter_that_is_not_utf8_is_a_400_with_a_json_error() {
    let (fixture, user) = small_net();
    let addr = fixture.devnet.local_addr();
    let bearer = format!("Bearer {}", user.jwt);
    let query = format!("?accountId={}", user.account_id);
    for target in ["/ua/v1/sweeps/%FF".to_owned(), format!("/ua/v1/transactions/%C0%AF{query}")] {
        let probe = Probe::new("GET", target.as_str()).header("Authorization", bearer.as_str());
        let body = expect(Shape::Service, 400, &exchange(addr, &probe).unwrap());
        assert_eq!(body["error"]["code"], "INVALID_REQUEST");
        assert!(body["error"]["message"].as_str().unwrap().contains("UTF-8"), "{body}");
        let body =
            expect(Shape::Service, 401, &exchange(addr, &Probe::new("GET", target)).unwrap());
        assert_eq!(body["error"]["code"], "INVALID_SESSION");
    }
    // The same paths with UTF-8 parameters: not found.
    let probe = Probe::new("GET", "/ua/v1/sweeps/%C3%A9").header("Authorization", bearer.as_str());
    let body = expect(Shape::Service, 404, &exchange(addr, &probe).unwrap());
    assert_eq!(body["error"]["code"], "NOT_SENT");
}

/// An oversize fault answered the JSON-RPC error object of `/user-rpc`: now the endpoint's own
/// `{"error": "<message>"}`.
#[test]
fn an_oversize_fault_is_a_413_in_the_fault_endpoint_shape() {
    let (fixture, _) = small_net();
    let mut probe = Probe::new("POST", "/devnet/faults").header("Content-Type", "application/json");
    probe.body = vec![b' '; 64 * 1024 + 1];
    let body = expect(Shape::Plain, 413, &exchange(fixture.devnet.local_addr(), &probe).unwrap());
    assert!(body["error"].as_str().unwrap().contains("65536 bytes"), "{body}");
}

/// Sends raw bytes, closing the sending side when `half_close` (the body is cut short), and reads
/// the answer.
fn raw_exchange(addr: SocketAddr, bytes: &[u8], half_close: bool) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    stream.write_all(bytes).unwrap();
    if half_close {
        stream.shutdown(Shutdown::Write).unwrap();
    }
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_answer(&raw).unwrap_or_else(|| panic!("no answer: {:?}", String::from_utf8_lossy(&raw)))
}

/// A body cut short or badly chunked was answered 413 `TOO_LARGE` ("larger than 65536 bytes")
/// by the services: now 400 `INVALID_REQUEST` saying it could not be read, like `/user-rpc` and
/// `/devnet/faults` in their shapes. HTTP the server cannot parse at all is hyper's bare 4xx;
/// either way the server goes on answering.
#[test]
fn a_body_that_cannot_be_read_is_a_400() {
    let (fixture, user) = small_net();
    let addr = fixture.devnet.local_addr();
    let basic = basic(&fixture.a.project_id, &fixture.a.server_key);
    let routes = [
        ("/ua/v1/balances", format!("Bearer {}", user.jwt), Shape::Service),
        ("/devnet/deposits", String::new(), Shape::Service),
        ("/user-rpc", basic, Shape::Rpc),
        ("/devnet/faults", String::new(), Shape::Plain),
    ];
    for (path, auth, shape) in routes {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: devnet\r\nAuthorization: {auth}\r\n\
             Content-Type: application/json\r\n"
        );
        let broken = [
            (format!("{head}Content-Length: 100\r\n\r\n{{\"accountIds\":"), true),
            (format!("{head}Transfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n"), false),
            (format!("{head}Transfer-Encoding: chunked\r\n\r\n10\r\n{{}}"), true),
        ];
        for (request, half_close) in broken {
            let answer = raw_exchange(addr, request.as_bytes(), half_close);
            let body = expect(shape, 400, &answer);
            let message = match shape {
                Shape::Plain => body["error"].as_str(),
                _ => body["error"]["message"].as_str(),
            };
            assert!(message.unwrap().contains("cannot read the request body"), "{path}: {body}");
        }
    }
    let garbage: [&[u8]; 3] = [
        b"GARBAGE\r\n\r\n",
        b"POST /ua/v1/balances HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        b"GET /devnet/health HTTP/1.1\r\nX-Control: a\x01b\r\n\r\n",
    ];
    for request in garbage {
        let answer = raw_exchange(addr, request, false);
        assert!((400..500).contains(&answer.status), "{}: {}", answer.status, answer.text());
    }
    let health = exchange(addr, &Probe::new("GET", "/devnet/health")).unwrap();
    assert_eq!(health.status, 200);
}
