//! Pricing an [`Order`]: the balance line that pays and the amounts, with the arithmetic of
//! `docs/protocol.md` §3 ([`crate::services::fees`]).

use alloy_primitives::U256;
use depositkit_core::{TokenType, get_token_decimals};

use super::super::rpc::{self as prpc, Call, codes, from_api, internal, invalid};
use super::{Order, Want};
use crate::chain::ledger_sync::Scope;
use crate::chain::transfers;
use crate::rpc::RpcError;
use crate::services::api::codes as api_codes;
use crate::services::fees::{self, MathError, QuoteInput, QuoteMath, RefundInput};
use crate::store::{BalanceLine, Purpose, UaAccount};

/// The quote of an order.
pub(super) struct Priced {
    pub src: (u64, TokenType),
    pub src_raw: U256,
    pub dst_raw: U256,
    pub math: QuoteMath,
    pub purpose: Purpose,
}

/// Prices `order`: the line paying and the amounts.
pub(super) fn price(
    call: &Call<'_>,
    account: &UaAccount,
    order: &Order,
) -> Result<Priced, RpcError> {
    let services = call.services;
    if let Some(chains) = services.chain_backed(order.dst_chain)
        && chains.config().asset(order.dst_chain, order.dst_token).is_none()
    {
        return Err(prpc::error(
            codes::INVALID_PARAMS,
            api_codes::UNSUPPORTED_ROUTE,
            format!(
                "{} is not deployed on the local chain {} (a chain-backed chain)",
                order.dst_token, order.dst_chain
            ),
        ));
    }
    services.observe(account, Scope::All).map_err(from_api)?;
    let lines = services.store.ua_balances(&account.id).map_err(internal)?;
    let math = |src: (u64, TokenType), raw: U256| -> Result<QuoteMath, MathError> {
        quote_math(call, src, (order.dst_chain, order.dst_token), raw)
    };
    match &order.want {
        Want::Spend { chain_id, token, raw } => {
            let held = lines
                .iter()
                .find(|l| (l.chain_id, l.token) == (*chain_id, *token))
                .map_or(U256::ZERO, |l| l.raw_amount);
            if held < *raw {
                return Err(insufficient(format!(
                    "the account holds {held} of {token} on chain {chain_id}, less than {raw}"
                )));
            }
            if services.chain_backed(*chain_id).is_some() {
                transfers::check_keys(account, *chain_id).map_err(|e| from_api(e.into()))?;
            }
            let math = math((*chain_id, *token), *raw).map_err(math_error)?;
            Ok(Priced {
                src: (*chain_id, *token),
                src_raw: *raw,
                dst_raw: math.delivered,
                math,
                purpose: Purpose::Sweep,
            })
        }
        Want::Exactly { raw: needed, pay_with } => {
            for line in candidates(call, &lines, order, pay_with) {
                if services.chain_backed(line.chain_id).is_some()
                    && transfers::check_keys(account, line.chain_id).is_err()
                {
                    continue;
                }
                let src = (line.chain_id, line.token);
                let Some(spend) = least_spend(line.raw_amount, *needed, |r| math(src, r).ok())
                else {
                    continue;
                };
                let math = math(src, spend).map_err(math_error)?;
                let same = src == (order.dst_chain, order.dst_token);
                let purpose = if same && order.tag == "transfer_v2" {
                    Purpose::Refund
                } else {
                    Purpose::Sweep
                };
                return Ok(Priced { src, src_raw: spend, dst_raw: *needed, math, purpose });
            }
            Err(insufficient(format!(
                "Insufficient primary token balance: no balance of the account can deliver \
                 {needed} of {} on chain {} with the fees",
                order.dst_token, order.dst_chain
            )))
        }
    }
}

