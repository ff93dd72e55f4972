//! The deposit client when services fail: the JWT service down or lying, sessions expiring and
//! keys rotating mid-session, busy and slow services, failing and ambiguous sweeps.

mod deposit_support;

use std::time::Duration;

use deposit_support::*;
use depositkit_core::deposit::{
    ClientStatus, DepositClient, DepositEvent, DepositPhase, DestinationConfig, SweepStatus,
};
use depositkit_core::{ErrorKind, TokenType};
use depositkit_devnet::{Fault, Service, SweepFaultMode};

fn fresh_client(
    net: &Net,
    tune: impl FnOnce(&mut depositkit_core::DepositClientConfig),
) -> DepositClient {
    let mut config = config(net, &owner(), DestinationConfig::chain(8453));
    tune(&mut config);
    DepositClient::new(config).unwrap()
}

fn deposit_and_detect(net: &Net, client: &DepositClient, raw: &str) -> String {
    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, raw, None).unwrap();
    poll_detected(client).id
}

#[test]
fn jwt_service_down_is_a_jwt_error_and_initialize_may_be_retried() {
    let net = net();
    net.devnet.inject_service_fault(Service::Jwt, &Fault::status(503, 100)).unwrap();
    let client = fresh_client(&net, |_| {});
    let err = client.initialize().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Jwt, "{err}");
    assert!(err.message().contains("JWT service"), "{err}");
    assert_eq!(client.status(), ClientStatus::Error);
    net.devnet.clear_faults();
    client.initialize().unwrap();
    assert_eq!(client.status(), ClientStatus::Ready);

    // Nothing listening at all.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let client = fresh_client(&net, |c| {
        c.jwt_service_url = Some(format!("http://127.0.0.1:{closed}/jwt"));
        c.http_retries = 1;
    });
    let err = client.initialize().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Jwt, "{err}");
    assert!(err.message().starts_with("Failed to connect to JWT service"), "{err}");
}

#[test]
fn refused_credentials_are_an_authentication_error() {
    let net = net();
    net.devnet
        .inject_service_fault_at(Service::Jwt, Some("/v1/jwt"), &Fault::status(401, 1))
        .unwrap();
    let client = fresh_client(&net, |_| {});
    let err = client.initialize().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Authentication, "{err}");
    assert!(err.message().starts_with("Invalid project credentials"), "{err}");
}

#[test]
fn a_forged_jwt_fails_verification() {
    let net = net();
    net.devnet.forge_next_jwts(1).unwrap();
    let client = fresh_client(&net, |_| {});
    let err = client.initialize().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Jwt, "{err}");
    assert!(err.message().starts_with("JWT verification failed"), "{err}");
    // The next token is genuine.
    client.initialize().unwrap();
}

#[test]
fn session_expiry_and_key_rotation_mid_session_do_not_stop_a_sweep() {
    let net = net();
    let client = fresh_client(&net, |_| {});
    client.initialize().unwrap();
    // The services refuse every JWT issued so far; the next one is signed by a new key.
    net.devnet.rotate_jwt_key().unwrap();
    net.devnet.expire_sessions(None);
    let id = deposit_and_detect(&net, &client, "3000000");
    let (last, _) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Credited, "{last:?}");
    // Again, between detection and sweep, with one more rotation.
    let mut config = config(&net, client.owner_address(), DestinationConfig::chain(8453));
    config.auto_sweep = false;
    let manual = DepositClient::new(config).unwrap();
    manual.initialize().unwrap();
    let id = deposit_and_detect(&net, &manual, "2000000");
    net.devnet.rotate_jwt_key().unwrap();
    net.devnet.expire_sessions(Some(client.owner_address()));
    let result = manual.sweep(&id).unwrap();
    assert_eq!(result.status, SweepStatus::Success, "{result:?}");
}

#[test]
fn short_lived_sessions_are_renewed_before_use() {
    // Tokens living 30 s always have less than the 60 s margin left: every use renews.
    let net = net_with(|mut c| {
        c.jwt_ttl = Duration::from_secs(30);
        c
    });
    let client = fresh_client(&net, |_| {});
    client.initialize().unwrap();
    let id = deposit_and_detect(&net, &client, "1000000");
    assert_eq!(wait_terminal(&client, &id).0.phase, DepositPhase::Credited);
}

#[test]
fn busy_services_429_and_5xx_are_retried() {
    let net = net();
    net.devnet.inject_service_fault(Service::Jwt, &Fault::status(500, 1)).unwrap();
    let client = fresh_client(&net, |_| {});
    client.initialize().unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/balances"), &Fault::status(503, 2))
        .unwrap();
    net.devnet
        .inject_service_fault(Service::Signer, &Fault::status(429, 1).with_retry_after(0))
        .unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/quote"), &Fault::status(502, 1))
        .unwrap();
    let id = deposit_and_detect(&net, &client, "2500000");
    let (last, events) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Credited, "{events:#?}");
    assert_eq!(phases(&events, &id).iter().filter(|p| **p == DepositPhase::Processing).count(), 1);
}

#[test]
fn a_slow_service_times_out_and_the_poll_reports_it() {
    let net = net();
    // Warm the devnet up (its first JWT creates the signing key) with default deadlines.
    fresh_client(&net, |_| {}).initialize().unwrap();
    let client = fresh_client(&net, |c| {
        c.request_timeout_ms = 500;
        c.http_retries = 1;
    });
    client.initialize().unwrap();
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/balances"),
            &Fault::delay(Duration::from_millis(1500), 2),
        )
        .unwrap();
    let err = client.poll_now().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UniversalAccount, "{err}");
    assert!(err.message().contains("timed out"), "{err}");
    let reported = std::iter::from_fn(|| client.next_event(Duration::ZERO))
        .any(|e| matches!(e, DepositEvent::Error { kind: ErrorKind::UniversalAccount, .. }));
    assert!(reported);
    // Slow but within the deadline is fine.
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/balances"),
            &Fault::delay(Duration::from_millis(50), 1),
        )
        .unwrap();
    client.poll_now().unwrap();
}

