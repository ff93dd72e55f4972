"""A depositkit.DepositClient that survives its services failing, against the in-process devnet
with fault injection: the account service down in the middle of a sweep, 429 storms, slow
responses (the watchdog), JWT key rotation and session expiry mid-flow, refunds of deposits whose
sweep outcome is unknown. Every deposit ends credited, or failed and then refunded; none is
lost, paid twice or left in processing; the client recovers by itself."""

from __future__ import annotations

import time
from typing import Any

from depositkit import CHAIN, Devnet, ErrorEvent, RefundError

from conftest import EventLog, detect, new_owner, raises_exactly, wait_until


def delivered_once(net: Devnet, client: Any, *deposit_ids: str) -> None:
    """What the credited deposits delivered is exactly what their destination (USDC to the
    owner on Arbitrum) holds, and nothing is left in the account on Base."""
    total = sum(client.sweep_result(i).delivered.raw_amount for i in deposit_ids)
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == total, "delivered exactly once"
    assert net.ledger_balance(client.deposit_addresses.evm, CHAIN.BASE, "USDC") == 0


def test_account_service_503_during_the_send_then_back_is_credited(net: Devnet, make_client: Any) -> None:
    client = make_client(http_retries=1, reconcile_interval_ms=50)
    client.initialize()
    # The service goes down as the sweep is sent: the send and the status reads fail for two
    # rounds; the client reports the unknown outcome and resolves it by itself.
    net.inject_fault("ua", status=503, count=2, path="/v1/sweeps/send")
    net.inject_fault("ua", status=503, count=4, path="/v1/sweeps/q_")
    detected = detect(net, client, CHAIN.BASE, "USDC", "5")
    log = EventLog(client)
    log.reached(detected.id, "credited", timeout=20)
    assert log.phases(detected.id) == [
        "detected", "processing", "failed", "processing", "failed", "processing", "credited",
    ]  # fmt: skip
    failures = [e.error for e in log.lifecycle(detected.id) if e.phase == "failed"]
    assert all("is unknown" in (error or "") for error in failures), failures
    # One quote throughout: the same one is resolved, never a new one.
    quote_id = next(word for word in (failures[0] or "").split() if word.startswith("q_"))
    result = client.sweep_result(detected.id)
    assert result.status == "success" and result.delivered.quote_id == quote_id
    delivered_once(net, client, detected.id)
    wait_until(lambda: client.status == "ready")


def test_a_sweep_that_keeps_failing_while_the_service_is_down_is_refunded(net: Devnet, make_client: Any) -> None:
    client = make_client(http_retries=1, refund={"enabled": True, "delay_ms": 30, "max_attempts": 3})
    client.initialize()
    # 503 to three sweep quotes (two requests each), then to the first refund attempt's
    # receipts read.
    net.inject_fault("ua", status=503, count=6, path="/v1/sweeps/quote")
    net.inject_fault("ua", status=503, count=2, path="/v1/receipts")
    sender = new_owner()
    detected = detect(net, client, CHAIN.BASE, "USDC", "3", sender=sender)
    log = EventLog(client)
    last = log.refund_done(detected.id, timeout=20)
    assert log.phases(detected.id).count("processing") == 3
    [failed] = [e for e in log.lifecycle(detected.id) if e.phase == "failed"]
    assert "503" in (failed.error or ""), failed
    assert log.refund_statuses(detected.id) == ["pending", "processing", "pending", "processing", "success"]
    assert (last.refunded_to, last.attempts) == (sender, 2)
    assert net.ledger_balance(sender, CHAIN.BASE, "USDC") == 2_970_000
    wait_until(lambda: client.status == "ready")
    assert client.pending_deposits() == []


def test_a_429_storm_does_not_stop_the_watcher(net: Devnet, make_client: Any) -> None:
    client = make_client(http_retries=1)
    evm = client.initialize().evm
    client.start_watching()
    net.inject_fault("ua", status=429, retry_after=0, count=10, path="/v1/balances")
    net.inject_fault("ua", status=429, retry_after=0, count=3, path="/v1/sweeps/quote")
    net.deposit(evm, CHAIN.BASE, "USDC", "2")
    log = EventLog(client)
    log.until(lambda events: any(getattr(e, "phase", None) == "credited" for e in events), timeout=20)
    errors = [e for e in log.events if isinstance(e, ErrorEvent) and e.kind == "UniversalAccountError"]
    assert errors, "the failed polls were reported"
    [credited] = [e for e in log.lifecycle() if e.phase == "credited"]
    assert log.phases(credited.id).count("processing") >= 1
    delivered_once(net, client, credited.id)
    wait_until(lambda: client.status == "watching", timeout=5)


