"""The ``particle`` backend (``backend="particle"``) through the Python face, with each of its
three server-side signers, against ``depositkit.Devnet()``'s Particle JSON-RPC
(``{services_url}/particle``, the built-in project's credentials of ``docs/protocol.md`` §1).
Every test has its own devnet, so that no account meets another test's.

- The deposit flow with each signer: 25 USDC to the EVM deposit address on Base, detected,
  swept (detected → processing → credited), and the destination's ledger holds exactly the
  delivered amount; then 5 USDC from a sender, refunded to it (its ledger holds exactly the
  refund's ``delivered_amount``), and never twice.
- Key: ``particle={"signer_key": ...}``, and the same key from
  ``DEPOSITKIT_PARTICLE_SIGNER_KEY`` (``"signer": "key"``) gives the same account.
- Seed: per-owner accounts (two owners, two accounts); a new client derives the same again;
  and the documented HKDF derivation, computed here, is the key of that account.
- Callback: ``depositkit.CallbackSigner`` over a Python function signing with coincurve
  (``input="digest"``, and ``input="message"`` applying ``personal_sign`` itself), called on a
  library thread.
- Faults: a callback that raises or returns garbage, or signs with another key: the sweep
  fails naming the problem and nothing is sent; a key that does not parse: a
  ``ConfigurationError`` naming the option, never the key. No ``repr``/``str`` shows a key or
  seed.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from typing import Any, Callable, Iterator, Optional

import coincurve
import pytest
from eth_hash.auto import keccak

import depositkit
from depositkit import CHAIN, CallbackSigner, DepositClient, Devnet

from conftest import FAST_CLIENT, EventLog, new_owner

# anvil's first two keys (the `test test ... junk` mnemonic); ADDRESS_A is KEY_A's.
KEY_A = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
ADDRESS_A = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
KEY_B = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
SEED = bytes(range(32)).hex()
BUILTIN_PROJECT = {"project_id": "depositkit-builtin-project", "client_key": "ck_depositkit_builtin"}


@pytest.fixture
def net() -> Iterator[Devnet]:
    """A devnet of this test's own."""
    with depositkit.Devnet() as devnet:
        yield devnet


