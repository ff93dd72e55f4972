//! Running the server: in process on its own thread and runtime ([`Devnet::start`]), or in the
//! foreground until a signal (the CLI's `serve`).

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::chain::Chains;
use crate::config::ChainsConfig;
use crate::config::DevnetConfig;
use crate::error::{Error, Result};
use crate::faults::{Fault, Faults};
use crate::http::{self, AppState, USER_RPC_PATH};
use crate::services::Services;
use crate::services::admin::{self, DepositRequest, LedgerQuery};
use crate::services::faults::{Service, SweepFaultMode};
use crate::services::onramp::{self, OrderParams};
use crate::store::{Receipt, Store};
use depositkit_core::{TokenType, U256, parse_raw_amount};

/// Extra time `shutdown` waits beyond the grace period before leaving the server thread behind.
const SHUTDOWN_SLACK: Duration = Duration::from_secs(2);

/// Starts devnet servers in process.
#[derive(Debug)]
pub struct Devnet;

impl Devnet {
    /// Opens the store, binds `config.listen` and serves on a thread of its own, with its own
    /// tokio runtime, so synchronous callers can use it. The server is ready to answer when
    /// this returns.
    ///
    /// # Errors
    /// The database cannot be opened, the address cannot be bound, or the runtime or thread
    /// cannot be created.
    pub fn start(config: DevnetConfig) -> Result<RunningDevnet> {
        let store = Store::open(&config.db_path)?;
        let server = BoundServer::bind(&config, store)?;
        let runtime = build_runtime()?;
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let addr = server.local_addr;
        let store = server.state.store.clone();
        let faults = server.state.faults.clone();
        let services = Arc::clone(&server.state.services);
        let grace = config.shutdown_grace;
        let thread = std::thread::Builder::new()
            .name(format!("depositkit-devnet-{}", addr.port()))
            .spawn(move || {
                let result = runtime.block_on(server.run(async {
                    let _ = stop_rx.await;
                }));
                runtime.shutdown_timeout(Duration::from_secs(1));
                let _ = done_tx.send(());
                result
            })
            .map_err(|e| Error::io("cannot start the devnet server thread", e))?;
        Ok(RunningDevnet {
            addr,
            store,
            faults,
            services,
            grace,
            stop: Some(stop_tx),
            done: done_rx,
            thread: Some(thread),
        })
    }
}

/// A devnet server running on its own thread. Dropping it shuts it down (waiting a bounded
/// time for in-flight requests).
pub struct RunningDevnet {
    addr: SocketAddr,
    store: Store,
    faults: Arc<Faults>,
    services: Arc<Services>,
    grace: Duration,
    stop: Option<oneshot::Sender<()>>,
    done: mpsc::Receiver<()>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl std::fmt::Debug for RunningDevnet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningDevnet")
            .field("addr", &self.addr)
            .field("store", &self.store)
            .finish()
    }
}

impl RunningDevnet {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT` (a loopback host when listening on all interfaces).
    pub fn base_url(&self) -> String {
        base_url(self.addr)
    }

    /// `http://HOST:PORT/user-rpc`, the base URL of the user-lookup client.
    pub fn user_rpc_url(&self) -> String {
        format!("{}{USER_RPC_PATH}", self.base_url())
    }

    /// The store the server reads, for seeding.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Arms a fault for the next user-rpc requests (works whether or not the HTTP fault
    /// endpoint is enabled).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a fault that makes no sense (no status or delay, count 0…).
    pub fn inject_fault(&self, fault: &Fault) -> Result<()> {
        self.faults.inject(fault).map_err(|message| Error::invalid("fault", message))
    }

    /// The services' request counters (`GET /devnet/stats`).
    pub fn stats(&self) -> crate::services::stats::StatsSnapshot {
        self.services.stats.snapshot()
    }

    /// Disarms every pending fault of every service (sweep faults and forged JWTs included).
    pub fn clear_faults(&self) {
        self.faults.clear();
        self.services.faults.clear();
        self.services.sweep_faults.clear();
        self.services.jwt.clear_forged();
    }

    /// `http://HOST:PORT`: the `servicesUrl` of `docs/protocol.md` (the JWT service is under
    /// `/jwt`, the signer under `/signer`, the universal-account service under `/ua`).
    pub fn services_url(&self) -> String {
        self.base_url()
    }

    /// `http://HOST:PORT/particle`: Particle's Universal Account JSON-RPC over the same state
    /// (the SDK's `rpcUrl`).
    pub fn particle_url(&self) -> String {
        format!("{}{}", self.base_url(), crate::services::particle::PATH)
    }

    /// The requests `POST /particle` received (the last 2000), oldest first, as
    /// `GET /devnet/particle/requests` lists them: method, params, envelope (the client key
    /// redacted), the body's key order and the headers without secrets.
    pub fn particle_requests(&self) -> Vec<serde_json::Value> {
        self.services.particle_log.entries()
    }

