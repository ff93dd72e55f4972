"""Shared helpers of the depositkit Python suite.

Run from the repository root after ``scripts/python-env.sh``::

    .venv/bin/pytest tests/python -q

The ``devnet`` fixture builds and runs the depositkit-devnet server (it needs ``cargo``).
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import json
import pathlib
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Iterator, Optional, Union

import pytest


def _require_installed_wheel() -> None:
    """The suite tests depositkit as installed from its wheel (scripts/python-env.sh builds the
    wheel and installs it into .venv's site-packages), never the sources in python/py_src: an
    editable install or a sys.path entry pointing there would hide a file the wheel lacks."""
    import sysconfig

    import depositkit

    package = pathlib.Path(depositkit.__file__).resolve().parent
    sources = pathlib.Path(__file__).resolve().parents[2] / "python"
    site_packages = {
        pathlib.Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")
    }
    if package.parent not in site_packages or sources in package.parents:
        pytest.exit(
            f"depositkit was imported from {package}, not from the installed wheel in "
            f"{' or '.join(sorted(map(str, site_packages)))}: run scripts/python-env.sh",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


_require_installed_wheel()

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58encode(data: bytes) -> str:
    """Base58 (Bitcoin alphabet), written out here so the suite needs no third-party encoder."""
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, rem = divmod(n, 58)
        out = B58_ALPHABET[rem] + out
    leading_zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * leading_zeros + out


@contextlib.contextmanager
def raises_exactly(
    cls: type[BaseException], *fragments: str, builtin: Optional[type[BaseException]] = None
) -> Iterator[pytest.ExceptionInfo[BaseException]]:
    """Expects an exception of exactly ``cls`` (not a subclass, not a parent) whose message
    contains every fragment, and which is also an instance of ``builtin`` when given."""
    with pytest.raises(BaseException) as info:
        yield info
    assert type(info.value) is cls, f"expected {cls.__name__}, got {type(info.value)!r}: {info.value}"
    if builtin is not None:
        assert isinstance(info.value, builtin)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


# --- the devnet user-lookup server (tests/python/test_user_rpc.py) ------------------------------

ROOT = pathlib.Path(__file__).resolve().parents[2]


def build_devnet() -> pathlib.Path:
    """``cargo build -p depositkit-devnet`` (a no-op when fresh); returns the binary's path as
    cargo reports it, so a custom ``CARGO_TARGET_DIR`` is honoured."""
    out = subprocess.run(
        ["cargo", "build", "-q", "-p", "depositkit-devnet", "--message-format=json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert out.returncode == 0, f"cargo build -p depositkit-devnet failed:\n{out.stderr}"
    for line in out.stdout.splitlines():
        message = json.loads(line)
        if (
            message.get("reason") == "compiler-artifact"
            and message.get("target", {}).get("name") == "depositkit-devnet"
            and message.get("executable")
        ):
            return pathlib.Path(message["executable"])
    raise AssertionError("cargo did not report the depositkit-devnet executable")


@dataclasses.dataclass
class Devnet:
    """A running ``depositkit-devnet serve --demo --enable-fault-injection`` on 127.0.0.1."""

    binary: pathlib.Path
    db: pathlib.Path
    base: str
    """``http://127.0.0.1:PORT``."""
    creds: dict[str, str]
    """The demo credentials line: projectId, serverKey, userUuid, userToken, jwtUid,
    evmAddress, solanaAddress."""
    process: subprocess.Popen[str]

    @property
    def url(self) -> str:
        """The JSON-RPC service URL, the client's ``base_url``."""
        return self.base + "/user-rpc"

    def cli(self, *args: str) -> str:
        """Runs ``depositkit-devnet --db <db> ARGS...`` against the server's database; returns
        its stdout, stripped."""
        out = subprocess.run(
            [str(self.binary), "--db", str(self.db), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, f"depositkit-devnet {' '.join(args)}: {out.stderr}"
        return out.stdout.strip()

    def client(self, **options: Any) -> Any:
        import depositkit

        return depositkit.UserRpcClient(
            self.url, self.creds["projectId"], self.creds["serverKey"], **options
        )

    def faults(self, method: str, fault: Optional[dict[str, Any]] = None) -> Any:
        """``GET``/``POST``/``DELETE {base}/devnet/faults``; returns the pending faults."""
        data = None if fault is None else json.dumps(fault).encode()
        request = urllib.request.Request(
            self.base + "/devnet/faults",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())["pending"]

    def inject(self, **fault: Any) -> None:
        """Arms a fault: ``inject(status=429, count=2, retryAfter=0)``, ``inject(delayMs=1500)``."""
        self.faults("POST", fault)

    def post(
        self,
        body: Union[bytes, str, Any],
        *,
        auth: Optional[tuple[str, str]] = None,
        content_type: str = "application/json",
        method: str = "POST",
    ) -> tuple[int, dict[str, str], Any]:
        """Sends ``body`` (bytes or text as is, anything else as JSON) to the service with
        urllib, with the demo project's Basic auth unless ``auth`` says otherwise. Returns
        ``(status, headers with lower-case names, parsed JSON body or None when empty)``; error
        statuses too."""
        if isinstance(body, str):
            data = body.encode()
        elif isinstance(body, bytes):
            data = body
        else:
            data = json.dumps(body).encode()
        user, key = auth or (self.creds["projectId"], self.creds["serverKey"])
        token = base64.b64encode(f"{user}:{key}".encode()).decode()
        request = urllib.request.Request(
            self.url,
            data=data if method == "POST" else None,
            method=method,
            headers={"Content-Type": content_type, "Authorization": f"Basic {token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, headers, raw = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, headers, raw = error.code, error.headers, error.read()
            error.close()
        lowered = {name.lower(): value for name, value in headers.items()}
        return status, lowered, (json.loads(raw) if raw else None)


@pytest.fixture(scope="session")
def devnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Devnet]:
    """One devnet server for the whole session, on a fresh SQLite file; SIGTERM at the end
    (and it must exit 0)."""
    binary = build_devnet()
    tmp = tmp_path_factory.mktemp("devnet")
    db = tmp / "devnet.sqlite"
    stderr = open(tmp / "stderr.log", "w+", encoding="utf-8")  # noqa: SIM115 - closed at teardown
    process = subprocess.Popen(
        [str(binary), "serve", "--db", str(db), "--listen", "127.0.0.1:0", "--demo", "--enable-fault-injection"],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        encoding="utf-8",
    )
    lines: queue.Queue[Optional[str]] = queue.Queue()

    def read_stdout() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read_stdout, name="devnet-stdout", daemon=True)
    reader.start()
    creds: Optional[dict[str, str]] = None
    base: Optional[str] = None
    deadline = time.monotonic() + 60
    try:
        while base is None:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("depositkit-devnet did not report its address within 60 s") from None
            if line is None:
                stderr.seek(0)
                raise AssertionError(f"depositkit-devnet exited with {process.wait()}: {stderr.read()}")
            line = line.strip()
            if line.startswith("{"):
                creds = json.loads(line)
            elif "listening on " in line:
                base = line.split("listening on ", 1)[1].strip()
        assert creds is not None, "no demo credentials line before the listening line"
        assert base.startswith("http://127.0.0.1:"), base
        yield Devnet(binary=binary, db=db, base=base, creds=creds, process=process)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError("depositkit-devnet did not stop within 30 s of SIGTERM") from None
        finally:
            reader.join(timeout=10)
            assert process.stdout is not None
            process.stdout.close()
            stderr.close()
    assert code == 0, f"depositkit-devnet exited with {code} after SIGTERM: {(tmp / 'stderr.log').read_text(encoding='utf-8')}"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the embedded devnet and deposit clients (tests/python/test_deposit*.py) ------------------

# Test knobs of the deposit client: polls every 50 ms (min_polling_interval_ms lowers the
# production minimum of 2000 ms), sweep retries 20 ms apart, HTTP retries 5 ms apart.
FAST_CLIENT = {
    "min_polling_interval_ms": 20,
    "polling_interval_ms": 50,
    "sweep_retry_delay_ms": 20,
    "http_initial_backoff_ms": 5,
}


def new_owner() -> str:
    """A fresh lower-case EVM address: a new account on devnet for every client."""
    import secrets

    return "0x" + secrets.token_hex(20)


def new_solana_address() -> str:
    """A fresh Solana address with both letter cases (so that keeping its case matters)."""
    import secrets

    while True:
        address = b58encode(secrets.token_bytes(32))
        if len(address) >= 43 and address != address.lower() and address != address.upper():
            return address


class EventLog:
    """Everything a client's pull queue gave so far, with waits on it."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.events: list[Any] = []

    def until(self, done: Any, timeout: float = 10.0) -> list[Any]:
        """Pulls events until ``done(self.events)`` holds; fails after ``timeout`` seconds with
        what was seen."""
        deadline = time.monotonic() + timeout
        while not done(self.events):
            left = deadline - time.monotonic()
            event = self.client.next_event(timeout=max(0.0, min(left, 0.5))) if left > 0 else None
            if event is not None:
                self.events.append(event)
            elif left <= 0:
                raise AssertionError(f"timed out; events so far: {self.events!r}")
        return self.events

    def lifecycle(self, deposit_id: Optional[str] = None) -> list[Any]:
        return [
            e
            for e in self.events
            if e.type == "deposit:lifecycle" and (deposit_id is None or e.id == deposit_id)
        ]

    def phases(self, deposit_id: str) -> list[str]:
        return [e.phase for e in self.lifecycle(deposit_id)]

    def reached(self, deposit_id: str, phase: str, timeout: float = 10.0) -> Any:
        """Waits for ``deposit_id`` to enter ``phase``; returns that event."""
        self.until(lambda _: phase in self.phases(deposit_id), timeout)
        return next(e for e in self.lifecycle(deposit_id) if e.phase == phase)

    def refunds(self, deposit_id: Optional[str] = None) -> list[Any]:
        """The ``RefundResult`` of every ``refund:update`` event (of ``deposit_id``), in order."""
        return [
            e.result
            for e in self.events
            if e.type == "refund:update" and (deposit_id is None or e.result.deposit_id == deposit_id)
        ]

    def refund_statuses(self, deposit_id: str) -> list[str]:
        return [r.status for r in self.refunds(deposit_id)]

    def refund_done(self, deposit_id: str, timeout: float = 10.0) -> Any:
        """Waits for ``deposit_id``'s refund to end (success, failed or skipped); returns that
        ``RefundResult``."""

        def ended() -> list[Any]:
            return [r for r in self.refunds(deposit_id) if r.status in TERMINAL_REFUND]

        self.until(lambda _: bool(ended()), timeout)
        return ended()[0]

    def recoveries(self) -> list[Any]:
        """The ``RecoveryResult`` of every ``recovery:result`` event, in order."""
        return [e.result for e in self.events if e.type == "recovery:result"]


TERMINAL_REFUND = frozenset({"success", "failed", "skipped"})


def detect(net: Any, client: Any, chain_id: int, token: str, amount: str, sender: Optional[str] = None) -> Any:
    """Deposits ``amount`` of ``token`` on ``chain_id`` into ``client``'s account (the Solana
    address for Solana, else the EVM one), polls, and returns the ``detected`` event."""
    addresses = client.deposit_addresses
    address = addresses.solana if chain_id == 101 else addresses.evm
    net.deposit(address, chain_id, token, amount, sender=sender)
    found = [e for e in client.poll_now() if e.phase == "detected"]
    assert len(found) == 1, found
    return found[0]


def wait_until(condition: Any, timeout: float = 10.0) -> None:
    """Waits (10 ms steps) until ``condition()`` holds; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def delivered_usdc(value_usd: str, gas_usd: str = "0.03", decimals: int = 6, service: bool = False) -> int:
    """What a sweep of a deposit worth ``value_usd`` delivers in USDC smallest units, by
    docs/protocol.md's rounding: value less gas, 0.2% LP fee and (with ``ua_project_id``) the 1%
    service fee, truncated."""
    from decimal import Decimal

    unit = 10**18
    value = int(Decimal(value_usd) * unit)
    total = int(Decimal(gas_usd) * unit) + value * 2 // 1000 + (value // 100 if service else 0)
    return (value - total) * 10**decimals // unit


@pytest.fixture(scope="module")
def net() -> Iterator[Any]:
    """``depositkit.Devnet()``: the emulator in process, one per test module."""
    import depositkit

    with depositkit.Devnet() as devnet:
        yield devnet


@contextlib.contextmanager
def client_factory(net: Any, **defaults: Any) -> Iterator[Any]:
    """``make(destination=..., owner=..., **options)``: a ``DepositClient`` of a fresh owner on
    ``net`` with the FAST_CLIENT knobs and, for the options not given, a copy of each of
    ``defaults``. Every client it made is closed on leaving the ``with`` block."""
    import depositkit

    clients: list[Any] = []

    def make(destination: Any = None, owner: Optional[str] = None, **options: Any) -> Any:
        for key, value in defaults.items():
            options.setdefault(key, copy.copy(value))
        client = depositkit.DepositClient(
            owner or new_owner(),
            destination if destination is not None else {"chain_id": depositkit.CHAIN.ARBITRUM},
            **{"services_url": net.services_url, **FAST_CLIENT, **options},
        )
        clients.append(client)
        return client

    try:
        yield make
    finally:
        for client in clients:
            client.close()


@pytest.fixture
def make_client(net: Any) -> Iterator[Any]:
    """``make_client(destination=..., owner=..., **options)``: a ``DepositClient`` of a fresh
    owner on ``net`` with the FAST_CLIENT knobs, closed after the test; devnet faults are
    cleared after the test too."""
    try:
        with client_factory(net) as make:
            yield make
    finally:
        net.clear_faults()


# --- the local chains (tests/python/test_local_chains.py; docs/funding.md §1) -----------------


@pytest.fixture(scope="session")
def local_chains(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The local chains for the whole session: ``tests/chains/launch.py`` (anvil for chains 1,
    56, 8453 and 42161, the Solana RPC over LiteSVM) as a child whose stdin is a pipe. Yields
    the chains file it prints, parsed. At teardown its stdin is closed, which stops the chains,
    and it must exit 0. A missing prerequisite fails the tests with the launcher's message (it
    says what to install); it is never a skip."""
    log = tmp_path_factory.mktemp("local-chains") / "launch.log"
    stderr = open(log, "w+", encoding="utf-8")  # noqa: SIM115 - closed at teardown
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests/chains/launch.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        encoding="utf-8",
    )
    assert process.stdin is not None and process.stdout is not None
    first_line: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(
        target=lambda: first_line.put(process.stdout.readline()), name="local-chains-stdout", daemon=True
    )
    reader.start()
    try:
        try:
            line = first_line.get(timeout=120)
        except queue.Empty:
            raise AssertionError("tests/chains/launch.py printed no chains file within 120 s") from None
        if not line:
            code = process.wait(timeout=30)
            stderr.seek(0)
            raise AssertionError(f"tests/chains/launch.py exited with {code}: {stderr.read()}")
        yield json.loads(line)
    finally:
        process.stdin.close()
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError("tests/chains/launch.py did not stop within 30 s of its stdin closing") from None
        finally:
            reader.join(timeout=10)
            process.stdout.close()
            stderr.close()
    assert code == 0, f"tests/chains/launch.py exited with {code}: {log.read_text(encoding='utf-8')}"


# --- devnet backed by the local chains (tests/python/test_funding.py, test_onramp.py) ---------


@pytest.fixture(scope="module")
def chain_net(local_chains: dict[str, Any]) -> Iterator[Any]:
    """``depositkit.Devnet(chains=local_chains)``: devnet with the local chains real (balances
    read from them, sweeps as real transactions), one per test module."""
    import depositkit

    with depositkit.Devnet(chains=local_chains) as devnet:
        yield devnet


@pytest.fixture(scope="session")
def local_funding(local_chains: dict[str, Any]) -> dict[str, Any]:
    """A ``funding=`` option enabled against the local chains' nodes (``evm_rpc_urls`` and
    ``solana_rpc_url``); tests extend a copy: ``{**local_funding, "balance_provider": "rpc"}``."""
    return {
        "enabled": True,
        "evm_rpc_urls": {chain["chainId"]: chain["rpcUrl"] for chain in local_chains["evm"]},
        "solana_rpc_url": local_chains["solana"]["rpcUrl"],
    }


@pytest.fixture
def make_chain_client(chain_net: Any, local_funding: dict[str, Any]) -> Iterator[Any]:
    """``make_chain_client(destination=..., owner=..., funding=..., **options)``: a
    ``DepositClient`` of a fresh owner on ``chain_net`` with the FAST_CLIENT knobs and, unless
    ``funding`` says otherwise, ``local_funding``; closed after the test."""
    with client_factory(chain_net, funding=local_funding) as make:
        yield make
