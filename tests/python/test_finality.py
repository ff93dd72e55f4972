"""Finality and reorganisations from Python (docs/finality.md) against depositkit.Devnet()'s
simulated chains (docs/devnet-chains.md): a client watching Base through ``chain_rpc_urls``
reports a deposit ``seen`` → ``confirming`` → ``confirmed`` with its confirmations and
transaction, and sweeps it only then; a deposit a reorganisation takes out first is ``reorged``
and never reaches the destination.

The devnet's chains make blocks only on deposits and ``mine_blocks`` (``sim_block_ms=0``), so
the counts are the test's. Base is watched with a rule of 3 confirmations.
"""

from __future__ import annotations

import time
from typing import Any, Iterator

import pytest

import depositkit
from depositkit import CHAIN, DepositClient, Devnet

from conftest import EventLog, client_factory

WAIT = 20.0


@pytest.fixture(scope="module")
def chain_net() -> Iterator[Devnet]:
    """A devnet whose simulated chains make blocks only on deposits and ``mine_blocks``."""
    with depositkit.Devnet(sim_block_ms=0) as devnet:
        yield devnet


@pytest.fixture
def watching(chain_net: Devnet) -> Iterator[DepositClient]:
    """A client watching Base at its simulated chain (chain ids given as ``int``), 3
    confirmations, delivering to its owner on Arbitrum; its watcher has read the chain once
    (it follows the chain from the newest block at that read)."""
    with client_factory(chain_net) as make:
        client: DepositClient = make(
            chain_rpc_urls={CHAIN.BASE: chain_net.chain_rpc_url(CHAIN.BASE)},
            finality={"chains": {CHAIN.BASE: {"confirmations": 3}}},
        )
        start_watching(client)
        yield client


def start_watching(client: DepositClient) -> None:
    """Initializes and starts ``client``; waits until its chain watcher has read its chain."""
    client.initialize()
    client.start_watching()
    deadline = time.monotonic() + WAIT
    while (client.health()["services"].get("chain") or {}).get("lastOkMs") is None:
        assert time.monotonic() < deadline, "the chain watcher never read its chain"
        time.sleep(0.02)


def delivered(net: Devnet, client: DepositClient) -> int:
    return net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC")


def deposit_followed(net: Devnet, client: DepositClient, log: EventLog, raw: int) -> tuple[str, str]:
    """Deposits ``raw`` USDC on Base; waits until the deposit is ``seen`` (by the chain or the
    balance, whichever was first) and the chain's transfer is linked to it (an event with its
    transaction and count). The deposit's id and the transaction."""
    known = {e.id for e in log.lifecycle()}
    tx = net.deposit(client.deposit_addresses.evm, CHAIN.BASE, "USDC", raw_amount=raw)

    def seen() -> list[Any]:
        return [e for e in log.lifecycle() if e.phase == "seen" and e.id not in known]

    log.until(lambda _: bool(seen()), WAIT)
    deposit_id = seen()[0].id

    def linked() -> bool:
        return any(
            e.id == deposit_id
            and (e.source_tx_hash or "").lower() == tx.lower()
            and e.confirmations is not None
            for e in log.lifecycle()
        )

    log.until(lambda _: linked(), WAIT)
    return deposit_id, tx


def test_a_deposit_confirms_block_by_block_and_is_credited_once_final(
    chain_net: Devnet, watching: DepositClient
) -> None:
    log = EventLog(watching)
    deposit_id, tx = deposit_followed(chain_net, watching, log, 25_000_000)
    first = log.lifecycle(deposit_id)[0]
    assert (first.phase, first.chain_id, first.token, first.amount) == ("seen", CHAIN.BASE, "USDC", "25")
    with pytest.raises(depositkit.DepositSDKError, match="not final on its chain yet"):
        watching.sweep(deposit_id)

    heads = chain_net.mine_blocks(CHAIN.BASE, 1)
    assert heads["latest"] >= heads["safe"] >= heads["finalized"]
    log.until(
        lambda _: any(e.phase == "confirming" and e.confirmations == 2 for e in log.lifecycle(deposit_id)),
        WAIT,
    )
    confirming = next(e for e in log.lifecycle(deposit_id) if e.phase == "confirming" and e.confirmations == 2)
    assert confirming.required_confirmations == 3
    assert confirming.source_tx_hash is not None and confirming.source_tx_hash.lower() == tx.lower()
    assert delivered(chain_net, watching) == 0, "swept before it was final"

    chain_net.mine_blocks(CHAIN.BASE, 1)
    confirmed = log.reached(deposit_id, "confirmed", WAIT)
    assert (confirmed.confirmations, confirmed.required_confirmations) == (3, 3)
    credited = log.reached(deposit_id, "credited", WAIT)
    phases = log.phases(deposit_id)
    assert phases[0] == "seen" and "detected" not in phases, phases
    assert phases.index("confirming") < phases.index("confirmed") < phases.index("credited"), phases
    result = watching.sweep_result(deposit_id)
    assert result is not None and result.delivered is not None
    assert credited.transaction_id == result.transaction_id
    assert delivered(chain_net, watching) == result.delivered.raw_amount > 0


def test_a_deposit_reorganised_out_is_reorged_and_never_reaches_the_destination(
    chain_net: Devnet, watching: DepositClient
) -> None:
    log = EventLog(watching)
    deposit_id, tx = deposit_followed(chain_net, watching, log, 25_000_000)
    done = chain_net.reorg(CHAIN.BASE, 1, drop=[tx])
    assert done["dropped"] == [tx] and done["readd_at"] is None and len(done["replaced"]) == 1
    reorged = log.reached(deposit_id, "reorged", WAIT)
    assert reorged.source_tx_hash is not None and reorged.source_tx_hash.lower() == tx.lower()
    assert chain_net.ledger_balance(watching.deposit_addresses.evm, CHAIN.BASE, "USDC") == 0
    watching.poll_now()

    # Far past its confirmations, and a second deposit credited after it: only that one arrived.
    chain_net.mine_blocks(CHAIN.BASE, 4)
    second, _ = deposit_followed(chain_net, watching, log, 7_000_000)
    chain_net.mine_blocks(CHAIN.BASE, 2)
    log.reached(second, "credited", WAIT)
    phases = log.phases(deposit_id)
    assert phases[0] == "seen" and phases[-1] == "reorged" and "confirmed" not in phases, phases
    with pytest.raises(depositkit.DepositSDKError, match="reorganisation"):
        watching.sweep(deposit_id)
    assert watching.sweep_result(deposit_id) is None
    result = watching.sweep_result(second)
    assert result is not None and result.delivered is not None
    assert delivered(chain_net, watching) == result.delivered.raw_amount > 0


def test_chain_ids_of_chain_rpc_urls_may_be_int_or_str(chain_net: Devnet) -> None:
    url = chain_net.chain_rpc_url(CHAIN.BASE)
    assert url == f"{chain_net.services_url}/devnet/chains/8453/rpc"
    with client_factory(chain_net) as make:
        # A str key watches the chain as the int key of the fixture does.
        client = make(chain_rpc_urls={"8453": url})
        start_watching(client)
        with pytest.raises(depositkit.ConfigurationError, match="unknown chain ID: 7"):
            make(chain_rpc_urls={7: url})
        with pytest.raises(depositkit.ConfigurationError, match="gives 8453 twice"):
            make(chain_rpc_urls={8453: url, "8453": url})
