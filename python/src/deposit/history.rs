//! `DepositClient`'s transaction history: pages, by token with a cursor, one by id.

use super::*;

#[pymethods]
impl PyDepositClient {
    #[pyo3(signature = (page=1, page_size=10))]
    fn transactions<'py>(
        &self,
        py: Python<'py>,
        page: u32,
        page_size: u32,
    ) -> PyResult<Bound<'py, PyAny>> {
        let page = self.run(py, move |client| client.transactions(page, page_size))?;
        let value = serde_json::to_value(page).map_err(|e| {
            to_py_err(py, Error::new(ErrorKind::Internal, format!("transactions as JSON: {e}")))
        })?;
        json_to_py(py, &value)
    }

    #[pyo3(signature = (page=None, page_size=None))]
    fn get_transactions(
        &self,
        py: Python<'_>,
        page: Option<&Bound<'_, PyAny>>,
        page_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTransactionsResponse> {
        let page = page_arg(page, "page")?;
        let page_size = page_arg(page_size, "page_size")?;
        self.run(py, move |client| client.get_transactions(page, page_size)).map(Into::into)
    }

    #[pyo3(signature = (chain_id, address, *, page_token=None, page_size=None))]
    fn get_token_transactions(
        &self,
        py: Python<'_>,
        chain_id: &Bound<'_, PyAny>,
        address: &Bound<'_, PyAny>,
        page_token: Option<&Bound<'_, PyAny>>,
        page_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTokenTransactionsResponse> {
        let (filter, page_token) =
            aio::token_transactions_args(chain_id, address, page_token, page_size)?;
        self.run(py, move |client| client.get_token_transactions(&filter, page_token.as_deref()))
            .map(Into::into)
    }

    fn get_transaction(
        &self,
        py: Python<'_>,
        transaction_id: &Bound<'_, PyAny>,
    ) -> PyResult<PyUaTransaction> {
        let id = str_arg(transaction_id, "transaction_id")?.into_owned();
        self.run(py, move |client| client.get_transaction(&id)).map(Into::into)
    }
}
