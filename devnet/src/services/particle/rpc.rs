//! The envelope of the Particle JSON-RPC (`particle-ua-wire.md` §1–2): one request per POST,
//! positional `params`, the project's credentials as top-level body fields (`projectId`,
//! `projectClientKey`; no header), and every answer — errors included — an HTTP 200 with a
//! JSON-RPC `result` or `error`.
//!
//! Credentials: devnet's built-in project (`BUILTIN_PROJECT_ID` with `BUILTIN_CLIENT_KEY`, what
//! the JWT service takes) or a devnet project (its id with its server key as the client key, as
//! the user-lookup service takes them). A project of its own makes sweeps pay the 1% service
//! fee, as `X-UA-Project-Id` does on `/ua`.

use depositkit_core::validate_address_for_chain;
use serde_json::{Map, Value, json};
use subtle::ConstantTimeEq;

use super::{accounts, create, history, send};
use crate::rpc::{self as jsonrpc, Params, RpcError};
use crate::services::Services;
use crate::services::api::{ApiError, codes as api_codes};
use crate::services::jwt::{BUILTIN_CLIENT_KEY, BUILTIN_PROJECT_ID};
use crate::store::{UaAccount, normalize_uuid};

/// The error codes of the JSON-RPC. -32602 and -32653 are those the SDK's users report from the
/// real service; the others are devnet's. Every error's `data.code` also names devnet's code
/// (`docs/protocol.md`: `BELOW_MINIMUM`, …).
pub mod codes {
    pub use crate::rpc::codes::{
        INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
    };
    /// Missing or wrong `projectId` / `projectClientKey`.
    pub const UNAUTHORIZED: i64 = -32001;
    /// "Insufficient primary token balance": the account cannot pay for the transaction.
    pub const INSUFFICIENT_BALANCE: i64 = -32653;
    /// The value does not cover the fees.
    pub const BELOW_MINIMUM: i64 = -32654;
    /// The signatures are not the owner's signature of the transaction's root hash.
    pub const INVALID_SIGNATURE: i64 = -32655;
    /// The transaction (or its signature's `validUntil`) expired: create it again.
    pub const EXPIRED: i64 = -32656;
    /// No such transaction.
    pub const NOT_FOUND: i64 = -32657;
    /// An injected rejection (`/devnet/faults/sweeps`, mode `reject`): nothing moved.
    pub const ROUTE_FAILED: i64 = -32658;
    /// A chain-backed chain failed: send the same transaction again.
    pub const CHAIN_UNAVAILABLE: i64 = -32659;
}

/// A request as received: parsed, or why not (with the id to answer).
#[derive(Debug, Clone)]
pub enum Incoming {
    Request { request: jsonrpc::Request, body: Map<String, Value> },
    Invalid { id: Value, error: RpcError },
}

impl Incoming {
    /// Reads a body: one JSON-RPC request object (no batches: the SDK sends none).
    pub fn parse(bytes: &[u8]) -> Self {
        let value = match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => value,
            Err(e) => {
                return Incoming::Invalid {
                    id: Value::Null,
                    error: RpcError::parse_error(&e.to_string()),
                };
            }
        };
        if value.is_array() {
            return Incoming::Invalid {
                id: Value::Null,
                error: RpcError::invalid_request("batches are not supported: one request per POST"),
            };
        }
        match jsonrpc::parse_request(&value) {
            Ok(request) => {
                let Value::Object(body) = value else { unreachable!("parse_request took it") };
                Incoming::Request { request, body }
            }
            Err((id, error)) => Incoming::Invalid { id, error },
        }
    }

    /// The id to answer with.
    pub fn id(&self) -> Value {
        match self {
            Incoming::Request { request, .. } => request.id.clone().unwrap_or(Value::Null),
            Incoming::Invalid { id, .. } => id.clone(),
        }
    }

    /// The method, or `""` when the request could not be read.
    pub fn method_name(&self) -> &str {
        match self {
            Incoming::Request { request, .. } => &request.method,
            Incoming::Invalid { .. } => "",
        }
    }
}

