//! Sweeps and refunds on the chains (`docs/funding.md` §2), as up to three transactions — legs —
//! each stored signed before it is broadcast ([`crate::store::Leg`]):
//!
//! 1. `gas` (EVM source): the vault sends the deposit address exactly the gas of the collection
//!    (`gasLimit × gasPrice` of a legacy transaction);
//! 2. `collect` (chain-backed source): the deposit address sends `source.rawAmount` to the vault,
//!    signed by its derived key (on Solana the vault pays the fee as fee payer);
//! 3. `deliver` (chain-backed destination): the vault sends `destination.rawAmount` to the
//!    receiver (native transfer, ERC-20 `transfer`, or SOL / SPL `TransferChecked` creating the
//!    receiver's associated token account).
//!
//! A leg's line changes (gas sent, collected, gas paid) are applied when its fate is known, in the
//! same database transaction that marks it. A send that stopped half-way (a node down, a receipt
//! late) is resumed by the next send of the same quote: stored legs are settled — their receipt
//! read, or the same signed bytes broadcast again, which cannot pay twice — and only missing or
//! failed ones are made anew. The caller holds the account's lock.

use std::sync::MutexGuard;

use alloy_primitives::{Address, B256, U256};
use depositkit_core::TokenType;
use depositkit_core::chain::erc20;
use depositkit_core::chain::solana_tx::{Pubkey, Signature};

use super::config::{Asset, SOLANA_CHAIN_ID, native_token};
use super::evm::{self, TRANSFER_GAS};
use super::inventory::{top_up_evm, top_up_solana};
use super::keys::KeyPair;
use super::ledger_sync::{self, Scope};
use super::{ChainError, ChainFailure, ChainResult, Chains, solana};
use crate::services::prices::Prices;
use crate::store::{
    Counter, Leg, LegKind, LegState, LineDelta, QuoteRecord, Settlement, Store, UaAccount,
    new_tx_hash,
};

/// What running a quote's legs came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every leg went through: record the settlement.
    Settled(Settlement),
    /// The collection failed on the chain: the sweep failed and the money stays in the account
    /// (less the gas of the failed attempt on EVM).
    CollectFailed {
        /// The collection's hash when it reached the chain.
        transaction_id: Option<String>,
        error: String,
    },
    /// A fresh send whose source no longer holds the quoted amount: nothing moved.
    Insufficient,
}

/// Runs (or resumes) the legs of `quote` for `account`. The explorer link of the settlement is
/// left to the caller.
///
/// # Errors
/// A chain or the store failed; the legs done so far are recorded and a repeated call resumes.
pub fn run(
    chains: &Chains,
    store: &Store,
    prices: &Prices,
    quote: &QuoteRecord,
    account: &UaAccount,
) -> Result<Outcome, ChainFailure> {
    let src_backed = chains.is_chain_backed(quote.src_chain_id);
    let dst_backed = chains.is_chain_backed(quote.dst_chain_id);
    settle_unsettled(chains, store, account)?;
    if store.chain_legs(&quote.id)?.is_empty() {
        let held = if src_backed {
            ledger_sync::observe(
                chains,
                store,
                prices,
                account,
                Scope::Line(quote.src_chain_id, quote.src_token),
            )?;
            store.chain_line(&account.id, quote.src_chain_id, quote.src_token)?.balance
        } else {
            store
                .ua_balances(&account.id)?
                .into_iter()
                .find(|l| l.chain_id == quote.src_chain_id && l.token == quote.src_token)
                .map_or(U256::ZERO, |l| l.raw_amount)
        };
        if held < quote.src_raw {
            return Ok(Outcome::Insufficient);
        }
    }

    let mut source_tx_hash = None;
    if src_backed {
        let keys = deposit_keys(account, quote.src_chain_id)?;
        let collected = match existing_collect(chains, store, quote)? {
            Some(done) => done,
            None if quote.src_chain_id == SOLANA_CHAIN_ID => {
                collect_solana(chains, store, quote, &keys)?
            }
            None => collect_evm(chains, store, quote, &keys)?,
        };
        match collected {
            Ok(hash) => source_tx_hash = Some(hash),
            Err((transaction_id, error)) => {
                return Ok(Outcome::CollectFailed { transaction_id, error });
            }
        }
    }
    let transaction_id = if dst_backed { deliver(chains, store, quote)? } else { new_tx_hash() };
    Ok(Outcome::Settled(Settlement {
        transaction_id,
        explorer_url: None,
        source_tx_hash,
        ledger_source: !src_backed,
        ledger_destination: !dst_backed,
    }))
}

