//! Lookups the server answers from: credentials, users, sessions, identities, membership.
//!
//! The per-request statements go through the connection's prepared-statement cache
//! (`prepare_cached`): `Connection::query_row` parses and plans the SQL again on every call,
//! which for these point lookups cost more than running them (`benches/server_throughput.sh`,
//! `docs/benchmarks.md`). [`look_up`] answers a whole request on one connection
//! ([`crate::store::lookup`]); the methods of [`SqliteStore`] answer one question each.

use std::sync::LazyLock;

use rusqlite::{Connection, OptionalExtension, params};

use super::SqliteStore;
use crate::error::Result;
use crate::records::{ChainFamily, Profile, SessionStatus, User, Wallet};
use crate::store::lookup::{Found, Lookup};
use crate::{secret, time};

impl SqliteStore {
    /// [`crate::UserStore::verify_server_key`] on SQLite (blocking).
    pub fn verify_server_key(&self, project_id: &str, server_key: &str) -> Result<bool> {
        key_matches(&self.conn(), project_id, server_key)
    }

    /// [`crate::UserStore::user`] on SQLite (blocking).
    pub fn user(&self, project_id: &str, uuid: &str) -> Result<Option<User>> {
        load_user(&self.conn(), project_id, uuid)
    }

    /// [`crate::UserStore::session_status`] on SQLite (blocking).
    pub fn session_status(&self, uuid: &str, token: &str, now_ms: i64) -> Result<SessionStatus> {
        session_status(&self.conn(), uuid, token, now_ms)
    }

    /// [`crate::UserStore::user_by_identity`] on SQLite (blocking).
    pub fn user_by_identity(
        &self,
        project_id: &str,
        provider: &str,
        uid: &str,
    ) -> Result<Option<User>> {
        user_by_identity(&self.conn(), project_id, provider, uid)
    }

    /// [`crate::UserStore::is_project_address`] on SQLite (blocking).
    pub fn is_project_address(
        &self,
        project_id: &str,
        chain: ChainFamily,
        address: &str,
    ) -> Result<bool> {
        is_member(&self.conn(), project_id, chain, &chain.normalize(address))
    }

    /// [`look_up`] on a connection of the pool (blocking).
    ///
    /// # Errors
    /// Database failures only.
    pub fn look_up(
        &self,
        project_id: &str,
        server_key: Option<&str>,
        lookup: &Lookup,
    ) -> Result<(bool, Found)> {
        look_up(&self.conn(), project_id, server_key, lookup)
    }

