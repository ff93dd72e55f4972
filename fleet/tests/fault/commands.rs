//! The commands during the faults (the second scenario, members with `--auto-sweep false`):
//! a process that is not a member asks, through a `Fleet` connection of its own, for a `sweep`
//! or a `refund` (now and then both, as two hosts might) of every deposit its owners' clients
//! detected, and now and then for a destination change, each with a short timeout, asking
//! again after a timeout or an unreachable database as a real host would. What it asked and
//! what it got back is checked against devnet's ledger afterwards (`checks::commands`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use depositkit_core::deposit::{DestinationConfig, RefundReason};
use depositkit_fleet::{CommandOutcome, Fleet, FleetCommand, FleetError};

use super::postgres::rows;
use super::rng::Rng;
use super::workload::lock;

/// How long one request waits before the host asks again.
const TIMEOUT: Duration = Duration::from_secs(2);
/// How often a host asks for one command before giving up on it (for this round).
const TRIES: u32 = 6;
/// How long a deposit may stay waiting after its commands before it is asked for again.
const ASK_AGAIN: Duration = Duration::from_secs(6);

/// What was asked for one deposit.
#[derive(Debug, Clone)]
pub struct Asked {
    pub owner: String,
    /// `sweep` and/or `refund`, in the order asked.
    pub kinds: Vec<&'static str>,
    /// Requests sent for it (retries and re-asks included).
    pub requests: u32,
    /// Each request's end: `done`, `failed: …`, `timeout`, `unreachable`, `error: …`.
    pub outcomes: Vec<String>,
    /// The owner's destinations (index into `Commanded::destinations[owner]`) a sweep of it
    /// may land at: the one last confirmed before it was first asked, and any later.
    pub allowed_from: usize,
    last_asked: Instant,
}

/// Everything the commander asked and got.
#[derive(Debug, Default)]
pub struct Commanded {
    pub deposits: BTreeMap<String, Asked>,
    /// Per owner, its destination addresses in the order asked, and whether the change was
    /// confirmed (`Done`); the first is the owner's own address (the default destination).
    pub destinations: BTreeMap<String, Vec<(String, bool)>>,
    pub requests: u32,
    pub retries: u32,
    pub timeouts: u32,
    pub unreachable: u32,
    pub reconnects: u32,
}

impl Commanded {
    fn confirmed(&self, owner: &str) -> usize {
        self.destinations
            .get(owner)
            .and_then(|list| list.iter().rposition(|(_, done)| *done))
            .unwrap_or(0)
    }
}

/// The host's side of one command: ask, and ask again after a timeout or an unreachable
/// database (with a new connection), up to `TRIES` times. The last outcome, as text.
fn ask(
    url: &str,
    fleet: &mut Option<Fleet>,
    out: &Mutex<Commanded>,
    owner: &str,
    command: &FleetCommand,
) -> String {
    let mut last = String::from("unreachable");
    for attempt in 0..TRIES {
        if attempt > 0 {
            lock(out).retries += 1;
        }
        if fleet.is_none() {
            lock(out).reconnects += 1;
            *fleet = Fleet::connect(url, 2).ok();
        }
        let Some(connected) = fleet.as_ref() else {
            lock(out).unreachable += 1;
            std::thread::sleep(Duration::from_millis(300));
            continue;
        };
        lock(out).requests += 1;
        match connected.request(owner, command.clone(), TIMEOUT) {
            Ok(CommandOutcome::Done(_)) => return "done".to_owned(),
            Ok(CommandOutcome::Failed(reason)) => return format!("failed: {reason}"),
            Err(FleetError::CommandTimeout { .. }) => {
                lock(out).timeouts += 1;
                last = "timeout".to_owned();
            }
            Err(FleetError::Unreachable { .. } | FleetError::Postgres(_)) => {
                lock(out).unreachable += 1;
                last = "unreachable".to_owned();
                *fleet = None;
                std::thread::sleep(Duration::from_millis(300));
            }
            Err(other) => return format!("error: {other}"),
        }
    }
    last
}

/// Starts the commander until `stop`: it reads the owners' waiting deposits from the fleet's
/// store and asks for each one's sweep or refund; every eighth deposit, it first moves a
/// random owner's destination to a fresh address.
pub fn commander(
    url: String,
    owners: Vec<String>,
    mut rng: Rng,
    stop: Arc<AtomicBool>,
    out: Arc<Mutex<Commanded>>,
) -> JoinHandle<()> {
    {
        let mut out = lock(&out);
        for owner in &owners {
            out.destinations.insert(owner.clone(), vec![(owner.clone(), true)]);
        }
    }
    std::thread::spawn(move || {
        let mut fleet: Option<Fleet> = None;
        let mut fresh = 0u64;
        while !stop.load(Ordering::SeqCst) {
            let sql = "SELECT owner, id FROM dk_deposits WHERE open AND state = 'waiting' \
                       ORDER BY updated_at";
            let waiting: Vec<(String, String)> = rows(&url, sql)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|r| Some((r[0].clone()?, r[1].clone()?)))
                .collect();
            let mut due: HashMap<String, String> = HashMap::new();
            {
                let out = lock(&out);
                for (owner, id) in waiting {
                    if out.deposits.get(&id).is_none_or(|a| a.last_asked.elapsed() > ASK_AGAIN) {
                        due.insert(id, owner);
                    }
                }
            }
            let mut due: Vec<(String, String)> = due.into_iter().collect();
            due.sort();
            for (id, owner) in due {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let known = lock(&out).deposits.get(&id).map(|a| a.kinds.clone());
                let kinds = known.unwrap_or_else(|| match rng.below(8) {
                    0..=4 => vec!["sweep"],
                    5 | 6 => vec!["refund"],
                    _ => vec!["sweep", "refund"],
                });
                if lock(&out).deposits.len() % 8 == 7 {
                    let moved = rng.pick(&owners).clone();
                    fresh += 1;
                    let address = format!("0x{:040x}", 0xde57_0000_0000_u64 + fresh);
                    let command = FleetCommand::SetDestination(
                        DestinationConfig::chain(8453).with_address(address.clone()),
                    );
                    let list_index = {
                        let mut out = lock(&out);
                        let list = out.destinations.entry(moved.clone()).or_default();
                        list.push((address, false));
                        list.len() - 1
                    };
                    let got = ask(&url, &mut fleet, &out, &moved, &command);
                    if got == "done" {
                        lock(&out).destinations.get_mut(&moved).unwrap()[list_index].1 = true;
                    }
                }
                {
                    let mut out = lock(&out);
                    let allowed_from = out.confirmed(&owner);
                    let asked = out.deposits.entry(id.clone()).or_insert_with(|| Asked {
                        owner: owner.clone(),
                        kinds: kinds.clone(),
                        requests: 0,
                        outcomes: Vec::new(),
                        allowed_from,
                        last_asked: Instant::now(),
                    });
                    asked.last_asked = Instant::now();
                }
                for kind in kinds {
                    let command = match kind {
                        "sweep" => FleetCommand::Sweep { deposit_id: id.clone() },
                        _ => FleetCommand::Refund {
                            deposit_id: id.clone(),
                            reason: RefundReason::UserRequested,
                        },
                    };
                    let before = lock(&out).requests;
                    let got = ask(&url, &mut fleet, &out, &owner, &command);
                    let mut out = lock(&out);
                    let sent = out.requests - before;
                    let asked = out.deposits.get_mut(&id).expect("recorded above");
                    asked.requests += sent;
                    asked.outcomes.push(format!("{kind}: {got}"));
                    asked.last_asked = Instant::now();
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    })
}
