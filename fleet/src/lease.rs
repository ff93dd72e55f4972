//! Leases: which live member of the fleet holds which owner.
//!
//! A member is a row of `dk_nodes` whose `expires_at` it pushes forward (`renew`) well before
//! it passes, always in database time (`now()`), never the members' clocks. A member whose
//! lease passed is deleted by any other (`reap`), which frees its owners (`ON DELETE SET
//! NULL`). Claiming an owner bumps its fencing token (`dk_owners.fence`), so every write the
//! previous holder still tries is refused (`dk_check_fence`). A member whose own lease passed
//! before it could renew never renews it again: it leaves and joins anew, holding nothing.
//!
//! Crash fast path: each member renews on a lease session of its own that holds an advisory
//! lock keyed by its node id; a member whose lock is free (its process died, or its session
//! was cut) is reaped at once, whatever its lease says ([`Member::reap`]).
//!
//! Balance: each member claims free owners up to `ceil(owners / live members)` per tick and
//! gives back at most [`LeaseSettings::release_per_tick`] of its surplus, so members joining
//! or leaving move owners gradually, never all at once.

use std::sync::Arc;
use std::time::Duration;

use crate::db::Db;
use crate::error::{FleetError, Result, pg};
use crate::metrics;
use crate::owners::OwnerOptions;

/// How long a lease lasts and how it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseSettings {
    /// A member that does not renew within this is dead to the fleet: others take its owners.
    /// Default 10 s.
    pub ttl: Duration,
    /// How often a member renews its lease and rebalances. Default 3 s (a lease survives two
    /// missed renewals).
    pub renew_every: Duration,
    /// The most owners a member claims per tick. Default 500.
    pub claim_per_tick: usize,
    /// The most surplus owners a member gives back per tick. Default 50.
    pub release_per_tick: usize,
}

impl Default for LeaseSettings {
    fn default() -> Self {
        LeaseSettings {
            ttl: Duration::from_secs(10),
            renew_every: Duration::from_secs(3),
            claim_per_tick: 500,
            release_per_tick: 50,
        }
    }
}

/// An owner a member holds: the fencing token its writes carry, and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldOwner {
    /// The owner.
    pub owner: String,
    /// The fencing token of this hold.
    pub fence: i64,
    /// Its options.
    pub options: OwnerOptions,
}

/// What one balancing step changed.
#[derive(Debug, Default)]
pub struct Balance {
    /// Owners just claimed.
    pub claimed: Vec<HeldOwner>,
    /// Owners held beyond this member's share: stop their clients, then [`Member::release`].
    pub surplus: Vec<HeldOwner>,
}

/// One member of the fleet. Clones are the same member (and share its lease session).
#[derive(Debug, Clone)]
pub struct Member {
    db: Db,
    node_id: String,
    name: String,
    settings: LeaseSettings,
    session: Arc<LeaseSession>,
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// The first key of the lease sessions' advisory locks (the two-int form, so no bigint lock
/// of anyone else's can collide with them); the second is `hashtext(node_id)`.
const SESSION_LOCK_CLASS: i32 = 0x646b_6c73;

/// The member's lease session: a connection of its own, outside the pool, that holds the
/// session-level advisory lock `(SESSION_LOCK_CLASS, hashtext(node_id))` for as long as the
/// member lives, and renews the lease. The server frees the lock the moment the session
/// ends, so a member whose process died (its socket closed) is seen dead at once: the crash
/// fast path of [`Member::reap`].
struct LeaseSession {
    db: Db,
    connected: tokio::sync::Mutex<Option<Connected>>,
}

struct Connected {
    client: tokio_postgres::Client,
    driver: tokio::task::JoinHandle<()>,
    /// The node whose lock this session holds, when it got it.
    locked: Option<String>,
}

impl Drop for Connected {
    fn drop(&mut self) {
        // Closing the socket ends the session at once, and with it the lock.
        self.driver.abort();
    }
}

impl std::fmt::Debug for LeaseSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseSession").finish_non_exhaustive()
    }
}

