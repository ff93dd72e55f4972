//! The Particle Universal Account client against a loopback server that answers as
//! `particle-ua-wire.md` records the service answering (canned replies: devnet's own Particle
//! endpoint is the real counterpart, `docs/particle.md` §6), and the signing root checked
//! against vectors made by the published SDK's own helpers (`particle_fixtures/`).
//!
//! What each test proves: the request on the wire (envelope, key order, credentials in the
//! body, no auth header, the SDK's parameter shapes), the typed answers, the error classes,
//! retries of reads and never of sends, a lost send looked up before it is sent again, bounded
//! concurrency for many accounts, and no credential in any message.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alloy_primitives::{B256, hex};
use depositkit_core::runtime::Runtime;
use depositkit_core::services::particle::{
    AccountOptions, CreatedTransaction, Credentials, ErrorClass, ParticleBackend, ParticleClient,
    ParticleConfig, ParticleEndpoint, SendOutcome, SigningRoot, TokenRef, TransferRequest,
    UserOpRef, amounts,
};
use depositkit_core::services::{
    AccountBackend, QuoteDestination, QuotePurpose, QuoteRequest, QuoteSource, SendFailure,
    SendStatus,
};
use depositkit_core::signer::{KeySigner, SeedSigner, Signer, personal_digest, recover_address};
use depositkit_core::{ErrorKind, RetryPolicy, TokenType, U256};
use serde_json::{Value, json};

const PROJECT_ID: &str = "PID-particle-test";
const CLIENT_KEY: &str = "CKEY-very-secret-client-key";
const ANVIL_KEY: &str = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ANVIL_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const EVM_DEPOSIT: &str = "0x2222222222222222222222222222222222222222";
const SOLANA_DEPOSIT: &str = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const OWNER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";

// ---------------------------------------------------------------------------------------------
// The SDK's own helpers

/// `particle_fixtures/sdk_vectors.json`: made by `sdk_vectors.js` with
/// `createMultiChainUnsignedData` and `injectMultiChainSignature` of the SDK 2.0.3 and viem's
/// `signMessage({message: {raw: rootHash}})` with anvil's first key.
#[test]
fn root_proofs_and_signatures_match_the_sdks_own_helpers() {
    let text = include_str!("particle_fixtures/sdk_vectors.json");
    let fixture: Value = serde_json::from_str(text).unwrap();
    assert_eq!(fixture["signer"], ANVIL_ADDRESS);
    let signer = KeySigner::from_hex(ANVIL_KEY).unwrap();
    let vectors = fixture["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 7);
    for vector in vectors {
        let ops: Vec<UserOpRef> = vector["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|op| UserOpRef {
                chain_id: op["chainId"].as_u64().unwrap(),
                user_op_hash: op["userOpHash"].as_str().unwrap().parse().unwrap(),
            })
            .collect();
        let n = ops.len();
        let root = SigningRoot::new(ops, vector["nowMs"].as_u64().unwrap()).unwrap();
        assert_eq!(root.root_hash.to_string(), vector["rootHash"], "{n} ops");
        assert_eq!(root.valid_until, vector["validUntil"].as_u64().unwrap(), "{n} ops");
        let proofs: Vec<Vec<String>> =
            root.proofs.iter().map(|p| p.iter().map(|h| h.to_string()).collect()).collect();
        assert_eq!(json!(proofs), vector["proofs"], "{n} ops");
        // Our key signs exactly as viem does (RFC 6979, EIP-191 over the raw 32 bytes).
        let signature = signer.personal_sign(&root.root_hash).unwrap();
        assert_eq!(hex::encode_prefixed(signature), vector["signature"], "{n} ops");
        let blobs: Vec<String> =
            root.op_signatures(&signature).iter().map(|b| b.to_string()).collect();
        assert_eq!(json!(blobs), vector["opSignatures"], "{n} ops");
    }
}

// ---------------------------------------------------------------------------------------------
// A loopback server

/// One request the server received.
#[derive(Debug, Clone)]
struct Request {
    headers: Vec<(String, String)>,
    raw_body: String,
    body: Value,
}

