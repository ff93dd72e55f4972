//! What the dashboard shows of each thing devnet records, as one JSON event: pure functions from
//! a history entry or a quote (read by [`super::feed`]) to the event the page renders.
//!
//! Devnet sees a deposit's lifecycle from the service side, and names what it sees with the
//! spec's phases (`../shared/spec/deposit-library.md` §3):
//!
//! | devnet records | event `kind` | `phase` |
//! |---|---|---|
//! | a transfer reaching an account's deposit address | `deposit` | `detected` |
//! | a sweep quote of the deposit | `quote` | `processing` |
//! | the sweep's send delivered | `sweep` | `credited` |
//! | the sweep's send failed, or was refused | `sweep`, `send_refused` | `failed` |
//! | a refund quote | `quote` | `refunding` |
//! | the refund's send delivered / failed | `refund` | `refunded` / `failed` |
//!
//! A transfer's `depositId` is the id a depositkit client gives it when it sees the transfer
//! alone (`depositkit_core::deposit::model::deposit_id` of the transfer's `received` range); the
//! quotes and sends carry the client's own `depositId`, so the page joins them. `below_threshold`
//! is a client's decision that sends nothing to devnet: such a deposit stays `detected` here.

use depositkit_core::deposit::model::deposit_id;
use depositkit_core::{TokenType, U256, format_units, get_token_decimals};
use serde_json::{Value, json};

use crate::store::{HistoryEntry, QuoteEntry};

/// The event of a history entry (a transfer received, a sweep or a refund sent), without `seq`.
pub fn history_event(entry: &HistoryEntry) -> Value {
    let record = &entry.record;
    let mut event = json!({
        "at": record.created_at,
        "accountId": entry.account_id,
        "chainId": record.chain_id,
        "token": record.token,
        "rawAmount": record.raw_amount.to_string(),
        "amount": human(record.raw_amount, record.token, record.chain_id),
        "amountUSD": usd(record.raw_amount, record.token, record.chain_id, record.price_usd),
    });
    match record.tag.as_str() {
        "receive" => {
            event["kind"] = json!("deposit");
            event["phase"] = json!("detected");
            event["txHash"] = json!(record.id);
            event["address"] = json!(record.to_address);
            event["sender"] = json!(record.from_address);
            if let Some((before, after)) = record.received {
                event["receivedBefore"] = json!(before.to_string());
                event["receivedAfter"] = json!(after.to_string());
                event["depositId"] = json!(deposit_id(
                    &entry.account_id,
                    record.chain_id,
                    record.token,
                    before,
                    after
                ));
            }
        }
        tag => {
            let delivered = record.status == 1;
            event["kind"] = json!(tag);
            event["phase"] = json!(match (tag, delivered) {
                ("refund", true) => "refunded",
                (_, true) => "credited",
                (_, false) => "failed",
            });
            event["transactionId"] = json!(record.id);
            event["quoteId"] = json!(record.quote_id);
            event["depositId"] = json!(record.deposit_id);
            event["to"] = json!(record.to_address);
            event["toChainId"] = json!(record.to_chain_id);
            event["error"] = json!(entry.error);
            event["explorerUrl"] = json!(entry.explorer_url);
            event["sourceTxHash"] = json!(entry.source_tx_hash);
            if let Some(delivered) = entry.delivered {
                event["deliveredRawAmount"] = json!(delivered.to_string());
            }
        }
    }
    event
}

/// The event of a stored quote (its answer's body), without `seq`; `None` for a body that is not
/// the JSON devnet wrote.
pub fn quote_event(entry: &QuoteEntry) -> Option<Value> {
    let body: Value = serde_json::from_str(&entry.body).ok()?;
    let refund = body["purpose"] == "refund";
    let side = |side: &Value| {
        let raw = side["rawAmount"].as_str().and_then(|r| U256::from_str_radix(r, 10).ok());
        let decimals = side["decimals"].as_u64().and_then(|d| u32::try_from(d).ok());
        let amount = raw.zip(decimals).and_then(|(raw, d)| format_units(raw, d).ok());
        json!({
            "chainId": side["chainId"],
            "token": side["token"],
            "rawAmount": side["rawAmount"],
            "amount": amount,
            "address": side.get("address"),
            "valueUSD": side.get("valueUSD"),
        })
    };
    Some(json!({
        "at": entry.created_at,
        "kind": "quote",
        "phase": if refund { "refunding" } else { "processing" },
        "purpose": body["purpose"],
        "accountId": entry.account_id,
        "quoteId": body["quoteId"],
        "depositId": body.get("depositId"),
        "source": side(&body["source"]),
        "destination": side(&body["destination"]),
        "fees": body["fees"],
    }))
}

