"""depositkit.DepositFleet (fleet mode, docs/fleet.md) against a real PostgreSQL and
depositkit.Devnet() in process: two members in this process share the owners, a deposit is
credited at its destination once, a command asked of the member that does not hold the owner is
run by the one that does, and bad input gets its error class (never the URL's password).

PostgreSQL: the server of ``DEPOSITKIT_TEST_POSTGRES_URL`` (scripts/test.sh starts one), else,
outside CI, one this module starts with ``scripts/postgres.sh``; each test gets a database of
its own (``CREATE DATABASE`` through ``psql``).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import time
import urllib.parse
import uuid
from typing import Any, Callable, Iterator

import pytest

import depositkit
from depositkit import CHAIN, DepositFleet

from conftest import FAST_CLIENT, ROOT, delivered_usdc, new_owner

# Fast leases: a member renews and rebalances every 0.3 s.
LEASE = {"lease_ttl": 2.0, "renew_every": 0.3}


def _psql() -> str:
    """psql of the PostgreSQL binaries scripts/postgres.sh uses, else the one on PATH."""
    candidates = [os.path.join(os.environ.get("DEPOSITKIT_PG_BIN", ""), "psql")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"), reverse=True)
    found = [c for c in candidates if os.path.isfile(c) and os.access(c, os.X_OK)]
    psql = found[0] if found else shutil.which("psql")
    assert psql, "psql not found (install Debian's postgresql package)"
    return psql


@pytest.fixture(scope="module")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The admin URL of a PostgreSQL server: CI's, or one started here."""
    url = os.environ.get("DEPOSITKIT_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    assert not os.environ.get("CI"), "CI must export DEPOSITKIT_TEST_POSTGRES_URL (scripts/test.sh)"
    # Under /tmp: as root the server runs as user postgres, which must be able to enter it.
    directory = os.path.join("/tmp", f"depositkit-pytest-pg-{uuid.uuid4().hex[:12]}")
    script = str(ROOT / "scripts" / "postgres.sh")
    started = subprocess.run(
        [script, "start", directory], capture_output=True, text=True, timeout=300
    )
    assert started.returncode == 0, f"scripts/postgres.sh start failed:\n{started.stderr}"
    try:
        yield started.stdout.strip()
    finally:
        subprocess.run([script, "stop", directory], capture_output=True, timeout=120)


@pytest.fixture
def database(postgres_server: str) -> str:
    """The URL of a fresh database on the server."""
    name = f"dk_pytest_{uuid.uuid4().hex}"
    created = subprocess.run(
        [_psql(), "-X", "-q", "-d", postgres_server, "-c", f"CREATE DATABASE {name}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert created.returncode == 0, f"CREATE DATABASE failed: {created.stderr}"
    return urllib.parse.urlparse(postgres_server)._replace(path=f"/{name}").geturl()


@pytest.fixture
def join(database: str, net: Any) -> Iterator[Callable[..., DepositFleet]]:
    """``join(name, **options)``: a member of the test's fleet on devnet (left after the test)."""
    members: list[DepositFleet] = []

    def make(name: str, url: str = database, **options: Any) -> DepositFleet:
        settings = {"services_url": net.services_url, **FAST_CLIENT, **LEASE, **options}
        member = DepositFleet(
            url, destination={"chain_id": CHAIN.ARBITRUM}, name=name, **settings
        )
        members.append(member)
        return member

    try:
        yield make
    finally:
        for member in members:
            member.leave()


def eventually(what: str, check: Callable[[], bool], limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.05)


def deposit_address(net: Any, owner: str) -> str:
    """The owner's EVM deposit address (the service's account of the owner, the same for any
    client of it): asked through a client of its own, closed before anything is deposited."""
    with depositkit.DepositClient(
        owner, {"chain_id": CHAIN.ARBITRUM}, services_url=net.services_url, **FAST_CLIENT
    ) as client:
        return client.initialize().evm


def lifecycle(fleet: DepositFleet, owner: str, phase: str) -> list[depositkit.FleetEvent]:
    """The owner's lifecycle events of ``phase`` in the whole log."""
    found: list[depositkit.FleetEvent] = []
    cursor = None
    while True:
        batch, cursor = fleet.events(cursor, max_events=200, timeout=0)
        if not batch:
            return found
        found += [
            e for e in batch
            if e.owner == owner and e.kind == "deposit:lifecycle" and e.event["payload"]["phase"] == phase
        ]  # fmt: skip


def test_members_share_owners_and_a_deposit_is_credited_once(net: Any, join: Any) -> None:
    a = join("a")
    owners = sorted(a.add_owner(new_owner().upper().replace("0X", "0x")) for _ in range(3))
    assert a.owners() == owners and all(o == o.lower() for o in owners)
    eventually("a runs every owner", lambda: a.running_owners == owners)
    b = join("b")
    # Shares of ceil(3 / 2) = 2: a gives one back, b takes it.
    eventually(
        "the owners are shared",
        lambda: len(a.running_owners) == 2 and len(b.running_owners) == 1,
    )
    assert sorted(a.running_owners + b.running_owners) == owners
    assert b.owners() == owners

    [owner] = b.running_owners
    net.deposit(deposit_address(net, owner), CHAIN.BASE, "USDC", "5")
    expected = delivered_usdc("5")
    eventually(
        "the deposit is credited at the destination",
        lambda: net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected,
    )
    eventually("the credited event is in the log", lambda: len(lifecycle(a, owner, "credited")) == 1)
    [credited] = lifecycle(b, owner, "credited")
    assert credited.deposit_id and credited.owner == owner
    # Credited once: nothing more arrives, and the log holds one credited event.
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected
    assert len(lifecycle(a, owner, "credited")) == 1

    # The log resumes from a saved cursor: everything was read, so nothing comes after it.
    events, cursor = a.events(timeout=0)
    assert events and events[-1].cursor == cursor
    assert a.events(cursor, timeout=0) == ([], cursor)

    # Leaving hands the owners over at once.
    a.leave()
    eventually("b runs every owner", lambda: b.running_owners == owners)
    assert a.running_owners == [] and "left" in repr(a)


def test_a_command_asked_of_another_member_is_run_by_the_holder(net: Any, join: Any) -> None:
    holder = join("holder", auto_sweep=False)
    owner = holder.add_owner(new_owner())
    eventually("the holder runs the owner", lambda: holder.running_owners == [owner])
    other = join("other", auto_sweep=False)
    # ceil(1 / 2) = 1: the holder keeps it, the other member holds nothing.
    assert other.running_owners == []

    net.deposit(deposit_address(net, owner), CHAIN.BASE, "USDC", "7")
    eventually("the holder detects the deposit", lambda: len(lifecycle(other, owner, "detected")) == 1)
    [detected] = lifecycle(other, owner, "detected")
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == 0, "auto_sweep is off"

    result = other.request(owner, "sweep", deposit_id=detected.deposit_id, timeout=30)
    assert other.running_owners == [], "the holder ran it, not the requester"
    assert result["depositId"] == detected.deposit_id, result
    expected = delivered_usdc("7")
    eventually(
        "the sweep is credited at the destination",
        lambda: net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected,
    )
    # Swept once: asking again delivers nothing more (the holder's client refuses it or
    # answers with the sweep it did).
    try:
        again = other.request(owner, "sweep", deposit_id=detected.deposit_id, timeout=30)
        assert again["depositId"] == detected.deposit_id, again
    except depositkit.SweepError as refused:
        assert detected.deposit_id in str(refused)
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected

    assert other.request(owner, "recover", timeout=30) == []
    with pytest.raises(depositkit.SweepError, match="no-such-deposit"):
        other.request(owner, "sweep", deposit_id="no-such-deposit")
    assert other.running_owners == [] and holder.running_owners == [owner]


def test_bad_input_gets_its_error_class(database: str, join: Any) -> None:
    fleet = join("checks")
    owner = fleet.add_owner(new_owner())
    with pytest.raises(depositkit.InvalidArgumentError, match="already registered"):
        fleet.add_owner(owner.upper().replace("0X", "0x"))
    with pytest.raises(depositkit.InvalidArgumentError, match="'0x123'"):
        fleet.add_owner("0x123")
    unknown = new_owner()
    with pytest.raises(depositkit.NotFoundError, match=unknown):
        fleet.remove_owner(unknown)
    with pytest.raises(depositkit.NotFoundError, match=unknown):
        fleet.request(unknown, "recover", timeout=1)
    with pytest.raises(depositkit.InvalidArgumentError, match='"explode"'):
        fleet.request(owner, "explode")
    with pytest.raises(depositkit.InvalidArgumentError, match="needs deposit_id"):
        fleet.request(owner, "sweep")
    with pytest.raises(depositkit.InvalidArgumentError, match="takes no deposit_id"):
        fleet.request(owner, "recover", deposit_id="d1")
    with pytest.raises(depositkit.InvalidArgumentError, match="cursor"):
        fleet.events("v1.nope", timeout=0)
    with pytest.raises(depositkit.InvalidArgumentError, match="timeout"):
        fleet.events(timeout=-1)
    with pytest.raises(depositkit.InvalidArgumentError, match="renew_every"):
        join("slow", renew_every=5.0, lease_ttl=2.0)
    with pytest.raises(TypeError, match=r"DepositFleet\(\) got an unexpected keyword argument 'no_such_option'"):
        join("typo", no_such_option=1)
    fleet.leave()
    fleet.leave()
    with pytest.raises(depositkit.DepositSDKError, match="left the fleet"):
        fleet.owners()


def test_the_password_is_never_shown(database: str, join: Any) -> None:
    secret = "Sekr3t-" + uuid.uuid4().hex[:8]
    parts = urllib.parse.urlparse(database)
    with_password = parts._replace(netloc=f"postgres:{secret}@{parts.hostname}:{parts.port}").geturl()
    # The test server trusts every connection: the password is sent and ignored.
    fleet = join("secretive", url=with_password)
    assert secret not in repr(fleet) and secret not in fleet.database_url
    assert f"postgres:***@{parts.hostname}" in fleet.database_url

    unreachable = f"postgres://app:{secret}@127.0.0.1:1/deposits"
    with pytest.raises(depositkit.NetworkError) as info:
        DepositFleet(unreachable, destination=CHAIN.BASE)
    assert "127.0.0.1:1/deposits" in str(info.value) and secret not in str(info.value)
    unreadable = f"postgres://app:{secret}@127.0.0.1:notaport/deposits"
    with pytest.raises(depositkit.ConfigurationError) as info:
        DepositFleet(unreadable, destination=CHAIN.BASE)
    assert secret not in str(info.value)
