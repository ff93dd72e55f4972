//! depositkit fleet mode (preview): many processes share the owners of one deployment through
//! PostgreSQL.
//!
//! - **The PostgreSQL store** ([`PgOwnerStore`]): the deposit state of the store contract
//!   (`depositkit_core::deposit::store_contract`) in PostgreSQL, every write fenced by the
//!   owner's lease.
//! - **Owners** registered durably ([`Fleet::add_owner`], [`Fleet::remove_owner`], per-owner
//!   [`OwnerOptions`]).
//! - **Leases** ([`lease`]): each owner held by one live member at a time, measured in database
//!   time; a newer holder's fencing token refuses every write of an older one.
//! - **[`DepositFleet`]**: a process that joins the fleet and runs a `DepositClient` for each
//!   owner it holds, taking over the owners of dead members within seconds.
//!
//! - **Commands through the database** ([`Fleet::request`]): a sweep, refund, recovery or
//!   destination change asked from any process, run by the owner's holder; the requester
//!   waits with a timeout.
//! - **One event log across owners** ([`EventReader`], [`log`]): every owner's events in
//!   commit order from a cursor that survives restarts, never skipping a late commit, woken by
//!   a LISTEN/NOTIFY doorbell; or handed to a callback on a thread of its own
//!   ([`Fleet::subscribe`], [`EventSubscription`], stopped when dropped).
//!
//! - **Async callers** ([`AsyncFleet`], [`async_api`]): owners, commands and the log as
//!   futures, each a task of the fleet's runtime.
//!
//! - **Metrics** ([`metrics_text`]): owners held, leases renewed and lost, members reaped,
//!   owners claimed and released, commands run, events written.
//!
//! See `docs/fleet.md`.

pub mod async_api;
mod commands;
mod db;
mod error;
mod fleet;
pub mod lease;
pub mod log;
pub mod metrics;
mod owners;
mod schema;
mod store;
pub mod subscription;

pub use async_api::{AsyncFleet, Spawned};
pub use commands::{CommandOutcome, FleetCommand};
pub use error::{FleetError, Result};
pub use fleet::{DepositFleet, Fleet, FleetOptions};
pub use lease::{Balance, HeldOwner, LeaseSettings, Member};
pub use log::{EventCursor, EventReader, FleetEvent};
pub use metrics::metrics_text;
pub use owners::{OwnerOptions, owner_address};
pub use store::PgOwnerStore;
pub use subscription::EventSubscription;
