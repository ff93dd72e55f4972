"""Event throughput into a Python callback (issue 7, the Python half of ``benches/src/bin/scale.rs``).

How to run it (from the repository root)::

    scripts/python-env.sh --release           # optimized build of depositkit._native into .venv
    .venv/bin/python benches/scale_python.py [--events 100000] [--clients 1,100]
    scripts/python-env.sh                     # back to the debug build the tests use

Each event is one ``onramp:order_processing`` (one ``handle_onramp_message`` call each; no network:
the clients are never initialized). The callbacks run on depositkit's delivery threads, each call
attached to the interpreter; the script measures from the first message to the last callback, so
the figure is what a Python host can take in (the GIL is the limit: the calling thread and the
delivery threads share it). The release build matters: the script refuses a debug build unless
given ``--allow-debug``.

Batched delivery (one client, ``--events`` events): ``subscribe_batches(callback)`` (lists) and
``next_events()`` (the pull queue, up to 1024 per call), each measured two ways: end to end
(the main thread emits while the events are taken) and delivery alone (every event emitted first
— held back from the callback, or waiting in the queue — then the clock runs until the last
one is in Python).
"""

from __future__ import annotations

import argparse
import threading
import time

import depositkit
from depositkit import _native

OWNER = "0x52908400098527886E0F7030069857D2E4169EE7"
MESSAGE = {"event": "order_processing", "data": {"status": "processing"}}


def throughput(events: int, clients: int) -> float:
    count = 0
    done = threading.Event()
    per_client = events // clients
    total = per_client * clients

    def callback(event: object) -> None:
        nonlocal count
        count += 1  # callbacks of one client never run concurrently; the GIL guards the rest
        if count >= total:
            done.set()

    made = [
        depositkit.DepositClient(
            OWNER,
            {"chain_id": depositkit.CHAIN.BASE},
            services_url="http://127.0.0.1:9",
            onramp={"enabled": True},
        )
        for _ in range(clients)
    ]
    for client in made:
        client.subscribe(callback)
    started = time.perf_counter()
    for _ in range(per_client):
        for client in made:
            client.handle_onramp_message(MESSAGE)
    if not done.wait(120):
        raise SystemExit(f"only {count} of {total} events delivered in 120 s")
    rate = total / (time.perf_counter() - started)
    for client in made:
        client.close()
    return rate


def _client(capacity: int = 1024) -> depositkit.DepositClient:
    return depositkit.DepositClient(
        OWNER,
        {"chain_id": depositkit.CHAIN.BASE},
        services_url="http://127.0.0.1:9",
        onramp={"enabled": True},
        event_queue_capacity=capacity,
    )


def batches(events: int, held_back: bool) -> float:
    """Events/s into a ``subscribe_batches`` callback; with ``held_back`` the callback's first
    call waits until every event is emitted, and the clock starts then."""
    count = 0
    done = threading.Event()
    gate = threading.Event()

    def callback(batch: list[object]) -> None:
        nonlocal count
        if held_back:
            gate.wait()
        count += len(batch)
        if count >= events:
            done.set()

    client = _client()
    client.subscribe_batches(callback)
    started = time.perf_counter()
    for _ in range(events):
        client.handle_onramp_message(MESSAGE)
    if held_back:
        time.sleep(0.5)  # let the delivery thread hand the last events over
        started = time.perf_counter()
        gate.set()
    if not done.wait(120):
        raise SystemExit(f"only {count} of {events} events delivered in 120 s")
    rate = events / (time.perf_counter() - started)
    client.close()
    return rate


def pulled(events: int, queued_first: bool) -> float:
    """Events/s taken with ``next_events()``: while a thread emits them, or (``queued_first``)
    from a queue that holds them all."""
    client = _client(events + 16)
    emitter = None
    if queued_first:
        for _ in range(events):
            client.handle_onramp_message(MESSAGE)
    else:

        def emit() -> None:
            for _ in range(events):
                client.handle_onramp_message(MESSAGE)

        emitter = threading.Thread(target=emit)
    started = time.perf_counter()
    if emitter is not None:
        emitter.start()
    taken = 0
    while taken < events:
        taken += len(client.next_events(1024, timeout=5))
    rate = events / (time.perf_counter() - started)
    if emitter is not None:
        emitter.join()
    client.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--clients", default="1,100")
    parser.add_argument("--allow-debug", action="store_true")
    args = parser.parse_args()
    if _native._DEBUG_BUILD and not args.allow_debug:
        raise SystemExit("a debug build of depositkit._native: run scripts/python-env.sh --release")
    for clients in (int(n) for n in args.clients.split(",")):
        rate = throughput(args.events, clients)
        print(f"Python callback: {args.events} events over {clients} client(s): {rate:,.0f} events/s")
    n = args.events
    print(f"subscribe_batches, emitted meanwhile: {batches(n, False):,.0f} events/s")
    print(f"subscribe_batches, delivery alone: {batches(n, True):,.0f} events/s")
    print(f"next_events(1024), emitted meanwhile: {pulled(n, False):,.0f} events/s")
    print(f"next_events(1024), from a full queue: {pulled(n, True):,.0f} events/s")


if __name__ == "__main__":
    main()
