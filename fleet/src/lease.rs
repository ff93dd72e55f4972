//! Leases: which live member of the fleet holds which owner.
//!
//! A member is a row of `dk_nodes` whose `expires_at` it pushes forward (`renew`) well before
//! it passes, always in database time (`now()`), never the members' clocks. A member whose
//! lease passed is deleted by any other (`reap`), which frees its owners (`ON DELETE SET
//! NULL`). Claiming an owner bumps its fencing token (`dk_owners.fence`), so every write the
//! previous holder still tries is refused (`dk_check_fence`). A member whose own lease passed
//! before it could renew never renews it again: it leaves and joins anew, holding nothing.
//!
//! Balance: each member claims free owners up to `ceil(owners / live members)` per tick and
//! gives back at most [`LeaseSettings::release_per_tick`] of its surplus, so members joining
//! or leaving move owners gradually, never all at once.

use std::time::Duration;

use crate::db::Db;
use crate::error::{FleetError, Result, pg};
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

/// One member of the fleet. Clones are the same member.
#[derive(Debug, Clone)]
pub struct Member {
    db: Db,
    node_id: String,
    name: String,
    settings: LeaseSettings,
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Member {
    /// Joins the fleet as `name` (shown to operators; many members may share it).
    pub(crate) async fn join(db: Db, name: &str, settings: LeaseSettings) -> Result<Member> {
        let node_id = uuid::Uuid::new_v4().to_string();
        let member = Member { db, node_id, name: name.to_owned(), settings };
        member.insert().await?;
        Ok(member)
    }

    async fn insert(&self) -> Result<()> {
        let client = self.db.client().await?;
        client
            .execute(
                "INSERT INTO dk_nodes (node_id, name, expires_at) \
                 VALUES ($1, $2, now() + $3::bigint * interval '1 millisecond')",
                &[&self.node_id, &self.name, &millis(self.settings.ttl)],
            )
            .await
            .map_err(pg)?;
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

    /// Pushes the lease forward by the TTL, from the database's `now()`.
    ///
    /// # Errors
    /// [`FleetError::LeaseLost`] when the lease had already passed or the member was reaped:
    /// it holds nothing now; [`Member::rejoin`] to take part again.
    pub async fn renew(&self) -> Result<()> {
        let client = self.db.client().await?;
        let renewed = client
            .execute(
                "UPDATE dk_nodes SET renewed_at = now(), \
                     expires_at = now() + $2::bigint * interval '1 millisecond' \
                 WHERE node_id = $1 AND expires_at > now()",
                &[&self.node_id, &millis(self.settings.ttl)],
            )
            .await
            .map_err(pg)?;
        if renewed == 0 {
            return Err(FleetError::LeaseLost(self.node_id.clone()));
        }
        Ok(())
    }

    /// After a lost lease: gives up whatever is left of the old membership and joins again
    /// under a new id (the old id's fences can never write again).
    pub async fn rejoin(&mut self) -> Result<()> {
        self.leave().await?;
        self.node_id = uuid::Uuid::new_v4().to_string();
        self.insert().await
    }

    /// Deletes the members whose lease passed, freeing their owners. Returns how many.
    pub async fn reap(&self) -> Result<u64> {
        let client = self.db.client().await?;
        client.execute("DELETE FROM dk_nodes WHERE expires_at < now()", &[]).await.map_err(pg)
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
        Ok(released == 1)
    }

    /// Leaves the fleet: every owner held is freed at once.
    pub async fn leave(&self) -> Result<()> {
        let client = self.db.client().await?;
        client
            .execute("DELETE FROM dk_nodes WHERE node_id = $1", &[&self.node_id])
            .await
            .map_err(pg)?;
        Ok(())
    }
}

fn held_owner(row: &tokio_postgres::Row) -> Result<HeldOwner> {
    let owner: String = row.get(0);
    let options = OwnerOptions::from_json(&owner, row.get(2))?;
    Ok(HeldOwner { fence: row.get(1), owner, options })
}
