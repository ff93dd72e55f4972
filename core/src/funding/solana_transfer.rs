//! `fund_from_wallet` on Solana (`docs/funding.md` §4): a system transfer of SOL, or SPL
//! Token `TransferChecked` from the wallet's token account — preceded by the associated token
//! account program's `CreateIdempotent` when the deposit address has no account for the mint
//! yet (the wallet pays its rent).
//!
//! The library builds the unsigned legacy transaction on a blockhash from
//! `funding.solanaRpcUrl`; the wallet signs and sends it (`signAndSendTransaction`); the
//! library confirms it with `getSignatureStatuses`, bounded by the client's call timeout.

use base64::Engine as _;
use serde_json::json;

use super::Funding;
use super::balance::FundingBalance;
use super::transfer::{
    Deadline, FundingTransferResult, check_native_amount, deposit_address, funding_error, human,
    other_wallet, provider_failure, rpc_failure,
};
use crate::chain::solana::{SolanaRpc, TokenAccount};
use crate::chain::solana_tx::{
    Instruction, Message, Pubkey, Signature, TOKEN_ACCOUNT_LEN, Transaction,
    associated_token_address, create_associated_token_account_idempotent, spl_transfer_checked,
    system_transfer,
};
use crate::chains::Chain;
use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::units::{U256, format_units};

const SOLANA: u64 = Chain::SOLANA.id();
const SOL_DECIMALS: u8 = 9;

/// The token account a transfer of `mint` leaves from: `owner`'s associated token account when
/// it holds some, else the account holding the most.
pub(crate) fn pick_token_account<'a>(
    accounts: &'a [TokenAccount],
    owner: &Pubkey,
    mint: &Pubkey,
) -> Option<&'a TokenAccount> {
    let ata = associated_token_address(owner, mint);
    let of_mint = || accounts.iter().filter(|a| a.mint == *mint && a.raw_amount > 0);
    of_mint().find(|a| a.address == ata).or_else(|| of_mint().max_by_key(|a| a.raw_amount))
}

fn sol(lamports: u64) -> String {
    human(U256::from(lamports), SOL_DECIMALS, "SOL")
}

/// The requested amount as `u64` (Solana amounts are 64-bit).
fn requested(raw_amount: Option<U256>, decimals: u8, symbol: &str) -> Result<Option<u64>> {
    raw_amount
        .map(|raw| {
            u64::try_from(raw).map_err(|_| {
                funding_error(format!(
                    "insufficient funds: {} is more than any Solana balance",
                    format_units(raw, u32::from(decimals))
                        .map_or_else(|_| raw.to_string(), |t| format!("{t} {symbol}"))
                ))
            })
        })
        .transpose()
}

