//! The dashboard's HTTP face (`src/dashboard/`): the page and its assets are served from the
//! binary with nothing from elsewhere; the event stream pushes a deposit, its sweep and a refused
//! send as they happen; the forms refuse bad input by name and change nothing; faults are armed
//! and cleared only with fault injection on.

mod common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::deposit::expect_api_error;
use common::deposit::{Net, UaUser};
use depositkit_devnet::DevnetConfig;
use serde_json::{Value, json};

/// The page and its two assets, each with its content type.
const ASSETS: [(&str, &str); 3] = [
    ("/dashboard/", "text/html; charset=utf-8"),
    ("/dashboard/app.js", "text/javascript; charset=utf-8"),
    ("/dashboard/style.css", "text/css; charset=utf-8"),
];

#[test]
fn the_page_and_its_assets_come_from_devnet_alone() {
    let net = Net::start();
    for (path, content_type) in ASSETS {
        let reply = net.get(path, None);
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert_eq!(reply.header("content-type"), Some(content_type), "{path}");
        let policy = reply.header("content-security-policy").unwrap_or_default();
        assert!(policy.starts_with("default-src 'none'; script-src 'self'"), "{policy}");
        // Nothing is loaded from the internet: no absolute URL anywhere in the assets.
        assert!(!reply.body.contains("http://") && !reply.body.contains("https://"), "{path}");
    }
    let page = net.get("/dashboard/", None).body;
    assert!(page.contains(r#"<script src="/dashboard/app.js" defer></script>"#));
    assert!(page.contains(r#"<link rel="stylesheet" href="/dashboard/style.css">"#));
    // The URL without the slash leads there.
    let agent: ureq::Agent =
        ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().into();
    let moved = agent.get(&net.url("/dashboard")).call().unwrap();
    assert_eq!(moved.status(), 308);
    assert_eq!(moved.headers()["location"], "/dashboard/");
}

/// An open `GET /dashboard/api/events` stream, read line by line.
struct Stream {
    lines: std::io::Lines<BufReader<ureq::BodyReader<'static>>>,
}

impl Stream {
    fn open(net: &Net) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(20)))
            .build()
            .into();
        let response = agent.get(&net.url("/dashboard/api/events?after=0")).call().unwrap();
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Stream { lines: BufReader::new(response.into_body().into_reader()).lines() }
    }

    /// The next server-sent event's name and data (JSON) for which `wanted` holds, within 10 s.
    fn until(&mut self, wanted: impl Fn(&str, &Value) -> bool) -> (String, Value) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut name = String::new();
        while Instant::now() < deadline {
            let line = self.lines.next().expect("the stream ended").expect("the stream failed");
            if let Some(event) = line.strip_prefix("event: ") {
                name = event.to_owned();
            } else if let Some(data) = line.strip_prefix("data: ") {
                let data: Value = serde_json::from_str(data).unwrap();
                if wanted(&name, &data) {
                    return (name, data);
                }
            }
        }
        panic!("no such event within 10 s");
    }
}

fn usdc_deposit(net: &Net, user: &UaUser, raw: &str) -> Value {
    net.deposit(&user.evm_address, 8453, "USDC", raw)
}

#[test]
fn the_stream_pushes_a_deposit_its_sweep_and_a_refused_send() {
    let net = Net::start();
    let user = net.user("0x52908400098527886e0f7030069857d2e4169ee7");
    let mut stream = Stream::open(&net);
    // The state names the owner (the address its client asked for) and its deposit addresses.
    let (_, state) = stream.until(|name, _| name == "state");
    assert_eq!(state["owners"][0]["owner"], user.owner);
    assert_eq!(state["owners"][0]["evmAddress"], user.evm_address.as_str());

    let sent = usdc_deposit(&net, &user, "25000000");
    let (_, detected) = stream.until(|name, data| name == "activity" && data["kind"] == "deposit");
    assert_eq!(detected["phase"], "detected");
    assert_eq!(detected["txHash"], sent["txHash"]);
    assert_eq!(
        (detected["amount"].as_str(), detected["token"].as_str()),
        (Some("25"), Some("USDC"))
    );
    let deposit_id = detected["depositId"].as_str().unwrap().to_owned();
    let (_, state) = stream.until(|name, data| {
        name == "state" && data["owners"][0]["balances"][0]["rawAmount"] == "25000000"
    });
    assert_eq!(state["owners"][0]["balances"][0]["chain"], "Base");

    // A rejected send, then one that delivers: the same deposit fails, then is credited.
    let quote_body = json!({
        "accountId": user.account_id,
        "source": {"chainId": 8453, "token": "USDC", "rawAmount": "25000000"},
        "destination": {"chainId": 42161, "token": "USDC", "address": user.owner},
    });
    net.devnet.fail_next_sweeps(1, depositkit_devnet::SweepFaultMode::Reject);
    let quote = net.quote(&user, &quote_body);
    expect_api_error(&net.send_quote(&user, &quote), 400, "ROUTE_FAILED");
    let (_, refused) =
        stream.until(|name, data| name == "activity" && data["kind"] == "send_refused");
    assert_eq!(refused["phase"], "failed");
    assert_eq!(refused["depositId"], deposit_id.as_str());
    assert_eq!(refused["code"], "ROUTE_FAILED");
    let quote = net.quote(&user, &quote_body);
    let delivered = send_ok(&net, &user, &quote);
    let (_, credited) = stream.until(|name, data| name == "activity" && data["kind"] == "sweep");
    assert_eq!(credited["phase"], "credited");
    assert_eq!(credited["depositId"], deposit_id.as_str());
    assert_eq!(credited["transactionId"], delivered["transactionId"]);
    // The events came in the order devnet saw them, each numbered.
    let state = net.get("/dashboard/api/state", None).json();
    let kinds: Vec<(&str, &str)> = state["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["phase"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("deposit", "detected"),
            ("quote", "processing"),
            ("send_refused", "failed"),
            ("quote", "processing"),
            ("sweep", "credited"),
        ]
    );
    let seqs: Vec<u64> =
        state["events"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
}

