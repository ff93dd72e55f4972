//! The funding wallets of a client: set (a node URL or a host provider), cleared, connected,
//! their accounts; and the balance provider.

use std::ffi::{c_char, c_void};

use super::callback::depositkit_provider_fn;
use super::provider::{Kind, set_host_provider};
use crate::boundary::{self, FfiResult};
use depositkit_core::funding::EvmProvider;
use serde_json::Value;

use crate::deposit::{client_arg, depositkit_deposit_client, depositkit_user_data_free};
use crate::status::depositkit_status;
use crate::strings;

/// Sets the EVM funding wallet to a JSON-RPC node that holds the wallet's unlocked account
/// (anvil's development accounts, a local node): requests go to `url`, and
/// `wallet_switchEthereumChain` moves to the chain's entry of `funding.evmRpcUrls`. Replaces
/// the EVM wallet set before (a provider set with
/// `depositkit_deposit_client_set_evm_wallet_provider` is released: its `user_data_free` is
/// called).
///
/// `address` (NULL: asked from the node with `eth_accounts` on first use) is the account to
/// send from. A funding wallet is never the owner or signer of the deposit account: it only
/// sends money to the deposit addresses.
///
/// The URL may hold an API key in its path: depositkit never logs it. Nothing is sent now.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not
/// enabled (`"funding": {"enabled": true}` in the configuration) or `url` is not an http(s)
/// URL; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `address` is not an EVM address (the message
/// quotes it); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` or `url` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8`. On failure the wallet set before stays.
///
/// Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `url` and
/// `address` must be NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_evm_wallet_url(
    client: *const depositkit_deposit_client,
    url: *const c_char,
    address: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let url = unsafe { strings::str_arg(url, "url") }?;
        // SAFETY: the caller's contract above.
        let address = unsafe { strings::opt_str_arg(address, "address") }?;
        client.inner.set_evm_wallet(EvmProvider::Url(url.to_owned()), address)?;
        let replaced = client.providers.replace(Kind::Evm, None);
        drop(replaced);
        Ok(())
    })
}

/// Sets the EVM funding wallet to a host provider: an EIP-1193 wallet behind `provider` (see
/// `depositkit_provider_fn`). depositkit asks it `eth_requestAccounts`, `eth_accounts`,
/// `wallet_requestPermissions`, `eth_chainId`, `wallet_switchEthereumChain`, `eth_gasPrice`,
/// `eth_estimateGas`, `eth_getBalance`, `eth_call`, `eth_sendTransaction` and
/// `eth_getTransactionReceipt` (receipts and reads may go to `funding.evmRpcUrls` instead).
/// Replaces the EVM wallet set before (releasing a previous provider's `user_data`).
///
/// `address` (NULL: the wallet's first `eth_accounts` entry, asked on first use, or the one
/// `depositkit_deposit_client_connect_evm_wallet` picks) is the account to send from.
///
/// On success the library owns `user_data`: `user_data_free` (if not NULL) is called with it
/// exactly once, when the provider is dropped (replaced by another EVM wallet, cleared with
/// `depositkit_deposit_client_clear_funding_wallet`, or the client closed or freed), on the
/// thread doing that (or, when a call of the provider is running at that moment, on that call's
/// thread once it returns), never while a call of `provider` runs and never while the library
/// holds a lock. On failure nothing is set and `user_data_free` is not called (`user_data`
/// stays the caller's).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not
/// enabled; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `address` is not an EVM address;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`
/// when `client` or `provider` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Does not block; nothing is asked of the wallet now. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `address` must
/// be NULL or a NUL-terminated string. `provider` must follow the rules of
/// `depositkit_provider_fn`; `user_data` (which may be NULL) must stay valid for it until
/// `user_data_free` is called (or, without `user_data_free`, until the provider is dropped) and
/// may be used on the library's threads; `user_data_free` must be safe to call on any thread
/// and must not unwind or `longjmp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_evm_wallet_provider(
    client: *const depositkit_deposit_client,
    provider: depositkit_provider_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    address: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        unsafe {
            set_host_provider(client, Kind::Evm, provider, user_data, user_data_free, address, {
                |c, host, address| c.inner.set_evm_wallet(EvmProvider::Host(host), address)
            })
        }
    })
}

