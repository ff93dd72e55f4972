//! The `depositkit-devnet` binary end to end: seeding commands, `serve`, `serve --demo`,
//! `import`, exit codes, and clean exit on SIGTERM / SIGINT.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use depositkit_devnet::{SessionStatus, Store};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_depositkit-devnet");

/// Runs the binary with `--db db` and `args`.
fn run(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("DEPOSITKIT_DEVNET_DB")
        .output()
        .unwrap()
}

/// Runs the binary and returns its trimmed stdout, asserting success.
fn ok(db: &Path, args: &[&str]) -> String {
    let out = run(db, args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A `serve` child and the lines it printed before being ready.
struct Server {
    child: Child,
    lines: Vec<String>,
    base_url: String,
}

impl Server {
    fn start(db: &Path, extra: &[&str]) -> Server {
        let child = Command::new(BIN)
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .env("DEPOSITKIT_DEVNET_DB", db)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Owned by `server` from here on, so a failed assertion still reaps the child.
        let mut server = Server { child, lines: Vec::new(), base_url: String::new() };
        let mut stdout = BufReader::new(server.child.stdout.take().unwrap());
        loop {
            let mut line = String::new();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "serve exited before it was ready: {:?}",
                server.lines
            );
            let line = line.trim_end().to_owned();
            if let Some(url) = line.strip_prefix("depositkit-devnet listening on ") {
                server.base_url = url.to_owned();
                server.lines.push(line);
                return server;
            }
            server.lines.push(line);
        }
    }

    fn rpc_url(&self) -> String {
        format!("{}/user-rpc", self.base_url)
    }

    /// Sends `signal` and returns the exit status and what was written to stderr (killing the
    /// child after 20 s).
    fn stop(mut self, signal: i32) -> (std::process::ExitStatus, String) {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) on the pid of our own child, which has not been waited for.
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0, "kill failed");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut stderr = String::new();
                self.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
                return (status, stderr);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("serve did not exit after signal {signal}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn call(url: &str, project: &str, key: &str, method: &str, params: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    post(&agent(), url, Some(&basic(project, key)), Some("application/json"), &body)
}

#[test]
fn seed_serve_call_and_stop_on_sigterm() {
    let db = TempDb::new();
    let created: Value =
        serde_json::from_str(&ok(&db.0, &["project", "create", "--name", "cli test"])).unwrap();
    let project = created["projectId"].as_str().unwrap().to_owned();
    let key = created["serverKey"].as_str().unwrap().to_owned();
    assert!(key.starts_with("sk_"), "{key}");

    let user = ok(
        &db.0,
        &[
            "user",
            "add",
            "--project",
            &project,
            "--email",
            "cli@example.com",
            "--name",
            "Cli",
            "--google-id",
            "g-1",
            "--google-email",
            "cli@gmail.example",
            "--telegram-phone",
            "+100",
        ],
    );
    assert_eq!(user.len(), 36, "{user}");
    let fixed = "0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f";
    assert_eq!(
        ok(
            &db.0,
            &["user", "add", "--project", &project, "--email", "f@example.com", "--uuid", fixed]
        ),
        fixed
    );
    assert_eq!(
        ok(&db.0, &["wallet", "add", "--user", &user, "--chain", "evm_chain", "--address", EVM_A]),
        ""
    );
    assert_eq!(
        ok(&db.0, &["wallet", "add", "--user", &user, "--chain", "solana", "--address", SOL_A]),
        ""
    );
    ok(&db.0, &["identity", "add", "--user", &user, "--provider", "jwt", "--uid", "cli-uid"]);
    let token = ok(&db.0, &["session", "add", "--user", &user]);
    assert!(token.starts_with("st_"));
    let chosen = ok(
        &db.0,
        &["session", "add", "--user", &user, "--token", "my-token", "--ttl-seconds", "60"],
    );
    assert_eq!(chosen, "my-token");
    let expired = ok(&db.0, &["session", "add", "--user", &user, "--ttl-seconds", "-10"]);
    ok(
        &db.0,
        &[
            "interaction",
            "add",
            "--project",
            &project,
            "--chain",
            "evm_chain",
            "--address",
            EVM_INTERACTED,
        ],
    );

    let server = Server::start(&db.0, &["--verbose"]);
    assert_eq!(server.lines.len(), 2, "{:?}", server.lines);
    assert!(server.base_url.starts_with("http://127.0.0.1:"));
    let urls: Value = serde_json::from_str(&server.lines[0]).unwrap();
    let base = &server.base_url;
    assert_eq!(
        urls,
        json!({
            "servicesUrl": base,
            "jwt": format!("{base}/jwt"),
            "signer": format!("{base}/signer"),
            "ua": format!("{base}/ua"),
            "userRpc": format!("{base}/user-rpc"),
            "balanceApi": format!("{base}/balances"),
            "balanceProxy": format!("{base}/balance-proxy"),
            "onrampWidget": format!("{base}/onramp/widget"),
            "particle": format!("{base}/particle"),
        })
    );
    let url = server.rpc_url();

    let reply = call(&url, &project, &key, "getUserInfo", json!([user, token]));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let record = &reply.json()["result"];
    assert_eq!(record["email"], "cli@example.com");
    assert_eq!(record["googleId"], "g-1");
    assert_eq!(record["telegramPhone"], "+100");
    assert_eq!(record["wallets"][0]["publicAddress"], EVM_A.to_lowercase());
    let reply = call(&url, &project, &key, "getUserInfo", json!([user, "my-token"]));
    assert_eq!(reply.json()["result"]["uuid"], user);
    let reply = call(&url, &project, &key, "getUserInfo", json!([user, expired]));
    assert_eq!(reply.json()["error"]["data"]["reason"], "expired");
    let reply = call(&url, &project, &key, "getUserInfoByIdentity", json!(["jwt", "cli-uid"]));
    assert_eq!(reply.json()["result"]["uuid"], user);
    let reply = call(&url, &project, &key, "isProjectUser", json!(["evm_chain", EVM_INTERACTED]));
    assert_eq!(reply.json()["result"], true);
    let reply = call(&url, &project, "sk_wrong", "isProjectUser", json!(["evm_chain", EVM_A]));
    assert_eq!(reply.status, 401);

    let (status, stderr) = server.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0), "{status:?}: {stderr}");
    assert!(stderr.contains("POST /user-rpc -> 200 [getUserInfo]"), "{stderr}");
    assert!(stderr.contains("POST /user-rpc -> 401"), "{stderr}");
    assert!(stderr.contains("SIGTERM: shutting down"), "{stderr}");
    for secret in [key.as_str(), token.as_str(), "my-token", "sk_wrong"] {
        assert!(!stderr.contains(secret), "secret logged: {stderr}");
    }
}

