//! Sweeps (`docs/protocol.md` §3): pricing a conversion of one deposit (`quote`), executing it
//! with the owner's signature (`send`, idempotent per quote), and asking what became of a quote
//! (`status`). A refund is a quote with `"purpose": "refund"`: the deposit goes back on its
//! source chain, in its own token, less the gas; it is sent and looked up like a sweep.
//!
//! When the source or the destination is a chain-backed chain (`docs/funding.md` §2), the
//! balance is the chain's and a send moves the money with real transactions
//! ([`crate::chain::transfers`]), under the account's lock; the answer then carries
//! `sourceTxHash`, and asking for the status of a sweep that stopped half-way completes it.

use alloy_primitives::{Address, B256, hex, keccak256};
use axum::http::StatusCode;
use depositkit_core::{
    Chain, TokenType, U256, get_token_decimals, is_supported_destination_token, parse_raw_amount,
    validate_address_for_chain,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{ApiError, ApiResult, codes};
use super::faults::SweepFaultMode;
use super::fees::{self, MathError, QuoteInput, QuoteMath, RefundInput};
use super::signer::{self, Wallet};
use super::{Services, explorer};
use crate::chain::ledger_sync::Scope;
use crate::chain::transfers::{self, Outcome};
use crate::chain::{Chains, SOLANA_CHAIN_ID, solana};
use crate::describe::quote as quoted;
use crate::store::{
    Purpose, QuoteRecord, SweepOutcome, SweepPlan, SweepRecord, UaAccount, new_tx_hash,
};
use crate::time;

/// Longest accepted `depositId`.
pub const MAX_DEPOSIT_ID_CHARS: usize = 128;

/// `POST /v1/sweeps/quote`'s body.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuoteRequest {
    pub account_id: String,
    /// `sweep` (the default) or `refund`.
    #[serde(default)]
    pub purpose: Option<String>,
    /// The caller's id of the deposit, recorded with the quote and echoed.
    #[serde(default)]
    pub deposit_id: Option<String>,
    pub source: SourceSpec,
    pub destination: DestinationSpec,
}

/// What to spend.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceSpec {
    pub chain_id: u64,
    pub token: String,
    pub raw_amount: String,
}

/// Where to deliver.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestinationSpec {
    pub chain_id: u64,
    pub token: String,
    pub address: String,
}

/// `POST /v1/sweeps/send`'s body.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendRequest {
    pub quote_id: String,
    pub signature: String,
}

