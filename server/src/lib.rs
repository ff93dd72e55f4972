//! depositkit-server: the user-lookup JSON-RPC service of `docs/user-rpc.md`
//! (`getUserInfo`, `getUserInfoByIdentity`, `isProjectUser`, HTTP Basic auth with a project's
//! id and server key) as a product of its own, on SQLite (`sqlite:///path`) or PostgreSQL
//! (`postgres://…`), with the admin commands that manage projects, users, wallets, identities
//! and sessions. The `depositkit-server` binary serves it; devnet serves the same service from
//! this library, beside its emulator endpoints.
//!
//! Layers, data first: [`records`] (the User record and the checks every value passes),
//! [`rpc`] (JSON-RPC envelopes, pure), [`answer`] and [`single_call`] (a call's answer and
//! the common single call, without `serde_json::Value` trees), [`methods`] and [`auth`] (the
//! three methods and Basic auth over a store), [`store`] (SQLite and PostgreSQL behind [`UserStore`]), [`http`] (the
//! `/user-rpc` route), [`serve`] (the server's routes, connection cap, graceful shutdown) and
//! [`admin`] (the CLI's admin commands) and [`admin_api`] (the same over HTTP, with a token).
//!
//! Serving from a program:
//!
//! ```no_run
//! use depositkit_server::serve::{self, ServeOptions};
//! use depositkit_server::UserStore;
//!
//! # async fn run() -> depositkit_server::Result<()> {
//! let store = UserStore::open("postgres://app:secret@db.internal/users", 16).await?;
//! let project = store.create_project("shop").await?; // prints once: the key is stored hashed
//! let options = ServeOptions::default();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
//! let stop = serve::shutdown_signal().unwrap();
//! serve::serve(
//!     listener,
//!     serve::router(store, &options),
//!     options.max_connections,
//!     options.shutdown_grace,
//!     async move { stop.await; },
//! )
//! .await?;
//! # let _ = project;
//! # Ok(())
//! # }
//! ```

pub mod admin;
pub mod admin_api;
pub mod answer;
pub mod auth;
pub mod error;
pub mod http;
pub mod methods;
pub mod records;
pub mod rpc;
pub mod secret;
pub mod serve;
pub mod single_call;
pub mod store;
#[cfg(feature = "test-harness")]
pub mod testing;
pub mod time;

pub use error::{Error, Result};
pub use records::{
    ChainFamily, NewUser, Profile, ProjectCredentials, SessionStatus, User, Wallet, normalize_uuid,
};
pub use store::UserStore;
