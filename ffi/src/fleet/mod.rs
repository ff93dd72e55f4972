//! Fleet mode (`docs/fleet.md`, section "C"): a member of a fleet of processes sharing the
//! owners of one deployment through PostgreSQL, over `depositkit_fleet::DepositFleet`. The
//! Python face (`depositkit.DepositFleet`) has the same calls and errors.
//!
//! - **The handle** ([`depositkit_fleet`]) is a `Box` handed out as a `const` pointer: every
//!   call only reads it (the member sits behind a mutex that only `leave` and `free` take it
//!   out of), so one handle serves any number of threads. It keeps the fleet's database
//!   ([`Fleet`]) apart from the member, so that the calls that only go to the database (owners,
//!   commands, the log) never hold the member's lock while they wait.
//! - **Joining** ([`depositkit_fleet_join`]) reads the template of every owner's client with
//!   the deposit client's own reader (`options.rs`), so its JSON is `depositkit_deposit_client_new`'s.
//! - **Errors**: each `FleetError` becomes the status of its class ([`fleet_error`], the same
//!   classes as Python's exceptions). The database password never appears in a message: the
//!   fleet's own messages show `host:port/database` only, and this module adds none with the URL.
//! - **Leaving**: `depositkit_fleet_leave` hands the owners over at once; `depositkit_fleet_free`
//!   without leaving stops the member's clients, and its owners pass on once its lease runs out.
//!
//! One file per part: `commands.rs` (`depositkit_fleet_request`), `events.rs` (the log),
//! `subscribe.rs` (callbacks on the log, a thread each), `options.rs` (reading the template and
//! the member's options), `owners.rs` (registering owners).

mod commands;
mod events;
mod options;
mod owners;
mod subscribe;
#[cfg(test)]
mod tests;

use std::ffi::c_char;
use std::sync::{Mutex, MutexGuard, PoisonError};

use ::depositkit_fleet::{DepositFleet, Fleet, FleetError, owner_address};
use depositkit_core::deposit::{DestinationConfig, resolve_destination};

use crate::boundary::{self, FfiError, FfiResult};
use crate::deposit::json_out;
use crate::status::depositkit_status;
use crate::strings;

pub use commands::depositkit_fleet_request;
pub use events::depositkit_fleet_events;
pub use owners::{
    depositkit_fleet_add_owner, depositkit_fleet_owners, depositkit_fleet_remove_owner,
};
pub use subscribe::{
    depositkit_fleet_callback_errors, depositkit_fleet_subscribe, depositkit_fleet_unsubscribe,
};

/// A member of a fleet (`docs/fleet.md`): a process that holds a balanced share of the owners
/// registered in one PostgreSQL database and runs a deposit client for each, takes over the
/// owners of members that died, and asks any owner's holder for a sweep, a refund, a recovery
/// or a destination change.
///
/// Opaque: created by `depositkit_fleet_join`, used through a `const depositkit_fleet *`,
/// released by `depositkit_fleet_free`. Thread-safe: one member may be used by any number of
/// threads at once, and freed on any thread once no call is using it. Its database work runs on
/// a runtime of the fleet's own (two worker threads per process, created on first use).
#[allow(non_camel_case_types)]
pub struct depositkit_fleet {
    /// The running member; `None` once it left.
    member: Mutex<Option<DepositFleet>>,
    /// The fleet's database (owners, commands, the log), shared with the member.
    fleet: Fleet,
    node_id: String,
    /// The callback threads (`subscribe.rs`), stopped by `leave` and `free`.
    feeds: subscribe::Feeds,
}

impl depositkit_fleet {
    fn member(&self) -> MutexGuard<'_, Option<DepositFleet>> {
        self.member.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The fleet's database, unless the member left.
    fn joined(&self) -> FfiResult<&Fleet> {
        if self.member().is_none() {
            return Err(self.left());
        }
        Ok(&self.fleet)
    }

    /// `DEPOSITKIT_STATUS_DEPOSIT_SDK`: this member left.
    fn left(&self) -> FfiError {
        FfiError::new(
            depositkit_status::DepositSdk,
            format!("this fleet member ({}) left the fleet", self.node_id),
        )
    }
}

