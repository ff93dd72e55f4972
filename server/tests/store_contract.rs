//! The store contract: the same suite against SQLite and PostgreSQL (a real server, a fresh
//! database per test). Every test runs once per store.

mod common;

use std::time::{Duration, SystemTime};

use common::{Backend, Database, EVM, SOL, open, runtime};
use depositkit_server::store::{Found, Lookup};
use depositkit_server::{ChainFamily, Error, NewUser, Profile, SessionStatus, UserStore, time};
use serde_json::json;

/// Runs `$test` once per store as `$test::sqlite` and `$test::postgres`.
macro_rules! both_stores {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            use super::*;
            #[test]
            fn sqlite() {
                with_store(Backend::Sqlite, super::$test);
            }
            #[test]
            fn postgres() {
                with_store(Backend::Postgres, super::$test);
            }
        }
    )*};
}

both_stores!(
    users_and_wallets,
    identities,
    project_membership,
    sessions,
    server_keys,
    a_request_reads_its_key_and_its_project_only,
    bad_input_is_a_typed_error_naming_the_value,
    import_is_all_or_nothing,
);

fn with_store<F: AsyncFnOnce(UserStore)>(backend: Backend, test: F) {
    let db = Database::new(backend);
    let runtime = runtime();
    let store = open(&runtime, &db);
    runtime.block_on(test(store.clone()));
    store.close();
}

async fn users_and_wallets(store: UserStore) {
    let project = store.create_project("shop").await.unwrap().project_id;
    let other = store.create_project("other").await.unwrap().project_id;
    let profile = Profile { google_id: Some("g-1".into()), ..Profile::with_email("a@example.com") };
    let uuid = "0B7C5A4E-3F1D-4C2A-9E8B-1A2B3C4D5E6F";
    let added =
        store.add_user(&project, &NewUser { uuid: Some(uuid.into()), profile }).await.unwrap();
    assert_eq!(added, uuid.to_lowercase());
    store.add_wallet(&added, ChainFamily::Evm, EVM).await.unwrap();
    store.add_wallet(&added, ChainFamily::Evm, EVM).await.unwrap(); // again: nothing happens
    store.add_wallet(&added, ChainFamily::Solana, SOL).await.unwrap();
    let second = store.add_user(&project, &NewUser::with_email("b@example.com")).await.unwrap();

    let user = store.user(&project, &added).await.unwrap().unwrap();
    assert_eq!(user.profile.email, "a@example.com");
    assert_eq!(user.profile.google_id.as_deref(), Some("g-1"));
    assert_eq!(user.created_at.len(), "2022-06-08T07:47:54.000Z".len());
    let wallets: Vec<(&str, &str)> =
        user.wallets.iter().map(|w| (w.chain.as_str(), w.public_address.as_str())).collect();
    assert_eq!(wallets, [("evm_chain", EVM.to_lowercase().as_str()), ("solana", SOL)]);
    // Users belong to their project only.
    assert_eq!(store.user(&other, &added).await.unwrap(), None);
    assert_eq!(store.user_uuids(&project).await.unwrap(), [added, second]);
    assert!(store.user_uuids(&other).await.unwrap().is_empty());
}

async fn identities(store: UserStore) {
    let project = store.create_project("shop").await.unwrap().project_id;
    let other = store.create_project("other").await.unwrap().project_id;
    let alice = store.add_user(&project, &NewUser::with_email("a@example.com")).await.unwrap();
    let bob = store.add_user(&project, &NewUser::with_email("b@example.com")).await.unwrap();
    let carol = store.add_user(&other, &NewUser::with_email("c@example.com")).await.unwrap();
    store.add_identity(&alice, "jwt", "uid-1").await.unwrap();
    store.add_identity(&alice, "jwt", "uid-1").await.unwrap(); // the same owner: fine
    let found = store.user_by_identity(&project, "jwt", "uid-1").await.unwrap().unwrap();
    assert_eq!(found.uuid, alice);
    let taken = store.add_identity(&bob, "jwt", "uid-1").await.unwrap_err();
    assert!(matches!(taken, Error::Conflict(_)), "{taken}");
    assert!(taken.to_string().contains(&alice) && taken.to_string().contains("uid-1"), "{taken}");
    // Identities are per project.
    store.add_identity(&carol, "jwt", "uid-1").await.unwrap();
    assert_eq!(store.user_by_identity(&other, "jwt", "uid-1").await.unwrap().unwrap().uuid, carol);
    assert_eq!(store.user_by_identity(&project, "jwt", "uid-2").await.unwrap(), None);
    assert_eq!(store.user_by_identity(&project, "google", "uid-1").await.unwrap(), None);
}

