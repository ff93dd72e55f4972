//! The three methods of the user-lookup service (spec §4), for an authenticated project: what a
//! call looks up ([`lookup_of`], pure), the store's trip ([`crate::store::lookup`]), and the
//! answer from what it found ([`answer`], pure).

use serde_json::{Value, json};

use depositkit_core::describe::{json_kind, quote};

use crate::answer::Answer;
use crate::error::Error;
use crate::records::{ChainFamily, SessionStatus, normalize_uuid};
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
        answer_json(&answer(&lookup, found)?)
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
    let names = param_names(method)?;
    lookup_of_strings(method, string_params(method, names, params)?, now_ms)
}

/// [`lookup_of`] for positional params that are two strings, as every method takes (the fast
/// path of [`crate::single_call`] reads them without a `serde_json::Value`).
///
/// # Errors
/// The JSON-RPC error to answer instead.
pub fn lookup_of_strings(
    method: &str,
    [first, second]: [&str; 2],
    now_ms: i64,
) -> Result<Lookup, RpcError> {
    match method {
        "getUserInfo" => {
            let (uuid, token) = (first, second);
            let uuid = normalize_uuid("uuid", uuid).map_err(|_| {
                RpcError::invalid_param(0, format!("param 0 (uuid) {} is not a UUID", quote(uuid)))
            })?;
            Ok(Lookup::UserInfo { uuid, token: token.to_owned(), now_ms })
        }
        "getUserInfoByIdentity" => {
            let (provider, uid) = (first, second);
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
            let (chain, address) = (first, second);
            let chain = membership_params(chain, address)?;
            Ok(Lookup::Membership { chain, address: chain.normalize(address) })
        }
        _ => Err(method_not_found(method)),
    }
}

/// The names of `method`'s positional params, or -32601 for an unknown method.
fn param_names(method: &str) -> Result<[&'static str; 2], RpcError> {
    match method {
        "getUserInfo" => Ok(["uuid", "token"]),
        "getUserInfoByIdentity" => Ok(["provider", "uid"]),
        "isProjectUser" => Ok(["chain", "address"]),
        _ => Err(method_not_found(method)),
    }
}

fn method_not_found(method: &str) -> RpcError {
    RpcError::new(codes::METHOD_NOT_FOUND, format!("method {} not found", quote(method)))
        .with_data(json!({ "methods": METHODS }))
}

/// The answer to a call from what the store found for its lookup (pure).
///
/// # Errors
/// The method's JSON-RPC error: an unknown user or identity, a wrong or expired token.
pub fn answer(lookup: &Lookup, found: Found) -> Result<Answer, RpcError> {
    match (lookup, found) {
        (Lookup::UserInfo { uuid, .. }, Found::UserInfo(found)) => match found {
            None => Err(user_not_found(uuid)),
            // The token is never echoed.
            Some((user, SessionStatus::Valid)) => Ok(Answer::User(Box::new(user))),
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
            Some(user) => Ok(Answer::User(Box::new(user))),
            None => Err(RpcError::new(
                codes::IDENTITY_NOT_FOUND,
                format!("no user of this project has {provider} identity {}", quote(uid)),
            )
            .with_data(json!({ "param": 1, "provider": provider }))),
        },
        (Lookup::Membership { .. }, Found::Membership(found)) => Ok(Answer::Member(found)),
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

/// `answer` as a `serde_json::Value` (a batch's replies are built from them).
///
/// # Errors
/// -32603 when it cannot be serialized (logged).
pub fn answer_json(answer: &Answer) -> Result<Value, RpcError> {
    serde_json::to_value(answer)
        .map_err(|e| internal(Error::Json { context: "user record".into(), source: e }))
}

/// Logs a store failure (never with request params) and hides it from the caller.
fn internal(error: Error) -> RpcError {
    eprintln!("depositkit-server: internal error: {error}");
    RpcError::internal()
}
