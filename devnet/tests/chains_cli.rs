//! `depositkit-devnet serve --chains FILE` on the real local chains, the in-process start with a
//! chains file that cannot be used, and the launcher support itself: a launcher that fails is a
//! failed test showing its stderr, never a skip.

mod common;
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use alloy_primitives::U256;
use common::deposit::{Api, expect_api_error};
use common::{TempDb, agent};
use depositkit_devnet::{ChainsConfig, Devnet, DevnetConfig};
use serde_json::json;
use support::chains::LocalChains;
use support::wallets::{send_token, token_balance};
use support::{fresh_evm, fresh_owner};

const BIN: &str = env!("CARGO_BIN_EXE_depositkit-devnet");

/// A file removed on drop.
struct Removed(std::path::PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A `serve` child, killed on drop.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_with_a_chains_file_backs_those_chains() {
    let chains = LocalChains::launch();
    let db = TempDb::new();
    let file = db.0.with_extension("chains.json");
    std::fs::write(&file, chains.json.to_string()).unwrap();
    // The file is read at start: it can go at once.
    let _file = Removed(file.clone());
    let child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--balance-api-key", "cli-key", "--chains"])
        .arg(&file)
        .env("DEPOSITKIT_DEVNET_DB", &db.0)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut served = Served(child);
    let mut stdout = BufReader::new(served.0.stdout.take().unwrap());
    let mut urls = String::new();
    assert!(stdout.read_line(&mut urls).unwrap() > 0, "serve exited before it was ready");
    let urls: serde_json::Value = serde_json::from_str(&urls).unwrap();
    let api = Api { base: urls["servicesUrl"].as_str().unwrap().to_owned(), agent: agent() };
    assert_eq!(urls["balanceApi"], format!("{}/balances", api.base));

    let reply = api.get("/devnet/chains", None);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["chains"], json!([1, 56, 8453, 42161, 101]));

    // A real deposit shows, and the balance API takes the configured key.
    let user = api.user(&fresh_owner());
    let base = chains.evm_url(8453);
    let usdc = chains.token(8453, "USDC");
    send_token(&base, &chains.dev_account(4), &usdc, &user.evm_address, U256::from(3_000_000u64));
    assert_eq!(api.balance(&user, 8453, "USDC"), ("3000000".into(), "3000000".into()));
    let request = json!({"evmAddress": user.evm_address, "chainIds": [8453]});
    let path = "/balances/v1/wallet-balances";
    let wrong =
        api.call("POST", path, None, &[("X-API-Key", "devnet-balance-key")], Some(&request));
    expect_api_error(&wrong, 401, "INVALID_API_KEY");
    let reply = api.call("POST", path, None, &[("X-API-Key", "cli-key")], Some(&request));
    assert_eq!(reply.json()["balances"][0]["rawAmount"], "3000000", "{}", reply.body);

    // And a sweep moves it.
    let receiver = fresh_evm();
    let quote = api.quote(
        &user,
        &json!({"accountId": user.account_id,
                "source": {"chainId": 8453, "token": "USDC", "rawAmount": "3000000"},
                "destination": {"chainId": 8453, "token": "USDC", "address": receiver}}),
    );
    let sent = api.send_quote(&user, &quote);
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert_eq!(
        token_balance(&base, &usdc, &receiver).to_string(),
        quote["destination"]["rawAmount"].as_str().unwrap()
    );
}

#[test]
fn a_chains_file_that_cannot_be_used_stops_the_start() {
    // Nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let file = format!(
        r#"{{"evm": [{{"chainId": 8453, "rpcUrl": "http://127.0.0.1:{port}", "tokens": {{}}}}]}}"#
    );
    let config = ChainsConfig::from_json(&file).unwrap();
    let db = TempDb::new();
    let err = Devnet::start(DevnetConfig::new(&db.0).with_chains(config)).unwrap_err();
    assert!(err.to_string().contains("Base (chain 8453)"), "{err}");

    let bad = ChainsConfig::from_json(r#"{"evm": [{"chainId": 7, "rpcUrl": "http://x"}]}"#);
    assert!(bad.unwrap_err().to_string().contains("chains.evm[0].chainId"));
    let out = Command::new(BIN)
        .args(["serve", "--chains", "/nonexistent/chains.json"])
        .env("DEPOSITKIT_DEVNET_DB", &db.0)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("chains file"));
}

#[test]
#[should_panic(expected = "anvil is missing: run scripts/chains-install.sh")]
fn a_launcher_that_fails_fails_the_test_with_its_stderr() {
    let mut command = Command::new("/bin/sh");
    command.args(["-c", "echo 'anvil is missing: run scripts/chains-install.sh' >&2; exit 3"]);
    drop(LocalChains::launch_with(command));
}

#[test]
#[should_panic(expected = "cannot run the chain launcher")]
fn a_missing_launcher_fails_the_test() {
    drop(LocalChains::launch_with(Command::new("/nonexistent/python")));
}
