//! `DepositClient`'s refunds and the recovery of stuck funds.

use super::*;

#[pymethods]
impl PyDepositClient {
    #[pyo3(
        signature = (deposit_id, reason=None),
        text_signature = "(self, deposit_id, reason='user_requested')"
    )]
    fn refund(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
        reason: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyRefundResult> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        let reason =
            given(reason).map(reason_arg).transpose()?.unwrap_or(RefundReason::UserRequested);
        self.run(py, move |client| client.refund(&id, reason)).map(Into::into)
    }

    fn can_refund(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
    ) -> PyResult<PyRefundEligibility> {
        let id = str_arg(deposit_id, "deposit_id")?.into_owned();
        self.run(py, move |client| client.can_refund(&id)).map(Into::into)
    }

    fn refund_result(
        &self,
        py: Python<'_>,
        deposit_id: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PyRefundResult>> {
        let id = str_arg(deposit_id, "deposit_id")?;
        Ok(self.ask(py, |client| client.refund_result(&id))?.map(Into::into))
    }

    #[getter]
    fn refund_config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        refund_config_dict(py, &self.ask(py, DepositClient::refund_config)?)
    }

    fn stuck_funds(&self, py: Python<'_>) -> PyResult<Vec<PyDetectedDeposit>> {
        let stuck = self.run(py, DepositClient::stuck_funds)?;
        Ok(stuck.into_iter().map(PyDetectedDeposit::from).collect())
    }

    fn recover_funds(&self, py: Python<'_>) -> PyResult<Vec<PyRecoveryResult>> {
        let results = self.run(py, DepositClient::recover_funds)?;
        Ok(results.into_iter().map(PyRecoveryResult::from).collect())
    }

    #[getter]
    fn is_recovering(&self, py: Python<'_>) -> PyResult<bool> {
        self.ask(py, DepositClient::is_recovering)
    }
}
