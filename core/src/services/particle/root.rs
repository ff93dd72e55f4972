//! The signing root of a transaction and the per-operation signatures, computed as the SDK
//! computes them (`particle-ua-wire.md` §5; the SDK's `createMultiChainUnsignedData` and
//! `injectMultiChainSignature`).
//!
//! - Each user operation `(chainId, userOpHash)` is a leaf: an EVM op (`chainId != 101`)
//!   `keccak256(uint48 validUntil ‖ uint48 validAfter ‖ bytes32 userOpHash)` (packed), a
//!   Solana op `keccak256(userOpHash)`.
//! - The leaves, in order, make a Merkle tree with sorted pairs (merkletreejs `sortPairs`):
//!   each parent is `keccak256(min ‖ max)`, an odd last node goes up unhashed; one leaf is its
//!   own root. Each op's proof is its siblings from leaf to root, missing ones skipped.
//! - `validUntil` is the creation time in seconds plus 600, `validAfter` 0; both are fixed when
//!   the transaction is created and used again when it is sent.
//! - The owner signs the root (`crate::signer`); each op then carries a blob: EVM
//!   `abi.encode(uint48 validUntil, uint48 validAfter, bytes32 root, bytes32[] proof, bytes
//!   signature)`, Solana `root ‖ u32le(proof length) ‖ proof ‖ signature`.

use alloy_primitives::{B256, Bytes, U256, keccak256};
use alloy_sol_types::SolValue;

use super::assets::SOLANA_CHAIN_ID;
use crate::error::{Error, ErrorKind, Result};

/// How long a transaction's signature is valid after its creation, in seconds.
pub const VALIDITY_SECONDS: u64 = 600;

/// One user operation of a transaction: what the root commits to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserOpRef {
    /// The op's chain (101: Solana).
    pub chain_id: u64,
    /// The op's hash, from the service.
    pub user_op_hash: B256,
}

impl UserOpRef {
    /// Whether the SDK treats this op as Solana's.
    pub fn is_solana(&self) -> bool {
        self.chain_id == SOLANA_CHAIN_ID
    }

    /// The op's leaf for a signature valid from `valid_after` to `valid_until` (seconds).
    pub fn leaf(&self, valid_until: u64, valid_after: u64) -> B256 {
        if self.is_solana() {
            return keccak256(self.user_op_hash);
        }
        let mut packed = [0u8; 6 + 6 + 32];
        packed[..6].copy_from_slice(&valid_until.to_be_bytes()[2..]);
        packed[6..12].copy_from_slice(&valid_after.to_be_bytes()[2..]);
        packed[12..].copy_from_slice(self.user_op_hash.as_slice());
        keccak256(packed)
    }
}

/// What the owner signs and what each op needs to carry its signature: the SDK's `rootHash` and
/// `data[i] = {p, validUntil, validAfter}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningRoot {
    /// The root of the ops' tree: what the owner signs.
    pub root_hash: B256,
    /// The end of the signature's validity, unix seconds.
    pub valid_until: u64,
    /// Its start (0).
    pub valid_after: u64,
    /// The ops, in order.
    pub user_ops: Vec<UserOpRef>,
    /// Each op's proof, leaf to root.
    pub proofs: Vec<Vec<B256>>,
}

impl SigningRoot {
    /// The root of `user_ops` for a transaction created at `now_ms` (unix milliseconds):
    /// `validUntil = ⌊now_ms / 1000⌋ + 600`, `validAfter = 0`.
    ///
    /// # Errors
    /// [`ErrorKind::Protocol`] when there is no op, or `validUntil` does not fit 48 bits.
    pub fn new(user_ops: Vec<UserOpRef>, now_ms: u64) -> Result<SigningRoot> {
        SigningRoot::with_window(user_ops, now_ms / 1000 + VALIDITY_SECONDS, 0)
    }

