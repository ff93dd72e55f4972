"""depositkit.DepositFleet (fleet mode, docs/fleet.md) against a real PostgreSQL and
depositkit.Devnet() in process: two members in this process share the owners, a deposit is
credited at its destination once, a command asked of the member that does not hold the owner is
run by the one that does, and bad input gets its error class (never the URL's password). The
one log across owners: callbacks (``subscribe``) get every member's owners' events in log order,
a reader resumes from a saved cursor (callbacks, ``iter_events``, ``events``), Ctrl-C cuts a wait
short without losing an event, and leaving stops callbacks and iterators and closes every
connection of the member. The fleet's metrics (commands run, by outcome) are in
``depositkit.metrics_text()``.

PostgreSQL: the server of ``DEPOSITKIT_TEST_POSTGRES_URL`` (scripts/test.sh starts one), else,
outside CI, one this module starts with ``scripts/postgres.sh``; each test gets a database of
its own (``CREATE DATABASE`` through ``psql``).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from typing import Any, Callable, Iterator, Optional

import pytest
from prometheus_client.parser import text_string_to_metric_families

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


def commands_run(outcome: str) -> float:
    """``depositkit_fleet_commands_total{outcome=...}`` of ``depositkit.metrics_text()``, parsed
    as Prometheus text (commands run by this process's members, since it started)."""
    for family in text_string_to_metric_families(depositkit.metrics_text()):
        for sample in family.samples:
            if sample.name == "depositkit_fleet_commands_total" and sample.labels == {"outcome": outcome}:
                return sample.value
    raise AssertionError(f"no depositkit_fleet_commands_total{{outcome={outcome!r}}} in metrics_text()")


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
    # Any member reads an owner's deposit addresses from the database, holder or not: the
    # addresses the services give any client of the owner.
    addresses = a.deposit_addresses(owner.upper().replace("0X", "0x"))
    assert isinstance(addresses, depositkit.DepositAddresses)
    assert addresses == b.deposit_addresses(owner)
    assert addresses.evm == deposit_address(net, owner) and addresses.solana
    net.deposit(addresses.evm, CHAIN.BASE, "USDC", "5")
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
    done_before, failed_before = commands_run("done"), commands_run("failed")
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
    done, failed = 1, 0
    try:
        again = other.request(owner, "sweep", deposit_id=detected.deposit_id, timeout=30)
        assert again["depositId"] == detected.deposit_id, again
        done += 1
    except depositkit.SweepError as refused:
        assert detected.deposit_id in str(refused)
        failed += 1
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected

    assert other.request(owner, "recover", timeout=30) == []
    with pytest.raises(depositkit.SweepError, match="no-such-deposit"):
        other.request(owner, "sweep", deposit_id="no-such-deposit")
    done, failed = done + 1, failed + 1
    assert other.running_owners == [] and holder.running_owners == [owner]
    # The fleet's metrics are in depositkit.metrics_text(): every command the holder ran, by
    # outcome (counted just after the requester was answered, hence the wait).
    eventually(
        "the commands are counted",
        lambda: (commands_run("done") - done_before, commands_run("failed") - failed_before) == (done, failed),
    )


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
    with pytest.raises(depositkit.NotFoundError, match=unknown):
        fleet.deposit_addresses(unknown)
    with pytest.raises(depositkit.InvalidArgumentError, match="'0x123'"):
        fleet.deposit_addresses("0x123")
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
    assert secret not in depositkit.metrics_text()

    unreachable = f"postgres://app:{secret}@127.0.0.1:1/deposits"
    with pytest.raises(depositkit.NetworkError) as info:
        DepositFleet(unreachable, destination=CHAIN.BASE)
    assert "127.0.0.1:1/deposits" in str(info.value) and secret not in str(info.value)
    unreadable = f"postgres://app:{secret}@127.0.0.1:notaport/deposits"
    with pytest.raises(depositkit.ConfigurationError) as info:
        DepositFleet(unreadable, destination=CHAIN.BASE)
    assert secret not in str(info.value)


def owned_by_each(a: DepositFleet, b: DepositFleet, count: int = 2) -> tuple[str, str]:
    """Registers ``count`` owners through ``a`` and waits until ``a`` and ``b`` each run some:
    one owner of each."""
    for _ in range(count):
        a.add_owner(new_owner())
    eventually(
        "both members run owners",
        lambda: bool(a.running_owners) and bool(b.running_owners)
        and len(a.running_owners) + len(b.running_owners) == count,
    )  # fmt: skip
    return a.running_owners[0], b.running_owners[0]


def whole_log(fleet: DepositFleet, cursor: Optional[str] = None) -> list[depositkit.FleetEvent]:
    """Every event of the log after ``cursor`` (read in batches until none is left)."""
    found: list[depositkit.FleetEvent] = []
    while True:
        batch, cursor = fleet.events(cursor, max_events=50, timeout=0)
        if not batch:
            return found
        found += batch


def keys(events: list[depositkit.FleetEvent]) -> list[tuple[str, int]]:
    return [(e.owner, e.id) for e in events]


def test_callbacks_get_every_members_owners_events_in_log_order(net: Any, join: Any) -> None:
    a = join("a")
    b = join("b")
    first, second = owned_by_each(a, b)
    received: list[depositkit.FleetEvent] = []
    lock = threading.Lock()

    def on_event(event: depositkit.FleetEvent) -> None:
        with lock:
            received.append(event)

    subscription = a.subscribe(on_event)
    for owner, amount in ((first, "5"), (second, "6")):
        net.deposit(deposit_address(net, owner), CHAIN.BASE, "USDC", amount)
    for owner, amount in ((first, "5"), (second, "6")):
        expected = delivered_usdc(amount)
        eventually(
            f"{owner}'s deposit is credited",
            lambda: net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected,
        )

    def credited(owner: str) -> list[depositkit.FleetEvent]:
        with lock:
            return [
                e for e in received
                if e.owner == owner and e.kind == "deposit:lifecycle" and e.event["payload"]["phase"] == "credited"
            ]  # fmt: skip

    # The callback of member a gets the credited event of b's owner as well as of its own.
    eventually("the callback got both credited events", lambda: bool(credited(first)) and bool(credited(second)))
    for owner in (first, second):
        [event] = credited(owner)
        phases = [
            e.event["payload"]["phase"] for e in received
            if e.owner == owner and e.deposit_id == event.deposit_id and e.kind == "deposit:lifecycle"
        ]  # fmt: skip
        assert "detected" in phases and phases[-1] == "credited", phases
    # In the log's order: what the callback got is the log, event for event.
    log = whole_log(b)
    eventually("the callback caught up with the log", lambda: len(received) >= len(log))
    with lock:
        assert keys(received[: len(log)]) == keys(log)
        assert [e.cursor for e in received[: len(log)]] == [e.cursor for e in log]
    assert a.unsubscribe(subscription) is True
    assert a.unsubscribe(subscription) is False


def test_a_subscription_resumes_from_a_saved_cursor(net: Any, join: Any) -> None:
    a = join("a")
    b = join("b")
    first, second = owned_by_each(a, b)
    net.deposit(deposit_address(net, first), CHAIN.BASE, "USDC", "4")
    eventually("the first deposit is credited", lambda: len(lifecycle(a, first, "credited")) == 1)
    # A reader that handled everything so far saves its cursor, then stops (as a process exits).
    saved: list[str] = []
    subscription = b.subscribe(lambda event: saved.append(event.cursor))
    handled = whole_log(a)
    eventually("the first reader read everything", lambda: len(saved) >= len(handled))
    assert b.unsubscribe(subscription)
    cursor = saved[len(handled) - 1]

    net.deposit(deposit_address(net, second), CHAIN.BASE, "USDC", "3")
    eventually("the second deposit is credited", lambda: len(lifecycle(a, second, "credited")) == 1)
    # The restarted reader starts after the saved cursor: exactly the events after it.
    resumed: list[depositkit.FleetEvent] = []
    again = a.subscribe(resumed.append, cursor)
    after = whole_log(a, cursor)
    eventually("the resumed reader read everything after the cursor", lambda: len(resumed) >= len(after))
    assert keys(resumed[: len(after)]) == keys(after)
    assert not set(keys(resumed)) & set(keys(handled)), "nothing before the cursor again"
    assert any(e.owner == second and e.kind == "deposit:lifecycle" and e.event["payload"]["phase"] == "credited" for e in resumed)
    a.unsubscribe(again)

    # The iterator resumes from the same cursor and yields the same events, one at a time.
    iterator = b.iter_events(cursor)
    pulled = [iterator.next_event(timeout=5) for _ in after]
    assert keys([e for e in pulled if e is not None]) == keys(after)
    assert iterator.cursor == after[-1].cursor
    # events() called again with the cursor it returned reads on from there.
    batch, next_cursor = b.events(cursor, max_events=1, timeout=0)
    assert keys(batch) == keys(after[:1])
    rest, _ = b.events(next_cursor, max_events=500, timeout=0)
    assert keys(rest)[: len(after) - 1] == keys(after[1:])


def fleet_connections(admin_url: str, database: str) -> int:
    """The connections of depositkit fleets to ``database`` now."""
    name = urllib.parse.urlparse(database).path.lstrip("/")
    query = (
        "SELECT count(*) FROM pg_stat_activity "
        f"WHERE datname = '{name}' AND application_name = 'depositkit-fleet'"
    )
    out = subprocess.run(
        [_psql(), "-X", "-q", "-t", "-A", "-d", admin_url, "-c", query],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_leaving_stops_callbacks_and_iterators_and_closes_every_connection(
    net: Any, postgres_server: str, database: str, join: Any
) -> None:
    fleet = join("only")
    owner = fleet.add_owner(new_owner())
    eventually("the member runs the owner", lambda: fleet.running_owners == [owner])
    received: list[depositkit.FleetEvent] = []
    fleet.subscribe(received.append)
    iterator = fleet.iter_events()
    iterator.next_event(timeout=0)
    fleet.events(timeout=0)
    waiting: list[Any] = []
    reader = threading.Thread(target=lambda: waiting.append(fleet.events(whole_log_cursor(fleet), timeout=3)))
    reader.start()
    assert fleet_connections(postgres_server, database) > 0

    fleet.leave()
    after_leave = len(received)
    reader.join(10)
    assert not reader.is_alive() and len(waiting) == 1, "the wait in flight ended by its timeout"
    assert list(iterator) == [] and iterator.next_event(timeout=0) is None, "iteration ends"
    with pytest.raises(depositkit.DepositSDKError, match="left the fleet"):
        fleet.subscribe(received.append)
    with pytest.raises(depositkit.DepositSDKError, match="left the fleet"):
        fleet.iter_events()
    eventually("every connection of the member is closed", lambda: fleet_connections(postgres_server, database) == 0)
    assert len(received) == after_leave, "no callback after leave()"


def whole_log_cursor(fleet: DepositFleet) -> str:
    """The cursor after the last event of the log now."""
    cursor: Optional[str] = None
    while True:
        batch, cursor = fleet.events(cursor, max_events=500, timeout=0)
        if not batch:
            return cursor


def test_callback_arguments_are_checked(join: Any) -> None:
    fleet = join("checks")
    with pytest.raises(TypeError, match="callable"):
        fleet.subscribe(42)  # type: ignore[arg-type]
    with pytest.raises(depositkit.InvalidArgumentError, match="cursor"):
        fleet.subscribe(print, "v1.nope")
    with pytest.raises(depositkit.InvalidArgumentError, match="cursor"):
        fleet.iter_events("nope")
    assert fleet.unsubscribe(12345) is False


def test_ctrl_c_interrupts_a_wait_for_the_next_event_and_loses_nothing(net: Any, join: Any) -> None:
    fleet = join("interrupted")
    owner = fleet.add_owner(new_owner())
    eventually("the member runs the owner", lambda: fleet.running_owners == [owner])
    end = whole_log_cursor(fleet)
    iterator = fleet.iter_events(end)
    interrupted = threading.Event()

    def on_sigint(signum: int, frame: Any) -> None:
        if not interrupted.is_set():  # one KeyboardInterrupt, however many signals came
            interrupted.set()
            raise KeyboardInterrupt

    def press_ctrl_c() -> None:  # until the wait was interrupted (it may not have begun yet)
        while not interrupted.wait(0.05):
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, on_sigint)
    presser = threading.Thread(target=press_ctrl_c)
    started = time.monotonic()
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            iterator.next_event(timeout=60)
    finally:
        interrupted.set()
        presser.join()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 10, "Ctrl-C cut the 60 s wait short"
    assert iterator.cursor == end, "the interrupted wait handed nothing out"

    # The iterator goes on from where it was: the deposit's events come next, in order.
    net.deposit(deposit_address(net, owner), CHAIN.BASE, "USDC", "2")
    phases: list[str] = []
    deadline = time.monotonic() + 60
    while "credited" not in phases:
        assert time.monotonic() < deadline, f"timed out: the deposit's events ({phases})"
        event = iterator.next_event(timeout=5)
        if event is not None and event.owner == owner and event.kind == "deposit:lifecycle":
            phases.append(event.event["payload"]["phase"])
    assert "detected" in phases, phases
    expected = delivered_usdc("2")
    eventually("the deposit is credited", lambda: net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected)


def test_a_process_that_exits_without_leaving_leaves_at_exit(net: Any, postgres_server: str, database: str) -> None:
    script = (
        "import sys, depositkit\n"
        "fleet = depositkit.DepositFleet(sys.argv[1], destination={'chain_id': 42161},\n"
        "                                name='exiting', services_url=sys.argv[2])\n"
        "owner = fleet.add_owner(sys.argv[3])\n"
        "print(fleet.node_id, flush=True)\n"
        "# exits without leave(): the package's atexit hook leaves\n"
    )
    owner = new_owner()
    child = subprocess.run(
        [sys.executable, "-c", script, database, net.services_url, owner],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert child.returncode == 0, child.stderr
    node_id = child.stdout.strip()
    rows = subprocess.run(
        [_psql(), "-X", "-q", "-t", "-A", "-d", database, "-c",
         f"SELECT count(*) FROM dk_nodes WHERE node_id = '{node_id}'"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert rows.returncode == 0, rows.stderr
    # Left, not merely stopped: its row is gone at once (a lease would have kept it 10 s).
    assert rows.stdout.strip() == "0", f"member {node_id} is still in dk_nodes"
