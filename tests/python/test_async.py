"""The asyncio faces: ``AsyncUserRpcClient`` and ``AsyncDepositClient`` (``depositkit/_aio.py``).

Every test runs under anyio's pytest plugin on the asyncio backend, and again on uvloop when it
is installed; a few run plain ``asyncio.run``. What is checked:

- every awaitable method answers what the synchronous one answers, errors typed the same;
- the loop never blocks: a ticker task keeps running while hundreds of calls wait;
- cancellation (``task.cancel()``, ``asyncio.wait_for``, anyio cancel scopes) stops the wait at
  once; a sweep already started finishes in the background, is reported by one ``credited``
  event and delivered once; an event handed to a cancelled ``next_event`` is not lost;
- timeouts (the client's own ``timeout``, ``next_event(timeout)``);
- Ctrl-C during an await under ``asyncio.run`` ends the program with ``KeyboardInterrupt``
  promptly (subprocess), and fork after import: a child's new clients work, inherited ones
  raise ``InternalError`` (subprocess).
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

import depositkit
from depositkit import (
    CHAIN,
    AsyncDepositClient,
    AsyncUserRpcClient,
    AuthenticationError,
    ConfigurationError,
    DepositLifecycleEvent,
    DepositSDKError,
    DepositTimeoutError,
    Devnet,
    FundingError,
    InvalidArgumentError,
    NotFoundError,
    ProviderError,
    User,
)

from conftest import FAST_CLIENT, new_owner

try:
    import uvloop  # noqa: F401

    BACKENDS: list[Any] = [
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop"),
    ]
except ImportError:
    BACKENDS = [pytest.param(("asyncio", {}), id="asyncio")]

pytestmark = pytest.mark.anyio


@pytest.fixture(params=BACKENDS)
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    return request.param


@pytest.fixture(scope="module")
def creds(net: Devnet) -> dict[str, str]:
    return net.demo_credentials()  # type: ignore[return-value]


@pytest.fixture
async def users(net: Devnet, creds: dict[str, str]) -> AsyncIterator[AsyncUserRpcClient]:
    async with AsyncUserRpcClient(net.user_rpc_url, creds["project_id"], creds["server_key"]) as client:
        yield client


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the backlog) but never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1024)
        yield listener.getsockname()[1]


class Ticker:
    """Counts how often the loop ran it: a blocked loop does not tick."""

    def __init__(self) -> None:
        self.ticks = 0

    async def run(self) -> None:
        while True:
            self.ticks += 1
            await asyncio.sleep(0.005)


# --- user lookup ---------------------------------------------------------------------------


async def test_every_lookup_is_awaitable_and_typed_like_the_sync_one(
    users: AsyncUserRpcClient, creds: dict[str, str], net: Devnet
) -> None:
    user = await users.get_user_info(creds["user_uuid"], creds["user_token"])
    assert isinstance(user, User) and user.uuid == creds["user_uuid"]
    sync = depositkit.UserRpcClient(net.user_rpc_url, creds["project_id"], creds["server_key"])
    assert user == sync.get_user_info(creds["user_uuid"], creds["user_token"])
    by_identity = await users.get_user_info_by_identity("jwt", creds["jwt_uid"])
    assert by_identity.uuid == creds["user_uuid"]
    assert await users.is_project_user("evm_chain", creds["evm_address"]) is True
    with pytest.raises(NotFoundError):
        await users.get_user_info("0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c", "token")
    with pytest.raises(AuthenticationError):
        await users.get_user_info(creds["user_uuid"], "wrong-token")
    with pytest.raises(ConfigurationError, match='"nope"'):
        await users.get_user_info("nope", "x")
    with pytest.raises(TypeError, match="uuid must be a str, not int"):
        await users.get_user_info(5, "x")  # type: ignore[arg-type]
    assert (users.base_url, users.project_id, users.closed) == (net.user_rpc_url, creds["project_id"], False)
    assert repr(users).startswith("<depositkit.AsyncUserRpcClient base_url=")
    assert creds["server_key"] not in repr(users)
    await users.aclose()
    assert users.closed
    with pytest.raises(DepositSDKError, match="UserRpcClient is closed"):
        await users.get_user_info(creds["user_uuid"], creds["user_token"])


async def test_a_batch_is_answered_in_request_order_with_typed_failures(
    users: AsyncUserRpcClient, creds: dict[str, str], net: Devnet
) -> None:
    good = (creds["user_uuid"], creds["user_token"])
    requests = [good, ("bad", "x"), ("0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c", "t"), (creds["user_uuid"], "wrong"), good]
    answers = await users.get_users_info(requests)
    assert [type(a) for a in answers] == [User, ConfigurationError, NotFoundError, AuthenticationError, User]
    assert answers[0] == answers[4] and isinstance(answers[0], User) and answers[0].uuid == creds["user_uuid"]
    assert await users.get_users_info([]) == []
    # The synchronous client's batch answers the same, and both take any iterable of pairs.
    sync = depositkit.UserRpcClient(net.user_rpc_url, creds["project_id"], creds["server_key"])
    assert [type(a) for a in sync.get_users_info(iter(requests))] == [type(a) for a in answers]
    assert sync.get_users_info([list(good)]) == [answers[0]]
    with pytest.raises(TypeError, match=r"requests\[1\] must be a \(uuid, token\) pair, not str"):
        sync.get_users_info([good, "ab"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="not str"):
        await users.get_users_info("ab")  # type: ignore[arg-type]
    bad_key = AsyncUserRpcClient(net.user_rpc_url, creds["project_id"], "sk_wrong")
    with pytest.raises(AuthenticationError):
        await bad_key.get_users_info([good])


async def test_hundreds_of_lookups_wait_together_without_blocking_the_loop(
    users: AsyncUserRpcClient, creds: dict[str, str]
) -> None:
    ticker = Ticker()
    ticking = asyncio.ensure_future(ticker.run())
    try:
        found = await asyncio.gather(*(users.get_user_info(creds["user_uuid"], creds["user_token"]) for _ in range(500)))
    finally:
        ticking.cancel()
    assert {u.uuid for u in found} == {creds["user_uuid"]}
    assert ticker.ticks >= 1


async def test_cancelling_a_lookup_stops_the_wait_at_once(silent_port: int, creds: dict[str, str]) -> None:
    client = AsyncUserRpcClient(f"http://127.0.0.1:{silent_port}/user-rpc", "p", "k", timeout=30, max_retries=0)
    ticker = Ticker()
    ticking = asyncio.ensure_future(ticker.run())
    calls = [asyncio.ensure_future(client.get_user_info(creds["user_uuid"], "t")) for _ in range(100)]
    await asyncio.sleep(0.2)
    assert not any(call.done() for call in calls)
    assert ticker.ticks >= 5  # the loop ran while 100 calls waited on a silent server
    started = time.monotonic()
    for call in calls:
        call.cancel()
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    assert time.monotonic() - started < 0.5
    ticking.cancel()
    # asyncio.wait_for and anyio cancel scopes cancel the same way.
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(client.get_user_info(creds["user_uuid"], "t"), 0.1)
    with anyio.move_on_after(0.1) as scope:
        await client.is_project_user("evm_chain", creds["evm_address"])
    assert scope.cancelled_caught


async def test_the_clients_own_timeout_raises_its_error(silent_port: int, creds: dict[str, str]) -> None:
    client = AsyncUserRpcClient(f"http://127.0.0.1:{silent_port}/user-rpc", "p", "k", timeout=0.2, max_retries=0)
    started = time.monotonic()
    with pytest.raises(DepositTimeoutError, match="timed out"):
        await client.get_user_info(creds["user_uuid"], "t")
    assert time.monotonic() - started < 5
    with pytest.raises(DepositTimeoutError):
        await client.get_users_info([(creds["user_uuid"], "t")])


def test_a_call_outside_an_event_loop_says_so(net: Devnet, creds: dict[str, str]) -> None:
    client = depositkit.UserRpcClient(net.user_rpc_url, creds["project_id"], creds["server_key"])
    with pytest.raises(RuntimeError, match="no running event loop"):
        client._get_user_info_async(creds["user_uuid"], creds["user_token"])


def test_plain_asyncio_run(net: Devnet, creds: dict[str, str]) -> None:
    async def main() -> list[bool]:
        async with AsyncUserRpcClient(net.user_rpc_url, creds["project_id"], creds["server_key"]) as client:
            return await asyncio.gather(*(client.is_project_user("evm_chain", creds["evm_address"]) for _ in range(20)))

    assert asyncio.run(main()) == [True] * 20
    assert asyncio.run(main()) == [True] * 20  # a second loop


# --- deposits ------------------------------------------------------------------------------


@pytest.fixture
async def make_async(net: Devnet) -> AsyncIterator[Any]:
    clients: list[AsyncDepositClient] = []

    def make(**options: Any) -> AsyncDepositClient:
        client = AsyncDepositClient(
            new_owner(), {"chain_id": CHAIN.ARBITRUM}, **{"services_url": net.services_url, **FAST_CLIENT, **options}
        )
        clients.append(client)
        return client

    try:
        yield make
    finally:
        for client in clients:
            await client.aclose()
        net.clear_faults()


async def next_phase(client: AsyncDepositClient, deposit_id: str, phase: str, seen: list[Any]) -> DepositLifecycleEvent:
    with anyio.fail_after(20):
        async for event in client.events():
            seen.append(event)
            if isinstance(event, DepositLifecycleEvent) and event.id == deposit_id and event.phase == phase:
                return event
    raise AssertionError(f"the events ended before {phase}")


async def test_the_readme_flow_detected_to_credited(net: Devnet) -> None:
    owner = new_owner()
    async with AsyncDepositClient(
        owner, {"chain_id": CHAIN.ARBITRUM, "token": "USDC"}, services_url=net.services_url, **FAST_CLIENT
    ) as client:
        addresses = await client.initialize()
        assert client.deposit_addresses == addresses and client.status == "ready"
        net.deposit(addresses.evm, CHAIN.BASE, "USDC", "25")
        [detected] = await client.poll_now()
        phases = []
        async for event in client.events():
            if isinstance(event, DepositLifecycleEvent) and event.id == detected.id:
                phases.append(event.phase)
                if event.phase == "credited":
                    break
        assert phases == ["detected", "processing", "credited"]
        assert client.sweep_result(detected.id) is not None
    assert client.closed
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") > 0
    # After close, events() drains what is left and ends.
    rest = [event async for event in client.events()]
    assert all(not isinstance(e, DepositLifecycleEvent) for e in rest)
    assert await client.next_event(timeout=0.05) is None


async def test_a_cancelled_sweep_finishes_in_the_background_once(net: Devnet, make_async: Any) -> None:
    client = make_async(auto_sweep=False)
    owner = client.owner_address
    addresses = await client.initialize()
    net.deposit(addresses.evm, CHAIN.ARBITRUM, "USDC", "10")
    [detected] = await client.poll_now()
    # The send is slow: the sweep is under way (quoted, signed, sending) when the await is cancelled.
    net.inject_fault("ua", delay_ms=600, count=1, path="/v1/sweeps/send")
    sweeping = asyncio.ensure_future(client.sweep(detected.id))
    seen: list[Any] = []
    await next_phase(client, detected.id, "processing", seen)
    await asyncio.sleep(0.1)
    started = time.monotonic()
    sweeping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sweeping
    assert time.monotonic() - started < 0.3  # the wait stopped; the sweep did not
    credited = await next_phase(client, detected.id, "credited", seen)
    assert credited.transaction_id
    phases = [e.phase for e in seen if isinstance(e, DepositLifecycleEvent) and e.id == detected.id]
    assert phases.count("credited") == 1
    delivered = net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC")
    assert delivered > 0
    # Asking again is refused, naming the transaction: no second send.
    with pytest.raises(NotFoundError, match=f"was credited \\(transaction {credited.transaction_id}\\)"):
        await client.sweep(detected.id)
    result = client.sweep_result(detected.id)
    assert result is not None and result.transaction_id == credited.transaction_id
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == delivered
    assert [id for id, e in client.events_since() if isinstance(e, DepositLifecycleEvent) and e.phase == "credited"]


async def test_an_event_handed_to_a_cancelled_wait_is_not_lost(net: Devnet, make_async: Any) -> None:
    client = make_async(auto_sweep=False)
    addresses = await client.initialize()
    while await client.next_event(timeout=0.05) is not None:
        pass  # the status changes of initialize()
    assert await client.next_event(timeout=0.05) is None  # a timeout answers None
    waits = [asyncio.ensure_future(client.next_event()) for _ in range(3)]
    await asyncio.sleep(0.05)
    for wait in waits:
        wait.cancel()
    net.deposit(addresses.evm, CHAIN.BASE, "USDC", "3")
    [detected] = await client.poll_now()
    await asyncio.gather(*waits, return_exceptions=True)
    event = await client.next_event(timeout=5)
    assert isinstance(event, DepositLifecycleEvent) and (event.id, event.phase) == (detected.id, "detected")
    assert client.dropped_events == 0


async def test_refunds_recovery_and_history_are_awaitable(net: Devnet, make_async: Any) -> None:
    client = make_async(auto_sweep=False)
    addresses = await client.initialize()
    sender = new_owner()
    net.deposit(addresses.evm, CHAIN.ARBITRUM, "USDT", "2.5", sender=sender)
    [detected] = await client.poll_now()
    eligibility = await client.can_refund(detected.id)
    assert eligibility.eligible and eligibility.refund_address == sender
    result = await client.refund(detected.id)
    assert (result.status, result.refunded_to) == ("success", sender)
    assert net.ledger_balance(sender, CHAIN.ARBITRUM, "USDT") == 2_470_000
    with pytest.raises(NotFoundError, match="dep_nope"):
        await client.refund("dep_nope", "sweep_failed")
    with pytest.raises(InvalidArgumentError, match='"oops"'):
        await client.refund(detected.id, "oops")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="deposit_id must be a str"):
        await client.sweep(5)  # type: ignore[arg-type]
    assert await client.stuck_funds() == []
    assert await client.recover_funds() == []
    page = await client.get_transactions(1, 10)
    assert page.transactions
    one = await client.get_transaction(page.transactions[0].transaction_id)
    assert one == page.transactions[0]
    usdt = depositkit.token_info("USDT", CHAIN.ARBITRUM)["contract"]
    assert usdt is not None
    by_token = await client.get_token_transactions(CHAIN.ARBITRUM, usdt, page_size=5)
    assert by_token.transactions
    with pytest.raises(NotFoundError):
        await client.get_transaction("tx_nope")
    with pytest.raises(InvalidArgumentError, match="page size"):
        await client.get_transactions(1, 1000)


async def test_funding_calls_are_awaitable_and_chain_the_providers_exception(net: Devnet, make_async: Any) -> None:
    client = make_async(funding={"enabled": True})
    await client.initialize()
    account = new_owner()
    refusal = ProviderError(4100, "not authorized")

    def wallet(method: str, params: Any) -> Any:
        if method in ("eth_requestAccounts", "eth_accounts", "wallet_requestPermissions"):
            return [account]
        raise refusal

    client.set_evm_wallet(wallet)
    assert (await client.connect_evm_wallet()).lower() == account.lower()
    assert [a.lower() for a in await client.evm_accounts()] == [account.lower()]
    assert [a.lower() for a in await client.prompt_evm_account_selection()] == [account.lower()]
    with pytest.raises(FundingError):
        await client.connect_solana_wallet()  # no Solana wallet set

    def balances(request: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"chainId": CHAIN.BASE, "token": "USDC", "rawAmount": 7_000_000, "priceUSD": 1.0}]

    client.sync.set_balance_provider(balances)
    (line,) = await client.get_wallet_balances()
    assert (line.chain_id, line.token, line.raw_amount) == (CHAIN.BASE, "USDC", 7_000_000)
    with pytest.raises(FundingError) as info:
        await client.fund_from_wallet(line, 1_000_000)
    assert info.value.__cause__ is refusal


async def test_a_closed_client_answers_like_the_sync_one(make_async: Any) -> None:
    client = make_async()
    await client.aclose()
    await client.aclose()  # idempotent
    with pytest.raises(DepositSDKError, match="the client is closed"):
        await client.initialize()
    assert await client.next_event() is None
    assert [e async for e in client.events()] == []
    with pytest.raises(DepositSDKError, match="closed"):
        async with client:
            pass


# --- Ctrl-C and fork (subprocesses) --------------------------------------------------------

CTRL_C = r"""
import asyncio, socket, sys, time
import depositkit

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
url = "http://127.0.0.1:%d/user-rpc" % listener.getsockname()[1]

