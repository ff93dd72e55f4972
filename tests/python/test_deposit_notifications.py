"""depositkit.DepositClient's notification records (the headless DepositNotifications) against
the in-process devnet: one record per deposit updated in place, at most ``max``, terminal ones
dismissed after ``duration_ms``, dismiss_notification(), refunds attached, and the change
callback."""

from __future__ import annotations

import gc
import sys
import threading
import time
import weakref
from typing import Any

import pytest

from depositkit import (
    CHAIN,
    ConfigurationError,
    DepositClient,
    DepositLifecycleEvent,
    Devnet,
    Notification,
    RefundResult,
)

from conftest import EventLog, detect, new_owner, raises_exactly, wait_until


def detect_any(net: Devnet, client: Any, amount: str) -> list[Any]:
    """Deposits ``amount`` USDC on Base and polls; every event the poll produced."""
    net.deposit(client.deposit_addresses.evm, CHAIN.BASE, "USDC", amount)
    return client.poll_now()


def test_records_follow_deposits_and_are_capped_at_max(net: Devnet, make_client: Any) -> None:
    client = make_client(
        notifications={"max": 2, "duration_ms": 0, "position": "bottom-left", "theme": "light", "class_name": "toasts"}
    )
    assert client.notifications_config == {
        "position": "bottom-left", "theme": "light", "duration_ms": 0, "max": 2, "class_name": "toasts",
    }  # fmt: skip
    snapshots: list[tuple[list[Any], str]] = []
    sub = client.subscribe_notifications(lambda records: snapshots.append((records, threading.current_thread().name)))
    evm = client.initialize().evm
    assert client.notifications() == []
    net.deposit(evm, CHAIN.BASE, "USDC", "1")
    net.deposit(evm, CHAIN.ARBITRUM, "USDC", "2")
    net.deposit(evm, CHAIN.ETHEREUM, "USDT", "3")
    detected = client.poll_now()
    assert len(detected) == 3
    # At once after the poll: two records (the cap dropped the oldest).
    records = client.notifications()
    assert len(records) == 2, records
    assert all(isinstance(r, Notification) for r in records)
    assert {r.id for r in records} <= {d.id for d in detected}
    log = EventLog(client)
    log.until(lambda events: sum(1 for e in events if getattr(e, "phase", None) == "credited") == 3)
    # Updated in place: still two records, now credited; never dismissed (duration_ms 0).
    records = client.notifications()
    assert len(records) == 2, records
    for record in records:
        assert record.phase == "credited" and record.transaction_id and record.explorer_url
        assert record.created_at <= record.updated_at and record.timestamp >= record.created_at
        assert record.destination == {"address": client.owner_address, "chain_id": CHAIN.ARBITRUM}
        assert record.refund is None and record.is_terminal
        assert isinstance(record.event, DepositLifecycleEvent) and record.event.id == record.id
        assert record.event.phase == "credited"
    data = records[0].to_dict()
    assert data["phase"] == "credited" and data["id"] == records[0].id
    assert data["createdAt"] == records[0].created_at and data["updatedAt"] == records[0].updated_at
    assert data["transactionId"] == records[0].transaction_id and "refund" not in data
    assert {k: v for k, v in data.items() if k not in ("createdAt", "updatedAt")} == records[0].event.to_dict()
    assert repr(records[0]).startswith("<depositkit.Notification credited id='dep_")
    # The callback saw every change, never more than max records, on the event thread.
    wait_until(lambda: bool(snapshots) and [r.phase for r in snapshots[-1][0]] == ["credited", "credited"])
    assert all(len(records) <= 2 for records, _ in snapshots)
    assert all(isinstance(records, list) for records, _ in snapshots)
    assert {name for _, name in snapshots} != {threading.main_thread().name}
    # dismiss_notification; unsubscribing stops the callback.
    first = records[0].id
    assert client.dismiss_notification(first) and not client.dismiss_notification(first)
    assert [r.id for r in client.notifications()] == [records[1].id]
    wait_until(lambda: len(snapshots[-1][0]) == 1)
    assert client.unsubscribe(sub) and not client.unsubscribe(sub)
    count = len(snapshots)
    assert client.dismiss_notification(records[1].id)
    assert client.notifications() == []
    time.sleep(0.05)
    assert len(snapshots) == count


