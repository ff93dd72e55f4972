//! [`ParticleBackend`]: the deposit engine's [`AccountBackend`] over Particle's service and a
//! server-side signer.
//!
//! - The universal account of a depositkit owner is owned by that owner's signer
//!   ([`SignerSource::signer_for`]): the account object's `ownerAddress` is the signer's
//!   address, EIP-55 (what viem's and ethers' `account.address` give).
//! - Balances: `universal_getPrimaryAssets` per account, a bounded number at once; the raw
//!   amounts come from each token's real decimals. Particle keeps no cumulative `received`.
//! - A quote of exactly a deposit (`docs/particle.md` §5): the deposit's USD value from the
//!   account's primary assets; a probe transaction for $0.01 of the destination token gives
//!   the gas and the fee rate (the original deposit SDK's method, the service fee included);
//!   `value × (1 − rate) − gas` is delivered first (never more than the original's
//!   `(value − gas) / (1 + rate)`; 90 % of it when the account cannot pay, as the original
//!   retries), then, when that transaction's own fees leave more than $0.01 and 0.1 % unspent,
//!   a closer one. An EVM destination gets a universal transaction with an ERC-20 (or native)
//!   transfer, as the original; a Solana destination and refunds a transfer (`transfer_v2`).
//! - The signature is the signer's EIP-191 signature of the root, made off the async workers
//!   (a host callback may block); the send is [`ParticleClient::send_once`]; its status is
//!   `universal_getTransaction`'s.

use std::sync::Arc;

use alloy_primitives::{B256, hex};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::amounts::wire_from_raw;
use super::answers::{
    AccountOptions, CreatedTransaction, FeeTotals, PrimaryAssets, TransactionState,
};
use super::assets::{NATIVE_ADDRESS, SOLANA_CHAIN_ID, TokenRef, token_kind};
use super::requests::{EvmCall, ExpectToken, TransferRequest, UniversalRequest};
use super::root::{SigningRoot, UserOpRef};
use super::{ErrorClass, ParticleClient};
use crate::chain::erc20::transfer_calldata;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::services::backend::{
    AccountBackend, AccountBalance, BackendAccount, BackendFuture, PreparedTransfer, SendFailure,
};
use crate::services::{
    Quote, QuoteFees, QuotePurpose, QuoteRequest, SendResult, SendStatus,
    TokenTransactionsResponse, TransactionsResponse, UaTransaction,
};
use crate::signer::{Signature65, SignerSource};
use crate::tokens::{TokenType, get_token_decimals};
use crate::units::{U256, format_units};

/// What a probe transaction is worth, in USD (the original deposit SDK's `PROBE_AMOUNT`).
const PROBE_USD: f64 = 0.01;
/// The LP rate assumed when a probe shows none (the original's `FALLBACK_LP_FEE_BUFFER`).
const FALLBACK_LP_RATE: f64 = 0.002;
/// What is asked again when the account cannot pay the estimate (the original's
/// `PROBE_RETRY_FACTOR`): the fees were more than the probe said.
const RETRY_FACTOR: f64 = 0.90;

/// Particle's service with a signer for every owner.
#[derive(Debug, Clone)]
pub struct ParticleBackend {
    client: ParticleClient,
    signers: Arc<dyn SignerSource>,
}

/// What a prepared transfer keeps for its send (`PreparedTransfer::backend`): the transaction
/// and what its root was computed from (the root and proofs are computed again from these).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Prepared {
    transaction_id: String,
    valid_until: u64,
    valid_after: u64,
    user_ops: Vec<PreparedOp>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PreparedOp {
    chain_id: u64,
    user_op_hash: String,
}

impl Prepared {
    fn of(created: &CreatedTransaction) -> Prepared {
        let signing = &created.signing;
        Prepared {
            transaction_id: created.transaction_id.clone(),
            valid_until: signing.valid_until,
            valid_after: signing.valid_after,
            user_ops: signing
                .user_ops
                .iter()
                .map(|op| PreparedOp {
                    chain_id: op.chain_id,
                    user_op_hash: op.user_op_hash.to_string(),
                })
                .collect(),
        }
    }
}

