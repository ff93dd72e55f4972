//! Chain-backed devnet tests: the real local chains ([`chains::LocalChains`]) and one devnet
//! backed by them, shared by every test of a test binary ([`shared`]). They share one devnet
//! because they share the chains: two devnets on the same chains would both sign as the same
//! vault and race for its nonces. Tests keep apart by using owners of their own.
#![allow(dead_code)]

pub mod chains;
pub mod wallets;

use std::sync::{Mutex, OnceLock};

use depositkit_devnet::{Devnet, DevnetConfig, RunningDevnet};
use serde_json::{Value, json};

use crate::common::TempDb;
use crate::common::deposit::{Api, UaUser};
use chains::LocalChains;

/// The local chains and a devnet backed by them.
pub struct ChainNet {
    pub chains: LocalChains,
    pub api: Api,
    devnet: Mutex<RunningDevnet>,
    _db: TempDb,
}

impl std::ops::Deref for ChainNet {
    type Target = Api;

    fn deref(&self) -> &Api {
        &self.api
    }
}

/// The chains and devnet of this test binary, started by the first test that asks (a test whose
/// start fails fails with the launcher's or devnet's message, and the next one tries again).
pub fn shared() -> &'static ChainNet {
    static NET: OnceLock<ChainNet> = OnceLock::new();
    NET.get_or_init(|| {
        let chains = LocalChains::launch();
        let db = TempDb::new();
        let config =
            DevnetConfig::new(&db.0).with_fault_injection().with_chains(chains.config.clone());
        let devnet = Devnet::start(config).unwrap_or_else(|e| panic!("devnet on the chains: {e}"));
        let api = Api { base: devnet.services_url(), agent: crate::common::agent() };
        ChainNet { chains, api, devnet: Mutex::new(devnet), _db: db }
    })
}

impl ChainNet {
    /// Runs `f` with the in-process devnet.
    pub fn devnet<T>(&self, f: impl FnOnce(&RunningDevnet) -> T) -> T {
        f(&self.devnet.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// A quote of `raw` of `token` on `chain` to `dest_token` on `dest_chain` at `address`.
    pub fn quote_sweep(
        &self,
        user: &UaUser,
        source: (u64, &str, &str),
        dest: (u64, &str, &str),
    ) -> Value {
        self.quote(
            user,
            &json!({
                "accountId": user.account_id,
                "source": {"chainId": source.0, "token": source.1, "rawAmount": source.2},
                "destination": {"chainId": dest.0, "token": dest.1, "address": dest.2},
            }),
        )
    }

    /// Signs and sends `quote`; asserts 200 and returns the answer.
    pub fn send_ok(&self, user: &UaUser, quote: &Value) -> Value {
        let reply = self.send_quote(user, quote);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()
    }

    /// The receipts of `user`'s line over `(from, to]`.
    pub fn receipts(
        &self,
        user: &UaUser,
        chain_id: u64,
        token: &str,
        from: &str,
        to: &str,
    ) -> Vec<Value> {
        let path = format!(
            "/ua/v1/receipts?accountId={}&chainId={chain_id}&token={token}&from={from}&to={to}",
            user.account_id
        );
        self.get_ok(user, &path)["receipts"].as_array().unwrap().clone()
    }
}

/// A fresh owner (a random EVM address), so that tests never share an account.
pub fn fresh_owner() -> String {
    fresh_evm()
}

/// A fresh EVM address.
pub fn fresh_evm() -> String {
    alloy_primitives::Address::from(rand::random::<[u8; 20]>()).to_checksum(None)
}

/// A fresh Solana key.
pub fn fresh_solana() -> depositkit_devnet::chain::keys::SolanaKey {
    depositkit_devnet::chain::keys::SolanaKey::from_seed(rand::random())
}
