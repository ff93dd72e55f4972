//! The owner's signature of a Particle universal transaction, as the published SDK 2.0.3 makes
//! it (`particle-ua-wire.md` §5), and its verification.
//!
//! A transaction has user operations, each `(chainId, userOpHash)`. The SDK hashes each into a
//! leaf — an EVM op (`chainId != 101`): `keccak256(uint48 validUntil ‖ uint48 validAfter ‖
//! bytes32 userOpHash)` (packed); a Solana op: `keccak256(userOpHash)` — and builds a Merkle tree
//! over the leaves in order with sorted pairs (each parent is `keccak256(min ‖ max)`, an odd last
//! node is promoted unhashed). The owner signs the root's 32 bytes with EIP-191
//! `personal_sign`; each op then carries a blob: EVM `abi.encode(uint48 validUntil, uint48
//! validAfter, bytes32 root, bytes32[] proof, bytes signature)`, Solana `root ‖ u32le(n) ‖
//! proof[0..n] ‖ signature`.
//!
//! Hashing and recovery are alloy's (`keccak256`, `Signature::recover_address_from_msg`), the
//! ABI decoding alloy-sol-types'.

use alloy_primitives::aliases::U48;
use alloy_primitives::{Address, B256, Bytes, keccak256};
use alloy_sol_types::SolValue;

use crate::services::signer;

/// The chain id the SDK treats as Solana.
pub const SOLANA_CHAIN_ID: u64 = 101;

/// One user operation of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserOp {
    pub chain_id: u64,
    pub hash: B256,
}

impl UserOp {
    fn is_solana(&self) -> bool {
        self.chain_id == SOLANA_CHAIN_ID
    }

    /// The op's leaf for a signature valid in `[valid_after, valid_until]` (seconds).
    pub fn leaf(&self, valid_until: u64, valid_after: u64) -> B256 {
        if self.is_solana() {
            return keccak256(self.hash);
        }
        let mut packed = Vec::with_capacity(6 + 6 + 32);
        packed.extend_from_slice(&valid_until.to_be_bytes()[2..]);
        packed.extend_from_slice(&valid_after.to_be_bytes()[2..]);
        packed.extend_from_slice(self.hash.as_slice());
        keccak256(packed)
    }
}

fn parent(a: B256, b: B256) -> B256 {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    let mut both = [0u8; 64];
    both[..32].copy_from_slice(low.as_slice());
    both[32..].copy_from_slice(high.as_slice());
    keccak256(both)
}

/// The root of the tree over `leaves` and each leaf's proof (sibling hashes, leaf to root).
/// `leaves` must not be empty.
pub fn tree(leaves: &[B256]) -> (B256, Vec<Vec<B256>>) {
    let mut proofs = vec![Vec::new(); leaves.len()];
    // Which node of the current level each leaf is under.
    let mut position: Vec<usize> = (0..leaves.len()).collect();
    let mut level = leaves.to_vec();
    while level.len() > 1 {
        for (leaf, at) in position.iter_mut().enumerate() {
            let sibling = *at ^ 1;
            if let Some(hash) = level.get(sibling) {
                proofs[leaf].push(*hash);
            }
            *at /= 2;
        }
        level = level
            .chunks(2)
            .map(|pair| if let [a, b] = pair { parent(*a, *b) } else { pair[0] })
            .collect();
    }
    (level.first().copied().unwrap_or_default(), proofs)
}

/// The root a `proof` leads to from `leaf`.
pub fn root_of(leaf: B256, proof: &[B256]) -> B256 {
    proof.iter().fold(leaf, |node, sibling| parent(node, *sibling))
}

/// What one op's signature blob says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedOp {
    /// `None` for a Solana blob, which carries no time bounds.
    pub validity: Option<(u64, u64)>,
    pub root: B256,
    pub proof: Vec<B256>,
    pub signature: Vec<u8>,
}