impl ParticleBackend {
    /// The backend of `client`, the owners' accounts signed for by `signers`.
    pub fn new(client: ParticleClient, signers: Arc<dyn SignerSource>) -> ParticleBackend {
        ParticleBackend { client, signers }
    }

    /// The client.
    pub fn client(&self) -> &ParticleClient {
        &self.client
    }

    /// The account object of an opened account.
    fn options(&self, account: &BackendAccount) -> AccountOptions {
        let mut options = self.client.account_options(&account.signer_address);
        options.smart_account_address = Some(account.evm_address.clone());
        options.solana_smart_account_address = Some(account.solana_address.clone());
        options
    }

    /// A transaction delivering `raw` of the destination (see the module's docs).
    async fn create(
        &self,
        options: &AccountOptions,
        request: &QuoteRequest,
        destination: TokenType,
        raw: U256,
    ) -> Result<CreatedTransaction> {
        let target = &request.destination;
        let token = TokenRef::of(destination, target.chain_id)?;
        let decimals = u32::from(get_token_decimals(destination, Some(target.chain_id)));
        let amount = wire_from_raw(raw, decimals)?;
        if request.purpose == QuotePurpose::Refund || target.chain_id == SOLANA_CHAIN_ID {
            let transfer = TransferRequest { token, amount, receiver: target.address.clone() };
            return self.client.create_transfer(options, &transfer).await;
        }
        let call = if token.address == NATIVE_ADDRESS {
            EvmCall::new(&target.address, &[], raw)
        } else {
            let receiver = target.address.parse().map_err(|_| {
                Error::configuration(format!(
                    "invalid destination address {}",
                    quote(&target.address)
                ))
            })?;
            EvmCall::new(&token.address, &transfer_calldata(receiver, raw), U256::ZERO)
        };
        let universal = UniversalRequest {
            chain_id: target.chain_id,
            expect_tokens: vec![ExpectToken { kind: token_kind(destination), amount }],
            transactions: vec![call],
        };
        self.client.create_universal(options, &universal).await
    }

