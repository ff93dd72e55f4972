//! The parameters of the calls, shaped and ordered as the SDK sends them
//! (`particle-ua-wire.md` §4.3–4.5). Typed structs, not JSON maps, so that keys keep the SDK's
//! order on the wire.

use alloy_primitives::Bytes;
use serde::Serialize;

use super::amounts::to_hex;
use super::assets::TokenRef;
use crate::error::Result;
use crate::units::U256;

/// A transfer (`createTransferTransaction`): `amount` of `token` to `receiver`, on the token's
/// chain, paid from the account's primary tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferRequest {
    /// The token delivered.
    pub token: TokenRef,
    /// How much, as an 18-decimal wire amount ([`wire_from_raw`](super::amounts::wire_from_raw)
    /// of the token's smallest units).
    pub amount: U256,
    /// Who receives it.
    pub receiver: String,
}

/// A token a universal transaction must have on its chain before its calls run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectToken {
    /// The token type (`"usdc"`).
    pub kind: String,
    /// How much, as an 18-decimal wire amount.
    pub amount: U256,
}

/// An EVM call of a universal transaction, copied to the wire as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvmCall {
    /// The contract or receiver.
    pub to: String,
    /// The calldata, `0x` hex.
    pub data: String,
    /// The native value, `0x` hex (not converted: wei).
    pub value: String,
}

impl EvmCall {
    /// A call of `to` with `data` and native `value` (wei).
    pub fn new(to: &str, data: &[u8], value: U256) -> EvmCall {
        EvmCall {
            to: to.to_owned(),
            data: Bytes::copy_from_slice(data).to_string(),
            value: to_hex(value),
        }
    }
}

/// A universal transaction (`createUniversalTransaction`): get `expect_tokens` onto `chain_id`
/// from whatever the account holds, then run `transactions` there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniversalRequest {
    /// The chain the calls run on.
    pub chain_id: u64,
    /// What must be there first.
    pub expect_tokens: Vec<ExpectToken>,
    /// The calls.
    pub transactions: Vec<EvmCall>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TransferParams<'a> {
    tag: &'static str,
    use_primary_tokens: &'a [String],
    receiver: &'a str,
    chain_id: u64,
    asset_tokens: [AssetToken; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AssetToken {
    amount: String,
    asset_id: String,
}

impl<'a> TransferParams<'a> {
    pub(super) fn new(
        request: &'a TransferRequest,
        use_primary_tokens: &'a [String],
    ) -> Result<Self> {
        Ok(TransferParams {
            tag: "transfer_v2",
            use_primary_tokens,
            receiver: &request.receiver,
            chain_id: request.token.chain_id,
            asset_tokens: [AssetToken {
                amount: to_hex(request.amount),
                asset_id: request.token.asset_id()?,
            }],
        })
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UniversalParams<'a> {
    fee: Fee<'a>,
    input_tokens: Vec<InputToken<'a>>,
    universal_transaction: UniversalTransaction<'a>,
    options: TradeOptions,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fee<'a> {
    token_types: &'a [String],
    request_zero_gas_fee: bool,
    request_zero_transaction_fee: bool,
}

#[derive(Serialize)]
struct InputToken<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UniversalTransaction<'a> {
    chain_id: u64,
    expect_tokens: Vec<ExpectTokenWire<'a>>,
    transactions: &'a [EvmCall],
}

#[derive(Serialize)]
struct ExpectTokenWire<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    amount: String,
}

/// The trade options (`tradeConfig` mapped): `slippage` in basis points, left out when 0.
#[derive(Serialize)]
struct TradeOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    slippage: Option<u32>,
}

impl<'a> UniversalParams<'a> {
    pub(super) fn new(
        request: &'a UniversalRequest,
        use_primary_tokens: &'a [String],
        slippage_bps: u32,
    ) -> Self {
        UniversalParams {
            fee: Fee {
                token_types: use_primary_tokens,
                request_zero_gas_fee: false,
                request_zero_transaction_fee: false,
            },
            input_tokens: use_primary_tokens.iter().map(|kind| InputToken { kind }).collect(),
            universal_transaction: UniversalTransaction {
                chain_id: request.chain_id,
                expect_tokens: request
                    .expect_tokens
                    .iter()
                    .map(|t| ExpectTokenWire { kind: &t.kind, amount: to_hex(t.amount) })
                    .collect(),
                transactions: &request.transactions,
            },
            options: TradeOptions { slippage: (slippage_bps > 0).then_some(slippage_bps) },
        }
    }
}

/// `sendTransaction`'s second parameter.
#[derive(Serialize)]
pub(super) struct Signatures {
    pub signatures: Vec<OpSignature>,
}

