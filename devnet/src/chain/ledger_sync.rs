//! Turning chain balances into the protocol's balance lines (`docs/funding.md` §2).
//!
//! A line's `rawAmount` is the deposit address's balance now. Its `received` is
//! `max(received, base + balance + collected + gas_paid − gas_sent)` ([`ChainLine::total_in`]):
//! what left the address through devnet (collections and the gas the address paid) is added
//! back and the gas devnet sent it taken out, so that what remains is exactly what arrived from
//! outside. It goes down only by what a reorganisation took (below), and each increase is
//! recorded as `receive`s — for ERC-20 tokens one per `Transfer` log to the address when the
//! logs add up to the increase (sender and hash from the log; a mint's sender is null),
//! otherwise one `receive` with a null sender and an observation id as its hash.
//!
//! A line whose chain lost money that arrived (a reorganisation: devnet alone moves money out,
//! and counts it) gets `received` lowered first and the lost `receive`s taken out of the history
//! ([`super::reorg`]).
//!
//! The caller holds the account's lock ([`super::Chains::with_account`]), so devnet's own
//! transactions for the account are settled ([`super::transfers::settle_unsettled`]) before the
//! balances are read and never run meanwhile.

use alloy_primitives::Address;
use depositkit_core::chain::solana_tx::Pubkey;
use depositkit_core::{TokenType, U256};

use super::config::{Asset, SOLANA_CHAIN_ID};
use super::reorg::{self, TakenBack};
use super::{
    ChainError, ChainFailure, ChainResult, Chains, evm, observation_id, solana, transfers,
};
use crate::services::prices::Prices;
use crate::store::{ChainLine, Observation, ObservedTransfer, Store, UaAccount, Uncredit};

/// What one reading of a line found: the `receive`s the chain lost, then what to record.
struct Reading {
    token: TokenType,
    taken_back: Vec<TakenBack>,
    observation: Option<Observation>,
}

/// Which lines to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every token of every chain-backed chain.
    All,
    /// One token of one chain (nothing when the chain is not chain-backed).
    Line(u64, TokenType),
}

