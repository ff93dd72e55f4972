"""The fiat onramp (docs/funding.md §5, §6 Python): the widget URL, the overlay's messages turned
into ``onramp:*`` events, ``last_onramp_order``, and devnet's simulated widget delivering the
crypto for real on the local chains (``Devnet(chains=local_chains)``)."""

from __future__ import annotations

import decimal
import json
import math
import urllib.parse
import urllib.request
from typing import Any

import pytest

import depositkit
from depositkit import (
    CHAIN,
    ConfigurationError,
    InvalidArgumentError,
    OnrampCompleteEvent,
    OnrampEvent,
    OnrampOrder,
)

from conftest import EventLog, new_solana_address, raises_exactly, wait_until

PARTNER_KEY = "pk_test_partner_secret"


def onramp_options(chain_net: Any, **overrides: Any) -> dict[str, Any]:
    return {
        "enabled": True,
        "api_key": PARTNER_KEY,
        "widget_url": chain_net.services_url + "/onramp/widget",
        **overrides,
    }


def query(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, strict_parsing=True))


def onramp_events(events: list[Any]) -> list[Any]:
    return [e for e in events if e.type.startswith("onramp:")]


def drained(client: Any) -> list[Any]:
    """Every queued event (``handle_onramp_message`` queues its events before it returns)."""
    events = []
    while (event := client.next_event(timeout=0)) is not None:
        events.append(event)
    return events


@pytest.mark.parametrize("chain_id", [int(CHAIN.ARBITRUM), int(CHAIN.SOLANA)])
def test_an_overlay_order_is_delivered_and_reported(chain_net: Any, make_chain_client: Any, chain_id: int) -> None:
    destination: dict[str, Any] = {"chain_id": chain_id}
    if chain_id == CHAIN.SOLANA:
        destination["address"] = new_solana_address()
    seen: list[Any] = []
    client = make_chain_client(destination, onramp=onramp_options(chain_net))
    client.subscribe(seen.append)
    receiver = client.get_destination()["address"]
    before = chain_net.chain_balance(receiver, chain_id, "USDC")
    network = {CHAIN.ARBITRUM: "arbitrum", CHAIN.SOLANA: "solana"}[chain_id]

    url = client.open_onramp(100)

    assert url.startswith(chain_net.services_url + "/onramp/widget?")
    params = query(url)
    assert params.pop("partnerOrderId").startswith("dk_")
    assert params == {
        "partnerKey": PARTNER_KEY,
        "walletAddress": receiver,
        "network": network,
        "cryptoCurrency": "USDC",
        "fiatCurrency": "USD",
        "fiatAmount": "100",
        "mode": "overlay",
    }
    assert PARTNER_KEY not in repr(client)
    # The simulated widget shows its order form.
    with urllib.request.urlopen(url, timeout=10) as page:
        assert page.status == 200 and page.headers["Content-Type"].startswith("text/html")

    answer = chain_net.complete_onramp_order(url)
    order, messages = answer["order"], answer["messages"]
    assert [m["event"] for m in messages] == ["order_created", "order_processing", "order_completed"]
    bought = depositkit.parse_units(order["cryptoAmount"], 6)
    assert bought == 99_000_000  # 100 USD at 1 USD, less the 1% fee
    assert chain_net.chain_balance(receiver, chain_id, "USDC") == before + bought

    log = EventLog(client)
    client.handle_onramp_message({"event": "widget_opened", "data": {}})
    for i, message in enumerate(messages):
        # The host may forward the posted object or its JSON text.
        assert client.handle_onramp_message(json.dumps(message) if i % 2 else message) is True
    assert client.handle_onramp_message('{"event": "widget_closed"}') is True

    log.until(lambda events: any(e.type == "onramp:widget_closed" for e in events))
    events = onramp_events(log.events)
    assert [e.type for e in events] == [
        "onramp:widget_opened",
        "onramp:order_created",
        "onramp:order_processing",
        "onramp:order_completed",
        "onramp:complete",
        "onramp:widget_closed",
    ]
    created = events[1]
    assert isinstance(created, OnrampEvent)
    assert created.name == "order_created"
    assert created.payload == messages[0]["data"]
    assert created.to_dict() == {"type": "onramp:order_created", "payload": messages[0]["data"]}
    assert repr(created) == f"<depositkit.OnrampEvent onramp:order_created order={order['id']!r}>"
    assert events[0].payload == {} and repr(events[0]) == "<depositkit.OnrampEvent onramp:widget_opened>"

    complete = events[4]
    assert isinstance(complete, OnrampCompleteEvent) and complete.type == "onramp:complete"
    last = client.last_onramp_order
    assert isinstance(last, OnrampOrder)
    assert complete.order == last
    assert (last.id, last.amount, last.token, last.status) == (order["id"], order["cryptoAmount"], "USDC", "completed")
    assert last.destination == {"address": receiver, "chain_id": chain_id}
    assert last.fiat_amount == 100 and last.fiat_currency == "USD"
    assert last.tx_hash == order.get("txHash")
    assert last.tx_hash  # a real delivery on a chain-backed chain
    assert complete.to_dict() == last.to_dict() == {
        "amount": order["cryptoAmount"],
        "token": "USDC",
        "status": "completed",
        "id": order["id"],
        "destination": {"address": receiver, "chainId": chain_id},
        "fiatAmount": 100.0,
        "fiatCurrency": "USD",
        "txHash": last.tx_hash,
    }
    assert repr(last).startswith(f"<depositkit.OnrampOrder id={order['id']!r} {order['cryptoAmount']} USDC to ")

    # Callbacks (on the event thread) get the same events, in the same order.
    wait_until(lambda: len(onramp_events(seen)) == len(events))
    assert [e.type for e in onramp_events(seen)] == [e.type for e in events]