/// Settles every leg of the account whose fate is not known yet (after a node failure or a
/// restart), applying its line changes. Legs of chains no longer chain-backed are left alone.
///
/// # Errors
/// A chain or the store failed.
pub fn settle_unsettled(
    chains: &Chains,
    store: &Store,
    account: &UaAccount,
) -> Result<(), ChainFailure> {
    for leg in store.unsettled_legs(&account.id)? {
        if !chains.is_chain_backed(leg.chain_id) {
            continue;
        }
        let quote = store
            .quote(&leg.quote_id)?
            .ok_or_else(|| crate::error::Error::NotFound(format!("quote {}", leg.quote_id)))?;
        // The vault's legs go out in nonce order: hold its lock while one may be broadcast.
        let _vault = match (leg.kind, leg.chain_id) {
            (LegKind::Collect, _) | (_, SOLANA_CHAIN_ID) => None,
            (_, chain_id) => Some(chains.evm(chain_id)?.lock_vault()),
        };
        drive(chains, store, &quote, &leg)?;
    }
    Ok(())
}

/// Checks that money can leave the account's deposit address on `chain_id`: the address must
/// be its devnet key's.
///
/// # Errors
/// [`ChainFailure::NoKey`] for an account opened by a devnet before chain-backed mode.
pub fn check_keys(account: &UaAccount, chain_id: u64) -> Result<(), ChainFailure> {
    deposit_keys(account, chain_id).map(drop)
}

/// The keys of the account, checked to be those of its deposit address on `chain_id`.
fn deposit_keys(account: &UaAccount, chain_id: u64) -> Result<KeyPair, ChainFailure> {
    let keys = KeyPair::of_owner(&account.owner);
    let derived = if chain_id == SOLANA_CHAIN_ID {
        keys.solana_address() == account.solana_address
    } else {
        keys.evm_address().eq_ignore_ascii_case(&account.evm_address)
    };
    if derived {
        Ok(keys)
    } else {
        Err(ChainFailure::NoKey(format!(
            "account {} was opened by an older devnet: its deposit address {} has no devnet key, \
             so money cannot leave it on a chain-backed chain",
            account.id,
            account.deposit_address(chain_id)
        )))
    }
}

/// A leg of `quote` of `kind`, if stored.
fn leg_of(store: &Store, quote: &QuoteRecord, kind: LegKind) -> Result<Option<Leg>, ChainFailure> {
    Ok(store.chain_legs(&quote.id)?.into_iter().find(|l| l.kind == kind))
}

/// `Ok(hash)` of a collection done, or `Err((hash if it reached the chain, why))`.
type Collected = Result<String, (Option<String>, String)>;

/// What a stored collect leg says, settling it first when needed; `None` when there is none.
/// A failed collection is final: the sweep failed.
fn existing_collect(
    chains: &Chains,
    store: &Store,
    quote: &QuoteRecord,
) -> Result<Option<Collected>, ChainFailure> {
    let Some(leg) = leg_of(store, quote, LegKind::Collect)? else {
        return Ok(None);
    };
    let (state, why) = match leg.state {
        LegState::Signed => drive(chains, store, quote, &leg)?,
        state => (state, None),
    };
    Ok(Some(match state {
        LegState::Done => Ok(leg.tx_hash),
        LegState::Signed | LegState::Failed => Err((
            Some(leg.tx_hash),
            why.unwrap_or_else(|| "the collection did not go through".into()),
        )),
    }))
}