/// Sets the Solana funding wallet to a host provider with Phantom's shape (see
/// `depositkit_provider_fn`): depositkit asks it `connect` (answer `{"publicKey":
/// "<base58>"}`) and `signAndSendTransaction` with `{"transaction": "<base64 of the unsigned
/// transaction depositkit built>", "encoding": "base64"}` (answer `{"signature": "<base58>"}`
/// or the bare signature string). Blockhashes, balances and confirmations come from
/// `funding.solanaRpcUrl`. Replaces the Solana wallet set before (releasing its `user_data`).
///
/// `address` (NULL: known after `depositkit_deposit_client_connect_solana_wallet`) is the
/// wallet's public key, base58.
///
/// Ownership of `user_data` and the calls of `user_data_free` are as for
/// `depositkit_deposit_client_set_evm_wallet_provider` (replaced by another Solana wallet,
/// cleared, or the client closed or freed).
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not
/// enabled; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `address` is not a Solana address;
/// `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT`
/// when `client` or `provider` is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Does not block. Thread-safe.
///
/// # Safety
/// As for `depositkit_deposit_client_set_evm_wallet_provider`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_solana_wallet_provider(
    client: *const depositkit_deposit_client,
    provider: depositkit_provider_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
    address: *const c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        unsafe {
            set_host_provider(client, Kind::Solana, provider, user_data, user_data_free, address, {
                |c, host, address| c.inner.set_solana_wallet(host, address)
            })
        }
    })
}

/// Sets (or, with `provider` NULL, removes) the host's balance provider, the first source of
/// `depositkit_deposit_client_wallet_balances` when set (ahead of `funding.balanceProvider:
/// "rpc"`, `apiKey`, `proxyUrl` and the hosted default; `docs/funding.md`, section 3).
///
/// depositkit calls it with method `"getWalletBalances"` and params `{"evmAddress": "0x..." |
/// null, "solanaAddress": "..." | null, "chainIds": [1, 56, 8453, 42161, 101]}`; it answers the
/// balances array `[{"chainId": 8453, "token": "USDC", "tokenAddress": "0x..." | null,
/// "decimals": 6, "rawAmount": "25000000", "priceUSD": 1.0 | null, "valueUSD": 25.0 | null}]`
/// (or `{"balances": [...]}`). `evmAddress` is EIP-55 checksummed, as is every EVM wallet
/// address depositkit hands out (a balance's `walletAddress`, the connected account).
///
/// Ownership of `user_data` and the calls of `user_data_free` are as for
/// `depositkit_deposit_client_set_evm_wallet_provider` (replaced by another balance provider,
/// removed, or the client closed or freed). With `provider` NULL, `user_data` and
/// `user_data_free` are ignored.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`. `provider`,
/// `user_data` and `user_data_free` follow the rules of
/// `depositkit_deposit_client_set_evm_wallet_provider`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_set_balance_provider(
    client: *const depositkit_deposit_client,
    provider: depositkit_provider_fn,
    user_data: *mut c_void,
    user_data_free: depositkit_user_data_free,
) -> depositkit_status {
    boundary::status(|| {
        if provider.is_none() {
            // SAFETY: the caller's contract above.
            let client = unsafe { client_arg(client) }?;
            client.inner.set_balance_provider(None)?;
            let removed = client.providers.replace(Kind::Balance, None);
            drop(removed);
            return Ok(());
        }
        // SAFETY: the caller's contract above.
        unsafe {
            set_host_provider(
                client,
                Kind::Balance,
                provider,
                user_data,
                user_data_free,
                std::ptr::null(),
                |c, host, _| c.inner.set_balance_provider(Some(host)),
            )
        }
    })
}

/// Forgets both funding wallets (EVM and Solana; the balance provider stays). Their providers
/// are released: `user_data_free` is called for each host provider, as described at
/// `depositkit_deposit_client_set_evm_wallet_provider`. Funding operations then fail with
/// `DEPOSITKIT_STATUS_FUNDING` ("no EVM wallet is connected") until a wallet is set again.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` is NULL.
/// Works on a closed client too. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_clear_funding_wallet(
    client: *const depositkit_deposit_client,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        client.inner.clear_funding_wallet();
        let evm = client.providers.replace(Kind::Evm, None);
        let solana = client.providers.replace(Kind::Solana, None);
        drop((evm, solana));
        Ok(())
    })
}

