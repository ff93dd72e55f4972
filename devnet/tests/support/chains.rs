//! The local chains of `tests/chains/launch.py` (`docs/funding.md` §1), started for a test
//! binary: 4 anvils (chain ids 1, 56, 8453, 42161) and the LiteSVM JSON-RPC server, with the
//! USDC/USDT test tokens at their real addresses.
//!
//! The launcher prints one JSON line (the chains file) and stops every chain when its stdin
//! closes, so its stdin is kept open (piped) for as long as [`LocalChains`] lives — and closes
//! by itself when the test process exits, however it exits. A missing interpreter or launcher,
//! or a launcher that exits without printing the line, fails the test with its stderr: never a
//! skip.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use depositkit_devnet::ChainsConfig;
use serde_json::Value;

/// How long the launcher may take to print the chains file.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(120);

/// Running local chains. Dropping it closes the launcher's stdin and waits for it to stop.
pub struct LocalChains {
    /// The chains file, parsed.
    pub config: ChainsConfig,
    /// The chains file as printed.
    pub json: Value,
    child: Mutex<Option<(Child, ChildStdin)>>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl LocalChains {
    /// Starts the chains with `.venv/bin/python tests/chains/launch.py` (`DEPOSITKIT_PYTHON`
    /// names another interpreter); panics (failing the test) with the launcher's stderr when
    /// they cannot start.
    pub fn launch() -> Self {
        let python = std::env::var_os("DEPOSITKIT_PYTHON")
            .map_or_else(|| root().join(".venv/bin/python"), PathBuf::from);
        let mut command = Command::new(python);
        command.arg(root().join("tests/chains/launch.py"));
        Self::launch_with(command)
    }

    /// Starts the chains with `command` (a launcher printing the chains file); panics with its
    /// stderr when it cannot be run or exits without printing the file.
    pub fn launch_with(mut command: Command) -> Self {
        let shown = format!("{command:?}");
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run the chain launcher {shown}: {e} (scripts/python-env.sh makes \
                     the venv, scripts/chains-install.sh the chains)"
                )
            });
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        // Drain stderr all along, so that a chatty launcher never blocks on a full pipe.
        let errors = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&errors);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        let (line_tx, line_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let read = BufReader::new(stdout).read_line(&mut line);
            let _ = line_tx.send(read.map(|_| line));
        });
        let line = match line_rx.recv_timeout(LAUNCH_TIMEOUT) {
            Ok(Ok(line)) if !line.trim().is_empty() => line,
            outcome => {
                drop(stdin);
                let deadline = Instant::now() + Duration::from_secs(10);
                let status = loop {
                    match child.try_wait() {
                        Ok(Some(status)) => break Some(status),
                        _ if Instant::now() >= deadline => {
                            let _ = child.kill();
                            break child.wait().ok();
                        }
                        _ => std::thread::sleep(Duration::from_millis(50)),
                    }
                };
                // Give the stderr thread a moment to read the last words.
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "the chain launcher did not print the chains file ({outcome:?}); it exited \
                     with {status:?}; its stderr:\n{}",
                    errors.lock().unwrap()
                );
            }
        };
        let json: Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| {
            panic!("the launcher printed something that is not JSON ({e}): {line}")
        });
        let config = ChainsConfig::from_json(line.trim())
            .unwrap_or_else(|e| panic!("the launcher's chains file is refused: {e}: {line}"));
        LocalChains { config, json, child: Mutex::new(Some((child, stdin))) }
    }

    /// The RPC URL of EVM chain `chain_id`.
    pub fn evm_url(&self, chain_id: u64) -> String {
        self.config
            .evm_chain(chain_id)
            .unwrap_or_else(|| panic!("no chain {chain_id} in the chains file"))
            .rpc_url
            .clone()
    }

    /// The Solana RPC URL.
    pub fn solana_url(&self) -> String {
        self.config.solana.as_ref().expect("a Solana chain").rpc_url.clone()
    }

    /// The `i`-th anvil development account's address.
    pub fn dev_account(&self, i: usize) -> String {
        self.config.evm_dev_accounts[i].address.clone()
    }

    /// The contract (or mint) of `symbol` on `chain_id`.
    pub fn token(&self, chain_id: u64, symbol: &str) -> String {
        let tokens = if chain_id == 101 {
            &self.config.solana.as_ref().expect("a Solana chain").mints
        } else {
            &self.config.evm_chain(chain_id).expect("the chain").tokens
        };
        tokens.get(symbol).unwrap_or_else(|| panic!("no {symbol} on {chain_id}")).address.clone()
    }
}

impl Drop for LocalChains {
    fn drop(&mut self) {
        let Some((mut child, stdin)) = self.child.lock().unwrap().take() else { return };
        // Closing stdin is the launcher's signal to stop every chain.
        drop(stdin);
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return;
                }
            }
        }
    }
}
