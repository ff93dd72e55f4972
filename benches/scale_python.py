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


if __name__ == "__main__":
    main()
