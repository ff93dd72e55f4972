//! `universal_createTransaction [ACCT, spec]`: the SDK's five builders (`particle-ua-wire.md`
//! §4.3) as one devnet quote — one transfer out of one of the account's balance lines, priced
//! with the arithmetic of `docs/protocol.md` §3 ([`crate::services::fees`]) — with the user
//! operations the owner signs.
//!
//! - transfer (`tag` `transfer_v2`): exactly `assetTokens[0].amount` of the token on `chainId`
//!   to `receiver`;
//! - buy: `amountInUSD` worth of the token on `chainId` to the account's own deposit address;
//! - sell: exactly `amount` of the token on `chainId` is spent, what it buys of USDC there (else
//!   USDT; the native asset with `options.preferTokenType` 1) goes to the account's own address;
//! - universal (`universalTransaction` with `transactions`): the one ERC-20
//!   `transfer(address,uint256)` or native transfer (`value`, no `data`) of `transactions`,
//!   which `expectTokens` must cover;
//! - convert (the same without `transactions`): the one `expectTokens` entry on `chainId` to
//!   the account's own address.
//!
//! Except for a sell, the line paying is the first that can: the destination token on the
//! destination chain (then no conversion: the gas only, as a refund), then that token on other
//! chains, then the other token types allowed (`usePrimaryTokens`, `inputTokens`; all five
//! primary types by default), by value. It spends the least that delivers the amount (modules
//! `order` and `price`). None can: -32653.
//!
//! The transaction's id is the quote's (`q_…`). Its user operations are one per chain it
//! touches — the source chain's, then the destination chain's when it is another — with a
//! `userOpHash` derived from the quote: [`user_ops`]. They expire with the quote.

mod order;
mod price;

use alloy_primitives::{B256, U256, hex, keccak256};
use depositkit_core::{TokenType, get_token_decimals};
use serde_json::{Value, json};

use super::assets;
use super::rpc::{Call, from_api, internal};
use super::signing::UserOp;
use crate::rpc::RpcError;
use crate::services::fees::{self, QuoteMath};
use crate::services::sweeps;
use crate::store::{QuoteRecord, UaAccount};
use crate::time;
pub use order::{Order, Want};
use price::Priced;

/// `universal_createTransaction`.
///
/// # Errors
/// -32602 for what devnet cannot read or execute; -32653 when no balance can pay; -32654 when
/// the value does not cover the fees; -32659 when a chain fails.
pub fn create_transaction(call: &Call<'_>) -> Result<Value, RpcError> {
    let account = call.account(0)?;
    let order = order::read(call, &account)?;
    let priced = price::price(call, &account, &order)?;
    store_quote(call, &account, &order, &priced)
}

/// The user operations of a transaction: one per chain it touches, the source chain's first.
pub fn user_ops(quote: &QuoteRecord) -> Vec<UserOp> {
    let mut chains = vec![quote.src_chain_id];
    if quote.dst_chain_id != quote.src_chain_id {
        chains.push(quote.dst_chain_id);
    }
    chains
        .into_iter()
        .map(|chain_id| UserOp {
            chain_id,
            hash: keccak256(format!("depositkit-devnet/particle/userop/{}/{chain_id}", quote.id)),
        })
        .collect()
}

/// Stores the quote and answers the transaction.
fn store_quote(
    call: &Call<'_>,
    account: &UaAccount,
    order: &Order,
    priced: &Priced,
) -> Result<Value, RpcError> {
    let services = call.services;
    if order.dst_chain == crate::chain::SOLANA_CHAIN_ID
        && order.dst_token == TokenType::SOL
        && let Some(chains) = services.chain_backed(order.dst_chain)
    {
        sweeps::rent_exempt_delivery(chains, &order.dst_address, priced.dst_raw)
            .map_err(from_api)?;
    }
    let now = time::now_ms();
    let quote_id = format!("q_{}", hex::encode(rand::random::<[u8; 16]>()));
    let expires_at =
        now.saturating_add(i64::try_from(services.quote_ttl.as_millis()).unwrap_or(i64::MAX));
    let (src_chain, src_token) = priced.src;
    let root_hash: B256 = keccak256(format!(
        "depositkit-devnet/particle/{quote_id}/{}/{src_chain}/{src_token}/{}/{}/{}/{}/{}/\
         {expires_at}",
        account.id,
        priced.src_raw,
        order.dst_chain,
        order.dst_token,
        order.dst_address,
        priced.dst_raw,
    ));
    let mut quote = QuoteRecord {
        id: quote_id,
        account_id: account.id.clone(),
        purpose: priced.purpose,
        deposit_id: None,
        root_hash: format!("{root_hash:#x}"),
        src_chain_id: src_chain,
        src_token,
        src_raw: priced.src_raw,
        src_price_usd: services.prices.usd(src_token),
        dst_chain_id: order.dst_chain,
        dst_token: order.dst_token,
        dst_address: order.dst_address.clone(),
        dst_raw: priced.dst_raw,
        dst_price_usd: services.prices.usd(order.dst_token),
        body: String::new(),
        expires_at,
        created_at: now,
    };
    let answer = transaction_body(account, order.tag, &quote, &priced.math);
    quote.body = answer.to_string();
    services.store.insert_quote(&quote).map_err(internal)?;
    Ok(answer)
}

/// A created transaction as answered (and stored with its quote).
fn transaction_body(
    account: &UaAccount,
    tag: &str,
    quote: &QuoteRecord,
    math: &QuoteMath,
) -> Value {
    let side = |chain_id: u64, token: TokenType, raw: U256, price: f64| {
        let decimals = get_token_decimals(token, Some(chain_id));
        json!({
            "token": assets::token_object(token, chain_id),
            "rawAmount": raw.to_string(),
            "amount": assets::hex(assets::to_18(raw, decimals)),
            "amountInUSD": assets::hex(fees::value(raw, decimals, price).unwrap_or(U256::MAX)),
        })
    };
    let ops: Vec<Value> = user_ops(quote)
        .iter()
        .map(|op| {
            let solana = op.chain_id == super::signing::SOLANA_CHAIN_ID;
            json!({
                "chainId": op.chain_id,
                "userOpHash": format!("{:#x}", op.hash),
                "userOp": {
                    "sender": account.deposit_address(op.chain_id),
                    "signature": if solana { "" } else { "0x" },
                },
            })
        })
        .collect();
    let mut destination =
        side(quote.dst_chain_id, quote.dst_token, quote.dst_raw, quote.dst_price_usd);
    destination["address"] = json!(quote.dst_address);
    json!({
        "transactionId": quote.id,
        "tag": tag,
        "sender": account.evm_address,
        "solanaSender": account.solana_address,
        "receiver": quote.dst_address,
        "chainId": quote.dst_chain_id,
        "expiresAt": quote.expires_at,
        "tokenChanges": {
            "decr": [side(quote.src_chain_id, quote.src_token, quote.src_raw, quote.src_price_usd)],
            "incr": [destination],
        },
        "feeQuotes": [{
            "fees": {
                "totals": {
                    "feeTokenAmountInUSD": assets::hex(math.total),
                    "gasFeeTokenAmountInUSD": assets::hex(math.gas),
                    "transactionLPFeeTokenAmountInUSD": assets::hex(math.lp),
                    "transactionServiceFeeTokenAmountInUSD": assets::hex(math.service),
                    "freeGasFee": false,
                    "freeServiceFee": math.service.is_zero(),
                },
            },
            "userOps": ops,
        }],
    })
}
