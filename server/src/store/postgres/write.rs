//! Changing the store: projects, users, wallets, identities, sessions, interactions, imports.
//! Every value is checked (by `crate::records`) before it is written; the `insert_*` functions
//! also run inside an import's transaction.

use std::time::SystemTime;

use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use super::{PgStore, db, query_error};
use crate::error::{Error, Result};
use crate::records::{
    ChainFamily, NewUser, Profile, ProjectCredentials, check_identity, check_project_name,
    check_session_token, identity_taken, normalize_uuid,
};
use crate::store::import::{ImportedUser, in_record, parse_records};
use crate::{secret, time};

impl PgStore {
    /// [`crate::UserStore::create_project`] on PostgreSQL.
    pub async fn create_project(&self, name: &str) -> Result<ProjectCredentials> {
        let name = check_project_name(name)?;
        let server_key = secret::new_server_key();
        let project_id = uuid::Uuid::new_v4().hyphenated().to_string();
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "INSERT INTO projects (id, name, server_key_hash, created_at) VALUES ($1, $2, $3, $4)",
            )
            .await
            .map_err(db)?;
        let hash = secret::hash(&server_key);
        client
            .execute(&stmt, &[&project_id, &name, &hash.as_slice(), &time::now_ms()])
            .await
            .map_err(db)?;
        Ok(ProjectCredentials { project_id, server_key })
    }

    /// [`crate::UserStore::rotate_server_key`] on PostgreSQL.
    pub async fn rotate_server_key(&self, project_id: &str) -> Result<ProjectCredentials> {
        let project_id = normalize_uuid("project", project_id)?;
        let server_key = secret::new_server_key();
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("UPDATE projects SET server_key_hash = $2 WHERE id = $1")
            .await
            .map_err(db)?;
        let hash = secret::hash(&server_key);
        let changed = client.execute(&stmt, &[&project_id, &hash.as_slice()]).await.map_err(db)?;
        if changed == 0 {
            return Err(Error::NotFound(format!("project {project_id} not found")));
        }
        Ok(ProjectCredentials { project_id, server_key })
    }

    /// [`crate::UserStore::add_user`] on PostgreSQL.
    pub async fn add_user(&self, project_id: &str, user: &NewUser) -> Result<String> {
        let now = time::now_ms();
        insert_user(&self.client().await?, project_id, user, now, now).await
    }

    /// [`crate::UserStore::add_wallet`] on PostgreSQL.
    pub async fn add_wallet(
        &self,
        user_uuid: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<()> {
        insert_wallet(&self.client().await?, user_uuid, chain, address, "address").await
    }

    /// [`crate::UserStore::add_identity`] on PostgreSQL.
    pub async fn add_identity(&self, user_uuid: &str, provider: &str, uid: &str) -> Result<()> {
        insert_identity(&self.client().await?, user_uuid, provider, uid, "").await
    }

    /// [`crate::UserStore::add_session`] on PostgreSQL.
    pub async fn add_session(
        &self,
        user_uuid: &str,
        token: Option<&str>,
        expires_at: SystemTime,
    ) -> Result<String> {
        let token = token.map_or_else(secret::new_session_token, str::to_owned);
        let client = self.client().await?;
        let expires_at = time::system_time_ms(expires_at);
        insert_session(&client, user_uuid, &token, expires_at, "").await?;
        Ok(token)
    }

    /// [`crate::UserStore::add_interaction`] on PostgreSQL.
    pub async fn add_interaction(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<()> {
        let client = self.client().await?;
        let project_id = existing_project(&client, project_id).await?;
        chain.validate_address("address", address)?;
        let stmt = client
            .prepare_cached(
                "INSERT INTO interactions (project_id, chain, address) VALUES ($1, $2, $3)
                 ON CONFLICT DO NOTHING",
            )
            .await
            .map_err(db)?;
        let address = chain.normalize(address);
        client.execute(&stmt, &[&project_id, &chain.as_str(), &address]).await.map_err(db)?;
        Ok(())
    }

    /// [`crate::UserStore::import_users`] on PostgreSQL.
    pub async fn import_users(
        &self,
        project_id: &str,
        records: &serde_json::Value,
    ) -> Result<Vec<String>> {
        let records = parse_records(records, time::now_ms())?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db)?;
        let project_id = existing_project(&tx, project_id).await?;
        let mut uuids = Vec::with_capacity(records.len());
        for (index, record) in records.iter().enumerate() {
            let uuid = import_record(&tx, &project_id, record).await.map_err(in_record(index))?;
            uuids.push(uuid);
        }
        tx.commit().await.map_err(db)?;
        Ok(uuids)
    }
}

async fn import_record(
    client: &impl GenericClient,
    project_id: &str,
    record: &ImportedUser,
) -> Result<String> {
    let uuid =
        insert_user(client, project_id, &record.user, record.created_at, record.updated_at).await?;
    for (i, (chain, address)) in record.wallets.iter().enumerate() {
        let field = format!("wallets[{i}].publicAddress");
        insert_wallet(client, &uuid, *chain, address, &field).await?;
    }
    for (i, (provider, uid)) in record.identities.iter().enumerate() {
        insert_identity(client, &uuid, provider, uid, &format!("identities[{i}].")).await?;
    }
    for (i, (token, expires_at)) in record.sessions.iter().enumerate() {
        insert_session(client, &uuid, token, *expires_at, &format!("sessions[{i}].")).await?;
    }
    Ok(uuid)
}