    /// [`crate::UserStore::user_uuids`] on SQLite (blocking).
    pub fn user_uuids(&self, project_id: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT uuid FROM users WHERE project_id = ?1 ORDER BY created_at, rowid")?;
        let rows = stmt.query_map([project_id], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// One request on one connection: whether `server_key` (when given; `None`: the caller is
/// already authenticated) is `project_id`'s key, and what `lookup` finds for the project
/// (`Found::Nothing` when the key is wrong: nothing is looked up for a rejected caller).
///
/// # Errors
/// Database failures only.
pub fn look_up(
    conn: &Connection,
    project_id: &str,
    server_key: Option<&str>,
    lookup: &Lookup,
) -> Result<(bool, Found)> {
    match (server_key, lookup) {
        // One statement each: a read transaction of its own.
        (Some(key), Lookup::Nothing) => Ok((key_matches(conn, project_id, key)?, Found::Nothing)),
        (Some(key), Lookup::Membership { chain, address }) => {
            membership_with_key(conn, project_id, key, *chain, address)
        }
        _ => {
            let snapshot = Snapshot::begin(conn)?;
            let answer = look_up_in(conn, project_id, server_key, lookup)?;
            snapshot.end()?;
            Ok(answer)
        }
    }
}

/// [`look_up`]'s statements, in whatever transaction `conn` is in.
fn look_up_in(
    conn: &Connection,
    project_id: &str,
    server_key: Option<&str>,
    lookup: &Lookup,
) -> Result<(bool, Found)> {
    if let (Some(key), Lookup::UserInfo { uuid, token, now_ms }) = (server_key, lookup) {
        return user_info_with_key(conn, project_id, key, uuid, token, *now_ms);
    }
    if let Some(key) = server_key
        && !key_matches(conn, project_id, key)?
    {
        return Ok((false, Found::Nothing));
    }
    let found = match lookup {
        Lookup::Nothing => Found::Nothing,
        Lookup::UserInfo { uuid, token, now_ms } => match load_user(conn, project_id, uuid)? {
            Some(user) => {
                Found::UserInfo(Some((user, session_status(conn, uuid, token, *now_ms)?)))
            }
            None => Found::UserInfo(None),
        },
        Lookup::ByIdentity { provider, uid } => {
            Found::ByIdentity(user_by_identity(conn, project_id, provider, uid)?)
        }
        Lookup::Membership { chain, address } => {
            Found::Membership(is_member(conn, project_id, *chain, address)?)
        }
    };
    Ok((true, found))
}

/// One read transaction around a request's statements. Outside a transaction every statement
/// is a read transaction of its own, and starting and ending one (a shared lock on the file
/// with `fcntl`, its size with `fstat`, the WAL index's read mark) cost more than the point
/// lookups themselves: `perf` put a quarter of the server's CPU there with 4 statements per
/// `getUserInfo` (issue 19, `docs/benchmarks.md`). One transaction also reads every statement
/// from one snapshot. It ends before the connection is handed back, so the next request sees
/// what was committed in the meantime (by this process or another).
struct Snapshot<'a> {
    /// `None` when the connection was already in a transaction (then it is left alone).
    conn: Option<&'a Connection>,
}

impl<'a> Snapshot<'a> {
    fn begin(conn: &'a Connection) -> Result<Self> {
        if !conn.is_autocommit() {
            return Ok(Snapshot { conn: None });
        }
        conn.prepare_cached(BEGIN_SQL)?.execute([])?;
        Ok(Snapshot { conn: Some(conn) })
    }

    fn end(mut self) -> Result<()> {
        if let Some(conn) = self.conn.take() {
            conn.prepare_cached(COMMIT_SQL)?.execute([])?;
        }
        Ok(())
    }
}

impl Drop for Snapshot<'_> {
    /// A request that failed half-way: its transaction is rolled back (it wrote nothing), so
    /// the connection does not keep an old snapshot.
    fn drop(&mut self) {
        if let Some(conn) = self.conn
            && !conn.is_autocommit()
        {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }
}

/// Whether `server_key` is the key of `project_id` (constant time in the key).
fn key_matches(conn: &Connection, project_id: &str, server_key: &str) -> Result<bool> {
    let stored: Option<Vec<u8>> =
        conn.prepare_cached(KEY_SQL)?.query_row([project_id], |row| row.get(0)).optional()?;
    Ok(secret::matches_stored(server_key, stored.as_deref()))
}

fn session_status(
    conn: &Connection,
    uuid: &str,
    token: &str,
    now_ms: i64,
) -> Result<SessionStatus> {
    let row: Option<(String, i64)> = conn
        .prepare_cached(SESSION_SQL)?
        .query_row([secret::hash(token).as_slice()], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    Ok(SessionStatus::of(row, uuid, now_ms))
}

fn user_by_identity(
    conn: &Connection,
    project_id: &str,
    provider: &str,
    uid: &str,
) -> Result<Option<User>> {
    let uuid: Option<String> = conn
        .prepare_cached(IDENTITY_SQL)?
        .query_row(params![project_id, provider, uid], |row| row.get(0))
        .optional()?;
    match uuid {
        Some(uuid) => load_user(conn, project_id, &uuid),
        None => Ok(None),
    }
}

/// Whether `address` (already in its stored form) is a wallet of the project's users or
/// interacted with the project: point lookups, each on one table.
fn is_member(
    conn: &Connection,
    project_id: &str,
    chain: ChainFamily,
    address: &str,
) -> Result<bool> {
    let mut owners = conn.prepare_cached(WALLET_OWNERS_SQL)?;
    let mut of_project = conn.prepare_cached(PROJECT_USER_SQL)?;
    let mut rows = owners.query(params![chain.as_str(), address])?;
    while let Some(row) = rows.next()? {
        let owner: &str = row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?;
        if of_project.exists(params![owner, project_id])? {
            return Ok(true);
        }
    }
    Ok(conn.prepare_cached(INTERACTION_SQL)?.exists(params![
        project_id,
        chain.as_str(),
        address
    ])?)
}

// The per-request statements read one table each and order nothing in SQL: SQLite (built with
// STAT4, as rusqlite's bundled one is) prepared a join, a `UNION ALL` of the two membership
// lookups, and `ORDER BY rowid` on the wallets again on every call with new parameters, which
// cost more than running them (a quarter of the server's CPU under load: perf, issue 19). The
// test below watches for it.
const BEGIN_SQL: &str = "BEGIN";
const COMMIT_SQL: &str = "COMMIT";
const KEY_SQL: &str = "SELECT server_key_hash FROM projects WHERE id = ?1";
const SESSION_SQL: &str = "SELECT user_uuid, expires_at FROM sessions WHERE token_hash = ?1";
const IDENTITY_SQL: &str =
    "SELECT user_uuid FROM identities WHERE project_id = ?1 AND provider = ?2 AND uid = ?3";
const WALLETS_SQL: &str = "SELECT rowid, chain, public_address FROM wallets WHERE user_uuid = ?1";
const WALLET_OWNERS_SQL: &str =
    "SELECT user_uuid FROM wallets WHERE chain = ?1 AND public_address = ?2";
const PROJECT_USER_SQL: &str = "SELECT 1 FROM users WHERE uuid = ?1 AND project_id = ?2";
const INTERACTION_SQL: &str =
    "SELECT 1 FROM interactions WHERE project_id = ?1 AND chain = ?2 AND address = ?3";

/// The user row of `load_user`, built once.
static USER_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT created_at, updated_at, {} FROM users WHERE uuid = ?1 AND project_id = ?2",
        Profile::column_list()
    )
});

