//! The HTTP faces of the simulated chains: `POST /devnet/chains/{chainId}/rpc` (the chain's
//! JSON-RPC, single requests and batches), and the admin endpoints
//! `POST /devnet/chains/{chainId}/reorg` and `POST /devnet/chains/{chainId}/mine` (always on,
//! like `/devnet/deposits`). A chain-backed chain has no simulated chain: 400 `CHAIN_BACKED`.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::post;
use depositkit_core::{AddressType, get_address_type};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Heads, ReorgRequest, SimChains};
use crate::http::AppState;
use crate::services::admin::refuse_chain_backed;
use crate::services::api::{ApiError, ApiResult, blocking, read_body, read_json, reply};

/// A JSON-RPC error of a simulated chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcFault {
    pub code: i64,
    pub message: String,
}

impl RpcFault {
    /// `-32601`: the chain does not serve `method`.
    pub fn method_not_found(method: &str) -> Self {
        RpcFault {
            code: -32601,
            message: format!("the method {method} does not exist on devnet's simulated chain"),
        }
    }

    /// `-32602`: bad parameters.
    pub fn invalid(message: impl Into<String>) -> Self {
        RpcFault { code: -32602, message: message.into() }
    }
}

/// The routes under `/devnet/chains/{chainId}/`.
pub(crate) fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/devnet/chains/{chain_id}/rpc", post(rpc))
        .route("/devnet/chains/{chain_id}/reorg", post(reorg))
        .route("/devnet/chains/{chain_id}/mine", post(mine))
}

/// Answers one JSON-RPC request object of chain `chain_id`.
pub fn answer_request(sims: &SimChains, chain_id: u64, request: &Value) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return fault(id, &RpcFault { code: -32600, message: "not a JSON-RPC request".into() });
    };
    let params = request.get("params").cloned().unwrap_or(json!([]));
    let answered = sims.read(chain_id, |chain, lags| match get_address_type(chain_id) {
        AddressType::Evm => super::evm_rpc::answer(chain, lags, method, &params),
        AddressType::Solana => super::solana_rpc::answer(chain, lags, method, &params),
    });
    match answered {
        Ok(Ok(result)) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Ok(Err(e)) => fault(id, &e),
        Err(e) => fault(id, &RpcFault::invalid(e.to_string())),
    }
}

fn fault(id: Value, fault: &RpcFault) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": fault.code, "message": fault.message}})
}

/// 400 unless `chain_id` is a ledger chain of the chain table.
fn simulated(app: &AppState, chain_id: u64) -> ApiResult<()> {
    if depositkit_core::Chain::from_id(chain_id).is_none() {
        return Err(ApiError::invalid(format!("chainId: unknown chain id {chain_id}")));
    }
    refuse_chain_backed(&app.services, chain_id)
}

fn chain_id_of(path: &str) -> ApiResult<u64> {
    path.parse().map_err(|_| ApiError::invalid(format!("chainId: not a chain id: {path}")))
}

async fn rpc(State(app): State<Arc<AppState>>, Path(chain): Path<String>, body: Body) -> Response {
    let result = async {
        let chain_id = chain_id_of(&chain)?;
        simulated(&app, chain_id)?;
        let bytes = read_body(body, app.max_body_bytes).await?;
        let sims = Arc::clone(&app.services.simchains);
        blocking(move || {
            let Ok(request) = serde_json::from_slice::<Value>(&bytes) else {
                let parse = RpcFault { code: -32700, message: "the body is not JSON".into() };
                return Ok(fault(Value::Null, &parse));
            };
            Ok(match request {
                Value::Array(batch) => {
                    Value::Array(batch.iter().map(|r| answer_request(&sims, chain_id, r)).collect())
                }
                single => answer_request(&sims, chain_id, &single),
            })
        })
        .await
    };
    reply(result.await)
}

fn heads_json(heads: Heads) -> Value {
    json!({"latest": heads.latest, "safe": heads.safe, "finalized": heads.finalized})
}

async fn reorg(
    State(app): State<Arc<AppState>>,
    Path(chain): Path<String>,
    body: Body,
) -> Response {
    let result = async {
        let chain_id = chain_id_of(&chain)?;
        simulated(&app, chain_id)?;
        let request: ReorgRequest = read_json(body, app.max_body_bytes).await?;
        let sims = Arc::clone(&app.services.simchains);
        blocking(move || {
            let done = sims.reorg(chain_id, &request)?;
            let txs = |list: &[super::SimTransfer]| -> Vec<String> {
                list.iter().map(|t| t.tx.clone()).collect()
            };
            Ok(json!({
                "replacedBlocks": done.replaced,
                "dropped": txs(&done.dropped),
                "kept": txs(&done.kept),
                "readdAt": done.readd_at,
                "heads": heads_json(sims.heads(chain_id)?),
            }))
        })
        .await
    };
    reply(result.await)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MineRequest {
    #[serde(default = "one")]
    blocks: u64,
}

fn one() -> u64 {
    1
}

async fn mine(State(app): State<Arc<AppState>>, Path(chain): Path<String>, body: Body) -> Response {
    let result = async {
        let chain_id = chain_id_of(&chain)?;
        simulated(&app, chain_id)?;
        let request: MineRequest = read_json(body, app.max_body_bytes).await?;
        let sims = Arc::clone(&app.services.simchains);
        blocking(move || Ok(json!({"heads": heads_json(sims.mine(chain_id, request.blocks)?)})))
            .await
    };
    reply(result.await)
}
