//! The local chains of the funding tests (`docs/funding.md` §1): `tests/chains/launch.py`
//! started once per test binary, kept until the process exits.
//!
//! The launcher prints one JSON line (the chains file) and stops every chain when its stdin
//! closes — which happens when this process exits, because the pipe's write end is held for
//! the whole run. A missing launcher, Python or chain tool is a test failure, never a skip.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

/// The running chains of this test binary.
pub struct Chains {
    /// The chains file.
    pub info: Value,
    // Held, never used: dropping it (at exit) closes the launcher's stdin and stops the chains.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

static CHAINS: OnceLock<Chains> = OnceLock::new();

/// The chains, started on first use.
pub fn chains() -> &'static Chains {
    CHAINS.get_or_init(launch)
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn launch() -> Chains {
    let root = repo_root();
    let launcher = root.join("tests/chains/launch.py");
    let python = root.join(".venv/bin/python");
    assert!(
        launcher.is_file(),
        "the local-chain launcher {} is missing (tests/chains is part of the repository)",
        launcher.display()
    );
    assert!(
        python.is_file(),
        "{} is missing: create the project's virtualenv (scripts/python-env.sh) and install the chains (scripts/chains-install.sh)",
        python.display()
    );
    let mut child = Command::new(&python)
        .arg(&launcher)
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", launcher.display()));
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line).map(|_| line);
        let _ = tx.send(read);
    });
    let line = match rx.recv_timeout(Duration::from_secs(180)) {
        Ok(Ok(line)) if !line.trim().is_empty() => line,
        Ok(Ok(_)) | Ok(Err(_)) => {
            let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
            panic!(
                "the local-chain launcher exited without the chains file ({status}); see its message above \
                 (exit code 3: run scripts/chains-install.sh)"
            );
        }
        Err(_) => {
            let _ = child.kill();
            panic!("the local-chain launcher printed nothing within 180 s");
        }
    };
    let info: Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| {
        panic!("the launcher printed something that is not JSON ({e}): {line}")
    });
    Chains { info, _stdin: Mutex::new(stdin), _child: Mutex::new(child) }
}

impl Chains {
    /// The RPC URL of the anvil with `chain_id`.
    pub fn evm_url(&self, chain_id: u64) -> String {
        self.info["evm"]
            .as_array()
            .and_then(|chains| chains.iter().find(|c| c["chainId"] == chain_id))
            .and_then(|c| c["rpcUrl"].as_str())
            .unwrap_or_else(|| panic!("no anvil for chain {chain_id} in {}", self.info))
            .to_owned()
    }

    /// Every anvil: (chain id, RPC URL).
    pub fn evm_urls(&self) -> Vec<(u64, String)> {
        self.info["evm"]
            .as_array()
            .expect("evm chains")
            .iter()
            .map(|c| (c["chainId"].as_u64().unwrap(), c["rpcUrl"].as_str().unwrap().to_owned()))
            .collect()
    }

    /// The Solana JSON-RPC server's URL.
    pub fn solana_url(&self) -> String {
        self.info["solana"]["rpcUrl"].as_str().expect("solana rpcUrl").to_owned()
    }

    /// anvil development account `index` (unlocked, 10,000 native units on every chain).
    pub fn dev_account(&self, index: usize) -> String {
        self.info["evmDevAccounts"][index]["address"]
            .as_str()
            .unwrap_or_else(|| panic!("no dev account {index}"))
            .to_owned()
    }
}
