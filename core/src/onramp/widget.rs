//! The widget URL the host opens, with the partner key and the order's parameters.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::messages::network_name;
use crate::chains::{Chain, get_chain_name};
use crate::deposit::config::{
    BUILTIN_ONRAMP_PARTNER_KEY, DEFAULT_ONRAMP_WIDGET_URL, Destination, OnrampConfig,
};
use crate::error::{Error, Result};
use crate::tokens::{TokenType, is_onramp_token_supported};

/// RFC 3986's unreserved characters stay as they are; everything else is percent-encoded.
const QUERY_VALUE: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// The widget URL for `destination` (`docs/funding.md` §5). `fiat_amount` overrides
/// `onramp.defaultFiatAmount`.
///
/// # Errors
/// [`ErrorKind::Configuration`](crate::ErrorKind::Configuration) when the onramp does not
/// serve the destination chain; [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
/// for a non-positive or non-finite amount.
pub fn widget_url(
    config: &OnrampConfig,
    destination: &Destination,
    fiat_amount: Option<f64>,
    partner_order_id: &str,
) -> Result<String> {
    let network = network_name(destination.chain_id)
        .filter(|_| Chain::from_id(destination.chain_id).is_some_and(Chain::is_onramp_chain))
        .ok_or_else(|| {
            Error::configuration(format!(
                "the onramp does not serve {} ({}); it serves Ethereum, BNB Chain, Base, Arbitrum and Solana",
                get_chain_name(destination.chain_id),
                destination.chain_id
            ))
        })?;
    if let Some(amount) = fiat_amount
        && (!amount.is_finite() || amount <= 0.0)
    {
        return Err(Error::invalid_argument(format!(
            "the fiat amount must be a positive number, got {amount}"
        )));
    }
    let token = if is_onramp_token_supported(destination.token, destination.chain_id) {
        destination.token
    } else {
        TokenType::USDC
    };
    let base = config.widget_url.as_deref().unwrap_or(DEFAULT_ONRAMP_WIDGET_URL);
    let key = config.api_key.as_deref().unwrap_or(BUILTIN_ONRAMP_PARTNER_KEY);
    let mut params: Vec<(&str, String)> = vec![
        ("partnerKey", key.to_owned()),
        ("walletAddress", destination.address.clone()),
        ("network", network.to_owned()),
        ("cryptoCurrency", token.symbol().to_owned()),
        ("fiatCurrency", config.fiat_currency.clone()),
    ];
    if let Some(amount) = fiat_amount.or(config.default_fiat_amount) {
        params.push(("fiatAmount", amount.to_string()));
    }
    if let Some(method) = &config.payment_mode {
        params.push(("paymentMethod", method.clone()));
    }
    params.push(("mode", config.mode.as_str().to_owned()));
    params.push(("partnerOrderId", partner_order_id.to_owned()));
    let query: Vec<String> = params
        .iter()
        .map(|(name, value)| format!("{name}={}", utf8_percent_encode(value, QUERY_VALUE)))
        .collect();
    let joiner = if base.contains('?') { '&' } else { '?' };
    Ok(format!("{base}{joiner}{}", query.join("&")))
}

/// A fresh `partnerOrderId`.
pub(crate) fn new_partner_order_id() -> String {
    format!("dk_{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deposit::config::OnrampMode;

    fn destination(chain_id: u64, token: TokenType) -> Destination {
        Destination {
            chain_id,
            address: "0x52908400098527886e0f7030069857d2e4169ee7".into(),
            token,
        }
    }

    #[test]
    fn url_has_every_parameter_encoded() {
        let config = OnrampConfig {
            enabled: true,
            api_key: Some("pk live&key".into()),
            payment_mode: Some("apple_pay".into()),
            ..Default::default()
        };
        let url =
            widget_url(&config, &destination(8453, TokenType::ETH), Some(150.5), "dk_1").unwrap();
        assert_eq!(
            url,
            "https://onramp.depositkit.dev/widget?partnerKey=pk%20live%26key\
             &walletAddress=0x52908400098527886e0f7030069857d2e4169ee7&network=base\
             &cryptoCurrency=ETH&fiatCurrency=USD&fiatAmount=150.5&paymentMethod=apple_pay\
             &mode=overlay&partnerOrderId=dk_1"
        );
    }

    #[test]
    fn defaults_and_fallbacks() {
        let config = OnrampConfig {
            enabled: true,
            mode: OnrampMode::Redirect,
            default_fiat_amount: Some(50.0),
            widget_url: Some("http://127.0.0.1:9/onramp/widget?x=1".into()),
            ..Default::default()
        };
        // USDT is not bought on Base: USDC instead.
        let url = widget_url(&config, &destination(56, TokenType::ETH), None, "id").unwrap();
        assert!(
            url.starts_with(
                "http://127.0.0.1:9/onramp/widget?x=1&partnerKey=pk_depositkit_builtin_onramp&"
            ),
            "{url}"
        );
        assert!(url.contains("&network=bsc&cryptoCurrency=USDC&"), "{url}");
        assert!(url.contains("&fiatAmount=50&mode=redirect&"), "{url}");
        let err = widget_url(&config, &destination(10, TokenType::USDC), None, "id").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Configuration);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err =
                widget_url(&config, &destination(1, TokenType::USDC), Some(bad), "id").unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{bad}");
        }
    }
}
