//! Low-level access to the chains, shared by the deposit client's funding and by devnet's
//! chain-backed mode (`docs/funding.md` §6).
//!
//! - [`evm`]: a JSON-RPC client of an EVM node ([`EvmRpc`](evm::EvmRpc)).
//! - [`erc20`]: ERC-20 calldata and log decoding (through `alloy-sol-types`).
//! - [`solana`]: a JSON-RPC client of a Solana node ([`SolanaRpc`](solana::SolanaRpc)).
//! - [`solana_tx`]: the legacy Solana message and transaction wire format, program-derived
//!   addresses and the few instructions depositkit builds.
//!
//! Every client here is synchronous (one blocking HTTP request per call, on the caller's
//! thread), so it can be used from plain threads, from `spawn_blocking`, or from devnet's
//! handlers alike. Node errors are [`ErrorKind::Rpc`](crate::ErrorKind::Rpc) errors naming the
//! method and the node's message; URLs in messages are cut to their origin, because RPC URLs
//! often carry an API key in the path.

pub mod erc20;
pub mod evm;
pub mod rpc;
pub mod solana;
pub mod solana_tx;
