use super::*;
use serde_json::json;

#[test]
fn the_account_object_is_sent_as_the_sdk_sends_it() {
    let mut account =
        AccountOptions::new("0x1111111111111111111111111111111111111111", "UNIVERSAL", "2.0.1");
    assert_eq!(
        serde_json::to_string(&account).unwrap(),
        r#"{"ownerAddress":"0x1111111111111111111111111111111111111111","name":"UNIVERSAL","version":"2.0.1"}"#
    );
    account.use_eip7702 = Some(true);
    account.smart_account_address = Some("0x2222222222222222222222222222222222222222".into());
    account.solana_smart_account_address =
        Some("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin".into());
    assert_eq!(
        serde_json::to_string(&account).unwrap(),
        r#"{"ownerAddress":"0x1111111111111111111111111111111111111111","name":"UNIVERSAL","version":"2.0.1","useEIP7702":true,"smartAccountAddress":"0x2222222222222222222222222222222222222222","solanaSmartAccountAddress":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}"#
    );
}

#[test]
fn smart_account_addresses() {
    let ok = json!([{"smartAccountAddress": "0x2222222222222222222222222222222222222222",
                     "solanaSmartAccountAddress": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}]);
    let account = parse_smart_account(&ok).unwrap();
    assert_eq!(account.evm_address, "0x2222222222222222222222222222222222222222");
    let e = parse_smart_account(&json!([])).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (ErrorKind::UniversalAccount, "No smart account options found")
    );
    let e = parse_smart_account(&json!([{"smartAccountAddress": "0x22"}])).unwrap_err();
    assert!(e.message().starts_with("Failed to get EVM smart account address"), "{e}");
    let e = parse_smart_account(
        &json!([{"smartAccountAddress": "0x2222222222222222222222222222222222222222"}]),
    )
    .unwrap_err();
    assert!(e.message().starts_with("Failed to get Solana smart account address"), "{e}");
    assert_eq!(parse_smart_account(&json!({})).unwrap_err().kind(), ErrorKind::Protocol);
}