/// Prices `request` for the session's `wallet`; `service_fee` when the caller sent
/// `X-UA-Project-Id` (sweeps only: a refund pays the gas only). The quote is stored and can be
/// sent until it expires.
///
/// # Errors
/// 400 `INVALID_REQUEST`, `UNSUPPORTED_ROUTE`, `INSUFFICIENT_BALANCE`, `BELOW_MINIMUM`;
/// 403 `NOT_YOUR_ACCOUNT`.
pub fn quote(
    services: &Services,
    wallet: &Wallet,
    request: &QuoteRequest,
    service_fee: bool,
) -> ApiResult {
    let account = owned_account(services, wallet, &request.account_id)?;
    let purpose = match request.purpose.as_deref() {
        None => Purpose::Sweep,
        Some(name) => Purpose::parse(name).ok_or_else(|| {
            ApiError::invalid(format!("purpose: {} is not \"sweep\" or \"refund\"", quoted(name)))
        })?,
    };
    if let Some(id) = &request.deposit_id
        && id.chars().count() > MAX_DEPOSIT_ID_CHARS
    {
        return Err(ApiError::invalid(format!(
            "depositId: at most {MAX_DEPOSIT_ID_CHARS} characters"
        )));
    }
    let (src, dst) = (&request.source, &request.destination);
    let src_chain = known_chain("source.chainId", src.chain_id)?;
    let src_token = token("source.token", &src.token)?;
    let src_raw = parse_raw_amount(&src.raw_amount)
        .map_err(|e| ApiError::invalid(format!("source.rawAmount: {}", e.message())))?;
    if src_raw.is_zero() {
        return Err(ApiError::invalid("source.rawAmount must be positive"));
    }
    let dst_chain = known_chain("destination.chainId", dst.chain_id)?;
    let dst_token = token("destination.token", &dst.token)?;
    match purpose {
        Purpose::Sweep if !is_supported_destination_token(dst_token, dst_chain.id()) => {
            return Err(ApiError::bad_request(
                codes::UNSUPPORTED_ROUTE,
                format!("{dst_token} cannot be delivered on {}", dst_chain.name()),
            ));
        }
        Purpose::Refund if (dst_chain, dst_token) != (src_chain, src_token) => {
            return Err(ApiError::invalid(format!(
                "a refund goes back on the source chain in the source token: the destination \
                 must be {src_token} on {} (chain id {}), not {dst_token} on chain id {}",
                src_chain.name(),
                src_chain.id(),
                dst_chain.id()
            )));
        }
        Purpose::Sweep | Purpose::Refund => {}
    }
    if purpose == Purpose::Sweep
        && let Some(chains) = services.chain_backed(dst_chain.id())
        && chains.config().asset(dst_chain.id(), dst_token).is_none()
    {
        return Err(ApiError::bad_request(
            codes::UNSUPPORTED_ROUTE,
            format!(
                "{dst_token} is not deployed on the local {} (a chain-backed chain)",
                dst_chain.name()
            ),
        ));
    }
    validate_address_for_chain(&dst.address, dst_chain.id())
        .map_err(|e| ApiError::invalid(format!("destination.address: {}", e.message())))?;
    if services.chain_backed(src_chain.id()).is_some() {
        // Money can only leave a chain-backed deposit address signed by its key; the balance
        // is the chain's.
        transfers::check_keys(&account, src_chain.id())?;
        services.observe(&account, Scope::Line(src_chain.id(), src_token))?;
    }

    let held = services
        .store
        .ua_balances(&account.id)
        .map_err(ApiError::internal)?
        .into_iter()
        .find(|l| l.chain_id == src_chain.id() && l.token == src_token)
        .map_or(U256::ZERO, |l| l.raw_amount);
    if held < src_raw {
        return Err(ApiError::bad_request(
            codes::INSUFFICIENT_BALANCE,
            format!(
                "the account holds {held} of {src_token} on {}, less than {src_raw}",
                src_chain.name()
            ),
        ));
    }

    let src_decimals = get_token_decimals(src_token, Some(src_chain.id()));
    let dst_decimals = get_token_decimals(dst_token, Some(dst_chain.id()));
    let src_price = services.prices.usd(src_token);
    let dst_price = services.prices.usd(dst_token);
    let gas_usd = services.prices.gas_usd(dst_chain.id());
    let math: Result<QuoteMath, MathError> = match purpose {
        Purpose::Sweep => fees::quote(&QuoteInput {
            src_raw,
            src_decimals,
            src_price_usd: src_price,
            dst_decimals,
            dst_price_usd: dst_price,
            gas_usd,
            service_fee,
        }),
        Purpose::Refund => fees::refund(&RefundInput {
            raw: src_raw,
            decimals: src_decimals,
            price_usd: src_price,
            gas_usd,
        }),
    };
    let math = math.map_err(|e| match e {
        MathError::BelowMinimum => {
            ApiError::bad_request(codes::BELOW_MINIMUM, "the value does not cover the fees")
        }
        MathError::TooLarge => ApiError::invalid("source.rawAmount is too large to price"),
    })?;

    if dst_chain.id() == SOLANA_CHAIN_ID
        && dst_token == TokenType::SOL
        && let Some(chains) = services.chain_backed(SOLANA_CHAIN_ID)
    {
        rent_exempt_delivery(chains, &dst.address, math.delivered)?;
    }

    let now = time::now_ms();
    let quote_id = format!("q_{}", hex::encode(rand::random::<[u8; 16]>()));
    let expires_at =
        now.saturating_add(i64::try_from(services.quote_ttl.as_millis()).unwrap_or(i64::MAX));
    let root_hash = keccak256(format!(
        "depositkit-devnet/quote/{quote_id}/{}/{}/{src_token}/{src_raw}/{}/{dst_token}/{}/{}/{expires_at}/{}/{}",
        account.id,
        src_chain.id(),
        dst_chain.id(),
        dst.address,
        math.delivered,
        purpose.as_str(),
        request.deposit_id.as_deref().unwrap_or_default(),
    ));
    let root_hash = format!("{root_hash:#x}");
    let mut body = json!({
        "quoteId": quote_id,
        "accountId": account.id,
        "purpose": purpose.as_str(),
        "rootHash": root_hash,
        "expiresAt": expires_at,
        "source": {
            "chainId": src_chain.id(),
            "token": src_token,
            "rawAmount": src_raw.to_string(),
            "decimals": src_decimals,
            "priceUSD": src_price,
            "valueUSD": fees::usd_f64(math.value),
        },
        "destination": {
            "chainId": dst_chain.id(),
            "token": dst_token,
            "address": dst.address,
            "decimals": dst_decimals,
            "priceUSD": dst_price,
            "rawAmount": math.delivered.to_string(),
        },
        "fees": {
            "gasUSD": fees::usd_f64(math.gas),
            "lpUSD": fees::usd_f64(math.lp),
            "serviceUSD": fees::usd_f64(math.service),
            "totalUSD": fees::usd_f64(math.total),
        },
    });
    if let Some(id) = &request.deposit_id {
        body["depositId"] = json!(id);
    }
    services
        .store
        .insert_quote(&QuoteRecord {
            id: quote_id,
            account_id: account.id,
            purpose,
            deposit_id: request.deposit_id.clone(),
            root_hash,
            src_chain_id: src_chain.id(),
            src_token,
            src_raw,
            src_price_usd: src_price,
            dst_chain_id: dst_chain.id(),
            dst_token,
            dst_address: dst.address.clone(),
            dst_raw: math.delivered,
            dst_price_usd: dst_price,
            body: body.to_string(),
            expires_at,
            created_at: now,
        })
        .map_err(ApiError::internal)?;
    Ok(body)
}

