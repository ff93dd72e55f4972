//! One chain watcher per (chain, endpoint) per process, shared by every client that follows an
//! address there: N clients cost one poll of the endpoint per interval, not N.
//!
//! [`subscribe`] adds a client's address to the shared watcher (starting it for the first
//! subscriber) and returns a [`Subscription`]; dropping it stops following the address, and
//! the last one stops the watcher (on a thread of its own: it may be in the middle of a
//! request). Signals are routed: a transfer to the subscribers of its address, a removal to
//! the subscribers the transfer went to, `Down`/`Up` to everyone. Heads go to the subscribers
//! that need them: those with a transfer of theirs not yet settled (below the `finalized` head
//! and [`INTEREST_DEPTH`] blocks deep) or asked to start from a block, every head; the others
//! their first head, the newest head just before a transfer of theirs, and one every
//! [`IDLE_HEAD_INTERVAL`] (at most [`IDLE_HEADS_PER_HEAD`] of them per head). A head to each of
//! 10,000 clients would be 10,000 task wake-ups per block for nothing but a client's view of
//! the chain: they queued in front of the transfer a client waits for (`docs/benchmarks.md`,
//! issue 18).
//!
//! A subscriber that asks to start from a block the watcher is already past (a restarted
//! client with confirming deposits) restarts the shared watcher from that block: the others
//! hear their transfers since then again, which the deposit engine takes as the same deposits
//! (it finds them by transaction and position).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::signal::ChainSignal;
use super::{ChainWatcher, WatchSettings};
use crate::chains::{AddressType, get_address_type};
use crate::error::Result;
use crate::validate::validate_address_for_chain;

/// Transfers remembered for routing their removal; past it, the lower half (by height) goes.
const MAX_REMEMBERED: usize = 65_536;

/// How far past a transfer's block a subscriber keeps getting every head (once the `finalized`
/// head, when the chain has one, passed it too): more than any default confirmation count
/// (`docs/finality.md`). A rule asking for more is judged at the idle rate past it.
pub const INTEREST_DEPTH: u64 = 64;

/// How often a subscriber without a transfer in flight gets a head (its view of the chain and
/// its chain health stay fresh).
pub const IDLE_HEAD_INTERVAL: Duration = Duration::from_secs(30);

/// The most idle subscribers one head goes to (the rest at the next heads): the wake-ups of a
/// refresh are spread out.
pub const IDLE_HEADS_PER_HEAD: usize = 500;

type Key = (u64, String);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process's shared watchers, by chain and endpoint.
fn registry() -> &'static Mutex<HashMap<Key, Weak<SharedWatcher>>> {
    static REGISTRY: std::sync::OnceLock<Mutex<HashMap<Key, Weak<SharedWatcher>>>> =
        std::sync::OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

/// `address` as the watcher reports it in [`TransferSeen::to`](super::signal::TransferSeen::to).
fn canonical(chain_id: u64, address: &str) -> Result<String> {
    validate_address_for_chain(address, chain_id)?;
    Ok(match get_address_type(chain_id) {
        AddressType::Evm => address.to_ascii_lowercase(),
        AddressType::Solana => address.to_owned(),
    })
}

/// One client's share: where its signals go, and the first block whose transfers are its.
struct Subscriber {
    id: u64,
    sender: UnboundedSender<ChainSignal>,
    /// Transfers below it were read before the client came (a restart of the watcher from a
    /// lower block reads them again): not told, as a watcher of its own would not have seen
    /// them. `None` until the first head after it came (the next block is its first).
    floor: Option<u64>,
    /// The highest block of a transfer routed to it (or the block it asked to start from):
    /// every head goes to it until that block is settled ([`settled`]).
    interest: Option<u64>,
    /// The `latest` of the newest head it got, and when.
    head_sent: Option<u64>,
    head_sent_at: Instant,
}

