"""Times depositkit.AsyncUserRpcClient against httpx.AsyncClient and aiohttp on the same devnet
server, and a batch of 100 lookups against 100 single calls.

How to run it (from the repository root)::

    scripts/python-env.sh --release                # optimized build of depositkit._native
    cargo build --release -p depositkit-devnet     # optimized server (else the debug one is used)
    .venv/bin/python benches/async_user_rpc.py     # --uvloop: the same on uvloop
    scripts/python-env.sh                          # back to the debug build the tests use

It starts one ``depositkit-devnet serve --demo`` on 127.0.0.1 (``benches/compare_user_rpc.py``'s
``Server``) and stops it at the end. Traffic goes to loopback only.

**Concurrency** (``--concurrency`` calls, 1,000 by default, of ``getUserInfo`` at once on one event
loop, ``--rounds`` timed rounds after one warm-up round): each client sends the same JSON-RPC
request with the same Basic auth and checks the answer's ``id`` and ``result.uuid``; every call is
timed from its start to its answer. Reported per client: calls per second (all timed calls over
the rounds' total wall time), the median and 99th percentile latency per call, and the ratio
depositkit / peer of throughput (above 1: depositkit is faster). Connection limits are each
client's default unless ``--connections N`` sets them all: depositkit keeps at most 64 requests on
the wire (the core runtime's blocking pool), httpx 100 connections, aiohttp 100.

**Batch**: 100 lookups as one ``get_users_info`` (one JSON-RPC batch, one HTTP request) against
100 ``get_user_info`` awaited one after another and 100 awaited together, with the async client,
and the same with the synchronous ``UserRpcClient`` (``get_users_info`` against 100 sequential
calls); ``--batch-rounds`` timed repetitions, the median reported.

A debug build of the extension is refused unless ``--allow-debug``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import itertools
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Any, Awaitable, Callable

import depositkit
from depositkit import _native

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from compare_user_rpc import Server, find_devnet  # noqa: E402

Call = Callable[[], Awaitable[str]]


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def timed(call: Call, uuid: str, samples: list[float]) -> None:
    started = time.perf_counter_ns()
    got = await call()
    samples.append((time.perf_counter_ns() - started) / 1000)
    if got != uuid:
        raise RuntimeError(f"wrong answer {got!r}")


async def run_rounds(call: Call, uuid: str, concurrency: int, rounds: int) -> tuple[float, float, float]:
    """(calls per second, p50 µs, p99 µs) over `rounds` rounds of `concurrency` calls at once."""
    await asyncio.gather(*(timed(call, uuid, []) for _ in range(concurrency)))  # warm-up round
    samples: list[float] = []
    wall = 0.0
    for _ in range(rounds):
        started = time.perf_counter()
        await asyncio.gather(*(timed(call, uuid, samples) for _ in range(concurrency)))
        wall += time.perf_counter() - started
    ordered = sorted(samples)
    return len(samples) / wall, percentile(ordered, 0.5), percentile(ordered, 0.99)


def json_rpc_body(ids: Any, uuid: str, token: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": next(ids), "method": "getUserInfo", "params": [uuid, token]}


async def peers(url: str, creds: dict[str, str], connections: int | None) -> dict[str, tuple[Call, Callable[[], Awaitable[None]]]]:
    """name -> (one getUserInfo call answering the uuid, close)."""
    found: dict[str, tuple[Call, Callable[[], Awaitable[None]]]] = {}
    uuid, token = creds["userUuid"], creds["userToken"]
    secret = base64.b64encode(f"{creds['projectId']}:{creds['serverKey']}".encode()).decode()
    headers = {"Authorization": f"Basic {secret}", "Accept": "application/json"}
    ids = itertools.count(1)
    try:
        import httpx

        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections) if connections else httpx.Limits()
        client = httpx.AsyncClient(limits=limits, timeout=30)

        async def httpx_call() -> str:
            body = json_rpc_body(ids, uuid, token)
            response = await client.post(url, json=body, headers=headers)
            answer = response.json()
            if answer.get("id") != body["id"]:
                raise RuntimeError(f"unexpected reply {answer!r}")
            return str(answer["result"]["uuid"])

        found[f"httpx {httpx.__version__} AsyncClient"] = (httpx_call, client.aclose)
    except ImportError:
        print("httpx is not installed: skipped (scripts/python-env.sh installs it)")
    try:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=connections or 100)
        session = aiohttp.ClientSession(connector=connector, headers=headers)

        async def aiohttp_call() -> str:
            body = json_rpc_body(ids, uuid, token)
            async with session.post(url, json=body) as response:
                answer = await response.json()
            if answer.get("id") != body["id"]:
                raise RuntimeError(f"unexpected reply {answer!r}")
            return str(answer["result"]["uuid"])

        found[f"aiohttp {aiohttp.__version__} ClientSession"] = (aiohttp_call, session.close)
    except ImportError:
        print("aiohttp is not installed: skipped (scripts/python-env.sh installs it)")
    return found


async def concurrency_table(url: str, creds: dict[str, str], args: argparse.Namespace) -> None:
    uuid, token = creds["userUuid"], creds["userToken"]
    ours = depositkit.AsyncUserRpcClient(url, creds["projectId"], creds["serverKey"])

    async def ours_call() -> str:
        return (await ours.get_user_info(uuid, token)).uuid

    rows: list[tuple[str, Call]] = [("depositkit.AsyncUserRpcClient", ours_call)]
    others = await peers(url, creds, args.connections)
    rows += [(name, call) for name, (call, _close) in others.items()]
    print(f"{'client':<34} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'dk/peer (calls/s)':>18}")
    print("-" * 82)
    base = 0.0
    try:
        for name, call in rows:
            rate, p50, p99 = await run_rounds(call, uuid, args.concurrency, args.rounds)
            ratio = "-" if not base else f"{base / rate:.2f}x"
            base = base or rate
            print(f"{name:<34} {rate:9.0f} {p50 / 1000:8.1f} {p99 / 1000:8.1f} {ratio:>18}")
    finally:
        ours.close()
        for _call, close in others.values():
            await close()


async def batch_table(url: str, creds: dict[str, str], args: argparse.Namespace) -> None:
    uuid, token = creds["userUuid"], creds["userToken"]
    pairs = [(uuid, token)] * 100
    ours = depositkit.AsyncUserRpcClient(url, creds["projectId"], creds["serverKey"])
    sync = depositkit.UserRpcClient(url, creds["projectId"], creds["serverKey"])

    async def batch() -> None:
        answers = await ours.get_users_info(pairs)
        assert all(isinstance(a, depositkit.User) for a in answers), answers

    async def sequential() -> None:
        for u, t in pairs:
            await ours.get_user_info(u, t)

    async def together() -> None:
        await asyncio.gather(*(ours.get_user_info(u, t) for u, t in pairs))

    async def sync_batch() -> None:
        answers = sync.get_users_info(pairs)
        assert all(isinstance(a, depositkit.User) for a in answers), answers

    async def sync_sequential() -> None:
        for u, t in pairs:
            sync.get_user_info(u, t)

    cases = [
        ("async get_users_info (1 batch of 100)", batch),
        ("async 100 x get_user_info, one by one", sequential),
        ("async 100 x get_user_info, gathered", together),
        ("sync get_users_info (1 batch of 100)", sync_batch),
        ("sync 100 x get_user_info, one by one", sync_sequential),
    ]
    print(f"{'100 lookups as':<40} {'median ms':>10} {'lookups/s':>10}")
    print("-" * 62)
    try:
        for name, case in cases:
            await case()  # warm-up
            times = []
            for _ in range(args.batch_rounds):
                started = time.perf_counter()
                await case()
                times.append(time.perf_counter() - started)
            median = statistics.median(times)
            print(f"{name:<40} {median * 1000:10.2f} {100 / median:10.0f}")
    finally:
        ours.close()
        sync.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=1000, help="calls at once per round (default 1000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per client (default 5)")
    parser.add_argument("--batch-rounds", type=int, default=20, help="timed repetitions per batch case (default 20)")
    parser.add_argument("--connections", type=int, default=None, help="the peers' connection limit (default: theirs)")
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop")
    parser.add_argument("--allow-debug", action="store_true", help="time a debug build of the extension anyway")
    args = parser.parse_args()
    if not 1 <= args.concurrency <= 100_000 or not 1 <= args.rounds <= 1000 or not 1 <= args.batch_rounds <= 1000:
        parser.error("--concurrency must be 1..100000, --rounds and --batch-rounds 1..1000")
    if _native._DEBUG_BUILD and not args.allow_debug:
        sys.exit("depositkit._native is a debug build: run scripts/python-env.sh --release first (or pass --allow-debug)")
    if args.uvloop:
        import uvloop

        uvloop.install()
    binary, profile = find_devnet()
    with tempfile.TemporaryDirectory(prefix="depositkit-bench-") as tmp:
        server = Server(binary, pathlib.Path(tmp))
        try:
            loop_name = "uvloop" if args.uvloop else "asyncio"
            print(
                f"depositkit {depositkit.__version__} ({'debug' if _native._DEBUG_BUILD else 'release'} build), "
                f"devnet server from target/{profile}, Python {sys.version.split()[0]} on {loop_name}; "
                f"{args.concurrency} concurrent getUserInfo per round, {args.rounds} timed rounds after 1 warm-up"
            )
            print()
            asyncio.run(concurrency_table(server.url, server.creds, args))
            print()
            asyncio.run(batch_table(server.url, server.creds, args))
        finally:
            code = server.stop()
            if code != 0:
                print(f"warning: depositkit-devnet exited with {code}", file=sys.stderr)


if __name__ == "__main__":
    main()
