//! Shared by the integration tests: a devnet on loopback seeded with two projects, and a small
//! HTTP client (ureq) that returns every status with its body.
#![allow(dead_code)]

pub mod deposit;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use depositkit_devnet::{ChainFamily, Devnet, DevnetConfig, NewUser, Profile, RunningDevnet};
use serde_json::{Value, json};

/// EIP-55 checksummed addresses.
pub const EVM_A: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
pub const EVM_B: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
pub const EVM_INTERACTED: &str = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB";
pub const EVM_UNKNOWN: &str = "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb";
pub const SOL_A: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
pub const SOL_B: &str = "So11111111111111111111111111111111111111112";
pub const SOL_INTERACTED: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
pub const SOL_UNKNOWN: &str = "11111111111111111111111111111111";

/// A database file in cargo's per-target temp directory, removed (with WAL files) on drop.
pub struct TempDb(pub PathBuf);

impl TempDb {
    pub fn new() -> Self {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("depositkit-devnet-tests");
        std::fs::create_dir_all(&dir).unwrap();
        TempDb(dir.join(format!("{}.sqlite", uuid::Uuid::new_v4())))
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// One seeded project: its credentials, a user with wallets, identity and sessions.
pub struct Seeded {
    pub project_id: String,
    pub server_key: String,
    pub user: String,
    pub token: String,
    pub expired_token: String,
    pub jwt_uid: String,
}

/// A running devnet with projects `a` and `b` (disjoint users).
pub struct Fixture {
    pub devnet: RunningDevnet,
    pub a: Seeded,
    pub b: Seeded,
    pub agent: ureq::Agent,
    _db: TempDb,
}

impl Fixture {
    pub fn start() -> Self {
        Self::start_with(|config| config)
    }

    pub fn start_with(configure: impl FnOnce(DevnetConfig) -> DevnetConfig) -> Self {
        let db = TempDb::new();
        let devnet = Devnet::start(configure(DevnetConfig::new(&db.0))).unwrap();
        let a = seed(&devnet, "a", EVM_A, SOL_A);
        let b = seed(&devnet, "b", EVM_B, SOL_B);
        let store = devnet.store();
        store.add_interaction(&a.project_id, ChainFamily::Evm, EVM_INTERACTED).unwrap();
        store.add_interaction(&a.project_id, ChainFamily::Solana, SOL_INTERACTED).unwrap();
        Fixture { devnet, a, b, agent: agent(), _db: db }
    }

    /// POSTs `body` to /user-rpc as project `a`.
    pub fn post(&self, body: &str) -> Reply {
        let auth = basic(&self.a.project_id, &self.a.server_key);
        post(&self.agent, &self.devnet.user_rpc_url(), Some(&auth), Some("application/json"), body)
    }

    /// Calls `method` as project `a` and returns the JSON-RPC response.
    pub fn call(&self, method: &str, params: Value) -> Value {
        self.call_as(&self.a, method, params)
    }

    /// Calls `method` as the project of `seeded`; asserts HTTP 200.
    pub fn call_as(&self, seeded: &Seeded, method: &str, params: Value) -> Value {
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        let auth = basic(&seeded.project_id, &seeded.server_key);
        let reply = post(
            &self.agent,
            &self.devnet.user_rpc_url(),
            Some(&auth),
            Some("application/json"),
            &body,
        );
        assert_eq!(reply.status, 200, "{method}: {}", reply.body);
        reply.json()
    }
}

fn seed(devnet: &RunningDevnet, tag: &str, evm: &str, sol: &str) -> Seeded {
    let store = devnet.store();
    let project = store.create_project(&format!("project {tag}")).unwrap();
    let profile = Profile {
        name: Some(format!("User {tag}")),
        google_id: Some(format!("google-{tag}")),
        google_email: Some(format!("{tag}@gmail.example")),
        ..Profile::with_email(format!("{tag}@example.com"))
    };
    let user = store.add_user(&project.project_id, &NewUser { uuid: None, profile }).unwrap();
    store.add_wallet(&user, ChainFamily::Evm, evm).unwrap();
    store.add_wallet(&user, ChainFamily::Solana, sol).unwrap();
    let jwt_uid = format!("jwt-uid-{tag}");
    store.add_identity(&user, "jwt", &jwt_uid).unwrap();
    let token = store.add_session(&user, SystemTime::now() + Duration::from_secs(3600)).unwrap();
    let expired_token =
        store.add_session(&user, SystemTime::now() - Duration::from_secs(1)).unwrap();
    Seeded {
        project_id: project.project_id,
        server_key: project.server_key,
        user,
        token,
        expired_token,
        jwt_uid,
    }
}

/// An agent that hands back non-2xx responses instead of failing.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

/// `Basic base64(project:key)`.
pub fn basic(project: &str, key: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{project}:{key}")))
}

/// A response: status, headers and body text.
pub struct Reply {
    pub status: u16,
    pub headers: ureq::http::HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

fn reply(response: ureq::http::Response<ureq::Body>) -> Reply {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.into_body().read_to_string().unwrap();
    Reply { status, headers, body }
}

/// POSTs `body` with optional Authorization and Content-Type headers.
pub fn post(
    agent: &ureq::Agent,
    url: &str,
    auth: Option<&str>,
    content_type: Option<&str>,
    body: &str,
) -> Reply {
    let mut request = agent.post(url);
    if let Some(auth) = auth {
        request = request.header("Authorization", auth);
    }
    if let Some(content_type) = content_type {
        request = request.header("Content-Type", content_type);
    }
    reply(request.send(body).unwrap())
}

/// GETs `url`.
pub fn get(agent: &ureq::Agent, url: &str) -> Reply {
    reply(agent.get(url).call().unwrap())
}

/// DELETEs `url`.
pub fn delete(agent: &ureq::Agent, url: &str) -> Reply {
    reply(agent.delete(url).call().unwrap())
}

/// The error object of a JSON-RPC response, asserting there is one with `code`.
pub fn expect_error(response: &Value, code: i64) -> &Value {
    let error = &response["error"];
    assert_eq!(error["code"], code, "expected error {code}, got {response}");
    assert!(response.get("result").is_none(), "{response}");
    error
}
