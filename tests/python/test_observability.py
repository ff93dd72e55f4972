"""Issue 16: logs, metrics and health.

- A whole flow (user lookups that succeed and fail, a deposit detected, swept and credited with
  the balance API and the onramp configured) captured at TRACE from the ``depositkit`` loggers:
  the expected records appear with their fields, and no secret (the project server key, its Basic
  credential, the user token, the balance-API key, the onramp partner key, any JWT) appears in
  any record's message, fields or formatted text.
- Levels are honoured: with ``depositkit`` at WARNING nothing below reaches ``logging``.
- ``metrics_text()`` and devnet's ``/metrics`` parsed with prometheus_client's parser; the
  counters moved as the flow says. ``/healthz`` and ``/readyz`` answer.
- ``DepositClient.health()``.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import urllib.request
from typing import Any, Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

import depositkit
from depositkit import CHAIN, Devnet

from conftest import EventLog, new_owner

JWT_SHAPE = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}")


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=1)
        self.records: list[logging.LogRecord] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def named(self, message: str) -> list[logging.LogRecord]:
        """The records whose message is ``message`` (then the ``key=value`` fields)."""
        return [r for r in self.records if base_message(r) == message]


def base_message(record: logging.LogRecord) -> str:
    """A record's message without the ``key=value`` fields the bridge appends."""
    words = record.getMessage().split(" ")
    while words and "=" in words[-1]:
        words.pop()
    return " ".join(words)


@pytest.fixture
def capture() -> Iterator[Capture]:
    logger = logging.getLogger("depositkit")
    handler = Capture()
    old = logger.level
    logger.addHandler(handler)
    logger.setLevel(5)  # TRACE
    depositkit.refresh_log_levels()
    try:
        yield handler
    finally:
        depositkit.flush_logs()
        logger.removeHandler(handler)
        logger.setLevel(old)
        depositkit.refresh_log_levels()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text, by name and labels."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def delta(before: dict[Any, float], after: dict[Any, float], name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def credited_flow(net: Devnet, **options: Any) -> tuple[Any, str]:
    """A client of a fresh owner on ``net`` whose USDC deposit on Base is credited; the client
    (closed by the caller) and the deposit id."""
    client = depositkit.DepositClient(
        new_owner(), CHAIN.ARBITRUM, services_url=net.services_url,
        min_polling_interval_ms=20, sweep_retry_delay_ms=20, http_initial_backoff_ms=5, **options,
    )  # fmt: skip
    addresses = client.initialize()
    net.deposit(addresses.evm, CHAIN.BASE, "USDC", "25", sender=new_owner())
    [detected] = client.poll_now()
    EventLog(client).reached(detected.id, "credited")
    return client, detected.id


def test_a_traced_flow_has_its_records_and_no_secret(capture: Capture) -> None:
    balance_key = "balkey_" + "Q7x" * 8
    partner_key = "partner_" + "Zr4" * 8
    wrong_key = "sk_wrong_" + "Hb2" * 8
    with Devnet(balance_api_key=balance_key) as net:
        creds = net.demo_credentials()
        server_key, token = creds["server_key"], creds["user_token"]
        with depositkit.UserRpcClient(net.user_rpc_url, creds["project_id"], server_key) as rpc:
            rpc.get_user_info(creds["user_uuid"], token)
            net.inject_fault("user-rpc", status=503, count=1)
            rpc.get_user_info(creds["user_uuid"], token)  # retried once
            net.clear_faults()
        with depositkit.UserRpcClient(net.user_rpc_url, creds["project_id"], wrong_key, max_retries=0) as bad:
            with pytest.raises(depositkit.AuthenticationError):
                bad.get_user_info(creds["user_uuid"], token)
        services = net.services_url
        client, deposit_id = credited_flow(
            net,
            funding={"enabled": True, "api_key": balance_key, "balance_api_url": services + "/balances"},
            onramp={"enabled": True, "api_key": partner_key, "widget_url": services + "/onramp/widget"},
        )
        owner = client.owner_address
        client.close()
    assert depositkit.flush_logs()

    records = capture.records
    detected = [r for r in capture.named("deposit detected") if r.deposit_id == deposit_id]
    assert len(detected) == 1, [r.getMessage() for r in records]
    [d] = detected
    assert (d.levelname, d.name) == ("INFO", "depositkit.deposit.engine.watch")
    assert (d.chain, d.token, d.owner) == (CHAIN.BASE, "USDC", owner)

    steps = [r for r in capture.named("deposit state changed") if r.deposit_id == deposit_id]
    assert steps and all(r.levelname == "INFO" for r in steps)
    assert all(r.name == "depositkit.deposit.records" for r in steps)
    assert [(r.__dict__["from"], r.to) for r in steps][-1][1] == "credited"
    assert any(r.to == "sweeping" for r in steps)
    assert all(r.owner == owner and r.chain == CHAIN.BASE and r.token == "USDC" for r in steps)
    assert all(isinstance(r.attempt, int) for r in steps)

    http = capture.named("HTTP request")
    assert {r.levelname for r in http} == {"DEBUG"}
    by_service = {(r.service, str(r.http_status)) for r in http}
    assert {("ua", "200"), ("jwt", "200"), ("user-rpc", "200"), ("user-rpc", "503")} <= by_service
    assert all(isinstance(r.latency_ms, int) for r in http)
    retried = capture.named("HTTP request retried")
    assert any(r.levelname == "WARNING" and r.service == "user-rpc" for r in retried)
    polls = capture.named("poll")
    assert polls and all(r.levelname == "DEBUG" and r.service == "account" for r in polls)
    assert any(r.levelname == "TRACE" for r in records)  # events queued

    secrets = {
        "server key": server_key,
        "wrong server key": wrong_key,
        "user token": token,
        "balance API key": balance_key,
        "partner key": partner_key,
        "Basic credential": base64.b64encode(f"{creds['project_id']}:{server_key}".encode()).decode(),
    }
    text = "\n".join(
        capture.format(r) + " " + json.dumps(r.fields, default=str) + " " + repr(r.__dict__) for r in records
    )
    for name, secret in secrets.items():
        assert secret not in text, f"the {name} is in the captured logs"
    assert not JWT_SHAPE.search(text), "a JWT is in the captured logs"


