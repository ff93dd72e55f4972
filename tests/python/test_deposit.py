"""depositkit.DepositClient end to end against depositkit.Devnet() (in process): deposits are
detected, swept and credited at the destination with the quote's fee-aware amount.

The client polls through poll_now() (or a 50 ms watcher, thanks to the min_polling_interval_ms
test knob); sweeps run in the background and are awaited on the event queue. Every test uses a
fresh owner, hence a fresh account and destination.
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import depositkit
from depositkit import CHAIN, DepositClient, Devnet

from conftest import EventLog, delivered_usdc, new_owner, new_solana_address


def test_deposit_is_detected_swept_and_credited(net: Devnet, make_client: Any) -> None:
    seen: list[Any] = []
    client: DepositClient = make_client(on_deposit_event=seen.append)
    owner = client.owner_address
    assert client.status == "idle"
    addresses = client.initialize()
    assert client.status == "ready"
    assert depositkit.is_valid_evm_address(addresses.evm)
    assert depositkit.is_valid_solana_address(addresses.solana)
    assert client.deposit_addresses == addresses
    assert addresses.to_dict() == {"evm": addresses.evm, "solana": addresses.solana}
    assert client.account_id and client.intermediary_address

    tx = net.deposit(addresses.evm, CHAIN.BASE, "ETH", "0.01", sender=new_owner())
    assert tx.startswith("0x") and len(tx) == 66
    [detected] = client.poll_now()
    assert (detected.type, detected.phase, detected.token, detected.chain_id) == (
        "deposit:lifecycle", "detected", "ETH", CHAIN.BASE,
    )  # fmt: skip
    assert detected.amount == "0.01" and detected.amount_usd == 25.0
    assert detected.destination == {"address": owner, "chain_id": CHAIN.ARBITRUM}
    assert detected.transaction_id is None and detected.error is None

    log = EventLog(client)
    credited = log.reached(detected.id, "credited")
    assert log.phases(detected.id) == ["detected", "processing", "credited"]
    assert credited.transaction_id and credited.transaction_id.startswith("0x")
    assert credited.explorer_url == f"https://arbiscan.io/tx/{credited.transaction_id}"
    assert credited.amount == "0.01" and credited.error is None

    result = client.sweep_result(detected.id)
    assert result is not None and result.status == "success"
    assert (result.deposit_id, result.transaction_id) == (detected.id, credited.transaction_id)
    delivered = result.delivered
    assert delivered is not None
    assert (delivered.chain_id, delivered.token, delivered.address, delivered.decimals) == (
        CHAIN.ARBITRUM, "USDC", owner, 6,
    )  # fmt: skip
    expected = delivered_usdc("25")  # 25 USD less 0.03 gas and 0.05 LP fee
    assert expected == 24_920_000
    assert delivered.raw_amount == expected
    assert delivered.amount == "24.92"
    assert delivered.fees == {"gas_usd": 0.03, "lp_usd": 0.05, "service_usd": 0.0, "total_usd": 0.08}
    assert abs(delivered.value_usd - delivered.fees["total_usd"] - 24.92) < 1e-9
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == expected
    # The deposit left the account.
    assert net.ledger_balance(addresses.evm, CHAIN.BASE, "ETH") == 0
    assert client.pending_deposits() == []

    assert credited.to_dict() == {
        "id": detected.id, "phase": "credited", "token": "ETH", "chainId": 8453, "amount": "0.01",
        "amountUSD": 25.0, "destination": {"address": owner, "chainId": 42161},
        "transactionId": credited.transaction_id, "explorerUrl": credited.explorer_url,
        "timestamp": credited.timestamp,
    }  # fmt: skip
    assert result.to_dict()["delivered"]["rawAmount"] == expected
    assert result.to_dict()["depositId"] == detected.id

    # on_deposit_event saw the same lifecycle events, and only those.
    deadline = time.monotonic() + 5
    while len(seen) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [(e.id, e.phase) for e in seen] == [(detected.id, p) for p in ("detected", "processing", "credited")]
    assert seen[-1] == credited
    # Status changes were queued too.
    statuses = [e.status for e in log.events if e.type == "status:change"]
    assert statuses[:2] == ["initializing", "ready"] and "sweeping" in statuses

    page = client.transactions()
    assert {t["tag"] for t in page["transactions"]} == {"receive", "sweep"}
    assert page["page"] == 1


def test_below_threshold_and_dust(net: Devnet, make_client: Any) -> None:
    client = make_client(auto_sweep=True)
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "USDC", "0.3")
    [event] = client.poll_now()
    assert event.phase == "below_threshold"
    assert event.amount == "0.3" and event.error
    assert client.pending_deposits() == [] and client.status == "ready"
    # Dust (worth $0.10 or less) is ignored altogether.
    net.deposit(evm, CHAIN.ARBITRUM, "USDC", "0.05")
    assert client.poll_now() == []
    # A higher min_value_usd makes a bigger deposit below the threshold too.
    rich = make_client(min_value_usd=Decimal("100"))
    net.deposit(rich.initialize().evm, CHAIN.BASE, "USDC", "50")
    assert [e.phase for e in rich.poll_now()] == ["below_threshold"]


def test_several_deposits_at_once(net: Devnet, make_client: Any) -> None:
    client = make_client()
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "ETH", "0.01")
    net.deposit(evm, CHAIN.BNB, "USDC", "25")
    net.deposit(evm, CHAIN.ARBITRUM, "USDT", raw_amount=10_000_000)
    detected = client.poll_now()
    assert sorted((e.token, e.chain_id, e.amount) for e in detected) == [
        ("ETH", 8453, "0.01"), ("USDC", 56, "25"), ("USDT", 42161, "10"),
    ]  # fmt: skip
    assert len({e.id for e in detected}) == 3
    log = EventLog(client)
    for event in detected:
        log.reached(event.id, "credited")
    results = [client.sweep_result(e.id) for e in detected]
    assert all(r is not None and r.status == "success" for r in results)
    total = sum(r.delivered.raw_amount for r in results if r is not None and r.delivered)
    assert total == delivered_usdc("25") * 2 + delivered_usdc("10")
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == total


def test_deposit_arriving_while_another_is_swept(net: Devnet, make_client: Any) -> None:
    client = make_client()
    evm = client.initialize().evm
    # Hold the first sweep's send for a while.
    net.inject_fault("ua", delay_ms=600, path="/v1/sweeps/send")
    net.deposit(evm, CHAIN.BASE, "USDC", "5")
    [first] = client.poll_now()
    log = EventLog(client)
    log.reached(first.id, "processing")
    assert client.status == "sweeping"
    net.deposit(evm, CHAIN.BASE, "USDC", "7")
    [second] = client.poll_now()
    assert second.id != first.id and second.amount == "7"
    assert "credited" not in log.phases(first.id)
    log.reached(first.id, "credited")
    log.reached(second.id, "credited")
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == delivered_usdc(
        "5"
    ) + delivered_usdc("7")


def test_second_deposit_of_the_same_token_and_chain(net: Devnet, make_client: Any) -> None:
    client = make_client()
    evm = client.initialize().evm
    log = EventLog(client)
    net.deposit(evm, CHAIN.ARBITRUM, "USDC", "5")
    [first] = client.poll_now()
    log.reached(first.id, "credited")
    net.deposit(evm, CHAIN.ARBITRUM, "USDC", "5")
    [second] = client.poll_now()
    assert second.id != first.id and second.amount == "5"
    log.reached(second.id, "credited")
    assert client.poll_now() == []  # nothing is reported twice
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == 2 * delivered_usdc("5")


def test_destination_change_before_the_sweep(net: Devnet, make_client: Any) -> None:
    client = make_client(auto_sweep=False)
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "USDC", "20")
    [detected] = client.poll_now()
    [pending] = client.pending_deposits()
    assert pending.id == detected.id and pending.raw_amount == 20_000_000
    assert client.status == "ready"  # nothing is being swept
    other = new_owner()
    resolved = client.set_destination(chain_id=CHAIN.BASE, address=other.upper().replace("0X", "0x"))
    assert resolved == {"address": other, "chain_id": CHAIN.BASE, "token": "USDC"}
    assert client.get_destination() == resolved
    result = client.sweep(detected.id)
    assert result.status == "success"
    assert result.delivered is not None
    assert (result.delivered.chain_id, result.delivered.address) == (CHAIN.BASE, other)
    assert net.ledger_balance(other, CHAIN.BASE, "USDC") == result.delivered.raw_amount == delivered_usdc("20")
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == 0
    credited = EventLog(client).reached(detected.id, "credited")
    assert credited.destination == {"address": other, "chain_id": CHAIN.BASE}
    # Back to the owner on Arbitrum, with the other accepted forms.
    assert client.set_destination(depositkit.DestinationConfig(CHAIN.ARBITRUM))["address"] == client.owner_address
    assert client.set_destination(CHAIN.ETHEREUM)["chain_id"] == CHAIN.ETHEREUM
    assert client.set_destination({"chainId": CHAIN.BNB, "token": "eth"})["token"] == "ETH"


def test_usdc_on_bnb_chain_has_18_decimals(net: Devnet, make_client: Any) -> None:
    client = make_client(auto_sweep=False)
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BNB, "USDC", "25")
    assert net.ledger_balance(evm, CHAIN.BNB, "USDC") == 25 * 10**18
    [detected] = client.poll_now()
    assert (detected.amount, detected.amount_usd) == ("25", 25.0)
    [pending] = client.pending_deposits()
    assert (pending.raw_amount, pending.decimals, pending.token, pending.chain_id) == (25 * 10**18, 18, "USDC", 56)
    assert pending.to_dict()["rawAmount"] == 25 * 10**18
    result = client.sweep(detected.id)
    assert result.status == "success" and result.delivered is not None
    assert (result.delivered.raw_amount, result.delivered.decimals) == (delivered_usdc("25"), 6)
    assert net.ledger_balance(evm, CHAIN.BNB, "USDC") == 0


def test_solana_destination_keeps_its_case(net: Devnet, make_client: Any) -> None:
    solana = new_solana_address()
    client = make_client({"chainId": CHAIN.SOLANA, "address": solana, "token": "USDC"})
    assert client.get_destination() == {"address": solana, "chain_id": 101, "token": "USDC"}
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "USDC", "10")
    [detected] = client.poll_now()
    assert detected.destination == {"address": solana, "chain_id": 101}
    credited = EventLog(client).reached(detected.id, "credited")
    assert credited.destination == {"address": solana, "chain_id": 101}
    assert credited.explorer_url and credited.explorer_url.startswith("https://solscan.io/tx/")
    result = client.sweep_result(detected.id)
    assert result is not None and result.delivered is not None
    assert result.delivered.address == solana
    expected = delivered_usdc("10", gas_usd="0.01")
    assert result.delivered.raw_amount == expected
    assert net.ledger_balance(solana, CHAIN.SOLANA, "USDC") == expected
    assert net.ledger_balance(solana.lower(), CHAIN.SOLANA, "USDC") == 0


def test_the_watcher_finds_deposits_by_itself(net: Devnet, make_client: Any) -> None:
    client = make_client()
    evm = client.initialize().evm
    client.start_watching()
    assert client.is_watching and client.status == "watching"
    client.start_watching()  # already running: nothing happens
    net.deposit(evm, CHAIN.BASE, "ETH", Decimal("0.004"))
    log = EventLog(client)
    log.until(lambda events: any(e.type == "deposit:lifecycle" and e.phase == "credited" for e in events))
    [credited] = [e for e in log.lifecycle() if e.phase == "credited"]
    assert credited.amount == "0.004"
    client.stop_watching()
    assert not client.is_watching and client.status == "ready"
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == delivered_usdc("10")


def test_own_project_id_pays_the_service_fee(net: Devnet, make_client: Any) -> None:
    client = make_client(ua_project_id="my-project")
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.BASE, "USDC", "10")
    [detected] = client.poll_now()
    EventLog(client).reached(detected.id, "credited")
    result = client.sweep_result(detected.id)
    assert result is not None and result.delivered is not None
    assert result.delivered.fees["service_usd"] == 0.1
    assert result.delivered.raw_amount == delivered_usdc("10", service=True)