/// The lines that may pay, best first: the destination token on its chain, that token on other
/// chains, then the other allowed types by USD value.
fn candidates<'a>(
    call: &Call<'_>,
    lines: &'a [BalanceLine],
    order: &Order,
    pay_with: &[TokenType],
) -> Vec<&'a BalanceLine> {
    let held: Vec<&BalanceLine> = lines.iter().filter(|l| !l.raw_amount.is_zero()).collect();
    let value = |l: &BalanceLine| {
        let decimals = get_token_decimals(l.token, Some(l.chain_id));
        fees::value(l.raw_amount, decimals, call.services.prices.usd(l.token)).unwrap_or(U256::MAX)
    };
    let mut out: Vec<&BalanceLine> = held
        .iter()
        .copied()
        .filter(|l| (l.chain_id, l.token) == (order.dst_chain, order.dst_token))
        .collect();
    out.extend(
        held.iter()
            .copied()
            .filter(|l| l.token == order.dst_token && l.chain_id != order.dst_chain),
    );
    let mut others: Vec<&BalanceLine> = held
        .iter()
        .copied()
        .filter(|l| l.token != order.dst_token && pay_with.contains(&l.token))
        .collect();
    others.sort_by_key(|l| std::cmp::Reverse(value(l)));
    out.extend(others);
    out
}

/// The least amount of a line holding `held` whose quote delivers at least `needed`.
fn least_spend(
    held: U256,
    needed: U256,
    quote: impl Fn(U256) -> Option<QuoteMath>,
) -> Option<U256> {
    let delivered = |raw: U256| quote(raw).map_or(U256::ZERO, |m| m.delivered);
    if held.is_zero() || delivered(held) < needed {
        return None;
    }
    // delivered() never decreases as the amount grows: bisect on it.
    let (mut low, mut high) = (U256::from(1u8), held);
    while low < high {
        let mid = low + (high - low) / U256::from(2u8);
        if delivered(mid) >= needed { high = mid } else { low = mid + U256::from(1u8) }
    }
    Some(high)
}

/// The quote of `raw` from `src` to `dst`: a refund's (the gas only) when they are the same
/// token on the same chain, else a sweep's (gas, LP and, for a project of the caller's own, the
/// service fee).
fn quote_math(
    call: &Call<'_>,
    src: (u64, TokenType),
    dst: (u64, TokenType),
    raw: U256,
) -> Result<QuoteMath, MathError> {
    let prices = &call.services.prices;
    let gas_usd = prices.gas_usd(dst.0);
    let src_decimals = get_token_decimals(src.1, Some(src.0));
    if src == dst {
        return fees::refund(&RefundInput {
            raw,
            decimals: src_decimals,
            price_usd: prices.usd(src.1),
            gas_usd,
        });
    }
    fees::quote(&QuoteInput {
        src_raw: raw,
        src_decimals,
        src_price_usd: prices.usd(src.1),
        dst_decimals: get_token_decimals(dst.1, Some(dst.0)),
        dst_price_usd: prices.usd(dst.1),
        gas_usd,
        service_fee: call.service_fee(),
    })
}

fn math_error(error: MathError) -> RpcError {
    match error {
        MathError::BelowMinimum => prpc::error(
            codes::BELOW_MINIMUM,
            api_codes::BELOW_MINIMUM,
            "the value does not cover the fees",
        ),
        MathError::TooLarge => invalid(1, "the amount is too large to price"),
    }
}

fn insufficient(message: String) -> RpcError {
    prpc::error(codes::INSUFFICIENT_BALANCE, api_codes::INSUFFICIENT_BALANCE, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_spend_is_found() {
        // delivered = raw − 7, nothing below 8.
        let quote = |raw: U256| {
            (raw > U256::from(7u8)).then(|| QuoteMath {
                value: raw,
                gas: U256::ZERO,
                lp: U256::ZERO,
                service: U256::ZERO,
                total: U256::ZERO,
                delivered: raw - U256::from(7u8),
            })
        };
        assert_eq!(least_spend(U256::from(100u8), U256::from(10u8), quote), Some(U256::from(17u8)));
        assert_eq!(least_spend(U256::from(16u8), U256::from(10u8), quote), None);
        assert_eq!(least_spend(U256::ZERO, U256::from(1u8), quote), None);
    }
}
