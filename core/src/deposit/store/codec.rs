//! The records' JSON in the store: how a `DepositRecord` (with its state, its sent or unknown
//! quote and its refund progress) is written and read back. A record this version cannot read
//! is refused with the reason (the store reports the file as unreadable).

use serde::{Deserialize, Serialize};

use crate::deposit::finality::ChainLink;
use crate::deposit::machine::DepositState;
use crate::deposit::model::Destination;
use crate::deposit::model::{DetectedDeposit, RefundResult};
use crate::deposit::records::{DepositRecord, RefundProgress, SentQuote};
use crate::describe::quote;
use crate::services::{Quote, QuoteFees, QuotePurpose};
use crate::tokens::TokenType;
use crate::units::{U256, parse_raw_amount};

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredDeposit {
    id: String,
    token: TokenType,
    chain_id: u64,
    amount: String,
    #[serde(rename = "amountUSD")]
    amount_usd: f64,
    raw_amount: String,
    decimals: u32,
    detected_at: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredQuote {
    quote_id: String,
    root_hash: String,
    expires_at: u64,
    source_decimals: u32,
    source_value_usd: f64,
    destination_decimals: u32,
    destination_raw_amount: String,
    fees: QuoteFees,
    signature: String,
    destination: Destination,
    purpose: QuotePurpose,
    to_sender: bool,
    /// The backend's data of the transfer; absent when null (devnet's), so that records
    /// written before it existed read the same and devnet's records are written unchanged.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    backend: serde_json::Value,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredRefund {
    attempts: u32,
    auto: bool,
    last: RefundResult,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredRecord {
    deposit: StoredDeposit,
    range: [String; 2],
    seq: u64,
    state: String,
    attempts: u32,
    unresolved: Option<StoredQuote>,
    in_flight: Option<StoredQuote>,
    reconcile_rounds: u32,
    sweep_failed: bool,
    refund: Option<StoredRefund>,
    /// Absent on chains without a chain watcher (and in records written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chain: Option<StoredChainLink>,
}

/// A deposit's transfer on a watched chain (`ChainLink`).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredChainLink {
    tx: Option<String>,
    index: u32,
    height: Option<u64>,
    block_hash: Option<String>,
    removed: bool,
    in_balance: bool,
    unexplained: String,
    reported: u64,
}

fn stored_link(link: &ChainLink) -> StoredChainLink {
    StoredChainLink {
        tx: link.tx.clone(),
        index: link.index,
        height: link.height,
        block_hash: link.block_hash.clone(),
        removed: link.removed,
        in_balance: link.in_balance,
        unexplained: link.unexplained.to_string(),
        reported: link.reported,
    }
}

fn chain_link(stored: StoredChainLink) -> std::result::Result<ChainLink, String> {
    Ok(ChainLink {
        tx: stored.tx,
        index: stored.index,
        height: stored.height,
        block_hash: stored.block_hash,
        removed: stored.removed,
        in_balance: stored.in_balance,
        unexplained: amount(&stored.unexplained)?,
        reported: stored.reported,
    })
}

fn stored_quote(sent: &SentQuote) -> StoredQuote {
    let q = &sent.quote;
    StoredQuote {
        quote_id: q.quote_id.clone(),
        root_hash: q.root_hash.clone(),
        expires_at: q.expires_at,
        source_decimals: q.source_decimals,
        source_value_usd: q.source_value_usd,
        destination_decimals: q.destination_decimals,
        destination_raw_amount: q.destination_raw_amount.to_string(),
        fees: q.fees,
        signature: sent.signature.clone(),
        destination: sent.destination.clone(),
        purpose: sent.purpose,
        to_sender: sent.to_sender,
        backend: sent.backend.clone(),
    }
}

fn amount(text: &str) -> std::result::Result<U256, String> {
    parse_raw_amount(text).map_err(|e| e.message().to_owned())
}

fn sent_quote(stored: StoredQuote) -> std::result::Result<SentQuote, String> {
    Ok(SentQuote {
        quote: Quote {
            quote_id: stored.quote_id,
            root_hash: stored.root_hash,
            expires_at: stored.expires_at,
            source_decimals: stored.source_decimals,
            source_value_usd: stored.source_value_usd,
            destination_decimals: stored.destination_decimals,
            destination_raw_amount: amount(&stored.destination_raw_amount)?,
            fees: stored.fees,
        },
        signature: stored.signature,
        destination: stored.destination,
        purpose: stored.purpose,
        to_sender: stored.to_sender,
        backend: stored.backend,
    })
}

/// A record as stored.
pub(crate) fn record_json(record: &DepositRecord) -> String {
    let d = &record.deposit;
    let stored = StoredRecord {
        deposit: StoredDeposit {
            id: d.id.clone(),
            token: d.token,
            chain_id: d.chain_id,
            amount: d.amount.clone(),
            amount_usd: d.amount_usd,
            raw_amount: d.raw_amount.to_string(),
            decimals: d.decimals,
            detected_at: d.detected_at,
        },
        range: [record.range.0.to_string(), record.range.1.to_string()],
        seq: record.seq,
        state: record.state.as_str().to_owned(),
        attempts: record.attempts,
        unresolved: record.unresolved.as_ref().map(stored_quote),
        in_flight: record.in_flight.as_ref().map(stored_quote),
        reconcile_rounds: record.reconcile_rounds,
        sweep_failed: record.sweep_failed,
        refund: record.refund.as_ref().map(|p| StoredRefund {
            attempts: p.attempts,
            auto: p.auto,
            last: p.last.clone(),
        }),
        chain: record.chain.as_ref().map(stored_link),
    };
    serde_json::to_string(&stored).unwrap_or_default()
}

/// A stored record, as the client left it (see `DepositClient` for how it resumes).
pub(crate) fn record_from_json(json: &str) -> std::result::Result<DepositRecord, String> {
    let stored: StoredRecord = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let d = stored.deposit;
    let state = DepositState::parse(&stored.state)
        .ok_or_else(|| format!("unknown deposit state {}", quote(&stored.state)))?;
    Ok(DepositRecord {
        deposit: DetectedDeposit {
            id: d.id,
            token: d.token,
            chain_id: d.chain_id,
            amount: d.amount,
            amount_usd: d.amount_usd,
            raw_amount: amount(&d.raw_amount)?,
            decimals: d.decimals,
            detected_at: d.detected_at,
        },
        range: (amount(&stored.range[0])?, amount(&stored.range[1])?),
        seq: stored.seq,
        state,
        attempts: stored.attempts,
        unresolved: stored.unresolved.map(sent_quote).transpose()?,
        in_flight: stored.in_flight.map(sent_quote).transpose()?,
        reconcile_rounds: stored.reconcile_rounds,
        sweep_failed: stored.sweep_failed,
        refund: stored.refund.map(|r| RefundProgress {
            attempts: r.attempts,
            auto: r.auto,
            last: r.last,
        }),
        chain: stored.chain.map(chain_link).transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deposit::model::{RefundReason, RefundStatus};

    fn deposit() -> DetectedDeposit {
        DetectedDeposit {
            id: "dep_0123456789abcdef0123456789abcdef".into(),
            token: TokenType::USDC,
            chain_id: 8453,
            amount: "25".into(),
            amount_usd: 25.0,
            raw_amount: U256::from(25_000_000u64),
            decimals: 6,
            detected_at: 1_700_000_000_000,
        }
    }

    fn sent(purpose: QuotePurpose) -> SentQuote {
        SentQuote {
            quote: Quote {
                quote_id: format!("q_{purpose:?}"),
                root_hash: format!("0x{}", "ab".repeat(32)),
                expires_at: 1_700_000_060_000,
                source_decimals: 6,
                source_value_usd: 25.0,
                destination_decimals: 6,
                destination_raw_amount: U256::from(24_970_000u64),
                fees: QuoteFees { gas_usd: 0.03, lp_usd: 0.0, service_usd: 0.0, total_usd: 0.03 },
            },
            signature: format!("0x{}", "cd".repeat(65)),
            destination: Destination {
                chain_id: 42161,
                address: "0x52908400098527886e0f7030069857d2e4169ee7".into(),
                token: TokenType::USDC,
            },
            purpose,
            to_sender: purpose == QuotePurpose::Refund,
            // A refund carries backend data (as Particle's do), a sweep none (as devnet's).
            backend: match purpose {
                QuotePurpose::Refund => serde_json::json!({
                    "userOps": [{"chainId": 8453, "userOpHash": format!("0x{}", "ef".repeat(32))}],
                    "validUntil": 1_700_000_060u64,
                }),
                QuotePurpose::Sweep => serde_json::Value::Null,
            },
        }
    }

    /// Every state, with and without an unresolved or in-flight quote of either purpose and a
    /// refund in progress, is written and read back the same (written again, byte for byte).
    #[test]
    fn every_state_and_record_round_trips() {
        let quotes = [None, Some(QuotePurpose::Sweep), Some(QuotePurpose::Refund)];
        let mut cases = 0;
        for state in DepositState::ALL {
            for unresolved in quotes {
                for in_flight in quotes {
                    for refund in [false, true] {
                        let record = DepositRecord {
                            deposit: deposit(),
                            range: (U256::from(5u64), U256::from(25_000_005u64)),
                            seq: 7,
                            state,
                            attempts: 2,
                            unresolved: unresolved.map(sent),
                            in_flight: in_flight.map(sent),
                            reconcile_rounds: 3,
                            sweep_failed: refund,
                            refund: refund.then(|| RefundProgress {
                                attempts: 1,
                                auto: true,
                                last: RefundResult::new(
                                    &deposit(),
                                    RefundStatus::Pending,
                                    RefundReason::SweepFailed,
                                ),
                            }),
                            chain: refund.then(|| ChainLink {
                                tx: Some("0xab".into()),
                                index: 3,
                                height: Some(120),
                                block_hash: Some("0x78".into()),
                                removed: false,
                                in_balance: true,
                                unexplained: U256::from(4u64),
                                reported: 2,
                            }),
                        };
                        let json = record_json(&record);
                        let back = record_from_json(&json).expect("reads back");
                        assert_eq!(back.state, state);
                        assert_eq!(back.deposit.raw_amount, record.deposit.raw_amount);
                        assert_eq!(back.range, record.range);
                        assert_eq!(back.chain, record.chain);
                        assert_eq!(
                            back.unresolved.as_ref().map(|q| q.backend.clone()),
                            unresolved.map(|p| sent(p).backend)
                        );
                        assert_eq!(back.unresolved.map(|q| q.purpose), unresolved);
                        assert_eq!(
                            back.in_flight.map(|q| q.quote.quote_id),
                            in_flight.map(|p| format!("q_{p:?}"))
                        );
                        assert_eq!(record_json(&record_from_json(&json).unwrap()), json);
                        cases += 1;
                    }
                }
            }
        }
        assert_eq!(cases, DepositState::ALL.len() * 3 * 3 * 2);
    }

    #[test]
    fn a_record_this_version_cannot_read_says_why() {
        let record =
            DepositRecord::new(deposit(), (U256::ZERO, U256::from(1u64)), 1, DepositState::Waiting);
        let json = record_json(&record);
        let renamed = json.replace("\"waiting\"", "\"hibernating\"");
        let why = record_from_json(&renamed).expect_err("refused");
        assert_eq!(why, "unknown deposit state \"hibernating\"");
        assert!(record_from_json("{}").is_err());
    }

    /// A quote written before the backend's data was kept reads back with none, and a quote
    /// without any is written as before: devnet's records are unchanged.
    #[test]
    fn a_quote_without_backend_data_reads_and_writes_as_before() {
        let mut record = DepositRecord::new(
            deposit(),
            (U256::ZERO, U256::from(1u64)),
            1,
            DepositState::Sweeping,
        );
        record.in_flight = Some(sent(QuotePurpose::Sweep));
        let json = record_json(&record);
        assert!(!json.contains("\"backend\""), "{json}");
        assert!(!json.contains("\"chain\""), "no chain link off watched chains: {json}");
        let back = record_from_json(&json).expect("reads back");
        assert!(back.in_flight.expect("in flight").backend.is_null());
        record.in_flight = Some(sent(QuotePurpose::Refund));
        let json = record_json(&record);
        assert!(json.contains("\"backend\":{"), "{json}");
    }
}
