//! `DepositClient`'s fund-from-wallet methods (the arguments: [`crate::funding`]) and its
//! onramp methods ([`crate::onramp`]).

use super::*;

#[pymethods]
impl PyDepositClient {
    // --- fund from wallet (funding.rs) ----------------------------------------------------------

    #[pyo3(signature = (provider, address=None))]
    fn set_evm_wallet(
        &self,
        py: Python<'_>,
        provider: &Bound<'_, PyAny>,
        address: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let address = text_opt(address, "address")?;
        let (core_provider, slot) = match evm_provider_arg(provider)? {
            EvmProviderArg::Url(url) => (EvmProvider::Url(url), None),
            EvmProviderArg::Callable(callable) => {
                let slot = self.provider_slot(callable, ProviderRole::EvmWallet);
                (EvmProvider::Host(slot.provider()), Some(slot))
            }
        };
        self.set_provider(
            py,
            |p| &mut p.evm,
            slot,
            move |client| client.set_evm_wallet(core_provider, address.as_deref()),
        )
    }

    #[pyo3(signature = (provider, address=None))]
    fn set_solana_wallet(
        &self,
        py: Python<'_>,
        provider: &Bound<'_, PyAny>,
        address: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let address = text_opt(address, "address")?;
        let callable = callable_arg(provider, "(method, params) -> result")?;
        let slot = self.provider_slot(callable, ProviderRole::SolanaWallet);
        let core_provider = slot.provider();
        self.set_provider(
            py,
            |p| &mut p.solana,
            Some(slot),
            move |client| client.set_solana_wallet(core_provider, address.as_deref()),
        )
    }

    fn set_balance_provider(&self, py: Python<'_>, provider: &Bound<'_, PyAny>) -> PyResult<()> {
        let slot = if provider.is_none() {
            None
        } else {
            let callable = callable_arg(provider, "(request) -> balances, or None")?;
            Some(self.provider_slot(callable, ProviderRole::Balances))
        };
        let core_provider = slot.as_ref().map(ProviderSlot::provider);
        self.set_provider(
            py,
            |p| &mut p.balances,
            slot,
            move |client| client.set_balance_provider(core_provider),
        )
    }

    fn clear_funding_wallet(&self, py: Python<'_>) -> PyResult<()> {
        self.set_provider(
            py,
            |p| &mut p.evm,
            None,
            |client| {
                client.clear_funding_wallet();
                Ok(())
            },
        )?;
        let previous = self.providers().solana.take();
        drop(previous);
        Ok(())
    }

    fn connect_evm_wallet(&self, py: Python<'_>) -> PyResult<String> {
        self.run_calling_providers(py, DepositClient::connect_evm_wallet)
    }

    fn evm_accounts(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.run_calling_providers(py, DepositClient::evm_accounts)
    }

    fn prompt_evm_account_selection(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.run_calling_providers(py, DepositClient::prompt_evm_account_selection)
    }

    fn connect_solana_wallet(&self, py: Python<'_>) -> PyResult<String> {
        self.run_calling_providers(py, DepositClient::connect_solana_wallet)
    }

    fn get_wallet_balances(&self, py: Python<'_>) -> PyResult<Vec<PyFundingBalance>> {
        let balances = self.run_calling_providers(py, DepositClient::get_wallet_balances)?;
        Ok(balances.into_iter().map(PyFundingBalance::from).collect())
    }

    #[pyo3(signature = (balance, raw_amount=None))]
    fn fund_from_wallet(
        &self,
        py: Python<'_>,
        balance: &Bound<'_, PyAny>,
        raw_amount: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyFundingTransferResult> {
        let balance = balance_arg(balance)?;
        let raw_amount = raw_amount_arg(raw_amount)?;
        self.run_calling_providers(py, move |client| client.fund_from_wallet(&balance, raw_amount))
            .map(Into::into)
    }

    // --- the onramp (onramp.rs) -----------------------------------------------------------------

    #[pyo3(signature = (amount=None))]
    fn open_onramp(&self, py: Python<'_>, amount: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        let amount = fiat_amount_arg(amount)?;
        let client = self.client(py)?;
        py.detach(|| client.open_onramp(amount)).map_err(|e| client_err(py, e))
    }

    fn handle_onramp_message(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<bool> {
        let message = message_arg(message)?;
        let client = self.client(py)?;
        py.detach(|| client.handle_onramp_message(&message)).map_err(|e| client_err(py, e))
    }

    #[getter]
    fn last_onramp_order(&self, py: Python<'_>) -> PyResult<Option<PyOnrampOrder>> {
        Ok(self.ask(py, DepositClient::last_onramp_order)?.map(PyOnrampOrder::from))
    }
}
