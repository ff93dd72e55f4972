//! devnet's simulated fiat onramp (`docs/funding.md` §5): the widget page
//! (`GET {servicesUrl}/onramp/widget?…`) and the endpoint that completes an order
//! (`POST {servicesUrl}/onramp/v1/orders` with the widget URL's parameters as a JSON object).
//!
//! An order buys `cryptoAmount = fiatAmount / price − 1%` (the fiat amount taken as US dollars:
//! devnet has no exchange rates), truncated to the token's smallest unit, and credits it to
//! `walletAddress` on the network's chain at once — a real transfer from the vault on a
//! chain-backed chain, else a credit on devnet's ledger (a deposit when the address is an
//! account's). The answer is `{"order": {…}, "messages": [order_created, order_processing,
//! order_completed]}`: the messages the overlay would post, for the host to forward to
//! `handle_onramp_message`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use depositkit_core::onramp::{network_chain_id, network_name};
use depositkit_core::{
    TokenType, U256, format_units, get_token_decimals, is_onramp_token_supported, parse_units,
    validate_address_for_chain,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Services;
use super::api::{ApiError, ApiResult, blocking, codes, read_json, reply};
use super::fees;
use crate::chain::transfers;
use crate::describe::quote as quoted;
use crate::http::AppState;
use crate::store::Credit;
use crate::time;

/// The fiat amount of an order that names none, in US dollars.
pub const DEFAULT_FIAT_AMOUNT: &str = "100";
/// The provider's fee, in basis points of the fiat amount.
pub const FEE_BPS: u64 = 100;
/// The largest fiat amount of one order.
const MAX_FIAT_AMOUNT: u64 = 1_000_000_000;

/// The two routes.
pub(crate) fn router() -> Router<Arc<AppState>> {
    Router::new().route("/onramp/widget", get(widget)).route("/onramp/v1/orders", post(orders))
}

/// The widget URL's parameters (every one optional on the wire; `fiatAmount` a string or a
/// number).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderParams {
    pub partner_key: Option<String>,
    pub wallet_address: Option<String>,
    pub network: Option<String>,
    pub crypto_currency: Option<String>,
    pub fiat_currency: Option<String>,
    pub fiat_amount: Option<Value>,
    pub payment_method: Option<String>,
    pub mode: Option<String>,
    pub partner_order_id: Option<String>,
}

/// Completes an order: credits the crypto and answers `{"order", "messages"}`. Blocking.
///
/// # Errors
/// 401 `INVALID_PARTNER_KEY` without a partner key; 400 `INVALID_REQUEST` for a bad network,
/// token, address or amount; 502 `CHAIN_UNAVAILABLE`.
pub fn complete_order(services: &Services, params: &OrderParams) -> ApiResult {
    if params.partner_key.as_deref().is_none_or(|k| k.trim().is_empty()) {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            codes::INVALID_PARTNER_KEY,
            "the order has no partnerKey",
        ));
    }
    let network = params.network.as_deref().unwrap_or_default().trim();
    let chain_id = network_chain_id(network).ok_or_else(|| {
        ApiError::invalid(format!(
            "network: {} is not one of ethereum, bsc, base, arbitrum, solana",
            quoted(network)
        ))
    })?;
    let symbol = params.crypto_currency.as_deref().unwrap_or_default().trim();
    let token: TokenType = symbol.parse().map_err(|e: depositkit_core::Error| {
        ApiError::invalid(format!("cryptoCurrency: {}", e.message()))
    })?;
    if !is_onramp_token_supported(token, chain_id) {
        return Err(ApiError::invalid(format!("cryptoCurrency: {token} is not sold on {network}")));
    }
    let wallet = params.wallet_address.as_deref().unwrap_or_default().trim();
    validate_address_for_chain(wallet, chain_id)
        .map_err(|e| ApiError::invalid(format!("walletAddress: {}", e.message())))?;
    let fiat_currency =
        params.fiat_currency.as_deref().map_or("USD", str::trim).to_ascii_uppercase();
    if fiat_currency.len() != 3 || !fiat_currency.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(ApiError::invalid(format!(
            "fiatCurrency: {} is not a currency code",
            quoted(&fiat_currency)
        )));
    }
    let fiat_text = match &params.fiat_amount {
        None | Some(Value::Null) => DEFAULT_FIAT_AMOUNT.to_owned(),
        Some(Value::String(text)) => text.trim().to_owned(),
        Some(Value::Number(number)) => number.to_string(),
        Some(other) => {
            return Err(ApiError::invalid(format!("fiatAmount: {other} is not an amount")));
        }
    };
    let fiat = parse_units(&fiat_text, fees::USD_DECIMALS)
        .ok()
        .filter(|v| !v.is_zero() && *v <= U256::from(MAX_FIAT_AMOUNT) * pow10(fees::USD_DECIMALS))
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "fiatAmount: {} is not an amount between 0 and {MAX_FIAT_AMOUNT}",
                quoted(&fiat_text)
            ))
        })?;
    let decimals = get_token_decimals(token, Some(chain_id));
    let price = services.prices.usd(token);
    let raw = crypto_amount(fiat, price, decimals);
    if raw.is_zero() {
        return Err(ApiError::invalid(format!("fiatAmount: {fiat_text} buys no {token}")));
    }

    let tx_hash = match services.chain_backed(chain_id) {
        Some(chains) => transfers::vault_transfer(chains, chain_id, token, wallet, raw)?,
        None => {
            let credit = Credit {
                address: wallet,
                chain_id,
                token,
                raw_amount: raw,
                sender: None,
                price_usd: price,
            };
            let tx_hash = services.store.credit(&credit).map_err(ApiError::from)?.tx_hash;
            crate::simchain::record_credit(services, &credit, &tx_hash);
            tx_hash
        }
    };

    let fiat_amount: f64 = fiat_text.parse().unwrap_or(f64::NAN);
    let mut order = json!({
        "id": format!("ord_{}", alloy_primitives::hex::encode(rand::random::<[u8; 12]>())),
        "partnerOrderId": params.partner_order_id,
        "status": "completed",
        "walletAddress": wallet,
        "network": network_name(chain_id).unwrap_or(network),
        "chainId": chain_id,
        "cryptoCurrency": token,
        "cryptoAmount": format_units(raw, u32::from(decimals)).unwrap_or_else(|_| raw.to_string()),
        "cryptoRawAmount": raw.to_string(),
        "fiatCurrency": fiat_currency,
        "fiatAmount": fiat_amount,
        "paymentMethod": params.payment_method,
        "txHash": tx_hash,
        "createdAt": time::now_ms(),
    });
    let at = |status: &str, tx: bool| {
        let mut data = order.clone();
        data["status"] = json!(status);
        if !tx {
            data["txHash"] = Value::Null;
        }
        data
    };
    let messages = json!([
        {"event": "order_created", "data": at("created", false)},
        {"event": "order_processing", "data": at("processing", false)},
        {"event": "order_completed", "data": at("completed", true)},
    ]);
    order["status"] = json!("completed");
    Ok(json!({ "order": order, "messages": messages }))
}

