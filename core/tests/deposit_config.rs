//! Every configuration error of the deposit client: kind and message, before any network use.

use depositkit_core::deposit::{DepositClient, DepositClientConfig, DestinationConfig};
use depositkit_core::{ErrorKind, TokenType};

const OWNER: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
const SOLANA: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

fn config(destination: DestinationConfig) -> DepositClientConfig {
    DepositClientConfig::new(OWNER, destination).with_services_url("http://127.0.0.1:9")
}

fn error(config: DepositClientConfig) -> String {
    let err = DepositClient::new(config).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration, "{err}");
    err.message().to_owned()
}

#[test]
fn a_valid_config_builds_a_client_without_network() {
    let client = DepositClient::new(config(DestinationConfig::chain(42161))).unwrap();
    assert_eq!(client.owner_address(), OWNER.to_lowercase());
    let d = client.get_destination().unwrap();
    assert_eq!(
        (d.chain_id, d.token, d.address.as_str()),
        (42161, TokenType::USDC, client.owner_address())
    );
}

#[test]
fn bad_owner() {
    let mut c = config(DestinationConfig::chain(1));
    c.owner_address = String::new();
    assert_eq!(error(c), "ownerAddress is required");
    let mut c = config(DestinationConfig::chain(1));
    c.owner_address = SOLANA.into();
    let m = error(c);
    assert!(m.starts_with("ownerAddress must be a valid EVM address: \"EPjF"), "{m}");
    let mut c = config(DestinationConfig::chain(1));
    c.owner_address = "0x52908400098527886E0F7030069857D2E4169Ee7".into(); // bad checksum
    let m = error(c);
    assert!(m.contains("checksum"), "{m}");
}

#[test]
fn bad_destination_chain() {
    let m = error(config(DestinationConfig::chain(12345)));
    assert_eq!(m, "Invalid destination chain ID: 12345. Use a chain from the CHAIN constant.");
    let m = error(config(DestinationConfig::chain(137)));
    assert!(m.starts_with("destination.chainId 137: Polygon cannot be a destination."), "{m}");
    assert!(
        m.contains("Ethereum (1), BNB Chain (56), Base (8453), Arbitrum (42161), Solana (101)"),
        "{m}"
    );
}

#[test]
fn x_layer_is_never_a_destination() {
    let m = error(config(DestinationConfig::chain(196)));
    assert!(m.contains("X Layer is a deposit source only and cannot be a destination"), "{m}");
}

#[test]
fn token_not_deliverable() {
    let m = error(config(DestinationConfig::chain(8453).with_token(TokenType::USDT)));
    assert_eq!(
        m,
        "destination.token USDT cannot be delivered on Base (8453); deliverable there: ETH, USDC"
    );
    let m = error(config(DestinationConfig::chain(1).with_token(TokenType::BTC)));
    assert!(m.starts_with("destination.token BTC cannot be delivered on Ethereum (1)"), "{m}");
    let m = error(config(
        DestinationConfig::chain(101).with_address(SOLANA).with_token(TokenType::ETH),
    ));
    assert!(m.contains("deliverable there: USDC, USDT, SOL"), "{m}");
}

