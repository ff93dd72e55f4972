//! The funding wallets of a client: setting them, connecting them, reading their accounts
//! (`docs/funding.md` §4, "Wallet utilities").

use std::sync::Arc;

use serde_json::{Value, json};

use super::Funding;
use super::provider::{EvmProvider, ProviderError, Serialized, UrlProvider, WalletProvider};
use super::transfer::funding_error;
use crate::chain::solana_tx::Pubkey;
use crate::deposit::config::check_url;
use crate::describe::{json_kind, quote};
use crate::error::{Error, Result};
use crate::validate::evm_address_problem;

/// The wallets and the balance provider a client holds.
#[derive(Default)]
pub(crate) struct Wallets {
    pub(crate) evm: Option<EvmWallet>,
    pub(crate) solana: Option<SolanaWallet>,
    pub(crate) balance_provider: Option<Arc<Serialized>>,
}

/// An EVM funding wallet: its provider and, once known, its address (EIP-55 checksummed,
/// as wallets show it and as every face hands it out).
#[derive(Clone)]
pub(crate) struct EvmWallet {
    pub(crate) provider: Arc<Serialized>,
    pub(crate) address: Option<String>,
}

/// A Solana funding wallet: its provider and, once known, its public key.
#[derive(Clone)]
pub(crate) struct SolanaWallet {
    pub(crate) provider: Arc<Serialized>,
    pub(crate) address: Option<Pubkey>,
}

fn no_evm_wallet() -> Error {
    funding_error("no EVM wallet is connected: call set_evm_wallet() (and connect_evm_wallet())")
}

fn no_solana_wallet() -> Error {
    funding_error(
        "no Solana wallet is connected: call set_solana_wallet() (and connect_solana_wallet())",
    )
}

/// A wallet's refusal or failure of `method` outside a transfer.
pub(crate) fn wallet_failure(method: &str, error: &ProviderError) -> Error {
    match error.code {
        ProviderError::USER_REJECTED => {
            funding_error(format!("rejected by the wallet (4001): {}", error.message))
        }
        code => funding_error(format!("the wallet failed {method}: {} ({code})", error.message)),
    }
}

/// `address` in EIP-55 form, as every address depositkit hands out (kept as given when it is not
/// an address: the wallet's own answer is then passed through for the node to judge).
fn checksummed(address: &str) -> String {
    address
        .parse::<alloy_primitives::Address>()
        .map_or_else(|_| address.to_owned(), |parsed| parsed.to_checksum(None))
}

fn parse_evm_address(what: &str, text: &str) -> Result<String> {
    match evm_address_problem(text) {
        None => Ok(checksummed(text)),
        Some(reason) => Err(Error::invalid_argument(format!(
            "{what} must be a valid EVM address: {} ({reason})",
            quote(text)
        ))),
    }
}

fn parse_solana_address(what: &str, text: &str) -> Result<Pubkey> {
    text.parse::<Pubkey>().map_err(|e| {
        Error::invalid_argument(format!("{what} must be a valid Solana address: {}", e.message()))
    })
}

/// The accounts of an `eth_accounts` / `eth_requestAccounts` answer, validated.
fn accounts(method: &str, value: &Value) -> Result<Vec<String>> {
    let items = value.as_array().ok_or_else(|| {
        funding_error(format!(
            "the wallet answered {method} with {}, not an array",
            json_kind(value)
        ))
    })?;
    items
        .iter()
        .map(|item| {
            let text = item.as_str().ok_or_else(|| {
                funding_error(format!("the wallet answered {method} with a non-string account"))
            })?;
            if let Some(reason) = evm_address_problem(text) {
                return Err(funding_error(format!(
                    "the wallet answered {method} with an invalid address {} ({reason})",
                    quote(text)
                )));
            }
            Ok(text.to_owned())
        })
        .collect()
}

impl Funding {
    /// Sets the EVM funding wallet; `address`, when given, is its account (else it is asked
    /// for on first use).
    pub(crate) fn set_evm_wallet(
        &self,
        provider: EvmProvider,
        address: Option<&str>,
    ) -> Result<()> {
        let address =
            address.map(|a| parse_evm_address("the EVM wallet address", a)).transpose()?;
        let provider: Arc<dyn WalletProvider> = match provider {
            EvmProvider::Url(url) => {
                check_url("the EVM wallet URL", &url)?;
                Arc::new(UrlProvider::new(&url, self.config.clone(), self.http.clone()))
            }
            EvmProvider::Host(provider) => provider,
        };
        self.wallets().evm = Some(EvmWallet { provider: Serialized::new(provider), address });
        Ok(())
    }

