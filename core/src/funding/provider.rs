//! Wallet providers: the EIP-1193-style `request(method, params) → result` shape shared by EVM
//! wallets, Phantom-style Solana wallets and host balance providers (`docs/funding.md` §4).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};

use crate::chain::evm::EvmRpc;
use crate::chain::rpc::origin;
use crate::deposit::config::FundingConfig;
use crate::services::HttpSettings;

/// A wallet (or balance source) the host hands to depositkit: EIP-1193 for EVM wallets
/// (`eth_requestAccounts`, `eth_sendTransaction`, …), Phantom's shape for Solana wallets
/// (`connect`, `signAndSendTransaction`), and `getWalletBalances` for a balance provider.
///
/// depositkit calls it on one of its own threads, never concurrently for the same provider.
/// Any `Fn(&str, &Value) -> Result<Value, ProviderError> + Send + Sync` closure is one.
pub trait WalletProvider: Send + Sync {
    /// Handles `method` with `params` (a JSON array or object) and answers its result.
    ///
    /// # Errors
    /// A [`ProviderError`] with an EIP-1193 code: [`ProviderError::USER_REJECTED`] (4001) when
    /// the user declined, [`ProviderError::UNAUTHORIZED`] (4100),
    /// [`ProviderError::UNRECOGNIZED_CHAIN`] (4902); any other code is an RPC failure.
    fn request(&self, method: &str, params: &Value) -> std::result::Result<Value, ProviderError>;
}

impl<F> WalletProvider for F
where
    F: Fn(&str, &Value) -> std::result::Result<Value, ProviderError> + Send + Sync,
{
    fn request(&self, method: &str, params: &Value) -> std::result::Result<Value, ProviderError> {
        self(method, params)
    }
}

/// A provider's refusal or failure, with an EIP-1193 (or JSON-RPC) code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({code})")]
pub struct ProviderError {
    /// The code: 4001 rejected by the user, 4100 unauthorized, 4902 unknown chain, others
    /// (JSON-RPC's own, a node's) are failures.
    pub code: i64,
    /// What the wallet said.
    pub message: String,
}

impl ProviderError {
    /// EIP-1193: the user rejected the request.
    pub const USER_REJECTED: i64 = 4001;
    /// EIP-1193: the method or account is not authorized.
    pub const UNAUTHORIZED: i64 = 4100;
    /// EIP-1193: the provider does not support the method.
    pub const UNSUPPORTED_METHOD: i64 = 4200;
    /// EIP-3326: the wallet does not know the chain.
    pub const UNRECOGNIZED_CHAIN: i64 = 4902;
    /// JSON-RPC: internal error, used for failures without a code of their own.
    pub const INTERNAL: i64 = -32603;

    /// An error with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ProviderError { code, message: message.into() }
    }

    /// The user rejected the request (4001).
    pub fn rejected(message: impl Into<String>) -> Self {
        ProviderError::new(ProviderError::USER_REJECTED, message)
    }
}

/// The EVM wallet of [`set_evm_wallet`](crate::deposit::DepositClient::set_evm_wallet).
#[derive(Clone)]
pub enum EvmProvider {
    /// A JSON-RPC node holding the wallet's unlocked account (anvil's development accounts).
    /// `wallet_switchEthereumChain` moves it to `funding.evmRpcUrls[chain]`.
    Url(String),
    /// A host provider (an injected wallet, a C callback, a Python callable).
    Host(Arc<dyn WalletProvider>),
}

impl fmt::Debug for EvmProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The path of an RPC URL often holds an API key.
            EvmProvider::Url(url) => f.debug_tuple("Url").field(&origin(url)).finish(),
            EvmProvider::Host(_) => f.write_str("Host(..)"),
        }
    }
}

/// A provider whose calls are serialized: a host callback is never entered twice at once.
pub(crate) struct Serialized {
    provider: Arc<dyn WalletProvider>,
    lock: Mutex<()>,
}

impl Serialized {
    pub(crate) fn new(provider: Arc<dyn WalletProvider>) -> Arc<Serialized> {
        Arc::new(Serialized { provider, lock: Mutex::new(()) })
    }

    /// Calls the provider; a panic in it is a failure, not a crash of depositkit's thread.
    pub(crate) fn request(
        &self,
        method: &str,
        params: &Value,
    ) -> std::result::Result<Value, ProviderError> {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let call = std::panic::AssertUnwindSafe(|| self.provider.request(method, params));
        std::panic::catch_unwind(call).unwrap_or_else(|_| {
            Err(ProviderError::new(
                ProviderError::INTERNAL,
                format!("the provider panicked in {method}"),
            ))
        })
    }
}

/// An EVM wallet served by a JSON-RPC node: requests go to the node of the current chain;
/// `wallet_switchEthereumChain` moves to `funding.evmRpcUrls[chain]` (or the chain's public
/// default); `eth_requestAccounts` and `wallet_requestPermissions` read `eth_accounts`.
pub(crate) struct UrlProvider {
    config: FundingConfig,
    http: HttpSettings,
    current: Mutex<Arc<EvmRpc>>,
    nodes: Mutex<HashMap<String, Arc<EvmRpc>>>,
}