async fn project_membership(store: UserStore) {
    let project = store.create_project("shop").await.unwrap().project_id;
    let other = store.create_project("other").await.unwrap().project_id;
    let user = store.add_user(&project, &NewUser::with_email("a@example.com")).await.unwrap();
    store.add_wallet(&user, ChainFamily::Evm, EVM).await.unwrap();
    let interacted = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
    store.add_interaction(&project, ChainFamily::Evm, interacted).await.unwrap();
    store.add_interaction(&project, ChainFamily::Evm, interacted).await.unwrap();
    for address in
        [EVM, &EVM.to_lowercase(), interacted, &interacted.to_uppercase().replace("0X", "0x")]
    {
        assert!(
            store.is_project_address(&project, ChainFamily::Evm, address).await.unwrap(),
            "{address}"
        );
        assert!(
            !store.is_project_address(&other, ChainFamily::Evm, address).await.unwrap(),
            "{address}"
        );
    }
    // The same text on the other chain family is not a member.
    assert!(!store.is_project_address(&project, ChainFamily::Solana, SOL).await.unwrap());
    store.add_wallet(&user, ChainFamily::Solana, SOL).await.unwrap();
    assert!(store.is_project_address(&project, ChainFamily::Solana, SOL).await.unwrap());
}

async fn sessions(store: UserStore) {
    let project = store.create_project("shop").await.unwrap().project_id;
    let alice = store.add_user(&project, &NewUser::with_email("a@example.com")).await.unwrap();
    let bob = store.add_user(&project, &NewUser::with_email("b@example.com")).await.unwrap();
    let hour = Duration::from_secs(3600);
    let token = store.add_session(&alice, None, SystemTime::now() + hour).await.unwrap();
    assert!(token.starts_with("st_"), "{token}");
    let expired =
        store.add_session(&alice, Some("expired-token"), SystemTime::now() - hour).await.unwrap();
    let now = time::now_ms();
    assert_eq!(store.session_status(&alice, &token, now).await.unwrap(), SessionStatus::Valid);
    assert_eq!(store.session_status(&alice, &expired, now).await.unwrap(), SessionStatus::Expired);
    assert_eq!(store.session_status(&bob, &token, now).await.unwrap(), SessionStatus::Unknown);
    assert_eq!(store.session_status(&alice, "nope", now).await.unwrap(), SessionStatus::Unknown);
    let reused = store.add_session(&bob, Some("expired-token"), SystemTime::now() + hour).await;
    assert!(matches!(reused, Err(Error::Conflict(_))), "{reused:?}");
    // The token never appears in an error.
    let bad = store.add_session(&bob, Some("has space"), SystemTime::now()).await.unwrap_err();
    assert!(
        matches!(bad, Error::InvalidInput { .. }) && !bad.to_string().contains("has space"),
        "{bad}"
    );
}

