//! The registered owners (`dk_owners`): added with their own destination, removed and listed,
//! from any member, over `depositkit_fleet::Fleet`'s owner calls.

use std::ffi::c_char;

use ::depositkit_fleet::OwnerOptions;

use super::{checked_owner, depositkit_fleet, fleet_arg, fleet_error, write_owners};
use crate::boundary;
use crate::deposit::{destination_arg, json_out};
use crate::status::depositkit_status;
use crate::strings;

/// Registers `owner` (an EVM address, any letter case; stored lower-case) in the fleet, durably:
/// a member claims it at its next tick and runs its deposit client.
///
/// `destination_json` is NULL (the template's destination) or the owner's own destination, as
/// for `depositkit_deposit_client_set_destination`: `{"chainId": 42161, "address": "0x...",
/// "token": "USDT"}` (`address` defaults to the owner, `token` to USDC).
///
/// On success, when `out_owner` is not NULL, `*out_owner` is a new string owned by the caller
/// (free it with `depositkit_string_free`): the owner as registered, lower-case. On failure it
/// is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `owner` is not `0x` and 40 hex digits (the
///   message quotes it), or is already registered (in any letter case: "already registered");
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when `destination_json` is not a valid destination for
///   the owner (not such an object, an unknown chain or one that cannot be a destination, an
///   address invalid for the chain, a token not deliverable there: the message names the field
///   and quotes the value);
/// - `DEPOSITKIT_STATUS_NETWORK` when the database cannot be reached or the query fails;
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` after `depositkit_fleet_leave`;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `fleet` or `owner` is NULL;
///   `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks while the database answers. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `owner` and
/// `destination_json` must be NULL or NUL-terminated strings; `out_owner` must be NULL or point
/// to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_add_owner(
    fleet: *const depositkit_fleet,
    owner: *const c_char,
    destination_json: *const c_char,
    out_owner: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let owner = unsafe { strings::str_arg(owner, "owner") }?;
        // SAFETY: the caller's contract above.
        let destination = unsafe { strings::opt_str_arg(destination_json, "destination_json") }?
            .map(destination_arg)
            .transpose()?;
        let owner = checked_owner(owner, destination.as_ref())?;
        let added =
            fleet.joined()?.add_owner(&owner, OwnerOptions { destination }).map_err(fleet_error)?;
        if !out_owner.is_null() {
            let added = strings::owned(added)?;
            // SAFETY: not NULL, and the caller promises it is writable.
            unsafe { out_owner.write(added) };
        }
        Ok(())
    })
}

/// Removes `owner` from the fleet: its holder stops its deposit client within a tick. Its
/// deposit state stays in the database, so registering it again resumes every deposit where it
/// was.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_NOT_FOUND` when `owner` is not registered (the message names it);
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `owner` is not an EVM address;
/// - `DEPOSITKIT_STATUS_NETWORK` when the database cannot be reached or the query fails;
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` after `depositkit_fleet_leave`;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks while the database answers. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `owner` must be NULL or
/// a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_remove_owner(
    fleet: *const depositkit_fleet,
    owner: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let owner = unsafe { strings::str_arg(owner, "owner") }?;
        fleet.joined()?.remove_owner(owner).map_err(fleet_error)
    })
}

/// Every owner registered in the fleet (whichever member runs it), sorted: a JSON array of
/// lower-case addresses.
///
/// On success `*out_owners_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NETWORK` when the database cannot be
/// read; `DEPOSITKIT_STATUS_DEPOSIT_SDK` after `depositkit_fleet_leave`;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks while the database answers. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `out_owners_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_owners(
    fleet: *const depositkit_fleet,
    out_owners_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_owners(fleet, out_owners_json, |fleet| fleet.joined()?.owners().map_err(fleet_error))
    })
}

/// The deposit addresses of `owner`'s account, read from the fleet's database by any member
/// (whichever holds the owner): the account its holder's client kept when it started.
///
/// On success `*out_json` is either a new string owned by the caller (free it with
/// `depositkit_string_free`), `{"evm": "0x...", "solana": "..."}` as
/// `depositkit_deposit_client_deposit_addresses` gives it, or NULL when no client of the owner
/// has started yet (a member starts one within a renewal of `depositkit_fleet_add_owner`). On
/// failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_NOT_FOUND` when `owner` is not registered (the message names it);
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `owner` is not an EVM address (quoted);
/// - `DEPOSITKIT_STATUS_NETWORK` when the database cannot be reached or the query fails;
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` after `depositkit_fleet_leave`;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks while the database answers. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `owner` must be NULL or
/// a NUL-terminated string; `out_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_deposit_addresses(
    fleet: *const depositkit_fleet,
    owner: *const c_char,
    out_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let owner = unsafe { strings::str_arg(owner, "owner") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_json, "out_json") }?;
        let addresses = fleet.joined()?.deposit_addresses(owner).map_err(fleet_error)?;
        let json = match addresses {
            Some(addresses) => json_out(serde_json::to_string(&addresses))?,
            None => std::ptr::null_mut(),
        };
        out.write(json);
        Ok(())
    })
}
