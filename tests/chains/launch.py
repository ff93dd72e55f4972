"""Starts the local chains of the tests and prints the chains file (docs/funding.md §1).

One anvil per EVM chain (``--chain-id`` 1, 56, 8453, 42161 by default, each on a free loopback
port) with the test token's code at the real USDC/USDT addresses, and the Solana JSON-RPC server
over LiteSVM (svm_rpc.py) with the USDC/USDT mints at their real addresses::

    .venv/bin/python tests/chains/launch.py [--evm 1,8453] [--no-solana] [--out FILE]

prints ONE JSON line, the chains file (``{"evm": [...], "solana": {...}, "evmDevAccounts":
[...]}``; ``--out`` writes it to FILE too), then runs until its stdin closes or it gets SIGTERM or
SIGINT, and stops every chain. A missing anvil binary, token fixture or solders is exit code 3 with
a message naming it and the script that installs it. From Python (tests/ on ``sys.path``)::

    with chains.launch.LocalChains(evm=(1, 8453), solana=True) as info:
        info["evm"][0]["rpcUrl"]

The chains are children of the launcher and get SIGKILL when it dies, however it dies.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import importlib.util
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
import types
import urllib.request
from typing import Any, Callable, Iterable, Optional

ROOT = pathlib.Path(__file__).resolve().parents[2]
ANVIL = ROOT / ".chains/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"
TOKEN_FIXTURE = ROOT / "tests/chains/fixtures/TestToken.json"
SVM_RPC = ROOT / "tests/chains/svm_rpc.py"

# depositkit_core::tokens::token_info's addresses: chain id -> symbol -> (address, decimals).
EVM_TOKENS = {
    1: {
        "USDC": ("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", 6),
        "USDT": ("0xdAC17F958D2ee523a2206206994597C13D831ec7", 6),
    },
    56: {
        "USDC": ("0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d", 18),
        "USDT": ("0x55d398326f99059fF775485246999027B3197955", 18),
    },
    8453: {
        "USDC": ("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 6),
        "USDT": ("0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2", 6),
    },
    42161: {
        "USDC": ("0xaf88d065e77c8cC2239327C5EDb3A432268e5831", 6),
        "USDT": ("0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", 6),
    },
}
TOKEN_NAMES = {"USDC": "USD Coin", "USDT": "Tether USD"}
# The mints svm_rpc.py creates (its MINTS; not imported, as it needs solders).
SOLANA_MINTS = {
    "USDC": ("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 6),
    "USDT": ("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", 6),
}
# anvil's development accounts (mnemonic "test test test test test test test test test test test
# junk"), unlocked and funded with 10,000 native units on every chain.
EVM_DEV_ACCOUNTS = [
    (
        "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    ),
    (
        "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    ),
    (
        "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
        "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    ),
    (
        "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
        "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    ),
    (
        "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
        "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
    ),
    (
        "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
        "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
    ),
    (
        "0x976EA74026E726554dB657fA54763abd0C3a0aa9",
        "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
    ),
    (
        "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
        "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
    ),
    (
        "0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f",
        "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
    ),
    (
        "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
        "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
    ),
]

STARTUP_TIMEOUT = 30.0  # seconds for a chain to print its "Listening on" line
STOP_TIMEOUT = 5.0  # seconds between SIGTERM and SIGKILL
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
EXIT_MISSING = 3


class MissingPrerequisite(RuntimeError):
    """Something the chains need is not installed; the message says what and how to install it."""


def check_prerequisites(evm: Iterable[int], solana: bool) -> None:
    missing = []
    if list(evm):
        if not os.access(ANVIL, os.X_OK):
            missing.append(f"the anvil binary {ANVIL} (scripts/chains-install.sh installs it)")
        if not TOKEN_FIXTURE.is_file():
            missing.append(
                f"the test token fixture {TOKEN_FIXTURE} (scripts/chains-install.sh, then"
                " tests/chains/compile-token.sh builds it)"
            )
    if solana:
        if not SVM_RPC.is_file():
            missing.append(f"the Solana RPC server {SVM_RPC}")
        if importlib.util.find_spec("solders") is None:
            missing.append(
                f"the Python package solders in {sys.executable} (scripts/python-env.sh installs it)"
            )
    if missing:
        raise MissingPrerequisite("the local chains cannot start; missing: " + "; ".join(missing))


def die_with_launcher() -> Callable[[], None]:
    """A ``preexec_fn`` making the child get SIGKILL when the launcher dies (Linux's
    PR_SET_PDEATHSIG), even when the launcher itself is killed with SIGKILL. The signal follows
    the *thread* that started the child, so start the chains from a thread that outlives them."""
    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork: only prctl runs after it
    launcher = os.getpid()

    def preexec() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != launcher:  # the launcher died before prctl took effect
            os._exit(1)

    return preexec


class Chain:
    """A chain process: started at once, ready when it prints ``Listening on HOST:PORT``. Its
    output (stdout and stderr) is drained for as long as it runs, keeping the last lines for
    error messages: anvil logs every RPC call and would block on a full pipe."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.url: Optional[str] = None
        self.output: collections.deque[str] = collections.deque(maxlen=40)
        self.ready = threading.Event()
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            preexec_fn=die_with_launcher(),
        )
        self.reader = threading.Thread(target=self.read, name=f"{name}-output", daemon=True)
        self.reader.start()

    def read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = line.rstrip()
            self.output.append(line)
            if self.url is None and line.startswith("Listening on "):
                self.url = "http://" + line.split()[-1]
                self.ready.set()
        self.ready.set()  # the chain exited: wake wait_ready, which sees no url

    def wait_ready(self, deadline: float) -> str:
        self.ready.wait(max(0.0, deadline - time.monotonic()))
        if self.url is None:
            state = (
                "did not start in time"
                if self.process.poll() is None
                else f"exited with {self.process.returncode}"
            )
            last = "\n".join(self.output) or "(no output)"
            raise RuntimeError(f"{self.name} {state}; its last output:\n{last}")
        return self.url

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reader.join(STOP_TIMEOUT)
        assert self.process.stdout is not None
        self.process.stdout.close()