    /// Credits an incoming transfer of `raw_amount` (smallest units) of `token` on `chain_id`
    /// to `address`, as `POST /devnet/deposits` does: a deposit when an account owns the
    /// address, else a credit to the address's ledger.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the bad argument (or saying `CHAIN_BACKED` for a
    /// chain-backed chain: send a real transfer there); database failures.
    pub fn deposit(
        &self,
        address: &str,
        chain_id: u64,
        token: TokenType,
        raw_amount: &str,
        sender: Option<&str>,
    ) -> Result<Deposit> {
        admin::refuse_chain_backed(&self.services, chain_id).map_err(api_error)?;
        let request = DepositRequest {
            address: address.to_owned(),
            chain_id,
            token: token.symbol().to_owned(),
            raw_amount: Some(raw_amount.to_owned()),
            sender: sender.map(str::to_owned),
            ..DepositRequest::default()
        };
        let (credited, raw, _) =
            admin::deposit(&self.services.store, &self.services.prices, &request)
                .map_err(api_error)?;
        crate::simchain::record_deposit(&self.services, &request, &credited.tx_hash, raw);
        Ok(Deposit { tx_hash: credited.tx_hash, account_id: credited.account_id })
    }

    /// What `address` holds of `token` on `chain_id`, in smallest units (`"0"` when nothing
    /// arrived): an account's `rawAmount` for a deposit address, else the ledger's amount; on a
    /// chain-backed chain, the chain's balance of the address.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an unknown chain; database failures.
    pub fn ledger_balance(&self, address: &str, chain_id: u64, token: TokenType) -> Result<String> {
        let query = LedgerQuery {
            address: Some(address.to_owned()),
            chain_id: Some(chain_id),
            token: Some(token.symbol().to_owned()),
        };
        let (raw, _) = admin::ledger_balance(&self.services, &query).map_err(api_error)?;
        Ok(raw.to_string())
    }

    /// The incoming transfers of account `account_id` in `token` on `chain_id` whose range of
    /// cumulative `received` overlaps `(from, to]` (raw amounts), oldest first: what
    /// `GET /ua/v1/receipts` answers, without the session check.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an unknown account or chain, a bad amount or `from` ≥ `to`;
    /// database failures.
    pub fn receipts(
        &self,
        account_id: &str,
        chain_id: u64,
        token: TokenType,
        from: &str,
        to: &str,
    ) -> Result<Vec<Receipt>> {
        let amount = |field: &str, text: &str| {
            parse_raw_amount(text).map_err(|e| Error::invalid(field, e.message()))
        };
        let (from, to) = (amount("from", from)?, amount("to", to)?);
        if from >= to {
            return Err(Error::invalid("to", format!("{to} is not above from ({from})")));
        }
        if depositkit_core::Chain::from_id(chain_id).is_none() {
            return Err(Error::invalid("chain_id", format!("unknown chain id {chain_id}")));
        }
        let account = self
            .store
            .ua_account(account_id)?
            .ok_or_else(|| Error::invalid("account_id", format!("no account {account_id}")))?;
        // On a chain-backed chain, what arrived is recorded when the line is read.
        self.services
            .observe(&account, crate::chain::ledger_sync::Scope::Line(chain_id, token))
            .map_err(api_error)?;
        self.store.ua_receipts(account_id, chain_id, token, from, to)
    }

    /// The chain-backed chain ids (empty in ledger mode), as `GET /devnet/chains` lists them.
    pub fn chains(&self) -> Vec<u64> {
        self.services.chains.as_deref().map(Chains::chain_ids).unwrap_or_default()
    }

    /// The chains file the server runs with, if any.
    pub fn chains_config(&self) -> Option<&ChainsConfig> {
        self.services.chains.as_deref().map(Chains::config)
    }

    /// `http://HOST:PORT/devnet/chains/{chain_id}/rpc`: the JSON-RPC endpoint of the simulated
    /// chain of a ledger chain (`docs/devnet-chains.md`), for a chain watcher. A chain-backed
    /// chain has none: use its node's URL from the chains file.
    pub fn chain_rpc_url(&self, chain_id: u64) -> String {
        format!("{}/devnet/chains/{chain_id}/rpc", self.base_url())
    }

    /// The newest, safe and finalized heights of the simulated chain of `chain_id`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an unknown chain.
    pub fn sim_heads(&self, chain_id: u64) -> Result<crate::simchain::Heads> {
        self.services.simchains.heads(chain_id)
    }

    /// Adds `blocks` empty blocks to the simulated chain of `chain_id`, as
    /// `POST /devnet/chains/{chainId}/mine` does; its heads then.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an unknown or chain-backed chain, or too many blocks.
    pub fn mine_blocks(&self, chain_id: u64, blocks: u64) -> Result<crate::simchain::Heads> {
        admin::refuse_chain_backed(&self.services, chain_id).map_err(api_error)?;
        self.services.simchains.mine(chain_id, blocks)
    }

