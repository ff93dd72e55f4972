//! Notification records of a client against an in-process devnet: one record per deposit,
//! updated in place, at most `max`, terminal ones dismissed after `durationMs`, refunds
//! attached, the change callback. (The store's rules are unit-tested with an explicit clock in
//! `src/deposit/notifications.rs`.)

mod deposit_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use deposit_support::*;
use depositkit_core::deposit::{
    DepositPhase, NotificationPosition, NotificationTheme, NotificationsConfig, RefundStatus,
};
use depositkit_core::{ErrorKind, TokenType};
use depositkit_devnet::SweepFaultMode;

fn notifying(net: &Net, max: u32, duration_ms: u64) -> depositkit_core::DepositClient {
    client_with(net, |mut c| {
        c.notifications = Some(NotificationsConfig {
            max,
            duration_ms,
            position: NotificationPosition::BottomLeft,
            theme: NotificationTheme::Light,
            class_name: Some("toasts".into()),
        });
        c
    })
}

#[test]
fn records_follow_deposits_are_capped_and_expire() {
    let net = net();
    let client = notifying(&net, 2, 3000);
    let config = client.notifications_config().unwrap().unwrap();
    assert_eq!(
        (config.position, config.theme, config.class_name.as_deref()),
        (NotificationPosition::BottomLeft, NotificationTheme::Light, Some("toasts"))
    );
    let snapshots = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&snapshots);
    client
        .subscribe_notifications(Box::new(move |records| {
            sink.lock().unwrap().push(records.to_vec());
        }))
        .unwrap();

    let evm = client.deposit_addresses().unwrap().evm;
    net.devnet.deposit(&evm, 8453, TokenType::USDC, "1000000", None).unwrap();
    net.devnet.deposit(&evm, 42161, TokenType::USDC, "2000000", None).unwrap();
    net.devnet.deposit(&evm, 1, TokenType::USDT, "3000000", None).unwrap();
    let detected = client.poll_now().unwrap();
    assert_eq!(detected.len(), 3);
    // At once after the poll: two records (the cap dropped the oldest; a deposit whose sweep
    // already started has its record back, updated).
    let records = client.notifications().unwrap();
    assert_eq!(records.len(), 2, "{records:#?}");
    assert!(records.iter().all(|r| detected.iter().any(|d| d.id == r.event.id)));
    let events = collect_until(&client, Duration::from_secs(20), |seen| credited(seen).len() == 3);
    assert_eq!(credited(&events).len(), 3);
    // Updated in place: still two records, now credited, created before they were updated.
    let records = client.notifications().unwrap();
    assert_eq!(records.len(), 2, "{records:#?}");
    for record in &records {
        assert_eq!(record.event.phase, DepositPhase::Credited);
        assert!(record.created_at <= record.updated_at);
        assert!(record.event.transaction_id.is_some());
    }
    let json = serde_json::to_value(&records[0]).unwrap();
    assert_eq!(json["phase"], "credited");
    assert!(json["createdAt"].is_u64() && json["updatedAt"].is_u64());
    // Terminal records are dismissed after 3 s by the client's timer.
    assert!(eventually(Duration::from_secs(8), || client.notifications().unwrap().is_empty()));
    let snapshots = snapshots.lock().unwrap();
    assert!(snapshots.iter().all(|s| s.len() <= 2), "never more than max");
    assert!(snapshots.last().is_some_and(Vec::is_empty), "the expiry was reported");
}

#[test]
fn dismiss_and_refund_updates() {
    let net = net();
    let client = client_with(&net, |mut c| {
        c.notifications = Some(NotificationsConfig { duration_ms: 0, ..Default::default() });
        c.refund.enabled = true;
        c.refund.delay_ms = 20;
        c
    });
    net.devnet.fail_next_sweeps(3, SweepFaultMode::Fail);
    let id = deposit_detected(&net, &client, 8453, TokenType::USDC, "2000000", None).id;
    let (last, _) = wait_refund(&client, &id);
    assert_eq!(last.status, RefundStatus::Success);
    let records = client.notifications().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].event.phase, DepositPhase::Failed);
    assert_eq!(records[0].refund.as_ref().unwrap().status, RefundStatus::Success);
    // durationMs 0: never dismissed automatically; dismissed by hand.
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(client.notifications().unwrap().len(), 1);
    assert!(client.dismiss_notification(&id).unwrap());
    assert!(!client.dismiss_notification(&id).unwrap());
    assert!(client.notifications().unwrap().is_empty());
}

#[test]
fn without_the_option_no_records_are_kept() {
    let net = net();
    let client = client(&net);
    assert!(client.notifications_config().unwrap().is_none());
    let err = client.subscribe_notifications(Box::new(|_| {})).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    deposit_detected(&net, &client, 8453, TokenType::USDC, "1000000", None);
    assert!(client.notifications().unwrap().is_empty());
    assert!(!client.dismiss_notification("dep_x").unwrap());
}
