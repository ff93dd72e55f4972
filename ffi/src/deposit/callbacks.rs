//! Event callbacks: the C function pointer types, how a subscription is held and released
//! (see the module `deposit`'s documentation), and the exports that subscribe and unsubscribe.

use std::cell::Cell;
use std::ffi::{CString, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use depositkit_core::deposit::{DepositClient, RecordedEvent};

use crate::boundary::{self, FfiError, FfiResult};
use crate::status::depositkit_status;

use super::{client_arg, depositkit_deposit_client};

/// A callback receiving the events of a deposit client, registered with
/// `depositkit_deposit_client_subscribe` (also the fleet's log's, registered with
/// `depositkit_fleet_subscribe`, which describes its threads and events).
///
/// Called with the `user_data` given at registration, and one event as JSON: `event_json` is
/// NUL-terminated UTF-8 of `event_json_len` bytes (without the NUL). It is borrowed: valid only
/// during the call; copy it to keep it. The shapes of the events are described at
/// `depositkit_deposit_client_subscribe`.
///
/// Threads: callbacks run on a thread owned by the library (one of the process's event-delivery
/// threads, named `depositkit-events`, shared by every client), never on the thread that called
/// into depositkit and never on one of its runtime's worker threads. One client calls its callbacks one at a time, in the order
/// of subscription, each event in the order it happened; a callback is never called
/// concurrently with itself or with another callback of the same client (callbacks of two
/// clients may run at the same time).
///
/// Re-entry: a callback may call any depositkit function, including the blocking ones
/// (`depositkit_deposit_client_poll_now`, `_sweep`, ...), `depositkit_deposit_client_unsubscribe`
/// of itself or of another subscription, and `depositkit_deposit_client_close`; none of them
/// deadlocks. While a callback runs, later events of its client wait, so a callback should
/// return promptly.
///
/// Return 0 when the event was handled. Any other value is counted
/// (`depositkit_deposit_client_callback_errors`) and otherwise ignored: it never stops the
/// client or the subscription.
///
/// A callback must not unwind (a C++ exception) or `longjmp` out of the call: that is undefined
/// behaviour.
#[allow(non_camel_case_types)]
pub type depositkit_event_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        event_json: *const c_char,
        event_json_len: usize,
    ) -> c_int,
>;

/// Releases the `user_data` of a subscription (see `depositkit_deposit_client_subscribe`).
#[allow(non_camel_case_types)]
pub type depositkit_user_data_free = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

