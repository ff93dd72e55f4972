"""Watches owners on a running devnet, so that the deposits sent to them from devnet's dashboard
are swept and credited: one depositkit client per owner, each polling every 200 ms, delivering
USDC on Arbitrum to the owner. It prints one line per owner once its client is watching, then
every lifecycle event, and runs until SIGTERM, Ctrl-C or, when stdin is a pipe, its end.

    .venv/bin/python examples/dashboard.py http://127.0.0.1:7420 0x52908400098527886e0f7030069857d2e4169ee7

``scripts/demo.sh`` runs it against the devnet whose dashboard it prints; the browser test of the
dashboard (``tests/dashboard/``) runs it too.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import threading
from contextlib import ExitStack

import depositkit
from depositkit import CHAIN, TokenType


def watch(services_url: str, owners: list[str]) -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def on_deposit_event(event: depositkit.DepositLifecycleEvent) -> None:
        detail = event.error or event.transaction_id or ""
        print(f"{event.id[:16]}… {event.phase} {event.amount} {event.token} {detail}", flush=True)

    with ExitStack() as clients:
        for owner in owners:
            client = clients.enter_context(
                depositkit.DepositClient(
                    owner,
                    {"chain_id": CHAIN.ARBITRUM, "token": TokenType.USDC},
                    services_url=services_url,
                    on_deposit_event=on_deposit_event,
                    # A test/devnet knob: poll every 200 ms (the production minimum is 2000 ms);
                    # a failed sweep is tried again 300 ms later.
                    polling_interval_ms=200,
                    min_polling_interval_ms=200,
                    sweep_retry_delay_ms=300,
                )
            )
            addresses = client.initialize()
            client.start_watching()
            print(f"watching {owner}: EVM deposit address {addresses.evm}, Solana {addresses.solana}", flush=True)
        # Stops on SIGTERM / Ctrl-C, and when a parent holding the pipe of stdin goes away.
        if stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode):

            def until_stdin_closes() -> None:
                sys.stdin.read()
                stop.set()

            threading.Thread(target=until_stdin_closes, daemon=True).start()
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(f"usage: {sys.argv[0]} SERVICES_URL OWNER...")
    watch(sys.argv[1], sys.argv[2:])
