//! The client's status (spec §3 `ClientStatus`).
//!
//! `idle` (constructed, or closed) → `initializing` → `ready` or `error`; a failed
//! initialization may be retried (unlike the reference, where `error` is terminal). Once
//! initialized the status is derived from what runs: `sweeping` while any deposit is queued,
//! being swept or waiting for a retry; else `watching` while the watcher runs; else `ready`.
//! Every change is reported once, as [`DepositEvent::StatusChanged`](super::DepositEvent).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The client's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientStatus {
    /// Constructed, not initialized (or closed).
    Idle,
    /// `initialize()` is running.
    Initializing,
    /// Initialized; neither watching nor sweeping.
    Ready,
    /// The watcher is polling.
    Watching,
    /// At least one deposit is being swept (or waits for a retry).
    Sweeping,
    /// The last `initialize()` failed; it may be called again.
    Error,
}

impl ClientStatus {
    /// The spec's spelling (`"watching"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            ClientStatus::Idle => "idle",
            ClientStatus::Initializing => "initializing",
            ClientStatus::Ready => "ready",
            ClientStatus::Watching => "watching",
            ClientStatus::Sweeping => "sweeping",
            ClientStatus::Error => "error",
        }
    }
}

impl fmt::Display for ClientStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ClientStatus {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        [
            ClientStatus::Idle,
            ClientStatus::Initializing,
            ClientStatus::Ready,
            ClientStatus::Watching,
            ClientStatus::Sweeping,
            ClientStatus::Error,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "unknown client status {}",
                crate::describe::quote(text)
            ))
        })
    }
}

/// Where the client is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    Idle,
    Initializing,
    Ready,
    Failed,
    Closed,
}

/// Every public call of [`DepositClient`](super::DepositClient), named for the client's one
/// lifecycle guard (`Inner::guard`): a method that may be refused calls it first with its own
/// name, and [`ClientCall::answers_when_closed`] is the one table of what a closed client still
/// answers. The bindings (C, Python) add no rule of their own: they pass the core's answer or
/// its error on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientCall {
    // The client's own lifecycle.
    Close,
    IsClosed,
    Status,
    Health,
    Initialize,
    // Identity and durable state.
    OwnerAddress,
    StorePath,
    AccountId,
    IntermediaryAddress,
    DepositAddresses,
    // The event log and the pull queue.
    EventsSince,
    LastEventId,
    DepositHistory,
    NextEvent,
    NextRecordedEvent,
    DroppedEvents,
    CallbackPanics,
    Subscribe,
    SubscribeRecorded,
    Unsubscribe,
    // Destination, watcher, deposits.
    SetDestination,
    GetDestination,
    IsOnrampSupported,
    IsWatching,
    StartWatching,
    StopWatching,
    PollNow,
    PendingDeposits,
    Sweep,
    SweepResult,
    // History.
    GetTransactions,
    GetTokenTransactions,
    GetTransaction,
    // Refunds and recovery.
    Refund,
    CanRefund,
    RefundResult,
    RefundConfig,
    StuckFunds,
    RecoverFunds,
    IsRecovering,
    // Notifications.
    Notifications,
    DismissNotification,
    SubscribeNotifications,
    NotificationsConfig,
    // Fund from wallet.
    SetEvmWallet,
    SetSolanaWallet,
    SetBalanceProvider,
    ClearFundingWallet,
    ConnectEvmWallet,
    EvmAccounts,
    PromptEvmAccountSelection,
    ConnectSolanaWallet,
    GetWalletBalances,
    FundFromWallet,
    // Onramp.
    OpenOnramp,
    HandleOnrampMessage,
    LastOnrampOrder,
}

