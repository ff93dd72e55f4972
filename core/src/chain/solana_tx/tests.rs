use super::*;
use crate::error::ErrorKind;

#[test]
fn program_ids_decode() {
    assert_eq!(SYSTEM_PROGRAM.to_string(), "11111111111111111111111111111111");
    assert_eq!(TOKEN_PROGRAM.to_string(), "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
    assert_eq!(
        ASSOCIATED_TOKEN_PROGRAM.to_string(),
        "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
    );
}

#[test]
fn pubkeys_parse_and_reject() {
    let key: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".parse().unwrap();
    assert_eq!(key.to_string(), "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
    assert_eq!("0OIl".parse::<Pubkey>().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert!("abc".parse::<Pubkey>().unwrap_err().message().contains("32 bytes"));
    assert_eq!(format!("{:?}", SYSTEM_PROGRAM), "Pubkey(11111111111111111111111111111111)");
}

#[test]
fn compact_u16_matches_solana() {
    for (value, bytes) in [
        (0usize, vec![0x00]),
        (0x7f, vec![0x7f]),
        (0x80, vec![0x80, 0x01]),
        (0xff, vec![0xff, 0x01]),
        (0x100, vec![0x80, 0x02]),
        (0x3fff, vec![0xff, 0x7f]),
        (0x4000, vec![0x80, 0x80, 0x01]),
        (0xffff, vec![0xff, 0xff, 0x03]),
    ] {
        let mut out = Vec::new();
        encode_compact_u16(value, &mut out);
        assert_eq!(out, bytes, "{value}");
        assert_eq!(decode_compact_u16(&bytes), Some((value, bytes.len())));
    }
    assert_eq!(decode_compact_u16(&[0x80, 0x00]), None, "non-canonical");
    assert_eq!(decode_compact_u16(&[0xff, 0xff, 0x04]), None, "too large");
    assert_eq!(decode_compact_u16(&[0x80]), None, "truncated");
}

#[test]
fn instruction_data() {
    let a = Pubkey::new_from_array([1; 32]);
    let b = Pubkey::new_from_array([2; 32]);
    let ix = system_transfer(&a, &b, 1_000_000_000);
    assert_eq!(ix.data, [2, 0, 0, 0, 0, 0xca, 0x9a, 0x3b, 0, 0, 0, 0]);
    let ix = spl_transfer_checked(&a, &b, &a, &b, 25_000_000, 6);
    assert_eq!(ix.data, [12, 0x40, 0x78, 0x7d, 0x01, 0, 0, 0, 0, 6]);
    assert_eq!(ix.accounts[3], AccountMeta::new_readonly(b, true));
    let ix = create_associated_token_account_idempotent(&a, &b, &a);
    assert_eq!(ix.data, [1]);
    assert_eq!(ix.accounts.len(), 6);
}

#[test]
fn message_orders_keys_and_round_trips() {
    let payer = Pubkey::new_from_array([9; 32]);
    let to = Pubkey::new_from_array([3; 32]);
    let owner = Pubkey::new_from_array([1; 32]);
    let mint = Pubkey::new_from_array([5; 32]);
    let instructions = [
        create_associated_token_account_idempotent(&payer, &to, &mint),
        spl_transfer_checked(
            &associated_token_address(&owner, &mint),
            &mint,
            &associated_token_address(&to, &mint),
            &owner,
            7,
            6,
        ),
    ];
    let message = Message::new(&instructions, &payer, Hash::new_from_array([7; 32])).unwrap();
    assert_eq!(message.account_keys[0], payer);
    assert_eq!(message.account_keys[1], owner, "readonly signer after the payer");
    assert_eq!(
        message.header,
        MessageHeader {
            num_required_signatures: 2,
            num_readonly_signed_accounts: 1,
            num_readonly_unsigned_accounts: 5, // to, mint, system, token, ATA program
        }
    );
    assert_eq!(message.signers(), [payer, owner]);
    let bytes = message.serialize();
    assert_eq!(Message::deserialize(&bytes).unwrap(), message);
    let tx = Transaction::unsigned(message.clone());
    assert_eq!(tx.signatures.len(), 2);
    let wire = tx.serialize();
    assert_eq!(Transaction::deserialize(&wire).unwrap(), tx);
    assert!(Transaction::deserialize(&wire[..wire.len() - 1]).is_err());
    let mut longer = wire.clone();
    longer.push(0);
    assert!(Transaction::deserialize(&longer).is_err());
    let mut tx = tx;
    tx.set_signature(&owner, Signature::new_from_array([4; 64])).unwrap();
    assert_eq!(tx.signatures[1], Signature::new_from_array([4; 64]));
    assert!(tx.set_signature(&to, Signature::EMPTY).is_err());
    assert!(Transaction::with_signatures(message, vec![]).is_err());
}

// Reference bytes produced by solders 0.29 (`Message.new_with_blockhash`), the Python
// binding of Solana's own Rust types.
const SOLDERS_SYSTEM_TRANSFER: &str = concat!(
    "010001030101010101010101010101010101010101010101010101010101010101010101",
    "0202020202020202020202020202020202020202020202020202020202020202",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0707070707070707070707070707070707070707070707070707070707070707",
    "01020200010c0200000000ca9a3b00000000"
);
const SOLDERS_SPL_TRANSFER: &str = concat!(
    "010005080101010101010101010101010101010101010101010101010101010101010101",
    "6a79f2c6bd46b8300e2d46f1b734bdd937141df9be10ff49d0a3ffc43c88fbe6",
    "ebb46d0eb7bbe4951ee4eea6dd139f959f24fe1a1145da2d7c06b04ed0c94e67",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0202020202020202020202020202020202020202020202020202020202020202",
    "06ddf6e1d765a193d9cbe146ceeb79ac1cb485ed5f5b37913a8cf5857eff00a9",
    "8c97258f4e2489f1bb3d1029148e0d830b5a1399daff1084048e7bd8dbe9f859",
    "c6fa7af3bedbad3a3d65f36aabc97431b1bbe4c2d2f6e0e47ca60203452f5d61",
    "0707070707070707070707070707070707070707070707070707070707070707",
    "02060600010407030501010504020701000a0c40787d010000000006"
);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn system_transfer_message_matches_solders() {
    let from = Pubkey::new_from_array([1; 32]);
    let to = Pubkey::new_from_array([2; 32]);
    let ix = system_transfer(&from, &to, 1_000_000_000);
    let message = Message::new(&[ix], &from, Hash::new_from_array([7; 32])).unwrap();
    assert_eq!(hex(&message.serialize()), SOLDERS_SYSTEM_TRANSFER);
}

#[test]
fn spl_transfer_with_ata_creation_matches_solders() {
    let wallet = Pubkey::new_from_array([1; 32]);
    let to = Pubkey::new_from_array([2; 32]);
    let mint: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".parse().unwrap();
    let source = associated_token_address(&wallet, &mint);
    let destination = associated_token_address(&to, &mint);
    assert_eq!(source.to_string(), "Gs6NxmndAL3PULGZeYUHCknpMdDVbL46eFCBh856p5z6");
    assert_eq!(destination.to_string(), "8Ae4vjYTZ5Z8mq2GJMUXpU2LDKMsqDaA7Tg7sZ85Gz9T");
    let instructions = [
        create_associated_token_account_idempotent(&wallet, &to, &mint),
        spl_transfer_checked(&source, &mint, &destination, &wallet, 25_000_000, 6),
    ];
    let message = Message::new(&instructions, &wallet, Hash::new_from_array([7; 32])).unwrap();
    assert_eq!(hex(&message.serialize()), SOLDERS_SPL_TRANSFER);
}

#[test]
fn usdc_ata_of_a_known_owner() {
    let mint: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".parse().unwrap();
    let owner: Pubkey = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM".parse().unwrap();
    let seeds: [&[u8]; 3] = [owner.as_bytes(), TOKEN_PROGRAM.as_bytes(), mint.as_bytes()];
    let (ata, bump) = find_program_address(&seeds, &ASSOCIATED_TOKEN_PROGRAM).unwrap();
    assert_eq!(ata.to_string(), "FGETo8T8wMcN2wCjav8VK6eh3dLk63evNDPxzLSJra8B");
    assert_eq!(bump, 254);
    assert_eq!(associated_token_address(&owner, &mint), ata);
}

#[test]
fn program_addresses() {
    // A program address is off the curve; an ordinary ed25519 public key is on it.
    let mint: Pubkey = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v".parse().unwrap();
    let owner: Pubkey = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM".parse().unwrap();
    assert!(owner.is_on_curve());
    let ata = associated_token_address(&owner, &mint);
    assert!(!ata.is_on_curve());
    assert!(create_program_address(&[&[0u8; 33]], &TOKEN_PROGRAM).is_none());
    assert!(find_program_address(&[&b"x"[..]; 16], &TOKEN_PROGRAM).is_none());
}
