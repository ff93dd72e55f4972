//! The fleet's metrics, in Prometheus text after the process's own
//! ([`depositkit_core::metrics_text`]): [`metrics_text`].
//!
//! | metric | type | what |
//! |---|---|---|
//! | `depositkit_fleet_owners_held` | gauge | owners the members of this process held at their last tick |
//! | `depositkit_fleet_lease_renewals_total` | counter | leases renewed |
//! | `depositkit_fleet_leases_lost_total` | counter | renewals that found the lease passed or the member reaped |
//! | `depositkit_fleet_members_reaped_total` | counter | dead members this process reaped (lease passed, or lease session gone) |
//! | `depositkit_fleet_owners_claimed_total` | counter | owners claimed (taken over, or free) |
//! | `depositkit_fleet_owners_released_total` | counter | owners given back to balance the fleet |
//! | `depositkit_fleet_commands_total{outcome}` | counter | commands run for owners held here (`done`, `failed`) |
//! | `depositkit_fleet_events_written_total` | counter | events written to the fleet's log by this process |
//!
//! Counters are plain atomics: nothing here is on a path that needs more.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

static RENEWALS: AtomicU64 = AtomicU64::new(0);
static LEASES_LOST: AtomicU64 = AtomicU64::new(0);
static REAPED: AtomicU64 = AtomicU64::new(0);
static CLAIMED: AtomicU64 = AtomicU64::new(0);
static RELEASED: AtomicU64 = AtomicU64::new(0);
static COMMANDS_DONE: AtomicU64 = AtomicU64::new(0);
static COMMANDS_FAILED: AtomicU64 = AtomicU64::new(0);
static EVENTS_WRITTEN: AtomicU64 = AtomicU64::new(0);
/// Owners held, by node id of this process's members (a process may run several).
static HELD: LazyLock<Mutex<HashMap<String, u64>>> = LazyLock::new(Mutex::default);

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

pub(crate) fn lease_renewed() {
    add(&RENEWALS, 1);
}

pub(crate) fn lease_lost() {
    add(&LEASES_LOST, 1);
}

pub(crate) fn members_reaped(n: u64) {
    add(&REAPED, n);
}

pub(crate) fn owners_claimed(n: usize) {
    add(&CLAIMED, n as u64);
}

pub(crate) fn owner_released() {
    add(&RELEASED, 1);
}

/// A command for an owner held here ended (`ok`: done, else failed).
pub(crate) fn command_finished(ok: bool) {
    add(if ok { &COMMANDS_DONE } else { &COMMANDS_FAILED }, 1);
}

/// `n` events were written to the fleet's log.
pub(crate) fn events_written(n: usize) {
    add(&EVENTS_WRITTEN, n as u64);
}

/// Member `node` holds `n` owners now; `None`: it left (or rejoined under another id).
pub(crate) fn owners_held(node: &str, n: Option<usize>) {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    match n {
        Some(n) => held.insert(node.to_owned(), n as u64),
        None => held.remove(node),
    };
}

/// The process's metrics (`depositkit_core::metrics_text`) followed by the fleet's, in the
/// Prometheus text exposition format (version 0.0.4).
pub fn metrics_text() -> String {
    let mut text = depositkit_core::metrics_text();
    let held: u64 = HELD.lock().unwrap_or_else(|e| e.into_inner()).values().sum();
    let mut family = |name: &str, kind: &str, help: &str, samples: &[(&str, u64)]| {
        let _ = writeln!(text, "# HELP depositkit_fleet_{name} {help}");
        let _ = writeln!(text, "# TYPE depositkit_fleet_{name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(text, "depositkit_fleet_{name}{labels} {value}");
        }
    };
    let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    family(
        "owners_held",
        "gauge",
        "Owners the members of this process held at their last tick",
        &[("", held)],
    );
    family("lease_renewals_total", "counter", "Leases renewed", &[("", read(&RENEWALS))]);
    family(
        "leases_lost_total",
        "counter",
        "Renewals that found the lease passed or the member reaped",
        &[("", read(&LEASES_LOST))],
    );
    family(
        "members_reaped_total",
        "counter",
        "Dead members reaped by this process (lease passed, or lease session gone)",
        &[("", read(&REAPED))],
    );
    family(
        "owners_claimed_total",
        "counter",
        "Owners claimed (taken over from a dead member, or free)",
        &[("", read(&CLAIMED))],
    );
    family(
        "owners_released_total",
        "counter",
        "Owners given back to balance the fleet",
        &[("", read(&RELEASED))],
    );
    family(
        "commands_total",
        "counter",
        "Commands run for owners held here, by outcome",
        &[
            ("{outcome=\"done\"}", read(&COMMANDS_DONE)),
            ("{outcome=\"failed\"}", read(&COMMANDS_FAILED)),
        ],
    );
    family(
        "events_written_total",
        "counter",
        "Events written to the fleet's log by this process",
        &[("", read(&EVENTS_WRITTEN))],
    );
    text
}
