//! A request's key check and lookup in one statement ([`checked`]): `getUserInfo` reads the
//! project's key hash, the user row, the token's session and the wallets in one statement, and
//! `isProjectUser` the key hash and the membership. One statement instead of several pipelined
//! ones is less work for the database per request (a bind, an execute and a result per
//! statement), which on the benchmark's machine shares the cores with the server (issue 19,
//! `docs/benchmarks.md`). Every request still reads the key: nothing is cached.

use std::sync::LazyLock;

use deadpool_postgres::GenericClient;

use super::db;
use super::read::{MEMBERSHIP, key_matches, run};
use crate::error::Result;
use crate::records::{ChainFamily, Profile, SessionStatus, User, Wallet};
use crate::store::lookup::{Found, Lookup};
use crate::{secret, time};

/// Whether `server_key` is `project_id`'s key and, when it is, what `lookup` finds: in one
/// statement for `getUserInfo` and `isProjectUser`, pipelined on `client` for the others.
/// `(false, Found::Nothing)` when the key is wrong (what was read for it is dropped).
///
/// # Errors
/// Database failures only.
pub(super) async fn checked(
    client: &impl GenericClient,
    project_id: &str,
    server_key: &str,
    lookup: &Lookup,
) -> Result<(bool, Found)> {
    let caller = Caller { project_id, server_key };
    let (accepted, found) = match lookup {
        Lookup::UserInfo { uuid, token, now_ms } => {
            user_info(client, &caller, uuid, token, *now_ms).await?
        }
        Lookup::Membership { chain, address } => {
            membership(client, &caller, *chain, address).await?
        }
        Lookup::Nothing => (key_matches(client, project_id, server_key).await?, Found::Nothing),
        Lookup::ByIdentity { .. } => tokio::try_join!(
            key_matches(client, project_id, server_key),
            run(client, project_id, lookup)
        )?,
    };
    Ok(if accepted { (true, found) } else { (false, Found::Nothing) })
}

/// `getUserInfo`'s statement: always one row; the user's columns NULL when there is no such
/// user, the expiry NULL when the token is not a session of this user. The user is found by
/// its uuid alone and its project compared here: with `AND u.project_id = $1` in the join, a
/// generic plan made before the tables' statistics exist (right after an import) walked the
/// project's users through `users_by_project` instead (1,000 rows per request in the
/// benchmark: `EXPLAIN ANALYZE`, issue 19).
static USER_INFO_SQL: LazyLock<String> = LazyLock::new(|| {
    let columns = Profile::column_list().split(", ").map(|c| format!("u.{c}")).collect::<Vec<_>>();
    format!(
        "SELECT (SELECT server_key_hash FROM projects WHERE id = $1),
                (SELECT expires_at FROM sessions WHERE token_hash = $3 AND user_uuid = $2),
                ARRAY(SELECT chain FROM wallets WHERE user_uuid = u.uuid ORDER BY seq),
                ARRAY(SELECT public_address FROM wallets WHERE user_uuid = u.uuid ORDER BY seq),
                u.project_id, u.created_at, u.updated_at, {}
           FROM (SELECT 1) AS one
           LEFT JOIN users u ON u.uuid = $2",
        columns.join(", ")
    )
});

/// The credentials a request presents.
struct Caller<'a> {
    project_id: &'a str,
    server_key: &'a str,
}

async fn user_info(
    client: &impl GenericClient,
    caller: &Caller<'_>,
    uuid: &str,
    token: &str,
    now_ms: i64,
) -> Result<(bool, Found)> {
    let Caller { project_id, server_key } = *caller;
    let stmt = client.prepare_cached(&USER_INFO_SQL).await.map_err(db)?;
    let token_hash = secret::hash(token);
    let row = client.query_one(&stmt, &[&project_id, &uuid, &token_hash.as_slice()]).await;
    let row = row.map_err(db)?;
    if !secret::matches_stored(server_key, row.get::<_, Option<&[u8]>>(0)) {
        return Ok((false, Found::Nothing));
    }
    if row.get::<_, Option<&str>>(4) != Some(project_id) {
        return Ok((true, Found::UserInfo(None)));
    }
    let created_at: i64 = row.get(5);
    let chains: Vec<String> = row.get(2);
    let addresses: Vec<String> = row.get(3);
    let wallets = chains
        .into_iter()
        .zip(addresses)
        .map(|(chain, public_address)| Wallet { chain, public_address })
        .collect();
    let mut values: [Option<String>; 24] = Default::default();
    for (i, value) in values.iter_mut().enumerate() {
        *value = row.get(7 + i);
    }
    let user = User {
        uuid: uuid.to_owned(),
        profile: Profile::from_values(values),
        created_at: time::format_ms(created_at),
        updated_at: time::format_ms(row.get(6)),
        wallets,
    };
    let session = SessionStatus::of_expiry(row.get(1), now_ms);
    Ok((true, Found::UserInfo(Some((user, session)))))
}

/// `isProjectUser`'s statement: the key hash and [`super::read::MEMBERSHIP`].
static MEMBERSHIP_SQL: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT (SELECT server_key_hash FROM projects WHERE id = $1), {MEMBERSHIP}")
});

async fn membership(
    client: &impl GenericClient,
    caller: &Caller<'_>,
    chain: ChainFamily,
    address: &str,
) -> Result<(bool, Found)> {
    let Caller { project_id, server_key } = *caller;
    let stmt = client.prepare_cached(&MEMBERSHIP_SQL).await.map_err(db)?;
    let row =
        client.query_one(&stmt, &[&project_id, &chain.as_str(), &address]).await.map_err(db)?;
    let accepted = secret::matches_stored(server_key, row.get::<_, Option<&[u8]>>(0));
    Ok((accepted, Found::Membership(row.get(1))))
}
