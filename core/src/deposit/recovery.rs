//! Recovery of stuck funds (spec §2 `RecoveryResult`; reference §7 with its gaps filled).
//!
//! **Stuck funds** are, per chain and token, what the account holds beyond what the client's
//! live deposits explain: a deposit counts as live while it waits for a manual sweep, is
//! queued, swept, retried, refunded, or has an unknown outcome; a deposit whose sweep failed
//! for good (and whose refund, if any, failed or was skipped) does not, so its money is stuck.
//! So are deposits below the thresholds, of unsupported tokens or chains, and anything the
//! client never detected. The scan runs a poll first, under the watcher's lock, and computes
//! from the same balance read, so a deposit that just arrived is registered as a deposit
//! rather than taken for stuck money.
//!
//! **`recover_funds()`** runs on the serial executor: it scans, then for each stuck asset
//! quotes exactly the stuck amount to the current destination, signs and sends (an ambiguous
//! send is resolved like a sweep's). Results: `success` with `tx_hash`; `failed` with `error`
//! (nothing moved, or — said so in the error — an outcome that could not be learned: check
//! `stuck_funds()` before trying again); `skipped` for dust (≤ $0.10) or when the service
//! answers `BELOW_MINIMUM` (the fees would eat it). After a success the client's failed
//! deposits of that chain and token were part of what moved: they become `credited`.

use std::sync::Arc;

use super::config::Destination;
use super::engine::{CREDITED, Inner, closed_write, lower_baseline};
use super::events::{DepositEvent, DepositPhase};
use super::machine::{DepositState, Input, Next};
use super::model::{
    DetectedDeposit, RecoveryResult, RecoveryStatus, SweepResult, SweepStatus, explorer_tx_url,
    now_ms,
};
use super::send::{Delivery, Progress, SentQuote, delivered, set_progress, take_progress};
use super::store::Change;
use super::watcher::{DUST_THRESHOLD_USD, Detector};
use crate::chains::Chain;
use crate::error::Result;
use crate::services::{BELOW_MINIMUM, BalanceLine, CallError, PreparedTransfer, QuotePurpose};
use crate::tokens::TokenType;
use crate::units::{U256, format_units};

/// The stuck funds in `lines` given the raw amounts the live deposits hold, per (chain,
/// token): one entry per chain and token with something unexplained, in line order.
pub(crate) fn stuck_from(
    lines: &[BalanceLine],
    live: &[(u64, TokenType, U256)],
    now: u64,
) -> Vec<DetectedDeposit> {
    let mut out = Vec::new();
    for line in lines {
        let Ok(token) = line.token.parse::<TokenType>() else { continue };
        if Chain::from_id(line.chain_id).is_none() || line.raw_amount.is_zero() {
            continue;
        }
        let explained = live
            .iter()
            .filter(|(chain, t, _)| *chain == line.chain_id && *t == token)
            .fold(U256::ZERO, |sum, (_, _, raw)| sum.saturating_add(*raw));
        let stuck = line.raw_amount.saturating_sub(explained);
        if stuck.is_zero() {
            continue;
        }
        let Ok(amount) = format_units(stuck, line.decimals) else { continue };
        let amount_usd = amount.parse::<f64>().unwrap_or(0.0) * line.price_usd;
        out.push(DetectedDeposit {
            id: format!("recovery:{}:{}", token.symbol().to_ascii_lowercase(), line.chain_id),
            token,
            chain_id: line.chain_id,
            amount,
            amount_usd,
            raw_amount: stuck,
            decimals: line.decimals,
            detected_at: now,
        });
    }
    out
}

impl Inner {
    /// Polls (registering new deposits) and computes the stuck funds from the same read.
    pub(crate) async fn scan_stuck(self: &Arc<Self>) -> Result<Vec<DetectedDeposit>> {
        let mut detector = self.detector.lock().await;
        let (_, lines) = self.poll_locked(&mut detector).await?;
        let live: Vec<(u64, TokenType, U256)> = self
            .state()
            .deposits
            .values()
            .filter(|r| r.state.live())
            .map(|r| (r.deposit.chain_id, r.deposit.token, r.deposit.raw_amount))
            .collect();
        drop(detector);
        Ok(stuck_from(&lines, &live, now_ms()))
    }

