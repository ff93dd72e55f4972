"""A deposit host that test_sigkill.py kills (SIGKILL) and starts again, many times.

Run as ``python durable_host.py CONFIG_JSON``. It makes one ``DepositClient`` per owner on one
shared ``store_path``, initializes them, starts watching, prints ``ready`` and then does what a
real host that must not miss a credit does: it reads ``events_since(cursor)`` for every client
and appends each event to a log file (one JSON line, flushed), its cursor being the last id in
that log — so after a kill it carries on from what it had handled. It runs until killed.

CONFIG_JSON: ``{"services_url", "store_path", "owners": [...], "log": path,
"destination": {...}, "options": {...DepositClient keywords...}}``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import depositkit


def summary(event_id: int, event: Any) -> dict[str, Any]:
    """What the harness compares with the store's event log."""
    kind = type(event).__name__
    line: dict[str, Any] = {"id": event_id, "kind": kind}
    if isinstance(event, depositkit.DepositLifecycleEvent):
        line.update(deposit=event.id, phase=event.phase)
    elif isinstance(event, depositkit.RefundEvent):
        line.update(deposit=event.result.deposit_id, status=event.result.status)
    return line


def cursors_from(log: str) -> dict[str, int]:
    """The last event id handled per owner (a line cut by the kill is ignored)."""
    cursors: dict[str, int] = {}
    try:
        with open(log, encoding="utf-8") as lines:
            for text in lines:
                try:
                    line = json.loads(text)
                except ValueError:
                    continue
                cursors[line["owner"]] = max(cursors.get(line["owner"], 0), line["id"])
    except FileNotFoundError:
        pass
    return cursors


def main() -> None:
    config = json.loads(sys.argv[1])
    cursors = cursors_from(config["log"])
    clients = []
    for owner in config["owners"]:
        client = depositkit.DepositClient(
            owner,
            config["destination"],
            services_url=config["services_url"],
            store_path=config["store_path"],
            **config["options"],
        )
        client.initialize()
        clients.append((owner, client))
    for _, client in clients:
        client.start_watching()
    print("ready", flush=True)
    with open(config["log"], "a", encoding="utf-8") as log:
        while True:
            for owner, client in clients:
                for event_id, event in client.events_since(cursors.get(owner, 0)):
                    log.write(json.dumps({"owner": owner, **summary(event_id, event)}) + "\n")
                    log.flush()
                    cursors[owner] = event_id
            time.sleep(0.005)


if __name__ == "__main__":
    main()