#[test]
fn failing_sweeps_are_retried_three_times_then_reported_failed() {
    let net = net();
    let client = fresh_client(&net, |_| {});
    client.initialize().unwrap();
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    let id = deposit_and_detect(&net, &client, "4000000");
    let (last, events) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Failed, "{events:#?}");
    assert_eq!(
        phases(&events, &id),
        [
            DepositPhase::Detected,
            DepositPhase::Processing,
            DepositPhase::Processing,
            DepositPhase::Processing,
            DepositPhase::Failed
        ]
    );
    assert!(last.error.as_deref().unwrap().contains("after 3 attempts"), "{last:?}");
    assert_eq!(client.sweep_result(&id).unwrap().unwrap().status, SweepStatus::Failed);
    assert_eq!(client.pending_deposits().unwrap()[0].id, id);
    // The money is still in the account; a manual sweep delivers it.
    let evm = client.deposit_addresses().unwrap().evm;
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "4000000");
    assert_eq!(client.status(), ClientStatus::Ready);
    let result = client.sweep(&id).unwrap();
    assert_eq!(result.status, SweepStatus::Success, "{result:?}");
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "0");
}

#[test]
fn rejected_sends_are_retried_until_one_succeeds() {
    let net = net();
    let client = fresh_client(&net, |_| {});
    client.initialize().unwrap();
    net.devnet.fail_next_sweeps(2, SweepFaultMode::Reject);
    let id = deposit_and_detect(&net, &client, "4000000");
    let (last, events) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Credited, "{events:#?}");
    let processing =
        phases(&events, &id).iter().filter(|p| **p == DepositPhase::Processing).count();
    assert_eq!(processing, 3);
}

#[test]
fn an_ambiguous_send_is_resolved_through_the_sweep_status() {
    let net = net();
    let client = fresh_client(&net, |_| {});
    client.initialize().unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &Fault::status(503, 1))
        .unwrap();
    let id = deposit_and_detect(&net, &client, "5000000");
    let (last, events) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Credited, "{events:#?}");
    let delivered = client.sweep_result(&id).unwrap().unwrap().delivered.unwrap();
    let ledger = net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    assert_eq!(ledger, delivered.raw_amount, "delivered exactly once");
}

#[test]
fn a_send_whose_answer_is_lost_is_never_executed_twice() {
    let net = net();
    fresh_client(&net, |_| {}).initialize().unwrap(); // warm-up: the first JWT makes the key
    let client = fresh_client(&net, |c| {
        c.request_timeout_ms = 600;
    });
    client.initialize().unwrap();
    // The first send is held by the service past the client's deadline, then executed.
    net.devnet
        .inject_service_fault_at(
            Service::Ua,
            Some("/v1/sweeps/send"),
            &Fault::delay(Duration::from_millis(1500), 1),
        )
        .unwrap();
    let id = deposit_and_detect(&net, &client, "5000000");
    let (last, events) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Credited, "{events:#?}");
    std::thread::sleep(Duration::from_millis(1500)); // let the held send run
    let delivered = client.sweep_result(&id).unwrap().unwrap().delivered.unwrap();
    let ledger = net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    assert_eq!(ledger, delivered.raw_amount, "the held send was not executed again");
    let evm = client.deposit_addresses().unwrap().evm;
    assert_eq!(net.devnet.ledger_balance(&evm, 8453, TokenType::USDC).unwrap(), "0");
}

#[test]
fn an_unknown_outcome_is_reported_failed_and_resolved_before_any_new_quote() {
    let net = net();
    let client = fresh_client(&net, |c| {
        c.http_retries = 1;
    });
    client.initialize().unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/send"), &Fault::status(503, 1))
        .unwrap();
    net.devnet
        .inject_service_fault_at(Service::Ua, Some("/v1/sweeps/q_"), &Fault::status(503, 100))
        .unwrap();
    let id = deposit_and_detect(&net, &client, "6000000");
    let (last, events) = wait_terminal(&client, &id);
    assert_eq!(last.phase, DepositPhase::Failed, "{events:#?}");
    let error = last.error.unwrap();
    assert!(error.contains("is unknown") && error.contains("reconciled"), "{error}");
    let result = client.sweep_result(&id).unwrap().unwrap();
    assert_eq!(result.status, SweepStatus::Pending);
    assert_eq!(client.pending_deposits().unwrap()[0].id, id);
    assert_eq!(client.status(), ClientStatus::Ready, "no automatic re-quote");
    // Once the service answers again, a manual sweep resolves the same quote.
    net.devnet.clear_faults();
    let result = client.sweep(&id).unwrap();
    assert_eq!(result.status, SweepStatus::Success, "{result:?}");
    let quote_id = error.split_whitespace().find(|w| w.starts_with("q_")).unwrap();
    assert_eq!(
        result.delivered.as_ref().unwrap().quote_id,
        quote_id,
        "the same quote, not a new one"
    );
    let ledger = net.devnet.ledger_balance(client.owner_address(), 8453, TokenType::USDC).unwrap();
    assert_eq!(ledger, result.delivered.unwrap().raw_amount);
}