    /// The `recover_funds()` job.
    pub(crate) async fn run_recovery(self: Arc<Self>) -> Result<Vec<RecoveryResult>> {
        let outcome = self.recover_all().await;
        let change = {
            let mut state = self.state();
            state.recovering = state.recovering.saturating_sub(1);
            state.recount()
        };
        self.invalidate_history();
        self.emit_status(change);
        outcome
    }

    async fn recover_all(self: &Arc<Self>) -> Result<Vec<RecoveryResult>> {
        let stuck = self.scan_stuck().await?;
        let destination = self.state().destination.clone();
        let mut results = Vec::with_capacity(stuck.len());
        for item in stuck {
            if self.is_closed() {
                break;
            }
            let result = self.recover_one(&item, &destination).await;
            if result.status != RecoveryStatus::Skipped {
                self.invalidate_history();
            }
            if result.status == RecoveryStatus::Success {
                let mut detector = self.baseline_lock(true).await;
                self.mark_recovered(&item, &result, &destination, detector.as_deref_mut());
            }
            self.hub.emit(DepositEvent::Recovery(result.clone()));
            results.push(result);
        }
        Ok(results)
    }

    async fn recover_one(
        &self,
        item: &DetectedDeposit,
        destination: &Destination,
    ) -> RecoveryResult {
        let mut result = RecoveryResult {
            token: item.token,
            chain_id: item.chain_id,
            amount: item.amount.clone(),
            amount_usd: item.amount_usd,
            status: RecoveryStatus::Skipped,
            error: None,
            tx_hash: None,
            raw_amount: item.raw_amount.to_string(),
            delivered: None,
        };
        if item.amount_usd.is_nan() || item.amount_usd <= DUST_THRESHOLD_USD {
            result.error = Some(format!(
                "Dust: worth ${:.4}, at most ${DUST_THRESHOLD_USD:.2}",
                item.amount_usd
            ));
            return result;
        }
        let progress = Progress::default();
        let limit = self.config.processing_timeout;
        let outcome =
            tokio::time::timeout(limit, self.recovery_attempt(item, destination, &progress)).await;
        match outcome {
            Ok(Ok((sent, answer))) => {
                let (amount, _) = delivered(&sent, &answer);
                result.status = RecoveryStatus::Success;
                result.tx_hash = Some(answer.transaction_id);
                result.delivered = Some(amount);
            }
            Ok(Err((status, error))) => {
                result.status = status;
                result.error = Some(error);
            }
            Err(_) => {
                result.status = RecoveryStatus::Failed;
                result.error = Some(match take_progress(&progress) {
                    Some(sent) => format!(
                        "The outcome of recovery quote {} is unknown: no final answer within {} ms (watchdog); check stuck_funds() before trying again",
                        sent.quote.quote_id,
                        limit.as_millis()
                    ),
                    None => format!(
                        "Recovery attempt ended by the watchdog after {} ms; nothing was sent",
                        limit.as_millis()
                    ),
                });
            }
        }
        result
    }

    async fn recovery_attempt(
        &self,
        item: &DetectedDeposit,
        destination: &Destination,
        progress: &Progress,
    ) -> std::result::Result<(SentQuote, crate::services::SendResult), (RecoveryStatus, String)>
    {
        let PreparedTransfer { quote, backend } = match self
            .quote_for(
                item.chain_id,
                item.token.symbol(),
                item.raw_amount,
                destination,
                QuotePurpose::Sweep,
                None,
            )
            .await
        {
            Ok(transfer) => transfer,
            Err(CallError::Service(e)) if e.code == BELOW_MINIMUM => {
                return Err((
                    RecoveryStatus::Skipped,
                    format!("Below minimum: the fees would take it all ({e})"),
                ));
            }
            Err(e) => return Err((RecoveryStatus::Failed, format!("Quote failed: {e}"))),
        };
        let signature = self
            .services()
            .sign(&quote)
            .await
            .map_err(|e| (RecoveryStatus::Failed, e.message().to_owned()))?;
        let sent = SentQuote {
            quote,
            signature,
            destination: destination.clone(),
            purpose: QuotePurpose::Sweep,
            to_sender: false,
            backend,
        };
        set_progress(progress, &sent);
        match self.services().execute(&sent).await {
            Delivery::Done(answer) => Ok((sent, answer)),
            Delivery::NotExecuted(error) => Err((RecoveryStatus::Failed, error)),
            Delivery::Unknown(why) => Err((
                RecoveryStatus::Failed,
                format!(
                    "The outcome of recovery quote {} is unknown: {why}; check stuck_funds() before trying again",
                    sent.quote.quote_id
                ),
            )),
        }
    }

