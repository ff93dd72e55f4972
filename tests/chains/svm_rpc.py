"""A Solana JSON-RPC 2.0 server over LiteSVM: the local Solana chain of the tests.

``solders.litesvm.LiteSVM`` is a real SVM (system, SPL Token and Associated Token Account programs
loaded) without a network front end; this module gives it the subset of Solana's HTTP RPC that
depositkit and devnet use, with Solana's own request and answer shapes (docs/funding.md §1)::

    python tests/chains/svm_rpc.py --port 0      # prints "Listening on 127.0.0.1:PORT", then serves

The USDC and USDT mints exist at their mainnet addresses (6 decimals) with a mint authority the
server holds; the development method ``svm_mintTo [mint, owner, rawAmount]`` mints to the owner's
associated token account (creating it) and answers the signature.

Blocks: LiteSVM has no clock of its own. Here every ``getLatestBlockhash`` is a new block: the slot
advances by one and a fresh blockhash is issued, valid while it is one of the newest
``BLOCKHASH_WINDOW`` (300), i.e. up to its ``lastValidBlockHeight`` (block height = slot: no slot
is skipped). LiteSVM's own check accepts only its latest blockhash, so it is switched off and this
server checks the window itself. Two identical transfers built on two ``getLatestBlockhash``
answers are therefore two transactions. The development method ``svm_advanceSlots [count]`` makes
``count`` empty blocks (as ``anvil_mine`` does on anvil).

Commitment (svm_history.py): on one validator without forks a block is ``confirmed`` (and
``processed``) as soon as it is made, and ``finalized`` once 31 blocks are built on it.
``getSlot``, ``getBlockHeight``, ``getSignaturesForAddress``, ``getTransaction``, ``getBlock`` and
``getSignatureStatuses``' ``confirmationStatus`` follow those levels (no commitment given: the
newest block, so that block heights match the blockhashes issued); balances and accounts are the
newest state whatever the commitment. Transactions are read back in the ``json`` and ``jsonParsed``
encodings, with the lamports and token balances of their accounts before and after (instructions
are not parsed).

svm_history.py is imported from this script's directory: run the script, do not import it.
"""

from __future__ import annotations

import argparse
import base64
import collections
import http.server
import json
import threading
from typing import Any, Callable, Optional, Union

from solders.account import Account
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.litesvm import LiteSVM
from solders.message import Message, from_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.token.associated import get_associated_token_address
from solders.token.state import Mint, TokenAccount
from solders.transaction import Transaction, VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata, TransactionMetadata
from svm_history import (
    COMMITMENTS,
    SIGNATURES_LIMIT,
    AccountKey,
    History,
    Landed,
    TokenBalance,
    token_amount,
)