thread_local! {
    /// How many C callbacks are running on this thread: non-zero only on a dispatcher thread
    /// during a call (a counter rather than a flag, so that leaving a scope never clears an
    /// outer one).
    static IN_CALLBACK: Cell<u32> = const { Cell::new(0) };
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether this thread is running a C callback now (a delivery thread, during a call).
pub(crate) fn in_callback() -> bool {
    IN_CALLBACK.with(Cell::get) > 0
}

/// Marks this thread as running a C callback while it lives.
struct CallbackScope;

impl CallbackScope {
    fn enter() -> CallbackScope {
        IN_CALLBACK.with(|n| n.set(n.get() + 1));
        CallbackScope
    }
}

impl Drop for CallbackScope {
    fn drop(&mut self) {
        IN_CALLBACK.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// The C signature shared by `depositkit_event_callback` and
/// `depositkit_notifications_callback`: `user_data`, then a borrowed JSON string and its length.
pub(crate) type RawCallback = unsafe extern "C" fn(*mut c_void, *const c_char, usize) -> c_int;

/// A C callback with its `user_data`, shared by the core's event hub and the handle. Dropping
/// the last reference (or `unsubscribe`, see the module's documentation) releases the
/// `user_data`, once: nothing else owns it. Only a registered subscription (`owned`) does: a
/// failed registration leaves `user_data` to the caller.
pub(crate) struct HostCallback {
    callback: RawCallback,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    /// Set when the registration succeeded: from then on the library owns `user_data`.
    owned: AtomicBool,
    /// Set when `user_data_free` was called (by `release`).
    released: AtomicBool,
    /// Set when unsubscribed or closed: later deliveries skip the callback.
    pub(super) closed: AtomicBool,
    /// Held while the callback runs.
    calling: Mutex<()>,
    errors: Arc<AtomicU64>,
}

// SAFETY: the caller of `depositkit_deposit_client_subscribe` promises that `user_data` may be
// used by the callback on the dispatcher thread and released by `user_data_free` on any thread;
// depositkit itself never dereferences it.
unsafe impl Send for HostCallback {}
// SAFETY: as above; one client calls its callbacks one at a time, and `call` holds `calling`.
unsafe impl Sync for HostCallback {}

impl HostCallback {
    /// `callback` with its `user_data`, not registered yet (dropping it leaves `user_data` to
    /// the caller until [`HostCallback::own`]); its non-zero returns are counted in `errors`.
    pub(crate) fn new(
        callback: RawCallback,
        user_data: *mut c_void,
        user_data_free: depositkit_user_data_free,
        errors: Arc<AtomicU64>,
    ) -> Arc<HostCallback> {
        Arc::new(HostCallback {
            callback,
            user_data,
            user_data_free,
            owned: AtomicBool::new(false),
            released: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            calling: Mutex::new(()),
            errors,
        })
    }

    /// From now on the library owns `user_data`: dropping the last reference releases it.
    pub(crate) fn own(&self) {
        self.owned.store(true, Ordering::Release);
    }

    /// Stops the callback: no call starts after this. Outside a callback it waits for a call
    /// under way (it holds the lock; later ones see `closed` and skip the callback) and
    /// releases `user_data` on this thread, outside every lock, even though a delivery may
    /// still hold a reference for a moment. Inside a callback it never waits: `user_data_free`
    /// runs when the last reference is dropped (here, or on the delivery thread once its
    /// delivery ends).
    pub(crate) fn close(self: Arc<Self>) {
        self.closed.store(true, Ordering::Release);
        if !in_callback() {
            drop(lock(&self.calling));
            self.release();
        }
    }

    /// Calls the callback with one event as JSON (with its `"id"` and `"at"`).
    fn call(&self, event: &RecordedEvent) {
        self.call_json(|| Some(super::events::event_json(event)));
    }

    /// Calls the callback with the JSON `json` makes (made only when the subscription is still
    /// open; `None` skips the call).
    pub(crate) fn call_json(&self, json: impl FnOnce() -> Option<String>) {
        let _calling = lock(&self.calling);
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        // JSON text escapes control characters, so it never holds a NUL byte.
        let Some(Ok(json)) = json().map(CString::new) else {
            return;
        };
        let len = json.as_bytes().len();
        let status = {
            let _scope = CallbackScope::enter();
            // SAFETY: the subscriber promised a callback that may be called with its
            // `user_data` on this thread, that reads `event_json` only during the call and never
            // unwinds; `json` lives until the call returns.
            unsafe { (self.callback)(self.user_data, json.as_ptr(), len) }
        };
        if status != 0 {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Releases `user_data` (calls `user_data_free`) unless it was released already or the
    /// subscription was never registered. Call it only once no call of the callback runs or
    /// will start: from `Drop`, or after `closed` was set and a running call was waited for.
    fn release(&self) {
        if !self.owned.load(Ordering::Acquire) {
            return; // never registered: `user_data` stays the caller's
        }
        if self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(free) = self.user_data_free {
            // SAFETY: the subscriber promised `user_data_free` may be called once with
            // `user_data`, on any thread, once the subscription is dropped: this is that once
            // (`released` was false), and no call of the callback runs or will start.
            unsafe { free(self.user_data) };
        }
    }
}

impl Drop for HostCallback {
    fn drop(&mut self) {
        self.release();
    }
}

/// Calls `callback` with `user_data` for every event of the client from now on (see
/// `depositkit_event_callback` for threads, re-entry and the return value).
///
/// Events are JSON objects with a `"type"` discriminator, a `"payload"`, the event's `"id"` in
/// the client's event log (1, 2, ... in the order of emission; with `storePath` they continue
/// across restarts: the cursor of `depositkit_deposit_client_events_since`) and `"at"` (when it
/// was emitted, unix milliseconds):
/// - `{"type": "deposit:lifecycle", "payload": {...}}`: a deposit entered a phase. The payload
///   is a DepositLifecycleEvent (spec section 2): `"id"` (`"dep_"` and 32 hex digits, derived
///   from the deposit itself: the same in every phase of one deposit and after a restart),
///   `"phase"` (`"detected"`, `"processing"` (a sweep attempt started; again at each retry),
///   `"credited"`, `"failed"` or `"below_threshold"`; on a chain of `chainRpcUrls` first
///   `"seen"`, `"confirming"`, `"confirmed"`, or `"reorged"`: docs/finality.md), `"token"`
///   (`"USDC"`...), `"chainId"`
///   (the source chain), `"amount"` (human-readable decimal string), `"amountUSD"` (number),
///   `"destination"` (`{"address", "chainId"}`, where it goes), `"transactionId"` and
///   `"explorerUrl"` (on `credited`; the explorer link only for chains that have one),
///   `"error"` (on `failed`, and on `below_threshold` saying which minimum it missed) and
///   `"timestamp"` (unix milliseconds); on a watched chain also `"confirmations"`,
///   `"requiredConfirmations"` and `"sourceTxHash"` when its chain reported the transfer.
///   Absent fields are left out, not null. What a credited
///   deposit delivered after fees is in `depositkit_deposit_client_sweep_result`;
/// - `{"type": "status:change", "payload": "watching"}`: the client's status changed (the
///   names of `depositkit_client_status_str`);
/// - `{"type": "error", "payload": {"kind": "UniversalAccountError", "code": 400, "message":
///   "..."}}`: something failed in the background (a poll of the watcher); `code` is the
///   `depositkit_status` value of the kind;
/// - `{"type": "refund:update", "payload": {...}}`: a refund changed status. The payload is a
///   RefundResult (described at `depositkit_deposit_client_refund`); one refund goes `"pending"`
///   -> `"processing"` (-> `"pending"` -> `"processing"` ... between automatic attempts) ->
///   `"success"`, `"failed"` or `"skipped"`;
/// - `{"type": "recovery:result", "payload": {...}}`: one asset of
///   `depositkit_deposit_client_recover_funds` is done; the payload is a RecoveryResult
///   (described there);
/// - `{"type": "onramp:<name>", "payload": {...}}` (`<name>` one of `widget_opened`,
///   `order_created`, `order_processing`, `order_completed`, `order_failed`, `widget_closed`):
///   the onramp widget posted a message (`depositkit_deposit_client_handle_onramp_message`);
///   the payload is the message's `data`;
/// - `{"type": "onramp:complete", "payload": {...}}`: an onramp order completed; the payload is
///   the OnrampOrder (described at `depositkit_deposit_client_handle_onramp_message`).
///
/// New types may be added: ignore the ones you do not know.
///
/// Lifecycle events are best-effort notifications, not a source of truth for crediting funds
/// (spec section 6). Notification records have their own callback
/// (`depositkit_deposit_client_subscribe_notifications`). Every event also goes to the pull
/// queue of `depositkit_deposit_client_next_event`, whether or not callbacks are subscribed.
///
/// On success `*out_subscription` is the subscription's id (never 0), for
/// `depositkit_deposit_client_unsubscribe`, and the library owns `user_data`: when the
/// subscription is dropped (by `depositkit_deposit_client_unsubscribe`, `_close` or `_free`)
/// `user_data_free` (if not NULL) is called with it exactly once, never while a call of
/// `callback` is running and never while the library holds a lock (so it may call depositkit
/// functions too): by `_unsubscribe` called outside a callback, on that thread before it
/// returns; otherwise on the thread that dropped the subscription or, when an event was being
/// delivered at that moment, on the dispatcher thread once that delivery ends. On failure
/// nothing is registered, `*out_subscription` is not written and `user_data_free` is not called
/// (`user_data` stays the caller's).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `callback`
/// or `out_subscription` is NULL; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed.
/// Does not block. Thread-safe (also from inside a callback).
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_subscription` must be NULL or point to a writable `uint64_t`. `callback` must follow
/// the rules of `depositkit_event_callback`; `user_data` (which may be NULL) must stay valid
/// for it until `user_data_free` is called (or, without `user_data_free`, until the
/// subscription is dropped) and may be used on the dispatcher thread; `user_data_free` must be
/// safe to call on any thread and must not unwind or `longjmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_subscribe(
    client: *const depositkit_deposit_client,
    callback: depositkit_event_callback,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    out_subscription: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        unsafe {
            register_callback(client, callback, user_data, user_data_free, out_subscription, {
                |inner, host| inner.subscribe_recorded(Box::new(move |event| host.call(event)))
            })
        }
    })
}

/// The body of an export that registers a C callback (`depositkit_deposit_client_subscribe`,
/// `depositkit_deposit_client_subscribe_notifications`): checks `client`, `callback` and
/// `out_subscription` in this order, wraps the callback in a [`HostCallback`], lets `subscribe`
/// hand it to the core (which refuses it when the client is closed), records it in the
/// handle's table and writes the id. When `subscribe` fails nothing is registered and `user_data` stays the
/// caller's (`user_data_free` is not called).
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_subscription` must be NULL or point to a writable `uint64_t`; `callback`, `user_data`
/// and `user_data_free` must follow the rules of `depositkit_deposit_client_subscribe`.
pub(crate) unsafe fn register_callback(
    client: *const depositkit_deposit_client,
    callback: Option<RawCallback>,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    out_subscription: *mut u64,
    subscribe: impl FnOnce(&DepositClient, Arc<HostCallback>) -> depositkit_core::Result<u64>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let client = unsafe { client_arg(client) }?;
    let callback = callback.ok_or_else(|| FfiError::null_argument("callback"))?;
    // SAFETY: the caller's contract above.
    let out = unsafe { boundary::out(out_subscription, "out_subscription") }?;
    let host =
        HostCallback::new(callback, user_data, user_data_free, Arc::clone(&client.callback_errors));
    // The table's lock is held until the id is recorded, so that an unsubscribe of this id
    // (from a callback already running it) finds it.
    let mut subscriptions = lock(&client.subscriptions);
    let id = match subscribe(&client.inner, Arc::clone(&host)) {
        Ok(id) => id,
        Err(err) => {
            drop(subscriptions);
            // Not `owned`: dropping it leaves `user_data` alone.
            drop(host);
            return Err(err.into());
        }
    };
    host.own();
    subscriptions.insert(id, host);
    drop(subscriptions);
    out.write(id);
    Ok(())
}

/// Removes a subscription made by `depositkit_deposit_client_subscribe` or
/// `depositkit_deposit_client_subscribe_notifications` (the two share one space of ids).
///
/// On success `*out_removed` tells whether `subscription` was subscribed (false for an unknown
/// id, one already removed, or after `_close`). When it was, its callback is not called again;
/// called outside a callback, this waits for a call of it that is running on the dispatcher to
/// return, so once it returns no call is running and its `user_data_free` has been called (on
/// this thread). Called from inside a callback (of any client) it never waits: a callback may
/// unsubscribe itself (it returns normally; its `user_data_free` runs after it returns) or
/// another subscription. Its `user_data_free` is called as described at
/// `depositkit_deposit_client_subscribe`.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` or
/// `out_removed` is NULL. Works on a closed client too. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_removed`
/// must be NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_unsubscribe(
    client: *const depositkit_deposit_client,
    subscription: u64,
    out_removed: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_removed, "out_removed") }?;
        let host = lock(&client.subscriptions).remove(&subscription);
        if let Some(host) = &host {
            host.closed.store(true, Ordering::Release);
        }
        let removed = client.inner.unsubscribe(subscription);
        if let Some(host) = host {
            host.close();
        }
        out.write(removed);
        Ok(())
    })
}

/// Callback calls that returned non-zero so far, over every subscription of the client (event
/// and notification callbacks).
///
/// On success `*out_count` is written; on failure it is not. Returns `DEPOSITKIT_STATUS_OK`, or
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Works on a closed client too.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_count`
/// must be NULL or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_callback_errors(
    client: *const depositkit_deposit_client,
    out_count: *mut u64,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_count, "out_count") }?;
        out.write(client.callback_errors.load(Ordering::Relaxed));
        Ok(())
    })
}
