//! The auth-core signer over HTTP: one wallet per JWT subject, stable across restarts on the
//! same database, and EIP-191 signatures that recover to it.

mod common;

use alloy_primitives::{Address, Signature};
use common::deposit::*;
use depositkit_core::is_valid_evm_address;
use depositkit_devnet::{Devnet, DevnetConfig};
use serde_json::json;

const OWNER_A: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const OWNER_B: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";
const MESSAGE: &str = "0x1111111111111111111111111111111111111111111111111111111111111111";

#[test]
fn one_wallet_per_subject_stable_across_restarts() {
    let mut net = Net::start();
    let a1 = net.mint(OWNER_A);
    let a2 = net.mint(&OWNER_A.to_lowercase());
    let wallet_a = net.wallet(&a1);
    assert!(is_valid_evm_address(&wallet_a));
    // EIP-55 form (not "has upper case": a random address has no letter to raise about once
    // in a hundred).
    let checksummed = wallet_a.parse::<Address>().unwrap().to_checksum(None);
    assert_eq!(wallet_a, checksummed, "EIP-55");
    assert_eq!(net.wallet(&a2), wallet_a, "same sub, same wallet");
    let wallet_b = net.wallet(&net.mint(OWNER_B));
    assert_ne!(wallet_b, wallet_a);

    // Restart on the same database: same wallets, and the old JWT still verifies (the keys
    // are stored too).
    let Net { devnet, api, db } = net;
    devnet.shutdown().unwrap();
    let devnet = Devnet::start(DevnetConfig::new(&db.0)).unwrap();
    let api = Api { base: devnet.services_url(), ..api };
    net = Net { devnet, api, db };
    assert_eq!(net.wallet(&a1), wallet_a);
    assert_eq!(net.wallet(&net.mint(OWNER_B)), wallet_b);
}

#[test]
fn signatures_recover_to_the_wallet() {
    let net = Net::start();
    let jwt = net.mint(OWNER_A);
    let wallet: Address = net.wallet(&jwt).parse().unwrap();
    let reply = net.post("/signer/v1/sign", Some(&jwt), &json!({ "message": MESSAGE }));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["address"], wallet.to_checksum(None));
    let hex = body["signature"].as_str().unwrap();
    assert_eq!(hex.len(), 2 + 130, "{hex}");
    let bytes = alloy_primitives::hex::decode(hex).unwrap();
    assert!(matches!(bytes[64], 27 | 28), "v = {}", bytes[64]);
    let signature = Signature::from_raw(&bytes).unwrap();
    let message = alloy_primitives::hex::decode(MESSAGE).unwrap();
    assert_eq!(signature.recover_address_from_msg(&message).unwrap(), wallet);

    for bad in [
        json!({}),
        json!({"message": "0x1234"}),
        json!({"message": MESSAGE.trim_start_matches("0x")}),
        json!({"message": 5}),
    ] {
        let reply = net.post("/signer/v1/sign", Some(&jwt), &bad);
        expect_api_error(&reply, 400, "INVALID_REQUEST");
    }
    expect_api_error(
        &net.post("/signer/v1/sign", None, &json!({"message": MESSAGE})),
        401,
        "INVALID_SESSION",
    );
}
