//! depositkit devnet: a local emulator of the remote services depositkit uses, all from one
//! SQLite store on one port: the user-lookup JSON-RPC service (`getUserInfo`,
//! `getUserInfoByIdentity`, `isProjectUser`; `docs/user-rpc.md` describes it, its error codes
//! and the `depositkit-devnet` command), and the deposit services of `docs/protocol.md` — the
//! JWT service, the auth-core signer and the universal-account service, with the admin
//! endpoints that fund accounts, set prices and inject faults ([`services`]), and a live
//! dashboard of it all at `/dashboard/` ([`dashboard`], `docs/dashboard.md`).
//!
//! In-process use from tests:
//!
//! ```no_run
//! use std::time::{Duration, SystemTime};
//! use depositkit_devnet::{ChainFamily, Devnet, DevnetConfig, NewUser};
//!
//! let devnet = Devnet::start(DevnetConfig::new("/tmp/devnet-example.sqlite"))?;
//! let store = devnet.store();
//! let project = store.create_project("example")?;
//! let user = store.add_user(&project.project_id, &NewUser::with_email("a@example.com"))?;
//! store.add_wallet(&user, ChainFamily::Evm, "0x52908400098527886e0f7030069857d2e4169ee7")?;
//! let token = store.add_session(&user, SystemTime::now() + Duration::from_secs(3600))?;
//! println!("{} {} {token}", devnet.user_rpc_url(), project.server_key);
//! devnet.shutdown()?;
//! # Ok::<(), depositkit_devnet::Error>(())
//! ```
//!
//! The deposit services of the same server, from a test:
//!
//! ```no_run
//! use depositkit_core::TokenType;
//! use depositkit_devnet::{Devnet, DevnetConfig, SweepFaultMode};
//!
//! let devnet = Devnet::start(DevnetConfig::new("/tmp/devnet-deposits.sqlite"))?;
//! let services_url = devnet.services_url(); // {services_url}/jwt, /signer, /ua
//! # let deposit_address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
//! devnet.deposit(deposit_address, 8453, TokenType::USDC, "1500000", None)?;
//! devnet.fail_next_sweeps(1, SweepFaultMode::Reject);
//! assert_eq!(devnet.ledger_balance(deposit_address, 8453, TokenType::USDC)?, "1500000");
//! # Ok::<(), depositkit_devnet::Error>(())
//! ```

//! With a chains file (`docs/funding.md` §1–2; `DevnetConfig::with_chains`, `serve --chains`),
//! the chains it lists are real: balances are read from them and sweeps, refunds and onramp orders
//! move money with real transactions ([`chain`]); the other chains stay on the ledger.
//!
//! ```no_run
//! use depositkit_core::TokenType;
//! use depositkit_devnet::{ChainsConfig, Devnet, DevnetConfig};
//!
//! # let chains_file_line = "{}";
//! let chains = ChainsConfig::from_json(chains_file_line)?; // tests/chains/launch.py's line
//! let devnet = Devnet::start(DevnetConfig::new("/tmp/devnet-chains.sqlite").with_chains(chains))?;
//! let vault = devnet.vault_addresses();
//! # let address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
//! let held = devnet.chain_balance(address, 8453, TokenType::USDC)?;
//! # Ok::<(), depositkit_devnet::Error>(())
//! ```

pub mod chain;
pub mod config;
pub mod dashboard;
pub mod demo;
mod describe;
pub mod error;
pub mod faults;
pub mod http;
pub mod observe;
pub mod rpc;
pub mod server;
pub mod services;
pub mod simchain;
pub mod store;

/// The user-lookup service's Basic auth, methods, secrets and timestamps: depositkit-server's.
pub use depositkit_server::{auth, methods, secret, time};

pub use chain::ChainsConfig;
pub use config::DevnetConfig;
pub use demo::{DemoCredentials, ensure_demo};
pub use error::{Error, Result};
pub use faults::Fault;
pub use rpc::codes;
pub use server::{BoundServer, Deposit, Devnet, RunningDevnet, VaultAddresses};
pub use services::faults::{Service, SweepFaultMode};
pub use services::jwt::{BUILTIN_APP_ID, BUILTIN_CLIENT_KEY, BUILTIN_PROJECT_ID};
pub use store::{
    ChainFamily, NewUser, Profile, ProjectCredentials, Receipt, SessionStatus, Store, User, Wallet,
};