impl Subscriber {
    fn new(id: u64, sender: UnboundedSender<ChainSignal>, floor: Option<u64>) -> Self {
        Subscriber {
            id,
            sender,
            floor,
            interest: floor,
            head_sent: None,
            head_sent_at: Instant::now(),
        }
    }

    fn send(&mut self, signal: &ChainSignal) {
        if let ChainSignal::Head { latest, .. } = signal {
            self.head_sent = Some(*latest);
            self.head_sent_at = Instant::now();
        }
        let _ = self.sender.send(signal.clone());
    }
}

/// Whether a transfer in block `height` no longer needs every head: `finalized` (when the
/// chain has one) passed it and `latest` is [`INTEREST_DEPTH`] blocks past it.
fn settled(height: u64, latest: u64, finalized: Option<u64>) -> bool {
    finalized.is_none_or(|f| f >= height) && latest >= height.saturating_add(INTEREST_DEPTH)
}

/// Who gets which signal of one shared watcher.
#[derive(Default)]
struct Router {
    next_id: u64,
    /// Subscribers by canonical address (two clients may follow one address).
    by_address: HashMap<String, Vec<Subscriber>>,
    /// The address and height of each transfer reported (transaction, position).
    transfers: HashMap<(String, u32), (String, u64)>,
    /// The newest heads and, while the endpoint is down, the `Down`: what a new subscriber
    /// hears first (heads are reported only when they move).
    head: Option<ChainSignal>,
    down: Option<ChainSignal>,
}

impl Router {
    fn route(&mut self, signal: ChainSignal) {
        let to = match &signal {
            ChainSignal::Included(transfer) => {
                let key = (transfer.tx.clone(), transfer.index);
                self.transfers.insert(key, (transfer.to.clone(), transfer.inclusion.height));
                self.forget_oldest();
                Some((transfer.to.clone(), transfer.inclusion.height))
            }
            // A removal of a transfer not remembered goes to everyone: the engine ignores
            // transactions it does not know.
            ChainSignal::Removed { tx, index, .. } => self.transfers.remove(&(tx.clone(), *index)),
            ChainSignal::Head { latest, finalized, .. } => {
                if let Some(finalized) = finalized {
                    // A final block no longer leaves the chain.
                    self.transfers.retain(|_, (_, height)| *height >= *finalized);
                }
                self.head = Some(signal.clone());
                self.route_head(&signal, *latest, *finalized);
                return;
            }
            ChainSignal::Down { .. } => {
                self.down = Some(signal.clone());
                None
            }
            ChainSignal::Up { .. } => {
                self.down = None;
                None
            }
        };
        let head = self.head.clone();
        match to {
            Some((to, height)) => {
                let included = matches!(signal, ChainSignal::Included(_));
                for subscriber in self.by_address.get_mut(&to).into_iter().flatten() {
                    if included && subscriber.floor.is_none_or(|floor| height < floor) {
                        continue;
                    }
                    // Its view of the chain first: the transfer's count is judged against it.
                    if let Some(head @ ChainSignal::Head { latest, .. }) = &head
                        && subscriber.head_sent != Some(*latest)
                    {
                        subscriber.send(head);
                    }
                    if included {
                        subscriber.interest = subscriber.interest.max(Some(height));
                    }
                    subscriber.send(&signal);
                }
            }
            None => {
                for subscriber in self.by_address.values_mut().flatten() {
                    subscriber.send(&signal);
                }
            }
        }
    }

    /// A head to the subscribers that need it (the module's doc).
    fn route_head(&mut self, head: &ChainSignal, latest: u64, finalized: Option<u64>) {
        let now = Instant::now();
        let mut idle_budget = IDLE_HEADS_PER_HEAD;
        for subscriber in self.by_address.values_mut().flatten() {
            subscriber.floor.get_or_insert(latest.saturating_add(1));
            let wanted = match subscriber.interest {
                Some(height) => {
                    if settled(height, latest, finalized) {
                        subscriber.interest = None;
                    }
                    true
                }
                // Its first head: the chain is being read (the client's `health()` says so).
                None if subscriber.head_sent.is_none() => true,
                None => {
                    let due = now.duration_since(subscriber.head_sent_at) >= IDLE_HEAD_INTERVAL;
                    let wanted = due && idle_budget > 0;
                    idle_budget -= usize::from(wanted);
                    wanted
                }
            };
            if wanted {
                subscriber.send(head);
            }
        }
    }

