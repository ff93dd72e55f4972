//! Callbacks on the fleet's one event log (`Fleet::subscribe`) on a real PostgreSQL: every
//! event in log order, woken by new ones, resumed from the subscription's cursor without a
//! skip or a repeat, stopped (and the callback released) when dropped, also from inside the
//! callback; a cursor of another cluster refused at once.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use depositkit_core::deposit::store_contract::OwnerStore;
use depositkit_fleet::{
    EventCursor, EventSubscription, Fleet, FleetError, FleetEvent, LeaseSettings, OwnerOptions,
    PgOwnerStore,
};
use depositkit_server::testing::TestDatabase;
use support::{balance, event, owner};

mod support;

/// How long an event may take to reach a callback (woken at its commit; a second at most when a
/// notification is lost).
const ARRIVAL: Duration = Duration::from_secs(10);

/// A fleet with one owner held by one member: the fleet and the owner's store.
fn one_owner(database: &TestDatabase) -> (Fleet, PgOwnerStore) {
    let fleet = Fleet::connect(database.url(), 4).unwrap();
    fleet.add_owner(&owner(3), OwnerOptions::default()).unwrap();
    let member = fleet.join("subscriber", LeaseSettings::default()).unwrap();
    let held = balance(&fleet, &member);
    let store = fleet.store(&member, &held[0]);
    (fleet, store)
}

/// A subscription whose callback sends each event's id and cursor.
fn subscribe(
    fleet: &Fleet,
    cursor: EventCursor,
) -> (EventSubscription, Receiver<(u64, EventCursor)>) {
    let (sender, received) = mpsc::channel();
    let subscription = fleet
        .subscribe(cursor, move |event: &FleetEvent| {
            let _ = sender.send((event.id, event.cursor.clone()));
        })
        .unwrap();
    (subscription, received)
}

/// The next `n` ids the callback got, failing after [`ARRIVAL`] each.
fn next_ids(received: &Receiver<(u64, EventCursor)>, n: usize) -> Vec<(u64, EventCursor)> {
    (0..n)
        .map(|k| match received.recv_timeout(ARRIVAL) {
            Ok(got) => got,
            Err(e) => panic!("event {k} of {n} did not come: {e}"),
        })
        .collect()
}

fn ids(got: &[(u64, EventCursor)]) -> Vec<u64> {
    got.iter().map(|(id, _)| *id).collect()
}

#[test]
fn a_callback_gets_the_log_in_order_and_resumes_from_its_cursor() {
    let database = TestDatabase::create();
    let (fleet, store) = one_owner(&database);
    store.write(&event(1)).unwrap();
    store.write(&event(2)).unwrap();

    let (subscription, received) = subscribe(&fleet, EventCursor::START);
    assert_eq!(ids(&next_ids(&received, 2)), vec![1, 2], "what the log held");
    store.write(&event(3)).unwrap();
    let third = next_ids(&received, 1);
    assert_eq!(ids(&third), vec![3], "an event written meanwhile");
    // The subscription's cursor passes an event once its callback returned.
    let deadline = Instant::now() + ARRIVAL;
    while subscription.cursor() != third[0].1 {
        assert!(Instant::now() < deadline, "the cursor stays at {}", subscription.cursor());
        std::thread::yield_now();
    }
    assert!(subscription.is_running());
    let saved = subscription.cursor();

    // Dropped: the callback is released (its channel closes) and gets nothing more.
    drop(subscription);
    assert_eq!(received.try_recv(), Err(TryRecvError::Disconnected));
    store.write(&event(4)).unwrap();
    store.write(&event(5)).unwrap();

    // Subscribed again from the saved cursor: what came after it, nothing before.
    let (resumed, received) = subscribe(&fleet, saved);
    assert_eq!(ids(&next_ids(&received, 2)), vec![4, 5]);
    assert_eq!(
        received.recv_timeout(Duration::from_millis(300)),
        Err(RecvTimeoutError::Timeout),
        "nothing repeated"
    );
    resumed.unsubscribe();
    assert_eq!(received.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn a_callback_may_drop_its_own_subscription() {
    let database = TestDatabase::create();
    let (fleet, store) = one_owner(&database);
    let own: Arc<Mutex<Option<EventSubscription>>> = Arc::default();
    let (sender, received) = mpsc::channel();
    let subscription = fleet
        .subscribe(EventCursor::START, {
            let own = Arc::clone(&own);
            move |event: &FleetEvent| {
                let _ = sender.send(event.id);
                if event.id == 2 {
                    // On the subscription's own thread: stops it without waiting for itself.
                    drop(own.lock().unwrap().take());
                }
            }
        })
        .unwrap();
    *own.lock().unwrap() = Some(subscription);
    // Written once the callback can reach its subscription.
    for id in 1..=3 {
        store.write(&event(id)).unwrap();
    }
    let got: Vec<u64> = received.iter().collect();
    assert_eq!(got, vec![1, 2], "no event after the callback dropped its subscription");
    assert!(own.lock().unwrap().is_none());
}

#[test]
fn a_cursor_of_another_cluster_is_refused_at_once() {
    let database = TestDatabase::create();
    let fleet = Fleet::connect(database.url(), 2).unwrap();
    let foreign: EventCursor = "v1.12345.10.1".parse().unwrap();
    match fleet.subscribe(foreign, |_: &FleetEvent| {}) {
        Err(FleetError::InvalidCursor(message)) => {
            assert!(message.contains("another PostgreSQL cluster"), "{message}");
        }
        other => panic!("expected InvalidCursor, got {other:?}"),
    }
}
