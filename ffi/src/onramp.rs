//! The fiat onramp (`docs/funding.md`, section 5; spec `openOnramp`): the widget URL for the host to
//! open, the overlay widget's messages turned into client events, and the last completed
//! order, over `depositkit_core::deposit::DepositClient::{open_onramp, handle_onramp_message,
//! last_onramp_order}`. Whether the destination is served is
//! `depositkit_deposit_client_is_onramp_supported` (in `deposit.rs`).

use std::ffi::c_char;

use depositkit_core::describe::quote;
use serde_json::Value;

use crate::boundary::{self, FfiError};
use crate::deposit::depositkit_deposit_client;
use crate::deposit::{client_arg, json_out};
use crate::status::depositkit_status;
use crate::strings;

/// The onramp widget URL for the host to open (in a browser, a web view, an iframe), buying
/// crypto delivered to the client's destination:
///
/// `{widgetUrl}?partnerKey=...&walletAddress=<destination address>&network=<ethereum|bsc|base|arbitrum|solana>&cryptoCurrency=<token>&fiatCurrency=<fiatCurrency>[&fiatAmount=...][&paymentMethod=...]&mode=<overlay|redirect>&partnerOrderId=<id>`
///
/// The token is the destination token when the onramp sells it on the destination chain
/// (`depositkit_is_onramp_token_supported`), else USDC. Options come from the `onramp`
/// configuration (`{"enabled": true, "apiKey": ..., "mode": "overlay" | "redirect",
/// "fiatCurrency": "USD", "defaultFiatAmount": ..., "paymentMode": ..., "widgetUrl": ...}`).
///
/// `fiat_amount` is the amount to pre-fill, as a decimal string in the fiat currency
/// (`"100"`, `"49.99"`); NULL uses `onramp.defaultFiatAmount` (or none).
///
/// On success `*out_url` is a new string owned by the caller (free it with
/// `depositkit_string_free`). It carries the partner key: depositkit never logs it, and the
/// host should not either. On failure it is not written.
///
/// In overlay mode, forward each message the widget posts to
/// `depositkit_deposit_client_handle_onramp_message`.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_CONFIGURATION` when the onramp is not
/// enabled, or the destination chain is not served (X Layer);
/// `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `fiat_amount` is not a decimal number, or is not
/// positive and finite (the message quotes it); `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client
/// is closed; `DEPOSITKIT_STATUS_NULL_ARGUMENT` when `client` or `out_url` is NULL;
/// `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Does not block (nothing is sent). Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `fiat_amount`
/// must be NULL or a NUL-terminated string; `out_url` must be NULL or point to a writable
/// `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_open_onramp(
    client: *const depositkit_deposit_client,
    fiat_amount: *const c_char,
    out_url: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        let amount = if fiat_amount.is_null() {
            None
        } else {
            // SAFETY: the caller's contract above.
            let text = unsafe { strings::str_arg(fiat_amount, "fiat_amount") }?;
            Some(fiat_amount_arg(text)?)
        };
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_url, "out_url") }?;
        let url = client.inner.open_onramp(amount)?;
        out.write(strings::owned(url)?);
        Ok(())
    })
}

/// Reads a fiat amount: a decimal number (`"100"`, `"49.99"`, `"1e3"`); the core checks that
/// it is positive and finite.
fn fiat_amount_arg(text: &str) -> Result<f64, FfiError> {
    let trimmed = text.trim();
    let plain = !trimmed.is_empty()
        && trimmed
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    match trimmed.parse::<f64>() {
        Ok(amount) if plain => Ok(amount),
        _ => Err(FfiError::new(
            depositkit_status::InvalidArgument,
            format!(
                "fiat_amount must be a decimal number such as \"100\" or \"49.99\", got {}",
                quote(text)
            ),
        )),
    }
}