    fn forget_oldest(&mut self) {
        if self.transfers.len() <= MAX_REMEMBERED {
            return;
        }
        let mut heights: Vec<u64> = self.transfers.values().map(|(_, h)| *h).collect();
        let middle = heights.len() / 2;
        let (_, cut, _) = heights.select_nth_unstable(middle);
        let cut = *cut;
        self.transfers.retain(|_, (_, height)| *height > cut);
    }
}

/// The watcher of one (chain, endpoint) and its subscribers.
struct SharedWatcher {
    key: Key,
    router: Arc<Mutex<Router>>,
    /// The running watcher.
    running: Mutex<Option<ChainWatcher>>,
}

impl SharedWatcher {
    /// Starts (or restarts) the watcher from `from_height`, following every subscribed address.
    fn start(&self, running: &mut Option<ChainWatcher>, from_height: Option<u64>) -> Result<()> {
        let router = Arc::downgrade(&self.router);
        let settings = WatchSettings { from_height, ..WatchSettings::default() };
        let watcher = ChainWatcher::start(self.key.0, &self.key.1, settings, move |signal| {
            if let Some(router) = router.upgrade() {
                lock(&router).route(signal);
            }
        })?;
        let addresses: Vec<String> = lock(&self.router).by_address.keys().cloned().collect();
        watcher.watch(addresses.iter().map(String::as_str))?;
        stop_elsewhere(running.replace(watcher));
        Ok(())
    }
}

impl Drop for SharedWatcher {
    fn drop(&mut self) {
        let mut registry = lock(registry());
        if registry.get(&self.key).is_some_and(|w| w.strong_count() == 0) {
            registry.remove(&self.key);
        }
        drop(registry);
        stop_elsewhere(lock(&self.running).take());
    }
}

/// Stops a watcher on a thread of its own (it may be waiting for its endpoint).
fn stop_elsewhere(watcher: Option<ChainWatcher>) {
    if let Some(watcher) = watcher {
        let _ = std::thread::Builder::new()
            .name("depositkit-watch-stop".into())
            .spawn(move || drop(watcher));
    }
}

/// A client's share of a shared watcher: its address followed, its signals sent to it. Dropping
/// it stops following the address (and the watcher, when it was the last).
pub struct Subscription {
    shared: Arc<SharedWatcher>,
    address: String,
    id: u64,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("chain_id", &self.shared.key.0)
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let last_of_address = {
            let mut router = lock(&self.shared.router);
            let Some(senders) = router.by_address.get_mut(&self.address) else { return };
            senders.retain(|s| s.id != self.id);
            let last = senders.is_empty();
            if last {
                router.by_address.remove(&self.address);
            }
            last
        };
        if last_of_address && let Some(watcher) = &*lock(&self.shared.running) {
            watcher.unwatch([self.address.as_str()]);
        }
    }
}

