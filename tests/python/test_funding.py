"""Fund-from-wallet (docs/funding.md §3-4, §6 Python) on the real local chains: anvil for the EVM
chains, the LiteSVM JSON-RPC server for Solana, and a devnet backed by them
(``Devnet(chains=local_chains)``), so every transfer, detection, sweep and delivery below is a
real transaction.

Funding wallets are anvil's development accounts (through the node's URL, or through a Python
callable forwarding to the node), fresh accounts anvil impersonates, and solders keypairs signing
the transactions depositkit builds."""

from __future__ import annotations

import base64
import concurrent.futures
import gc
import json
import secrets
import threading
import urllib.request
import weakref
from typing import Any, Callable, Iterator

import pytest
from eth_utils import keccak, to_checksum_address
from solders.keypair import Keypair
from solders.transaction import Transaction

import depositkit
from depositkit import (
    CHAIN,
    ConfigurationError,
    DepositSDKError,
    FundingBalance,
    FundingError,
    FundingTransferResult,
    InvalidArgumentError,
    ProviderError,
)

from conftest import EventLog, FAST_CLIENT, new_owner, raises_exactly

BASE, ARBITRUM, SOLANA = int(CHAIN.BASE), int(CHAIN.ARBITRUM), int(CHAIN.SOLANA)
NATIVE_GAS = 21_000


# --- the chains ---------------------------------------------------------------------------------


class RpcFailure(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


def rpc(url: str, method: str, params: Any = ()) -> Any:
    """One JSON-RPC call with urllib; a JSON-RPC error raises ``RpcFailure``."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params) if isinstance(params, tuple) else params})
    request = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    if "error" in answer:
        raise RpcFailure(answer["error"])
    return answer["result"]


def evm_url(local_chains: dict[str, Any], chain_id: int) -> str:
    return next(c["rpcUrl"] for c in local_chains["evm"] if c["chainId"] == chain_id)


def usdc_address(chain_id: int) -> str:
    return depositkit.token_info("USDC", chain_id)["contract"]


def word(value: Any) -> str:
    return format(int(value, 16) if isinstance(value, str) else value, "064x")


def call_data(signature: str, *args: Any) -> str:
    return "0x" + keccak(text=signature)[:4].hex() + "".join(word(a) for a in args)


def token_balance(url: str, token: str, holder: str) -> int:
    return int(rpc(url, "eth_call", ({"to": token, "data": call_data("balanceOf(address)", holder)}, "latest")), 16)


def eth_balance(url: str, holder: str) -> int:
    return int(rpc(url, "eth_getBalance", (holder, "latest")), 16)


def receipt(url: str, tx_hash: str) -> dict[str, Any]:
    found = rpc(url, "eth_getTransactionReceipt", (tx_hash,))
    assert found is not None, f"{tx_hash} is not mined"
    return found


def send_and_mine(url: str, tx: dict[str, Any]) -> dict[str, Any]:
    tx_hash = rpc(url, "eth_sendTransaction", (tx,))
    for _ in range(1000):
        found = rpc(url, "eth_getTransactionReceipt", (tx_hash,))
        if found is not None:
            assert found["status"] == "0x1", found
            return found
    raise AssertionError(f"{tx_hash} not mined")


def mint_usdc(local_chains: dict[str, Any], chain_id: int, to: str, raw: int) -> None:
    """The test token's open ``mint``, sent from a development account."""
    url = evm_url(local_chains, chain_id)
    minter = local_chains["evmDevAccounts"][9]["address"]
    send_and_mine(url, {"from": minter, "to": usdc_address(chain_id), "data": call_data("mint(address,uint256)", to, raw)})


@pytest.fixture
def fresh_evm_wallet() -> Iterator[Callable[[str, int], str]]:
    """``fresh_evm_wallet(url, wei)``: a new address holding ``wei`` that the node signs for
    (``anvil_impersonateAccount``); impersonation ends after the test, so the node's
    ``eth_accounts`` are its development accounts again."""
    made: list[tuple[str, str]] = []

    def make(url: str, wei: int) -> str:
        address = to_checksum_address("0x" + secrets.token_hex(20))
        rpc(url, "anvil_setBalance", (address, hex(wei)))
        rpc(url, "anvil_impersonateAccount", (address,))
        made.append((url, address))
        return address

    yield make
    for url, address in made:
        rpc(url, "anvil_stopImpersonatingAccount", (address,))


def dev_account(local_chains: dict[str, Any], index: int) -> str:
    return local_chains["evmDevAccounts"][index]["address"]


class AnvilWallet:
    """An EIP-1193 wallet as a Python callable: forwards to anvil's JSON-RPC with urllib (the
    node signs for ``account``), answers the account requests itself, switches nodes on
    ``wallet_switchEthereumChain``, and can refuse methods (``reject``) with a ProviderError."""

    def __init__(self, local_chains: dict[str, Any], account: str, chain_id: int = 1) -> None:
        self.urls = {c["chainId"]: c["rpcUrl"] for c in local_chains["evm"]}
        self.url = self.urls[chain_id]
        self.account = account
        self.calls: list[tuple[str, Any]] = []
        self.threads: set[str] = set()
        self.reject: dict[str, ProviderError] = {}

    def __call__(self, method: str, params: Any) -> Any:
        self.calls.append((method, params))
        self.threads.add(threading.current_thread().name)
        if method in self.reject:
            raise self.reject[method]
        if method in ("eth_requestAccounts", "eth_accounts"):
            return [self.account]
        if method == "wallet_requestPermissions":
            return [{"parentCapability": "eth_accounts"}]
        if method == "wallet_switchEthereumChain":
            chain_id = int(params[0]["chainId"], 16)
            if chain_id not in self.urls:
                raise ProviderError(ProviderError.UNRECOGNIZED_CHAIN, f"unknown chain {chain_id}")
            self.url = self.urls[chain_id]
            return None
        try:
            return rpc(self.url, method, params)
        except RpcFailure as failure:
            raise ProviderError(failure.error["code"], failure.error["message"]) from None

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]