def test_redirect_mode_has_no_event_channel(chain_net: Any, make_chain_client: Any) -> None:
    client = make_chain_client(onramp=onramp_options(chain_net, mode="redirect", default_fiat_amount=25))
    url = client.open_onramp()
    assert query(url)["mode"] == "redirect" and query(url)["fiatAmount"] == "25"
    messages = chain_net.complete_onramp_order(query(url))["messages"]
    for message in messages:
        assert client.handle_onramp_message(message) is False
    assert client.last_onramp_order is None
    assert onramp_events(drained(client)) == []


def test_widget_url_options(chain_net: Any, make_chain_client: Any) -> None:
    client = make_chain_client(
        {"chain_id": CHAIN.BASE, "token": "ETH"},
        onramp=onramp_options(chain_net, fiat_currency="EUR", payment_mode="apple_pay"),
    )
    params = query(client.open_onramp(decimal.Decimal("25.5")))
    assert (params["network"], params["cryptoCurrency"], params["fiatCurrency"]) == ("base", "ETH", "EUR")
    assert (params["fiatAmount"], params["paymentMethod"]) == ("25.5", "apple_pay")
    assert "fiatAmount" not in query(client.open_onramp())
    assert query(client.open_onramp(None))["partnerOrderId"] != query(client.open_onramp())["partnerOrderId"]

    builtin = make_chain_client(onramp={"enabled": True})
    url = builtin.open_onramp(10)
    assert url.startswith("https://onramp.depositkit.dev/widget?partnerKey=pk_depositkit_builtin_onramp&")


def test_bad_onramp_input_names_the_value(chain_net: Any, make_chain_client: Any) -> None:
    client = make_chain_client(onramp=onramp_options(chain_net))
    for amount in (0, -1, math.nan, math.inf, 10**400):
        with raises_exactly(InvalidArgumentError, "positive number", builtin=ValueError):
            client.open_onramp(amount)
    for amount, name in (("10", "str"), (True, "bool")):
        with raises_exactly(TypeError, "amount must be a number", name):
            client.open_onramp(amount)

    with raises_exactly(InvalidArgumentError, 'unknown onramp event "order_teleported"', "order_created"):
        client.handle_onramp_message({"event": "order_teleported", "data": {}})
    with raises_exactly(InvalidArgumentError, "malformed onramp message", "no \"event\""):
        client.handle_onramp_message({"data": {}})
    with raises_exactly(InvalidArgumentError, "malformed onramp message"):
        client.handle_onramp_message("{not json")
    with raises_exactly(InvalidArgumentError, "malformed onramp message", "an array"):
        client.handle_onramp_message("[1]")
    with raises_exactly(InvalidArgumentError, "malformed onramp message", "a value of type object at data"):
        client.handle_onramp_message({"event": "order_created", "data": object()})
    with raises_exactly(InvalidArgumentError, "malformed onramp message", "a key of type int at data"):
        client.handle_onramp_message({"event": "order_created", "data": {1: "x"}})
    # A completed order missing its fields: refused before any event goes out.
    with raises_exactly(InvalidArgumentError, "malformed onramp order: cryptoCurrency is missing"):
        client.handle_onramp_message({"event": "order_completed", "data": {"id": "o1"}})
    with raises_exactly(TypeError, "message must be a dict", "list"):
        client.handle_onramp_message([{"event": "widget_opened"}])
    assert client.last_onramp_order is None
    assert onramp_events(drained(client)) == []

    disabled = make_chain_client()
    with raises_exactly(ConfigurationError, "onramp is not enabled", builtin=ValueError):
        disabled.open_onramp()
    with raises_exactly(ConfigurationError, "onramp is not enabled"):
        disabled.handle_onramp_message({"event": "widget_opened"})


def test_devnet_refuses_bad_orders(chain_net: Any, make_chain_client: Any) -> None:
    client = make_chain_client(onramp=onramp_options(chain_net))
    params = query(client.open_onramp(50))
    with raises_exactly(InvalidArgumentError, "partnerKey"):
        chain_net.complete_onramp_order({**params, "partnerKey": ""})
    with raises_exactly(InvalidArgumentError, "network", "mars"):
        chain_net.complete_onramp_order({**params, "network": "mars"})
    with raises_exactly(InvalidArgumentError, "fiatAmount"):
        chain_net.complete_onramp_order({**params, "fiatAmount": "-3"})
    with raises_exactly(TypeError, "params must be a dict"):
        chain_net.complete_onramp_order(42)
