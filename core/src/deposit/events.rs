//! The event model of the deposit client: what it reports.
//!
//! [`DepositLifecycleEvent`] is the one event model of a deposit (spec §2). The client also
//! reports status changes, background errors, refund updates and recovery results; all travel
//! as [`DepositEvent`], and the event log holds them as [`RecordedEvent`]s. A
//! [`NotificationRecord`] is a deposit's latest lifecycle event as the notification store
//! (`notifications.rs`) keeps it.
//!
//! How events reach the host — the pull queue, the callbacks on the delivery pool — is the
//! event hub's (`hub.rs`). This module is data: it imports nothing of the client.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::model::{RecoveryResult, RefundResult};
use super::status::ClientStatus;
use crate::error::ErrorKind;
use crate::onramp::messages::{OnrampEventName, OnrampOrder};
use crate::tokens::TokenType;

// Where a deposit goes is data of the records too (`model.rs`); re-exported where it always was.
pub use super::model::EventDestination;

/// The phase of a deposit (spec §3 `DepositPhase`, and depositkit's finality phases).
///
/// On a chain without a chain watcher (no `chainRpcUrls` entry): `detected` → `processing` →
/// `credited` or `failed`. On a chain with one (`docs/finality.md`): `seen` → `confirming` (as
/// confirmations come in) → `confirmed` → `processing` → `credited` or `failed`; or `seen` →
/// `reorged` when a reorganisation removes the transfer first (never swept or credited; the
/// same id is `seen` again if the transfer returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DepositPhase {
    /// A chain watcher (or, on a watched chain, the balance) showed it; not final yet.
    Seen,
    /// Its chain added blocks over it; `confirmations` (and `requiredConfirmations`) say how
    /// far it is.
    Confirming,
    /// Its chain's finality policy is met: it is swept now (or waits for `sweep(id)`).
    Confirmed,
    /// A reorganisation removed its transfer before it was final: never swept or credited.
    Reorged,
    /// Found by the watcher.
    Detected,
    /// A sweep attempt started (again at each retry).
    Processing,
    /// Delivered to the destination.
    Credited,
    /// The sweep failed (or its outcome is unknown); the deposit stays in the account.
    Failed,
    /// Worth less than the minimum; it is not swept.
    BelowThreshold,
}

impl DepositPhase {
    /// The spec's spelling (`"below_threshold"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            DepositPhase::Detected => "detected",
            DepositPhase::Processing => "processing",
            DepositPhase::Credited => "credited",
            DepositPhase::Failed => "failed",
            DepositPhase::BelowThreshold => "below_threshold",
            DepositPhase::Seen => "seen",
            DepositPhase::Confirming => "confirming",
            DepositPhase::Confirmed => "confirmed",
            DepositPhase::Reorged => "reorged",
        }
    }
}

/// A deposit at one phase of its life (spec §2). `id` is the same in every phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DepositLifecycleEvent {
    /// The deposit's id (see [`deposit_id`](super::deposit_id)).
    pub id: String,
    /// The phase it entered.
    pub phase: DepositPhase,
    /// The deposited token.
    pub token: TokenType,
    /// The source chain.
    pub chain_id: u64,
    /// Human-readable amount of the deposit.
    pub amount: String,
    /// Its USD value at detection.
    #[serde(rename = "amountUSD")]
    pub amount_usd: f64,
    /// Where it goes (the destination at the time of the event).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub destination: Option<EventDestination>,
    /// The delivering transaction (on `credited`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub transaction_id: Option<String>,
    /// A block-explorer link to it (on `credited`, when the chain has an explorer).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub explorer_url: Option<String>,
    /// Why it failed (on `failed`) or why it is below the threshold.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// When the phase was entered, unix milliseconds.
    pub timestamp: u64,
    /// On a watched chain: the blocks (slots) over its transfer, its own counted (`seen`,
    /// `confirming`, `confirmed`), when its chain reported the transfer.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub confirmations: Option<u64>,
    /// On a watched chain: the confirmations its chain's rule asks for; absent for a rule of the
    /// chain's own `safe` / `finalized` head.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub required_confirmations: Option<u64>,
    /// On a watched chain: the transaction (signature) that brought it, when its chain reported
    /// it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source_tx_hash: Option<String>,
}