/// Follows `address` on chain `chain_id` through the process's watcher of endpoint `url`
/// (started now if there is none), sending its transfers, their removals, and every head and
/// `Down`/`Up` of the chain to `sender`. `from_height`: the first block the subscriber needs
/// read (`None`: from now on); when the watcher is already past it, it starts again from it.
///
/// # Errors
/// As [`ChainWatcher::start`] and [`ChainWatcher::watch`]: an unknown chain, a URL that is not
/// `http(s)://`, an address that is not one of the chain.
pub fn subscribe(
    chain_id: u64,
    url: &str,
    address: &str,
    from_height: Option<u64>,
    sender: UnboundedSender<ChainSignal>,
) -> Result<Subscription> {
    let address = canonical(chain_id, address)?;
    let key = (chain_id, url.to_owned());
    let shared = {
        let mut registry = lock(registry());
        match registry.get(&key).and_then(Weak::upgrade) {
            Some(shared) => shared,
            None => {
                let shared = Arc::new(SharedWatcher {
                    key: key.clone(),
                    router: Arc::default(),
                    running: Mutex::new(None),
                });
                registry.insert(key, Arc::downgrade(&shared));
                shared
            }
        }
    };
    let id = {
        let mut router = lock(&shared.router);
        router.next_id += 1;
        let id = router.next_id;
        let floor = match (from_height, &router.head) {
            (Some(height), _) => Some(height),
            (None, Some(ChainSignal::Head { latest, .. })) => Some(latest.saturating_add(1)),
            (None, _) => None,
        };
        let mut subscriber = Subscriber::new(id, sender, from_height);
        subscriber.floor = floor;
        for known in router.head.clone().iter().chain(&router.down.clone()) {
            subscriber.send(known);
        }
        router.by_address.entry(address.clone()).or_default().push(subscriber);
        id
    };
    // From here on, dropping the subscription undoes the above.
    let subscription = Subscription { shared, address, id };
    let mut running = lock(&subscription.shared.running);
    match (&*running, from_height) {
        (None, _) => subscription.shared.start(&mut running, from_height)?,
        // The running watcher read the blocks since `height` without this address (or never
        // read them): start it again from there, for everyone.
        (Some(_), Some(height)) => subscription.shared.start(&mut running, Some(height))?,
        (Some(watcher), None) => {
            watcher.watch([subscription.address.as_str()])?;
        }
    }
    drop(running);
    Ok(subscription)
}

