use super::*;

#[test]
fn widget_urls_give_their_query_parameters() {
    let params = query_params(
        "http://127.0.0.1:1/onramp/widget?partnerKey=a%2Bb&walletAddress=0xAb&fiatAmount=49.99&x=&y=1+2#frag",
    )
    .unwrap();
    assert_eq!(
        params,
        serde_json::json!({"partnerKey": "a+b", "walletAddress": "0xAb", "fiatAmount": "49.99",
                           "x": "", "y": "1 2"})
    );
    for bad in ["http://x/widget", "http://x/widget?", "http://x/w?a=%zz", "http://x/w?a=%f"] {
        let err = query_params(bad).unwrap_err();
        assert_eq!(err.status, depositkit_status::InvalidArgument, "{bad}");
    }
}
