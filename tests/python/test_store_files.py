"""What a host meets with ``store_path`` files that are not a healthy store of its own: every
file the library cannot read is one ``ConfigurationError`` naming the path, a newer schema is
named plainly, and processes that start on one store at the same moment leave exactly one
owner (docs/protocol.md, durable state)."""

from __future__ import annotations

import os
import pathlib
import sqlite3
import subprocess
import sys
import time
from typing import Any

import pytest

import depositkit
from conftest import client_factory, new_owner

UNREADABLE = "is not a depositkit store this version can read"
RUST_DEBUG_TEXT = ("Ok(", "Err(", "Some(", "None", "::")


def store_with_history(net: Any, path: pathlib.Path) -> str:
    """A real store holding a client's events and one credited deposit; returns the owner."""
    owner = new_owner()
    with client_factory(net, store_path=path) as make:
        client = make(owner=owner)
        client.initialize()
        net.deposit(client.deposit_addresses.evm, depositkit.CHAIN.BASE, "USDC", "9")
        client.poll_now()
        for _ in range(200):
            client.poll_now()
            if any(e.phase == "credited" for _, e in client.events_since() if isinstance(e, depositkit.DepositLifecycleEvent)):
                break
            time.sleep(0.01)
        client.close()
    return owner


def open_everything(net: Any, path: pathlib.Path, owner: str) -> None:
    """Everything a host does with a store: build, initialize (loads it), read the log."""
    with client_factory(net, store_path=path) as make:
        client = make(owner=owner)
        client.initialize()
        client.events_since(0)
        client.pending_deposits()


def assert_plain_configuration_error(info: pytest.ExceptionInfo[Any], path: pathlib.Path, fragment: str) -> None:
    message = str(info.value)
    assert type(info.value) is depositkit.ConfigurationError, repr(info.value)
    assert str(path) in message, message
    assert fragment in message, message
    assert not any(text in message for text in RUST_DEBUG_TEXT), message


@pytest.mark.parametrize("damage", ["random-bytes", "text", "truncated", "garbled-pages", "empty-pages"])
def test_a_file_that_is_not_a_readable_store_is_one_configuration_error(
    net: Any, tmp_path: pathlib.Path, damage: str
) -> None:
    path = tmp_path / f"{damage}.sqlite"
    owner = new_owner()
    if damage == "random-bytes":
        path.write_bytes(os.urandom(64 * 1024))
    elif damage == "text":
        path.write_text("owner,deposit\n0xabc,12\n" * 200)
    else:
        owner = store_with_history(net, path)
        data = bytearray(path.read_bytes())
        page = 4096
        assert len(data) >= 4 * page, len(data)
        if damage == "truncated":
            data = data[: page + page // 2]
        elif damage == "garbled-pages":
            # Page 1 (the header and schema) stays; every later page becomes noise.
            data[page:] = os.urandom(len(data) - page)
        else:
            data[page:] = b"\xff" * (len(data) - page)
        path.write_bytes(bytes(data))
    with pytest.raises(depositkit.ConfigurationError) as info:
        open_everything(net, path, owner)
    assert_plain_configuration_error(info, path, UNREADABLE)
    assert isinstance(info.value, depositkit.DepositSDKError)


def test_a_store_of_a_newer_schema_names_both_versions_plainly(net: Any, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "newer.sqlite"
    for stored, fragment in [
        ("99", "has schema version 99; this depositkit reads version 2"),
        ("v-next", 'its schema version "v-next" is not a number'),
    ]:
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (stored,))
        db.close()
        with pytest.raises(depositkit.ConfigurationError) as info:
            open_everything(net, path, new_owner())
        assert_plain_configuration_error(info, path, fragment)


RACER = """
import sys, time
import depositkit
store, at = sys.argv[1], int(sys.argv[2])
while time.time_ns() < at:
    pass
try:
    client = depositkit.DepositClient(
        "0x52908400098527886e0f7030069857d2e4169ee7", {"chain_id": 8453},
        services_url="http://127.0.0.1:9", store_path=store)
except depositkit.DepositSDKError as error:
    print("lost", type(error).__name__, error, flush=True)
    sys.exit(0)
print("won", flush=True)
sys.stdin.read()          # hold the store until the test lets go
client.close()
"""


def test_processes_starting_on_one_store_at_once_leave_exactly_one_owner(tmp_path: pathlib.Path) -> None:
    rounds = []
    start = time.time_ns() + 1_500_000_000          # after every interpreter has imported depositkit
    for round_ in range(4):
        path = tmp_path / f"race-{round_}.sqlite"
        at = start + round_ * 50_000_000            # each round has the cores to itself
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", RACER, str(path), str(at)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )
            for _ in range(2)
        ]
        rounds.append((path, racers))
    try:
        for path, racers in rounds:
            assert racers[0].stdout and racers[1].stdout
            outcomes = sorted(racer.stdout.readline().strip() for racer in racers if racer.stdout)
            assert outcomes[0] == "lost ConfigurationError " + (
                f'store_path "{path}" is in use by another process (one client process per store)'
            ), outcomes
            assert outcomes[1] == "won", outcomes
    finally:
        for _, racers in rounds:
            for racer in racers:
                racer.communicate(timeout=30)
