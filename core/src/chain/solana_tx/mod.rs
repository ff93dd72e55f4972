//! The legacy Solana message and transaction wire format, program-derived addresses, and the
//! instructions depositkit builds (system transfer, SPL Token `TransferChecked`, associated
//! token account `CreateIdempotent`).
//!
//! Written here rather than taken from the `solana-*` crates, which need a newer compiler than
//! this workspace's. The format (Solana's `legacy::Message`):
//!
//! ```text
//! transaction = compact_u16(n) signature[64] × n, message
//! message     = header[3], compact_u16(k) pubkey[32] × k, recent_blockhash[32],
//!               compact_u16(m) instruction × m
//! header      = num_required_signatures, num_readonly_signed, num_readonly_unsigned
//! instruction = program_id_index u8, compact_u16(a) account_index u8 × a,
//!               compact_u16(d) data[d]
//! ```
//!
//! Account keys are ordered: the fee payer, then the other writable signers, readonly signers,
//! writable non-signers and readonly non-signers, each group sorted by key bytes (what
//! Solana's `Message::new` produces, so transactions built here are byte-identical to theirs).
//!
//! One file per part: `keys.rs` (addresses, blockhashes, signatures, the programs' ids),
//! `instructions.rs` (accounts, instructions and the three we build), `message.rs` (messages
//! and transactions), `wire.rs` (compact-u16 lengths and the parser), `pda.rs`
//! (program-derived and associated token addresses).

mod instructions;
mod keys;
mod message;
mod pda;
mod wire;

pub use instructions::{
    AccountMeta, Instruction, create_associated_token_account_idempotent, spl_transfer_checked,
    system_transfer,
};
pub use keys::{
    ASSOCIATED_TOKEN_PROGRAM, Hash, Pubkey, SYSTEM_PROGRAM, Signature, TOKEN_ACCOUNT_LEN,
    TOKEN_PROGRAM,
};
pub use message::{CompiledInstruction, Message, MessageHeader, Transaction};
pub use pda::{
    associated_token_address, associated_token_address_with_program, create_program_address,
    find_program_address,
};
pub use wire::{decode_compact_u16, encode_compact_u16};

#[cfg(test)]
mod tests;
