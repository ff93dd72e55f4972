"""depositkit from Python, end to end, on a devnet embedded in this process: a deposit client
gets its deposit addresses, three deposits arrive (two are swept to USDC on Arbitrum, one is below
the minimum), every lifecycle phase is printed as it happens, and the destination's balance is
read back from devnet's ledger. A short validation tour comes first and a user lookup last.

Run it with ``scripts/demo.sh`` (which builds the package first), or ``.venv/bin/python
examples/demo.py``. It needs no network and finishes in a few seconds.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import depositkit
from depositkit import CHAIN, TokenType

OWNER = "0x52908400098527886E0F7030069857D2E4169EE7"


def validation_tour() -> None:
    print(f"== depositkit {depositkit.__version__}: validation")
    for chain in (CHAIN.BASE, CHAIN.BNB, CHAIN.XLAYER):
        deliverable = [t.value for t in TokenType if depositkit.is_supported_destination_token(t, chain)]
        print(f"  {depositkit.get_chain_name(chain):<10} destination tokens: {', '.join(deliverable) or 'none'}")
    raw = depositkit.parse_units("25", depositkit.get_token_decimals(TokenType.USDC, CHAIN.BNB))
    print(f"  25 USDC on BNB Chain = {raw} smallest units (18 decimals there)")
    try:
        depositkit.DepositClient(OWNER, {"chain_id": CHAIN.BASE, "token": "USDT"}, services_url="http://127.0.0.1:1")
    except depositkit.ConfigurationError as exc:
        print(f"  USDT to Base -> ConfigurationError: {exc}")


def describe(event: depositkit.DepositLifecycleEvent) -> str:
    where = depositkit.get_chain_name(event.chain_id)
    text = f"[{event.phase}]".ljust(18) + f"{event.id[:12]}… {event.amount} {event.token} on {where} (${event.amount_usd:.2f})"
    if event.phase == "credited":
        text += f"\n{'':20}{event.explorer_url or event.transaction_id}"
    elif event.error:
        text += f": {event.error}"
    return text


def deposit_tour(devnet: depositkit.Devnet) -> None:
    print(f"== deposits on the embedded devnet ({devnet.services_url})")
    finished = threading.Event()
    outcomes: dict[str, str] = {}
    lock = threading.Lock()

    def on_deposit_event(event: depositkit.DepositLifecycleEvent) -> None:
        # Called on depositkit's event thread, in order, as each deposit changes phase.
        print("  " + describe(event), flush=True)
        with lock:
            if event.phase in ("credited", "failed", "below_threshold"):
                outcomes[event.id] = event.phase
            if len(outcomes) == 3:
                finished.set()

    with depositkit.DepositClient(
        OWNER,
        {"chain_id": CHAIN.ARBITRUM, "token": TokenType.USDC},  # the address defaults to the owner
        services_url=devnet.services_url,
        on_deposit_event=on_deposit_event,
        # Poll every 200 ms. min_polling_interval_ms is a test/devnet knob that lowers the
        # production minimum of 2000 ms (the default interval is 3000 ms).
        polling_interval_ms=200,
        min_polling_interval_ms=200,
    ) as client:
        addresses = client.initialize()
        destination = client.get_destination()
        print(f"  owner {client.owner_address}; destination {destination['token']} on "
              f"{depositkit.get_chain_name(destination['chain_id'])} to {destination['address']}")
        print(f"  deposit addresses: EVM {addresses.evm}, Solana {addresses.solana}")
        client.start_watching()
        for chain, token, amount in ((CHAIN.BASE, "ETH", "0.01"), (CHAIN.BNB, "USDC", "25"), (CHAIN.ARBITRUM, "USDC", "0.3")):
            tx = devnet.deposit(addresses.evm, chain, token, amount)
            print(f"  simulated deposit: {amount} {token} on {depositkit.get_chain_name(chain)} (tx {tx[:18]}…)")
        if not finished.wait(timeout=20):
            sys.exit("the deposits did not all reach a final phase within 20 s")
        client.stop_watching()
        delivered: list[Any] = []
        for deposit_id, phase in outcomes.items():
            result = client.sweep_result(deposit_id)
            if phase == "credited" and result is not None and result.delivered is not None:
                delivered.append(result.delivered)
        balance = devnet.ledger_balance(destination["address"], destination["chain_id"], destination["token"])
        parts = " + ".join(f"{d.amount} (fees ${d.fees['total_usd']:.2f})" for d in delivered)
        print(f"  credited at the destination: {depositkit.format_units(balance, 6)} USDC on Arbitrum "
              f"for {destination['address']} = {parts}")
        if len(delivered) != 2 or balance != sum(d.raw_amount for d in delivered):
            sys.exit(f"unexpected outcome: {outcomes}, balance {balance}")


def lookup_tour(devnet: depositkit.Devnet) -> None:
    print("== user lookup on the same devnet")
    demo = devnet.demo_credentials()
    with depositkit.UserRpcClient(devnet.user_rpc_url, demo["project_id"], demo["server_key"]) as client:
        user = client.get_user_info(demo["user_uuid"], demo["user_token"])
        print(f"  getUserInfo: {user.email}, {len(user.wallets)} wallets; "
              f"isProjectUser: {client.is_project_user('evm_chain', demo['evm_address'])}")
        try:
            client.get_user_info(demo["user_uuid"], "not-the-token")
        except depositkit.AuthenticationError as exc:
            print(f"  wrong token -> AuthenticationError (rpc code {exc.rpc_code})")


if __name__ == "__main__":
    validation_tour()
    with depositkit.Devnet() as devnet:
        deposit_tour(devnet)
        lookup_tour(devnet)