/// Everything the client reports.
#[derive(Debug, Clone, PartialEq)]
pub enum DepositEvent {
    /// A deposit entered a phase (`deposit:lifecycle`).
    Lifecycle(DepositLifecycleEvent),
    /// The client's status changed (`status:change`).
    StatusChanged(ClientStatus),
    /// Something failed in the background (a poll, a callback).
    Error {
        /// The error's kind.
        kind: ErrorKind,
        /// What failed and why.
        message: String,
    },
    /// A refund changed status (`refund:update`): pending, processing, then success, failed
    /// or skipped.
    Refund(RefundResult),
    /// One asset of [`recover_funds`](super::DepositClient::recover_funds) is done
    /// (`recovery:result`).
    Recovery(RecoveryResult),
    /// The onramp overlay posted an order event (`onramp:<name>`); `payload` is the widget's
    /// `data` as it was posted.
    Onramp {
        /// Which event.
        name: OnrampEventName,
        /// The widget's order data.
        payload: Value,
    },
    /// An onramp order completed (`onramp:complete`).
    OnrampComplete(OnrampOrder),
}

impl DepositEvent {
    /// The event as JSON: `{"type": "deposit:lifecycle", "payload": {…}}`,
    /// `{"type": "status:change", "payload": "watching"}`,
    /// `{"type": "error", "payload": {"kind": "NetworkError", "code": 600, "message": "…"}}`,
    /// `{"type": "refund:update", "payload": {RefundResult}}`,
    /// `{"type": "recovery:result", "payload": {RecoveryResult}}`,
    /// `{"type": "onramp:order_created", "payload": {…the widget's data…}}` (any
    /// `onramp:<name>`) or `{"type": "onramp:complete", "payload": {OnrampOrder}}`.
    pub fn to_json(&self) -> Value {
        match self {
            DepositEvent::Lifecycle(event) => json!({
                "type": "deposit:lifecycle",
                "payload": serde_json::to_value(event).unwrap_or(Value::Null),
            }),
            DepositEvent::StatusChanged(status) => {
                json!({"type": "status:change", "payload": status.as_str()})
            }
            DepositEvent::Error { kind, message } => json!({
                "type": "error",
                "payload": {"kind": kind.class_name(), "code": kind.code(), "message": message},
            }),
            DepositEvent::Refund(result) => json!({
                "type": "refund:update",
                "payload": serde_json::to_value(result).unwrap_or(Value::Null),
            }),
            DepositEvent::Recovery(result) => json!({
                "type": "recovery:result",
                "payload": serde_json::to_value(result).unwrap_or(Value::Null),
            }),
            DepositEvent::Onramp { name, payload } => {
                json!({"type": name.type_name(), "payload": payload})
            }
            DepositEvent::OnrampComplete(order) => {
                json!({"type": "onramp:complete", "payload": order.to_json()})
            }
        }
    }