/// One op's signature.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct OpSignature {
    pub user_op_hash: String,
    pub signature: String,
    #[serde(rename = "eip7702AuthSignature", skip_serializing_if = "Option::is_none")]
    pub eip7702_auth_signature: Option<String>,
}

/// The history filter: the account's two addresses and, for `getTransactionsV2`, a tag.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Senders<'a> {
    pub sender: &'a str,
    pub solana_sender: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<&'a str>,
}

/// `{"page", "limit"}`.
#[derive(Serialize)]
pub(super) struct Page {
    pub page: u32,
    pub limit: u32,
}

/// `{"pageToken": … or null}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageToken<'a> {
    pub page_token: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::particle::amounts::parse_decimal;

    const PRIMARY: [&str; 2] = ["usdc", "usdt"];

    fn primary() -> Vec<String> {
        PRIMARY.iter().map(|s| (*s).to_owned()).collect()
    }

    /// `params[1]` of the document's transfer (§4.3), byte for byte.
    #[test]
    fn the_transfer_is_the_recorded_one() {
        let request = TransferRequest {
            token: TokenRef {
                chain_id: 42161,
                address: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831".into(),
            },
            amount: parse_decimal("10").unwrap(),
            receiver: "0x5555555555555555555555555555555555555555".into(),
        };
        let tokens = primary();
        let params = TransferParams::new(&request, &tokens).unwrap();
        assert_eq!(
            serde_json::to_string(&params).unwrap(),
            r#"{"tag":"transfer_v2","usePrimaryTokens":["usdc","usdt"],"receiver":"0x5555555555555555555555555555555555555555","chainId":42161,"assetTokens":[{"amount":"0x8ac7230489e80000","assetId":"usdc"}]}"#
        );
    }

    /// `params[1]` of the document's universal transaction (§4.3), byte for byte.
    #[test]
    fn the_universal_transaction_is_the_recorded_one() {
        let request = UniversalRequest {
            chain_id: 8453,
            expect_tokens: vec![ExpectToken {
                kind: "usdc".into(),
                amount: parse_decimal("2").unwrap(),
            }],
            transactions: vec![EvmCall::new(
                "0x6666666666666666666666666666666666666666",
                &[0xa9, 0x05, 0x9c, 0xbb],
                U256::ZERO,
            )],
        };
        let tokens = primary();
        let params = UniversalParams::new(&request, &tokens, 100);
        assert_eq!(
            serde_json::to_string(&params).unwrap(),
            r#"{"fee":{"tokenTypes":["usdc","usdt"],"requestZeroGasFee":false,"requestZeroTransactionFee":false},"inputTokens":[{"type":"usdc"},{"type":"usdt"}],"universalTransaction":{"chainId":8453,"expectTokens":[{"type":"usdc","amount":"0x1bc16d674ec80000"}],"transactions":[{"to":"0x6666666666666666666666666666666666666666","data":"0xa9059cbb","value":"0x0"}]},"options":{"slippage":100}}"#
        );
        // No slippage: options is {} (the SDK has no default).
        let params = UniversalParams::new(&request, &tokens, 0);
        assert!(serde_json::to_string(&params).unwrap().ends_with(r#""options":{}}"#));
    }

    /// The query parameters of §4.4–4.5.
    #[test]
    fn send_and_history_parameters() {
        let signatures = Signatures {
            signatures: vec![
                OpSignature {
                    user_op_hash: "0xa2".into(),
                    signature: "0x01".into(),
                    eip7702_auth_signature: Some("0x02".into()),
                },
                OpSignature {
                    user_op_hash: "0xb2".into(),
                    signature: "0x03".into(),
                    eip7702_auth_signature: None,
                },
            ],
        };
        assert_eq!(
            serde_json::to_string(&("TX-1", signatures)).unwrap(),
            r#"["TX-1",{"signatures":[{"userOpHash":"0xa2","signature":"0x01","eip7702AuthSignature":"0x02"},{"userOpHash":"0xb2","signature":"0x03"}]}]"#
        );
        let senders = Senders { sender: "0x2222", solana_sender: "9xQe", tag: Some("buy") };
        assert_eq!(
            serde_json::to_string(&(senders, Page { page: 1, limit: 20 })).unwrap(),
            r#"[{"sender":"0x2222","solanaSender":"9xQe","tag":"buy"},{"page":1,"limit":20}]"#
        );
        let senders = Senders { sender: "0x2222", solana_sender: "9xQe", tag: None };
        assert_eq!(
            serde_json::to_string(&("usdc", senders, PageToken { page_token: None })).unwrap(),
            r#"["usdc",{"sender":"0x2222","solanaSender":"9xQe"},{"pageToken":null}]"#
        );
    }
}