/// A new collection on an EVM chain: the gas from the vault (resumed when stored), then the
/// collection itself.
fn collect_evm(
    chains: &Chains,
    store: &Store,
    quote: &QuoteRecord,
    keys: &KeyPair,
) -> Result<Collected, ChainFailure> {
    let chain = chains.evm(quote.src_chain_id)?;
    let asset = asset_on(chains, quote.src_chain_id, quote.src_token)?;
    let owner = keys.evm.address();
    let vault = chains.vault();
    let (to, value, data, gas_limit) = match asset {
        Asset::Native => (vault.evm.address(), quote.src_raw, Vec::new(), TRANSFER_GAS),
        Asset::Token(token) => {
            let contract = evm::address(&token.address).map_err(|e| chain.fail(e))?;
            let data = erc20::transfer_calldata(vault.evm.address(), quote.src_raw);
            let gas = chain.estimate_gas(owner, contract, U256::ZERO, &data)?;
            // A little over the estimate: what is left over stays with the address, counted
            // neither as received nor as paid.
            (contract, U256::ZERO, data, gas.saturating_add(gas / 10))
        }
    };

    // The gas, from the vault: exactly what the collection may burn.
    let gas_leg = leg_of(store, quote, LegKind::Gas)?;
    let gas_sent = match gas_leg {
        Some(leg) if leg.state == LegState::Done => leg.amount,
        Some(leg) if leg.state == LegState::Signed => {
            let _lock = chain.lock_vault();
            match drive(chains, store, quote, &leg)? {
                (LegState::Done, _) => leg.amount,
                (_, why) => return Err(gas_failed(chain.chain_id(), why).into()),
            }
        }
        _ => {
            let price = chain.gas_price()?;
            let amount = price.saturating_mul(U256::from(gas_limit));
            let _lock = chain.lock_vault();
            top_up_evm(chain, vault, Asset::Native, amount)?;
            let signed = chain.sign(&vault.evm, owner, amount, Vec::new(), TRANSFER_GAS, price)?;
            let leg = new_leg(
                quote,
                LegKind::Gas,
                chain.chain_id(),
                signed.hash.to_string(),
                signed.raw,
                amount,
            );
            store.insert_leg(&leg)?;
            match drive(chains, store, quote, &leg)? {
                (LegState::Done, _) => amount,
                (_, why) => return Err(gas_failed(chain.chain_id(), why).into()),
            }
        }
    };

    // The collection, paying exactly the gas sent (at most).
    let price = gas_sent / U256::from(gas_limit.max(1));
    let signed = chain.sign(&keys.evm, to, value, data, gas_limit, price)?;
    let collected =
        run_collect(chains, store, quote, chain.chain_id(), signed.hash.to_string(), signed.raw)?;
    Ok(collected.map_err(|(hash, why)| {
        (Some(hash), why.unwrap_or_else(|| "the collection reverted".into()))
    }))
}

fn gas_failed(chain_id: u64, why: Option<String>) -> ChainError {
    ChainError::new(
        chain_id,
        format!(
            "sending gas to the deposit address failed: {}; send the quote again",
            why.unwrap_or_else(|| "reverted".into())
        ),
    )
}

/// A new collection on Solana, the vault paying the fee.
fn collect_solana(
    chains: &Chains,
    store: &Store,
    quote: &QuoteRecord,
    keys: &KeyPair,
) -> Result<Collected, ChainFailure> {
    let chain = chains.solana()?;
    let asset = asset_on(chains, SOLANA_CHAIN_ID, quote.src_token)?;
    let vault = chains.vault();
    let vault_key = Pubkey::new_from_array(vault.solana.public_key());
    let deposit = Pubkey::new_from_array(keys.solana.public_key());
    {
        // The vault pays the fee (and the rent of its own token account, if missing).
        let _lock = chain.lock_vault();
        top_up_solana(chain, vault, Asset::Native, U256::ZERO)?;
    }
    let instructions =
        chain.transfer_instructions(&vault_key, &deposit, &vault_key, asset, quote.src_raw)?;
    let signed = chain.sign(&instructions, &vault.solana, &[&keys.solana])?;
    let collected = run_collect(
        chains,
        store,
        quote,
        SOLANA_CHAIN_ID,
        signed.signature.to_string(),
        signed.raw,
    )?;
    Ok(collected.map_err(|(_, why)| (None, why.unwrap_or_else(|| "the collection failed".into()))))
}

/// Stores the signed collection of `quote` on `chain_id` and drives it: `Ok(hash)` once done,
/// else `Err((hash, the reason when known))`.
fn run_collect(
    chains: &Chains,
    store: &Store,
    quote: &QuoteRecord,
    chain_id: u64,
    tx_hash: String,
    raw_tx: Vec<u8>,
) -> Result<Result<String, (String, Option<String>)>, ChainFailure> {
    let leg = new_leg(quote, LegKind::Collect, chain_id, tx_hash, raw_tx, quote.src_raw);
    store.insert_leg(&leg)?;
    Ok(match drive(chains, store, quote, &leg)? {
        (LegState::Done, _) => Ok(leg.tx_hash),
        (_, why) => Err((leg.tx_hash, why)),
    })
}