    /// Reorganises the simulated chain of `chain_id`, as `POST /devnet/chains/{chainId}/reorg`
    /// does: the dropped deposits leave the ledger, and come back later when asked.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the problem (an unknown or chain-backed chain, a depth
    /// reaching a finalized block, a dropped transaction not in the replaced blocks, a deposit
    /// already swept).
    pub fn reorg(
        &self,
        chain_id: u64,
        request: &crate::simchain::ReorgRequest,
    ) -> Result<crate::simchain::Reorganised> {
        admin::refuse_chain_backed(&self.services, chain_id).map_err(api_error)?;
        self.services.simchains.reorg(chain_id, request)
    }

    /// The vault's addresses (devnet's inventory and collection address), when chain-backed.
    pub fn vault_addresses(&self) -> Option<VaultAddresses> {
        self.services.chains.as_deref().map(|chains| VaultAddresses {
            evm: chains.vault().evm_address(),
            solana: chains.vault().solana_address(),
        })
    }

    /// What `address` holds of `token` on the chain-backed chain `chain_id`, read from the
    /// chain (zero for a token that is not deployed there).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when `chain_id` is not chain-backed; [`Error::Io`] naming the
    /// chain when it fails.
    pub fn chain_balance(&self, address: &str, chain_id: u64, token: TokenType) -> Result<U256> {
        let chains = self.services.chain_backed(chain_id).ok_or_else(|| {
            Error::invalid("chain_id", format!("chain {chain_id} is not chain-backed"))
        })?;
        chains
            .balance(address, chain_id, token)
            .map_err(|e| Error::io("reading the chain", std::io::Error::other(e.message)))
    }

    /// Completes a simulated onramp order, as `POST /onramp/v1/orders` does with `params` (the
    /// widget URL's parameters as a JSON object): `{"order", "messages"}`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for bad parameters (a missing partner key included);
    /// [`Error::Io`] when a chain-backed chain fails.
    pub fn complete_onramp_order(&self, params: &serde_json::Value) -> Result<serde_json::Value> {
        let params: OrderParams = serde_json::from_value(params.clone())
            .map_err(|source| Error::Json { context: "onramp order".into(), source })?;
        onramp::complete_order(&self.services, &params).map_err(api_error)
    }

    /// Sets the USD price of `token`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a price that is not a positive finite number up to 10^12.
    pub fn set_price(&self, token: TokenType, usd: f64) -> Result<()> {
        self.services.prices.set_usd(token, usd).map_err(|m| Error::invalid("price", m))
    }

    /// Makes a new JWT signing key current (the previous one stays in the JWKS); returns its
    /// key id. Takes 0.1–0.4 s.
    ///
    /// # Errors
    /// Generating or storing the key failed.
    pub fn rotate_jwt_key(&self) -> Result<String> {
        self.services.jwt.rotate()
    }

    /// The next `count` JWTs are signed by a key that is not in the JWKS.
    ///
    /// # Errors
    /// Generating the forging key failed.
    pub fn forge_next_jwts(&self, count: u32) -> Result<()> {
        self.services.jwt.forge_next(count)
    }

    /// Every JWT issued so far (to `user_id`, the owner address of the JWT request, when given)
    /// is refused by the services from now on with 401 `INVALID_SESSION`.
    pub fn expire_sessions(&self, user_id: Option<&str>) {
        self.services.jwt.expire(user_id);
    }

    /// The next `count` sweep sends get `mode` (0 disarms).
    pub fn fail_next_sweeps(&self, count: u32, mode: SweepFaultMode) {
        self.services.sweep_faults.arm(mode, count);
    }

    /// Arms `fault` for the next requests to `service` (`Service::UserRpc` is the same as
    /// [`RunningDevnet::inject_fault`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a fault that makes no sense.
    pub fn inject_service_fault(&self, service: Service, fault: &Fault) -> Result<()> {
        self.inject_service_fault_at(service, None, fault)
    }

    /// Like [`RunningDevnet::inject_service_fault`], only for paths starting with `path` (below
    /// the service's prefix, e.g. `/v1/sweeps/send`).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a fault that makes no sense or a path on user-rpc.
    pub fn inject_service_fault_at(
        &self,
        service: Service,
        path: Option<&str>,
        fault: &Fault,
    ) -> Result<()> {
        match (service, path) {
            (Service::UserRpc, None) => self.inject_fault(fault),
            (Service::UserRpc, Some(_)) => {
                Err(Error::invalid("path", "user-rpc faults apply to its one path"))
            }
            (service, path) => self
                .services
                .faults
                .inject(service, path, fault)
                .map_err(|message| Error::invalid("fault", message)),
        }
    }

