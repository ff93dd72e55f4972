//! The watcher: finds deposits in the account's balances.
//!
//! Detection reads the cumulative `received` total of every (chain, token) line
//! (`docs/protocol.md` §3): each increase is new money, whatever sweeps did to the balance
//! meanwhile. So a deposit that arrives while another is being swept is seen, and so is a
//! second deposit of the same token on the same chain (reference defects 1, 2, 15).
//!
//! The first successful poll of a client reports what the account already holds (reference
//! §4.4): a line's current `rawAmount` is taken as one existing deposit, the top
//! `rawAmount` of its `received` range. Later polls report `received − last received`.
//! Stopping and restarting the watcher keeps the baseline, so nothing is reported twice.
//!
//! A backend without a `received` total (Particle's) gets one from the detector
//! ([`Detector::with_received`]): deposits are the increases of `rawAmount` between polls over
//! a baseline of what is held. A fall of the balance lowers the baseline, and so does a
//! delivered sweep or refund ([`Detector::spent`], saved with the sweep's outcome), so that a
//! deposit arriving while another is swept is still seen, one poll later at worst. The baseline
//! and the running total are saved with the other baselines: a restart neither loses nor
//! reports again a deposit.
//!
//! What a sweep's fees leave behind (up to about $0.01 or 0.1%) shows as a rise at the next
//! poll, together with any deposit that arrived before it. So `spent` marks the line
//! unsettled, and the engine splits its next rise ([`Detector::unsettled`], [`attribute`]):
//! the newest receive transfers of the account's history not counted yet are the deposit when
//! they add up to the rise but for a rest worth at most [`DUST_THRESHOLD_USD`]; the rest is the
//! leftover and joins the held baseline, never a deposit (`leftover.rs`). A rise the history
//! does not explain is counted whole, leftover included (then the deposit's refund, finding no
//! transfers that add up to it, goes to the owner). The unsettled lines and the ids of the
//! transfers counted are saved in the snapshot too.
//!
//! Each deposit is judged on its own (reference §4.6): unsupported token or chain → ignored;
//! USD value ≤ 0.10 → dust, ignored; below `0.98 × min_value_usd` or below the token's minimum
//! → `below_threshold` (every time, not once per watcher life); else `detected`.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::chains::Chain;
use crate::services::{AccountBalance, BalanceLine};
use crate::tokens::TokenType;
use crate::units::{U256, format_units, parse_units};

use super::model::{DetectedDeposit, deposit_id};
pub(crate) use leftover::{Attribution, Unsettled, attribute, receive_ids, receives_on};

mod leftover;

/// A deposit worth this many USD or less is dust and ignored (reference `DUST_THRESHOLD_USD`).
pub const DUST_THRESHOLD_USD: f64 = 0.10;

/// `min_value_usd` is applied with this tolerance (reference: 2%).
pub const MIN_VALUE_TOLERANCE: f64 = 0.98;

/// How many deposit ids a detector remembers to avoid reporting one twice.
const REMEMBERED_IDS: usize = 10_000;

/// How many ids of receive transfers already counted a detector remembers (a page of history
/// holds at most 100).
const REMEMBERED_TRANSFERS: usize = 1_000;

/// The smallest deposit of `token` worth sweeping, in whole tokens (reference §4.6).
pub fn token_minimum(token: TokenType) -> &'static str {
    match token {
        TokenType::USDC | TokenType::USDT => "0.2",
        TokenType::ETH => "0.0004",
        TokenType::BNB => "0.0003",
        TokenType::SOL => "0.006",
        TokenType::BTC => "0.000005",
    }
}

/// Whether `raw` smallest units (with `decimals`) reach the token's minimum. Exact.
pub fn meets_token_minimum(token: TokenType, raw: U256, decimals: u32) -> bool {
    match parse_units(token_minimum(token), decimals) {
        Ok(minimum) => raw >= minimum,
        // Fewer decimals than the minimum has digits: any whole unit compares by value.
        Err(_) => raw > U256::ZERO,
    }
}

/// What the watcher's thresholds need.
#[derive(Debug, Clone)]
pub(crate) struct Thresholds {
    pub min_value_usd: f64,
    pub supported_tokens: Vec<TokenType>,
    pub supported_chains: Vec<u64>,
}

