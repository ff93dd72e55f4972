//! Wallet balances: which source answers (host provider → "rpc" → apiKey → proxyUrl → hosted
//! default, `docs/funding.md` §3), what each is sent, how failures read, and the rules every
//! funding call checks first. The HTTP sources are small loopback servers here; RPC discovery
//! runs against real chains in `funding_evm.rs` and `funding_solana.rs`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use depositkit_core::deposit::{
    DEFAULT_BALANCE_PROXY_URL, DepositClient, DepositClientConfig, DestinationConfig,
};
use depositkit_core::funding::{BalanceSource, EvmProvider, ProviderError, WalletProvider};
use depositkit_core::{ErrorKind, TokenType, U256};
use serde_json::{Value, json};

// The wallet is given in lower case; depositkit hands it out (and sends it) in EIP-55 form.
const WALLET_GIVEN: &str = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const WALLET: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const OWNER: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
const KEY: &str = "k-very-secret-balance-key";

/// A Base USDC line (offered) and an X Layer line (never offered).
fn lines() -> Value {
    json!({"balances": [
        {"chainId": 8453, "token": "USDC", "tokenAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
         "decimals": 6, "rawAmount": "25000000", "priceUSD": 1.0, "valueUSD": 25.0},
        {"chainId": 196, "token": "USDC", "tokenAddress": "0x74b7F16337b8972027F6196A17a631aC6dE26d22",
         "decimals": 6, "rawAmount": "25000000", "priceUSD": 1.0, "valueUSD": 25.0}
    ]})
}

/// One request a test server received.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A loopback HTTP server answering every request with `status` and `body`, recording them.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut buf).ok().filter(|n| *n > 0)?;
        data.extend_from_slice(&buf[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let mut lines = head.lines();
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while data.len() < head_end + 4 + length {
        let n = stream.read(&mut buf).ok().filter(|n| *n > 0)?;
        data.extend_from_slice(&buf[..n]);
    }
    let body = serde_json::from_slice(&data[head_end + 4..]).unwrap_or(Value::Null);
    Some(Request { path, headers, body })
}

fn serve(status: u16, reply: Value) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let Some(request) = read_request(&mut stream) else { continue };
            seen.lock().unwrap().push(request);
            let body = reply.to_string();
            let answer = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    Server { url, requests }
}

fn config(tune: impl FnOnce(&mut DepositClientConfig)) -> DepositClientConfig {
    let mut config = DepositClientConfig::new(OWNER, DestinationConfig::chain(8453))
        .with_services_url("http://127.0.0.1:1");
    config.http_retries = 0;
    config.request_timeout_ms = 3000;
    config.call_timeout_ms = 10_000;
    config.funding.enabled = true;
    tune(&mut config);
    config
}

/// A wallet that is never asked anything in these tests.
fn idle_wallet() -> EvmProvider {
    EvmProvider::Host(Arc::new(|method: &str, _: &Value| -> Result<Value, ProviderError> {
        Err(ProviderError::new(4200, format!("not expected: {method}")))
    }))
}

fn client(tune: impl FnOnce(&mut DepositClientConfig)) -> DepositClient {
    let client = DepositClient::new(config(tune)).unwrap();
    client.set_evm_wallet(idle_wallet(), Some(WALLET_GIVEN)).unwrap();
    client
}

#[test]
fn the_host_balance_provider_wins_over_every_other_source() {
    let api = serve(200, lines());
    let proxy = serve(200, lines());
    let client = client(|c| {
        c.funding.api_key = Some(KEY.into());
        c.funding.balance_api_url = Some(api.url.clone());
        c.funding.proxy_url = Some(proxy.url.clone());
        c.funding.balance_provider = Some("rpc".into());
        // Closed loopback ports: the RPC source fails at once, deterministically.
        let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        for chain_id in [1, 56, 8453, 42161] {
            c.funding.evm_rpc_urls.insert(chain_id, format!("http://{closed}"));
        }
    });
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&asked);
    client
        .set_balance_provider(Some(Arc::new(move |method: &str, params: &Value| {
            record.lock().unwrap().push((method.to_owned(), params.clone()));
            Ok(lines()["balances"].clone())
        })))
        .unwrap();
    let balances = client.get_wallet_balances().unwrap();
    assert_eq!(balances.len(), 1, "X Layer is never offered: {balances:#?}");
    assert_eq!(balances[0].source(), BalanceSource::Provider);
    assert_eq!((balances[0].chain_id(), balances[0].token()), (8453, TokenType::USDC));
    assert_eq!(balances[0].wallet_address(), WALLET);
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        [(
            "getWalletBalances".to_owned(),
            json!({"evmAddress": WALLET, "solanaAddress": null, "chainIds": [1, 56, 8453, 42161, 101]})
        )]
    );
    assert!(api.requests().is_empty() && proxy.requests().is_empty());
    // Removed, the next source (rpc, ahead of the key) answers — here it fails on the closed
    // ports, which shows it was tried instead of the API.
    client.set_balance_provider(None).unwrap();
    let err = client.get_wallet_balances().unwrap_err();
    assert!(
        err.message()
            .starts_with("wallet balances from RPC balance discovery failed: RPC failure on"),
        "{err}"
    );
    assert!(api.requests().is_empty());
}

