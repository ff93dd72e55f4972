"""The README's Python deposit example runs as written (so the README cannot drift)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def _snippet(heading: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("```python", text.index(heading)) + len("```python")
    return text[start : text.index("```", start)]


def test_deposit_example_delivers_to_the_destination():
    run = subprocess.run(
        [sys.executable, "-c", _snippet("### Python: deposits")],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["detected", "processing", "credited"], run.stdout
    assert "https://arbiscan.io/tx/0x" in lines[2]
    # 25 USDC less the quote's fees ($0.08 on devnet's default price table), in raw units.
    assert lines[3:] == ["24920000"], run.stdout


def test_funding_example_delivers_real_usdc(local_chains):
    env = {**os.environ, "DEPOSITKIT_CHAINS": json.dumps(local_chains)}
    run = subprocess.run(
        [sys.executable, "-c", _snippet("### Python: fund from a wallet")],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "sent 0.001 ETH 0x", run.stdout
    # 0.001 ETH at 2500 = $2.50, less Arbitrum gas $0.03 and 0.2% LP ($0.005): 2.465 USDC.
    assert lines[1:] == ["2465000"], run.stdout
