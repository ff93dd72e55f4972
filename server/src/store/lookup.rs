//! One request's trip to the store: the project's server key checked and the method's lookup
//! run together, so that a request costs one trip instead of one for authentication and one or
//! two for the method (issue 19, `docs/benchmarks.md`).
//!
//! - SQLite: both on one connection in one call and one read transaction (`isProjectUser`: one
//!   statement; `getUserInfo`: the key, user row and session in one, the wallets in another).
//!   The call runs right on the async thread when a connection is free (point lookups through
//!   cached statements, a few µs: less than handing them to the blocking pool and waiting for
//!   the answer), on tokio's blocking pool when every connection is busy (a writer may hold one
//!   through a commit).
//! - PostgreSQL: one statement for the key and the lookup of `getUserInfo` or `isProjectUser`
//!   (the others' statements sent at once on one pooled connection, pipelined): one round
//!   trip.
//!
//! Nothing is cached between requests: every request reads the key and the rows, so a key
//! rotated or a user added through another server on the same database counts from the next
//! request on.

use crate::records::{ChainFamily, SessionStatus, User};

/// What a method looks up, its params checked (`crate::methods::lookup_of`). `Debug` hides
/// the session token.
#[derive(Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Nothing: only the credentials are checked (a batch's, or those of a request answered
    /// with an error before any lookup).
    Nothing,
    /// `getUserInfo`: the user `uuid` (lower-case) of the project and what `token` is for them
    /// at `now_ms`.
    UserInfo { uuid: String, token: String, now_ms: i64 },
    /// `getUserInfoByIdentity`: the user of the project with this identity.
    ByIdentity { provider: String, uid: String },
    /// `isProjectUser`: whether `address` (in its stored form, [`ChainFamily::normalize`]) is a
    /// wallet of the project's users or interacted with the project.
    Membership { chain: ChainFamily, address: String },
}

/// What the store found for a [`Lookup`]: the variant of the same name.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    Nothing,
    /// The user (`None`: not a user of the project) and what the token is for them.
    UserInfo(Option<(User, SessionStatus)>),
    ByIdentity(Option<User>),
    Membership(bool),
}

impl std::fmt::Debug for Lookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lookup::Nothing => f.write_str("Nothing"),
            Lookup::UserInfo { uuid, now_ms, .. } => f
                .debug_struct("UserInfo")
                .field("uuid", uuid)
                .field("token", &"<redacted>")
                .field("now_ms", now_ms)
                .finish(),
            Lookup::ByIdentity { provider, uid } => {
                f.debug_struct("ByIdentity").field("provider", provider).field("uid", uid).finish()
            }
            Lookup::Membership { chain, address } => f
                .debug_struct("Membership")
                .field("chain", chain)
                .field("address", address)
                .finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::sync::Arc;
    use std::task::{Context, Waker};

    use super::*;
    use crate::store::UserStore;
    use crate::store::sqlite::{SqlitePool, SqliteStore, schema};

    /// With every connection held (by a writer, say), a request's lookup does not block the
    /// async thread: it waits on the blocking pool and answers once a connection is free.
    #[tokio::test]
    async fn a_lookup_waits_for_a_busy_connection_off_the_async_threads() {
        let path = std::env::temp_dir()
            .join(format!("depositkit-server-busy-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let pool = Arc::new(SqlitePool::open(&path, 1, schema::prepare).unwrap());
        let store = UserStore::Sqlite(SqliteStore::over(Arc::clone(&pool)));
        let project = store.create_project("busy").await.unwrap();
        let lookup = Lookup::Membership {
            chain: ChainFamily::Evm,
            address: "0x52908400098527886e0f7030069857d2e4169ee7".into(),
        };
        let held = pool.conn();
        let mut answer = std::pin::pin!(store.authenticate_and_look_up(
            &project.project_id,
            &project.server_key,
            &lookup
        ));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(answer.as_mut().poll(&mut cx).is_pending());
        drop(held);
        assert_eq!(answer.await.unwrap(), Some(Found::Membership(false)));
        let wrong = store.authenticate_and_look_up(&project.project_id, "sk_wrong", &lookup);
        assert_eq!(wrong.await.unwrap(), None);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn debug_hides_the_session_token() {
        let lookup = Lookup::UserInfo {
            uuid: "0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c".into(),
            token: "st_secret".into(),
            now_ms: 1,
        };
        let shown = format!("{lookup:?}");
        assert!(shown.contains("0b0c1a9e") && !shown.contains("st_secret"), "{shown}");
    }
}
