"""Times depositkit's Python functions against well-known pure-Python peers, on the same inputs.

How to run it (from the repository root)::

    scripts/python-env.sh --release           # optimized build of depositkit._native into .venv
    .venv/bin/python benches/compare_python.py
    scripts/python-env.sh                     # back to the debug build the tests use

The release build matters: a debug build of the extension is several times slower, so the script
refuses to time one unless given ``--allow-debug``. ``scripts/python-env.sh`` also installs the
peers (eth-utils with eth-hash[pycryptodome], base58); a peer that is not installed is skipped.

What is compared (every pair runs on the same deterministically generated inputs, 10,000 by
default, and their answers are checked to agree before timing):

- ``is_valid_evm_address`` vs ``eth_utils.is_checksum_address`` and ``eth_utils.is_address``.
  The inputs are EIP-55 checksummed addresses, so all three say True; note that since eth-utils 5
  ``is_address`` checks only the shape, not a mixed-case checksum.
- ``is_valid_solana_address`` vs ``len(base58.b58decode(s)) == 32``.
- ``format_units`` / ``parse_units`` vs a pure-Python peer built on ``decimal.Decimal``
  (random amounts below 2**256 at 6, 9 and 18 decimals).

Each timing is the best of ``--repeat`` runs over all inputs (``timeit``); the output gives the
time per call and the ratio peer / depositkit (above 1: depositkit is faster).
"""

from __future__ import annotations

import argparse
import collections
import decimal
import itertools
import random
import sys
import timeit
from typing import Any, Callable, Iterable, Optional