/// A request's key check and lookup in one trip (`authenticate_and_look_up`, one statement per
/// method where the store can): the key is read on every request, and a project's key finds
/// only that project's users and wallets.
async fn a_request_reads_its_key_and_its_project_only(store: UserStore) {
    let shop = store.create_project("shop").await.unwrap();
    let other = store.create_project("other").await.unwrap();
    let alice = store.add_user(&shop.project_id, &NewUser::with_email("a@example.com")).await;
    let alice = alice.unwrap();
    store.add_wallet(&alice, ChainFamily::Solana, SOL).await.unwrap();
    store.add_wallet(&alice, ChainFamily::Evm, EVM).await.unwrap();
    let hour = Duration::from_secs(3600);
    let token = store.add_session(&alice, None, SystemTime::now() + hour).await.unwrap();
    let now = time::now_ms();
    let info = Lookup::UserInfo { uuid: alice.clone(), token, now_ms: now };
    let member = Lookup::Membership { chain: ChainFamily::Evm, address: EVM.to_lowercase() };
    let ask = async |project: &depositkit_server::ProjectCredentials, lookup: &Lookup| {
        store.authenticate_and_look_up(&project.project_id, &project.server_key, lookup).await
    };
    // Twice each: PostgreSQL checks the key first for credentials it has not seen valid yet.
    for _ in 0..2 {
        let Some(Found::UserInfo(Some((user, status)))) = ask(&shop, &info).await.unwrap() else {
            panic!("alice not found through her project");
        };
        assert_eq!((user.uuid.as_str(), status), (alice.as_str(), SessionStatus::Valid));
        // In the order they were added.
        let wallets: Vec<_> = user.wallets.iter().map(|w| w.public_address.as_str()).collect();
        assert_eq!(wallets, [SOL.to_owned(), EVM.to_lowercase()]);
        assert_eq!(user, store.user(&shop.project_id, &alice).await.unwrap().unwrap());
        assert_eq!(ask(&shop, &member).await.unwrap(), Some(Found::Membership(true)));
        assert_eq!(ask(&other, &info).await.unwrap(), Some(Found::UserInfo(None)));
        assert_eq!(ask(&other, &member).await.unwrap(), Some(Found::Membership(false)));
    }
    let rotated = store.rotate_server_key(&shop.project_id).await.unwrap();
    assert_eq!(ask(&shop, &info).await.unwrap(), None, "the old key stops at once");
    assert_eq!(ask(&shop, &member).await.unwrap(), None);
    assert_eq!(ask(&shop, &Lookup::Nothing).await.unwrap(), None);
    assert!(matches!(ask(&rotated, &info).await.unwrap(), Some(Found::UserInfo(Some(_)))));
    let unknown = depositkit_server::ProjectCredentials {
        project_id: "00000000-0000-4000-8000-000000000000".into(),
        server_key: rotated.server_key.clone(),
    };
    assert_eq!(ask(&unknown, &info).await.unwrap(), None);
    assert_eq!(ask(&unknown, &member).await.unwrap(), None);
}

async fn server_keys(store: UserStore) {
    let credentials = store.create_project("shop").await.unwrap();
    let project = credentials.project_id.clone();
    assert!(credentials.server_key.starts_with("sk_"));
    assert!(store.verify_server_key(&project, &credentials.server_key).await.unwrap());
    assert!(!store.verify_server_key(&project, "sk_wrong").await.unwrap());
    let unknown = "00000000-0000-4000-8000-000000000000";
    assert!(!store.verify_server_key(unknown, &credentials.server_key).await.unwrap());
    let rotated = store.rotate_server_key(&project).await.unwrap();
    assert!(!store.verify_server_key(&project, &credentials.server_key).await.unwrap());
    assert!(store.verify_server_key(&project, &rotated.server_key).await.unwrap());
    let missing = store.rotate_server_key(unknown).await.unwrap_err();
    assert!(
        matches!(missing, Error::NotFound(_)) && missing.to_string().contains(unknown),
        "{missing}"
    );
}

async fn bad_input_is_a_typed_error_naming_the_value(store: UserStore) {
    let project = store.create_project("shop").await.unwrap().project_id;
    let unknown = "00000000-0000-4000-8000-000000000000";
    let invalid = |e: Error, field: &str, value: &str| match &e {
        Error::InvalidInput { field: f, message } => {
            assert_eq!(f, field, "{e}");
            assert!(message.contains(value), "{e} does not name {value}");
        }
        other => panic!("expected InvalidInput for {field}, got {other}"),
    };
    let bad_uuid = NewUser { uuid: Some("not-a-uuid".into()), ..NewUser::with_email("a@b.c") };
    invalid(store.add_user(&project, &bad_uuid).await.unwrap_err(), "uuid", "\"not-a-uuid\"");
    invalid(
        store.add_user(&project, &NewUser::with_email(" ")).await.unwrap_err(),
        "email",
        "empty",
    );
    invalid(store.create_project("").await.unwrap_err(), "name", "1 to 200");
    let missing = store.add_user(unknown, &NewUser::with_email("a@b.c")).await.unwrap_err();
    assert!(
        matches!(missing, Error::NotFound(_)) && missing.to_string().contains(unknown),
        "{missing}"
    );
    let user = store.add_user(&project, &NewUser::with_email("a@b.c")).await.unwrap();
    let again = NewUser { uuid: Some(user.clone()), ..NewUser::with_email("x@y.z") };
    let taken = store.add_user(&project, &again).await.unwrap_err();
    assert!(matches!(taken, Error::Conflict(_)) && taken.to_string().contains(&user), "{taken}");
    invalid(
        store.add_wallet(&user, ChainFamily::Evm, "0x1234").await.unwrap_err(),
        "address",
        "\"0x1234\"",
    );
    invalid(store.add_wallet(&user, ChainFamily::Solana, EVM).await.unwrap_err(), "address", EVM);
    invalid(store.add_identity(&user, "JWT!", "u").await.unwrap_err(), "provider", "\"JWT!\"");
    let nobody = store.add_wallet(unknown, ChainFamily::Solana, SOL).await.unwrap_err();
    assert!(
        matches!(nobody, Error::NotFound(_)) && nobody.to_string().contains(unknown),
        "{nobody}"
    );
}

