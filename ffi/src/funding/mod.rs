//! Funding deposits from the user's own wallet (`docs/funding.md` sections 3, 4 and 6 "C"):
//! the funding wallets and the balance provider of a deposit client, the balances they hold,
//! and `fund_from_wallet`, over `depositkit_core::deposit::DepositClient`'s funding methods.
//!
//! # Host providers
//!
//! Every host provider (an EVM wallet, a Solana wallet, a balance provider) is one C function,
//! [`depositkit_provider_fn`], with its `user_data`. It is wrapped in a `HostProvider`, a
//! `depositkit_core::funding::WalletProvider` that the core calls on one of its threads (never
//! twice at once for one provider: the core serializes the calls). Each call hands the
//! callback a reply handle; the callback answers through [`depositkit_provider_reply_result`]
//! or [`depositkit_provider_reply_error`] before it returns.
//!
//! A reply handle is not a pointer to memory: it is a number that names one pending request
//! in a process-wide table (`PendingReply`), never reused, and depositkit never dereferences
//! it. So a handle used after its callback returned, or answered twice, is found missing (or
//! answered) in the table and the call fails with a status: it cannot touch freed memory or
//! answer another request.
//!
//! `user_data_free` runs in `HostProvider`'s `Drop`, so exactly once, when the last reference
//! goes: the core holds one while the provider is set (and a call in flight holds one until it
//! returns), and the handle keeps one per kind in `HostProviders`. When a provider is
//! replaced or cleared, the export first lets the core drop its reference, then drops the
//! handle's outside every lock. So `user_data_free` runs on the thread that replaced, cleared,
//! closed or freed (or, when a call of the provider was still running, on that call's thread
//! right after it returned), and never while depositkit holds a lock (so it may call depositkit
//! functions).
//!
//! # Balances
//!
//! `depositkit_deposit_client_wallet_balances` hands out an immutable list
//! ([`depositkit_funding_balances`]) of the core's opaque `FundingBalance` values. The list
//! remembers the client that issued it by a `Weak` reference to the handle's allocation (which
//! keeps the address from being reused by another client), so passing it to another client is
//! caught here, before the core's own check.
//!
//! One file per part, in the header's order (cbindgen reads them in the order of their names):
//! `callback.rs` (the callback type and its reply handles), `provider.rs` (a C callback as the
//! core's `WalletProvider`, and the handle's references to them), `wallet.rs` (setting,
//! clearing and connecting the wallets), `wallet_balances.rs` (the balance lists),
//! `wallet_transfer.rs` (`fund_from_wallet`).

use std::sync::{Mutex, MutexGuard};

mod callback;
mod provider;
#[cfg(test)]
mod tests;
mod wallet;
mod wallet_balances;
mod wallet_transfer;

pub use callback::{
    depositkit_provider_fn, depositkit_provider_reply, depositkit_provider_reply_error,
    depositkit_provider_reply_result,
};
pub(crate) use provider::{HostProviders, release_providers};
pub use wallet::{
    depositkit_deposit_client_clear_funding_wallet, depositkit_deposit_client_connect_evm_wallet,
    depositkit_deposit_client_connect_solana_wallet, depositkit_deposit_client_evm_accounts,
    depositkit_deposit_client_prompt_evm_account_selection,
    depositkit_deposit_client_set_balance_provider,
    depositkit_deposit_client_set_evm_wallet_provider,
    depositkit_deposit_client_set_evm_wallet_url,
    depositkit_deposit_client_set_solana_wallet_provider,
};
pub use wallet_balances::{
    depositkit_deposit_client_wallet_balances, depositkit_funding_balances,
    depositkit_funding_balances_free, depositkit_funding_balances_get,
    depositkit_funding_balances_len,
};
pub use wallet_transfer::depositkit_deposit_client_fund_from_wallet;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
