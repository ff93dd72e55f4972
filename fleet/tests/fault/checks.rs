//! After a run: is money where it should be (devnet's ledger and history), is the fleet's log
//! complete and each deposit's lifecycle in it. Each check returns the contradictions it
//! found, as text naming the owner, deposit or event; the single-writer checks are `audit.rs`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use depositkit_core::deposit::model::deposit_id;
use depositkit_core::{TokenType, U256};
use depositkit_devnet::RunningDevnet;
use depositkit_devnet::store::HistoryEntry;
use depositkit_fleet::FleetEvent;

use super::commands::Commanded;
use super::workload::{Made, Owner};

fn amount(value: impl ToString) -> u128 {
    value.to_string().parse().unwrap_or(u128::MAX)
}

/// Every history entry devnet has.
pub fn history(devnet: &RunningDevnet) -> Vec<HistoryEntry> {
    let mut all = Vec::new();
    loop {
        let after = all.last().map_or(0, |e: &HistoryEntry| e.seq);
        let page = devnet.store().history_after(after, 1000).expect("devnet's history reads");
        if page.is_empty() {
            return all;
        }
        all.extend(page);
    }
}

/// What the money checks counted.
#[derive(Debug, Default)]
pub struct Money {
    pub deposits: usize,
    pub deposited: u128,
    pub swept_deposits: usize,
    pub delivered: u128,
    pub refunds: usize,
    pub failed_sends: usize,
    /// Each sent deposit's successful sends: devnet's tag (`sweep`, `refund`) and where to.
    pub sends: BTreeMap<String, Vec<(String, String)>>,
}

/// Money: every deposit made reached the account; each client deposit (a contiguous range of
/// the account's received total) was swept or refunded once; together they cover every
/// transfer received exactly once; the accounts hold nothing at the end; the destinations
/// hold what the sweeps delivered.
/// `attempts` maps the quote ids and transaction ids of the clients' recorded send attempts
/// (`dk_attempts`) to their deposit ids.
pub fn money(
    devnet: &RunningDevnet,
    owners: &[Owner],
    made: &[Made],
    attempts: &HashMap<String, String>,
) -> (Money, Vec<String>) {
    let mut found = Vec::new();
    let mut counted = Money { deposits: made.len(), ..Money::default() };
    let history = history(devnet);
    // Devnet's sends by transaction id: the quote each executed (the clients record quotes).
    let mut quote_of: HashMap<String, String> = HashMap::new();
    let mut after = 0;
    while let Ok(quotes) = devnet.store().quotes_after(after, 1000) {
        let Some(last) = quotes.last() else { break };
        after = last.seq;
        for quote in quotes {
            let body: serde_json::Value = serde_json::from_str(&quote.body).unwrap_or_default();
            if let Some(id) = body["quoteId"].as_str()
                && let Ok(Some(sweep)) = devnet.store().sweep(id)
            {
                quote_of.insert(sweep.transaction_id, id.to_owned());
            }
        }
    }
    let mut delivered_to: BTreeMap<String, u128> = BTreeMap::new();
    for Owner { owner, account_id, .. } in owners {
        let mine: Vec<&HistoryEntry> =
            history.iter().filter(|e| &e.account_id == account_id).collect();
        let receives: Vec<&HistoryEntry> =
            mine.iter().copied().filter(|e| e.record.tag == "receive").collect();
        let made_here: Vec<&Made> = made.iter().filter(|m| &m.owner == owner).collect();
        counted.deposited += made_here.iter().map(|m| m.raw).sum::<u128>();
        for m in &made_here {
            if !receives.iter().any(|r| r.record.id == m.tx_hash) {
                found.push(format!("deposit {} to {owner} never reached its account", m.tx_hash));
            }
        }
        // Each successful send per deposit id: one sweep or one refund, never more.
        let mut sent: BTreeMap<String, Vec<&HistoryEntry>> = BTreeMap::new();
        for entry in mine.iter().filter(|e| e.record.tag != "receive") {
            if entry.record.status != 1 {
                counted.failed_sends += 1;
                continue;
            }
            // Devnet's history names the quote (or the transaction) a send executed; the
            // client's attempts name the deposit it was for.
            let quote = quote_of.get(&entry.record.id).map(String::as_str);
            let id = [entry.record.quote_id.as_deref(), quote, Some(entry.record.id.as_str())]
                .into_iter()
                .flatten()
                .find_map(|key| attempts.get(key).cloned())
                .unwrap_or_else(|| format!("(no attempt records send {})", entry.record.id));
            sent.entry(id).or_default().push(entry);
        }
        for (id, entries) in &sent {
            if entries.len() > 1 {
                let tags: Vec<&str> = entries.iter().map(|e| e.record.tag.as_str()).collect();
                found.push(format!(
                    "deposit {id} of {owner} was sent {} times: {tags:?}",
                    entries.len()
                ));
            }
            let sends = counted.sends.entry(id.clone()).or_default();
            sends.extend(
                entries.iter().map(|e| (e.record.tag.clone(), e.record.to_address.to_lowercase())),
            );
            for entry in entries {
                if entry.record.tag == "refund" {
                    counted.refunds += 1;
                }
                let delivered = entry.delivered.map_or(0, amount);
                counted.delivered += delivered;
                *delivered_to.entry(entry.record.to_address.to_lowercase()).or_default() +=
                    delivered;
            }
        }
        counted.swept_deposits += sent.len();
        found.extend(coverage(owner, account_id, &receives, &sent));
        for line in devnet.store().ua_balances(account_id).expect("balances read") {
            if !line.raw_amount.is_zero() {
                found.push(format!(
                    "owner {owner}'s account still holds {} of {} on chain {}: not swept",
                    line.raw_amount,
                    line.token.symbol(),
                    line.chain_id
                ));
            }
        }
    }
    for (address, delivered) in delivered_to {
        let held = devnet.ledger_balance(&address, 8453, TokenType::USDC).map_or(0, amount);
        if held != delivered {
            found.push(format!(
                "destination {address} holds {held}, the sweeps delivered {delivered}"
            ));
        }
    }
    (counted, found)
}