class SolanaWallet:
    """A Phantom-style wallet as a Python callable: signs the transaction depositkit built with
    a solders keypair and sends it to the SVM node."""

    def __init__(self, url: str, keypair: Keypair) -> None:
        self.url = url
        self.keypair = keypair
        self.calls: list[tuple[str, Any]] = []

    def __call__(self, method: str, params: Any) -> Any:
        self.calls.append((method, params))
        if method == "connect":
            return {"publicKey": str(self.keypair.pubkey())}
        if method == "signAndSendTransaction":
            assert params["encoding"] == "base64"
            tx = Transaction.from_bytes(base64.b64decode(params["transaction"]))
            assert tx.message.account_keys[0] == self.keypair.pubkey(), "the wallet pays the fee"
            tx.sign([self.keypair], tx.message.recent_blockhash)
            signature = rpc(self.url, "sendTransaction", (base64.b64encode(bytes(tx)).decode(), {"encoding": "base64"}))
            return {"signature": signature}
        raise ProviderError(ProviderError.UNSUPPORTED_METHOD, f"{method} is not supported")


def sol_balance(url: str, address: str) -> int:
    return int(rpc(url, "getBalance", (address,))["value"])


def funded_keypair(url: str, lamports: int) -> Keypair:
    keypair = Keypair()
    rpc(url, "requestAirdrop", (str(keypair.pubkey()), lamports))
    return keypair


def one(balances: list[FundingBalance], chain_id: int, token: str) -> FundingBalance:
    found = [b for b in balances if b.chain_id == chain_id and b.token == token]
    assert len(found) == 1, balances
    return found[0]


def credited(log: EventLog, chain_id: int, token: str, timeout: float = 30.0) -> Any:
    """Waits until a deposit of ``token`` on ``chain_id`` is credited; returns that event."""

    def done(events: list[Any]) -> bool:
        failed = [e for e in events if e.type == "deposit:lifecycle" and e.phase == "failed"]
        assert not failed, failed
        return any(e.type == "deposit:lifecycle" and e.phase == "credited" and e.chain_id == chain_id and e.token == token for e in events)

    log.until(done, timeout)
    return next(e for e in log.events if e.type == "deposit:lifecycle" and e.phase == "credited" and e.chain_id == chain_id)


def assert_delivered(client: Any, chain_net: Any, local_chains: dict[str, Any], event: Any) -> int:
    """The credited deposit's delivery is on Arbitrum: the owner holds exactly what the sweep
    delivered (read with eth_call and with devnet's chain_balance)."""
    result = client.sweep_result(event.id)
    assert result is not None and result.status == "success", result
    delivered = result.delivered.raw_amount
    assert delivered > 0
    owner = client.owner_address
    assert token_balance(evm_url(local_chains, ARBITRUM), usdc_address(ARBITRUM), owner) == delivered
    assert chain_net.chain_balance(owner, ARBITRUM, "USDC") == delivered
    assert event.transaction_id == result.transaction_id
    assert receipt(evm_url(local_chains, ARBITRUM), result.transaction_id)["status"] == "0x1"
    return delivered


