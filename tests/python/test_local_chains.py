"""The local chains (tests/chains/, docs/funding.md §1): anvil with the test token at the real
USDC/USDT addresses, and the Solana JSON-RPC server over LiteSVM. Every check runs real
transactions on them; the ``local_chains`` fixture (conftest.py) starts them once per session."""

from __future__ import annotations

import base64
import json
import pathlib
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import depositkit
import pytest
from eth_utils import keccak, to_checksum_address
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.system_program import TransferParams, transfer
from solders.transaction import Transaction

from conftest import ROOT, b58encode

sys.path.insert(0, str(ROOT / "tests"))
from chains.launch import LocalChains  # noqa: E402 - needs tests/ on sys.path

LAUNCH = ROOT / "tests/chains/launch.py"
LAMPORTS_PER_SIGNATURE = 5000


class RpcFailure(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["message"])
        self.error = error


def rpc(url: str, method: str, *params: Any) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": list(params)}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    assert answer["jsonrpc"] == "2.0" and answer["id"] == 7, answer
    if "error" in answer:
        raise RpcFailure(answer["error"])
    return answer["result"]


def rpc_error(url: str, method: str, *params: Any) -> dict[str, Any]:
    with pytest.raises(RpcFailure) as info:
        rpc(url, method, *params)
    return info.value.error


# --- EVM -------------------------------------------------------------------------------------


def selector(signature: str) -> str:
    return "0x" + keccak(text=signature)[:4].hex()


def word(value: int | str) -> str:
    """A 32-byte ABI word: an integer or an address."""
    number = int(value, 16) if isinstance(value, str) else value
    return format(number, "064x")


def fresh_evm_address() -> str:
    return to_checksum_address("0x" + secrets.token_hex(20))