impl Request {
    fn method(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// What the server does with a request.
enum Reply {
    /// Answer with this status and JSON body.
    Json(u16, Value),
    /// Close the connection without answering: the request arrived, its answer is lost.
    Drop,
}

fn result(value: Value) -> Reply {
    Reply::Json(200, json!({"jsonrpc": "2.0", "id": 1, "result": value}))
}

fn rpc_error(code: i64, message: &str) -> Reply {
    Reply::Json(
        200,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": message}}),
    )
}

type Handler = dyn Fn(&Request, usize) -> Reply + Send + Sync;

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Request>>>,
    in_flight: Arc<AtomicUsize>,
    most_in_flight: Arc<AtomicUsize>,
}

impl Server {
    /// A server calling `handler` with each request and the number of earlier requests of the
    /// same method; each connection on its own thread, answered with `Connection: close`.
    fn start(handler: impl Fn(&Request, usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/rpc", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let most_in_flight = Arc::new(AtomicUsize::new(0));
        let handler: Arc<Handler> = Arc::new(handler);
        let (seen, busy, most) =
            (Arc::clone(&requests), Arc::clone(&in_flight), Arc::clone(&most_in_flight));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (seen, busy, most, handler) =
                    (Arc::clone(&seen), Arc::clone(&busy), Arc::clone(&most), Arc::clone(&handler));
                std::thread::spawn(move || {
                    let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    serve_one(stream, &seen, &*handler);
                    busy.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Server { url, requests, in_flight, most_in_flight }
    }

    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    fn count(&self, method: &str) -> usize {
        self.requests().iter().filter(|r| r.method() == method).count()
    }
}

fn serve_one(stream: TcpStream, seen: &Mutex<Vec<Request>>, handler: &Handler) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut headers = Vec::new();
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.trim_end().split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let raw_body = String::from_utf8(body).unwrap();
    let request =
        Request { headers, body: serde_json::from_str(&raw_body).unwrap_or(Value::Null), raw_body };
    let earlier = {
        let mut seen = seen.lock().unwrap();
        let earlier = seen.iter().filter(|r| r.method() == request.method()).count();
        seen.push(request.clone());
        earlier
    };
    let mut stream = stream;
    match handler(&request, earlier) {
        Reply::Drop => {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        Reply::Json(status, body) => {
            let body = body.to_string();
            let answer = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Clients and canned answers

fn config(server: &Server) -> ParticleConfig {
    ParticleConfig {
        endpoint: Some(ParticleEndpoint::Url(server.url.clone())),
        credentials: Some(Credentials::new(PROJECT_ID, CLIENT_KEY).unwrap()),
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            max_retry_after: Duration::from_millis(5),
        },
        ..Default::default()
    }
}

fn client(server: &Server) -> ParticleClient {
    ParticleClient::new(config(server)).unwrap()
}

fn run<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> T {
    Runtime::shared().unwrap().block_on("test", Duration::from_secs(60), future).unwrap()
}

fn smart_account() -> Value {
    json!([{"smartAccountAddress": EVM_DEPOSIT, "solanaSmartAccountAddress": SOLANA_DEPOSIT}])
}

fn opened(owner: &str) -> AccountOptions {
    let mut account = AccountOptions::new(owner, "UNIVERSAL", "2.0.1");
    account.smart_account_address = Some(EVM_DEPOSIT.into());
    account.solana_smart_account_address = Some(SOLANA_DEPOSIT.into());
    account
}

/// 30 USDC on Base at $1 and 0.01 ETH on Arbitrum at $2500, as 18-decimal hex.
fn assets() -> Value {
    let hex18 = |whole: &str| amounts::to_hex(amounts::parse_decimal(whole).unwrap());
    json!({"totalAmountInUSD": hex18("55"), "assets": [
        {"tokenType": "usdc", "price": 1, "amount": hex18("30"), "amountInUSD": hex18("30"),
         "chainAggregation": [{"token": {"chainId": 8453, "address": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "decimals": 18, "realDecimals": 6, "type": "usdc"}, "amount": hex18("30"), "amountInUSD": hex18("30")}]},
        {"tokenType": "eth", "price": 2500, "amount": hex18("0.01"), "amountInUSD": hex18("25"),
         "chainAggregation": [{"token": {"chainId": 42161, "address": "0x0000000000000000000000000000000000000000",
            "decimals": 18, "realDecimals": 18, "type": "eth"}, "amount": hex18("0.01"), "amountInUSD": hex18("25")}]}
    ]})
}

/// A created transaction with an EVM and a Solana op, fees $0.03 gas and $0.00002 LP.
fn created(id: &str) -> Value {
    json!({"transactionId": id, "tag": "universal", "feeQuotes": [{"userOps": [
        {"chainId": 8453, "userOpHash": format!("0x{}", "a2".repeat(32)), "userOp": {"signature": "0x"}},
        {"chainId": 101, "userOpHash": format!("0x{}", "b2".repeat(32)), "userOp": {"signature": ""}}],
        "fees": {"totals": {"feeTokenAmountInUSD": "0x6a94d74f430000", "gasFeeTokenAmountInUSD": "0x6a94d74f430000",
            "transactionLPFeeTokenAmountInUSD": "0x12309ce54000", "freeGasFee": false, "freeServiceFee": false}}}]})
}

fn transaction(id: &str, status: i64) -> Value {
    json!({"transactionId": id, "status": status, "tag": "universal"})
}

// ---------------------------------------------------------------------------------------------
// The wire

#[test]
fn requests_carry_the_sdks_envelope_credentials_and_params() {
    let server = Server::start(|request, _| match request.method() {
        "universal_getUniversalAccount" => result(smart_account()),
        "universal_getPrimaryAssets" => result(assets()),
        "universal_getTransactionsV2" => result(json!({"data": []})),
        "universal_getTokenTransactions" => result(json!({"data": [], "nextPageToken": null})),
        other => panic!("unexpected {other}"),
    });
    let client = client(&server);
    let (account, assets) = run({
        let client = client.clone();
        async move {
            let account = client.open(ANVIL_ADDRESS).await.unwrap();
            let assets = client.primary_assets(&account).await.unwrap();
            client.transactions(&account, 1, 20, Some("buy")).await.unwrap();
            let base_weth = TokenRef {
                chain_id: 8453,
                address: "0x4200000000000000000000000000000000000042".into(),
            };
            client.token_transactions(&account, &base_weth, None).await.unwrap();
            (account, assets)
        }
    });
    assert_eq!(account.smart_account_address.as_deref(), Some(EVM_DEPOSIT));
    assert_eq!(assets.assets[0].chains[0].raw_amount, U256::from(30_000_000u64));
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        // The envelope, its keys in the SDK's order.
        let keys: Vec<&str> =
            request.body.as_object().unwrap().keys().map(String::as_str).collect();
        let mut sorted =
            vec!["id", "jsonrpc", "method", "params", "deviceId", "projectId", "projectClientKey"];
        assert!(request.raw_body.starts_with(r#"{"id":"#), "{}", request.raw_body);
        let positions: Vec<usize> =
            sorted.iter().map(|k| request.raw_body.find(&format!("\"{k}\":")).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "key order: {}", request.raw_body);
        sorted.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(keys, sorted);
        assert_eq!(request.body["jsonrpc"], "2.0");
        assert!(request.body["id"].as_u64().unwrap() > 1_700_000_000_000);
        assert_eq!(
            uuid::Uuid::parse_str(request.body["deviceId"].as_str().unwrap())
                .unwrap()
                .get_version_num(),
            4
        );
        assert_eq!(
            (request.body["projectId"].as_str(), request.body["projectClientKey"].as_str()),
            (Some(PROJECT_ID), Some(CLIENT_KEY))
        );
        assert!(request.body["params"].is_array());
        // No auth header, no query: the credentials are in the body only.
        assert!(request.header("authorization").is_none());
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert!(!request.headers.iter().any(|(_, v)| v.contains(CLIENT_KEY)));
    }
    let device_ids: std::collections::HashSet<_> =
        requests.iter().map(|r| r.body["deviceId"].clone()).collect();
    assert_eq!(device_ids.len(), 4, "a new deviceId per request");
    let acct = json!({"ownerAddress": ANVIL_ADDRESS, "name": "UNIVERSAL", "version": "2.0.1"});
    assert_eq!(requests[0].body["params"], json!([acct]));
    let acct = json!({"ownerAddress": ANVIL_ADDRESS, "name": "UNIVERSAL", "version": "2.0.1",
        "smartAccountAddress": EVM_DEPOSIT, "solanaSmartAccountAddress": SOLANA_DEPOSIT});
    assert_eq!(requests[1].body["params"], json!([acct]));
    assert_eq!(
        requests[2].body["params"],
        json!([{"sender": EVM_DEPOSIT, "solanaSender": SOLANA_DEPOSIT, "tag": "buy"}, {"page": 1, "limit": 20}])
    );
    assert_eq!(
        requests[3].body["params"],
        json!(["8453_0x4200000000000000000000000000000000000042", {"sender": EVM_DEPOSIT, "solanaSender": SOLANA_DEPOSIT}, {"pageToken": null}])
    );
}

#[test]
fn a_transfer_is_created_signed_and_sent_with_the_sdks_shapes() {
    let server = Server::start(|request, _| match request.method() {
        "universal_createTransaction" => result(created("TX-1")),
        "universal_sendTransaction" => result(json!({"transactionId": "TX-1", "status": 1})),
        other => panic!("unexpected {other}"),
    });
    let client = client(&server);
    let signer = KeySigner::from_hex(ANVIL_KEY).unwrap();
    let (transaction, outcome) = run({
        let client = client.clone();
        async move {
            let request = TransferRequest {
                token: TokenRef::of(TokenType::USDC, 42161).unwrap(),
                amount: amounts::wire_from_raw(U256::from(10_000_000u64), 6).unwrap(),
                receiver: "0x5555555555555555555555555555555555555555".into(),
            };
            let transaction =
                client.create_transfer(&opened(ANVIL_ADDRESS), &request).await.unwrap();
            let signature = signer.personal_sign(&transaction.signing.root_hash).unwrap();
            let outcome = client.send(&transaction, &signature, &[]).await.unwrap();
            (transaction, outcome)
        }
    });
    assert!(
        matches!(outcome, SendOutcome::Accepted(ref a) if a.transaction_id == "TX-1"),
        "{outcome:?}"
    );
    let fees = transaction.fees.unwrap();
    assert!(
        (fees.gas_fee_usd - 0.03).abs() < 1e-12 && (fees.lp_fee_usd - 0.00002).abs() < 1e-12,
        "{fees:?}"
    );
    let requests = server.requests();
    assert_eq!(
        requests[0].body["params"][1],
        json!({"tag": "transfer_v2", "usePrimaryTokens": ["eth", "usdt", "usdc", "bnb", "sol"],
               "receiver": "0x5555555555555555555555555555555555555555", "chainId": 42161,
               "assetTokens": [{"amount": "0x8ac7230489e80000", "assetId": "usdc"}]})
    );
    let send = &requests[1].body["params"];
    assert_eq!(send[0], "TX-1");
    let entries = send[1]["signatures"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    // The EVM blob's signature (its last 65 bytes before padding) recovers to the owner over
    // the root; the Solana blob is root ‖ u32le(1) ‖ proof ‖ signature.
    let root = transaction.signing.root_hash;
    let solana = hex::decode(entries[1]["signature"].as_str().unwrap()).unwrap();
    assert_eq!(&solana[..32], root.as_slice());
    assert_eq!(&solana[32..36], &[1, 0, 0, 0]);
    let signature: [u8; 65] = solana[68..].try_into().unwrap();
    assert_eq!(
        recover_address(&personal_digest(&root), &signature).unwrap().to_checksum(None),
        ANVIL_ADDRESS
    );
    assert_eq!(entries[0]["userOpHash"], format!("0x{}", "a2".repeat(32)));
}

// ---------------------------------------------------------------------------------------------
// Errors, retries, sends never repeated blindly

#[test]
fn service_errors_are_typed_and_never_carry_the_credentials() {
    let server = Server::start(|request, _| {
        let echo = format!("bad request {}", request.raw_body);
        match request.body["params"][0]["ownerAddress"].as_str().unwrap_or_default() {
            "0x0000000000000000000000000000000000000001" => rpc_error(-32001, "unauthorized"),
            "0x0000000000000000000000000000000000000002" => rpc_error(-32602, &echo),
            "0x0000000000000000000000000000000000000003" => {
                rpc_error(-32653, "Insufficient primary token balance")
            }
            "0x0000000000000000000000000000000000000004" => {
                Reply::Json(401, json!({"message": echo}))
            }
            "0x0000000000000000000000000000000000000005" => Reply::Json(200, json!({"result": []})),
            _ => Reply::Json(200, Value::String(echo)),
        }
    });
    let client = client(&server);
    let errors = run(async move {
        let mut out = Vec::new();
        for n in 1..=6 {
            let owner = format!("0x{n:040x}");
            out.push(
                client
                    .smart_account(&AccountOptions::new(&owner, "UNIVERSAL", "2.0.1"))
                    .await
                    .unwrap_err(),
            );
        }
        out
    });
    let expected = [
        (ErrorKind::Authentication, Some(ErrorClass::Authentication)),
        (ErrorKind::InvalidArgument, Some(ErrorClass::InvalidParameters)),
        (ErrorKind::UniversalAccount, Some(ErrorClass::InsufficientFunds)),
        (ErrorKind::Authentication, None),
        (ErrorKind::UniversalAccount, None),
        (ErrorKind::Protocol, None),
    ];
    for (error, (kind, class)) in errors.iter().zip(expected) {
        assert_eq!((error.kind(), ErrorClass::of(error)), (kind, class), "{error}");
        let everything = format!("{error} {error:?} {:?}", error.rpc_error());
        assert!(
            !everything.contains(CLIENT_KEY) && !everything.contains(PROJECT_ID),
            "{everything}"
        );
    }
    assert_eq!(errors[4].message(), "No smart account options found");
}

#[test]
fn reads_are_retried_on_429_5xx_and_rate_limit_errors() {
    let server = Server::start(|request, earlier| match (request.method(), earlier) {
        ("universal_getUniversalAccount", 0) => Reply::Json(429, json!({})),
        ("universal_getUniversalAccount", 1) => Reply::Json(503, json!({})),
        ("universal_getUniversalAccount", _) => result(smart_account()),
        ("universal_getPrimaryAssets", 0) => rpc_error(-32005, "rate limited"),
        ("universal_getPrimaryAssets", _) => result(assets()),
        ("universal_getTransaction", _) => Reply::Json(502, json!({})),
        (other, _) => panic!("unexpected {other}"),
    });
    let client = client(&server);
    let error = run({
        let client = client.clone();
        async move {
            let account = client.open(ANVIL_ADDRESS).await.unwrap();
            client.primary_assets(&account).await.unwrap();
            client.transaction("TX-9").await.unwrap_err()
        }
    });
    assert_eq!(server.count("universal_getUniversalAccount"), 3);
    assert_eq!(server.count("universal_getPrimaryAssets"), 2);
    // Three attempts (two retries), then a network error naming the status.
    assert_eq!(server.count("universal_getTransaction"), 3);
    assert_eq!(error.kind(), ErrorKind::Network);
    assert!(error.message().contains("502"), "{error}");
}

fn signed_transaction(client: &ParticleClient, id: &str) -> (CreatedTransaction, [u8; 65]) {
    let client = client.clone();
    let id = id.to_owned();
    run(async move {
        let request = TransferRequest {
            token: TokenRef::of(TokenType::USDC, 8453).unwrap(),
            amount: amounts::wire_from_raw(U256::from(1_000_000u64), 6).unwrap(),
            receiver: "0x5555555555555555555555555555555555555555".into(),
        };
        let transaction = client.create_transfer(&opened(ANVIL_ADDRESS), &request).await.unwrap();
        assert_eq!(transaction.transaction_id, id);
        let signature = KeySigner::from_hex(ANVIL_KEY)
            .unwrap()
            .personal_sign(&transaction.signing.root_hash)
            .unwrap();
        (transaction, signature)
    })
}

#[test]
fn a_lost_send_that_never_executed_is_looked_up_then_sent_again() {
    let server = Server::start(|request, earlier| match (request.method(), earlier) {
        ("universal_createTransaction", _) => result(created("TX-2")),
        ("universal_sendTransaction", 0) => Reply::Drop,
        ("universal_sendTransaction", _) => result(json!({"transactionId": "TX-2"})),
        ("universal_getTransaction", _) => result(transaction("TX-2", 0)),
        (other, _) => panic!("unexpected {other}"),
    });
    let client = client(&server);
    let (transaction, signature) = signed_transaction(&client, "TX-2");
    let outcome = run(async move { client.send(&transaction, &signature, &[]).await.unwrap() });
    assert!(matches!(outcome, SendOutcome::Accepted(_)), "{outcome:?}");
    let order: Vec<String> =
        server.requests().iter().skip(1).map(|r| r.method().to_owned()).collect();
    assert_eq!(
        order,
        ["universal_sendTransaction", "universal_getTransaction", "universal_sendTransaction"]
    );
    // The same transaction with the same signatures, both times.
    let sends: Vec<Value> = server
        .requests()
        .iter()
        .filter(|r| r.method() == "universal_sendTransaction")
        .map(|r| r.body["params"].clone())
        .collect();
    assert_eq!(sends[0], sends[1]);
}

#[test]
fn a_lost_send_that_executed_is_found_and_not_sent_again() {
    for (status, state) in
        [(7, SendStatus::Success), (5, SendStatus::Pending), (6, SendStatus::Failed)]
    {
        let server = Server::start(move |request, _| match request.method() {
            "universal_createTransaction" => result(created("TX-3")),
            "universal_sendTransaction" => Reply::Json(503, json!({"error": "busy"})),
            "universal_getTransaction" => result(json!({"data": transaction("TX-3", status)})),
            other => panic!("unexpected {other}"),
        });
        let client = client(&server);
        let (transaction, signature) = signed_transaction(&client, "TX-3");
        let outcome = run(async move { client.send(&transaction, &signature, &[]).await.unwrap() });
        let SendOutcome::Found(record) = outcome else { panic!("{outcome:?}") };
        assert_eq!(record.state().and_then(|s| s.send_status()), Some(state));
        assert_eq!(server.count("universal_sendTransaction"), 1, "status {status}: sent once");
    }
}

#[test]
fn a_lost_send_whose_status_cannot_be_read_is_not_sent_again() {
    let server = Server::start(|request, _| match request.method() {
        "universal_createTransaction" => result(created("TX-4")),
        "universal_sendTransaction" => Reply::Drop,
        "universal_getTransaction" => Reply::Json(500, json!({})),
        other => panic!("unexpected {other}"),
    });
    let client = client(&server);
    let (transaction, signature) = signed_transaction(&client, "TX-4");
    let error = run(async move { client.send(&transaction, &signature, &[]).await.unwrap_err() });
    assert!(error.message().contains("it was not sent again"), "{error}");
    assert_eq!(server.count("universal_sendTransaction"), 1);
}

#[test]
fn refusals_are_definite_and_service_failures_are_not() {
    let server = Server::start(|request, _| match request.method() {
        "universal_createTransaction" => result(created("TX-5")),
        "universal_sendTransaction" if request.body["params"][0] == "TX-5" => {
            rpc_error(-32655, "invalid signature")
        }
        "universal_sendTransaction" => rpc_error(-32603, "internal error"),
        other => panic!("unexpected {other}"),
    });
    let client = client(&server);
    let (transaction, signature) = signed_transaction(&client, "TX-5");
    let (refused, failed) = run(async move {
        let refused = client.send_once(&transaction, &signature, &[]).await.unwrap_err();
        let mut other = transaction.clone();
        other.transaction_id = "TX-6".into();
        let failed = client.send_once(&other, &signature, &[]).await.unwrap_err();
        (refused, failed)
    });
    match refused {
        SendFailure::Refused(e) => assert_eq!(e.kind(), ErrorKind::Authentication, "{e}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(failed, SendFailure::Unknown { maybe_sent: true, .. }), "{failed:?}");
}

#[test]
fn balances_of_many_accounts_are_read_a_bounded_number_at_once() {
    let server = Server::start(|request, _| {
        std::thread::sleep(Duration::from_millis(30));
        let owner = request.body["params"][0]["ownerAddress"].as_str().unwrap().to_owned();
        let mut answer = assets();
        answer["assets"][0]["tokenType"] = json!(owner);
        result(answer)
    });
    let config = ParticleConfig { balance_concurrency: 3, ..config(&server) };
    let client = ParticleClient::new(config).unwrap();
    let owners: Vec<String> = (1..=12).map(|n| format!("0x{n:040x}")).collect();
    let accounts: Vec<AccountOptions> = owners.iter().map(|o| opened(o)).collect();
    let answers = run(async move { client.primary_assets_many(&accounts).await });
    assert_eq!(answers.len(), 12);
    for (answer, owner) in answers.iter().zip(&owners) {
        assert_eq!(&answer.as_ref().unwrap().assets[0].token_type, owner, "answers in order");
    }
    let most = server.most_in_flight.load(Ordering::SeqCst);
    assert!((2..=3).contains(&most), "at most 3 at once, and some at once: {most}");
    assert_eq!(server.in_flight.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------------------------------------
// The deposit engine's interface

#[test]
fn the_backend_opens_quotes_signs_sends_and_follows_with_a_per_owner_key() {
    let server = Server::start(|request, earlier| match (request.method(), earlier) {
        ("universal_getUniversalAccount", _) => result(smart_account()),
        ("universal_getPrimaryAssets", _) => result(assets()),
        ("universal_createTransaction", 0) => result(created("TX-PROBE")),
        ("universal_createTransaction", _) => result(created("TX-7")),
        ("universal_sendTransaction", _) => result(json!({"transactionId": "TX-7"})),
        ("universal_getTransaction", _) => result(transaction("TX-7", 7)),
        (other, _) => panic!("unexpected {other}"),
    });
    let seed = SeedSigner::from_bytes(&[0x5a; 32]).unwrap();
    let expected_signer = seed.derive(OWNER).unwrap().address();
    let backend: Arc<dyn AccountBackend> =
        Arc::new(ParticleBackend::new(client(&server), Arc::new(seed)));
    let (account, balances, prepared, signature, sent, status) = run({
        let backend = Arc::clone(&backend);
        async move {
            let account = backend.open_account(OWNER).await.unwrap();
            let balances = backend.balances(std::slice::from_ref(&account)).await;
            let request = QuoteRequest {
                account_id: account.account_id.clone(),
                source: QuoteSource {
                    chain_id: 8453,
                    token: "USDC".into(),
                    raw_amount: U256::from(10_000_000u64),
                },
                destination: QuoteDestination {
                    chain_id: 42161,
                    token: "USDC".into(),
                    address: OWNER.into(),
                },
                purpose: QuotePurpose::Sweep,
                deposit_id: None,
            };
            let prepared = backend.quote(&account, &request).await.unwrap();
            let signature = backend.sign(&account, &prepared).await.unwrap();
            let sent = backend.send_once(&account, &prepared, &signature).await.unwrap();
            let status = backend.send_status(&account, &prepared).await.unwrap();
            (account, balances, prepared, signature, sent, status)
        }
    });
    assert_eq!(backend.name(), "particle");
    assert_eq!(account.signer_address, expected_signer.to_checksum(None));
    assert_eq!(
        (account.evm_address.as_str(), account.solana_address.as_str()),
        (EVM_DEPOSIT, SOLANA_DEPOSIT)
    );
    let lines = balances[0].as_ref().unwrap();
    let usdc = lines.iter().find(|l| l.token == "USDC").unwrap();
    assert_eq!(
        (usdc.chain_id, usdc.decimals, usdc.raw_amount, usdc.received),
        (8453, 6, U256::from(30_000_000u64), None)
    );
    // $10 of USDC, probe gas $0.03 and LP $0.00002 (0.2 %): 10 × 0.998 − 0.03 = 9.95 first;
    // its fees ($0.03 in all) leave $0.02 unspent, so a closer one: 9.95 + 0.02 × 0.998.
    assert_eq!(prepared.quote.quote_id, "TX-7");
    assert_eq!(prepared.quote.destination_raw_amount, U256::from(9_969_960u64));
    assert!((prepared.quote.source_value_usd - 10.0).abs() < 1e-9);
    assert!((prepared.quote.fees.gas_usd - 0.03).abs() < 1e-12);
    // The universal transaction: expect the USDC on Arbitrum, then transfer it to the owner.
    let creates: Vec<Request> = server
        .requests()
        .into_iter()
        .filter(|r| r.method() == "universal_createTransaction")
        .collect();
    assert_eq!(creates.len(), 3, "a probe, a first estimate, then the closer transaction");
    let universal = &creates[2].body["params"][1]["universalTransaction"];
    assert_eq!(universal["chainId"], 42161);
    let wire = amounts::to_hex(amounts::wire_from_raw(U256::from(9_969_960u64), 6).unwrap());
    assert_eq!(universal["expectTokens"], json!([{"type": "usdc", "amount": wire}]));
    let call = &universal["transactions"][0];
    assert_eq!(call["to"], "0xaf88d065e77c8cC2239327C5EDb3A432268e5831");
    assert!(
        call["data"].as_str().unwrap().starts_with(
            "0xa9059cbb00000000000000000000000052908400098527886e0f7030069857d2e4169ee7"
        ),
        "{call}"
    );
    assert_eq!(
        creates[1].body["params"][0]["ownerAddress"],
        json!(expected_signer.to_checksum(None))
    );
    // The signature is the derived key's, over the root.
    let root: B256 = prepared.quote.root_hash.parse().unwrap();
    let bytes: [u8; 65] = hex::decode(&signature).unwrap().try_into().unwrap();
    assert_eq!(recover_address(&personal_digest(&root), &bytes).unwrap(), expected_signer);
    assert_eq!((sent.transaction_id.as_str(), sent.status), ("TX-7", SendStatus::Pending));
    assert_eq!(status.unwrap().status, SendStatus::Success);
}

#[test]
fn the_backend_refuses_to_sign_with_another_key_than_the_accounts() {
    let server = Server::start(|request, _| match request.method() {
        "universal_getUniversalAccount" => result(smart_account()),
        other => panic!("unexpected {other}"),
    });
    let key = KeySigner::from_hex(ANVIL_KEY).unwrap();
    let backend = ParticleBackend::new(client(&server), Arc::new(key));
    let error = run(async move {
        let mut account = backend.open_account(OWNER).await.unwrap();
        account.signer_address = "0x1111111111111111111111111111111111111111".into();
        let prepared = depositkit_core::services::PreparedTransfer {
            quote: depositkit_core::services::Quote {
                quote_id: "TX-8".into(),
                root_hash: format!("0x{}", "11".repeat(32)),
                expires_at: 0,
                source_decimals: 6,
                source_value_usd: 1.0,
                destination_decimals: 6,
                destination_raw_amount: U256::from(1u8),
                fees: Default::default(),
            },
            backend: Value::Null,
        };
        backend.sign(&account, &prepared).await.unwrap_err()
    });
    assert_eq!(error.kind(), ErrorKind::Authentication, "{error}");
}
