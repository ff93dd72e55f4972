//! The wire format's pieces: compact-u16 lengths and the parser of messages and transactions.

use super::keys::{Hash, Pubkey};
use super::message::{CompiledInstruction, Message, MessageHeader};
use crate::error::{Error, Result};

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

/// Reads a message or a transaction from the front of `bytes`.
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

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

    pub(super) fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        self.slice(N)?.try_into().map_err(|_| Self::truncated())
    }

    pub(super) fn compact_u16(&mut self) -> Result<usize> {
        let rest = self.bytes.get(self.at..).ok_or_else(Self::truncated)?;
        let (value, used) = decode_compact_u16(rest).ok_or_else(Self::truncated)?;
        self.at += used;
        Ok(value)
    }

    pub(super) fn message(&mut self) -> Result<Message> {
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

    pub(super) fn finish(&self) -> Result<()> {
        if self.at != self.bytes.len() {
            return Err(Error::invalid_argument(format!(
                "malformed Solana transaction: {} trailing bytes",
                self.bytes.len() - self.at
            )));
        }
        Ok(())
    }
}
