//! Finality on the real SVM (`docs/finality.md` §8): devnet's chain-backed mode over the
//! LiteSVM JSON-RPC server (`tests/chains/svm_rpc.py`), a client watching Solana there. USDC
//! minted to the client's Solana deposit address is `seen` from its transaction; with Solana's
//! default rule (`finalized`) nothing moves it until 31 blocks are built on its slot, then it is
//! `confirmed` and credited on the Arbitrum anvil; with the `confirmed` rule it goes on at once.
//!
//! One devnet serves the binary and the tests take turns (`finality_support::turn`): the slots
//! they count are their own (only `getLatestBlockhash` and the development methods make blocks).

mod chains_support;
mod deposit_support;
mod finality_support;

use alloy_primitives::U256;
use chains_support::chains;
use deposit_support::{Net, phases};
use depositkit_core::deposit::finality::FinalityRule;
use depositkit_core::deposit::{DepositClient, DepositEvent, DepositPhase};
use finality_support::{
    delivered, events_told, times, turn, wait_credited, wait_event, wait_linked,
};
use serde_json::json;

const SOLANA: u64 = 101;

/// A client watching the SVM (its rule for Solana: `rule`, else the default).
fn watching_client(net: &Net, rule: Option<FinalityRule>) -> (DepositClient, String) {
    finality_support::watching_client(net, SOLANA, &chains().solana_url(), rule, true)
}

/// Mints `raw` USDC on the SVM to the client's Solana deposit address and waits until the
/// client follows its transaction. The deposit's id and the signature.
fn deposit_followed(
    client: &DepositClient,
    raw: u64,
    pulled: &mut Vec<DepositEvent>,
) -> (String, String) {
    let address = client.deposit_addresses().unwrap().solana;
    let usdc = chains().token(SOLANA, "USDC");
    let signature = chains().svm().request("svm_mintTo", json!([usdc, address, raw])).unwrap();
    let signature = signature.as_str().unwrap().to_owned();
    (wait_linked(client, &signature, pulled), signature)
}

/// Makes `count` empty blocks on the SVM.
fn advance_slots(count: u64) {
    chains().svm().request("svm_advanceSlots", json!([count])).unwrap();
}

/// The commitment the SVM reports for the transaction `signature`.
fn commitment_of(signature: &str) -> Option<String> {
    let status = chains().svm().signature_status(&signature.parse().unwrap()).unwrap();
    status.and_then(|s| s.confirmation_status)
}

#[test]
fn a_solana_deposit_waits_for_its_finalized_slot_then_is_credited() {
    let net = turn();
    let (client, owner) = watching_client(&net, None);
    let mut pulled = Vec::new();
    let (id, signature) = deposit_followed(&client, 10_000_000, &mut pulled);
    let seen = pulled.iter().filter_map(|e| e.lifecycle()).find(|l| l.id == id).unwrap().clone();
    assert_eq!((seen.chain_id, seen.amount.as_str()), (SOLANA, "10"));
    // Confirmed on the SVM at once, not finalized: nothing may move it.
    assert_eq!(commitment_of(&signature).as_deref(), Some("confirmed"));
    let refused = client.sweep(&id).unwrap_err();
    assert!(refused.message().contains("not final on its chain yet"), "{refused}");
    // 30 blocks on top: counted, still not final.
    advance_slots(30);
    let counted = wait_event(&client, &mut pulled, |l| {
        l.id == id && l.phase == DepositPhase::Confirming && l.confirmations == Some(31)
    });
    assert_eq!(counted.required_confirmations, None, "a finalized rule has no count to reach");
    assert!(!phases(&pulled, &id).contains(&DepositPhase::Confirmed), "{}", events_told(&pulled));
    assert_eq!(delivered(&owner), U256::ZERO, "swept before it was final");
    // The 31st: its slot is finalized.
    advance_slots(1);
    let confirmed =
        wait_event(&client, &mut pulled, |l| l.id == id && l.phase == DepositPhase::Confirmed);
    assert_eq!(confirmed.source_tx_hash.as_deref(), Some(signature.as_str()));
    assert_eq!(commitment_of(&signature).as_deref(), Some("finalized"));
    let swept = wait_credited(&client, &id, &mut pulled);
    assert_eq!(delivered(&owner), swept, "credited once");
    assert!(swept > U256::from(9_000_000u64) && swept < U256::from(10_000_000u64), "{swept}");
    let story = phases(&pulled, &id);
    assert_eq!(story.first(), Some(&DepositPhase::Seen), "{story:?}");
    assert_eq!(times(&pulled, &id, DepositPhase::Credited), 1, "{story:?}");
    client.close().unwrap();
}

#[test]
fn with_the_confirmed_rule_a_solana_deposit_is_credited_at_its_confirmed_slot() {
    let net = turn();
    let (client, owner) = watching_client(&net, Some(FinalityRule::Safe));
    let mut pulled = Vec::new();
    let (id, signature) = deposit_followed(&client, 10_000_000, &mut pulled);
    let confirmed =
        wait_event(&client, &mut pulled, |l| l.id == id && l.phase == DepositPhase::Confirmed);
    assert_eq!(confirmed.source_tx_hash.as_deref(), Some(signature.as_str()));
    let swept = wait_credited(&client, &id, &mut pulled);
    assert_eq!(delivered(&owner), swept, "credited once");
    // Confirmed, not finalized, when it went on: no block was built on it but the sweep's.
    assert_eq!(commitment_of(&signature).as_deref(), Some("confirmed"));
    assert_eq!(times(&pulled, &id, DepositPhase::Credited), 1, "{}", events_told(&pulled));
    client.close().unwrap();
}
