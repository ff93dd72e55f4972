//! The load during the faults: a stream of deposits to random owners (through devnet, as a
//! chain would credit them), and a consumer of the fleet's one event log that saves its cursor
//! after each batch and is itself restarted from it now and then (and rides out database
//! restarts), as an application would.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use depositkit_devnet::Store;
use depositkit_devnet::services::admin::{self, DepositRequest};
use depositkit_devnet::services::prices::Prices;
use depositkit_fleet::{EventCursor, Fleet, FleetEvent};

use super::rng::Rng;

/// A registered owner and the account its client opened (the account's owner is the client's
/// signer, not the owner, so the harness reads the account id the client stored).
#[derive(Debug, Clone)]
pub struct Owner {
    pub owner: String,
    pub account_id: String,
    /// The account's EVM deposit address.
    pub address: String,
}

/// One deposit the stream made.
#[derive(Debug, Clone)]
pub struct Made {
    pub owner: String,
    pub tx_hash: String,
    pub raw: u128,
}

/// Starts depositing to `owners` (their devnet accounts must exist) until `stop`: 2–20 USDC
/// on Base every `gap` (a random part of it), into devnet's store as `POST /devnet/deposits`
/// does (its server sees them at once).
pub fn deposits(
    store: Store,
    owners: Vec<Owner>,
    mut rng: Rng,
    gap: (u64, u64),
    stop: Arc<AtomicBool>,
) -> JoinHandle<Vec<Made>> {
    std::thread::spawn(move || {
        let mut made = Vec::new();
        while !stop.load(Ordering::SeqCst) {
            let Owner { owner, address, .. } = rng.pick(&owners).clone();
            let raw = u128::from(rng.between(2_000, 20_000)) * 1_000;
            let request = DepositRequest {
                address: address.clone(),
                chain_id: 8453,
                token: "USDC".to_owned(),
                raw_amount: Some(raw.to_string()),
                ..DepositRequest::default()
            };
            match admin::deposit(&store, &Prices::default(), &request) {
                Ok((credited, _, _)) => made.push(Made { owner, tx_hash: credited.tx_hash, raw }),
                Err(e) => panic!("devnet refused a deposit to {address}: {}", e.message),
            }
            // Pacing the stream (not waiting for an outcome).
            std::thread::sleep(Duration::from_millis(rng.between(gap.0, gap.1)));
        }
        made
    })
}

/// What the log consumer got: every event as delivered (duplicates included), and how often
/// it was restarted or failed to read.
#[derive(Debug, Default)]
pub struct Consumed {
    pub events: Vec<FleetEvent>,
    pub restarts: u32,
    /// How many events had been delivered at each restart (to place an out-of-order delivery).
    pub restarted_at: Vec<usize>,
    pub read_errors: u32,
}

/// The log consumer: reads from the saved cursor until `stop`, starting over from it (a new
/// connection, a new reader) every `restart_every` batches and after any read error.
pub fn consumer(
    url: String,
    restart_every: u32,
    stop: Arc<AtomicBool>,
    consumed: Arc<Mutex<Consumed>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut saved = EventCursor::START.to_string();
        while !stop.load(Ordering::SeqCst) {
            let Ok(fleet) = Fleet::connect(&url, 1) else {
                lock(&consumed).read_errors += 1;
                std::thread::sleep(Duration::from_millis(200));
                continue;
            };
            let cursor = EventCursor::from_str(&saved).expect("a saved cursor parses");
            let mut reader = fleet.event_reader(cursor);
            let mut batches = 0;
            while !stop.load(Ordering::SeqCst) && batches < restart_every {
                match reader.read(200, Duration::from_millis(500)) {
                    Ok(batch) => {
                        if !batch.is_empty() {
                            batches += 1;
                            lock(&consumed).events.extend(batch);
                            saved = reader.cursor().to_string();
                        }
                    }
                    Err(_) => {
                        lock(&consumed).read_errors += 1;
                        break;
                    }
                }
            }
            let mut consumed = lock(&consumed);
            consumed.restarts += 1;
            let delivered = consumed.events.len();
            consumed.restarted_at.push(delivered);
        }
    })
}

pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
