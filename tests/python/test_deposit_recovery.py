"""depositkit.DepositClient's recovery of stuck funds against the in-process devnet: what counts
as stuck (stuck_funds), and the success, failed and skipped results of recover_funds() with
their RecoveryEvents."""

from __future__ import annotations

import threading
from typing import Any

from depositkit import (
    CHAIN,
    ConfigurationError,
    DeliveredAmount,
    DetectedDeposit,
    Devnet,
    RecoveryEvent,
    RecoveryResult,
)

from conftest import EventLog, detect, raises_exactly, wait_until


def test_a_failed_deposit_is_stuck_and_recovered_to_the_destination(net: Devnet, make_client: Any) -> None:
    client = make_client()
    client.initialize()
    net.fail_next_sweeps(3)
    detected = detect(net, client, CHAIN.BASE, "USDC", "4")
    log = EventLog(client)
    log.reached(detected.id, "failed")
    [stuck] = client.stuck_funds()
    assert isinstance(stuck, DetectedDeposit)
    assert stuck.id == "recovery:usdc:8453"
    assert (stuck.token, stuck.chain_id, stuck.amount, stuck.raw_amount) == ("USDC", 8453, "4", 4_000_000)
    assert abs(stuck.amount_usd - 4.0) < 1e-9

    [result] = client.recover_funds()
    assert isinstance(result, RecoveryResult)
    assert result.status == "success", result
    assert (result.token, result.chain_id, result.amount, result.raw_amount) == ("USDC", 8453, "4", 4_000_000)
    assert result.tx_hash and result.error is None
    delivered = result.delivered
    assert isinstance(delivered, DeliveredAmount) and delivered.chain_id == CHAIN.ARBITRUM
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == delivered.raw_amount
    assert result.to_dict() == {
        "token": "USDC", "chainId": 8453, "amount": "4", "amountUSD": result.amount_usd,
        "status": "success", "txHash": result.tx_hash, "rawAmount": 4_000_000,
        "delivered": delivered.to_dict(),
    }  # fmt: skip
    # The failed deposit was part of it: now credited, with the recovery's transaction.
    log.until(lambda events: any(isinstance(e, RecoveryEvent) for e in events))
    credited = log.reached(detected.id, "credited")
    assert credited.transaction_id == result.tx_hash
    [event] = [e for e in log.events if isinstance(e, RecoveryEvent)]
    assert event.type == "recovery:result" and event.result == result
    assert event.to_dict() == result.to_dict()
    assert repr(event) == "<depositkit.RecoveryEvent 4 USDC on chain 8453 status='success'>"
    sweep = client.sweep_result(detected.id)
    assert sweep is not None and (sweep.status, sweep.transaction_id) == ("success", result.tx_hash)
    assert client.pending_deposits() == []
    assert client.stuck_funds() == []
    assert client.recover_funds() == []
    wait_until(lambda: client.status == "ready")
    assert not client.is_recovering


def test_recovery_results_success_failed_and_skipped(net: Devnet, make_client: Any) -> None:
    # The watcher reports only USDC on Base; everything else sits in the account unexplained.
    # Destination Ethereum, where the gas is $0.50.
    client = make_client({"chain_id": CHAIN.ETHEREUM}, supported_tokens=["USDC"], supported_chains=[CHAIN.BASE])
    evm = client.initialize().evm
    # A failed USDC deposit on Base ($4): recovered.
    net.fail_next_sweeps(3)
    detected = detect(net, client, CHAIN.BASE, "USDC", "4")
    EventLog(client).reached(detected.id, "failed")
    net.deposit(evm, CHAIN.ETHEREUM, "USDT", "3")  # its send is rejected: failed
    net.deposit(evm, CHAIN.BASE, "ETH", "0.0001")  # $0.25, less than the fees: skipped
    net.deposit(evm, CHAIN.ARBITRUM, "USDC", "0.05")  # dust: skipped
    stuck = client.stuck_funds()
    assert [(s.chain_id, s.token, s.amount) for s in stuck] == [
        (1, "USDT", "3"), (8453, "ETH", "0.0001"), (8453, "USDC", "4"), (42161, "USDC", "0.05"),
    ]  # fmt: skip

    net.fail_next_sweeps(1, "reject")
    log = EventLog(client)
    results = client.recover_funds()
    assert [(r.chain_id, r.token, r.status) for r in results] == [
        (1, "USDT", "failed"), (8453, "ETH", "skipped"), (8453, "USDC", "success"), (42161, "USDC", "skipped"),
    ]  # fmt: skip
    failed, below, recovered, dust = results
    assert "ROUTE_FAILED" in (failed.error or "") and failed.tx_hash is None and failed.delivered is None
    assert (below.error or "").startswith("Below minimum"), below
    assert recovered.tx_hash and recovered.error is None and recovered.delivered is not None
    assert (dust.error or "").startswith("Dust"), dust
    # One RecoveryEvent per asset, in the same order.
    log.until(lambda _: len(log.recoveries()) == 4)
    assert log.recoveries() == results
    # What was not recovered is still there, and still stuck.
    assert net.ledger_balance(evm, CHAIN.ETHEREUM, "USDT") == 3_000_000
    assert [s.id for s in client.stuck_funds()] == ["recovery:usdt:1", "recovery:eth:8453", "recovery:usdc:42161"]
    # A second try recovers the USDT.
    again = client.recover_funds()
    assert again[0].status == "success", again


def test_live_deposits_are_not_stuck(net: Devnet, make_client: Any) -> None:
    client = make_client(auto_sweep=False)
    evm = client.initialize().evm
    # A deposit waiting for a manual sweep, and 0.3 USDC below the threshold.
    waiting = detect(net, client, CHAIN.BASE, "USDC", "3")
    net.deposit(evm, CHAIN.BASE, "USDC", "0.3")
    [stuck] = client.stuck_funds()
    assert stuck.amount == "0.3", "only the below-threshold money"
    # A deposit that arrives between polls is detected by the scan, not taken for stuck money.
    net.deposit(evm, CHAIN.BASE, "USDC", "2")
    [result] = client.recover_funds()
    assert (result.amount, result.status) == ("0.3", "success")
    assert len(client.pending_deposits()) == 2
    assert net.ledger_balance(evm, CHAIN.BASE, "USDC") == 5_000_000
    assert client.sweep(waiting.id).status == "success"


def test_is_recovering_while_a_recovery_runs(net: Devnet, make_client: Any) -> None:
    client = make_client(min_value_usd=100)
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "USDC", "2")  # below the client's threshold: stuck
    [event] = client.poll_now()
    assert event.phase == "below_threshold"
    statuses: list[str] = []
    client.subscribe(lambda e: statuses.append(e.status) if e.type == "status:change" else None)
    # A slow quote keeps the recovery running long enough to look at it.
    net.inject_fault("ua", delay_ms=400, count=1, path="/v1/sweeps/quote")
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.extend(client.recover_funds()))
    worker.start()
    wait_until(lambda: client.is_recovering, timeout=5)
    assert client.status == "sweeping"
    worker.join(20)
    assert [r.status for r in results] == ["success"]
    assert not client.is_recovering
    wait_until(lambda: statuses[-1:] == ["ready"])
    assert "sweeping" in statuses


def test_recovery_needs_an_initialized_client(make_client: Any) -> None:
    client = make_client()
    with raises_exactly(ConfigurationError, "Client not initialized"):
        client.stuck_funds()
    with raises_exactly(ConfigurationError, "Client not initialized"):
        client.recover_funds()
    assert not client.is_recovering
