//! The fleet's member processes (`depositkit-fleet-member`, built with the tests): started,
//! killed, paused and resumed by pid; their JSON lines read as they come; the local ports of
//! their TCP connections found through `/proc` (to cut their database sessions).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How members are started.
#[derive(Debug, Clone)]
pub struct MemberSettings {
    pub database_url: String,
    pub services_url: String,
    pub lease_ttl: Duration,
    pub renew_every: Duration,
    /// `false`: deposits wait for the harness's `sweep` and `refund` commands.
    pub auto_sweep: bool,
}

/// What a member process said so far.
#[derive(Debug, Default)]
pub struct Said {
    /// Every node id it ran under (a lost lease makes it join again under a new one).
    pub nodes: Vec<String>,
    /// The owners it runs now.
    pub owners: Vec<String>,
    /// Its last lines, stdout and stderr, for failure messages.
    pub tail: Vec<String>,
}

/// One member process.
pub struct MemberProcess {
    pub name: String,
    child: Child,
    said: Arc<Mutex<Said>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn record(said: &Mutex<Said>, line: &str) {
    let mut said = lock(said);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(line) {
        if let Some(node) = value["node"].as_str()
            && !said.nodes.iter().any(|n| n == node)
        {
            said.nodes.push(node.to_owned());
        }
        if let Some(owners) = value["owners"].as_array() {
            said.owners = owners.iter().filter_map(|o| o.as_str().map(str::to_owned)).collect();
        }
    }
    said.tail.push(line.to_owned());
    let excess = said.tail.len().saturating_sub(40);
    said.tail.drain(..excess);
}

impl MemberProcess {
    /// Starts member `name`.
    pub fn start(name: &str, settings: &MemberSettings) -> MemberProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_depositkit-fleet-member"))
            .args(["--database-url", &settings.database_url])
            .args(["--services-url", &settings.services_url])
            .args(["--name", name])
            .args(["--lease-ttl-ms", &settings.lease_ttl.as_millis().to_string()])
            .args(["--renew-every-ms", &settings.renew_every.as_millis().to_string()])
            .args(["--max-connections", "4"])
            .args(["--polling-interval-ms", "200"])
            .args(["--sweep-retry-delay-ms", "100"])
            .args(["--auto-sweep", if settings.auto_sweep { "true" } else { "false" }])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the member binary starts");
        let said = Arc::new(Mutex::new(Said::default()));
        for stream in [
            child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let said = Arc::clone(&said);
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    record(&said, &line);
                }
            });
        }
        MemberProcess { name: name.to_owned(), child, said }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every node id it ran under so far.
    pub fn nodes(&self) -> Vec<String> {
        lock(&self.said).nodes.clone()
    }

    /// The owners it says it runs.
    pub fn owners(&self) -> Vec<String> {
        lock(&self.said).owners.clone()
    }

    /// Its last lines.
    pub fn tail(&self) -> String {
        lock(&self.said).tail.join("\n")
    }

    /// Whether it exited (and how).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGKILL, and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn signal(&self, name: &str) {
        let status =
            Command::new("kill").arg(format!("-{name}")).arg(self.pid().to_string()).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{name} {} failed", self.pid());
    }

    /// SIGSTOP: frozen, sockets open.
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// SIGCONT.
    pub fn resume(&self) {
        self.signal("CONT");
    }

    /// SIGTERM, then waits for it to leave (SIGKILL after `limit`). Its exit status.
    pub fn terminate(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        self.signal("TERM");
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill();
        None
    }

    /// The local ports of its TCP connections (its database sessions among them).
    pub fn local_ports(&self) -> Vec<u16> {
        let inodes: HashSet<String> = std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|dir| {
                dir.filter_map(|entry| {
                    let target = std::fs::read_link(entry.ok()?.path()).ok()?;
                    let target = target.to_string_lossy();
                    let inode = target.strip_prefix("socket:[")?.strip_suffix(']')?;
                    Some(inode.to_owned())
                })
                .collect()
            })
            .unwrap_or_default();
        let mut ports = Vec::new();
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = std::fs::read_to_string(table).unwrap_or_default();
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let (Some(local), Some(inode)) = (fields.get(1), fields.get(9)) else { continue };
                if inodes.contains(*inode)
                    && let Some(port) = local.rsplit(':').next()
                    && let Ok(port) = u16::from_str_radix(port, 16)
                {
                    ports.push(port);
                }
            }
        }
        ports
    }
}

impl Drop for MemberProcess {
    fn drop(&mut self) {
        // SIGKILL ends even a paused process.
        self.kill();
    }
}
