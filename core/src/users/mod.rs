//! The user-lookup client: JSON-RPC 2.0 over HTTP POST with Basic auth
//! (`spec/user-rpc-service.md`). See `docs/user-rpc.md` for the error mapping.
//!
//! - [`UserRpcClient`]'s methods block the calling thread for one HTTP exchange (`ureq`, on a
//!   keep-alive pool shared by the process's clients with the same settings).
//! - Each has an `_async` twin returning a `Send + 'static` future: the same exchange runs on the
//!   depositkit runtime's bounded blocking pool ([`Runtime::spawn_blocking`], at most 64 threads)
//!   and the future waits for it without a thread of its own. Dropping the future before its
//!   exchange started takes it off the pool's queue; one already on the wire finishes there and
//!   its answer is dropped. The runtime is the process's ([`Runtime::shared`]): a forked child
//!   gets its own, so the futures work in a child that creates its own client.
//! - [`UserRpcClient::get_users_info`] looks up many users in one JSON-RPC batch (one HTTP
//!   request): one outcome per request, in request order, each typed like the single call's.
//!
//! The records are in `record.rs`, the answers' interpretation (pure) in `reply.rs`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::describe::quote;
use crate::error::{Error, ErrorKind, Result};
use crate::http::{JsonPoster, Reply, RetryPolicy};
use crate::runtime::Runtime;
use crate::validate::{evm_address_problem, solana_address_problem};

mod record;
mod reply;
#[cfg(test)]
mod tests;

pub use record::{User, Wallet};
pub use reply::{
    codes, interpret_batch_reply, interpret_reply, project_user_answer, user_from_result,
};

/// The longest per-attempt timeout accepted; larger values are almost certainly unit mistakes
/// and would overflow timer arithmetic on some platforms.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// How a [`UserRpcClient`] talks to the service.
#[derive(Debug, Clone)]
pub struct UserRpcClientOptions {
    /// Deadline of one HTTP attempt, connect to last byte. Default 10 s.
    pub timeout: Duration,
    /// Retries of 429, 5xx, refused connections and timeouts. Default: 3 retries.
    pub retry: RetryPolicy,
    /// The `User-Agent` header. Default `depositkit/<version>`.
    pub user_agent: String,
}

impl Default for UserRpcClientOptions {
    fn default() -> Self {
        UserRpcClientOptions {
            timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            user_agent: format!("depositkit/{}", crate::VERSION),
        }
    }
}

/// The `Authorization` header value; kept out of `Debug` so the server key cannot leak.
struct BasicAuth(String);

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Basic <redacted>")
    }
}

/// Client of the user-lookup service.
///
/// Thread-safe: one instance serves many threads (and many futures) at once and reuses
/// keep-alive connections. Every method checks its arguments before any network call.
///
/// ```no_run
/// use depositkit_core::users::{UserRpcClient, UserRpcClientOptions};
/// let client = UserRpcClient::new("http://127.0.0.1:7420/user-rpc", "my-project", "sk_…",
///     UserRpcClientOptions::default())?;
/// let member = client.is_project_user("evm_chain", "0x52908400098527886E0F7030069857D2E4169EE7")?;
/// // Many users in one request: one outcome each, in request order.
/// for outcome in client.get_users_info(&[("0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c", "token")])? {
///     match outcome {
///         Ok(user) => println!("{}", user.email),
///         Err(err) => println!("{:?}: {err}", err.kind()),
///     }
/// }
/// # Ok::<(), depositkit_core::Error>(())
/// ```
#[derive(Debug)]
pub struct UserRpcClient {
    inner: Arc<Connection>,
}

/// What the calls share: the service, the credentials, the HTTP agent and the request ids.
#[derive(Debug)]
struct Connection {
    base_url: String,
    project_id: String,
    auth: BasicAuth,
    http: JsonPoster,
    next_id: AtomicU64,
}

impl UserRpcClient {
    /// A client of the service at `base_url` for the project `project_id` with its server key.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] when the URL is not `http://` or `https://`, carries
    /// credentials, or when the project id or key is empty or the project id holds a `:`.
    pub fn new(
        base_url: &str,
        project_id: &str,
        server_key: &str,
        options: UserRpcClientOptions,
    ) -> Result<Self> {
        let rest = base_url
            .strip_prefix("http://")
            .or_else(|| base_url.strip_prefix("https://"))
            .ok_or_else(|| {
            Error::configuration(format!(
                "invalid base URL {}: expected http:// or https://",
                quote(base_url)
            ))
        })?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if authority.is_empty() {
            return Err(Error::configuration(format!(
                "invalid base URL {}: no host",
                quote(base_url)
            )));
        }
        if authority.contains('@') {
            // Never echo it: the part before '@' is a credential.
            return Err(Error::configuration(
                "invalid base URL: it must not carry credentials; pass the project id and server key instead",
            ));
        }
        if project_id.is_empty() {
            return Err(Error::configuration("project id is empty"));
        }
        if project_id.contains(':') || project_id.chars().any(char::is_control) {
            return Err(Error::configuration(format!(
                "invalid project id {}: it must not contain ':' or control characters",
                quote(project_id)
            )));
        }
        if server_key.is_empty() {
            return Err(Error::configuration("project server key is empty"));
        }
        if server_key.chars().any(char::is_control) {
            return Err(Error::configuration("project server key contains control characters"));
        }
        if options.timeout.is_zero() || options.timeout > MAX_TIMEOUT {
            return Err(Error::configuration(format!(
                "timeout {} is out of range: expected more than zero and at most {}",
                crate::describe::duration(options.timeout),
                crate::describe::duration(MAX_TIMEOUT)
            )));
        }
        let credentials =
            base64::engine::general_purpose::STANDARD.encode(format!("{project_id}:{server_key}"));
        Ok(UserRpcClient {
            inner: Arc::new(Connection {
                base_url: base_url.to_owned(),
                project_id: project_id.to_owned(),
                auth: BasicAuth(format!("Basic {credentials}")),
                http: JsonPoster::new(options.timeout, &options.user_agent, options.retry),
                next_id: AtomicU64::new(1),
            }),
        })
    }