impl ClientCall {
    /// Whether a closed client still answers this call; every other call fails with
    /// `ErrorKind::DepositSdk` "the client is closed" (in C `DEPOSITKIT_STATUS_DEPOSIT_SDK`, in
    /// Python `DepositSDKError`).
    ///
    /// A closed client answers only what stays true after `close()`:
    /// - its lifecycle: `close` (idempotent), `is_closed`, `status` (`idle`), `health`
    ///   (`ready` false);
    /// - what identifies it and outlives it: `owner_address`, `store_path`, and the durable event
    ///   log (`events_since`, `deposit_history`, `last_event_id`), so that a host can catch up
    ///   on what it missed after closing;
    /// - the pull queue, whose events close() leaves to be taken (`next_event`,
    ///   `next_recorded_event`), and its delivery counters (`dropped_events`,
    ///   `callback_panics`), which the last deliveries of `close()` may still change;
    /// - the releases `close()` already did, so that a host's teardown never fails on order:
    ///   `unsubscribe`, `clear_funding_wallet`.
    ///
    /// Everything else describes or changes the running client (session, destination, watcher,
    /// deposits and their results, refunds, recovery, notifications, settings, wallets,
    /// onramp, new subscriptions): after `close()` its answer would be stale or its change
    /// lost, so it is refused.
    pub(crate) const fn answers_when_closed(self) -> bool {
        use ClientCall::*;
        match self {
            Close | IsClosed | Status | Health | OwnerAddress | StorePath | EventsSince
            | LastEventId | DepositHistory | NextEvent | NextRecordedEvent | DroppedEvents
            | CallbackPanics | Unsubscribe | ClearFundingWallet => true,
            Initialize
            | AccountId
            | IntermediaryAddress
            | DepositAddresses
            | Subscribe
            | SubscribeRecorded
            | SetDestination
            | GetDestination
            | IsOnrampSupported
            | IsWatching
            | StartWatching
            | StopWatching
            | PollNow
            | PendingDeposits
            | Sweep
            | SweepResult
            | GetTransactions
            | GetTokenTransactions
            | GetTransaction
            | Refund
            | CanRefund
            | RefundResult
            | RefundConfig
            | StuckFunds
            | RecoverFunds
            | IsRecovering
            | Notifications
            | DismissNotification
            | SubscribeNotifications
            | NotificationsConfig
            | SetEvmWallet
            | SetSolanaWallet
            | SetBalanceProvider
            | ConnectEvmWallet
            | EvmAccounts
            | PromptEvmAccountSelection
            | ConnectSolanaWallet
            | GetWalletBalances
            | FundFromWallet
            | OpenOnramp
            | HandleOnrampMessage
            | LastOnrampOrder => false,
        }
    }
}

/// The inputs of the status and the last status reported.
#[derive(Debug)]
pub(crate) struct StatusTracker {
    lifecycle: Lifecycle,
    watching: bool,
    sweeps: usize,
    reported: ClientStatus,
}

impl Default for StatusTracker {
    fn default() -> Self {
        StatusTracker {
            lifecycle: Lifecycle::Idle,
            watching: false,
            sweeps: 0,
            reported: ClientStatus::Idle,
        }
    }
}

impl StatusTracker {
    /// The status the inputs give.
    pub fn current(&self) -> ClientStatus {
        match self.lifecycle {
            Lifecycle::Idle | Lifecycle::Closed => ClientStatus::Idle,
            Lifecycle::Initializing => ClientStatus::Initializing,
            Lifecycle::Failed => ClientStatus::Error,
            Lifecycle::Ready if self.sweeps > 0 => ClientStatus::Sweeping,
            Lifecycle::Ready if self.watching => ClientStatus::Watching,
            Lifecycle::Ready => ClientStatus::Ready,
        }
    }

    pub fn lifecycle(&self) -> Lifecycle {
        self.lifecycle
    }

    pub fn watching(&self) -> bool {
        self.watching
    }

    /// Records a new lifecycle; the new status when it changed.
    pub fn set_lifecycle(&mut self, lifecycle: Lifecycle) -> Option<ClientStatus> {
        self.lifecycle = lifecycle;
        self.settle()
    }

    pub fn set_watching(&mut self, watching: bool) -> Option<ClientStatus> {
        self.watching = watching;
        self.settle()
    }

    pub fn set_sweeps(&mut self, sweeps: usize) -> Option<ClientStatus> {
        self.sweeps = sweeps;
        self.settle()
    }

    fn settle(&mut self) -> Option<ClientStatus> {
        let now = self.current();
        if now == self.reported {
            return None;
        }
        self.reported = now;
        Some(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitions_and_change_reports() {
        let mut t = StatusTracker::default();
        assert_eq!(t.current(), ClientStatus::Idle);
        assert_eq!(t.set_lifecycle(Lifecycle::Initializing), Some(ClientStatus::Initializing));
        assert_eq!(t.set_lifecycle(Lifecycle::Failed), Some(ClientStatus::Error));
        // A failed initialization may be retried.
        assert_eq!(t.set_lifecycle(Lifecycle::Initializing), Some(ClientStatus::Initializing));
        assert_eq!(t.set_lifecycle(Lifecycle::Ready), Some(ClientStatus::Ready));
        assert_eq!(t.set_watching(true), Some(ClientStatus::Watching));
        assert_eq!(t.set_watching(true), None, "only changes are reported");
        assert_eq!(t.set_sweeps(2), Some(ClientStatus::Sweeping));
        assert_eq!(t.set_sweeps(1), None);
        // Stopping the watcher mid-sweep is honoured; the status stays sweeping until done.
        assert_eq!(t.set_watching(false), None);
        assert_eq!(t.set_sweeps(0), Some(ClientStatus::Ready));
        assert_eq!(t.set_lifecycle(Lifecycle::Closed), Some(ClientStatus::Idle));
    }

    #[test]
    fn spellings() {
        assert_eq!(serde_json::to_string(&ClientStatus::Watching).unwrap(), "\"watching\"");
        assert_eq!("sweeping".parse::<ClientStatus>().unwrap(), ClientStatus::Sweeping);
        assert!("Sweeping".parse::<ClientStatus>().is_err());
    }
}
