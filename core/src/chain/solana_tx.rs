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

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use curve25519_dalek::edwards::CompressedEdwardsY;
use sha2::{Digest, Sha256};

use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};

macro_rules! base58_bytes {
    ($(#[$meta:meta])* $name:ident, $len:literal, $what:literal) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name([u8; $len]);

        impl $name {
            /// From raw bytes.
            pub const fn new_from_array(bytes: [u8; $len]) -> Self {
                $name(bytes)
            }

            /// From a byte slice of exactly the right length.
            ///
            /// # Errors
            /// [`ErrorKind::InvalidArgument`] for any other length.
            pub fn try_from_slice(bytes: &[u8]) -> Result<Self> {
                let array: [u8; $len] = bytes.try_into().map_err(|_| {
                    Error::invalid_argument(format!(
                        "{} must be {} bytes, got {}",
                        $what,
                        $len,
                        bytes.len()
                    ))
                })?;
                Ok($name(array))
            }

            /// The raw bytes.
            pub const fn to_bytes(&self) -> [u8; $len] {
                self.0
            }

            /// The raw bytes, borrowed.
            pub const fn as_bytes(&self) -> &[u8; $len] {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = Error;

            /// Parses base58.
            fn from_str(text: &str) -> Result<Self> {
                let bytes = bs58::decode(text).into_vec().map_err(|_| {
                    Error::invalid_argument(format!("{} is not base58: {}", $what, quote(text)))
                })?;
                let array: [u8; $len] = bytes.as_slice().try_into().map_err(|_| {
                    Error::invalid_argument(format!(
                        "{} must be {} bytes, {} decodes to {}",
                        $what,
                        $len,
                        quote(text),
                        bytes.len()
                    ))
                })?;
                Ok($name(array))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&bs58::encode(self.0).into_string())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({self})", stringify!($name))
            }
        }
    };
}

base58_bytes!(
    /// A Solana account address: 32 bytes, shown and parsed as base58.
    Pubkey, 32, "a Solana public key"
);
base58_bytes!(
    /// A blockhash: 32 bytes, base58.
    Hash, 32, "a Solana blockhash"
);
base58_bytes!(
    /// An ed25519 signature: 64 bytes, base58. A transaction's first signature is its id.
    Signature, 64, "a Solana signature"
);

impl Pubkey {
    /// Whether the key is a point on the ed25519 curve. Program-derived addresses are exactly
    /// the keys that are not, so that no private key can sign for them.
    pub fn is_on_curve(&self) -> bool {
        CompressedEdwardsY(self.0).decompress().is_some()
    }
}

impl Signature {
    /// The all-zero placeholder of a signature not made yet.
    pub const EMPTY: Signature = Signature([0; 64]);
}

const fn pubkey(base58: &str) -> Pubkey {
    Pubkey(bs58::decode(base58.as_bytes()).into_array_const_unwrap())
}

/// The system program (`11111111111111111111111111111111`).
pub const SYSTEM_PROGRAM: Pubkey = Pubkey([0; 32]);
/// The SPL Token program (`TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA`).
pub const TOKEN_PROGRAM: Pubkey = pubkey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
/// The associated token account program (`ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL`).
pub const ASSOCIATED_TOKEN_PROGRAM: Pubkey = pubkey("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");

/// The size of an SPL Token account, for its rent-exempt minimum.
pub const TOKEN_ACCOUNT_LEN: usize = 165;

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

/// The three counts that say which account keys sign and which are readonly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MessageHeader {
    /// Signatures the transaction needs: the first keys.
    pub num_required_signatures: u8,
    /// The last keys among the signers that are readonly.
    pub num_readonly_signed_accounts: u8,
    /// The last keys among the non-signers that are readonly.
    pub num_readonly_unsigned_accounts: u8,
}

/// An instruction inside a message: indices into the message's account keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledInstruction {
    /// Index of the program's key.
    pub program_id_index: u8,
    /// Indices of the instruction's accounts.
    pub accounts: Vec<u8>,
    /// The instruction's input.
    pub data: Vec<u8>,
}

/// A legacy Solana message: what the signers sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Which keys sign and which are readonly.
    pub header: MessageHeader,
    /// Every account the message touches, ordered as the module documentation says.
    pub account_keys: Vec<Pubkey>,
    /// A recent blockhash: the transaction expires with it and it makes identical transfers
    /// distinct transactions.
    pub recent_blockhash: Hash,
    /// The instructions.
    pub instructions: Vec<CompiledInstruction>,
}