    /// The service's base URL.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The project id the client authenticates as.
    pub fn project_id(&self) -> &str {
        &self.inner.project_id
    }

    /// `getUserInfo`: the profile of the user `uuid`, proven by the user's session `token`.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] for a malformed uuid or an empty token (before any request);
    /// [`ErrorKind::Authentication`] for bad project credentials or a wrong/expired token;
    /// [`ErrorKind::NotFound`] for an unknown user; see `docs/user-rpc.md` for the rest.
    pub fn get_user_info(&self, uuid: &str, token: &str) -> Result<User> {
        self.inner.get_user_info(uuid, token)
    }

    /// `getUserInfoByIdentity`: the profile of the user with identity `uid` at `provider`.
    /// Only the provider `jwt` exists.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] for a provider other than `jwt` or an empty uid;
    /// [`ErrorKind::NotFound`] when no user has that identity.
    pub fn get_user_info_by_identity(&self, provider: &str, uid: &str) -> Result<User> {
        self.inner.get_user_info_by_identity(provider, uid)
    }

    /// `isProjectUser`: whether `address` on the chain family `chain` (`solana` or
    /// `evm_chain`) belongs to or has interacted with the project.
    ///
    /// # Errors
    /// [`ErrorKind::Configuration`] for another chain family or an address invalid for it.
    pub fn is_project_user(&self, chain: &str, address: &str) -> Result<bool> {
        self.inner.is_project_user(chain, address)
    }

    /// `getUserInfo` for each `(uuid, token)` of `requests`, sent as **one** JSON-RPC batch
    /// (one HTTP request): one outcome per request, in the order of `requests`, each the
    /// [`User`] or the error [`get_user_info`](UserRpcClient::get_user_info) would have
    /// returned for it alone (a malformed uuid or an empty token is that item's
    /// [`ErrorKind::Configuration`], and the item is not sent). An empty slice sends nothing.
    ///
    /// # Errors
    /// The error of the whole batch: the request failed (network, timeout after the retries),
    /// the service refused the project's credentials ([`ErrorKind::Authentication`]) or the
    /// batch as a whole (its error, e.g. a body over the server's size limit), or answered
    /// something that is not a batch response ([`ErrorKind::Protocol`]).
    pub fn get_users_info<U: AsRef<str>, T: AsRef<str>>(
        &self,
        requests: &[(U, T)],
    ) -> Result<Vec<Result<User>>> {
        self.inner.get_users_info(requests)
    }

    /// [`get_user_info`](UserRpcClient::get_user_info) as a future (see the module docs).
    pub fn get_user_info_async(
        &self,
        uuid: &str,
        token: &str,
    ) -> impl Future<Output = Result<User>> + Send + 'static {
        let (uuid, token) = (uuid.to_owned(), token.to_owned());
        self.off_thread("getUserInfo", move |c| c.get_user_info(&uuid, &token))
    }

    /// [`get_user_info_by_identity`](UserRpcClient::get_user_info_by_identity) as a future.
    pub fn get_user_info_by_identity_async(
        &self,
        provider: &str,
        uid: &str,
    ) -> impl Future<Output = Result<User>> + Send + 'static {
        let (provider, uid) = (provider.to_owned(), uid.to_owned());
        self.off_thread("getUserInfoByIdentity", move |c| {
            c.get_user_info_by_identity(&provider, &uid)
        })
    }

    /// [`is_project_user`](UserRpcClient::is_project_user) as a future.
    pub fn is_project_user_async(
        &self,
        chain: &str,
        address: &str,
    ) -> impl Future<Output = Result<bool>> + Send + 'static {
        let (chain, address) = (chain.to_owned(), address.to_owned());
        self.off_thread("isProjectUser", move |c| c.is_project_user(&chain, &address))
    }

    /// [`get_users_info`](UserRpcClient::get_users_info) as a future.
    pub fn get_users_info_async(
        &self,
        requests: Vec<(String, String)>,
    ) -> impl Future<Output = Result<Vec<Result<User>>>> + Send + 'static {
        self.off_thread("getUserInfo batch", move |c| c.get_users_info(&requests))
    }

    /// A future of `call` run on the runtime's blocking pool.
    fn off_thread<T: Send + 'static>(
        &self,
        what: &'static str,
        call: impl FnOnce(&Connection) -> Result<T> + Send + 'static,
    ) -> impl Future<Output = Result<T>> + Send + 'static {
        let connection = Arc::clone(&self.inner);
        async move {
            let task = Runtime::shared()?.spawn_blocking(move || call(&connection));
            match AbortOnDrop(task).await {
                Ok(answer) => answer,
                Err(e) => Err(Error::new(
                    ErrorKind::Internal,
                    format!("{what} failed: its task panicked or was cancelled ({e})"),
                )),
            }
        }
    }
}

