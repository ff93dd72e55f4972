use std::time::Duration;

use super::*;
use crate::ErrorKind;
use crate::tokens::TokenType;

const OWNER: &str = "0x52908400098527886E0F7030069857D2E4169EE7";
const SOL: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

fn config() -> DepositClientConfig {
    DepositClientConfig::new(OWNER, DestinationConfig::chain(8453))
        .with_services_url("http://127.0.0.1:1")
}

fn message(config: &DepositClientConfig) -> String {
    let err = config.validate().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration, "{err}");
    err.message().to_owned()
}

#[test]
fn defaults_resolve() {
    let resolved = config().resolve().unwrap();
    assert_eq!(resolved.owner, OWNER.to_ascii_lowercase());
    assert_eq!(
        resolved.destination,
        Destination { chain_id: 8453, address: OWNER.to_ascii_lowercase(), token: TokenType::USDC }
    );
    assert_eq!(resolved.polling_interval, Duration::from_millis(3000));
    assert_eq!(resolved.urls.account, "http://127.0.0.1:1/ua");
    assert!(resolved.auto_sweep);
    assert_eq!(resolved.min_value_usd, 0.5);
}

#[test]
fn owner_is_required_and_must_be_evm() {
    let mut c = config();
    c.owner_address = String::new();
    assert_eq!(message(&c), "ownerAddress is required");
    c.owner_address = SOL.into();
    let m = message(&c);
    assert!(m.starts_with("ownerAddress must be a valid EVM address: \"EPjF"), "{m}");
    c.owner_address = "0x1234".into();
    assert!(message(&c).contains("\"0x1234\""));
}

#[test]
fn destination_rules() {
    let owner = OWNER.to_ascii_lowercase();
    let m = resolve_destination(&DestinationConfig::chain(7), &owner).unwrap_err();
    assert_eq!(
        m.message(),
        "Invalid destination chain ID: 7. Use a chain from the CHAIN constant."
    );
    let m = resolve_destination(&DestinationConfig::chain(196), &owner).unwrap_err();
    assert!(m.message().contains("X Layer is a deposit source only"), "{m}");
    let m = resolve_destination(&DestinationConfig::chain(10), &owner).unwrap_err();
    assert!(m.message().contains("OP (Optimism) cannot be a destination"), "{m}");
    let m = resolve_destination(&DestinationConfig::chain(101), &owner).unwrap_err();
    assert!(
        m.message().starts_with("Invalid Solana address format for destination on Solana"),
        "{m}"
    );
    assert!(m.message().contains("needs destination.address"), "{m}");
    let m =
        resolve_destination(&DestinationConfig::chain(1).with_address(SOL), &owner).unwrap_err();
    assert!(
        m.message().starts_with("Invalid EVM address format for destination on Ethereum"),
        "{m}"
    );
    let m = resolve_destination(&DestinationConfig::chain(8453).with_token(TokenType::SOL), &owner)
        .unwrap_err();
    assert_eq!(
        m.message(),
        "destination.token SOL cannot be delivered on Base (8453); deliverable there: ETH, USDC"
    );
    let d = resolve_destination(&DestinationConfig::chain(101).with_address(SOL), &owner).unwrap();
    assert_eq!(d.address, SOL, "Solana keeps its case");
    let d = resolve_destination(
        &DestinationConfig::chain(56).with_address(OWNER).with_token(TokenType::ETH),
        &owner,
    )
    .unwrap();
    assert_eq!(d.address, owner);
}

#[test]
fn from_json_reads_the_spec_names() {
    let c = DepositClientConfig::from_json(&format!(
        r#"{{"ownerAddress": "{OWNER}", "destination": {{"chainId": 101, "address": "{SOL}", "token": "usdt"}},
           "minValueUSD": 1.5, "supportedTokens": ["usdc", "Eth"], "notifications": true,
           "refund": {{"enabled": true}}, "onramp": {{"mode": "redirect"}},
           "servicesUrl": "http://127.0.0.1:1", "pollingIntervalMs": 100, "minPollingIntervalMs": 50}}"#
    ))
    .unwrap();
    let resolved = c.resolve().unwrap();
    assert_eq!(resolved.destination.token, TokenType::USDT);
    assert_eq!(resolved.destination.address, SOL);
    assert_eq!(resolved.supported_tokens, [TokenType::ETH, TokenType::USDC]);
    assert_eq!(c.min_value_usd, 1.5);
    assert_eq!(c.notifications, Some(NotificationsConfig::default()));
    assert!(c.refund.enabled && c.refund.max_attempts == 2);
    assert_eq!(c.onramp.mode, OnrampMode::Redirect);
    assert_eq!(resolved.polling_interval, Duration::from_millis(100));
    let err = DepositClientConfig::from_json(
        r#"{"ownerAddress": "x", "destination": {"chainId": 1}, "bogus": 1}"#,
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert!(err.message().contains("bogus"), "{err}");
    let err = DepositClientConfig::from_json(
        r#"{"ownerAddress": "x", "destination": {"chainId": 1, "token": "DOGE"}}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "destination.token must be one of ETH, USDC, USDT, BTC, SOL, BNB, got \"DOGE\""
    );
}