/// Decodes the blob of an op on `chain_id` (without `0x`: raw bytes).
///
/// # Errors
/// A message saying what is wrong.
pub fn decode(chain_id: u64, blob: &[u8]) -> Result<SignedOp, String> {
    if chain_id == SOLANA_CHAIN_ID {
        let root = blob.get(..32).ok_or("shorter than the 32-byte root")?;
        let count = blob.get(32..36).ok_or("no proof length after the root")?;
        let count = u32::from_le_bytes([count[0], count[1], count[2], count[3]]) as usize;
        let end = count
            .checked_mul(32)
            .and_then(|n| n.checked_add(36))
            .filter(|end| *end <= blob.len())
            .ok_or("the proof runs past the end")?;
        let proof = blob[36..end].chunks_exact(32).map(B256::from_slice).collect();
        return Ok(SignedOp {
            validity: None,
            root: B256::from_slice(root),
            proof,
            signature: blob[end..].to_vec(),
        });
    }
    let (valid_until, valid_after, root, proof, signature) =
        <(U48, U48, B256, Vec<B256>, Bytes)>::abi_decode_params(blob).map_err(|e| {
            format!("not abi.encode(uint48, uint48, bytes32, bytes32[], bytes): {e}")
        })?;
    Ok(SignedOp {
        validity: Some((valid_until.to::<u64>(), valid_after.to::<u64>())),
        root,
        proof,
        signature: signature.to_vec(),
    })
}

/// The blob the SDK's `injectMultiChainSignature` writes for `op` (what a client sends).
pub fn encode(op: &UserOp, signed: &SignedOp) -> Vec<u8> {
    match signed.validity {
        Some((valid_until, valid_after)) if !op.is_solana() => (
            U48::from(valid_until),
            U48::from(valid_after),
            signed.root,
            signed.proof.clone(),
            Bytes::from(signed.signature.clone()),
        )
            .abi_encode_params(),
        _ => {
            let mut blob = signed.root.to_vec();
            let count = u32::try_from(signed.proof.len()).unwrap_or(u32::MAX);
            blob.extend_from_slice(&count.to_le_bytes());
            for hash in &signed.proof {
                blob.extend_from_slice(hash.as_slice());
            }
            blob.extend_from_slice(&signed.signature);
            blob
        }
    }
}

/// What a client owning `key` sends for `ops` (the SDK's `createMultiChainUnsignedData`, an
/// EIP-191 signature of the root, then `injectMultiChainSignature`): one blob per op, valid
/// from 0 to `valid_until` (unix seconds). For tests and tools; `ops` must not be empty.
///
/// # Errors
/// Signing failed (it does not for a valid key).
pub fn sign_ops(
    ops: &[UserOp],
    key: &k256::ecdsa::SigningKey,
    valid_until: u64,
) -> crate::error::Result<Vec<Vec<u8>>> {
    let leaves: Vec<B256> = ops.iter().map(|op| op.leaf(valid_until, 0)).collect();
    let (root, proofs) = tree(&leaves);
    let signature = signer::personal_sign(key, root.as_slice())?.to_vec();
    Ok(ops
        .iter()
        .zip(proofs)
        .map(|(op, proof)| {
            let signed = SignedOp {
                validity: Some((valid_until, 0)),
                root,
                proof,
                signature: signature.clone(),
            };
            encode(op, &signed)
        })
        .collect())
}

/// Why a transaction's signatures were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not signed as the SDK signs, or not by the owner: the message says how.
    Invalid(String),
    /// Signed, but outside `[validAfter, validUntil]`.
    Expired(String),
}