/// The handle behind `fleet`: `DEPOSITKIT_STATUS_NULL_ARGUMENT` naming `fleet` when NULL.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`, not freed before `'a`
/// ends (the duration of the call).
unsafe fn fleet_arg<'a>(fleet: *const depositkit_fleet) -> FfiResult<&'a depositkit_fleet> {
    // SAFETY: the caller's contract above; `Box::into_raw` gave an aligned pointer to a value
    // that lives until the handle is freed.
    unsafe { fleet.as_ref() }.ok_or_else(|| FfiError::null_argument("fleet"))
}

/// `DEPOSITKIT_STATUS_INVALID_ARGUMENT` with `message`.
fn invalid(message: String) -> FfiError {
    FfiError::new(depositkit_status::InvalidArgument, message)
}

/// The status of each fleet failure (the classes of Python's exceptions), with the fleet's
/// message, which shows the database as `host:port/database`, never its password.
fn fleet_error(err: FleetError) -> FfiError {
    FfiError::new(err.kind().into(), err.to_string())
}

/// `owner` lower-cased, checked as the fleet checks it, and `destination` (if any) checked as a
/// client of that owner would check it: a destination its client would refuse is refused here,
/// before it reaches the database (where it would keep the owner's client from starting).
fn checked_owner(owner: &str, destination: Option<&DestinationConfig>) -> FfiResult<String> {
    let owner = owner_address(owner).map_err(fleet_error)?;
    if let Some(destination) = destination {
        resolve_destination(destination, &owner)?;
    }
    Ok(owner)
}

/// The body of an export that reads `fleet`, asks it for a list of owners and hands the list
/// out as a JSON array in `*out` (owned by the caller). Arguments are checked in order: `fleet`,
/// then `out`.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `out` must be NULL or
/// point to a writable `char *`.
unsafe fn write_owners(
    fleet: *const depositkit_fleet,
    out: *mut *mut c_char,
    ask: impl FnOnce(&depositkit_fleet) -> FfiResult<Vec<String>>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let fleet = unsafe { fleet_arg(fleet) }?;
    // SAFETY: the caller's contract above.
    let out = unsafe { boundary::out(out, "out_owners_json") }?;
    let owners = ask(fleet)?;
    out.write(json_out(serde_json::to_string(&owners))?);
    Ok(())
}

/// Joins the fleet whose database is at `database_url` (a `postgres://` URL, libpq's form:
/// `postgres://user:password@host:port/database?sslmode=require`), creating the fleet's tables
/// in an empty database. The member then claims its share of the registered owners (every
/// `renew_every`) and runs a deposit client for each.
///
/// `template_json` is the configuration every owner's client starts from: the JSON object of
/// `depositkit_deposit_client_new` (the same options, names, types and errors; `docs/options.md`),
/// in which `destination` is required (the owners' default destination; an owner registered
/// with one of its own uses that) and `ownerAddress` may be left out (each client uses its
/// owner's address). `storePath` is refused: each owner's state is kept in the database.
///
/// `member_json` is NULL (the defaults) or a JSON object of the member's own options, every key
/// optional: `"name"` (string, default `"depositkit"`: the member's name in the table
/// `dk_nodes`), `"maxConnections"` (integer, default 8: pooled database connections, at least
/// 1), `"leaseTtlMs"` (integer, default 10000: a member that does not renew its lease within
/// this is dead to the others, which take its owners) and `"renewEveryMs"` (integer, default
/// 3000: how often the lease is renewed and the owners rebalanced; above 0 and below
/// `leaseTtlMs`).
///
/// On success `*out_fleet` is a new handle owned by the caller (release it with
/// `depositkit_fleet_free`, after `depositkit_fleet_leave`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when `database_url` cannot be read, the database holds a
///   fleet schema of another version, or `template_json` is not a valid configuration (the
///   message names the option and quotes the value);
/// - `DEPOSITKIT_STATUS_NETWORK` when the database cannot be reached or refuses the connection;
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `member_json` is not such an object (an unknown
///   key, a value of the wrong type or out of range: the message names it);
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `database_url`, `template_json` or `out_fleet` is
///   NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Messages show the database as `host:port/database`: never its password.
///
/// Blocks the calling thread while it connects (at most about 5 s per connection attempt unless
/// the URL's `connect_timeout` says otherwise). Thread-safe.
///
/// # Safety
/// `database_url` and `template_json` must be NULL or NUL-terminated strings; `member_json`
/// must be NULL or a NUL-terminated string; `out_fleet` must be NULL or point to a writable
/// `const depositkit_fleet *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_join(
    database_url: *const c_char,
    template_json: *const c_char,
    member_json: *const c_char,
    out_fleet: *mut *const depositkit_fleet,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let database_url = unsafe { strings::str_arg(database_url, "database_url") }?;
        // SAFETY: the caller's contract above.
        let template_json = unsafe { strings::str_arg(template_json, "template_json") }?;
        // SAFETY: the caller's contract above.
        let member_json = unsafe { strings::opt_str_arg(member_json, "member_json") }?;
        // SAFETY: the caller's contract above.
        let out_fleet = unsafe { boundary::out(out_fleet, "out_fleet") }?;
        let template = options::template(template_json)?;
        let member = options::member(member_json)?;
        let joined = DepositFleet::join(database_url, template, member).map_err(fleet_error)?;
        let handle = depositkit_fleet {
            fleet: joined.fleet().clone(),
            node_id: joined.node_id(),
            member: Mutex::new(Some(joined)),
            feeds: subscribe::Feeds::default(),
        };
        out_fleet.write(Box::into_raw(Box::new(handle)).cast_const());
        Ok(())
    })
}

