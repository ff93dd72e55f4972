"""depositkit.DepositClient's events and threads: callbacks on the library's event thread
(exceptions to sys.unraisablehook, re-entry into the client, garbage collection of callback
cycles), the pull queue (next_event, iteration), close()/with, the GIL and Ctrl-C."""

from __future__ import annotations

import _thread
import gc
import sys
import threading
import time
import weakref
from typing import Any

import pytest

from depositkit import (
    CHAIN,
    DepositClient,
    DepositLifecycleEvent,
    DepositSDKError,
    Devnet,
    ErrorEvent,
    InvalidArgumentError,
    StatusChangedEvent,
)

from conftest import EventLog, new_owner, raises_exactly


def wait_until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def credited_ids(events: list[Any]) -> list[str]:
    return [e.id for e in events if isinstance(e, DepositLifecycleEvent) and e.phase == "credited"]


def test_callbacks_run_on_the_event_thread(net: Devnet, make_client: Any) -> None:
    client = make_client()
    seen: list[tuple[Any, str]] = []
    sub = client.subscribe(lambda event: seen.append((event, threading.current_thread().name)))
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "USDC", "10")
    [detected] = client.poll_now()
    wait_until(lambda: detected.id in credited_ids([e for e, _ in seen]))
    names = {name for _, name in seen}
    assert len(names) == 1 and names != {threading.main_thread().name}
    kinds = {type(e) for e, _ in seen}
    assert kinds == {StatusChangedEvent, DepositLifecycleEvent}
    assert [e.status for e, _ in seen if isinstance(e, StatusChangedEvent)][:2] == ["initializing", "ready"]
    assert client.unsubscribe(sub) and not client.unsubscribe(sub)
    count = len(seen)
    client.stop_watching()
    client.start_watching()  # a status change nobody is subscribed to any more
    EventLog(client).until(lambda events: any(getattr(e, "status", None) == "watching" for e in events))
    time.sleep(0.05)
    assert len(seen) == count
    with raises_exactly(TypeError, "callable"):
        client.subscribe(42)


def test_callback_exceptions_go_to_unraisablehook_and_delivery_goes_on(
    net: Devnet, make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", reports.append)

    def broken(event: Any) -> None:
        raise RuntimeError(f"host bug on {event.type}")

    def broken_lifecycle(event: Any) -> None:
        raise ValueError(event.phase)

    seen: list[Any] = []
    client = make_client(on_deposit_event=broken_lifecycle)
    client.subscribe(broken)
    client.subscribe(seen.append)
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "USDC", "10")
    [detected] = client.poll_now()
    wait_until(lambda: detected.id in credited_ids(seen))
    # Every event reached the second subscriber although the first raised on each.
    assert [e.phase for e in seen if isinstance(e, DepositLifecycleEvent)] == ["detected", "processing", "credited"]
    client.close()  # delivers what is queued, then drops the callbacks
    runtime = [r for r in reports if r.exc_type is RuntimeError]
    lifecycle = [r for r in reports if r.exc_type is ValueError]
    assert len(runtime) == len(seen) and all(r.object is broken for r in runtime)
    assert str(runtime[0].exc_value) == "host bug on status:change"
    assert [str(r.exc_value) for r in lifecycle] == ["detected", "processing", "credited"]
    assert client.callback_panics == 0


def test_callbacks_may_call_back_into_the_client(net: Devnet, make_client: Any) -> None:
    client = make_client()
    observed: list[Any] = []
    done = threading.Event()

    def reenter(event: Any) -> None:
        if not isinstance(event, DepositLifecycleEvent):
            return
        if event.phase == "detected":
            observed.append(("status", client.status))
            observed.append(("pending", [d.id for d in client.pending_deposits()]))
            observed.append(("destination", client.get_destination()["chain_id"]))
        if event.phase == "credited":
            observed.append(("result", client.sweep_result(event.id).status))
            observed.append(("poll", client.poll_now()))  # a blocking call from the event thread
            client.unsubscribe(sub)
            done.set()

    sub = client.subscribe(reenter)
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "USDC", "10")
    [detected] = client.poll_now()
    assert done.wait(10)
    assert observed[0][0] == "status" and observed[0][1] in ("sweeping", "ready")
    assert observed[1:] == [
        ("pending", [detected.id]), ("destination", 42161), ("result", "success"), ("poll", []),
    ]  # fmt: skip