/// Executes a quote signed by the account's owner; the same answer again for a quote already
/// sent.
///
/// # Errors
/// 404 `UNKNOWN_QUOTE`, 403 `NOT_YOUR_ACCOUNT`, 400 `BAD_SIGNATURE` / `ROUTE_FAILED`, 410
/// `QUOTE_EXPIRED`, 409 `INSUFFICIENT_BALANCE`.
pub fn send(services: &Services, wallet: &Wallet, request: &SendRequest) -> ApiResult {
    let quote = known_quote(services, &request.quote_id)?;
    let account = owned_account(services, wallet, &quote.account_id)?;
    check_signature(&account, &quote, &request.signature)?;
    execute(services, &quote, &account)
}

/// The stored quote `quote_id`.
///
/// # Errors
/// 404 `UNKNOWN_QUOTE`.
pub(crate) fn known_quote(services: &Services, quote_id: &str) -> ApiResult<QuoteRecord> {
    services.store.quote(quote_id).map_err(ApiError::internal)?.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            codes::UNKNOWN_QUOTE,
            format!("no quote {}", quoted(quote_id)),
        )
    })
}

/// Executes `quote` of `account` once its owner's signature was checked (the same answer again
/// for a quote already sent): what `send` does after its checks, shared with the Particle
/// JSON-RPC's `universal_sendTransaction`.
///
/// # Errors
/// 410 `QUOTE_EXPIRED`, 400 `ROUTE_FAILED`, 409 `INSUFFICIENT_BALANCE`, 502 `CHAIN_UNAVAILABLE`.
pub(crate) fn execute(services: &Services, quote: &QuoteRecord, account: &UaAccount) -> ApiResult {
    if let Some(done) = services.store.sweep(&quote.id).map_err(ApiError::internal)? {
        return Ok(sweep_body(quote, &done));
    }
    if let Some(chains) = on_chains(services, quote) {
        return chains.with_account(&account.id, || {
            send_on_chains(services, chains, quote, account, Fresh::Allowed)
        });
    }
    let now = time::now_ms();
    if now > quote.expires_at {
        return Err(ApiError::new(
            StatusCode::GONE,
            codes::QUOTE_EXPIRED,
            format!("quote {} expired; quote again", quote.id),
        ));
    }
    let transaction_id = new_tx_hash();
    let plan = match services.sweep_faults.take() {
        Some(SweepFaultMode::Reject) => {
            return Err(ApiError::bad_request(
                codes::ROUTE_FAILED,
                "injected fault: the route was rejected; no money moved",
            ));
        }
        Some(SweepFaultMode::Fail) => SweepPlan::Fail {
            transaction_id,
            error: "injected fault: the sweep failed; the money stays in the account".into(),
        },
        None => SweepPlan::Deliver {
            explorer_url: explorer::tx_url(quote.dst_chain_id, &transaction_id),
            transaction_id,
        },
    };
    record(services, quote, &plan, now)
}

