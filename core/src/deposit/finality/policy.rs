//! The finality policy: when a transfer a chain watcher reported is final enough to sweep.
//!
//! Each chain has a documented default rule ([`DEFAULT_FINALITY`], `docs/finality.md`, checked
//! against each other by a test): a number of confirmations, or the chain's own `safe` /
//! `finalized` head (EVM block tags; on Solana the `confirmed` / `finalized` commitments). The
//! `finality` option overrides it per chain ([`FinalityConfig`]) and may let small deposits
//! through at once (`instantBelowUsd`). Pure: data and decisions, no clock, no I/O.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use crate::chains::{AddressType, Chain};

/// When a transfer counts as final on its chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FinalityRule {
    /// This many blocks (slots) with the transfer's own counted: 1 is "included".
    Confirmations(u64),
    /// Its block is at or below the chain's `safe` head (EVM), its slot at or below the
    /// `confirmed` commitment (Solana).
    Safe,
    /// Its block or slot is at or below the chain's `finalized` head.
    Finalized,
}

impl fmt::Display for FinalityRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FinalityRule::Confirmations(1) => f.write_str("1 confirmation"),
            FinalityRule::Confirmations(n) => write!(f, "{n} confirmations"),
            FinalityRule::Safe => f.write_str("safe"),
            FinalityRule::Finalized => f.write_str("finalized"),
        }
    }
}

/// The most confirmations a rule may ask for (a week of Ethereum blocks: larger is a mistake).
pub const MAX_CONFIRMATIONS: u64 = 50_000;

impl Serialize for FinalityRule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            FinalityRule::Confirmations(n) => {
                let mut map = BTreeMap::new();
                map.insert("confirmations", *n);
                map.serialize(serializer)
            }
            FinalityRule::Safe => serializer.serialize_str("safe"),
            FinalityRule::Finalized => serializer.serialize_str("finalized"),
        }
    }
}

/// `{"confirmations": n}`, `"safe"` (also spelled `"confirmed"`, Solana's name) or
/// `"finalized"`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RuleText {
    Tag(String),
    Count { confirmations: u64 },
}

impl<'de> Deserialize<'de> for FinalityRule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let expected = "\"safe\", \"confirmed\", \"finalized\" or {\"confirmations\": n}";
        match RuleText::deserialize(deserializer)
            .map_err(|_| de::Error::custom(format!("a chain's rule must be {expected}")))?
        {
            RuleText::Tag(tag) => match tag.as_str() {
                "safe" | "confirmed" => Ok(FinalityRule::Safe),
                "finalized" => Ok(FinalityRule::Finalized),
                other => Err(de::Error::custom(format!(
                    "a chain's rule must be {expected}, got {}",
                    crate::describe::quote(other)
                ))),
            },
            RuleText::Count { confirmations } => Ok(FinalityRule::Confirmations(confirmations)),
        }
    }
}

/// One chain's default: its rule and about how long the chain takes to meet it (milliseconds):
/// how long a deposit the balance shows but no chain watcher reported waits before it is taken
/// as final (see [`FinalityPolicy::fallback_ms`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainFinality {
    /// The chain.
    pub chain: Chain,
    /// Its default rule.
    pub rule: FinalityRule,
    /// About how long the rule takes to be met, milliseconds.
    pub typical_ms: u64,
}

const fn entry(chain: Chain, rule: FinalityRule, typical_ms: u64) -> ChainFinality {
    ChainFinality { chain, rule, typical_ms }
}

/// The default rule of every chain (`docs/finality.md` lists the same, with the reasons).
pub const DEFAULT_FINALITY: [ChainFinality; 17] = {
    use FinalityRule::{Confirmations, Finalized, Safe};
    [
        entry(Chain::ETHEREUM, Finalized, 15 * 60_000),
        entry(Chain::OPTIMISM, Safe, 5 * 60_000),
        entry(Chain::BNB, Confirmations(15), 60_000),
        entry(Chain::POLYGON, Finalized, 60_000),
        entry(Chain::MONAD, Confirmations(3), 10_000),
        entry(Chain::SONIC, Confirmations(1), 5_000),
        entry(Chain::XLAYER, Safe, 5 * 60_000),
        entry(Chain::HYPERVM, Confirmations(1), 5_000),
        entry(Chain::MERLIN, Confirmations(20), 2 * 60_000),
        entry(Chain::MANTLE, Safe, 5 * 60_000),
        entry(Chain::BASE, Safe, 5 * 60_000),
        entry(Chain::ARBITRUM, Safe, 5 * 60_000),
        entry(Chain::AVALANCHE, Confirmations(1), 5_000),
        entry(Chain::LINEA, Safe, 5 * 60_000),
        entry(Chain::PLASMA, Confirmations(1), 5_000),
        entry(Chain::BERACHAIN, Confirmations(1), 5_000),
        entry(Chain::SOLANA, Finalized, 30_000),
    ]
};

/// The default of `chain_id`; `None` for a chain depositkit does not know.
pub fn default_finality(chain_id: u64) -> Option<ChainFinality> {
    DEFAULT_FINALITY.iter().copied().find(|d| d.chain.id() == chain_id)
}

