"""``depositkit.AsyncDepositFleet`` (fleet mode for asyncio, docs/fleet.md) against a real
PostgreSQL and the in-process devnet: two members joined by awaiting, a sweep asked of the
member that does not hold the owner and run by the one that does, the log read with
``async for``, no thread per awaited call, the awaited calls on the member's own pool,
cancellation that loses no event, and leaving while a read waits.

PostgreSQL as in ``test_fleet.py`` (``DEPOSITKIT_TEST_POSTGRES_URL``, else one started by
``scripts/postgres.sh``). Runs under anyio's pytest plugin, on asyncio (and uvloop when
installed), like ``test_async.py``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Callable, Optional

import pytest

import depositkit
from depositkit import CHAIN, AsyncDepositFleet, FleetEvent

from conftest import FAST_CLIENT, delivered_usdc, new_owner
from test_async import BACKENDS, anyio_backend  # noqa: F401
from test_async_deposit import os_threads
from test_fleet import LEASE, database, deposit_address, fleet_connections, postgres_server  # noqa: F401

pytestmark = pytest.mark.anyio


async def eventually(what: str, check: Callable[[], bool], limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"timed out: {what}"
        await asyncio.sleep(0.05)


@pytest.fixture
async def join(database: str, net: Any) -> AsyncIterator[Callable[..., Any]]:  # noqa: F811
    """``await join(name, **options)``: a member of the test's fleet (left after the test)."""
    members: list[AsyncDepositFleet] = []

    async def make(name: str, **options: Any) -> AsyncDepositFleet:
        settings = {"services_url": net.services_url, **FAST_CLIENT, **LEASE, **options}
        member = await AsyncDepositFleet.join(
            database, destination={"chain_id": CHAIN.ARBITRUM}, name=name, **settings
        )
        members.append(member)
        return member

    try:
        yield make
    finally:
        for member in members:
            await member.leave()


def phase(event: FleetEvent) -> Optional[str]:
    return event.event["payload"]["phase"] if event.kind == "deposit:lifecycle" else None


async def end_cursor(fleet: AsyncDepositFleet) -> str:
    """The cursor after the last event of the log now."""
    cursor: Optional[str] = None
    while True:
        batch, cursor = await fleet.events(cursor, timeout=0)
        if not batch:
            return cursor


async def test_async_members_sweep_through_a_request_and_read_the_log(net: Any, join: Any) -> None:
    a = await join("a", auto_sweep=False)
    b = await join("b", auto_sweep=False)
    owner = await a.add_owner(new_owner().upper().replace("0X", "0x"))
    assert owner == owner.lower() and await b.owners() == [owner]
    await eventually("a member runs the owner", lambda: owner in a.running_owners + b.running_owners)
    holder, other = (a, b) if owner in a.running_owners else (b, a)
    assert other.running_owners == []

    addresses = await other.deposit_addresses(owner)
    assert addresses is not None and addresses == holder.sync.deposit_addresses(owner)
    assert addresses.evm == deposit_address(net, owner)
    net.deposit(addresses.evm, CHAIN.BASE, "USDC", "8")

    async def first_detected() -> FleetEvent:
        async for event in other.iter_events():
            if event.owner == owner and phase(event) == "detected":
                return event
        raise AssertionError("the log ended")

    detected = await asyncio.wait_for(first_detected(), 60)
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == 0, "auto_sweep is off"
    result = await other.request(owner, "sweep", deposit_id=detected.deposit_id, timeout=30)
    assert result["depositId"] == detected.deposit_id, result
    assert other.running_owners == [] and holder.running_owners == [owner], "the holder ran it"
    expected = delivered_usdc("8")
    await eventually(
        "the sweep is credited at the destination",
        lambda: net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected,
    )

    # The credited event reaches the log; reading resumes from a saved cursor.
    saved = detected.cursor
    credited: list[FleetEvent] = []

    async def until_credited() -> None:
        async for event in holder.iter_events(saved):
            if event.owner == owner and phase(event) == "credited":
                credited.append(event)
                return

    await asyncio.wait_for(until_credited(), 60)
    assert credited[0].deposit_id == detected.deposit_id
    batch, cursor = await other.events(saved, max_events=500, timeout=0)
    assert [(e.owner, e.id) for e in batch if phase(e) == "credited"] == [(owner, credited[0].id)]
    assert cursor == batch[-1].cursor
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected

    with pytest.raises(depositkit.SweepError, match="no-such-deposit"):
        await other.request(owner, "sweep", deposit_id="no-such-deposit")
    with pytest.raises(depositkit.NotFoundError):
        await other.remove_owner(new_owner())
    await other.remove_owner(owner)
    assert await holder.owners() == []


