//! The user-lookup part of the store, kept by depositkit-server's [`SqliteStore`] over the same
//! connections: these methods keep devnet's store API for tests and the CLI.

use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;

use super::{ChainFamily, NewUser, ProjectCredentials, SessionStatus, Store, User};
use crate::error::Result;

impl Store {
    /// [`depositkit_server::UserStore::verify_server_key`] on this file (blocking).
    pub fn verify_server_key(&self, project_id: &str, server_key: &str) -> Result<bool> {
        self.users().verify_server_key(project_id, server_key)
    }

    /// [`depositkit_server::UserStore::user`] on this file (blocking).
    pub fn user(&self, project_id: &str, uuid: &str) -> Result<Option<User>> {
        self.users().user(project_id, uuid)
    }

    /// [`depositkit_server::UserStore::session_status`] on this file (blocking).
    pub fn session_status(&self, uuid: &str, token: &str, now_ms: i64) -> Result<SessionStatus> {
        self.users().session_status(uuid, token, now_ms)
    }

    /// [`depositkit_server::UserStore::user_by_identity`] on this file (blocking).
    pub fn user_by_identity(
        &self,
        project_id: &str,
        provider: &str,
        uid: &str,
    ) -> Result<Option<User>> {
        self.users().user_by_identity(project_id, provider, uid)
    }

    /// [`depositkit_server::UserStore::is_project_address`] on this file (blocking).
    pub fn is_project_address(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<bool> {
        self.users().is_project_address(project_id, chain, address)
    }

    /// [`depositkit_server::UserStore::user_uuids`] on this file (blocking).
    pub fn user_uuids(&self, project_id: &str) -> Result<Vec<String>> {
        self.users().user_uuids(project_id)
    }

    /// [`depositkit_server::UserStore::create_project`] on this file (blocking).
    pub fn create_project(&self, name: &str) -> Result<ProjectCredentials> {
        self.users().create_project(name)
    }

    /// [`depositkit_server::UserStore::rotate_server_key`] on this file (blocking).
    pub fn rotate_server_key(&self, project_id: &str) -> Result<ProjectCredentials> {
        self.users().rotate_server_key(project_id)
    }

    /// [`depositkit_server::UserStore::add_user`] on this file (blocking).
    pub fn add_user(&self, project_id: &str, user: &NewUser) -> Result<String> {
        self.users().add_user(project_id, user)
    }

    /// [`depositkit_server::UserStore::add_wallet`] on this file (blocking).
    pub fn add_wallet(&self, user_uuid: &str, chain: ChainFamily, address: &str) -> Result<()> {
        self.users().add_wallet(user_uuid, chain, address)
    }

    /// [`depositkit_server::UserStore::add_identity`] on this file (blocking).
    pub fn add_identity(&self, user_uuid: &str, provider: &str, uid: &str) -> Result<()> {
        self.users().add_identity(user_uuid, provider, uid)
    }

    /// [`depositkit_server::UserStore::add_session`] with a new random token, on this file.
    pub fn add_session(&self, user_uuid: &str, expires_at: SystemTime) -> Result<String> {
        self.users().add_session(user_uuid, expires_at)
    }

    /// [`Store::add_session`] with a chosen token.
    pub fn add_session_with_token(
        &self,
        user_uuid: &str,
        token: &str,
        expires_at: SystemTime,
    ) -> Result<()> {
        self.users().add_session_with_token(user_uuid, token, expires_at)
    }

    /// [`depositkit_server::UserStore::add_interaction`] on this file (blocking).
    pub fn add_interaction(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<()> {
        self.users().add_interaction(project_id, chain, address)
    }

    /// Imports the users of the JSON file at `path` ([`Store::import_users`]).
    pub fn import_file(&self, project_id: &str, path: &Path) -> Result<Vec<String>> {
        let records = depositkit_server::store::import::read_file(path)?;
        self.import_users(project_id, &records)
    }

    /// [`depositkit_server::UserStore::import_users`] on this file (blocking).
    pub fn import_users(&self, project_id: &str, records: &Value) -> Result<Vec<String>> {
        self.users().import_users(project_id, records)
    }
}