def evm_chains(info: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {chain["chainId"]: chain for chain in info["evm"]}


def send_and_mine(url: str, tx: dict[str, Any]) -> dict[str, Any]:
    """``eth_sendTransaction`` then the receipt (anvil answers the hash a moment before the block
    is in)."""
    tx_hash = rpc(url, "eth_sendTransaction", tx)
    deadline = time.monotonic() + 10
    while (receipt := rpc(url, "eth_getTransactionReceipt", tx_hash)) is None:
        assert time.monotonic() < deadline, f"{tx_hash} not mined"
        time.sleep(0.01)
    return receipt


def balance_of(url: str, token: str, holder: str) -> int:
    return int(
        rpc(url, "eth_call", {"to": token, "data": selector("balanceOf(address)") + word(holder)}, "latest"),
        16,
    )


def test_the_chains_file_lists_every_chain(local_chains: dict[str, Any]) -> None:
    assert sorted(evm_chains(local_chains)) == [1, 56, 8453, 42161]
    assert set(local_chains["solana"]["mints"]) == {"USDC", "USDT"}
    accounts = local_chains["evmDevAccounts"]
    assert len(accounts) == 10
    assert accounts[0] == {
        "address": "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        "privateKey": "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    }
    for chain_id, chain in evm_chains(local_chains).items():
        assert chain["rpcUrl"].startswith("http://127.0.0.1:")
        assert int(rpc(chain["rpcUrl"], "eth_chainId"), 16) == chain_id
        # The listed accounts are the node's unlocked ones.
        assert [a.lower() for a in rpc(chain["rpcUrl"], "eth_accounts")] == [
            a["address"].lower() for a in accounts
        ]


@pytest.mark.parametrize("chain_id", [1, 56, 8453, 42161])
def test_the_tokens_sit_at_their_real_addresses_with_the_chain_decimals(
    local_chains: dict[str, Any], chain_id: int
) -> None:
    chain = evm_chains(local_chains)[chain_id]
    # The library's own token table (depositkit_core::tokens::token_info).
    expected = {}
    for symbol in ("USDC", "USDT"):
        info = depositkit.token_info(symbol, chain_id)
        expected[symbol] = {"address": info["contract"], "decimals": info["decimals"]}
    assert chain["tokens"] == expected
    for symbol, token in chain["tokens"].items():
        url, address = chain["rpcUrl"], token["address"]
        assert rpc(url, "eth_getCode", address, "latest") != "0x"
        decimals = rpc(url, "eth_call", {"to": address, "data": selector("decimals()")}, "latest")
        assert int(decimals, 16) == token["decimals"] == (18 if chain_id == 56 else 6)
        encoded = bytes.fromhex(
            rpc(url, "eth_call", {"to": address, "data": selector("symbol()")}, "latest")[2:]
        )
        length = int.from_bytes(encoded[32:64], "big")
        assert encoded[64 : 64 + length].decode() == symbol


@pytest.mark.parametrize("chain_id", [1, 56, 8453, 42161])
def test_mint_transfer_and_balance_of(local_chains: dict[str, Any], chain_id: int) -> None:
    chain = evm_chains(local_chains)[chain_id]
    url, token = chain["rpcUrl"], chain["tokens"]["USDC"]["address"]
    wallet = local_chains["evmDevAccounts"][2]["address"]
    receiver = fresh_evm_address()
    before = balance_of(url, token, wallet)

    minted = send_and_mine(
        url,
        {
            "from": wallet,
            "to": token,
            "data": selector("mint(address,uint256)") + word(wallet) + word(5_000_000),
        },
    )
    assert minted["status"] == "0x1"
    assert balance_of(url, token, wallet) == before + 5_000_000

    sent = send_and_mine(
        url,
        {
            "from": wallet,
            "to": token,
            "data": selector("transfer(address,uint256)") + word(receiver) + word(1_250_000),
        },
    )
    assert sent["status"] == "0x1"
    assert balance_of(url, token, receiver) == 1_250_000
    assert balance_of(url, token, wallet) == before + 5_000_000 - 1_250_000
    (log,) = sent["logs"]
    assert log["address"].lower() == token.lower()
    assert log["topics"] == [
        "0x" + keccak(text="Transfer(address,address,uint256)").hex(),
        "0x" + word(wallet),
        "0x" + word(receiver),
    ]
    assert int(log["data"], 16) == 1_250_000

    # More than the sender holds reverts with the token's reason.
    overdraft = {
        "from": receiver,
        "to": token,
        "data": selector("transfer(address,uint256)") + word(wallet) + word(1_250_001),
    }
    error = rpc_error(url, "eth_call", overdraft, "latest")
    assert "transfer amount exceeds balance" in error["message"], error


def test_approve_allowance_transfer_from_and_name(local_chains: dict[str, Any]) -> None:
    chain = evm_chains(local_chains)[8453]
    url, token = chain["rpcUrl"], chain["tokens"]["USDT"]["address"]
    owner, spender = (local_chains["evmDevAccounts"][i]["address"] for i in (4, 5))
    receiver = fresh_evm_address()
    mint = selector("mint(address,uint256)") + word(owner) + word(3_000_000)
    assert send_and_mine(url, {"from": owner, "to": token, "data": mint})["status"] == "0x1"

    approve = selector("approve(address,uint256)") + word(spender) + word(2_000_000)
    approved = send_and_mine(url, {"from": owner, "to": token, "data": approve})
    assert approved["logs"][0]["topics"][0] == "0x" + keccak(text="Approval(address,address,uint256)").hex()
    allowance = selector("allowance(address,address)") + word(owner) + word(spender)
    assert int(rpc(url, "eth_call", {"to": token, "data": allowance}, "latest"), 16) == 2_000_000

    pull = selector("transferFrom(address,address,uint256)") + word(owner) + word(receiver)
    assert (
        send_and_mine(url, {"from": spender, "to": token, "data": pull + word(1_500_000)})["status"] == "0x1"
    )
    assert balance_of(url, token, receiver) == 1_500_000
    assert int(rpc(url, "eth_call", {"to": token, "data": allowance}, "latest"), 16) == 500_000
    error = rpc_error(url, "eth_call", {"from": spender, "to": token, "data": pull + word(500_001)}, "latest")
    assert "insufficient allowance" in error["message"], error

    encoded = bytes.fromhex(rpc(url, "eth_call", {"to": token, "data": selector("name()")}, "latest")[2:])
    assert encoded[64 : 64 + int.from_bytes(encoded[32:64], "big")].decode() == "Tether USD"


def test_a_native_transfer_from_a_dev_account_moves_value(local_chains: dict[str, Any]) -> None:
    chain = evm_chains(local_chains)[8453]
    url = chain["rpcUrl"]
    wallet = local_chains["evmDevAccounts"][3]["address"]
    receiver = fresh_evm_address()
    before = int(rpc(url, "eth_getBalance", wallet, "latest"), 16)

    receipt = send_and_mine(url, {"from": wallet, "to": receiver, "value": hex(10**18)})
    assert receipt["status"] == "0x1"
    assert int(rpc(url, "eth_getBalance", receiver, "latest"), 16) == 10**18
    gas = int(receipt["gasUsed"], 16) * int(receipt["effectiveGasPrice"], 16)
    assert int(rpc(url, "eth_getBalance", wallet, "latest"), 16) == before - 10**18 - gas


# --- Solana ----------------------------------------------------------------------------------

TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"


@pytest.fixture
def svm(local_chains: dict[str, Any]) -> str:
    return local_chains["solana"]["rpcUrl"]


def funded(url: str, lamports: int = 2 * 10**9) -> Keypair:
    keypair = Keypair()
    signature = rpc(url, "requestAirdrop", str(keypair.pubkey()), lamports)
    assert statuses(url, signature)[0]["err"] is None
    return keypair


def statuses(url: str, *signatures: str) -> list[Any]:
    return rpc(url, "getSignatureStatuses", list(signatures), {"searchTransactionHistory": True})["value"]


def balance(url: str, address: Any) -> int:
    return rpc(url, "getBalance", str(address))["value"]


def system_transfer(
    url: str, sender: Keypair, receiver: Any, lamports: int, blockhash: str | None = None
) -> bytes:
    """A signed system transfer on a fresh blockhash (or the one given), in wire format."""
    if blockhash is None:
        blockhash = rpc(url, "getLatestBlockhash", {"commitment": "finalized"})["value"]["blockhash"]
    instruction = transfer(TransferParams(from_pubkey=sender.pubkey(), to_pubkey=receiver, lamports=lamports))
    return bytes(Transaction([sender], Message([instruction], sender.pubkey()), Hash.from_string(blockhash)))


def send_base64(url: str, wire: bytes) -> str:
    return rpc(url, "sendTransaction", base64.b64encode(wire).decode(), {"encoding": "base64"})


def test_svm_answers_the_node_basics(svm: str) -> None:
    assert rpc(svm, "getHealth") == "ok"
    assert "solana-core" in rpc(svm, "getVersion")
    slot = rpc(svm, "getSlot")
    latest = rpc(svm, "getLatestBlockhash")
    assert latest["context"]["slot"] == slot + 1  # every blockhash is a new block
    assert latest["value"]["lastValidBlockHeight"] == slot + 1 + 299
    assert rpc(svm, "getLatestBlockhash")["value"]["blockhash"] != latest["value"]["blockhash"]
    assert rpc(svm, "getMinimumBalanceForRentExemption", 0) == 890_880
    assert rpc(svm, "getMinimumBalanceForRentExemption", 165) == 2_039_280


def test_svm_airdrop_and_a_signed_transfer_move_lamports(svm: str) -> None:
    sender, receiver = funded(svm), Keypair()
    assert balance(svm, sender.pubkey()) == 2 * 10**9
    assert balance(svm, receiver.pubkey()) == 0

    signature = send_base64(svm, system_transfer(svm, sender, receiver.pubkey(), 10**9))
    assert balance(svm, receiver.pubkey()) == 10**9
    assert balance(svm, sender.pubkey()) == 10**9 - LAMPORTS_PER_SIGNATURE
    (status,) = statuses(svm, signature)
    assert status["err"] is None and status["confirmationStatus"] == "confirmed"
    assert status["slot"] <= rpc(svm, "getSlot")


def test_svm_takes_base58_by_default_and_reports_the_fee(svm: str) -> None:
    sender, receiver = funded(svm), Keypair()
    wire = system_transfer(svm, sender, receiver.pubkey(), 10**9)
    message = bytes(Transaction.from_bytes(wire).message)
    assert rpc(svm, "getFeeForMessage", base64.b64encode(message).decode())["value"] == LAMPORTS_PER_SIGNATURE
    signature = rpc(svm, "sendTransaction", b58encode(wire))
    assert signature == str(Transaction.from_bytes(wire).signatures[0])
    assert balance(svm, receiver.pubkey()) == 10**9


def test_svm_two_identical_transfers_are_two_transactions(svm: str) -> None:
    sender, receiver = funded(svm), Keypair()
    first = send_base64(svm, system_transfer(svm, sender, receiver.pubkey(), 10**9 // 2))
    second = send_base64(svm, system_transfer(svm, sender, receiver.pubkey(), 10**9 // 2))
    assert first != second
    assert [s["err"] for s in statuses(svm, first, second)] == [None, None]
    assert balance(svm, receiver.pubkey()) == 10**9


def test_svm_accepts_the_last_300_blockhashes_and_no_other(svm: str) -> None:
    sender, receiver = funded(svm), Keypair()
    latest = rpc(svm, "getLatestBlockhash")["value"]
    for _ in range(299):
        rpc(svm, "getLatestBlockhash")
    # The 300th newest, and its lastValidBlockHeight is the current block height.
    assert rpc(svm, "getBlockHeight") == latest["lastValidBlockHeight"]
    send_base64(svm, system_transfer(svm, sender, receiver.pubkey(), 10**9, latest["blockhash"]))
    assert balance(svm, receiver.pubkey()) == 10**9

    expiring = rpc(svm, "getLatestBlockhash")["value"]["blockhash"]
    for _ in range(300):
        rpc(svm, "getLatestBlockhash")
    for blockhash in (expiring, str(Hash.new_unique())):
        wire = system_transfer(svm, sender, receiver.pubkey(), 1, blockhash)
        error = rpc_error(svm, "sendTransaction", base64.b64encode(wire).decode(), {"encoding": "base64"})
        assert error["code"] == -32002
        assert error["message"] == "Transaction simulation failed: Blockhash not found"
        assert error["data"]["err"] == "BlockhashNotFound"
    assert balance(svm, receiver.pubkey()) == 10**9


def test_svm_a_failing_transaction_is_a_preflight_error_that_costs_nothing(svm: str) -> None:
    sender, receiver = funded(svm, 10**9), Keypair()
    wire = system_transfer(svm, sender, receiver.pubkey(), 5 * 10**9)
    error = rpc_error(svm, "sendTransaction", base64.b64encode(wire).decode(), {"encoding": "base64"})
    assert error["code"] == -32002
    assert (
        error["message"]
        == "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1"
    )
    assert error["data"]["err"] == {"InstructionError": [0, {"Custom": 1}]}
    assert any("insufficient lamports" in line for line in error["data"]["logs"])
    assert balance(svm, sender.pubkey()) == 10**9  # preflight only simulated it
    assert statuses(svm, str(Transaction.from_bytes(wire).signatures[0])) == [None]

    # simulateTransaction reports the same failure as a value.
    encoded = base64.b64encode(wire).decode()
    simulated = rpc(svm, "simulateTransaction", encoded, {"encoding": "base64"})["value"]
    assert simulated["err"] == {"InstructionError": [0, {"Custom": 1}]}
    assert simulated["logs"]


def token_accounts(url: str, owner: Any, selector: dict[str, str], encoding: str) -> list[Any]:
    return rpc(url, "getTokenAccountsByOwner", str(owner), selector, {"encoding": encoding})["value"]


def test_svm_mint_to_and_token_accounts(svm: str, local_chains: dict[str, Any]) -> None:
    for symbol, mint_info in local_chains["solana"]["mints"].items():
        info = depositkit.token_info(symbol, 101)
        assert mint_info == {"address": info["contract"], "decimals": info["decimals"]}
    usdc = local_chains["solana"]["mints"]["USDC"]["address"]
    mint = rpc(svm, "getAccountInfo", usdc, {"encoding": "jsonParsed"})["value"]
    assert mint["owner"] == TOKEN_PROGRAM
    assert mint["data"]["parsed"]["type"] == "mint"
    assert mint["data"]["parsed"]["info"]["decimals"] == 6

    owner = Keypair().pubkey()
    assert token_accounts(svm, owner, {"mint": usdc}, "jsonParsed") == []
    first = rpc(svm, "svm_mintTo", usdc, str(owner), "2500000")
    second = rpc(svm, "svm_mintTo", usdc, str(owner), 2_500_000)  # the same again: a new transaction
    assert first != second
    assert [s["err"] for s in statuses(svm, first, second)] == [None, None]

    (entry,) = token_accounts(svm, owner, {"mint": usdc}, "jsonParsed")
    info = entry["account"]["data"]["parsed"]["info"]
    assert entry["account"]["owner"] == TOKEN_PROGRAM
    assert info["mint"] == usdc and info["owner"] == str(owner) and info["state"] == "initialized"
    assert info["tokenAmount"] == {"amount": "5000000", "decimals": 6, "uiAmount": 5.0, "uiAmountString": "5"}
    assert rpc(svm, "getTokenAccountBalance", entry["pubkey"])["value"]["amount"] == "5000000"

    # The programId filter and base64 data give the same account, in the token account layout.
    (raw,) = token_accounts(svm, owner, {"programId": TOKEN_PROGRAM}, "base64")
    assert raw["pubkey"] == entry["pubkey"]
    data = base64.b64decode(raw["account"]["data"][0])
    assert len(data) == 165 and int.from_bytes(data[64:72], "little") == 5_000_000


def test_svm_rejects_unknown_methods_and_bad_params(svm: str, local_chains: dict[str, Any]) -> None:
    assert rpc_error(svm, "eth_chainId")["code"] == -32601
    assert rpc_error(svm, "getBalance", "not-a-key")["code"] == -32602
    assert rpc_error(svm, "getBalance")["code"] == -32602
    assert rpc_error(svm, "sendTransaction", "AAAA", {"encoding": "base64"})["code"] == -32602
    usdc, someone = local_chains["solana"]["mints"]["USDC"]["address"], str(Keypair().pubkey())
    assert rpc_error(svm, "svm_mintTo", someone, someone, 1)["code"] == -32602  # not a mint
    assert rpc_error(svm, "svm_mintTo", usdc, "x", 1)["code"] == -32602
    assert rpc_error(svm, "svm_mintTo", usdc, someone, 2**64)["code"] == -32602
    assert statuses(svm, str(Keypair().sign_message(b"never sent"))) == [None]


# --- the launcher ----------------------------------------------------------------------------


def test_local_chains_api_starts_a_subset_and_stops_it() -> None:
    chains = LocalChains(evm=(42161,), solana=False)
    with chains as info:
        assert [chain["chainId"] for chain in info["evm"]] == [42161]
        assert "solana" not in info
        url = info["evm"][0]["rpcUrl"]
        assert int(rpc(url, "eth_chainId"), 16) == 42161
        assert chains.startup_seconds is not None and chains.startup_seconds < 10
    with pytest.raises(urllib.error.URLError):
        rpc(url, "eth_chainId")


def test_launcher_stops_on_sigterm_and_writes_the_chains_file(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "chains.json"
    process = subprocess.Popen(
        [sys.executable, str(LAUNCH), "--evm", "1", "--no-solana", "--out", str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        info = json.loads(process.stdout.readline())
        assert json.loads(out.read_text(encoding="utf-8")) == info
        url = info["evm"][0]["rpcUrl"]
        assert int(rpc(url, "eth_chainId"), 16) == 1
        process.terminate()
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    with pytest.raises(urllib.error.URLError):
        rpc(url, "eth_chainId")


def test_launcher_without_its_tools_exits_3_naming_the_installer(tmp_path: pathlib.Path) -> None:
    # A copy of the launcher in a tree without .chains/ and without the fixture.
    copy = tmp_path / "tests/chains/launch.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(LAUNCH, copy)
    result = subprocess.run(
        [sys.executable, str(copy), "--no-solana"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 3, result
    assert result.stdout == ""
    assert "anvil" in result.stderr and "scripts/chains-install.sh" in result.stderr

    # Without site-packages there is no solders.
    result = subprocess.run(
        [sys.executable, "-S", str(LAUNCH), "--evm", ""], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 3, result
    assert "solders" in result.stderr and "scripts/python-env.sh" in result.stderr
