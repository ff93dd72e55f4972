//! The arithmetic of a sweep quote, exact in integers.
//!
//! USD amounts are counted in units of 10^-18 USD ("atto-USD"); prices and gas costs are taken
//! to 9 decimal places (rounded to the nearest 10^-9 USD). Then, with `raw` the source amount in
//! its smallest units:
//!
//! - `value    = floor(raw × price / 10^srcDecimals)`
//! - `lp       = floor(value × 20 / 10000)` (0.2%)
//! - `service  = floor(value × 100 / 10000)` (1%) when the caller sent `X-UA-Project-Id`, else 0
//! - `total    = gas + lp + service`
//! - `delivered = floor((value − total) × 10^dstDecimals / dstPrice)`
//!
//! Every step truncates, so `delivered` is at most one smallest unit below the exact result.
//! The JSON numbers of a quote are these exact values rounded to the nearest double.
//!
//! A refund ([`refund`]) pays the gas only, in the token itself:
//! `delivered = raw − ⌈gas × 10^decimals / price⌉` (the exact `raw − gas / price`, truncated),
//! and there is nothing to refund unless `value > gas` and `delivered > 0`.

use depositkit_core::{U256, format_units};

/// Decimal places of the USD unit the arithmetic counts in.
pub const USD_DECIMALS: u32 = 18;
/// Decimal places prices and gas costs are taken to.
pub const PRICE_DECIMALS: u32 = 9;
/// The LP fee, in basis points of the value.
pub const LP_FEE_BPS: u64 = 20;
/// The service fee charged when the host set its own project id, in basis points of the value.
pub const SERVICE_FEE_BPS: u64 = 100;

/// What a quote is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuoteInput {
    pub src_raw: U256,
    pub src_decimals: u8,
    pub src_price_usd: f64,
    pub dst_decimals: u8,
    pub dst_price_usd: f64,
    pub gas_usd: f64,
    pub service_fee: bool,
}

/// The result, amounts in atto-USD except `delivered` (destination smallest units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteMath {
    pub value: U256,
    pub gas: U256,
    pub lp: U256,
    pub service: U256,
    pub total: U256,
    pub delivered: U256,
}

/// Why no quote can be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathError {
    /// The value does not cover the fees, or nothing would be delivered.
    BelowMinimum,
    /// The amount is too large to price.
    TooLarge,
}

/// What a refund quote is computed from: the source token is also the destination token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefundInput {
    pub raw: U256,
    pub decimals: u8,
    pub price_usd: f64,
    pub gas_usd: f64,
}

/// Computes a refund (see the module documentation): `lp` and `service` are zero, `total` is
/// the gas.
///
/// # Errors
/// [`MathError`].
pub fn refund(input: &RefundInput) -> Result<QuoteMath, MathError> {
    let price = price_units(input.price_usd);
    if price.is_zero() {
        return Err(MathError::BelowMinimum);
    }
    let value = value(input.raw, input.decimals, input.price_usd).ok_or(MathError::TooLarge)?;
    let gas_units = price_units(input.gas_usd);
    let gas = gas_units * pow10(USD_DECIMALS - PRICE_DECIMALS);
    if value <= gas {
        return Err(MathError::BelowMinimum);
    }
    // Gas in the token's smallest units, rounded up so that `delivered` is truncated.
    let scaled =
        gas_units.checked_mul(pow10(u32::from(input.decimals))).ok_or(MathError::TooLarge)?;
    let gas_raw = scaled.div_ceil(price);
    let delivered =
        input.raw.checked_sub(gas_raw).filter(|d| !d.is_zero()).ok_or(MathError::BelowMinimum)?;
    Ok(QuoteMath { value, gas, lp: U256::ZERO, service: U256::ZERO, total: gas, delivered })
}

/// Computes a quote (see the module documentation).
///
/// # Errors
/// [`MathError`].
pub fn quote(input: &QuoteInput) -> Result<QuoteMath, MathError> {
    let to_usd = pow10(USD_DECIMALS - PRICE_DECIMALS);
    let dst_price = price_units(input.dst_price_usd);
    if dst_price.is_zero() {
        return Err(MathError::BelowMinimum);
    }
    let value =
        value(input.src_raw, input.src_decimals, input.src_price_usd).ok_or(MathError::TooLarge)?;
    let gas = price_units(input.gas_usd) * to_usd;
    let lp = value * U256::from(LP_FEE_BPS) / U256::from(10_000u64);
    let service = if input.service_fee {
        value * U256::from(SERVICE_FEE_BPS) / U256::from(10_000u64)
    } else {
        U256::ZERO
    };
    let total = gas + lp + service;
    let net = value.checked_sub(total).filter(|n| !n.is_zero()).ok_or(MathError::BelowMinimum)?;
    let delivered =
        net.checked_mul(pow10(u32::from(input.dst_decimals))).ok_or(MathError::TooLarge)?
            / (dst_price * to_usd);
    if delivered.is_zero() {
        return Err(MathError::BelowMinimum);
    }
    Ok(QuoteMath { value, gas, lp, service, total, delivered })
}

/// The atto-USD value of `raw` smallest units of a token with `decimals` at `price_usd`;
/// `None` when too large.
pub fn value(raw: U256, decimals: u8, price_usd: f64) -> Option<U256> {
    let scaled = raw
        .checked_mul(price_units(price_usd))?
        .checked_mul(pow10(USD_DECIMALS - PRICE_DECIMALS))?;
    Some(scaled / pow10(u32::from(decimals)))
}