TOKEN_PROGRAM_ID = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
TOKEN_2022_PROGRAM_ID = Pubkey.from_string("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb")
ASSOCIATED_TOKEN_PROGRAM_ID = Pubkey.from_string("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
SYSTEM_PROGRAM_ID = Pubkey.from_string("11111111111111111111111111111111")

# The stablecoin mints, at their mainnet addresses: symbol -> (address, decimals).
MINTS = {
    "USDC": ("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 6),
    "USDT": ("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", 6),
}

BLOCKHASH_WINDOW = 300
LAMPORTS_PER_SIGNATURE = 5000  # LiteSVM's fee: 5,000 lamports per signature, as on mainnet
# What the mint authority gets (of the 1M SOL LiteSVM can airdrop): svm_mintTo's fees and rent.
MINT_AUTHORITY_LAMPORTS = 10_000 * 10**9
# What getVersion reports: the Agave runtime inside solders 0.29 (litesvm 0.15.2).
SOLANA_CORE_VERSION = "4.1.2"

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

# Display texts of Solana's TransactionError and InstructionError (agave's thiserror messages),
# for the variants a deposit flow can meet; any other is named by its variant.
TRANSACTION_ERROR_TEXT = {
    "AccountInUse": "Account in use",
    "AccountLoadedTwice": "Account loaded twice",
    "AccountNotFound": "Attempt to debit an account but found no record of a prior credit.",
    "ProgramAccountNotFound": "Attempt to load a program that does not exist",
    "InsufficientFundsForFee": "Insufficient funds for fee",
    "InvalidAccountForFee": "This account may not be used to pay transaction fees",
    "AlreadyProcessed": "This transaction has already been processed",
    "BlockhashNotFound": "Blockhash not found",
    "MissingSignatureForFee": "Transaction requires a fee but has no signature present",
    "InvalidAccountIndex": "Transaction contains an invalid account reference",
    "SignatureFailure": "Transaction did not pass signature verification",
    "InvalidProgramForExecution": "This program may not be used for executing instructions",
    "SanitizeFailure": "Transaction failed to sanitize accounts offsets correctly",
    "UnsupportedVersion": "Transaction version is unsupported",
    "InvalidWritableAccount": "Transaction loads a writable account that cannot be written",
}
INSTRUCTION_ERROR_TEXT = {
    "GenericError": "generic instruction error",
    "InvalidArgument": "invalid program argument",
    "InvalidInstructionData": "invalid instruction data",
    "InvalidAccountData": "invalid account data for instruction",
    "AccountDataTooSmall": "account data too small for instruction",
    "InsufficientFunds": "insufficient funds for instruction",
    "IncorrectProgramId": "incorrect program id for instruction",
    "MissingRequiredSignature": "missing required signature for instruction",
    "AccountAlreadyInitialized": "instruction requires an uninitialized account",
    "UninitializedAccount": "instruction requires an initialized account",
    "NotEnoughAccountKeys": "insufficient account keys for instruction",
    "ExternalAccountLamportSpend": "instruction spent from the balance of an account it does not own",
    "ReadonlyLamportChange": "instruction changed the balance of a read-only account",
    "PrivilegeEscalation": "Cross-program invocation with unauthorized signer or writable account",
    "ComputationalBudgetExceeded": "Computational budget exceeded",
    "ProgramFailedToComplete": "Program failed to complete",
    "IllegalOwner": "Provided owner is not allowed",
    "InvalidAccountOwner": "Invalid account owner",
    "ArithmeticOverflow": "Program arithmetic overflowed",
}


def b58encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    out = ""
    while number:
        number, digit = divmod(number, 58)
        out = B58_ALPHABET[digit] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def b58decode(text: str) -> bytes:
    number = 0
    for char in text:
        digit = B58_ALPHABET.find(char)
        if digit < 0:
            raise ValueError(f"invalid base58 character {char!r}")
        number = number * 58 + digit
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return b"\0" * (len(text) - len(text.lstrip("1"))) + body


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def invalid_params(message: str) -> RpcError:
    return RpcError(-32602, f"Invalid params: {message}")


def describe_error(err: Any) -> str:
    """The display text of a TransactionError in its RPC JSON form, as a real node writes it."""
    if isinstance(err, str):
        return TRANSACTION_ERROR_TEXT.get(err, err)
    ((name, value),) = err.items()
    if name == "InstructionError":
        index, inner = value
        if isinstance(inner, dict):
            ((inner_name, inner_value),) = inner.items()
            text = (
                f"custom program error: {inner_value:#x}"
                if inner_name == "Custom"
                else f"{inner_name}: {inner_value}"
            )
        else:
            text = INSTRUCTION_ERROR_TEXT.get(inner, inner)
        return f"Error processing Instruction {index}: {text}"
    if name == "InsufficientFundsForRent":
        return (
            f"Transaction results in an account ({value['account_index']}) with insufficient funds"
            " for rent"
        )
    return f"{name}: {value}"


def error_json(failed: FailedTransactionMetadata) -> Any:
    """The TransactionError of a failed LiteSVM result in Solana's RPC JSON form, e.g.
    ``{"InstructionError": [0, {"Custom": 1}]}`` or ``"AccountNotFound"``."""
    return json.loads(failed.to_json())["err"]


class SvmRpc:
    """The SVM and the RPC methods over it. ``call`` is thread-safe: one lock serializes every
    access to the SVM, which is not thread-safe itself."""

    def __init__(self) -> None:
        self.svm = LiteSVM().with_blockhash_check(False)
        self.lock = threading.Lock()
        # Issued blockhashes, oldest first, -> their lastValidBlockHeight.
        self.blockhashes: collections.OrderedDict[Hash, int] = collections.OrderedDict()
        # Blocks and landed transactions (failed ones included), for the reads of a watcher.
        self.history = History()
        self.history.add_block(self.slot, str(self.svm.latest_blockhash()))
        self.mint_authority = Keypair()
        self.methods: dict[str, Callable[[list[Any]], Any]] = {
            "getHealth": self.get_health,
            "getVersion": self.get_version,
            "getSlot": self.get_slot,
            "getBlockHeight": self.get_slot,
            "getSignaturesForAddress": self.get_signatures_for_address,
            "getTransaction": self.get_transaction,
            "getBlock": self.get_block,
            "getBalance": self.get_balance,
            "getAccountInfo": self.get_account_info,
            "getMultipleAccounts": self.get_multiple_accounts,
            "getTokenAccountsByOwner": self.get_token_accounts_by_owner,
            "getTokenAccountBalance": self.get_token_account_balance,
            "getLatestBlockhash": self.get_latest_blockhash,
            "getMinimumBalanceForRentExemption": self.get_minimum_balance_for_rent_exemption,
            "getFeeForMessage": self.get_fee_for_message,
            "sendTransaction": self.send_transaction,
            "simulateTransaction": self.simulate_transaction,
            "getSignatureStatuses": self.get_signature_statuses,
            "requestAirdrop": self.request_airdrop,
            "svm_mintTo": self.mint_to,
            "svm_advanceSlots": self.advance_slots,
        }
        self.request_airdrop([str(self.mint_authority.pubkey()), MINT_AUTHORITY_LAMPORTS])
        for address, decimals in MINTS.values():
            mint = Mint(self.mint_authority.pubkey(), 0, decimals, True)
            self.svm.set_account(
                Pubkey.from_string(address),
                Account(
                    lamports=self.svm.minimum_balance_for_rent_exemption(len(bytes(mint))),
                    data=bytes(mint),
                    owner=TOKEN_PROGRAM_ID,
                    executable=False,
                ),
            )

    def call(self, method: str, params: Any) -> Any:
        handler = self.methods.get(method)
        if handler is None:
            raise RpcError(-32601, "Method not found")
        if params is None:
            params = []
        if not isinstance(params, list):
            raise invalid_params("params must be an array")
        with self.lock:
            try:
                return handler(params)
            except RpcError:
                raise
            except Exception as error:  # a bug or an SVM failure: answer it, keep serving
                raise RpcError(-32603, f"Internal error: {type(error).__name__}: {error}") from error

    # --- blocks ---------------------------------------------------------------------------------

    @property
    def slot(self) -> int:
        return self.svm.get_clock().slot

    def context(self) -> dict[str, Any]:
        return {"slot": self.slot}

    def new_block(self) -> Hash:
        """Advances one slot and issues a fresh blockhash, valid for BLOCKHASH_WINDOW blocks."""
        self.svm.warp_to_slot(self.slot + 1)
        self.svm.expire_blockhash()
        blockhash = self.svm.latest_blockhash()
        # Valid while it is one of the newest BLOCKHASH_WINDOW: up to that many blocks from now.
        self.blockhashes[blockhash] = self.slot + BLOCKHASH_WINDOW - 1
        while len(self.blockhashes) > BLOCKHASH_WINDOW:
            self.blockhashes.popitem(last=False)
        self.history.add_block(self.slot, str(blockhash))
        return blockhash

    def run(
        self,
        keys: list[AccountKey],
        recent_blockhash: str,
        execute: Callable[[], Union[TransactionMetadata, FailedTransactionMetadata]],
    ) -> Union[TransactionMetadata, FailedTransactionMetadata]:
        """Runs a transaction on the SVM (``execute``) and, when it landed (LiteSVM keeps landed
        transactions, failed ones included, in its history), records it in the history with the
        balances of its accounts (``keys``) before and after. A transaction that failed before
        execution (no fee payer funds, a duplicate, …) never lands, as on a real cluster."""
        pre = self.snapshot(keys)
        result = execute()
        meta = result.meta() if isinstance(result, FailedTransactionMetadata) else result
        signature = meta.signature()
        if self.svm.get_transaction(signature) is not None:
            post = self.snapshot(keys)
            self.history.add(
                Landed(
                    signature=str(signature),
                    slot=self.slot,
                    err=error_json(result) if isinstance(result, FailedTransactionMetadata) else None,
                    keys=tuple(keys),
                    pre_lamports=pre[0],
                    post_lamports=post[0],
                    pre_tokens=pre[1],
                    post_tokens=post[1],
                    fee=meta.fee(),
                    logs=tuple(meta.logs()),
                    recent_blockhash=recent_blockhash,
                    compute_units=meta.compute_units_consumed(),
                )
            )
        return result

    def run_transaction(
        self, tx: Union[Transaction, VersionedTransaction]
    ) -> Union[TransactionMetadata, FailedTransactionMetadata]:
        """``run`` of a signed transaction, its keys read from its message."""
        message = tx.message
        header = message.header
        count = len(message.account_keys)
        signed, readonly_signed = header.num_required_signatures, header.num_readonly_signed_accounts
        readonly_unsigned = header.num_readonly_unsigned_accounts
        keys = [
            AccountKey(
                str(key),
                signer=i < signed,
                writable=i < signed - readonly_signed or signed <= i < count - readonly_unsigned,
            )
            for i, key in enumerate(message.account_keys)
        ]
        return self.run(keys, str(message.recent_blockhash), lambda: self.svm.send_transaction(tx))

    def snapshot(self, keys: list[AccountKey]) -> tuple[tuple[int, ...], tuple[TokenBalance, ...]]:
        """The lamports of each account of ``keys``, and the balances of those that are token
        accounts."""
        lamports = []
        tokens = []
        for index, key in enumerate(keys):
            account = self.svm.get_account(Pubkey.from_string(key.pubkey))
            lamports.append(0 if account is None else account.lamports)
            if account is None or account.lamports == 0 or account.owner != TOKEN_PROGRAM_ID:
                continue
            if len(account.data) != 165:
                continue
            state = TokenAccount.from_bytes(account.data)
            decimals = self.mint_decimals(state.mint)
            if decimals is not None:
                tokens.append(TokenBalance(index, str(state.mint), str(state.owner), state.amount, decimals))
        return tuple(lamports), tuple(tokens)

    # --- parameters -----------------------------------------------------------------------------

    @staticmethod
    def param(params: list[Any], index: int, kind: type, name: str, default: Any = ...) -> Any:
        if index >= len(params) or params[index] is None:
            if default is ...:
                raise invalid_params(f"missing {name}")
            return default
        value = params[index]
        if kind is int and isinstance(value, str) and value.isdigit():
            value = int(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise invalid_params(f"{name} must be {kind.__name__}, got {value!r}")
        return value

    @staticmethod
    def pubkey(value: Any, name: str = "pubkey") -> Pubkey:
        if not isinstance(value, str):
            raise invalid_params(f"{name} must be a base58 string, got {value!r}")
        try:
            return Pubkey.from_string(value)
        except ValueError:
            raise invalid_params(f"invalid {name} {value!r}") from None

    def config(self, params: list[Any], index: int) -> dict[str, Any]:
        return self.param(params, index, dict, "config", {})

    @staticmethod
    def encoding(config: dict[str, Any], default: str, allowed: tuple[str, ...]) -> str:
        encoding = config.get("encoding", default)
        if encoding not in allowed:
            raise invalid_params(f"unsupported encoding {encoding!r} (use one of {', '.join(allowed)})")
        return encoding

    def transaction(self, params: list[Any], config: dict[str, Any]) -> VersionedTransaction:
        """The wire transaction of params[0], base58 (Solana's default) or base64."""
        encoded = self.param(params, 0, str, "transaction")
        encoding = self.encoding(config, "base58", ("base58", "base64"))
        try:
            raw = base64.b64decode(encoded, validate=True) if encoding == "base64" else b58decode(encoded)
            return VersionedTransaction.from_bytes(raw)
        except ValueError as error:
            raise invalid_params(f"failed to deserialize the {encoding} transaction: {error}") from None

    # --- accounts -------------------------------------------------------------------------------

    def account(self, address: Pubkey) -> Optional[Account]:
        account = self.svm.get_account(address)
        return account if account is not None and account.lamports > 0 else None

    def mint_decimals(self, mint: Pubkey) -> Optional[int]:
        account = self.account(mint)
        if account is None or account.owner != TOKEN_PROGRAM_ID or len(account.data) != 82:
            return None
        return Mint.from_bytes(account.data).decimals

    def parse_token(self, account: Account) -> Optional[dict[str, Any]]:
        """The ``jsonParsed`` data of an SPL token account or mint (None for anything else)."""
        if account.owner != TOKEN_PROGRAM_ID:
            return None
        if len(account.data) == 165:
            state = TokenAccount.from_bytes(account.data)
            decimals = self.mint_decimals(state.mint)
            if decimals is None:
                return None
            info: dict[str, Any] = {
                "isNative": state.is_native is not None,
                "mint": str(state.mint),
                "owner": str(state.owner),
                "state": ("uninitialized", "initialized", "frozen")[int(state.state)],
                "tokenAmount": token_amount(state.amount, decimals),
            }
            if state.delegate is not None:
                info["delegate"] = str(state.delegate)
                info["delegatedAmount"] = token_amount(state.delegated_amount, decimals)
            if state.close_authority is not None:
                info["closeAuthority"] = str(state.close_authority)
            parsed = {"info": info, "type": "account"}
        elif len(account.data) == 82:
            mint = Mint.from_bytes(account.data)
            parsed = {
                "info": {
                    "decimals": mint.decimals,
                    "freezeAuthority": None if mint.freeze_authority is None else str(mint.freeze_authority),
                    "isInitialized": mint.is_initialized,
                    "mintAuthority": None if mint.mint_authority is None else str(mint.mint_authority),
                    "supply": str(mint.supply),
                },
                "type": "mint",
            }
        else:
            return None
        return {"program": "spl-token", "parsed": parsed, "space": len(account.data)}

    def encode_account(self, account: Account, encoding: str) -> dict[str, Any]:
        data: Any = None
        if encoding == "jsonParsed":
            data = self.parse_token(account)
        if data is None:
            # jsonParsed falls back to base64 for accounts it cannot parse, as on Solana.
            data = (
                [b58encode(account.data), "base58"]
                if encoding == "base58"
                else [base64.b64encode(account.data).decode(), "base64"]
            )
        return {
            "data": data,
            "executable": account.executable,
            "lamports": account.lamports,
            "owner": str(account.owner),
            "rentEpoch": account.rent_epoch,
            "space": len(account.data),
        }

    def account_encoding(self, config: dict[str, Any]) -> str:
        # Solana's own default is the deprecated bare-base58 "binary" form; clients name one.
        return self.encoding(config, "base64", ("base64", "base58", "jsonParsed"))

    # --- methods --------------------------------------------------------------------------------

    def get_health(self, params: list[Any]) -> str:
        return "ok"

    def get_version(self, params: list[Any]) -> dict[str, Any]:
        return {"solana-core": SOLANA_CORE_VERSION, "feature-set": 0}

    def commitment_slot(self, config: dict[str, Any], lowest: str = "processed") -> int:
        """The newest slot of the config's ``commitment`` (none given: the newest block), which
        must be ``lowest`` or above (Solana refuses ``processed`` for transaction reads)."""
        commitment = config.get("commitment", "confirmed")
        if commitment not in COMMITMENTS:
            raise invalid_params(f"unknown commitment {commitment!r} (use one of {', '.join(COMMITMENTS)})")
        if COMMITMENTS.index(commitment) < COMMITMENTS.index(lowest):
            raise invalid_params(f"Method does not support commitment below `{lowest}`")
        return self.history.slot_at(commitment)

    def get_slot(self, params: list[Any]) -> int:
        return self.commitment_slot(self.config(params, 0))

    def get_signatures_for_address(self, params: list[Any]) -> list[dict[str, Any]]:
        address = self.pubkey(self.param(params, 0, str, "address"), "address")
        config = self.config(params, 1)
        limit = config.get("limit", SIGNATURES_LIMIT)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= SIGNATURES_LIMIT:
            raise invalid_params(f"limit must be 1 to {SIGNATURES_LIMIT}, got {limit!r}")
        up_to = self.commitment_slot(config, "confirmed")
        before, until = config.get("before"), config.get("until")
        return self.history.signatures_for_address(str(address), up_to, limit, before, until)

    def get_transaction(self, params: list[Any]) -> Optional[dict[str, Any]]:
        signature = self.param(params, 0, str, "signature")
        try:
            Signature.from_string(signature)
        except ValueError:
            raise invalid_params(f"invalid signature {signature!r}") from None
        config = params[1] if len(params) > 1 and params[1] is not None else {}
        if isinstance(config, str):  # the deprecated form: the encoding alone
            config = {"encoding": config}
        if not isinstance(config, dict):
            raise invalid_params(f"config must be dict, got {config!r}")
        encoding = self.encoding(config, "json", ("json", "jsonParsed"))
        up_to = self.commitment_slot(config, "confirmed")
        return self.history.transaction(signature, up_to, encoding == "jsonParsed")

    def get_block(self, params: list[Any]) -> dict[str, Any]:
        slot = self.param(params, 0, int, "slot")
        config = self.config(params, 1)
        self.encoding(config, "json", ("json", "jsonParsed"))
        details = config.get("transactionDetails", "full")
        if details not in ("full", "signatures", "none"):
            raise invalid_params(f"unsupported transactionDetails {details!r} (use full, signatures or none)")
        if slot > self.commitment_slot(config, "confirmed"):
            raise RpcError(-32004, f"Block not available for slot {slot}")
        block = self.history.block(slot, details, bool(config.get("rewards", True)))
        if block is None:
            raise RpcError(-32007, f"Slot {slot} was skipped, or missing due to ledger jump to recent snapshot")
        return block

    def advance_slots(self, params: list[Any]) -> int:
        """``svm_advanceSlots [count]``: ``count`` (1 to 10,000) empty blocks; the new slot."""
        count = self.param(params, 0, int, "count")
        if not 1 <= count <= 10_000:
            raise invalid_params(f"count must be 1 to 10000, got {count}")
        for _ in range(count):
            self.new_block()
        return self.slot

    def get_balance(self, params: list[Any]) -> dict[str, Any]:
        address = self.pubkey(self.param(params, 0, str, "pubkey"))
        return {"context": self.context(), "value": self.svm.get_balance(address) or 0}

    def get_account_info(self, params: list[Any]) -> dict[str, Any]:
        address = self.pubkey(self.param(params, 0, str, "pubkey"))
        encoding = self.account_encoding(self.config(params, 1))
        account = self.account(address)
        value = None if account is None else self.encode_account(account, encoding)
        return {"context": self.context(), "value": value}

    def get_multiple_accounts(self, params: list[Any]) -> dict[str, Any]:
        addresses = [self.pubkey(a) for a in self.param(params, 0, list, "pubkeys")]
        encoding = self.account_encoding(self.config(params, 1))
        value = []
        for address in addresses:
            account = self.account(address)
            value.append(None if account is None else self.encode_account(account, encoding))
        return {"context": self.context(), "value": value}

    def get_token_accounts_by_owner(self, params: list[Any]) -> dict[str, Any]:
        owner = self.pubkey(self.param(params, 0, str, "owner"))
        selector = self.param(params, 1, dict, "filter")
        encoding = self.account_encoding(self.config(params, 2))
        mint: Optional[Pubkey] = None
        if set(selector) == {"mint"}:
            mint = self.pubkey(selector["mint"], "mint")
            if self.mint_decimals(mint) is None:
                raise invalid_params(f"could not find mint {mint}")
            program = TOKEN_PROGRAM_ID
        elif set(selector) == {"programId"}:
            program = self.pubkey(selector["programId"], "programId")
            if program not in (TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID):
                raise invalid_params(f"unrecognized Token program id {program}")
        else:
            raise invalid_params('the filter must be {"mint": …} or {"programId": …}')
        value = []
        for address, account in self.svm.get_program_accounts(program):
            if len(account.data) != 165 or account.lamports == 0:
                continue
            state = TokenAccount.from_bytes(account.data)
            if state.owner == owner and mint in (None, state.mint):
                value.append({"pubkey": str(address), "account": self.encode_account(account, encoding)})
        return {"context": self.context(), "value": value}

    def get_token_account_balance(self, params: list[Any]) -> dict[str, Any]:
        address = self.pubkey(self.param(params, 0, str, "pubkey"))
        account = self.account(address)
        if account is None or account.owner != TOKEN_PROGRAM_ID or len(account.data) != 165:
            raise invalid_params("not a Token account")
        state = TokenAccount.from_bytes(account.data)
        decimals = self.mint_decimals(state.mint)
        if decimals is None:
            raise invalid_params("could not find mint")
        return {"context": self.context(), "value": token_amount(state.amount, decimals)}

    def get_latest_blockhash(self, params: list[Any]) -> dict[str, Any]:
        blockhash = self.new_block()
        return {
            "context": self.context(),
            "value": {"blockhash": str(blockhash), "lastValidBlockHeight": self.blockhashes[blockhash]},
        }

    def get_minimum_balance_for_rent_exemption(self, params: list[Any]) -> int:
        return self.svm.minimum_balance_for_rent_exemption(self.param(params, 0, int, "data length"))

    def get_fee_for_message(self, params: list[Any]) -> dict[str, Any]:
        """5,000 lamports per required signature: LiteSVM's fee (no priority fee is charged)."""
        encoded = self.param(params, 0, str, "message")
        try:
            message = from_bytes_versioned(base64.b64decode(encoded, validate=True))
        except ValueError as error:
            raise invalid_params(f"failed to deserialize the message: {error}") from None
        fee = LAMPORTS_PER_SIGNATURE * message.header.num_required_signatures
        return {"context": self.context(), "value": fee}

    def check_blockhash(self, tx: VersionedTransaction) -> Optional[str]:
        """``"BlockhashNotFound"`` when the transaction's blockhash is not one of the window."""
        return None if tx.message.recent_blockhash in self.blockhashes else "BlockhashNotFound"

    def send_transaction(self, params: list[Any]) -> str:
        config = self.config(params, 1)
        tx = self.transaction(params, config)
        signature = tx.signatures[0]
        if config.get("skipPreflight"):
            # No preflight: the node takes the transaction, whatever becomes of it.
            if self.check_blockhash(tx) is None:
                self.run_transaction(tx)
            return str(signature)
        err = self.check_blockhash(tx)
        logs: list[str] = []
        units = 0
        if err is None:
            # Preflight as a real node does it: a simulation, so a failing transaction costs nothing.
            simulated = self.svm.simulate_transaction(tx)
            if isinstance(simulated, FailedTransactionMetadata):
                err, logs = error_json(simulated), simulated.meta().logs()
                units = simulated.meta().compute_units_consumed()
        if err == "SignatureFailure":
            raise RpcError(-32003, "Transaction signature verification failure")
        if err is not None:
            raise RpcError(
                -32002,
                f"Transaction simulation failed: {describe_error(err)}",
                {"err": err, "logs": logs, "accounts": None, "unitsConsumed": units, "returnData": None},
            )
        result = self.run_transaction(tx)
        meta = result.meta() if isinstance(result, FailedTransactionMetadata) else result
        return str(meta.signature())

    def simulate_transaction(self, params: list[Any]) -> dict[str, Any]:
        config = self.config(params, 1)
        tx = self.transaction(params, config)
        sig_verify = bool(config.get("sigVerify", False))
        replace = bool(config.get("replaceRecentBlockhash", False))
        if sig_verify and replace:
            raise invalid_params("sigVerify may not be used with replaceRecentBlockhash")
        value: dict[str, Any] = {
            "err": None,
            "logs": [],
            "accounts": None,
            "unitsConsumed": 0,
            "returnData": None,
        }
        if replace:
            # LiteSVM's blockhash check is off, so the transaction runs as it is.
            newest = next(reversed(self.blockhashes))
            value["replacementBlockhash"] = {
                "blockhash": str(newest),
                "lastValidBlockHeight": self.blockhashes[newest],
            }
        else:
            value["err"] = self.check_blockhash(tx)
        if value["err"] is None:
            self.svm.with_sigverify(sig_verify)
            try:
                simulated = self.svm.simulate_transaction(tx)
            finally:
                self.svm.with_sigverify(True)
            if isinstance(simulated, FailedTransactionMetadata):
                value["err"] = error_json(simulated)
            meta = simulated.meta()
            value["logs"] = meta.logs()
            value["unitsConsumed"] = meta.compute_units_consumed()
        return {"context": self.context(), "value": value}

    def get_signature_statuses(self, params: list[Any]) -> dict[str, Any]:
        value: list[Optional[dict[str, Any]]] = []
        for text in self.param(params, 0, list, "signatures"):
            try:
                Signature.from_string(text)
            except (TypeError, ValueError):
                raise invalid_params(f"invalid signature {text!r}") from None
            landed = self.history.landed.get(text)
            if landed is None:
                value.append(None)
                continue
            value.append(
                {
                    "slot": landed.slot,
                    "confirmations": self.history.confirmations(landed.slot),
                    "err": landed.err,
                    "status": {"Ok": None} if landed.err is None else {"Err": landed.err},
                    "confirmationStatus": self.history.status_of(landed.slot),
                }
            )
        return {"context": self.context(), "value": value}

    def request_airdrop(self, params: list[Any]) -> str:
        address = self.pubkey(self.param(params, 0, str, "pubkey"))
        lamports = self.param(params, 1, int, "lamports")
        # LiteSVM signs airdrops on its latest blockhash: a new one keeps two equal airdrops apart.
        self.new_block()
        keys = [
            AccountKey(str(self.svm.airdrop_pubkey()), signer=True, writable=True),
            AccountKey(str(address), signer=False, writable=True),
            AccountKey(str(SYSTEM_PROGRAM_ID), signer=False, writable=False),
        ]
        blockhash = str(self.svm.latest_blockhash())
        result = self.run(keys, blockhash, lambda: self.svm.airdrop(address, lamports))
        if isinstance(result, FailedTransactionMetadata):
            raise RpcError(-32603, f"airdrop failed: {describe_error(error_json(result))}")
        return str(result.signature())

    def mint_to(self, params: list[Any]) -> str:
        """``svm_mintTo [mint, owner, rawAmount]``: CreateIdempotent of the owner's associated
        token account, then MintTo, signed and paid by the server's mint authority."""
        mint = self.pubkey(self.param(params, 0, str, "mint"), "mint")
        owner = self.pubkey(self.param(params, 1, str, "owner"), "owner")
        amount = self.param(params, 2, int, "rawAmount")
        if not 0 <= amount < 2**64:
            raise invalid_params(f"rawAmount {amount} is not a u64")
        mint_account = self.account(mint)
        if mint_account is None or self.mint_decimals(mint) is None:
            raise invalid_params(f"{mint} is not a mint")
        if Mint.from_bytes(mint_account.data).mint_authority != self.mint_authority.pubkey():
            raise invalid_params(f"this server holds no mint authority of {mint}")
        authority = self.mint_authority.pubkey()
        token_account = get_associated_token_address(owner, mint)
        create = Instruction(
            ASSOCIATED_TOKEN_PROGRAM_ID,
            bytes([1]),  # CreateIdempotent
            [
                AccountMeta(authority, is_signer=True, is_writable=True),
                AccountMeta(token_account, is_signer=False, is_writable=True),
                AccountMeta(owner, is_signer=False, is_writable=False),
                AccountMeta(mint, is_signer=False, is_writable=False),
                AccountMeta(SYSTEM_PROGRAM_ID, is_signer=False, is_writable=False),
                AccountMeta(TOKEN_PROGRAM_ID, is_signer=False, is_writable=False),
            ],
        )
        mint_to = Instruction(
            TOKEN_PROGRAM_ID,
            bytes([7]) + amount.to_bytes(8, "little"),  # MintTo { amount }
            [
                AccountMeta(mint, is_signer=False, is_writable=True),
                AccountMeta(token_account, is_signer=False, is_writable=True),
                AccountMeta(authority, is_signer=True, is_writable=False),
            ],
        )
        tx = Transaction([self.mint_authority], Message([create, mint_to], authority), self.new_block())
        result = self.run_transaction(tx)
        if isinstance(result, FailedTransactionMetadata):
            err = error_json(result)
            raise RpcError(-32002, f"svm_mintTo failed: {describe_error(err)}", {"err": err})
        return str(result.signature())


class Handler(http.server.BaseHTTPRequestHandler):
    """JSON-RPC 2.0 over HTTP POST, single requests and batches."""

    server: "Server"
    protocol_version = "HTTP/1.1"  # keep-alive, as clients of a real node expect
    # The headers and the body go out in two writes; with Nagle's algorithm on, the body waits
    # for the client's delayed ACK of the headers on a kept-alive connection (~200 ms a call).
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            request = json.loads(body)
        except ValueError:
            answer: Any = self.error(None, RpcError(-32700, "Parse error"))
        else:
            if isinstance(request, list) and request:
                answer = [self.answer(item) for item in request]
            else:
                answer = self.answer(request)
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return self.error(None, RpcError(-32600, "Invalid request"))
        try:
            result = self.server.rpc.call(request["method"], request.get("params"))
        except RpcError as error:
            return self.error(request.get("id"), error)
        return {"jsonrpc": "2.0", "result": result, "id": request.get("id")}

    @staticmethod
    def error(request_id: Any, error: RpcError) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "error": error.to_json(), "id": request_id}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: one line per request would drown the test output."""


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], rpc: SvmRpc) -> None:
        super().__init__(address, Handler)
        self.rpc = rpc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (the default): any free port")
    args = parser.parse_args()
    server = Server((args.host, args.port), SvmRpc())
    host, port = server.server_address[:2]
    print(f"Listening on {host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