/// What became of quote `quote_id`.
///
/// # Errors
/// 404 `NOT_SENT` (never sent, or no such quote), 403 `NOT_YOUR_ACCOUNT`.
pub fn status(services: &Services, wallet: &Wallet, quote_id: &str) -> ApiResult {
    let not_sent = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            codes::NOT_SENT,
            format!("quote {} was not sent", quoted(quote_id)),
        )
    };
    let quote = services.store.quote(quote_id).map_err(ApiError::internal)?.ok_or_else(not_sent)?;
    let account = owned_account(services, wallet, &quote.account_id)?;
    outcome(services, &quote, &account)
}

/// What became of `quote` of `account`: its send's answer, a chain-backed sweep that stopped
/// half-way completed first (its money already moved).
///
/// # Errors
/// 404 `NOT_SENT`; 502 `CHAIN_UNAVAILABLE`.
pub(crate) fn outcome(services: &Services, quote: &QuoteRecord, account: &UaAccount) -> ApiResult {
    if let Some(done) = services.store.sweep(&quote.id).map_err(ApiError::internal)? {
        return Ok(sweep_body(quote, &done));
    }
    match on_chains(services, quote) {
        Some(chains) => chains.with_account(&account.id, || {
            send_on_chains(services, chains, quote, account, Fresh::NotSent)
        }),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            codes::NOT_SENT,
            format!("quote {} was not sent", quoted(&quote.id)),
        )),
    }
}

/// The chains a quote runs on, when its source or destination is chain-backed.
fn on_chains<'a>(services: &'a Services, quote: &QuoteRecord) -> Option<&'a Chains> {
    services.chain_backed(quote.src_chain_id).or_else(|| services.chain_backed(quote.dst_chain_id))
}

/// Whether [`send_on_chains`] may start a quote that has no legs yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fresh {
    /// A send: yes.
    Allowed,
    /// A status request: no, answer 404 `NOT_SENT`.
    NotSent,
}

/// Sends (or resumes) a quote whose source or destination is chain-backed, under the account's
/// lock: the legs run on the chains ([`transfers::run`]), then the outcome is recorded as for a
/// ledger sweep. A quote with legs already moved money, so it is completed whatever its expiry.
fn send_on_chains(
    services: &Services,
    chains: &Chains,
    quote: &QuoteRecord,
    account: &UaAccount,
    fresh: Fresh,
) -> ApiResult {
    let store = &services.store;
    if let Some(done) = store.sweep(&quote.id).map_err(ApiError::internal)? {
        return Ok(sweep_body(quote, &done));
    }
    let now = time::now_ms();
    if store.chain_legs(&quote.id).map_err(ApiError::internal)?.is_empty() {
        if fresh == Fresh::NotSent {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                codes::NOT_SENT,
                format!("quote {} was not sent", quoted(&quote.id)),
            ));
        }
        if now > quote.expires_at {
            return Err(ApiError::new(
                StatusCode::GONE,
                codes::QUOTE_EXPIRED,
                format!("quote {} expired; quote again", quote.id),
            ));
        }
        match services.sweep_faults.take() {
            Some(SweepFaultMode::Reject) => {
                return Err(ApiError::bad_request(
                    codes::ROUTE_FAILED,
                    "injected fault: the route was rejected; no money moved",
                ));
            }
            Some(SweepFaultMode::Fail) => {
                let plan = SweepPlan::Fail {
                    transaction_id: new_tx_hash(),
                    error: "injected fault: the sweep failed; the money stays in the account"
                        .into(),
                };
                return record(services, quote, &plan, now);
            }
            None => {}
        }
    }
    match transfers::run(chains, store, &services.prices, quote, account)? {
        Outcome::Settled(mut settlement) => {
            settlement.explorer_url =
                explorer::tx_url(quote.dst_chain_id, &settlement.transaction_id);
            record(services, quote, &SweepPlan::Settle(settlement), now)
        }
        Outcome::CollectFailed { transaction_id, error } => {
            let plan = SweepPlan::Fail {
                transaction_id: transaction_id.unwrap_or_else(new_tx_hash),
                error: format!(
                    "the collection from the deposit address failed: {error}; the money stays \
                     in the account"
                ),
            };
            record(services, quote, &plan, now)
        }
        Outcome::Insufficient => Err(insufficient()),
    }
}

