//! What the dashboard's forms do: send a deposit to an owner (or any address), arm and clear
//! faults. Each checks its whole input before it changes anything, and a refusal names the bad
//! value.

use depositkit_core::{
    AddressType, Chain, TokenType, get_address_type, get_token_decimals, parse_units,
    validate_address_for_chain,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::events::human;
use crate::describe::quote;
use crate::http::AppState;
use crate::services::Services;
use crate::services::admin::{self, DepositRequest};
use crate::services::api::{ApiError, ApiResult, codes};
use crate::services::faults::{FaultRequest, SweepFaultMode};

/// The most sweeps one sweep fault may cover.
const MAX_SWEEP_FAULTS: u32 = 100;

/// A deposit form: `to` is an owner (its deposit address on the chain receives the deposit) or
/// any address valid on the chain; `amount` is in whole tokens.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DepositForm {
    pub to: String,
    pub chain_id: u64,
    pub token: String,
    pub amount: String,
}

/// Credits the deposit of `form` as `POST /devnet/deposits` does. Blocking.
///
/// # Errors
/// 400 naming the bad field (an unknown chain or token, an address not valid on the chain, an
/// amount that is not a positive decimal); 400 `CHAIN_BACKED` on a chain-backed chain.
pub fn deposit(services: &Services, form: &DepositForm) -> ApiResult {
    let chain = Chain::from_id(form.chain_id)
        .ok_or_else(|| ApiError::invalid(format!("chain: unknown chain id {}", form.chain_id)))?;
    let token: TokenType = form.token.parse().map_err(|e: depositkit_core::Error| {
        ApiError::invalid(format!("token: {}", e.message()))
    })?;
    let to = form.to.trim();
    if to.is_empty() {
        return Err(ApiError::invalid("to: give an owner or an address"));
    }
    let decimals = get_token_decimals(token, Some(chain.id()));
    let raw = parse_units(form.amount.trim(), u32::from(decimals))
        .map_err(|e| ApiError::invalid(format!("amount: {}", e.message())))?;
    if raw.is_zero() {
        return Err(ApiError::invalid(format!(
            "amount: {} is not positive",
            quote(form.amount.trim())
        )));
    }
    let owned = services
        .store
        .accounts_overview()
        .map_err(ApiError::internal)?
        .into_iter()
        .find(|a| a.owner.as_deref().is_some_and(|owner| owner.eq_ignore_ascii_case(to)));
    let address = match &owned {
        Some(account) => match get_address_type(chain.id()) {
            AddressType::Solana => account.solana_address.clone(),
            AddressType::Evm => account.evm_address.clone(),
        },
        None => {
            validate_address_for_chain(to, chain.id()).map_err(|_| {
                ApiError::invalid(format!(
                    "to: {} is neither an owner devnet knows nor an address on {}",
                    quote(to),
                    chain.name()
                ))
            })?;
            to.to_owned()
        }
    };
    admin::refuse_chain_backed(services, chain.id())?;
    let request = DepositRequest {
        address: address.clone(),
        chain_id: chain.id(),
        token: token.symbol().to_owned(),
        raw_amount: Some(raw.to_string()),
        ..DepositRequest::default()
    };
    let (credited, raw, _) = admin::deposit(&services.store, &services.prices, &request)?;
    crate::simchain::record_deposit(services, &request, &credited.tx_hash, raw);
    let amount = human(raw, token, chain.id());
    let message = match (&credited.account_id, &owned) {
        (Some(_), Some(account)) => format!(
            "{amount} {token} sent on {} to {}'s deposit address {address}",
            chain.name(),
            account.owner.as_deref().unwrap_or(to)
        ),
        (Some(_), None) => {
            format!("{amount} {token} sent on {} to deposit address {address}", chain.name())
        }
        (None, _) => format!(
            "{amount} {token} credited to {address} on {}: no account owns that address, so no \
             client will sweep it",
            chain.name()
        ),
    };
    Ok(json!({
        "txHash": credited.tx_hash,
        "accountId": credited.account_id,
        "address": address,
        "rawAmount": raw.to_string(),
        "message": message,
    }))
}

/// A sweep-fault form.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFaultForm {
    mode: SweepFaultMode,
    count: u32,
}

/// Arms the fault of `form`: `{"kind": "sweeps", "mode": "fail" | "reject", "count"}` or
/// `{"kind": "http", "service", "path"?, "status"?, "delayMs"?, "count"?}` (the body of
/// `POST /devnet/faults`). Returns a sentence saying what was armed.
///
/// # Errors
/// 404 `FAULT_INJECTION_OFF` when the server runs without fault injection; 400 naming what is
/// wrong with the form.
pub(crate) fn arm_fault(app: &AppState, mut form: Value) -> ApiResult<String> {
    fault_injection_on(app)?;
    let kind = form.as_object_mut().and_then(|f| f.remove("kind"));
    let bad = |e: serde_json::Error| ApiError::invalid(format!("fault: {e}"));
    match kind.as_ref().and_then(Value::as_str) {
        Some("sweeps") => {
            let form: SweepFaultForm = serde_json::from_value(form).map_err(bad)?;
            if !(1..=MAX_SWEEP_FAULTS).contains(&form.count) {
                return Err(ApiError::invalid(format!(
                    "count: {} is not between 1 and {MAX_SWEEP_FAULTS}",
                    form.count
                )));
            }
            app.services.sweep_faults.arm(form.mode, form.count);
            let what = match form.mode {
                SweepFaultMode::Fail => "fail (the money stays in the account)",
                SweepFaultMode::Reject => "be rejected (ROUTE_FAILED, no money moves)",
            };
            Ok(format!("the next {} sweep send(s) will {what}", form.count))
        }
        Some("http") => {
            let form: FaultRequest = serde_json::from_value(form).map_err(bad)?;
            admin::inject_fault(app, &form)
                .map_err(|e| ApiError::invalid(format!("fault: {e}")))?;
            let service = form.service.map_or("user-rpc", |s| s.as_str());
            let path = form.path.as_deref().unwrap_or("");
            let effect = match (form.status, form.delay_ms) {
                (Some(status), Some(ms)) => format!("wait {ms} ms, then answer HTTP {status}"),
                (Some(status), None) => format!("answer HTTP {status}"),
                (None, Some(ms)) => format!("wait {ms} ms"),
                (None, None) => "be served".to_owned(),
            };
            Ok(format!(
                "the next {} request(s) to {service}{path} will {effect}",
                form.count.unwrap_or(1)
            ))
        }
        _ => Err(ApiError::invalid(format!(
            "kind: expected \"sweeps\" or \"http\", got {}",
            kind.map_or_else(|| "nothing".to_owned(), |k| k.to_string())
        ))),
    }
}

/// Disarms every fault of every service.
///
/// # Errors
/// 404 `FAULT_INJECTION_OFF` when the server runs without fault injection.
pub(crate) fn clear_faults(app: &AppState) -> ApiResult<String> {
    fault_injection_on(app)?;
    admin::clear_faults(app);
    Ok("every pending fault was cleared".to_owned())
}

fn fault_injection_on(app: &AppState) -> ApiResult<()> {
    if app.fault_injection {
        return Ok(());
    }
    Err(ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        codes::FAULT_INJECTION_OFF,
        "fault injection is off; start the server with --enable-fault-injection",
    ))
}
