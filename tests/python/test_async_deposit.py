"""``AsyncDepositClient`` against the in-process devnet: every call is the core's future on its
runtime (no thread per call or per wait), cancellation never loses nor repeats money, the client's
own timeout, and fork after import (``test_async.py`` has the rest: the README flow, the lookups,
events handed to cancelled waits, the funding calls).

Every test runs under anyio's pytest plugin on the asyncio backend, and on uvloop when it is
installed. trio is not a backend: the async faces complete ``asyncio`` futures (``_aio.py``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

import anyio
import pytest

from depositkit import (
    CHAIN,
    AsyncDepositClient,
    ConfigurationError,
    DepositLifecycleEvent,
    DepositTimeoutError,
    Devnet,
    NotFoundError,
    RecoveryEvent,
    RefundError,
    RefundEvent,
)

from conftest import FAST_CLIENT, new_owner

# The same backends (asyncio, and uvloop when installed) and deposit clients as test_async.py,
# and test_funding.py's wallets on the local chains.
from test_async import BACKENDS, anyio_backend, make_async  # noqa: F401
from test_funding import evm_url, fresh_evm_wallet  # noqa: F401

pytestmark = pytest.mark.anyio


def os_threads() -> int:
    """The process's threads as the kernel counts them (native ones included), but for the
    in-process devnet's (the services' own threads, named ``depositkit-devnet…``)."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm", encoding="utf-8") as comm:
                count += not comm.read().startswith("depositkit-devn")
        except OSError:
            pass  # the thread ended meanwhile
    return count


async def detect(
    net: Devnet, client: AsyncDepositClient, token: str = "USDC", amount: str = "10", chain: int = CHAIN.ARBITRUM, **kw: Any
) -> Any:
    net.deposit(client.deposit_addresses.evm, chain, token, amount, **kw)
    [detected] = await client.poll_now()
    return detected


async def events_until(client: AsyncDepositClient, done: Any, seen: list[Any]) -> Any:
    """The first event of ``seen`` for which ``done(event)``, else takes events into ``seen``
    until one comes; fails after 20 s."""
    for event in seen:
        if done(event):
            return event
    with anyio.fail_after(20):
        async for event in client.events():
            seen.append(event)
            if done(event):
                return event
    raise AssertionError("the events ended first")


def phases(seen: list[Any], deposit_id: str) -> list[str]:
    return [e.phase for e in seen if isinstance(e, DepositLifecycleEvent) and e.id == deposit_id]


async def test_two_hundred_concurrent_awaits_start_no_thread_per_call(net: Devnet, make_async: Any) -> None:
    client = make_async(auto_sweep=False)
    await client.initialize()
    page = await client.get_transactions()  # warm: the session, the runtime, the HTTP pool
    assert page.transactions == []
    while await client.next_event(timeout=0.05) is not None:
        pass
    python_threads = threading.active_count()
    before = os_threads()
    # Every account-service answer waits 300 ms: 200 calls, each a request the cache cannot
    # answer (distinct ids), and 200 event waits, all pending at once.
    net.inject_fault("ua", delay_ms=300, count=200)
    calls = [asyncio.ensure_future(client.get_transaction(f"tx_missing_{i}")) for i in range(200)]
    waits = [asyncio.ensure_future(client.next_event()) for _ in range(200)]
    peak = before
    ticks = 0
    while not all(call.done() for call in calls):
        peak = max(peak, os_threads())
        ticks += 1
        await asyncio.sleep(0.01)
    answers = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(a, NotFoundError) and "tx_missing_" in str(a) for a in answers), answers[:3]
    assert ticks >= 10  # the loop kept running while 400 awaits were pending
    assert not any(wait.done() for wait in waits)  # no event came: all 200 still wait
    for wait in waits:
        wait.cancel()
    await asyncio.gather(*waits, return_exceptions=True)
    assert threading.active_count() == python_threads
    # At most the runtime's blocking pool (64 requests on the wire at once) was added: no
    # thread per call, none per wait (a thread each would be 400).
    assert peak - before <= 64 + 4, (before, peak)