    async fn quote_transfer(
        &self,
        account: &BackendAccount,
        request: &QuoteRequest,
    ) -> Result<PreparedTransfer> {
        let source: TokenType = request.source.token.parse()?;
        let destination: TokenType = request.destination.token.parse()?;
        let source_decimals = u32::from(get_token_decimals(source, Some(request.source.chain_id)));
        let destination_decimals =
            u32::from(get_token_decimals(destination, Some(request.destination.chain_id)));
        let options = self.options(account);
        let assets = self.client.primary_assets(&options).await?;
        let source_price = price(&assets, source, request.source.chain_id)?;
        let destination_price = if destination.is_stablecoin() {
            1.0
        } else {
            price(&assets, destination, request.destination.chain_id)?
        };
        let source_value_usd = whole(request.source.raw_amount, source_decimals) * source_price;
        let probe_raw =
            raw_for_usd(PROBE_USD, destination_price, destination_decimals).max(U256::from(1u8));
        let probe = self.create(&options, request, destination, probe_raw).await?;
        let below = || {
            Error::new(
                ErrorKind::Sweep,
                format!(
                    "the deposit is worth {source_value_usd:.6} USD, which does not cover the fees of delivering it"
                ),
            )
        };
        let rate = fee_rate(probe.fees.as_ref());
        let gas = probe.fees.map_or(0.0, |f| f.gas_fee_usd.max(0.0));
        let usd = first_estimate_usd(source_value_usd, rate, gas).ok_or_else(below)?;
        let raw_of = |usd: f64| raw_for_usd(usd, destination_price, destination_decimals);
        if raw_of(usd).is_zero() {
            return Err(below());
        }
        let (mut created, mut raw) = match self
            .create(&options, request, destination, raw_of(usd))
            .await
        {
            Ok(created) => (created, raw_of(usd)),
            // The estimate was short of the fees: 90 % of it once, as the original does.
            Err(e) if ErrorClass::of(&e) == Some(ErrorClass::InsufficientFunds) => {
                let retry = usd * RETRY_FACTOR;
                if retry < PROBE_USD || raw_of(retry).is_zero() {
                    return Err(e);
                }
                (self.create(&options, request, destination, raw_of(retry)).await?, raw_of(retry))
            }
            Err(e) => return Err(e),
        };
        // Its fees at full size show what is left over: one more, closer transaction when it
        // is worth it, else (or when the account cannot pay that one) this one.
        if let Some(better) =
            created.fees.as_ref().and_then(|f| refined_usd(source_value_usd, usd, f, rate))
        {
            match self.create(&options, request, destination, raw_of(better)).await {
                Ok(closer) => (created, raw) = (closer, raw_of(better)),
                Err(e) if ErrorClass::of(&e) == Some(ErrorClass::InsufficientFunds) => {}
                Err(e) => return Err(e),
            }
        }
        let fees = created.fees.unwrap_or_default();
        let quote = Quote {
            quote_id: created.transaction_id.clone(),
            root_hash: created.signing.root_hash.to_string(),
            expires_at: created.signing.valid_until.saturating_mul(1000),
            source_decimals,
            source_value_usd,
            destination_decimals,
            destination_raw_amount: raw,
            fees: QuoteFees {
                gas_usd: fees.gas_fee_usd,
                lp_usd: fees.lp_fee_usd,
                service_usd: fees.service_fee_usd,
                total_usd: fees.fee_usd,
            },
        };
        let backend = serde_json::to_value(Prepared::of(&created)).map_err(|e| {
            Error::new(ErrorKind::Internal, format!("the prepared transfer could not be kept: {e}"))
        })?;
        Ok(PreparedTransfer { quote, backend })
    }
}

/// The USD price of one whole `token` in `assets`: the asset's `price`, else its value over
/// its amount on `chain_id`.
fn price(assets: &PrimaryAssets, token: TokenType, chain_id: u64) -> Result<f64> {
    let asset = assets.assets.iter().find(|a| a.token() == Some(token));
    let from_holding = || {
        let holding =
            asset?.chains.iter().find(|c| c.chain_id == chain_id && !c.raw_amount.is_zero())?;
        Some(holding.amount_in_usd() / whole(holding.raw_amount, holding.real_decimals))
    };
    let usable = |p: &f64| p.is_finite() && *p > 0.0;
    asset.map(|a| a.price).filter(usable).or_else(from_holding).filter(usable).ok_or_else(|| {
        Error::new(
            ErrorKind::UniversalAccount,
            format!("the account's assets give no USD price for {token} on chain {chain_id}"),
        )
    })
}

/// `raw` smallest units as whole tokens.
fn whole(raw: U256, decimals: u32) -> f64 {
    format_units(raw, decimals).ok().and_then(|t| t.parse().ok()).unwrap_or(0.0)
}

/// The smallest units of a token at `price` with `decimals` worth `usd`, truncated.
fn raw_for_usd(usd: f64, price: f64, decimals: u32) -> U256 {
    let units = (usd / price * 10f64.powi(decimals as i32)).floor();
    if units.is_finite() && units >= 1.0 { U256::from(units as u128) } else { U256::ZERO }
}

/// The fee rate a probe shows: its LP and service fees over its $0.01 (the original measures
/// the LP fee so; the service fee of an own project counts too), else 0.2 %.
fn fee_rate(probe: Option<&FeeTotals>) -> f64 {
    let proportional = probe.map_or(0.0, |f| f.lp_fee_usd.max(0.0) + f.service_fee_usd.max(0.0));
    if proportional > 0.0 { (proportional / PROBE_USD).min(0.5) } else { FALLBACK_LP_RATE }
}