async def test_awaited_calls_start_no_thread_and_a_cancelled_read_loses_nothing(join: Any) -> None:
    fleet = await join("solo")
    owner = await fleet.add_owner(new_owner())
    await eventually("the member runs the owner", lambda: fleet.running_owners == [owner])
    end = await end_cursor(fleet)
    await fleet.events(end, timeout=0.2)  # the kept listening connection is open now
    before = os_threads()
    waits = [asyncio.ensure_future(fleet.events(end, timeout=1.5)) for _ in range(20)]
    calls = [asyncio.ensure_future(fleet.owners()) for _ in range(20)]
    await asyncio.sleep(0.3)
    during = os_threads()
    assert [await call for call in calls] == [[owner]] * 20
    for batch, cursor in await asyncio.gather(*waits):
        assert cursor == (batch[-1].cursor if batch else end)
    assert during - before < 5, f"{during - before} threads for 40 awaited calls"

    # A read cancelled while it waits: the caller's cursor did not move, and the next read from
    # it gets what the log holds after it, as a blocking read does.
    start = await end_cursor(fleet)
    waiting = asyncio.ensure_future(fleet.events(start, timeout=10))
    await asyncio.sleep(0.2)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    second = await fleet.add_owner(new_owner())
    await eventually("the member runs both owners", lambda: fleet.running_owners == sorted([owner, second]))
    again, _ = await fleet.events(start, timeout=0)
    blocking, _ = fleet.sync.events(start, timeout=0)
    assert [(e.owner, e.id) for e in again] == [(e.owner, e.id) for e in blocking]


async def test_awaited_calls_share_the_members_pool(postgres_server: str, database: str, join: Any) -> None:  # noqa: F811
    fleet = await join("pooled", max_connections=2)
    owner = await fleet.add_owner(new_owner())
    await eventually("the member runs the owner", lambda: fleet.running_owners == [owner])
    end = await end_cursor(fleet)
    waiting = asyncio.ensure_future(fleet.events(end, timeout=1.0))
    calls = [asyncio.ensure_future(fleet.owners()) for _ in range(20)]
    assert [await call for call in calls] == [[owner]] * 20
    connections = fleet_connections(postgres_server, database)
    await waiting
    # The member's pool (2) serves its awaited calls too; besides it only its lease session,
    # its commands' doorbell and the log's doorbell the waiting read listens on. A pool of the
    # awaited calls' own would add up to 2 more.
    assert 0 < connections <= 2 + 3, f"{connections} connections"


async def test_leaving_ends_a_waiting_read_and_the_iteration(join: Any) -> None:
    fleet = await join("leaving")
    end = await end_cursor(fleet)
    waiting = asyncio.ensure_future(fleet.events(end, timeout=30))
    iterating: list[FleetEvent] = []

    async def iterate() -> None:
        async for event in fleet.iter_events(end):
            iterating.append(event)

    iteration = asyncio.ensure_future(iterate())
    await asyncio.sleep(0.3)
    started = time.monotonic()
    await fleet.leave()
    batch, cursor = await asyncio.wait_for(waiting, 5)
    assert (batch, cursor) == ([], end)
    await asyncio.wait_for(iteration, 5)
    assert time.monotonic() - started < 5
    assert fleet.left and fleet.running_owners == [] and "left" in repr(fleet)
    with pytest.raises(depositkit.DepositSDKError, match="left the fleet"):
        await fleet.owners()
    await fleet.leave()  # a second leave does nothing


async def test_joining_checks_its_arguments(database: str, net: Any) -> None:  # noqa: F811
    with pytest.raises(depositkit.InvalidArgumentError, match="renew_every"):
        await AsyncDepositFleet.join(database, destination=CHAIN.BASE, renew_every=5.0, lease_ttl=2.0)
    with pytest.raises(TypeError, match=r"DepositFleet\(\) got an unexpected keyword argument 'nope'"):
        await AsyncDepositFleet.join(database, destination=CHAIN.BASE, nope=1)
    with pytest.raises(depositkit.NetworkError, match="127.0.0.1:1/deposits") as info:
        await AsyncDepositFleet.join("postgres://app:Sekr3t@127.0.0.1:1/deposits", destination=CHAIN.BASE)
    assert "Sekr3t" not in str(info.value)