/// Signs and sends `quote`; asserts 200 and returns the answer.
fn send_ok(net: &Net, user: &UaUser, quote: &Value) -> Value {
    let reply = net.send_quote(user, quote);
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

#[test]
fn the_deposit_form_refuses_bad_input_by_name_and_changes_nothing() {
    let net = Net::start();
    let user = net.user("0x52908400098527886e0f7030069857d2e4169ee7");
    let form = |to: &str, amount: &str| {
        net.post(
            "/dashboard/api/deposits",
            None,
            &json!({"to": to, "chainId": 8453, "token": "USDC", "amount": amount}),
        )
    };
    let cases = [
        (
            "0xnot-an-address",
            "5",
            "to: \"0xnot-an-address\" is neither an owner devnet knows nor an address on Base",
        ),
        (user.owner.as_str(), "-5", "amount: invalid amount \"-5\""),
        (user.owner.as_str(), "0", "amount: \"0\" is not positive"),
        (user.owner.as_str(), "1e6", "amount: invalid amount \"1e6\""),
    ];
    for (to, amount, expected) in cases {
        let message = expect_api_error(&form(to, amount), 400, "INVALID_REQUEST");
        assert!(message.starts_with(expected), "{message}");
    }
    let unknown_token = net.post(
        "/dashboard/api/deposits",
        None,
        &json!({"to": user.owner, "chainId": 8453, "token": "DOGE", "amount": "1"}),
    );
    assert!(expect_api_error(&unknown_token, 400, "INVALID_REQUEST").starts_with("token: "));
    assert_eq!(net.balance(&user, 8453, "USDC"), ("0".into(), "0".into()));
    assert!(net.get("/dashboard/api/state", None).json()["events"].as_array().unwrap().is_empty());

    // To an owner: its deposit address on the chain receives it.
    let sent = form(&user.owner.to_uppercase().replace("0X", "0x"), "2.5");
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert_eq!(sent.json()["address"], user.evm_address.as_str());
    assert_eq!(net.balance(&user, 8453, "USDC"), ("2500000".into(), "2500000".into()));
    // To another address: a ledger credit, and the answer says no client will sweep it.
    let other = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
    let sent = form(other, "1");
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert!(sent.json()["message"].as_str().unwrap().contains("no account owns that address"));
    assert_eq!(net.ledger(other, 8453, "USDC"), "1000000");
}

#[test]
fn faults_are_armed_and_cleared_from_the_dashboard_and_fire_into_the_log() {
    let net = Net::start();
    let user = net.user("0x52908400098527886e0f7030069857d2e4169ee7");
    let armed = net.post(
        "/dashboard/api/faults",
        None,
        &json!({"kind": "sweeps", "mode": "fail", "count": 2}),
    );
    assert_eq!(armed.status, 200, "{}", armed.body);
    assert_eq!(
        net.get("/devnet/faults", None).json()["sweeps"],
        json!({"mode": "fail", "count": 2})
    );
    let http = json!({"kind": "http", "service": "ua", "path": "/v1/balances", "status": 503});
    assert_eq!(net.post("/dashboard/api/faults", None, &http).status, 200);
    let refused =
        net.post("/ua/v1/balances", Some(&user.jwt), &json!({"accountIds": [user.account_id]}));
    assert_eq!(refused.status, 503);
    let events = net.get("/dashboard/api/state", None).json()["events"].clone();
    let fired = events.as_array().unwrap().iter().find(|e| e["kind"] == "fault").unwrap();
    assert_eq!(
        (fired["service"].as_str(), fired["path"].as_str()),
        (Some("ua"), Some("/v1/balances"))
    );
    assert_eq!(fired["status"], 503);

    for (body, expected) in [
        (
            json!({"kind": "sweeps", "mode": "fail", "count": 0}),
            "count: 0 is not between 1 and 100",
        ),
        (
            json!({"kind": "sweeps", "mode": "explode", "count": 1}),
            "fault: unknown variant `explode`",
        ),
        (json!({"kind": "reorg"}), "kind: expected \"sweeps\" or \"http\", got \"reorg\""),
    ] {
        let message = expect_api_error(
            &net.post("/dashboard/api/faults", None, &body),
            400,
            "INVALID_REQUEST",
        );
        assert!(message.starts_with(expected), "{message}");
    }
    let cleared = net.call("DELETE", "/dashboard/api/faults", None, &[], None);
    assert_eq!(cleared.status, 200, "{}", cleared.body);
    let pending = net.get("/devnet/faults", None).json();
    assert_eq!(
        (pending["sweeps"].is_null(), pending["pending"].as_array().unwrap().len()),
        (true, 0)
    );

    let off = Net::start_with(|config: DevnetConfig| config);
    let refused = off.post(
        "/dashboard/api/faults",
        None,
        &json!({"kind": "sweeps", "mode": "fail", "count": 1}),
    );
    expect_api_error(&refused, 404, "FAULT_INJECTION_OFF");
    expect_api_error(
        &off.call("DELETE", "/dashboard/api/faults", None, &[], None),
        404,
        "FAULT_INJECTION_OFF",
    );
    // A ledger-mode chain has no local chain to show a transaction from.
    let hash = format!("0x{}", "ab".repeat(32));
    let reply = off.get(&format!("/dashboard/api/chain-tx?chainId=8453&hash={hash}"), None);
    assert!(expect_api_error(&reply, 404, "NOT_FOUND").contains("not chain-backed"));
}