    /// Stops accepting connections, lets in-flight requests finish (up to the configured
    /// grace period) and stops the thread.
    ///
    /// # Errors
    /// The server failed while running.
    pub fn shutdown(mut self) -> Result<()> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        match self.done.recv_timeout(self.grace + SHUTDOWN_SLACK) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => match thread.join() {
                Ok(result) => result,
                Err(_) => Err(Error::io("devnet server thread", std::io::Error::other("panicked"))),
            },
            // Never block without a bound: leave the thread behind.
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(()),
        }
    }
}

impl Drop for RunningDevnet {
    fn drop(&mut self) {
        if let Err(e) = self.stop_and_join() {
            eprintln!("depositkit-devnet: server stopped with an error: {e}");
        }
    }
}

/// What [`RunningDevnet::deposit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deposit {
    /// The transfer's transaction hash.
    pub tx_hash: String,
    /// The account owning the address; `None` when it is no account's deposit address.
    pub account_id: Option<String>,
}

/// The addresses of devnet's vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultAddresses {
    /// The EVM address (EIP-55), the same on every EVM chain.
    pub evm: String,
    /// The Solana address (base58).
    pub solana: String,
}

/// A refusal of the services as a library error: server-side failures (5xx, such as
/// `CHAIN_UNAVAILABLE`) are [`Error::Io`], the rest [`Error::InvalidInput`].
fn api_error(error: crate::services::api::ApiError) -> Error {
    if error.status.is_server_error() {
        Error::io(error.code, std::io::Error::other(error.message))
    } else {
        Error::invalid("request", error.message)
    }
}

/// `http://HOST:PORT` for a listening address.
pub fn base_url(addr: SocketAddr) -> String {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, addr.port()))
}

/// A bound, not yet serving, server: the CLI binds, prints the address, then runs it.
pub struct BoundServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    state: Arc<AppState>,
    verbose: bool,
    grace: Duration,
}

impl BoundServer {
    /// Binds `config.listen`; requests are served from `store`. With no JWT key in the store
    /// yet, the first one is generated on a background thread. With `config.chains`, connects
    /// to the chains and stocks the vault first.
    ///
    /// # Errors
    /// The address cannot be bound; the stored JWT keys cannot be read; the chains file is bad
    /// or a chain cannot be used.
    pub fn bind(config: &DevnetConfig, store: Store) -> Result<Self> {
        let listener = TcpListener::bind(config.listen)
            .map_err(|e| Error::io(format!("cannot listen on {}", config.listen), e))?;
        let local_addr = listener.local_addr().map_err(|e| Error::io("listening socket", e))?;
        listener.set_nonblocking(true).map_err(|e| Error::io("listening socket", e))?;
        let chains = config.chains.clone().map(Chains::connect).transpose()?.map(Arc::new);
        let services = Arc::new(
            Services::new(store.clone(), config.jwt_ttl, config.quote_ttl)?
                .with_chains(chains, config.balance_api_key.clone())
                .with_sim_chains(config.sim_chains),
        );
        let rpc = Arc::new(depositkit_server::http::RpcState {
            store: depositkit_server::UserStore::Sqlite(store.users()),
            max_body_bytes: config.max_body_bytes,
            realm: http::REALM,
        });
        let state = Arc::new(AppState {
            rpc,
            store,
            faults: Arc::new(Faults::default()),
            max_body_bytes: config.max_body_bytes,
            fault_injection: config.fault_injection,
            services,
        });
        Ok(BoundServer {
            listener,
            local_addr,
            state,
            verbose: config.verbose,
            grace: config.shutdown_grace,
        })
    }

    /// The bound address (the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown` completes, then waits up to the grace period for in-flight
    /// requests. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// Serving failed.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<()> {
        let listener = tokio::net::TcpListener::from_std(self.listener)
            .map_err(|e| Error::io("listening socket", e))?;
        // Open dashboard streams end at shutdown instead of holding the drain for the grace period.
        let services = Arc::clone(&self.state.services);
        let clock = tokio::spawn(crate::simchain::run_clock(Arc::clone(&services.simchains)));
        let shutdown = async move {
            shutdown.await;
            services.activity.close();
        };
        let router = http::router(self.state, self.verbose);
        // No cap on connections: tests open as many as they like.
        let unlimited = tokio::sync::Semaphore::MAX_PERMITS;
        let served =
            depositkit_server::serve::serve(listener, router, unlimited, self.grace, shutdown)
                .await;
        clock.abort();
        served
    }
}

/// The runtime a server runs on: two workers are plenty for a local emulator.
///
/// # Errors
/// The runtime cannot be created.
pub fn build_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(16)
        .thread_name("depositkit-devnet-worker")
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the tokio runtime", e))
}