/// Records the outcome of `quote` and answers it.
fn record(services: &Services, quote: &QuoteRecord, plan: &SweepPlan, now: i64) -> ApiResult {
    match services.store.execute_sweep(quote, plan, now).map_err(ApiError::from)? {
        SweepOutcome::Executed(done) | SweepOutcome::AlreadySent(done) => {
            Ok(sweep_body(quote, &done))
        }
        SweepOutcome::InsufficientBalance => Err(insufficient()),
    }
}

fn insufficient() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        codes::INSUFFICIENT_BALANCE,
        "the balance changed since the quote; no money moved",
    )
}

/// 400 `BELOW_MINIMUM` when `delivered` lamports would open a Solana account below the
/// rent-exempt minimum (the chain would refuse the delivery).
pub(crate) fn rent_exempt_delivery(
    chains: &Chains,
    address: &str,
    delivered: U256,
) -> ApiResult<()> {
    let chain = chains.solana()?;
    let receiver = solana::pubkey(address).map_err(ApiError::invalid)?;
    if chain.account_exists(&receiver)? {
        return Ok(());
    }
    let minimum = chain.rent_exempt_minimum()?;
    if delivered < U256::from(minimum) {
        return Err(ApiError::bad_request(
            codes::BELOW_MINIMUM,
            format!(
                "{address} has no Solana account yet: a delivery must be at least the \
                 rent-exempt minimum of {minimum} lamports, not {delivered}"
            ),
        ));
    }
    Ok(())
}

/// The account `account_id` when the session's wallet owns it.
///
/// # Errors
/// 403 `NOT_YOUR_ACCOUNT` (also for an unknown account).
pub fn owned_account(
    services: &Services,
    wallet: &Wallet,
    account_id: &str,
) -> ApiResult<UaAccount> {
    let owner = wallet.checksummed().to_ascii_lowercase();
    services
        .store
        .ua_account(account_id)
        .map_err(ApiError::internal)?
        .filter(|a| a.owner == owner)
        .ok_or_else(|| ApiError::not_yours(account_id))
}

fn check_signature(account: &UaAccount, quote: &QuoteRecord, signature: &str) -> ApiResult<()> {
    let bad = || {
        ApiError::bad_request(
            codes::BAD_SIGNATURE,
            "the signature is not the account owner's EIP-191 signature of rootHash",
        )
    };
    let root: B256 = quote.root_hash.parse().map_err(|_| ApiError::internal("stored rootHash"))?;
    let signature = hex::decode(signature.trim()).map_err(|_| bad())?;
    let owner: Address = account.owner.parse().map_err(|_| bad())?;
    match signer::recover(root.as_slice(), &signature) {
        Some(signer) if signer == owner => Ok(()),
        _ => Err(bad()),
    }
}

fn sweep_body(quote: &QuoteRecord, done: &SweepRecord) -> Value {
    let mut body = json!({
        "transactionId": done.transaction_id,
        "quoteId": done.quote_id,
        "status": done.status,
        "deliveredRawAmount": done.delivered.to_string(),
    });
    if let Some(id) = &quote.deposit_id {
        body["depositId"] = json!(id);
    }
    if let Some(url) = &done.explorer_url {
        body["explorerUrl"] = json!(url);
    }
    if let Some(hash) = &done.source_tx_hash {
        body["sourceTxHash"] = json!(hash);
    }
    if let Some(error) = &done.error {
        body["error"] = json!(error);
    }
    body
}

fn known_chain(field: &str, chain_id: u64) -> ApiResult<Chain> {
    Chain::from_id(chain_id)
        .ok_or_else(|| ApiError::invalid(format!("{field}: unknown chain id {chain_id}")))
}

fn token(field: &str, symbol: &str) -> ApiResult<TokenType> {
    symbol
        .parse()
        .map_err(|e: depositkit_core::Error| ApiError::invalid(format!("{field}: {}", e.message())))
}
