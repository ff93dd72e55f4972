//! Helpers for the deposit-service tests: a devnet with its services, HTTP calls with any
//! method, headers and JSON body, and users with a JWT, a wallet and an account.

use std::time::Duration;

use depositkit_devnet::{
    BUILTIN_APP_ID, BUILTIN_CLIENT_KEY, BUILTIN_PROJECT_ID, Devnet, DevnetConfig, RunningDevnet,
};
use serde_json::{Value, json};

use super::{Reply, TempDb, agent};

/// A running devnet (fault injection on unless configured otherwise); the HTTP helpers of
/// [`Api`] are reached through it.
pub struct Net {
    pub devnet: RunningDevnet,
    pub api: Api,
    pub db: TempDb,
}

/// HTTP calls to the services of a devnet at `base` (its `servicesUrl`).
pub struct Api {
    pub base: String,
    pub agent: ureq::Agent,
}

impl std::ops::Deref for Net {
    type Target = Api;

    fn deref(&self) -> &Api {
        &self.api
    }
}

/// A user of the services: the owner address it asks JWTs for, its JWT, its intermediary
/// wallet and its universal account.
#[derive(Debug, Clone)]
pub struct UaUser {
    pub owner: String,
    pub jwt: String,
    pub wallet: String,
    pub account_id: String,
    pub evm_address: String,
    pub solana_address: String,
}

impl Net {
    pub fn start() -> Self {
        Self::start_with(DevnetConfig::with_fault_injection)
    }

    pub fn start_with(configure: impl FnOnce(DevnetConfig) -> DevnetConfig) -> Self {
        let db = TempDb::new();
        let devnet = Devnet::start(configure(DevnetConfig::new(&db.0))).unwrap();
        let api = Api { base: devnet.services_url(), agent: agent() };
        Net { devnet, api, db }
    }
}

impl Api {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Any request; `jwt` goes into `Authorization: Bearer`.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        jwt: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Reply {
        call(&self.agent, method, &self.url(path), jwt, headers, body)
    }

    pub fn post(&self, path: &str, jwt: Option<&str>, body: &Value) -> Reply {
        self.call("POST", path, jwt, &[], Some(body))
    }

    pub fn get(&self, path: &str, jwt: Option<&str>) -> Reply {
        self.call("GET", path, jwt, &[], None)
    }

    /// `POST /jwt/v1/jwt` with the built-in credentials; the whole answer.
    pub fn mint_reply(&self, user_id: &str) -> Value {
        let body = json!({
            "projectId": BUILTIN_PROJECT_ID,
            "clientKey": BUILTIN_CLIENT_KEY,
            "appId": BUILTIN_APP_ID,
            "userId": user_id,
        });
        let reply = self.post("/jwt/v1/jwt", None, &body);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()
    }

    /// A JWT for `user_id`.
    pub fn mint(&self, user_id: &str) -> String {
        self.mint_reply(user_id)["jwt"].as_str().unwrap().to_owned()
    }

    /// The intermediary wallet of `jwt`.
    pub fn wallet(&self, jwt: &str) -> String {
        let reply = self.get("/signer/v1/wallet", Some(jwt));
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()["address"].as_str().unwrap().to_owned()
    }

    /// `signature` of the 32-byte hex `message` by `jwt`'s wallet.
    pub fn sign(&self, jwt: &str, message: &str) -> String {
        let reply = self.post("/signer/v1/sign", Some(jwt), &json!({ "message": message }));
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()["signature"].as_str().unwrap().to_owned()
    }

    /// A user with a JWT, its wallet and its account.
    pub fn user(&self, owner: &str) -> UaUser {
        let jwt = self.mint(owner);
        let wallet = self.wallet(&jwt);
        let reply = self.post("/ua/v1/accounts", Some(&jwt), &json!({ "ownerAddress": wallet }));
        assert_eq!(reply.status, 200, "{}", reply.body);
        let account = reply.json();
        UaUser {
            owner: owner.to_owned(),
            jwt,
            wallet,
            account_id: account["accountId"].as_str().unwrap().to_owned(),
            evm_address: account["evmAddress"].as_str().unwrap().to_owned(),
            solana_address: account["solanaAddress"].as_str().unwrap().to_owned(),
        }
    }

