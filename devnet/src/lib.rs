//! depositkit devnet: a local emulator of the remote services depositkit uses. This crate
//! serves the user-lookup JSON-RPC service (`getUserInfo`, `getUserInfoByIdentity`,
//! `isProjectUser`) from a SQLite store; `docs/user-rpc.md` describes the protocol, the error
//! codes and the `depositkit-devnet` command.
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

pub mod auth;
pub mod config;
pub mod demo;
mod describe;
pub mod error;
pub mod faults;
pub mod http;
pub mod methods;
pub mod rpc;
pub mod secret;
pub mod server;
pub mod store;
pub mod time;

pub use config::DevnetConfig;
pub use demo::{DemoCredentials, ensure_demo};
pub use error::{Error, Result};
pub use faults::Fault;
pub use rpc::codes;
pub use server::{BoundServer, Devnet, RunningDevnet};
pub use store::{
    ChainFamily, NewUser, Profile, ProjectCredentials, SessionStatus, Store, User, Wallet,
};