#[derive(Default, Clone, Copy)]
struct KeyFlags {
    signer: bool,
    writable: bool,
}

impl Message {
    /// Compiles `instructions` with `payer` as fee payer (the first key, a writable signer).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] when the message would have more than 256 account keys
    /// or an instruction more than 255 accounts.
    pub fn new(instructions: &[Instruction], payer: &Pubkey, blockhash: Hash) -> Result<Message> {
        // A BTreeMap: within each group keys end up sorted by their bytes, as Solana does.
        let mut flags: BTreeMap<Pubkey, KeyFlags> = BTreeMap::new();
        for ix in instructions {
            flags.entry(ix.program_id).or_default();
            for meta in &ix.accounts {
                let f = flags.entry(meta.pubkey).or_default();
                f.signer |= meta.is_signer;
                f.writable |= meta.is_writable;
            }
        }
        flags.remove(payer);
        let group = |signer: bool, writable: bool| {
            flags
                .iter()
                .filter(move |(_, f)| f.signer == signer && f.writable == writable)
                .map(|(k, _)| *k)
        };
        let writable_signers: Vec<Pubkey> =
            std::iter::once(*payer).chain(group(true, true)).collect();
        let readonly_signers: Vec<Pubkey> = group(true, false).collect();
        let writable_unsigned: Vec<Pubkey> = group(false, true).collect();
        let readonly_unsigned: Vec<Pubkey> = group(false, false).collect();
        let too_many = || Error::invalid_argument("a Solana message may hold at most 256 accounts");
        let header = MessageHeader {
            num_required_signatures: u8::try_from(writable_signers.len() + readonly_signers.len())
                .map_err(|_| too_many())?,
            num_readonly_signed_accounts: u8::try_from(readonly_signers.len())
                .map_err(|_| too_many())?,
            num_readonly_unsigned_accounts: u8::try_from(readonly_unsigned.len())
                .map_err(|_| too_many())?,
        };
        let account_keys: Vec<Pubkey> = writable_signers
            .into_iter()
            .chain(readonly_signers)
            .chain(writable_unsigned)
            .chain(readonly_unsigned)
            .collect();
        if account_keys.len() > 256 {
            return Err(too_many());
        }
        let index = |key: &Pubkey| -> Result<u8> {
            let position = account_keys.iter().position(|k| k == key).ok_or_else(|| {
                Error::new(ErrorKind::Internal, format!("account {key} missing from the message"))
            })?;
            u8::try_from(position).map_err(|_| too_many())
        };
        let compiled = instructions
            .iter()
            .map(|ix| {
                Ok(CompiledInstruction {
                    program_id_index: index(&ix.program_id)?,
                    accounts: ix
                        .accounts
                        .iter()
                        .map(|m| index(&m.pubkey))
                        .collect::<Result<_>>()?,
                    data: ix.data.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Message { header, account_keys, recent_blockhash: blockhash, instructions: compiled })
    }

    /// The keys that must sign, in signature order (the fee payer first).
    pub fn signers(&self) -> &[Pubkey] {
        let n = usize::from(self.header.num_required_signatures).min(self.account_keys.len());
        &self.account_keys[..n]
    }

    /// The wire bytes: what each signer signs.
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(3 + 1 + 32 * self.account_keys.len() + 32 + 64);
        out.extend([
            self.header.num_required_signatures,
            self.header.num_readonly_signed_accounts,
            self.header.num_readonly_unsigned_accounts,
        ]);
        encode_compact_u16(self.account_keys.len(), &mut out);
        for key in &self.account_keys {
            out.extend_from_slice(key.as_bytes());
        }
        out.extend_from_slice(self.recent_blockhash.as_bytes());
        encode_compact_u16(self.instructions.len(), &mut out);
        for ix in &self.instructions {
            out.push(ix.program_id_index);
            encode_compact_u16(ix.accounts.len(), &mut out);
            out.extend_from_slice(&ix.accounts);
            encode_compact_u16(ix.data.len(), &mut out);
            out.extend_from_slice(&ix.data);
        }
        out
    }

    /// Parses wire bytes (a legacy message; versioned messages are rejected).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for anything that is not exactly one legacy message.
    pub fn deserialize(bytes: &[u8]) -> Result<Message> {
        let mut reader = Reader { bytes, at: 0 };
        let message = reader.message()?;
        reader.finish()?;
        Ok(message)
    }
}

/// A transaction: a message and its signatures, one per signer in
/// [`Message::signers`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// The signatures ([`Signature::EMPTY`] where not signed yet).
    pub signatures: Vec<Signature>,
    /// The signed message.
    pub message: Message,
}

impl Transaction {
    /// The transaction with every signature still empty: what a wallet is given to sign
    /// (Phantom's `signAndSendTransaction`).
    pub fn unsigned(message: Message) -> Transaction {
        let n = usize::from(message.header.num_required_signatures);
        Transaction { signatures: vec![Signature::EMPTY; n], message }
    }

