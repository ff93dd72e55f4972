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
//! Each deposit is judged on its own (reference §4.6): unsupported token or chain → ignored;
//! USD value ≤ 0.10 → dust, ignored; below `0.98 × min_value_usd` or below the token's minimum
//! → `below_threshold` (every time, not once per watcher life); else `detected`.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::chains::Chain;
use crate::services::BalanceLine;
use crate::tokens::TokenType;
use crate::units::{U256, format_units, parse_units};

use super::model::{DetectedDeposit, deposit_id};

/// A deposit worth this many USD or less is dust and ignored (reference `DUST_THRESHOLD_USD`).
pub const DUST_THRESHOLD_USD: f64 = 0.10;

/// `min_value_usd` is applied with this tolerance (reference: 2%).
pub const MIN_VALUE_TOLERANCE: f64 = 0.98;

/// How many deposit ids a detector remembers to avoid reporting one twice.
const REMEMBERED_IDS: usize = 10_000;

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
        DetectorSnapshot { first_done: self.first_done, baselines }
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
        for id in known {
            detector.remember(id.clone());
        }
        detector
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
mod tests {
    use super::*;
    use crate::tokens::DEFAULT_SUPPORTED_TOKENS;

    fn thresholds() -> Thresholds {
        Thresholds {
            min_value_usd: 0.5,
            supported_tokens: DEFAULT_SUPPORTED_TOKENS.to_vec(),
            supported_chains: Chain::ALL.iter().map(|c| c.id()).collect(),
        }
    }

    fn line(
        chain_id: u64,
        token: &str,
        decimals: u32,
        raw: u128,
        received: u128,
        price: f64,
    ) -> BalanceLine {
        BalanceLine {
            chain_id,
            token: token.into(),
            decimals,
            raw_amount: U256::from(raw),
            received: U256::from(received),
            price_usd: price,
            value_usd: 0.0,
        }
    }

    fn deposits(findings: &[Finding]) -> Vec<(String, String)> {
        findings
            .iter()
            .map(|f| match f {
                Finding::Deposit(d, _) => ("detected".into(), d.amount.clone()),
                Finding::BelowThreshold(d, _) => ("below".into(), d.amount.clone()),
            })
            .collect()
    }

    #[test]
    fn first_poll_reports_what_is_held_then_received_deltas() {
        let mut d = Detector::default();
        let t = thresholds();
        // 12.5 USDC held of 42.5 ever received: one existing deposit of 12.5.
        let f = d.observe("acc", &[line(8453, "USDC", 6, 12_500_000, 42_500_000, 1.0)], &t, 1);
        assert_eq!(deposits(&f), [("detected".to_string(), "12.5".to_string())]);
        assert!(d.has_baseline());
        // Nothing new.
        assert!(
            d.observe("acc", &[line(8453, "USDC", 6, 12_500_000, 42_500_000, 1.0)], &t, 2)
                .is_empty()
        );
        // Swept to zero, then 3 USDC more arrived: only the 3 is new.
        let f = d.observe("acc", &[line(8453, "USDC", 6, 3_000_000, 45_500_000, 1.0)], &t, 3);
        assert_eq!(deposits(&f), [("detected".to_string(), "3".to_string())]);
        // A second deposit of the same token and chain, while the first is still held.
        let f = d.observe("acc", &[line(8453, "USDC", 6, 5_000_000, 47_500_000, 1.0)], &t, 4);
        assert_eq!(deposits(&f), [("detected".to_string(), "2".to_string())]);
    }

    #[test]
    fn ids_are_stable_across_detectors_for_the_same_deposit() {
        let t = thresholds();
        let mut a = Detector::default();
        a.observe("acc", &[line(1, "USDC", 6, 0, 0, 1.0)], &t, 1);
        let fa = a.observe("acc", &[line(1, "USDC", 6, 5_000_000, 5_000_000, 1.0)], &t, 2);
        // A restarted client sees the unswept deposit on its first poll: same range, same id.
        let mut b = Detector::default();
        let fb = b.observe("acc", &[line(1, "USDC", 6, 5_000_000, 5_000_000, 1.0)], &t, 99);
        let id = |f: &Finding| match f {
            Finding::Deposit(d, _) | Finding::BelowThreshold(d, _) => d.id.clone(),
        };
        assert_eq!(id(&fa[0]), id(&fb[0]));
    }

    #[test]
    fn thresholds_dust_min_value_and_token_minimum() {
        let t = thresholds();
        let mut d = Detector::default();
        d.observe("acc", &[], &t, 0);
        // $0.05: dust, silent.
        assert!(d.observe("acc", &[line(8453, "USDC", 6, 50_000, 50_000, 1.0)], &t, 1).is_empty());
        // $0.30 USDC: below minValueUSD.
        let f = d.observe("acc", &[line(8453, "USDC", 6, 350_000, 350_000, 1.0)], &t, 2);
        assert_eq!(deposits(&f), [("below".to_string(), "0.3".to_string())]);
        // $0.49 passes the 2% tolerance of $0.50.
        let f = d.observe("acc", &[line(8453, "USDC", 6, 840_000, 840_000, 1.0)], &t, 3);
        assert_eq!(deposits(&f), [("detected".to_string(), "0.49".to_string())]);
        // 0.0003 ETH at $2500 = $0.75: above minValueUSD but below the 0.0004 ETH minimum.
        let f = d.observe(
            "acc",
            &[line(1, "ETH", 18, 300_000_000_000_000, 300_000_000_000_000, 2500.0)],
            &t,
            4,
        );
        match &f[0] {
            Finding::BelowThreshold(_, why) => assert!(why.contains("0.0004 ETH"), "{why}"),
            other => panic!("{other:?}"),
        }
        // 0.0001 ETH = $0.25: below threshold (the reference's own example, at $2000).
        let f = d.observe(
            "acc",
            &[line(1, "ETH", 18, 400_000_000_000_000, 400_000_000_000_000, 2500.0)],
            &t,
            5,
        );
        assert_eq!(deposits(&f), [("below".to_string(), "0.0001".to_string())]);
    }

    #[test]
    fn bnb_chain_usdc_has_18_decimals() {
        let t = thresholds();
        let mut d = Detector::default();
        let one = 1_000_000_000_000_000_000u128;
        let f = d.observe("acc", &[line(56, "USDC", 18, 2 * one, 2 * one, 1.0)], &t, 1);
        assert_eq!(deposits(&f), [("detected".to_string(), "2".to_string())]);
        assert!(meets_token_minimum(TokenType::USDC, U256::from(one / 5), 18));
        assert!(!meets_token_minimum(TokenType::USDC, U256::from(one / 5 - 1), 18));
        assert!(meets_token_minimum(TokenType::BTC, U256::from(500u32), 8));
        assert!(!meets_token_minimum(TokenType::BTC, U256::from(499u32), 8));
    }

    #[test]
    fn unsupported_and_unknown_lines_are_skipped_but_tracked() {
        let mut t = thresholds();
        t.supported_tokens = vec![TokenType::USDC];
        t.supported_chains = vec![8453];
        let mut d = Detector::default();
        let lines = [
            line(1, "USDC", 6, 5_000_000, 5_000_000, 1.0),
            line(8453, "USDT", 6, 5_000_000, 5_000_000, 1.0),
            line(8453, "MNT", 18, 5, 5, 1.0),
            line(8453, "usdc", 6, 5_000_000, 5_000_000, 1.0),
        ];
        let f = d.observe("acc", &lines, &t, 1);
        assert_eq!(deposits(&f), [("detected".to_string(), "5".to_string())]);
    }
}