/// How one deposit was judged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Finding {
    /// Worth sweeping, with the range of the cumulative `received` total it covers.
    Deposit(DetectedDeposit, (U256, U256)),
    /// Below a threshold, with the reason.
    BelowThreshold(DetectedDeposit, String),
}

/// Judges one deposit covering `range` against the thresholds; `None` for dust.
pub(crate) fn judge(
    deposit: DetectedDeposit,
    range: (U256, U256),
    thresholds: &Thresholds,
) -> Option<Finding> {
    let usd = deposit.amount_usd;
    if usd.is_nan() || usd <= DUST_THRESHOLD_USD {
        return None;
    }
    let minimum = thresholds.min_value_usd;
    if minimum > 0.0 && usd < MIN_VALUE_TOLERANCE * minimum {
        let why = format!(
            "worth ${usd:.2}, below the minimum of ${minimum:.2} (minValueUSD, 2% tolerance)"
        );
        return Some(Finding::BelowThreshold(deposit, why));
    }
    if !meets_token_minimum(deposit.token, deposit.raw_amount, deposit.decimals) {
        let why = format!(
            "{} {} is below the minimum deposit of {} {}",
            deposit.amount,
            deposit.token,
            token_minimum(deposit.token),
            deposit.token
        );
        return Some(Finding::BelowThreshold(deposit, why));
    }
    Some(Finding::Deposit(deposit, range))
}

/// The watcher's memory: the last `received` of every line, and the ids already reported.
#[derive(Debug, Default)]
pub(crate) struct Detector {
    baselines: HashMap<(u64, String), U256>,
    first_done: bool,
    reported: HashSet<String>,
    reported_order: VecDeque<String>,
    /// Lines without a `received` total: what the account is taken to hold.
    held: HashMap<(u64, String), U256>,
    /// Lines without a `received` total of which a sweep or refund was delivered since the
    /// last poll that saw them: their next rise may hold its leftover ([`Unsettled`]).
    unsettled: HashSet<(u64, String)>,
    /// The receive transfers (ids) a rise of a line without a `received` total counted,
    /// oldest first.
    attributed: VecDeque<String>,
    /// Bumped whenever a baseline moves: the snapshot must be saved again.
    version: u64,
}

/// What the watcher must remember across restarts (`store.rs`): the last `received` of every
/// balance line (`[chainId, token, received]`) and whether a poll ever succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DetectorSnapshot {
    pub first_done: bool,
    pub baselines: Vec<(u64, String, String)>,
    /// The held baseline of every line without a `received` total (`[chainId, token, held]`);
    /// its running total is in `baselines`. Absent for devnet's protocol.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<(u64, String, String)>,
    /// The lines (`[chainId, token]`) whose next rise may hold a sweep's or refund's leftover.
    /// Absent in files written before it (read as none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsettled: Vec<(u64, String)>,
    /// The ids of the receive transfers already counted as deposits, oldest first. Absent in
    /// files written before it (read as none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributed: Vec<String>,
}

impl Detector {
    /// A version that changes whenever [`snapshot`](Detector::snapshot) would.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The baselines, to be saved.
    pub fn snapshot(&self) -> DetectorSnapshot {
        let mut baselines: Vec<(u64, String, String)> = self
            .baselines
            .iter()
            .map(|((chain, token), received)| (*chain, token.clone(), received.to_string()))
            .collect();
        baselines.sort();
        let mut held: Vec<(u64, String, String)> = self
            .held
            .iter()
            .map(|((chain, token), held)| (*chain, token.clone(), held.to_string()))
            .collect();
        held.sort();
        let mut unsettled: Vec<(u64, String)> = self.unsettled.iter().cloned().collect();
        unsettled.sort();
        DetectorSnapshot {
            first_done: self.first_done,
            baselines,
            held,
            unsettled,
            attributed: self.attributed.iter().cloned().collect(),
        }
    }

    /// A detector that goes on from `snapshot`, never reporting `known` ids again. A baseline
    /// that does not parse is left out (that line is then read as new: its deposits are
    /// reported again rather than lost).
    pub fn restore(snapshot: &DetectorSnapshot, known: &[String]) -> Detector {
        let mut detector = Detector { first_done: snapshot.first_done, ..Detector::default() };
        for (chain, token, received) in &snapshot.baselines {
            if let Ok(received) = crate::units::parse_raw_amount(received) {
                detector.baselines.insert((*chain, token.clone()), received);
            }
        }
        for (chain, token, held) in &snapshot.held {
            if let Ok(held) = crate::units::parse_raw_amount(held) {
                detector.held.insert((*chain, token.clone()), held);
            }
        }
        detector.unsettled = snapshot.unsettled.iter().cloned().collect();
        detector.attributed = snapshot.attributed.iter().cloned().collect();
        for id in known {
            detector.remember(id.clone());
        }
        detector
    }

