//! Low-level access to the chains, shared by the deposit client's funding and by devnet's
//! chain-backed mode (`docs/funding.md` §6).
//!
//! - [`evm`]: a JSON-RPC client of an EVM node ([`EvmRpc`](evm::EvmRpc)).
//! - [`erc20`]: ERC-20 calldata and log decoding (through `alloy-sol-types`).
//! - [`solana`]: a JSON-RPC client of a Solana node ([`SolanaRpc`](solana::SolanaRpc)).
//! - [`solana_tx`]: the legacy Solana message and transaction wire format, program-derived
//!   addresses and the few instructions depositkit builds.
//! - [`watch`]: chain watchers, which follow the transfers into the deposit addresses and the
//!   chain's heads and report them as signals to the deposit engine.
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
pub mod watch;

/// What the chain clients make of one node answer: the fuzzing entry point
/// (`fuzz/fuzz_targets/chain_answers.rs`). Not part of the API.
#[doc(hidden)]
#[derive(Debug)]
pub struct FuzzedAnswer {
    /// The JSON-RPC envelope: the `result`, or the error the clients report.
    pub envelope: crate::Result<serde_json::Value>,
    /// The result read as a quantity (`eth_getBalance`, `eth_gasPrice`, …).
    pub quantity: Option<crate::units::U256>,
    /// The result read as a receipt (`eth_getTransactionReceipt`).
    pub receipt: Option<evm::Receipt>,
    /// The result read as logs (`eth_getLogs`).
    pub logs: Option<Vec<evm::Log>>,
    /// The result read as token accounts (`getTokenAccountsByOwner`'s `value`).
    pub token_accounts: Option<Vec<solana::TokenAccount>>,
    /// Whether the result read as a transaction signature (`sendTransaction`).
    pub signature: bool,
}

/// Reads `body`, answered with HTTP `status` by a node, the way the EVM and Solana clients read
/// every answer: the envelope first, then the result as each kind of answer they parse.
#[doc(hidden)]
pub fn read_answer_for_fuzzing(status: u16, body: &str) -> FuzzedAnswer {
    let client = rpc::JsonRpcClient::new(
        "http://127.0.0.1:9/key",
        &crate::services::HttpSettings::default(),
    );
    let envelope = client.answer("fuzz", crate::http::Reply { status, body: body.to_owned() });
    let result = envelope.as_ref().ok();
    let logs = result.and_then(|v| v.as_array()).and_then(|items| {
        items
            .iter()
            .map(|item| evm::parse_log("eth_getLogs", item))
            .collect::<crate::Result<Vec<_>>>()
            .ok()
    });
    let token_accounts = result
        .and_then(|v| solana::context_value("getTokenAccountsByOwner", v).ok())
        .and_then(|v| v.as_array())
        .and_then(|items| {
            items
                .iter()
                .map(|item| solana::parse_token_account("getTokenAccountsByOwner", item))
                .collect::<crate::Result<Vec<_>>>()
                .ok()
        });
    FuzzedAnswer {
        quantity: result.and_then(|v| evm::quantity_u256("eth_getBalance", v).ok()),
        receipt: result.and_then(|v| evm::parse_receipt("eth_getTransactionReceipt", v).ok()),
        logs,
        token_accounts,
        signature: result.is_some_and(|v| solana::parse_signature("sendTransaction", v).is_ok()),
        envelope,
    }
}
