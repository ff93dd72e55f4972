"""Exactly-once across SIGKILL (issue 7, "Durable state").

A host process (``durable_host.py``: three deposit clients on one ``store_path``) is killed with
SIGKILL at random points — mid-poll, mid-sweep (sends held by devnet for a while, so that kills
land while their outcome is unknown), mid-refund (sweeps made to fail so that auto-refunds run)
— and started again, many times, while deposits keep arriving. Then it runs undisturbed until
every account is empty, and the test compares **devnet's ledger** (its SQLite file: every
receive, and every quote the service executed) with **the client's records** (the store's
deposits, attempts and event log) and with what the host logged from ``events_since``:

- no deposit lost: the client's deposits of each account, chain and token tile the account's
  cumulative ``received`` exactly, and every one ended ``credited`` or ``refunded``;
- none moved twice: every quote devnet executed is the one successful attempt of exactly one
  client deposit, for exactly its amount, sweep for credited and refund for refunded;
- event ids unchanged: the store's log is 1, 2, …, N per owner, exactly one terminal event per
  deposit, and every event the host handled before a kill has the same id and content in it.

``DEPOSITKIT_SIGKILL_SEED`` and ``DEPOSITKIT_SIGKILL_ROUNDS`` vary the run (default: seed 7,
12 kills).
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any

import depositkit

from conftest import new_owner

HOST = pathlib.Path(__file__).with_name("durable_host.py")
CHAINS = [8453, 42161, 56]
HOST_OPTIONS = {
    "min_polling_interval_ms": 20,
    "polling_interval_ms": 30,
    "sweep_retry_delay_ms": 20,
    "reconcile_interval_ms": 50,
    "processing_timeout_ms": 3000,
    "request_timeout_ms": 250,
    "http_retries": 1,
    "http_initial_backoff_ms": 5,
    "refund": {"enabled": True, "delay_ms": 20, "max_attempts": 3},
}


class Host:
    """One run of durable_host.py."""

    def __init__(self, config: dict[str, Any]) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, str(HOST), json.dumps(config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if line.strip() != "ready":
            self.process.kill()
            _, err = self.process.communicate(timeout=10)
            raise AssertionError(f"the host did not start: {line!r} {err}")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        assert self.process.returncode == -signal.SIGKILL
        assert self.process.stderr is not None
        err = self.process.stderr.read()
        assert "Traceback" not in err, err
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def account_addresses(net: Any, owners: list[str]) -> dict[str, str]:
    """Each owner's EVM deposit address (a throwaway client without a store)."""
    addresses = {}
    for owner in owners:
        with depositkit.DepositClient(
            owner, {"chain_id": 42161}, services_url=net.services_url
        ) as client:
            addresses[owner] = client.initialize().evm
    return addresses