# --- EVM: the whole path ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "token", "account", "raw"),
    [
        pytest.param("url", "ETH", 4, 10**16, id="url-eth"),
        pytest.param("url", "USDC", 5, 20_000_000, id="url-usdc"),
        pytest.param("callable", "ETH", 6, 10**16, id="callable-eth"),
        pytest.param("callable", "USDC", 7, 20_000_000, id="callable-usdc"),
    ],
)
def test_evm_funding_is_detected_swept_and_credited(
    chain_net: Any,
    local_chains: dict[str, Any],
    local_funding: dict[str, Any],
    make_chain_client: Any,
    provider: str,
    token: str,
    account: int,
    raw: int,
) -> None:
    base = evm_url(local_chains, BASE)
    wallet_address = dev_account(local_chains, account)
    if token == "USDC":
        mint_usdc(local_chains, BASE, wallet_address, 50_000_000)
    client = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    addresses = client.initialize()
    if provider == "url":
        client.set_evm_wallet(base, address=wallet_address)
    else:
        wallet = AnvilWallet(local_chains, wallet_address, chain_id=1)
        client.set_evm_wallet(wallet)
        assert client.connect_evm_wallet() == wallet_address

    balance = one(client.get_wallet_balances(), BASE, token)
    assert balance.source == "rpc"
    assert balance.wallet_address == to_checksum_address(wallet_address)
    held_token = token_balance(base, usdc_address(BASE), wallet_address) if token == "USDC" else None
    held_eth = eth_balance(base, wallet_address)
    assert balance.raw_amount == (held_token if token == "USDC" else held_eth)

    result = client.fund_from_wallet(balance, raw)

    assert isinstance(result, FundingTransferResult)
    assert (result.chain_id, result.token, result.raw_amount) == (BASE, token, raw)
    assert result.amount == depositkit.format_units(raw, 18 if token == "ETH" else 6)
    assert result.from_address == to_checksum_address(wallet_address)
    assert result.to_address == addresses.evm
    mined = receipt(base, result.tx_hash)
    assert mined["status"] == "0x1"
    gas = int(mined["gasUsed"], 16) * int(mined["effectiveGasPrice"], 16)
    assert chain_net.chain_balance(addresses.evm, BASE, token) == raw
    if token == "USDC":
        assert token_balance(base, usdc_address(BASE), wallet_address) == held_token - raw
        assert eth_balance(base, wallet_address) == held_eth - gas
    else:
        assert eth_balance(base, wallet_address) == held_eth - raw - gas
    if provider == "callable":
        methods = wallet.methods()
        assert "wallet_switchEthereumChain" in methods  # it was on Ethereum
        assert methods.count("eth_sendTransaction") == 1
        (sent,) = [params[0] for method, params in wallet.calls if method == "eth_sendTransaction"]
        assert sent["from"].lower() == wallet_address.lower()
        assert "gasPrice" in sent and "maxFeePerGas" not in sent
        # The provider runs on the library's threads, not the caller's.
        assert threading.current_thread().name not in wallet.threads

    log = EventLog(client)
    client.start_watching()
    event = credited(log, BASE, token)
    assert event.amount == result.amount
    assert_delivered(client, chain_net, local_chains, event)
    # Collected into devnet's vault: the deposit address is empty again.
    assert chain_net.chain_balance(addresses.evm, BASE, token) == 0


def test_the_native_maximum_leaves_exactly_the_gas(
    chain_net: Any, local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
, fresh_evm_wallet: Any) -> None:
    base = evm_url(local_chains, BASE)
    start = 5 * 10**16
    wallet_address = fresh_evm_wallet(base, start)
    client = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    addresses = client.initialize()
    client.set_evm_wallet(base, address=wallet_address)
    balance = one(client.get_wallet_balances(), BASE, "ETH")
    assert balance.raw_amount == start and balance.is_native and balance.token_address is None

    result = client.fund_from_wallet(balance)  # raw_amount=None: the gas-adjusted maximum

    mined = receipt(base, result.tx_hash)
    sent = rpc(base, "eth_getTransactionByHash", (result.tx_hash,))
    gas_price = int(sent["gasPrice"], 16)
    assert mined["status"] == "0x1"
    assert int(sent["gas"], 16) == NATIVE_GAS
    assert result.raw_amount == start - NATIVE_GAS * gas_price
    paid = int(mined["gasUsed"], 16) * int(mined["effectiveGasPrice"], 16)
    left = eth_balance(base, wallet_address)
    assert left == start - result.raw_amount - paid
    assert left >= 0 and paid <= NATIVE_GAS * gas_price  # the fee was covered, nothing more spent
    assert chain_net.chain_balance(addresses.evm, BASE, "ETH") == result.raw_amount

    # Detected by a poll of our own, swept, credited.
    log = EventLog(client)
    detected = [e for e in client.poll_now() if e.phase == "detected"]
    assert [(e.chain_id, e.token) for e in detected] == [(BASE, "ETH")]
    assert_delivered(client, chain_net, local_chains, credited(log, BASE, "ETH"))