    /// `POST /devnet/deposits`; asserts 200.
    pub fn deposit(&self, address: &str, chain_id: u64, token: &str, raw: &str) -> Value {
        let body =
            json!({"address": address, "chainId": chain_id, "token": token, "rawAmount": raw});
        let reply = self.post("/devnet/deposits", None, &body);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()
    }

    /// `POST /devnet/deposits` with a `sender`; asserts 200.
    pub fn deposit_from(
        &self,
        address: &str,
        chain_id: u64,
        token: &str,
        raw: &str,
        sender: &str,
    ) -> Value {
        let body = json!({
            "address": address, "chainId": chain_id, "token": token, "rawAmount": raw,
            "sender": sender,
        });
        let reply = self.post("/devnet/deposits", None, &body);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()
    }

    /// `POST /ua/v1/sweeps/quote` with `body`; asserts 200.
    pub fn quote(&self, user: &UaUser, body: &Value) -> Value {
        let reply = self.post("/ua/v1/sweeps/quote", Some(&user.jwt), body);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()
    }

    /// Signs the quote's rootHash with the user's wallet and sends it.
    pub fn send_quote(&self, user: &UaUser, quote: &Value) -> Reply {
        let signature = self.sign(&user.jwt, quote["rootHash"].as_str().unwrap());
        self.post(
            "/ua/v1/sweeps/send",
            Some(&user.jwt),
            &json!({"quoteId": quote["quoteId"], "signature": signature}),
        )
    }

    /// `GET` `path` as `user`; asserts 200 and returns the body.
    pub fn get_ok(&self, user: &UaUser, path: &str) -> Value {
        let reply = self.get(path, Some(&user.jwt));
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        reply.json()
    }

    /// The first page (up to 100 entries) of `user`'s history, newest first.
    pub fn history(&self, user: &UaUser) -> Vec<Value> {
        let path = format!("/ua/v1/transactions?accountId={}&pageSize=100", user.account_id);
        self.get_ok(user, &path)["transactions"].as_array().unwrap().clone()
    }

    /// The balance lines of `user`'s account.
    pub fn balances(&self, user: &UaUser) -> Vec<Value> {
        let reply = self.post(
            "/ua/v1/balances",
            Some(&user.jwt),
            &json!({ "accountIds": [user.account_id] }),
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()["accounts"][&user.account_id]["balances"].as_array().unwrap().clone()
    }

    /// The balance line of `token` on `chain_id` (`rawAmount`, `received`), zeros when absent.
    pub fn balance(&self, user: &UaUser, chain_id: u64, token: &str) -> (String, String) {
        self.balances(user)
            .iter()
            .find(|l| l["chainId"] == chain_id && l["token"] == token)
            .map_or(("0".into(), "0".into()), |l| {
                (l["rawAmount"].as_str().unwrap().into(), l["received"].as_str().unwrap().into())
            })
    }

    /// `GET /devnet/ledger`: the raw amount `address` holds.
    pub fn ledger(&self, address: &str, chain_id: u64, token: &str) -> String {
        let reply = self.get(
            &format!("/devnet/ledger?address={address}&chainId={chain_id}&token={token}"),
            None,
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()["rawAmount"].as_str().unwrap().to_owned()
    }
}

/// Any request with the agent; `jwt` goes into `Authorization: Bearer`.
pub fn call(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    jwt: Option<&str>,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Reply {
    let mut builder = ureq::http::Request::builder().method(method).uri(url);
    if let Some(jwt) = jwt {
        builder = builder.header("Authorization", format!("Bearer {jwt}"));
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = match body {
        Some(body) => agent
            .run(builder.header("Content-Type", "application/json").body(body.to_string()).unwrap())
            .unwrap(),
        None => agent.run(builder.body(()).unwrap()).unwrap(),
    };
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.into_body().read_to_string().unwrap();
    Reply { status, headers, body }
}

/// Asserts an error answer with `status` and `code`; returns its message.
pub fn expect_api_error(reply: &Reply, status: u16, code: &str) -> String {
    assert_eq!(reply.status, status, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["error"]["code"], code, "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

/// Waits `duration` (for expiry tests).
pub fn sleep(duration: Duration) {
    std::thread::sleep(duration);
}