    /// The transaction with `signatures`, in signer order.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] unless there is exactly one signature per signer.
    pub fn with_signatures(message: Message, signatures: Vec<Signature>) -> Result<Transaction> {
        let n = usize::from(message.header.num_required_signatures);
        if signatures.len() != n {
            return Err(Error::invalid_argument(format!(
                "the message needs {n} signatures, got {}",
                signatures.len()
            )));
        }
        Ok(Transaction { signatures, message })
    }

    /// Puts `signature` in the place of `signer`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] when `signer` is not a signer of the message.
    pub fn set_signature(&mut self, signer: &Pubkey, signature: Signature) -> Result<()> {
        let position =
            self.message.signers().iter().position(|k| k == signer).ok_or_else(|| {
                Error::invalid_argument(format!("{signer} is not a signer of the transaction"))
            })?;
        match self.signatures.get_mut(position) {
            Some(slot) => {
                *slot = signature;
                Ok(())
            }
            None => Err(Error::invalid_argument("the transaction has too few signature slots")),
        }
    }

    /// The first signature: the transaction's id once signed.
    pub fn signature(&self) -> Option<&Signature> {
        self.signatures.first()
    }

    /// The message's wire bytes (what is signed).
    pub fn message_bytes(&self) -> Vec<u8> {
        self.message.serialize()
    }

    /// The wire bytes: signatures then message.
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        encode_compact_u16(self.signatures.len(), &mut out);
        for signature in &self.signatures {
            out.extend_from_slice(signature.as_bytes());
        }
        out.extend(self.message.serialize());
        out
    }

    /// Parses wire bytes.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for anything that is not exactly one legacy transaction.
    pub fn deserialize(bytes: &[u8]) -> Result<Transaction> {
        let mut reader = Reader { bytes, at: 0 };
        let count = reader.compact_u16()?;
        let mut signatures = Vec::with_capacity(count.min(16));
        for _ in 0..count {
            signatures.push(Signature(reader.array()?));
        }
        let message = reader.message()?;
        reader.finish()?;
        if signatures.len() != usize::from(message.header.num_required_signatures) {
            return Err(Error::invalid_argument(format!(
                "the transaction has {} signatures but its message needs {}",
                signatures.len(),
                message.header.num_required_signatures
            )));
        }
        Ok(Transaction { signatures, message })
    }
}

