"""Funding latency on the real local chains (docs/funding.md §1): how long a host waits for
``get_wallet_balances()``, for ``fund_from_wallet()`` (built, sent through the wallet, receipt or
confirmation awaited), and from the funding transfer to the ``credited`` event of its sweep by a
chain-backed devnet (detection, quote, signature, collection and delivery as real transactions).

    scripts/chains-install.sh && scripts/python-env.sh --release
    .venv/bin/python benches/funding_latency.py [--rounds 10]
    scripts/python-env.sh            # back to the debug build the tests use

Prints one line per measurement: median and p90 in milliseconds over the rounds.
"""

from __future__ import annotations

import argparse
import base64
import pathlib
import statistics
import sys
import time
from typing import Any, Callable

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import depositkit  # noqa: E402
from chains.launch import LocalChains  # noqa: E402
from solders.keypair import Keypair  # noqa: E402
from solders.transaction import Transaction  # noqa: E402

BASE, ARBITRUM, SOLANA = int(depositkit.CHAIN.BASE), int(depositkit.CHAIN.ARBITRUM), 101


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return (time.perf_counter() - start) * 1000.0, result


def report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    print(f"{name:<52} median {statistics.median(ordered):8.1f} ms   p90 {p90:8.1f} ms   (n={len(ordered)})")


def wait_credited(client: depositkit.DepositClient, deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        client.poll_now()
        while (event := client.next_event(0.05)) is not None:
            if isinstance(event, depositkit.DepositLifecycleEvent):
                if event.phase == "credited":
                    return
                if event.phase == "failed":
                    raise RuntimeError(f"deposit failed: {event.error}")
    raise TimeoutError("no credited event within the deadline")


class SolanaSigner:
    """A Phantom-style provider: signs the library-built transaction, sends it to the SVM."""

    def __init__(self, keypair: Keypair, rpc: Callable[..., Any]) -> None:
        self.keypair, self.rpc = keypair, rpc

    def __call__(self, method: str, params: Any) -> Any:
        if method == "connect":
            return {"publicKey": str(self.keypair.pubkey())}
        unsigned = Transaction.from_bytes(base64.b64decode(params["transaction"]))
        signed = Transaction([self.keypair], unsigned.message, unsigned.message.recent_blockhash)
        encoded = base64.b64encode(bytes(signed)).decode()
        return {"signature": self.rpc("sendTransaction", [encoded, {"encoding": "base64"}])}


def json_rpc(url: str) -> Callable[..., Any]:
    import json
    import urllib.request

    def call(method: str, params: Any) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["result"]

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    rounds = parser.parse_args().rounds

    with LocalChains() as chains, depositkit.Devnet(chains=chains) as devnet:
        rpc_urls = {c["chainId"]: c["rpcUrl"] for c in chains["evm"]}
        solana_url = chains["solana"]["rpcUrl"]
        base = json_rpc(rpc_urls[BASE])
        wallet = chains["evmDevAccounts"][7]["address"]
        usdc_base = next(c for c in chains["evm"] if c["chainId"] == BASE)["tokens"]["USDC"]["address"]
        with depositkit.DepositClient(
            "0x" + "5" * 40,
            {"chain_id": ARBITRUM, "token": "USDC"},
            services_url=devnet.services_url,
            funding={"enabled": True, "balance_provider": "rpc", "evm_rpc_urls": rpc_urls,
                     "solana_rpc_url": solana_url},
            min_polling_interval_ms=1, polling_interval_ms=1, sweep_retry_delay_ms=10,
        ) as client:
            client.initialize()
            client.set_evm_wallet(rpc_urls[BASE], address=wallet)

            def balance_of(chain: int, symbol: str) -> depositkit.FundingBalance:
                return next(b for b in client.get_wallet_balances()
                            if b.chain_id == chain and b.token == symbol)

            lookups, native, credited, erc20, solana = [], [], [], [], []
            for _ in range(rounds):
                ms, _ = timed(client.get_wallet_balances)
                lookups.append(ms)
                eth = balance_of(BASE, "ETH")
                ms, _ = timed(lambda: client.fund_from_wallet(eth, raw_amount=10**15))
                native.append(ms)
                ms, _ = timed(lambda: wait_credited(client))
                credited.append(ms)
                # 10 USDC from the test token's open mint, then the whole token balance.
                mint = "0x40c10f19" + wallet[2:].lower().rjust(64, "0") + format(10_000_000, "064x")
                base("eth_sendTransaction", [{"from": wallet, "to": usdc_base, "data": mint}])
                usdc = balance_of(BASE, "USDC")
                ms, _ = timed(lambda: client.fund_from_wallet(usdc))
                erc20.append(ms)
                wait_credited(client)

            keypair = Keypair()
            svm = json_rpc(solana_url)
            svm("requestAirdrop", [str(keypair.pubkey()), 1_000 * 10**9])
            client.set_solana_wallet(SolanaSigner(keypair, svm), address=str(keypair.pubkey()))
            for _ in range(rounds):
                sol = balance_of(SOLANA, "SOL")
                ms, _ = timed(lambda: client.fund_from_wallet(sol, raw_amount=10**8))
                solana.append(ms)
                wait_credited(client)

    report("get_wallet_balances (rpc: 4 anvils + SVM)", lookups)
    report("fund_from_wallet, 0.001 ETH on Base (URL wallet)", native)
    report("fund_from_wallet, all USDC on Base (URL wallet)", erc20)
    report("fund_from_wallet, 0.1 SOL (Python signer)", solana)
    report("ETH funding tx → credited (chain-backed sweep)", credited)


if __name__ == "__main__":
    main()
