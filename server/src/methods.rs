//! The three methods of the user-lookup service (spec §4), for an authenticated project.

use serde_json::{Value, json};

use depositkit_core::describe::{json_kind, quote};

use crate::error::Error;
use crate::records::{ChainFamily, SessionStatus, User, normalize_uuid};
use crate::rpc::{Params, RpcError, codes};
use crate::store::UserStore;
use crate::time;

/// The method names, as in spec §1.
pub const METHODS: [&str; 3] = ["getUserInfo", "getUserInfoByIdentity", "isProjectUser"];

/// The one identity provider `getUserInfoByIdentity` supports.
pub const JWT_PROVIDER: &str = "jwt";

/// What a method call runs against: the store and the project the caller authenticated as.
pub struct Context<'a> {
    pub store: &'a UserStore,
    pub project_id: &'a str,
}

impl crate::rpc::Methods for Context<'_> {
    /// Runs `method` with `params`. The method is looked up first, so an unknown method is
    /// -32601 whatever its params; the three methods take positional params only, so by-name
    /// params (an object) are -32602.
    async fn call(&self, method: &str, params: &Params) -> Result<Value, RpcError> {
        match method {
            "getUserInfo" => {
                let [uuid, token] = string_params(method, ["uuid", "token"], params)?;
                self.get_user_info(uuid, token).await
            }
            "getUserInfoByIdentity" => {
                let [provider, uid] = string_params(method, ["provider", "uid"], params)?;
                self.get_user_info_by_identity(provider, uid).await
            }
            "isProjectUser" => {
                let [chain, address] = string_params(method, ["chain", "address"], params)?;
                self.is_project_user(chain, address).await
            }
            _ => Err(RpcError::new(
                codes::METHOD_NOT_FOUND,
                format!("method {} not found", quote(method)),
            )
            .with_data(json!({ "methods": METHODS }))),
        }
    }
}

impl Context<'_> {
    async fn get_user_info(&self, uuid: &str, token: &str) -> Result<Value, RpcError> {
        let uuid = normalize_uuid("uuid", uuid).map_err(|_| {
            RpcError::invalid_param(0, format!("param 0 (uuid) {} is not a UUID", quote(uuid)))
        })?;
        // One lookup after the other, never both at once: each holds a pooled connection, and
        // a request holding one while it waits for a second can exhaust the pool under load
        // (every request holding one, none getting its second).
        let user = self.store.user(self.project_id, &uuid).await.map_err(internal)?;
        let Some(user) = user else {
            return Err(user_not_found(&uuid));
        };
        // The token is never echoed.
        match self.store.session_status(&uuid, token, time::now_ms()).await.map_err(internal)? {
            SessionStatus::Valid => user_json(&user),
            SessionStatus::Expired => Err(RpcError::new(
                codes::INVALID_TOKEN,
                format!("the session token of user {uuid} has expired"),
            )
            .with_data(json!({ "param": 1, "reason": "expired" }))),
            SessionStatus::Unknown => Err(RpcError::new(
                codes::INVALID_TOKEN,
                format!("invalid session token for user {uuid}"),
            )
            .with_data(json!({ "param": 1, "reason": "unknown" }))),
        }
    }

    async fn get_user_info_by_identity(
        &self,
        provider: &str,
        uid: &str,
    ) -> Result<Value, RpcError> {
        if provider != JWT_PROVIDER {
            return Err(RpcError::new(
                codes::UNSUPPORTED_PROVIDER,
                format!("provider {} is not supported; only \"{JWT_PROVIDER}\"", quote(provider)),
            )
            .with_data(json!({ "param": 0, "supported": [JWT_PROVIDER] })));
        }
        match self.store.user_by_identity(self.project_id, provider, uid).await.map_err(internal)? {
            Some(user) => user_json(&user),
            None => Err(RpcError::new(
                codes::IDENTITY_NOT_FOUND,
                format!("no user of this project has {provider} identity {}", quote(uid)),
            )
            .with_data(json!({ "param": 1, "provider": provider }))),
        }
    }

    async fn is_project_user(&self, chain: &str, address: &str) -> Result<Value, RpcError> {
        let family = ChainFamily::parse(chain).ok_or_else(|| {
            RpcError::invalid_param(
                0,
                format!(
                    "param 0 (chain) must be \"solana\" or \"evm_chain\", got {}",
                    quote(chain)
                ),
            )
        })?;
        if !family.looks_like_address(address) {
            let expected = match family {
                ChainFamily::Evm => "0x followed by 40 hex digits",
                ChainFamily::Solana => "base58 of a 32-byte public key",
            };
            return Err(RpcError::invalid_param(
                1,
                format!(
                    "param 1 (address) {} is not a {family} address ({expected})",
                    quote(address)
                ),
            ));
        }
        let found = self
            .store
            .is_project_address(self.project_id, family, address)
            .await
            .map_err(internal)?;
        Ok(Value::Bool(found))
    }
}

/// The params as `N` positional strings, or -32602 naming what is wrong. `method` is one of
/// [`METHODS`] (never caller input), so messages stay short.
fn string_params<'a, const N: usize>(
    method: &str,
    names: [&str; N],
    params: &'a Params,
) -> Result<[&'a str; N], RpcError> {
    let Some(params) = params.positional() else {
        // The object's keys and values are not echoed: they are caller input (and may hold a
        // session token).
        return Err(RpcError::new(
            codes::INVALID_PARAMS,
            format!(
                "{method} takes positional params [{}] (a JSON array), not by-name params (an object)",
                names.join(", ")
            ),
        )
        .with_data(json!({ "expected": N, "positional": names.as_slice() })));
    };
    if params.len() != N {
        return Err(RpcError::new(
            codes::INVALID_PARAMS,
            format!("{method} expects {N} params [{}], got {}", names.join(", "), params.len()),
        )
        .with_data(json!({ "expected": N, "got": params.len() })));
    }
    let mut out = [""; N];
    for (i, (slot, value)) in out.iter_mut().zip(params).enumerate() {
        *slot = value.as_str().ok_or_else(|| {
            RpcError::invalid_param(
                i,
                format!("param {i} ({}) must be a string, got {}", names[i], json_kind(value)),
            )
        })?;
    }
    Ok(out)
}

fn user_not_found(uuid: &str) -> RpcError {
    RpcError::new(codes::USER_NOT_FOUND, format!("user {uuid} not found"))
        .with_data(json!({ "param": 0, "uuid": uuid }))
}

fn user_json(user: &User) -> Result<Value, RpcError> {
    serde_json::to_value(user)
        .map_err(|e| internal(Error::Json { context: "user record".into(), source: e }))
}

/// Logs a store failure (never with request params) and hides it from the caller.
fn internal(error: Error) -> RpcError {
    eprintln!("depositkit-server: internal error: {error}");
    RpcError::internal()
}