/// What to deliver of `value_usd` first, given the fee `rate` and `gas`:
/// `value × (1 − rate) − gas` — never more than the original's `(value − gas) / (1 + rate)`, and
/// payable whether the service takes its proportional fees from what is spent or on top of what
/// is delivered; `None` below $0.01.
fn first_estimate_usd(value_usd: f64, rate: f64, gas: f64) -> Option<f64> {
    let usd = value_usd * (1.0 - rate) - gas;
    (value_usd > 0.0 && usd >= PROBE_USD).then_some(usd)
}

/// A closer amount than `delivered_usd`, whose transaction's `fees` leave more than $0.01 and
/// 0.1 % of `value_usd` unspent: the rest, less its fees at `rate`. `None` when it is not worth
/// another transaction.
fn refined_usd(value_usd: f64, delivered_usd: f64, fees: &FeeTotals, rate: f64) -> Option<f64> {
    let spare = value_usd - delivered_usd - fees.fee_usd.max(0.0);
    (spare > PROBE_USD && spare > value_usd * 0.001).then_some(delivered_usd + spare * (1.0 - rate))
}

/// The transaction a prepared transfer sends, its root computed again from what was kept.
fn prepared(transfer: &PreparedTransfer) -> Result<CreatedTransaction> {
    let unusable = |why: String| {
        Error::new(
            ErrorKind::Internal,
            format!(
                "transfer {} carries no Particle transaction: {why}",
                quote(&transfer.quote.quote_id)
            ),
        )
    };
    let prepared: Prepared =
        serde_json::from_value(transfer.backend.clone()).map_err(|e| unusable(e.to_string()))?;
    let mut user_ops = Vec::with_capacity(prepared.user_ops.len());
    for op in &prepared.user_ops {
        let user_op_hash = op
            .user_op_hash
            .parse()
            .map_err(|_| unusable(format!("bad hash {}", quote(&op.user_op_hash))))?;
        user_ops.push(UserOpRef { chain_id: op.chain_id, user_op_hash });
    }
    let signing = SigningRoot::with_window(user_ops, prepared.valid_until, prepared.valid_after)?;
    if signing.root_hash.to_string() != transfer.quote.root_hash {
        return Err(unusable("its root hash does not match the quote's".to_owned()));
    }
    Ok(CreatedTransaction {
        transaction_id: prepared.transaction_id,
        signing,
        fees: None,
        result: Value::Null,
    })
}

fn parse_signature(text: &str) -> Result<Signature65> {
    let bytes = hex::decode(text.trim()).map_err(|_| {
        Error::invalid_argument(format!("the signature {} is not hex", quote(text)))
    })?;
    bytes.try_into().map_err(|bytes: Vec<u8>| {
        Error::invalid_argument(format!("the signature is {} bytes, not 65", bytes.len()))
    })
}

/// The engine's send result of what the service sent about transaction `id` (a send's answer or
/// `universal_getTransaction`'s record); `None` when it says the transaction was never sent.
/// The status is a `UA_TRANSACTION_STATUS` code (or `"success"`, `"pending"`, `"failed"`);
/// the transfer's hash (`txHash`, else the record's `transactionId`), the delivered amount and
/// an explorer link are taken where the service sends them (devnet does).
fn send_result_of(id: &str, value: &Value) -> Option<SendResult> {
    let text = |name: &str| {
        value.get(name).and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned)
    };
    let (status, failure) = match value.get("status") {
        Some(Value::Number(code)) => {
            let state = TransactionState::of(code.as_i64().unwrap_or(-1));
            let failure = match state {
                TransactionState::Failed(code) => Some(format!(
                    "the transaction ended {} ({code})",
                    TransactionState::code_name(code)
                )),
                _ => None,
            };
            (state.send_status()?, failure)
        }
        Some(Value::String(word)) if word == "success" => (SendStatus::Success, None),
        Some(Value::String(word)) if word == "failed" => (SendStatus::Failed, None),
        _ => (SendStatus::Pending, None),
    };
    let delivered = match value.get("deliveredRawAmount") {
        Some(Value::String(raw)) if !raw.is_empty() => Some(raw.clone()),
        Some(Value::Number(raw)) => Some(raw.to_string()),
        _ => None,
    };
    Some(SendResult {
        transaction_id: text("txHash").or_else(|| text("transactionId")).unwrap_or(id.to_owned()),
        status,
        explorer_url: text("explorerUrl"),
        delivered_raw_amount: delivered,
        error: text("error").or(failure),
        ..pending(id)
    })
}

