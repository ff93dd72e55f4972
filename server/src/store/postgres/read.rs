//! Lookups the server answers from: credentials, users, sessions, identities, membership.
//!
//! [`PgStore::look_up`] answers a whole request on one connection in one round trip
//! ([`crate::store::lookup`]): its statements are sent at once and tokio-postgres pipelines
//! them. The other methods answer one question each.

use std::sync::LazyLock;

use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use super::{PgStore, db, request};
use crate::error::Result;
use crate::records::{ChainFamily, Profile, SessionStatus, User, Wallet};
use crate::store::lookup::{Found, Lookup};
use crate::{secret, time};

impl PgStore {
    /// [`crate::UserStore::verify_server_key`] on PostgreSQL.
    pub async fn verify_server_key(&self, project_id: &str, server_key: &str) -> Result<bool> {
        key_matches(&self.client().await?, project_id, server_key).await
    }

    /// [`crate::UserStore::user`] on PostgreSQL.
    pub async fn user(&self, project_id: &str, uuid: &str) -> Result<Option<User>> {
        load_user(&self.client().await?, project_id, uuid).await
    }

    /// [`crate::UserStore::session_status`] on PostgreSQL.
    pub async fn session_status(
        &self,
        uuid: &str,
        token: &str,
        now_ms: i64,
    ) -> Result<SessionStatus> {
        session_status(&self.client().await?, uuid, token, now_ms).await
    }

    /// [`crate::UserStore::user_by_identity`] on PostgreSQL.
    pub async fn user_by_identity(
        &self,
        project_id: &str,
        provider: &str,
        uid: &str,
    ) -> Result<Option<User>> {
        user_by_identity(&self.client().await?, project_id, provider, uid).await
    }

    /// [`crate::UserStore::is_project_address`] on PostgreSQL.
    pub async fn is_project_address(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<bool> {
        is_member(&self.client().await?, project_id, chain, &chain.normalize(address)).await
    }

    /// Whether `server_key` (when given; `None`: the caller is already authenticated) is
    /// `project_id`'s key, and what `lookup` finds for the project. For credentials found valid
    /// lately the key check and the lookup are one statement ([`super::request`]); for others
    /// (a first request, a wrong key) the key is checked first, so that a rejected caller costs
    /// the key's statement only.
    ///
    /// # Errors
    /// Database failures only.
    pub async fn look_up(
        &self,
        project_id: &str,
        server_key: Option<&str>,
        lookup: &Lookup,
    ) -> Result<(bool, Found)> {
        let client = self.client().await?;
        let Some(key) = server_key else {
            return Ok((true, run(&client, project_id, lookup).await?));
        };
        let credential = secret::credential_hash(project_id, key);
        let (accepted, found) = if matches!(lookup, Lookup::Nothing) {
            (key_matches(&client, project_id, key).await?, Found::Nothing)
        } else if self.seen_valid(&credential) || key_matches(&client, project_id, key).await? {
            request::checked(&client, project_id, key, lookup).await?
        } else {
            (false, Found::Nothing)
        };
        self.remember(credential, accepted);
        Ok((accepted, found))
    }

    /// [`crate::UserStore::user_uuids`] on PostgreSQL.
    pub async fn user_uuids(&self, project_id: &str) -> Result<Vec<String>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("SELECT uuid FROM users WHERE project_id = $1 ORDER BY created_at, seq")
            .await
            .map_err(db)?;
        let rows = client.query(&stmt, &[&project_id]).await.map_err(db)?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }
}

/// What `lookup` finds for `project_id`, its statements pipelined on `client`.
pub(super) async fn run(
    client: &impl GenericClient,
    project_id: &str,
    lookup: &Lookup,
) -> Result<Found> {
    Ok(match lookup {
        Lookup::Nothing => Found::Nothing,
        Lookup::UserInfo { uuid, token, now_ms } => {
            let (user, session) = tokio::try_join!(
                load_user(client, project_id, uuid),
                session_status(client, uuid, token, *now_ms),
            )?;
            Found::UserInfo(user.map(|user| (user, session)))
        }
        Lookup::ByIdentity { provider, uid } => {
            Found::ByIdentity(user_by_identity(client, project_id, provider, uid).await?)
        }
        Lookup::Membership { chain, address } => {
            Found::Membership(is_member(client, project_id, *chain, address).await?)
        }
    })
}

/// Whether `server_key` is the key of `project_id` (constant time in the key).
pub(super) async fn key_matches(
    client: &impl GenericClient,
    project_id: &str,
    server_key: &str,
) -> Result<bool> {
    let stmt = client
        .prepare_cached("SELECT server_key_hash FROM projects WHERE id = $1")
        .await
        .map_err(db)?;
    let row = client.query_opt(&stmt, &[&project_id]).await.map_err(db)?;
    let stored: Option<Vec<u8>> = row.map(|row| row.get(0));
    Ok(secret::matches_stored(server_key, stored.as_deref()))
}

