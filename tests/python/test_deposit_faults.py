"""depositkit.DepositClient when the services misbehave (devnet fault injection): the JWT
service down, forged tokens, key rotation and expired sessions, 429/5xx from the account
service, failing sweeps."""

from __future__ import annotations

from typing import Any

from depositkit import (
    CHAIN,
    AuthenticationError,
    DepositSDKError,
    Devnet,
    JwtError,
    NotFoundError,
    UniversalAccountError,
)

from conftest import EventLog, delivered_usdc, raises_exactly


def test_jwt_service_down_then_initialize_succeeds(net: Devnet, make_client: Any) -> None:
    client = make_client(http_retries=1)
    net.inject_fault("jwt", status=503, count=100)
    with raises_exactly(JwtError, "503") as info:
        client.initialize()
    assert isinstance(info.value, DepositSDKError) and info.value.code == 301  # type: ignore[attr-defined]
    assert client.status == "error"
    net.clear_faults()
    addresses = client.initialize()
    assert client.status == "ready" and client.deposit_addresses == addresses
    log = EventLog(client)
    log.until(lambda events: [e.status for e in events if e.type == "status:change"] == ["initializing", "error", "initializing", "ready"])


def test_jwt_service_unreachable(make_client: Any) -> None:
    from conftest import closed_port

    client = make_client(services_url=f"http://127.0.0.1:{closed_port()}", http_retries=0)
    with raises_exactly(JwtError):
        client.initialize()
    assert client.status == "error"


def test_forged_jwt_is_refused(net: Devnet, make_client: Any) -> None:
    client = make_client()
    net.forge_next_jwts(1)
    with raises_exactly(JwtError) as info:
        client.initialize()
    assert "signature" in str(info.value).lower() or "verif" in str(info.value).lower(), info.value
    assert client.status == "error"
    # The next token is genuine.
    client.initialize()
    assert client.status == "ready"


def test_jwt_key_rotation_mid_session(net: Devnet, make_client: Any) -> None:
    client = make_client()
    evm = client.initialize().evm
    net.rotate_jwt_key()
    # The services refuse the session from now on: the client renews it (a token signed by the
    # new key, which it finds by refetching the JWKS) and carries on.
    net.expire_sessions(client.owner_address)
    net.deposit(evm, CHAIN.BASE, "USDC", "10")
    [detected] = client.poll_now()
    EventLog(client).reached(detected.id, "credited")
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == delivered_usdc("10")


def test_account_service_429_and_5xx_are_retried(net: Devnet, make_client: Any) -> None:
    client = make_client()
    evm = client.initialize().evm
    net.deposit(evm, CHAIN.ARBITRUM, "USDT", "10")
    net.inject_fault("ua", status=429, retry_after=0, count=2, path="/v1/balances")
    net.inject_fault("ua", status=503, count=1, path="/v1/sweeps/quote")
    net.inject_fault("ua", status=502, count=1, path="/v1/sweeps/send")
    [detected] = client.poll_now()
    EventLog(client).reached(detected.id, "credited")
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == delivered_usdc("10")


def test_account_service_failing_poll_raises_and_reports(net: Devnet, make_client: Any) -> None:
    client = make_client(http_retries=0)
    client.initialize()
    log = EventLog(client)
    log.until(lambda events: any(getattr(e, "status", None) == "ready" for e in events))
    net.inject_fault("ua", status=500, count=1, path="/v1/balances")
    with raises_exactly(UniversalAccountError, "Failed to get balances"):
        client.poll_now()
    log.until(lambda events: any(e.type == "error" for e in events))
    [error] = [e for e in log.events if e.type == "error"]
    assert error.kind == "UniversalAccountError" and error.code == 400
    assert "Failed to get balances" in error.message
    assert error.to_dict() == {"kind": "UniversalAccountError", "code": 400, "message": error.message}
    exception = error.exception()
    assert type(exception) is UniversalAccountError and str(exception) == error.message
    assert client.poll_now() == []  # the fault is spent


def test_signer_refusing_is_an_authentication_error(net: Devnet, make_client: Any) -> None:
    client = make_client(http_retries=0)
    net.inject_fault("signer", status=401, count=10)
    with raises_exactly(AuthenticationError):
        client.initialize()


def test_failing_sweeps_end_in_a_failed_event_then_a_manual_sweep(net: Devnet, make_client: Any) -> None:
    client = make_client()
    evm = client.initialize().evm
    net.fail_next_sweeps(3)
    net.deposit(evm, CHAIN.BASE, "USDC", "10")
    [detected] = client.poll_now()
    log = EventLog(client)
    failed = log.reached(detected.id, "failed")
    assert failed.error
    assert log.phases(detected.id) == ["detected", "processing", "processing", "processing", "failed"]
    result = client.sweep_result(detected.id)
    assert result is not None and result.status == "failed" and result.error
    assert result.transaction_id is None and result.delivered is None
    assert result.to_dict()["transactionId"] == ""
    [pending] = client.pending_deposits()
    assert pending.id == detected.id
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == 0
    # The money is still in the account: a manual sweep delivers it.
    result = client.sweep(detected.id)
    assert result.status == "success" and result.delivered is not None
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == delivered_usdc("10")
    assert log.reached(detected.id, "credited").transaction_id == result.transaction_id
    with raises_exactly(NotFoundError, detected.id):
        client.sweep(detected.id)


def test_rejected_sweep_is_retried_and_credited(net: Devnet, make_client: Any) -> None:
    client = make_client()
    evm = client.initialize().evm
    net.fail_next_sweeps(2, "reject")
    net.deposit(evm, CHAIN.BASE, "USDC", "10")
    [detected] = client.poll_now()
    log = EventLog(client)
    log.reached(detected.id, "credited")
    assert log.phases(detected.id) == ["detected", "processing", "processing", "processing", "credited"]