def test_a_callback_may_close_its_client(net: Devnet, make_client: Any) -> None:
    client = make_client()
    closed = threading.Event()

    def close_on_ready(event: Any) -> None:
        if getattr(event, "status", None) == "ready":
            client.close()
            closed.set()

    client.subscribe(close_on_ready)
    client.initialize()
    assert closed.wait(10)
    assert client.closed and client.status == "idle"


def test_iterating_the_client(net: Devnet, make_client: Any) -> None:
    client = make_client()
    assert iter(client) is client
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "ETH", "0.01")
    [detected] = client.poll_now()
    phases = []
    for event in client:
        if isinstance(event, DepositLifecycleEvent):
            phases.append(event.phase)
            if event.phase == "credited":
                break
    assert phases == ["detected", "processing", "credited"]
    # Closing ends the iteration once the queued events are taken.
    threading.Timer(0.2, client.close).start()
    started = time.monotonic()
    rest = list(client)
    assert time.monotonic() - started < 5
    assert all(isinstance(e, (StatusChangedEvent, DepositLifecycleEvent, ErrorEvent)) for e in rest)
    assert rest and rest[-1].status == "idle"
    with pytest.raises(StopIteration):
        next(client)
    assert detected.id


def test_next_event_timeout(make_client: Any) -> None:
    client = make_client()
    assert client.next_event(timeout=0) is None  # nothing happened yet
    started = time.monotonic()
    assert client.next_event(timeout=0.15) is None
    assert 0.14 <= time.monotonic() - started < 2
    with raises_exactly(InvalidArgumentError, "timeout must be at least 0"):
        client.next_event(timeout=-1)
    with raises_exactly(TypeError, "timeout must be a number"):
        client.next_event(timeout="1")  # type: ignore[arg-type]
    client.close()
    event = client.next_event(timeout=None)  # the queued "idle"... or nothing
    assert event is None or event.status == "idle"
    assert client.next_event() is None  # closed and empty: no wait


def test_close_and_with(net: Devnet, make_client: Any) -> None:
    with make_client() as client:
        assert not client.closed
        client.initialize()
        client.start_watching()
    assert client.closed and client.status == "idle"
    client.close()  # idempotent
    for call in (client.initialize, client.poll_now, client.start_watching, lambda: client.sweep("dep_x")):
        with raises_exactly(DepositSDKError, "the client is closed"):
            call()
    with raises_exactly(DepositSDKError, "closed"):
        client.subscribe(print)
    with raises_exactly(DepositSDKError, "the client is closed"):
        with client:
            pass
    with pytest.raises(ZeroDivisionError):
        with make_client() as other:
            1 / 0
    assert other.closed


# What a closed client still answers (core/src/deposit/status.rs `ClientCall::answers_when_closed`,
# the one table of the three faces), and how to call it.
ANSWERS_WHEN_CLOSED: dict[str, Any] = {
    "close": lambda c, ctx: c.close(),
    "closed": lambda c, ctx: c.closed,
    "status": lambda c, ctx: c.status,
    "health": lambda c, ctx: c.health(),
    "owner_address": lambda c, ctx: c.owner_address,
    "store_path": lambda c, ctx: c.store_path,
    "events_since": lambda c, ctx: c.events_since(),
    "deposit_history": lambda c, ctx: c.deposit_history(ctx["deposit_id"]),
    "last_event_id": lambda c, ctx: c.last_event_id,
    "next_event": lambda c, ctx: c.next_event(timeout=0),
    "next_events": lambda c, ctx: c.next_events(timeout=0),
    "dropped_events": lambda c, ctx: c.dropped_events,
    "callback_panics": lambda c, ctx: c.callback_panics,
    "unsubscribe": lambda c, ctx: c.unsubscribe(ctx["subscription"]),
    "clear_funding_wallet": lambda c, ctx: c.clear_funding_wallet(),
}

