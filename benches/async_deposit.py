"""Times depositkit.AsyncDepositClient's awaited calls against the synchronous DepositClient
pushed into threads by hand (``asyncio.to_thread``, and an executor of 64 threads), on one event
loop, and counts the threads each way needs.

How to run it (from the repository root)::

    scripts/python-env.sh --release                # optimized build of depositkit._native
    .venv/bin/python benches/async_deposit.py      # --uvloop: the same on uvloop
    scripts/python-env.sh                          # back to the debug build the tests use

It starts an in-process ``depositkit.Devnet`` (its services run on their own Rust threads, on
loopback) and one initialized client. Each round awaits ``--concurrency`` (1,000) calls of
``get_transactions(page, 1)`` at once (``asyncio.gather``), each for a page no other call asks for
(so the client's 30 s history cache never answers: every call is an HTTP request to the account
service); ``--rounds`` timed rounds after a warm-up round. Reported per way: calls per second, the
median and 99th percentile latency per call (start to answer), and the most threads outside
depositkit's runtime the process had during the rounds (``/proc/self/task``: all but the
runtime's ``depositkit-rt`` workers and blocking pool, which every way uses the same, and the
devnet's own ``depositkit-devnet…`` threads) — the threads each way spends on waiting.

A debug build of the extension is refused unless ``--allow-debug``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import itertools
import os
import secrets
import time
from typing import Any, Awaitable, Callable

import depositkit
from depositkit import CHAIN, _native

Call = Callable[[int], Awaitable[Any]]


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def threads() -> int:
    """The process's threads but for depositkit's runtime and the devnet's."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm", encoding="utf-8") as comm:
                count += not comm.read().startswith(("depositkit-devn", "depositkit-rt"))
        except OSError:
            pass
    return count


async def timed(call: Call, page: int, samples: list[float]) -> None:
    started = time.perf_counter_ns()
    answer = await call(page)
    samples.append((time.perf_counter_ns() - started) / 1000)
    if answer.page != page:
        raise RuntimeError(f"asked for page {page}, got page {answer.page}")


async def run_rounds(call: Call, pages: Any, concurrency: int, rounds: int) -> tuple[float, float, float, int]:
    """(calls/s, p50 µs, p99 µs, most threads outside the runtime) over `rounds` rounds of
    `concurrency` calls."""
    await asyncio.gather(*(timed(call, next(pages), []) for _ in range(concurrency)))  # warm-up
    peak = threads()
    done = False

    async def sample() -> None:
        nonlocal peak
        while not done:
            peak = max(peak, threads())
            await asyncio.sleep(0.005)

    sampling = asyncio.ensure_future(sample())
    samples: list[float] = []
    wall = 0.0
    for _ in range(rounds):
        started = time.perf_counter()
        await asyncio.gather(*(timed(call, next(pages), samples) for _ in range(concurrency)))
        wall += time.perf_counter() - started
    done = True
    await sampling
    ordered = sorted(samples)
    return len(samples) / wall, percentile(ordered, 0.5), percentile(ordered, 0.99), peak


async def main(args: argparse.Namespace) -> None:
    pages = itertools.count(2)
    with depositkit.Devnet() as net:
        client = depositkit.AsyncDepositClient(
            "0x" + secrets.token_hex(20), {"chain_id": CHAIN.ARBITRUM}, services_url=net.services_url
        )
        await client.initialize()
        sync = client.sync
        pool = concurrent.futures.ThreadPoolExecutor(64)
        loop = asyncio.get_running_loop()
        ways: list[tuple[str, Call]] = [
            ("`await AsyncDepositClient.get_transactions(page, 1)`", lambda p: client.get_transactions(p, 1)),
            ("`asyncio.to_thread(DepositClient.get_transactions, page, 1)`", lambda p: asyncio.to_thread(sync.get_transactions, p, 1)),
            ("`loop.run_in_executor(ThreadPoolExecutor(64), …)`", lambda p: loop.run_in_executor(pool, sync.get_transactions, p, 1)),
        ]
        print(f"{args.concurrency} concurrent calls, {args.rounds} rounds, loop {type(loop).__module__}")
        print("| way | calls/s | p50 | p99 | threads outside the runtime |")
        print("|---|---|---|---|---|")
        for name, call in ways:
            rate, p50, p99, outside = await run_rounds(call, pages, args.concurrency, args.rounds)
            print(f"| {name} | {rate:,.0f} | {p50 / 1000:.1f} ms | {p99 / 1000:.1f} ms | {outside} |")
        pool.shutdown()
        await client.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--uvloop", action="store_true")
    parser.add_argument("--allow-debug", action="store_true")
    arguments = parser.parse_args()
    if _native._DEBUG_BUILD and not arguments.allow_debug:
        raise SystemExit("a debug build of depositkit: run scripts/python-env.sh --release (or pass --allow-debug)")
    if arguments.uvloop:
        import uvloop

        uvloop.install()
    asyncio.run(main(arguments))