    /// The rises in `balances` that may hold a sweep's or refund's leftover: lines without a
    /// `received` total, marked by [`spent`](Detector::spent) since the last poll that saw
    /// them, whose balance rose over the held baseline. The engine reads the account's history
    /// for them and gives [`with_received`](Detector::with_received) what it [`attribute`]s.
    pub fn unsettled(&self, balances: &[AccountBalance]) -> Vec<Unsettled> {
        balances
            .iter()
            .filter(|b| b.received.is_none())
            .filter_map(|balance| {
                let key = (balance.chain_id, balance.token.to_ascii_uppercase());
                let held = self.held.get(&key).copied().unwrap_or(U256::ZERO);
                let rise = balance.raw_amount.saturating_sub(held);
                (self.unsettled.contains(&key) && !rise.is_zero()).then_some(Unsettled {
                    chain_id: balance.chain_id,
                    token: key.1,
                    decimals: balance.decimals,
                    price_usd: balance.price_usd,
                    rise,
                })
            })
            .collect()
    }

    /// The receive transfers already counted as deposits, for [`attribute`].
    pub fn attributed(&self) -> HashSet<String> {
        self.attributed.iter().cloned().collect()
    }

    /// Remembers `ids` (receive transfers) as counted.
    pub fn attribute_transfers(&mut self, ids: &[String]) {
        let known = self.attributed();
        let new: Vec<&String> = ids.iter().filter(|id| !known.contains(*id)).collect();
        if new.is_empty() {
            return;
        }
        // The history lists them newest first; remembered oldest first.
        self.attributed.extend(new.into_iter().rev().cloned());
        while self.attributed.len() > REMEMBERED_TRANSFERS {
            self.attributed.pop_front();
        }
        self.version += 1;
    }

    /// `balances` as lines with a `received` total: the backend's, else one kept here from
    /// the increases of `raw_amount` over the held baseline (see the module's docs). A line
    /// seen for the first time counts what it holds as received. A line the backend no longer
    /// lists holds nothing. A rise with an [`Attribution`] counts only its deposits: the rest,
    /// a sweep's or refund's leftover, joins the held baseline.
    pub fn with_received(
        &mut self,
        balances: Vec<AccountBalance>,
        attributions: &[Attribution],
    ) -> Vec<BalanceLine> {
        let mut seen = HashSet::new();
        let lines: Vec<BalanceLine> = balances
            .into_iter()
            .map(|balance| {
                let received = match balance.received {
                    Some(received) => received,
                    None => {
                        let key = (balance.chain_id, balance.token.to_ascii_uppercase());
                        let total = self.baselines.get(&key).copied().unwrap_or(U256::ZERO);
                        let held = self.held.get(&key).copied().unwrap_or(U256::ZERO);
                        let raw = balance.raw_amount;
                        if held != raw {
                            self.held.insert(key.clone(), raw);
                            self.version += 1;
                        }
                        if self.unsettled.remove(&key) {
                            self.version += 1;
                        }
                        let attributed = attributions
                            .iter()
                            .find(|a| a.chain_id == key.0 && a.token == key.1)
                            .map(|a| a.deposit);
                        seen.insert(key);
                        // What came in since the last poll (of it, the deposits when the rise
                        // was attributed); a fall is money that left.
                        let rise = raw.saturating_sub(held);
                        total.saturating_add(attributed.map_or(rise, |deposit| deposit.min(rise)))
                    }
                };
                BalanceLine {
                    chain_id: balance.chain_id,
                    token: balance.token,
                    decimals: balance.decimals,
                    raw_amount: balance.raw_amount,
                    received,
                    price_usd: balance.price_usd,
                    value_usd: balance.value_usd,
                }
            })
            .collect();
        for (key, held) in &mut self.held {
            if !seen.contains(key) && !held.is_zero() {
                *held = U256::ZERO;
                self.version += 1;
            }
        }
        lines
    }