/// The delivery from the vault: its transaction hash (EVM) or signature (Solana).
fn deliver(chains: &Chains, store: &Store, quote: &QuoteRecord) -> Result<String, ChainFailure> {
    if let Some(leg) = leg_of(store, quote, LegKind::Deliver)? {
        match leg.state {
            LegState::Done => return Ok(leg.tx_hash),
            LegState::Signed => {
                if let (LegState::Done, _) = drive(chains, store, quote, &leg)? {
                    return Ok(leg.tx_hash);
                }
            }
            LegState::Failed => {}
        }
    }
    let chain_id = quote.dst_chain_id;
    let (leg, (state, why)) = {
        let _lock = lock_vault(chains, chain_id)?;
        let (tx_hash, raw) =
            sign_from_vault(chains, chain_id, quote.dst_token, &quote.dst_address, quote.dst_raw)?;
        let leg = new_leg(quote, LegKind::Deliver, chain_id, tx_hash, raw, quote.dst_raw);
        store.insert_leg(&leg)?;
        let outcome = drive(chains, store, quote, &leg)?;
        (leg, outcome)
    };
    if state == LegState::Done {
        return Ok(leg.tx_hash);
    }
    Err(ChainError::new(
        chain_id,
        format!(
            "the delivery to {} failed: {}; send the quote again",
            quote.dst_address,
            why.unwrap_or_else(|| "reverted".into())
        ),
    )
    .into())
}

/// Sends `amount` of `token` from the vault to `receiver` on the chain-backed chain `chain_id`
/// and waits for it (an onramp order: no quote, no legs). Returns the transaction's hash
/// (Solana: its signature).
///
/// # Errors
/// The chain failed or refused the transfer.
pub fn vault_transfer(
    chains: &Chains,
    chain_id: u64,
    token: TokenType,
    receiver: &str,
    amount: U256,
) -> ChainResult<String> {
    let _lock = lock_vault(chains, chain_id)?;
    let (tx_hash, raw) = sign_from_vault(chains, chain_id, token, receiver, amount)?;
    let failed = if chain_id == SOLANA_CHAIN_ID {
        let chain = chains.solana()?;
        let signature: Signature =
            tx_hash.parse().map_err(|e: depositkit_core::Error| chain.fail(e))?;
        match chain.send(&raw, &signature)? {
            solana::Fate::Landed(None) => None,
            solana::Fate::Landed(Some(why)) | solana::Fate::Dropped(why) => Some(why),
        }
    } else {
        let chain = chains.evm(chain_id)?;
        let hash: B256 = tx_hash.parse().map_err(|e| chain.fail(format!("hash: {e}")))?;
        match chain.send(&raw, hash)? {
            evm::Fate::Mined(receipt) if receipt.status => None,
            evm::Fate::Mined(_) => Some(format!("transaction {hash} reverted")),
            evm::Fate::Dropped(why) => Some(why),
        }
    };
    match failed {
        None => Ok(tx_hash),
        Some(why) => {
            Err(ChainError::new(chain_id, format!("the transfer to {receiver} failed: {why}")))
        }
    }
}

/// How `token` exists on the chain-backed chain `chain_id`.
fn asset_on(chains: &Chains, chain_id: u64, token: TokenType) -> ChainResult<Asset<'_>> {
    chains
        .config()
        .asset(chain_id, token)
        .ok_or_else(|| ChainError::new(chain_id, format!("{token} is not on the chain")))
}

/// The vault's lock on `chain_id`.
fn lock_vault(chains: &Chains, chain_id: u64) -> ChainResult<MutexGuard<'_, ()>> {
    if chain_id == SOLANA_CHAIN_ID {
        Ok(chains.solana()?.lock_vault())
    } else {
        Ok(chains.evm(chain_id)?.lock_vault())
    }
}

