//! The faults, driven by the seeded generator: SIGKILL a member (and start a new one in its
//! place), SIGSTOP one for 1.5 × its lease and SIGCONT it, cut a member's database sessions
//! (`pg_terminate_backend`), restart PostgreSQL (fast or crash), or stop it for a while (and
//! check that a process connecting meanwhile gets `FleetError::Unreachable`).

use std::collections::BTreeMap;
use std::time::Duration;

use depositkit_fleet::{Fleet, FleetError};

use super::postgres::{OwnPostgres, rows};
use super::processes::{MemberProcess, MemberSettings};
use super::rng::Rng;

/// One kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fault {
    Kill,
    Pause,
    CutSessions,
    RestartPostgres,
    StopPostgres,
}

impl Fault {
    pub const ALL: [Fault; 5] = [
        Fault::Kill,
        Fault::Pause,
        Fault::CutSessions,
        Fault::RestartPostgres,
        Fault::StopPostgres,
    ];

    /// Weighted: process faults are the common ones.
    fn random(rng: &mut Rng) -> Fault {
        *rng.pick(&[
            Fault::Kill,
            Fault::Kill,
            Fault::Kill,
            Fault::Pause,
            Fault::Pause,
            Fault::CutSessions,
            Fault::CutSessions,
            Fault::CutSessions,
            Fault::RestartPostgres,
            Fault::StopPostgres,
        ])
    }
}

/// A member paused past its lease: which node ids it had, and when (database time) it stopped.
#[derive(Debug, Clone)]
pub struct Pause {
    pub member: String,
    pub nodes: Vec<String>,
    pub stopped_at: String,
}

/// The members and the server, and what was done to them.
pub struct Cluster {
    pub members: Vec<MemberProcess>,
    pub settings: MemberSettings,
    pub postgres: OwnPostgres,
    started: u32,
    pub injected: BTreeMap<Fault, u32>,
    pub pauses: Vec<Pause>,
    /// Sessions terminated by `CutSessions`.
    pub sessions_cut: u64,
    /// `Unreachable` errors seen (as they should be) while the server was down.
    pub unreachable_seen: u32,
    /// Faults whose expected behaviour did not happen.
    pub problems: Vec<String>,
}

impl Cluster {
    pub fn start(postgres: OwnPostgres, settings: MemberSettings, members: usize) -> Cluster {
        let mut cluster = Cluster {
            members: Vec::new(),
            settings,
            postgres,
            started: 0,
            injected: BTreeMap::new(),
            pauses: Vec::new(),
            sessions_cut: 0,
            unreachable_seen: 0,
            problems: Vec::new(),
        };
        for _ in 0..members {
            let member = cluster.new_member();
            cluster.members.push(member);
        }
        cluster
    }

    fn new_member(&mut self) -> MemberProcess {
        self.started += 1;
        MemberProcess::start(&format!("member-{}", self.started), &self.settings)
    }

    /// How many member processes were started in all.
    pub fn started(&self) -> u32 {
        self.started
    }

    /// Members that exited by themselves (none should): named, with their last lines.
    pub fn crashed(&mut self) -> Vec<String> {
        self.members
            .iter_mut()
            .filter_map(|m| {
                m.exited().map(|status| format!("{} exited ({status}):\n{}", m.name, m.tail()))
            })
            .collect()
    }

    /// Injects `fault`.
    pub fn inject(&mut self, fault: Fault, rng: &mut Rng) {
        *self.injected.entry(fault).or_default() += 1;
        let url = self.postgres.url().to_owned();
        let which = usize::try_from(rng.below(self.members.len() as u64)).unwrap_or(0);
        match fault {
            Fault::Kill => {
                self.members[which].kill();
                let replacement = self.new_member();
                self.members[which] = replacement;
            }
            Fault::Pause => {
                let stopped_at = rows(&url, "SELECT now()::text")
                    .ok()
                    .and_then(|r| r.first()?.first()?.clone())
                    .unwrap_or_else(|| "now()".to_owned());
                let member = &self.members[which];
                let nodes = member.nodes();
                member.pause();
                // Timing the fault itself: 1.5 × the lease, so others take its owners over.
                std::thread::sleep(self.settings.lease_ttl * 3 / 2);
                member.resume();
                self.pauses.push(Pause { member: member.name.clone(), nodes, stopped_at });
            }
            Fault::CutSessions => {
                let ports: Vec<String> =
                    self.members[which].local_ports().iter().map(u16::to_string).collect();
                if !ports.is_empty() {
                    let sql = format!(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                         WHERE client_port IN ({}) AND pid <> pg_backend_pid()",
                        ports.join(", ")
                    );
                    let cut = rows(&url, &sql)
                        .ok()
                        .and_then(|r| r.first()?.first()?.clone()?.parse::<u64>().ok())
                        .unwrap_or(0);
                    self.sessions_cut += cut;
                }
            }
            Fault::RestartPostgres => self.postgres.restart(rng.below(2) == 0),
            Fault::StopPostgres => {
                self.postgres.stop();
                // While it is down, a process joining gets a typed error naming the server.
                match Fleet::connect(&url, 1) {
                    Err(FleetError::Unreachable { url: shown, message }) => {
                        let expected = format!("127.0.0.1:{}/postgres", self.postgres.port());
                        if shown == expected && !message.is_empty() {
                            self.unreachable_seen += 1;
                        } else {
                            self.problems.push(format!(
                                "Unreachable names {shown} ({message}), expected {expected}"
                            ));
                        }
                    }
                    other => self.problems.push(format!(
                        "connecting to a stopped PostgreSQL gave {other:?}, expected Unreachable"
                    )),
                }
                std::thread::sleep(Duration::from_millis(rng.between(500, 1500)));
                self.postgres.start_again();
            }
        }
    }
}

/// The faults to inject: every kind once first (shuffled), then random ones.
pub fn plan(rng: &mut Rng) -> impl FnMut(usize) -> Fault + use<> {
    let mut first = Fault::ALL.to_vec();
    for i in (1..first.len()).rev() {
        let j = usize::try_from(rng.below(i as u64 + 1)).unwrap_or(0);
        first.swap(i, j);
    }
    let mut rng = rng.clone();
    move |n| first.get(n).copied().unwrap_or_else(|| Fault::random(&mut rng))
}
