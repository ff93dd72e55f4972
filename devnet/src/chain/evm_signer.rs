//! EIP-155 legacy transactions, signed by devnet's keys (`KeyPair`'s secp256k1 key).
//!
//! Legacy rather than EIP-1559 on purpose: a legacy transaction pays exactly `gasPrice` per gas,
//! so devnet knows in advance what gas it must send a deposit address, and a receipt's
//! `gasUsed × effectiveGasPrice` is what the address paid.
//!
//! The signing hash is keccak256(rlp([nonce, gasPrice, gas, to, value, data, chainId, 0, 0]));
//! the signed transaction is rlp([nonce, gasPrice, gas, to, value, data, v, r, s]) with
//! `v = chainId × 2 + 35 + y_parity`.

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_rlp::{Encodable, Header};

use super::keys::EvmKey;

/// An unsigned legacy transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyTx {
    pub chain_id: u64,
    pub nonce: u64,
    pub gas_price: U256,
    pub gas_limit: u64,
    pub to: Address,
    pub value: U256,
    pub data: Vec<u8>,
}

/// A signed transaction: the bytes for `eth_sendRawTransaction` and their hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedTx {
    pub raw: Vec<u8>,
    pub hash: B256,
}

impl LegacyTx {
    /// The hash the sender signs (EIP-155).
    pub fn signing_hash(&self) -> B256 {
        let mut out = Vec::new();
        self.encode_with(&mut out, |out| {
            self.chain_id.encode(out);
            0u8.encode(out);
            0u8.encode(out);
        });
        keccak256(out)
    }

    /// Signs with `key`.
    ///
    /// # Errors
    /// The signer's message (it does not fail for a valid key).
    pub fn sign(&self, key: &EvmKey) -> Result<SignedTx, String> {
        let (r, s, odd) = key.sign_hash(self.signing_hash())?;
        let v = self
            .chain_id
            .checked_mul(2)
            .and_then(|v| v.checked_add(35 + u64::from(odd)))
            .ok_or_else(|| format!("chain id {} is too large for EIP-155", self.chain_id))?;
        let mut raw = Vec::new();
        self.encode_with(&mut raw, |out| {
            v.encode(out);
            // r and s are integers in RLP: leading zero bytes are dropped.
            U256::from_be_bytes(r.0).encode(out);
            U256::from_be_bytes(s.0).encode(out);
        });
        let hash = keccak256(&raw);
        Ok(SignedTx { raw, hash })
    }

    /// RLP list of the six common fields followed by what `tail` writes.
    fn encode_with(&self, out: &mut Vec<u8>, tail: impl Fn(&mut Vec<u8>)) {
        let mut payload = Vec::new();
        self.nonce.encode(&mut payload);
        self.gas_price.encode(&mut payload);
        self.gas_limit.encode(&mut payload);
        self.to.encode(&mut payload);
        self.value.encode(&mut payload);
        self.data.as_slice().encode(&mut payload);
        tail(&mut payload);
        Header { list: true, payload_length: payload.len() }.encode(out);
        out.extend_from_slice(&payload);
    }
}

#[cfg(test)]
mod tests {
    use alloy_primitives::hex;

    use super::*;

    /// The example of EIP-155 itself.
    #[test]
    fn eip155_example() {
        let key = EvmKey::from_hex(&format!("0x{}", "46".repeat(32))).unwrap();
        let tx = LegacyTx {
            chain_id: 1,
            nonce: 9,
            gas_price: U256::from(20_000_000_000u64),
            gas_limit: 21_000,
            to: "0x3535353535353535353535353535353535353535".parse().unwrap(),
            value: U256::from(1_000_000_000_000_000_000u64),
            data: Vec::new(),
        };
        assert_eq!(
            tx.signing_hash(),
            "0xdaf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53"
                .parse::<B256>()
                .unwrap()
        );
        let signed = tx.sign(&key).unwrap();
        assert_eq!(
            hex::encode(&signed.raw),
            "f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a764000080\
             25a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761a\
             ecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"
        );
        assert_eq!(signed.hash, keccak256(&signed.raw));
    }
}
