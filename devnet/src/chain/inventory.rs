//! The vault's inventory: what devnet delivers from. It is stocked on start and topped up before
//! a delivery would overdraw it, with the local chains' development methods — anvil's
//! `anvil_setBalance`, the test token's open `mint`, `requestAirdrop`, and the SVM server's
//! `svm_mintTo` — so devnet never runs out, whatever the tests sweep.
//!
//! Top-ups on a chain run under that chain's vault lock: the vault's own transactions (a mint,
//! then the delivery) must take consecutive nonces.

use alloy_primitives::U256;
use depositkit_core::chain::erc20;
use depositkit_core::chain::evm::quantity;
use depositkit_core::chain::solana_tx::Pubkey;
use serde_json::json;

use super::config::{Asset, SOLANA_CHAIN_ID, TokenConfig};
use super::evm::{EvmChain, Fate, TRANSFER_GAS};
use super::keys::KeyPair;
use super::solana::{self, SolanaChain};
use super::{CONFIRM_TIMEOUT, ChainResult, Chains};

/// Native units (ETH, BNB, SOL) the vault is stocked with, in whole units.
const NATIVE_STOCK_UNITS: u64 = 1_000;
/// Whole tokens (USDC, USDT) the vault is stocked with.
const TOKEN_STOCK_UNITS: u64 = 1_000_000_000;
/// Native units the vault keeps beyond a delivery, for the fees of its own transactions.
const FEE_RESERVE_UNITS: u64 = 1;
/// Lamports per SOL.
const LAMPORTS_PER_SOL: u64 = 1_000_000_000;

/// Stocks the vault on every chain (the chains in parallel), after checking each EVM node's
/// chain id.
///
/// # Errors
/// The first chain that failed.
pub fn stock(chains: &Chains) -> ChainResult<()> {
    std::thread::scope(|scope| {
        let evm: Vec<_> = chains
            .evm_chains()
            .map(|chain| {
                scope.spawn(move || -> ChainResult<()> {
                    chain.check_chain_id()?;
                    let _vault = chain.lock_vault();
                    let tokens = chains.config().evm_chain(chain.chain_id()).map(|c| &c.tokens);
                    top_up_evm(chain, chains.vault(), Asset::Native, U256::ZERO)?;
                    for token in tokens.into_iter().flat_map(|t| t.values()) {
                        top_up_evm(chain, chains.vault(), Asset::Token(token), U256::ZERO)?;
                    }
                    Ok(())
                })
            })
            .collect();
        let solana = chains.config().solana.as_ref().map(|config| {
            scope.spawn(move || -> ChainResult<()> {
                let chain = chains.solana()?;
                let _vault = chain.lock_vault();
                top_up_solana(chain, chains.vault(), Asset::Native, U256::ZERO)?;
                for token in config.mints.values() {
                    top_up_solana(chain, chains.vault(), Asset::Token(token), U256::ZERO)?;
                }
                Ok(())
            })
        });
        for handle in evm.into_iter().chain(solana) {
            handle.join().unwrap_or_else(|_| {
                Err(super::ChainError::new(SOLANA_CHAIN_ID, "stocking the vault panicked"))
            })?;
        }
        Ok(())
    })
}

/// Makes the vault hold at least `need` of `asset` on `chain` (plus, for the native asset, a
/// reserve for fees); below that it gets `need` plus a full stock. The caller holds the chain's
/// vault lock.
///
/// # Errors
/// The node failed or refused the development method.
pub fn top_up_evm(
    chain: &EvmChain,
    vault: &KeyPair,
    asset: Asset<'_>,
    need: U256,
) -> ChainResult<()> {
    let address = vault.evm.address();
    let held = chain.balance(address, asset, None)?;
    match asset {
        Asset::Native => {
            let reserve = whole(FEE_RESERVE_UNITS, 18);
            if held >= need.saturating_add(reserve) {
                return Ok(());
            }
            let target = held.saturating_add(need).saturating_add(whole(NATIVE_STOCK_UNITS, 18));
            chain
                .rpc()
                .request("anvil_setBalance", json!([address.to_string(), quantity(target)]))
                .map_err(|e| chain.fail(format!("anvil_setBalance: {e}")))?;
            Ok(())
        }
        Asset::Token(token) => {
            if held >= need && !held.is_zero() {
                return Ok(());
            }
            let amount = need.saturating_add(whole(TOKEN_STOCK_UNITS, token.decimals));
            mint_evm(chain, vault, token, amount)
        }
    }
}