#[test]
fn serve_demo_prints_working_credentials_and_rotates_the_key_on_reuse() {
    let db = TempDb::new();
    let server = Server::start(&db.0, &["--demo", "--enable-fault-injection"]);
    assert_eq!(server.lines.len(), 2, "{:?}", server.lines);
    let demo: Value = serde_json::from_str(&server.lines[0]).unwrap();
    // With --demo the one JSON line carries the service URLs too.
    assert_eq!(demo["servicesUrl"], server.base_url.as_str());
    assert_eq!(demo["ua"], format!("{}/ua", server.base_url));
    let field = |name: &str| {
        demo[name].as_str().unwrap_or_else(|| panic!("no {name} in {demo}")).to_owned()
    };
    let (project, key, user) = (field("projectId"), field("serverKey"), field("userUuid"));
    let url = server.rpc_url();

    let reply = call(&url, &project, &key, "getUserInfo", json!([user, field("userToken")]));
    let record = reply.json()["result"].clone();
    assert_eq!(record["uuid"], user, "{}", reply.body);
    assert!(record["googleId"].is_string() && record["email"].is_string());
    assert_eq!(record["wallets"].as_array().unwrap().len(), 2);
    let reply =
        call(&url, &project, &key, "getUserInfoByIdentity", json!(["jwt", field("jwtUid")]));
    assert_eq!(reply.json()["result"]["uuid"], user);
    for (chain, address) in [("evm_chain", field("evmAddress")), ("solana", field("solanaAddress"))]
    {
        let reply = call(&url, &project, &key, "isProjectUser", json!([chain, address]));
        assert_eq!(reply.json()["result"], true, "{chain}");
    }
    let health = get(&agent(), &format!("{}/devnet/health", server.base_url));
    assert_eq!(health.status, 200);
    let (status, stderr) = server.stop(libc::SIGINT);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "quiet without --verbose: {stderr}");

    // Again on the same database: same project and user, a new key; the old key is dead.
    let again = Server::start(&db.0, &["--demo"]);
    let demo2: Value = serde_json::from_str(&again.lines[0]).unwrap();
    assert_eq!(demo2["projectId"], demo["projectId"]);
    assert_eq!(demo2["userUuid"], demo["userUuid"]);
    assert_ne!(demo2["serverKey"], demo["serverKey"]);
    let new_key = demo2["serverKey"].as_str().unwrap();
    let url = again.rpc_url();
    assert_eq!(call(&url, &project, &key, "isProjectUser", json!(["solana", SOL_A])).status, 401);
    let reply = call(&url, &project, new_key, "getUserInfo", json!([user, demo2["userToken"]]));
    assert_eq!(reply.json()["result"]["uuid"], user);
    assert_eq!(again.stop(libc::SIGTERM).0.code(), Some(0));
}

