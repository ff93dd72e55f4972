//! The store contract (`depositkit_core::deposit::store_contract`) on the embedded SQLite store:
//! the suite every store of the contract passes (depositkit-fleet runs it on PostgreSQL), and
//! the SQLite store's own rules.

use std::path::PathBuf;

use depositkit_core::ErrorKind;
use depositkit_core::deposit::store_contract::{OwnerStore, SqliteOwnerStore, suite};

fn store_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("depositkit-store-contract-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("deposits.sqlite")
}

#[test]
fn the_sqlite_store_keeps_the_contract() {
    let path = store_file("suite");
    suite::check(&|owner| {
        Box::new(SqliteOwnerStore::open(&path, owner).unwrap()) as Box<dyn OwnerStore>
    });
    // One process starts each owner the full way: nothing is kept for a next client, and a
    // client does not ask.
    let store =
        SqliteOwnerStore::open(&path, "0x00000000000000000000000000000000000000c4").unwrap();
    assert!(!store.keeps_starts());
    assert_eq!(store.load_start().unwrap(), None);
    store.release();
}

#[test]
fn an_owner_held_by_a_live_store_of_this_process_is_refused_until_released() {
    let path = store_file("held");
    let owner = "0x00000000000000000000000000000000000000c3";
    let first = SqliteOwnerStore::open(&path, owner).unwrap();
    let error = SqliteOwnerStore::open(&path, owner).err().expect("held");
    assert_eq!(error.kind(), ErrorKind::Configuration);
    assert!(error.message().contains("in use by another live client"), "{}", error.message());
    first.release();
    SqliteOwnerStore::open(&path, owner).expect("free again").release();
}