import depositkit
from depositkit import _native

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58encode(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, rem = divmod(n, 58)
        out = B58_ALPHABET[rem] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def optional_import(name: str) -> Optional[Any]:
    try:
        return __import__(name)
    except ImportError:
        return None


# --- the Decimal-based peer of format_units / parse_units ------------------------------------

_CTX = decimal.Context(prec=120, traps=[decimal.Inexact, decimal.InvalidOperation])


def decimal_format_units(raw: int, decimals: int) -> str:
    if raw < 0 or raw >= 2**256 or not 0 <= decimals <= 77:
        raise ValueError(f"bad input {raw}, {decimals}")
    text = format(_CTX.scaleb(decimal.Decimal(raw), -decimals), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def decimal_parse_units(text: str, decimals: int) -> int:
    # Decimal accepts more than parse_units does ("1e6", " 1", "-1"); reject those like it.
    if not text or text.strip("0123456789.") or text.count(".") > 1 or text == ".":
        raise ValueError(f"invalid amount {text!r}")
    scaled = _CTX.scaleb(decimal.Decimal(text), decimals)
    value = int(scaled)
    if value != scaled or value >= 2**256:
        raise ValueError(f"invalid amount {text!r}")
    return value


# --- timing ----------------------------------------------------------------------------------


def best_time(run: Callable[[], object], repeat: int) -> float:
    return min(timeit.repeat(run, number=1, repeat=repeat))


def consume(iterable: Iterable[object]) -> None:
    collections.deque(iterable, maxlen=0)


def time_unary(function: Callable[[Any], object], inputs: list[Any], repeat: int) -> float:
    return best_time(lambda: consume(map(function, inputs)), repeat)


def time_binary(function: Callable[[Any, Any], object], inputs: list[tuple[Any, Any]], repeat: int) -> float:
    return best_time(lambda: consume(itertools.starmap(function, inputs)), repeat)


class Report:
    def __init__(self, n: int) -> None:
        self.n = n
        print(f"{'operation':<30} {'peer':<34} {'depositkit':>13} {'peer':>13} {'peer/dk':>8}")
        print("-" * 102)

    def row(self, operation: str, peer: str, ours: float, theirs: Optional[float]) -> None:
        per_call = lambda seconds: f"{seconds / self.n * 1e6:9.3f} us"  # noqa: E731
        if theirs is None:
            print(f"{operation:<30} {peer:<34} {per_call(ours):>13} {'skipped':>13} {'-':>8}")
        else:
            print(f"{operation:<30} {peer:<34} {per_call(ours):>13} {per_call(theirs):>13} {theirs / ours:7.1f}x")


def check_agreement(name: str, ours: list[object], theirs: list[object]) -> None:
    mismatches = sum(1 for a, b in zip(ours, theirs) if a != b)
    if mismatches:
        sys.exit(f"{name}: depositkit and the peer disagree on {mismatches} inputs; not timing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="inputs per comparison (10000)")
    parser.add_argument("--repeat", type=int, default=7, help="timing runs, best taken (7)")
    parser.add_argument("--seed", type=int, default=20240601, help="seed of the inputs")
    parser.add_argument("--allow-debug", action="store_true", help="time a debug build anyway")
    args = parser.parse_args()

    if _native._DEBUG_BUILD and not args.allow_debug:
        sys.exit(
            "depositkit._native is a debug build; run `scripts/python-env.sh --release` first "
            "(or pass --allow-debug)"
        )

    eth_utils = optional_import("eth_utils")
    base58 = optional_import("base58")
    rng = random.Random(args.seed)
    n, repeat = args.n, args.repeat

    print(
        f"depositkit {depositkit.__version__} ({'debug' if _native._DEBUG_BUILD else 'release'} build), "
        f"Python {sys.version.split()[0]}, {n} inputs, best of {repeat}"
    )
    report = Report(n)

    # EVM addresses: EIP-55 checksummed when eth_utils can compute it, else all lower case.
    raw_addresses = ["0x" + rng.getrandbits(160).to_bytes(20, "big").hex() for _ in range(n)]
    if eth_utils is not None:
        evm = [eth_utils.to_checksum_address(a) for a in raw_addresses]
    else:
        evm = raw_addresses
    ours = time_unary(depositkit.is_valid_evm_address, evm, repeat)
    expected = [depositkit.is_valid_evm_address(a) for a in evm]
    for peer_name in ("is_checksum_address", "is_address"):
        label = f"eth_utils.{peer_name}"
        if eth_utils is None:
            report.row("is_valid_evm_address", label, ours, None)
            continue
        peer = getattr(eth_utils, peer_name)
        check_agreement(label, expected, [peer(a) for a in evm])
        report.row("is_valid_evm_address", label, ours, time_unary(peer, evm, repeat))

    # Solana addresses: base58 of random 32-byte keys.
    solana = [b58encode(rng.randbytes(32)) for _ in range(n)]
    ours = time_unary(depositkit.is_valid_solana_address, solana, repeat)
    if base58 is None:
        report.row("is_valid_solana_address", "base58.b58decode + len == 32", ours, None)
    else:

        def base58_is_key(text: str) -> bool:
            try:
                return len(base58.b58decode(text)) == 32
            except ValueError:
                return False

        check_agreement("base58", [depositkit.is_valid_solana_address(s) for s in solana], [base58_is_key(s) for s in solana])
        report.row("is_valid_solana_address", "base58.b58decode + len == 32", ours, time_unary(base58_is_key, solana, repeat))

    # Units: random amounts of every size below 2**256, at common decimals counts.
    amounts = [(rng.getrandbits(rng.randint(1, 256)), rng.choice((6, 9, 18))) for _ in range(n)]
    texts = [(depositkit.format_units(raw, d), d) for raw, d in amounts]
    check_agreement("format_units", [t for t, _ in texts], [decimal_format_units(raw, d) for raw, d in amounts])
    check_agreement("parse_units", [raw for raw, _ in amounts], [decimal_parse_units(t, d) for t, d in texts])
    report.row(
        "format_units",
        "Decimal.scaleb + format",
        time_binary(depositkit.format_units, amounts, repeat),
        time_binary(decimal_format_units, amounts, repeat),
    )
    report.row(
        "parse_units",
        "Decimal(text).scaleb + int",
        time_binary(depositkit.parse_units, texts, repeat),
        time_binary(decimal_parse_units, texts, repeat),
    )


if __name__ == "__main__":
    main()
