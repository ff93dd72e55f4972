//! The fleet's C face without a database: its readers and the errors that come before any
//! query (tests/c/test_fleet.c runs it against PostgreSQL and devnet).

use std::time::Duration;

use ::depositkit_fleet::FleetCommand;
use depositkit_core::deposit::RefundReason;

use super::*;
use crate::deposit::depositkit_event_callback;
use crate::status::with_last_error;

fn status_and_message(body: impl FnOnce() -> depositkit_status) -> (depositkit_status, String) {
    let status = body();
    (status, with_last_error(str::to_owned))
}

#[test]
fn the_template_is_the_deposit_clients_json_without_an_owner() {
    let config = options::template(
        r#"{"destination": {"chainId": 8453}, "servicesUrl": "http://127.0.0.1:9"}"#,
    )
    .unwrap();
    assert_eq!(config.destination.chain_id, 8453);
    let cases = [
        ("{", depositkit_status::Configuration, "template_json is not valid JSON"),
        (
            r#"{"servicesUrl": "http://x"}"#,
            depositkit_status::Configuration,
            "destination is required",
        ),
        (
            r#"{"destination": {"chainId": 8453}, "servicesUrl": "http://x", "pollingIntervalMs": "1"}"#,
            depositkit_status::Configuration,
            "pollingIntervalMs",
        ),
        (
            r#"{"destination": {"chainId": 8453}, "servicesUrl": "http://x", "storePath": "/tmp/s"}"#,
            depositkit_status::Configuration,
            "storePath cannot be set in a fleet's template",
        ),
        (
            r#"{"destination": {"chainId": 8453}, "noSuchOption": 1}"#,
            depositkit_status::Configuration,
            "unknown option \"noSuchOption\"",
        ),
    ];
    for (json, status, want) in cases {
        let err = options::template(json).unwrap_err();
        assert_eq!(err.status, status, "{json}");
        assert!(err.message.contains(want), "{json}: {}", err.message);
    }
}