/// `getUserInfo` for a caller presenting `server_key`: the key, the user row and the session in
/// one statement ([`USER_INFO_SQL`]), then the wallets; the key alone when there is no such
/// user. `(false, Found::Nothing)` when the key is wrong (what was read for it is dropped).
fn user_info_with_key(
    conn: &Connection,
    project_id: &str,
    server_key: &str,
    uuid: &str,
    token: &str,
    now_ms: i64,
) -> Result<(bool, Found)> {
    let token_hash = secret::hash(token);
    let row = conn
        .prepare_cached(&USER_INFO_SQL)?
        .query_row(params![project_id, uuid, token_hash.as_slice()], |row| {
            let accepted = secret::matches_stored(server_key, row.get_ref(0)?.as_blob_or_null()?);
            let expires_at: Option<i64> = row.get(1)?;
            Ok((accepted, expires_at, user_columns(row, 2)?))
        })
        .optional()?;
    let Some((accepted, expires_at, columns)) = row else {
        let accepted = key_matches(conn, project_id, server_key)?;
        return Ok((accepted, if accepted { Found::UserInfo(None) } else { Found::Nothing }));
    };
    if !accepted {
        return Ok((false, Found::Nothing));
    }
    let user = user_of(conn, uuid, columns)?;
    Ok((true, Found::UserInfo(Some((user, SessionStatus::of_expiry(expires_at, now_ms))))))
}

/// `isProjectUser` for a caller presenting `server_key`: the key and the membership in one
/// statement ([`MEMBERSHIP_SQL`]). `(false, Found::Nothing)` when the key is wrong.
fn membership_with_key(
    conn: &Connection,
    project_id: &str,
    server_key: &str,
    chain: ChainFamily,
    address: &str,
) -> Result<(bool, Found)> {
    let answer = conn.prepare_cached(MEMBERSHIP_SQL)?.query_row(
        params![project_id, chain.as_str(), address],
        |row| {
            let accepted = secret::matches_stored(server_key, row.get_ref(0)?.as_blob_or_null()?);
            let member = row.get::<_, bool>(1)? || row.get::<_, bool>(2)?;
            Ok(if accepted { (true, Found::Membership(member)) } else { (false, Found::Nothing) })
        },
    )?;
    Ok(answer)
}

/// A user row's columns from `first` on: `created_at`, `updated_at`, the profile.
type UserColumns = (i64, i64, [Option<String>; 24]);

fn user_columns(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<UserColumns> {
    let mut values: [Option<String>; 24] = Default::default();
    for (i, value) in values.iter_mut().enumerate() {
        *value = row.get(first + 2 + i)?;
    }
    Ok((row.get(first)?, row.get(first + 1)?, values))
}

/// `getUserInfo`'s key, session and user row in one statement: the user's row (none when the
/// project has no such user) with the project's key hash and the expiry of the token's session
/// when it is this user's (NULL otherwise). The wallets stay a statement of their own: as a
/// `json_group_array` column here the request measured ~12% slower (issue 19). Scalar subqueries, not joins: SQLite prepares a
/// statement over two tables again on every call (see above).
static USER_INFO_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT (SELECT server_key_hash FROM projects WHERE id = ?1),
                (SELECT expires_at FROM sessions WHERE token_hash = ?3 AND user_uuid = ?2),
                created_at, updated_at, {}
           FROM users WHERE uuid = ?2 AND project_id = ?1",
        Profile::column_list()
    )
});