# Every other public method and property, called with valid arguments: each raises
# DepositSDKError "the client is closed" once the client is closed.
REFUSED_WHEN_CLOSED: dict[str, Any] = {
    "initialize": lambda c, ctx: c.initialize(),
    "deposit_addresses": lambda c, ctx: c.deposit_addresses,
    "account_id": lambda c, ctx: c.account_id,
    "intermediary_address": lambda c, ctx: c.intermediary_address,
    "set_destination": lambda c, ctx: c.set_destination(chain_id=CHAIN.BASE),
    "get_destination": lambda c, ctx: c.get_destination(),
    "is_onramp_supported": lambda c, ctx: c.is_onramp_supported(),
    "is_watching": lambda c, ctx: c.is_watching,
    "start_watching": lambda c, ctx: c.start_watching(),
    "stop_watching": lambda c, ctx: c.stop_watching(),
    "poll_now": lambda c, ctx: c.poll_now(),
    "pending_deposits": lambda c, ctx: c.pending_deposits(),
    "sweep": lambda c, ctx: c.sweep(ctx["deposit_id"]),
    "sweep_result": lambda c, ctx: c.sweep_result(ctx["deposit_id"]),
    "transactions": lambda c, ctx: c.transactions(),
    "get_transactions": lambda c, ctx: c.get_transactions(),
    "get_token_transactions": lambda c, ctx: c.get_token_transactions(CHAIN.BASE, ctx["evm"]),
    "get_transaction": lambda c, ctx: c.get_transaction("0x00"),
    "refund": lambda c, ctx: c.refund(ctx["deposit_id"]),
    "can_refund": lambda c, ctx: c.can_refund(ctx["deposit_id"]),
    "refund_result": lambda c, ctx: c.refund_result(ctx["deposit_id"]),
    "refund_config": lambda c, ctx: c.refund_config,
    "stuck_funds": lambda c, ctx: c.stuck_funds(),
    "recover_funds": lambda c, ctx: c.recover_funds(),
    "is_recovering": lambda c, ctx: c.is_recovering,
    "notifications": lambda c, ctx: c.notifications(),
    "dismiss_notification": lambda c, ctx: c.dismiss_notification(ctx["deposit_id"]),
    "subscribe_notifications": lambda c, ctx: c.subscribe_notifications(print),
    "notifications_config": lambda c, ctx: c.notifications_config,
    "subscribe": lambda c, ctx: c.subscribe(print),
    "subscribe_batches": lambda c, ctx: c.subscribe_batches(print),
    "set_evm_wallet": lambda c, ctx: c.set_evm_wallet(ctx["wallet"], address=ctx["funder"]),
    "set_solana_wallet": lambda c, ctx: c.set_solana_wallet(ctx["wallet"]),
    "set_balance_provider": lambda c, ctx: c.set_balance_provider(ctx["balances"]),
    "connect_evm_wallet": lambda c, ctx: c.connect_evm_wallet(),
    "evm_accounts": lambda c, ctx: c.evm_accounts(),
    "prompt_evm_account_selection": lambda c, ctx: c.prompt_evm_account_selection(),
    "connect_solana_wallet": lambda c, ctx: c.connect_solana_wallet(),
    "get_wallet_balances": lambda c, ctx: c.get_wallet_balances(),
    "fund_from_wallet": lambda c, ctx: c.fund_from_wallet(ctx["balance"]),
    "open_onramp": lambda c, ctx: c.open_onramp(),
    "handle_onramp_message": lambda c, ctx: c.handle_onramp_message({"event": "widget_opened", "data": {}}),
    "last_onramp_order": lambda c, ctx: c.last_onramp_order,
}