impl Funding {
    /// Sends `raw_amount` (default: the maximum after the fee) of `balance` to `to`.
    pub(crate) fn fund_solana(
        &self,
        balance: &FundingBalance,
        raw_amount: Option<U256>,
        to: &str,
        deadline: Deadline,
    ) -> Result<FundingTransferResult> {
        let (provider, from) = self.solana_wallet()?;
        if balance.wallet_address() != from.to_string() {
            return Err(other_wallet(balance, "Solana", &from.to_string()));
        }
        let to_key: Pubkey = deposit_address(to, "a Solana address")?;
        let node = self.solana_node();
        let rpc = |e: Error| rpc_failure(SOLANA, e);
        let lamports = node.balance(&from).map_err(rpc)?;
        let rent_floor = node.minimum_balance_for_rent_exemption(0).map_err(rpc)?;
        let blockhash = node.latest_blockhash().map_err(rpc)?;
        let symbol = balance.token().symbol();
        let (instructions, amount) = match balance.token_address() {
            None => {
                let probe = Message::new(&[system_transfer(&from, &to_key, 0)], &from, blockhash)?;
                let fee = node.fee_for_message(&probe).map_err(rpc)?;
                let max = lamports.checked_sub(fee).filter(|m| *m > 0).ok_or_else(|| {
                    funding_error(format!(
                        "insufficient gas: a transfer on Solana needs {} for the fee, the wallet holds {}",
                        sol(fee),
                        sol(lamports)
                    ))
                })?;
                let amount = requested(raw_amount, SOL_DECIMALS, "SOL")?.unwrap_or(max);
                check_native_amount(
                    U256::from(amount),
                    U256::from(lamports),
                    U256::from(fee),
                    U256::from(max),
                    "the fee",
                    |v| human(v, SOL_DECIMALS, "SOL"),
                )?;
                check_wallet_rent(lamports - fee - amount, rent_floor)?;
                check_new_account(&node, &to_key, amount, rent_floor)?;
                (vec![system_transfer(&from, &to_key, amount)], amount)
            }
            Some(mint_text) => {
                let mint: Pubkey = mint_text.parse()?;
                let accounts = node.token_accounts_by_owner(&from, &mint).map_err(rpc)?;
                let source = pick_token_account(&accounts, &from, &mint).ok_or_else(|| {
                    funding_error(format!(
                        "insufficient funds: the wallet holds no {symbol} on Solana"
                    ))
                })?;
                let amount =
                    requested(raw_amount, balance.decimals(), symbol)?.unwrap_or(source.raw_amount);
                if amount == 0 || amount > source.raw_amount {
                    return Err(funding_error(format!(
                        "insufficient funds: sending {} needs more than the wallet's {} (in {})",
                        human(U256::from(amount), balance.decimals(), symbol),
                        human(U256::from(source.raw_amount), balance.decimals(), symbol),
                        source.address
                    )));
                }
                let destination = associated_token_address(&to_key, &mint);
                let create = !node.account_exists(&destination).map_err(rpc)?;
                let mut instructions: Vec<Instruction> = Vec::new();
                if create {
                    instructions
                        .push(create_associated_token_account_idempotent(&from, &to_key, &mint));
                }
                instructions.push(spl_transfer_checked(
                    &source.address,
                    &mint,
                    &destination,
                    &from,
                    amount,
                    balance.decimals(),
                ));
                let fee = node
                    .fee_for_message(&Message::new(&instructions, &from, blockhash)?)
                    .map_err(rpc)?;
                let rent = if create {
                    node.minimum_balance_for_rent_exemption(TOKEN_ACCOUNT_LEN).map_err(rpc)?
                } else {
                    0
                };
                let needed = fee.saturating_add(rent);
                if lamports < needed {
                    let why = if create {
                        format!(
                            "{} fee + {} for the deposit address's token account",
                            sol(fee),
                            sol(rent)
                        )
                    } else {
                        format!("the fee of {}", sol(fee))
                    };
                    return Err(funding_error(format!(
                        "insufficient gas: a {symbol} transfer on Solana needs {} ({why}), the wallet holds {}",
                        sol(needed),
                        sol(lamports)
                    )));
                }
                check_wallet_rent(lamports - needed, rent_floor)?;
                (instructions, amount)
            }
        };
        let message = Message::new(&instructions, &from, blockhash)?;
        let unsigned = Transaction::unsigned(message).serialize();
        let params = json!({
            "transaction": base64::engine::general_purpose::STANDARD.encode(unsigned),
            "encoding": "base64",
        });
        let answer = provider
            .request("signAndSendTransaction", &params)
            .map_err(|e| provider_failure(SOLANA, "signAndSendTransaction", &e))?;
        let signature = answer
            .get("signature")
            .unwrap_or(&answer)
            .as_str()
            .and_then(|t| t.parse::<Signature>().ok())
            .ok_or_else(|| {
                funding_error(format!(
                    "the wallet answered signAndSendTransaction with {}, not a signature",
                    quote(&answer.to_string())
                ))
            })?;
        let status = node.wait_confirmed(&signature, deadline.remaining()).map_err(|e| {
            if e.kind() == ErrorKind::Timeout {
                Error::new(
                    ErrorKind::Timeout,
                    format!("transaction {signature} was sent on Solana but is not confirmed yet; it may still land"),
                )
            } else {
                rpc(e)
            }
        })?;
        if let Some(err) = status.err {
            return Err(funding_error(format!("transaction {signature} reverted: {err}")));
        }
        Ok(FundingTransferResult {
            tx_hash: signature.to_string(),
            chain_id: SOLANA,
            token: balance.token(),
            raw_amount: U256::from(amount),
            amount: format_units(U256::from(amount), u32::from(balance.decimals()))?,
            from: from.to_string(),
            to: to.to_owned(),
        })
    }
}

/// A wallet may end empty or rent-exempt, never in between (the network refuses that).
fn check_wallet_rent(left: u64, rent_floor: u64) -> Result<()> {
    if left > 0 && left < rent_floor {
        return Err(funding_error(format!(
            "insufficient funds: the wallet would keep {}, less than Solana's rent-exempt minimum of {}; send less or everything",
            sol(left),
            sol(rent_floor)
        )));
    }
    Ok(())
}

/// A deposit address that does not exist yet must receive at least the rent-exempt minimum.
fn check_new_account(node: &SolanaRpc, to: &Pubkey, amount: u64, rent_floor: u64) -> Result<()> {
    if amount >= rent_floor {
        return Ok(());
    }
    if node.balance(to).map_err(|e| rpc_failure(SOLANA, e))? == 0 {
        return Err(funding_error(format!(
            "insufficient funds: a new deposit address must receive at least {} (Solana's rent-exempt minimum), not {}",
            sol(rent_floor),
            sol(amount)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ata_is_preferred_then_the_largest() {
        let owner = Pubkey::new_from_array([1; 32]);
        let mint = Pubkey::new_from_array([2; 32]);
        let ata = associated_token_address(&owner, &mint);
        let account =
            |address, raw_amount| TokenAccount { address, mint, owner, raw_amount, decimals: 6 };
        let other = Pubkey::new_from_array([3; 32]);
        let list = [account(other, 50), account(ata, 5)];
        assert_eq!(pick_token_account(&list, &owner, &mint).unwrap().address, ata);
        let list =
            [account(other, 50), account(ata, 0), account(Pubkey::new_from_array([4; 32]), 7)];
        assert_eq!(pick_token_account(&list, &owner, &mint).unwrap().address, other);
        assert!(pick_token_account(&[account(ata, 0)], &owner, &mint).is_none());
    }

    #[test]
    fn rent_rules() {
        check_wallet_rent(0, 890_880).unwrap();
        check_wallet_rent(890_880, 890_880).unwrap();
        let err = check_wallet_rent(1, 890_880).unwrap_err();
        assert!(
            err.message().starts_with("insufficient funds: the wallet would keep 0.000000001 SOL"),
            "{err}"
        );
    }

    #[test]
    fn huge_amounts_are_insufficient_funds() {
        let err = requested(Some(U256::MAX), 6, "USDC").unwrap_err();
        assert!(err.message().starts_with("insufficient funds:"), "{err}");
        assert_eq!(requested(Some(U256::from(5u64)), 6, "USDC").unwrap(), Some(5));
    }
}
