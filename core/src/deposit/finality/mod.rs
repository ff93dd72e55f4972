//! Finality: when a deposit a chain shows is there for good (`docs/finality.md`).
//!
//! - [`policy`]: every chain's rule (confirmations, or its `safe` / `finalized` head), the
//!   `finality` option that overrides it, the instant rule for small amounts and the balance
//!   fallback.
//! - [`tracker`]: what the client knows of a deposit's transfer on its chain ([`ChainLink`],
//!   kept with its record), the chain's heads and which chains' watchers are down
//!   ([`ChainView`]), and the pure decisions over them: where a confirming deposit stands
//!   ([`judge`]) and how a balance rise and a chain transfer are found to be one deposit
//!   ([`claim_rise`], [`link_transfer`]).
//!
//! Pure: the engine feeds it the chain watcher's signals and the balance polls, and applies
//! what it decides through the deposit machine.

pub mod policy;
pub mod tracker;

pub use policy::{
    ChainFinality, DEFAULT_FINALITY, FinalityConfig, FinalityPolicy, FinalityRule, Heads, Progress,
    default_finality,
};
pub use tracker::{ChainLink, ChainView, Verdict, claim_rise, judge, link_transfer};