def rpc(url: str, method: str, params: list[Any]) -> Any:
    """A JSON-RPC call; an error answer raises RuntimeError."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    if "error" in answer:
        raise RuntimeError(f"{method} at {url}: {answer['error']}")
    return answer["result"]


def constructor_args(name: str, symbol: str, decimals: int) -> str:
    """ABI encoding of TestToken's ``(string name, string symbol, uint8 decimals)``, as hex."""

    def word(value: int) -> bytes:
        return value.to_bytes(32, "big")

    def dynamic(data: bytes) -> bytes:
        return word(len(data)) + data.ljust(-(-len(data) // 32) * 32, b"\0")

    name_part, symbol_part = dynamic(name.encode()), dynamic(symbol.encode())
    head = word(3 * 32) + word(3 * 32 + len(name_part)) + word(decimals)
    return (head + name_part + symbol_part).hex()


def wait_for_receipt(url: str, tx_hash: str) -> dict[str, Any]:
    """The transaction's receipt. anvil mines on send, but answers the hash before the block is
    in, so the receipt can be null for a moment."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while (receipt := rpc(url, "eth_getTransactionReceipt", [tx_hash])) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"transaction {tx_hash} at {url} was not mined within {STARTUP_TIMEOUT:.0f} s")
        time.sleep(0.005)
    return receipt


def install_tokens(url: str, chain_id: int, bytecode: str) -> dict[str, dict[str, Any]]:
    """Deploys a TestToken per token of the chain from dev account 0 and copies its runtime code
    (decimals included: an immutable) to the token's real address."""
    tokens = {}
    for symbol, (address, decimals) in EVM_TOKENS[chain_id].items():
        data = bytecode + constructor_args(TOKEN_NAMES[symbol], symbol, decimals)
        tx_hash = rpc(url, "eth_sendTransaction", [{"from": EVM_DEV_ACCOUNTS[0][0], "data": data}])
        receipt = wait_for_receipt(url, tx_hash)
        if receipt["status"] != "0x1":
            raise RuntimeError(f"deploying TestToken ({symbol}) on chain {chain_id} failed: {receipt}")
        code = rpc(url, "eth_getCode", [receipt["contractAddress"], "latest"])
        rpc(url, "anvil_setCode", [address, code])
        tokens[symbol] = {"address": address, "decimals": decimals}
    return tokens


class LocalChains:
    """The local chains as a context manager: ``__enter__`` starts them and returns the chains
    file's dict, ``__exit__`` stops them. Raises MissingPrerequisite (a RuntimeError) when
    something is not installed."""

    def __init__(self, evm: Iterable[int] = tuple(EVM_TOKENS), solana: bool = True) -> None:
        self.evm = tuple(evm)
        unknown = [chain_id for chain_id in self.evm if chain_id not in EVM_TOKENS]
        if unknown:
            raise ValueError(f"unknown EVM chain ids {unknown}; known: {sorted(EVM_TOKENS)}")
        self.solana = solana
        self.chains: list[Chain] = []
        self.info: Optional[dict[str, Any]] = None
        self.startup_seconds: Optional[float] = None

    def __enter__(self) -> dict[str, Any]:
        check_prerequisites(self.evm, self.solana)
        started = time.monotonic()
        try:
            self.info = self.start()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self.info

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> dict[str, Any]:
        # Every process starts first, so they boot in parallel.
        evm_chains = {
            chain_id: self.spawn(
                f"anvil (chain {chain_id})",
                [str(ANVIL), "--host", "127.0.0.1", "--port", "0", "--chain-id", str(chain_id)],
            )
            for chain_id in self.evm
        }
        svm = self.spawn("svm_rpc", [sys.executable, str(SVM_RPC), "--port", "0"]) if self.solana else None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        bytecode = json.loads(TOKEN_FIXTURE.read_text(encoding="utf-8"))["bytecode"] if self.evm else ""
        info: dict[str, Any] = {"evm": []}
        for chain_id, chain in evm_chains.items():
            url = chain.wait_ready(deadline)
            info["evm"].append(
                {"chainId": chain_id, "rpcUrl": url, "tokens": install_tokens(url, chain_id, bytecode)}
            )
        if svm is not None:
            info["solana"] = {
                "rpcUrl": svm.wait_ready(deadline),
                "mints": {
                    symbol: {"address": address, "decimals": decimals}
                    for symbol, (address, decimals) in SOLANA_MINTS.items()
                },
            }
        info["evmDevAccounts"] = [{"address": a, "privateKey": k} for a, k in EVM_DEV_ACCOUNTS]
        return info

    def spawn(self, name: str, argv: list[str]) -> Chain:
        chain = Chain(name, argv)
        self.chains.append(chain)
        return chain

    def stop(self) -> None:
        for chain in self.chains:
            if chain.process.poll() is None:
                chain.process.terminate()
        for chain in self.chains:
            chain.stop()
        self.chains.clear()


class Stop(Exception):
    """Raised in the main thread by SIGTERM or SIGINT."""


def on_signal(signum: int, frame: Optional[types.FrameType]) -> None:
    # Once is enough: further signals must not interrupt the shutdown.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Stop(signal.Signals(signum).name)


def wait_for_stop(ignore_stdin: bool) -> None:
    """Returns when stdin reaches EOF (its writer closed it or died); a signal raises Stop."""
    if ignore_stdin or sys.stdin is None:
        while True:
            signal.pause()
    while sys.stdin.buffer.read(65536):
        pass


def write_atomically(path: pathlib.Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--evm",
        default=",".join(map(str, EVM_TOKENS)),
        help="comma-separated EVM chain ids to start (default: %(default)s; empty: none)",
    )
    parser.add_argument("--no-solana", action="store_true", help="do not start the Solana chain")
    parser.add_argument("--out", type=pathlib.Path, help="also write the chains file here")
    parser.add_argument(
        "--ignore-stdin",
        action="store_true",
        help="run until SIGTERM/SIGINT even when stdin closes (e.g. started by a shell with stdin"
        " at /dev/null)",
    )
    args = parser.parse_args(argv)
    try:
        evm = [int(part) for part in args.evm.split(",") if part.strip()]
    except ValueError:
        parser.error(f"--evm: not a list of chain ids: {args.evm!r}")
    if unknown := [chain_id for chain_id in evm if chain_id not in EVM_TOKENS]:
        parser.error(f"--evm: unknown chain ids {unknown}; known: {sorted(EVM_TOKENS)}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    chains = LocalChains(evm=evm, solana=not args.no_solana)
    try:
        with chains as info:
            line = json.dumps(info)
            if args.out is not None:
                write_atomically(args.out, line + "\n")
            print(line, flush=True)
            print(
                f"launch: local chains ready in {chains.startup_seconds:.2f} s", file=sys.stderr, flush=True
            )
            wait_for_stop(args.ignore_stdin)
    except MissingPrerequisite as error:
        print(f"launch: {error}", file=sys.stderr)
        return EXIT_MISSING
    except Stop:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
