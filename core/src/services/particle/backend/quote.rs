//! A quote of exactly one deposit on Particle (`docs/particle.md` §5): the deposit's USD value
//! from the account's primary assets; a probe transaction for $0.01 of the destination token
//! gives the gas and the fee rate (the original deposit SDK's method, the service fee
//! included); `value × (1 − rate) − gas` is delivered first (never more than the original's
//! `(value − gas) / (1 + rate)`; 90 % of it when the account cannot pay, as the original
//! retries), then, when that transaction's own fees leave more than $0.01 and 0.1 % unspent, a
//! closer one. An EVM destination gets a universal transaction with an ERC-20 (or native)
//! transfer, as the original; a Solana destination and refunds a transfer (`transfer_v2`).
//! A deposit whose fees take it all is refused with the engine's `BELOW_MINIMUM` code.

use super::super::ErrorClass;
use super::super::amounts::wire_from_raw;
use super::super::answers::{AccountOptions, CreatedTransaction, FeeTotals, PrimaryAssets};
use super::super::assets::{NATIVE_ADDRESS, SOLANA_CHAIN_ID, TokenRef, token_kind};
use super::super::requests::{EvmCall, ExpectToken, TransferRequest, UniversalRequest};
use super::ParticleBackend;
use super::transfer::Prepared;
use crate::chain::erc20::transfer_calldata;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::services::backend::{BELOW_MINIMUM, BackendAccount, PreparedTransfer};
use crate::services::{Quote, QuoteFees, QuotePurpose, QuoteRequest, ServiceError};
use crate::tokens::{TokenType, get_token_decimals};
use crate::units::{U256, format_units};

/// What a probe transaction is worth, in USD (the original deposit SDK's `PROBE_AMOUNT`).
const PROBE_USD: f64 = 0.01;
/// The LP rate assumed when a probe shows none (the original's `FALLBACK_LP_FEE_BUFFER`).
const FALLBACK_LP_RATE: f64 = 0.002;
/// What is asked again when the account cannot pay the estimate (the original's
/// `PROBE_RETRY_FACTOR`): the fees were more than the probe said.
const RETRY_FACTOR: f64 = 0.90;

impl ParticleBackend {
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

    pub(super) async fn quote_transfer(
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
            let message = format!(
                "the deposit is worth {source_value_usd:.6} USD, which does not cover the fees of delivering it"
            );
            // The engine reads the refusal by its code, as devnet's 422 `BELOW_MINIMUM`.
            let refusal = ServiceError {
                status: 422,
                code: BELOW_MINIMUM.to_owned(),
                message: message.clone(),
            };
            Error::new(ErrorKind::Sweep, message).with_source(refusal)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