def test_an_erc20_transfer_without_gas_money_is_refused_and_nothing_moves(
    chain_net: Any, local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
, fresh_evm_wallet: Any) -> None:
    base = evm_url(local_chains, BASE)
    wallet_address = fresh_evm_wallet(base, 0)
    mint_usdc(local_chains, BASE, wallet_address, 15_000_000)
    client = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    addresses = client.initialize()
    wallet = AnvilWallet(local_chains, wallet_address, chain_id=BASE)
    client.set_evm_wallet(wallet)
    client.connect_evm_wallet()
    balances = client.get_wallet_balances()
    assert [(b.chain_id, b.token) for b in balances] == [(BASE, "USDC")]  # no ETH line: it holds none

    with raises_exactly(FundingError, "insufficient gas", "ETH") as info:
        client.fund_from_wallet(balances[0], 5_000_000)
    assert info.value.code == 502
    assert "eth_sendTransaction" not in wallet.methods()
    assert token_balance(base, usdc_address(BASE), wallet_address) == 15_000_000
    assert int(rpc(base, "eth_getTransactionCount", (wallet_address, "latest")), 16) == 0
    assert chain_net.chain_balance(addresses.evm, BASE, "USDC") == 0


def test_a_rejecting_wallet_moves_nothing_and_is_the_cause(
    chain_net: Any, local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
) -> None:
    base = evm_url(local_chains, BASE)
    wallet_address = dev_account(local_chains, 8)
    client = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    addresses = client.initialize()
    wallet = AnvilWallet(local_chains, wallet_address, chain_id=BASE)
    rejection = ProviderError(4001, "User rejected the request.")
    wallet.reject["eth_sendTransaction"] = rejection
    client.set_evm_wallet(wallet)
    client.connect_evm_wallet()
    balance = one(client.get_wallet_balances(), BASE, "ETH")
    held = eth_balance(base, wallet_address)
    nonce = rpc(base, "eth_getTransactionCount", (wallet_address, "latest"))

    with raises_exactly(FundingError, "rejected by the wallet (4001)", "User rejected the request.") as info:
        client.fund_from_wallet(balance, 10**15)
    assert info.value.__cause__ is rejection
    assert wallet.methods().count("eth_sendTransaction") == 1
    assert eth_balance(base, wallet_address) == held
    assert rpc(base, "eth_getTransactionCount", (wallet_address, "latest")) == nonce
    assert chain_net.chain_balance(addresses.evm, BASE, "ETH") == 0
    assert client.poll_now() == []


# --- Solana -------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["SOL", "USDC"])
def test_solana_funding_is_detected_swept_and_credited(
    chain_net: Any, local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any, token: str
) -> None:
    svm = local_chains["solana"]["rpcUrl"]
    keypair = funded_keypair(svm, 10**9 if token == "USDC" else 2 * 10**8)
    if token == "USDC":
        rpc(svm, "svm_mintTo", (local_chains["solana"]["mints"]["USDC"]["address"], str(keypair.pubkey()), 30_000_000))
    client = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    addresses = client.initialize()
    wallet = SolanaWallet(svm, keypair)
    client.set_solana_wallet(wallet)
    assert client.connect_solana_wallet() == str(keypair.pubkey())
    balance = one(client.get_wallet_balances(), SOLANA, token)
    assert balance.wallet_address == str(keypair.pubkey())

    result = client.fund_from_wallet(balance)  # the maximum

    assert (result.chain_id, result.token) == (SOLANA, token)
    assert result.from_address == str(keypair.pubkey())
    assert result.to_address == addresses.solana
    (status,) = rpc(svm, "getSignatureStatuses", ([result.tx_hash], {"searchTransactionHistory": True}))["value"]
    assert status is not None and status["err"] is None
    assert [method for method, _ in wallet.calls] == ["connect", "signAndSendTransaction"]
    if token == "USDC":
        assert result.raw_amount == 30_000_000
        assert chain_net.chain_balance(addresses.solana, SOLANA, "USDC") == 30_000_000
    else:
        # The whole balance less the fee; the wallet keeps nothing.
        assert 0 < result.raw_amount < 2 * 10**8
        assert sol_balance(svm, str(keypair.pubkey())) == 0
        assert chain_net.chain_balance(addresses.solana, SOLANA, "SOL") == result.raw_amount

    log = EventLog(client)
    client.start_watching()
    event = credited(log, SOLANA, token)
    assert event.amount == result.amount
    assert_delivered(client, chain_net, local_chains, event)


# --- wallets and their providers ----------------------------------------------------------------


def test_wallet_utilities_speak_eip1193_and_phantom(local_chains: dict[str, Any], make_chain_client: Any) -> None:
    client = make_chain_client()
    account = dev_account(local_chains, 8)
    wallet = AnvilWallet(local_chains, account)
    client.set_evm_wallet(wallet)
    assert client.connect_evm_wallet() == account
    assert client.evm_accounts() == [account]
    assert client.prompt_evm_account_selection() == [account]
    assert wallet.calls == [
        ("eth_requestAccounts", []),
        ("eth_accounts", []),
        ("wallet_requestPermissions", [{"eth_accounts": {}}]),
        ("eth_accounts", []),
    ]
    # A URL wallet asks the node: anvil's unlocked accounts (and those it impersonates).
    client.set_evm_wallet(evm_url(local_chains, BASE))
    expected = [a["address"].lower() for a in local_chains["evmDevAccounts"]]
    assert [a.lower() for a in client.evm_accounts()][: len(expected)] == expected
    assert client.connect_evm_wallet().lower() == expected[0]

    keypair = Keypair()
    solana = SolanaWallet(local_chains["solana"]["rpcUrl"], keypair)
    client.set_solana_wallet(lambda method, params: str(keypair.pubkey()) if method == "connect" else None)
    assert client.connect_solana_wallet() == str(keypair.pubkey())  # a bare string is accepted
    client.set_solana_wallet(solana, address=str(keypair.pubkey()))
    assert client.connect_solana_wallet() == str(keypair.pubkey())
    assert solana.calls == [("connect", {})]


