//! Transaction history against an in-process devnet: pages, one token's transactions by cursor,
//! single transactions, the spec's `UATransaction` fields, and the short-lived cache.

mod deposit_support;

use std::collections::BTreeSet;

use deposit_support::*;
use depositkit_core::deposit::{DepositPhase, TokenTransactionFilter};
use depositkit_core::{DepositClient, ErrorKind, TokenType};
use depositkit_devnet::{Fault, Service};

/// A client whose account received three USDC deposits on Base (all swept) and one of USDT on
/// Arbitrum (swept): eight transactions, six of them USDC on Base.
fn busy_client(net: &Net) -> DepositClient {
    let client = client(net);
    let sender = owner();
    for raw in ["1000000", "2000000", "3000000"] {
        let id = deposit_detected(net, &client, 8453, TokenType::USDC, raw, Some(&sender)).id;
        assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Credited);
    }
    let id = deposit_detected(net, &client, 42161, TokenType::USDT, "4000000", None).id;
    assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Credited);
    client
}

#[test]
fn token_history_pages_with_a_cursor() {
    let net = net();
    let client = busy_client(&net);
    let all = client.get_transactions(Some(1), Some(100)).unwrap();
    assert_eq!(all.transactions.len(), 8);
    assert_eq!((all.page, all.page_size), (1, 100));
    let usdc_on_base: Vec<String> = all
        .transactions
        .iter()
        .filter(|t| t.target_token.chain_id == 8453 && t.target_token.symbol == "USDC")
        .map(|t| t.transaction_id.clone())
        .collect();
    assert_eq!(usdc_on_base.len(), 6);

    let filter =
        TokenTransactionFilter::for_token(8453, TokenType::USDC).unwrap().with_page_size(4);
    let first = client.get_token_transactions(&filter, None).unwrap();
    assert_eq!(first.transactions.len(), 4);
    let cursor = first.next_page_token.clone().expect("a second page");
    let second = client.get_token_transactions(&filter, Some(&cursor)).unwrap();
    assert_eq!(second.transactions.len(), 2);
    assert_eq!(second.next_page_token, None, "the last page has no cursor");
    let paged: Vec<String> = first
        .transactions
        .iter()
        .chain(&second.transactions)
        .map(|t| t.transaction_id.clone())
        .collect();
    assert_eq!(paged, usdc_on_base, "newest first, nothing twice, nothing missing");
    // The address compares case-insensitively; the default page size is 10.
    let lower = TokenTransactionFilter::new(8453, filter.address.to_ascii_lowercase());
    let whole = client.get_token_transactions(&lower, None).unwrap();
    assert_eq!(whole.transactions.len(), 6);
    assert_eq!(whole.next_page_token, None);
    // A cursor that the service never issued.
    let err = client.get_token_transactions(&filter, Some("bogus")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniversalAccount, "{err}");
    assert!(err.message().starts_with("Failed to get token transactions"), "{err}");

    // Plain pages agree with the whole list.
    let mut seen = BTreeSet::new();
    for page in 1..=3 {
        let p = client.get_transactions(Some(page), Some(3)).unwrap();
        assert_eq!(p.page, page);
        seen.extend(p.transactions.into_iter().map(|t| t.transaction_id));
    }
    assert_eq!(seen.len(), 8);
}

#[test]
fn one_transaction_with_every_field() {
    let net = net();
    let client = client(&net);
    let sender = owner();
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "2500000", Some(&sender)).id;
    let (last, _) = wait_terminal(&client, &id);
    let sweep_tx = last.transaction_id.unwrap();
    let sweep = client.get_transaction(&sweep_tx).unwrap();
    assert_eq!(sweep.tag, "sweep");
    assert_eq!(sweep.status, 1);
    assert_eq!(sweep.target_token.symbol, "USDC");
    assert_eq!(sweep.target_token.chain_id, 8453);
    assert_eq!(sweep.target_token.decimals, 6);
    assert_eq!(sweep.target_token.real_decimals, 6);
    assert_eq!(sweep.from_chains, [8453]);
    assert_eq!(sweep.to_chains, [8453]);
    assert!(sweep.quote_id.as_deref().is_some_and(|q| q.starts_with("q_")), "{sweep:?}");
    assert!(!sweep.created_at.is_empty() && !sweep.updated_at.is_empty());
    let listed = client.get_transactions(None, None).unwrap();
    assert_eq!((listed.page, listed.page_size), (1, 10));
    let receive = listed.transactions.iter().find(|t| t.tag == "receive").unwrap();
    assert_eq!(receive.change.from.to_ascii_lowercase(), sender);
    assert_eq!(receive.change.amount, "2.5");
    assert_eq!(receive.change.raw_amount.as_deref(), Some("2500000"));
    assert_eq!(receive.change.to, client.deposit_addresses().unwrap().evm);
    let single = client.get_transaction(&receive.transaction_id).unwrap();
    assert_eq!(&single, receive);
    let json = serde_json::to_value(&single).unwrap();
    for field in [
        "transactionId",
        "tag",
        "createdAt",
        "updatedAt",
        "targetToken",
        "change",
        "detail",
        "status",
        "fromChains",
        "toChains",
    ] {
        assert!(json.get(field).is_some(), "{field} missing in {json}");
    }
    for field in [
        "name",
        "type",
        "image",
        "price",
        "symbol",
        "address",
        "assetId",
        "chainId",
        "decimals",
        "realDecimals",
        "isPrimaryToken",
        "isSmartRouterSupported",
    ] {
        assert!(json["targetToken"].get(field).is_some(), "targetToken.{field} missing");
    }
    assert_eq!(json["detail"]["redPacketCount"], 0);
    assert_eq!(json["change"]["amountInUSD"], "2.5");

    let err = client.get_transaction("0xnope").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.message().starts_with("Failed to get transaction"), "{err}");
    assert_eq!(client.get_transaction("").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        client.get_transactions(Some(0), None).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        client.get_transactions(None, Some(101)).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let fresh =
        DepositClient::new(config(&net, &owner(), depositkit_core::DestinationConfig::chain(8453)))
            .unwrap();
    assert_eq!(fresh.get_transactions(None, None).unwrap_err().kind(), ErrorKind::Configuration);
}

#[test]
fn answers_are_cached_until_the_client_changes_the_history() {
    let net = net();
    let client = client(&net);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "2000000", None).id;
    assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Credited);
    let before = client.get_transactions(Some(1), Some(10)).unwrap();
    assert_eq!(before.transactions.len(), 2);
    let one = client.get_transaction(&before.transactions[0].transaction_id).unwrap();
    // The service now fails every history request: cached answers still come back.
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/transactions"), &Fault::status(500, 1000))
        .unwrap();
    assert_eq!(client.get_transactions(Some(1), Some(10)).unwrap(), before);
    assert_eq!(client.get_transaction(&one.transaction_id).unwrap(), one);
    // Uncached requests do fail.
    let err = client.get_transactions(Some(2), Some(10)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniversalAccount, "{err}");
    assert!(err.message().starts_with("Failed to get transactions: "), "{err}");
    // The client's own sweep empties the caches: the next read goes to the service.
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "1000000", None).id;
    assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Credited);
    assert!(client.get_transactions(Some(1), Some(10)).is_err(), "not served from the cache");
    net.devnet.clear_faults();
    let after = client.get_transactions(Some(1), Some(10)).unwrap();
    assert_eq!(after.transactions.len(), 4);
}
