//! Callbacks on the fleet's one event log: each subscription is one of the fleet's
//! ([`EventSubscription::spawn`]), a thread of its own (`depositkit-fleet-events-<id>`) that reads the
//! log in commit order from its cursor and hands every event to its C callback, the same element
//! as `depositkit_fleet_events`.
//!
//! Delivery is at least once: a thread moves past an event only once its callback returned, and
//! a failed read is logged and tried again (after a second) from the same place. The
//! callback and its `user_data` are the one client's [`HostCallback`]: a closed one is never
//! called again, and `user_data` is released exactly once. Leaving and freeing stop every
//! thread ([`Feeds::stop`]) and wait for them, unless called from a callback.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ::depositkit_fleet::subscription::BATCH;
use ::depositkit_fleet::{EventCursor, EventReader, EventSubscription, FleetEvent};

use super::events::event_json;
use super::{depositkit_fleet, fleet_arg, fleet_error};
use crate::boundary::{self, FfiError, FfiResult};
use crate::deposit::{
    HostCallback, RawCallback, depositkit_event_callback, depositkit_user_data_free, in_callback,
};
use crate::status::depositkit_status;
use crate::strings;

/// One callback and the fleet's subscription delivering to it.
struct Subscription {
    host: Arc<HostCallback>,
    events: EventSubscription,
}

impl Subscription {
    /// Stops the deliveries and closes the callback (see [`HostCallback::close`]): no call
    /// starts after this returns. The thread ends by itself within a read; dropping the
    /// subscription returned waits for it, detaching it does not.
    fn close(self) -> EventSubscription {
        self.events.stop();
        self.host.close();
        self.events
    }
}

/// The subscriptions of a member; closed for good by [`Feeds::stop`].
#[derive(Default)]
struct Table {
    stopped: bool,
    subscriptions: HashMap<u64, Subscription>,
}

/// The callback threads of one member.
#[derive(Default)]
pub(super) struct Feeds {
    table: Mutex<Table>,
    next_id: AtomicU64,
    /// Callback calls that returned non-zero, over every subscription.
    pub(super) callback_errors: Arc<AtomicU64>,
}

impl Feeds {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts delivering the log to `host` on a thread of its own (the fleet's
    /// [`EventSubscription::spawn`]): `first`, what `reader` (made from `start`) read first, then
    /// what it reads next. Returns the subscription's id; `None` once the member left or was
    /// freed.
    fn start(
        &self,
        start: EventCursor,
        reader: EventReader,
        first: Vec<FleetEvent>,
        host: Arc<HostCallback>,
    ) -> FfiResult<Option<u64>> {
        let mut table = self.table();
        if table.stopped {
            return Ok(None);
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let delivering = Arc::clone(&host);
        let name = format!("depositkit-fleet-events-{id}");
        let events = EventSubscription::spawn(&name, start, reader, first, move |event| {
            delivering.call_json(|| serde_json::to_string(&event_json(event)).ok());
        })
        .map_err(|e| {
            FfiError::new(
                depositkit_status::Internal,
                format!("cannot start the callback's thread: {e}"),
            )
        })?;
        table.subscriptions.insert(id, Subscription { host, events });
        Ok(Some(id))
    }

    /// Stops subscription `id` (see [`Subscription::close`]); `false` when unknown.
    fn unsubscribe(&self, id: u64) -> bool {
        let found = self.table().subscriptions.remove(&id);
        found.map(|subscription| subscription.close().detach()).is_some()
    }

    /// Stops every subscription and, unless called from a callback (which may leave), waits
    /// for their threads to end. Later subscriptions are refused. A second call does nothing.
    pub(super) fn stop(&self) {
        let subscriptions: Vec<Subscription> = {
            let mut table = self.table();
            table.stopped = true;
            table.subscriptions.drain().map(|(_, subscription)| subscription).collect()
        };
        finish(subscriptions.into_iter().map(Subscription::close).collect());
    }
}

/// Lets closed subscriptions' threads end: waited for, unless called from a callback (whose
/// thread may be one of them, or wait for this one).
fn finish(closed: Vec<EventSubscription>) {
    if in_callback() {
        closed.into_iter().for_each(EventSubscription::detach);
    } else {
        drop(closed);
    }
}

/// Calls `callback` with `user_data` for every event of the fleet's one event log after
/// `cursor`, in commit order, on a thread of its own, until `depositkit_fleet_unsubscribe`,
/// `depositkit_fleet_leave` or `depositkit_fleet_free`.
///
/// `cursor` is NULL (the beginning of the log) or a cursor handed out by
/// `depositkit_fleet_events` or a callback (an event's `"cursor"`), as described there.
///
/// What the callback gets (see `depositkit_event_callback` for the signature and return value):
/// one event as a JSON object, the same as an element of `depositkit_fleet_events`' array:
/// `{"owner", "id", "at", "kind", "depositId", "event", "cursor"}`, where `"cursor"` is the
/// cursor just after the event: save it once the event is handled, and subscribe again from it
/// (after a restart, say) to go on without skipping anything. Delivery is at least once (an
/// event may come again after a resubscription from an older cursor): de-duplicate by
/// (`owner`, `id`). A non-zero return is counted (`depositkit_fleet_callback_errors`) and
/// otherwise ignored: the event is not delivered again and the subscription goes on.
///
/// Threads: each subscription has a thread of its own, named `depositkit-fleet-events-<id>`,
/// never the caller's and never a runtime worker; it calls its callback one event at a time, in
/// the log's order, never concurrently with itself (callbacks of two subscriptions may run at
/// the same time). It reads events in batches, waiting up to 0.5 s for new ones (woken as soon
/// as an event commits). When a read fails (the database is unreachable) the failure is logged
/// (target `depositkit_fleet::subscription`, level warn) and the read is tried again a
/// second later, from the same place: nothing is skipped.
///
/// Re-entry: a callback may call any depositkit function, including
/// `depositkit_fleet_unsubscribe` of itself or of another subscription and
/// `depositkit_fleet_leave`; none of them deadlocks. It must not call `depositkit_fleet_free`.
///
/// Ownership of `user_data` passes to the library with this call, whatever it returns:
/// `user_data_free` (if not NULL) is called with it exactly once: on failure before this
/// returns; on success when the subscription is dropped (by `depositkit_fleet_unsubscribe`,
/// `_leave` or `_free`), never while a call of `callback` is running and never while the
/// library holds a lock: by one of these called outside a callback, on that thread before it
/// returns; called from inside a callback, on the subscription's thread once that callback
/// returns.
///
/// On success `*out_subscription` is the subscription's id (never 0), for
/// `depositkit_fleet_unsubscribe`. On failure it is not written and nothing is subscribed.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` for a `cursor` that is not one or names another
///   cluster;
/// - `DEPOSITKIT_STATUS_NETWORK` when the database cannot be read (a first read is made here,
///   so that these errors come now rather than on the thread);
/// - `DEPOSITKIT_STATUS_DEPOSIT_SDK` after `depositkit_fleet_leave`;
/// - `DEPOSITKIT_STATUS_INTERNAL` when the thread cannot be started;
/// - `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `fleet`, `callback` or `out_subscription` is NULL;
///   `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks while the database answers the first read. Thread-safe (also from inside a callback).
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `cursor` must be NULL or
/// a NUL-terminated string; `out_subscription` must be NULL or point to a writable `uint64_t`.
/// `callback` must follow the rules of `depositkit_event_callback`; `user_data` (which may be
/// NULL) must stay valid for it until `user_data_free` is called (or, without
/// `user_data_free`, until the subscription is dropped) and may be used on the subscription's
/// thread; `user_data_free` must be safe to call on any thread and must not unwind or
/// `longjmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_subscribe(
    fleet: *const depositkit_fleet,
    cursor: *const c_char,
    callback: depositkit_event_callback,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    out_subscription: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // `user_data` is the library's from here: released on every early return (and unwind).
        let handed = HandedOver { user_data, user_data_free };
        let callback = callback.ok_or_else(|| FfiError::null_argument("callback"))?;
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let cursor = unsafe { strings::opt_str_arg(cursor, "cursor") }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_subscription, "out_subscription") }?;
        let cursor = match cursor {
            Some(text) => text.parse::<EventCursor>().map_err(fleet_error)?,
            None => EventCursor::START,
        };
        let host = handed.into_host(callback, Arc::clone(&fleet.feeds.callback_errors));
        let mut reader = fleet.joined()?.event_reader(cursor.clone());
        let first = reader.read(BATCH, Duration::ZERO).map_err(fleet_error)?;
        match fleet.feeds.start(cursor, reader, first, host)? {
            Some(id) => {
                out.write(id);
                Ok(())
            }
            None => Err(fleet.left()),
        }
    })
}