#[test]
fn funding_defaults_and_json() {
    let c = DepositClientConfig::from_json(&format!(
        r#"{{"ownerAddress": "{OWNER}", "destination": {{"chainId": 8453}},
           "funding": {{"enabled": true, "balanceProvider": "rpc",
                       "balanceApiUrl": "http://127.0.0.1:9/balances",
                       "evmRpcUrls": {{"8453": "http://127.0.0.1:8545"}}}},
           "onramp": {{"enabled": true, "apiKey": "pk_secret"}}}}"#
    ))
    .unwrap();
    let f = &c.funding;
    assert_eq!(f.balance_provider.as_deref(), Some("rpc"));
    assert_eq!(f.balance_api_url(), "http://127.0.0.1:9/balances");
    assert_eq!(f.evm_rpc_url(8453), Some("http://127.0.0.1:8545"));
    assert_eq!(f.evm_rpc_url(1), Some("https://ethereum-rpc.publicnode.com"));
    assert_eq!(f.evm_rpc_url(10), None);
    assert_eq!(f.solana_rpc_url(), DEFAULT_SOLANA_RPC_URL);
    assert_eq!(FundingConfig::default().balance_api_url(), DEFAULT_BALANCE_API_URL);
    let debug = format!("{c:?} {:?}", c.onramp);
    assert!(!debug.contains("pk_secret"), "{debug}");
}

#[test]
fn reconcile_and_watchdog_knobs() {
    let resolved = config().resolve().unwrap();
    assert_eq!(resolved.reconcile_interval, Duration::from_millis(10_000));
    assert_eq!(resolved.processing_timeout, Duration::from_millis(300_000));
    assert_eq!(resolved.refund, RefundConfig::default());
    let json = format!(
        r#"{{"ownerAddress": "{OWNER}", "destination": {{"chainId": 8453}},
            "reconcileIntervalMs": 50, "processingTimeoutMs": 700,
            "refund": {{"enabled": true, "delayMs": 10, "maxAttempts": 4, "refundToSender": false}}}}"#
    );
    let c = DepositClientConfig::from_json(&json).unwrap();
    assert_eq!((c.reconcile_interval_ms, c.processing_timeout_ms), (50, 700));
    assert_eq!(
        c.refund,
        RefundConfig { enabled: true, delay_ms: 10, max_attempts: 4, refund_to_sender: false }
    );
    let mut c = config();
    c.reconcile_interval_ms = 0;
    assert!(message(&c).starts_with("reconcileIntervalMs must be more than 0"));
    let mut c = config();
    c.processing_timeout_ms = 0;
    assert!(message(&c).starts_with("processingTimeoutMs must be more than 0"));
}

#[test]
fn polling_minimum_and_test_knob() {
    let mut c = config();
    c.polling_interval_ms = 500;
    assert_eq!(
        message(&c),
        "pollingIntervalMs must be at least 2000 ms (and at most a day), got 500"
    );
    c.min_polling_interval_ms = 10;
    c.validate().unwrap();
    c.min_polling_interval_ms = 5000;
    assert!(message(&c).starts_with("minPollingIntervalMs must be between 1 and 2000"));
}

