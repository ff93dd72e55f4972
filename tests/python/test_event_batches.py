"""depositkit.DepositClient's events in lists: next_events() takes many queued events per call,
subscribe_batches() calls back with lists; both keep the events' order and hand each event once,
next to next_event() and subscribe(). The client is never initialized: each event is one
onramp message."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from depositkit import CHAIN, DepositClient, OnrampEvent

OWNER = "0x52908400098527886E0F7030069857D2E4169EE7"


def order(n: int) -> dict[str, Any]:
    return {"event": "order_processing", "data": {"n": n}}


def numbers(events: list[Any]) -> list[int]:
    return [e.payload["n"] for e in events]


def new_client(capacity: int = 1024) -> DepositClient:
    return DepositClient(
        OWNER,
        {"chain_id": CHAIN.BASE},
        services_url="http://127.0.0.1:9",
        onramp={"enabled": True},
        event_queue_capacity=capacity,
    )


def test_next_events_takes_what_is_queued_in_order_up_to_the_limit() -> None:
    with new_client() as client:
        assert client.next_events(timeout=0) == []
        for n in range(10):
            client.handle_onramp_message(order(n))
        first = client.next_events(4, timeout=0)
        assert all(isinstance(e, OnrampEvent) and e.type == "onramp:order_processing" for e in first)
        assert numbers(first) == [0, 1, 2, 3]
        one = client.next_event(timeout=0)
        assert one is not None and one.payload["n"] == 4
        assert numbers(client.next_events(timeout=0)) == [5, 6, 7, 8, 9]
        assert client.next_events(timeout=0.05) == []
        with pytest.raises(ValueError, match="max_events must be at least 1, got 0"):
            client.next_events(0)


def test_next_events_waits_for_the_first_event() -> None:
    with new_client() as client:
        timer = threading.Timer(0.1, lambda: client.handle_onramp_message(order(7)))
        timer.start()
        started = time.monotonic()
        assert numbers(client.next_events(timeout=10)) == [7]
        assert time.monotonic() - started < 9
        timer.join()


def test_subscribe_batches_delivers_every_event_once_in_lists_in_order() -> None:
    batches: list[list[Any]] = []
    done = threading.Event()
    gate = threading.Event()
    singles: list[Any] = []

    def on_batch(events: list[Any]) -> None:
        gate.wait(10)  # the first call waits: the events behind it gather in the next lists
        batches.append(events)
        if sum(len(b) for b in batches) >= 200:
            done.set()

    with new_client() as client:
        sub = client.subscribe_batches(on_batch, max_batch=64)
        client.subscribe(singles.append)
        for n in range(200):
            client.handle_onramp_message(order(n))
        gate.set()
        assert done.wait(10)
        assert [n for b in batches for n in numbers(b)] == list(range(200))
        assert max(len(b) for b in batches) == 64 and len(batches) < 200
        assert all(isinstance(b, list) for b in batches)
        deadline = time.monotonic() + 10
        while len(singles) < 200:
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.01)
        assert numbers(singles) == list(range(200))
        assert client.unsubscribe(sub)
        client.handle_onramp_message(order(200))
        deadline = time.monotonic() + 10
        while len(singles) < 201:
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.01)
        assert sum(len(b) for b in batches) == 200, "no list after unsubscribe"


def test_subscribe_batches_checks_its_arguments() -> None:
    with new_client() as client:
        with pytest.raises(TypeError, match="the callback must be callable, not int"):
            client.subscribe_batches(5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="max_batch must be at least 1, got 0"):
            client.subscribe_batches(print, max_batch=0)