def test_slow_responses_are_ended_by_the_watchdog(net: Devnet, make_client: Any) -> None:
    client = make_client(processing_timeout_ms=600, reconcile_interval_ms=50)
    client.initialize()
    # A quote that hangs: the attempt ends with nothing sent, and the retry delivers.
    net.inject_fault("ua", delay_ms=1500, count=1, path="/v1/sweeps/quote")
    first = detect(net, client, CHAIN.BASE, "USDC", "2")
    log = EventLog(client)
    log.reached(first.id, "credited", timeout=20)
    assert log.phases(first.id).count("processing") == 2
    delivered_once(net, client, first.id)

    # A send that hangs: its outcome is unknown, reported, and resolved with the same quote.
    net.inject_fault("ua", delay_ms=1500, count=1, path="/v1/sweeps/send")
    second = detect(net, client, CHAIN.BASE, "USDC", "3")
    failed = log.reached(second.id, "failed", timeout=20)
    assert "watchdog" in (failed.error or ""), failed
    log.reached(second.id, "credited", timeout=20)
    time.sleep(1.5)  # let the held send run: it must not pay a second time
    delivered_once(net, client, first.id, second.id)
    wait_until(lambda: client.status == "ready")


def test_jwt_key_rotation_and_session_expiry_mid_flow(net: Devnet, make_client: Any) -> None:
    # Between detection and the (manual) sweep: the key rotates and every session expires. The
    # client renews its session (a token signed by the new key, found by refetching the JWKS).
    client = make_client(auto_sweep=False)
    client.initialize()
    detected = detect(net, client, CHAIN.BASE, "USDC", "2")
    net.rotate_jwt_key()
    net.expire_sessions(client.owner_address)
    result = client.sweep(detected.id)
    assert result.status == "success", result
    EventLog(client).reached(detected.id, "credited")
    delivered_once(net, client, detected.id)

    # During an automatic refund's delay: refunded all the same.
    client = make_client(refund={"enabled": True, "delay_ms": 300})
    client.initialize()
    net.fail_next_sweeps(3)
    detected = detect(net, client, CHAIN.BASE, "USDC", "2")
    log = EventLog(client)
    log.reached(detected.id, "failed")
    net.rotate_jwt_key()
    net.expire_sessions()
    last = log.refund_done(detected.id)
    assert last.status == "success", last
    assert net.ledger_balance(client.owner_address, CHAIN.BASE, "USDC") == 1_970_000


def test_a_refund_of_a_deposit_whose_sweep_outcome_is_unknown_never_pays_twice(
    net: Devnet, make_client: Any
) -> None:
    # The sweep's send is held past the client's deadline and then executed, and its status
    # cannot be read: the outcome is unknown to the client, but the money was delivered.
    client = make_client(request_timeout_ms=600, http_retries=1, reconcile_interval_ms=60_000)
    client.initialize()
    net.inject_fault("ua", delay_ms=1200, count=1, path="/v1/sweeps/send")
    net.inject_fault("ua", status=503, count=2, path="/v1/sweeps/q_")
    detected = detect(net, client, CHAIN.BASE, "USDC", "4")
    log = EventLog(client)
    failed = log.reached(detected.id, "failed", timeout=20)
    assert "is unknown" in (failed.error or ""), failed
    time.sleep(1.2)  # the held send runs
    assert not client.can_refund(detected.id).eligible, "unknown sweep outcome"
    # A refund request first resolves the sweep: delivered, so credited, not refunded.
    result = client.refund(detected.id)
    assert result.status == "skipped" and "turned out delivered" in (result.error or ""), result
    log.reached(detected.id, "credited")
    delivered_once(net, client, detected.id)
    with raises_exactly(RefundError, "credited"):
        client.refund(detected.id)
