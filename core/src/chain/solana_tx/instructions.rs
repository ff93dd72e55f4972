//! Instructions: a program, its accounts and its data; and the three depositkit builds (system
//! transfer, SPL Token `TransferChecked`, associated token account `CreateIdempotent`).

use super::keys::{ASSOCIATED_TOKEN_PROGRAM, Pubkey, SYSTEM_PROGRAM, TOKEN_PROGRAM};
use super::pda::associated_token_address;

/// An account an instruction reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountMeta {
    /// The account.
    pub pubkey: Pubkey,
    /// Whether the transaction must carry this account's signature.
    pub is_signer: bool,
    /// Whether the instruction may change the account.
    pub is_writable: bool,
}

impl AccountMeta {
    /// A writable account.
    pub const fn new(pubkey: Pubkey, is_signer: bool) -> Self {
        AccountMeta { pubkey, is_signer, is_writable: true }
    }

    /// A readonly account.
    pub const fn new_readonly(pubkey: Pubkey, is_signer: bool) -> Self {
        AccountMeta { pubkey, is_signer, is_writable: false }
    }
}

/// One instruction: a program, its accounts and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// The program to run.
    pub program_id: Pubkey,
    /// Its accounts, in the order the program expects.
    pub accounts: Vec<AccountMeta>,
    /// Its input.
    pub data: Vec<u8>,
}

/// The system program's `Transfer` of `lamports` from `from` (signs) to `to`.
pub fn system_transfer(from: &Pubkey, to: &Pubkey, lamports: u64) -> Instruction {
    // SystemInstruction::Transfer is variant 2, a u32 LE tag, then the u64 LE amount.
    let mut data = Vec::with_capacity(12);
    data.extend_from_slice(&2u32.to_le_bytes());
    data.extend_from_slice(&lamports.to_le_bytes());
    Instruction {
        program_id: SYSTEM_PROGRAM,
        accounts: vec![AccountMeta::new(*from, true), AccountMeta::new(*to, false)],
        data,
    }
}

/// SPL Token's `TransferChecked` of `amount` raw units of `mint` (with `decimals`) from the
/// token account `source` to the token account `destination`, signed by `owner`.
pub fn spl_transfer_checked(
    source: &Pubkey,
    mint: &Pubkey,
    destination: &Pubkey,
    owner: &Pubkey,
    amount: u64,
    decimals: u8,
) -> Instruction {
    // TokenInstruction::TransferChecked is tag 12: u8 tag, u64 LE amount, u8 decimals.
    let mut data = Vec::with_capacity(10);
    data.push(12);
    data.extend_from_slice(&amount.to_le_bytes());
    data.push(decimals);
    Instruction {
        program_id: TOKEN_PROGRAM,
        accounts: vec![
            AccountMeta::new(*source, false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new(*destination, false),
            AccountMeta::new_readonly(*owner, true),
        ],
        data,
    }
}

/// The associated token account program's `CreateIdempotent`: creates `owner`'s token account
/// for `mint` (paid by `payer`), or does nothing when it exists.
pub fn create_associated_token_account_idempotent(
    payer: &Pubkey,
    owner: &Pubkey,
    mint: &Pubkey,
) -> Instruction {
    let ata = associated_token_address(owner, mint);
    Instruction {
        program_id: ASSOCIATED_TOKEN_PROGRAM,
        accounts: vec![
            AccountMeta::new(*payer, true),
            AccountMeta::new(ata, false),
            AccountMeta::new_readonly(*owner, false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new_readonly(SYSTEM_PROGRAM, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        // AssociatedTokenAccountInstruction::CreateIdempotent is tag 1.
        data: vec![1],
    }
}