/// Leaves the fleet gracefully: stops this member's subscriptions (`depositkit_fleet_subscribe`:
/// their `user_data_free` runs, and outside a callback their threads are waited for) and its
/// deposit clients, then hands its owners to the other members at once (they take them at their
/// next tick). A second call does nothing.
///
/// Afterwards every call on the handle fails with `DEPOSITKIT_STATUS_DEPOSIT_SDK` ("left the
/// fleet") except `_leave`, `_node_id`, `_running_owners` (`[]`), `_unsubscribe` (nothing is
/// subscribed) and `_callback_errors`; the handle must still be freed with
/// `depositkit_fleet_free`.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NETWORK` when the database cannot be
/// written (the member has stopped anyway, and its owners pass on when its lease runs out);
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `fleet` is NULL.
///
/// Blocks while the clients stop and the database is written. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_leave(
    fleet: *const depositkit_fleet,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        fleet.feeds.stop();
        let member = fleet.member().take();
        match member {
            Some(member) => member.leave().map_err(fleet_error),
            None => Ok(()),
        }
    })
}

/// Releases a member: stops its subscriptions as `depositkit_fleet_leave` does (waiting for
/// their threads). One that has not left stops its deposit clients without handing its
/// owners over, as a process that exits would: the other members take them once its lease runs
/// out (`leaseTtlMs`). Call `depositkit_fleet_leave` first to hand them over at once.
///
/// NULL is accepted and ignored. May be called on any thread, once, after every call using the
/// handle has returned; it waits while the clients stop. Does not change the last error.
///
/// # Safety
/// `fleet` must be NULL or a handle from `depositkit_fleet_join` that has not been freed yet
/// and that no other thread is using; after this call it must not be used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_free(fleet: *const depositkit_fleet) {
    boundary::value((), || {
        // SAFETY: the caller's contract above. Shared first: a callback still running may use
        // the handle until the subscriptions are stopped.
        if let Some(shared) = unsafe { fleet.as_ref() } {
            shared.feeds.stop();
            // SAFETY: the caller promises `fleet` came from `Box::into_raw` in
            // `depositkit_fleet_join` and is released only once; no callback runs any more.
            let fleet = unsafe { Box::from_raw(fleet.cast_mut()) };
            if let Some(member) = fleet.member().take() {
                member.halt();
            }
        }
    });
}

/// This member's node id (its row in the table `dk_nodes`; a member that lost its lease joins
/// again under a new id, but this stays the id it joined with).
///
/// On success `*out_node_id` is a new string owned by the caller (free it with
/// `depositkit_string_free`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is
/// NULL. Works after leaving too. Does not block. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `out_node_id` must be
/// NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_node_id(
    fleet: *const depositkit_fleet,
    out_node_id: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_node_id, "out_node_id") }?;
        out.write(strings::owned(fleet.node_id.clone())?);
        Ok(())
    })
}

/// The owners whose deposit clients run in this member now, sorted: a JSON array of lower-case
/// addresses, `[]` when it runs none (and after leaving).
///
/// On success `*out_owners_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`). On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is
/// NULL. Does not block. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `out_owners_json` must
/// be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_running_owners(
    fleet: *const depositkit_fleet,
    out_owners_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        write_owners(fleet, out_owners_json, |fleet| {
            Ok(fleet.member().as_ref().map(DepositFleet::running_owners).unwrap_or_default())
        })
    })
}
