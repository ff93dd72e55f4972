"""The ledger history of svm_rpc.py's SVM: its blocks and landed transactions, and the commitment
levels over them (docs/finality.md §8).

LiteSVM keeps only the newest state and the results of the transactions it ran; a chain watcher
also asks which transactions touched an address (``getSignaturesForAddress``), what one of them
changed (``getTransaction``: the lamports and token balances of its accounts before and after),
and a block's hash (``getBlock``). svm_rpc.py records that here as it makes blocks and lands
transactions; this module holds no SVM and needs no solders.

Commitment on one local validator: there are no forks, so a block is ``confirmed`` as soon as it
is made (its validator is the whole supermajority), like ``solana-test-validator``'s; it is
``finalized`` once ``FINALIZED_DEPTH`` (31) blocks are built on it, as Solana roots a block
after 31+ confirmed blocks on top. ``processed`` is the newest block too. A read at a commitment
sees the blocks and transactions up to that level's slot; account state (balances) is LiteSVM's
newest whatever the commitment, as one validator without forks has no other.
"""

from __future__ import annotations

import dataclasses
import decimal
import time
from typing import Any, Optional

TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
FINALIZED_DEPTH = 31
COMMITMENTS = ("processed", "confirmed", "finalized")
SIGNATURES_LIMIT = 1000  # Solana's maximum (and default) for getSignaturesForAddress


@dataclasses.dataclass(frozen=True)
class AccountKey:
    pubkey: str
    signer: bool
    writable: bool


@dataclasses.dataclass(frozen=True)
class TokenBalance:
    """One token account among a transaction's keys: its index, mint, owner and amount."""

    index: int
    mint: str
    owner: str
    amount: int
    decimals: int


@dataclasses.dataclass(frozen=True)
class Landed:
    """A transaction that landed in a block, failed ones included."""

    signature: str
    slot: int
    err: Any
    keys: tuple[AccountKey, ...]
    pre_lamports: tuple[int, ...]
    post_lamports: tuple[int, ...]
    pre_tokens: tuple[TokenBalance, ...]
    post_tokens: tuple[TokenBalance, ...]
    fee: int
    logs: tuple[str, ...]
    recent_blockhash: str
    compute_units: int


