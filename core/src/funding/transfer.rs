//! What a funding transfer returns, and the failure messages both chains share
//! (`docs/funding.md` §4).

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::provider::ProviderError;
use crate::chains::get_chain_name;
use crate::error::{Error, ErrorKind};
use crate::tokens::TokenType;
use crate::units::U256;

/// A transfer [`fund_from_wallet`](crate::deposit::DepositClient::fund_from_wallet) made.
///
/// Serializes to `{"txHash", "chainId", "token", "rawAmount", "amount", "from", "to"}`
/// (`rawAmount` a decimal string).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FundingTransferResult {
    /// The transaction: a `0x` hash (EVM) or a base58 signature (Solana).
    pub tx_hash: String,
    /// The chain it was sent on.
    pub chain_id: u64,
    /// The token sent.
    pub token: TokenType,
    /// The amount in the token's smallest unit.
    #[serde(serialize_with = "as_decimal")]
    pub raw_amount: U256,
    /// The amount, human-readable.
    pub amount: String,
    /// The funding wallet.
    pub from: String,
    /// The deposit address that received it.
    pub to: String,
}

impl FundingTransferResult {
    /// The JSON of the type documentation.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

fn as_decimal<S: serde::Serializer>(value: &U256, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.to_string())
}

/// A [`ErrorKind::Funding`] error.
pub(crate) fn funding_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Funding, message)
}

/// A node's failure on `chain_id`: `RPC failure on <chain>: …`. A deadline that passed keeps
/// its own kind ([`ErrorKind::Timeout`]).
pub(crate) fn rpc_failure(chain_id: u64, error: Error) -> Error {
    let kind =
        if error.kind() == ErrorKind::Timeout { ErrorKind::Timeout } else { ErrorKind::Funding };
    Error::new(kind, format!("RPC failure on {}: {}", get_chain_name(chain_id), error.message()))
        .with_source(error)
}

/// A wallet's refusal or failure of `what` on `chain_id`, by its EIP-1193 code.
pub(crate) fn provider_failure(chain_id: u64, what: &str, error: &ProviderError) -> Error {
    let chain = get_chain_name(chain_id);
    let message = match error.code {
        ProviderError::USER_REJECTED => {
            format!("rejected by the wallet (4001): {}", error.message)
        }
        ProviderError::UNAUTHORIZED => {
            format!("the wallet did not authorize {what} (4100): {}", error.message)
        }
        ProviderError::UNRECOGNIZED_CHAIN => {
            format!("the wallet does not know {chain} (4902): {}", error.message)
        }
        code => format!("RPC failure on {chain}: {what}: {} ({code})", error.message),
    };
    funding_error(message)
}

/// The end of a blocking call: waits inside it stop a little before, so that their own error
/// (which names the transaction) reaches the caller instead of a bare timeout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline(Instant);

impl Deadline {
    /// `call_timeout` from now, less a margin of a tenth (at most a second).
    pub(crate) fn within(call_timeout: Duration) -> Deadline {
        let margin = (call_timeout / 10).min(Duration::from_secs(1));
        Deadline(Instant::now() + call_timeout.saturating_sub(margin))
    }

    /// The time left.
    pub(crate) fn remaining(self) -> Duration {
        self.0.saturating_duration_since(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn result_json() {
        let r = FundingTransferResult {
            tx_hash: "0xab".into(),
            chain_id: 8453,
            token: TokenType::ETH,
            raw_amount: U256::from(10u64).pow(U256::from(18u64)),
            amount: "1".into(),
            from: "0xf3".into(),
            to: "0x70".into(),
        };
        assert_eq!(
            r.to_json(),
            json!({"txHash": "0xab", "chainId": 8453, "token": "ETH",
                   "rawAmount": "1000000000000000000", "amount": "1", "from": "0xf3", "to": "0x70"})
        );
    }

    #[test]
    fn provider_codes_become_messages() {
        let m = |code| {
            provider_failure(8453, "eth_sendTransaction", &ProviderError::new(code, "no"))
                .to_string()
        };
        assert_eq!(m(4001), "rejected by the wallet (4001): no");
        assert_eq!(m(4100), "the wallet did not authorize eth_sendTransaction (4100): no");
        assert_eq!(m(4902), "the wallet does not know Base (4902): no");
        assert_eq!(m(-32000), "RPC failure on Base: eth_sendTransaction: no (-32000)");
        let e = provider_failure(1, "x", &ProviderError::rejected("no"));
        assert_eq!(e.kind(), ErrorKind::Funding);
    }
}
