//! The records of the deposit client (spec §2): deposit addresses, detected deposits, sweep
//! results, and how a deposit's id is derived.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize, Serializer};

use crate::services::QuoteFees;
use crate::tokens::TokenType;
use crate::units::U256;

/// The deposit addresses of the account (spec §2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepositAddresses {
    /// The EVM deposit address (every EVM chain).
    pub evm: String,
    /// The Solana deposit address.
    pub solana: String,
}

fn as_decimal<S: Serializer>(value: &U256, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.to_string())
}

/// A validated destination: where a deposit is delivered (data; `config` reads and checks the
/// host's `DestinationConfig` into it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Destination {
    /// The chain id.
    pub chain_id: u64,
    /// The receiving address (EVM lower-cased; Solana exactly as given).
    pub address: String,
    /// The delivered token.
    pub token: TokenType,
}

/// Where a deposit goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventDestination {
    /// Receiving address.
    pub address: String,
    /// Destination chain.
    pub chain_id: u64,
}

/// Now, in unix milliseconds: the clock of the records and events.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// A deposit the watcher found (spec §2 `DetectedDeposit`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DetectedDeposit {
    /// Stable id: derived from the account, chain, token and the range of the account's
    /// cumulative `received` total that this deposit covers (see [`deposit_id`]).
    pub id: String,
    /// The token.
    pub token: TokenType,
    /// The source chain.
    pub chain_id: u64,
    /// Human-readable amount (`"1.5"`).
    pub amount: String,
    /// USD value at detection.
    #[serde(rename = "amountUSD")]
    pub amount_usd: f64,
    /// Smallest units (serialized as a decimal string).
    #[serde(serialize_with = "as_decimal")]
    pub raw_amount: U256,
    /// Decimals of the token on the chain.
    pub decimals: u32,
    /// When it was detected, unix milliseconds.
    pub detected_at: u64,
}

/// The state of a sweep (spec §2 `SweepResult.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepStatus {
    /// Delivered.
    Success,
    /// Not delivered; the deposit stays in the account.
    Failed,
    /// The outcome is not known yet (or could not be learned): reconcile before sweeping again.
    Pending,
}

/// What a sweep delivered: the quote's fee-aware amount.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveredAmount {
    /// Destination chain.
    pub chain_id: u64,
    /// Delivered token.
    pub token: TokenType,
    /// Receiving address.
    pub address: String,
    /// Delivered, smallest units (decimal string).
    pub raw_amount: String,
    /// Delivered, human-readable.
    pub amount: String,
    /// Decimals of the delivered token on the destination chain.
    pub decimals: u32,
    /// The deposit's USD value at the quote's prices.
    #[serde(rename = "valueUSD")]
    pub value_usd: f64,
    /// The quote's fees.
    pub fees: QuoteFees,
    /// The quote that was executed.
    pub quote_id: String,
}

/// The outcome of sweeping one deposit (spec §2 `SweepResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepResult {
    /// The deposit.
    pub deposit_id: String,
    /// The delivering transaction; empty when there is none.
    pub transaction_id: String,
    /// A block-explorer link to it; empty when there is none.
    pub explorer_url: String,
    /// Success, failed or pending.
    pub status: SweepStatus,
    /// Why it failed or why its outcome is unknown.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// What was delivered (on success) — depositkit's addition to the spec's record.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub delivered: Option<DeliveredAmount>,
}

/// Why a deposit is refunded, or why its refund was skipped (spec §2 `RefundReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundReason {
    /// Its sweep failed for good (the automatic refund's reason).
    SweepFailed,
    /// The host asked for it (the manual refund's default).
    UserRequested,
    /// Skipped: no receiver whose address type fits the source chain (a Solana deposit
    /// without a known Solana sender: the owner is an EVM address).
    AddressTypeMismatch,
    /// Skipped: the deposit does not cover the refund's gas.
    BelowMinimum,
}

impl RefundReason {
    /// The spec's spelling (`"sweep_failed"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            RefundReason::SweepFailed => "sweep_failed",
            RefundReason::UserRequested => "user_requested",
            RefundReason::AddressTypeMismatch => "address_type_mismatch",
            RefundReason::BelowMinimum => "below_minimum",
        }
    }
}

impl std::fmt::Display for RefundReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RefundReason {
    type Err = crate::Error;

    fn from_str(text: &str) -> crate::Result<Self> {
        [
            RefundReason::SweepFailed,
            RefundReason::UserRequested,
            RefundReason::AddressTypeMismatch,
            RefundReason::BelowMinimum,
        ]
        .into_iter()
        .find(|r| r.as_str() == text)
        .ok_or_else(|| {
            crate::Error::invalid_argument(format!(
                "reason must be one of sweep_failed, user_requested, address_type_mismatch, below_minimum, got {}",
                crate::describe::quote(text)
            ))
        })
    }
}