    /// A delivered sweep or refund took up to `raw` of `token` on `chain_id`: the held baseline
    /// of a line without a `received` total goes down by it (not below 0), so that money which
    /// arrived meanwhile counts as a deposit, and the line's next rise is [`Unsettled`] (it may
    /// hold what the sweep's fees left). `true` when the snapshot changed.
    pub fn spent(&mut self, chain_id: u64, token: TokenType, raw: U256) -> bool {
        let Some(held) = self.held.get_mut(&(chain_id, token.symbol().to_owned())) else {
            return false;
        };
        let lowered = held.saturating_sub(raw);
        let moved = lowered != *held;
        *held = lowered;
        let marked = self.unsettled.insert((chain_id, token.symbol().to_owned()));
        if moved || marked {
            self.version += 1;
        }
        moved || marked
    }

    /// Whether a poll succeeded before.
    #[cfg(test)]
    pub fn has_baseline(&self) -> bool {
        self.first_done
    }

    /// Reads one poll's lines of `account_id` and returns the deposits they show, in line order.
    pub fn observe(
        &mut self,
        account_id: &str,
        lines: &[BalanceLine],
        thresholds: &Thresholds,
        now_ms: u64,
    ) -> Vec<Finding> {
        let first = !self.first_done;
        let mut findings = Vec::new();
        for line in lines {
            let key = (line.chain_id, line.token.to_ascii_uppercase());
            let previous = self.baselines.insert(key, line.received);
            if previous != Some(line.received) {
                self.version += 1;
            }
            let range = match (first, previous) {
                // What the account holds at the first poll: the top of its received range.
                (true, _) => {
                    let held = line.raw_amount.min(line.received);
                    (line.received - held, line.received)
                }
                (false, None) => (U256::ZERO, line.received),
                (false, Some(before)) if line.received > before => (before, line.received),
                (false, Some(_)) => continue,
            };
            let amount = range.1 - range.0;
            if amount.is_zero() {
                continue;
            }
            let Ok(token) = line.token.parse::<TokenType>() else {
                continue; // a token depositkit does not know
            };
            if Chain::from_id(line.chain_id).is_none()
                || !thresholds.supported_chains.contains(&line.chain_id)
                || !thresholds.supported_tokens.contains(&token)
            {
                continue;
            }
            let id = deposit_id(account_id, line.chain_id, token, range.0, range.1);
            if self.reported.contains(&id) {
                continue;
            }
            let Ok(human) = format_units(amount, line.decimals) else {
                continue;
            };
            let amount_usd = human.parse::<f64>().unwrap_or(0.0) * line.price_usd;
            let deposit = DetectedDeposit {
                id: id.clone(),
                token,
                chain_id: line.chain_id,
                amount: human,
                amount_usd,
                raw_amount: amount,
                decimals: line.decimals,
                detected_at: now_ms,
            };
            if let Some(finding) = judge(deposit, range, thresholds) {
                self.remember(id);
                findings.push(finding);
            }
        }
        if !self.first_done {
            self.first_done = true;
            self.version += 1;
        }
        findings
    }

    /// A deposit `id` covering `range` of a line's `received` left its chain (a
    /// reorganisation), and the balance takes it back: the line's baseline goes down by it
    /// unless a poll already saw the fall (a line back at zero is not listed, so a poll may
    /// never see it), and `id` may be reported again when the same range returns. `true` when
    /// the snapshot changed.
    pub fn reverse(
        &mut self,
        chain_id: u64,
        token: TokenType,
        range: (U256, U256),
        id: &str,
    ) -> bool {
        let key = (chain_id, token.symbol().to_owned());
        let mut changed = false;
        if let Some(received) = self.baselines.get_mut(&key)
            && *received >= range.1
        {
            *received -= range.1 - range.0;
            changed = true;
        }
        if self.reported.remove(id) {
            self.reported_order.retain(|known| known != id);
            changed = true;
        }
        if changed {
            self.version += 1;
        }
        changed
    }

    fn remember(&mut self, id: String) {
        if self.reported.insert(id.clone()) {
            self.reported_order.push_back(id);
            while self.reported_order.len() > REMEMBERED_IDS {
                if let Some(old) = self.reported_order.pop_front() {
                    self.reported.remove(&old);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