async def main():
    client = depositkit.AsyncUserRpcClient(url, "p", "k", timeout=60, max_retries=0)
    print("waiting", flush=True)
    await client.get_user_info("0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c", "t")

started = time.monotonic()
try:
    asyncio.run(main())
except KeyboardInterrupt:
    print("interrupted after %.2f s" % (time.monotonic() - started), flush=True)
    sys.exit(3)
"""


def test_ctrl_c_interrupts_an_await_under_asyncio_run() -> None:
    with subprocess.Popen([sys.executable, "-c", CTRL_C], stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "waiting"
            sent = time.monotonic()
            child.send_signal(signal.SIGINT)
            code = child.wait(timeout=10)
            assert time.monotonic() - sent < 3
            rest = child.stdout.read()
            assert code == 3, rest
            assert rest.startswith("interrupted after")
        finally:
            if child.poll() is None:
                child.kill()


FORK = r"""
import asyncio, json, os, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import depositkit

url, project, key, uuid, token = sys.argv[1:6]

async def lookup(client):
    return (await client.get_user_info(uuid, token)).uuid

async def parent_work():
    client = depositkit.AsyncUserRpcClient(url, project, key)
    assert await lookup(client) == uuid  # the runtime and the completion queue are running
    return client

inherited = asyncio.run(parent_work())
pid = os.fork()
if pid == 0:
    report = {}
    async def child():
        try:
            await lookup(inherited)
        except depositkit.InternalError as e:
            report["inherited"] = str(e)
        fresh = depositkit.AsyncUserRpcClient(url, project, key)
        report["fresh"] = await asyncio.gather(*(lookup(fresh) for _ in range(20)))
    try:
        asyncio.run(asyncio.wait_for(child(), 20))
    except BaseException as e:
        report["error"] = repr(e)
    print(json.dumps(report), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
assert asyncio.run(lookup(inherited)) == uuid  # the parent's client still works
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_fork_after_import(net: Devnet, creds: dict[str, str]) -> None:
    args = [net.user_rpc_url, creds["project_id"], creds["server_key"], creds["user_uuid"], creds["user_token"]]
    done = subprocess.run([sys.executable, "-c", FORK, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in report, report
    assert "cannot be used in this forked child" in report["inherited"]
    assert report["fresh"] == [creds["user_uuid"]] * 20


def test_the_readme_async_example_runs_as_written() -> None:
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("```python", readme.index("### Python: asyncio")) + len("```python")
    run = subprocess.run([sys.executable, "-c", readme[start : readme.index("```", start)]], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["detected", "processing", "credited", "100 ['User', 'ConfigurationError']"], run.stdout