#[test]
fn other_options() {
    let mut c = config();
    c.min_value_usd = -1.0;
    assert!(message(&c).starts_with("minValueUSD must be a finite number"));
    let mut c = config();
    c.intermediary_address = Some("nope".into());
    assert!(message(&c).starts_with("intermediaryAddress must be a valid EVM address: \"nope\""));
    let mut c = config();
    c.services_url = None;
    assert!(message(&c).starts_with("jwtServiceUrl is required"));
    let mut c = config();
    c.services_url = Some("ftp://x".into());
    assert!(message(&c).starts_with("servicesUrl must be an http:// or https:// URL"));
    let mut c = config();
    c.services_url = Some("http://user:secret@host".into());
    let m = message(&c);
    assert!(!m.contains("secret"), "{m}");
    let mut c = config();
    c.supported_chains = vec![1, 7];
    assert!(message(&c).contains("unknown chain ID: 7"));
    let mut c = config();
    c.supported_tokens.clear();
    assert!(message(&c).starts_with("supportedTokens is empty"));
    let mut c = config();
    c.refund.max_attempts = 0;
    assert!(message(&c).starts_with("refund.maxAttempts must be between 1 and 100, got 0"));
    let mut c = config();
    c.notifications = Some(NotificationsConfig { max: 0, ..Default::default() });
    assert!(message(&c).starts_with("notifications.max must be at least 1"));
    let mut c = config();
    c.onramp.fiat_currency = "usd".into();
    assert!(message(&c).contains("\"usd\""));
    let mut c = config();
    c.onramp.default_fiat_amount = Some(0.0);
    assert!(message(&c).starts_with("onramp.defaultFiatAmount must be a positive number"));
    let mut c = config();
    c.funding.evm_rpc_urls.insert(101, "http://x".into());
    assert!(message(&c).contains("not an EVM chain"));
    let mut c = config();
    c.funding.api_key = Some(String::new());
    assert!(message(&c).starts_with("funding.apiKey"));
    let mut c = config();
    c.funding.balance_provider = Some("moralis".into());
    assert_eq!(
        message(&c),
        "funding.balanceProvider must be \"rpc\" (a host callable is set with set_balance_provider), got \"moralis\""
    );
    c.funding.balance_provider = Some("rpc".into());
    c.validate().unwrap();
    c.funding.balance_api_url = Some("ftp://x".into());
    assert!(message(&c).starts_with("funding.balanceApiUrl must be an http:// or https:// URL"));
    let mut c = config();
    c.ua_project_id = Some(" ".into());
    assert_eq!(message(&c), "uaProjectId is empty");
    assert!(
        "middle"
            .parse::<NotificationPosition>()
            .unwrap_err()
            .message()
            .starts_with("notifications.position must be one of top-right, top-left")
    );
    assert_eq!("light".parse::<NotificationTheme>().unwrap(), NotificationTheme::Light);
    assert_eq!("redirect".parse::<OnrampMode>().unwrap(), OnrampMode::Redirect);
}

#[test]
fn the_table_names_every_option_once() {
    let mut names: Vec<&str> = OPTIONS.iter().map(|s| s.name).collect();
    let mut fields: Vec<&str> = OPTIONS.iter().map(|s| s.field).collect();
    names.sort_unstable();
    names.dedup();
    fields.sort_unstable();
    fields.dedup();
    assert_eq!((names.len(), fields.len()), (OPTIONS.len(), OPTIONS.len()));
    for spec in OPTIONS {
        // The spec name is the field in camelCase (the spec's one acronym aside).
        let camel: String = spec
            .field
            .split('_')
            .enumerate()
            .map(|(i, part)| match (i, part) {
                (0, _) => part.to_owned(),
                (_, "usd") => "USD".to_owned(),
                _ => part[..1].to_ascii_uppercase() + &part[1..],
            })
            .collect();
        assert_eq!(spec.name, camel);
        assert_eq!(spec.builder, format!("with_{}", spec.field));
        assert!(!spec.doc.trim().is_empty(), "{} has no doc", spec.name);
        assert_eq!(option_named(spec.name).map(|s| s.field), Some(spec.field));
        assert_eq!(option_by_field(spec.field).map(|s| s.name), Some(spec.name));
    }
}

#[test]
fn every_default_reads_back_as_itself() {
    let defaults = config();
    for spec in OPTIONS {
        let mut c = config();
        let value = spec.default_value();
        if !value.is_null() {
            spec.set(&mut c, value.clone()).unwrap();
        }
        assert_eq!((spec.default)(&c), (spec.default)(&defaults), "{}", spec.name);
    }
}