/// Appends `len` as Solana's compact-u16 (7 bits per byte, low first, high bit = more).
/// Lengths above `u16::MAX` cannot be encoded; the builders here never make them, and a larger
/// value is written as `u16::MAX`, which the receiver then rejects.
pub fn encode_compact_u16(len: usize, out: &mut Vec<u8>) {
    let mut rest = u16::try_from(len).unwrap_or(u16::MAX);
    loop {
        let byte = (rest & 0x7f) as u8;
        rest >>= 7;
        if rest == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Reads a compact-u16 from the front of `bytes`: the value and the bytes it took.
pub fn decode_compact_u16(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value: usize = 0;
    for (i, byte) in bytes.iter().take(3).enumerate() {
        value |= usize::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            // Reject non-canonical (zero-padded) and out-of-range encodings as Solana does.
            if (i > 0 && *byte == 0) || value > usize::from(u16::MAX) {
                return None;
            }
            return Some((value, i + 1));
        }
    }
    None
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn truncated() -> Error {
        Error::invalid_argument("malformed Solana transaction: truncated or invalid bytes")
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self.bytes.get(self.at).ok_or_else(Self::truncated)?;
        self.at += 1;
        Ok(b)
    }

    fn slice(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).ok_or_else(Self::truncated)?;
        let s = self.bytes.get(self.at..end).ok_or_else(Self::truncated)?;
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        self.slice(N)?.try_into().map_err(|_| Self::truncated())
    }

    fn compact_u16(&mut self) -> Result<usize> {
        let rest = self.bytes.get(self.at..).ok_or_else(Self::truncated)?;
        let (value, used) = decode_compact_u16(rest).ok_or_else(Self::truncated)?;
        self.at += used;
        Ok(value)
    }

    fn message(&mut self) -> Result<Message> {
        let first = self.byte()?;
        if first & 0x80 != 0 {
            return Err(Error::invalid_argument(
                "a versioned Solana message is not supported; only legacy messages are",
            ));
        }
        let header = MessageHeader {
            num_required_signatures: first,
            num_readonly_signed_accounts: self.byte()?,
            num_readonly_unsigned_accounts: self.byte()?,
        };
        let key_count = self.compact_u16()?;
        let mut account_keys = Vec::with_capacity(key_count.min(256));
        for _ in 0..key_count {
            account_keys.push(Pubkey(self.array()?));
        }
        let recent_blockhash = Hash(self.array()?);
        let ix_count = self.compact_u16()?;
        let mut instructions = Vec::with_capacity(ix_count.min(64));
        for _ in 0..ix_count {
            let program_id_index = self.byte()?;
            let n = self.compact_u16()?;
            let accounts = self.slice(n)?.to_vec();
            let n = self.compact_u16()?;
            let data = self.slice(n)?.to_vec();
            instructions.push(CompiledInstruction { program_id_index, accounts, data });
        }
        Ok(Message { header, account_keys, recent_blockhash, instructions })
    }

    fn finish(&self) -> Result<()> {
        if self.at != self.bytes.len() {
            return Err(Error::invalid_argument(format!(
                "malformed Solana transaction: {} trailing bytes",
                self.bytes.len() - self.at
            )));
        }
        Ok(())
    }
}

/// The most seeds a program address takes, and the longest seed.
const MAX_SEEDS: usize = 16;
const MAX_SEED_LEN: usize = 32;
const PDA_MARKER: &[u8] = b"ProgramDerivedAddress";

/// `sha256(seeds… ‖ program_id ‖ "ProgramDerivedAddress")` when that is off the curve; `None`
/// when it is on the curve or the seeds break the limits (16 seeds of at most 32 bytes).
pub fn create_program_address(seeds: &[&[u8]], program_id: &Pubkey) -> Option<Pubkey> {
    if seeds.len() > MAX_SEEDS || seeds.iter().any(|s| s.len() > MAX_SEED_LEN) {
        return None;
    }
    let mut hasher = Sha256::new();
    for seed in seeds {
        hasher.update(seed);
    }
    hasher.update(program_id.as_bytes());
    hasher.update(PDA_MARKER);
    let key = Pubkey(hasher.finalize().into());
    (!key.is_on_curve()).then_some(key)
}

/// The program-derived address of `seeds` under `program_id` and its bump seed: the first
/// bump from 255 down whose address is off the curve. `None` in the (astronomically unlikely)
/// case that no bump works, or when the seeds break the limits (at most 15 seeds here, since
/// the bump is one more).
pub fn find_program_address(seeds: &[&[u8]], program_id: &Pubkey) -> Option<(Pubkey, u8)> {
    if seeds.len() >= MAX_SEEDS {
        return None;
    }
    for bump in (0..=u8::MAX).rev() {
        let bump_seed = [bump];
        let with_bump: Vec<&[u8]> =
            seeds.iter().copied().chain(std::iter::once(&bump_seed[..])).collect();
        if let Some(key) = create_program_address(&with_bump, program_id) {
            return Some((key, bump));
        }
    }
    None
}

/// The associated token account of `owner` for `mint` under the SPL Token program.
pub fn associated_token_address(owner: &Pubkey, mint: &Pubkey) -> Pubkey {
    associated_token_address_with_program(owner, mint, &TOKEN_PROGRAM)
}

