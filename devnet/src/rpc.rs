//! JSON-RPC 2.0 envelopes: depositkit-server's ([`depositkit_server::rpc`]), with devnet's own
//! error code for injected faults.

pub use depositkit_server::rpc::*;

/// Error codes: the JSON-RPC 2.0 ones and the service's own (`docs/user-rpc.md`), and
/// [`codes::INJECTED_FAULT`].
pub mod codes {
    pub use depositkit_server::rpc::codes::*;

    /// An error status injected through `/devnet/faults`.
    pub const INJECTED_FAULT: i64 = -32050;
}