/// Reads the account's chain-backed lines in `scope` and records what arrived. The chains are
/// read in parallel.
///
/// # Errors
/// A chain or the store failed; nothing of that chain is recorded then.
pub fn observe(
    chains: &Chains,
    store: &Store,
    prices: &Prices,
    account: &UaAccount,
    scope: Scope,
) -> Result<(), ChainFailure> {
    transfers::settle_unsettled(chains, store, account)?;
    let wanted: Vec<(u64, Vec<TokenType>)> = match scope {
        Scope::All => {
            chains.chain_ids().into_iter().map(|id| (id, chains.config().tokens(id))).collect()
        }
        Scope::Line(chain_id, token) if chains.config().asset(chain_id, token).is_some() => {
            vec![(chain_id, vec![token])]
        }
        Scope::Line(..) => Vec::new(),
    };
    let lines: Vec<(u64, Vec<(TokenType, ChainLine)>)> = wanted
        .into_iter()
        .map(|(chain_id, tokens)| {
            let lines = tokens
                .into_iter()
                .map(|token| Ok((token, store.chain_line(&account.id, chain_id, token)?)))
                .collect::<Result<Vec<_>, crate::error::Error>>()?;
            Ok((chain_id, lines))
        })
        .collect::<Result<_, crate::error::Error>>()?;
    let readings: Vec<Result<Vec<Reading>, ChainFailure>> = std::thread::scope(|scope| {
        let handles: Vec<_> = lines
            .iter()
            .map(|(chain_id, lines)| {
                scope.spawn(move || read_chain(chains, store, prices, account, *chain_id, lines))
            })
            .collect();
        handles
            .into_iter()
            .zip(&lines)
            .map(|(handle, (chain_id, _))| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(ChainError::new(*chain_id, "reading panicked").into()))
            })
            .collect()
    });
    let mut first_error = None;
    for (reading, (chain_id, _)) in readings.into_iter().zip(&lines) {
        match reading {
            Ok(readings) => {
                for reading in readings {
                    record(store, account, *chain_id, reading)?;
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Takes back what the chain lost, then records the observation.
fn record(
    store: &Store,
    account: &UaAccount,
    chain_id: u64,
    reading: Reading,
) -> Result<(), crate::error::Error> {
    if !reading.taken_back.is_empty() {
        let address = account.deposit_address(chain_id);
        let uncredits: Vec<Uncredit<'_>> = reading
            .taken_back
            .iter()
            .map(|t| Uncredit {
                tx_hash: &t.tx_hash,
                address,
                chain_id,
                token: reading.token,
                raw_amount: t.raw_amount,
            })
            .collect();
        store.uncredit(&uncredits)?;
    }
    match reading.observation {
        Some(observation) => store.record_observation(&observation),
        None => Ok(()),
    }
}

/// The receipts of `line` the chain lost, given the address's `balance` now (none when it lost
/// nothing), and the line without them.
fn lost(
    store: &Store,
    account: &UaAccount,
    chain_id: u64,
    token: TokenType,
    line: &ChainLine,
    balance: U256,
    still_mined: impl FnMut(&str) -> ChainResult<bool>,
) -> Result<(Vec<TakenBack>, ChainLine), ChainFailure> {
    let fall = reorg::fall(line, balance);
    if fall.is_zero() {
        return Ok((Vec::new(), *line));
    }
    let receipts = store.ua_receipts(&account.id, chain_id, token, U256::ZERO, line.received)?;
    let taken = reorg::take_back(line, fall, &receipts, still_mined)?;
    let line = reorg::without(line, &taken);
    Ok((taken, line))
}

/// The readings of one chain's lines.
fn read_chain(
    chains: &Chains,
    store: &Store,
    prices: &Prices,
    account: &UaAccount,
    chain_id: u64,
    lines: &[(TokenType, ChainLine)],
) -> Result<Vec<Reading>, ChainFailure> {
    let config = chains.config();
    let mut readings = Vec::new();
    if chain_id == SOLANA_CHAIN_ID {
        let chain = chains.solana()?;
        let owner: Pubkey = solana::pubkey(&account.solana_address).map_err(|e| chain.fail(e))?;
        for (token, line) in lines {
            let Some(asset) = config.asset(chain_id, *token) else { continue };
            let balance = chain.balance(&owner, asset)?;
            let (taken_back, line) =
                lost(store, account, chain_id, *token, line, balance, |_| Ok(false))?;
            let observation =
                observation(account, chain_id, *token, &line, balance, None, prices, Vec::new);
            readings.push(Reading { token: *token, taken_back, observation });
        }
        return Ok(readings);
    }
    let chain = chains.evm(chain_id)?;
    let owner: Address = evm::address(&account.evm_address).map_err(|e| chain.fail(e))?;
    // One block for every read of the chain: the balances and the logs agree.
    let block = chain.block_number()?;
    for (token, line) in lines {
        let Some(asset) = config.asset(chain_id, *token) else { continue };
        let balance = chain.balance(owner, asset, Some(block))?;
        // Native lines' receipts are observations: nothing on the chain says which one left.
        let is_token = matches!(asset, Asset::Token(_));
        let (taken_back, line) = lost(store, account, chain_id, *token, line, balance, |hash| {
            Ok(is_token && chain.is_mined(hash)?)
        })?;
        let line = &line;
        // A chain that went back below the scanned block (`evm_revert`): read on from its head,
        // and the scanned block goes back to it.
        let from_block = line.scanned_block.map_or(0, |b| b.min(block).saturating_add(1));
        let logs = match asset {
            Asset::Token(token_config) if line.total_in(balance) > line.received => {
                let contract = evm::address(&token_config.address).map_err(|e| chain.fail(e))?;
                chain.incoming(contract, owner, from_block, block)?
            }
            _ => Vec::new(),
        };
        let scanned = matches!(asset, Asset::Token(_)).then_some(block);
        let transfers = || {
            logs.iter()
                .map(|log| ObservedTransfer {
                    tx_hash: log.tx_hash.to_string(),
                    // A mint comes from the zero address: there is no sender to refund.
                    sender: (!log.from.is_zero()).then(|| log.from.to_checksum(None)),
                    raw_amount: log.value,
                })
                .collect()
        };
        let observation =
            observation(account, chain_id, *token, line, balance, scanned, prices, transfers);
        readings.push(Reading { token: *token, taken_back, observation });
    }
    Ok(readings)
}

/// The observation of one line, or `None` when nothing changed. `transfers` are the incoming
/// transfers found, used when they add up to the increase of `received`.
#[allow(clippy::too_many_arguments)]
fn observation(
    account: &UaAccount,
    chain_id: u64,
    token: TokenType,
    line: &ChainLine,
    balance: U256,
    scanned_block: Option<u64>,
    prices: &Prices,
    transfers: impl FnOnce() -> Vec<ObservedTransfer>,
) -> Option<Observation> {
    let received = line.received.max(line.total_in(balance));
    let increase = received - line.received;
    let transfers = if increase.is_zero() {
        Vec::new()
    } else {
        let found = transfers();
        let sum = found.iter().fold(U256::ZERO, |sum, t| sum.saturating_add(t.raw_amount));
        if sum == increase {
            found
        } else {
            vec![ObservedTransfer { tx_hash: observation_id(), sender: None, raw_amount: increase }]
        }
    };
    let unchanged = increase.is_zero()
        && balance == line.balance
        && (scanned_block.is_none() || scanned_block == line.scanned_block);
    if unchanged {
        return None;
    }
    Some(Observation {
        account_id: account.id.clone(),
        chain_id,
        token,
        balance,
        received,
        transfers,
        scanned_block,
        price_usd: prices.usd(token),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::ua_account as account;

    fn transfer(hash: &str, amount: u64) -> ObservedTransfer {
        ObservedTransfer { tx_hash: hash.into(), sender: None, raw_amount: U256::from(amount) }
    }

    /// [`observation`] of `line` (the account's `token` on Base) finding `balance` now.
    fn observe(
        token: TokenType,
        line: &ChainLine,
        balance: u64,
        scanned_block: Option<u64>,
        transfers: impl FnOnce() -> Vec<ObservedTransfer>,
    ) -> Option<Observation> {
        let prices = Prices::default();
        let balance = U256::from(balance);
        observation(&account(), 8453, token, line, balance, scanned_block, &prices, transfers)
    }

    #[test]
    fn received_counts_only_new_money() {
        let line = ChainLine {
            received: U256::from(100u64),
            balance: U256::from(40u64),
            collected: U256::from(60u64),
            ..ChainLine::default()
        };
        // Unchanged: nothing to record.
        assert!(observe(TokenType::USDC, &line, 40, None, Vec::new).is_none());
        // 25 more arrived, in two logs that add up.
        let seen = observe(TokenType::USDC, &line, 65, Some(9), || {
            vec![transfer("0xa", 5), transfer("0xb", 20)]
        })
        .unwrap();
        assert_eq!(seen.received, U256::from(125u64));
        assert_eq!(seen.transfers, [transfer("0xa", 5), transfer("0xb", 20)]);
        // Logs that do not add up: one receive of the increase.
        let seen =
            observe(TokenType::USDC, &line, 65, Some(9), || vec![transfer("0xa", 5)]).unwrap();
        assert_eq!(seen.transfers.len(), 1);
        assert_eq!(seen.transfers[0].raw_amount, U256::from(25u64));
        assert_eq!(seen.transfers[0].sender, None);
        // Gas devnet sent is not money received; a lower balance lowers nothing.
        let gas = ChainLine { gas_sent: U256::from(7u64), ..line };
        let seen = observe(TokenType::ETH, &gas, 47, None, Vec::new).unwrap();
        assert_eq!((seen.received, seen.transfers.len()), (U256::from(100u64), 0));
        let seen = observe(TokenType::ETH, &line, 10, None, Vec::new).unwrap();
        assert_eq!(
            (seen.received, seen.balance, seen.transfers.len()),
            (U256::from(100u64), U256::from(10u64), 0)
        );
    }
}