def test_provider_failures_are_funding_errors_chaining_the_exception(
    local_chains: dict[str, Any], make_chain_client: Any
) -> None:
    client = make_chain_client()

    def raises(method: str, params: Any) -> Any:
        raise RuntimeError("wallet bug")

    client.set_evm_wallet(raises)
    with raises_exactly(FundingError, "eth_requestAccounts", "RuntimeError('wallet bug')") as info:
        client.connect_evm_wallet()
    assert isinstance(info.value.__cause__, RuntimeError)
    assert str(info.value.__cause__) == "wallet bug"

    refusal = ProviderError(4100, "not authorized")
    client.set_evm_wallet(lambda method, params: (_ for _ in ()).throw(refusal))
    with raises_exactly(FundingError, "not authorized", "4100") as info:
        client.evm_accounts()
    assert info.value.__cause__ is refusal

    class WalletRefusal(ProviderError):
        pass

    def refusing(method: str, params: Any) -> Any:
        raise WalletRefusal(4001, "declined in the popup")

    client.set_evm_wallet(refusing)
    with raises_exactly(FundingError, "rejected by the wallet (4001): declined in the popup") as info:
        client.connect_evm_wallet()
    assert isinstance(info.value.__cause__, WalletRefusal)

    mangled = ProviderError(4001, "no")
    mangled.code = "4001"  # type: ignore[assignment]
    client.set_evm_wallet(lambda method, params: (_ for _ in ()).throw(mangled))
    with raises_exactly(FundingError, "ProviderError whose code is not a 64-bit int"):
        client.connect_evm_wallet()

    client.set_evm_wallet(lambda method, params: {object()})
    with raises_exactly(FundingError, "a value of type set", "not JSON") as info:
        client.connect_evm_wallet()
    assert isinstance(info.value.__cause__, TypeError)

    client.set_evm_wallet(lambda method, params: {"nested": [1, float("nan")]})
    with raises_exactly(FundingError, "non-finite float", "nested[1]"):
        client.connect_evm_wallet()

    client.set_evm_wallet(lambda method, params: 42)
    with raises_exactly(FundingError, "not an array"):
        client.evm_accounts()

    client.set_evm_wallet(lambda method, params: ["not-an-address"])
    with raises_exactly(FundingError, '"not-an-address"'):
        client.evm_accounts()

    client.set_evm_wallet(lambda: None)  # the wrong arity is a TypeError inside the provider
    with raises_exactly(FundingError, "TypeError") as info:
        client.connect_evm_wallet()
    assert isinstance(info.value.__cause__, TypeError)

    # A call that succeeds after a failure does not carry the old exception.
    client.set_evm_wallet(AnvilWallet(local_chains, dev_account(local_chains, 8)))
    assert client.connect_evm_wallet() == dev_account(local_chains, 8)


def test_providers_run_while_the_caller_waits(
    chain_net: Any, local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
, fresh_evm_wallet: Any) -> None:
    """fund_from_wallet waits with the GIL released: the provider (called on a library thread)
    hands every request to a Python worker thread and waits for it, reads the client meanwhile,
    and a third thread keeps running — no deadlock anywhere."""
    base = evm_url(local_chains, BASE)
    wallet_address = fresh_evm_wallet(base, 10**17)
    client = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    addresses = client.initialize()
    inner = AnvilWallet(local_chains, wallet_address, chain_id=BASE)
    seen: list[str] = []

    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="host-wallet") as pool:

        def delegating(method: str, params: Any) -> Any:
            seen.append(client.status)  # re-entering the client's non-blocking API
            return pool.submit(inner, method, params).result(timeout=30)

        client.set_evm_wallet(delegating)
        client.connect_evm_wallet()
        balance = one(client.get_wallet_balances(), BASE, "ETH")
        ticks = 0
        stop = threading.Event()

        def tick() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                stop.wait(0.001)

        ticker = threading.Thread(target=tick)
        ticker.start()
        try:
            result = client.fund_from_wallet(balance, 10**16)
        finally:
            stop.set()
            ticker.join()
    assert ticks > 0
    assert result.raw_amount == 10**16
    assert inner.threads == {"host-wallet_0"}
    assert seen and set(seen) == {"ready"}
    assert chain_net.chain_balance(addresses.evm, BASE, "ETH") == 10**16


