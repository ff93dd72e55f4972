//! Lookups the server answers from: credentials, users, sessions, identities, membership.

use std::sync::LazyLock;

use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use super::{PgStore, db};
use crate::error::Result;
use crate::records::{ChainFamily, Profile, SessionStatus, User, Wallet};
use crate::{secret, time};

impl PgStore {
    /// [`crate::UserStore::verify_server_key`] on PostgreSQL.
    pub async fn verify_server_key(&self, project_id: &str, server_key: &str) -> Result<bool> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("SELECT server_key_hash FROM projects WHERE id = $1")
            .await
            .map_err(db)?;
        let row = client.query_opt(&stmt, &[&project_id]).await.map_err(db)?;
        let stored: Option<Vec<u8>> = row.map(|row| row.get(0));
        Ok(secret::matches_stored(server_key, stored.as_deref()))
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
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("SELECT user_uuid, expires_at FROM sessions WHERE token_hash = $1")
            .await
            .map_err(db)?;
        let hash = secret::hash(token);
        let row = client.query_opt(&stmt, &[&hash.as_slice()]).await.map_err(db)?;
        Ok(SessionStatus::of(row.map(|row| (row.get(0), row.get(1))), uuid, now_ms))
    }

    /// [`crate::UserStore::user_by_identity`] on PostgreSQL.
    pub async fn user_by_identity(
        &self,
        project_id: &str,
        provider: &str,
        uid: &str,
    ) -> Result<Option<User>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT user_uuid FROM identities WHERE project_id = $1 AND provider = $2 AND uid = $3",
            )
            .await
            .map_err(db)?;
        let row = client.query_opt(&stmt, &[&project_id, &provider, &uid]).await.map_err(db)?;
        match row {
            Some(row) => load_user(&client, project_id, row.get(0)).await,
            None => Ok(None),
        }
    }

    /// [`crate::UserStore::is_project_address`] on PostgreSQL.
    pub async fn is_project_address(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<bool> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT 1 FROM wallets w JOIN users u ON u.uuid = w.user_uuid
                   WHERE u.project_id = $1 AND w.chain = $2 AND w.public_address = $3
                 UNION ALL
                 SELECT 1 FROM interactions
                   WHERE project_id = $1 AND chain = $2 AND address = $3
                 LIMIT 1",
            )
            .await
            .map_err(db)?;
        let address = chain.normalize(address);
        let row =
            client.query_opt(&stmt, &[&project_id, &chain.as_str(), &address]).await.map_err(db)?;
        Ok(row.is_some())
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

/// The user row of `load_user`, built once (its text keys the prepared-statement cache).
static USER_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT created_at, updated_at, {} FROM users WHERE uuid = $1 AND project_id = $2",
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
    let user_params: [&(dyn ToSql + Sync); 2] = [&uuid, &project_id];
    let wallets_params: [&(dyn ToSql + Sync); 1] = [&uuid];
    let (row, wallet_rows) = tokio::try_join!(
        client.query_opt(&user_stmt, &user_params),
        client.query(&wallets_stmt, &wallets_params),
    )
    .map_err(db)?;
    let Some(row) = row else {
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
