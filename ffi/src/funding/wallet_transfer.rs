//! `fund_from_wallet`: one entry of a balance list sent to the client's deposit address.

use std::ffi::c_char;

use depositkit_core::parse_raw_amount;

use super::wallet_balances::{balance_at, balances_arg, depositkit_funding_balances};
use crate::boundary::{self, FfiError};
use crate::deposit::{client_arg, depositkit_deposit_client, json_out};
use crate::status::depositkit_status;
use crate::strings;

/// Sends money from a funding wallet to the client's deposit address (spec `fundFromWallet`):
/// entry `index` of `balances` (from this client's `depositkit_deposit_client_wallet_balances`)
/// says which wallet, chain and token. The watcher then detects the transfer and sweeps it like
/// any deposit (with `"deposit:lifecycle"` events).
///
/// `raw_amount` is the amount in the token's smallest units as a decimal string (`"5000000"`
/// is 5 USDC on Base); NULL sends the most it can: the whole token balance, or for the native
/// asset the balance less the gas.
///
/// EVM: the wallet is switched to the balance's chain when needed; the gas price is
/// `eth_gasPrice` x 1.25; a native transfer uses 21,000 gas, an ERC-20 `transfer` the
/// estimate x 1.2, and the wallet's native balance must cover the gas. The transaction is sent
/// with `eth_sendTransaction` through the wallet and its receipt awaited. Solana: a system
/// transfer, or `TransferChecked` (creating the deposit address's token account when missing),
/// signed and sent by the wallet and confirmed. Nothing is sent when a check fails; nothing is
/// lost when the wallet rejects.
///
/// On success `*out_result_json` is a new string owned by the caller (free it with
/// `depositkit_string_free`):
///
/// ```json
/// {"txHash": "0x...", "chainId": 8453, "token": "USDC", "rawAmount": "5000000",
///  "amount": "5", "from": "0xf39f...", "to": "0x<deposit address>"}
/// ```
///
/// On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`, or:
/// - `DEPOSITKIT_STATUS_FUNDING` (502) saying why: `"insufficient gas: ..."` (naming the need
///   and the holding), `"insufficient funds: ..."`, `"rejected by the wallet (4001): ..."`,
///   `"RPC failure on <chain>: ..."`, `"transaction <hash> reverted"`, or no wallet set for
///   the balance's chain family;
/// - `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `index` is out of range, `balances` was issued
///   by another client, or `raw_amount` is not a decimal integer (or is zero or too large; the
///   message quotes it);
/// - `DEPOSITKIT_STATUS_CONFIGURATION` when funding is not enabled or the client is not
///   initialized; `DEPOSITKIT_STATUS_TIMEOUT` after `callTimeoutMs` (a transaction already sent
///   may still land); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
///   `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client`, `balances` or `out_result_json` is NULL;
///   `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Blocks the calling thread until the transfer is confirmed (up to `callTimeoutMs`); calls the
/// wallet's provider on a library thread. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `balances` must
/// be NULL or a live list from `depositkit_deposit_client_wallet_balances`; `raw_amount` must
/// be NULL or a NUL-terminated string; `out_result_json` must be NULL or point to a writable
/// `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_fund_from_wallet(
    client: *const depositkit_deposit_client,
    balances: *const depositkit_funding_balances,
    index: usize,
    raw_amount: *const c_char,
    out_result_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let handle = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let list = unsafe { balances_arg(balances) }?;
        let balance = balance_at(list, index)?;
        if !std::ptr::eq(list.issuer.as_ptr(), client) {
            return Err(FfiError::new(
                depositkit_status::InvalidArgument,
                format!(
                    "balances was issued by another client (entry {index}: {} on chain {} of \
                     wallet {}): pass a list from this client's \
                     depositkit_deposit_client_wallet_balances",
                    balance.token(),
                    balance.chain_id(),
                    balance.wallet_address()
                ),
            ));
        }
        // SAFETY: the caller's contract above.
        let raw_amount = match unsafe { strings::opt_str_arg(raw_amount, "raw_amount") }? {
            None => None,
            Some(text) => Some(parse_raw_amount(text).map_err(|e| {
                FfiError::new(
                    depositkit_status::InvalidArgument,
                    format!("raw_amount: {}", e.message()),
                )
            })?),
        };
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_result_json, "out_result_json") }?;
        let result = handle.inner.fund_from_wallet(balance, raw_amount)?;
        out.write(json_out(serde_json::to_string(&result))?);
        Ok(())
    })
}