def test_a_provider_referring_to_its_client_is_collected(
    chain_net: Any, local_funding: dict[str, Any]
) -> None:
    class Sentinel:
        pass

    sentinel = Sentinel()
    alive = weakref.ref(sentinel)
    client = depositkit.DepositClient(
        new_owner(), ARBITRUM, services_url=chain_net.services_url, funding=local_funding, **FAST_CLIENT
    )
    # provider → client → (its provider slot) → provider: a cycle only the GC can break.
    client.set_evm_wallet(lambda method, params, client=client, sentinel=sentinel: [])
    client.set_solana_wallet(lambda method, params, client=client: None)
    client.set_balance_provider(lambda request, client=client: [])
    del client, sentinel
    gc.collect()
    assert alive() is None


def test_closing_drops_the_providers(local_chains: dict[str, Any], make_chain_client: Any) -> None:
    client = make_chain_client()
    wallet = AnvilWallet(local_chains, dev_account(local_chains, 8))
    held = weakref.ref(wallet)
    client.set_evm_wallet(wallet)
    client.close()
    del wallet
    gc.collect()
    assert held() is None
    with raises_exactly(DepositSDKError, "closed"):
        client.set_evm_wallet(evm_url(local_chains, BASE))
    with raises_exactly(DepositSDKError, "closed"):
        client.connect_evm_wallet()


# --- balances -----------------------------------------------------------------------------------


def test_balance_source_precedence(
    chain_net: Any, local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
) -> None:
    account = dev_account(local_chains, 8)
    api = {"api_key": "devnet-balance-key", "balance_api_url": chain_net.services_url + "/balances"}
    proxy = {"proxy_url": chain_net.services_url + "/balance-proxy"}
    requests: list[Any] = []

    def provider(request: dict[str, Any]) -> list[dict[str, Any]]:
        requests.append(request)
        return [{"chainId": BASE, "token": "USDC", "rawAmount": 7_000_000, "priceUSD": 1.0}]

    def sources(**funding: Any) -> set[str]:
        client = make_chain_client(funding={**local_funding, **funding})
        client.set_evm_wallet(evm_url(local_chains, BASE), address=account)
        found = client.get_wallet_balances()
        assert found and {b.wallet_address for b in found} == {to_checksum_address(account)}
        return {b.source for b in found}

    assert sources(**proxy) == {"proxyUrl"}
    assert sources(**api, **proxy) == {"apiKey"}
    assert sources(**api, **proxy, balance_provider="rpc") == {"rpc"}

    client = make_chain_client(funding={**local_funding, **api, **proxy, "balance_provider": "rpc"})
    client.set_evm_wallet(evm_url(local_chains, BASE), address=account)
    client.set_balance_provider(provider)
    (line,) = client.get_wallet_balances()
    assert (line.source, line.chain_id, line.token, line.raw_amount) == ("balanceProvider", BASE, "USDC", 7_000_000)
    assert requests == [{"evmAddress": to_checksum_address(account), "solanaAddress": None, "chainIds": [1, 56, 8453, 42161, 101]}]
    client.set_balance_provider(None)
    assert {b.source for b in client.get_wallet_balances()} == {"rpc"}

    # The API's key is checked: a wrong one fails, naming the source but never the key, and
    # does not fall back to the proxy.
    client = make_chain_client(funding={**local_funding, **api, **proxy, "api_key": "wrong-key-123"})
    client.set_evm_wallet(evm_url(local_chains, BASE), address=account)
    with raises_exactly(FundingError, "the balance API", "401") as info:
        client.get_wallet_balances()
    assert "wrong-key-123" not in str(info.value)


def test_without_a_source_the_hosted_proxy_is_asked(
    local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
) -> None:
    client = make_chain_client(funding=dict(local_funding), http_retries=0, request_timeout_ms=3000)
    client.set_evm_wallet(evm_url(local_chains, BASE), address=dev_account(local_chains, 8))
    with raises_exactly(FundingError, "the hosted balance proxy", "api.depositkit.dev/balance-proxy"):
        client.get_wallet_balances()