class History:
    """Blocks (slot -> blockhash, time) and landed transactions, in order."""

    def __init__(self) -> None:
        self.blocks: dict[int, tuple[str, int]] = {}
        self.landed: dict[str, Landed] = {}
        self.by_address: dict[str, list[str]] = {}
        self.by_slot: dict[int, list[str]] = {}
        self.tip = 0
        self.first = 0

    # --- recording ------------------------------------------------------------------------------

    def add_block(self, slot: int, blockhash: str) -> None:
        if not self.blocks:
            self.first = slot
        self.blocks[slot] = (blockhash, int(time.time()))
        self.tip = max(self.tip, slot)

    def add(self, landed: Landed) -> None:
        self.landed[landed.signature] = landed
        self.by_slot.setdefault(landed.slot, []).append(landed.signature)
        for key in dict.fromkeys(k.pubkey for k in landed.keys):
            self.by_address.setdefault(key, []).append(landed.signature)

    # --- commitment -----------------------------------------------------------------------------

    def slot_at(self, commitment: str) -> int:
        """The newest slot of ``commitment`` (``processed``, ``confirmed`` or ``finalized``)."""
        if commitment == "finalized":
            return max(self.first, self.tip - FINALIZED_DEPTH)
        return self.tip

    def status_of(self, slot: int) -> str:
        """The highest commitment a block of ``slot`` has reached."""
        return "finalized" if slot <= self.slot_at("finalized") else "confirmed"

    def confirmations(self, slot: int) -> Optional[int]:
        """Blocks on top of ``slot``; None once it is finalized, as Solana answers."""
        return None if self.status_of(slot) == "finalized" else self.tip - slot

    # --- answers --------------------------------------------------------------------------------

    def signatures_for_address(
        self, address: str, up_to: int, limit: int, before: Optional[str], until: Optional[str]
    ) -> list[dict[str, Any]]:
        """``getSignaturesForAddress``: newest first, landed up to slot ``up_to``, older than
        ``before`` and newer than ``until`` when they are given."""
        found: list[dict[str, Any]] = []
        started = before is None
        for signature in reversed(self.by_address.get(address, [])):
            if not started:
                started = signature == before
                continue
            if signature == until or len(found) >= limit:
                break
            landed = self.landed[signature]
            if landed.slot > up_to:
                continue
            found.append(
                {
                    "signature": signature,
                    "slot": landed.slot,
                    "err": landed.err,
                    "memo": None,
                    "blockTime": self.blocks.get(landed.slot, ("", None))[1],
                    "confirmationStatus": self.status_of(landed.slot),
                }
            )
        return found

    def transaction(self, signature: str, up_to: int, parsed: bool) -> Optional[dict[str, Any]]:
        """``getTransaction`` in the ``json`` or ``jsonParsed`` encoding (instructions are not
        parsed: their program, accounts and base58 data); None when it did not land by slot
        ``up_to``."""
        landed = self.landed.get(signature)
        if landed is None or landed.slot > up_to:
            return None
        return {
            "slot": landed.slot,
            "blockTime": self.blocks.get(landed.slot, ("", None))[1],
            "version": "legacy",
            "meta": meta(landed),
            "transaction": {
                "signatures": [landed.signature],
                "message": {
                    "accountKeys": [
                        {
                            "pubkey": k.pubkey,
                            "signer": k.signer,
                            "writable": k.writable,
                            "source": "transaction",
                        }
                        if parsed
                        else k.pubkey
                        for k in landed.keys
                    ],
                    "recentBlockhash": landed.recent_blockhash,
                    "instructions": [],
                },
            },
        }

    def block(self, slot: int, details: str, rewards: bool) -> Optional[dict[str, Any]]:
        """``getBlock`` of a block that was made (None for a slot without one); ``details`` is
        ``none``, ``signatures`` or ``full`` (``json`` transactions)."""
        if slot not in self.blocks:
            return None
        blockhash, block_time = self.blocks[slot]
        parent = max((s for s in self.blocks if s < slot), default=None)
        answer: dict[str, Any] = {
            "blockhash": blockhash,
            "previousBlockhash": self.blocks[parent][0] if parent is not None else blockhash,
            "parentSlot": parent if parent is not None else slot,
            "blockHeight": slot,
            "blockTime": block_time,
        }
        signatures = self.by_slot.get(slot, [])
        if details == "signatures":
            answer["signatures"] = list(signatures)
        elif details == "full":
            answer["transactions"] = [
                {"meta": meta(self.landed[s]), "version": "legacy", "transaction": tx["transaction"]}
                for s in signatures
                if (tx := self.transaction(s, slot, False)) is not None
            ]
        if rewards:
            answer["rewards"] = []
        return answer


def ui_amount_string(amount: int, decimals: int) -> str:
    """``amount`` scaled by ``decimals``, trailing zeros trimmed (Solana's ``uiAmountString``)."""
    text = format(decimal.Decimal(amount).scaleb(-decimals), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def token_amount(amount: int, decimals: int) -> dict[str, Any]:
    return {
        "amount": str(amount),
        "decimals": decimals,
        "uiAmount": amount / 10**decimals,
        "uiAmountString": ui_amount_string(amount, decimals),
    }


def meta(landed: Landed) -> dict[str, Any]:
    def tokens(balances: tuple[TokenBalance, ...]) -> list[dict[str, Any]]:
        return [
            {
                "accountIndex": b.index,
                "mint": b.mint,
                "owner": b.owner,
                "programId": TOKEN_PROGRAM,
                "uiTokenAmount": token_amount(b.amount, b.decimals),
            }
            for b in balances
        ]

    return {
        "err": landed.err,
        "status": {"Ok": None} if landed.err is None else {"Err": landed.err},
        "fee": landed.fee,
        "preBalances": list(landed.pre_lamports),
        "postBalances": list(landed.post_lamports),
        "preTokenBalances": tokens(landed.pre_tokens),
        "postTokenBalances": tokens(landed.post_tokens),
        "innerInstructions": [],
        "logMessages": list(landed.logs),
        "rewards": [],
        "loadedAddresses": {"writable": [], "readonly": []},
        "computeUnitsConsumed": landed.compute_units,
    }