    /// The root of `user_ops` for a signature valid from `valid_after` to `valid_until`.
    ///
    /// # Errors
    /// As [`SigningRoot::new`].
    pub fn with_window(
        user_ops: Vec<UserOpRef>,
        valid_until: u64,
        valid_after: u64,
    ) -> Result<SigningRoot> {
        if user_ops.is_empty() {
            return Err(Error::new(
                ErrorKind::Protocol,
                "the transaction has no user operations to sign",
            ));
        }
        if valid_until >> 48 != 0 || valid_after >> 48 != 0 {
            return Err(Error::new(
                ErrorKind::Protocol,
                format!("validity window {valid_after}..{valid_until} does not fit 48 bits"),
            ));
        }
        let leaves: Vec<B256> =
            user_ops.iter().map(|op| op.leaf(valid_until, valid_after)).collect();
        let (root_hash, proofs) = merkle(&leaves);
        Ok(SigningRoot { root_hash, valid_until, valid_after, user_ops, proofs })
    }

    /// Each op's signature blob (the SDK's `userOp.signature`), for the owner's 65-byte
    /// `signature` of the root, in op order.
    pub fn op_signatures(&self, signature: &[u8; 65]) -> Vec<Bytes> {
        self.user_ops
            .iter()
            .zip(&self.proofs)
            .map(|(op, proof)| {
                if op.is_solana() {
                    solana_blob(self.root_hash, proof, signature)
                } else {
                    evm_blob(self.valid_until, self.valid_after, self.root_hash, proof, signature)
                }
            })
            .collect()
    }
}

fn parent(a: B256, b: B256) -> B256 {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    let mut both = [0u8; 64];
    both[..32].copy_from_slice(low.as_slice());
    both[32..].copy_from_slice(high.as_slice());
    keccak256(both)
}

/// The root over `leaves` (not empty) and each leaf's proof.
fn merkle(leaves: &[B256]) -> (B256, Vec<Vec<B256>>) {
    let mut proofs = vec![Vec::new(); leaves.len()];
    // Where each leaf's ancestor is in the current layer.
    let mut positions: Vec<usize> = (0..leaves.len()).collect();
    let mut layer = leaves.to_vec();
    while layer.len() > 1 {
        for (proof, position) in proofs.iter_mut().zip(positions.iter_mut()) {
            if let Some(sibling) = layer.get(*position ^ 1) {
                proof.push(*sibling);
            }
            *position /= 2;
        }
        layer = layer
            .chunks(2)
            .map(|pair| match pair {
                [a, b] => parent(*a, *b),
                [odd] => *odd,
                _ => unreachable!("chunks of two"),
            })
            .collect();
    }
    (layer[0], proofs)
}

fn evm_blob(
    valid_until: u64,
    valid_after: u64,
    root: B256,
    proof: &[B256],
    signature: &[u8; 65],
) -> Bytes {
    // uint48 encodes as one 32-byte word, as uint256 does.
    let encoded = (
        U256::from(valid_until),
        U256::from(valid_after),
        root,
        proof.to_vec(),
        Bytes::copy_from_slice(signature),
    )
        .abi_encode_params();
    Bytes::from(encoded)
}