def test_levels_are_honoured(net: Devnet, capture: Capture) -> None:
    logging.getLogger("depositkit").setLevel(logging.WARNING)
    depositkit.refresh_log_levels()
    client, _ = credited_flow(net)
    client.close()
    assert depositkit.flush_logs()
    assert capture.records == [] or {r.levelno for r in capture.records} >= {logging.WARNING}
    assert all(r.levelno >= logging.WARNING for r in capture.records)

    # One module's logger at DEBUG: its records arrive, the others' INFO ones do not.
    logging.getLogger("depositkit.deposit.engine.watch").setLevel(logging.DEBUG)
    try:
        depositkit.refresh_log_levels()
        client, _ = credited_flow(net)
        client.close()
        assert depositkit.flush_logs()
        names = {r.name for r in capture.records if r.levelno < logging.WARNING}
        assert names == {"depositkit.deposit.engine.watch"}
    finally:
        logging.getLogger("depositkit.deposit.engine.watch").setLevel(logging.NOTSET)


def test_metrics_text_counts_a_known_flow(net: Devnet) -> None:
    before = samples(depositkit.metrics_text())
    client, deposit_id = credited_flow(net)
    after = samples(depositkit.metrics_text())
    usdc_base = {"chain": str(CHAIN.BASE), "token": "USDC"}
    assert delta(before, after, "depositkit_deposits_detected_total", **usdc_base) == 1
    assert delta(before, after, "depositkit_deposits_credited_total", **usdc_base) == 1
    assert delta(before, after, "depositkit_deposits_failed_total", **usdc_base) == 0
    assert delta(before, after, "depositkit_sweep_latency_seconds_count") == 1
    assert delta(before, after, "depositkit_polls_total", outcome="ok") >= 1
    assert delta(before, after, "depositkit_poll_latency_seconds_count") >= 1
    assert delta(before, after, "depositkit_http_requests_total", service="ua", status="200") >= 3
    assert delta(before, after, "depositkit_http_requests_total", service="jwt", status="200") >= 1
    assert delta(before, after, "depositkit_http_request_duration_seconds_count", service="ua") >= 3
    assert delta(before, after, "depositkit_events_delivered_total") >= 3  # detected, processing, credited
    assert after[("depositkit_backlog_deposits", ())] >= 0
    families = {f.name: f.type for f in text_string_to_metric_families(depositkit.metrics_text())}
    assert families["depositkit_deposits_credited"] == "counter"
    assert families["depositkit_sweep_latency_seconds"] == "histogram"
    assert families["depositkit_backlog_deposits"] == "gauge"
    client.close()


def test_devnet_serves_metrics_healthz_and_readyz(net: Devnet) -> None:
    client, _ = credited_flow(net)
    client.close()
    with urllib.request.urlopen(net.services_url + "/metrics") as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    served = samples(text)
    routes = {dict(labels).get("route") for (name, labels) in served if name == "depositkit_devnet_http_requests_total"}
    assert "/ua/v1/balances" in routes or any(r and r.startswith("/ua/") for r in routes), routes
    assert any(name == "depositkit_deposits_credited_total" for (name, _) in served)
    for path, status in (("/healthz", "ok"), ("/readyz", "ready")):
        with urllib.request.urlopen(net.services_url + path) as response:
            assert response.status == 200
            assert json.loads(response.read())["status"] == status


def test_health_reports_polls_backlog_stuck_and_session(net: Devnet) -> None:
    client, _ = credited_flow(net)
    health = client.health()
    assert health["ready"] and health["healthy"] and health["sessionValid"]
    assert health["backlog"] == 0 and health["stuck"] == [] and health["stuckAfterMs"] == 15 * 60 * 1000
    assert health["lastPollMs"] is not None
    assert health["services"]["account"]["lastOkMs"] == health["lastPollMs"]
    assert health["services"]["jwt"]["lastOkMs"] is not None

    held = depositkit.DepositClient(new_owner(), CHAIN.ARBITRUM, services_url=net.services_url, auto_sweep=False)
    addresses = held.initialize()
    net.deposit(addresses.evm, CHAIN.BASE, "USDC", "25", sender=new_owner())
    [detected] = held.poll_now()
    assert held.health()["backlog"] == 1 and held.health()["stuck"] == []
    stuck = held.health(stuck_after_ms=0)
    assert stuck["stuck"] == [detected.id] and not stuck["healthy"]
    held.close()
    client.close()
    assert client.health()["ready"] is False