def test_a_closed_client_refuses_every_call_but_what_stays_true(net: Devnet, make_client: Any) -> None:
    public = {name for name in dir(DepositClient) if not name.startswith("_")}
    assert not set(ANSWERS_WHEN_CLOSED) & set(REFUSED_WHEN_CLOSED)
    assert public == set(ANSWERS_WHEN_CLOSED) | set(REFUSED_WHEN_CLOSED), (
        "a public name of DepositClient is missing from the tables (or gone): "
        f"{sorted(public ^ (set(ANSWERS_WHEN_CLOSED) | set(REFUSED_WHEN_CLOSED)))}"
    )
    client = make_client(auto_sweep=False, funding={"enabled": True}, onramp={"enabled": True}, notifications=True)
    client.initialize()
    funder = "0x52908400098527886E0F7030069857D2E4169EE7"
    line = {"chainId": CHAIN.BASE, "token": "USDC", "tokenAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "decimals": 6, "rawAmount": "25000000", "priceUSD": 1.0, "valueUSD": 25.0}
    ctx: dict[str, Any] = {
        "wallet": lambda method, params: None,
        "balances": lambda request: [line],
        "funder": funder,
        "evm": client.deposit_addresses.evm,
    }
    client.set_evm_wallet(ctx["wallet"], address=funder)
    client.set_balance_provider(ctx["balances"])
    (ctx["balance"],) = client.get_wallet_balances()
    net.deposit(ctx["evm"], CHAIN.BASE, "USDC", "3")
    (detected,) = [e for e in client.poll_now() if e.phase == "detected"]
    ctx["deposit_id"] = detected.id
    client.start_watching()
    ctx["subscription"] = client.subscribe(lambda event: None)
    # Open, the views answer; closed, they would be stale.
    assert [d.id for d in client.pending_deposits()] == [detected.id]
    assert client.is_watching and client.get_destination()["chain_id"] == CHAIN.ARBITRUM
    client.close()

    for name, call in REFUSED_WHEN_CLOSED.items():
        with raises_exactly(DepositSDKError, "the client is closed") as info:
            call(client, ctx)
        assert str(info.value) == "the client is closed", name
    answers = {name: call(client, ctx) for name, call in ANSWERS_WHEN_CLOSED.items()}
    assert answers["closed"] is True and answers["status"] == "idle"
    assert answers["owner_address"] == client.owner_address and answers["store_path"] is None
    assert answers["events_since"][-1][0] == answers["last_event_id"] > 0
    assert [e.phase for _, e in answers["deposit_history"]] == ["detected"]
    assert answers["unsubscribe"] is False, "close() dropped it already"
    while client.next_event(timeout=0) is not None:
        pass
    assert list(client) == [], "closed and drained: iteration ends"
    assert "closed" in repr(client) and client.owner_address in repr(client)
    with raises_exactly(DepositSDKError, "the client is closed"):
        with client:
            pass


def test_dropping_a_client_with_a_callback_cycle_frees_it(net: Devnet) -> None:
    class Sentinel:
        pass

    sentinel = Sentinel()
    alive = weakref.ref(sentinel)
    client = DepositClient(new_owner(), CHAIN.BASE, services_url=net.services_url)
    # callback → client → (its callback slot) → callback: a cycle only the GC can break.
    client.subscribe(lambda event, client=client, sentinel=sentinel: None)
    client.initialize()
    del client, sentinel
    gc.collect()
    assert alive() is None


def test_the_gil_is_released_while_a_call_waits(net: Devnet, make_client: Any) -> None:
    client = make_client()
    client.initialize()
    net.inject_fault("ua", delay_ms=400, path="/v1/balances")
    counter = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal counter
        while not stop.is_set():
            counter += 1

    worker = threading.Thread(target=count)
    worker.start()
    try:
        time.sleep(0.02)
        before = counter
        started = time.monotonic()
        assert client.poll_now() == []
        assert time.monotonic() - started >= 0.35
        progressed = counter - before
    finally:
        stop.set()
        worker.join()
    assert progressed > 10_000, progressed


def test_ctrl_c_interrupts_a_wait(make_client: Any) -> None:
    client = make_client()
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            client.next_event(timeout=30)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 3


def test_ctrl_c_interrupts_a_blocking_call(net: Devnet, make_client: Any) -> None:
    client = make_client()
    net.inject_fault("jwt", delay_ms=1500)
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            client.initialize()
    finally:
        timer.cancel()
    assert time.monotonic() - started < 2


def test_interpreter_exit_with_a_live_client_is_clean() -> None:
    """The atexit hook closes clients (and the devnet) before finalization: a watching client
    with a Python callback, never closed, does not hang or crash the exit."""
    import subprocess

    code = """
import depositkit
devnet = depositkit.Devnet()
client = depositkit.DepositClient(
    "0x" + "ab" * 20, 42161, services_url=devnet.services_url,
    polling_interval_ms=20, min_polling_interval_ms=20,
)
client.subscribe(lambda event: print(event.type, flush=True))
client.initialize()
client.start_watching()
print("bye", flush=True)
"""
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert "bye" in out.stdout and "status:change" in out.stdout
    assert time.monotonic() - started < 20