    /// The event's `type` in [`to_json`](DepositEvent::to_json).
    pub const fn type_name(&self) -> &'static str {
        match self {
            DepositEvent::Lifecycle(_) => "deposit:lifecycle",
            DepositEvent::StatusChanged(_) => "status:change",
            DepositEvent::Error { .. } => "error",
            DepositEvent::Refund(_) => "refund:update",
            DepositEvent::Recovery(_) => "recovery:result",
            DepositEvent::Onramp { name, .. } => name.type_name(),
            DepositEvent::OnrampComplete(_) => "onramp:complete",
        }
    }

    /// The completed onramp order, if this is `onramp:complete`.
    pub fn onramp_order(&self) -> Option<&OnrampOrder> {
        match self {
            DepositEvent::OnrampComplete(order) => Some(order),
            _ => None,
        }
    }

    /// The refund update, if this is one.
    pub fn refund(&self) -> Option<&RefundResult> {
        match self {
            DepositEvent::Refund(result) => Some(result),
            _ => None,
        }
    }

    /// The recovery result, if this is one.
    pub fn recovery(&self) -> Option<&RecoveryResult> {
        match self {
            DepositEvent::Recovery(result) => Some(result),
            _ => None,
        }
    }

    /// The lifecycle event, if this is one.
    pub fn lifecycle(&self) -> Option<&DepositLifecycleEvent> {
        match self {
            DepositEvent::Lifecycle(event) => Some(event),
            _ => None,
        }
    }

    /// The event back from its [`to_json`](DepositEvent::to_json) form; `None` for a shape
    /// this version does not know (the event log of a newer depositkit).
    pub fn from_json(value: &Value) -> Option<DepositEvent> {
        let kind = value.get("type")?.as_str()?;
        let payload = value.get("payload")?;
        let parse = |v: &Value| v.clone();
        Some(match kind {
            "deposit:lifecycle" => {
                DepositEvent::Lifecycle(serde_json::from_value(parse(payload)).ok()?)
            }
            "status:change" => {
                DepositEvent::StatusChanged(serde_json::from_value(parse(payload)).ok()?)
            }
            "error" => {
                let code = payload.get("code")?.as_u64()?;
                DepositEvent::Error {
                    kind: ErrorKind::ALL.into_iter().find(|k| u64::from(k.code()) == code)?,
                    message: payload.get("message")?.as_str()?.to_owned(),
                }
            }
            "refund:update" => DepositEvent::Refund(serde_json::from_value(parse(payload)).ok()?),
            "recovery:result" => {
                DepositEvent::Recovery(serde_json::from_value(parse(payload)).ok()?)
            }
            "onramp:complete" => {
                DepositEvent::OnrampComplete(serde_json::from_value(parse(payload)).ok()?)
            }
            other => {
                let name = other.strip_prefix("onramp:")?.parse::<OnrampEventName>().ok()?;
                DepositEvent::Onramp { name, payload: payload.clone() }
            }
        })
    }
}

/// An event as the client's event log holds it: `id` orders the client's events (1, 2, …,
/// never reused; with a `store_path` they continue across restarts) and is the cursor of
/// [`events_since`](super::DepositClient::events_since); `at` is when it was emitted (unix
/// milliseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    /// The event's id in the client's log.
    pub id: u64,
    /// When it was emitted, unix milliseconds.
    pub at: u64,
    /// The event.
    pub event: DepositEvent,
}

impl RecordedEvent {
    /// [`DepositEvent::to_json`] plus `"id"` and `"at"`.
    pub fn to_json(&self) -> Value {
        let mut json = self.event.to_json();
        json["id"] = json!(self.id);
        json["at"] = json!(self.at);
        json
    }
}

/// One deposit's notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationRecord {
    /// The deposit's latest lifecycle event (its fields are the record's top-level fields).
    #[serde(flatten)]
    pub event: DepositLifecycleEvent,
    /// When the record was created, unix milliseconds.
    pub created_at: u64,
    /// When it last changed, unix milliseconds.
    pub updated_at: u64,
    /// depositkit's addition: the deposit's latest refund update, if it is being (or was)
    /// refunded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refund: Option<RefundResult>,
}

impl NotificationRecord {
    /// Whether the deposit's story is over (it may be auto-dismissed).
    pub fn is_terminal(&self) -> bool {
        let phase_done = matches!(
            self.event.phase,
            DepositPhase::Credited
                | DepositPhase::Failed
                | DepositPhase::BelowThreshold
                | DepositPhase::Reorged
        );
        phase_done && self.refund.as_ref().is_none_or(|r| r.status.is_terminal())
    }
}

/// Identifies a subscription, for [`unsubscribe`](super::DepositClient::unsubscribe).
pub type SubscriptionId = u64;

/// A host callback for every event.
pub type EventCallback = Box<dyn Fn(&DepositEvent) + Send + Sync>;

/// A host callback for every event with its id in the event log.
pub type RecordedEventCallback = Box<dyn Fn(&RecordedEvent) + Send + Sync>;

