//! The process-wide pool of event-delivery threads, shared by every client.
//!
//! A client's event hub is a [`Lane`]: a FIFO of delivery jobs. A lane's jobs run in order, one
//! at a time, so the callbacks of one client never run concurrently and see its events in order;
//! different lanes run on different threads at the same time. The pool starts on first use with
//! [`SLOTS`] worker threads (named `depositkit-events`) and one watchdog thread; each lane is
//! homed on one slot (round robin), so one client's callbacks run on one thread — what hosts
//! that keep per-thread state (Python's thread states) expect.
//!
//! A callback that never returns holds its slot's thread. So that it does not stop the other
//! clients of that slot for ever, the watchdog (every [`WATCH_PERIOD`]) gives a slot a new
//! thread when its current job has run for [`STALL_AFTER`] while other lanes wait; the stuck
//! thread is retired and exits once its callback returns (its own lane's later jobs then run on
//! the new thread, in order). At most [`MAX_THREADS`] delivery threads exist: when that many are
//! stuck, the lanes of the stuck slots wait until a callback returns. Waiting for a lane from a
//! delivery thread ([`Lane::wait_idle`], a callback closing another client) hands the waiting
//! thread's slot to a new thread at once when the awaited lane is homed on that slot, since it
//! could not run otherwise.
//!
//! In a forked child the parent's threads do not exist: lanes made there get a new pool.

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// Slots of the pool: the delivery threads when no callback is stuck.
pub const SLOTS: usize = 2;
/// Most delivery threads at once (the slots' threads plus retired, stuck ones).
pub const MAX_THREADS: usize = 16;
/// How long a job may run, while other lanes of its slot wait, before the slot gets a new
/// thread.
pub const STALL_AFTER: Duration = Duration::from_millis(500);
/// How often the watchdog looks for stuck slots.
pub const WATCH_PERIOD: Duration = Duration::from_millis(250);
/// The name of the delivery threads (callbacks see it).
pub const THREAD_NAME: &str = "depositkit-events";
/// Jobs of one lane run in a row before the other lanes of the slot get their turn.
const LANE_BUDGET: usize = 32;

/// One delivery: runs on a pool thread.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// The slot and generation of the delivery thread this is, if it is one.
    static WORKER: Cell<Option<(usize, u64)>> = const { Cell::new(None) };
}

/// The pool of this process (replaced in a forked child).
static POOL: Mutex<Option<Arc<Pool>>> = Mutex::new(None);

struct Pool {
    pid: u32,
    slots: Vec<Slot>,
    next_slot: AtomicUsize,
    /// Delivery threads alive (not counting the watchdog).
    threads: AtomicUsize,
}

struct Slot {
    state: Mutex<SlotState>,
    work: Condvar,
}

struct SlotState {
    /// Lanes with jobs, waiting for this slot's thread.
    ready: VecDeque<Arc<Lane>>,
    /// The generation of the slot's current thread; older threads are retired.
    generation: u64,
    /// When the current thread's job started (`None` while it waits for work).
    job_started: Option<Instant>,
}

impl Pool {
    /// The pool of this process, started on first use.
    fn shared() -> std::io::Result<Arc<Pool>> {
        let mut shared = lock(&POOL);
        let pid = std::process::id();
        if let Some(pool) = shared.as_ref()
            && pool.pid == pid
        {
            return Ok(Arc::clone(pool));
        }
        let pool = Arc::new(Pool {
            pid,
            slots: (0..SLOTS)
                .map(|_| Slot {
                    state: Mutex::new(SlotState {
                        ready: VecDeque::new(),
                        generation: 0,
                        job_started: None,
                    }),
                    work: Condvar::new(),
                })
                .collect(),
            next_slot: AtomicUsize::new(0),
            threads: AtomicUsize::new(0),
        });
        for slot in 0..SLOTS {
            Pool::spawn_worker(&pool, slot, 0)?;
        }
        let watched = Arc::downgrade(&pool);
        std::thread::Builder::new()
            .name("depositkit-evwatch".into())
            .spawn(move || watchdog(watched))?;
        *shared = Some(Arc::clone(&pool));
        Ok(pool)
    }

