//! [`FundingBalance`]: one balance of a funding wallet, as offered to the host.

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::tokens::TokenType;
use crate::units::U256;

/// Where a balance came from (`docs/funding.md` §3), in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BalanceSource {
    /// The host's balance provider ([`set_balance_provider`](crate::deposit::DepositClient::set_balance_provider)).
    #[serde(rename = "balanceProvider")]
    Provider,
    /// The chains' RPC endpoints (`funding.balanceProvider: "rpc"`).
    #[serde(rename = "rpc")]
    Rpc,
    /// The balance-data provider, called with `funding.apiKey`.
    #[serde(rename = "apiKey")]
    ApiKey,
    /// The host's reverse proxy (`funding.proxyUrl`).
    #[serde(rename = "proxyUrl")]
    Proxy,
    /// The maker's hosted proxy ([`DEFAULT_BALANCE_PROXY_URL`](crate::deposit::DEFAULT_BALANCE_PROXY_URL)).
    #[serde(rename = "hosted")]
    Hosted,
}

impl BalanceSource {
    /// The JSON spelling: `balanceProvider`, `rpc`, `apiKey`, `proxyUrl` or `hosted`.
    pub const fn as_str(self) -> &'static str {
        match self {
            BalanceSource::Provider => "balanceProvider",
            BalanceSource::Rpc => "rpc",
            BalanceSource::ApiKey => "apiKey",
            BalanceSource::Proxy => "proxyUrl",
            BalanceSource::Hosted => "hosted",
        }
    }

    /// How messages name the source (never with a key).
    pub(crate) fn describe(self) -> &'static str {
        match self {
            BalanceSource::Provider => "the host's balance provider",
            BalanceSource::Rpc => "RPC balance discovery",
            BalanceSource::ApiKey => "the balance API",
            BalanceSource::Proxy => "the balance proxy (funding.proxyUrl)",
            BalanceSource::Hosted => "the hosted balance proxy",
        }
    }
}

/// One balance of a funding wallet (spec §2 `FundingBalance`): opaque, built only by
/// [`get_wallet_balances`](crate::deposit::DepositClient::get_wallet_balances), and accepted
/// back only by the client that issued it.
///
/// Serializes to `{"chainId", "token", "tokenAddress", "decimals", "rawAmount", "priceUSD",
/// "valueUSD", "amount", "walletAddress", "source"}` (`rawAmount` a decimal string,
/// `tokenAddress` null for the chain's native asset).
#[derive(Debug, Clone, PartialEq)]
pub struct FundingBalance {
    pub(crate) client_id: u64,
    pub(crate) chain_id: u64,
    pub(crate) token: TokenType,
    pub(crate) token_address: Option<String>,
    pub(crate) decimals: u8,
    pub(crate) raw_amount: U256,
    pub(crate) amount: String,
    pub(crate) price_usd: Option<f64>,
    pub(crate) value_usd: Option<f64>,
    pub(crate) wallet_address: String,
    pub(crate) source: BalanceSource,
}

impl FundingBalance {
    /// The chain id.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// The token.
    pub fn token(&self) -> TokenType {
        self.token
    }

    /// The token's contract (EVM) or mint (Solana); `None` for the chain's native asset.
    pub fn token_address(&self) -> Option<&str> {
        self.token_address.as_deref()
    }

    /// The token's decimals on this chain.
    pub fn decimals(&self) -> u8 {
        self.decimals
    }

    /// The balance in the token's smallest unit.
    pub fn raw_amount(&self) -> U256 {
        self.raw_amount
    }

    /// The balance, human-readable (`"25.5"`).
    pub fn amount(&self) -> &str {
        &self.amount
    }

    /// The token's USD price, when the source priced it.
    pub fn price_usd(&self) -> Option<f64> {
        self.price_usd
    }

    /// The balance's USD value, when the source priced it.
    pub fn value_usd(&self) -> Option<f64> {
        self.value_usd
    }

    /// The funding wallet holding it: an EVM address EIP-55 checksummed, a Solana one base58.
    pub fn wallet_address(&self) -> &str {
        &self.wallet_address
    }

    /// Where the balance came from.
    pub fn source(&self) -> BalanceSource {
        self.source
    }

    /// Whether this is the chain's native asset.
    pub fn is_native(&self) -> bool {
        self.token_address.is_none()
    }

    /// The JSON of the type documentation.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Checks the balance was issued by client `client_id`.
    pub(crate) fn check_owner(&self, client_id: u64) -> Result<()> {
        if self.client_id != client_id {
            return Err(Error::invalid_argument(
                "this FundingBalance was issued by another client; pass a balance from this client's get_wallet_balances()",
            ));
        }
        Ok(())
    }
}

impl Serialize for FundingBalance {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            chain_id: u64,
            token: TokenType,
            token_address: Option<&'a str>,
            decimals: u8,
            raw_amount: String,
            #[serde(rename = "priceUSD")]
            price_usd: Option<f64>,
            #[serde(rename = "valueUSD")]
            value_usd: Option<f64>,
            amount: &'a str,
            wallet_address: &'a str,
            source: BalanceSource,
        }
        Wire {
            chain_id: self.chain_id,
            token: self.token,
            token_address: self.token_address.as_deref(),
            decimals: self.decimals,
            raw_amount: self.raw_amount.to_string(),
            price_usd: self.price_usd,
            value_usd: self.value_usd,
            amount: &self.amount,
            wallet_address: &self.wallet_address,
            source: self.source,
        }
        .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn sample(client_id: u64) -> FundingBalance {
        FundingBalance {
            client_id,
            chain_id: 8453,
            token: TokenType::USDC,
            token_address: Some("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into()),
            decimals: 6,
            raw_amount: U256::from(25_000_000u64),
            amount: "25".into(),
            price_usd: Some(1.0),
            value_usd: Some(25.0),
            wallet_address: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266".into(),
            source: BalanceSource::Rpc,
        }
    }

    #[test]
    fn serializes_to_the_documented_json() {
        assert_eq!(
            sample(1).to_json(),
            json!({"chainId": 8453, "token": "USDC",
                   "tokenAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
                   "decimals": 6, "rawAmount": "25000000", "priceUSD": 1.0, "valueUSD": 25.0,
                   "amount": "25", "walletAddress": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
                   "source": "rpc"})
        );
    }

    #[test]
    fn only_the_issuing_client_accepts_it() {
        sample(7).check_owner(7).unwrap();
        let err = sample(7).check_owner(8).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
    }
}