def test_the_balance_provider_answers_in_either_shape(
    chain_net: Any, local_chains: dict[str, Any], make_chain_client: Any
) -> None:
    base = evm_url(local_chains, BASE)
    account = dev_account(local_chains, 8)
    held = eth_balance(base, account)  # ~10^22 wei: more than 64 bits
    assert held > 2**64
    answers: list[Any] = [
        {"balances": [{"chainId": BASE, "token": "ETH", "tokenAddress": None, "decimals": 18, "rawAmount": held}]},
        [
            {"chainId": BASE, "token": "ETH", "rawAmount": str(held), "priceUSD": 2500.0},
            {"chainId": 196, "token": "USDC", "rawAmount": "5000000"},  # X Layer: never offered
            {"chainId": BASE, "token": "DOGE", "rawAmount": "5"},  # unknown token: skipped
            {"chainId": ARBITRUM, "token": "USDC", "rawAmount": "100000", "valueUSD": 0.1},  # below the minimum
        ],
    ]
    client = make_chain_client()
    addresses = client.initialize()
    client.set_evm_wallet(base, address=account.lower())
    requests: list[Any] = []
    client.set_balance_provider(lambda request: requests.append(request) or answers.pop(0))
    (first,) = client.get_wallet_balances()
    # Every EVM wallet address depositkit hands out is EIP-55 checksummed, whatever case the host
    # gave it in: the provider's request, the balance and the transfer (docs/funding.md §3).
    assert requests[0]["evmAddress"] == to_checksum_address(account) != account.lower()
    assert first.wallet_address == to_checksum_address(account)
    assert first.to_dict()["walletAddress"] == to_checksum_address(account)
    assert (first.raw_amount, first.price_usd, first.value_usd) == (held, None, None)
    (second,) = client.get_wallet_balances()
    assert (second.chain_id, second.token, second.raw_amount, second.price_usd) == (BASE, "ETH", held, 2500.0)
    assert second.value_usd == pytest.approx(held / 10**18 * 2500)
    # A balance from the host's provider funds like any other.
    result = client.fund_from_wallet(second, 10**15)
    assert chain_net.chain_balance(addresses.evm, BASE, "ETH") == 10**15
    assert result.from_address == to_checksum_address(account)

    for bad, fragment in [
        (lambda request: 42, "the host's balance provider"),
        (lambda request: [{"token": "USDC"}], "no chainId"),
        (lambda request: [{"chainId": BASE, "token": "USDC", "rawAmount": "x"}], "no valid rawAmount"),
        (lambda request: (_ for _ in ()).throw(ProviderError(-32000, "balances are down")), "balances are down"),
    ]:
        client.set_balance_provider(bad)
        with raises_exactly(FundingError, fragment):
            client.get_wallet_balances()


# --- records and arguments ----------------------------------------------------------------------


def test_funding_balance_has_no_constructor_and_serves_only_its_client(
    local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
) -> None:
    with pytest.raises(TypeError):
        FundingBalance()
    with pytest.raises(TypeError):
        FundingBalance.__new__(FundingBalance)

    account = dev_account(local_chains, 8)
    first = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    second = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    for client in (first, second):
        client.initialize()
        client.set_evm_wallet(evm_url(local_chains, BASE), address=account)
    balance = one(first.get_wallet_balances(), BASE, "ETH")
    with raises_exactly(InvalidArgumentError, "another client", builtin=ValueError):
        second.fund_from_wallet(balance, 1)

    assert balance == one(first.get_wallet_balances(), BASE, "ETH") or balance.raw_amount != 0
    d = balance.to_dict()
    assert d["chainId"] == BASE and d["token"] == "ETH" and d["tokenAddress"] is None
    assert d["decimals"] == 18 and d["rawAmount"] == balance.raw_amount and isinstance(d["rawAmount"], int)
    assert d["walletAddress"] == to_checksum_address(account) and d["source"] == "rpc"
    assert d["amount"] == balance.amount
    assert repr(balance).startswith(f"<depositkit.FundingBalance {balance.amount} ETH on chain {BASE} wallet=")
    with pytest.raises(AttributeError):
        balance.raw_amount = 1  # type: ignore[misc]


def test_bad_arguments_name_the_value(
    local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
) -> None:
    client = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    client.initialize()
    client.set_evm_wallet(evm_url(local_chains, BASE), address=dev_account(local_chains, 8))
    balance = one(client.get_wallet_balances(), BASE, "ETH")
    with raises_exactly(InvalidArgumentError, "-5", "negative", builtin=ValueError):
        client.fund_from_wallet(balance, -5)
    with raises_exactly(InvalidArgumentError, "2^256 - 1", builtin=ValueError):
        client.fund_from_wallet(balance, 2**256)
    with raises_exactly(InvalidArgumentError, "raw_amount must be more than 0", builtin=ValueError):
        client.fund_from_wallet(balance, 0)
    with raises_exactly(TypeError, "raw_amount must be an int, not str"):
        client.fund_from_wallet(balance, "5")
    with raises_exactly(TypeError, "raw_amount must be an int, not bool"):
        client.fund_from_wallet(balance, True)
    with raises_exactly(TypeError, "balance must be a FundingBalance", "dict"):
        client.fund_from_wallet(balance.to_dict())
    with raises_exactly(TypeError, "provider must be a JSON-RPC URL (str) or a callable", "int"):
        client.set_evm_wallet(42)
    with raises_exactly(TypeError, "provider must be a callable", "str"):
        client.set_solana_wallet("http://127.0.0.1:1")
    with raises_exactly(TypeError, "provider must be a callable", "int"):
        client.set_balance_provider(5)
    with raises_exactly(InvalidArgumentError, "EVM address", '"0x123"'):
        client.set_evm_wallet(lambda method, params: None, address="0x123")
    with raises_exactly(InvalidArgumentError, "Solana address"):
        client.set_solana_wallet(lambda method, params: None, address="0xnot-base58")
    with raises_exactly(ConfigurationError, "the EVM wallet URL"):
        client.set_evm_wallet("ftp://127.0.0.1:1")


