//! A C provider callback as the core's `WalletProvider`, and the references a client handle
//! keeps to its providers (so that it decides where the last one goes).

use std::ffi::{CString, c_char, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use depositkit_core::describe::quote;
use depositkit_core::funding::{ProviderError, WalletProvider};
use serde_json::Value;

use super::callback::{Answer, PendingReply, RawProviderFn, depositkit_provider_fn};
use super::lock;
use crate::boundary::{FfiError, FfiResult};
use crate::deposit::{client_arg, depositkit_deposit_client, depositkit_user_data_free};
use crate::strings;

/// A C provider with its `user_data`, as the core's `WalletProvider`. Dropping the last
/// reference calls `user_data_free`, once: only when the provider was set successfully
/// (`owned`): a failed registration leaves `user_data` to the caller.
pub(crate) struct HostProvider {
    callback: RawProviderFn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    /// Set once the provider was set: from then on the library owns `user_data`.
    owned: AtomicBool,
}

// SAFETY: the caller of the setters promises that the callback may be called with `user_data`
// on the library's threads and that `user_data_free` may be called on any thread; depositkit
// never dereferences `user_data`.
unsafe impl Send for HostProvider {}
// SAFETY: as above; the core never calls one provider twice at once.
unsafe impl Sync for HostProvider {}

impl HostProvider {
    fn new(
        callback: RawProviderFn,
        user_data: *mut c_void,
        user_data_free: depositkit_user_data_free,
    ) -> Arc<HostProvider> {
        Arc::new(HostProvider {
            callback,
            user_data,
            user_data_free,
            owned: AtomicBool::new(false),
        })
    }

    /// One request: opens a reply, calls the callback, reads the answer.
    fn call(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        let failure = |message: String| ProviderError::new(ProviderError::INTERNAL, message);
        let c_method = CString::new(method)
            .map_err(|_| failure(format!("the method name {} holds a NUL byte", quote(method))))?;
        // JSON text escapes control characters, so it never holds a NUL byte.
        let c_params = CString::new(params.to_string())
            .map_err(|_| failure(format!("the parameters of {method} hold a NUL byte")))?;
        let reply = PendingReply::open();
        // SAFETY: the caller of the setter promised a callback that may be called with its
        // `user_data` on this thread, reads `method` and `params_json` only during the call,
        // and never unwinds; both strings live until the call returns. `reply` is a number
        // the callback hands back to depositkit, never dereferenced.
        unsafe {
            (self.callback)(self.user_data, c_method.as_ptr(), c_params.as_ptr(), reply.handle())
        };
        match reply.take() {
            Some(Answer::Result(value)) => Ok(value),
            Some(Answer::Error(error)) => Err(error),
            None => Err(failure(format!(
                "the provider callback returned without answering {method}: answer with \
                 depositkit_provider_reply_result or depositkit_provider_reply_error before \
                 returning"
            ))),
        }
    }
}

impl WalletProvider for HostProvider {
    fn request(&self, method: &str, params: &Value) -> Result<Value, ProviderError> {
        contained(method, || self.call(method, params))
    }
}

/// Runs one request of the bridging so that no panic of it unwinds into the core's thread (or
/// through C): a panic becomes a provider failure.
pub(super) fn contained(
    method: &str,
    call: impl FnOnce() -> Result<Value, ProviderError>,
) -> Result<Value, ProviderError> {
    match panic::catch_unwind(AssertUnwindSafe(call)) {
        Ok(answer) => answer,
        Err(payload) => {
            // Dropping the payload runs its destructor, which may panic too: leak it then.
            if let Err(again) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
                std::mem::forget(again);
            }
            Err(ProviderError::new(
                ProviderError::INTERNAL,
                format!(
                    "depositkit panicked while calling the provider for {method}; this is a bug, \
                     please report it"
                ),
            ))
        }
    }
}

impl Drop for HostProvider {
    fn drop(&mut self) {
        if !self.owned.load(Ordering::Acquire) {
            return; // never set: `user_data` stays the caller's
        }
        if let Some(free) = self.user_data_free {
            // SAFETY: the caller of the setter promised `user_data_free` may be called once
            // with `user_data`, on any thread, once the provider is dropped: `Drop` runs once,
            // after every call of the callback returned (each holds a reference).
            unsafe { free(self.user_data) };
        }
    }
}

/// The host providers a client handle holds a reference to, so that it decides where the last
/// reference goes (see the module's documentation).
#[derive(Default)]
pub(crate) struct HostProviders(Mutex<Slots>);

#[derive(Default)]
struct Slots {
    evm: Option<Arc<HostProvider>>,
    solana: Option<Arc<HostProvider>>,
    balance: Option<Arc<HostProvider>>,
}

#[derive(Clone, Copy)]
pub(super) enum Kind {
    Evm,
    Solana,
    Balance,
}

impl HostProviders {
    /// Puts `provider` in the slot of `kind`; returns the one it replaces, to be dropped by the
    /// caller outside this lock.
    pub(super) fn replace(
        &self,
        kind: Kind,
        provider: Option<Arc<HostProvider>>,
    ) -> Option<Arc<HostProvider>> {
        let mut slots = lock(&self.0);
        let slot = match kind {
            Kind::Evm => &mut slots.evm,
            Kind::Solana => &mut slots.solana,
            Kind::Balance => &mut slots.balance,
        };
        std::mem::replace(slot, provider)
    }
}

/// Drops every provider of `client` (closing or freeing it, once the core's `close()` dropped its
/// own references): the handle's, outside every lock, so `user_data_free` runs here unless a
/// call of the provider is still running (then right after it returns, on its thread).
pub(crate) fn release_providers(client: &depositkit_deposit_client) {
    let released = std::mem::take(&mut *lock(&client.providers.0));
    drop(released);
}

/// The body of the provider setters: checks `client`, `provider` and `address` in order, sets
/// the provider through `set`, and on success records it in the slot of `kind` (the library
/// now owns `user_data`). On failure `user_data` stays the caller's.
///
/// # Safety
/// As the setters' contracts.
pub(super) unsafe fn set_host_provider(
    client: *const depositkit_deposit_client,
    kind: Kind,
    provider: depositkit_provider_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    address: *const c_char,
    set: impl FnOnce(
        &depositkit_deposit_client,
        Arc<dyn WalletProvider>,
        Option<&str>,
    ) -> depositkit_core::Result<()>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let client = unsafe { client_arg(client) }?;
    let callback = provider.ok_or_else(|| FfiError::null_argument("provider"))?;
    // SAFETY: the caller's contract above.
    let address = unsafe { strings::opt_str_arg(address, "address") }?;
    let host = HostProvider::new(callback, user_data, user_data_free);
    // Not `owned` yet: when `set` fails, dropping `host` leaves `user_data` alone.
    set(client, Arc::clone(&host) as Arc<dyn WalletProvider>, address)?;
    host.owned.store(true, Ordering::Release);
    let replaced = client.providers.replace(kind, Some(host));
    drop(replaced);
    Ok(())
}