/// The client's deposits of one account are contiguous ranges of its received total; each
/// successful send names one by its id. Every receive must fall in exactly one sent range.
fn coverage(
    owner: &str,
    account_id: &str,
    receives: &[&HistoryEntry],
    sent: &BTreeMap<String, Vec<&HistoryEntry>>,
) -> Vec<String> {
    let mut found = Vec::new();
    let mut ranges: Vec<(u128, u128)> = receives
        .iter()
        .filter_map(|r| r.record.received.map(|(before, after)| (amount(before), amount(after))))
        .collect();
    ranges.sort_unstable();
    // Every contiguous run of receives, by the id the client would give it.
    let mut ids: HashMap<String, (usize, usize)> = HashMap::new();
    for i in 0..ranges.len() {
        for j in i..ranges.len() {
            let (from, to) = (ranges[i].0, ranges[j].1);
            let id =
                deposit_id(account_id, 8453, TokenType::USDC, U256::from(from), U256::from(to));
            ids.insert(id, (i, j));
        }
    }
    let mut covered = vec![0u32; ranges.len()];
    for id in sent.keys() {
        match ids.get(id) {
            Some(&(i, j)) => covered[i..=j].iter_mut().for_each(|c| *c += 1),
            None => found.push(format!("deposit {id} of {owner} matches no run of its receives")),
        }
    }
    for (n, times) in covered.iter().enumerate() {
        if *times != 1 {
            found.push(format!(
                "owner {owner}'s receive of range {:?} was swept {times} times (lost when 0)",
                ranges[n]
            ));
        }
    }
    found
}

/// What the log checks counted.
#[derive(Debug, Default)]
pub struct LogCount {
    pub delivered: usize,
    pub distinct: usize,
    pub credited: usize,
    /// First deliveries of an owner's event after a higher id of the same owner: each one a
    /// failure of the run. The log delivers in `(tx, pos)` order, and one owner's events are
    /// in id order there: its client writes one change at a time (ids taken under the lock of
    /// its write, each write committed before the next one starts, so the next one's
    /// transaction id is higher), and a new holder's first write comes after the old holder's
    /// last commit (a takeover waits for a write in flight: `dk_check_fence` takes the owner's
    /// row `FOR SHARE`). An inversion means events delivered out of order or a cursor past an
    /// event not yet delivered (as the log's text ordering of transaction ids once did).
    pub inversions: Vec<String>,
}

