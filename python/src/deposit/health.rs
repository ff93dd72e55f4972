//! `DepositClient.health()`.

use pyo3::prelude::*;

use super::PyDepositClient;

#[pymethods]
impl PyDepositClient {
    /// The client's health as a dict (see the stub): never blocks on the network.
    #[pyo3(signature = (stuck_after_ms = None))]
    fn health<'py>(
        &self,
        py: Python<'py>,
        stuck_after_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let health = self.client(py)?.health(stuck_after_ms);
        let json = serde_json::to_string(&health)
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        py.import("json")?.call_method1("loads", (json,))
    }
}
