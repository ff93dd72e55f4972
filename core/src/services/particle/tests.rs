use alloy_primitives::B256;
use serde_json::json;

use super::*;

fn client(vars: &[(&str, &str)]) -> ParticleClient {
    let vars: Vec<(String, String)> =
        vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let resolved = ParticleConfig::default()
        .resolve_with(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        .unwrap();
    ParticleClient::from_resolved(resolved)
}

fn with_credentials() -> ParticleClient {
    client(&[(config::PROJECT_ID_ENV, "PID-123"), (config::CLIENT_KEY_ENV, "CKEY-456")])
}

#[test]
fn the_client_shows_its_url_and_never_its_credentials() {
    let client = with_credentials();
    assert_eq!(client.url(), config::PRODUCTION_URL);
    let text = format!("{client:?} {client:#?}");
    assert!(text.contains(config::PRODUCTION_URL) && text.contains("<redacted>"), "{text}");
    assert!(!text.contains("PID-123") && !text.contains("CKEY-456"), "{text}");
    let account = client.account_options("0x1111111111111111111111111111111111111111");
    assert_eq!((account.name.as_str(), account.version.as_str()), ("UNIVERSAL", "2.0.1"));
}

/// `sendTransaction`'s parameters for the document's §5 vector: one blob per op, in order, and
/// an EIP-7702 authorization attached to the EVM op whose hash it names — never to a Solana op.
#[test]
fn send_parameters_for_the_documents_vector() {
    let ops = [(8453u64, 0xa1u8), (101, 0xb1), (42161, 0xc1)]
        .map(|(chain_id, byte)| UserOpRef { chain_id, user_op_hash: B256::repeat_byte(byte) });
    let transaction = CreatedTransaction {
        transaction_id: "TX-1".into(),
        signing: SigningRoot::new(ops.to_vec(), 1_700_000_000_999).unwrap(),
        fees: None,
        result: json!({}),
    };
    let hash = |byte: u8| format!("0x{}", hex_byte(byte).repeat(32));
    let authorizations = [
        Eip7702Authorization { user_op_hash: hash(0xa1), signature: "0xaa".into() },
        Eip7702Authorization { user_op_hash: hash(0xb1), signature: "0xbb".into() },
        // Compared exactly, as the SDK compares: another letter case is another hash.
        Eip7702Authorization { user_op_hash: hash(0xc1).to_uppercase(), signature: "0xcc".into() },
    ];
    let params =
        (&transaction.transaction_id, signatures(&transaction, &[0x11; 65], &authorizations));
    let value = serde_json::to_value(&params).unwrap();
    assert_eq!(value[0], "TX-1");
    let entries = value[1]["signatures"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["userOpHash"], hash(0xa1));
    assert_eq!(entries[0]["eip7702AuthSignature"], "0xaa");
    assert!(entries[1].get("eip7702AuthSignature").is_none(), "a Solana op takes none");
    assert!(entries[2].get("eip7702AuthSignature").is_none());
    let solana = entries[1]["signature"].as_str().unwrap();
    assert!(
        solana.starts_with(
            "0x8069143401a704a34e41e4f1472f65f851b409b85020f7553010c0e92c44a4dd02000000"
        ),
        "{solana}"
    );
    assert!(solana.ends_with(&"11".repeat(65)), "{solana}");
    let evm = entries[2]["signature"].as_str().unwrap();
    assert!(evm.starts_with(&format!("0x{:0>64}", "6553f358")), "{evm}");
}

fn hex_byte(byte: u8) -> String {
    format!("{byte:02x}")
}

#[test]
fn history_needs_an_opened_account() {
    let account = with_credentials().account_options("0x1111111111111111111111111111111111111111");
    assert_eq!(senders(&account).unwrap_err().kind(), ErrorKind::Configuration);
}