/// The log: the consumer's events, de-duplicated by `(owner, id)`, are exactly `stored`
/// (every event once, none missing, none invented); every deposit devnet swept has a
/// `detected` then exactly one `credited` lifecycle event, every one it refunded a `detected`
/// and no `credited`, and every credited one was swept.
pub fn log(
    events: &[FleetEvent],
    stored: &BTreeSet<(String, u64)>,
    sends: &BTreeMap<String, Vec<(String, String)>>,
) -> (LogCount, Vec<String>) {
    let refunded = |id: &String| sends[id].iter().any(|(tag, _)| tag == "refund");
    let (refunds, swept): (BTreeSet<&String>, BTreeSet<&String>) =
        sends.keys().partition(|id| refunded(id));
    let mut found = Vec::new();
    let mut seen: BTreeSet<(String, u64)> = BTreeSet::new();
    // Per owner: the last id first delivered, where in the delivery and at which cursor.
    let mut last: HashMap<&str, (u64, usize, String)> = HashMap::new();
    let mut phases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut inversions = Vec::new();
    for (n, event) in events.iter().enumerate() {
        if !seen.insert((event.owner.clone(), event.id)) {
            continue;
        }
        let here = (event.id, n, event.cursor.to_string());
        let (previous, at, cursor) = last.insert(&event.owner, here).unwrap_or_default();
        if event.id <= previous {
            inversions.push(format!(
                "owner {}'s event {} came after its event {previous} (delivery #{n} at cursor \
                 {} after #{at} at cursor {cursor})",
                event.owner, event.id, event.cursor
            ));
        }
        if event.kind == "deposit:lifecycle"
            && let Some(deposit) = &event.deposit_id
        {
            let value: serde_json::Value = serde_json::from_str(&event.event).unwrap_or_default();
            let phase = value["payload"]["phase"].as_str().unwrap_or("?").to_owned();
            phases.entry(deposit.clone()).or_default().push(phase);
        }
    }
    for missing in stored.difference(&seen).take(20) {
        found.push(format!("event {missing:?} is stored but the consumer never got it"));
    }
    for extra in seen.difference(stored).take(20) {
        found.push(format!("event {extra:?} reached the consumer but is not stored"));
    }
    let mut count =
        LogCount { delivered: events.len(), distinct: seen.len(), credited: 0, inversions };
    for id in refunds {
        let got = phases.get(id).cloned().unwrap_or_default();
        if !got.iter().any(|p| p == "detected") || got.iter().any(|p| p == "credited") {
            found.push(format!("refunded deposit {id}'s lifecycle in the log is {got:?}"));
        }
    }
    for id in &swept {
        let got = phases.get(*id).cloned().unwrap_or_default();
        let credited = got.iter().filter(|p| *p == "credited").count();
        let detected = got.iter().position(|p| p == "detected");
        let first_credit = got.iter().position(|p| p == "credited");
        if credited != 1 || detected.is_none() || detected > first_credit {
            found.push(format!("deposit {id}'s lifecycle in the log is {got:?}"));
        }
    }
    for (id, got) in &phases {
        if got.iter().any(|p| p == "credited") {
            count.credited += 1;
            if !swept.contains(id) {
                found.push(format!(
                    "deposit {id} is credited in the log ({got:?}) but devnet never swept it"
                ));
            }
        }
    }
    (count, found)
}

/// The commands: every deposit the commander asked about was sent exactly once (swept XOR
/// refunded, however often it was asked and whoever ran it); when only one kind was asked
/// for, that kind (unless `recovered` owners had a recovery run for them); a sweep landed at
/// a destination the owner had when it was first asked, or a later one.
pub fn commands(commanded: &Commanded, money: &Money, recovered: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for (id, asked) in &commanded.deposits {
        let sends = money.sends.get(id).map(Vec::as_slice).unwrap_or_default();
        if sends.len() != 1 {
            found.push(format!(
                "deposit {id} of {} (asked {:?}, {} requests: {:?}) was sent {} times: {sends:?}",
                asked.owner,
                asked.kinds,
                asked.requests,
                asked.outcomes,
                sends.len()
            ));
            continue;
        }
        let (tag, to) = &sends[0];
        if asked.kinds.len() == 1 && asked.kinds[0] != tag && !recovered.contains(&asked.owner) {
            found.push(format!(
                "deposit {id} of {} was asked to {} ({:?}) but devnet shows a {tag}",
                asked.owner, asked.kinds[0], asked.outcomes
            ));
        }
        let destinations = commanded.destinations.get(&asked.owner).cloned().unwrap_or_default();
        let allowed: Vec<&str> =
            destinations.iter().skip(asked.allowed_from).map(|(a, _)| a.as_str()).collect();
        if tag != "refund" && !allowed.contains(&to.as_str()) {
            found.push(format!(
                "deposit {id} of {} was swept to {to}; its destination by then was one of \
                 {allowed:?} (all: {destinations:?})",
                asked.owner
            ));
        }
    }
    found
}
