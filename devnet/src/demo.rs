//! `serve --demo`: a demo project with one fully set-up user, and credentials to call it with.
//!
//! Keys and tokens are stored hashed, so they cannot be shown again. On a database that already
//! has the demo project, the demo project's server key is therefore rotated (the old key stops
//! working) and a new 24-hour session token is issued for the demo user; ids, the jwt uid and
//! the wallet addresses stay the same.

use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::error::Result;
use crate::store::{ChainFamily, NewUser, Profile, Store};

const PROJECT_KEY: &str = "demo.project_id";
const USER_KEY: &str = "demo.user_uuid";
const JWT_UID_KEY: &str = "demo.jwt_uid";

/// Name of the demo project.
pub const DEMO_PROJECT_NAME: &str = "devnet demo";
/// Lifetime of the demo user's session token.
pub const DEMO_SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Everything needed to call the demo project, printed as one JSON line by `serve --demo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoCredentials {
    pub project_id: String,
    pub server_key: String,
    pub user_uuid: String,
    pub user_token: String,
    pub jwt_uid: String,
    pub evm_address: String,
    pub solana_address: String,
}

/// Creates the demo project and user, or (when they exist) rotates the project key and issues
/// a new session token.
///
/// # Errors
/// Database failures.
pub fn ensure_demo(store: &Store) -> Result<DemoCredentials> {
    if let Some(existing) = refresh_existing(store)? {
        return Ok(existing);
    }
    let project = store.create_project(DEMO_PROJECT_NAME)?;
    let google_id: u64 = rand::random::<u64>() % 10u64.pow(18);
    let email = "demo@depositkit.dev";
    let profile = Profile {
        name: Some("Demo User".into()),
        avatar: Some("https://example.com/avatars/demo.png".into()),
        google_id: Some(google_id.to_string()),
        google_email: Some(email.into()),
        ..Profile::with_email(email)
    };
    let user_uuid = store.add_user(&project.project_id, &NewUser { uuid: None, profile })?;
    let evm_address = format!("0x{}", hex(&rand::random::<[u8; 20]>()));
    let solana_address = bs58::encode(rand::random::<[u8; 32]>()).into_string();
    store.add_wallet(&user_uuid, ChainFamily::Evm, &evm_address)?;
    store.add_wallet(&user_uuid, ChainFamily::Solana, &solana_address)?;
    let jwt_uid = format!("demo-{}", hex(&rand::random::<[u8; 8]>()));
    store.add_identity(&user_uuid, "jwt", &jwt_uid)?;
    let user_token = store.add_session(&user_uuid, SystemTime::now() + DEMO_SESSION_TTL)?;
    store.set_meta(PROJECT_KEY, &project.project_id)?;
    store.set_meta(USER_KEY, &user_uuid)?;
    store.set_meta(JWT_UID_KEY, &jwt_uid)?;
    Ok(DemoCredentials {
        project_id: project.project_id,
        server_key: project.server_key,
        user_uuid,
        user_token,
        jwt_uid,
        evm_address,
        solana_address,
    })
}

/// New credentials for the demo project already in the store, if it is there intact.
fn refresh_existing(store: &Store) -> Result<Option<DemoCredentials>> {
    let (Some(project_id), Some(user_uuid), Some(jwt_uid)) =
        (store.meta(PROJECT_KEY)?, store.meta(USER_KEY)?, store.meta(JWT_UID_KEY)?)
    else {
        return Ok(None);
    };
    let Some(user) = store.user(&project_id, &user_uuid)? else {
        return Ok(None);
    };
    let wallet = |chain: ChainFamily| {
        user.wallets.iter().find(|w| w.chain == chain.as_str()).map(|w| w.public_address.clone())
    };
    let (Some(evm_address), Some(solana_address)) =
        (wallet(ChainFamily::Evm), wallet(ChainFamily::Solana))
    else {
        return Ok(None);
    };
    let project = store.rotate_server_key(&project_id)?;
    let user_token = store.add_session(&user_uuid, SystemTime::now() + DEMO_SESSION_TTL)?;
    Ok(Some(DemoCredentials {
        project_id: project.project_id,
        server_key: project.server_key,
        user_uuid,
        user_token,
        jwt_uid,
        evm_address,
        solana_address,
    }))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SessionStatus;
    use crate::store::test_support::TempDb;

    #[test]
    fn demo_is_created_once_then_its_key_rotated() {
        let db = TempDb::new();
        let store = Store::open(&db.0).unwrap();
        let first = ensure_demo(&store).unwrap();
        assert!(store.verify_server_key(&first.project_id, &first.server_key).unwrap());
        let user = store.user(&first.project_id, &first.user_uuid).unwrap().unwrap();
        assert_eq!(user.wallets.len(), 2);
        assert!(user.profile.google_id.is_some());

        let second = ensure_demo(&store).unwrap();
        assert_eq!(second.project_id, first.project_id);
        assert_eq!(second.user_uuid, first.user_uuid);
        assert_eq!(second.evm_address, first.evm_address);
        assert_ne!(second.server_key, first.server_key);
        assert!(!store.verify_server_key(&first.project_id, &first.server_key).unwrap());
        let now = crate::time::now_ms();
        assert_eq!(
            store.session_status(&second.user_uuid, &second.user_token, now).unwrap(),
            SessionStatus::Valid
        );
    }
}
