//! The one error type of the devnet library and CLI: depositkit-server's, whose store devnet
//! shares (bad input, missing and conflicting records, imports, the schema version, SQLite, I/O
//! and JSON failures).

pub use depositkit_server::error::{Error, Result};
