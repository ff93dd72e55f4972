use super::attempt::{QUOTE_EXPIRY_MARGIN_MS, can_never_execute};
use super::receiver::{Receiver, choose_receiver};

const OWNER: &str = "0x52908400098527886e0f7030069857d2e4169ee7";
const SENDER: &str = "0xde0b295669a9fd93d5f28d9ec85e40f4cb697bae";
const SOL: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

fn some(list: &[&str]) -> Vec<Option<String>> {
    list.iter().map(|s| Some((*s).to_owned())).collect()
}

#[test]
fn the_one_known_sender_of_the_right_type_receives() {
    let senders = some(&[SENDER, &SENDER.to_ascii_uppercase().replace("0X", "0x")]);
    assert_eq!(
        choose_receiver(8453, Some(&senders), OWNER),
        Receiver::To { address: SENDER.to_owned(), to_sender: true }
    );
    let sol = some(&[SOL]);
    assert_eq!(
        choose_receiver(101, Some(&sol), OWNER),
        Receiver::To { address: SOL.to_owned(), to_sender: true }
    );
}

#[test]
fn otherwise_the_owner_on_evm_chains() {
    let owner = Receiver::To { address: OWNER.to_owned(), to_sender: false };
    assert_eq!(choose_receiver(8453, None, OWNER), owner, "refund_to_sender off");
    assert_eq!(choose_receiver(8453, Some(&[]), OWNER), owner, "no receipt");
    assert_eq!(choose_receiver(8453, Some(&[None]), OWNER), owner, "sender unknown");
    let mixed = vec![Some(SENDER.to_owned()), None];
    assert_eq!(choose_receiver(8453, Some(&mixed), OWNER), owner, "partly unknown");
    let two = some(&[SENDER, OWNER]);
    assert_eq!(choose_receiver(8453, Some(&two), OWNER), owner, "two senders");
    let solana_sender = some(&[SOL]);
    assert_eq!(choose_receiver(1, Some(&solana_sender), OWNER), owner, "wrong type");
}

#[test]
fn an_unsent_sweep_quote_is_settled_only_well_after_it_expired() {
    assert!(!can_never_execute(0, u64::MAX), "no expiry: never settled");
    assert!(!can_never_execute(1_000, 1_000));
    assert!(!can_never_execute(1_000, 1_000 + QUOTE_EXPIRY_MARGIN_MS));
    assert!(can_never_execute(1_000, 1_001 + QUOTE_EXPIRY_MARGIN_MS));
}

#[test]
fn a_solana_deposit_without_a_solana_sender_mismatches() {
    match choose_receiver(101, Some(&some(&[SENDER])), OWNER) {
        Receiver::Mismatch(why) => {
            assert!(why.starts_with("Address type mismatch: owner address is evm, but source chain Solana requires solana"), "{why}");
            assert!(why.contains("not a valid solana address"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(choose_receiver(101, None, OWNER), Receiver::Mismatch(_)));
    assert!(
        matches!(choose_receiver(999_999, None, OWNER), Receiver::Mismatch(w) if w.contains("Unknown chain"))
    );
}
