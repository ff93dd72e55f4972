"""``store_path``, ``events_since``, ``last_event_id`` and ``deposit_history`` from Python.

The SIGKILL harness is test_sigkill.py; this module checks the API: a client started again on
its store, the event log's ids, and the errors."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

import depositkit
from conftest import client_factory, new_owner, raises_exactly


def test_a_client_started_again_on_its_store_resumes_with_the_same_events(net: Any, tmp_path: pathlib.Path) -> None:
    owner = new_owner()
    store = tmp_path / "state.sqlite"
    with client_factory(net, store_path=store, auto_sweep=False) as make:
        first = make(owner=owner)
        assert first.store_path == str(store)
        first.initialize()
        net.deposit(first.deposit_addresses.evm, depositkit.CHAIN.BASE, "USDC", "8")
        [detected] = [e for e in first.poll_now() if e.phase == "detected"]
        before = first.events_since()
        ids = [event_id for event_id, _ in before]
        assert ids == list(range(1, len(ids) + 1))
        assert first.last_event_id == ids[-1]
        assert any(isinstance(e, depositkit.DepositLifecycleEvent) and e.id == detected.id for _, e in before)
        first.close()

        second = make(owner=owner)
        second.initialize()
        assert [d.id for d in second.pending_deposits()] == [detected.id]
        again = second.events_since(0)
        assert again[: len(before)] == before, "same ids, same events"
        assert all(event_id > ids[-1] for event_id, _ in again[len(before) :])
        assert second.poll_now() == [], "not reported twice"
        assert second.sweep(detected.id).status == "success"
        history = second.deposit_history(detected.id)
        assert [e.phase for _, e in history] == ["detected", "processing", "credited"]
        assert second.events_since(second.last_event_id) == []
        tail = second.events_since(ids[-1], limit=2)
        assert [event_id for event_id, _ in tail] == [ids[-1] + 1, ids[-1] + 2]


def test_event_log_errors_name_the_problem(net: Any, tmp_path: pathlib.Path) -> None:
    with client_factory(net, event_queue_capacity=2) as make:
        client = make()
        client.initialize()
        client.start_watching()
        client.stop_watching()
        last = client.last_event_id
        assert client.store_path is None
        with raises_exactly(depositkit.NotFoundError, "only the last 2 events are kept"):
            client.events_since(0)
        with raises_exactly(depositkit.InvalidArgumentError, f"cursor {last + 1} is past the last event id {last}"):
            client.events_since(last + 1)
        with pytest.raises(TypeError, match="cursor must be an int, not str"):
            client.events_since("3")  # type: ignore[arg-type]
        assert [i for i, _ in client.events_since(last - 1)] == [last]

    owner = new_owner()
    store = tmp_path / "one.sqlite"
    with client_factory(net, store_path=str(store)) as make:
        live = make(owner=owner)
        with raises_exactly(depositkit.ConfigurationError, "is in use by another live client of owner"):
            make(owner=owner)
        live.close()
        make(owner=owner).close()
        with raises_exactly(depositkit.ConfigurationError, str(tmp_path)):
            make(store_path=tmp_path)
        with pytest.raises(TypeError, match="store_path must be a str or os.PathLike, not int"):
            make(store_path=3)
