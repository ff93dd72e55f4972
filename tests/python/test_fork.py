"""``os.fork()`` with live depositkit objects (issue 7: a forked child that touches an inherited
client gets a clear error instead of hanging).

Everything runs in a subprocess (``SCRIPT``) so that a hang can never hang pytest: the
subprocess has a timeout, each forked child has a watchdog (``faulthandler`` dumps its stacks and
exits 1), and the parent kills a child that has not exited in time. The parent holds a
``Devnet``, a ``UserRpcClient`` and a ``DepositClient`` that is initialized, watching and has a
Python callback, and forks:

- *touch* children call the inherited objects' methods: each must raise ``InternalError``
  saying the object was created in another process and must be created anew, within a couple
  of seconds; then the child exits normally (``atexit`` hooks, finalization) with code 0;
- a *fresh* child drops the inherited objects and creates new ones, which work;
- afterwards the parent's objects keep working.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

SCRIPT = r'''
import faulthandler, gc, json, os, signal, sys, time, warnings

# Python 3.12+ warns that fork() of a multi-threaded process may deadlock the child: what this
# script checks depositkit avoids.
warnings.simplefilter("ignore", DeprecationWarning)

import depositkit

CHILD_WATCHDOG = 20  # s: a child still running then dumps its stacks and exits 1
CHILD_LIMIT = 30  # s: the parent kills a child still running then


def out(**fields):
    print(json.dumps(fields), flush=True)


out(parent="pid", ok=os.getpid())
net = depositkit.Devnet()
creds = net.demo_credentials()
rpc = depositkit.UserRpcClient(net.user_rpc_url, creds["project_id"], creds["server_key"])
seen = []
client = depositkit.DepositClient(
    "0x" + os.urandom(20).hex(), depositkit.CHAIN.ARBITRUM, services_url=net.services_url,
    polling_interval_ms=20, min_polling_interval_ms=20, http_initial_backoff_ms=5,
)
client.subscribe(lambda event: seen.append(event.type))
addresses = client.initialize()
client.start_watching()
assert rpc.get_user_info(creds["user_uuid"], creds["user_token"]).uuid == creds["user_uuid"]


def detected(amount):
    """Deposits ``amount`` USDC and waits for the watcher to detect it (a callback event)."""
    before = seen.count("deposit:lifecycle")
    net.deposit(addresses.evm, depositkit.CHAIN.ARBITRUM, "USDC", amount)
    deadline = time.monotonic() + 10
    while seen.count("deposit:lifecycle") == before:
        assert time.monotonic() < deadline, "the watcher detected nothing"
        time.sleep(0.01)


detected("5")

TOUCH = [
    ("client.poll_now()", lambda: client.poll_now()),
    ("client.initialize()", lambda: client.initialize()),
    ("client.deposit_addresses", lambda: client.deposit_addresses),
    ("client.status", lambda: client.status),
    ("client.pending_deposits()", lambda: client.pending_deposits()),
    ("client.get_wallet_balances()", lambda: client.get_wallet_balances()),
    ("client.next_event()", lambda: client.next_event(timeout=0.2)),
    ("client.start_watching()", lambda: client.start_watching()),
    ("client.stop_watching()", lambda: client.stop_watching()),
    ("client.closed", lambda: client.closed),
    ("client.close()", lambda: client.close()),
    ("rpc.get_user_info()", lambda: rpc.get_user_info(creds["user_uuid"], creds["user_token"])),
    ("rpc.is_project_user()", lambda: rpc.is_project_user("solana", creds["solana_address"])),
    ("rpc.closed", lambda: rpc.closed),
    ("rpc.close()", lambda: rpc.close()),
    ("net.deposit()", lambda: net.deposit(addresses.evm, depositkit.CHAIN.ARBITRUM, "USDC", "1")),
    ("net.demo_credentials()", lambda: net.demo_credentials()),
    ("net.closed", lambda: net.closed),
    ("net.close()", lambda: net.close()),
    # Never an error: what a traceback or a debugger shows.
    ("repr(client)", lambda: repr(client)),
    ("repr(rpc)", lambda: repr(rpc)),
    ("repr(net)", lambda: repr(net)),
]


def touch(tag):
    for name, call in TOUCH:
        out(child=tag, start=name)
        started = time.monotonic()
        try:
            value = call()
        except BaseException as error:
            out(child=tag, action=name, seconds=time.monotonic() - started,
                error=type(error).__name__, message=str(error), code=getattr(error, "code", None),
                sdk=isinstance(error, depositkit.DepositSDKError))
        else:
            out(child=tag, action=name, seconds=time.monotonic() - started, ok=repr(value)[:300])


def idle(tag):
    """Touches nothing: the normal exit alone (atexit closes what this process created)."""


def fresh(tag):
    global client, rpc, net
    services_url, user_rpc_url = net.services_url, net.user_rpc_url
    del client, rpc, net
    gc.collect()
    # New objects in the child, against the parent's devnet (its server runs in the parent).
    with depositkit.UserRpcClient(user_rpc_url, creds["project_id"], creds["server_key"]) as mine:
        out(child=tag, action="new rpc", ok=mine.get_user_info(creds["user_uuid"], creds["user_token"]).uuid)
    with depositkit.DepositClient(
        "0x" + os.urandom(20).hex(), depositkit.CHAIN.ARBITRUM, services_url=services_url,
    ) as mine:
        out(child=tag, action="new client", ok=mine.initialize().evm)
        out(child=tag, action="new client poll", ok=repr(mine.poll_now()))


def fork(tag, work):
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        faulthandler.dump_traceback_later(CHILD_WATCHDOG, exit=True)
        work(tag)
        out(child=tag, action="exit", pid=os.getpid())
        sys.exit(0)  # a normal exit: atexit hooks, then finalization with what is left
    deadline = time.monotonic() + CHILD_LIMIT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            out(child=tag, exit_code=os.waitstatus_to_exitcode(status), seconds=time.monotonic() - started)
            return
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            out(child=tag, exit_code="hang")
            return
        time.sleep(0.02)


fork("idle", idle)
fork("touch-1", touch)
fork("touch-2", touch)
fork("fresh", fresh)

# The parent's objects still work, the watcher included.
assert client.is_watching and not client.closed
detected("7")
out(parent="poll_now", ok=repr(client.poll_now()))
out(parent="user", ok=rpc.get_user_info(creds["user_uuid"], creds["user_token"]).uuid)
out(parent="db", ok=net.db_path.exists())
client.close()
rpc.close()
net.close()
out(parent="done")
'''

TOUCHED = [
    "client.poll_now()",
    "client.initialize()",
    "client.deposit_addresses",
    "client.status",
    "client.pending_deposits()",
    "client.get_wallet_balances()",
    "client.next_event()",
    "client.start_watching()",
    "client.stop_watching()",
    "client.closed",
    "client.close()",
    "rpc.get_user_info()",
    "rpc.is_project_user()",
    "rpc.closed",
    "rpc.close()",
    "net.deposit()",
    "net.demo_credentials()",
    "net.closed",
    "net.close()",
]


def run_script() -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    try:
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=150)
    except subprocess.TimeoutExpired as timeout:
        raise AssertionError(f"the fork script hung; stdout so far:\n{timeout.stdout!r}\nstderr:\n{timeout.stderr!r}") from None
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return out, lines


_RESULT: list[tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]] = []


def result() -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """The script's run, shared by the tests of this module (it takes a few seconds)."""
    if not _RESULT:
        _RESULT.append(run_script())
    return _RESULT[0]