/// Hands the client one message the onramp widget posted in overlay mode (`window.postMessage`
/// in a browser; the host forwards what it receives), a JSON object `{"event": "<name>",
/// "data": {order}}` with `<name>` one of `widget_opened`, `order_created`, `order_processing`,
/// `order_completed`, `order_failed`, `widget_closed`.
///
/// The client emits `{"type": "onramp:<name>", "payload": <data>}` (to the callbacks of
/// `depositkit_deposit_client_subscribe` and the pull queue of
/// `depositkit_deposit_client_next_event`), and for `order_completed` also `{"type":
/// "onramp:complete", "payload": {order}}`, where the order is `{"amount": "99", "token":
/// "USDC", "status": "completed", "id": "...", "destination": {"address": "0x...", "chainId":
/// 8453}, "fiatAmount": 100.0, "fiatCurrency": "USD", "txHash": "0x..." | null}` (read from the
/// widget's `cryptoAmount`, `cryptoCurrency`, `status`, `id`, `walletAddress`, `network`,
/// `fiatAmount`, `fiatCurrency`, `txHash`); that order is then the one
/// `depositkit_deposit_client_last_onramp_order` returns. The events are queued before this
/// returns.
///
/// On success `*out_delivered` is true when the message was turned into events (overlay mode),
/// false in redirect mode, which has no event channel: nothing is emitted. On failure it is not
/// written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_INVALID_ARGUMENT` when `message_json` is
/// not valid JSON, not such an object, names an unknown event, or (for `order_completed`) holds
/// a malformed order (the message names it); `DEPOSITKIT_STATUS_CONFIGURATION` when the onramp
/// is not enabled; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL; `DEPOSITKIT_STATUS_INVALID_UTF8`.
///
/// Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`; `message_json`
/// must be NULL or a NUL-terminated string; `out_delivered` must be NULL or point to a writable
/// `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_handle_onramp_message(
    client: *const depositkit_deposit_client,
    message_json: *const c_char,
    out_delivered: *mut bool,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let text = unsafe { strings::str_arg(message_json, "message_json") }?;
        let message: Value = serde_json::from_str(text).map_err(|e| {
            FfiError::new(
                depositkit_status::InvalidArgument,
                format!("message_json is not valid JSON ({e}): {}", quote(text)),
            )
        })?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_delivered, "out_delivered") }?;
        let delivered = client.inner.handle_onramp_message(&message)?;
        out.write(delivered);
        Ok(())
    })
}

/// The last onramp order completed in overlay mode (the payload of the last `"onramp:complete"`
/// event), if any.
///
/// On success `*out_order_json` is either a new string owned by the caller (free it with
/// `depositkit_string_free`), the order as `depositkit_deposit_client_handle_onramp_message`
/// describes it, or NULL when no order completed yet. On failure it is not written.
///
/// Returns `DEPOSITKIT_STATUS_OK`; `DEPOSITKIT_STATUS_DEPOSIT_SDK` when the client is closed;
/// `DEPOSITKIT_STATUS_NULL_ARGUMENT` when an argument is NULL. Does not block. Thread-safe.
///
/// # Safety
/// `client` must be NULL or a live handle from `depositkit_deposit_client_new`;
/// `out_order_json` must be NULL or point to a writable `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn depositkit_deposit_client_last_onramp_order(
    client: *const depositkit_deposit_client,
    out_order_json: *mut *mut c_char,
) -> depositkit_status {
    boundary::status(|| {
        // SAFETY: the caller's contract above.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: the caller's contract above.
        let out = unsafe { boundary::out(out_order_json, "out_order_json") }?;
        let order = match client.inner.last_onramp_order()? {
            Some(order) => json_out(serde_json::to_string(&order))?,
            None => std::ptr::null_mut(),
        };
        out.write(order);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp)]
    fn fiat_amounts_are_decimal_numbers() {
        assert_eq!(fiat_amount_arg("100").unwrap(), 100.0);
        assert_eq!(fiat_amount_arg("49.99").unwrap(), 49.99);
        // The core decides on the sign.
        assert_eq!(fiat_amount_arg("-5").unwrap(), -5.0);
        for bad in ["", "abc", "inf", "NaN", "1,5", "0x10", " "] {
            let err = fiat_amount_arg(bad).unwrap_err();
            assert_eq!(err.status, depositkit_status::InvalidArgument, "{bad:?}");
            assert!(
                err.message.contains("fiat_amount must be a decimal number"),
                "{}",
                err.message
            );
        }
    }
}
