"""depositkit.DepositClient's refunds against the in-process devnet: automatic refunds after
failed sweeps (to the sender or the owner, retried, failed for good), manual refunds,
eligibility (can_refund), and the rules that keep a deposit from being refunded twice or both
refunded and credited."""

from __future__ import annotations

import threading
from typing import Any

from depositkit import (
    CHAIN,
    DepositSDKError,
    Devnet,
    InvalidArgumentError,
    NotFoundError,
    RefundEligibility,
    RefundError,
    RefundEvent,
    RefundResult,
    SweepError,
    parse_units,
)

from conftest import EventLog, detect, new_owner, raises_exactly, wait_until

SOLANA_SENDER = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
# Refunds retried 20 ms apart: no test waits for the default 5 s.
AUTO_REFUND = {"enabled": True, "delay_ms": 20}


def test_auto_refund_returns_a_failed_deposit_to_its_sender(net: Devnet, make_client: Any) -> None:
    client = make_client(refund={**AUTO_REFUND, "max_attempts": 2})
    assert client.refund_config == {"enabled": True, "delay_ms": 20, "max_attempts": 2, "refund_to_sender": True}
    client.initialize()
    sender = new_owner()
    net.deposit(sender, CHAIN.BASE, "USDC", "1")  # the sender holds 1 USDC on Base already
    before = net.ledger_balance(sender, CHAIN.BASE, "USDC")
    assert before == 1_000_000
    net.fail_next_sweeps(3)
    detected = detect(net, client, CHAIN.BASE, "USDC", "5", sender=sender)
    log = EventLog(client)
    last = log.refund_done(detected.id)
    assert log.phases(detected.id) == ["detected", "processing", "processing", "processing", "failed"]
    assert log.refund_statuses(detected.id) == ["pending", "processing", "success"]
    assert isinstance(last, RefundResult)
    assert (last.status, last.reason, last.attempts) == ("success", "sweep_failed", 1)
    assert last.refunded_to == sender and last.refunded_to_sender is True
    assert (last.deposit_id, last.token, last.source_chain_id, last.amount) == (detected.id, "USDC", 8453, "5")
    assert last.amount_usd == 5.0
    assert last.tx_hash and last.explorer_url.endswith(last.tx_hash)
    assert last.quote_id and last.quote_id.startswith("q_") and last.error is None
    # Back on Base in USDC, less the gas ($0.03): the sender's ledger grows by 4.97 USDC, once.
    assert last.delivered_amount == "4.97"
    assert net.ledger_balance(sender, CHAIN.BASE, "USDC") == before + parse_units(last.delivered_amount, 6)
    assert net.ledger_balance(client.deposit_addresses.evm, CHAIN.BASE, "USDC") == 0
    assert client.pending_deposits() == []
    assert client.refund_result(detected.id) == last
    assert client.refund_result("dep_unknown") is None
    wait_until(lambda: client.status == "ready")
    # The events: RefundEvent, type refund:update, the spec's camelCase payload.
    [event] = [e for e in log.events if isinstance(e, RefundEvent) and e.result.status == "success"]
    assert event.type == "refund:update" and event.result == last
    payload = event.to_dict()
    assert payload == last.to_dict()
    assert payload["depositId"] == detected.id and payload["sourceChainId"] == 8453
    assert payload["amountUSD"] == 5.0 and payload["reason"] == "sweep_failed"
    assert payload["refundedToSender"] is True and payload["txHash"] == last.tx_hash
    assert repr(last) == f"<depositkit.RefundResult deposit_id={detected.id!r} status='success' reason='sweep_failed'>"
    # Never again: refund, sweep and eligibility all say so.
    with raises_exactly(RefundError, "already refunded", last.tx_hash) as info:
        client.refund(detected.id)
    assert info.value.code == 501 and isinstance(info.value, DepositSDKError)  # type: ignore[attr-defined]
    with raises_exactly(NotFoundError, "already refunded"):
        client.sweep(detected.id)
    eligibility = client.can_refund(detected.id)
    assert not eligibility.eligible and "already refunded" in eligibility.message
    assert eligibility.reason is None and eligibility.refund_address is None
    # The history lists the refund with its deposit id.
    history = client.get_transactions(1, 20)
    [refund] = [t for t in history.transactions if t.tag == "refund"]
    assert refund.transaction_id == last.tx_hash and refund.deposit_id == detected.id


def test_without_a_known_sender_the_owner_is_refunded(net: Devnet, make_client: Any) -> None:
    client = make_client(refund=AUTO_REFUND)
    client.initialize()
    net.fail_next_sweeps(3)
    detected = detect(net, client, CHAIN.BASE, "USDC", "3")
    last = EventLog(client).refund_done(detected.id)
    assert last.status == "success", last
    assert last.refunded_to == client.owner_address and last.refunded_to_sender is False
    assert net.ledger_balance(client.owner_address, CHAIN.BASE, "USDC") == 2_970_000

    # refund_to_sender off (camelCase keys work too): the owner, although the sender is known.
    client = make_client(refund={"enabled": True, "delayMs": 20, "refundToSender": False})
    assert client.refund_config["refund_to_sender"] is False
    client.initialize()
    net.fail_next_sweeps(3)
    sender = new_owner()
    detected = detect(net, client, CHAIN.BASE, "USDC", "3", sender=sender)
    last = EventLog(client).refund_done(detected.id)
    assert last.refunded_to == client.owner_address and last.refunded_to_sender is False, last
    assert net.ledger_balance(sender, CHAIN.BASE, "USDC") == 0