impl UrlProvider {
    pub(crate) fn new(url: &str, config: FundingConfig, http: HttpSettings) -> UrlProvider {
        let rpc = Arc::new(EvmRpc::new(url, &http));
        let nodes = HashMap::from([(url.to_owned(), Arc::clone(&rpc))]);
        UrlProvider { config, http, current: Mutex::new(rpc), nodes: Mutex::new(nodes) }
    }

    fn current(&self) -> Arc<EvmRpc> {
        Arc::clone(&lock(&self.current))
    }

    fn switch(&self, params: &Value) -> std::result::Result<Value, ProviderError> {
        let requested = params
            .get(0)
            .and_then(|p| p.get("chainId"))
            .and_then(Value::as_str)
            .and_then(|hex| u64::from_str_radix(hex.trim_start_matches("0x"), 16).ok())
            .ok_or_else(|| {
                ProviderError::new(
                    -32602,
                    "wallet_switchEthereumChain needs [{\"chainId\": \"0x…\"}]",
                )
            })?;
        let url = self.config.evm_rpc_url(requested).ok_or_else(|| {
            ProviderError::new(
                ProviderError::UNRECOGNIZED_CHAIN,
                format!("no RPC URL for chain {requested} (set funding.evmRpcUrls)"),
            )
        })?;
        let rpc = Arc::clone(
            lock(&self.nodes)
                .entry(url.to_owned())
                .or_insert_with(|| Arc::new(EvmRpc::new(url, &self.http))),
        );
        *lock(&self.current) = rpc;
        Ok(Value::Null)
    }
}

impl WalletProvider for UrlProvider {
    fn request(&self, method: &str, params: &Value) -> std::result::Result<Value, ProviderError> {
        let rpc = self.current();
        let outcome = match method {
            "wallet_switchEthereumChain" => return self.switch(params),
            "eth_requestAccounts" => rpc.request("eth_accounts", json!([])),
            "wallet_requestPermissions" => {
                return Ok(json!([{"parentCapability": "eth_accounts"}]));
            }
            // A send must never be repeated: the node assigns the nonce.
            "eth_sendTransaction" | "eth_sendRawTransaction" => {
                rpc.request_once(method, params.clone())
            }
            _ => rpc.request(method, params.clone()),
        };
        outcome.map_err(|e| match e.rpc_error() {
            Some(object) => ProviderError::new(object.code, object.message.clone()),
            None => ProviderError::new(ProviderError::INTERNAL, e.message().to_owned()),
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A JSON-RPC quantity (`"0x2105"`) or a plain number, as wallets answer `eth_chainId`.
pub(crate) fn hex_u64(value: &Value) -> Option<u64> {
    value
        .as_str()
        .and_then(|t| t.strip_prefix("0x"))
        .and_then(|d| u64::from_str_radix(d, 16).ok())
        .or_else(|| value.as_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closures_are_providers_and_calls_are_serialized() {
        let provider: Arc<dyn WalletProvider> = Arc::new(
            |method: &str, _params: &Value| -> std::result::Result<Value, ProviderError> {
                match method {
                    "eth_chainId" => Ok(json!("0x2105")),
                    _ => Err(ProviderError::rejected("User rejected the request.")),
                }
            },
        );
        let serialized = Serialized::new(provider);
        assert_eq!(serialized.request("eth_chainId", &json!([])).unwrap(), json!("0x2105"));
        let err = serialized.request("eth_sendTransaction", &json!([])).unwrap_err();
        assert_eq!(err.code, 4001);
        assert_eq!(err.to_string(), "User rejected the request. (4001)");
    }

    #[test]
    fn a_panicking_provider_is_a_failure() {
        let provider: Arc<dyn WalletProvider> =
            Arc::new(|_: &str, _: &Value| -> std::result::Result<Value, ProviderError> {
                panic!("host bug")
            });
        let err = Serialized::new(provider).request("connect", &json!({})).unwrap_err();
        assert_eq!(err.code, ProviderError::INTERNAL);
        assert!(err.message.contains("panicked in connect"));
    }

    #[test]
    fn url_provider_switches_only_to_known_chains() {
        let mut config = FundingConfig::default();
        config.evm_rpc_urls.insert(8453, "http://127.0.0.1:1/base".into());
        let p = UrlProvider::new("http://127.0.0.1:1", config, HttpSettings::default());
        p.request("wallet_switchEthereumChain", &json!([{"chainId": "0x2105"}])).unwrap();
        assert_eq!(p.current().url(), "http://127.0.0.1:1/base");
        let err =
            p.request("wallet_switchEthereumChain", &json!([{"chainId": "0xa"}])).unwrap_err();
        assert_eq!(err.code, ProviderError::UNRECOGNIZED_CHAIN);
        assert_eq!(
            format!("{:?}", EvmProvider::Url("https://x.example/v2/KEY".into())),
            "Url(\"https://x.example/…\")"
        );
    }
}
