"""depositkit: deposit addresses, watching, sweeping and user lookup, backed by a Rust core.

- The validation layer of the deposit spec (§4): the ``CHAIN`` table, the ``TokenType``
  enumeration, the destination and onramp rules, address checks and exact unit conversion.
- ``DepositClient``: deposit addresses for an owner, a watcher, a sweeper delivering each deposit
  to a destination chain and token, and events (``DepositLifecycleEvent``,
  ``StatusChangedEvent``, ``ErrorEvent``, ``RefundEvent``, ``RecoveryEvent``) by callback or by
  iteration; refunds (``RefundResult``, ``RefundEligibility``), recovery of stuck funds
  (``RecoveryResult``), headless notification records (``Notification``) and the transaction
  history (``UATransaction``, ``TransactionsResponse``, ``TokenTransactionsResponse``).
- ``DepositFleet`` (fleet mode, preview): many processes share the owners of one deployment
  through PostgreSQL; ``FleetEvent`` is an event of its one log across owners (``events()``,
  ``iter_events()``, ``subscribe()``); ``AsyncDepositFleet`` is its asyncio face.
- Production (``backend="particle"``: Particle's Universal Account service, README "Production"):
  the owner signs with a key or a master seed (the ``particle`` option) or through the host's
  ``CallbackSigner`` (a KMS, an HSM), given as ``DepositClient(..., signer=...)``.
- Fund-from-wallet (``DepositClient.set_evm_wallet``, ``set_solana_wallet``,
  ``set_balance_provider``, ``get_wallet_balances`` → ``FundingBalance``, ``fund_from_wallet`` →
  ``FundingTransferResult``; host providers raise ``ProviderError``) and the fiat onramp
  (``open_onramp``, ``handle_onramp_message``, ``OnrampOrder``, events ``OnrampEvent`` and
  ``OnrampCompleteEvent``).
- ``Devnet``: the emulator of the remote services, started in process (tests, demos), optionally
  backed by real local chains (``Devnet(chains=...)``). Only in builds with the cargo feature
  ``devnet`` (``scripts/python-env.sh``); production wheels (``maturin build --release``) leave it
  out, and ``depositkit.Devnet`` then raises an ``AttributeError`` that says how to get it.
- ``UserRpcClient``, the client of the user-lookup JSON-RPC service, with its ``User`` and
  ``Wallet`` records; ``get_users_info`` looks many users up in one JSON-RPC batch.
- ``AsyncDepositClient`` and ``AsyncUserRpcClient``: the same clients for asyncio (coroutines,
  ``async with``, ``async for event in client.events()``), never blocking the event loop.

Errors are the classes of :mod:`depositkit.exceptions`, re-exported here.

>>> import depositkit
>>> depositkit.CHAIN.BASE
<CHAIN.BASE: 8453>
>>> depositkit.is_supported_destination_token("usdc", depositkit.CHAIN.BASE)
True
>>> depositkit.format_units(1_500_000, 6)
'1.5'
"""

from __future__ import annotations

import atexit as _atexit
import logging as _logging
import enum
import typing as _typing

if _typing.TYPE_CHECKING:
    from typing_extensions import Self as _Self

from . import _native
from ._aio import AsyncDepositClient, AsyncUserRpcClient
from ._fleet_aio import AsyncDepositFleet
from ._deposit import DepositEvent, DestinationConfig
from ._funding import ProviderError
from ._native import (
    DEFAULT_MIN_VALUE_USD,
    DEFAULT_POLLING_INTERVAL_MS,
    MAX_DECIMALS,
    CallbackSigner,
    DeliveredAmount,
    DepositAddresses,
    DepositClient,
    DepositFleet,
    DepositLifecycleEvent,
    DetectedDeposit,
    ErrorEvent,
    FleetEvent,
    FleetEventIterator,
    FundingBalance,
    FundingTransferResult,
    Notification,
    OnrampCompleteEvent,
    OnrampEvent,
    OnrampOrder,
    RecoveryEvent,
    RecoveryResult,
    RefundEligibility,
    RefundEvent,
    RefundResult,
    StatusChangedEvent,
    SweepResult,
    TokenTransactionsResponse,
    TransactionsResponse,
    UATransaction,
    User,
    UserRpcClient,
    Wallet,
    __version__,
    flush_logs,
    format_units,
    get_address_type,
    get_chain_name,
    get_token_decimals,
    is_onramp_token_supported,
    is_supported_destination_token,
    is_valid_destination_chain,
    is_valid_evm_address,
    is_valid_solana_address,
    metrics_text,
    parse_units,
    refresh_log_levels,
    token_info,
    validate_address_for_chain,
)
from .exceptions import (
    AuthenticationError,
    ConfigurationError,
    ConfigurationTypeError,
    DepositSDKError,
    DepositTimeoutError,
    FundingError,
    InternalError,
    InvalidArgumentError,
    JwtError,
    NetworkError,
    NotFoundError,
    ProtocolError,
    RefundError,
    RpcError,
    SweepError,
    UniversalAccountError,
)