def test_refunds_that_keep_failing_end_failed_after_max_attempts(net: Devnet, make_client: Any) -> None:
    client = make_client(refund={**AUTO_REFUND, "max_attempts": 3})
    client.initialize()
    # Three sweep attempts, then three refund attempts, all failing.
    net.fail_next_sweeps(6)
    detected = detect(net, client, CHAIN.BASE, "USDC", "4", sender=new_owner())
    log = EventLog(client)
    last = log.refund_done(detected.id)
    assert log.refund_statuses(detected.id) == [
        "pending", "processing", "pending", "processing", "pending", "processing", "failed",
    ]  # fmt: skip
    updates = log.refunds(detected.id)
    assert "attempt 1 of 3 failed" in (updates[2].error or ""), updates[2]
    assert last.attempts == 3 and "(after 3 attempts)" in (last.error or ""), last
    assert last.tx_hash is None and last.delivered_amount is None
    # Really attempted: the service saw three failed refunds of this deposit.
    history = client.get_transactions(page_size=50)
    failed = [t for t in history.transactions if t.tag == "refund" and t.status == -1 and t.deposit_id == detected.id]
    assert len(failed) == 3, history.to_dict()
    # The money is still there; the deposit waits; a manual refund now succeeds.
    evm = client.deposit_addresses.evm
    assert net.ledger_balance(evm, CHAIN.BASE, "USDC") == 4_000_000
    assert [d.id for d in client.pending_deposits()] == [detected.id]
    wait_until(lambda: client.status == "ready")
    eligibility = client.can_refund(detected.id)
    assert eligibility.eligible and eligibility.reason == "sweep_failed", eligibility
    result = client.refund(detected.id)
    assert (result.status, result.reason) == ("success", "user_requested"), result
    assert net.ledger_balance(evm, CHAIN.BASE, "USDC") == 0


def test_manual_refund_with_auto_refund_off(net: Devnet, make_client: Any) -> None:
    client = make_client(auto_sweep=False)
    assert client.refund_config == {"enabled": False, "delay_ms": 5000, "max_attempts": 2, "refund_to_sender": True}
    callbacks: list[Any] = []
    client.subscribe(lambda event: callbacks.append((event, threading.current_thread().name)))
    client.initialize()
    sender = new_owner()
    detected = detect(net, client, CHAIN.ARBITRUM, "USDT", "2.5", sender=sender)
    eligibility = client.can_refund(detected.id)
    assert isinstance(eligibility, RefundEligibility)
    assert eligibility.eligible and eligibility.reason == "user_requested", eligibility
    assert eligibility.refund_address == sender and eligibility.refund_to_sender is True
    assert eligibility.to_dict() == {
        "eligible": True, "reason": "user_requested", "message": eligibility.message,
        "refundAddress": sender, "refundToSender": True,
    }  # fmt: skip
    result = client.refund(detected.id)
    assert (result.status, result.reason, result.refunded_to) == ("success", "user_requested", sender), result
    assert net.ledger_balance(sender, CHAIN.ARBITRUM, "USDT") == 2_470_000
    log = EventLog(client)
    log.refund_done(detected.id)
    assert log.refund_statuses(detected.id) == ["pending", "processing", "success"]
    # The callbacks got the same refund updates, on the event thread.
    wait_until(lambda: sum(isinstance(e, RefundEvent) for e, _ in callbacks) == 3)
    refund_events = [(e, name) for e, name in callbacks if isinstance(e, RefundEvent)]
    assert [e.result.status for e, _ in refund_events] == ["pending", "processing", "success"]
    assert {name for _, name in refund_events} != {threading.main_thread().name}
    # An explicit reason is recorded; bad ids and reasons are refused.
    with raises_exactly(NotFoundError, "dep_nope"):
        client.refund("dep_nope", "sweep_failed")
    assert not client.can_refund("dep_nope").eligible
    other = detect(net, client, CHAIN.BASE, "USDC", "2")
    with raises_exactly(InvalidArgumentError, "reason must be one of", '"oops"'):
        client.refund(other.id, reason="oops")
    with raises_exactly(TypeError, "deposit_id must be a str, not int"):
        client.refund(5)  # type: ignore[arg-type]
    result = client.refund(other.id, reason="sweep_failed")
    assert (result.status, result.reason) == ("success", "sweep_failed")