    /// The failed deposits of a recovered chain and token were delivered with it.
    fn mark_recovered(
        &self,
        item: &DetectedDeposit,
        result: &RecoveryResult,
        destination: &Destination,
        detector: Option<&mut Detector>,
    ) {
        let tx = result.tx_hash.clone().unwrap_or_default();
        let mut change = Change::default();
        lower_baseline(detector, item, &mut change);
        let mut state = self.state();
        let ids: Vec<String> = state
            .deposits
            .values()
            .filter(|r| {
                r.state == DepositState::Failed
                    && r.deposit.chain_id == item.chain_id
                    && r.deposit.token == item.token
            })
            .map(|r| r.deposit.id.clone())
            .collect();
        let explorer = explorer_tx_url(destination.chain_id, &tx).unwrap_or_default();
        for id in ids {
            // Recovery moved a failed deposit's money: the machine ends it credited.
            let recovered = state.deposits.get_mut(&id).map(|r| r.advance(Input::Recovered));
            if !matches!(recovered, Some(Ok(step)) if step.next == Next::Credited) {
                continue;
            }
            let Some(record) = state.deposits.remove(&id) else { continue };
            let sweep = SweepResult {
                deposit_id: id,
                transaction_id: tx.clone(),
                explorer_url: explorer.clone(),
                status: SweepStatus::Success,
                error: None,
                delivered: None,
            };
            state.remember_result(sweep.clone());
            change.sweep_results.push(sweep);
            change.records.push(closed_write(&record, CREDITED));
            let mut event = Inner::lifecycle(DepositPhase::Credited, &record.deposit, destination);
            event.transaction_id = Some(tx.clone());
            event.explorer_url = Some(explorer.clone()).filter(|u| !u.is_empty());
            change.events.push(DepositEvent::Lifecycle(event));
        }
        // Written and reported under the state lock, like every change of the table.
        self.hub.commit(change);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(chain_id: u64, token: &str, decimals: u32, raw: u128, price: f64) -> BalanceLine {
        BalanceLine {
            chain_id,
            token: token.into(),
            decimals,
            raw_amount: U256::from(raw),
            received: U256::from(raw),
            price_usd: price,
            value_usd: 0.0,
        }
    }

    #[test]
    fn stuck_is_what_live_deposits_do_not_explain() {
        let lines = [
            line(146, "USDC", 6, 500_000, 0.9997),
            line(42161, "USDC", 6, 0, 1.0),
            line(1, "ETH", 18, 100_000_000_000_000_000, 2800.0),
            line(8453, "USDC", 6, 7_000_000, 1.0),
            line(8453, "MNT", 18, 5, 1.0),
        ];
        let live = [
            (8453, TokenType::USDC, U256::from(4_000_000u64)),
            (1, TokenType::ETH, U256::from(1u8) << 70),
        ];
        let stuck = stuck_from(&lines, &live, 9);
        let got: Vec<_> = stuck.iter().map(|d| (d.id.as_str(), d.amount.as_str())).collect();
        assert_eq!(got, [("recovery:usdc:146", "0.5"), ("recovery:usdc:8453", "3")]);
        assert!((stuck[0].amount_usd - 0.49985).abs() < 1e-9);
        assert_eq!(stuck[1].raw_amount, U256::from(3_000_000u64));
        assert_eq!(stuck[1].detected_at, 9);
        // Nothing live: everything non-zero of a known token.
        let all = stuck_from(&lines, &[], 0);
        assert_eq!(all.len(), 3);
        assert_eq!(all[1].amount, "0.1");
        assert!((all[1].amount_usd - 280.0).abs() < 1e-9);
    }
}