impl LeaseSession {
    /// The session, connected and holding `node`'s lock when it can: a session that dropped
    /// (cut by the server, or by the network) is opened again. Not getting the lock only turns
    /// the fast path off for this member (others then wait for its lease to pass).
    async fn ready(&self, node: &str) -> Result<tokio::sync::MutexGuard<'_, Option<Connected>>> {
        let mut connected = self.connected.lock().await;
        if connected.as_ref().is_none_or(|c| c.driver.is_finished() || c.client.is_closed()) {
            *connected = None;
            let (client, driver) = self.db.own_connection(None).await?;
            *connected = Some(Connected { client, driver, locked: None });
        }
        let session = connected
            .as_mut()
            .ok_or_else(|| FleetError::Postgres("no lease session".to_owned()))?;
        if session.locked.as_deref() != Some(node) {
            let row = session
                .client
                .query_one(
                    "SELECT pg_advisory_unlock_all(), \
                            pg_try_advisory_lock($1, hashtext($2)), \
                            set_config('application_name', 'depositkit-lease:' || $2, false)",
                    &[&SESSION_LOCK_CLASS, &node],
                )
                .await
                .map_err(pg)?;
            session.locked = row.get::<_, bool>(1).then(|| node.to_owned());
        }
        Ok(connected)
    }

    /// Runs `statement` on the session (holding `node`'s lock); a session that does not
    /// answer within `limit` is dropped, so the next call opens a new one.
    async fn execute(
        &self,
        node: &str,
        limit: Duration,
        statement: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64> {
        let mut connected = self.ready(node).await?;
        let client = &connected
            .as_ref()
            .ok_or_else(|| FleetError::Postgres("no lease session".to_owned()))?
            .client;
        match tokio::time::timeout(limit, client.execute(statement, params)).await {
            Ok(done) => done.map_err(pg),
            Err(_) => {
                *connected = None;
                Err(FleetError::Postgres(format!(
                    "the lease session did not answer within {} ms",
                    limit.as_millis()
                )))
            }
        }
    }

    /// Gives `node`'s lock back (the member left; the session stays for a next node id).
    async fn unlock(&self) {
        let mut connected = self.connected.lock().await;
        if let Some(session) = connected.as_mut()
            && session.locked.take().is_some()
            && session.client.batch_execute("SELECT pg_advisory_unlock_all()").await.is_err()
        {
            *connected = None;
        }
    }
}

impl Member {
    /// Joins the fleet as `name` (shown to operators; many members may share it).
    pub(crate) async fn join(db: Db, name: &str, settings: LeaseSettings) -> Result<Member> {
        let node_id = uuid::Uuid::new_v4().to_string();
        let session =
            Arc::new(LeaseSession { db: db.clone(), connected: tokio::sync::Mutex::new(None) });
        let member = Member { db, node_id, name: name.to_owned(), settings, session };
        member.insert().await?;
        Ok(member)
    }

    /// The lease session's lock first, then the row: no other member can see the row without
    /// the lock and take the member for dead.
    async fn insert(&self) -> Result<()> {
        self.session
            .execute(
                &self.node_id,
                self.settings.ttl,
                "INSERT INTO dk_nodes (node_id, name, expires_at) \
                 VALUES ($1, $2, now() + $3::bigint * interval '1 millisecond')",
                &[&self.node_id, &self.name, &millis(self.settings.ttl)],
            )
            .await?;
        Ok(())
    }

    /// This member's id (`dk_nodes.node_id`).
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    /// The settings.
    pub fn settings(&self) -> LeaseSettings {
        self.settings
    }

    /// Pushes the lease forward by the TTL, from the database's `now()`, on the lease session
    /// (opened again, and its lock taken again, when it dropped).
    ///
    /// # Errors
    /// [`FleetError::LeaseLost`] when the lease had already passed or the member was reaped
    /// (also when its session was cut and another member reaped it meanwhile): it holds
    /// nothing now; [`Member::rejoin`] to take part again.
    pub async fn renew(&self) -> Result<()> {
        let renewed = self
            .session
            .execute(
                &self.node_id,
                self.settings.ttl / 2,
                "UPDATE dk_nodes SET renewed_at = now(), \
                     expires_at = now() + $2::bigint * interval '1 millisecond' \
                 WHERE node_id = $1 AND expires_at > now()",
                &[&self.node_id, &millis(self.settings.ttl)],
            )
            .await?;
        if renewed == 0 {
            metrics::lease_lost();
            return Err(FleetError::LeaseLost(self.node_id.clone()));
        }
        metrics::lease_renewed();
        Ok(())
    }

    /// After a lost lease: gives up whatever is left of the old membership and joins again
    /// under a new id (the old id's fences can never write again).
    pub async fn rejoin(&mut self) -> Result<()> {
        self.leave().await?;
        self.node_id = uuid::Uuid::new_v4().to_string();
        self.insert().await
    }

