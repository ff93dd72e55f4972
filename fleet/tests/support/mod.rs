//! Fixtures shared by the fleet's tests.

#![allow(dead_code)]

use depositkit_core::deposit::store_contract::{ChangeRows, EventRow};
use depositkit_fleet::{Fleet, HeldOwner, Member};

/// Owner address number `n`.
pub fn owner(n: u32) -> String {
    format!("0x{n:040x}")
}

/// A change of one event, `id`, about deposit `d<id>`.
pub fn event(id: u64) -> ChangeRows {
    ChangeRows {
        now: id,
        events: vec![EventRow {
            id,
            at: id,
            kind: "deposit:lifecycle".into(),
            deposit_id: Some(format!("d{id}")),
            event: "{}".into(),
        }],
        ..ChangeRows::default()
    }
}

/// One balancing step of `member`: the owners it claimed.
pub fn balance(fleet: &Fleet, member: &Member) -> Vec<HeldOwner> {
    let m = member.clone();
    fleet.run(async move { m.balance().await.map(|b| b.claimed) }).unwrap()
}

/// The owners `member` holds.
pub fn held(fleet: &Fleet, member: &Member) -> Vec<HeldOwner> {
    let m = member.clone();
    fleet.run(async move { m.held().await }).unwrap()
}