/// `isProjectUser`'s key and membership in one statement: the project's key hash, whether the
/// address is a wallet of a user of the project, whether it interacted with the project.
const MEMBERSHIP_SQL: &str = "SELECT (SELECT server_key_hash FROM projects WHERE id = ?1),
        EXISTS (SELECT 1 FROM wallets w WHERE w.chain = ?2 AND w.public_address = ?3
                   AND (SELECT project_id FROM users WHERE uuid = w.user_uuid) = ?1),
        EXISTS (SELECT 1 FROM interactions WHERE project_id = ?1 AND chain = ?2 AND address = ?3)";

fn load_user(conn: &Connection, project_id: &str, uuid: &str) -> Result<Option<User>> {
    let columns = conn
        .prepare_cached(&USER_SQL)?
        .query_row([uuid, project_id], |row| user_columns(row, 0))
        .optional()?;
    match columns {
        Some(columns) => Ok(Some(user_of(conn, uuid, columns)?)),
        None => Ok(None),
    }
}

/// The User record of `uuid` from its row's columns and its wallets.
fn user_of(conn: &Connection, uuid: &str, columns: UserColumns) -> Result<User> {
    let (created_at, updated_at, values) = columns;
    let mut stmt = conn.prepare_cached(WALLETS_SQL)?;
    let mut wallets = stmt
        .query_map([uuid], |row| {
            let wallet = Wallet { chain: row.get(1)?, public_address: row.get(2)? };
            Ok((row.get::<_, i64>(0)?, wallet))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    // In the order they were added.
    wallets.sort_unstable_by_key(|(rowid, _)| *rowid);
    let wallets = wallets.into_iter().map(|(_, wallet)| wallet).collect();
    Ok(User {
        uuid: uuid.to_owned(),
        profile: Profile::from_values(values),
        created_at: time::format_ms(created_at),
        updated_at: time::format_ms(updated_at),
        wallets,
    })
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::*;
    use crate::records::NewUser;

    /// The per-request statements are prepared once per connection: none is prepared again
    /// when called with other parameters (SQLite does that to some queries, at a cost larger
    /// than running them).
    #[test]
    fn request_statements_are_not_prepared_again() {
        let path = std::env::temp_dir()
            .join(format!("depositkit-server-reprepare-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let store = SqliteStore::open(&path, 1).unwrap();
        let project = store.create_project("reprepare").unwrap();
        let mut uuids = Vec::new();
        for i in 0..3u32 {
            let user = store
                .add_user(&project.project_id, &NewUser::with_email(format!("u{i}@example.com")))
                .unwrap();
            let address = format!("0x{:040x}", 0x1000 + i);
            store.add_wallet(&user, ChainFamily::Evm, &address).unwrap();
            store.add_identity(&user, "jwt", &format!("uid-{i}")).unwrap();
            uuids.push((user, address));
        }
        let conn = store.conn();
        for (i, (uuid, address)) in uuids.iter().enumerate() {
            let lookups = [
                Lookup::UserInfo { uuid: uuid.clone(), token: format!("st_{i}"), now_ms: 0 },
                Lookup::ByIdentity { provider: "jwt".into(), uid: format!("uid-{i}") },
                Lookup::Membership { chain: ChainFamily::Evm, address: address.clone() },
                Lookup::Membership { chain: ChainFamily::Evm, address: format!("0x{:040x}", i) },
            ];
            for lookup in &lookups {
                let key = Some(project.server_key.as_str());
                assert!(look_up(&conn, &project.project_id, key, lookup).unwrap().0);
                // The request's read transaction is over: the next one sees newer commits.
                assert!(conn.is_autocommit());
            }
        }
        let user_sql: &str = &USER_SQL;
        let user_info_sql: &str = &USER_INFO_SQL;
        let prepared_again = [
            BEGIN_SQL,
            COMMIT_SQL,
            KEY_SQL,
            SESSION_SQL,
            IDENTITY_SQL,
            WALLETS_SQL,
            WALLET_OWNERS_SQL,
            PROJECT_USER_SQL,
            INTERACTION_SQL,
            user_sql,
            user_info_sql,
            MEMBERSHIP_SQL,
        ]
        .into_iter()
        .filter(|sql| conn.prepare_cached(sql).unwrap().get_status(StatementStatus::RePrepare) > 0)
        .collect::<Vec<_>>();
        assert!(prepared_again.is_empty(), "prepared again: {prepared_again:#?}");
        drop(conn);
        drop(store);
        let _ = std::fs::remove_file(&path);
    }
}
