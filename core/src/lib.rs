//! depositkit-core: the logic of depositkit, with no C or Python types.
//!
//! It holds the validation layer every later part builds on (the chain and token tables of the
//! deposit spec §4, address checks, exact unit conversion, the error model) and the client of
//! the user-lookup service ([`UserRpcClient`]), and the deposit client ([`DepositClient`]:
//! deposit addresses, a watcher, a sweeper and lifecycle events over the services of
//! `docs/protocol.md`, on one shared tokio runtime ([`runtime`]): each call that does I/O or
//! waits is a blocking method, with an `…_async` twin returning a [`runtime::Task`] that any
//! executor may await), with funding from the user's own wallet ([`funding`]) and the fiat onramp ([`onramp`]) over
//! low-level chain access ([`chain`]: EVM and Solana JSON-RPC, ERC-20 calldata, the Solana
//! transaction format), which devnet's chain-backed mode shares. The C ABI (`depositkit-ffi`)
//! and the Python package (`depositkit`) are thin faces over this crate.

pub mod chain;
pub mod chains;
pub mod deposit;
pub mod describe;
pub mod error;
pub mod funding;
pub mod http;
pub mod observe;
pub mod onramp;
pub(crate) mod registry;
pub mod runtime;
pub mod services;
pub mod signer;
pub mod tokens;
pub mod units;
pub mod users;
pub mod validate;

pub use chains::{
    AddressType, Chain, get_address_type, get_chain_name, is_valid_destination_chain,
};
pub use deposit::{
    ClientStatus, DepositAddresses, DepositClient, DepositClientConfig, DepositEvent,
    DepositLifecycleEvent, DepositPhase, Destination, DestinationConfig, DetectedDeposit,
    NotificationRecord, RecoveryResult, RecoveryStatus, RefundEligibility, RefundReason,
    RefundResult, RefundStatus, SubscriptionId, SweepResult, SweepStatus, TokenTransactionFilter,
    TokenTransactionsResponse, TransactionsResponse, UATransaction, UaTransaction,
};
pub use error::{Error, ErrorKind, Result, RpcErrorObject};
pub use funding::{
    BalanceSource, EvmProvider, FundingBalance, FundingTransferResult, ProviderError,
    WalletProvider,
};
pub use http::RetryPolicy;
pub use observe::{Health, ServiceHealth, metrics_text};
pub use onramp::{OnrampEventName, OnrampOrder};
pub use signer::{CallbackInput, CallbackSigner, KeySigner, SeedSigner, Signer, SignerSource};
pub use tokens::{
    DEFAULT_SUPPORTED_TOKENS, TokenInfo, TokenType, get_token_decimals, is_onramp_token_supported,
    is_supported_destination_token, token_info,
};
pub use units::{MAX_DECIMALS, U256, format_units, parse_raw_amount, parse_units};
pub use users::{User, UserRpcClient, UserRpcClientOptions, Wallet};
pub use validate::{is_valid_evm_address, is_valid_solana_address, validate_address_for_chain};

/// Minimum USD value of a deposit; smaller deposits reach phase `below_threshold` (spec §8).
pub const DEFAULT_MIN_VALUE_USD: f64 = 0.50;

/// How often the watcher polls balances, in milliseconds (spec §8).
pub const DEFAULT_POLLING_INTERVAL_MS: u64 = 3000;

/// The version of depositkit.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
