//! Driving the devnet's prices and faults: sweep failures, service faults, JWT key rotation
//! and forged tokens, expired sessions.

use std::ffi::c_char;

use ::depositkit_devnet::{Fault, Service, SweepFaultMode};

use crate::boundary::{self, FfiError};
use crate::status::depositkit_status;
use crate::strings;
use crate::tokens::token_arg;

use super::{depositkit_devnet, devnet_arg, devnet_error};

/// Sets the USD price of `token` (a `depositkit_token_type` value) used from now on for the
/// USD values of deposits and quotes (the devnet starts with fixed prices, USDC and USDT at 1).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an unknown token
/// number or a price that is not a positive finite number up to 10^12;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet` is NULL. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_set_price(
    devnet: *const depositkit_devnet,
    token: u32,
    usd: f64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        let token = token_arg(token)?;
        devnet.running().set_price(token, usd).map_err(devnet_error)?;
        Ok(())
    })
}

/// Makes the next `count` sweep sends fail (0 disarms): with `reject`, with HTTP 400
/// `ROUTE_FAILED` before any money moves; otherwise with a `"failed"` sweep status. Either way
/// the money stays in the account, and the client retries (3 attempts) before reporting
/// `failed`.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet` is NULL.
/// Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_fail_next_sweeps(
    devnet: *const depositkit_devnet,
    count: u32,
    reject: bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        let mode = if reject { SweepFaultMode::Reject } else { SweepFaultMode::Fail };
        devnet.running().fail_next_sweeps(count, mode);
        Ok(())
    })
}

/// Makes the next `count` requests to one of devnet's services fail, or answer late: with HTTP
/// `status` (400 to 599; 0: none) instead of being served, after waiting `delay_ms`
/// milliseconds (at most 60000; 0: no wait). At least one of the two must be given; both may
/// be (a late error). Each request uses up one of `count`. A new fault for the same service and
/// path replaces a pending one of the same kind (status or delay).
///
/// `service` is `"jwt"` (the JWT service, `/jwt`), `"signer"` (`/signer`), `"ua"` (the
/// universal-account service, `/ua`) or `"user-rpc"` (`/user-rpc`). `path` NULL means every
/// request to the service; otherwise (starting with `/`) only requests whose path below the
/// service's prefix starts with it, the most specific path winning: e.g. `"/v1/sweeps/send"`
/// (sweep and refund sends), `"/v1/sweeps/quote"`, `"/v1/sweeps/q_"` (sweep status reads),
/// `"/v1/balances"`, `"/v1/receipts"`, `"/v1/transactions"` (not for `"user-rpc"`, which has
/// one path). Clients retry 429 and 5xx answers (`httpRetries`), so a fault meant to reach the
/// caller needs a `count` above that.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for an unknown service,
/// a `path` on `"user-rpc"` or not starting with `/`, a status outside 400..=599, a delay above
/// 60000, neither a status nor a delay, or a `count` of 0 (the message says which);
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet` or `service` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8`. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`; `service` and `path`
/// must be NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_inject_service_fault(
    devnet: *const depositkit_devnet,
    service: *const c_char,
    path: *const c_char,
    status: u16,
    delay_ms: u64,
    count: u32,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        // SAFETY: the caller's contract above.
        let name = unsafe { strings::str_arg(service, "service") }?;
        let service = Service::ALL.into_iter().find(|s| s.as_str() == name).ok_or_else(|| {
            FfiError::new(
                depositkit_status::InvalidArgument,
                format!(
                    "service must be one of jwt, signer, ua, user-rpc, got {}",
                    depositkit_core::describe::quote(name)
                ),
            )
        })?;
        // SAFETY: the caller's contract above.
        let path = unsafe { strings::opt_str_arg(path, "path") }?;
        let fault = Fault {
            status: (status != 0).then_some(status),
            retry_after: None,
            delay_ms: (delay_ms != 0).then_some(delay_ms),
            count: Some(count),
        };
        devnet.running().inject_service_fault_at(service, path, &fault).map_err(devnet_error)?;
        Ok(())
    })
}

/// Disarms every pending fault of every service: HTTP faults
/// (`depositkit_devnet_inject_service_fault`), sweep faults
/// (`depositkit_devnet_fail_next_sweeps`) and forged JWTs (`depositkit_devnet_forge_next_jwts`).
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet` is NULL.
/// Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_clear_faults(
    devnet: *const depositkit_devnet,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        devnet.running().clear_faults();
        Ok(())
    })
}

/// Makes a new JWT signing key current; the previous one stays in the JWKS, so sessions issued
/// before go on working and clients learn the new key id on their next session. Takes up to
/// about half a second.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet` is NULL;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the key cannot be generated or stored. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_rotate_jwt_key(
    devnet: *const depositkit_devnet,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        devnet.running().rotate_jwt_key().map_err(devnet_error)?;
        Ok(())
    })
}

/// Makes the next `count` JWTs the service issues signed by a key that is not in its JWKS, so
/// that clients refuse them (`DEPOSITKIT_STATUS_JWT`).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet` is NULL;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the forging key cannot be generated. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_forge_next_jwts(
    devnet: *const depositkit_devnet,
    count: u32,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        devnet.running().forge_next_jwts(count).map_err(devnet_error)?;
        Ok(())
    })
}

/// Expires every JWT issued so far (to `owner_address` only, when it is not NULL): the services
/// refuse them from now on with HTTP 401, and clients renew their session once and go on.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `devnet` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8` when `owner_address` is not UTF-8. Thread-safe.
///
/// # Safety
/// `devnet` must be NULL or a live handle from `depositkit_devnet_start`; `owner_address` must
/// be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_devnet_expire_sessions(
    devnet: *const depositkit_devnet,
    owner_address: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let devnet = unsafe { devnet_arg(devnet) }?;
        // SAFETY: the caller's contract above.
        let owner = unsafe { strings::opt_str_arg(owner_address, "owner_address") }?;
        devnet.running().expire_sessions(owner);
        Ok(())
    })
}
