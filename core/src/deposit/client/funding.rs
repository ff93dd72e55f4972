//! `DepositClient`'s funding methods (spec §1 "Fund from wallet", `docs/funding.md` §6): the
//! public face of [`crate::funding`], which does the work and talks to the client only through
//! its port (`deposit/port.rs`).

use std::sync::Arc;

use super::DepositClient;
use crate::deposit::status::ClientCall;
// The docs' links; nothing else needs it.
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::funding::{EvmProvider, Funding, FundingBalance, FundingTransferResult, WalletProvider};
use crate::units::U256;

impl DepositClient {
    /// Runs `work` with the client's funding on the blocking pool, under the call timeout.
    fn funding_call<T: Send + 'static>(
        &self,
        call: ClientCall,
        what: &str,
        work: impl FnOnce(&Funding) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.inner.funding.call(&*self.inner, call, what, work)
    }

    /// Sets the EVM funding wallet: a node URL holding the wallet's unlocked account, or a
    /// host provider. `address`, when given, is the wallet's account; otherwise
    /// [`connect_evm_wallet`](DepositClient::connect_evm_wallet) (or the first use) asks for it.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when funding is not enabled or the URL is not `http(s)://`;
    /// [`ErrorKind::InvalidArgument`] for an invalid address.
    pub fn set_evm_wallet(&self, provider: EvmProvider, address: Option<&str>) -> Result<()> {
        self.inner.funding.admit(&*self.inner, ClientCall::SetEvmWallet)?;
        self.inner.funding.set_evm_wallet(provider, address)
    }

    /// Sets the Solana funding wallet (a Phantom-style provider: `connect`,
    /// `signAndSendTransaction`).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when funding is not enabled; [`ErrorKind::InvalidArgument`]
    /// for an invalid address.
    pub fn set_solana_wallet(
        &self,
        provider: Arc<dyn WalletProvider>,
        address: Option<&str>,
    ) -> Result<()> {
        self.inner.funding.admit(&*self.inner, ClientCall::SetSolanaWallet)?;
        self.inner.funding.set_solana_wallet(provider, address)
    }

    /// Sets (or with `None` removes) the host's balance provider, which then answers every
    /// [`get_wallet_balances`](DepositClient::get_wallet_balances) (method `getWalletBalances`,
    /// the request of `docs/funding.md` §3 as params).
    ///
    /// # Errors
    /// [`ErrorKind::DepositSdk`] when the client is closed: a closed client keeps nothing (a
    /// provider holding the client would be a cycle).
    pub fn set_balance_provider(&self, provider: Option<Arc<dyn WalletProvider>>) -> Result<()> {
        self.inner.guard(ClientCall::SetBalanceProvider)?;
        self.inner.funding.set_balance_provider(provider);
        Ok(())
    }

    /// Forgets both funding wallets (also after `close()`, which already did).
    pub fn clear_funding_wallet(&self) {
        self.inner.funding.clear_wallets();
    }

    /// `eth_requestAccounts`: connects the EVM wallet; its first account becomes the funding
    /// address, which is returned.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when funding is not enabled; [`ErrorKind::Funding`] when no
    /// EVM wallet is set, the wallet rejects (`rejected by the wallet (4001): …`) or answers no
    /// account; [`ErrorKind::Timeout`].
    pub fn connect_evm_wallet(&self) -> Result<String> {
        self.funding_call(
            ClientCall::ConnectEvmWallet,
            "connect_evm_wallet()",
            Funding::connect_evm_wallet,
        )
    }

    /// `eth_accounts`: the EVM wallet's accounts.
    ///
    /// # Errors
    /// As [`connect_evm_wallet`](DepositClient::connect_evm_wallet).
    pub fn evm_accounts(&self) -> Result<Vec<String>> {
        self.funding_call(ClientCall::EvmAccounts, "evm_accounts()", Funding::evm_accounts)
    }

    /// `wallet_requestPermissions [{"eth_accounts": {}}]` then `eth_accounts`: lets the user
    /// pick accounts; the first becomes the funding address.
    ///
    /// # Errors
    /// As [`connect_evm_wallet`](DepositClient::connect_evm_wallet).
    pub fn prompt_evm_account_selection(&self) -> Result<Vec<String>> {
        self.funding_call(
            ClientCall::PromptEvmAccountSelection,
            "prompt_evm_account_selection()",
            Funding::prompt_evm_account_selection,
        )
    }

    /// Phantom's `connect`: connects the Solana wallet and returns its public key.
    ///
    /// # Errors
    /// As [`connect_evm_wallet`](DepositClient::connect_evm_wallet), for the Solana wallet.
    pub fn connect_solana_wallet(&self) -> Result<String> {
        self.funding_call(
            ClientCall::ConnectSolanaWallet,
            "connect_solana_wallet()",
            Funding::connect_solana_wallet,
        )
    }

    /// The connected wallets' balances worth offering (`docs/funding.md` §3): from the host's
    /// balance provider, else RPC discovery (`funding.balanceProvider: "rpc"`), else the
    /// balance API (`funding.apiKey`), else `funding.proxyUrl`, else the hosted proxy. Lines of
    /// Ethereum, BNB Chain, Base, Arbitrum and Solana with known tokens, a positive amount and,
    /// when priced, a value of at least `funding.minValueUSD` (default the client's
    /// `minValueUSD`).
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when funding is not enabled; [`ErrorKind::Funding`] when no
    /// wallet is connected or the source fails (the message names the source, never a key);
    /// [`ErrorKind::Timeout`].
    pub fn get_wallet_balances(&self) -> Result<Vec<FundingBalance>> {
        self.funding_call(
            ClientCall::GetWalletBalances,
            "get_wallet_balances()",
            Funding::wallet_balances,
        )
    }

    /// Sends `raw_amount` of `balance` (default: the gas-adjusted maximum) from the funding
    /// wallet to the deposit address of its chain, waits until it is mined (EVM) or confirmed
    /// (Solana), and returns the transfer. The watcher then detects it as any deposit.
    ///
    /// Nothing is sent when a check fails; nothing is lost when the wallet rejects.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a balance of another client or a zero amount;
    /// [`ErrorKind::Configuration`] when funding is not enabled or before
    /// [`initialize`](DepositClient::initialize); [`ErrorKind::Funding`] with
    /// `insufficient gas: …`, `insufficient funds: …`, `rejected by the wallet (4001): …`,
    /// `RPC failure on <chain>: …` or `transaction <hash> reverted`; [`ErrorKind::Timeout`]
    /// when the transaction was sent but not confirmed in time (the message names it).
    pub fn fund_from_wallet(
        &self,
        balance: &FundingBalance,
        raw_amount: Option<U256>,
    ) -> Result<FundingTransferResult> {
        self.inner.funding.fund_from_wallet(&*self.inner, balance, raw_amount)
    }
}