#[test]
fn bad_address_for_the_chain_type() {
    let m = error(config(DestinationConfig::chain(101)));
    assert!(
        m.starts_with("Invalid Solana address format for destination on Solana: \"0x5290"),
        "{m}"
    );
    let m = error(config(DestinationConfig::chain(101).with_address("0OIl")));
    assert!(
        m.starts_with("Invalid Solana address format for destination on Solana: \"0OIl\""),
        "{m}"
    );
    let m = error(config(DestinationConfig::chain(42161).with_address(SOLANA)));
    assert!(m.starts_with("Invalid EVM address format for destination on Arbitrum: \"EPjF"), "{m}");
    // set_destination applies the same rules and keeps the old destination.
    let client = DepositClient::new(config(DestinationConfig::chain(1))).unwrap();
    let err =
        client.set_destination(DestinationConfig::chain(56).with_address("0x12")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert_eq!(client.get_destination().unwrap().chain_id, 1);
    let ok = client.set_destination(DestinationConfig::chain(101).with_address(SOLANA)).unwrap();
    assert_eq!(ok.address, SOLANA);
}

#[test]
fn polling_below_the_minimum() {
    let mut c = config(DestinationConfig::chain(1));
    c.polling_interval_ms = 1999;
    assert_eq!(
        error(c),
        "pollingIntervalMs must be at least 2000 ms (and at most a day), got 1999"
    );
    let mut c = config(DestinationConfig::chain(1));
    c.polling_interval_ms = 100;
    c.min_polling_interval_ms = 50; // the test knob
    DepositClient::new(c).unwrap();
    let mut c = config(DestinationConfig::chain(1));
    c.min_polling_interval_ms = 0;
    assert!(error(c).starts_with("minPollingIntervalMs must be between 1 and 2000"));
}

type Tune = Box<dyn Fn(&mut DepositClientConfig)>;

#[test]
fn other_options_name_the_option_and_value() {
    let cases: Vec<(Tune, &str)> = vec![
        (
            Box::new(|c| c.intermediary_address = Some("0xnope".into())),
            "intermediaryAddress must be a valid EVM address: \"0xnope\"",
        ),
        (Box::new(|c| c.min_value_usd = f64::NAN), "minValueUSD must be a finite number"),
        (Box::new(|c| c.services_url = None), "jwtServiceUrl is required"),
        (
            Box::new(|c| c.signer_url = Some("localhost:1".into())),
            "signerUrl must be an http:// or https:// URL, got \"localhost:1\"",
        ),
        (
            Box::new(|c| c.supported_chains = vec![1, 2]),
            "supportedChains contains an unknown chain ID: 2",
        ),
        (Box::new(|c| c.supported_tokens.clear()), "supportedTokens is empty"),
        (
            Box::new(|c| c.refund.max_attempts = 0),
            "refund.maxAttempts must be between 1 and 100, got 0",
        ),
        (Box::new(|c| c.refund.delay_ms = u64::MAX), "refund.delayMs must be at most a day"),
        (
            Box::new(|c| c.onramp.fiat_currency = "EURO".into()),
            "onramp.fiatCurrency must be a three-letter currency code",
        ),
        (
            Box::new(|c| c.onramp.widget_url = Some("javascript:x".into())),
            "onramp.widgetUrl must be an http:// or https:// URL",
        ),
        (
            Box::new(|c| c.funding.proxy_url = Some("nope".into())),
            "funding.proxyUrl must be an http:// or https:// URL",
        ),
        (
            Box::new(|c| {
                c.funding.evm_rpc_urls.insert(7, "http://x".into());
            }),
            "funding.evmRpcUrls has an unknown chain ID: 7",
        ),
        (
            Box::new(|c| {
                c.notifications = Some(depositkit_core::deposit::NotificationsConfig {
                    max: 0,
                    ..Default::default()
                })
            }),
            "notifications.max must be at least 1",
        ),
        (Box::new(|c| c.ua_project_id = Some(String::new())), "uaProjectId is empty"),
        (Box::new(|c| c.request_timeout_ms = 0), "requestTimeoutMs must be more than 0"),
        (Box::new(|c| c.event_queue_capacity = 0), "eventQueueCapacity must be at least 1"),
    ];
    for (tune, want) in cases {
        let mut c = config(DestinationConfig::chain(1));
        tune(&mut c);
        let m = error(c);
        assert!(m.starts_with(want), "{m:?} should start with {want:?}");
    }
    // A credential in a service URL is never echoed.
    let mut c = config(DestinationConfig::chain(1));
    c.services_url = Some("https://user:hunter2@example.com".into());
    let m = error(c);
    assert!(!m.contains("hunter2"), "{m}");
    // Enumerated options parse with the spec's spelling only.
    let err = "centre".parse::<depositkit_core::deposit::NotificationPosition>().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert!(err.message().contains("\"centre\""));
}