#[test]
fn import_is_all_or_nothing() {
    let db = TempDb::new();
    let created: Value =
        serde_json::from_str(&ok(&db.0, &["project", "create", "--name", "imports"])).unwrap();
    let project = created["projectId"].as_str().unwrap().to_owned();
    let dir = db.0.with_extension("import");
    std::fs::create_dir_all(&dir).unwrap();

    let bad = dir.join("bad.json");
    let records = json!([
        {"email": "ok@example.com", "wallets": [{"chain": "solana", "publicAddress": SOL_A}]},
        {"email": "bad@example.com", "wallets": [{"chain": "evm_chain", "publicAddress": "0xnope"}]},
    ]);
    std::fs::write(&bad, records.to_string()).unwrap();
    let out = run(&db.0, &["import", "--project", &project, bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("record 1") && stderr.contains("wallets[0].publicAddress"), "{stderr}");
    let store = Store::open(&db.0).unwrap();
    assert!(store.user_uuids(&project).unwrap().is_empty(), "the good record was imported alone");

    let good = dir.join("good.json");
    let uuid = "0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f";
    let records = json!([
        {"uuid": uuid, "email": "ok@example.com", "githubId": "gh", "createdAt": "2022-06-08T07:47:54.000Z",
         "updatedAt": "2023-01-02T03:04:05.678Z",
         "wallets": [{"chain": "evm_chain", "publicAddress": EVM_A}],
         "identities": [{"provider": "jwt", "uid": "imported"}],
         "sessions": [{"token": "imported-token", "expiresAt": "2999-01-01T00:00:00.000Z"},
                      {"token": "old-token", "expiresAt": "2001-01-01T00:00:00.000Z"}]},
        {"email": "second@example.com"},
    ]);
    std::fs::write(&good, records.to_string()).unwrap();
    let printed = ok(&db.0, &["import", "--project", &project, good.to_str().unwrap()]);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], uuid);
    let user = store.user(&project, uuid).unwrap().unwrap();
    assert_eq!(user.created_at, "2022-06-08T07:47:54.000Z");
    assert_eq!(user.updated_at, "2023-01-02T03:04:05.678Z");
    assert_eq!(user.profile.github_id.as_deref(), Some("gh"));
    let now = depositkit_devnet::time::now_ms();
    assert_eq!(store.session_status(uuid, "imported-token", now).unwrap(), SessionStatus::Valid);
    assert_eq!(store.session_status(uuid, "old-token", now).unwrap(), SessionStatus::Expired);
    assert_eq!(store.user_by_identity(&project, "jwt", "imported").unwrap().unwrap().uuid, uuid);

    // Importing the same uuid again conflicts, and names the record.
    let out = run(&db.0, &["import", "--project", &project, good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("record 0: user 0b7c5a4e"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_exit_2_and_failures_exit_1() {
    let db = TempDb::new();
    let created: Value =
        serde_json::from_str(&ok(&db.0, &["project", "create", "--name", "codes"])).unwrap();
    let project = created["projectId"].as_str().unwrap().to_owned();
    let user = ok(&db.0, &["user", "add", "--project", &project, "--email", "x@example.com"]);

    let usage: [&[&str]; 5] = [
        &["user", "add", "--project", &project],
        &["wallet", "add", "--user", &user, "--chain", "bitcoin", "--address", EVM_A],
        &["serve", "--listen", "not-an-address"],
        &["serve", "--max-body-bytes", "0"],
        &["frobnicate"],
    ];
    for args in usage {
        let out = run(&db.0, args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let missing_user = "0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f";
    let failures: [(&[&str], &str); 6] = [
        (
            &["user", "add", "--project", missing_user, "--email", "x@example.com"],
            "project 0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f not found",
        ),
        (&["user", "add", "--project", &project, "--email", "  "], "invalid email"),
        (
            &["user", "add", "--project", &project, "--email", "y@example.com", "--uuid", "bad"],
            "invalid uuid",
        ),
        (
            &["wallet", "add", "--user", &user, "--chain", "evm_chain", "--address", "0x1234"],
            "not a valid evm_chain address",
        ),
        (
            &["wallet", "add", "--user", missing_user, "--chain", "solana", "--address", SOL_A],
            "user 0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f not found",
        ),
        (&["session", "add", "--user", &user, "--token", "has space"], "invalid token"),
    ];
    for (args, message) in failures {
        let out = run(&db.0, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr:?} lacks {message:?}");
        assert!(!stderr.contains("has space"), "token echoed: {stderr}");
    }
    // A busy port is a failure, not a usage error.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = run(&db.0, &["serve", "--listen", &addr]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen on"));
}

#[test]
fn the_database_comes_from_the_environment() {
    let db = TempDb::new();
    let out = Command::new(BIN)
        .args(["project", "create", "--name", "env"])
        .env("DEPOSITKIT_DEVNET_DB", &db.0)
        .output()
        .unwrap();
    assert!(out.status.success());
    let created: Value = serde_json::from_slice(&out.stdout).unwrap();
    let store = Store::open(&db.0).unwrap();
    let project = created["projectId"].as_str().unwrap();
    assert!(store.verify_server_key(project, created["serverKey"].as_str().unwrap()).unwrap());
}

#[test]
fn serve_runs_the_deposit_services_and_deposit_credits_accounts() {
    let db = TempDb::new();
    let server = Server::start(&db.0, &["--verbose", "--jwt-ttl-seconds", "120"]);
    let base = server.base_url.clone();
    let agent = agent();
    let post_json = |path: &str, jwt: Option<&str>, body: Value| {
        common::deposit::call(&agent, "POST", &format!("{base}{path}"), jwt, &[], Some(&body))
    };
    let minted = post_json(
        "/jwt/v1/jwt",
        None,
        json!({
            "projectId": depositkit_devnet::BUILTIN_PROJECT_ID,
            "clientKey": depositkit_devnet::BUILTIN_CLIENT_KEY,
            "appId": depositkit_devnet::BUILTIN_APP_ID,
            "userId": EVM_A,
        }),
    );
    assert_eq!(minted.status, 200, "{}", minted.body);
    assert_eq!(minted.json()["expiresIn"], 120);
    let jwt = minted.json()["jwt"].as_str().unwrap().to_owned();
    let wallet = common::deposit::call(
        &agent,
        "GET",
        &format!("{base}/signer/v1/wallet"),
        Some(&jwt),
        &[],
        None,
    );
    let wallet = wallet.json()["address"].as_str().unwrap().to_owned();
    let account =
        post_json("/ua/v1/accounts", Some(&jwt), json!({ "ownerAddress": wallet })).json();
    let deposit_address = account["evmAddress"].as_str().unwrap();

    // The deposit sub-command writes to the database the server reads.
    let printed = ok(
        &db.0,
        &[
            "deposit",
            "--address",
            deposit_address,
            "--chain-id",
            "8453",
            "--token",
            "usdc",
            "--amount",
            "2.5",
            "--sender",
            EVM_B,
        ],
    );
    let printed: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(printed["accountId"], account["accountId"]);
    assert_eq!(printed["rawAmount"], "2500000");
    let balances =
        post_json("/ua/v1/balances", Some(&jwt), json!({ "accountIds": [account["accountId"]] }));
    let line = &balances.json()["accounts"][account["accountId"].as_str().unwrap()]["balances"][0];
    assert_eq!(line["rawAmount"], "2500000");
    assert_eq!(line["received"], "2500000");
    let out = run(
        &db.0,
        &["deposit", "--address", "0x12", "--chain-id", "1", "--token", "ETH", "--raw-amount", "1"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("address"));
    let out = run(&db.0, &["deposit", "--address", EVM_A, "--chain-id", "1", "--token", "ETH"]);
    assert_eq!(out.status.code(), Some(2), "neither --amount nor --raw-amount");

    let (status, stderr) = server.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("POST /jwt/v1/jwt -> 200"), "{stderr}");
    assert!(stderr.contains("POST /ua/v1/balances -> 200"), "{stderr}");
    let signature_part = jwt.rsplit('.').next().unwrap();
    assert!(!stderr.contains(signature_part), "JWT logged: {stderr}");
}