    fn spawn_worker(pool: &Arc<Pool>, slot: usize, generation: u64) -> std::io::Result<()> {
        let worker = Arc::clone(pool);
        pool.threads.fetch_add(1, Ordering::AcqRel);
        let spawned = std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || worker.work(slot, generation));
        if spawned.is_err() {
            pool.threads.fetch_sub(1, Ordering::AcqRel);
        }
        spawned.map(drop)
    }

    /// Gives `slot` a new thread (the current one retires when its job returns); `false` when
    /// [`MAX_THREADS`] are alive or the thread cannot be started.
    fn replace_thread(self: &Arc<Pool>, slot: usize, state: &mut SlotState) -> bool {
        if self.threads.load(Ordering::Acquire) >= MAX_THREADS {
            return false;
        }
        let generation = state.generation + 1;
        if Pool::spawn_worker(self, slot, generation).is_err() {
            return false;
        }
        state.generation = generation;
        state.job_started = None;
        true
    }

    /// A delivery thread: runs the lanes of its slot until it is retired.
    fn work(self: Arc<Pool>, slot: usize, generation: u64) {
        WORKER.with(|w| w.set(Some((slot, generation))));
        loop {
            let lane = {
                let mut state = lock(&self.slots[slot].state);
                loop {
                    if state.generation != generation {
                        self.threads.fetch_sub(1, Ordering::AcqRel);
                        return;
                    }
                    if let Some(lane) = state.ready.pop_front() {
                        break lane;
                    }
                    state = self.slots[slot].work.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            };
            lane.run(&self, generation);
        }
    }

    /// Queues `lane` on its slot.
    fn schedule(&self, lane: &Arc<Lane>) {
        let slot = &self.slots[lane.slot];
        lock(&slot.state).ready.push_back(Arc::clone(lane));
        slot.work.notify_all();
    }

    /// Records that the thread of `generation` started (`Some`) or finished a job.
    fn job_started(&self, slot: usize, generation: u64, at: Option<Instant>) {
        let mut state = lock(&self.slots[slot].state);
        if state.generation == generation {
            state.job_started = at;
        }
    }

    fn retired(&self, slot: usize, generation: u64) -> bool {
        lock(&self.slots[slot].state).generation != generation
    }
}

/// Every [`WATCH_PERIOD`]: a slot whose job has run for [`STALL_AFTER`] while lanes wait gets a
/// new thread. Ends with the pool (never, in practice: the pool is process-wide).
fn watchdog(pool: std::sync::Weak<Pool>) {
    loop {
        std::thread::sleep(WATCH_PERIOD);
        let Some(pool) = pool.upgrade() else { return };
        for slot in 0..SLOTS {
            let mut state = lock(&pool.slots[slot].state);
            let stuck = state.job_started.is_some_and(|at| at.elapsed() >= STALL_AFTER);
            if stuck && !state.ready.is_empty() {
                pool.replace_thread(slot, &mut state);
            }
        }
    }
}

/// The threads of the pool (for tests and benchmarks): delivery threads alive.
pub fn delivery_threads() -> usize {
    lock(&POOL).as_ref().map_or(0, |pool| pool.threads.load(Ordering::Acquire))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No job waits.
    Idle,
    /// In its slot's queue.
    Queued,
    /// A thread runs its jobs.
    Running(ThreadId),
}

struct LaneState {
    jobs: VecDeque<Job>,
    phase: Phase,
    closed: bool,
}

/// One client's FIFO of deliveries in the shared pool.
pub(crate) struct Lane {
    pool: Arc<Pool>,
    slot: usize,
    state: Mutex<LaneState>,
    /// Notified when the lane becomes idle.
    idle: Condvar,
}

impl Lane {
    /// A new lane, homed on the next slot; starts the pool on first use.
    ///
    /// # Errors
    /// The operating system refused to start the pool's threads.
    pub fn new() -> std::io::Result<Arc<Lane>> {
        let pool = Pool::shared()?;
        let slot = pool.next_slot.fetch_add(1, Ordering::Relaxed) % SLOTS;
        Ok(Arc::new(Lane {
            pool,
            slot,
            state: Mutex::new(LaneState {
                jobs: VecDeque::new(),
                phase: Phase::Idle,
                closed: false,
            }),
            idle: Condvar::new(),
        }))
    }

