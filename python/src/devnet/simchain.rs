//! The simulated chains of `depositkit.Devnet` (`docs/devnet-chains.md`): their JSON-RPC
//! endpoint for `chain_rpc_urls`, empty blocks on demand, and reorgs, for tests of the chain
//! watcher and of finality.

use depositkit_devnet::simchain::{Heads, ReorgRequest, Reorganised};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{PyDevnet, chain_arg, count_arg};
use crate::conversions::{given, str_arg};

#[pymethods]
impl PyDevnet {
    fn chain_rpc_url(&self, py: Python<'_>, chain_id: &Bound<'_, PyAny>) -> PyResult<String> {
        let chain_id = chain_arg(chain_id)?;
        self.with(py, |running| Ok(running.chain_rpc_url(chain_id)))
    }

    fn mine_blocks<'py>(
        &self,
        py: Python<'py>,
        chain_id: &Bound<'py, PyAny>,
        blocks: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (chain_id, blocks) = (chain_arg(chain_id)?, count_arg(blocks, "blocks")?);
        let heads = self.with(py, |running| running.mine_blocks(chain_id, u64::from(blocks)))?;
        heads_dict(py, heads)
    }

    #[pyo3(signature = (chain_id, depth, *, drop=None, readd_after_blocks=None))]
    fn reorg<'py>(
        &self,
        py: Python<'py>,
        chain_id: &Bound<'py, PyAny>,
        depth: &Bound<'py, PyAny>,
        drop: Option<&Bound<'py, PyAny>>,
        readd_after_blocks: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let chain_id = chain_arg(chain_id)?;
        let mut request =
            ReorgRequest { depth: u64::from(count_arg(depth, "depth")?), ..Default::default() };
        if let Some(drop) = given(drop) {
            for tx in drop.try_iter()? {
                request.drop.push(str_arg(&tx?, "a transaction hash of drop")?.into_owned());
            }
        }
        if let Some(after) = given(readd_after_blocks) {
            request.readd_after_blocks = Some(u64::from(count_arg(after, "readd_after_blocks")?));
        }
        let reorganised = self.with(py, |running| running.reorg(chain_id, &request))?;
        reorganised_dict(py, &reorganised)
    }
}

/// `{"latest": n, "safe": n, "finalized": n}`.
fn heads_dict(py: Python<'_>, heads: Heads) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "latest"), heads.latest)?;
    dict.set_item(intern!(py, "safe"), heads.safe)?;
    dict.set_item(intern!(py, "finalized"), heads.finalized)?;
    Ok(dict)
}

/// `{"replaced": [heights], "dropped": [tx], "kept": [tx], "readd_at": height | None}`.
fn reorganised_dict<'py>(py: Python<'py>, done: &Reorganised) -> PyResult<Bound<'py, PyDict>> {
    let txs = |transfers: &[depositkit_devnet::simchain::SimTransfer]| -> Vec<String> {
        transfers.iter().map(|t| t.tx.clone()).collect()
    };
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "replaced"), done.replaced.clone())?;
    dict.set_item(intern!(py, "dropped"), txs(&done.dropped))?;
    dict.set_item(intern!(py, "kept"), txs(&done.kept))?;
    dict.set_item(intern!(py, "readd_at"), done.readd_at)?;
    Ok(dict)
}