async def test_a_cancelled_refund_finishes_in_the_background_once(net: Devnet, make_async: Any) -> None:
    client = make_async(auto_sweep=False)
    await client.initialize()
    sender = new_owner()
    detected = await detect(net, client, "USDT", "2.5", sender=sender)
    net.inject_fault("ua", delay_ms=600, count=1, path="/v1/sweeps/send")
    refunding = asyncio.ensure_future(client.refund(detected.id))
    seen: list[Any] = []
    await events_until(client, lambda e: isinstance(e, RefundEvent) and e.result.status == "processing", seen)
    started = time.monotonic()
    refunding.cancel()
    with pytest.raises(asyncio.CancelledError):
        await refunding
    assert time.monotonic() - started < 0.3
    done = await events_until(client, lambda e: isinstance(e, RefundEvent) and e.result.status == "success", seen)
    assert done.result.refunded_to == sender
    assert net.ledger_balance(sender, CHAIN.ARBITRUM, "USDT") == 2_470_000
    assert [e.result.status for e in seen if isinstance(e, RefundEvent)].count("success") == 1
    result = client.refund_result(detected.id)
    assert result is not None and result.status == "success"
    with pytest.raises(RefundError, match="already refunded"):
        await client.refund(detected.id)
    assert net.ledger_balance(sender, CHAIN.ARBITRUM, "USDT") == 2_470_000


async def test_a_cancelled_initialize_still_makes_the_client_ready(net: Devnet, make_async: Any) -> None:
    client = make_async()
    net.inject_fault("ua", delay_ms=400, count=1, path="/v1/accounts")
    starting = asyncio.ensure_future(client.initialize())
    await asyncio.sleep(0)  # one turn of the loop: the call starts (its answer is 400 ms away)
    assert client.status == "initializing"
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    seen: list[Any] = []
    await events_until(client, lambda e: getattr(e, "status", None) == "ready", seen)
    assert client.status == "ready" and client.deposit_addresses.evm.startswith("0x")
    with pytest.raises(ConfigurationError, match="already initialized"):
        await client.initialize()


async def test_a_cancelled_poll_still_reports_its_detection(net: Devnet, make_async: Any) -> None:
    client = make_async(auto_sweep=False)
    addresses = await client.initialize()
    net.deposit(addresses.evm, CHAIN.BASE, "USDC", "3")
    net.inject_fault("ua", delay_ms=400, count=1, path="/v1/balances")
    polling = asyncio.ensure_future(client.poll_now())
    await asyncio.sleep(0)  # one turn of the loop: the poll starts (its answer is 400 ms away)
    assert not polling.done()
    polling.cancel()
    with pytest.raises(asyncio.CancelledError):
        await polling
    seen: list[Any] = []
    detected = await events_until(
        client, lambda e: isinstance(e, DepositLifecycleEvent) and e.phase == "detected", seen
    )
    assert (detected.chain_id, detected.token, detected.amount) == (CHAIN.BASE, "USDC", "3")
    assert [d.id for d in client.pending_deposits()] == [detected.id]


async def test_the_call_timeout_raises_and_the_sweep_goes_on_once(net: Devnet, make_async: Any) -> None:
    client = make_async(auto_sweep=False, call_timeout_ms=1000)  # initialize() fits, even on a busy machine
    owner = client.owner_address
    await client.initialize()
    detected = await detect(net, client)
    net.inject_fault("ua", delay_ms=3000, count=1, path="/v1/sweeps/send")
    started = time.monotonic()
    with pytest.raises(DepositTimeoutError, match=r"sweep\(\) did not finish within 1000 ms"):
        await client.sweep(detected.id)
    assert time.monotonic() - started < 2.5  # not the 3 s of the send
    seen: list[Any] = []
    credited = await events_until(
        client, lambda e: isinstance(e, DepositLifecycleEvent) and e.id == detected.id and e.phase == "credited", seen
    )
    assert phases(seen, detected.id).count("credited") == 1
    delivered = net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC")
    assert delivered == 9_950_000
    with pytest.raises(NotFoundError, match=f"transaction {credited.transaction_id}"):
        await client.sweep(detected.id)
    # A read times out the same way; anyio's own deadline cancels a wait as asyncio's does.
    net.inject_fault("ua", delay_ms=3000, count=2)
    with pytest.raises(DepositTimeoutError, match=r"get_transactions\(\) did not finish within 1000 ms"):
        await client.get_transactions(2, 7)
    with anyio.move_on_after(0.05) as scope:
        await client.stuck_funds()
    assert scope.cancelled_caught
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == delivered