async fn import_is_all_or_nothing(store: UserStore) {
    let project = store.create_project("shop").await.unwrap().project_id;
    let uuid = "0b7c5a4e-3f1d-4c2a-9e8b-1a2b3c4d5e6f";
    let records = json!([
        {"uuid": uuid, "email": "a@b.c", "googleId": "g1", "createdAt": "2022-06-08T07:47:54.000Z",
         "wallets": [{"chain": "evm_chain", "publicAddress": EVM}, {"chain": "solana", "publicAddress": SOL}],
         "identities": [{"provider": "jwt", "uid": "u-1"}],
         "sessions": [{"token": "tok-1", "expiresAt": "2999-01-01T00:00:00Z"}]},
        {"email": "d@e.f", "phone": null}
    ]);
    let uuids = store.import_users(&project, &records).await.unwrap();
    assert_eq!(uuids[0], uuid);
    let user = store.user(&project, uuid).await.unwrap().unwrap();
    assert_eq!(user.created_at, "2022-06-08T07:47:54.000Z");
    assert_eq!(user.updated_at, user.created_at);
    assert_eq!(user.wallets[0].public_address, EVM.to_lowercase());
    assert_eq!(store.user_by_identity(&project, "jwt", "u-1").await.unwrap().unwrap().uuid, uuid);
    let status = store.session_status(uuid, "tok-1", time::now_ms()).await.unwrap();
    assert_eq!(status, SessionStatus::Valid);

    let fresh = store.create_project("fresh").await.unwrap().project_id;
    let cases = [
        (
            json!([{"email": "a@b.c"}, {"email": "x@y.z", "wallets": [{"chain": "evm_chain", "publicAddress": "0x12"}]}]),
            "record 1: invalid wallets[0].publicAddress",
        ),
        (json!([{"email": "a@b.c"}, {"email": 5}]), "record 1: invalid email: expected a string"),
        (json!([{"emial": "a@b.c"}]), "record 0: invalid emial: unknown field"),
        (
            json!([{"email": "a@b.c", "wallets": [{"chain": "btc", "publicAddress": SOL}]}]),
            "record 0: invalid wallets[0].chain",
        ),
        (
            json!([{"email": "a@b.c", "sessions": [{"token": "t", "expiresAt": "soon"}]}]),
            "record 0: invalid sessions[0].expiresAt",
        ),
        (json!([{"name": "n"}]), "record 0: invalid email: is required"),
        (json!([{"email": "a@b.c", "uuid": "nope"}]), "record 0: invalid uuid"),
        // A conflict found only by the database rolls back the records before it too.
        (json!([{"email": "a@b.c"}, {"email": "x@y.z", "uuid": uuid}]), "record 1: user"),
        (json!({"email": "a@b.c"}), "expected an array"),
    ];
    for (records, expected) in cases {
        let err = store.import_users(&fresh, &records).await.unwrap_err().to_string();
        assert!(err.contains(expected), "{err:?} lacks {expected:?}");
        assert!(store.user_uuids(&fresh).await.unwrap().is_empty(), "partial import after {err}");
    }
}