fn solana_blob(root: B256, proof: &[B256], signature: &[u8; 65]) -> Bytes {
    let mut out = Vec::with_capacity(32 + 4 + 32 * proof.len() + 65);
    out.extend_from_slice(root.as_slice());
    out.extend_from_slice(&(proof.len() as u32).to_le_bytes());
    for sibling in proof {
        out.extend_from_slice(sibling.as_slice());
    }
    out.extend_from_slice(signature);
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{b256, hex};

    fn op(chain_id: u64, byte: u8) -> UserOpRef {
        UserOpRef { chain_id, user_op_hash: B256::repeat_byte(byte) }
    }

    /// The test vector of `particle-ua-wire.md` §5: `Date.now() = 1700000000999`, ops
    /// `[{8453, 0xa1×32}, {101, 0xb1×32}, {42161, 0xc1×32}]`, signature `0x11×65`.
    #[test]
    fn the_documents_test_vector() {
        let root = SigningRoot::new(
            vec![op(8453, 0xa1), op(101, 0xb1), op(42161, 0xc1)],
            1_700_000_000_999,
        )
        .unwrap();
        assert_eq!((root.valid_until, root.valid_after), (1_700_000_600, 0));
        let leaves = [
            b256!("59469723b4a87ec92966fec13aa09ca12e6ca6f47668d75a9ee832f74845cddb"),
            b256!("7b1a4cacbf900f1c697c47e6e524aa20c1607487b78efaf5d2d69610fb537c18"),
            b256!("66d871e2f3b400e9fde8c08105a3269ebb44baa06f3a1fc2ee3de2b08c0b1a9c"),
        ];
        for (i, leaf) in leaves.iter().enumerate() {
            assert_eq!(root.user_ops[i].leaf(root.valid_until, 0), *leaf, "leaf {i}");
        }
        assert_eq!(
            root.root_hash,
            b256!("8069143401a704a34e41e4f1472f65f851b409b85020f7553010c0e92c44a4dd")
        );
        let h01 = b256!("c7e1c710e985eab2beac44af58e7a076ce642f52329ea536e803c46b525addc4");
        assert_eq!(parent(leaves[0], leaves[1]), h01);
        assert_eq!(
            root.proofs,
            vec![vec![leaves[1], leaves[2]], vec![leaves[0], leaves[2]], vec![h01]]
        );

        let signature = [0x11u8; 65];
        let blobs = root.op_signatures(&signature);
        // Solana: root ‖ 02000000 ‖ leaf0 ‖ leaf2 ‖ signature.
        let solana = format!(
            "8069143401a704a34e41e4f1472f65f851b409b85020f7553010c0e92c44a4dd02000000{}{}{}",
            hex::encode(leaves[0]),
            hex::encode(leaves[2]),
            "11".repeat(65)
        );
        assert_eq!(hex::encode(&blobs[1]), solana);
        // EVM (the third op): the words of abi.encode, then the signature padded to 32 bytes.
        let word = |tail: &str| format!("{tail:0>64}");
        let evm = [
            word("6553f358"),
            word("0"),
            "8069143401a704a34e41e4f1472f65f851b409b85020f7553010c0e92c44a4dd".to_owned(),
            word("a0"),
            word("e0"),
            word("1"),
            hex::encode(h01),
            word("41"),
            format!("{}{}", "11".repeat(65), "00".repeat(31)),
        ]
        .concat();
        assert_eq!(hex::encode(&blobs[2]), evm);
        // The first op's blob has its two-element proof.
        assert_eq!(blobs[0].len(), 32 * 5 + 32 + 64 + 32 + 96);
    }

    #[test]
    fn one_op_is_its_own_root_and_trees_of_any_size_verify() {
        let one = SigningRoot::with_window(vec![op(1, 7)], 1000, 0).unwrap();
        assert_eq!(one.root_hash, one.user_ops[0].leaf(1000, 0));
        assert_eq!(one.proofs, vec![Vec::<B256>::new()]);
        for n in 1..=9u8 {
            let ops: Vec<_> =
                (0..n).map(|i| op(if i % 3 == 0 { 101 } else { 8453 }, i + 1)).collect();
            let root = SigningRoot::with_window(ops, 1_700_000_600, 0).unwrap();
            for (i, proof) in root.proofs.iter().enumerate() {
                // The sorted-pairs verification merkletreejs (and the on-chain checks) use.
                let leaf = root.user_ops[i].leaf(root.valid_until, 0);
                let folded = proof.iter().fold(leaf, |node, sibling| parent(node, *sibling));
                assert_eq!(folded, root.root_hash, "{n} ops, op {i}");
            }
        }
    }

    #[test]
    fn no_ops_or_a_window_beyond_48_bits_is_refused() {
        assert_eq!(SigningRoot::new(vec![], 0).unwrap_err().kind(), ErrorKind::Protocol);
        assert!(SigningRoot::with_window(vec![op(1, 1)], 1 << 48, 0).is_err());
    }
}