def test_terminal_records_expire_after_duration_ms(net: Devnet, make_client: Any) -> None:
    client = make_client(notifications={"duration_ms": 150})
    snapshots: list[list[Any]] = []
    client.subscribe_notifications(snapshots.append)
    client.initialize()
    # Below the threshold: terminal at once. Credited: terminal once swept.
    [below] = detect_any(net, client, "0.3")
    assert below.phase == "below_threshold"
    credited = detect(net, client, CHAIN.BASE, "USDC", "2")
    EventLog(client).reached(credited.id, "credited")
    ids = [r.id for r in client.notifications()]
    assert below.id in ids or credited.id in ids, "the records exist before they expire"
    # Dismissed by the client's timer shortly after their last update.
    wait_until(lambda: client.notifications() == [], timeout=5)
    wait_until(lambda: bool(snapshots) and snapshots[-1] == [], timeout=5)
    assert any(r.id == credited.id and r.phase == "credited" for s in snapshots for r in s)
    assert any(r.id == below.id and r.phase == "below_threshold" for s in snapshots for r in s)


def test_refund_updates_are_attached_and_keep_the_record(net: Devnet, make_client: Any) -> None:
    client = make_client(notifications={"duration_ms": 0}, refund={"enabled": True, "delay_ms": 20})
    client.initialize()
    net.fail_next_sweeps(3)
    detected = detect(net, client, CHAIN.BASE, "USDC", "2")
    last = EventLog(client).refund_done(detected.id)
    assert last.status == "success"
    [record] = client.notifications()
    assert (record.id, record.phase) == (detected.id, "failed")
    assert isinstance(record.refund, RefundResult) and record.refund == last
    assert record.is_terminal and record.to_dict()["refund"] == last.to_dict()
    assert repr(record).endswith("refund='success'>")
    # duration_ms 0: never dismissed automatically; dismissed by hand.
    time.sleep(0.1)
    assert len(client.notifications()) == 1
    assert client.dismiss_notification(detected.id)
    assert not client.dismiss_notification(detected.id)
    assert client.notifications() == []


def test_callback_exceptions_go_to_unraisablehook(
    net: Devnet, make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", reports.append)

    def broken(records: list[Any]) -> None:
        raise RuntimeError(f"host bug with {len(records)} records")

    seen: list[Any] = []
    client = make_client(notifications=True)
    client.subscribe_notifications(broken)
    client.subscribe_notifications(seen.append)
    client.initialize()
    detected = detect(net, client, CHAIN.BASE, "USDC", "2")
    EventLog(client).reached(detected.id, "credited")
    wait_until(lambda: bool(seen) and seen[-1][0].phase == "credited")
    client.close()
    assert reports and all(r.exc_type is RuntimeError and r.object is broken for r in reports)
    assert str(reports[0].exc_value) == "host bug with 1 records"
    assert client.callback_panics == 0


def test_without_the_option_no_records_are_kept(net: Devnet, make_client: Any) -> None:
    client = make_client()
    assert client.notifications_config is None
    with raises_exactly(ConfigurationError, "notifications are not configured"):
        client.subscribe_notifications(lambda records: None)
    with raises_exactly(TypeError, "callable"):
        client.subscribe_notifications(42)  # type: ignore[arg-type]
    client.initialize()
    detected = detect(net, client, CHAIN.BASE, "USDC", "1")
    EventLog(client).reached(detected.id, "credited")
    assert client.notifications() == []
    assert not client.dismiss_notification(detected.id)
    # notifications=True: the defaults. render_item (a React render function) has no headless
    # meaning: it is refused as an unknown key.
    defaults = make_client(notifications=True)
    assert defaults.notifications_config == {
        "position": "top-right", "theme": "dark", "duration_ms": 6000, "max": 5, "class_name": None,
    }  # fmt: skip
    assert make_client(notifications=False).notifications_config is None
    with raises_exactly(ConfigurationError, "invalid notifications", "unknown field `render_item`"):
        make_client(notifications={"render_item": "toast"})


def test_a_notifications_callback_cycle_is_collected(net: Devnet) -> None:
    class Sentinel:
        pass

    sentinel = Sentinel()
    alive = weakref.ref(sentinel)
    client = DepositClient(new_owner(), CHAIN.BASE, services_url=net.services_url, notifications=True)
    # callback → client → (its callback slot) → callback: a cycle only the GC can break.
    client.subscribe_notifications(lambda records, client=client, sentinel=sentinel: None)
    client.initialize()
    del client, sentinel
    gc.collect()
    assert alive() is None