/// The associated token account of `owner` for `mint` under `token_program`.
pub fn associated_token_address_with_program(
    owner: &Pubkey,
    mint: &Pubkey,
    token_program: &Pubkey,
) -> Pubkey {
    let seeds: [&[u8]; 3] = [owner.as_bytes(), token_program.as_bytes(), mint.as_bytes()];
    // Three 32-byte seeds are within the limits, and a bump that works always exists in
    // practice (each fails with probability 1/2); the fallback keeps this function total.
    find_program_address(&seeds, &ASSOCIATED_TOKEN_PROGRAM).map_or(SYSTEM_PROGRAM, |(key, _)| key)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_ids_decode() {
        assert_eq!(SYSTEM_PROGRAM.to_string(), "11111111111111111111111111111111");
        assert_eq!(TOKEN_PROGRAM.to_string(), "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
        assert_eq!(
            ASSOCIATED_TOKEN_PROGRAM.to_string(),
            "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
        );
    }

    #[test]
    fn pubkeys_parse_and_reject() {
        let key: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".parse().unwrap();
        assert_eq!(key.to_string(), "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
        assert_eq!("0OIl".parse::<Pubkey>().unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert!("abc".parse::<Pubkey>().unwrap_err().message().contains("32 bytes"));
        assert_eq!(format!("{:?}", SYSTEM_PROGRAM), "Pubkey(11111111111111111111111111111111)");
    }

    #[test]
    fn compact_u16_matches_solana() {
        for (value, bytes) in [
            (0usize, vec![0x00]),
            (0x7f, vec![0x7f]),
            (0x80, vec![0x80, 0x01]),
            (0xff, vec![0xff, 0x01]),
            (0x100, vec![0x80, 0x02]),
            (0x3fff, vec![0xff, 0x7f]),
            (0x4000, vec![0x80, 0x80, 0x01]),
            (0xffff, vec![0xff, 0xff, 0x03]),
        ] {
            let mut out = Vec::new();
            encode_compact_u16(value, &mut out);
            assert_eq!(out, bytes, "{value}");
            assert_eq!(decode_compact_u16(&bytes), Some((value, bytes.len())));
        }
        assert_eq!(decode_compact_u16(&[0x80, 0x00]), None, "non-canonical");
        assert_eq!(decode_compact_u16(&[0xff, 0xff, 0x04]), None, "too large");
        assert_eq!(decode_compact_u16(&[0x80]), None, "truncated");
    }

    #[test]
    fn instruction_data() {
        let a = Pubkey::new_from_array([1; 32]);
        let b = Pubkey::new_from_array([2; 32]);
        let ix = system_transfer(&a, &b, 1_000_000_000);
        assert_eq!(ix.data, [2, 0, 0, 0, 0, 0xca, 0x9a, 0x3b, 0, 0, 0, 0]);
        let ix = spl_transfer_checked(&a, &b, &a, &b, 25_000_000, 6);
        assert_eq!(ix.data, [12, 0x40, 0x78, 0x7d, 0x01, 0, 0, 0, 0, 6]);
        assert_eq!(ix.accounts[3], AccountMeta::new_readonly(b, true));
        let ix = create_associated_token_account_idempotent(&a, &b, &a);
        assert_eq!(ix.data, [1]);
        assert_eq!(ix.accounts.len(), 6);
    }

    #[test]
    fn message_orders_keys_and_round_trips() {
        let payer = Pubkey::new_from_array([9; 32]);
        let to = Pubkey::new_from_array([3; 32]);
        let owner = Pubkey::new_from_array([1; 32]);
        let mint = Pubkey::new_from_array([5; 32]);
        let instructions = [
            create_associated_token_account_idempotent(&payer, &to, &mint),
            spl_transfer_checked(
                &associated_token_address(&owner, &mint),
                &mint,
                &associated_token_address(&to, &mint),
                &owner,
                7,
                6,
            ),
        ];
        let message = Message::new(&instructions, &payer, Hash::new_from_array([7; 32])).unwrap();
        assert_eq!(message.account_keys[0], payer);
        assert_eq!(message.account_keys[1], owner, "readonly signer after the payer");
        assert_eq!(
            message.header,
            MessageHeader {
                num_required_signatures: 2,
                num_readonly_signed_accounts: 1,
                num_readonly_unsigned_accounts: 5, // to, mint, system, token, ATA program
            }
        );
        assert_eq!(message.signers(), [payer, owner]);
        let bytes = message.serialize();
        assert_eq!(Message::deserialize(&bytes).unwrap(), message);
        let tx = Transaction::unsigned(message.clone());
        assert_eq!(tx.signatures.len(), 2);
        let wire = tx.serialize();
        assert_eq!(Transaction::deserialize(&wire).unwrap(), tx);
        assert!(Transaction::deserialize(&wire[..wire.len() - 1]).is_err());
        let mut longer = wire.clone();
        longer.push(0);
        assert!(Transaction::deserialize(&longer).is_err());
        let mut tx = tx;
        tx.set_signature(&owner, Signature::new_from_array([4; 64])).unwrap();
        assert_eq!(tx.signatures[1], Signature::new_from_array([4; 64]));
        assert!(tx.set_signature(&to, Signature::EMPTY).is_err());
        assert!(Transaction::with_signatures(message, vec![]).is_err());
    }

    // Reference bytes produced by solders 0.29 (`Message.new_with_blockhash`), the Python
    // binding of Solana's own Rust types.
    const SOLDERS_SYSTEM_TRANSFER: &str = concat!(
        "010001030101010101010101010101010101010101010101010101010101010101010101",
        "0202020202020202020202020202020202020202020202020202020202020202",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0707070707070707070707070707070707070707070707070707070707070707",
        "01020200010c0200000000ca9a3b00000000"
    );
    const SOLDERS_SPL_TRANSFER: &str = concat!(
        "010005080101010101010101010101010101010101010101010101010101010101010101",
        "6a79f2c6bd46b8300e2d46f1b734bdd937141df9be10ff49d0a3ffc43c88fbe6",
        "ebb46d0eb7bbe4951ee4eea6dd139f959f24fe1a1145da2d7c06b04ed0c94e67",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0202020202020202020202020202020202020202020202020202020202020202",
        "06ddf6e1d765a193d9cbe146ceeb79ac1cb485ed5f5b37913a8cf5857eff00a9",
        "8c97258f4e2489f1bb3d1029148e0d830b5a1399daff1084048e7bd8dbe9f859",
        "c6fa7af3bedbad3a3d65f36aabc97431b1bbe4c2d2f6e0e47ca60203452f5d61",
        "0707070707070707070707070707070707070707070707070707070707070707",
        "02060600010407030501010504020701000a0c40787d010000000006"
    );

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn system_transfer_message_matches_solders() {
        let from = Pubkey::new_from_array([1; 32]);
        let to = Pubkey::new_from_array([2; 32]);
        let ix = system_transfer(&from, &to, 1_000_000_000);
        let message = Message::new(&[ix], &from, Hash::new_from_array([7; 32])).unwrap();
        assert_eq!(hex(&message.serialize()), SOLDERS_SYSTEM_TRANSFER);
    }

    #[test]
    fn spl_transfer_with_ata_creation_matches_solders() {
        let wallet = Pubkey::new_from_array([1; 32]);
        let to = Pubkey::new_from_array([2; 32]);
        let mint: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".parse().unwrap();
        let source = associated_token_address(&wallet, &mint);
        let destination = associated_token_address(&to, &mint);
        assert_eq!(source.to_string(), "Gs6NxmndAL3PULGZeYUHCknpMdDVbL46eFCBh856p5z6");
        assert_eq!(destination.to_string(), "8Ae4vjYTZ5Z8mq2GJMUXpU2LDKMsqDaA7Tg7sZ85Gz9T");
        let instructions = [
            create_associated_token_account_idempotent(&wallet, &to, &mint),
            spl_transfer_checked(&source, &mint, &destination, &wallet, 25_000_000, 6),
        ];
        let message = Message::new(&instructions, &wallet, Hash::new_from_array([7; 32])).unwrap();
        assert_eq!(hex(&message.serialize()), SOLDERS_SPL_TRANSFER);
    }

    #[test]
    fn usdc_ata_of_a_known_owner() {
        let mint: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".parse().unwrap();
        let owner: Pubkey = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM".parse().unwrap();
        let seeds: [&[u8]; 3] = [owner.as_bytes(), TOKEN_PROGRAM.as_bytes(), mint.as_bytes()];
        let (ata, bump) = find_program_address(&seeds, &ASSOCIATED_TOKEN_PROGRAM).unwrap();
        assert_eq!(ata.to_string(), "FGETo8T8wMcN2wCjav8VK6eh3dLk63evNDPxzLSJra8B");
        assert_eq!(bump, 254);
        assert_eq!(associated_token_address(&owner, &mint), ata);
    }

    #[test]
    fn program_addresses() {
        // A program address is off the curve; an ordinary ed25519 public key is on it.
        let mint: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".parse().unwrap();
        let owner: Pubkey = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM".parse().unwrap();
        assert!(owner.is_on_curve());
        let ata = associated_token_address(&owner, &mint);
        assert!(!ata.is_on_curve());
        assert!(create_program_address(&[&[0u8; 33]], &TOKEN_PROGRAM).is_none());
        assert!(find_program_address(&[&b"x"[..]; 16], &TOKEN_PROGRAM).is_none());
    }
}