/// Tops up the vault and signs its transfer of `amount` of `token` to `receiver`: the hash (or
/// signature) and the signed bytes. The caller holds the vault's lock on the chain.
fn sign_from_vault(
    chains: &Chains,
    chain_id: u64,
    token: TokenType,
    receiver: &str,
    amount: U256,
) -> ChainResult<(String, Vec<u8>)> {
    let asset = asset_on(chains, chain_id, token)?;
    let vault = chains.vault();
    if chain_id == SOLANA_CHAIN_ID {
        let chain = chains.solana()?;
        let receiver = solana::pubkey(receiver).map_err(|e| chain.fail(e))?;
        let vault_key = Pubkey::new_from_array(vault.solana.public_key());
        top_up_solana(chain, vault, asset, amount)?;
        top_up_solana(chain, vault, Asset::Native, U256::ZERO)?;
        let instructions =
            chain.transfer_instructions(&vault_key, &vault_key, &receiver, asset, amount)?;
        let signed = chain.sign(&instructions, &vault.solana, &[])?;
        return Ok((signed.signature.to_string(), signed.raw));
    }
    let chain = chains.evm(chain_id)?;
    let receiver: Address = evm::address(receiver).map_err(|e| chain.fail(e))?;
    let (to, value, data) = match asset {
        Asset::Native => (receiver, amount, Vec::new()),
        Asset::Token(token) => (
            evm::address(&token.address).map_err(|e| chain.fail(e))?,
            U256::ZERO,
            erc20::transfer_calldata(receiver, amount),
        ),
    };
    top_up_evm(chain, vault, asset, amount)?;
    top_up_evm(chain, vault, Asset::Native, U256::ZERO)?;
    let gas = chain.estimate_gas(vault.evm.address(), to, value, &data)?;
    let price = chain.gas_price()?;
    let signed = chain.sign(&vault.evm, to, value, data, gas.saturating_add(gas / 5), price)?;
    Ok((signed.hash.to_string(), signed.raw))
}

fn new_leg(
    quote: &QuoteRecord,
    kind: LegKind,
    chain_id: u64,
    tx_hash: String,
    raw_tx: Vec<u8>,
    amount: U256,
) -> Leg {
    Leg {
        quote_id: quote.id.clone(),
        kind,
        chain_id,
        tx_hash,
        raw_tx,
        amount,
        state: LegState::Signed,
    }
}

/// Learns the fate of a `signed` leg (sending it when it never was), records it with its line
/// changes, and returns it with the reason of a failure.
fn drive(
    chains: &Chains,
    store: &Store,
    quote: &QuoteRecord,
    leg: &Leg,
) -> Result<(LegState, Option<String>), ChainFailure> {
    let native = native_token(leg.chain_id);
    let delta = |account: &str, chain_id, token, counter, amount| LineDelta {
        account_id: account.to_owned(),
        chain_id,
        token,
        counter,
        amount,
    };
    let collected = || {
        delta(
            &quote.account_id,
            quote.src_chain_id,
            quote.src_token,
            Counter::Collected,
            leg.amount,
        )
    };
    let gas_paid = |fee: U256| {
        native.map(|token| delta(&quote.account_id, leg.chain_id, token, Counter::GasPaid, fee))
    };
    let (state, why, deltas): (LegState, Option<String>, Vec<LineDelta>) =
        if leg.chain_id == SOLANA_CHAIN_ID {
            let chain = chains.solana()?;
            let signature: Signature =
                leg.tx_hash.parse().map_err(|e: depositkit_core::Error| chain.fail(e))?;
            match chain.settle(&leg.raw_tx, &signature)? {
                solana::Fate::Landed(None) => {
                    let deltas =
                        if leg.kind == LegKind::Collect { vec![collected()] } else { Vec::new() };
                    (LegState::Done, None, deltas)
                }
                solana::Fate::Landed(Some(error)) => (LegState::Failed, Some(error), Vec::new()),
                solana::Fate::Dropped(why) => (LegState::Failed, Some(why), Vec::new()),
            }
        } else {
            let chain = chains.evm(leg.chain_id)?;
            let hash: B256 =
                leg.tx_hash.parse().map_err(|e| chain.fail(format!("stored hash: {e}")))?;
            match chain.settle(&leg.raw_tx, hash)? {
                evm::Fate::Mined(receipt) => {
                    let fee = receipt.fee();
                    let ok = receipt.status;
                    let deltas: Vec<LineDelta> = match (leg.kind, ok) {
                        (LegKind::Gas, true) => native
                            .map(|token| {
                                delta(
                                    &quote.account_id,
                                    leg.chain_id,
                                    token,
                                    Counter::GasSent,
                                    leg.amount,
                                )
                            })
                            .into_iter()
                            .collect(),
                        (LegKind::Collect, true) => {
                            std::iter::once(collected()).chain(gas_paid(fee)).collect()
                        }
                        // The deposit address paid for its reverted collection.
                        (LegKind::Collect, false) => gas_paid(fee).into_iter().collect(),
                        _ => Vec::new(),
                    };
                    let state = if ok { LegState::Done } else { LegState::Failed };
                    (state, (!ok).then(|| format!("transaction {hash} reverted")), deltas)
                }
                evm::Fate::Dropped(why) => (LegState::Failed, Some(why), Vec::new()),
            }
        };
    store.settle_leg(&quote.id, leg.kind, state, &deltas)?;
    Ok((state, why))
}
