//! What the chain-watcher tests share: a watcher whose signals land in a channel, waiting for
//! a signal with a deadline, and a TCP relay in front of an endpoint that can be cut and
//! restored (the endpoint "dies" for the watcher while the chain goes on).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use depositkit_core::chain::watch::signal::ChainSignal;
use depositkit_core::chain::watch::{ChainWatcher, WatchSettings};

/// A watcher of `chain_id` at `url` and the channel its signals go to.
pub fn watcher(chain_id: u64, url: &str, settings: WatchSettings) -> (ChainWatcher, Signals) {
    let (tx, rx) = channel();
    let watcher = ChainWatcher::start(chain_id, url, settings, move |signal| {
        let _ = tx.send(signal);
    })
    .unwrap();
    (watcher, Signals { rx, seen: Vec::new() })
}

/// Fast settings for local chains.
pub fn fast() -> WatchSettings {
    WatchSettings {
        poll_interval: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        ..WatchSettings::default()
    }
}

/// The signals of one watcher, with everything received so far.
pub struct Signals {
    rx: Receiver<ChainSignal>,
    /// Every signal received, in order.
    pub seen: Vec<ChainSignal>,
}

impl Signals {
    /// Waits (up to 20 s) for a signal `wanted` accepts; returns it. Signals before it are kept
    /// in `seen` too.
    pub fn wait_for(&mut self, what: &str, wanted: impl Fn(&ChainSignal) -> bool) -> ChainSignal {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(signal) => {
                    self.seen.push(signal.clone());
                    if wanted(&signal) {
                        return signal;
                    }
                }
                Err(_) => panic!("no {what} within 20 s; signals: {:#?}", self.seen),
            }
        }
    }

    /// The first signal `wanted` accepts, among those received already or, failing that, the
    /// next ones (as [`Signals::wait_for`]).
    pub fn find(&mut self, what: &str, wanted: impl Fn(&ChainSignal) -> bool) -> ChainSignal {
        match self.seen.iter().find(|s| wanted(s)) {
            Some(found) => found.clone(),
            None => self.wait_for(what, wanted),
        }
    }

    /// The position in `seen` of the first signal `wanted` accepts.
    pub fn position(&self, wanted: impl Fn(&ChainSignal) -> bool) -> Option<usize> {
        self.seen.iter().position(wanted)
    }
}

/// Whether `signal` is the inclusion of `tx` (any index).
pub fn included(signal: &ChainSignal, tx: &str) -> bool {
    matches!(signal, ChainSignal::Included(seen) if seen.tx.eq_ignore_ascii_case(tx))
}

/// Whether `signal` is the removal of `tx`.
pub fn removed(signal: &ChainSignal, tx: &str) -> bool {
    matches!(signal, ChainSignal::Removed { tx: t, .. } if t.eq_ignore_ascii_case(tx))
}

/// A TCP relay to `target` on a loopback port of its own: while cut, it closes every
/// connection (the endpoint is down for its clients); restored, it relays again.
pub struct Relay {
    pub url: String,
    open: Arc<AtomicBool>,
    live: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    pub fn new(target: &str) -> Relay {
        let target = target.trim_start_matches("http://").trim_end_matches('/').to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let open = Arc::new(AtomicBool::new(true));
        let live: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (open2, live2) = (Arc::clone(&open), Arc::clone(&live));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if !open2.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else { continue };
                let mut held = live2.lock().unwrap();
                held.push(client.try_clone().unwrap());
                held.push(server.try_clone().unwrap());
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        Relay { url, open, live }
    }

    /// The endpoint dies: open connections are closed, new ones refused.
    pub fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        for stream in self.live.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// The open connections die; new ones are relayed (a dropped socket, the endpoint up).
    pub fn reset(&self) {
        for stream in self.live.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// The endpoint is back.
    pub fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}