/// The normalized id of an existing project.
async fn existing_project(client: &impl GenericClient, project_id: &str) -> Result<String> {
    let id = normalize_uuid("project", project_id)?;
    let stmt = client.prepare_cached("SELECT 1 FROM projects WHERE id = $1").await.map_err(db)?;
    match client.query_opt(&stmt, &[&id]).await.map_err(db)? {
        Some(_) => Ok(id),
        None => Err(Error::NotFound(format!("project {id} not found"))),
    }
}

/// The normalized uuid of an existing user and the project it belongs to.
async fn existing_user(client: &impl GenericClient, user_uuid: &str) -> Result<(String, String)> {
    let uuid = normalize_uuid("user", user_uuid)?;
    let stmt =
        client.prepare_cached("SELECT project_id FROM users WHERE uuid = $1").await.map_err(db)?;
    match client.query_opt(&stmt, &[&uuid]).await.map_err(db)? {
        Some(row) => Ok((uuid, row.get(0))),
        None => Err(Error::NotFound(format!("user {uuid} not found"))),
    }
}

async fn insert_user(
    client: &impl GenericClient,
    project_id: &str,
    user: &NewUser,
    created_at: i64,
    updated_at: i64,
) -> Result<String> {
    let project_id = existing_project(client, project_id).await?;
    let uuid = match &user.uuid {
        Some(u) => normalize_uuid("uuid", u)?,
        None => uuid::Uuid::new_v4().hyphenated().to_string(),
    };
    user.profile.validate("")?;
    let mut columns =
        vec!["uuid".to_owned(), "project_id".into(), "created_at".into(), "updated_at".into()];
    columns.extend(Profile::FIELDS.iter().map(|f| Profile::column(f)));
    let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
    let sql =
        format!("INSERT INTO users ({}) VALUES ({})", columns.join(", "), placeholders.join(", "));
    let profile = user.profile.values();
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&uuid, &project_id, &created_at, &updated_at];
    params.extend(profile.iter().map(|v| v as &(dyn ToSql + Sync)));
    let stmt = client.prepare_cached(&sql).await.map_err(db)?;
    client
        .execute(&stmt, &params)
        .await
        .map_err(|e| query_error(&e, || format!("user {uuid} already exists")))?;
    Ok(uuid)
}

async fn insert_wallet(
    client: &impl GenericClient,
    user_uuid: &str,
    chain: ChainFamily,
    address: &str,
    address_field: &str,
) -> Result<()> {
    let (uuid, _) = existing_user(client, user_uuid).await?;
    chain.validate_address(address_field, address)?;
    let stmt = client
        .prepare_cached(
            "INSERT INTO wallets (user_uuid, chain, public_address) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
        )
        .await
        .map_err(db)?;
    let address = chain.normalize(address);
    client.execute(&stmt, &[&uuid, &chain.as_str(), &address]).await.map_err(db)?;
    Ok(())
}

async fn insert_identity(
    client: &impl GenericClient,
    user_uuid: &str,
    provider: &str,
    uid: &str,
    prefix: &str,
) -> Result<()> {
    let (uuid, project_id) = existing_user(client, user_uuid).await?;
    check_identity(provider, uid, prefix)?;
    // Insert, or find who holds it: one statement, so two servers adding it at once agree.
    let stmt = client
        .prepare_cached(
            "WITH added AS (
                 INSERT INTO identities (project_id, provider, uid, user_uuid) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (project_id, provider, uid) DO NOTHING RETURNING user_uuid)
             SELECT user_uuid FROM added
             UNION ALL
             SELECT user_uuid FROM identities WHERE project_id = $1 AND provider = $2 AND uid = $3
             LIMIT 1",
        )
        .await
        .map_err(db)?;
    let row = client.query_one(&stmt, &[&project_id, &provider, &uid, &uuid]).await.map_err(db)?;
    let owner: String = row.get(0);
    if owner == uuid { Ok(()) } else { Err(identity_taken(provider, uid, &owner)) }
}

async fn insert_session(
    client: &impl GenericClient,
    user_uuid: &str,
    token: &str,
    expires_at_ms: i64,
    prefix: &str,
) -> Result<()> {
    let (uuid, _) = existing_user(client, user_uuid).await?;
    check_session_token(token, prefix)?;
    let stmt = client
        .prepare_cached(
            "INSERT INTO sessions (token_hash, user_uuid, expires_at) VALUES ($1, $2, $3)",
        )
        .await
        .map_err(db)?;
    let hash = secret::hash(token);
    client
        .execute(&stmt, &[&hash.as_slice(), &uuid, &expires_at_ms])
        .await
        .map_err(|e| query_error(&e, || "that session token is already in use".to_owned()))?;
    Ok(())
}