/// Checks that `blobs` (one per op, in the ops' order) sign every op of the transaction with one
/// root, each proof leading from the op's leaf to that root, and the root signed (EIP-191 over
/// its 32 bytes) by `owner`; with `now_secs`, also that the EVM ops' validity covers it.
/// Returns the root.
///
/// # Errors
/// [`Refusal`].
pub fn verify(
    ops: &[UserOp],
    blobs: &[Vec<u8>],
    owner: Address,
    now_secs: Option<u64>,
) -> Result<B256, Refusal> {
    let invalid = |m: String| Refusal::Invalid(m);
    if ops.is_empty() || ops.len() != blobs.len() {
        return Err(invalid(format!(
            "{} signatures for {} user operations",
            blobs.len(),
            ops.len()
        )));
    }
    let mut root = None;
    let mut validity = None;
    for (op, blob) in ops.iter().zip(blobs) {
        let signed = decode(op.chain_id, blob)
            .map_err(|e| invalid(format!("userOp {:#x} (chain {}): {e}", op.hash, op.chain_id)))?;
        if *root.get_or_insert(signed.root) != signed.root {
            return Err(invalid("the user operations carry different roots".into()));
        }
        let (valid_until, valid_after) = match signed.validity {
            Some(bounds) => {
                if *validity.get_or_insert(bounds) != bounds {
                    return Err(invalid("the EVM user operations carry different validity".into()));
                }
                bounds
            }
            None => (0, 0),
        };
        if root_of(op.leaf(valid_until, valid_after), &signed.proof) != signed.root {
            return Err(invalid(format!(
                "the proof of userOp {:#x} does not lead to rootHash {:#x}",
                op.hash, signed.root
            )));
        }
        match signer::recover(signed.root.as_slice(), &signed.signature) {
            Some(signer) if signer == owner => {}
            Some(signer) => {
                return Err(invalid(format!(
                    "rootHash is signed by {signer}, not by the owner {owner} (EIP-191 \
                     personal_sign over the root's 32 bytes)"
                )));
            }
            None => {
                return Err(invalid("the signature is not a 65-byte secp256k1 signature".into()));
            }
        }
    }
    if let (Some(now), Some((valid_until, valid_after))) = (now_secs, validity)
        && (now > valid_until || now < valid_after)
    {
        return Err(Refusal::Expired(format!(
            "the signature is valid from {valid_after} to {valid_until} (unix seconds), not at \
             {now}"
        )));
    }
    Ok(root.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use alloy_primitives::{b256, hex};

    use super::*;

    /// The test vector of `particle-ua-wire.md` §5.
    fn vector_ops() -> Vec<UserOp> {
        vec![
            UserOp { chain_id: 8453, hash: B256::repeat_byte(0xa1) },
            UserOp { chain_id: 101, hash: B256::repeat_byte(0xb1) },
            UserOp { chain_id: 42161, hash: B256::repeat_byte(0xc1) },
        ]
    }

    const LEAF0: B256 = b256!("59469723b4a87ec92966fec13aa09ca12e6ca6f47668d75a9ee832f74845cddb");
    const LEAF1: B256 = b256!("7b1a4cacbf900f1c697c47e6e524aa20c1607487b78efaf5d2d69610fb537c18");
    const LEAF2: B256 = b256!("66d871e2f3b400e9fde8c08105a3269ebb44baa06f3a1fc2ee3de2b08c0b1a9c");
    const ROOT: B256 = b256!("8069143401a704a34e41e4f1472f65f851b409b85020f7553010c0e92c44a4dd");
    const PAIR01: B256 = b256!("c7e1c710e985eab2beac44af58e7a076ce642f52329ea536e803c46b525addc4");

    #[test]
    fn the_wire_documents_test_vector() {
        // Date.now() = 1700000000999: validUntil = floor(now / 1000) + 600.
        let valid_until = 1_700_000_000_999u64 / 1000 + 600;
        assert_eq!(valid_until, 1_700_000_600);
        let leaves: Vec<B256> = vector_ops().iter().map(|op| op.leaf(valid_until, 0)).collect();
        assert_eq!(leaves, vec![LEAF0, LEAF1, LEAF2]);
        let (root, proofs) = tree(&leaves);
        assert_eq!(root, ROOT);
        assert_eq!(proofs, vec![vec![LEAF1, LEAF2], vec![LEAF0, LEAF2], vec![PAIR01]]);
        for (leaf, proof) in leaves.iter().zip(&proofs) {
            assert_eq!(root_of(*leaf, proof), ROOT);
        }

        let sig = vec![0x11u8; 65];
        let ops = vector_ops();
        let signed = |i: usize| SignedOp {
            validity: Some((valid_until, 0)),
            root,
            proof: proofs[i].clone(),
            signature: sig.clone(),
        };
        // Solana: root ‖ u32le(2) ‖ leaf0 ‖ leaf2 ‖ sig.
        let solana = encode(&ops[1], &signed(1));
        let expected =
            [ROOT.as_slice(), &[2, 0, 0, 0], LEAF0.as_slice(), LEAF2.as_slice(), sig.as_slice()]
                .concat();
        assert_eq!(solana, expected);
        // EVM: validUntil, validAfter, root, 0xa0, 0xe0, [1, pair01], [65, sig padded].
        let evm = encode(&ops[2], &signed(2));
        let word = |n: u64| B256::left_padding_from(&n.to_be_bytes());
        let mut padded = sig.clone();
        padded.resize(96, 0);
        let expected = [
            word(1_700_000_600).as_slice(),
            word(0).as_slice(),
            ROOT.as_slice(),
            word(0xa0).as_slice(),
            word(0xe0).as_slice(),
            word(1).as_slice(),
            PAIR01.as_slice(),
            word(65).as_slice(),
            &padded,
        ]
        .concat();
        assert_eq!(hex::encode(&evm), hex::encode(&expected));
        assert!(hex::encode(&evm).starts_with(&format!("{:064x}", 0x6553_f358u64)));
        // And back.
        assert_eq!(decode(42161, &evm).unwrap(), signed(2));
        let back = decode(101, &solana).unwrap();
        assert_eq!((back.root, back.proof, back.signature), (ROOT, proofs[1].clone(), sig));
    }

    #[test]
    fn odd_nodes_are_promoted_and_one_leaf_is_its_own_root() {
        let leaf = B256::repeat_byte(7);
        assert_eq!(tree(&[leaf]), (leaf, vec![Vec::new()]));
        let leaves: Vec<B256> = (1u8..=5).map(B256::repeat_byte).collect();
        let (root, proofs) = tree(&leaves);
        for (leaf, proof) in leaves.iter().zip(&proofs) {
            assert_eq!(root_of(*leaf, proof), root);
        }
        // The fifth leaf is promoted twice: its proof is the root of the first four.
        assert_eq!(proofs[4].len(), 1);
    }

    fn owner_key() -> k256::ecdsa::SigningKey {
        k256::ecdsa::SigningKey::from_slice(&[0x42; 32]).unwrap()
    }

    #[test]
    fn verification_takes_the_owners_signature_only() {
        let key = owner_key();
        let owner = Address::from_private_key(&key);
        let ops = vector_ops();
        let blobs = sign_ops(&ops, &key, 2_000).unwrap();
        let root = verify(&ops, &blobs, owner, Some(1_000)).unwrap();
        assert_eq!(root, tree(&ops.iter().map(|op| op.leaf(2_000, 0)).collect::<Vec<_>>()).0);
        // Expired, not yet valid.
        assert!(matches!(verify(&ops, &blobs, owner, Some(2_001)), Err(Refusal::Expired(_))));
        // Another owner.
        let stranger = Address::repeat_byte(9);
        let Err(Refusal::Invalid(why)) = verify(&ops, &blobs, stranger, None) else { panic!() };
        assert!(why.contains("not by the owner"), "{why}");
        // Blobs swapped between ops: the proofs do not fit.
        let swapped = vec![blobs[2].clone(), blobs[1].clone(), blobs[0].clone()];
        assert!(matches!(verify(&ops, &swapped, owner, None), Err(Refusal::Invalid(_))));
        // A missing signature; garbage.
        assert!(verify(&ops, &blobs[..2], owner, None).is_err());
        let garbage = vec![blobs[0].clone(), vec![1, 2, 3], blobs[2].clone()];
        assert!(matches!(verify(&ops, &garbage, owner, None), Err(Refusal::Invalid(_))));
        // A different op hash under the same signatures.
        let mut other = ops.clone();
        other[0].hash = B256::repeat_byte(0xa2);
        assert!(verify(&other, &blobs, owner, None).is_err());
    }
}