def devnet_ledger(db: pathlib.Path) -> tuple[dict[Any, list[int]], dict[str, list[dict[str, Any]]]]:
    """(receives per (account id, chain, token): raw amounts in order; executed quotes per
    account id)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        receives: dict[Any, list[int]] = defaultdict(list)
        for account, chain, token, raw in conn.execute(
            "SELECT account_id, chain_id, token, raw_amount FROM ua_transactions "
            "WHERE tag = 'receive' ORDER BY seq"
        ):
            receives[(account, chain, token)].append(int(raw))
        executed: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for account, quote_id, purpose, chain, token, raw in conn.execute(
            "SELECT q.account_id, q.id, q.purpose, q.src_chain_id, q.src_token, q.src_raw "
            "FROM ua_sweeps s JOIN ua_quotes q ON q.id = s.quote_id WHERE s.status = 'success'"
        ):
            executed[account].append(
                {"quote": quote_id, "purpose": purpose, "chain": chain, "token": token, "raw": int(raw)}
            )
        return receives, executed
    finally:
        conn.close()


def client_records(
    store: pathlib.Path,
) -> tuple[dict[str, str], dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """(account id per owner, deposits per owner, events per owner) from the client's store."""
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        accounts = dict(conn.execute("SELECT owner, account_id FROM clients"))
        deposits: dict[str, list[dict[str, Any]]] = defaultdict(list)
        attempts: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
        for owner, quote_id, deposit_id, purpose, outcome in conn.execute(
            "SELECT owner, quote_id, deposit_id, purpose, outcome FROM attempts"
        ):
            attempts[(owner, deposit_id)].append((quote_id, purpose, outcome))
        for owner, deposit_id, state, is_open, record in conn.execute(
            "SELECT owner, id, state, open, record FROM deposits ORDER BY seq"
        ):
            body = json.loads(record)
            deposits[owner].append(
                {
                    "id": deposit_id,
                    "state": state,
                    "open": bool(is_open),
                    "chain": body["deposit"]["chainId"],
                    "token": body["deposit"]["token"],
                    "raw": int(body["deposit"]["rawAmount"]),
                    "range": tuple(int(x) for x in body["range"]),
                    "attempts": attempts[(owner, deposit_id)],
                }
            )
        events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for owner, event_id, kind, deposit_id, event in conn.execute(
            "SELECT owner, id, type, deposit_id, event FROM events ORDER BY owner, id"
        ):
            events[owner].append({"id": event_id, "type": kind, "deposit": deposit_id, "event": json.loads(event)})
        return accounts, deposits, events
    finally:
        conn.close()


def host_log(path: pathlib.Path) -> dict[str, dict[int, dict[str, Any]]]:
    """What the host handled: per owner, event id → its summary (a line cut by a kill is
    ignored; a line logged twice must say the same)."""
    seen: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        owner = line.pop("owner")
        previous = seen[owner].setdefault(line["id"], line)
        assert previous == line, (previous, line)
    return seen