/// A send of transaction `id` that is not final yet.
fn pending(id: &str) -> SendResult {
    SendResult {
        transaction_id: id.to_owned(),
        quote_id: id.to_owned(),
        status: SendStatus::Pending,
        explorer_url: None,
        delivered_raw_amount: None,
        error: None,
        deposit_id: None,
    }
}

/// An account's balance lines: one per token type and chain, the token's symbol upper-cased
/// (unknown types kept), entries without a chain left out.
fn balance_lines(assets: &PrimaryAssets) -> Vec<AccountBalance> {
    assets
        .assets
        .iter()
        .flat_map(|asset| {
            asset.chains.iter().filter(|c| c.chain_id != 0).map(move |holding| AccountBalance {
                chain_id: holding.chain_id,
                token: asset.token_type.to_ascii_uppercase(),
                decimals: holding.real_decimals,
                raw_amount: holding.raw_amount,
                received: None,
                price_usd: asset.price,
                value_usd: holding.amount_in_usd(),
            })
        })
        .collect()
}

impl AccountBackend for ParticleBackend {
    fn name(&self) -> &'static str {
        "particle"
    }

    fn open_account<'a>(&'a self, owner: &'a str) -> BackendFuture<'a, Result<BackendAccount>> {
        Box::pin(async move {
            let signer = self.signers.signer_for(owner)?;
            let address = signer.address().to_checksum(None);
            let options = self.client.open(&address).await?;
            Ok(BackendAccount {
                account_id: address.clone(),
                owner: owner.to_owned(),
                signer_address: address,
                evm_address: options.smart_account_address.unwrap_or_default(),
                solana_address: options.solana_smart_account_address.unwrap_or_default(),
            })
        })
    }

    fn balances<'a>(
        &'a self,
        accounts: &'a [BackendAccount],
    ) -> BackendFuture<'a, Vec<Result<Vec<AccountBalance>>>> {
        Box::pin(async move {
            let options: Vec<AccountOptions> = accounts.iter().map(|a| self.options(a)).collect();
            let answers = self.client.primary_assets_many(&options).await;
            answers.into_iter().map(|answer| answer.map(|assets| balance_lines(&assets))).collect()
        })
    }

    fn quote<'a>(
        &'a self,
        account: &'a BackendAccount,
        request: &'a QuoteRequest,
    ) -> BackendFuture<'a, Result<PreparedTransfer>> {
        Box::pin(self.quote_transfer(account, request))
    }

    fn sign<'a>(
        &'a self,
        account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
    ) -> BackendFuture<'a, Result<String>> {
        Box::pin(async move {
            let signer = self.signers.signer_for(&account.owner)?;
            let address = signer.address().to_checksum(None);
            if !address.eq_ignore_ascii_case(&account.signer_address) {
                return Err(Error::new(
                    ErrorKind::Authentication,
                    format!(
                        "the signer of owner {} is {address}, but the account is owned by {}",
                        quote(&account.owner),
                        quote(&account.signer_address)
                    ),
                ));
            }
            let root: B256 = transfer.quote.root_hash.parse().map_err(|_| {
                Error::new(
                    ErrorKind::Protocol,
                    format!(
                        "the root hash {} is not 32 bytes of hex",
                        quote(&transfer.quote.root_hash)
                    ),
                )
            })?;
            // A host callback may block (a KMS): off the async workers.
            let signature =
                tokio::task::spawn_blocking(move || signer.personal_sign(&root)).await.map_err(
                    |e| Error::new(ErrorKind::Internal, format!("the signing task failed: {e}")),
                )??;
            Ok(hex::encode_prefixed(signature))
        })
    }

    fn send_once<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
        signature: &'a str,
    ) -> BackendFuture<'a, Result<SendResult, SendFailure>> {
        Box::pin(async move {
            let transaction = prepared(transfer).map_err(SendFailure::Refused)?;
            let signature = parse_signature(signature).map_err(SendFailure::Refused)?;
            let id = &transaction.transaction_id;
            let answer = self.client.send_once(&transaction, &signature, &[]).await?;
            // Just sent: an answer without a final status (or saying "never sent") is pending.
            Ok(send_result_of(id, &answer.result).unwrap_or_else(|| pending(id)))
        })
    }

    fn send_status<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transfer: &'a PreparedTransfer,
    ) -> BackendFuture<'a, Result<Option<SendResult>>> {
        Box::pin(async move {
            let id = &transfer.quote.quote_id;
            let record = self.client.transaction(id).await?;
            if record.status.is_none() {
                return Err(Error::new(
                    ErrorKind::Protocol,
                    format!("transaction {} has no status", quote(id)),
                ));
            }
            Ok(send_result_of(id, &record.record))
        })
    }

    fn transactions<'a>(
        &'a self,
        account: &'a BackendAccount,
        page: u32,
        page_size: u32,
    ) -> BackendFuture<'a, Result<TransactionsResponse>> {
        Box::pin(async move {
            self.client.transactions(&self.options(account), page, page_size, None).await
        })
    }

    /// The SDK's `getTokenTransactions` has no page size: `page_size` is not sent.
    fn token_transactions<'a>(
        &'a self,
        account: &'a BackendAccount,
        chain_id: u64,
        token_address: &'a str,
        page_token: Option<&'a str>,
        _page_size: u32,
    ) -> BackendFuture<'a, Result<TokenTransactionsResponse>> {
        Box::pin(async move {
            let token = TokenRef { chain_id, address: token_address.to_owned() };
            self.client.token_transactions(&self.options(account), &token, page_token).await
        })
    }

    fn transaction<'a>(
        &'a self,
        _account: &'a BackendAccount,
        transaction_id: &'a str,
    ) -> BackendFuture<'a, Result<UaTransaction>> {
        Box::pin(async move {
            let record = self.client.transaction(transaction_id).await?;
            serde_json::from_value(record.record).map_err(|e| {
                Error::new(ErrorKind::Protocol, format!("universal_getTransaction: {e}"))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fees(gas: f64, lp: f64) -> FeeTotals {
        FeeTotals { fee_usd: gas + lp, gas_fee_usd: gas, lp_fee_usd: lp, ..Default::default() }
    }

    #[test]
    fn the_first_estimate_is_never_above_the_originals() {
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        // The original's fixture: $10, probe gas $0.03, LP $0.00002 → rate 0.2 %; it delivers
        // (10 − 0.03) / 1.002 = 9.9501; this 10 × 0.998 − 0.03 = 9.95.
        let rate = fee_rate(Some(&fees(0.03, 0.00002)));
        assert!((rate - 0.002).abs() < 1e-12);
        assert!(close(first_estimate_usd(10.0, rate, 0.03), 9.95));
        assert!(first_estimate_usd(10.0, rate, 0.03).unwrap() <= (10.0 - 0.03) / 1.002);
        // An own project's 1 % service fee counts; no fee data: 0.2 %.
        let service = FeeTotals { service_fee_usd: 0.0001, ..fees(0.03, 0.00002) };
        assert!((fee_rate(Some(&service)) - 0.012).abs() < 1e-12);
        assert_eq!(fee_rate(None), FALLBACK_LP_RATE);
        assert_eq!(fee_rate(Some(&fees(0.0, 0.0))), FALLBACK_LP_RATE);
        // Gas eats it all.
        assert_eq!(first_estimate_usd(0.035, 0.002, 0.03), None);
        assert_eq!(first_estimate_usd(0.0, 0.002, 0.0), None);
    }

    #[test]
    fn a_closer_amount_only_when_worth_another_transaction() {
        // $25, delivered 23.755 for $0.319 of fees: $0.926 unspent → 23.755 + 0.926 × 0.95.
        let spent = FeeTotals { fee_usd: 0.319, ..Default::default() };
        let better = refined_usd(25.0, 23.755, &spent, 0.05).unwrap();
        assert!((better - (23.755 + 0.926 * 0.95)).abs() < 1e-9, "{better}");
        // A few cents of $25, or less than $0.01: not worth it.
        let close = FeeTotals { fee_usd: 0.2, ..Default::default() };
        assert_eq!(refined_usd(25.0, 24.78, &close, 0.002), None);
        assert_eq!(
            refined_usd(1.0, 0.985, &FeeTotals { fee_usd: 0.006, ..Default::default() }, 0.002),
            None
        );
    }

    #[test]
    fn usd_to_smallest_units() {
        assert_eq!(raw_for_usd(9.950_099, 1.0, 6), U256::from(9_950_099u64));
        assert_eq!(raw_for_usd(25.0, 2500.0, 18), U256::from(10_000_000_000_000_000u64));
        assert_eq!(raw_for_usd(0.01, 1.0, 6), U256::from(10_000u64));
        assert_eq!(raw_for_usd(1e-12, 1.0, 6), U256::ZERO);
        assert_eq!(raw_for_usd(1.0, 0.0, 6), U256::ZERO);
    }

    #[test]
    fn send_results_from_answers_and_records() {
        let done = json!({"transactionId": "q_1", "status": 7, "txHash": "0xab",
            "deliveredRawAmount": "2440000", "explorerUrl": "https://arbiscan.io/tx/0xab"});
        let result = send_result_of("q_1", &done).unwrap();
        assert_eq!((result.transaction_id.as_str(), result.quote_id.as_str()), ("0xab", "q_1"));
        assert_eq!(result.status, SendStatus::Success);
        assert_eq!(result.delivered_raw_amount.as_deref(), Some("2440000"));
        assert_eq!(result.explorer_url.as_deref(), Some("https://arbiscan.io/tx/0xab"));
        let failed = send_result_of("q_1", &json!({"status": 6})).unwrap();
        assert_eq!((failed.status, failed.transaction_id.as_str()), (SendStatus::Failed, "q_1"));
        assert!(failed.error.unwrap().contains("EXECUTION_FAILED"));
        assert_eq!(
            send_result_of("q_1", &json!({"status": 5})).unwrap().status,
            SendStatus::Pending
        );
        assert_eq!(
            send_result_of("q_1", &json!({"status": "success"})).unwrap().status,
            SendStatus::Success
        );
        assert_eq!(send_result_of("q_1", &json!({})).unwrap().status, SendStatus::Pending);
        assert_eq!(send_result_of("q_1", &json!({"status": 0})), None, "never sent");
    }

    #[test]
    fn signatures_are_read_as_65_bytes_of_hex() {
        let text = format!("0x{}", "11".repeat(65));
        assert_eq!(parse_signature(&text).unwrap(), [0x11; 65]);
        assert!(parse_signature("0x1111").unwrap_err().message().contains("2 bytes"));
        assert!(parse_signature("zz").is_err());
    }
}
