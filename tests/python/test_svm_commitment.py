"""The commitment levels of the local SVM (tests/chains/svm_rpc.py and svm_history.py,
docs/finality.md §8), and the reads a Solana chain watcher makes: ``getSlot`` per commitment,
``getSignaturesForAddress``, ``getTransaction`` and ``getBlock``. A block is confirmed when it is
made and finalized once 31 blocks are built on it (``svm_advanceSlots`` makes empty ones)."""

from __future__ import annotations

from typing import Any

from solders.keypair import Keypair

from test_local_chains import rpc, rpc_error, statuses, svm  # noqa: F401 - svm is a fixture

FINALIZED_DEPTH = 31


def slots(url: str) -> dict[str, int]:
    return {c: rpc(url, "getSlot", {"commitment": c}) for c in ("processed", "confirmed", "finalized")}


def listed(url: str, address: Any, commitment: str) -> list[str]:
    found = rpc(url, "getSignaturesForAddress", str(address), {"limit": 10, "commitment": commitment})
    return [item["signature"] for item in found]


def test_a_block_is_confirmed_at_once_and_finalized_31_blocks_later(svm: str) -> None:
    rpc(svm, "svm_advanceSlots", FINALIZED_DEPTH)
    now = slots(svm)
    assert now["processed"] == now["confirmed"] == rpc(svm, "getSlot")
    assert now["finalized"] == now["confirmed"] - FINALIZED_DEPTH
    assert rpc(svm, "svm_advanceSlots", 3) == now["confirmed"] + 3
    assert slots(svm)["finalized"] == now["finalized"] + 3


def test_a_token_deposit_is_listed_read_back_and_finalized(svm: str, local_chains: dict[str, Any]) -> None:
    usdc = local_chains["solana"]["mints"]["USDC"]["address"]
    owner = Keypair().pubkey()
    signature = rpc(svm, "svm_mintTo", usdc, str(owner), 25_000_000)
    (status,) = statuses(svm, signature)
    assert status["confirmationStatus"] == "confirmed" and status["confirmations"] == 0
    assert listed(svm, owner, "confirmed") == [signature]
    assert listed(svm, owner, "finalized") == []
    assert rpc(svm, "getTransaction", signature, {"commitment": "finalized"}) is None

    tx = rpc(svm, "getTransaction", signature, {"encoding": "jsonParsed", "commitment": "confirmed"})
    assert tx["slot"] == status["slot"]
    keys = [key["pubkey"] for key in tx["transaction"]["message"]["accountKeys"]]
    assert str(owner) in keys
    assert tx["meta"]["err"] is None and tx["meta"]["preTokenBalances"] == []
    (received,) = tx["meta"]["postTokenBalances"]
    assert (received["mint"], received["owner"]) == (usdc, str(owner))
    assert received["uiTokenAmount"]["amount"] == "25000000"
    assert keys[received["accountIndex"]] != str(owner), "the owner's token account received it"

    block = rpc(svm, "getBlock", tx["slot"], {"transactionDetails": "signatures", "rewards": False})
    assert signature in block["signatures"]
    parent = rpc(svm, "getBlock", block["parentSlot"], {"transactionDetails": "none"})
    assert block["previousBlockhash"] == parent["blockhash"] != block["blockhash"]

    rpc(svm, "svm_advanceSlots", FINALIZED_DEPTH)
    (status,) = statuses(svm, signature)
    assert status["confirmationStatus"] == "finalized" and status["confirmations"] is None
    assert listed(svm, owner, "finalized") == [signature]
    assert rpc(svm, "getTransaction", signature, {"commitment": "finalized"})["slot"] == tx["slot"]


def test_an_airdrop_reads_back_with_its_lamports(svm: str) -> None:
    receiver = Keypair().pubkey()
    first = rpc(svm, "requestAirdrop", str(receiver), 10**9)
    second = rpc(svm, "requestAirdrop", str(receiver), 2 * 10**9)
    assert listed(svm, receiver, "confirmed") == [second, first], "newest first"
    found = rpc(svm, "getSignaturesForAddress", str(receiver), {"before": second})
    assert [item["signature"] for item in found] == [first]
    tx = rpc(svm, "getTransaction", second, "json")
    at = tx["transaction"]["message"]["accountKeys"].index(str(receiver))
    assert tx["meta"]["postBalances"][at] - tx["meta"]["preBalances"][at] == 2 * 10**9


def test_reads_below_confirmed_and_missing_blocks_are_refused(svm: str) -> None:
    signature = rpc(svm, "requestAirdrop", str(Keypair().pubkey()), 10**9)
    error = rpc_error(svm, "getTransaction", signature, {"commitment": "processed"})
    assert error["code"] == -32602 and "below `confirmed`" in error["message"]
    assert rpc_error(svm, "getSlot", {"commitment": "rooted"})["code"] == -32602
    tip = rpc(svm, "getSlot")
    assert rpc_error(svm, "getBlock", tip + 1)["code"] == -32004
    assert rpc_error(svm, "getBlock", 0)["code"] == -32007
    assert rpc_error(svm, "svm_advanceSlots", 0)["code"] == -32602
    assert rpc_error(svm, "getSignaturesForAddress", str(Keypair().pubkey()), {"limit": 0})["code"] == -32602
