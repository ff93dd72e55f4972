"""Secrets never show (issue 7, "Hardened boundaries"): the project server key, the user's session
token, the intermediary's JWTs, the balance-API key and the onramp partner keys appear in no log,
no ``repr()``/``str()`` and no error message.

``test_a_full_flow_prints_no_secret`` runs a whole flow in a child interpreter (this file run as a
script: ``python -X dev test_secrets.py --child``) with ``RUST_LOG=trace``, ``RUST_BACKTRACE=1``
and ``PYTHONWARNINGS=always``, so that every byte the library, devnet, the Rust side and the
interpreter write to stdout and stderr is captured: user lookups that succeed and fail (wrong
server key, wrong project, wrong user token, service down), a deposit credited, JWT failures
(sessions expired and renewed, forged, tampered, issued for another user, refused by the services),
the balance API with a wrong and with the right key, the onramp. The child prints the
``repr``/``str`` of every object it touches and every exception (``args``, attributes,
``__cause__``, ``__context__``, ``traceback.print_exception``), then one last line
``@@DEPOSITKIT-SECRETS@@ {json}`` with the secret values it used or saw — including every JWT the
client was issued, recorded by a small proxy in front of devnet's JWT service (the client does not
expose its JWT). The parent searches everything else for them, for fragments of them, for the
Basic credential that carries the server key and for anything shaped like a JWT, and checks that
the flow really ran (each phase and each expected failure shows), so it cannot pass vacuously.

``test_repr_and_str_hide_secrets`` checks the same in process for the main objects, and
``test_the_search_finds_leaks`` checks the search itself.
"""

from __future__ import annotations

import base64
import gc
import http.server
import json
import logging
import math
import os
import pickle
import re
import secrets
import socket
import string
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Iterator, Optional

import pytest

import depositkit
from depositkit import CHAIN

MARKER = "@@DEPOSITKIT-SECRETS@@"
"""Starts the child's last line, the only one allowed to hold secrets."""
JWT_SHAPE = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
FRAGMENT = 12
"""A key counts as leaked when any run of this many characters of its random part shows."""
SIGNATURE_FRAGMENT = 16
"""The same for a JWT's signature."""
FAST = {
    "min_polling_interval_ms": 20,
    "polling_interval_ms": 50,
    "sweep_retry_delay_ms": 20,
    "http_initial_backoff_ms": 5,
}
BUILTIN_JWT_REQUEST = {
    "projectId": "depositkit-builtin-project",
    "clientKey": "ck_depositkit_builtin",
    "appId": "depositkit-builtin-app",
}
"""The built-in credentials of a JWT request (docs/protocol.md §1)."""


def fresh_secret(kind: str) -> str:
    """``kind_`` and 40 random letters and digits: URL-, JSON- and repr-safe, so that no
    encoding can hide it from the search."""
    alphabet = string.ascii_letters + string.digits
    return kind + "_" + "".join(secrets.choice(alphabet) for _ in range(40))


def new_owner() -> str:
    return "0x" + secrets.token_hex(20)


def fragments(secret: str, size: int) -> set[str]:
    """Every run of ``size`` characters of ``secret`` (the secret itself when shorter)."""
    if len(secret) <= size:
        return {secret}
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def search_terms(value: str) -> dict[str, str]:
    """What to look for to find ``value`` in the output, each with what it would reveal.

    A JWT: its claims, and any ``SIGNATURE_FRAGMENT`` characters of its signature (its header is
    the same in every token, so it reveals nothing). A key with a long random part after lower-case
    prefixes (``sk_…``, ``balkey_…``): the whole key and any ``FRAGMENT`` characters of that part,
    so a truncated or partly masked key is found too. Anything else: the whole value."""
    if JWT_SHAPE.fullmatch(value):
        _, claims, signature = value.split(".")
        terms = {f: "part of a JWT's signature" for f in fragments(signature, SIGNATURE_FRAGMENT)}
        terms[claims] = "a JWT's claims"
        return terms
    terms = {value: "the whole value"}
    random_part = re.sub(r"^(?:[a-z]+_)+", "", value)
    if len(random_part) >= 2 * FRAGMENT:
        terms.update({f: "part of the value" for f in fragments(random_part, FRAGMENT)})
    return terms


def find_leaks(text: str, found: dict[str, list[str]]) -> list[str]:
    """One line per secret of ``found`` (name → values) that shows in ``text``, saying what
    shows; plus one for JWT-shaped strings."""
    problems = []
    for name, values in found.items():
        for value in values:
            hits = sorted({what for term, what in search_terms(value).items() if term in text})
            if hits:
                problems.append(f"{name}: {', '.join(hits)} show(s)")
    shaped = sorted(set(JWT_SHAPE.findall(text)))
    if shaped:
        problems.append(f"{len(shaped)} JWT-shaped string(s) show, e.g. {shaped[0][:48]}…")
    return problems


def public_values(obj: Any) -> dict[str, Any]:
    """Every public non-method attribute of ``obj`` (what a debugger or an attribute dump shows);
    an attribute that raises gives its exception."""
    values = {}
    for name in dir(obj):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception as error:  # noqa: BLE001 - the error is what is shown
            value = error
        if not callable(value) or isinstance(value, BaseException):
            values[name] = value
    return values


