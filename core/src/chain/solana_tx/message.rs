//! Legacy messages (what the signers sign) and transactions (a message and its signatures).

use std::collections::BTreeMap;

use super::instructions::Instruction;
use super::keys::{Hash, Pubkey, Signature};
use super::wire::{Reader, encode_compact_u16};
use crate::error::{Error, ErrorKind, Result};

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
        let mut reader = Reader::new(bytes);
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
        let mut reader = Reader::new(bytes);
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
