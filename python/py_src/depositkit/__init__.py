"""depositkit: deposit addresses, watching, sweeping and user lookup, backed by a Rust core.

- The validation layer of the deposit spec (§4): the ``CHAIN`` table, the ``TokenType``
  enumeration, the destination and onramp rules, address checks and exact unit conversion.
- ``DepositClient``: deposit addresses for an owner, a watcher, a sweeper delivering each deposit
  to a destination chain and token, and events (``DepositLifecycleEvent``,
  ``StatusChangedEvent``, ``ErrorEvent``, ``RefundEvent``, ``RecoveryEvent``) by callback or by
  iteration; refunds (``RefundResult``, ``RefundEligibility``), recovery of stuck funds
  (``RecoveryResult``), headless notification records (``Notification``) and the transaction
  history (``UATransaction``, ``TransactionsResponse``, ``TokenTransactionsResponse``).
- Fund-from-wallet (``DepositClient.set_evm_wallet``, ``set_solana_wallet``,
  ``set_balance_provider``, ``get_wallet_balances`` → ``FundingBalance``, ``fund_from_wallet`` →
  ``FundingTransferResult``; host providers raise ``ProviderError``) and the fiat onramp
  (``open_onramp``, ``handle_onramp_message``, ``OnrampOrder``, events ``OnrampEvent`` and
  ``OnrampCompleteEvent``).
- ``Devnet``: the emulator of the remote services, started in process (tests, demos), optionally
  backed by real local chains (``Devnet(chains=...)``).
- ``UserRpcClient``, the client of the user-lookup JSON-RPC service, with its ``User`` and
  ``Wallet`` records.

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
import enum
from typing import Union as _Union

from . import _native
from ._deposit import DestinationConfig
from ._funding import ProviderError
from ._native import (
    DEFAULT_MIN_VALUE_USD,
    DEFAULT_POLLING_INTERVAL_MS,
    MAX_DECIMALS,
    DeliveredAmount,
    DepositAddresses,
    DepositClient,
    DepositLifecycleEvent,
    DetectedDeposit,
    Devnet,
    ErrorEvent,
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
    format_units,
    get_address_type,
    get_chain_name,
    get_token_decimals,
    is_onramp_token_supported,
    is_supported_destination_token,
    is_valid_destination_chain,
    is_valid_evm_address,
    is_valid_solana_address,
    parse_units,
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
    # deposits
    "DepositClient",
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
    "Devnet",
    # user lookup
    "UserRpcClient",
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

# The chain table lives in the Rust core only; CHAIN is built from it.
CHAIN = enum.IntEnum(  # type: ignore[misc]
    "CHAIN",
    [(name, chain_id) for name, chain_id, _display_name in _native._chains()],
    module=__name__,
    qualname="CHAIN",
)
CHAIN.__doc__ = "The chains of the spec's CHAIN table; each member is its chain id.\n\n" + "\n".join(
    f"    {name} = {chain_id}  ({display_name})" for name, chain_id, display_name in _native._chains()
)


class _Symbol(str, enum.Enum):
    """A string enumeration whose ``str()`` is its value (``str(TokenType.USDC) == "USDC"``)."""

    def __str__(self) -> str:
        return str(self.value)


TokenType = _Symbol(  # type: ignore[call-overload]
    "TokenType",
    [(symbol, symbol) for symbol in _native._tokens()],
    module=__name__,
    qualname="TokenType",
)
TokenType.__doc__ = (
    "A token depositkit can detect, sweep or deliver (spec §2). Members are strings, so a "
    "member and its symbol are interchangeable: TokenType.USDC == 'USDC'."
)

DEFAULT_SUPPORTED_TOKENS = tuple(TokenType(symbol) for symbol in _native.DEFAULT_SUPPORTED_TOKENS)
"""The tokens a client detects and sweeps by default (spec §4): every ``TokenType``."""

DepositEvent = _Union[
    DepositLifecycleEvent,
    StatusChangedEvent,
    ErrorEvent,
    RefundEvent,
    RecoveryEvent,
    OnrampEvent,
    OnrampCompleteEvent,
]
"""Any event of a ``DepositClient``: tell them apart by ``event.type`` (``"deposit:lifecycle"``,
``"status:change"``, ``"error"``, ``"refund:update"``, ``"recovery:result"``,
``"onramp:<name>"`` such as ``"onramp:order_created"``, ``"onramp:complete"``) or
``isinstance``."""

# Close every client (its delivery lane, watcher and store) and every in-process devnet before
# the interpreter finalizes: afterwards no thread may call into Python.
_atexit.register(_native._close_all)