def test_double_refunds_and_refunds_of_credited_deposits_are_refused(net: Devnet, make_client: Any) -> None:
    client = make_client()
    client.initialize()
    detected = detect(net, client, CHAIN.BASE, "USDC", "2")
    EventLog(client).reached(detected.id, "credited")
    with raises_exactly(RefundError, "was credited", "a credited deposit cannot be refunded"):
        client.refund(detected.id)
    eligibility = client.can_refund(detected.id)
    assert not eligibility.eligible and "credited" in eligibility.message
    assert client.refund_result(detected.id) is None

    # Four threads racing to refund the same deposit: exactly one refund happens.
    client = make_client(auto_sweep=False)
    client.initialize()
    sender = new_owner()
    detected = detect(net, client, CHAIN.BASE, "USDC", "3", sender=sender)
    outcomes: list[Any] = []
    start = threading.Barrier(4)

    def race() -> None:
        start.wait()
        try:
            outcomes.append(client.refund(detected.id))
        except Exception as error:  # noqa: BLE001 - collected and checked below
            outcomes.append(error)

    threads = [threading.Thread(target=race) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert len(outcomes) == 4
    successes = [o for o in outcomes if isinstance(o, RefundResult) and o.status == "success"]
    assert len(successes) == 1, outcomes
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            assert type(outcome) is RefundError, outcome
            assert "already being refunded" in str(outcome) or "already refunded" in str(outcome)
    assert net.ledger_balance(sender, CHAIN.BASE, "USDC") == 2_970_000
    # And the refunded deposit is never swept.
    with raises_exactly(NotFoundError, "already refunded"):
        client.sweep(detected.id)


def test_can_refund_reasons(net: Devnet, make_client: Any) -> None:
    client = make_client(auto_sweep=False, min_value_usd=0)
    client.initialize()
    # 0.1 SOL from an EVM sender: nobody to refund on Solana (the owner is an EVM address).
    stranded = detect(net, client, CHAIN.SOLANA, "SOL", "0.1", sender=new_owner())
    eligibility = client.can_refund(stranded.id)
    assert not eligibility.eligible and eligibility.reason == "address_type_mismatch", eligibility
    result = client.refund(stranded.id)
    assert (result.status, result.reason) == ("skipped", "address_type_mismatch"), result
    assert result.error and result.error.startswith("Address type mismatch")
    assert net.ledger_balance(client.deposit_addresses.solana, CHAIN.SOLANA, "SOL") == 100_000_000
    assert stranded.id in [d.id for d in client.pending_deposits()], "the money stays, the deposit too"

    # With a Solana sender: refunded to it, less the gas.
    solana = detect(net, client, CHAIN.SOLANA, "SOL", "0.2", sender=SOLANA_SENDER)
    eligibility = client.can_refund(solana.id)
    assert eligibility.eligible and eligibility.refund_address == SOLANA_SENDER, eligibility
    result = client.refund(solana.id)
    assert (result.status, result.refunded_to) == ("success", SOLANA_SENDER), result
    assert 199_900_000 < net.ledger_balance(SOLANA_SENDER, CHAIN.SOLANA, "SOL") < 200_000_000

    # 0.3 USDC on Ethereum, where the gas costs $0.50: below the refund's minimum.
    small = detect(net, client, CHAIN.ETHEREUM, "USDC", "0.3")
    eligibility = client.can_refund(small.id)
    assert not eligibility.eligible and eligibility.reason == "below_minimum", eligibility
    assert eligibility.message
    result = client.refund(small.id)
    assert (result.status, result.reason) == ("skipped", "below_minimum"), result


def test_a_refund_with_an_unknown_outcome_is_pending_then_resolved_with_the_same_quote(
    net: Devnet, make_client: Any
) -> None:
    # A long reconciliation interval: the second refund() resolves the refund, not the timer.
    client = make_client(auto_sweep=False, http_retries=1, reconcile_interval_ms=60_000)
    client.initialize()
    sender = new_owner()
    detected = detect(net, client, CHAIN.BASE, "USDC", "7", sender=sender)
    # The send answers 503 and its status cannot be read: the outcome is unknown.
    net.inject_fault("ua", status=503, count=1, path="/v1/sweeps/send")
    net.inject_fault("ua", status=503, count=100, path="/v1/sweeps/q_")
    pending = client.refund(detected.id)
    assert pending.status == "pending" and "is unknown" in (pending.error or ""), pending
    assert pending.quote_id
    # can_refund and refund give one answer (docs/protocol.md, the deposit machine): the refund
    # is admitted, and resolves the unknown send with its same quote.
    eligibility = client.can_refund(detected.id)
    assert eligibility.eligible, eligibility
    assert "refund() resolves it with the same quote" in eligibility.message
    with raises_exactly(SweepError, "being refunded"):
        client.sweep(detected.id)
    net.clear_faults()
    result = client.refund(detected.id)
    assert result.status == "success", result
    assert result.quote_id == pending.quote_id, "the same quote, never a new one"
    assert net.ledger_balance(sender, CHAIN.BASE, "USDC") == 6_970_000
