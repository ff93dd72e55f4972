//! Devnet's Particle Universal Account JSON-RPC (`POST /particle`) against Particle's own
//! published SDK (`@particle-network/universal-account-sdk@2.0.3`, `tests/particle/`): the SDK's
//! calls all succeed, and for one owner the SDK, the depositkit client (through
//! `docs/protocol.md`) and devnet's own state agree on the deposit addresses, the balances and
//! the transactions — on the plain devnet and on the chain-backed one. Also: the requests log,
//! and the JSON-RPC's refusals (credentials, signatures, expiry, balances, faults).
//!
//! The SDK runs under node from `tests/particle/node_modules`, which `tests/particle/install.sh`
//! installs (a `scripts/test.sh` step); a missing install fails the test, never skips it.

mod common;
mod support;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use alloy_primitives::{Address, U256, hex};
use common::{TempDb, agent};
use depositkit_core::deposit::{
    DepositClient, DepositClientConfig, DepositPhase, DestinationConfig, TokenTransactionFilter,
};
use depositkit_core::{TokenType, format_units};
use depositkit_devnet::services::particle::log::shape;
use depositkit_devnet::services::particle::signing::{UserOp, sign_ops};
use depositkit_devnet::store::StoredWallet;
use depositkit_devnet::{
    BUILTIN_CLIENT_KEY, BUILTIN_PROJECT_ID, Devnet, DevnetConfig, Fault, RunningDevnet, Service,
};
use k256::ecdsa::SigningKey;
use serde_json::{Value, json};

const USDC_BASE: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const USDC_ARBITRUM: &str = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831";
/// How long the SDK script may run.
const SDK_TIMEOUT: Duration = Duration::from_secs(60);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fresh owner key and its address.
fn owner_key() -> (SigningKey, Address) {
    let key = loop {
        if let Ok(key) = SigningKey::from_slice(&rand::random::<[u8; 32]>()) {
            break key;
        }
    };
    let address = Address::from_private_key(&key);
    (key, address)
}

/// Makes `key` the intermediary wallet of depositkit user `user` (the JWT `sub` `ua:<user>`),
/// so that the universal account depositkit opens for `user` is owned by `key`'s address —
/// the owner the SDK is given.
fn seed_wallet(devnet: &RunningDevnet, user: &str, key: &SigningKey) {
    let wallet = StoredWallet {
        address: Address::from_private_key(key).to_checksum(None),
        secret_key: key.to_bytes().to_vec(),
    };
    devnet.store().insert_signer_wallet(&format!("ua:{}", user.to_lowercase()), &wallet).unwrap();
}

/// Runs `tests/particle/sdk-run.mjs` with `config` on stdin; the report it prints.
fn run_sdk(config: &Value) -> Value {
    let dir = root().join("tests/particle");
    assert!(
        dir.join("node_modules/@particle-network/universal-account-sdk/package.json").is_file(),
        "Particle's SDK is not installed: run tests/particle/install.sh (scripts/test.sh does)"
    );
    let mut child = Command::new("node")
        .arg(dir.join("sdk-run.mjs"))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node (needed for Particle's SDK): {e}"));
    child.stdin.take().unwrap().write_all(config.to_string().as_bytes()).unwrap();
    let pid = child.id();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait_with_output());
    });
    let output = match done_rx.recv_timeout(SDK_TIMEOUT) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // SAFETY: signalling the child this test started, by its pid.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("the SDK script took more than {SDK_TIMEOUT:?}");
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("the SDK script printed no report ({e}); stdout: {stdout}\nstderr: {stderr}")
    });
    for call in report["calls"].as_array().unwrap() {
        assert_eq!(call["ok"], true, "the SDK's {} failed: {}", call["name"], call["error"]);
    }
    assert!(output.status.success(), "exit {:?}: {report}\n{stderr}", output.status);
    report
}