#[test]
fn builder_json_and_fields_agree() {
    let built = DepositClientConfig::new(OWNER, DestinationConfig::chain(8453))
        .with_services_url("http://127.0.0.1:1")
        .with_polling_interval_ms(2500)
        .with_auto_sweep(false)
        .with_supported_tokens([TokenType::USDC])
        .with_supported_chains([8453])
        .with_refund(RefundConfig { enabled: true, ..RefundConfig::default() })
        .with_notifications(NotificationsConfig::default())
        .with_store_path("/tmp/x.sqlite");
    let json = DepositClientConfig::from_json(&format!(
        r#"{{"ownerAddress": "{OWNER}", "destination": {{"chainId": 8453}},
           "servicesUrl": "http://127.0.0.1:1", "pollingIntervalMs": 2500, "autoSweep": false,
           "supportedTokens": ["usdc"], "supportedChains": [8453], "refund": {{"enabled": true}},
           "notifications": true, "storePath": "/tmp/x.sqlite", "uaProjectId": null}}"#
    ))
    .unwrap();
    for spec in OPTIONS {
        assert_eq!((spec.default)(&built), (spec.default)(&json), "{}", spec.name);
    }
    assert_eq!(built.destination, json.destination);
}

#[test]
fn json_values_of_the_wrong_type_or_range_are_named() {
    let read = |options: &str| {
        DepositClientConfig::from_json(&format!(
            r#"{{"ownerAddress": "{OWNER}", "destination": {{"chainId": 8453}}, {options}}}"#
        ))
        .unwrap_err()
        .message()
        .to_owned()
    };
    assert_eq!(
        read(r#""pollingIntervalMs": "3000""#),
        "pollingIntervalMs must be an integer, got a string"
    );
    assert_eq!(
        read(r#""pollingIntervalMs": -1"#),
        "pollingIntervalMs must be a non-negative integer, got -1"
    );
    assert_eq!(
        read(r#""httpRetries": 5000000000"#),
        "httpRetries must be an integer from 0 to 4294967295, got 5000000000"
    );
    assert_eq!(read(r#""autoSweep": 1"#), "autoSweep must be true or false, got a number");
    assert_eq!(
        read(r#""supportedChains": [1, -3]"#),
        "supportedChains contains an unknown chain ID: -3. Use chains from the CHAIN constant."
    );
    assert_eq!(
        read(r#""supportedTokens": "USDC""#),
        "supportedTokens must be an array of token symbols, got a string"
    );
    assert!(
        read(r#""refund": {"delayMs": "5"}"#)
            .starts_with("invalid refund: invalid type: string \"5\"")
    );
    assert!(read(r#""bogus": 1"#).starts_with(
        "unknown option \"bogus\"; the options are ownerAddress, destination, intermediaryAddress"
    ));
    let spec = option_named("refund").unwrap();
    let mut c = config();
    let err = spec.set(&mut c, serde_json::json!({"enabled": "yes"})).unwrap_err();
    assert!(err.wrong_type, "{err:?}");
    let err = spec.set(&mut c, serde_json::json!({"bogus": 1})).unwrap_err();
    assert!(!err.wrong_type, "{err:?}");
}

#[test]
fn the_one_destination_reader() {
    let read = |json: &str| DestinationConfig::from_json_value(serde_json::from_str(json).unwrap());
    assert_eq!(
        read(r#"{"chainId": 42161, "address": "0xab", "token": "usdt"}"#).unwrap(),
        DestinationConfig::chain(42161).with_address("0xab").with_token(TokenType::USDT)
    );
    assert_eq!(
        read(r#"{"chainId": 8453, "address": null}"#).unwrap(),
        DestinationConfig::chain(8453)
    );
    let cases = [
        ("[1]", "destination must be an object", true),
        (r#"{"chainId": 1, "chain": 2}"#, "destination has an unknown key \"chain\"", false),
        (r#"{"address": "0xab"}"#, "destination.chainId is required", false),
        (r#"{"chainId": -1}"#, "Invalid destination chain ID: -1.", false),
        (
            r#"{"chainId": "1"}"#,
            "destination.chainId must be a chain id (an integer), got a string",
            true,
        ),
        (
            r#"{"chainId": 1, "address": 5}"#,
            "destination.address must be a string, got a number",
            true,
        ),
        (
            r#"{"chainId": 1, "token": "DOGE"}"#,
            "destination.token must be one of ETH, USDC, USDT, BTC, SOL, BNB, got \"DOGE\"",
            false,
        ),
        (
            r#"{"chainId": 1, "token": true}"#,
            "destination.token must be a token symbol (a string), got a boolean",
            true,
        ),
    ];
    for (json, want, wrong_type) in cases {
        let err = read(json).unwrap_err();
        assert!(err.message.starts_with(want), "{json}: {}", err.message);
        assert_eq!(err.wrong_type, wrong_type, "{json}");
    }
}