/// `user_data` handed over with `depositkit_fleet_subscribe`: released when dropped, unless
/// passed on to the subscription's [`HostCallback`] (which then owns it).
struct HandedOver {
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
}

impl HandedOver {
    /// The callback owning `user_data` (dropping the last reference releases it), whose
    /// non-zero returns count in `errors`.
    fn into_host(self, callback: RawCallback, errors: Arc<AtomicU64>) -> Arc<HostCallback> {
        let host = HostCallback::new(callback, self.user_data, self.user_data_free, errors);
        host.own();
        std::mem::forget(self);
        host
    }
}

impl Drop for HandedOver {
    fn drop(&mut self) {
        if let Some(free) = self.user_data_free {
            // SAFETY: the caller of `depositkit_fleet_subscribe` handed `user_data` over and
            // promised that `user_data_free` may be called once with it, on any thread: this is
            // that once (`into_host` forgets `self`, so it never runs after a hand-over).
            unsafe { free(self.user_data) };
        }
    }
}

/// Stops a subscription made by `depositkit_fleet_subscribe`.
///
/// On success `*out_removed` tells whether `subscription` was subscribed (false for an unknown
/// id, one already removed, or after `depositkit_fleet_leave`). When it was, its callback is
/// not called again: called outside a callback, this waits for a call of it that is running to
/// return, so once it returns no call is running and its `user_data_free` has been called (on
/// this thread). Called from inside a callback it never waits: a callback may unsubscribe itself
/// (it returns normally; its `user_data_free` runs on its thread after it returns) or another
/// subscription. Its thread ends by itself within half a second. The events the subscription
/// did not deliver stay in the log: subscribe again from the last cursor handled to get them.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `fleet` or
/// `out_removed` is NULL. Works after leaving too. Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `out_removed` must be
/// NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_unsubscribe(
    fleet: *const depositkit_fleet,
    subscription: u64,
    out_removed: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_removed, "out_removed") }?;
        out.write(fleet.feeds.unsubscribe(subscription));
        Ok(())
    })
}

/// Callback calls of this member's subscriptions (`depositkit_fleet_subscribe`) that returned
/// non-zero so far.
///
/// On success `*out_count` is written; on failure it is not. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works after leaving too.
/// Thread-safe.
///
/// # Safety
/// `fleet` must be NULL or a live handle from `depositkit_fleet_join`; `out_count` must be NULL
/// or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_fleet_callback_errors(
    fleet: *const depositkit_fleet,
    out_count: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let fleet = unsafe { fleet_arg(fleet) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_count, "out_count") }?;
        out.write(fleet.feeds.callback_errors.load(Ordering::Relaxed));
        Ok(())
    })
}