def child_lines(tag: str) -> list[dict[str, Any]]:
    return [line for line in result()[1] if line.get("child") == tag]


def test_the_script_and_every_child_exit_cleanly() -> None:
    out, lines = result()
    assert out.returncode == 0, f"stdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    assert out.stderr == ""
    exits = {line["child"]: line["exit_code"] for line in lines if "exit_code" in line}
    assert exits == {"idle": 0, "touch-1": 0, "touch-2": 0, "fresh": 0}, out.stdout
    # Exiting never waits for the parent's threads (closing them would take seconds).
    idle = next(line for line in lines if line.get("child") == "idle" and "exit_code" in line)
    assert idle["seconds"] < 2, idle


def test_an_inherited_object_raises_a_clear_error_at_once() -> None:
    for tag in ("touch-1", "touch-2"):
        actions = {line["action"]: line for line in child_lines(tag) if "action" in line}
        assert "exit" in actions, f"{tag} did not finish: {child_lines(tag)}"
        for name in TOUCHED:
            line = actions[name]
            assert line.get("error") == "InternalError", (tag, line)
            assert line["code"] == 900 and line["sdk"], line
            message = line["message"]
            assert "was created in process" in message and "fork" in message, message
            assert "create a new" in message, message
            assert line["seconds"] < 2, line
        for name in ("repr(client)", "repr(rpc)", "repr(net)"):
            assert "ok" in actions[name], actions[name]
            assert "<depositkit." in actions[name]["ok"]


def test_the_error_names_the_class_and_both_processes() -> None:
    parent_pid = next(line["ok"] for line in result()[1] if line.get("parent") == "pid")
    actions = {line["action"]: line for line in child_lines("touch-1") if "action" in line}
    child_pid = actions["exit"]["pid"]
    for name, cls in (("client.poll_now()", "DepositClient"), ("rpc.close()", "UserRpcClient"), ("net.deposit()", "Devnet")):
        message = actions[name]["message"]
        assert message.startswith(f"this {cls} was created in process {parent_pid} and cannot be used in this forked child (process {child_pid})"), message
        assert message.endswith(f"create a new {cls} in the child"), message


def test_a_child_can_create_its_own_objects() -> None:
    actions = {line["action"]: line for line in child_lines("fresh") if "action" in line}
    assert set(actions) == {"new rpc", "new client", "new client poll", "exit"}, actions
    assert all("ok" in line for name, line in actions.items() if name != "exit"), actions
    assert actions["new client"]["ok"].startswith("0x")


def test_the_parent_keeps_working_after_its_children() -> None:
    _, lines = result()
    parent = {line["parent"]: line for line in lines if "parent" in line}
    assert set(parent) == {"pid", "poll_now", "user", "db", "done"}, parent
    assert parent["db"]["ok"] is True