/// `raw` of `token` on `chain_id` in whole tokens.
pub fn human(raw: U256, token: TokenType, chain_id: u64) -> String {
    let decimals = get_token_decimals(token, Some(chain_id));
    format_units(raw, u32::from(decimals)).unwrap_or_else(|_| raw.to_string())
}

/// The USD value of `raw` at `price`, rounded to cents (informational).
fn usd(raw: U256, token: TokenType, chain_id: u64, price: f64) -> f64 {
    let whole: f64 = human(raw, token, chain_id).parse().unwrap_or(0.0);
    (whole * price * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TxRecord;

    fn entry(tag: &str, status: i64) -> HistoryEntry {
        HistoryEntry {
            seq: 1,
            account_id: "acc_1".into(),
            record: TxRecord {
                id: "0xaa".into(),
                tag: tag.into(),
                status,
                chain_id: 8453,
                token: TokenType::USDC,
                raw_amount: U256::from(25_000_000u64),
                price_usd: 1.0,
                from_address: Some("0xsender".into()),
                to_address: "0xdeposit".into(),
                to_chain_id: 8453,
                quote_id: (tag != "receive").then(|| "q_1".into()),
                deposit_id: (tag != "receive").then(|| "dep_1".into()),
                received: (tag == "receive").then(|| (U256::ZERO, U256::from(25_000_000u64))),
                created_at: 7,
            },
            error: (status == -1).then(|| "injected fault: the sweep failed".into()),
            explorer_url: None,
            delivered: (tag != "receive").then(|| U256::from(24_970_000u64)),
            source_tx_hash: None,
        }
    }

    #[test]
    fn a_transfer_is_detected_under_the_id_a_client_gives_it() {
        let event = history_event(&entry("receive", 1));
        assert_eq!(event["kind"], "deposit");
        assert_eq!(event["phase"], "detected");
        assert_eq!(event["amount"], "25");
        assert_eq!(event["amountUSD"], 25.0);
        let expected =
            deposit_id("acc_1", 8453, TokenType::USDC, U256::ZERO, U256::from(25_000_000u64));
        assert_eq!(event["depositId"], expected.as_str());
    }

    #[test]
    fn sends_are_credited_failed_or_refunded() {
        let phase = |tag: &str, status: i64| history_event(&entry(tag, status))["phase"].clone();
        assert_eq!(phase("sweep", 1), "credited");
        assert_eq!(phase("sweep", -1), "failed");
        assert_eq!(phase("refund", 1), "refunded");
        assert_eq!(phase("refund", -1), "failed");
        let failed = history_event(&entry("sweep", -1));
        assert_eq!(failed["error"], "injected fault: the sweep failed");
        assert_eq!(failed["depositId"], "dep_1");
        assert_eq!(failed["deliveredRawAmount"], "24970000");
    }

    #[test]
    fn quotes_are_processing_or_refunding() {
        let body = json!({
            "quoteId": "q_1", "purpose": "sweep", "depositId": "dep_1",
            "source": {"chainId": 8453, "token": "USDC", "rawAmount": "25000000", "decimals": 6},
            "destination": {"chainId": 42161, "token": "USDC", "address": "0xd",
                            "rawAmount": "24970000", "decimals": 6},
            "fees": {"totalUSD": 0.03},
        });
        let quote = |body: &Value| QuoteEntry {
            seq: 1,
            account_id: "acc_1".into(),
            body: body.to_string(),
            created_at: 5,
        };
        let event = quote_event(&quote(&body)).unwrap();
        assert_eq!(event["phase"], "processing");
        assert_eq!(event["destination"]["amount"], "24.97");
        assert_eq!(event["depositId"], "dep_1");
        let mut refund = body.clone();
        refund["purpose"] = json!("refund");
        assert_eq!(quote_event(&quote(&refund)).unwrap()["phase"], "refunding");
        assert!(quote_event(&QuoteEntry { body: "not json".into(), ..quote(&body) }).is_none());
    }
}