#[test]
fn member_options_are_read_with_named_errors() {
    let member = options::member(None).unwrap();
    assert_eq!(member.max_connections, 8);
    let member = options::member(Some(
        r#"{"name": "w1", "maxConnections": 3, "leaseTtlMs": 2000, "renewEveryMs": 300}"#,
    ))
    .unwrap();
    assert_eq!(member.name, "w1");
    assert_eq!(member.max_connections, 3);
    assert_eq!(member.lease.ttl, Duration::from_secs(2));
    assert_eq!(member.lease.renew_every, Duration::from_millis(300));
    let cases = [
        ("[1]", "member_json must be an object, got an array"),
        (r#"{"ttl": 1}"#, "unknown key \"ttl\""),
        (r#"{"name": 5}"#, "member_json.name must be a string, got a number"),
        (r#"{"maxConnections": 0}"#, "maxConnections must be at least 1, got 0"),
        (
            r#"{"maxConnections": -2}"#,
            "member_json.maxConnections must be a non-negative integer, got -2",
        ),
        (
            r#"{"leaseTtlMs": 2000, "renewEveryMs": 5000}"#,
            "renewEveryMs must be above 0 and below leaseTtlMs (2000 ms), got 5000 ms",
        ),
        (r#"{"renewEveryMs": 0}"#, "renewEveryMs must be above 0"),
    ];
    for (json, want) in cases {
        let err = options::member(Some(json)).unwrap_err();
        assert_eq!(err.status, depositkit_status::InvalidArgument, "{json}");
        assert!(err.message.contains(want), "{json}: {}", err.message);
    }
}

#[test]
fn commands_are_read_with_named_errors() {
    let sweep = commands::command("sweep", Some(r#"{"depositId": "d1"}"#)).unwrap();
    assert_eq!(sweep, FleetCommand::Sweep { deposit_id: "d1".to_owned() });
    let refund = commands::command("refund", Some(r#"{"depositId": "d1"}"#)).unwrap();
    assert_eq!(
        refund,
        FleetCommand::Refund { deposit_id: "d1".to_owned(), reason: RefundReason::UserRequested }
    );
    assert_eq!(commands::command("recover", None).unwrap(), FleetCommand::Recover);
    let moved =
        commands::command("set_destination", Some(r#"{"destination": {"chainId": 42161}}"#));
    assert!(matches!(moved, Ok(FleetCommand::SetDestination(d)) if d.chain_id == 42161));
    let cases = [
        ("explode", None, depositkit_status::InvalidArgument, "got \"explode\""),
        ("sweep", None, depositkit_status::InvalidArgument, "request \"sweep\" needs depositId"),
        (
            "sweep",
            Some(r#"{"depositId": 7}"#),
            depositkit_status::InvalidArgument,
            "args_json.depositId must be a string, got a number",
        ),
        (
            "recover",
            Some(r#"{"depositId": "d1"}"#),
            depositkit_status::InvalidArgument,
            "request \"recover\" takes no depositId",
        ),
        (
            "sweep",
            Some(r#"{"deposit": "d1"}"#),
            depositkit_status::InvalidArgument,
            "unknown key \"deposit\"",
        ),
        (
            "sweep",
            Some("[]"),
            depositkit_status::InvalidArgument,
            "args_json must be an object, got an array",
        ),
        (
            "refund",
            Some(r#"{"depositId": "d1", "reason": "bored"}"#),
            depositkit_status::InvalidArgument,
            "\"bored\"",
        ),
        ("set_destination", None, depositkit_status::InvalidArgument, "needs destination"),
        (
            "set_destination",
            Some(r#"{"destination": {"chain": 8453}}"#),
            depositkit_status::Configuration,
            "unknown key \"chain\"",
        ),
    ];
    for (kind, args, status, want) in cases {
        let err = commands::command(kind, args).unwrap_err();
        assert_eq!(err.status, status, "{kind} {args:?}");
        assert!(err.message.contains(want), "{kind} {args:?}: {}", err.message);
    }
}

#[test]
fn owners_and_their_destinations_are_checked_before_the_database() {
    let owner = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4";
    assert_eq!(checked_owner(owner, None).unwrap(), owner.to_lowercase());
    let err = checked_owner("0x123", None).unwrap_err();
    assert_eq!(err.status, depositkit_status::InvalidArgument);
    assert!(err.message.contains("'0x123'"), "{}", err.message);
    // X Layer is a deposit source only; Solana needs an address of its own.
    for (chain, want) in [(196, "196"), (101, "address")] {
        let err = checked_owner(owner, Some(&DestinationConfig::chain(chain))).unwrap_err();
        assert_eq!(err.status, depositkit_status::Configuration, "{chain}");
        assert!(err.message.contains(want), "{chain}: {}", err.message);
    }
}

#[test]
fn join_checks_its_arguments_and_never_shows_the_password() {
    let template = cr#"{"destination": {"chainId": 8453}, "servicesUrl": "http://127.0.0.1:9"}"#;
    let mut out: *const depositkit_fleet = std::ptr::null();
    let (status, message) = status_and_message(|| unsafe {
        depositkit_fleet_join(std::ptr::null(), template.as_ptr(), std::ptr::null(), &raw mut out)
    });
    assert_eq!(
        (status, message.as_str()),
        (depositkit_status::NullArgument, "database_url must not be NULL")
    );
    let url = c"postgres://app:Sekr3t-pw@127.0.0.1:notaport/deposits";
    let (status, message) = status_and_message(|| unsafe {
        depositkit_fleet_join(url.as_ptr(), template.as_ptr(), std::ptr::null(), &raw mut out)
    });
    assert_eq!(status, depositkit_status::Configuration, "{message}");
    assert!(!message.contains("Sekr3t"), "{message}");
    let url = c"postgres://app:Sekr3t-pw@127.0.0.1:1/deposits?connect_timeout=2";
    let (status, message) = status_and_message(|| unsafe {
        depositkit_fleet_join(url.as_ptr(), template.as_ptr(), std::ptr::null(), &raw mut out)
    });
    assert_eq!(status, depositkit_status::Network, "{message}");
    assert!(message.contains("127.0.0.1:1/deposits") && !message.contains("Sekr3t"), "{message}");
    assert!(out.is_null());
    unsafe { depositkit_fleet_free(std::ptr::null()) };
}

#[test]
fn calls_name_their_null_arguments() {
    let mut text: *mut std::ffi::c_char = std::ptr::null_mut();
    let (status, message) =
        status_and_message(|| unsafe { depositkit_fleet_node_id(std::ptr::null(), &raw mut text) });
    assert_eq!(
        (status, message.as_str()),
        (depositkit_status::NullArgument, "fleet must not be NULL")
    );
    let (status, message) = status_and_message(|| unsafe {
        depositkit_fleet_request(
            std::ptr::null(),
            c"0x".as_ptr(),
            c"recover".as_ptr(),
            std::ptr::null(),
            0,
            &raw mut text,
        )
    });
    assert_eq!(
        (status, message.as_str()),
        (depositkit_status::NullArgument, "fleet must not be NULL")
    );
    assert!(text.is_null());
}

/// How many times [`count_free`] ran on each counter.
unsafe extern "C" fn count_free(user_data: *mut std::ffi::c_void) {
    // SAFETY: the tests below hand over a pointer to an `AtomicU32` that outlives the call.
    let frees = unsafe { &*user_data.cast::<std::sync::atomic::AtomicU32>() };
    frees.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

unsafe extern "C" fn never_called(
    _: *mut std::ffi::c_void,
    _: *const std::ffi::c_char,
    _: usize,
) -> std::ffi::c_int {
    panic!("no subscription is made in these tests")
}

#[test]
fn a_refused_subscription_releases_its_user_data_once() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let cases: [(depositkit_event_callback, &str); 2] =
        [(None, "callback must not be NULL"), (Some(never_called), "fleet must not be NULL")];
    for (callback, want) in cases {
        let frees = AtomicU32::new(0);
        let mut id = 0u64;
        let (status, message) = status_and_message(|| unsafe {
            depositkit_fleet_subscribe(
                std::ptr::null(),
                std::ptr::null(),
                callback,
                (&raw const frees).cast_mut().cast(),
                Some(count_free),
                &raw mut id,
            )
        });
        assert_eq!((status, message.as_str()), (depositkit_status::NullArgument, want));
        assert_eq!(frees.load(Ordering::SeqCst), 1, "{want}");
        assert_eq!(id, 0);
    }
    let mut removed = true;
    let (status, message) = status_and_message(|| unsafe {
        depositkit_fleet_unsubscribe(std::ptr::null(), 1, &raw mut removed)
    });
    assert_eq!(
        (status, message.as_str()),
        (depositkit_status::NullArgument, "fleet must not be NULL")
    );
    assert!(removed);
}