/// Whose credentials a request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Project {
    /// Devnet's built-in project.
    Builtin,
    /// A devnet project (its id): sweeps pay the service fee.
    Own(String),
}

/// The project of the body's `projectId` and `projectClientKey`. Blocking.
///
/// # Errors
/// -32001 saying what is missing or that the pair is unknown.
pub fn authenticate(services: &Services, body: &Map<String, Value>) -> Result<Project, RpcError> {
    let field = |name: &str| body.get(name).and_then(Value::as_str).filter(|v| !v.is_empty());
    let (Some(project_id), Some(key)) = (field("projectId"), field("projectClientKey")) else {
        return Err(RpcError::new(
            codes::UNAUTHORIZED,
            "unauthorized: the body must carry projectId and projectClientKey",
        ));
    };
    let builtin = project_id.as_bytes().ct_eq(BUILTIN_PROJECT_ID.as_bytes())
        & key.as_bytes().ct_eq(BUILTIN_CLIENT_KEY.as_bytes());
    if bool::from(builtin) {
        return Ok(Project::Builtin);
    }
    let id = normalize_uuid("projectId", project_id).unwrap_or_else(|_| project_id.to_owned());
    match services.store.verify_server_key(&id, key) {
        Ok(true) => Ok(Project::Own(id)),
        Ok(false) => Err(RpcError::new(
            codes::UNAUTHORIZED,
            "unauthorized: unknown projectId or wrong projectClientKey",
        )),
        Err(e) => Err(internal(e)),
    }
}

/// Answers one request (the reply body). Blocking: runs on the blocking pool.
pub fn answer(services: &Services, incoming: Incoming) -> Value {
    let (request, body) = match incoming {
        Incoming::Request { request, body } => (request, body),
        Incoming::Invalid { id, error } => return jsonrpc::failure(&id, error),
    };
    let id = request.id.clone().unwrap_or(Value::Null);
    let outcome = authenticate(services, &body).and_then(|project| {
        let Params::Positional(params) = &request.params else {
            return Err(RpcError::new(codes::INVALID_PARAMS, "params must be an array"));
        };
        let call = Call { services, params, project: &project };
        call.dispatch(&request.method)
    });
    match outcome {
        Ok(result) => jsonrpc::success(&id, result),
        Err(error) => jsonrpc::failure(&id, error),
    }
}

/// One call: the services, the positional params and the caller's project.
pub struct Call<'a> {
    pub services: &'a Services,
    pub params: &'a [Value],
    pub project: &'a Project,
}