    /// Sets the Solana funding wallet.
    pub(crate) fn set_solana_wallet(
        &self,
        provider: Arc<dyn WalletProvider>,
        address: Option<&str>,
    ) -> Result<()> {
        let address =
            address.map(|a| parse_solana_address("the Solana wallet address", a)).transpose()?;
        self.wallets().solana = Some(SolanaWallet { provider: Serialized::new(provider), address });
        Ok(())
    }

    /// Sets (or removes) the host balance provider.
    pub(crate) fn set_balance_provider(&self, provider: Option<Arc<dyn WalletProvider>>) {
        self.wallets().balance_provider = provider.map(Serialized::new);
    }

    /// Forgets both funding wallets.
    pub(crate) fn clear_wallets(&self) {
        let mut wallets = self.wallets();
        wallets.evm = None;
        wallets.solana = None;
    }

    fn evm_provider(&self) -> Result<Arc<Serialized>> {
        self.wallets().evm.as_ref().map(|w| Arc::clone(&w.provider)).ok_or_else(no_evm_wallet)
    }

    /// Stores `address` for the EVM wallet, unless the wallet was replaced meanwhile.
    fn remember_evm_address(&self, provider: &Arc<Serialized>, address: &str) {
        if let Some(wallet) = self.wallets().evm.as_mut()
            && Arc::ptr_eq(&wallet.provider, provider)
        {
            wallet.address = Some(checksummed(address));
        }
    }

    /// `eth_requestAccounts`: the first account becomes the wallet's address.
    pub(crate) fn connect_evm_wallet(&self) -> Result<String> {
        let provider = self.evm_provider()?;
        let answer = provider
            .request("eth_requestAccounts", &json!([]))
            .map_err(|e| wallet_failure("eth_requestAccounts", &e))?;
        let first = accounts("eth_requestAccounts", &answer)?
            .into_iter()
            .next()
            .ok_or_else(|| funding_error("the wallet returned no accounts"))?;
        self.remember_evm_address(&provider, &first);
        Ok(first)
    }

    /// `eth_accounts`.
    pub(crate) fn evm_accounts(&self) -> Result<Vec<String>> {
        let provider = self.evm_provider()?;
        let answer = provider
            .request("eth_accounts", &json!([]))
            .map_err(|e| wallet_failure("eth_accounts", &e))?;
        accounts("eth_accounts", &answer)
    }

    /// `wallet_requestPermissions [{"eth_accounts": {}}]`, then `eth_accounts`; the first
    /// account becomes the wallet's address.
    pub(crate) fn prompt_evm_account_selection(&self) -> Result<Vec<String>> {
        let provider = self.evm_provider()?;
        provider
            .request("wallet_requestPermissions", &json!([{"eth_accounts": {}}]))
            .map_err(|e| wallet_failure("wallet_requestPermissions", &e))?;
        let answer = provider
            .request("eth_accounts", &json!([]))
            .map_err(|e| wallet_failure("eth_accounts", &e))?;
        let list = accounts("eth_accounts", &answer)?;
        if let Some(first) = list.first() {
            self.remember_evm_address(&provider, first);
        }
        Ok(list)
    }

    /// Phantom's `connect`: `{"publicKey": "<base58>"}` (a bare string is accepted too).
    pub(crate) fn connect_solana_wallet(&self) -> Result<String> {
        let provider = self
            .wallets()
            .solana
            .as_ref()
            .map(|w| Arc::clone(&w.provider))
            .ok_or_else(no_solana_wallet)?;
        let answer =
            provider.request("connect", &json!({})).map_err(|e| wallet_failure("connect", &e))?;
        let text =
            answer.get("publicKey").unwrap_or(&answer).as_str().ok_or_else(|| {
                funding_error("the wallet's connect answer has no publicKey string")
            })?;
        let key = text.parse::<Pubkey>().map_err(|e| {
            funding_error(format!(
                "the wallet's publicKey is not a Solana address: {}",
                e.message()
            ))
        })?;
        if let Some(wallet) = self.wallets().solana.as_mut()
            && Arc::ptr_eq(&wallet.provider, &provider)
        {
            wallet.address = Some(key);
        }
        Ok(key.to_string())
    }