/// Where a refund is (spec §3 `RefundResult.status`).
///
/// `pending` (waiting for its turn, for the auto-refund delay, for the next attempt, or for an
/// unknown send outcome to be resolved) → `processing` (an attempt runs) → `success`, `failed`
/// (every attempt failed; the money stays in the account) or `skipped` (not refundable:
/// `reason` says why; the money stays in the account).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RefundStatus {
    /// Waiting.
    Pending,
    /// An attempt runs.
    Processing,
    /// Refunded.
    Success,
    /// Not refunded after the attempts allowed.
    Failed,
    /// Not refundable.
    Skipped,
}

impl RefundStatus {
    /// The spec's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            RefundStatus::Pending => "pending",
            RefundStatus::Processing => "processing",
            RefundStatus::Success => "success",
            RefundStatus::Failed => "failed",
            RefundStatus::Skipped => "skipped",
        }
    }

    /// Whether the refund is over (success, failed, skipped).
    pub const fn is_terminal(self) -> bool {
        matches!(self, RefundStatus::Success | RefundStatus::Failed | RefundStatus::Skipped)
    }
}

/// A refund of one deposit (spec §2 `RefundResult`), reported at each status change as
/// [`DepositEvent::Refund`](super::DepositEvent::Refund).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefundResult {
    /// The deposit.
    pub deposit_id: String,
    /// Its token (refunded in the same token).
    pub token: TokenType,
    /// Its chain (refunded on the same chain).
    pub source_chain_id: u64,
    /// The deposit's human-readable amount (what leaves the account; the receiver gets it less
    /// the gas, see `delivered_amount`).
    pub amount: String,
    /// Its USD value at detection.
    #[serde(rename = "amountUSD")]
    pub amount_usd: f64,
    /// Where the refund is.
    pub status: RefundStatus,
    /// Why it is refunded (`sweep_failed`, `user_requested`), or why it was skipped
    /// (`address_type_mismatch`, `below_minimum`).
    pub reason: RefundReason,
    /// The refund's transaction (on success).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tx_hash: Option<String>,
    /// What went wrong (failed, skipped, or the last failed attempt while pending).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// The receiver, once chosen.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refunded_to: Option<String>,
    /// Whether the receiver is the deposit's original sender (else the owner).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refunded_to_sender: Option<bool>,
    /// depositkit's addition: attempts made so far.
    pub attempts: u32,
    /// depositkit's addition: what the receiver got (human-readable, after gas), on success.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub delivered_amount: Option<String>,
    /// depositkit's addition: a block-explorer link to `tx_hash`, when the chain has one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub explorer_url: Option<String>,
    /// depositkit's addition: the refund quote (the last one sent).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub quote_id: Option<String>,
}

impl RefundResult {
    /// A refund of `deposit` at `status` for `reason`, with nothing else known yet.
    pub fn new(deposit: &DetectedDeposit, status: RefundStatus, reason: RefundReason) -> Self {
        RefundResult {
            deposit_id: deposit.id.clone(),
            token: deposit.token,
            source_chain_id: deposit.chain_id,
            amount: deposit.amount.clone(),
            amount_usd: deposit.amount_usd,
            status,
            reason,
            tx_hash: None,
            error: None,
            refunded_to: None,
            refunded_to_sender: None,
            attempts: 0,
            delivered_amount: None,
            explorer_url: None,
            quote_id: None,
        }
    }
}

/// Whether a deposit can be refunded now (spec §4 `canRefund`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefundEligibility {
    /// Whether `refund(id)` would try to send the money back.
    pub eligible: bool,
    /// The spec's reason: when eligible, the reason a refund would carry (`sweep_failed` after
    /// a failed sweep, else `user_requested`); when not, `address_type_mismatch` or
    /// `below_minimum` if one of them is why, else `None` (see `message`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<RefundReason>,
    /// Why, in words (always set when not eligible).
    pub message: String,
    /// Who would receive the refund.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refund_address: Option<String>,
    /// Whether that is the original sender (else the owner).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refund_to_sender: Option<bool>,
}

/// The outcome of recovering one asset (spec §3 `RecoveryResult.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryStatus {
    /// Swept to the destination.
    Success,
    /// Not swept; `error` says why (the money stays in the account).
    Failed,
    /// Not tried: dust (≤ $0.10) or worth less than the fees.
    Skipped,
}

impl RecoveryStatus {
    /// The spec's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            RecoveryStatus::Success => "success",
            RecoveryStatus::Failed => "failed",
            RecoveryStatus::Skipped => "skipped",
        }
    }
}

/// The recovery of one asset's stuck funds (spec §2 `RecoveryResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryResult {
    /// The token.
    pub token: TokenType,
    /// The chain it sat on.
    pub chain_id: u64,
    /// The stuck amount, human-readable.
    pub amount: String,
    /// Its USD value.
    #[serde(rename = "amountUSD")]
    pub amount_usd: f64,
    /// Success, failed or skipped.
    pub status: RecoveryStatus,
    /// Why it failed or was skipped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// The sweep's transaction (on success).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tx_hash: Option<String>,
    /// depositkit's addition: the stuck amount in smallest units (decimal string).
    pub raw_amount: String,
    /// depositkit's addition: what was delivered (on success).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub delivered: Option<DeliveredAmount>,
}