def format_exception(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


# =================================================================================================
# The child: a full flow, run as ``python test_secrets.py --child``. It prints everything a host
# might log; the secrets themselves only go into the MARKER line at the end.
# =================================================================================================


class Child:
    """The child's output and the secrets it collects."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.secrets: dict[str, list[str]] = {}
        self.phases: list[str] = []

    def say(self, *parts: Any) -> None:
        with self.lock:
            print(*parts, flush=True)

    def phase(self, name: str) -> None:
        self.phases.append(name)
        self.say(f"=== PHASE {name}")

    def secret(self, name: str, value: str) -> str:
        """Records ``value`` as a secret (never printed but in the MARKER line); returns it."""
        values = self.secrets.setdefault(name, [])
        if value not in values:
            values.append(value)
        return value

    def show(self, label: str, obj: Any, depth: int = 0) -> None:
        """Prints what a host might log of ``obj``: ``repr``, ``str``, its record form, its items
        and nested records, and for an exception everything it carries and its traceback."""
        with self.lock:
            print(f"{label}: type={type(obj).__name__} repr={obj!r}", flush=True)
            print(f"{label}: str={obj!s}", flush=True)
            if isinstance(obj, BaseException):
                self.show_exception(label, obj, depth)
                return
            if depth >= 3:
                return
            to_dict = getattr(obj, "to_dict", None)
            if callable(to_dict):
                print(f"{label}: to_dict={to_dict()!r}", flush=True)
            if isinstance(obj, (list, tuple)):
                for i, item in enumerate(obj):
                    self.show(f"{label}[{i}]", item, depth + 1)
            elif isinstance(obj, dict):
                for key, item in obj.items():
                    self.show(f"{label}[{key!r}]", item, depth + 1)
            elif not isinstance(obj, (str, bytes, int, float)):
                for attr in ("result", "order", "delivered", "refund", "event", "wallets", "transactions"):
                    value = getattr(obj, attr, None)
                    if value is not None and not callable(value):
                        self.show(f"{label}.{attr}", value, depth + 1)
                if type(obj) is depositkit.ErrorEvent:
                    self.show(f"{label}.exception()", obj.exception(), depth + 1)

    def show_exception(self, label: str, error: BaseException, depth: int) -> None:
        print(f"{label}: args={error.args!r}", flush=True)
        for attr in ("code", "kind", "rpc_code", "rpc_message", "rpc_data", "message"):
            if hasattr(error, attr):
                print(f"{label}.{attr}={getattr(error, attr)!r}", flush=True)
        print(f"{label}: __dict__={getattr(error, '__dict__', {})!r}", flush=True)
        print(f"{label}: __notes__={getattr(error, '__notes__', None)!r}", flush=True)
        print(f"{label}: traceback:", flush=True)
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stdout)
        sys.stdout.flush()
        # And on stderr, as an unhandled error would be.
        traceback.print_exception(type(error), error, error.__traceback__)
        sys.stderr.flush()
        if depth < 3:
            for link in ("__cause__", "__context__"):
                linked = getattr(error, link)
                if linked is not None and linked is not error:
                    self.show(f"{label}.{link}", linked, depth + 1)

    def expect(self, label: str, call: Callable[[], Any], *kinds: type[BaseException]) -> BaseException:
        """Runs ``call``, which must raise one of ``kinds``; shows the exception."""
        try:
            result = call()
        except kinds as error:
            self.say(f"EXPECTED-ERROR {label}: {type(error).__name__}")
            self.show(label, error)
            return error
        raise AssertionError(f"{label}: expected one of {[k.__name__ for k in kinds]}, got {result!r}")

    def call(self, label: str, call: Callable[[], Any]) -> Any:
        """Runs ``call`` and shows what it returned."""
        result = call()
        self.say(f"OK {label}")
        self.show(label, result)
        return result

    def until_phase(self, client: Any, deposit_id: str, phase: str, timeout: float = 20.0) -> None:
        """Pulls (and shows) events until ``deposit_id`` reaches ``phase``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            event = client.next_event(timeout=0.2)
            if event is None:
                continue
            self.show("pulled event", event)
            if getattr(event, "id", None) == deposit_id and getattr(event, "phase", None) == phase:
                return
        raise AssertionError(f"{deposit_id} did not reach {phase}")

    def drain(self, client: Any) -> None:
        """Shows every queued event."""
        while (event := client.next_event(timeout=0)) is not None:
            self.show("pulled event", event)


class JwtProxy:
    """An HTTP proxy in front of devnet's JWT service that records every JWT it hands out, so
    that the child knows the exact tokens the deposit clients held. ``mode`` tampers with the
    answers: ``"pass"``, ``"other-user"`` (a genuine JWT, of another user), ``"bad-signature"``
    (a signature character changed), ``"garbage"`` (not a JWT, ending with a real signature)."""

    def __init__(self, child: Child, upstream: str) -> None:
        self.mode = "pass"
        proxy = self

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client dropping its connection: test machinery says nothing

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
                pass  # test machinery: it adds nothing to the output

            def do_GET(self) -> None:  # noqa: N802 - the base's name
                self.forward(None)

            def do_POST(self) -> None:  # noqa: N802 - the base's name
                self.forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def forward(self, body: Optional[bytes]) -> None:
                mode = proxy.mode
                if body is not None and mode == "other-user":
                    body = json.dumps({**json.loads(body or b"{}"), "userId": new_owner()}).encode()
                status, raw = http_raw(upstream + self.path, body)
                if status == 200 and self.path.startswith("/v1/jwt"):
                    answer = json.loads(raw)
                    jwt = child.secret("jwt issued to a client", answer["jwt"])
                    if mode == "bad-signature":
                        jwt = jwt[:-2] + ("A" if jwt[-2] != "A" else "B") + jwt[-1]
                    elif mode == "garbage":
                        jwt = "not-a-jwt-" + jwt.split(".")[2]
                    answer["jwt"] = child.secret("jwt issued to a client", jwt)
                    raw = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, name="jwt-proxy", daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def http_raw(url: str, body: Optional[bytes], headers: Optional[dict[str, str]] = None) -> tuple[int, bytes]:
    """GET (``body`` None) or POST ``url`` with urllib; ``(status, body)``, error statuses too."""
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        raw = error.read()
        error.close()
        return error.code, raw


def http_json(url: str, body: Any, headers: Optional[dict[str, str]] = None) -> tuple[int, Any]:
    status, raw = http_raw(url, json.dumps(body).encode(), headers)
    return status, json.loads(raw or b"null")


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EvmWallet:
    """A host EIP-1193 wallet: knows its account, answers the chain queries, and refuses to send
    (4001) — the ledger devnet has no chain to send on."""

    def __init__(self, child: Child, address: str) -> None:
        self.child = child
        self.address = address

    def __call__(self, method: str, params: Any) -> Any:
        self.child.say(f"wallet request {method}")
        answers = {
            "eth_requestAccounts": [self.address],
            "eth_accounts": [self.address],
            "wallet_requestPermissions": [{"parentCapability": "eth_accounts"}],
            "eth_chainId": hex(int(CHAIN.BASE)),
            "wallet_switchEthereumChain": None,
            "eth_gasPrice": hex(1_000_000),
            "eth_getBalance": hex(10**18),
            "eth_estimateGas": hex(60_000),
            "eth_call": "0x" + format(30 * 10**6, "064x"),
        }
        if method == "eth_sendTransaction":
            raise depositkit.ProviderError(depositkit.ProviderError.USER_REJECTED, "User rejected the request.")
        if method not in answers:
            raise depositkit.ProviderError(depositkit.ProviderError.UNSUPPORTED_METHOD, f"{method} is not supported")
        return answers[method]


class Flow:
    """The child's flow, phase by phase, on one devnet."""

    def __init__(self) -> None:
        self.child = child = Child()
        self.balance_key = child.secret("balance API key", fresh_secret("balkey"))
        self.wrong_balance_key = child.secret("wrong balance API key", fresh_secret("wrongbal"))
        self.partner_key = child.secret("onramp partner key", fresh_secret("partner"))
        self.wrong_server_key = child.secret("wrong server key", fresh_secret("sk_wrong"))
        self.wrong_user_token = child.secret("wrong user token", fresh_secret("st_wrong"))
        child.phase("devnet")
        self.devnet = depositkit.Devnet(balance_api_key=self.balance_key)
        child.show("devnet", self.devnet)
        self.services = self.devnet.services_url
        self.funding = {"enabled": True, "api_key": self.balance_key, "balance_api_url": self.services + "/balances"}
        self.onramp = {"enabled": True, "api_key": self.partner_key, "widget_url": self.services + "/onramp/widget"}
        self.proxy = JwtProxy(child, self.services + "/jwt")

    def new_client(self, destination: Any = CHAIN.ARBITRUM, owner: Optional[str] = None, **options: Any) -> Any:
        """A deposit client on devnet whose JWTs go through the recording proxy."""
        options = {"services_url": self.services, "jwt_service_url": self.proxy.url, **FAST, **options}
        return depositkit.DepositClient(owner or new_owner(), destination, **options)

    def run(self) -> None:
        self.user_rpc()
        self.deposit()
        self.jwt()
        self.wallet_funding()
        self.fiat_onramp()
        self.shutdown()

    # --- user lookup ----------------------------------------------------------------------------

    def user_rpc(self) -> None:
        child, devnet = self.child, self.devnet
        child.phase("user-rpc")
        creds = devnet.demo_credentials()  # never printed whole
        project_id, user_uuid = creds["project_id"], creds["user_uuid"]
        server_key = self.server_key = child.secret("project server key", creds["server_key"])
        token = child.secret("user session token", creds["user_token"])
        for name, key in (("server key", server_key), ("wrong server key", self.wrong_server_key)):
            basic = base64.b64encode(f"{project_id}:{key}".encode()).decode()
            child.secret(f"Basic credential of the {name}", basic)
        child.say(f"demo credentials hold: {sorted(creds)}")
        url = devnet.user_rpc_url
        Auth, NotFound, Config = depositkit.AuthenticationError, depositkit.NotFoundError, depositkit.ConfigurationError

        with depositkit.UserRpcClient(url, project_id, server_key, timeout=5, max_retries=1) as rpc:
            child.show("user rpc client", rpc)
            user = child.call("getUserInfo", lambda: rpc.get_user_info(user_uuid, token))
            address = user.wallets[0].public_address
            child.call("getUserInfoByIdentity", lambda: rpc.get_user_info_by_identity("jwt", creds["jwt_uid"]))
            child.call("isProjectUser", lambda: rpc.is_project_user("evm_chain", address))
            child.call("isProjectUser stranger", lambda: rpc.is_project_user("evm_chain", new_owner()))
            child.expect("getUserInfo wrong token", lambda: rpc.get_user_info(user_uuid, self.wrong_user_token), Auth)
            child.expect("getUserInfo unknown user", lambda: rpc.get_user_info(str(uuid.uuid4()), token), NotFound, Auth)
            child.expect("getUserInfo malformed uuid", lambda: rpc.get_user_info("not-a-uuid", token), Config)
            child.expect("getUserInfo token as bytes", lambda: rpc.get_user_info(user_uuid, token.encode()), TypeError)
            child.expect("getUserInfoByIdentity unknown", lambda: rpc.get_user_info_by_identity("jwt", "nobody"), NotFound)
            devnet.inject_fault("user-rpc", status=503, count=10)
            child.expect("user rpc down", lambda: rpc.get_user_info(user_uuid, token), depositkit.NetworkError)
            devnet.clear_faults()
        child.show("closed user rpc client", rpc)
        child.expect("closed user rpc client call", lambda: rpc.get_user_info(user_uuid, token), depositkit.DepositSDKError)

        with depositkit.UserRpcClient(url, project_id, self.wrong_server_key, max_retries=0) as wrong:
            child.show("user rpc client with a wrong key", wrong)
            child.expect("wrong key getUserInfo", lambda: wrong.get_user_info(user_uuid, token), Auth)
            by_identity = lambda: wrong.get_user_info_by_identity("jwt", creds["jwt_uid"])  # noqa: E731
            child.expect("wrong key getUserInfoByIdentity", by_identity, Auth)
            child.expect("wrong key isProjectUser", lambda: wrong.is_project_user("evm_chain", address), Auth)
        with depositkit.UserRpcClient(url, "no-such-project", server_key, max_retries=0) as other:
            child.expect("wrong project", lambda: other.is_project_user("evm_chain", address), Auth)
        down_url = f"http://127.0.0.1:{closed_port()}/user-rpc"
        with depositkit.UserRpcClient(down_url, project_id, server_key, max_retries=0) as down:
            child.expect("unreachable user rpc", lambda: down.get_user_info(user_uuid, token), depositkit.NetworkError)
        child.expect(
            "server key with a control character",
            lambda: depositkit.UserRpcClient(url, project_id, server_key + "\n"),
            Config,
        )
        child.expect(
            "server key in the URL",
            lambda: depositkit.UserRpcClient(f"http://{project_id}:{server_key}@127.0.0.1:1/", project_id, server_key),
            Config,
        )
        child.expect("server key as bytes", lambda: depositkit.UserRpcClient(url, project_id, server_key.encode()), TypeError)

    # --- a deposit, credited --------------------------------------------------------------------

    def deposit(self) -> None:
        child, devnet = self.child, self.devnet
        child.phase("deposit")
        self.owner = owner = new_owner()
        # A JWT devnet issues for the same owner, fetched directly: the shape the client's have.
        status, direct = http_json(self.services + "/jwt/v1/jwt", {**BUILTIN_JWT_REQUEST, "userId": owner})
        assert status == 200, direct
        child.secret("jwt fetched from devnet for the owner", direct["jwt"])
        child.secret("built-in JWT client key", BUILTIN_JWT_REQUEST["clientKey"])
        child.say(f"a JWT of the owner is JWT-shaped: {bool(JWT_SHAPE.fullmatch(direct['jwt']))}")

        failures = {"left": 1}

        def subscriber(event: Any) -> None:
            child.show("callback event", event)
            if failures["left"]:
                failures["left"] -= 1
                raise RuntimeError("a host callback failed (reported through sys.unraisablehook)")

        self.client = client = self.new_client(
            {"chain_id": CHAIN.ARBITRUM, "token": "USDC"},
            owner=owner,
            funding=self.funding,
            onramp=self.onramp,
            notifications=True,
            refund={"enabled": True, "delay_ms": 20},
            on_deposit_event=lambda event: child.show("on_deposit_event", event),
            http_retries=1,
        )
        child.show("deposit client", client)
        child.say(f"subscription {client.subscribe(subscriber)}")
        self.addresses = addresses = child.call("initialize", client.initialize)
        child.show("deposit client after initialize", client)
        devnet.deposit(addresses.evm, CHAIN.BASE, "USDC", "25", sender=new_owner())
        [detected] = child.call("poll_now", client.poll_now)
        child.until_phase(client, detected.id, "credited")
        child.say("CREDITED first deposit")
        child.call("sweep_result", lambda: client.sweep_result(detected.id))
        child.call("pending_deposits", client.pending_deposits)
        child.call("notifications", client.notifications)
        history = child.call("get_transactions", client.get_transactions)
        child.call("get_transaction", lambda: client.get_transaction(history.transactions[0].transaction_id))
        child.call("can_refund", lambda: client.can_refund(detected.id))
        child.expect("refund of a credited deposit", lambda: client.refund(detected.id), depositkit.RefundError)
        child.expect("sweep of an unknown deposit", lambda: client.sweep("no-such-deposit"), depositkit.NotFoundError)
        child.show("refund_config", client.refund_config)
        child.call("stuck_funds", client.stuck_funds)

    # --- JWT failures ---------------------------------------------------------------------------

    def jwt(self) -> None:
        child, devnet, client, owner = self.child, self.devnet, self.client, self.owner
        child.phase("jwt")
        refused = (depositkit.JwtError, depositkit.AuthenticationError, depositkit.UniversalAccountError)
        # Expired: the services refuse the session and the client renews it by itself.
        devnet.expire_sessions(owner)
        devnet.deposit(self.addresses.evm, CHAIN.BASE, "USDC", "12")
        [second] = child.call("poll_now after expiry", client.poll_now)
        child.until_phase(client, second.id, "credited")
        child.say("CREDITED after the session expired")
        # Expired, and the renewals are forged: the client refuses them.
        devnet.expire_sessions(owner)
        devnet.forge_next_jwts(10)
        child.expect("renewal with forged JWTs", client.get_transactions, *refused)
        child.expect("poll with forged JWTs", client.poll_now, *refused)
        devnet.clear_faults()
        # The JWT service's answers tampered with (through the proxy).
        for mode in ("bad-signature", "other-user", "garbage"):
            self.proxy.mode = mode
            devnet.expire_sessions(owner)
            child.expect(f"renewal with a {mode} JWT", client.get_transactions, *refused)
            fresh = self.new_client(http_retries=0)
            child.expect(f"initialize with a {mode} JWT", fresh.initialize, depositkit.JwtError)
            child.show(f"client after a {mode} JWT", fresh)
            fresh.close()
        self.proxy.mode = "pass"
        # The JWT service, the signer and the account service refusing or failing.
        for service, http_status in (("jwt", 401), ("jwt", 503), ("signer", 401), ("ua", 401)):
            fresh = self.new_client(http_retries=0)
            devnet.inject_fault(service, status=http_status, count=10)
            label = f"initialize with {service} answering {http_status}"
            child.expect(label, fresh.initialize, depositkit.DepositSDKError)
            devnet.clear_faults()
            fresh.close()
        devnet.forge_next_jwts(1)
        forged = self.new_client()
        child.expect("initialize with a forged JWT", forged.initialize, depositkit.JwtError)
        child.call("initialize after the forged JWT", forged.initialize)
        forged.close()
        child.call("get_transactions after the JWT failures", client.get_transactions)
        child.drain(client)

    # --- funding: the balance API with a wrong key and with the right one ----------------------

    def wallet_funding(self) -> None:
        child, devnet, client, services = self.child, self.devnet, self.client, self.services
        child.phase("funding")
        wallet = new_owner()
        devnet.deposit(wallet, CHAIN.BASE, "USDC", "30")
        devnet.deposit(wallet, CHAIN.ARBITRUM, "ETH", "0.01")
        api = services + "/balances/v1/wallet-balances"
        status, answer = http_json(api, {"evmAddress": wallet}, {"X-API-Key": self.wrong_balance_key})
        child.say(f"balance API with a wrong key answers HTTP {status}")
        child.show("balance API error body", answer)

        wrong = self.new_client(funding={**self.funding, "api_key": self.wrong_balance_key})
        child.show("funding client with a wrong key", wrong)
        wrong.set_evm_wallet(EvmWallet(child, wallet))
        child.call("connect_evm_wallet", wrong.connect_evm_wallet)
        child.expect("balances with a wrong API key", wrong.get_wallet_balances, depositkit.FundingError)
        child.show("funding client with a wrong key after the failure", wrong)
        wrong.close()

        client.set_evm_wallet(EvmWallet(child, wallet))
        child.call("connect_evm_wallet", client.connect_evm_wallet)
        child.call("evm_accounts", client.evm_accounts)
        child.call("prompt_evm_account_selection", client.prompt_evm_account_selection)
        balances = child.call("balances with the right API key", client.get_wallet_balances)
        assert balances and {b.source for b in balances} == {"apiKey"}, balances
        for balance in balances:
            label = f"fund_from_wallet {balance.token} rejected"
            child.expect(label, lambda b=balance: client.fund_from_wallet(b), depositkit.FundingError)
        zero = lambda: client.fund_from_wallet(balances[0], raw_amount=0)  # noqa: E731
        child.expect("fund_from_wallet zero", zero, depositkit.InvalidArgumentError)

        def failing_provider(request: Any) -> Any:
            raise RuntimeError("the host's balance source is down")

        client.set_balance_provider(failing_provider)
        child.expect("balances from a failing host provider", client.get_wallet_balances, depositkit.FundingError)
        client.set_balance_provider(lambda request: {"balances": "nonsense"})
        child.expect("balances from a malformed host provider", client.get_wallet_balances, depositkit.FundingError)
        client.set_balance_provider(None)

        via_proxy = self.new_client(funding={"enabled": True, "proxy_url": services + "/balance-proxy"})
        via_proxy.set_evm_wallet("http://127.0.0.1:1", address=wallet)
        child.call("balances through the proxy", via_proxy.get_wallet_balances)
        via_proxy.close()
        unreachable = self.new_client(
            http_retries=0, funding={**self.funding, "balance_api_url": f"http://127.0.0.1:{closed_port()}"}
        )
        unreachable.set_evm_wallet("http://127.0.0.1:1", address=wallet)
        child.expect(
            "balances from an unreachable API", unreachable.get_wallet_balances, depositkit.FundingError, depositkit.NetworkError
        )
        unreachable.close()

        for option, value in (
            ("api_key", self.balance_key + "\n"),
            ("api_key", ""),
            ("balance_api_url", f"http://u:{self.balance_key}@127.0.0.1:1"),
            ("proxy_url", f"http://u:{self.balance_key}@127.0.0.1:1"),
        ):
            make = lambda o=option, v=value: self.new_client(funding={**self.funding, o: v})  # noqa: E731
            child.expect(f"funding.{option} invalid", make, depositkit.ConfigurationError)
        as_bytes = lambda: self.new_client(funding={**self.funding, "api_key": self.balance_key.encode()})  # noqa: E731
        child.expect("funding.api_key as bytes", as_bytes, TypeError)
        with_key = lambda: self.new_client(services_url=f"http://u:{self.server_key}@127.0.0.1:1")  # noqa: E731
        child.expect("services_url with credentials", with_key, depositkit.ConfigurationError)

    # --- the onramp -----------------------------------------------------------------------------

    def fiat_onramp(self) -> None:
        child, devnet, client, services = self.child, self.devnet, self.client, self.services
        child.phase("onramp")
        url = client.open_onramp(40)  # carries the partner key: never printed
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        assert params["partnerKey"] == self.partner_key, "the widget URL carries the configured partner key"
        child.say("the onramp URL carries the partner key")
        child.show("deposit client after open_onramp", client)
        completed = devnet.complete_onramp_order(url)
        child.show("completed onramp order", completed)
        for message in completed["messages"]:
            child.call(f"handle_onramp_message {message['event']}", lambda m=message: client.handle_onramp_message(m))
        child.call("handle_onramp_message widget_closed", lambda: client.handle_onramp_message('{"event": "widget_closed"}'))
        child.drain(client)
        child.call("last_onramp_order", lambda: client.last_onramp_order)

        bad = depositkit.InvalidArgumentError
        child.expect("open_onramp(0)", lambda: client.open_onramp(0), bad)
        child.expect("open_onramp(nan)", lambda: client.open_onramp(math.nan), bad)
        child.expect("open_onramp('40')", lambda: client.open_onramp("40"), TypeError)
        child.expect("onramp message not JSON", lambda: client.handle_onramp_message("{not json"), bad)
        unknown = {"event": "order_refunded", "data": {"partnerKey": self.partner_key}}
        child.expect("onramp message unknown event", lambda: client.handle_onramp_message(unknown), bad)
        empty = {"event": "order_completed", "data": {}}
        child.expect("onramp order_completed without an order", lambda: client.handle_onramp_message(empty), bad)
        child.expect("onramp message not a mapping", lambda: client.handle_onramp_message(42), TypeError)
        # Bad orders at devnet's simulated onramp, in process and over HTTP; each (but the first)
        # carries the partner key.
        for label, change in (
            ("no partner key", {"partnerKey": ""}),
            ("bad network", {"network": "bitcoin"}),
            ("bad token", {"cryptoCurrency": "DOGE"}),
            ("bad amount", {"fiatAmount": "-5"}),
            ("bad address", {"walletAddress": "nowhere"}),
        ):
            order = {**params, **change}
            child.expect(f"onramp order with {label}", lambda o=order: devnet.complete_onramp_order(o), bad)
            status, answer = http_json(services + "/onramp/v1/orders", order)
            child.say(f"onramp order with {label} over HTTP answers {status}")
            child.show(f"onramp order with {label} error body", answer)

        disabled = self.new_client()
        child.expect("open_onramp when disabled", disabled.open_onramp, depositkit.ConfigurationError)
        disabled.close()
        redirect = self.new_client(CHAIN.BASE, onramp={**self.onramp, "mode": "redirect"})
        child.show("redirect onramp client", redirect)
        opened = {"event": "widget_opened", "data": {}}
        child.call("handle_onramp_message in redirect mode", lambda: redirect.handle_onramp_message(opened))
        redirect.close()
        builtin = self.new_client(CHAIN.BASE, onramp={"enabled": True})
        builtin_query = urllib.parse.urlsplit(builtin.open_onramp()).query
        child.secret("built-in onramp partner key", dict(urllib.parse.parse_qsl(builtin_query))["partnerKey"])
        child.show("client with the built-in partner key", builtin)
        builtin.close()
        for value in (self.partner_key + "\x00", ""):
            make = lambda v=value: self.new_client(onramp={**self.onramp, "api_key": v})  # noqa: E731
            child.expect("onramp.api_key invalid", make, depositkit.ConfigurationError)
        widget = f"https://u:{self.partner_key}@x.test/w"
        with_key = lambda: self.new_client(onramp={**self.onramp, "widget_url": widget})  # noqa: E731
        child.expect("onramp.widget_url with credentials", with_key, depositkit.ConfigurationError)

    # --- everything the client shows, once more, then shutdown ---------------------------------

    def shutdown(self) -> None:
        child, client = self.child, self.client
        child.phase("shutdown")
        for name, value in public_values(client).items():
            child.show(f"client.{name}", value)
        child.call("get_destination", client.get_destination)
        child.show("notifications_config", client.notifications_config)
        child.expect("pickle the client", lambda: pickle.dumps(client), TypeError)
        child.drain(client)
        client.close()
        child.show("closed deposit client", client)
        child.expect("closed client call", client.get_transactions, depositkit.DepositSDKError)
        # An initialized client dropped unclosed (a ResourceWarning, if any, is printed).
        dropped = self.new_client(funding=self.funding, onramp=self.onramp)
        dropped.initialize()
        del dropped
        gc.collect()
        # Left running at interpreter exit: a watching client with keys configured, and devnet.
        watching = self.new_client(
            funding=self.funding, onramp=self.onramp, on_deposit_event=lambda event: child.show("at-exit event", event)
        )
        watching.initialize()
        watching.start_watching()
        child.show("client left watching at exit", watching)
        self.left_running = (self.devnet, watching)
        self.proxy.close()
        child.say(f"phases run: {child.phases}")
        child.say("=== FLOW COMPLETE")


def child_main() -> None:
    # Anything that logs through Python's logging goes to stderr too.
    logging.basicConfig(level=logging.DEBUG)
    flow = Flow()
    flow.run()
    print(MARKER, json.dumps({"secrets": flow.child.secrets, "phases": flow.child.phases}), flush=True)
    # The devnet and a watching client stay alive until the interpreter exits.
    globals()["_left_running"] = flow


# =================================================================================================
# The parent test.
# =================================================================================================

EXPECTED_OUTPUT = [
    "=== PHASE devnet",
    "=== PHASE user-rpc",
    "=== PHASE deposit",
    "=== PHASE jwt",
    "=== PHASE funding",
    "=== PHASE onramp",
    "=== PHASE shutdown",
    "=== FLOW COMPLETE",
    "<depositkit.UserRpcClient base_url=",
    "OK getUserInfo",
    "OK isProjectUser",
    "EXPECTED-ERROR getUserInfo wrong token: AuthenticationError",
    "EXPECTED-ERROR wrong key getUserInfo: AuthenticationError",
    "EXPECTED-ERROR wrong key getUserInfoByIdentity: AuthenticationError",
    "EXPECTED-ERROR wrong key isProjectUser: AuthenticationError",
    "the service rejected the credentials of project",
    "EXPECTED-ERROR user rpc down: NetworkError",
    "EXPECTED-ERROR server key with a control character: ConfigurationError",
    "<depositkit.DepositClient owner=",
    "CREDITED first deposit",
    "CREDITED after the session expired",
    "EXPECTED-ERROR renewal with forged JWTs: JwtError",
    "EXPECTED-ERROR initialize with a forged JWT: JwtError",
    "EXPECTED-ERROR initialize with a bad-signature JWT: JwtError",
    "EXPECTED-ERROR initialize with a other-user JWT: JwtError",
    "EXPECTED-ERROR initialize with a garbage JWT: JwtError",
    "JWT verification failed",
    "EXPECTED-ERROR initialize with jwt answering 401: AuthenticationError",
    "balance API with a wrong key answers HTTP 401",
    "EXPECTED-ERROR balances with a wrong API key: FundingError",
    "failed: HTTP 401 INVALID_API_KEY",
    "OK balances with the right API key",
    "<depositkit.FundingBalance",
    "source='apiKey'",
    "EXPECTED-ERROR fund_from_wallet USDC rejected: FundingError",
    "rejected by the wallet (4001)",
    "EXPECTED-ERROR funding.api_key invalid: ConfigurationError",
    "the onramp URL carries the partner key",
    "<depositkit.OnrampCompleteEvent",
    "EXPECTED-ERROR onramp message unknown event: InvalidArgumentError",
    "onramp order with no partner key over HTTP answers 401",
    "onramp order with bad network over HTTP answers 400",
    "EXPECTED-ERROR onramp.api_key invalid: ConfigurationError",
    "Traceback (most recent call last)",
    "Exception ignored in",
]


def test_a_full_flow_prints_no_secret() -> None:
    env = {
        **os.environ,
        "RUST_LOG": "trace",
        "RUST_BACKTRACE": "1",
        "PYTHONWARNINGS": "always",
        "PYTHONUNBUFFERED": "1",
        "PYTHONFAULTHANDLER": "1",
    }
    here = os.path.abspath(__file__)
    started = time.monotonic()
    child = subprocess.run(
        [sys.executable, "-X", "dev", here, "--child"],
        cwd=os.path.dirname(here),
        env=env,
        capture_output=True,
        timeout=600,
    )
    stdout = child.stdout.decode("utf-8", errors="backslashreplace")
    stderr = child.stderr.decode("utf-8", errors="backslashreplace")
    tail = f"--- stdout (tail)\n{stdout[-5000:]}\n--- stderr (tail)\n{stderr[-5000:]}"
    assert child.returncode == 0, f"the child exited with {child.returncode} after {time.monotonic() - started:.1f} s\n{tail}"

    reports = [line for line in stdout.splitlines() if line.startswith(MARKER)]
    assert len(reports) == 1, f"expected one {MARKER} line\n{tail}"
    report = json.loads(reports[0][len(MARKER) :])
    found: dict[str, list[str]] = report["secrets"]
    assert report["phases"] == ["devnet", "user-rpc", "deposit", "jwt", "funding", "onramp", "shutdown"], report["phases"]
    # What is searched: all of stderr, and all of stdout but the report line.
    output = stderr + "\n" + stdout.replace(reports[0], "<the report line>", 1)

    # The flow ran: every phase, every expected success and failure shows.
    missing = [fragment for fragment in EXPECTED_OUTPUT if fragment not in output]
    assert not missing, f"the flow did not run as expected; missing: {missing}\n{tail}"
    for name in (
        "balance API key",
        "wrong balance API key",
        "onramp partner key",
        "built-in onramp partner key",
        "project server key",
        "wrong server key",
        "user session token",
        "Basic credential of the server key",
        "jwt fetched from devnet for the owner",
        "jwt issued to a client",
    ):
        assert found.get(name), f"the child reported no {name}"
    jwts = [v for v in found["jwt issued to a client"] + found["jwt fetched from devnet for the owner"] if JWT_SHAPE.fullmatch(v)]
    # The owner's session, its renewals, the tampered ones and the other clients' sessions.
    assert len(jwts) >= 10, jwts
    # The report line itself holds every secret: the search finds what it looks for.
    assert len(find_leaks(reports[0], found)) == sum(len(values) for values in found.values()) + 1

    problems = find_leaks(output, found)
    if problems:
        terms = {t for values in found.values() for value in values for t in search_terms(value)}
        lines = [line for line in output.splitlines() if JWT_SHAPE.search(line) or any(t in line for t in terms)]
        pytest.fail("secrets leaked into the output:\n  " + "\n  ".join(problems) + "\nin:\n" + "\n".join(lines[:20]))


def test_the_search_finds_leaks() -> None:
    key = fresh_secret("sk")
    jwt = "eyJhbGciOiJSUzI1NiJ9." + "eyJzdWIiOiJ1YTp4In0" + "." + fresh_secret("sig").replace("_", "-")
    found = {"key": [key], "jwt": [jwt]}
    assert find_leaks("nothing to see", found) == []
    assert find_leaks(f"key={key}", found) == ["key: part of the value, the whole value show(s)"]
    assert find_leaks(f"key={key[:3 + FRAGMENT]}…", found) == ["key: part of the value show(s)"]
    assert find_leaks(f"key=…{key[-FRAGMENT:]}", found) == ["key: part of the value show(s)"]
    assert find_leaks(f"claims {jwt.split('.')[1]}", found) == ["jwt: a JWT's claims show(s)"]
    assert find_leaks(f"…{jwt[-SIGNATURE_FRAGMENT:]}", found) == ["jwt: part of a JWT's signature show(s)"]
    assert find_leaks("eyJa.eyJb.c", {})[0].startswith("1 JWT-shaped string(s) show")


# =================================================================================================
# In process: repr and str of the main objects with secrets configured.
# =================================================================================================

SERVER_KEY = fresh_secret("sk")
BALANCE_KEY = fresh_secret("balkey")
PARTNER_KEY = fresh_secret("partner")
IN_PROCESS_SECRETS = {"server key": [SERVER_KEY], "balance API key": [BALANCE_KEY], "partner key": [PARTNER_KEY]}


@pytest.fixture(scope="module")
def secret_net() -> Iterator[Any]:
    """An in-process devnet whose balance API takes BALANCE_KEY."""
    with depositkit.Devnet(balance_api_key=BALANCE_KEY) as net:
        yield net


def _client(net: Any, **options: Any) -> Any:
    options = {
        "services_url": net.services_url,
        "funding": {"enabled": True, "api_key": BALANCE_KEY, "balance_api_url": net.services_url + "/balances"},
        "onramp": {"enabled": True, "api_key": PARTNER_KEY, "widget_url": net.services_url + "/onramp/widget"},
        **FAST,
        **options,
    }
    return depositkit.DepositClient(new_owner(), {"chain_id": CHAIN.ARBITRUM}, **options)


def _raised(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - any error is what is inspected
        return error
    raise AssertionError("expected an error")


def _user_rpc_client(net: Any, closing: list[Any]) -> list[Any]:
    client = depositkit.UserRpcClient(net.user_rpc_url, "some-project", SERVER_KEY, max_retries=0)
    closing.append(client)
    error = _raised(lambda: client.is_project_user("evm_chain", new_owner()))
    assert type(error) is depositkit.AuthenticationError, error
    closed = depositkit.UserRpcClient(net.user_rpc_url, "some-project", SERVER_KEY)
    closed.close()
    return [client, error, closed, _raised(lambda: closed.is_project_user("evm_chain", new_owner()))]


def _deposit_client(net: Any, closing: list[Any]) -> list[Any]:
    client = _client(net)
    closing.append(client)
    return [client, client.get_destination(), client.refund_config, _raised(client.poll_now)]


def _initialized_client(net: Any, closing: list[Any]) -> list[Any]:
    client = _client(net)
    closing.append(client)
    addresses = client.initialize()
    net.deposit(addresses.evm, CHAIN.BASE, "USDC", "5")
    events = client.poll_now()
    assert events
    return [client, addresses, *events, client.get_transactions()]


def _jwt_errors(net: Any, closing: list[Any]) -> list[Any]:
    client = _client(net, http_retries=0)
    closing.append(client)
    net.forge_next_jwts(1)
    forged = _raised(client.initialize)
    assert type(forged) is depositkit.JwtError, forged
    client.initialize()
    net.expire_sessions(client.owner_address)
    net.forge_next_jwts(5)
    try:
        renewal = _raised(client.get_transactions)
    finally:
        net.clear_faults()
    return [client, forged, renewal]


def _funding_balances(net: Any, closing: list[Any]) -> list[Any]:
    client = _client(net)
    closing.append(client)
    wallet = new_owner()
    net.deposit(wallet, CHAIN.BASE, "USDC", "7")
    client.set_evm_wallet("http://127.0.0.1:1", address=wallet)
    balances = client.get_wallet_balances()
    assert [b.source for b in balances] == ["apiKey"], balances
    return [client, *balances]


def _funding_error(net: Any, closing: list[Any]) -> list[Any]:
    # The server key sent as the balance API key: refused (401).
    client = _client(net, funding={"enabled": True, "api_key": SERVER_KEY, "balance_api_url": net.services_url + "/balances"})
    closing.append(client)
    client.set_evm_wallet("http://127.0.0.1:1", address=new_owner())
    error = _raised(client.get_wallet_balances)
    assert type(error) is depositkit.FundingError and "401" in str(error), error
    return [client, error]


def _onramp(net: Any, closing: list[Any]) -> list[Any]:
    client = _client(net)
    closing.append(client)
    url = client.open_onramp(20)
    assert f"partnerKey={PARTNER_KEY}&" in url  # the one place the partner key belongs
    for message in net.complete_onramp_order(url)["messages"]:
        assert client.handle_onramp_message(message) is True
    events = []
    while (event := client.next_event(timeout=0)) is not None:
        events.append(event)
    assert any(e.type == "onramp:complete" for e in events), events
    bad = _raised(lambda: client.handle_onramp_message({"event": "order_refunded", "data": {"partnerKey": PARTNER_KEY}}))
    assert type(bad) is depositkit.InvalidArgumentError, bad
    return [client, client.last_onramp_order, *events, bad]


def _configuration_errors(net: Any, closing: list[Any]) -> list[Any]:
    errors = [
        _raised(lambda: _client(net, funding={"enabled": True, "api_key": BALANCE_KEY + "\n"})),
        _raised(lambda: _client(net, onramp={"enabled": True, "api_key": PARTNER_KEY + "\x00"})),
        _raised(lambda: _client(net, funding={"enabled": True, "api_key": BALANCE_KEY.encode()})),
        _raised(lambda: _client(net, onramp={"enabled": True, "api_key": [PARTNER_KEY]})),
        _raised(lambda: _client(net, services_url=f"http://u:{SERVER_KEY}@127.0.0.1:1")),
        _raised(lambda: _client(net, onramp={"enabled": True, "widget_url": f"https://u:{PARTNER_KEY}@x.test/"})),
        _raised(lambda: depositkit.UserRpcClient(net.user_rpc_url, "p", SERVER_KEY + "\n")),
        _raised(lambda: depositkit.UserRpcClient(f"http://p:{SERVER_KEY}@127.0.0.1:1/", "p", SERVER_KEY)),
        _raised(lambda: depositkit.UserRpcClient(net.user_rpc_url, "p", SERVER_KEY.encode())),
    ]
    assert all(isinstance(e, (depositkit.ConfigurationError, TypeError)) for e in errors), errors
    return errors


def _devnet(net: Any, closing: list[Any]) -> list[Any]:
    return [net]


@pytest.mark.parametrize(
    "make",
    [
        _user_rpc_client,
        _deposit_client,
        _initialized_client,
        _jwt_errors,
        _funding_balances,
        _funding_error,
        _onramp,
        _configuration_errors,
        _devnet,
    ],
    ids=lambda make: make.__name__.strip("_"),
)
def test_repr_and_str_hide_secrets(secret_net: Any, make: Callable[[Any, list[Any]], list[Any]]) -> None:
    closing: list[Any] = []
    try:
        objects = make(secret_net, closing)
        shown = []
        for obj in objects:
            shown += [repr(obj), str(obj), format(obj)]
            if isinstance(obj, BaseException):
                shown += [repr(obj.args), format_exception(obj), repr(getattr(obj, "__dict__", None))]
                shown += [repr(getattr(obj, attr, None)) for attr in ("rpc_message", "rpc_data", "__cause__", "__context__")]
            if callable(getattr(obj, "to_dict", None)):
                shown.append(repr(obj.to_dict()))
            if isinstance(obj, (depositkit.DepositClient, depositkit.UserRpcClient, depositkit.Devnet)):
                # No attribute hands a key back either.
                shown += [f"{name}={value!r}" for name, value in public_values(obj).items()]
        text = "\n".join(shown)
        assert len(shown) >= 3 * len(objects) > 0
        problems = find_leaks(text, IN_PROCESS_SECRETS)
        assert not problems, f"{problems} in:\n{text}"
    finally:
        for obj in closing:
            obj.close()


if __name__ == "__main__" and sys.argv[1:] == ["--child"]:
    child_main()