/// `usd` in units of 10^-9 USD, rounded (negative and non-finite values count as zero).
pub fn price_units(usd: f64) -> U256 {
    let scaled = (usd * 1e9).round();
    if scaled.is_finite() && scaled > 0.0 {
        // Prices are at most 10^12 USD, so this fits a u128 exactly.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        U256::from(scaled as u128)
    } else {
        U256::ZERO
    }
}

/// An atto-USD amount as the nearest double.
pub fn usd_f64(atto: U256) -> f64 {
    format_units(atto, USD_DECIMALS).ok().and_then(|text| text.parse().ok()).unwrap_or(f64::MAX)
}

fn pow10(exponent: u32) -> U256 {
    U256::from(10u64).pow(U256::from(exponent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eth_to_usdc(raw: u64, service_fee: bool, dst_decimals: u8) -> Result<QuoteMath, MathError> {
        quote(&QuoteInput {
            src_raw: U256::from(raw),
            src_decimals: 18,
            src_price_usd: 2500.0,
            dst_decimals,
            dst_price_usd: 1.0,
            gas_usd: 0.03,
            service_fee,
        })
    }

    #[test]
    fn the_protocol_example() {
        // 0.001 ETH at 2500 = 2.5 USD; gas 0.03, LP 0.005, service 0.025 → 2.44 USDC.
        let q = eth_to_usdc(1_000_000_000_000_000, true, 6).unwrap();
        assert_eq!(usd_f64(q.value), 2.5);
        assert_eq!(usd_f64(q.gas), 0.03);
        assert_eq!(usd_f64(q.lp), 0.005);
        assert_eq!(usd_f64(q.service), 0.025);
        assert_eq!(usd_f64(q.total), 0.06);
        assert_eq!(q.delivered, U256::from(2_440_000u64));
        let q = eth_to_usdc(1_000_000_000_000_000, false, 6).unwrap();
        assert_eq!(q.service, U256::ZERO);
        assert_eq!(q.delivered, U256::from(2_465_000u64));
        // USDC on BNB Chain has 18 decimals.
        let q = eth_to_usdc(1_000_000_000_000_000, false, 18).unwrap();
        assert_eq!(q.delivered, U256::from(2_465_000_000_000_000_000u128));
    }

    #[test]
    fn truncation_and_limits() {
        // 1 wei of ETH is worth 2.5e-15 USD: nothing survives the gas.
        assert_eq!(eth_to_usdc(1, false, 6), Err(MathError::BelowMinimum));
        // Exactly the gas plus the LP fee: nothing left.
        let q = quote(&QuoteInput {
            src_raw: U256::from(30_060_120u64),
            src_decimals: 6,
            src_price_usd: 1.0,
            dst_decimals: 6,
            dst_price_usd: 3.0,
            gas_usd: 0.0,
            service_fee: false,
        })
        .unwrap();
        // value 30.06012, lp 0.06012024 → net 29.99999976 → / 3 = 9.99999992 → 9999999.
        assert_eq!(q.delivered, U256::from(9_999_999u64));
        let huge = QuoteInput {
            src_raw: U256::MAX,
            src_decimals: 0,
            src_price_usd: 1.0,
            dst_decimals: 6,
            dst_price_usd: 1.0,
            gas_usd: 0.0,
            service_fee: false,
        };
        assert_eq!(quote(&huge), Err(MathError::TooLarge));
        assert_eq!(price_units(0.1), U256::from(100_000_000u64));
        assert_eq!(price_units(-1.0), U256::ZERO);
    }

    fn refund_of(raw: u64, decimals: u8, price_usd: f64, gas_usd: f64) -> Result<U256, MathError> {
        refund(&RefundInput { raw: U256::from(raw), decimals, price_usd, gas_usd })
            .map(|q| q.delivered)
    }

    #[test]
    fn refunds_pay_the_gas_only() {
        // 25 USDC less 0.03 USD of gas.
        let q = refund(&RefundInput {
            raw: U256::from(25_000_000u64),
            decimals: 6,
            price_usd: 1.0,
            gas_usd: 0.03,
        })
        .unwrap();
        assert_eq!(q.delivered, U256::from(24_970_000u64));
        assert_eq!((usd_f64(q.value), usd_f64(q.gas), usd_f64(q.total)), (25.0, 0.03, 0.03));
        assert_eq!((q.lp, q.service), (U256::ZERO, U256::ZERO));
        // 0.001 ETH at 2500 less 0.03 USD = 0.000012 ETH.
        assert_eq!(
            refund_of(1_000_000_000_000_000, 18, 2500.0, 0.03),
            Ok(U256::from(988_000_000_000_000u64))
        );
        // Gas of 0.03 USD at a price of 3 is 0.01 token exactly; at 7, 0.0042857142… → rounded
        // up to 0.004286, so 1 token delivers 0.995714.
        assert_eq!(refund_of(1_000_000, 6, 3.0, 0.03), Ok(U256::from(990_000u64)));
        assert_eq!(refund_of(1_000_000, 6, 7.0, 0.03), Ok(U256::from(995_714u64)));
        // No gas: everything goes back.
        assert_eq!(refund_of(5, 6, 1.0, 0.0), Ok(U256::from(5u64)));
        // The value must exceed the gas.
        assert_eq!(refund_of(30_000, 6, 1.0, 0.03), Err(MathError::BelowMinimum));
        assert_eq!(refund_of(30_001, 6, 1.0, 0.03), Ok(U256::from(1u64)));
        assert_eq!(refund_of(1, 18, 2500.0, 0.03), Err(MathError::BelowMinimum));
        let huge = RefundInput { raw: U256::MAX, decimals: 0, price_usd: 1.0, gas_usd: 0.0 };
        assert_eq!(refund(&huge), Err(MathError::TooLarge));
    }
}
