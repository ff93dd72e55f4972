//! Commands' outcomes are fenced, on a real PostgreSQL server (`TestDatabase`): the holder
//! records them; a member that lost the owner while running one cannot, and the new holder
//! claims it again and records its own.

use std::time::{Duration, Instant};

use depositkit_core::deposit::DestinationConfig;
use depositkit_server::testing::TestDatabase;
use serde_json::json;

use super::{CommandOutcome, FleetCommand, claim, finish, insert, wait};
use crate::db::Db;
use crate::error::FleetError;
use crate::lease::{LeaseSettings, Member};
use crate::owners::{self, OwnerOptions};

const OWNER: &str = "0x00000000000000000000000000000000000000c1";

/// Short leases: a paused holder is taken over in 1.5 s.
fn settings() -> LeaseSettings {
    let (ttl, renew_every) = (Duration::from_millis(1500), Duration::from_millis(300));
    LeaseSettings { ttl, renew_every, ..LeaseSettings::default() }
}

/// How command `id` ended, without waiting.
fn destination(chain_id: u64) -> DestinationConfig {
    DestinationConfig::chain(chain_id)
}

/// The destination stored in the owner's options.
fn stored_destination(db: &Db) -> Option<DestinationConfig> {
    let db2 = db.clone();
    db.block_on(async move { owners::options(&db2, OWNER).await }).unwrap().destination
}

fn outcome(db: &Db, id: i64) -> crate::Result<CommandOutcome> {
    let db2 = db.clone();
    db.block_on(async move { wait(&db2, id, Duration::ZERO).await })
}

#[test]
fn a_member_that_lost_the_owner_cannot_finish_its_command() {
    let database = TestDatabase::create();
    let db = Db::connect(database.url(), "commands-test", 4).unwrap();
    let (a, b) = {
        let db2 = db.clone();
        db.block_on(async move {
            owners::add(&db2, OWNER, &OwnerOptions::default()).await?;
            let a = Member::join(db2.clone(), "a", settings()).await?;
            assert_eq!(a.balance().await?.claimed.len(), 1, "a takes the owner");
            let b = Member::join(db2, "b", settings()).await?;
            Ok((a, b))
        })
        .unwrap()
    };
    let node_a = a.node_id().to_owned();
    let owners = vec![OWNER.to_owned()];

    // The holder claims a command and records its outcome.
    let first = {
        let (db2, node, owners) = (db.clone(), node_a.clone(), owners.clone());
        db.block_on(async move {
            let id = insert(&db2, OWNER, &FleetCommand::Recover).await?;
            let claimed = claim(&db2, &node, &owners).await?;
            assert_eq!(claimed.iter().map(|c| c.id).collect::<Vec<_>>(), vec![id]);
            // As a destination change that ran: the destination is stored with the outcome.
            finish(&db2, &node, id, &Ok(json!([])), Some(&destination(8453))).await?;
            Ok(id)
        })
        .unwrap()
    };
    assert_eq!(outcome(&db, first).unwrap(), CommandOutcome::Done(json!([])));
    assert_eq!(stored_destination(&db), Some(destination(8453)));

    // It claims a second one, and is paused while running it: `b` takes the owner over once
    // a's lease passed in database time.
    let second = {
        let (db2, node, owners) = (db.clone(), node_a.clone(), owners.clone());
        db.block_on(async move {
            let id = insert(&db2, OWNER, &FleetCommand::Recover).await?;
            assert_eq!(claim(&db2, &node, &owners).await?.len(), 1);
            Ok(id)
        })
        .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let b2 = b.clone();
        let taken = db
            .block_on(async move {
                b2.renew().await?;
                Ok(!b2.balance().await?.claimed.is_empty())
            })
            .unwrap();
        if taken {
            break;
        }
        assert!(Instant::now() < deadline, "b did not take the owner over");
        std::thread::yield_now();
    }

    // a, resumed, tries to record the outcome: refused, and nothing is recorded.
    let refused = {
        let (db2, node) = (db.clone(), node_a.clone());
        db.block_on(async move {
            finish(&db2, &node, second, &Ok(json!(["stale"])), Some(&destination(42161))).await
        })
    };
    match refused {
        Err(FleetError::FenceLost { owner, .. }) => assert_eq!(owner, OWNER),
        other => panic!("expected FenceLost, got {other:?}"),
    }
    assert!(
        matches!(outcome(&db, second), Err(FleetError::CommandTimeout { .. })),
        "the stale holder's outcome is not recorded"
    );
    assert_eq!(stored_destination(&db), Some(destination(8453)), "nor its destination");

    // The new holder claims it again (its stamp is an older fence) and records its outcome.
    let node_b = b.node_id().to_owned();
    {
        let (db2, owners) = (db.clone(), owners.clone());
        db.block_on(async move {
            let claimed = claim(&db2, &node_b, &owners).await?;
            assert_eq!(claimed.iter().map(|c| c.id).collect::<Vec<_>>(), vec![second]);
            finish(&db2, &node_b, second, &Err("refused by the new holder".to_owned()), None).await
        })
        .unwrap();
    }
    assert_eq!(
        outcome(&db, second).unwrap(),
        CommandOutcome::Failed("refused by the new holder".to_owned())
    );
    // a's outcome, recorded before it lost the owner, stays.
    assert_eq!(outcome(&db, first).unwrap(), CommandOutcome::Done(json!([])));
}