    /// Deletes the members that are dead, freeing their owners, and returns how many:
    ///
    /// - those whose lease passed;
    /// - **the crash fast path**: those whose lease session is gone (their advisory lock is
    ///   free: a killed process's socket closed, or its session was terminated), whatever
    ///   their lease says. Not within two renewal periods of a server start: every member's
    ///   session dropped then, and they need that long to take their locks again.
    ///
    /// Safe even when the member reaped this way is alive (its session was cut): deleting its
    /// row clears it as holder, every write it tries is refused by the fence check (which
    /// needs its row), its next renewal finds no row (`LeaseLost`), and it stops its clients
    /// and joins again under a new id.
    pub async fn reap(&self) -> Result<u64> {
        let client = self.db.client().await?;
        let reaped = client
            .execute(
                "DELETE FROM dk_nodes WHERE expires_at < now() \
                    OR (node_id <> $1 \
                        AND now() - pg_postmaster_start_time() \
                            > $2::bigint * interval '1 millisecond' \
                        AND pg_try_advisory_xact_lock($3, hashtext(node_id)))",
                &[&self.node_id, &millis(self.settings.renew_every * 2), &SESSION_LOCK_CLASS],
            )
            .await
            .map_err(pg)?;
        metrics::members_reaped(reaped);
        Ok(reaped)
    }

    /// The owners this member holds now.
    pub async fn held(&self) -> Result<Vec<HeldOwner>> {
        let client = self.db.client().await?;
        let rows = client
            .query(
                "SELECT owner, fence, options::text FROM dk_owners WHERE holder = $1 \
                 ORDER BY owner",
                &[&self.node_id],
            )
            .await
            .map_err(pg)?;
        metrics::owners_held(&self.node_id, Some(rows.len()));
        rows.iter().map(held_owner).collect()
    }

    /// One balancing step: reaps dead members, claims free owners up to this member's share,
    /// and names the surplus to give back.
    pub async fn balance(&self) -> Result<Balance> {
        self.reap().await?;
        let client = self.db.client().await?;
        let counts = client
            .query_one(
                "SELECT (SELECT count(*) FROM dk_owners WHERE enabled), \
                        (SELECT count(*) FROM dk_nodes WHERE expires_at > now()), \
                        (SELECT count(*) FROM dk_owners WHERE holder = $1)",
                &[&self.node_id],
            )
            .await
            .map_err(pg)?;
        let (owners, members, held): (i64, i64, i64) =
            (counts.get(0), counts.get(1), counts.get(2));
        let share = if members == 0 { owners } else { (owners + members - 1) / members };
        let mut balance = Balance::default();
        if held < share {
            let room = (share - held).min(self.settings.claim_per_tick as i64);
            let rows = client
                .query(
                    "UPDATE dk_owners SET holder = $1, fence = fence + 1, acquired_at = now() \
                     WHERE owner IN (SELECT owner FROM dk_owners \
                                     WHERE holder IS NULL AND enabled ORDER BY owner \
                                     LIMIT $2 FOR UPDATE SKIP LOCKED) \
                       AND EXISTS (SELECT 1 FROM dk_nodes \
                                   WHERE node_id = $1 AND expires_at > now()) \
                     RETURNING owner, fence, options::text",
                    &[&self.node_id, &room],
                )
                .await
                .map_err(pg)?;
            balance.claimed = rows.iter().map(held_owner).collect::<Result<_>>()?;
            metrics::owners_claimed(balance.claimed.len());
        } else if held > share {
            let surplus = (held - share).min(self.settings.release_per_tick as i64);
            let rows = client
                .query(
                    "SELECT owner, fence, options::text FROM dk_owners WHERE holder = $1 \
                     ORDER BY owner DESC LIMIT $2",
                    &[&self.node_id, &surplus],
                )
                .await
                .map_err(pg)?;
            balance.surplus = rows.iter().map(held_owner).collect::<Result<_>>()?;
        }
        Ok(balance)
    }

    /// Gives `owner` back (its client stopped first), if this member still holds it under
    /// `fence`. Returns whether it did.
    pub async fn release(&self, owner: &str, fence: i64) -> Result<bool> {
        let client = self.db.client().await?;
        let released = client
            .execute(
                "UPDATE dk_owners SET holder = NULL WHERE owner = $1 AND holder = $2 \
                 AND fence = $3",
                &[&owner, &self.node_id, &fence],
            )
            .await
            .map_err(pg)?;
        if released == 1 {
            metrics::owner_released();
        }
        Ok(released == 1)
    }

    /// Leaves the fleet: every owner held is freed at once.
    pub async fn leave(&self) -> Result<()> {
        let client = self.db.client().await?;
        client
            .execute("DELETE FROM dk_nodes WHERE node_id = $1", &[&self.node_id])
            .await
            .map_err(pg)?;
        self.session.unlock().await;
        metrics::owners_held(&self.node_id, None);
        Ok(())
    }
}

fn held_owner(row: &tokio_postgres::Row) -> Result<HeldOwner> {
    let owner: String = row.get(0);
    let options = OwnerOptions::from_json(&owner, row.get(2))?;
    Ok(HeldOwner { fence: row.get(1), owner, options })
}
