"""depositkit.DepositClient's transaction history against the in-process devnet: pages
(get_transactions), one token's transactions by cursor (get_token_transactions), single
transactions (get_transaction), the spec's UATransaction fields, and the short-lived cache."""

from __future__ import annotations

from typing import Any

import pytest

import depositkit
from depositkit import (
    CHAIN,
    ConfigurationError,
    Devnet,
    InvalidArgumentError,
    NotFoundError,
    TokenTransactionsResponse,
    TransactionsResponse,
    UATransaction,
    UniversalAccountError,
)

from conftest import EventLog, detect, new_owner, raises_exactly

USDC_ON_BASE = depositkit.token_info("USDC", CHAIN.BASE)["contract"]  # type: ignore[index]


@pytest.fixture(scope="module")
def busy(net: Devnet) -> Any:
    """A client whose account received three USDC deposits on Base and one of USDT on
    Arbitrum, all swept to Base: eight transactions, six of them USDC on Base."""
    client = depositkit.DepositClient(
        new_owner(),
        {"chain_id": CHAIN.BASE},
        services_url=net.services_url,
        min_polling_interval_ms=20,
        polling_interval_ms=50,
        http_initial_backoff_ms=5,
    )
    client.initialize()
    sender = new_owner()
    for amount in ("1", "2", "3"):
        detected = detect(net, client, CHAIN.BASE, "USDC", amount, sender=sender)
        EventLog(client).reached(detected.id, "credited")
    detected = detect(net, client, CHAIN.ARBITRUM, "USDT", "4")
    EventLog(client).reached(detected.id, "credited")
    yield client
    client.close()


def test_pages_by_number(busy: Any) -> None:
    everything = busy.get_transactions(1, 100)
    assert isinstance(everything, TransactionsResponse)
    assert (everything.page, everything.page_size, len(everything)) == (1, 100, 8)
    assert all(isinstance(t, UATransaction) for t in everything.transactions)
    tags = [t.tag for t in everything.transactions]
    assert sorted(tags) == ["receive"] * 4 + ["sweep"] * 4
    # Three pages of three agree with the whole list, newest first.
    paged: list[str] = []
    for page in (1, 2, 3):
        response = busy.get_transactions(page=page, page_size=3)
        assert (response.page, response.page_size) == (page, 3)
        paged += [t.transaction_id for t in response.transactions]
    assert paged == [t.transaction_id for t in everything.transactions]
    assert len(busy.get_transactions(4, 3)) == 0
    data = everything.to_dict()
    assert (data["page"], data["pageSize"], len(data["transactions"])) == (1, 100, 8)
    assert data["transactions"][0] == everything.transactions[0].to_dict()
    assert repr(everything) == "<depositkit.TransactionsResponse page=1 page_size=100 with 8 transactions>"


def test_one_tokens_transactions_by_cursor(busy: Any) -> None:
    everything = busy.get_transactions(page_size=100).transactions
    usdc_on_base = [
        t.transaction_id
        for t in everything
        if t.target_token["chain_id"] == CHAIN.BASE and t.target_token["symbol"] == "USDC"
    ]
    assert len(usdc_on_base) == 6
    # Three pages of two, each pointing at the next; the last has no cursor.
    first = busy.get_token_transactions(CHAIN.BASE, USDC_ON_BASE, page_size=2)
    assert isinstance(first, TokenTransactionsResponse) and len(first) == 2
    assert first.next_page_token
    second = busy.get_token_transactions(CHAIN.BASE, USDC_ON_BASE, page_token=first.next_page_token, page_size=2)
    assert len(second) == 2 and second.next_page_token and second.next_page_token != first.next_page_token
    third = busy.get_token_transactions(CHAIN.BASE, USDC_ON_BASE, page_token=second.next_page_token, page_size=2)
    assert len(third) == 2
    assert third.next_page_token is None, "the last page has no cursor"
    assert "nextPageToken" not in third.to_dict() and first.to_dict()["nextPageToken"] == first.next_page_token
    paged = [t.transaction_id for page in (first, second, third) for t in page.transactions]
    assert paged == usdc_on_base, "newest first, nothing twice, nothing missing"
    # The address compares without regard to case; the default page size is 10.
    whole = busy.get_token_transactions(CHAIN.BASE, USDC_ON_BASE.lower())
    assert len(whole) == 6 and whole.next_page_token is None
    # A cursor the service never issued.
    with raises_exactly(UniversalAccountError, "Failed to get token transactions"):
        busy.get_token_transactions(CHAIN.BASE, USDC_ON_BASE, page_token="bogus", page_size=2)
    with raises_exactly(InvalidArgumentError, "address is empty"):
        busy.get_token_transactions(CHAIN.BASE, " ")
    with raises_exactly(InvalidArgumentError, "unknown chain id -1"):
        busy.get_token_transactions(-1, USDC_ON_BASE)
    with raises_exactly(TypeError, "page_token must be a str, not int"):
        busy.get_token_transactions(CHAIN.BASE, USDC_ON_BASE, page_token=3)


