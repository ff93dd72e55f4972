//! Config parsing: `DepositClientConfig::from_json`, then `validate` (the resolution that
//! `DepositClient::new` runs).
//!
//! Input: byte 0 picks the mode. Even: the rest is the whole configuration text. Odd: the rest
//! is a JSON value put under one option (byte 1 picks it) of a valid configuration, so that the
//! fuzzer explores every option's values without rebuilding the rest each time.
//! Properties: no panic; every refusal is a configuration error of at most
//! `describe::MAX_MESSAGE_CHARS` characters however long the input it quotes (issue 20: an
//! unknown field's name was repeated whole); a configuration that validates holds only valid
//! addresses, known chains and delays in range; parsing is deterministic.
#![no_main]

use depositkit_core::chains::Chain;
use depositkit_core::deposit::{MIN_POLLING_INTERVAL_MS, resolve_destination};
use depositkit_core::describe::MAX_MESSAGE_CHARS;
use depositkit_core::{
    DepositClientConfig, ErrorKind, is_valid_evm_address, validate_address_for_chain,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

const MAX_DELAY_MS: u64 = 24 * 60 * 60 * 1000;

/// Options, by their JSON path in the configuration.
const OPTIONS: [&[&str]; 36] = [
    &["ownerAddress"],
    &["intermediaryAddress"],
    &["destination"],
    &["destination", "chainId"],
    &["destination", "address"],
    &["destination", "token"],
    &["uaProjectId"],
    &["refund"],
    &["minValueUSD"],
    &["notifications"],
    &["funding"],
    &["funding", "evmRpcUrls"],
    &["funding", "apiKey"],
    &["funding", "proxyUrl"],
    &["funding", "balanceProvider"],
    &["onramp"],
    &["onramp", "fiatCurrency"],
    &["onramp", "defaultFiatAmount"],
    &["onramp", "widgetUrl"],
    &["supportedTokens"],
    &["supportedChains"],
    &["pollingIntervalMs"],
    &["minPollingIntervalMs"],
    &["autoSweep"],
    &["sweepRetryDelayMs"],
    &["reconcileIntervalMs"],
    &["processingTimeoutMs"],
    &["servicesUrl"],
    &["jwtServiceUrl"],
    &["signerUrl"],
    &["accountServiceUrl"],
    &["requestTimeoutMs"],
    &["httpRetries"],
    &["httpInitialBackoffMs"],
    &["callTimeoutMs"],
    &["eventQueueCapacity"],
];

fn base() -> Value {
    json!({
        "ownerAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
        "destination": {"chainId": 8453},
        "servicesUrl": "http://127.0.0.1:7420",
        "funding": {"enabled": true},
        "onramp": {"enabled": true},
    })
}

fuzz_target!(|data: &[u8]| {
    let [mode, rest @ ..] = data else { return };
    if mode % 2 == 0 {
        check(&String::from_utf8_lossy(rest));
        return;
    }
    let [which, value @ ..] = rest else { return };
    let Ok(value) = serde_json::from_slice::<Value>(value) else { return };
    let mut config = base();
    let path = OPTIONS[usize::from(*which) % OPTIONS.len()];
    let mut at = &mut config;
    for key in &path[..path.len() - 1] {
        at = &mut at[*key];
    }
    at[path[path.len() - 1]] = value;
    check(&config.to_string());
});

fn check(text: &str) {
    let show = std::env::var_os("FUZZ_SHOW").is_some();
    let config = match DepositClientConfig::from_json(text) {
        Ok(config) => config,
        Err(err) => {
            if show {
                // FUZZ_SHOW=1 fuzz/target/…/config INPUT…: what became of each input.
                eprintln!("{text} → from_json: {err}");
            }
            return refusal(&err);
        }
    };
    let again = DepositClientConfig::from_json(text).expect("parsing is deterministic");
    assert_eq!(format!("{config:?}"), format!("{again:?}"));
    let validated = config.validate();
    if show {
        eprintln!("{text} → validate: {:?}", validated.as_ref().map_err(|e| e.message()));
    }
    if let Err(err) = validated {
        return refusal(&err);
    }
    assert!(is_valid_evm_address(&config.owner_address), "{:?}", config.owner_address);
    if let Some(address) = &config.intermediary_address {
        assert!(is_valid_evm_address(address), "{address:?}");
    }
    let owner = config.owner_address.to_ascii_lowercase();
    let destination = resolve_destination(&config.destination, &owner).expect("validated");
    let chain = Chain::from_id(destination.chain_id).expect("a known destination chain");
    assert!(chain.is_destination());
    validate_address_for_chain(&destination.address, destination.chain_id)
        .expect("the destination address is valid for its chain");
    assert!(!config.supported_tokens.is_empty());
    assert!(!config.supported_chains.is_empty());
    assert!(config.supported_chains.iter().all(|id| Chain::from_id(*id).is_some()));
    assert!((1..=MIN_POLLING_INTERVAL_MS).contains(&config.min_polling_interval_ms));
    assert!((config.min_polling_interval_ms..=MAX_DELAY_MS).contains(&config.polling_interval_ms));
    assert!(config.min_value_usd.is_finite() && config.min_value_usd >= 0.0);
    for delay in [
        config.reconcile_interval_ms,
        config.processing_timeout_ms,
        config.request_timeout_ms,
        config.call_timeout_ms,
    ] {
        assert!((1..=MAX_DELAY_MS).contains(&delay));
    }
    assert!(config.sweep_retry_delay_ms <= MAX_DELAY_MS);
    assert!(config.http_retries <= 20);
    assert!(config.event_queue_capacity >= 1);
    assert!(config.services_url.is_some() || config.jwt_service_url.is_some());
    if let Some(amount) = config.onramp.default_fiat_amount {
        assert!(amount.is_finite() && amount > 0.0);
    }
    // The Debug forms never show a key: they do not change when the keys do.
    let mut other = config.clone();
    other.funding.api_key = other.funding.api_key.as_ref().map(|k| format!("{k}-other"));
    other.onramp.api_key = other.onramp.api_key.as_ref().map(|k| format!("{k}-other"));
    assert_eq!(format!("{config:?}"), format!("{other:?}"));
    assert_eq!(format!("{:?}", config.funding), format!("{:?}", other.funding));
    assert_eq!(format!("{:?}", config.onramp), format!("{:?}", other.onramp));
}

fn refusal(err: &depositkit_core::Error) {
    assert_eq!(err.kind(), ErrorKind::Configuration, "{err}");
    let chars = err.message().chars().count();
    assert!(chars <= MAX_MESSAGE_CHARS, "a message of {chars} characters: {err}");
}
