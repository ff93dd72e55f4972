"""Times depositkit.UserRpcClient against requests and httpx on the same devnet server.

How to run it (from the repository root)::

    scripts/python-env.sh --release                # optimized build of depositkit._native
    cargo build --release -p depositkit-devnet     # optimized server (else the debug one is used)
    .venv/bin/python benches/compare_user_rpc.py
    scripts/python-env.sh                          # back to the debug build the tests use

``--devnet PATH`` (repeatable) runs the given server binaries one after the other with the same
clients, e.g. a copy of ``target/release/depositkit-devnet`` built before a change and the new
one: before and after in one run.

It starts one ``depositkit-devnet serve --demo`` on 127.0.0.1 (from ``target/release`` when
built, else ``target/debug``; the output says which) on a fresh SQLite file, and stops it at the
end. Traffic goes to loopback only; each run is bounded (``--calls`` per client and method).

What is compared, per method (``isProjectUser``, ``getUserInfo``), with ``--calls`` sequential
calls each (2,000 by default) after ``--warmup`` untimed ones:

- ``depositkit.UserRpcClient``: the Rust core's pooled ureq agent, called through the binding
  (GIL released, the call on a worker thread, Ctrl-C checked every 0.1 s);
- ``requests.Session``: keep-alive, the same Basic auth and JSON-RPC body, ``response.json()``
  and the ``result`` checked;
- ``httpx.Client``: the same, when httpx is installed.

Every client's answer is checked to agree before timing. The output gives the mean, median and
99th percentile per call in microseconds, and the ratio peer / depositkit of the means (above 1:
depositkit is faster). A debug build of the extension is refused unless ``--allow-debug``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Optional

import depositkit
from depositkit import _native

ROOT = pathlib.Path(__file__).resolve().parents[1]


def target_dir() -> pathlib.Path:
    try:
        out = subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"],
            cwd=ROOT, capture_output=True, text=True, check=True, timeout=120,
        )
        return pathlib.Path(json.loads(out.stdout)["target_directory"])
    except (OSError, subprocess.SubprocessError, ValueError, KeyError):
        return pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def find_devnet() -> tuple[pathlib.Path, str]:
    target = target_dir()
    for profile in ("release", "debug"):
        binary = target / profile / "depositkit-devnet"
        if binary.is_file():
            return binary, profile
    sys.exit(f"no depositkit-devnet under {target}: run `cargo build --release -p depositkit-devnet`")


class Server:
    """``depositkit-devnet serve --demo`` on 127.0.0.1:0 with a fresh database."""

    def __init__(self, binary: pathlib.Path, tmp: pathlib.Path) -> None:
        self.process = subprocess.Popen(
            [str(binary), "serve", "--db", str(tmp / "devnet.sqlite"), "--listen", "127.0.0.1:0", "--demo"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
        )
        lines: queue.Queue[Optional[str]] = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None

        def read() -> None:
            for line in stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        self.creds: dict[str, str] = {}
        base = None
        deadline = time.monotonic() + 60
        while base is None:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                sys.exit(f"depositkit-devnet exited with {self.process.wait()} before listening")
            if line.startswith("{"):
                self.creds = json.loads(line)
            elif "listening on " in line:
                base = line.split("listening on ", 1)[1].strip()
        self.url = base + "/user-rpc"

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()
        return code


def json_rpc_peer(post: Callable[..., Any], url: str, auth: tuple[str, str]) -> Callable[[str, list[str]], Any]:
    """A call through ``post`` (``requests.Session.post`` or ``httpx.Client.post``) that sends the
    JSON-RPC request depositkit sends and returns the ``result``."""
    counter = iter(range(1, 1 << 62))
    headers = {"Accept": "application/json"}

    def call(method: str, params: list[str]) -> Any:
        request_id = next(counter)
        response = post(url, json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, auth=auth, headers=headers)
        if response.status_code != 200:
            raise RuntimeError(f"{method}: HTTP {response.status_code}")
        body = response.json()
        if body.get("id") != request_id or "result" not in body:
            raise RuntimeError(f"{method}: unexpected reply {body!r}")
        return body["result"]

    return call


def time_calls(call: Callable[[], Any], calls: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        call()
    samples = []
    clock = time.perf_counter_ns
    for _ in range(calls):
        started = clock()
        call()
        samples.append((clock() - started) / 1000)
    return samples


def summary(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return statistics.fmean(samples), statistics.median(samples), p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per client and method (default 2000)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls first (default 200)")
    parser.add_argument("--allow-debug", action="store_true", help="time a debug build of the extension anyway")
    parser.add_argument("--rounds", type=int, default=1, help="run every server this many times, in turn (default 1)")
    parser.add_argument(
        "--devnet", type=pathlib.Path, action="append", default=[],
        help="the depositkit-devnet binary to run (default: target/release, else target/debug); "
        "given twice or more, every row is measured against each in turn, e.g. a copy built before a change",
    )
    args = parser.parse_args()
    if not 1 <= args.calls <= 100_000 or not 0 <= args.warmup <= 100_000 or not 1 <= args.rounds <= 100:
        parser.error("--calls must be 1..100000, --warmup 0..100000 and --rounds 1..100")
    if _native._DEBUG_BUILD and not args.allow_debug:
        sys.exit(
            "depositkit._native is a debug build: run scripts/python-env.sh --release first "
            "(or pass --allow-debug)"
        )

    peers: dict[str, Any] = {}
    try:
        import requests

        peers[f"requests {requests.__version__} Session"] = requests
    except ImportError:
        print("requests is not installed: skipped (scripts/python-env.sh installs it)")
    try:
        import httpx

        peers[f"httpx {httpx.__version__} Client"] = httpx
    except ImportError:
        print("httpx is not installed: skipped")

    if args.devnet:
        for binary in args.devnet:
            if not binary.is_file():
                sys.exit(f"--devnet {binary}: no such file")
        binaries = [(binary, str(binary)) for binary in args.devnet]
    else:
        binary, profile = find_devnet()
        binaries = [(binary, f"target/{profile}")]
    for _ in range(args.rounds):
        for binary, shown in binaries:
            compare(args, peers, binary, shown)


def compare(args: argparse.Namespace, peers: dict[str, Any], binary: pathlib.Path, shown: str) -> None:
    with tempfile.TemporaryDirectory(prefix="depositkit-bench-") as tmp:
        server = Server(binary, pathlib.Path(tmp))
        try:
            creds = server.creds
            auth = (creds["projectId"], creds["serverKey"])
            cases = [
                ("isProjectUser", "is_project_user", ["evm_chain", creds["evmAddress"]]),
                ("getUserInfo", "get_user_info", [creds["userUuid"], creds["userToken"]]),
            ]
            print(
                f"depositkit {depositkit.__version__} ({'debug' if _native._DEBUG_BUILD else 'release'} build of the extension), "
                f"devnet server {shown} ({binary}), Python {sys.version.split()[0]}, "
                f"{args.calls} sequential calls per row after {args.warmup} warm-up calls, one keep-alive connection each"
            )
            print()
            print(f"{'method':<15} {'client':<32} {'mean µs':>9} {'p50 µs':>9} {'p99 µs':>9} {'peer/dk (mean)':>15} {'(p50)':>7}")
            print("-" * 100)
            with depositkit.UserRpcClient(server.url, *auth) as ours:
                sessions: dict[str, Any] = {}
                for name, module in peers.items():
                    sessions[name] = module.Session() if name.startswith("requests") else module.Client()
                try:
                    for method, attribute, params in cases:
                        expected = getattr(ours, attribute)(*params)
                        rows: list[tuple[str, Callable[[], Any]]] = [
                            ("depositkit.UserRpcClient", lambda a=attribute, p=params: getattr(ours, a)(*p)),
                        ]
                        expected_wire = expected.to_dict() if hasattr(expected, "to_dict") else expected
                        for name, session in sessions.items():
                            call = json_rpc_peer(session.post, server.url, auth)
                            got = call(method, params)
                            if got != expected_wire:
                                sys.exit(f"{name} disagrees on {method}: {got!r} != {expected_wire!r}")
                            rows.append((name, lambda c=call, m=method, p=params: c(m, p)))
                        base_mean = base_p50 = 0.0
                        for name, run in rows:
                            mean, p50, p99 = summary(time_calls(run, args.calls, args.warmup))
                            if name.startswith("depositkit"):
                                base_mean, base_p50 = mean, p50
                                ratio = f"{'-':>15} {'-':>7}"
                            else:
                                ratio = f"{mean / base_mean:14.2f}x {p50 / base_p50:6.2f}x"
                            print(f"{method:<15} {name:<32} {mean:9.1f} {p50:9.1f} {p99:9.1f} {ratio}")
                finally:
                    for session in sessions.values():
                        session.close()
        finally:
            code = server.stop()
            if code != 0:
                print(f"warning: depositkit-devnet exited with {code}", file=sys.stderr)


if __name__ == "__main__":
    main()
