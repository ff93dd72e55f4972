//! What a funding transfer returns, and the failure messages both chains share
//! (`docs/funding.md` §4).

use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::balance::FundingBalance;
use super::provider::ProviderError;
use crate::chains::get_chain_name;
use crate::describe::quote;
use crate::error::{Error, ErrorKind};
use crate::tokens::TokenType;
use crate::units::{U256, format_units};

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

/// `value` in whole units of a token with `decimals`, with its symbol (`"1.5 ETH"`).
pub(crate) fn human(value: U256, decimals: u8, symbol: &str) -> String {
    match format_units(value, u32::from(decimals)) {
        Ok(text) => format!("{text} {symbol}"),
        Err(_) => format!("{value} raw {symbol}"),
    }
}

/// The deposit address `to`, parsed; the client made it, so a failure is an internal error
/// (`what`: "an EVM address", "a Solana address").
pub(crate) fn deposit_address<T: FromStr>(to: &str, what: &str) -> Result<T, Error> {
    to.parse().map_err(|_| {
        Error::new(ErrorKind::Internal, format!("deposit address {} is not {what}", quote(to)))
    })
}

/// The error for a `balance` read from another wallet than the `family` ("EVM", "Solana")
/// wallet connected now.
pub(crate) fn other_wallet(balance: &FundingBalance, family: &str, connected: &str) -> Error {
    funding_error(format!(
        "this balance belongs to wallet {}, but the connected {family} wallet is {connected}; call get_wallet_balances() again",
        balance.wallet_address()
    ))
}

/// The checks of a native transfer of `amount` from a wallet holding `held`, of which `fee`
/// goes to the network, so that at most `max` (`held - fee`) can be sent. `fee_use` names the
/// fee in messages ("gas", "the fee"); `show` writes an amount with its symbol.
pub(crate) fn check_native_amount(
    amount: U256,
    held: U256,
    fee: U256,
    max: U256,
    fee_use: &str,
    show: impl Fn(U256) -> String,
) -> Result<(), Error> {
    if amount > held {
        return Err(funding_error(format!(
            "insufficient funds: sending {} needs more than the wallet's {}",
            show(amount),
            show(held)
        )));
    }
    if amount > max {
        return Err(funding_error(format!(
            "insufficient gas: sending {} leaves {} for {fee_use}, which needs {}; send at most {}",
            show(amount),
            show(held - amount),
            show(fee),
            show(max)
        )));
    }
    Ok(())
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

    /// The moment itself.
    pub(crate) fn at(self) -> Instant {
        self.0
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