/// How many subscriptions the process's watcher of `chain_id` at `url` has (0: none runs).
pub fn subscribers(chain_id: u64, url: &str) -> usize {
    let shared = lock(registry()).get(&(chain_id, url.to_owned())).and_then(Weak::upgrade);
    shared.map_or(0, |shared| lock(&shared.router).by_address.values().map(Vec::len).sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::watch::signal::{Inclusion, TransferSeen};
    use tokio::sync::mpsc;

    fn included(to: &str, tx: &str, height: u64) -> ChainSignal {
        ChainSignal::Included(TransferSeen {
            chain_id: 8453,
            to: to.to_owned(),
            token: None,
            contract: None,
            raw_amount: crate::units::U256::from(1u64),
            tx: tx.to_owned(),
            index: 0,
            inclusion: Inclusion { height, hash: format!("0x{height:x}") },
        })
    }

    type Inbox = mpsc::UnboundedReceiver<ChainSignal>;

    /// A router with one subscriber at 0xa and one at 0xb, their floors given.
    fn two(floors: [Option<u64>; 2]) -> (Router, Inbox, Inbox) {
        let mut router = Router::default();
        let mut inboxes = Vec::new();
        for (id, (address, floor)) in ["0xa", "0xb"].into_iter().zip(floors).enumerate() {
            let (sender, inbox) = mpsc::unbounded_channel();
            let subscriber = Subscriber::new(id as u64, sender, floor);
            router.by_address.insert(address.into(), vec![subscriber]);
            inboxes.push(inbox);
        }
        let b = inboxes.pop().unwrap();
        (router, inboxes.pop().unwrap(), b)
    }

    #[test]
    fn transfers_read_before_a_client_came_are_not_its() {
        let (mut router, mut late, mut new) = two([Some(12), None]);
        router.route(included("0xa", "0x1", 11));
        let head = ChainSignal::Head { chain_id: 8453, latest: 12, safe: None, finalized: None };
        router.route(head.clone());
        router.route(included("0xb", "0x2", 12));
        router.route(included("0xa", "0x3", 13));
        router.route(included("0xb", "0x4", 13));
        assert_eq!(late.try_recv().unwrap(), head, "block 11 was read before it came");
        assert_eq!(late.try_recv().unwrap(), included("0xa", "0x3", 13));
        assert_eq!(new.try_recv().unwrap(), head);
        assert_eq!(new.try_recv().unwrap(), included("0xb", "0x4", 13), "its first block: 13");
        assert!(late.try_recv().is_err() && new.try_recv().is_err());
    }

    #[test]
    fn transfers_and_their_removals_reach_only_their_address() {
        let (mut router, mut a, mut b) = two([Some(10), Some(10)]);
        router.route(included("0xa", "0x1", 10));
        let removed = ChainSignal::Removed { chain_id: 8453, tx: "0x1".into(), index: 0 };
        router.route(removed.clone());
        let head = ChainSignal::Head { chain_id: 8453, latest: 11, safe: None, finalized: None };
        router.route(head.clone());
        assert_eq!(a.try_recv().unwrap(), included("0xa", "0x1", 10));
        assert_eq!(a.try_recv().unwrap(), removed);
        assert_eq!(a.try_recv().unwrap(), head);
        assert_eq!(b.try_recv().unwrap(), head, "b hears only the head");
        assert!(b.try_recv().is_err());
    }

    fn head(latest: u64, finalized: Option<u64>) -> ChainSignal {
        ChainSignal::Head { chain_id: 8453, latest, safe: None, finalized }
    }

    #[test]
    fn idle_subscribers_get_heads_only_with_their_transfers_until_settled() {
        let (mut router, mut busy, mut idle) = two([Some(10), None]);
        router.route(head(9, Some(4)));
        assert_eq!(busy.try_recv().unwrap(), head(9, Some(4)), "it asked for block 10 on");
        assert_eq!(idle.try_recv().unwrap(), head(9, Some(4)), "its first head");
        router.route(head(10, Some(5)));
        assert_eq!(busy.try_recv().unwrap(), head(10, Some(5)));
        assert!(idle.try_recv().is_err(), "nothing of its own in flight");
        router.route(included("0xb", "0x2", 11));
        router.route(head(11, Some(6)));
        assert_eq!(idle.try_recv().unwrap(), head(10, Some(5)), "the newest head first");
        assert_eq!(idle.try_recv().unwrap(), included("0xb", "0x2", 11));
        assert_eq!(idle.try_recv().unwrap(), head(11, Some(6)), "its transfer is in flight");
        // Settled: finalized past block 11 and INTEREST_DEPTH blocks on; that head is the last.
        let deep = 11 + INTEREST_DEPTH;
        router.route(head(deep, Some(11)));
        router.route(head(deep + 1, Some(12)));
        assert_eq!(idle.try_recv().unwrap(), head(deep, Some(11)));
        assert!(idle.try_recv().is_err(), "settled: idle again");
        while busy.try_recv().is_ok() {}
        // An idle subscriber's refresh comes after IDLE_HEAD_INTERVAL.
        for subscriber in router.by_address.values_mut().flatten() {
            subscriber.head_sent_at = Instant::now() - IDLE_HEAD_INTERVAL;
        }
        router.route(head(deep + 2, Some(13)));
        assert_eq!(idle.try_recv().unwrap(), head(deep + 2, Some(13)));
        assert_eq!(busy.try_recv().unwrap(), head(deep + 2, Some(13)));
    }

    #[test]
    fn final_transfers_are_forgotten() {
        let mut router = Router::default();
        router.route(included("0xa", "0x1", 10));
        router.route(included("0xa", "0x2", 20));
        router.route(ChainSignal::Head {
            chain_id: 8453,
            latest: 25,
            safe: None,
            finalized: Some(15),
        });
        assert_eq!(router.transfers.len(), 1);
    }

    #[test]
    fn bad_addresses_are_refused() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let err = subscribe(8453, "http://127.0.0.1:1", "nope", None, tx).unwrap_err();
        assert!(err.message().contains("nope"), "{err}");
    }
}
