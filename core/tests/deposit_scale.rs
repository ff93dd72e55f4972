//! Many clients in one process (issue 7): 1,000 deposit clients (`DEPOSITKIT_SCALE_CLIENTS` to
//! change) on one in-process devnet, all initialized and watching. The process's thread count
//! stays bounded (the shared runtime, the shared event-delivery pool), the balance polls of a
//! round are a few batched requests (devnet's `GET /devnet/stats` counters), deposits to a
//! sample of the clients are detected and swept, and a client whose session the services refuse
//! renews it without failing the polls of the others.

mod deposit_support;

use std::time::{Duration, Instant};

use deposit_support::{Net, config, net, owner};
use depositkit_core::TokenType;
use depositkit_core::deposit::dispatch;
use depositkit_core::deposit::{DepositClient, DepositEvent, DepositPhase, DestinationConfig};

/// Clients in the test (debug build: ~1,000 initialize in a few seconds on 2 cores).
fn clients_wanted() -> usize {
    std::env::var("DEPOSITKIT_SCALE_CLIENTS").ok().and_then(|n| n.parse().ok()).unwrap_or(1000)
}

/// Polling interval of the clients.
const INTERVAL_MS: u64 = 250;

/// Threads this process may have, whatever the number of clients: depositkit's runtime (2
/// workers, blocking pool <= 64), its delivery pool (<= `dispatch::MAX_THREADS` + a watchdog),
/// the in-process devnet (its thread, 2 workers, blocking pool <= 16) and the test harness.
/// Before the shared pool, each client had a thread of its own.
const THREAD_BOUND: usize = 2 + 64 + dispatch::MAX_THREADS + 1 + 1 + 2 + 16 + 4;

fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
    line["Threads:".len()..].trim().parse().unwrap()
}

struct Client {
    owner: String,
    client: DepositClient,
    evm: String,
}

/// Starts `n` initialized, watching clients, on a few threads at once.
fn start_clients(net: &Net, n: usize) -> Vec<Client> {
    let workers = 8;
    // The configuration of one client, made on the worker threads (the devnet handle stays here).
    let template = config(net, &owner(), DestinationConfig::chain(8453));
    let template = &template;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    (w..n)
                        .step_by(workers)
                        .map(|_| {
                            let owner = owner();
                            let mut cfg = template.clone();
                            cfg.owner_address = owner.clone();
                            cfg.polling_interval_ms = INTERVAL_MS;
                            let client = DepositClient::new(cfg).unwrap();
                            let evm = client.initialize().unwrap().evm;
                            client.start_watching().unwrap();
                            Client { owner, client, evm }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// Waits until devnet answered `rounds` more rounds of balances for `n` clients; returns the
/// balance requests and the rounds (accounts answered / n) it took.
fn measure_rounds(net: &Net, n: usize, rounds: u64) -> (u64, f64) {
    let start = net.devnet.stats();
    let want = start.balance_accounts + rounds * n as u64;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = net.devnet.stats();
        if now.balance_accounts >= want {
            let requests = now.balance_requests - start.balance_requests;
            let done = (now.balance_accounts - start.balance_accounts) as f64 / n as f64;
            return (requests, done);
        }
        assert!(Instant::now() < deadline, "devnet answered too few polls: {now:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Pulls `client`'s events until its deposit is credited; every event pulled.
fn until_credited(client: &DepositClient, timeout: Duration) -> Vec<DepositEvent> {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(event) = client.next_event(left) else {
            panic!("not credited in time; events: {seen:#?}");
        };
        let credited = event.lifecycle().is_some_and(|e| e.phase == DepositPhase::Credited);
        seen.push(event);
        if credited {
            return seen;
        }
    }
}

fn errors(events: &[DepositEvent]) -> Vec<&DepositEvent> {
    events.iter().filter(|e| matches!(e, DepositEvent::Error { .. })).collect()
}

#[test]
fn a_thousand_clients_share_threads_and_batched_polls() {
    let n = clients_wanted();
    let net = net();
    let started = Instant::now();
    let clients = start_clients(&net, n);
    eprintln!("{n} clients initialized and watching in {:?}", started.elapsed());

    // Threads: bounded, whatever n.
    let threads_now = threads();
    eprintln!("threads: {threads_now} (bound {THREAD_BOUND})");
    assert!(threads_now <= THREAD_BOUND, "{threads_now} threads for {n} clients");
    assert!(dispatch::delivery_threads() <= dispatch::MAX_THREADS);

    // Polls: a round of n clients is about n / (sessions per batch) requests. Each JWT is ~700
    // bytes, so a 64 KiB X-Batch-Sessions header carries ~90 wallets.
    let per_batch = depositkit_core::deposit::MAX_BATCH_SESSIONS_BYTES / 760;
    let (requests, rounds) = measure_rounds(&net, n, 3);
    let per_round = requests as f64 / rounds;
    let ideal = n.div_ceil(per_batch) as f64;
    eprintln!(
        "{requests} balance requests in {rounds:.2} rounds: {per_round:.1} per round (ideal {ideal})"
    );
    assert!(per_round <= 2.0 * ideal + 2.0, "{per_round} requests per round for {n} clients");

    // Deposits to a sample are detected and swept.
    let sample: Vec<&Client> = clients.iter().step_by((n / 10).max(1)).take(10).collect();
    for c in &sample {
        while c.client.next_event(Duration::ZERO).is_some() {}
    }
    for c in &sample {
        net.devnet.deposit(&c.evm, 8453, TokenType::USDC, "5000000", None).unwrap();
    }
    for c in &sample {
        let events = until_credited(&c.client, Duration::from_secs(30));
        assert!(errors(&events).is_empty(), "{:?}", errors(&events));
        let phases: Vec<DepositPhase> =
            events.iter().filter_map(|e| e.lifecycle()).map(|e| e.phase).collect();
        assert_eq!(
            phases,
            [DepositPhase::Detected, DepositPhase::Processing, DepositPhase::Credited]
        );
    }

    // One refused session poisons its batch: everyone polls alone once, the refused client
    // renews its session, and nobody reports an error.
    let (refused, others) = sample.split_first().unwrap();
    net.devnet.expire_sessions(Some(&refused.owner));
    net.devnet.deposit(&refused.evm, 8453, TokenType::USDC, "7000000", None).unwrap();
    let events = until_credited(&refused.client, Duration::from_secs(30));
    assert!(errors(&events).is_empty(), "{:?}", errors(&events));
    // The refused batch's clients polled alone once (that round may still be finishing).
    measure_rounds(&net, n, 1);
    let (requests, rounds) = measure_rounds(&net, n, 2);
    eprintln!("after the refusal: {requests} requests in {rounds:.2} rounds");
    assert!(requests as f64 / rounds <= 2.0 * ideal + 2.0, "batches again");
    for c in others {
        let mut events = Vec::new();
        while let Some(event) = c.client.next_event(Duration::ZERO) {
            events.push(event);
        }
        assert!(errors(&events).is_empty(), "{:?}", errors(&events));
    }

    assert!(threads() <= THREAD_BOUND);
    let closing = Instant::now();
    drop(clients);
    eprintln!("closed in {:?}", closing.elapsed());
}