def test_funding_must_be_enabled_and_a_wallet_set(
    local_chains: dict[str, Any], local_funding: dict[str, Any], make_chain_client: Any
) -> None:
    disabled = make_chain_client(funding=None)
    for call in (
        lambda: disabled.set_evm_wallet(evm_url(local_chains, BASE)),
        lambda: disabled.set_solana_wallet(lambda method, params: None),
        disabled.connect_evm_wallet,
        disabled.get_wallet_balances,
    ):
        with raises_exactly(ConfigurationError, "funding is not enabled", builtin=ValueError):
            call()

    client = make_chain_client(funding={**local_funding, "balance_provider": "rpc"})
    with raises_exactly(FundingError, "no EVM wallet is connected"):
        client.connect_evm_wallet()
    with raises_exactly(FundingError, "no Solana wallet is connected"):
        client.connect_solana_wallet()
    with raises_exactly(FundingError, "no funding wallet is connected"):
        client.get_wallet_balances()
    client.set_evm_wallet(evm_url(local_chains, BASE), address=dev_account(local_chains, 8))
    assert client.get_wallet_balances()
    client.clear_funding_wallet()
    with raises_exactly(FundingError, "no EVM wallet is connected"):
        client.evm_accounts()


# --- devnet's chain-backed mode -----------------------------------------------------------------


def test_devnet_chain_backed_helpers(chain_net: Any, local_chains: dict[str, Any], tmp_path: Any) -> None:
    assert chain_net.chains == [1, 56, 8453, 42161, 101]
    vault = chain_net.vault_addresses
    assert set(vault) == {"evm", "solana"}
    assert depositkit.is_valid_evm_address(vault["evm"]) and depositkit.is_valid_solana_address(vault["solana"])
    assert chain_net.chain_balance(vault["evm"], BASE, "USDC") > 0  # the stocked inventory
    receiver = to_checksum_address("0x" + secrets.token_hex(20))
    assert chain_net.chain_balance(receiver, BASE, "ETH") == 0
    with raises_exactly(InvalidArgumentError, "196", "not chain-backed"):
        chain_net.chain_balance(receiver, 196, "USDC")

    path = tmp_path / "chains.json"
    path.write_text(json.dumps(local_chains), encoding="utf-8")
    with depositkit.Devnet(chains=path, balance_api_key="other-key") as other:
        assert other.chains == chain_net.chains
        assert other.vault_addresses == vault  # the vault key is derived, the same everywhere
    with depositkit.Devnet(chains=str(path)) as other:
        assert other.chains == chain_net.chains
    with depositkit.Devnet() as ledger:
        assert ledger.chains == [] and ledger.vault_addresses is None
    with raises_exactly(TypeError, "chains must be the chains file", "int"):
        depositkit.Devnet(chains=42)
    with pytest.raises(InvalidArgumentError, match="chainId"):
        depositkit.Devnet(chains={"evm": [{"chainId": 7, "rpcUrl": "http://127.0.0.1:1"}]})


# --- ProviderError ------------------------------------------------------------------------------


def test_provider_error_is_what_hosts_raise() -> None:
    import doctest
    import pickle

    from depositkit import _funding

    assert doctest.testmod(_funding, verbose=False).failed == 0
    err = ProviderError(ProviderError.USER_REJECTED, "User rejected the request.")
    assert (err.code, err.message, err.args) == (4001, "User rejected the request.", (4001, "User rejected the request."))
    assert str(err) == "User rejected the request. (4001)"
    assert repr(err) == "ProviderError(4001, 'User rejected the request.')"
    copy = pickle.loads(pickle.dumps(err))
    assert (type(copy), copy.code, copy.message) == (ProviderError, 4001, "User rejected the request.")
    assert not isinstance(err, DepositSDKError)  # hosts raise it; depositkit never does
    assert depositkit.ProviderError is _funding.ProviderError
    with raises_exactly(TypeError, "code must be an int, not str"):
        ProviderError("4001", "no")
    with raises_exactly(TypeError, "code must be an int, not bool"):
        ProviderError(True, "no")
    with raises_exactly(ValueError, "code must fit 64 bits"):
        ProviderError(2**63, "no")
    with raises_exactly(TypeError, "message must be a str"):
        ProviderError(4001, None)

    class Refusal(ProviderError):
        pass

    assert issubclass(Refusal, ProviderError)