    /// The EVM wallet's provider and address; without a known address the wallet's first
    /// `eth_accounts` entry (asked silently, no prompt).
    pub(crate) fn evm_wallet(&self) -> Result<(Arc<Serialized>, String)> {
        let wallet = self.wallets().evm.clone().ok_or_else(no_evm_wallet)?;
        if let Some(address) = wallet.address {
            return Ok((wallet.provider, address));
        }
        let first = self.evm_accounts()?.into_iter().next().ok_or_else(no_evm_wallet)?;
        self.remember_evm_address(&wallet.provider, &first);
        Ok((wallet.provider, checksummed(&first)))
    }

    /// The Solana wallet's provider and public key (known after `connect_solana_wallet()` or
    /// given to `set_solana_wallet()`).
    pub(crate) fn solana_wallet(&self) -> Result<(Arc<Serialized>, Pubkey)> {
        let wallet = self.wallets().solana.clone().ok_or_else(no_solana_wallet)?;
        let address = wallet.address.ok_or_else(no_solana_wallet)?;
        Ok((wallet.provider, address))
    }

    /// Whether an EVM wallet is set, and the Solana wallet's key if known: what balance
    /// discovery covers.
    pub(crate) fn discovery_targets(&self) -> (bool, Option<Pubkey>) {
        let wallets = self.wallets();
        (wallets.evm.is_some(), wallets.solana.as_ref().and_then(|w| w.address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use crate::deposit::FundingConfig;
    use crate::services::HttpSettings;

    const A: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

    fn funding() -> Funding {
        let config = FundingConfig { enabled: true, ..Default::default() };
        Funding::new(config, 0.5, HttpSettings::default())
    }

    fn host(
        f: impl Fn(&str, &Value) -> std::result::Result<Value, ProviderError> + Send + Sync + 'static,
    ) -> Arc<dyn WalletProvider> {
        Arc::new(f)
    }

    #[test]
    fn connect_uses_the_first_account() {
        let f = funding();
        assert_eq!(f.connect_evm_wallet().unwrap_err().kind(), ErrorKind::Funding);
        let provider = host(|method, _| match method {
            "eth_requestAccounts" | "eth_accounts" => {
                Ok(json!([A, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"]))
            }
            "wallet_requestPermissions" => Ok(json!([])),
            _ => Err(ProviderError::new(4200, "unsupported")),
        });
        f.set_evm_wallet(EvmProvider::Host(provider), None).unwrap();
        assert_eq!(f.connect_evm_wallet().unwrap(), A);
        assert_eq!(f.evm_wallet().unwrap().1, checksummed(A));
        assert_ne!(checksummed(A), A.to_ascii_lowercase(), "the fixture has letters to case");
        assert_eq!(f.prompt_evm_account_selection().unwrap().len(), 2);
        f.clear_wallets();
        assert!(f.evm_wallet().err().unwrap().message().starts_with("no EVM wallet is connected"));
    }

    #[test]
    fn rejections_and_bad_answers() {
        let f = funding();
        f.set_evm_wallet(
            EvmProvider::Host(host(|_, _| Err(ProviderError::rejected("User rejected")))),
            None,
        )
        .unwrap();
        let err = f.connect_evm_wallet().unwrap_err();
        assert_eq!(err.to_string(), "rejected by the wallet (4001): User rejected");
        f.set_evm_wallet(EvmProvider::Host(host(|_, _| Ok(json!(["nope"])))), None).unwrap();
        assert!(f.connect_evm_wallet().unwrap_err().message().contains("invalid address"));
        let err = f.set_evm_wallet(EvmProvider::Url("ftp://x".into()), None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Configuration);
        let err = f.set_evm_wallet(EvmProvider::Url("http://x".into()), Some("0x12")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn solana_connect_reads_the_public_key() {
        let f = funding();
        let key = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
        f.set_solana_wallet(host(move |_, _| Ok(json!({"publicKey": key}))), None).unwrap();
        assert!(f.solana_wallet().is_err());
        assert_eq!(f.connect_solana_wallet().unwrap(), key);
        assert_eq!(f.solana_wallet().unwrap().1.to_string(), key);
        f.set_solana_wallet(host(|_, _| Ok(json!("bad"))), None).unwrap();
        assert_eq!(f.connect_solana_wallet().unwrap_err().kind(), ErrorKind::Funding);
    }
}