async fn session_status(
    client: &impl GenericClient,
    uuid: &str,
    token: &str,
    now_ms: i64,
) -> Result<SessionStatus> {
    let stmt = client
        .prepare_cached("SELECT user_uuid, expires_at FROM sessions WHERE token_hash = $1")
        .await
        .map_err(db)?;
    let hash = secret::hash(token);
    let row = client.query_opt(&stmt, &[&hash.as_slice()]).await.map_err(db)?;
    Ok(SessionStatus::of(row.map(|row| (row.get(0), row.get(1))), uuid, now_ms))
}

async fn user_by_identity(
    client: &impl GenericClient,
    project_id: &str,
    provider: &str,
    uid: &str,
) -> Result<Option<User>> {
    let stmt = client
        .prepare_cached(
            "SELECT user_uuid FROM identities WHERE project_id = $1 AND provider = $2 AND uid = $3",
        )
        .await
        .map_err(db)?;
    let row = client.query_opt(&stmt, &[&project_id, &provider, &uid]).await.map_err(db)?;
    match row {
        Some(row) => load_user(client, project_id, row.get(0)).await,
        None => Ok(None),
    }
}

/// Whether `address` (already in its stored form) is a wallet of the project's users or
/// interacted with the project.
async fn is_member(
    client: &impl GenericClient,
    project_id: &str,
    chain: ChainFamily,
    address: &str,
) -> Result<bool> {
    let stmt = client.prepare_cached(&MEMBERSHIP_SQL).await.map_err(db)?;
    let row =
        client.query_one(&stmt, &[&project_id, &chain.as_str(), &address]).await.map_err(db)?;
    Ok(row.get(0))
}

/// Whether the address `$3` on chain `$2` is a wallet of a user of project `$1` or interacted
/// with it, as a boolean expression. The wallet's user is found by its uuid (a subquery per
/// wallet of that address, not a join): joined on `u.project_id = $1`, a generic plan made
/// before the tables' statistics exist walked the project's users instead (`EXPLAIN ANALYZE`,
/// issue 19).
pub(super) const MEMBERSHIP: &str = "EXISTS (SELECT 1 FROM wallets w
             WHERE w.chain = $2 AND w.public_address = $3
               AND (SELECT project_id FROM users WHERE uuid = w.user_uuid) = $1)
        OR EXISTS (SELECT 1 FROM interactions
                    WHERE project_id = $1 AND chain = $2 AND address = $3)";

static MEMBERSHIP_SQL: LazyLock<String> = LazyLock::new(|| format!("SELECT {MEMBERSHIP}"));

/// The user row of `load_user`, built once (its text keys the prepared-statement cache).
/// The user is found by its uuid alone and its project compared in `load_user`, for the
/// reason [`MEMBERSHIP`] gives.
static USER_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT created_at, updated_at, {}, project_id FROM users WHERE uuid = $1",
        Profile::column_list()
    )
});

async fn load_user(
    client: &impl GenericClient,
    project_id: &str,
    uuid: &str,
) -> Result<Option<User>> {
    let user_stmt = client.prepare_cached(&USER_SQL).await.map_err(db)?;
    let wallets_stmt = client
        .prepare_cached(
            "SELECT chain, public_address FROM wallets WHERE user_uuid = $1 ORDER BY seq",
        )
        .await
        .map_err(db)?;
    // Both queries at once: tokio-postgres pipelines them on the connection, one round trip
    // instead of two. The wallets of a user that does not exist are no rows.
    let user_params: [&(dyn ToSql + Sync); 1] = [&uuid];
    let wallets_params: [&(dyn ToSql + Sync); 1] = [&uuid];
    let (row, wallet_rows) = tokio::try_join!(
        client.query_opt(&user_stmt, &user_params),
        client.query(&wallets_stmt, &wallets_params),
    )
    .map_err(db)?;
    let Some(row) = row.filter(|row| row.get::<_, &str>(26) == project_id) else {
        return Ok(None);
    };
    let mut values: [Option<String>; 24] = Default::default();
    for (i, value) in values.iter_mut().enumerate() {
        *value = row.get(i + 2);
    }
    let wallets = wallet_rows
        .iter()
        .map(|row| Wallet { chain: row.get(0), public_address: row.get(1) })
        .collect();
    Ok(Some(User {
        uuid: uuid.to_owned(),
        profile: Profile::from_values(values),
        created_at: time::format_ms(row.get(0)),
        updated_at: time::format_ms(row.get(1)),
        wallets,
    }))
}