/// The id of the deposit that raised `account_id`'s cumulative `received` total of `token` on
/// `chain_id` from `from` to `to` (smallest units). The same deposit gets the same id in every
/// phase, in every process and after a restart; the clock plays no part.
pub fn deposit_id(
    account_id: &str,
    chain_id: u64,
    token: TokenType,
    from: U256,
    to: U256,
) -> String {
    let key =
        format!("depositkit/deposit/v1|{account_id}|{chain_id}|{}|{from}|{to}", token.symbol());
    id_of_key(&key)
}

/// `dep_` and the first 16 bytes of `key`'s keccak-256, in hex.
fn id_of_key(key: &str) -> String {
    let hash = alloy_primitives::keccak256(key.as_bytes());
    let hex: String = hash[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("dep_{hex}")
}

/// The id of the deposit a chain watcher reported first: the transfer at `index` of
/// `transaction` into `account_id`'s deposit address on `chain_id` (`docs/finality.md` §3). A
/// reorganisation that moves the transfer to another block keeps the id; a balance rise that
/// later shows the same money is claimed by this deposit and reports no other.
pub fn transfer_deposit_id(
    account_id: &str,
    chain_id: u64,
    transaction: &str,
    index: u32,
) -> String {
    // EVM hashes in any letter case are one transaction; Solana signatures are case-sensitive.
    let tx = if transaction.starts_with("0x") {
        transaction.to_ascii_lowercase()
    } else {
        transaction.to_owned()
    };
    id_of_key(&format!("depositkit/deposit/transfer/v1|{account_id}|{chain_id}|{tx}|{index}"))
}

/// The block-explorer link of `transaction` on `chain_id` (reference §5.8), for a service that
/// sent none.
pub fn explorer_tx_url(chain_id: u64, transaction: &str) -> Option<String> {
    let base = match chain_id {
        1 => "https://etherscan.io/tx/",
        10 => "https://optimistic.etherscan.io/tx/",
        56 => "https://bscscan.com/tx/",
        137 => "https://polygonscan.com/tx/",
        8453 => "https://basescan.org/tx/",
        42161 => "https://arbiscan.io/tx/",
        43114 => "https://snowscan.xyz/tx/",
        59144 => "https://lineascan.build/tx/",
        5000 => "https://mantlescan.xyz/tx/",
        4200 => "https://scan.merlinchain.io/tx/",
        196 => "https://www.okx.com/web3/explorer/xlayer/tx/",
        146 => "https://sonicscan.org/tx/",
        80094 => "https://berascan.com/tx/",
        101 => "https://solscan.io/tx/",
        _ => return None,
    };
    Some(format!("{base}{transaction}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_depend_on_the_deposit_only() {
        let a = deposit_id("acc_1", 8453, TokenType::USDC, U256::ZERO, U256::from(5_000_000u64));
        let b = deposit_id("acc_1", 8453, TokenType::USDC, U256::ZERO, U256::from(5_000_000u64));
        assert_eq!(a, b);
        assert!(a.starts_with("dep_") && a.len() == 36, "{a}");
        let others = [
            deposit_id("acc_2", 8453, TokenType::USDC, U256::ZERO, U256::from(5_000_000u64)),
            deposit_id("acc_1", 1, TokenType::USDC, U256::ZERO, U256::from(5_000_000u64)),
            deposit_id("acc_1", 8453, TokenType::USDT, U256::ZERO, U256::from(5_000_000u64)),
            deposit_id("acc_1", 8453, TokenType::USDC, U256::from(1u8), U256::from(5_000_000u64)),
            deposit_id("acc_1", 8453, TokenType::USDC, U256::ZERO, U256::from(5_000_001u64)),
        ];
        for other in others {
            assert_ne!(a, other);
        }
    }

    #[test]
    fn detected_deposit_serializes_camel_case_with_string_amounts() {
        let d = DetectedDeposit {
            id: "dep_x".into(),
            token: TokenType::ETH,
            chain_id: 8453,
            amount: "0.001".into(),
            amount_usd: 2.5,
            raw_amount: U256::from(1_000_000_000_000_000u64),
            decimals: 18,
            detected_at: 1,
        };
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["rawAmount"], "1000000000000000");
        assert_eq!(json["amountUSD"], 2.5);
        assert_eq!(json["chainId"], 8453);
        assert_eq!(json["token"], "ETH");
    }

    #[test]
    fn explorer_links() {
        assert_eq!(explorer_tx_url(42161, "0xab").unwrap(), "https://arbiscan.io/tx/0xab");
        assert_eq!(explorer_tx_url(999, "0xab"), None);
    }
}