async def test_recovery_is_awaited_and_reported(net: Devnet, make_async: Any) -> None:
    client = make_async()
    await client.initialize()
    net.fail_next_sweeps(3)
    detected = await detect(net, client, "USDC", "4", CHAIN.BASE)
    seen: list[Any] = []
    await events_until(client, lambda e: isinstance(e, DepositLifecycleEvent) and e.phase == "failed", seen)
    [stuck] = await client.stuck_funds()
    assert (stuck.id, stuck.raw_amount) == ("recovery:usdc:8453", 4_000_000)
    [result] = await client.recover_funds()
    assert result.status == "success" and result.tx_hash
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == result.delivered.raw_amount
    event = await events_until(client, lambda e: isinstance(e, RecoveryEvent), seen)
    assert event.result == result
    credited = await events_until(
        client, lambda e: isinstance(e, DepositLifecycleEvent) and e.id == detected.id and e.phase == "credited", seen
    )
    assert credited.transaction_id == result.tx_hash
    assert await client.stuck_funds() == []


async def test_a_wallet_transfer_is_awaited_and_a_cancelled_one_still_lands(
    chain_net: Any, local_chains: dict[str, Any], local_funding: dict[str, Any], fresh_evm_wallet: Any
) -> None:
    base = evm_url(local_chains, CHAIN.BASE)
    funding = {**local_funding, "balance_provider": "rpc"}
    client = AsyncDepositClient(
        new_owner(), {"chain_id": CHAIN.ARBITRUM}, services_url=chain_net.services_url, funding=funding, **FAST_CLIENT
    )
    try:
        addresses = await client.initialize()
        wallet = fresh_evm_wallet(base, 10**18)
        client.set_evm_wallet(base, address=wallet)
        [eth] = [b for b in await client.get_wallet_balances() if (b.chain_id, b.token) == (CHAIN.BASE, "ETH")]
        assert eth.raw_amount == 10**18
        sent = await client.fund_from_wallet(eth, 10**16)
        assert (sent.chain_id, sent.token, sent.raw_amount, sent.to_address) == (CHAIN.BASE, "ETH", 10**16, addresses.evm)
        assert chain_net.chain_balance(addresses.evm, CHAIN.BASE, "ETH") == 10**16
        # Cancelled as soon as it started: the transfer is sent and confirmed all the same.
        sending = asyncio.ensure_future(client.fund_from_wallet(eth, 2 * 10**16))
        await asyncio.sleep(0)  # one turn of the loop: the call starts
        sending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sending
        with anyio.fail_after(30):
            while chain_net.chain_balance(addresses.evm, CHAIN.BASE, "ETH") != 3 * 10**16:
                await asyncio.sleep(0.05)
    finally:
        await client.aclose()


async def test_calls_before_initialize_answer_like_the_sync_ones(make_async: Any) -> None:
    client = make_async()
    for call in (
        client.poll_now(),
        client.sweep("dep_x"),
        client.refund("dep_x"),
        client.can_refund("dep_x"),
        client.stuck_funds(),
        client.recover_funds(),
        client.get_transactions(),
        client.get_transaction("tx_x"),
    ):
        with pytest.raises(ConfigurationError, match=r"Client not initialized\. Call initialize\(\) first\."):
            await call


FORK = r"""
import asyncio, json, os, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import depositkit
from depositkit import CHAIN

services = sys.argv[1]

def client():
    return depositkit.AsyncDepositClient("0x" + os.urandom(20).hex(), {"chain_id": CHAIN.ARBITRUM},
                                         services_url=services)

async def ready(c):
    return (await c.initialize()).evm

inherited = client()
parent_address = asyncio.run(ready(inherited))
pid = os.fork()
if pid == 0:
    report = {}
    async def child():
        try:
            await inherited.get_transactions()
        except depositkit.InternalError as e:
            report["inherited"] = str(e)
        fresh = client()
        report["fresh"] = (await ready(fresh)).startswith("0x")
        report["page"] = (await fresh.get_transactions()).transactions
        await fresh.aclose()
    try:
        asyncio.run(asyncio.wait_for(child(), 30))
    except BaseException as e:
        report["error"] = repr(e)
    print(json.dumps(report), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
async def parent():
    return (await inherited.get_transactions()).transactions  # the parent's client still works
assert asyncio.run(parent()) == []
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_fork_after_import(net: Devnet) -> None:
    done = subprocess.run([sys.executable, "-c", FORK, net.services_url], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in report, report
    assert "cannot be used in this forked child" in report["inherited"]
    assert report["fresh"] is True and report["page"] == []