/// The body of the exports that ask a wallet one thing and hand out a string.
///
/// # Safety
/// `client` must be NULL or a live handle; `out` must be NULL or point to a writable `char *`.
unsafe fn wallet_answer(
    client: *const depositkit_deposit_client,
    out: *mut *mut c_char,
    out_name: &'static str,
    ask: impl FnOnce(&depositkit_deposit_client) -> FfiResult<String>,
) -> FfiResult<()> {
    // SAFETY: the caller's contract above.
    let client = unsafe { client_arg(client) }?;
    // SAFETY: the caller's contract above.
    let out = unsafe { boundary::out(out, out_name) }?;
    let text = ask(client)?;
    out.write(strings::owned(text)?);
    Ok(())
}

/// Connects the EVM funding wallet (`eth_requestAccounts`; a wallet may prompt its user): the
/// first account becomes the wallet's address, used by later transfers and balance reads.
///
/// On success `*out_address` is a new string owned by the caller (free it with
/// `depositkit_string_free`): that account, as the wallet spelled it. On failure it is not
/// written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_FUNDING` when no EVM wallet is set ("no EVM wallet is connected"), the
///   wallet rejected the request ("rejected by the wallet (4001): ..."), failed it, or answered
///   no account or an invalid one;
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not enabled;
/// - `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the
///   client is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL.
///
/// Blocks the calling thread while the wallet answers (up to `callTimeoutMs`); calls the
/// provider on a library thread. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_address`
/// must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_connect_evm_wallet(
    client: *const depositkit_deposit_client,
    out_address: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        wallet_answer(client, out_address, "out_address", |c| Ok(c.inner.connect_evm_wallet()?))
    })
}

/// The EVM funding wallet's accounts (`eth_accounts`, no prompt).
///
/// On success `*out_accounts_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): a JSON array of addresses, `["0xf39F..."]` (empty when the
/// wallet shares none). On failure it is not written.
///
/// Returns as `depositkit_deposit_client_connect_evm_wallet`. Blocks while the wallet answers.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_accounts_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_evm_accounts(
    client: *const depositkit_deposit_client,
    out_accounts_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        wallet_answer(client, out_accounts_json, "out_accounts_json", |c| {
            let accounts = c.inner.evm_accounts()?;
            Ok(Value::from(accounts).to_string())
        })
    })
}

/// Lets the user pick the EVM wallet's accounts again (`wallet_requestPermissions
/// [{"eth_accounts": {}}]`, then `eth_accounts`); the first account becomes the wallet's
/// address.
///
/// On success `*out_accounts_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the JSON array of the accounts now shared. On failure it is not
/// written.
///
/// Returns as `depositkit_deposit_client_connect_evm_wallet`. Blocks while the wallet answers.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_accounts_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_prompt_evm_account_selection(
    client: *const depositkit_deposit_client,
    out_accounts_json: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        wallet_answer(client, out_accounts_json, "out_accounts_json", |c| {
            let accounts = c.inner.prompt_evm_account_selection()?;
            Ok(Value::from(accounts).to_string())
        })
    })
}

/// Connects the Solana funding wallet (Phantom's `connect`; a wallet may prompt its user): its
/// public key becomes the wallet's address.
///
/// On success `*out_address` is a new string owned by the caller (free it with
/// `depositkit_string_free`): the public key, base58. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or `DEPOSITKIT_STATUS_FUNDING` when no Solana wallet is set,
/// the wallet rejected or failed the request, or answered no valid public key; otherwise as
/// `depositkit_deposit_client_connect_evm_wallet`. Blocks while the wallet answers.
/// Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `out_address`
/// must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_connect_solana_wallet(
    client: *const depositkit_deposit_client,
    out_address: *mut *mut c_char,
) -> depositkit_status {
    // SAFETY: the caller's contract above.
    boundary::status(|| unsafe {
        wallet_answer(client, out_address, "out_address", |c| {
            Ok(c.inner.connect_solana_wallet()?)
        })
    })
}
