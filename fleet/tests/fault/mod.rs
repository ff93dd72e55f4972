//! The multi-process fault harness (`fleet/tests/fault_harness.rs`, `docs/fleet.md`): its own
//! PostgreSQL, devnet, member processes, faults, load and the checks after a run.

pub mod audit;
pub mod checks;
pub mod commands;
pub mod faults;
pub mod postgres;
pub mod processes;
pub mod rng;
pub mod workload;