impl Call<'_> {
    fn dispatch(&self, method: &str) -> Result<Value, RpcError> {
        match method {
            "universal_getUniversalAccount" => accounts::universal_account(self),
            "universal_getPrimaryAssets" => accounts::primary_assets(self),
            "universal_createTransaction" => create::create_transaction(self),
            "universal_sendTransaction" => send::send_transaction(self),
            "universal_getTransaction" => send::get_transaction(self),
            "universal_getTransactionsV2" => history::transactions(self),
            "universal_getTokenTransactions" => history::token_transactions(self),
            "universal_getTokenPair" => accounts::token_pair(self),
            "universal_createAssetRouter" => accounts::asset_router(self),
            "universal_getEIP7702Deployments" => accounts::eip7702_deployments(self),
            "universal_createEIP7702DelegationAuth" => accounts::eip7702_auth(self),
            other => Err(RpcError::new(
                codes::METHOD_NOT_FOUND,
                format!("method {} not found", crate::describe::quote(other)),
            )),
        }
    }

    /// Whether sweeps pay the service fee (a project of the caller's own).
    pub fn service_fee(&self) -> bool {
        matches!(self.project, Project::Own(_))
    }

    /// Positional parameter `index`.
    ///
    /// # Errors
    /// -32602 when it is missing.
    pub fn param(&self, index: usize) -> Result<&Value, RpcError> {
        self.params.get(index).ok_or_else(|| invalid(index, "is missing"))
    }

    /// Positional parameter `index`, an object.
    ///
    /// # Errors
    /// -32602 when it is missing or not an object.
    pub fn object(&self, index: usize) -> Result<&Map<String, Value>, RpcError> {
        self.param(index)?.as_object().ok_or_else(|| invalid(index, "must be an object"))
    }

    /// The account of the account object (`ACCT`: `{ownerAddress, name, version, …}`) at
    /// `index`, opened on first use. A `smartAccountAddress` or `solanaSmartAccountAddress` it
    /// carries must be the account's.
    ///
    /// # Errors
    /// -32602 for a missing or bad owner or addresses of another account.
    pub fn account(&self, index: usize) -> Result<UaAccount, RpcError> {
        let object = self.object(index)?;
        let owner = object.get("ownerAddress").and_then(Value::as_str).unwrap_or_default().trim();
        if owner.is_empty() {
            return Err(invalid(
                index,
                "ownerAddress is required (smartAccountOptions.ownerAddress in the SDK)",
            ));
        }
        validate_address_for_chain(owner, 1)
            .map_err(|e| invalid(index, format!("ownerAddress: {}", e.message())))?;
        let account =
            crate::services::account::open(&self.services.store, owner).map_err(internal)?;
        let given =
            |field: &str| object.get(field).and_then(Value::as_str).filter(|a| !a.is_empty());
        if let Some(address) = given("smartAccountAddress")
            && !address.eq_ignore_ascii_case(&account.evm_address)
        {
            return Err(invalid(
                index,
                format!(
                    "smartAccountAddress {address} is not the account of {owner} ({})",
                    account.evm_address
                ),
            ));
        }
        if let Some(address) = given("solanaSmartAccountAddress")
            && address != account.solana_address
        {
            return Err(invalid(
                index,
                format!(
                    "solanaSmartAccountAddress {address} is not the account of {owner} ({})",
                    account.solana_address
                ),
            ));
        }
        Ok(account)
    }
}

/// -32602 about parameter `index`.
pub fn invalid(index: usize, what: impl std::fmt::Display) -> RpcError {
    RpcError::new(codes::INVALID_PARAMS, format!("invalid params: params[{index}] {what}"))
        .with_data(json!({ "param": index, "code": api_codes::INVALID_REQUEST }))
}

/// -32603; the detail goes to stderr only.
pub fn internal(detail: impl std::fmt::Display) -> RpcError {
    eprintln!("depositkit-devnet: internal error: {detail}");
    RpcError::internal()
}

/// A refusal of the services of `docs/protocol.md` as a JSON-RPC error: the code of its kind,
/// its message, and devnet's code in `data.code`.
pub fn from_api(error: ApiError) -> RpcError {
    let code = match error.code {
        api_codes::INSUFFICIENT_BALANCE => codes::INSUFFICIENT_BALANCE,
        api_codes::BELOW_MINIMUM => codes::BELOW_MINIMUM,
        api_codes::BAD_SIGNATURE => codes::INVALID_SIGNATURE,
        api_codes::QUOTE_EXPIRED => codes::EXPIRED,
        api_codes::UNKNOWN_QUOTE | api_codes::NOT_FOUND | api_codes::NOT_SENT => codes::NOT_FOUND,
        api_codes::ROUTE_FAILED => codes::ROUTE_FAILED,
        api_codes::CHAIN_UNAVAILABLE => codes::CHAIN_UNAVAILABLE,
        api_codes::INTERNAL => codes::INTERNAL_ERROR,
        _ => codes::INVALID_PARAMS,
    };
    let mut data = json!({ "code": error.code });
    if let Some(seconds) = error.retry_after {
        data["retryAfter"] = json!(seconds);
    }
    RpcError::new(code, error.message).with_data(data)
}

/// An error of devnet's kind `api_code` with JSON-RPC `code`.
pub fn error(code: i64, api_code: &str, message: impl Into<String>) -> RpcError {
    RpcError::new(code, message).with_data(json!({ "code": api_code }))
}
