//! ERC-20 calldata and decoding, through `alloy-sol-types`.
//!
//! The test token of the local chains (`tests/chains/fixtures/TestToken.sol`) adds an open
//! `mint(address,uint256)`; [`mint_calldata`] encodes it.

use alloy_primitives::{Address, B256, U256};
use alloy_sol_types::{SolCall, SolEvent, sol};
use serde_json::json;

use super::evm::{EvmRpc, Log};
use crate::error::{Error, ErrorKind, Result};

sol! {
    /// The ERC-20 functions and event depositkit uses, plus the test token's `mint`.
    interface IERC20 {
        function transfer(address to, uint256 amount) external returns (bool);
        function balanceOf(address owner) external view returns (uint256);
        function decimals() external view returns (uint8);
        function mint(address to, uint256 amount) external;
        event Transfer(address indexed from, address indexed to, uint256 value);
    }
}

/// `keccak256("Transfer(address,address,uint256)")`, the first topic of a transfer log.
pub const TRANSFER_EVENT_TOPIC: B256 = IERC20::Transfer::SIGNATURE_HASH;

/// Calldata of `transfer(to, amount)`.
pub fn transfer_calldata(to: Address, amount: U256) -> Vec<u8> {
    IERC20::transferCall { to, amount }.abi_encode()
}

/// Calldata of `balanceOf(owner)`.
pub fn balance_of_calldata(owner: Address) -> Vec<u8> {
    IERC20::balanceOfCall { owner }.abi_encode()
}

/// Calldata of `decimals()`.
pub fn decimals_calldata() -> Vec<u8> {
    IERC20::decimalsCall {}.abi_encode()
}

/// Calldata of the test token's open `mint(to, amount)`.
pub fn mint_calldata(to: Address, amount: U256) -> Vec<u8> {
    IERC20::mintCall { to, amount }.abi_encode()
}

/// Decodes a 32-byte ABI word (an `eth_call` result such as `balanceOf`'s), given as hex with
/// or without `0x`.
///
/// # Errors
/// [`ErrorKind::Protocol`] when the text is not hex of exactly 32 bytes.
pub fn decode_u256(hex: &str) -> Result<U256> {
    let bytes = alloy_primitives::hex::decode(hex).map_err(|_| not_a_word(hex))?;
    decode_u256_bytes(&bytes).ok_or_else(|| not_a_word(hex))
}

/// Decodes a 32-byte ABI word from raw bytes; `None` unless there are exactly 32.
pub fn decode_u256_bytes(bytes: &[u8]) -> Option<U256> {
    (bytes.len() == 32).then(|| U256::from_be_slice(bytes))
}

fn not_a_word(hex: &str) -> Error {
    Error::new(
        ErrorKind::Protocol,
        format!("expected a 32-byte ABI word, got {}", crate::describe::quote(hex)),
    )
}

/// A decoded ERC-20 `Transfer` log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferLog {
    /// The token contract that emitted it.
    pub token: Address,
    /// The sender.
    pub from: Address,
    /// The recipient.
    pub to: Address,
    /// The raw amount.
    pub value: U256,
}

/// Decodes `log` as an ERC-20 `Transfer`; `None` when it is another event or malformed.
pub fn decode_transfer_log(log: &Log) -> Option<TransferLog> {
    if log.topics.first() != Some(&TRANSFER_EVENT_TOPIC) {
        return None;
    }
    let decoded = IERC20::Transfer::decode_raw_log(log.topics.iter().copied(), &log.data).ok()?;
    Some(TransferLog {
        token: log.address,
        from: decoded.from,
        to: decoded.to,
        value: decoded.value,
    })
}

/// `token.balanceOf(owner)` through `eth_call`.
///
/// # Errors
/// As [`EvmRpc::call`]; [`ErrorKind::Protocol`] when the answer is not one word (for example
/// when `token` has no code).
pub fn balance_of(rpc: &EvmRpc, token: Address, owner: Address) -> Result<U256> {
    let data = balance_of_calldata(owner);
    let tx = json!({"to": token.to_string(), "data": alloy_primitives::hex::encode_prefixed(data)});
    let bytes = rpc.call(&tx)?;
    decode_u256_bytes(&bytes).ok_or_else(|| {
        Error::new(
            ErrorKind::Protocol,
            format!(
                "balanceOf on {token} at {} answered {} bytes instead of 32 (is it a token?)",
                rpc.display_url(),
                bytes.len()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{address, b256, hex};

    const TO: Address = address!("70997970c51812dc3a010c7d01b50e0d17dc79c8");

    #[test]
    fn calldata_matches_known_encodings() {
        // transfer(address,uint256) = 0xa9059cbb, balanceOf(address) = 0x70a08231,
        // decimals() = 0x313ce567, mint(address,uint256) = 0x40c10f19.
        let data = transfer_calldata(TO, U256::from(1_000_000u64));
        assert_eq!(
            hex::encode(&data),
            concat!(
                "a9059cbb",
                "00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8",
                "00000000000000000000000000000000000000000000000000000000000f4240"
            )
        );
        assert_eq!(&balance_of_calldata(TO)[..4], hex!("70a08231"));
        assert_eq!(balance_of_calldata(TO).len(), 36);
        assert_eq!(decimals_calldata(), hex!("313ce567"));
        assert_eq!(&mint_calldata(TO, U256::from(1u64))[..4], hex!("40c10f19"));
    }

    #[test]
    fn transfer_topic_and_log() {
        assert_eq!(
            TRANSFER_EVENT_TOPIC,
            b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
        );
        let from = address!("f39fd6e51aad88f6f4ce6ab8827279cfffb92266");
        let token = address!("833589fcd6edb6e08f4c7c32d4f71b54bda02913");
        let log = Log {
            address: token,
            topics: vec![TRANSFER_EVENT_TOPIC, from.into_word(), TO.into_word()],
            data: U256::from(25u64).to_be_bytes::<32>().to_vec(),
            block_number: None,
            transaction_hash: None,
            log_index: None,
        };
        let t = decode_transfer_log(&log).unwrap();
        assert_eq!((t.token, t.from, t.to, t.value), (token, from, TO, U256::from(25u64)));
        let mut other = log.clone();
        other.topics[0] = B256::ZERO;
        assert_eq!(decode_transfer_log(&other), None);
        let mut short = log;
        short.data.truncate(3);
        assert_eq!(decode_transfer_log(&short), None);
    }

    #[test]
    fn words_decode() {
        assert_eq!(decode_u256(&format!("0x{:064x}", 42)).unwrap(), U256::from(42u64));
        assert_eq!(decode_u256(&format!("{:064x}", 7)).unwrap(), U256::from(7u64));
        assert_eq!(decode_u256("0x").unwrap_err().kind(), ErrorKind::Protocol);
        assert_eq!(decode_u256("0xzz").unwrap_err().kind(), ErrorKind::Protocol);
    }
}