    /// Queues `job` after the lane's other jobs; `false` (and `job` dropped) once closed.
    pub fn push(self: &Arc<Self>, job: Job) -> bool {
        let mut state = lock(&self.state);
        if state.closed {
            return false;
        }
        state.jobs.push_back(job);
        let schedule = state.phase == Phase::Idle;
        if schedule {
            state.phase = Phase::Queued;
        }
        drop(state);
        if schedule {
            self.pool.schedule(self);
        }
        true
    }

    /// Refuses later jobs; those queued still run.
    pub fn close(&self) {
        lock(&self.state).closed = true;
    }

    /// Whether the current thread is running one of this lane's jobs.
    pub fn runs_on_current_thread(&self) -> bool {
        lock(&self.state).phase == Phase::Running(std::thread::current().id())
    }

    /// Waits at most `timeout` until every queued job has run; whether they all did. On a
    /// delivery thread of this lane's slot, that thread's slot first gets a new thread, so the
    /// lane can run meanwhile.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now().checked_add(timeout);
        if lock(&self.state).phase == Phase::Idle {
            return true;
        }
        if let Some((slot, generation)) = WORKER.with(Cell::get)
            && slot == self.slot
        {
            let mut state = lock(&self.pool.slots[slot].state);
            if state.generation == generation {
                self.pool.replace_thread(slot, &mut state);
            }
        }
        let mut state = lock(&self.state);
        while state.phase != Phase::Idle {
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return false;
            }
            state = self.idle.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        true
    }

    /// Runs up to [`LANE_BUDGET`] jobs on the calling delivery thread, then requeues the lane
    /// if jobs are left (also when the thread was retired meanwhile, so the slot's new thread
    /// goes on in order).
    fn run(self: &Arc<Self>, pool: &Pool, generation: u64) {
        let mut state = lock(&self.state);
        if state.phase != Phase::Queued {
            return;
        }
        state.phase = Phase::Running(std::thread::current().id());
        for _ in 0..LANE_BUDGET {
            let Some(job) = state.jobs.pop_front() else { break };
            drop(state);
            pool.job_started(self.slot, generation, Some(Instant::now()));
            // Callbacks are caught one by one by the hub; this only keeps the thread alive.
            let _ = catch_unwind(AssertUnwindSafe(job));
            pool.job_started(self.slot, generation, None);
            state = lock(&self.state);
            if pool.retired(self.slot, generation) {
                break;
            }
        }
        if state.jobs.is_empty() {
            state.phase = Phase::Idle;
            drop(state);
            self.idle.notify_all();
        } else {
            state.phase = Phase::Queued;
            drop(state);
            pool.schedule(self);
        }
    }

    /// The slot the lane is homed on.
    #[cfg(test)]
    fn slot(&self) -> usize {
        self.slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc;

    #[test]
    fn a_lane_runs_its_jobs_in_order_one_at_a_time() {
        let lanes: Vec<Arc<Lane>> = (0..4).map(|_| Lane::new().unwrap()).collect();
        let seen: Vec<Arc<Mutex<Vec<usize>>>> =
            (0..4).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
        let running: Vec<Arc<AtomicBool>> =
            (0..4).map(|_| Arc::new(AtomicBool::new(false))).collect();
        for n in 0..500 {
            for (i, lane) in lanes.iter().enumerate() {
                let (seen, running) = (Arc::clone(&seen[i]), Arc::clone(&running[i]));
                assert!(lane.push(Box::new(move || {
                    assert!(!running.swap(true, Ordering::SeqCst), "two jobs of one lane at once");
                    assert_eq!(std::thread::current().name(), Some(THREAD_NAME));
                    seen.lock().unwrap().push(n);
                    running.store(false, Ordering::SeqCst);
                })));
            }
        }
        for (i, lane) in lanes.iter().enumerate() {
            lane.close();
            assert!(!lane.push(Box::new(|| {})), "a closed lane refuses jobs");
            assert!(lane.wait_idle(Duration::from_secs(10)));
            assert_eq!(*seen[i].lock().unwrap(), (0..500).collect::<Vec<_>>());
        }
        assert!(delivery_threads() >= SLOTS && delivery_threads() <= MAX_THREADS);
    }

    #[test]
    fn a_stuck_job_does_not_stop_the_other_lanes_of_its_slot() {
        let stuck = Lane::new().unwrap();
        let other = loop {
            let lane = Lane::new().unwrap();
            if lane.slot() == stuck.slot() {
                break lane;
            }
        };
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        stuck.push(Box::new(move || {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(Duration::from_secs(30));
        }));
        let (after_tx, after_rx) = mpsc::channel::<&str>();
        let tx = after_tx.clone();
        stuck.push(Box::new(move || tx.send("stuck lane's next job").unwrap()));
        started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let tx = after_tx.clone();
        other.push(Box::new(move || tx.send("other lane").unwrap()));
        // The watchdog gives the slot a new thread after STALL_AFTER.
        assert_eq!(after_rx.recv_timeout(Duration::from_secs(10)).unwrap(), "other lane");
        assert!(!stuck.wait_idle(Duration::from_millis(10)), "its own next job waits");
        release_tx.send(()).unwrap();
        assert_eq!(
            after_rx.recv_timeout(Duration::from_secs(10)).unwrap(),
            "stuck lane's next job"
        );
        assert!(stuck.wait_idle(Duration::from_secs(10)));
    }

    #[test]
    fn a_hub_stopped_from_its_own_callback_does_not_wait_and_delivers_the_rest_after() {
        use crate::deposit::events::{DepositEvent, RecordedEvent};
        use crate::deposit::hub::{Dispatcher, EventHub};
        use crate::deposit::status::ClientStatus;

        let (hub, dispatcher) = EventHub::start(16).unwrap();
        let dispatcher = Arc::new(Mutex::new(Some(dispatcher)));
        let (tx, rx) = mpsc::channel();
        let (slot, weak) = (Arc::clone(&dispatcher), Arc::downgrade(&hub));
        hub.subscribe(Arc::new(move |recorded: &RecordedEvent| {
            let event = &recorded.event;
            if *event == DepositEvent::StatusChanged(ClientStatus::Ready) {
                let hub = weak.upgrade().unwrap();
                let mut stopping: Dispatcher = slot.lock().unwrap().take().unwrap();
                let started = Instant::now();
                let delivered = stopping.stop(&hub, Duration::from_secs(5));
                tx.send(format!("stopped {delivered} in {:?}", started.elapsed())).unwrap();
            } else {
                tx.send(format!("{event:?}")).unwrap();
            }
        }));
        hub.emit(DepositEvent::StatusChanged(ClientStatus::Ready));
        hub.emit(DepositEvent::StatusChanged(ClientStatus::Watching));
        let first = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(first.starts_with("stopped false in "), "{first}");
        // Handed over before the stop: still delivered, after the callback returned.
        let second = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(second, format!("{:?}", DepositEvent::StatusChanged(ClientStatus::Watching)));
        // The pull queue has both, in order.
        assert_eq!(
            hub.next_event(Duration::ZERO).map(|r| r.event),
            Some(DepositEvent::StatusChanged(ClientStatus::Ready))
        );
        assert_eq!(
            hub.next_event(Duration::ZERO).map(|r| r.event),
            Some(DepositEvent::StatusChanged(ClientStatus::Watching))
        );
    }

    #[test]
    fn waiting_for_a_lane_of_the_same_slot_from_a_delivery_thread_does_not_stall() {
        let first = Lane::new().unwrap();
        let second = loop {
            let lane = Lane::new().unwrap();
            if lane.slot() == first.slot() {
                break lane;
            }
        };
        let (done_tx, done_rx) = mpsc::channel();
        let waited = Arc::clone(&second);
        let (ran_tx, ran_rx) = mpsc::channel();
        second.push(Box::new(move || ran_tx.send(()).unwrap()));
        first.push(Box::new(move || {
            let started = Instant::now();
            let idle = waited.wait_idle(Duration::from_secs(5));
            done_tx.send((idle, started.elapsed())).unwrap();
        }));
        let (idle, took) = done_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(idle);
        assert!(took < STALL_AFTER, "handed off at once, took {took:?}");
        ran_rx.recv_timeout(Duration::from_secs(1)).unwrap();
        assert!(first.wait_idle(Duration::from_secs(10)));
    }
}
