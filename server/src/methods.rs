//! The three methods of the user-lookup service (spec §4), for an authenticated project: what a
//! call looks up ([`lookup_of`], pure), the store's trip ([`crate::store::lookup`]), and the
//! answer from what it found ([`answer`], pure).

use serde_json::{Value, json};

use depositkit_core::describe::{json_kind, quote};

use crate::error::Error;
use crate::records::{ChainFamily, SessionStatus, User, normalize_uuid};
use crate::rpc::{Params, RpcError, codes};
use crate::store::{Found, Lookup, UserStore};
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
    /// Runs `method` with `params`: [`lookup_of`], the store, [`answer`].
    async fn call(&self, method: &str, params: &Params) -> Result<Value, RpcError> {
        let lookup = lookup_of(method, params, time::now_ms())?;
        let found = self.store.look_up(self.project_id, &lookup).await.map_err(internal)?;
        answer(&lookup, found)
    }
}

/// What a call of `method` with `params` looks up (pure: no store yet). The method is looked up
/// first, so an unknown method is -32601 whatever its params; the three methods take positional
/// params only, so by-name params (an object) are -32602. `now_ms` is when a session token must
/// still be valid.
///
/// # Errors
/// The JSON-RPC error to answer instead.
pub fn lookup_of(method: &str, params: &Params, now_ms: i64) -> Result<Lookup, RpcError> {
    match method {
        "getUserInfo" => {
            let [uuid, token] = string_params(method, ["uuid", "token"], params)?;
            let uuid = normalize_uuid("uuid", uuid).map_err(|_| {
                RpcError::invalid_param(0, format!("param 0 (uuid) {} is not a UUID", quote(uuid)))
            })?;
            Ok(Lookup::UserInfo { uuid, token: token.to_owned(), now_ms })
        }
        "getUserInfoByIdentity" => {
            let [provider, uid] = string_params(method, ["provider", "uid"], params)?;
            if provider != JWT_PROVIDER {
                return Err(RpcError::new(
                    codes::UNSUPPORTED_PROVIDER,
                    format!(
                        "provider {} is not supported; only \"{JWT_PROVIDER}\"",
                        quote(provider)
                    ),
                )
                .with_data(json!({ "param": 0, "supported": [JWT_PROVIDER] })));
            }
            Ok(Lookup::ByIdentity { provider: provider.to_owned(), uid: uid.to_owned() })
        }
        "isProjectUser" => {
            let [chain, address] = string_params(method, ["chain", "address"], params)?;
            let chain = membership_params(chain, address)?;
            Ok(Lookup::Membership { chain, address: chain.normalize(address) })
        }
        _ => Err(RpcError::new(
            codes::METHOD_NOT_FOUND,
            format!("method {} not found", quote(method)),
        )
        .with_data(json!({ "methods": METHODS }))),
    }
}

/// The answer to a call from what the store found for its lookup (pure).
///
/// # Errors
/// The method's JSON-RPC error: an unknown user or identity, a wrong or expired token.
pub fn answer(lookup: &Lookup, found: Found) -> Result<Value, RpcError> {
    match (lookup, found) {
        (Lookup::UserInfo { uuid, .. }, Found::UserInfo(found)) => match found {
            None => Err(user_not_found(uuid)),
            // The token is never echoed.
            Some((user, SessionStatus::Valid)) => user_json(&user),
            Some((_, SessionStatus::Expired)) => Err(RpcError::new(
                codes::INVALID_TOKEN,
                format!("the session token of user {uuid} has expired"),
            )
            .with_data(json!({ "param": 1, "reason": "expired" }))),
            Some((_, SessionStatus::Unknown)) => Err(RpcError::new(
                codes::INVALID_TOKEN,
                format!("invalid session token for user {uuid}"),
            )
            .with_data(json!({ "param": 1, "reason": "unknown" }))),
        },
        (Lookup::ByIdentity { provider, uid }, Found::ByIdentity(found)) => match found {
            Some(user) => user_json(&user),
            None => Err(RpcError::new(
                codes::IDENTITY_NOT_FOUND,
                format!("no user of this project has {provider} identity {}", quote(uid)),
            )
            .with_data(json!({ "param": 1, "provider": provider }))),
        },
        (Lookup::Membership { .. }, Found::Membership(found)) => Ok(Value::Bool(found)),
        _ => {
            // The store answered another question than it was asked: a bug, not the caller's.
            eprintln!("depositkit-server: internal error: the store answered another lookup");
            Err(RpcError::internal())
        }
    }
}

/// `isProjectUser`'s params checked: the chain family, and an address of its shape.
fn membership_params(chain: &str, address: &str) -> Result<ChainFamily, RpcError> {
    let family = ChainFamily::parse(chain).ok_or_else(|| {
        RpcError::invalid_param(
            0,
            format!("param 0 (chain) must be \"solana\" or \"evm_chain\", got {}", quote(chain)),
        )
    })?;
    if !family.looks_like_address(address) {
        let expected = match family {
            ChainFamily::Evm => "0x followed by 40 hex digits",
            ChainFamily::Solana => "base58 of a 32-byte public key",
        };
        return Err(RpcError::invalid_param(
            1,
            format!("param 1 (address) {} is not a {family} address ({expected})", quote(address)),
        ));
    }
    Ok(family)
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