/// `fiat` (atto-USD) less the fee, in the smallest units of a token of `decimals` at
/// `price_usd`, truncated.
pub fn crypto_amount(fiat: U256, price_usd: f64, decimals: u8) -> U256 {
    let price = fees::price_units(price_usd) * pow10(fees::USD_DECIMALS - fees::PRICE_DECIMALS);
    if price.is_zero() {
        return U256::ZERO;
    }
    let net = fiat * U256::from(10_000 - FEE_BPS) / U256::from(10_000u64);
    net.checked_mul(pow10(u32::from(decimals))).map_or(U256::ZERO, |scaled| scaled / price)
}

fn pow10(exponent: u32) -> U256 {
    U256::from(10u64).pow(U256::from(exponent))
}

async fn orders(State(app): State<Arc<AppState>>, body: Body) -> Response {
    let result = async {
        let params: OrderParams = read_json(body, app.max_body_bytes).await?;
        let services = Arc::clone(&app.services);
        blocking(move || complete_order(&services, &params)).await
    };
    reply(result.await)
}

/// The widget: the order's parameters and a form that completes it.
async fn widget(Query(params): Query<BTreeMap<String, String>>) -> Response {
    let mut response = (StatusCode::OK, widget_page(&params)).into_response();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    response
}

/// The fields the widget's form shows, in order.
const FIELDS: [&str; 9] = [
    "partnerKey",
    "walletAddress",
    "network",
    "cryptoCurrency",
    "fiatCurrency",
    "fiatAmount",
    "paymentMethod",
    "mode",
    "partnerOrderId",
];

/// The HTML of the widget for `params` (every value escaped).
pub fn widget_page(params: &BTreeMap<String, String>) -> String {
    let rows: String = FIELDS
        .iter()
        .map(|name| {
            let value = escape(params.get(*name).map_or("", String::as_str));
            let kind = if *name == "partnerKey" { "password" } else { "text" };
            format!(
                "<tr><td><label for=\"{name}\">{name}</label></td>\
                 <td><input id=\"{name}\" name=\"{name}\" type=\"{kind}\" value=\"{value}\"></td></tr>\n"
            )
        })
        .collect();
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>depositkit devnet onramp</title></head>
<body>
<h1>Buy crypto (devnet simulation)</h1>
<p>No money moves: completing the order credits the crypto at once.</p>
<form id="order" method="post" action="v1/orders">
<table>
{rows}</table>
<button type="submit">Complete the order</button>
</form>
<pre id="result"></pre>
<script>
document.getElementById("order").addEventListener("submit", async (event) => {{
  event.preventDefault();
  const body = Object.fromEntries(new FormData(event.target).entries());
  const answer = await fetch("v1/orders", {{method: "POST",
    headers: {{"Content-Type": "application/json"}}, body: JSON.stringify(body)}});
  const json = await answer.json();
  document.getElementById("result").textContent = JSON.stringify(json, null, 2);
  if (answer.ok && window.parent !== window) {{
    for (const message of json.messages) window.parent.postMessage(message, "*");
  }}
}});
</script>
</body></html>
"#
    )
}

/// `text` safe inside HTML text and double-quoted attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_and_fee() {
        let usd = |text: &str| parse_units(text, fees::USD_DECIMALS).unwrap();
        // 25 USD of USDC at 1: 24.75 USDC.
        assert_eq!(crypto_amount(usd("25"), 1.0, 6), U256::from(24_750_000u64));
        // 100 USD of ETH at 2500: 0.0396 ETH.
        assert_eq!(crypto_amount(usd("100"), 2500.0, 18), U256::from(39_600_000_000_000_000u64));
        assert_eq!(crypto_amount(usd("0.000001"), 1.0, 6), U256::ZERO);
        assert_eq!(crypto_amount(usd("1"), 0.0, 6), U256::ZERO);
    }

    #[test]
    fn the_page_escapes_what_it_echoes() {
        let params = BTreeMap::from([
            ("walletAddress".to_owned(), "<script>alert(1)</script>".to_owned()),
            ("network".to_owned(), "base\" onfocus=\"x".to_owned()),
        ]);
        let page = widget_page(&params);
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("base&quot; onfocus=&quot;x"));
        assert!(page.contains("action=\"v1/orders\""));
    }
}