/// The `finality` option (`docs/finality.md`), every key optional.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct FinalityConfig {
    /// Per chain id, a rule that replaces the chain's default.
    pub chains: BTreeMap<u64, FinalityRule>,
    /// Deposits worth less than this many USD are swept as soon as a chain shows them (the
    /// host accepts the risk of a reorg on them). Default 0: never.
    pub instant_below_usd: f64,
    /// How long a deposit the balance shows, but no chain watcher reported, waits before it is
    /// taken as final (milliseconds); unset, the chain's typical time to meet its rule.
    pub balance_fallback_ms: Option<u64>,
}

/// Why a `finality` option is refused (the option's check turns it into a configuration error).
pub fn finality_problem(config: &FinalityConfig) -> Option<String> {
    for (chain_id, rule) in &config.chains {
        let Some(chain) = Chain::from_id(*chain_id) else {
            return Some(format!("finality.chains has an unknown chain ID: {chain_id}"));
        };
        if let FinalityRule::Confirmations(n) = rule
            && (*n == 0 || *n > MAX_CONFIRMATIONS)
        {
            return Some(format!(
                "finality.chains of {} ({chain_id}) must ask for 1 to {MAX_CONFIRMATIONS} confirmations, got {n}",
                chain.name()
            ));
        }
    }
    let usd = config.instant_below_usd;
    if !usd.is_finite() || usd < 0.0 {
        return Some(format!(
            "finality.instantBelowUsd must be a finite number of at least 0, got {usd}"
        ));
    }
    None
}

/// How far a transfer is from its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Blocks (slots) from its own to the newest, its own counted; 0 when the head is not
    /// known yet.
    pub confirmations: u64,
    /// The confirmations the rule asks for; `None` for a rule of the chain's own head (`safe`,
    /// `finalized`).
    pub required: Option<u64>,
    /// Whether the rule is met.
    pub met: bool,
}

/// The heads of one chain, as its watcher last reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Heads {
    /// The newest block or slot.
    pub latest: u64,
    /// The newest `safe` block (`confirmed` slot), when the chain has one.
    pub safe: Option<u64>,
    /// The newest `finalized` block or slot, when the chain has one.
    pub finalized: Option<u64>,
}

/// The policy a client runs with: every chain's rule, the instant rule and the fallback.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FinalityPolicy {
    config: FinalityConfig,
}

impl FinalityPolicy {
    /// The policy of a (checked) `finality` option.
    pub fn new(config: FinalityConfig) -> FinalityPolicy {
        FinalityPolicy { config }
    }

    /// The rule of `chain_id`: the option's, else the chain's default, else (an unknown chain)
    /// its `finalized` head.
    pub fn rule(&self, chain_id: u64) -> FinalityRule {
        self.config
            .chains
            .get(&chain_id)
            .copied()
            .or_else(|| default_finality(chain_id).map(|d| d.rule))
            .unwrap_or(FinalityRule::Finalized)
    }

    /// Whether a deposit worth `amount_usd` is swept as soon as a chain shows it.
    pub fn instant(&self, amount_usd: f64) -> bool {
        amount_usd < self.config.instant_below_usd
    }

    /// How long a deposit on `chain_id` that the balance shows but no chain watcher reported
    /// waits before it is taken as final: `balanceFallbackMs`, else the chain's typical time.
    pub fn fallback_ms(&self, chain_id: u64) -> u64 {
        self.config
            .balance_fallback_ms
            .or_else(|| default_finality(chain_id).map(|d| d.typical_ms))
            .unwrap_or(15 * 60_000)
    }

    /// Where a transfer included at `height` stands on `chain_id` under `heads`.
    pub fn progress(&self, chain_id: u64, height: u64, heads: &Heads) -> Progress {
        let confirmations = if heads.latest >= height { heads.latest - height + 1 } else { 0 };
        let at_or_below = |head: Option<u64>| head.is_some_and(|head| head >= height);
        match self.rule(chain_id) {
            FinalityRule::Confirmations(n) => {
                Progress { confirmations, required: Some(n), met: confirmations >= n }
            }
            FinalityRule::Safe => {
                // A chain without a safe head (or an endpoint that does not give it) falls back
                // to its finalized one.
                let met = at_or_below(heads.safe) || at_or_below(heads.finalized);
                Progress { confirmations, required: None, met }
            }
            FinalityRule::Finalized => {
                Progress { confirmations, required: None, met: at_or_below(heads.finalized) }
            }
        }
    }
}

/// How the docs spell `rule` on `chain_id`: Solana's `safe` is its `confirmed` commitment.
pub fn rule_name(chain_id: u64, rule: FinalityRule) -> String {
    let solana = Chain::from_id(chain_id).is_some_and(|c| c.address_type() == AddressType::Solana);
    match (rule, solana) {
        (FinalityRule::Safe, true) => "confirmed".to_owned(),
        (rule, _) => rule.to_string(),
    }
}

#[cfg(test)]
mod tests;
