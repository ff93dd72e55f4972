use super::*;

#[test]
fn transactions_tolerate_nulls_and_extra_fields() {
    let page: TransactionsPage = serde_json::from_str(
        r#"{"transactions": [{"transactionId": "0x1", "tag": "receive", "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00Z", "status": 1, "fromChains": [8453], "toChains": [8453],
            "targetToken": {"symbol": "USDC", "chainId": 8453, "decimals": 6, "address": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
            "change": {"amount": "5", "amountInUSD": "5", "from": null, "to": "0xabc", "rawAmount": "5000000"},
            "detail": {"redPacketCount": 0}, "quoteId": null}], "page": 1, "pageSize": 10}"#,
    )
    .unwrap();
    assert_eq!(page.transactions[0].change.from, "");
    assert_eq!(page.transactions[0].target_token.symbol, "USDC");
}

#[test]
fn path_segments_are_encoded() {
    assert_eq!(path_segment("q_1-a.b~"), "q_1-a.b~");
    assert_eq!(path_segment("a/b?c"), "a%2Fb%3Fc");
}

#[test]
fn send_results_parse_the_protocol_shape() {
    let r: SendResult = serde_json::from_str(
        r#"{"transactionId":"0xab","quoteId":"q_1","status":"success","explorerUrl":"https://arbiscan.io/tx/0xab","deliveredRawAmount":"2440000"}"#,
    )
    .unwrap();
    assert_eq!(r.status, SendStatus::Success);
    assert_eq!(r.delivered_raw_amount.as_deref(), Some("2440000"));
}