/// A JSON-RPC request to `/particle` as the SDK shapes it.
fn post_rpc(
    devnet: &RunningDevnet,
    credentials: (&str, &str),
    method: &str,
    params: Value,
) -> common::Reply {
    let body = json!({
        "id": 1, "jsonrpc": "2.0", "method": method, "params": params,
        "deviceId": "test", "projectId": credentials.0, "projectClientKey": credentials.1,
    });
    let url = devnet.particle_url();
    common::post(&agent(), &url, None, Some("application/json"), &body.to_string())
}

/// [`post_rpc`]'s reply, asserting HTTP 200 (every answer but an injected fault's).
fn rpc(devnet: &RunningDevnet, credentials: (&str, &str), method: &str, params: Value) -> Value {
    let reply = post_rpc(devnet, credentials, method, params);
    assert_eq!(reply.status, 200, "{method}: {}", reply.body);
    reply.json()
}

fn result(reply: &Value) -> &Value {
    assert!(reply.get("error").is_none(), "{reply}");
    &reply["result"]
}

const BUILTIN: (&str, &str) = (BUILTIN_PROJECT_ID, BUILTIN_CLIENT_KEY);

/// The account object the SDK sends for `owner`.
fn acct(owner: Address) -> Value {
    json!({"ownerAddress": owner.to_checksum(None), "name": "UNIVERSAL", "version": "2.0.1"})
}

/// Signs a created transaction as the SDK and a local key do (`particle-ua-wire.md` §5): the
/// `signatures` param of `universal_sendTransaction`.
fn sign(transaction: &Value, key: &SigningKey, valid_until: u64) -> Value {
    let ops: Vec<UserOp> = transaction["feeQuotes"][0]["userOps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| UserOp {
            chain_id: op["chainId"].as_u64().unwrap(),
            hash: op["userOpHash"].as_str().unwrap().parse().unwrap(),
        })
        .collect();
    let blobs = sign_ops(&ops, key, valid_until).unwrap();
    let entries: Vec<Value> = ops
        .iter()
        .zip(blobs)
        .map(|(op, blob)| {
            json!({"userOpHash": format!("{:#x}", op.hash), "signature": hex::encode_prefixed(blob)})
        })
        .collect();
    json!({ "signatures": entries })
}

fn in_ten_minutes() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 600
}

