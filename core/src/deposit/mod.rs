//! The deposit client (spec `deposit-library.md`): deposit addresses, the watcher, the sweeper
//! and lifecycle events, over the services of `docs/protocol.md`.
//!
//! - [`DepositClient`]: the synchronous facade (`client/`), over the engine (`engine/`: the
//!   client's table, its serial executor, timers and polls);
//! - [`DepositClientConfig`] and its validation (`config/`);
//! - the watcher (`watcher/`) detects deposits from the account's cumulative `received`
//!   totals (or, on a backend without them, from balance increases); the sweeper (`sweeper.rs`) delivers them, one at a time per client, through the
//!   send protocol (`send.rs`); every state change is a step of the machine (`machine.rs`);
//! - [`DepositEvent`] / [`DepositLifecycleEvent`] (`events.rs`) reach the host by callbacks on
//!   a library thread and through a pull queue (the hub, `hub.rs`); the callbacks of every
//!   client run on one process-wide pool of delivery threads ([`dispatch`]); [`ClientStatus`]
//!   (`status.rs`);
//! - durable state and the event log (`store/`): SQLite at `store_path`, else memory;
//! - refunds (`refund/`), recovery of stuck funds (`recovery.rs`), notification records
//!   ([`notifications`]) and the transaction history ([`history`]);
//! - funding and the onramp reach the client through `port.rs` only.
//!
//! The modules form one-way layers (ARCHITECTURE.md, "Layers"; `core/tests/layers.rs`).

pub(crate) mod client;
pub mod config;
pub mod dispatch;
mod engine;
pub mod events;
pub mod finality;
pub mod history;
mod hub;
mod machine;
pub mod model;
pub mod notifications;
pub(crate) mod poller;
pub(crate) mod port;
mod records;
mod recovery;
mod refund;
mod send;
pub mod status;
mod store;
mod sweeper;
pub mod watcher;

pub use crate::services::{
    TokenTransactionsResponse, TransactionsResponse, UATransaction, UaChange, UaDetail,
    UaTargetToken, UaTransaction,
};
pub use client::{CLOSE_TIMEOUT, DepositClient};
pub use config::{
    BALANCE_PROVIDER_RPC, BUILTIN_ONRAMP_PARTNER_KEY, BackendChoice, ChainRpcUrls,
    DEFAULT_BALANCE_API_URL, DEFAULT_BALANCE_PROXY_URL, DEFAULT_EVENT_QUEUE_CAPACITY,
    DEFAULT_EVM_RPC_URLS, DEFAULT_ONRAMP_WIDGET_URL, DEFAULT_POLLING_INTERVAL_MS,
    DEFAULT_PROCESSING_TIMEOUT_MS, DEFAULT_RECONCILE_INTERVAL_MS, DEFAULT_SOLANA_RPC_URL,
    DEFAULT_SWEEP_RETRY_DELAY_MS, DepositClientConfig, Destination, DestinationConfig,
    FundingConfig, LifecycleCallback, MAX_SWEEP_ATTEMPTS, MIN_POLLING_INTERVAL_MS,
    NESTED_OPTION_NAMES, NotificationPosition, NotificationTheme, NotificationsConfig, OPTIONS,
    OnrampConfig, OnrampMode, OptionArg, OptionError, OptionKind, OptionSpec, ParticleOptions,
    RefundConfig, Secret, SignerKind, option_by_field, option_named, resolve_destination,
};
pub use events::{
    DepositEvent, DepositLifecycleEvent, DepositPhase, EventCallback, EventDestination,
    NotificationsCallback, RecordedEvent, RecordedEventCallback, SubscriptionId,
};
pub use history::{TokenTransactionFilter, TransactionCache};
pub use model::{
    DeliveredAmount, DepositAddresses, DetectedDeposit, RecoveryResult, RecoveryStatus,
    RefundEligibility, RefundReason, RefundResult, RefundStatus, SweepResult, SweepStatus,
    deposit_id, explorer_tx_url, transfer_deposit_id,
};
pub use notifications::{NotificationRecord, NotificationStore};
pub use poller::{
    BATCH_WINDOW, MAX_BATCH_ACCOUNTS, MAX_BATCH_SESSIONS_BYTES, MAX_CONCURRENT_BATCHES,
};
pub use status::ClientStatus;
pub use store::contract as store_contract;
pub use watcher::{DUST_THRESHOLD_USD, MIN_VALUE_TOLERANCE, meets_token_minimum, token_minimum};

// The JWT service's constants live with its client (`services` imports nothing from
// `deposit`); re-exported here, where users have always found them.
pub use crate::services::jwt::{
    BUILTIN_APP_ID, BUILTIN_CLIENT_KEY, BUILTIN_PROJECT_ID, JWT_ISSUER,
};