@pytest.fixture
def make(net: Devnet) -> Iterator[Callable[..., DepositClient]]:
    """``make(owner, callback=None, **particle)``: a client of ``owner`` on the particle backend
    of ``net``, delivering USDC on Arbitrum to the owner, sweeping only when asked; closed
    after the test."""
    clients: list[DepositClient] = []

    def make(owner: str, callback: Optional[CallbackSigner] = None, **particle: Any) -> DepositClient:
        client = DepositClient(
            owner,
            {"chain_id": CHAIN.ARBITRUM},
            backend="particle",
            particle={"rpc_url": net.services_url + "/particle", **BUILTIN_PROJECT, **particle},
            signer=callback,
            auto_sweep=False,
            **FAST_CLIENT,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def address_of(key: bytes) -> str:
    """The EVM address of a secp256k1 key (lower case)."""
    public = coincurve.PrivateKey(key).public_key.format(compressed=False)[1:]
    return "0x" + keccak(public)[-20:].hex()


def personal_digest(root: bytes) -> bytes:
    """EIP-191 ``personal_sign``'s digest of 32 raw bytes."""
    return keccak(b"\x19Ethereum Signed Message:\n32" + root)


def sign_digest(key: str) -> Callable[[bytes], bytes]:
    """A signing function over the digest, as a KMS's "sign digest" (v as 0/1)."""
    private = coincurve.PrivateKey(bytes.fromhex(key))

    def sign(digest: bytes) -> bytes:
        assert isinstance(digest, bytes) and len(digest) == 32
        return private.sign_recoverable(digest, hasher=None)

    return sign


def detect(net: Devnet, client: DepositClient, amount: str, sender: Optional[str] = None) -> Any:
    """``amount`` USDC on Base into the client's EVM deposit address; the detected event."""
    net.deposit(client.deposit_addresses.evm, CHAIN.BASE, "USDC", amount, sender=sender)
    found = [e for e in client.poll_now() if e.phase == "detected"]
    assert len(found) == 1, found
    return found[0]


def flow_and_refund(net: Devnet, client: DepositClient) -> None:
    """Detected → swept → credited at the destination; then a deposit refunded to its sender."""
    owner = client.owner_address
    addresses = client.initialize()
    deposit = detect(net, client, "25")
    result = client.sweep(deposit.id)
    assert result.status == "success", result.error
    delivered = result.delivered
    assert delivered is not None and (delivered.chain_id, delivered.token) == (CHAIN.ARBITRUM, "USDC")
    assert net.ledger_balance(owner, CHAIN.ARBITRUM, "USDC") == delivered.raw_amount
    assert 24_000_000 < delivered.raw_amount < 25_000_000
    log = EventLog(client)
    log.reached(deposit.id, "credited")
    assert log.phases(deposit.id) == ["detected", "processing", "credited"]

    sender = new_owner()
    second = detect(net, client, "5", sender=sender)
    refund = client.refund(second.id)
    assert refund.status == "success", refund.error
    assert (refund.refunded_to or "").lower() == sender
    assert refund.delivered_amount is not None
    received = net.ledger_balance(sender, CHAIN.BASE, "USDC")
    assert received == depositkit.parse_units(refund.delivered_amount, 6)
    assert 4_000_000 < received < 5_000_000
    with pytest.raises(depositkit.RefundError, match="already refunded"):
        client.refund(second.id)
    assert client.deposit_addresses == addresses


def assert_hidden(secret: str, *objects: object) -> None:
    """No ``repr()`` or ``str()`` of ``objects`` shows ``secret`` (in either case)."""
    for obj in objects:
        for text in (repr(obj), str(obj)):
            assert secret.lower() not in text.lower(), text


# --- key ----------------------------------------------------------------------------------------


def test_a_key_signs_for_its_account_from_the_options_or_the_environment(
    net: Devnet, make: Callable[..., DepositClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = new_owner()
    client = make(owner, signer_key="0x" + KEY_A)
    flow_and_refund(net, client)
    assert_hidden(KEY_A, client)

    # The same key from DEPOSITKIT_PARTICLE_SIGNER_KEY: the same account (one key, one account,
    # whatever the owner).
    monkeypatch.setenv("DEPOSITKIT_PARTICLE_SIGNER_KEY", KEY_A)
    from_env = make(new_owner(), signer="key")
    assert from_env.initialize() == client.deposit_addresses
    monkeypatch.delenv("DEPOSITKIT_PARTICLE_SIGNER_KEY")
    with pytest.raises(depositkit.ConfigurationError, match="DEPOSITKIT_PARTICLE_SIGNER_KEY"):
        make(new_owner(), signer="key")


def test_a_key_that_does_not_parse_is_named_never_shown(make: Callable[..., DepositClient]) -> None:
    secret = "0x" + "feedface" * 7 + "zz0d15ea"
    with pytest.raises(depositkit.ConfigurationError) as info:
        make(new_owner(), signer_key=secret)
    assert str(info.value).startswith("particle.signer_key: "), str(info.value)
    assert_hidden("feedface", info.value, info.value.args)
    # Both a key and a seed: refused, neither shown.
    with pytest.raises(depositkit.ConfigurationError) as info:
        make(new_owner(), signer_key=KEY_A, signer_seed=SEED)
    assert_hidden(KEY_A, info.value)
    assert_hidden(SEED, info.value)


# --- seed ---------------------------------------------------------------------------------------


def owner_key(seed: bytes, owner: str) -> bytes:
    """``docs/particle.md`` §4.2: HKDF-SHA256(salt, seed, owner's 20 bytes ‖ 0x00, 32 bytes)."""
    prk = hmac.new(b"depositkit/particle/owner-key/v1", seed, hashlib.sha256).digest()
    info = bytes.fromhex(owner.removeprefix("0x")) + b"\x00"
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()


def test_a_seed_gives_each_owner_an_account_that_can_be_derived_again(
    net: Devnet, make: Callable[..., DepositClient]
) -> None:
    first, second = new_owner(), new_owner()
    client = make(first, signer_seed=SEED)
    flow_and_refund(net, client)
    assert_hidden(SEED, client)
    assert make(second, signer_seed=SEED).initialize().evm != client.deposit_addresses.evm
    # After a disaster: the seed alone gives the same account again...
    assert make(first, signer_seed=SEED).initialize() == client.deposit_addresses
    # ...and so does the documented derivation, computed here, as a plain key.
    key = owner_key(bytes.fromhex(SEED), first)
    assert make(first, signer_key=key.hex()).initialize() == client.deposit_addresses


# --- callback -----------------------------------------------------------------------------------


def test_a_python_callable_signs_on_a_library_thread(
    net: Devnet, make: Callable[..., DepositClient]
) -> None:
    threads: list[int] = []
    sign = sign_digest(KEY_A)

    def kms(digest: bytes) -> bytes:
        threads.append(threading.get_ident())
        return sign(digest)

    signer = CallbackSigner(ADDRESS_A.lower(), kms)
    assert (signer.address, signer.input) == (ADDRESS_A, "digest")
    assert repr(signer) == f"<depositkit.CallbackSigner address='{ADDRESS_A}' input='digest'>"
    flow_and_refund(net, make(new_owner(), callback=signer))
    assert len(threads) >= 2  # the sweep and the refund
    assert threading.get_ident() not in threads


def test_a_message_callable_applies_personal_sign_itself(
    net: Devnet, make: Callable[..., DepositClient]
) -> None:
    sign = sign_digest(KEY_A)
    signer = CallbackSigner(ADDRESS_A, lambda root: sign(personal_digest(root)), input="message")
    client = make(new_owner(), callback=signer)
    client.initialize()
    result = client.sweep(detect(net, client, "25").id)
    assert result.status == "success", result.error
    assert result.delivered is not None
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == result.delivered.raw_amount


def refused(net: Devnet, client: DepositClient, *fragments: str) -> None:
    """A sweep whose signing fails: ``failed``, naming why, and nothing moved."""
    addresses = client.initialize()
    deposit = detect(net, client, "25")
    result = client.sweep(deposit.id)
    assert result.status == "failed"
    for fragment in fragments:
        assert fragment in (result.error or ""), result.error
    assert net.ledger_balance(addresses.evm, CHAIN.BASE, "USDC") == 25_000_000
    assert net.ledger_balance(client.owner_address, CHAIN.ARBITRUM, "USDC") == 0
    assert [d.id for d in client.pending_deposits()] == [deposit.id]


@pytest.mark.parametrize(
    ("raised", "message"),
    [
        (RuntimeError("KMS unavailable"), "the signer callback raised RuntimeError: KMS unavailable"),
        # A depositkit error keeps its own message (and kind).
        (depositkit.NetworkError("KMS unreachable"), "KMS unreachable"),
    ],
)
def test_a_callable_that_raises_fails_the_signing_and_nothing_is_sent(
    net: Devnet, make: Callable[..., DepositClient], raised: Exception, message: str
) -> None:
    def unavailable(digest: bytes) -> bytes:
        raise raised

    refused(net, make(new_owner(), callback=CallbackSigner(ADDRESS_A, unavailable)), message)


def test_a_callable_answering_garbage_fails_the_signing(net: Devnet, make: Callable[..., DepositClient]) -> None:
    refused(
        net,
        make(new_owner(), callback=CallbackSigner(ADDRESS_A, lambda digest: "0x" + "00" * 65)),
        "the signer callback returned str, not bytes",
    )


def test_a_callable_signing_with_another_key_is_refused(
    net: Devnet, make: Callable[..., DepositClient]
) -> None:
    other = CallbackSigner(ADDRESS_A, sign_digest(KEY_B))
    refused(net, make(new_owner(), callback=other), "refused", "not from the account's owner")


def test_callback_signer_arguments_are_checked(make: Callable[..., DepositClient]) -> None:
    with pytest.raises(depositkit.ConfigurationError, match='"0x1234"'):
        CallbackSigner("0x1234", sign_digest(KEY_A))
    with pytest.raises(ValueError, match="input must be \"digest\" or \"message\", not 'raw'"):
        CallbackSigner(ADDRESS_A, sign_digest(KEY_A), input="raw")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sign must be a callable"):
        CallbackSigner(ADDRESS_A, KEY_A)  # type: ignore[arg-type]
    # A key where the signer belongs: a type error that never shows it.
    with pytest.raises(depositkit.ConfigurationTypeError, match="signer must be a depositkit.CallbackSigner, not str") as info:
        make(new_owner(), callback=KEY_A)  # type: ignore[arg-type]
    assert_hidden(KEY_A, info.value)


def test_the_async_client_takes_the_same_signer(net: Devnet, make: Callable[..., DepositClient]) -> None:
    import asyncio

    signer = CallbackSigner(ADDRESS_A, sign_digest(KEY_A))
    expected = make(new_owner(), callback=signer).initialize()

    async def run() -> None:
        async with depositkit.AsyncDepositClient(
            new_owner(),
            {"chain_id": CHAIN.ARBITRUM},
            backend="particle",
            particle={"rpc_url": net.services_url + "/particle", **BUILTIN_PROJECT},
            signer=signer,
            auto_sweep=False,
            **FAST_CLIENT,
        ) as client:
            # One key, one account: the same deposit addresses, and a sweep it signs.
            assert await client.initialize() == expected
            net.deposit(expected.evm, CHAIN.BASE, "USDC", "25")
            [deposit] = [e for e in await client.poll_now() if e.phase == "detected"]
            result = await client.sweep(deposit.id)
            assert result.status == "success", result.error

    asyncio.run(run())