/// `(chainId, token type, rawAmount)` of every line with money, sorted, from `lines` whose
/// token type is `type_field` (lower-cased).
fn lines_of(lines: &Value, type_field: &str) -> Vec<(u64, String, String)> {
    let mut out: Vec<(u64, String, String)> = lines
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["rawAmount"] != "0")
        .map(|l| {
            (
                l["chainId"].as_u64().unwrap(),
                l[type_field].as_str().unwrap().to_ascii_lowercase(),
                l["rawAmount"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The lines with money as the SDK reported them.
fn sdk_balances(report: &Value) -> Vec<(u64, String, String)> {
    lines_of(&report["balances"], "tokenType")
}

/// The same from `POST /ua/v1/balances` (`docs/protocol.md`), as depositkit's session sees it.
fn protocol_balances(
    api: &common::deposit::Api,
    jwt: &str,
    account_id: &str,
) -> Vec<(u64, String, String)> {
    let reply = api.post("/ua/v1/balances", Some(jwt), &json!({ "accountIds": [account_id] }));
    assert_eq!(reply.status, 200, "{}", reply.body);
    lines_of(&reply.json()["accounts"][account_id]["balances"], "token")
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

/// The depositkit client of `user`, delivering USDC on Arbitrum to the user.
fn deposit_client(devnet: &RunningDevnet, user: &str) -> DepositClient {
    let mut config = DepositClientConfig::new(user, DestinationConfig::chain(42161))
        .with_services_url(devnet.services_url());
    config.min_polling_interval_ms = 20;
    config.polling_interval_ms = 50;
    config.http_initial_backoff_ms = 5;
    config.call_timeout_ms = 20_000;
    DepositClient::new(config).unwrap()
}

/// Polls until a deposit is detected, then waits for its sweep to be credited.
fn sweep_one(client: &DepositClient) {
    let detected = client.poll_now().unwrap();
    let id = detected
        .iter()
        .find(|e| e.phase == DepositPhase::Detected)
        .unwrap_or_else(|| panic!("no deposit detected: {detected:?}"))
        .id
        .clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = client.next_event(left).unwrap_or_else(|| panic!("{id} was not credited"));
        if let Some(e) = event.lifecycle()
            && e.id == id
        {
            match e.phase {
                DepositPhase::Credited => return,
                DepositPhase::Failed => panic!("{id} failed: {e:?}"),
                _ => {}
            }
        }
    }
}

/// What the SDK sends: the body's keys in its order and axios's headers, no client key.
fn assert_sent_by_the_sdk(requests: &[Value], server_key: &str) {
    assert!(!requests.is_empty());
    let sdk_keys =
        json!(["id", "jsonrpc", "method", "params", "deviceId", "projectId", "projectClientKey"]);
    for request in requests {
        assert_eq!(request["bodyKeys"], sdk_keys, "{request}");
        assert_eq!(request["envelope"]["projectClientKey"], "<redacted>");
        let agent = request["headers"]["user-agent"].as_str().unwrap_or_default();
        assert!(agent.starts_with("axios/"), "{request}");
        assert_eq!(shape(request)["headers"], json!({ "content-type": "application/json" }));
    }
    let text = serde_json::to_string(requests).unwrap();
    assert!(!text.contains(server_key), "the client key is in the log");
}

#[test]
fn particles_sdk_and_depositkit_see_one_owner_the_same() {
    let db = TempDb::new();
    let devnet = Devnet::start(DevnetConfig::new(&db.0)).unwrap();
    let project = devnet.store().create_project("particle sdk").unwrap();
    let (key, owner) = owner_key();
    let user = support::fresh_evm();
    seed_wallet(&devnet, &user, &key);

    // depositkit, through docs/protocol.md: initialize, then one deposit detected and swept.
    let client = deposit_client(&devnet, &user);
    let addresses = client.initialize().unwrap();
    assert_eq!(client.intermediary_address().unwrap(), Some(owner.to_checksum(None)));
    let sender = support::fresh_evm();
    devnet.deposit(&addresses.evm, 8453, TokenType::USDC, "25000000", Some(&sender)).unwrap();
    sweep_one(&client);
    // What stays for the SDK to spend (the client does not poll again).
    devnet.deposit(&addresses.evm, 8453, TokenType::USDC, "40000000", None).unwrap();
    devnet.deposit(&addresses.evm, 42161, TokenType::ETH, "20000000000000000", None).unwrap();
    devnet.deposit(&addresses.solana, 101, TokenType::SOL, "1500000000", None).unwrap();

    let (receiver, receiver2) = (support::fresh_evm(), support::fresh_evm());
    let report = run_sdk(&json!({
        "rpcUrl": devnet.particle_url(),
        "projectId": project.project_id,
        "projectClientKey": project.server_key,
        "ownerKey": hex::encode_prefixed(key.to_bytes()),
        "transfer": {"chainId": 8453, "address": USDC_BASE, "amount": "5", "receiver": receiver},
        "universal": {"chainId": 42161, "type": "usdc", "address": USDC_ARBITRUM, "decimals": 6,
                      "amount": "3", "receiver": receiver2},
        "tokenTransactions": {"chainId": 8453, "address": USDC_BASE},
    }));

    // The same deposit addresses.
    assert_eq!(report["owner"], owner.to_checksum(None));
    assert_eq!(report["addresses"], json!({"evm": addresses.evm, "solana": addresses.solana}));
    // Both sends went through; devnet's ledger shows the deliveries.
    for (sent, address, chain_id, raw) in
        [("transfer", &receiver, 8453, "5000000"), ("universal", &receiver2, 42161, "3000000")]
    {
        let answer = &report["sent"][sent];
        assert_eq!(
            (answer["status"].as_i64(), answer["deliveredRawAmount"].as_str()),
            (Some(7), Some(raw)),
            "{answer}"
        );
        assert_eq!(devnet.ledger_balance(address, chain_id, TokenType::USDC).unwrap(), raw);
    }
    // getTransaction answers the SDK's UA_TRANSACTION_STATUS (7 FINISHED); the history the spec's
    // UATransaction status (1).
    for call in report["calls"].as_array().unwrap() {
        if call["name"].as_str().unwrap().starts_with("getTransaction(") {
            assert_eq!(call["result"]["status"], 7, "{call}");
        }
        if call["name"] == "getTransactions" {
            assert!(
                call["result"]["transactions"].as_array().unwrap().iter().all(|t| t["status"] == 1)
            );
        }
    }
    // The same balances: the SDK's primary assets, depositkit's session on docs/protocol.md.
    let api = common::deposit::Api { base: devnet.services_url(), agent: agent() };
    let jwt = api.mint(&user);
    let account_id = client.account_id().unwrap().unwrap();
    let balances = sdk_balances(&report);
    assert_eq!(balances, protocol_balances(&api, &jwt, &account_id));
    assert!(balances.contains(&(101, "sol".into(), "1500000000".into())), "{balances:?}");
    assert!(balances.contains(&(42161, "eth".into(), "20000000000000000".into())), "{balances:?}");
    // The same transactions, newest first: the SDK's getTransactions and getTokenTransactions,
    // depositkit's get_transactions and get_token_transactions.
    let listed = client.get_transactions(Some(1), Some(100)).unwrap();
    let depositkit_ids: Vec<String> =
        listed.transactions.iter().map(|t| t.transaction_id.clone()).collect();
    assert_eq!(ids(&report["transactions"]), depositkit_ids);
    // receive 25 (depositkit), sweep, receive 40, receive ETH, receive SOL, transfer, universal.
    assert_eq!(depositkit_ids.len(), 7, "{depositkit_ids:?}");
    for sent in ["transfer", "universal"] {
        let hash = report["sent"][sent]["txHash"].as_str().unwrap();
        assert!(
            depositkit_ids.iter().any(|id| id == hash),
            "{sent} {hash} not in {depositkit_ids:?}"
        );
    }
    let filter = TokenTransactionFilter::for_token(8453, TokenType::USDC).unwrap();
    let by_token = client.get_token_transactions(&filter, None).unwrap();
    let by_token: Vec<String> =
        by_token.transactions.iter().map(|t| t.transaction_id.clone()).collect();
    assert_eq!(ids(&report["tokenTransactions"]), by_token);

    // Every request the SDK sent is in devnet's log, as the SDK shapes it.
    let requests = devnet.particle_requests();
    let methods: Vec<&str> = requests.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        [
            "universal_getUniversalAccount",
            "universal_getPrimaryAssets",
            "universal_createTransaction",
            "universal_sendTransaction",
            "universal_getTransaction",
            "universal_createTransaction",
            "universal_sendTransaction",
            "universal_getTransaction",
            "universal_getTransactionsV2",
            "universal_getTokenTransactions",
            "universal_getPrimaryAssets",
        ]
    );
    assert_sent_by_the_sdk(&requests, &project.server_key);
    // The shapes recorded are those of particle-ua-wire.md §4.
    assert_eq!(
        shape(&requests[8])["params"],
        json!([{"sender": "0x", "solanaSender": "string"}, {"page": "integer", "limit": "integer"}])
    );
    assert_eq!(
        shape(&requests[9])["params"],
        json!(["string", {"sender": "0x", "solanaSender": "string"}, {"pageToken": "null"}])
    );
    assert_eq!(requests[9]["params"][0], "usdc", "a primary token goes by its type");
    let transfer = &requests[2]["params"][1];
    assert_eq!(transfer["tag"], "transfer_v2");
    assert_eq!(transfer["assetTokens"][0]["amount"], "0x4563918244f40000", "5, 18 decimals");
}

/// The same on the chain-backed devnet: the SDK's sends move real tokens on the local chains.
#[test]
fn particles_sdk_on_the_chain_backed_devnet() {
    let net = support::shared();
    let (key, owner) = owner_key();
    let user = support::fresh_evm();
    net.devnet(|d| seed_wallet(d, &user, &key));
    let ua = net.user(&user);
    assert_eq!(ua.wallet, owner.to_checksum(None));
    let base = net.chains.evm_url(8453);
    let arbitrum = net.chains.evm_url(42161);
    let dev = net.chains.dev_account(7);
    let usdc_base = net.chains.token(8453, "USDC");
    let usdc_arbitrum = net.chains.token(42161, "USDC");
    support::wallets::send_token(
        &base,
        &dev,
        &usdc_base,
        &ua.evm_address,
        U256::from(30_000_000u64),
    );
    let (project_id, client_key) = net.devnet(|d| {
        let project = d.store().create_project("particle sdk on chains").unwrap();
        (project.project_id, project.server_key)
    });
    let (receiver, receiver2) = (support::fresh_evm(), support::fresh_evm());
    let report = run_sdk(&json!({
        "rpcUrl": net.devnet(RunningDevnet::particle_url),
        "projectId": project_id,
        "projectClientKey": client_key,
        "ownerKey": hex::encode_prefixed(key.to_bytes()),
        "transfer": {"chainId": 8453, "address": usdc_base, "amount": "5", "receiver": receiver},
        "universal": {"chainId": 42161, "type": "usdc", "address": usdc_arbitrum, "decimals": 6,
                      "amount": "3", "receiver": receiver2},
        "tokenTransactions": {"chainId": 8453, "address": usdc_base},
    }));
    assert_eq!(report["addresses"], json!({"evm": ua.evm_address, "solana": ua.solana_address}));
    // Real tokens arrived.
    let held = |url: &str, token: &str, address: &str| {
        support::wallets::token_balance(url, token, address)
    };
    assert_eq!(held(&base, &usdc_base, &receiver), U256::from(5_000_000u64));
    assert_eq!(held(&arbitrum, &usdc_arbitrum, &receiver2), U256::from(3_000_000u64));
    assert!(report["sent"]["universal"]["sourceTxHash"].is_string(), "{report}");
    // The same balances and transactions as docs/protocol.md shows the account's wallet.
    assert_eq!(sdk_balances(&report), protocol_balances(&net.api, &ua.jwt, &ua.account_id));
    let left = held(&base, &usdc_base, &ua.evm_address);
    assert!(sdk_balances(&report).contains(&(8453, "usdc".into(), left.to_string())), "{report}");
    let history: Vec<String> =
        net.history(&ua).iter().map(|t| t["transactionId"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids(&report["transactions"]), history);
}

#[test]
fn refusals_are_json_rpc_errors() {
    let db = TempDb::new();
    let devnet = Devnet::start(DevnetConfig::new(&db.0).with_fault_injection()).unwrap();
    let (key, owner) = owner_key();
    let account =
        result(&rpc(&devnet, BUILTIN, "universal_getUniversalAccount", json!([acct(owner)])))[0]
            .clone();
    let evm = account["smartAccountAddress"].as_str().unwrap().to_owned();

    // Credentials in the body: missing or wrong is -32001 (HTTP 200, as every answer).
    for credentials in [("", ""), (BUILTIN_PROJECT_ID, "wrong"), ("nope", BUILTIN_CLIENT_KEY)] {
        let reply = rpc(&devnet, credentials, "universal_getPrimaryAssets", json!([acct(owner)]));
        assert_eq!(reply["error"]["code"], -32001, "{reply}");
    }
    // Unknown method, params by name, a missing owner, another account's address.
    assert_eq!(rpc(&devnet, BUILTIN, "universal_nope", json!([]))["error"]["code"], -32601);
    let reply = rpc(&devnet, BUILTIN, "universal_getPrimaryAssets", json!({"a": 1}));
    assert_eq!(reply["error"]["code"], -32602);
    let empty = json!([{"ownerAddress": "", "name": "UNIVERSAL", "version": "2.0.1"}]);
    let reply = rpc(&devnet, BUILTIN, "universal_getPrimaryAssets", empty);
    assert!(reply["error"]["message"].as_str().unwrap().contains("ownerAddress"), "{reply}");
    let mut other = acct(owner);
    other["smartAccountAddress"] = json!(support::fresh_evm());
    assert_eq!(
        rpc(&devnet, BUILTIN, "universal_getPrimaryAssets", json!([other]))["error"]["code"],
        -32602
    );

    // Nothing to spend: -32653.
    let transfer = json!({
        "tag": "transfer_v2", "usePrimaryTokens": ["usdc"], "receiver": support::fresh_evm(),
        "chainId": 8453, "assetTokens": [{"assetId": "usdc", "amount": "0x4563918244f40000"}]});
    let reply =
        rpc(&devnet, BUILTIN, "universal_createTransaction", json!([acct(owner), transfer]));
    assert_eq!(reply["error"]["code"], -32653, "{reply}");
    assert_eq!(reply["error"]["data"]["code"], "INSUFFICIENT_BALANCE");
    devnet.deposit(&evm, 8453, TokenType::USDC, "20000000", None).unwrap();
    // Worth less than the gas: -32654.
    let dust = json!({
        "tag": "sell", "assetId": "usdc", "chainId": 8453, "amount": "0x2386f26fc10000",
        "options": {},
    });
    let reply = rpc(&devnet, BUILTIN, "universal_createTransaction", json!([acct(owner), dust]));
    assert_eq!(reply["error"]["code"], -32654, "{reply}");

    let created = result(&rpc(
        &devnet,
        BUILTIN,
        "universal_createTransaction",
        json!([acct(owner), transfer]),
    ))
    .clone();
    let id = created["transactionId"].as_str().unwrap().to_owned();
    // Before the send: status 0.
    let pending = rpc(&devnet, BUILTIN, "universal_getTransaction", json!([id]));
    assert_eq!(result(&pending)["status"], 0);
    // A stranger's signature, an expired one, a missing one.
    let (stranger, _) = owner_key();
    let reply = rpc(
        &devnet,
        BUILTIN,
        "universal_sendTransaction",
        json!([id, sign(&created, &stranger, in_ten_minutes())]),
    );
    assert_eq!(reply["error"]["code"], -32655, "{reply}");
    let reply = rpc(
        &devnet,
        BUILTIN,
        "universal_sendTransaction",
        json!([id, sign(&created, &key, 1_000)]),
    );
    assert_eq!(reply["error"]["code"], -32656, "{reply}");
    let reply = rpc(&devnet, BUILTIN, "universal_sendTransaction", json!([id, {"signatures": []}]));
    assert_eq!(reply["error"]["code"], -32655, "{reply}");
    // An injected 503 on sendTransaction only: nothing is sent.
    devnet
        .inject_service_fault_at(
            Service::Particle,
            Some("/universal_sendTransaction"),
            &Fault::status(503, 1),
        )
        .unwrap();
    let signatures = sign(&created, &key, in_ten_minutes());
    let params = json!([id, signatures]);
    let reply = post_rpc(&devnet, BUILTIN, "universal_sendTransaction", params);
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(
        result(&rpc(&devnet, BUILTIN, "universal_getTransaction", json!([id])))["status"],
        0
    );
    // The owner's signature: sent once, the same answer again, the money moved once.
    let first =
        result(&rpc(&devnet, BUILTIN, "universal_sendTransaction", json!([id, signatures])))
            .clone();
    let again =
        result(&rpc(&devnet, BUILTIN, "universal_sendTransaction", json!([id, signatures])))
            .clone();
    assert_eq!(first, again);
    assert_eq!(
        (first["transactionId"].as_str(), first["status"].as_i64()),
        (Some(id.as_str()), Some(7))
    );
    let receiver = transfer["receiver"].as_str().unwrap();
    assert_eq!(devnet.ledger_balance(receiver, 8453, TokenType::USDC).unwrap(), "5000000");
    // A plain transfer pays the gas only (0.03 USD of USDC at 1 USD): 20 − 5 − 0.03 left.
    let left = devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap();
    assert_eq!(format_units(left.parse().unwrap(), 6).unwrap(), "14.97");
    let sent = result(&rpc(&devnet, BUILTIN, "universal_getTransaction", json!([id]))).clone();
    assert_eq!(
        (sent["quoteId"].as_str(), sent["tag"].as_str(), sent["status"].as_i64()),
        (Some(id.as_str()), Some("refund"), Some(7))
    );
    let by_hash = rpc(&devnet, BUILTIN, "universal_getTransaction", json!([first["txHash"]]));
    assert_eq!(result(&by_hash), &sent);
    assert_eq!(
        rpc(&devnet, BUILTIN, "universal_getTransaction", json!(["0x00"]))["error"]["code"],
        -32657
    );

    // Not JSON, a batch, GET.
    let reply = common::post(&agent(), &devnet.particle_url(), None, Some("application/json"), "{");
    assert_eq!((reply.status, reply.json()["error"]["code"].as_i64()), (200, Some(-32700)));
    let reply =
        common::post(&agent(), &devnet.particle_url(), None, Some("application/json"), "[]");
    assert_eq!(reply.json()["error"]["code"], -32600);
    let reply = common::get(&agent(), &devnet.particle_url());
    assert_eq!((reply.status, reply.header("allow")), (405, Some("POST")));
    // The log has them all, the admin endpoint too.
    let logged =
        common::get(&agent(), &format!("{}/devnet/particle/requests", devnet.services_url()));
    assert_eq!(
        logged.json()["requests"].as_array().unwrap().len(),
        devnet.particle_requests().len()
    );
    assert!(!logged.body.contains(BUILTIN_CLIENT_KEY));
}

#[test]
fn the_other_builders_and_calls() {
    let db = TempDb::new();
    let devnet = Devnet::start(DevnetConfig::new(&db.0)).unwrap();
    let (key, owner) = owner_key();
    let account =
        result(&rpc(&devnet, BUILTIN, "universal_getUniversalAccount", json!([acct(owner)])))[0]
            .clone();
    let evm = account["smartAccountAddress"].as_str().unwrap().to_owned();
    let solana = account["solanaSmartAccountAddress"].as_str().unwrap().to_owned();
    devnet.deposit(&evm, 8453, TokenType::ETH, "100000000000000000", None).unwrap();
    let mut with_addresses = acct(owner);
    with_addresses["smartAccountAddress"] = json!(evm);
    with_addresses["solanaSmartAccountAddress"] = json!(solana);
    let create = |builder: &Value| {
        let params = json!([with_addresses, builder]);
        result(&rpc(&devnet, BUILTIN, "universal_createTransaction", params)).clone()
    };
    let send = |created: &Value| {
        let id = created["transactionId"].clone();
        result(&rpc(
            &devnet,
            BUILTIN,
            "universal_sendTransaction",
            json!([id, sign(created, &key, in_ten_minutes())]),
        ))
        .clone()
    };
    // Sell exactly 0.01 ETH on Base into USDC there (to the account itself).
    let sell = json!({
        "tag": "sell", "usePrimaryTokens": ["usdc"], "assetId": "eth", "chainId": 8453,
        "amount": "0x2386f26fc10000", "options": {"slippage": 100}});
    let created = create(&sell);
    assert_eq!(created["tokenChanges"]["decr"][0]["rawAmount"], "10000000000000000");
    assert_eq!(send(&created)["status"], 7);
    assert_eq!(devnet.ledger_balance(&evm, 8453, TokenType::ETH).unwrap(), "90000000000000000");
    // 25 USD at 2500, less 0.03 gas and 0.2% LP, as USDC.
    assert_eq!(devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "24920000");
    // Buy 10 USD of USDC on Arbitrum; convert to 2 USDT on Arbitrum.
    let buy = json!({
        "tag": "buy", "usePrimaryTokens": ["usdc", "eth"], "assetId": "usdc", "chainId": 42161,
        "amountInUSD": "0x8ac7230489e80000", "options": {}});
    let created = create(&buy);
    assert_eq!(send(&created)["deliveredRawAmount"], "10000000");
    let convert = json!({
        "fee": {
            "tokenTypes": ["eth"], "requestZeroGasFee": false, "requestZeroTransactionFee": false,
        },
        "inputTokens": [{"type": "eth"}],
        "universalTransaction": {
            "chainId": 42161,
            "expectTokens": [{"type": "usdt", "amount": "0x1bc16d674ec80000"}],
            "transactions": [],
        },
        "options": {}});
    let created = create(&convert);
    assert_eq!(created["tokenChanges"]["decr"][0]["token"]["type"], "eth", "paid with inputTokens");
    assert_eq!(
        created["feeQuotes"][0]["userOps"].as_array().unwrap().len(),
        2,
        "Base and Arbitrum"
    );
    send(&created);
    assert_eq!(devnet.ledger_balance(&evm, 42161, TokenType::USDT).unwrap(), "2000000");
    assert_eq!(devnet.ledger_balance(&evm, 42161, TokenType::USDC).unwrap(), "10000000");

    // History by tag and by token, paged by a token.
    let senders = json!({"sender": evm, "solanaSender": solana});
    let tagged = json!([
        {"sender": evm, "solanaSender": solana, "tag": "receive"},
        {"page": 1, "limit": 20},
    ]);
    let receives = result(&rpc(&devnet, BUILTIN, "universal_getTransactionsV2", tagged)).clone();
    assert!(receives["transactions"].as_array().unwrap().iter().all(|t| t["tag"] == "receive"));
    let by_token = |asset: &str, page: &Value| {
        let params = json!([asset, senders, {"pageToken": page}]);
        rpc(&devnet, BUILTIN, "universal_getTokenTransactions", params)
    };
    let count = |reply: &Value| result(reply)["transactions"].as_array().unwrap().len();
    // The USDC the sell delivered, the buy's spending of it and what the buy delivered.
    assert_eq!(count(&by_token("usdc", &Value::Null)), 3);
    assert_eq!(count(&by_token(&format!("42161_{USDC_ARBITRUM}"), &Value::Null)), 1);
    for _ in 0..11 {
        devnet.deposit(&evm, 1, TokenType::ETH, "1000000000000000", None).unwrap();
    }
    let eth = "1_0x0000000000000000000000000000000000000000";
    let first = by_token(eth, &Value::Null);
    assert_eq!(count(&first), 10);
    let next = result(&first)["nextPageToken"].clone();
    let second = by_token(eth, &next);
    assert_eq!((count(&second), result(&second).get("nextPageToken")), (1, None));
    let stale = by_token("usdc", &next);
    assert_eq!(stale["error"]["code"], -32602);

    // Primary assets: the five types in the SDK's order, 18-decimal hex.
    let assets =
        result(&rpc(&devnet, BUILTIN, "universal_getPrimaryAssets", json!([with_addresses])))
            .clone();
    let types: Vec<&str> = assets["assets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["tokenType"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["eth", "usdt", "usdc", "bnb", "sol"]);
    assert_eq!(assets["assets"][1]["amount"], "0x1bc16d674ec80000", "2 USDT");
    // The remaining calls answer.
    let pair = result(&rpc(
        &devnet,
        BUILTIN,
        "universal_getTokenPair",
        json!([with_addresses, {"assetId": "usdc", "chainId": 8453}]),
    ))
    .clone();
    assert_eq!(pair["token"]["address"], USDC_BASE);
    let router = rpc(
        &devnet,
        BUILTIN,
        "universal_createAssetRouter",
        json!([with_addresses, {"assetId": "usdc", "chainId": 8453}]),
    );
    assert_eq!(result(&router)["ready"], true);
    let deployments =
        rpc(&devnet, BUILTIN, "universal_getEIP7702Deployments", json!([with_addresses]));
    assert_eq!(result(&deployments).as_array().unwrap().len(), 5);
    let auth = rpc(
        &devnet,
        BUILTIN,
        "universal_createEIP7702DelegationAuth",
        json!([with_addresses, {"chainIds": [8453, 42161]}]),
    );
    assert_eq!(result(&auth).as_array().unwrap().len(), 2);
    assert_eq!(
        rpc(
            &devnet,
            BUILTIN,
            "universal_createEIP7702DelegationAuth",
            json!([with_addresses, {"chainIds": [101]}])
        )["error"]["code"],
        -32602
    );
}