__all__ = [
    # chains and tokens
    "CHAIN",
    "TokenType",
    "DEFAULT_SUPPORTED_TOKENS",
    "DEFAULT_MIN_VALUE_USD",
    "DEFAULT_POLLING_INTERVAL_MS",
    "MAX_DECIMALS",
    "get_chain_name",
    "is_valid_destination_chain",
    "is_supported_destination_token",
    "is_onramp_token_supported",
    "get_token_decimals",
    "token_info",
    # addresses
    "get_address_type",
    "is_valid_evm_address",
    "is_valid_solana_address",
    "validate_address_for_chain",
    # units
    "format_units",
    "parse_units",
    # operating it: metrics and logs
    "metrics_text",
    "refresh_log_levels",
    "flush_logs",
    # deposits
    "DepositClient",
    "AsyncDepositClient",
    "CallbackSigner",
    "DestinationConfig",
    "DepositAddresses",
    "DetectedDeposit",
    "SweepResult",
    "DeliveredAmount",
    "RefundResult",
    "RefundEligibility",
    "RecoveryResult",
    "Notification",
    "UATransaction",
    "TransactionsResponse",
    "TokenTransactionsResponse",
    "DepositEvent",
    "DepositLifecycleEvent",
    "StatusChangedEvent",
    "ErrorEvent",
    "RefundEvent",
    "RecoveryEvent",
    # fund from wallet, the onramp
    "FundingBalance",
    "FundingTransferResult",
    "ProviderError",
    "OnrampOrder",
    "OnrampEvent",
    "OnrampCompleteEvent",
    # fleet mode (docs/fleet.md)
    "DepositFleet",
    "AsyncDepositFleet",
    "FleetEvent",
    "FleetEventIterator",
    "Devnet",
    # user lookup
    "UserRpcClient",
    "AsyncUserRpcClient",
    "User",
    "Wallet",
    # errors
    "DepositSDKError",
    "InvalidArgumentError",
    "ConfigurationError",
    "ConfigurationTypeError",
    "AuthenticationError",
    "JwtError",
    "UniversalAccountError",
    "SweepError",
    "RefundError",
    "FundingError",
    "NetworkError",
    "DepositTimeoutError",
    "ProtocolError",
    "RpcError",
    "NotFoundError",
    "InternalError",
    "__version__",
]

try:
    from ._native import Devnet
except ImportError:  # built without the cargo feature `devnet`, as production wheels are
    if not _typing.TYPE_CHECKING:
        # Type checkers (and stubtest) see the devnet build, the one _native.pyi describes.
        __all__.remove("Devnet")

        def __getattr__(name: str) -> object:
            if name == "Devnet":
                raise AttributeError(
                    "depositkit was built without the devnet emulator (production builds leave it "
                    "out), so depositkit.Devnet does not exist; build depositkit with the cargo "
                    "feature `devnet`: `maturin develop --features devnet` in python/ (what "
                    "scripts/python-env.sh does), or "
                    "`MATURIN_PEP517_ARGS='--features devnet' pip install ./python`"
                )
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class CHAIN(enum.IntEnum):
    # The members are spelled out so that type checkers see them (``CHAIN.BASE``); the chain
    # table itself lives in the Rust core, and ``_check_tables()`` below refuses to import a
    # package whose members differ from it.
    ETHEREUM = 1  # Ethereum
    OPTIMISM = 10  # OP (Optimism)
    BNB = 56  # BNB Chain
    POLYGON = 137  # Polygon
    MONAD = 143  # Monad
    SONIC = 146  # Sonic
    XLAYER = 196  # X Layer
    HYPERVM = 999  # HyperEVM
    MERLIN = 4200  # Merlin
    MANTLE = 5000  # Mantle
    BASE = 8453  # Base
    ARBITRUM = 42161  # Arbitrum
    AVALANCHE = 43114  # Avalanche
    LINEA = 59144  # Linea
    PLASMA = 9745  # Plasma
    BERACHAIN = 80094  # Berachain
    SOLANA = 101  # Solana


CHAIN.__doc__ = "The chains of the spec's CHAIN table; each member is its chain id.\n\n" + "\n".join(
    f"    {name} = {chain_id}  ({display_name})" for name, chain_id, display_name in _native._chains()
)


class _Symbol(str, enum.Enum):
    """A string enumeration whose ``str()`` is its value (``str(TokenType.USDC) == "USDC"``)."""

    if _typing.TYPE_CHECKING:
        # For type checkers only: at runtime ``__new__`` is Enum's (a lookup by value), not
        # ``str.__new__`` (what the str base would make them assume).
        def __new__(cls, value: str) -> _Self: ...

    def __str__(self) -> str:
        return str(self.value)


class TokenType(_Symbol):
    """A token depositkit can detect, sweep or deliver (spec §2). Members are strings, so a
    member and its symbol are interchangeable: TokenType.USDC == 'USDC'."""

    # Spelled out for type checkers, like CHAIN; checked against the core by _check_tables().
    ETH = "ETH"
    USDC = "USDC"
    USDT = "USDT"
    BTC = "BTC"
    SOL = "SOL"
    BNB = "BNB"


def _check_tables() -> None:
    chains = [(name, chain_id) for name, chain_id, _display_name in _native._chains()]
    if [(member.name, member.value) for member in CHAIN] != chains:
        raise InternalError(f"depositkit.CHAIN differs from the core's chain table {chains}")
    tokens = _native._tokens()
    if [member.value for member in TokenType] != tokens:
        raise InternalError(f"depositkit.TokenType differs from the core's tokens {tokens}")


_check_tables()

DEFAULT_SUPPORTED_TOKENS = tuple(TokenType(symbol) for symbol in _native.DEFAULT_SUPPORTED_TOKENS)
"""The tokens a client detects and sweeps by default (spec §4): every ``TokenType``."""

# Close every client (its delivery lane, watcher and store) and every in-process devnet before
# the interpreter finalizes: afterwards no thread may call into Python.
_atexit.register(_native._close_all)

# The core's records reach ``logging`` under ``depositkit.*`` loggers; like any library,
# depositkit adds a NullHandler so that nothing is printed unless the host configures logging.
# TRACE (5), below DEBUG, is the level of the most detailed records.
_logging.addLevelName(5, "TRACE")
_logging.getLogger("depositkit").addHandler(_logging.NullHandler())