/// The document's minimal response (§4.2): 30 USDC on Base.
#[test]
fn primary_assets_with_raw_amounts_from_the_real_decimals() {
    let result = json!({"totalAmountInUSD":"0x1a055690d9db80000","assets":[{"tokenType":"usdc","price":1,
        "amount":"0x1a055690d9db80000","amountInUSD":"0x1a055690d9db80000",
        "chainAggregation":[{"token":{"chainId":8453,"address":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","decimals":18,"realDecimals":6,"type":"usdc"},
          "amount":"0x1a055690d9db80000","amountInUSD":"0x1a055690d9db80000"}]}]});
    let assets = parse_primary_assets(&result).unwrap();
    assert_eq!(assets.total_amount_in_usd, 30.0);
    let usdc = &assets.assets[0];
    assert_eq!(
        (usdc.token(), usdc.price, usdc.amount, usdc.amount_in_usd),
        (Some(TokenType::USDC), 1.0, 30.0, 30.0)
    );
    let base = &usdc.chains[0];
    assert_eq!(
        (base.chain_id, base.real_decimals, base.raw_amount),
        (8453, 6, U256::from(30_000_000u64))
    );
    assert_eq!(base.amount_in_usd(), 30.0);
    // Decimal strings and integers are amounts too; the chain may be the entry's own.
    let result = json!({"totalAmountInUSD": 0, "assets":[{"tokenType":"sol","amount":"1500000000000000000","amountInUSD":"0x0",
        "chainAggregation":[{"chainId":101,"token":{"realDecimals":9},"amount":"1500000000000000000","amountInUSD":0}]}]});
    let sol = &parse_primary_assets(&result).unwrap().assets[0].chains[0];
    assert_eq!((sol.chain_id, sol.raw_amount), (101, U256::from(1_500_000_000u64)));
}

#[test]
fn primary_assets_name_what_is_missing() {
    let cases = [
        (json!({"assets": []}), "totalAmountInUSD: missing"),
        (json!({"totalAmountInUSD": "0x0"}), "assets: expected an array"),
        (
            json!({"totalAmountInUSD": "0x0", "assets": [{"amountInUSD": "0x0"}]}),
            "assets[0].amount: missing",
        ),
        (
            json!({"totalAmountInUSD": "0x0", "assets": [{"amount": "0x0", "amountInUSD": "0x0"}]}),
            "assets[0].chainAggregation",
        ),
        (
            json!({"totalAmountInUSD": "0x0", "assets": [{"amount": "0x0", "amountInUSD": "0x0", "chainAggregation": [{"amount": "0x0", "amountInUSD": "0x0", "token": {}}]}]}),
            "token.realDecimals",
        ),
        (json!({"totalAmountInUSD": "1.5", "assets": []}), "totalAmountInUSD"),
    ];
    for (result, expected) in cases {
        let e = parse_primary_assets(&result).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(e.message().contains(expected), "{expected}: {e}");
    }
}

/// The document's minimal signable response (§4.3), with fees as the original reads them.
#[test]
fn a_created_transaction_with_its_root() {
    let result = json!({"transactionId":"TX-1","feeQuotes":[{"userOps":[
        {"chainId":8453,"userOpHash":format!("0x{}", "a2".repeat(32)),"userOp":{"signature":"0x"}},
        {"chainId":101,"userOpHash":format!("0x{}", "b2".repeat(32)),"userOp":{"signature":""}}],
        "fees":{"totals":{"feeTokenAmountInUSD":"0x2386f26fc10000","gasFeeTokenAmountInUSD":"0x2386f26fc10000",
          "transactionLPFeeTokenAmountInUSD":"0x0","freeGasFee":false,"freeServiceFee":true}}}],
        "tokenChanges": {"x": 1}});
    let created = parse_created(&result, 1_700_000_000_999).unwrap();
    assert_eq!(created.transaction_id, "TX-1");
    assert_eq!(created.signing.valid_until, 1_700_000_600);
    assert_eq!(created.signing.user_ops[1].chain_id, 101);
    let fees = created.fees.unwrap();
    assert_eq!(
        (fees.fee_usd, fees.gas_fee_usd, fees.lp_fee_usd, fees.free_service_fee),
        (0.01, 0.01, 0.0, true)
    );
    assert_eq!(created.result["tokenChanges"], json!({"x": 1}));
    // gasless.userOps when the fee quote has none; no fee data then.
    let gasless = json!({"transactionId":"TX-2","feeQuotes":[{"userOps":[]}],
        "gasless":{"userOps":[{"chainId":1,"userOpHash":format!("0x{}", "c3".repeat(32)),"userOp":{}}]}});
    let created = parse_created(&gasless, 0).unwrap();
    assert_eq!((created.signing.user_ops.len(), created.fees), (1, None));
}

#[test]
fn an_unsignable_transaction_is_refused() {
    let hash = format!("0x{}", "a2".repeat(32));
    let cases = [
        (json!({}), "no transactionId"),
        (json!({"transactionId": "T"}), "no user operations"),
        (
            json!({"transactionId": "T", "feeQuotes": [{"userOps": [{"chainId": "8453", "userOpHash": hash, "userOp": {}}]}]}),
            "chainId",
        ),
        (
            json!({"transactionId": "T", "feeQuotes": [{"userOps": [{"chainId": 8453, "userOpHash": "0xa2", "userOp": {}}]}]}),
            "userOpHash",
        ),
        (
            json!({"transactionId": "T", "feeQuotes": [{"userOps": [{"chainId": 8453, "userOpHash": hash}]}]}),
            "userOp:",
        ),
    ];
    for (result, expected) in cases {
        let e = parse_created(&result, 0).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(e.message().contains(expected), "{expected}: {e}");
    }
}

#[test]
fn transaction_states_follow_the_sdks_status_codes() {
    assert_eq!(TransactionState::of(0).send_status(), None);
    assert_eq!(TransactionState::of(7).send_status(), Some(SendStatus::Success));
    for code in [6, 10, 11, 14] {
        assert_eq!(TransactionState::of(code).send_status(), Some(SendStatus::Failed), "{code}");
    }
    for code in [1, 2, 3, 4, 5, 8, 9, 12, 13, 99, -1] {
        assert_eq!(TransactionState::of(code).send_status(), Some(SendStatus::Pending), "{code}");
    }
    assert_eq!(TransactionState::code_name(6), "EXECUTION_FAILED");
    assert_eq!(TransactionState::code_name(-1), "UNKNOWN");
    let record =
        parse_transaction(&json!({"data": {"transactionId": "TX-1", "status": 7}})).unwrap();
    assert_eq!(
        (record.transaction_id.as_str(), record.state()),
        ("TX-1", Some(TransactionState::Finished))
    );
    let record = parse_transaction(&json!({"transactionId": "TX-1"})).unwrap();
    assert_eq!(record.state(), None);
    assert!(parse_transaction(&json!([1])).is_err());
}

#[test]
fn history_lists_in_the_shapes_the_original_accepts() {
    let tx = json!({"transactionId": "T1", "tag": "receive", "status": 1,
        "change": {"amount": "+25", "amountInUSD": "25", "from": "0xabc", "to": "0xdef"},
        "targetToken": {"chainId": 8453, "symbol": "USDC", "realDecimals": 6}, "fromChains": [8453]});
    for result in
        [json!([tx.clone()]), json!({"data": [tx.clone()]}), json!({"transactions": [tx.clone()]})]
    {
        let page = parse_transactions(&result, 2, 10).unwrap();
        assert_eq!((page.page, page.page_size, page.transactions.len()), (2, 10, 1));
        assert_eq!(page.transactions[0].change.from, "0xabc");
        assert_eq!(page.transactions[0].target_token.chain_id, 8453);
    }
    let tokens = parse_token_transactions(&json!({"data": [tx], "nextPageToken": "p2"})).unwrap();
    assert_eq!(tokens.next_page_token.as_deref(), Some("p2"));
    let last = parse_token_transactions(&json!({"data": [], "nextPageToken": ""})).unwrap();
    assert_eq!(last.next_page_token, None);
    assert!(parse_transactions(&json!({"x": 1}), 1, 10).is_err());
    let e = parse_transactions(&json!([{"status": "done"}]), 1, 10).unwrap_err();
    assert!(e.message().contains("transactions[0]"), "{e}");
}