/// A host callback for changes of the notification records: called with every record, oldest
/// first, after each change.
pub type NotificationsCallback = Box<dyn Fn(&[NotificationRecord]) + Send + Sync>;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A lifecycle event of deposit `id` for tests.
    pub(crate) fn lifecycle(id: &str, phase: DepositPhase) -> DepositLifecycleEvent {
        DepositLifecycleEvent {
            id: id.into(),
            phase,
            token: TokenType::USDC,
            chain_id: 8453,
            amount: "1.5".into(),
            amount_usd: 1.5,
            destination: Some(EventDestination { address: "0xabc".into(), chain_id: 42161 }),
            transaction_id: None,
            explorer_url: None,
            error: None,
            timestamp: 7,
            confirmations: None,
            required_confirmations: None,
            source_tx_hash: None,
        }
    }

    #[test]
    fn lifecycle_json_is_camel_case_without_absent_fields() {
        let json = serde_json::to_value(lifecycle("dep_1", DepositPhase::BelowThreshold)).unwrap();
        assert_eq!(json["phase"], "below_threshold");
        assert_eq!(json["amountUSD"], 1.5);
        assert_eq!(json["chainId"], 8453);
        assert_eq!(json["destination"]["chainId"], 42161);
        assert!(json.get("transactionId").is_none());
        assert!(json.get("confirmations").is_none() && json.get("sourceTxHash").is_none());
        let mut confirming = lifecycle("dep_1", DepositPhase::Confirming);
        confirming.confirmations = Some(2);
        confirming.required_confirmations = Some(3);
        confirming.source_tx_hash = Some("0xab".into());
        let json = DepositEvent::Lifecycle(confirming.clone()).to_json();
        assert_eq!(json["payload"]["phase"], "confirming");
        assert_eq!(json["payload"]["confirmations"], 2);
        assert_eq!(json["payload"]["requiredConfirmations"], 3);
        assert_eq!(json["payload"]["sourceTxHash"], "0xab");
        assert_eq!(DepositEvent::from_json(&json), Some(DepositEvent::Lifecycle(confirming)));
        let event = DepositEvent::Error { kind: ErrorKind::Network, message: "down".into() };
        assert_eq!(event.to_json()["payload"]["kind"], "NetworkError");
        assert_eq!(DepositEvent::StatusChanged(ClientStatus::Ready).to_json()["payload"], "ready");
    }

    #[test]
    fn refund_and_recovery_events_have_their_own_types() {
        use crate::deposit::model::{
            RecoveryResult, RecoveryStatus, RefundReason, RefundResult, RefundStatus,
        };
        // The existing variants keep their shape.
        let json = DepositEvent::Lifecycle(lifecycle("dep_1", DepositPhase::Credited)).to_json();
        assert_eq!(json["type"], "deposit:lifecycle");
        assert_eq!(json["payload"]["id"], "dep_1");
        let refund = RefundResult {
            deposit_id: "dep_1".into(),
            token: TokenType::USDC,
            source_chain_id: 8453,
            amount: "1.5".into(),
            amount_usd: 1.5,
            status: RefundStatus::Skipped,
            reason: RefundReason::AddressTypeMismatch,
            tx_hash: None,
            error: Some("no".into()),
            refunded_to: None,
            refunded_to_sender: None,
            attempts: 1,
            delivered_amount: None,
            explorer_url: None,
            quote_id: None,
        };
        let event = DepositEvent::Refund(refund.clone());
        assert_eq!(event.type_name(), "refund:update");
        let json = event.to_json();
        assert_eq!(json["type"], "refund:update");
        let payload = &json["payload"];
        assert_eq!(payload["depositId"], "dep_1");
        assert_eq!(payload["status"], "skipped");
        assert_eq!(payload["reason"], "address_type_mismatch");
        assert_eq!(payload["attempts"], 1);
        assert!(payload.get("txHash").is_none() && payload.get("refundedTo").is_none());
        assert_eq!(event.refund(), Some(&refund));
        let recovery = RecoveryResult {
            token: TokenType::ETH,
            chain_id: 1,
            amount: "0.1".into(),
            amount_usd: 250.0,
            status: RecoveryStatus::Success,
            error: None,
            tx_hash: Some("0xab".into()),
            raw_amount: "100000000000000000".into(),
            delivered: None,
        };
        let json = DepositEvent::Recovery(recovery).to_json();
        assert_eq!(json["type"], "recovery:result");
        assert_eq!(json["payload"]["amountUSD"], 250.0);
        assert_eq!(json["payload"]["txHash"], "0xab");
        assert_eq!(json["payload"]["rawAmount"], "100000000000000000");
    }
}