def wait_until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_sigkill_at_random_points_never_loses_nor_repeats_a_deposit(tmp_path: pathlib.Path) -> None:
    rng = random.Random(int(os.environ.get("DEPOSITKIT_SIGKILL_SEED", "7")))
    rounds = int(os.environ.get("DEPOSITKIT_SIGKILL_ROUNDS", "12"))
    # Devnet's file is read once it is closed (two SQLite libraries must not share a file
    # within one process: closing one's descriptor drops the other's locks).
    devnet_db = tmp_path / "devnet.sqlite"
    with depositkit.Devnet(db_path=str(devnet_db)) as net:
        owners = [new_owner() for _ in range(3)]
        addresses = account_addresses(net, owners)
        store = tmp_path / "deposits.sqlite"
        log = tmp_path / "events.jsonl"
        config = {
            "services_url": net.services_url,
            "store_path": str(store),
            "owners": owners,
            "log": str(log),
            "destination": {"chain_id": 42161},
            "options": HOST_OPTIONS,
        }
        made = 0
        kill_points = []
        for _ in range(rounds):
            host = Host(config)
            for _ in range(rng.randint(1, 3)):
                owner = rng.choice(owners)
                net.deposit(addresses[owner], rng.choice(CHAINS), "USDC", rng.choice(["5", "7.25", "12.5", "40"]))
                made += 1
            fault = rng.random()
            if fault < 0.35:
                # Sends held by the service: kills land while their outcome is unknown, and
                # sends answered after the client gave up execute anyway.
                net.inject_fault("ua", path="/v1/sweeps/send", delay_ms=rng.randint(50, 400), count=rng.randint(1, 3))
            elif fault < 0.6:
                # Failed sends: sweeps retry, then auto-refunds run (and may be killed).
                net.fail_next_sweeps(rng.randint(1, 4), "fail")
            pause = rng.uniform(0.0, 0.35)
            kill_points.append(round(pause, 3))
            time.sleep(pause)  # the random kill point
            host.kill()
            net.clear_faults()

        # Undisturbed: everything must settle.
        host = Host(config)

        def accounts_empty() -> bool:
            return all(
                net.ledger_balance(addresses[o], chain, "USDC") == 0 for o in owners for chain in CHAINS
            )

        wait_until(accounts_empty, 60, "every deposit to be swept or refunded")
        last_size = -1

        def log_quiet() -> bool:
            nonlocal last_size
            size = log.stat().st_size
            quiet = size == last_size
            last_size = size
            time.sleep(0.2)
            return quiet

        wait_until(log_quiet, 30, "the host to log every event")
        host.kill()


    receives, executed = devnet_ledger(devnet_db)
    accounts, deposits, events = client_records(store)
    handled = host_log(log)

    assert sum(len(v) for v in receives.values()) == made, "devnet recorded every deposit made"
    total_deposits = 0
    for owner in owners:
        mine = deposits[owner]
        total_deposits += len(mine)
        # No deposit lost: per chain and token the deposits tile the cumulative `received`.
        for (who, chain, token), amounts in receives.items():
            if who != accounts[owner]:
                continue
            ranges = sorted(d["range"] for d in mine if d["chain"] == chain and d["token"] == token)
            start = 0
            for low, high in ranges:
                assert low == start, f"{owner} {chain} {token}: gap or overlap at {low} (expected {start}); {ranges}"
                start = high
            assert start == sum(amounts), f"{owner} {chain} {token}: deposits cover {start} of {sum(amounts)}"
        # Every deposit ended, credited or refunded, with exactly one successful attempt.
        by_quote = {q["quote"]: q for q in executed[accounts[owner]]}
        used = set()
        for deposit in mine:
            assert not deposit["open"] and deposit["state"] in ("credited", "refunded"), deposit
            successes = [a for a in deposit["attempts"] if a[2] == "success"]
            assert len(successes) == 1, deposit
            quote_id, purpose, _ = successes[0]
            assert purpose == ("sweep" if deposit["state"] == "credited" else "refund"), deposit
            moved = by_quote.get(quote_id)
            assert moved is not None, f"devnet never executed {quote_id} of {deposit}"
            assert (moved["chain"], moved["token"], moved["raw"]) == (deposit["chain"], deposit["token"], deposit["raw"])
            assert moved["purpose"] == purpose
            used.add(quote_id)
            # Attempts that did not succeed never moved money.
            for other, _, outcome in deposit["attempts"]:
                if other != quote_id:
                    assert other not in by_quote, f"{other} of {deposit} executed too"
        # None moved twice, nothing moved that no deposit explains.
        assert used == set(by_quote), set(by_quote) - used

        # Event ids: 1..N, one terminal event per deposit, and the host's view is the store's.
        log_of = events[owner]
        assert [e["id"] for e in log_of] == list(range(1, len(log_of) + 1))
        for deposit in mine:
            terminal = [
                e
                for e in log_of
                if e["deposit"] == deposit["id"]
                and (
                    (e["type"] == "deposit:lifecycle" and e["event"]["payload"]["phase"] == "credited")
                    or (e["type"] == "refund:update" and e["event"]["payload"]["status"] == "success")
                )
            ]
            assert len(terminal) == 1, (deposit, terminal)
        stored = {e["id"]: e for e in log_of}
        assert set(handled[owner]) == set(stored), "the host handled every event exactly by id"
        for event_id, seen in handled[owner].items():
            stored_event = stored[event_id]
            assert seen["kind"] and stored_event["deposit"] == seen.get("deposit"), (seen, stored_event)
            if "phase" in seen:
                assert stored_event["event"]["payload"]["phase"] == seen["phase"]
            if "status" in seen:
                assert stored_event["event"]["payload"]["status"] == seen["status"]
    all_deposits = [d for owner in owners for d in deposits[owner]]
    refunded = sum(d["state"] == "refunded" for d in all_deposits)
    retried = sum(len(d["attempts"]) > 1 for d in all_deposits)
    unknown = sum(any(a[2] in (None, "unknown") for a in d["attempts"]) for d in all_deposits)
    assert total_deposits >= 1
    print(
        f"sigkill harness: {made} transfers, {total_deposits} deposits ({refunded} refunded, "
        f"{retried} with several attempts, {unknown} with a send left unknown by a kill or a "
        f"timeout), {rounds} kills at {kill_points}"
    )