#[test]
fn a_failing_host_provider_is_a_funding_error() {
    let client = client(|_| {});
    client
        .set_balance_provider(Some(Arc::new(
            |_: &str, _: &Value| -> Result<Value, ProviderError> {
                Err(ProviderError::new(-32000, "indexer down"))
            },
        )))
        .unwrap();
    let err = client.get_wallet_balances().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Funding);
    assert_eq!(
        err.message(),
        "wallet balances from the host's balance provider failed: the wallet failed getWalletBalances: indexer down (-32000)"
    );
}

#[test]
fn the_api_key_wins_over_the_proxy_and_is_sent_only_as_a_header() {
    let api = serve(200, lines());
    let proxy = serve(200, lines());
    let client = client(|c| {
        c.funding.api_key = Some(KEY.into());
        c.funding.balance_api_url = Some(format!("{}/balances", api.url));
        c.funding.proxy_url = Some(proxy.url.clone());
    });
    let balances = client.get_wallet_balances().unwrap();
    assert_eq!(balances[0].source(), BalanceSource::ApiKey);
    let requests = api.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/balances/v1/wallet-balances");
    assert_eq!(requests[0].header("X-API-Key"), Some(KEY));
    assert_eq!(requests[0].body["evmAddress"], WALLET);
    assert!(proxy.requests().is_empty());
    assert!(!format!("{client:?}").contains(KEY));
}

#[test]
fn a_refused_key_is_a_funding_error_without_the_key() {
    let api = serve(
        401,
        json!({"error": {"code": "INVALID_API_KEY", "message": format!("unknown key {KEY}")}}),
    );
    let client = client(|c| {
        c.funding.api_key = Some(KEY.into());
        c.funding.balance_api_url = Some(api.url.clone());
    });
    let err = client.get_wallet_balances().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Funding);
    assert!(err.message().starts_with("wallet balances from the balance API"), "{err}");
    assert!(err.message().contains("HTTP 401 INVALID_API_KEY"), "{err}");
    assert!(!err.message().contains(KEY), "{err}");
}

#[test]
fn the_proxy_wins_over_the_hosted_default_and_gets_no_key() {
    let proxy = serve(200, lines());
    let client = client(|c| c.funding.proxy_url = Some(format!("{}/balance-proxy/", proxy.url)));
    let balances = client.get_wallet_balances().unwrap();
    assert_eq!(balances[0].source(), BalanceSource::Proxy);
    assert_eq!(balances[0].to_json()["source"], "proxyUrl");
    let requests = proxy.requests();
    assert_eq!(requests[0].path, "/balance-proxy/v1/wallet-balances");
    assert_eq!(requests[0].header("X-API-Key"), None);
    let bad = serve(400, json!({"error": {"code": "INVALID_REQUEST", "message": "chainIds"}}));
    let client = client_with_proxy(&bad.url);
    let err = client.get_wallet_balances().unwrap_err();
    assert!(err.message().contains("HTTP 400 INVALID_REQUEST: chainIds"), "{err}");
}

fn client_with_proxy(url: &str) -> DepositClient {
    client(|c| c.funding.proxy_url = Some(url.to_owned()))
}

#[test]
fn the_hosted_default_is_named_when_it_fails() {
    let client = client(|_| {});
    let err = client.get_wallet_balances().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Funding | ErrorKind::Timeout), "{err}");
    assert!(err.message().contains(DEFAULT_BALANCE_PROXY_URL), "{err}");
    assert!(err.message().starts_with("wallet balances from the hosted balance proxy"), "{err}");
}

#[test]
fn a_balance_works_only_with_the_client_that_issued_it() {
    let provider: Arc<dyn WalletProvider> =
        Arc::new(|_: &str, _: &Value| -> Result<Value, ProviderError> { Ok(lines()) });
    let a = client(|_| {});
    a.set_balance_provider(Some(Arc::clone(&provider))).unwrap();
    let b = client(|_| {});
    let balance = a.get_wallet_balances().unwrap().remove(0);
    let err = b.fund_from_wallet(&balance, None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("issued by another client"), "{err}");
    // Its own client takes it (and then needs initialize() for the deposit address).
    let err = a.fund_from_wallet(&balance, None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration, "{err}");
    let err = a.fund_from_wallet(&balance, Some(U256::ZERO)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn without_a_wallet_or_with_funding_off() {
    let client = DepositClient::new(config(|_| {})).unwrap();
    let err = client.get_wallet_balances().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Funding);
    assert!(err.message().starts_with("no funding wallet is connected"), "{err}");
    let err = client.connect_evm_wallet().unwrap_err();
    assert_eq!(
        err.message(),
        "no EVM wallet is connected: call set_evm_wallet() (and connect_evm_wallet())"
    );

    let off = DepositClient::new(config(|c| c.funding.enabled = false)).unwrap();
    let errors = [
        off.set_evm_wallet(idle_wallet(), None).unwrap_err(),
        off.connect_evm_wallet().unwrap_err(),
        off.evm_accounts().unwrap_err(),
        off.prompt_evm_account_selection().unwrap_err(),
        off.connect_solana_wallet().unwrap_err(),
        off.get_wallet_balances().unwrap_err(),
    ];
    for err in errors {
        assert_eq!(err.kind(), ErrorKind::Configuration);
        assert_eq!(err.message(), "funding is not enabled");
    }
}

#[test]
fn an_unknown_balance_provider_name_is_a_configuration_error() {
    let err = DepositClient::new(config(|c| c.funding.balance_provider = Some("covalent".into())))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert!(err.message().contains("\"covalent\""), "{err}");
}
