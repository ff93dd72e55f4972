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

use alloy_primitives::{Address, U256};
use base64::Engine as _;
use depositkit_core::chain::erc20;
use depositkit_core::chain::evm::EvmRpc;
use depositkit_core::chain::solana::SolanaRpc;
use depositkit_core::chain::solana_tx::{Pubkey, Signature, Transaction};
use depositkit_core::funding::{ProviderError, WalletProvider};
use depositkit_core::services::HttpSettings;
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{Value, json};

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

impl Chains {
    /// The chains file parsed (and validated) for a chain-backed devnet.
    pub fn devnet_config(&self) -> depositkit_devnet::ChainsConfig {
        depositkit_devnet::ChainsConfig::from_json(&self.info.to_string())
            .unwrap_or_else(|e| panic!("the chains file does not parse for devnet: {e}"))
    }

    /// A JSON-RPC client of the anvil with `chain_id`.
    pub fn evm(&self, chain_id: u64) -> EvmRpc {
        EvmRpc::new(&self.evm_url(chain_id), &HttpSettings::default())
    }

    /// A JSON-RPC client of the Solana server.
    pub fn svm(&self) -> SolanaRpc {
        SolanaRpc::new(&self.solana_url(), &HttpSettings::default())
    }

    /// The test token `symbol` (`"USDC"`, `"USDT"`) on `chain_id` (EVM: its contract; 101: its
    /// mint), from the chains file.
    pub fn token(&self, chain_id: u64, symbol: &str) -> String {
        let found = if chain_id == 101 {
            self.info["solana"]["mints"][symbol]["address"].as_str()
        } else {
            self.info["evm"]
                .as_array()
                .and_then(|chains| chains.iter().find(|c| c["chainId"] == chain_id))
                .and_then(|c| c["tokens"][symbol]["address"].as_str())
        };
        found
            .unwrap_or_else(|| panic!("no {symbol} on chain {chain_id} in {}", self.info))
            .to_owned()
    }

    /// Mints `amount` of the test token `token` on `chain_id` to `to` with the token's open
    /// `mint`, sent by `eth_sendTransaction` from the unlocked account `from`; waits until mined.
    pub fn mint_erc20(&self, chain_id: u64, token: &str, from: &str, to: &str, amount: U256) {
        let node = self.evm(chain_id);
        let to: Address = to.parse().expect("an EVM address");
        let data = erc20::mint_calldata(to, amount);
        let tx = json!({"from": from, "to": token, "data": alloy_primitives::hex::encode_prefixed(data)});
        let hash = node.send_transaction(&tx).unwrap_or_else(|e| panic!("mint on {chain_id}: {e}"));
        let receipt = node.wait_for_receipt(hash, Duration::from_secs(10)).unwrap();
        assert!(receipt.status, "the mint on {chain_id} reverted");
    }

    /// `holder`'s balance of the ERC-20 `token` on `chain_id`.
    pub fn erc20_balance(&self, chain_id: u64, token: &str, holder: &str) -> U256 {
        erc20::balance_of(&self.evm(chain_id), token.parse().unwrap(), holder.parse().unwrap())
            .unwrap()
    }

    /// `holder`'s native balance on `chain_id`.
    pub fn native_balance(&self, chain_id: u64, holder: &str) -> U256 {
        self.evm(chain_id).balance(holder.parse().unwrap()).unwrap()
    }

    /// Airdrops `lamports` to `to` and waits for the confirmation.
    pub fn airdrop(&self, to: &Pubkey, lamports: u64) {
        let node = self.svm();
        let signature = node.request_airdrop(to, lamports).unwrap();
        node.wait_confirmed(&signature, Duration::from_secs(10)).unwrap();
    }

    /// Mints `raw` of the SPL token `mint` to `owner`'s associated token account (`svm_mintTo`).
    pub fn mint_spl(&self, mint: &str, owner: &Pubkey, raw: u64) {
        self.svm().request("svm_mintTo", json!([mint, owner.to_string(), raw])).unwrap();
    }

    /// What `owner` holds of the SPL token `mint`, over all its token accounts.
    pub fn spl_balance(&self, mint: &str, owner: &Pubkey) -> u64 {
        let mint: Pubkey = mint.parse().unwrap();
        self.svm().token_accounts_by_owner(owner, &mint).unwrap().iter().map(|a| a.raw_amount).sum()
    }
}

/// A Phantom-like Solana wallet for tests: an ed25519 key that signs the transaction the
/// library built (`signAndSendTransaction`, base64) and sends it through the node; with
/// `reject` it refuses every transaction with 4001 as a user would.
pub struct SolanaWallet {
    key: SigningKey,
    node: SolanaRpc,
    pub reject: bool,
}

impl SolanaWallet {
    /// A wallet with a fresh key nobody used, on the chains' Solana node.
    pub fn new(chains: &Chains) -> SolanaWallet {
        SolanaWallet {
            key: SigningKey::from_bytes(&fresh_seed()),
            node: chains.svm(),
            reject: false,
        }
    }

    /// The wallet's public key.
    pub fn pubkey(&self) -> Pubkey {
        Pubkey::new_from_array(self.key.verifying_key().to_bytes())
    }
}

/// A 32-byte seed unique to this call (time, process and a counter through SHA-256).
pub fn fresh_seed() -> [u8; 32] {
    use sha2::Digest;
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let text = format!("depositkit-test-seed/{}/{nanos}/{n}", std::process::id());
    sha2::Sha256::digest(text.as_bytes()).into()
}

impl WalletProvider for SolanaWallet {
    fn request(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        let invalid = |message: String| ProviderError::new(-32602, message);
        match method {
            "connect" => Ok(json!({"publicKey": self.pubkey().to_string()})),
            "signAndSendTransaction" if self.reject => {
                Err(ProviderError::rejected("User rejected the request."))
            }
            "signAndSendTransaction" => {
                if params["encoding"] != "base64" {
                    return Err(invalid(format!("expected base64, got {}", params["encoding"])));
                }
                let text = params["transaction"].as_str().unwrap_or_default();
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .map_err(|e| invalid(e.to_string()))?;
                let mut tx = Transaction::deserialize(&bytes)
                    .map_err(|e| invalid(e.message().to_owned()))?;
                let signature = self.key.sign(&tx.message_bytes()).to_bytes();
                tx.set_signature(&self.pubkey(), Signature::new_from_array(signature))
                    .map_err(|e| invalid(e.message().to_owned()))?;
                let sent = self
                    .node
                    .send_transaction(&tx.serialize())
                    .map_err(|e| ProviderError::new(-32603, e.message().to_owned()))?;
                Ok(json!({"signature": sent.to_string()}))
            }
            other => Err(ProviderError::new(4200, format!("unsupported method {other}"))),
        }
    }
}

/// `address` in EIP-55 form: how depositkit hands out EVM addresses.
pub fn eip55(address: &str) -> String {
    address.parse::<alloy_primitives::Address>().expect("an EVM address").to_checksum(None)
}