/// A blocking task's handle that takes the task off the pool's queue when dropped before it
/// started (a started one runs to its end; its answer is dropped).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Future for AbortOnDrop<T> {
    type Output = std::result::Result<T, tokio::task::JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Connection {
    fn get_user_info(&self, uuid: &str, token: &str) -> Result<User> {
        check_user_info(uuid, token)?;
        let result = self.call("getUserInfo", [uuid, token])?;
        User::from_result("getUserInfo", result)
    }

    fn get_user_info_by_identity(&self, provider: &str, uid: &str) -> Result<User> {
        if provider != "jwt" {
            return Err(Error::configuration(format!(
                "unsupported identity provider {}: only \"jwt\" is supported",
                quote(provider)
            )));
        }
        if uid.is_empty() {
            return Err(Error::configuration("identity uid is empty"));
        }
        let result = self.call("getUserInfoByIdentity", [provider, uid])?;
        User::from_result("getUserInfoByIdentity", result)
    }

    fn is_project_user(&self, chain: &str, address: &str) -> Result<bool> {
        let problem = match chain {
            "evm_chain" => evm_address_problem(address),
            "solana" => solana_address_problem(address),
            other => {
                return Err(Error::configuration(format!(
                    "unsupported chain {}: expected \"solana\" or \"evm_chain\"",
                    quote(other)
                )));
            }
        };
        if let Some(reason) = problem {
            return Err(Error::configuration(format!(
                "invalid {chain} address {}: {reason}",
                quote(address)
            )));
        }
        project_user_answer(self.call("isProjectUser", [chain, address])?)
    }

    fn get_users_info<U: AsRef<str>, T: AsRef<str>>(
        &self,
        requests: &[(U, T)],
    ) -> Result<Vec<Result<User>>> {
        const METHOD: &str = "getUserInfo";
        // Items whose arguments are wrong get their error here and are not sent.
        let mut outcomes: Vec<Option<Result<User>>> = requests
            .iter()
            .map(|(uuid, token)| check_user_info(uuid.as_ref(), token.as_ref()).err().map(Err))
            .collect();
        let sent: Vec<usize> = (0..requests.len()).filter(|&i| outcomes[i].is_none()).collect();
        if !sent.is_empty() {
            let first = self.next_id.fetch_add(sent.len() as u64, Ordering::Relaxed);
            let ids: Vec<u64> = (first..).take(sent.len()).collect();
            let batch: Vec<Value> = sent
                .iter()
                .zip(&ids)
                .map(|(&i, id)| {
                    let (uuid, token) = (requests[i].0.as_ref(), requests[i].1.as_ref());
                    json!({"jsonrpc": "2.0", "id": id, "method": METHOD, "params": [uuid, token]})
                })
                .collect();
            let reply = self.post(&Value::Array(batch).to_string())?;
            let answers =
                interpret_batch_reply(&self.project_id, METHOD, &ids, reply.status, &reply.body)?;
            for (i, answer) in sent.into_iter().zip(answers) {
                outcomes[i] = Some(answer.and_then(|result| User::from_result(METHOD, result)));
            }
        }
        Ok(outcomes.into_iter().flatten().collect())
    }

    /// Sends one JSON-RPC request and returns its `result`, or the error it carries.
    fn call(&self, method: &str, params: [&str; 2]) -> Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let reply = self.post(&body)?;
        self.interpret(method, id, reply)
    }

    fn post(&self, body: &str) -> Result<Reply> {
        let headers = [
            ("Authorization", self.auth.0.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ];
        self.http.post(&self.base_url, &headers, body)
    }

    fn interpret(&self, method: &str, id: u64, reply: Reply) -> Result<Value> {
        interpret_reply(&self.project_id, method, id, reply.status, &reply.body)
    }
}

/// `getUserInfo`'s arguments: a canonical uuid and a token.
fn check_user_info(uuid: &str, token: &str) -> Result<()> {
    check_uuid(uuid)?;
    if token.is_empty() {
        return Err(Error::configuration("session token is empty"));
    }
    Ok(())
}

/// Checks the canonical 8-4-4-4-12 hex form of a UUID.
fn check_uuid(uuid: &str) -> Result<()> {
    let canonical = uuid.len() == 36 && uuid::Uuid::try_parse(uuid).is_ok();
    if canonical {
        Ok(())
    } else {
        Err(Error::configuration(format!(
            "invalid user uuid {}: expected 8-4-4-4-12 hex digits",
            quote(uuid)
        )))
    }
}
