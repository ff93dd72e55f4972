//! Fault injection over HTTP and in process, and graceful shutdown with a request in flight.

mod common;

use std::time::{Duration, Instant};

use common::*;
use depositkit_devnet::{Fault, codes};
use serde_json::json;

fn is_project_user() -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": "isProjectUser", "params": ["solana", SOL_A]})
        .to_string()
}

#[test]
fn injected_status_with_retry_after_then_normal_service() {
    let f = Fixture::start_with(|config| config.with_fault_injection());
    let faults_url = format!("{}/devnet/faults", f.devnet.base_url());
    let reply = post(
        &f.agent,
        &faults_url,
        None,
        Some("application/json"),
        r#"{"status": 429, "count": 2, "retryAfter": 0}"#,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["pending"], json!([{"status": 429, "retryAfter": 0, "count": 2}]));

    for _ in 0..2 {
        let reply = f.post(&is_project_user());
        assert_eq!(reply.status, 429);
        assert_eq!(reply.header("retry-after"), Some("0"));
        let response = reply.json();
        assert_eq!(response["id"], 7);
        let error = expect_error(&response, codes::INJECTED_FAULT);
        assert_eq!(error["data"]["status"], 429);
    }
    let reply = f.post(&is_project_user());
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"], true);

    // Without retryAfter there is no header; DELETE disarms.
    let reply = post(
        &f.agent,
        &faults_url,
        None,
        Some("application/json"),
        r#"{"status": 503, "count": 5}"#,
    );
    assert_eq!(reply.status, 200);
    let reply = f.post(&is_project_user());
    assert_eq!(reply.status, 503);
    assert_eq!(reply.header("retry-after"), None);
    let reply = delete(&f.agent, &faults_url);
    assert_eq!(reply.json()["pending"], json!([]));
    assert_eq!(f.post(&is_project_user()).status, 200);

    // Health is never affected.
    post(&f.agent, &faults_url, None, Some("application/json"), r#"{"status": 500}"#);
    assert_eq!(get(&f.agent, &format!("{}/devnet/health", f.devnet.base_url())).status, 200);
}

#[test]
fn injected_delay() {
    let f = Fixture::start_with(|config| config.with_fault_injection());
    let faults_url = format!("{}/devnet/faults", f.devnet.base_url());
    let reply = post(
        &f.agent,
        &faults_url,
        None,
        Some("application/json"),
        r#"{"delayMs": 150, "count": 1}"#,
    );
    assert_eq!(reply.status, 200);
    let started = Instant::now();
    let reply = f.post(&is_project_user());
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "answered after {:?}",
        started.elapsed()
    );
    assert_eq!(reply.status, 200);
    assert_eq!(get(&f.agent, &faults_url).json()["pending"], json!([]));
}

#[test]
fn bad_fault_descriptions_are_refused() {
    let f = Fixture::start_with(|config| config.with_fault_injection());
    let faults_url = format!("{}/devnet/faults", f.devnet.base_url());
    for body in [
        r#"{"status": 200}"#,
        r#"{"count": 1}"#,
        r#"{"status": 429, "count": 0}"#,
        r#"{"stauts": 429}"#,
        "nope",
    ] {
        let reply = post(&f.agent, &faults_url, None, Some("application/json"), body);
        assert_eq!(reply.status, 400, "{body}");
        assert!(reply.json()["error"].is_string());
    }
}

#[test]
fn fault_endpoint_is_off_unless_enabled() {
    let f = Fixture::start();
    let faults_url = format!("{}/devnet/faults", f.devnet.base_url());
    let reply = post(&f.agent, &faults_url, None, Some("application/json"), r#"{"status": 429}"#);
    assert_eq!(reply.status, 404);
    assert_eq!(f.post(&is_project_user()).status, 200);

    // The in-process API works regardless.
    f.devnet.inject_fault(&Fault::status(502, 1).with_retry_after(2)).unwrap();
    let reply = f.post(&is_project_user());
    assert_eq!(reply.status, 502);
    assert_eq!(reply.header("retry-after"), Some("2"));
    assert_eq!(f.post(&is_project_user()).status, 200);
    assert!(f.devnet.inject_fault(&Fault::status(200, 1)).is_err());
}

#[test]
fn shutdown_lets_an_in_flight_request_finish() {
    let f = Fixture::start_with(|config| config.with_fault_injection());
    f.devnet.inject_fault(&Fault::delay(Duration::from_millis(300), 1)).unwrap();
    let url = f.devnet.user_rpc_url();
    let auth = basic(&f.a.project_id, &f.a.server_key);
    let agent = f.agent.clone();
    let in_flight = std::thread::spawn(move || {
        post(&agent, &url, Some(&auth), Some("application/json"), &is_project_user())
    });
    // The fault is used up once the server has the request.
    let faults_url = format!("{}/devnet/faults", f.devnet.base_url());
    while !get(&f.agent, &faults_url).json()["pending"].as_array().unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let Fixture { devnet, .. } = f;
    let base = devnet.base_url();
    devnet.shutdown().unwrap();
    let reply = in_flight.join().unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"], true);
    // Nothing listens any more.
    assert!(ureq::get(format!("{base}/devnet/health")).call().is_err());
}
