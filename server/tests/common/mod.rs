//! What the server's tests share: the two stores (a temporary SQLite file, a fresh PostgreSQL
//! database on the test server), JSON-RPC calls over HTTP, and the binary as a real process.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use depositkit_server::UserStore;
use depositkit_server::testing::TestDatabase;
use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_depositkit-server");
pub const EVM: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
pub const SOL: &str = "11111111111111111111111111111111";
pub const ADMIN_TOKEN: &str = "admin-token-for-tests-0123456789";

/// Which store a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database for one test: a SQLite file in the temp directory (removed on drop) or a
/// PostgreSQL database of its own (dropped on drop).
pub enum Database {
    Sqlite(TempFile),
    Postgres(TestDatabase),
}

impl Database {
    pub fn new(backend: Backend) -> Self {
        match backend {
            Backend::Sqlite => Database::Sqlite(TempFile::new("sqlite")),
            Backend::Postgres => Database::Postgres(TestDatabase::create()),
        }
    }

    pub fn url(&self) -> String {
        match self {
            Database::Sqlite(file) => format!("sqlite://{}", file.0.display()),
            Database::Postgres(db) => db.url().to_owned(),
        }
    }
}

/// A path in the temp directory, removed (with SQLite's side files) on drop.
pub struct TempFile(pub PathBuf);

impl TempFile {
    pub fn new(extension: &str) -> Self {
        let dir = std::env::temp_dir().join("depositkit-server-tests");
        std::fs::create_dir_all(&dir).unwrap();
        TempFile(dir.join(format!("{}.{extension}", uuid::Uuid::new_v4())))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A multi-thread runtime for a test's async work.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// Opens the store of `db`.
pub fn open(runtime: &tokio::runtime::Runtime, db: &Database) -> UserStore {
    runtime.block_on(UserStore::open(&db.url(), 4)).unwrap()
}

/// An HTTP agent that reports every status as a reply (no error for 4xx/5xx).
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// An HTTP answer: status and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub headers: Vec<(String, String)>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

fn reply(mut response: ureq::http::Response<ureq::Body>) -> Reply {
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let body = response.body_mut().read_to_string().unwrap_or_default();
    Reply { status, body, headers }
}

/// `Basic base64(project:key)`.
pub fn basic(project: &str, key: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{project}:{key}"))
    )
}

/// POSTs `body` (JSON text) to `url` with an optional Authorization header.
pub fn post(url: &str, auth: Option<&str>, body: &str) -> Reply {
    let mut request = agent().post(url).header("Content-Type", "application/json");
    if let Some(auth) = auth {
        request = request.header("Authorization", auth);
    }
    reply(request.send(body).unwrap())
}

/// One JSON-RPC call of `method` with `params` as the project.
pub fn call(rpc_url: &str, project: &str, key: &str, method: &str, params: Value) -> Reply {
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
    post(rpc_url, Some(&basic(project, key)), &body.to_string())
}

/// GETs `url`.
pub fn get(url: &str) -> Reply {
    reply(agent().get(url).call().unwrap())
}

/// An admin API request with the test token.
pub fn admin(method: &str, url: &str, body: Option<Value>) -> Reply {
    let agent = agent();
    let auth = format!("Bearer {ADMIN_TOKEN}");
    let response = match (method, body) {
        ("GET", _) => agent.get(url).header("Authorization", &auth).call(),
        (_, body) => agent
            .post(url)
            .header("Authorization", &auth)
            .header("Content-Type", "application/json")
            .send(body.unwrap_or(Value::Null).to_string()),
    };
    reply(response.unwrap())
}

/// The binary run as `depositkit-server serve`, ready (its listening line read).
pub struct Server {
    child: Child,
    pub base_url: String,
    pub admin_url: Option<String>,
}

impl Server {
    /// Starts `depositkit-server serve --listen 127.0.0.1:0 <extra>` on `database`.
    pub fn start(database: &str, extra: &[&str]) -> Server {
        let child = Command::new(BIN)
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .env("DEPOSITKIT_DATABASE_URL", database)
            .env("DEPOSITKIT_ADMIN_TOKEN", ADMIN_TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut server = Server { child, base_url: String::new(), admin_url: None };
        let mut stdout = BufReader::new(server.child.stdout.take().unwrap());
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap() == 0 {
                let mut stderr = String::new();
                let _ = server.child.stderr.take().unwrap().read_to_string(&mut stderr);
                panic!("depositkit-server exited before it was ready: {stderr}");
            }
            let line = line.trim_end();
            if let Some(url) = line.strip_prefix("depositkit-server admin API on ") {
                server.admin_url = Some(url.to_owned());
            }
            if let Some(url) = line.strip_prefix("depositkit-server listening on ") {
                server.base_url = url.to_owned();
                return server;
            }
        }
    }

    pub fn rpc_url(&self) -> String {
        format!("{}/user-rpc", self.base_url)
    }

    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    /// Sends `signal`, waits (at most 30 s) for the exit; returns the status and stderr.
    pub fn stop(mut self, signal: i32) -> (ExitStatus, String) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.pid(), signal) };
        let status = wait_with_deadline(&mut self.child, Duration::from_secs(30));
        let mut stderr = String::new();
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut stderr);
        (status, stderr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child` to exit, killing it after `deadline`.
pub fn wait_with_deadline(child: &mut Child, deadline: Duration) -> ExitStatus {
    let until = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            return child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `depositkit-server <args>` on `database` to completion: (exit code, stdout, stderr).
pub fn run(database: &str, args: &[&str]) -> (i32, String, String) {
    let output =
        Command::new(BIN).args(args).env("DEPOSITKIT_DATABASE_URL", database).output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