def test_one_transaction_with_every_field(net: Devnet, make_client: Any) -> None:
    client = make_client({"chain_id": CHAIN.BASE})
    evm = client.initialize().evm
    sender = new_owner()
    detected = detect(net, client, CHAIN.BASE, "USDC", "2.5", sender=sender)
    credited = EventLog(client).reached(detected.id, "credited")
    sweep = client.get_transaction(credited.transaction_id)
    assert isinstance(sweep, UATransaction)
    assert (sweep.transaction_id, sweep.tag, sweep.status) == (credited.transaction_id, "sweep", 1)
    token = sweep.target_token
    assert (token["symbol"], token["chain_id"], token["decimals"], token["real_decimals"]) == ("USDC", 8453, 6, 6)
    assert token["address"] == USDC_ON_BASE
    assert set(token) == {
        "name", "type", "image", "price", "symbol", "address", "asset_id", "chain_id", "decimals",
        "real_decimals", "is_primary_token", "is_smart_router_supported",
    }  # fmt: skip
    assert (sweep.from_chains, sweep.to_chains) == ([8453], [8453])
    assert sweep.quote_id and sweep.quote_id.startswith("q_")
    assert sweep.created_at and sweep.updated_at
    assert sweep.detail == {"red_packet_count": 0}

    listed = client.get_transactions()
    assert (listed.page, listed.page_size) == (1, 10)
    [receive] = [t for t in listed.transactions if t.tag == "receive"]
    change = receive.change
    assert change["from"].lower() == sender and change["to"] == evm
    assert (change["amount"], change["amount_in_usd"], change["raw_amount"]) == ("2.5", "2.5", 2_500_000)
    single = client.get_transaction(receive.transaction_id)
    assert single == receive
    data = single.to_dict()
    for field in ("transactionId", "tag", "createdAt", "updatedAt", "targetToken", "change", "detail", "status", "fromChains", "toChains"):
        assert field in data, field
    for field in ("name", "type", "image", "price", "symbol", "address", "assetId", "chainId", "decimals", "realDecimals", "isPrimaryToken", "isSmartRouterSupported"):
        assert field in data["targetToken"], field
    assert data["detail"] == {"redPacketCount": 0}
    assert data["change"]["amountInUSD"] == "2.5" and data["change"]["rawAmount"] == 2_500_000
    assert repr(single).startswith("<depositkit.UATransaction 'receive' '0x") and "2.5 USDC on chain 8453" in repr(single)

    with raises_exactly(NotFoundError, "Failed to get transaction") as info:
        client.get_transaction("0xnope")
    assert isinstance(info.value, LookupError)
    with raises_exactly(InvalidArgumentError, "transaction id is empty"):
        client.get_transaction("")
    with raises_exactly(InvalidArgumentError, "page must be at least 1, got 0"):
        client.get_transactions(page=0)
    with raises_exactly(InvalidArgumentError, "page must be at least 1, got -2"):
        client.get_transactions(page=-2)
    with raises_exactly(InvalidArgumentError, "page size must be between 1 and 100, got 101"):
        client.get_transactions(page_size=101)
    with raises_exactly(TypeError, "page must be an int or None, not str"):
        client.get_transactions("1")
    with raises_exactly(TypeError, "page_size must be an int or None, not bool"):
        client.get_transactions(1, True)
    fresh = make_client()
    with raises_exactly(ConfigurationError, "Client not initialized"):
        fresh.get_transactions()
    with raises_exactly(ConfigurationError, "Client not initialized"):
        fresh.get_transaction("0x1")
    with raises_exactly(ConfigurationError, "Client not initialized"):
        fresh.get_token_transactions(CHAIN.BASE, USDC_ON_BASE)


def test_answers_are_cached_until_the_client_changes_the_history(net: Devnet, make_client: Any) -> None:
    client = make_client()
    client.initialize()
    detected = detect(net, client, CHAIN.BASE, "USDC", "2")
    log = EventLog(client)
    log.reached(detected.id, "credited")
    before = client.get_transactions(1, 10)
    assert len(before) == 2
    one = client.get_transaction(before.transactions[0].transaction_id)
    token_page = client.get_token_transactions(CHAIN.BASE, USDC_ON_BASE)
    # The service now fails every history request: cached answers still come back.
    net.inject_fault("ua", status=500, count=1000, path="/v1/transactions")
    assert client.get_transactions(1, 10) == before
    assert client.get_transaction(one.transaction_id) == one
    assert client.get_token_transactions(CHAIN.BASE, USDC_ON_BASE) == token_page
    # Uncached requests do fail.
    with raises_exactly(UniversalAccountError, "Failed to get transactions: "):
        client.get_transactions(2, 10)
    # The client's own sweep empties the caches: the next read goes to the service.
    detected = detect(net, client, CHAIN.BASE, "USDC", "1")
    log.reached(detected.id, "credited")
    with raises_exactly(UniversalAccountError, "Failed to get transactions"):
        client.get_transactions(1, 10)
    net.clear_faults()
    assert len(client.get_transactions(1, 10)) == 4