/// The vault mints `amount` of the test token to itself.
fn mint_evm(
    chain: &EvmChain,
    vault: &KeyPair,
    token: &TokenConfig,
    amount: U256,
) -> ChainResult<()> {
    let contract = super::evm::address(&token.address).map_err(|e| chain.fail(e))?;
    let data = erc20::mint_calldata(vault.evm.address(), amount);
    let gas = chain.estimate_gas(vault.evm.address(), contract, U256::ZERO, &data)?;
    // The vault's fee reserve pays for it.
    top_up_evm(chain, vault, Asset::Native, U256::ZERO)?;
    let price = chain.gas_price()?;
    // Some margin over the estimate: a first mint writes new storage slots.
    let gas = gas.saturating_add(gas / 5).max(TRANSFER_GAS);
    let signed = chain.sign(&vault.evm, contract, U256::ZERO, data, gas, price)?;
    match chain.send(&signed.raw, signed.hash)? {
        Fate::Mined(receipt) if receipt.status => Ok(()),
        Fate::Mined(_) => {
            Err(chain.fail(format!("mint on {} reverted (is it the test token?)", token.address)))
        }
        Fate::Dropped(why) => Err(chain.fail(format!("mint on {} refused: {why}", token.address))),
    }
}

/// [`top_up_evm`] on Solana: `requestAirdrop` of SOL, `svm_mintTo` of tokens. The caller holds
/// the Solana vault lock.
///
/// # Errors
/// The node failed or refused the development method.
pub fn top_up_solana(
    chain: &SolanaChain,
    vault: &KeyPair,
    asset: Asset<'_>,
    need: U256,
) -> ChainResult<()> {
    let owner = Pubkey::new_from_array(vault.solana.public_key());
    let held = chain.balance(&owner, asset)?;
    match asset {
        Asset::Native => {
            let reserve = U256::from(FEE_RESERVE_UNITS * LAMPORTS_PER_SOL);
            if held >= need.saturating_add(reserve) {
                return Ok(());
            }
            let lamports =
                need.saturating_add(U256::from(NATIVE_STOCK_UNITS / 10 * LAMPORTS_PER_SOL));
            let lamports =
                u64::try_from(lamports).map_err(|_| chain.fail("too many lamports to airdrop"))?;
            let signature = chain
                .rpc()
                .request_airdrop(&owner, lamports)
                .map_err(|e| chain.fail(format!("requestAirdrop: {e}")))?;
            let status = chain
                .rpc()
                .wait_confirmed(&signature, CONFIRM_TIMEOUT)
                .map_err(|e| chain.fail(format!("requestAirdrop: {e}")))?;
            match status.err {
                None => Ok(()),
                Some(err) => Err(chain.fail(format!("requestAirdrop failed: {err}"))),
            }
        }
        Asset::Token(token) => {
            if held >= need && !held.is_zero() {
                return Ok(());
            }
            let amount = need.saturating_add(whole(TOKEN_STOCK_UNITS, token.decimals));
            let amount =
                u64::try_from(amount).map_err(|_| chain.fail("too many tokens to mint"))?;
            let mint = solana::mint(token).map_err(|e| chain.fail(e))?;
            chain
                .rpc()
                .request("svm_mintTo", json!([mint.to_string(), owner.to_string(), amount]))
                .map_err(|e| chain.fail(format!("svm_mintTo: {e}")))?;
            Ok(())
        }
    }
}

/// `units` whole units of a token with `decimals`.
fn whole(units: u64, decimals: u8) -> U256 {
    U256::from(units).saturating_mul(U256::from(10u64).pow(U256::from(decimals)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_units() {
        assert_eq!(whole(3, 6), U256::from(3_000_000u64));
        assert_eq!(whole(1, 18), U256::from(1_000_000_000_000_000_000u128));
    }
}
