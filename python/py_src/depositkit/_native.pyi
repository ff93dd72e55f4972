"""Type stubs and documentation of ``depositkit._native``, the private Rust extension.

Import these names from ``depositkit``, not from here. Conventions shared by every function:

- A *chain id* is any ``int`` (a ``CHAIN`` member is one). An id depositkit does not know,
  including a negative one or one too large for 64 bits, is an unknown chain: predicates answer
  ``False``. ``bool`` is refused with ``TypeError``.
- A *token* is a ``TokenType`` member or its symbol as ``str`` in any letter case (``"usdc"``).
  Anything else that is a ``str`` raises ``InvalidArgumentError``; a non-``str`` raises
  ``TypeError``.
- An *amount* in smallest units is an ``int`` of any size from ``0`` to ``2**256 - 1``.
- A *decimals* count is an ``int`` from ``0`` to ``MAX_DECIMALS`` (77).
- Every error message names the value that was wrong.

The user-lookup client (``UserRpcClient``, returning ``User`` and ``Wallet`` records) follows
``spec/user-rpc-service.md``; its network calls release the GIL and stay interruptible by Ctrl-C.

The deposit client (``DepositClient``, with its records ``DepositAddresses``, ``DetectedDeposit``,
``SweepResult``, ``DeliveredAmount``, ``RefundResult``, ``RefundEligibility``, ``RecoveryResult``,
``Notification``, the history records ``UATransaction``, ``TransactionsResponse`` and
``TokenTransactionsResponse``, and its events ``DepositLifecycleEvent``, ``StatusChangedEvent``,
``ErrorEvent``, ``RefundEvent`` and ``RecoveryEvent``) follows ``spec/deposit-library.md`` over
the services of ``docs/protocol.md``; ``Devnet`` runs an emulator of those services in process.

Fund-from-wallet and the fiat onramp (``docs/funding.md``) add the records ``FundingBalance``,
``FundingTransferResult`` and ``OnrampOrder`` and the events ``OnrampEvent`` and
``OnrampCompleteEvent``; wallet providers are Python callables (or a node URL) and refuse with
``depositkit.ProviderError``.
"""

import asyncio
import datetime
import decimal
import os
import pathlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Callable, List, Literal, Optional, Protocol, Tuple, TypedDict, Union, final

from .exceptions import DepositSDKError

# pyo3 sets __all__ to every name the module adds, in the order lib.rs adds them. These stubs
# describe the build with the cargo feature `devnet` (scripts/python-env.sh), which adds Devnet.
__all__ = [
    "__version__",
    "_DEBUG_BUILD",
    "DEFAULT_SUPPORTED_TOKENS",
    "DEFAULT_MIN_VALUE_USD",
    "DEFAULT_POLLING_INTERVAL_MS",
    "MAX_DECIMALS",
    "_error_kinds",
    "_raise_error",
    "_close_all",
    "_chains",
    "_tokens",
    "get_chain_name",
    "is_valid_destination_chain",
    "is_supported_destination_token",
    "is_onramp_token_supported",
    "get_address_type",
    "is_valid_evm_address",
    "is_valid_solana_address",
    "validate_address_for_chain",
    "format_units",
    "parse_units",
    "get_token_decimals",
    "token_info",
    "UserRpcClient",
    "User",
    "Wallet",
    "DepositAddresses",
    "DetectedDeposit",
    "DeliveredAmount",
    "SweepResult",
    "DepositLifecycleEvent",
    "StatusChangedEvent",
    "ErrorEvent",
    "RefundResult",
    "RefundEligibility",
    "RecoveryResult",
    "Notification",
    "UATransaction",
    "TransactionsResponse",
    "TokenTransactionsResponse",
    "RefundEvent",
    "RecoveryEvent",
    "FundingBalance",
    "FundingTransferResult",
    "OnrampOrder",
    "OnrampEvent",
    "OnrampCompleteEvent",
    "DepositClient",
    "_EventInbox",
    "DepositFleet",
    "FleetEvent",
    "FleetEventIterator",
    "CallbackSigner",
    "refresh_log_levels",
    "flush_logs",
    "metrics_text",
    "Devnet",
]

__version__: str
"""The version of depositkit (the Rust workspace's version)."""

DEFAULT_SUPPORTED_TOKENS: tuple[str, ...]
"""The symbols of the tokens detected and swept by default, in the spec's order.
``depositkit.DEFAULT_SUPPORTED_TOKENS`` holds the same as ``TokenType`` members."""

DEFAULT_MIN_VALUE_USD: float
"""Minimum USD value of a deposit (0.5); smaller deposits reach phase ``below_threshold``."""

DEFAULT_POLLING_INTERVAL_MS: int
"""How often the watcher polls balances, in milliseconds (3000)."""

MAX_DECIMALS: int
"""The largest decimals count ``format_units`` and ``parse_units`` accept (77)."""

_DEBUG_BUILD: bool
"""Whether the extension was built without optimizations (``maturin develop`` without
``--release``). Timings of such a build mean little."""

class _TokenInfoDict(TypedDict):
    """Where a token lives on one chain; the keys are those of the core's JSON form."""

    token: str
    """The token's symbol (``"USDC"``)."""
    chainId: int
    """The chain id."""
    contract: Optional[str]
    """The contract (EVM, EIP-55 checksummed) or mint (Solana) address; ``None`` for the
    chain's native asset."""
    bridgedContract: Optional[str]
    """A bridged variant of the token on this chain (USDC.e), or ``None``."""
    decimals: int
    """Decimals of the token on this chain."""

def _chains() -> list[tuple[str, int, str]]:
    """``[(constant name, chain id, human name)]`` for the 17 chains of the spec's ``CHAIN`` table,
    in the spec's order. ``depositkit.CHAIN`` is built from it.

    >>> _chains()[0]
    ('ETHEREUM', 1, 'Ethereum')
    """

def _tokens() -> list[str]:
    """Every token symbol in the spec's order. ``depositkit.TokenType`` is built from it.

    >>> _tokens()
    ['ETH', 'USDC', 'USDT', 'BTC', 'SOL', 'BNB']
    """

def _error_kinds() -> list[tuple[str, int]]:
    """``[(exception class name, code)]`` for every error kind of the core, in code order.
    ``depositkit.exceptions`` reads each class's ``code`` from it.

    >>> _error_kinds()[0]
    ('DepositSDKError', 1)
    """

def _close_all() -> None:
    """Closes every ``DepositClient``, then stops every ``Devnet``, still open. Registered with
    ``atexit`` by ``depositkit/__init__.py`` so that the library's threads stop calling into
    Python before the interpreter finalizes."""

def _raise_error(
    code: int, message: str, rpc: Optional[tuple[int, str, Optional[str]]] = None
) -> None:
    """Raises the exception a core error of the kind numbered ``code`` becomes, through the same
    conversion every function uses. For the test suite.

    With ``rpc=(rpc_code, rpc_message, data_json)`` the error carries a JSON-RPC error object
    returned by the method named ``message``; the exception then has ``rpc_code``,
    ``rpc_message`` and ``rpc_data``.

    Raises:
        DepositSDKError: the class of the kind, always.
        ValueError: no kind has ``code``, or ``data_json`` is not JSON.
    """

def get_chain_name(chain_id: int) -> str:
    """The human name of a chain.

    Returns:
        The chain's name (``"Base"``, ``"BNB Chain"``), or ``"Unknown Chain (<id>)"`` for an id
        depositkit does not know.

    Raises:
        TypeError: ``chain_id`` is not an ``int`` (or is a ``bool``).

    >>> get_chain_name(8453)
    'Base'
    >>> get_chain_name(7)
    'Unknown Chain (7)'
    """

def is_valid_destination_chain(chain_id: int) -> bool:
    """Whether deposits can be delivered to this chain: Ethereum, Base, Arbitrum, BNB Chain and
    Solana. X Layer is a deposit source only.

    Returns:
        ``True`` for the five destination chains, ``False`` for any other id.

    Raises:
        TypeError: ``chain_id`` is not an ``int`` (or is a ``bool``).

    >>> is_valid_destination_chain(42161)
    True
    >>> is_valid_destination_chain(196)
    False
    """

def is_supported_destination_token(token: str, chain_id: int) -> bool:
    """Whether ``token`` can be delivered on ``chain_id`` (the spec's destination matrix).

    ========  ========  ====  ========  =========  ======
    Token     Ethereum  Base  Arbitrum  BNB Chain  Solana
    ========  ========  ====  ========  =========  ======
    USDC      yes       yes   yes       yes        yes
    USDT      yes       no    yes       yes        yes
    ETH       yes       yes   yes       yes        no
    SOL       no        no    no        no         yes
    ========  ========  ====  ========  =========  ======

    BTC and BNB are never deliverable; no token is deliverable on any other chain.

    Returns:
        ``True`` when the pair is deliverable, ``False`` otherwise (an unknown chain included).

    Raises:
        InvalidArgumentError: ``token`` is a ``str`` but no token symbol.
        TypeError: ``token`` is not a ``str``, or ``chain_id`` is not an ``int``.

    >>> is_supported_destination_token("USDT", 8453)
    False
    >>> is_supported_destination_token("eth", 56)
    True
    """

def is_onramp_token_supported(token: str, chain_id: int) -> bool:
    """Whether the fiat onramp can buy ``token`` on ``chain_id``.

    The onramp serves Ethereum, BNB Chain, Base, Arbitrum and Solana (never X Layer):
    stablecoins on all of them, ETH only on Ethereum and Base, BNB only on BNB Chain, SOL only
    on Solana, BTC nowhere.

    Returns:
        ``True`` when the onramp sells the token on the chain, ``False`` otherwise.

    Raises:
        InvalidArgumentError: ``token`` is a ``str`` but no token symbol.
        TypeError: ``token`` is not a ``str``, or ``chain_id`` is not an ``int``.

    >>> is_onramp_token_supported("ETH", 8453)
    True
    >>> is_onramp_token_supported("ETH", 42161)
    False
    """

def get_address_type(chain_id: int) -> Literal["evm", "solana"]:
    """The kind of address a chain uses.

    Returns:
        ``"solana"`` for Solana's chain id (101), ``"evm"`` for every other id, unknown ones
        included.

    Raises:
        TypeError: ``chain_id`` is not an ``int`` (or is a ``bool``).

    >>> get_address_type(101)
    'solana'
    >>> get_address_type(1)
    'evm'
    """

def is_valid_evm_address(addr: str) -> bool:
    """Whether ``addr`` is ``0x`` followed by 40 hex digits whose letter case, when mixed,
    matches its EIP-55 checksum. All-lower-case and all-upper-case digits carry no checksum and
    are valid.

    Returns:
        ``True`` for a valid address, ``False`` for anything else (``0X`` prefix, spaces, wrong
        length, non-hex characters, a checksum mismatch).

    Raises:
        TypeError: ``addr`` is not a ``str``.

    >>> is_valid_evm_address("0x52908400098527886E0F7030069857D2E4169EE7")
    True
    >>> is_valid_evm_address("0x52908400098527886e0F7030069857D2E4169EE7")
    False
    """

def is_valid_solana_address(addr: str) -> bool:
    """Whether ``addr`` is base58 text that decodes to exactly 32 bytes (a Solana public key).

    Returns:
        ``True`` for a valid key, ``False`` for anything else (characters outside base58 such as
        ``0 O I l``, or text decoding to another length).

    Raises:
        TypeError: ``addr`` is not a ``str``.

    >>> is_valid_solana_address("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
    True
    >>> is_valid_solana_address("0xEPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTD")
    False
    """

def validate_address_for_chain(addr: str, chain_id: int) -> Literal["evm", "solana"]:
    """Checks ``addr`` against the address type of ``chain_id``.

    Returns:
        The chain's address type, ``"evm"`` or ``"solana"``, when the address is valid for it.

    Raises:
        ConfigurationError: the chain id is unknown (``"Unknown chain ID: 12345"``), or the
            address is not valid for the chain; the message names the chain, the address and
            the reason (``Invalid EVM address format for Ethereum (1): "0x12": expected 40 hex
            digits after 0x, found 2``).
        TypeError: ``addr`` is not a ``str``, or ``chain_id`` is not an ``int``.

    >>> validate_address_for_chain("0x52908400098527886E0F7030069857D2E4169EE7", 8453)
    'evm'
    """

def format_units(raw: int, decimals: int) -> str:
    """Formats ``raw`` smallest units as a decimal amount with ``decimals`` fractional digits,
    trailing zeros trimmed. Exact over the whole 256-bit range.

    Returns:
        The amount as text: ``"1.5"``, ``"2"``, ``"0.000001"``.

    Raises:
        InvalidArgumentError: ``raw`` is negative or at least ``2**256``, or ``decimals`` is
            outside ``0..=77``; the message names the value.
        TypeError: ``raw`` or ``decimals`` is not an ``int`` (``bool`` included).

    >>> format_units(1_500_000, 6)
    '1.5'
    >>> format_units(2 * 10**18, 18)
    '2'
    """

def parse_units(text: str, decimals: int) -> int:
    """Parses a decimal amount into smallest units with ``decimals`` fractional digits. Accepts
    ASCII digits with at most one ``.`` (``"2"``, ``"0.25"``, ``".5"``, ``"5."``); nothing else.

    Returns:
        The amount in smallest units, an ``int`` from ``0`` to ``2**256 - 1``.

    Raises:
        InvalidArgumentError: the text is empty, has a sign, an exponent, spaces, any other
            non-digit, more than one ``.``, more fractional digits than ``decimals``, or a value
            above ``2**256 - 1``; or ``decimals`` is outside ``0..=77``. The message names the
            text (``invalid amount "1e6": exponents are not allowed``).
        TypeError: ``text`` is not a ``str``, or ``decimals`` is not an ``int``.

    >>> parse_units("1.5", 6)
    1500000
    >>> parse_units("0.4", 18)
    400000000000000000
    """

def get_token_decimals(token: str, chain_id: Optional[int] = None) -> int:
    """Decimals of ``token``, on ``chain_id`` when given.

    USDC and USDT have 18 decimals on BNB Chain (56); every other pair uses the token's usual
    decimals (ETH and BNB 18, USDC and USDT 6, BTC 8, SOL 9), unknown chains included.

    Returns:
        The number of decimals.

    Raises:
        InvalidArgumentError: ``token`` is a ``str`` but no token symbol.
        TypeError: ``token`` is not a ``str``, or ``chain_id`` is neither ``None`` nor an ``int``.

    >>> get_token_decimals("USDC")
    6
    >>> get_token_decimals("USDC", 56)
    18
    """

def token_info(token: str, chain_id: int) -> Optional[_TokenInfoDict]:
    """Where ``token`` lives on ``chain_id``: its contract (or mint) address, a bridged variant,
    and its decimals on that chain.

    Returns:
        A dict with the keys ``token``, ``chainId``, ``contract``, ``bridgedContract`` and
        ``decimals`` (``contract`` is ``None`` for the chain's native asset), or ``None`` where
        depositkit knows no such token on the chain (an unknown chain included).

    Raises:
        InvalidArgumentError: ``token`` is a ``str`` but no token symbol.
        TypeError: ``token`` is not a ``str``, or ``chain_id`` is not an ``int``.

    >>> token_info("USDC", 8453)["contract"]
    '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
    >>> token_info("ETH", 8453)["contract"] is None
    True
    """

def metrics_text() -> str:
    """Every metric of the process (all clients) in the Prometheus text exposition format
    (0.0.4): deposits detected, credited, refunded and failed by chain and token, sweep, refund
    and poll latency, the backlog and stuck deposits, HTTP requests by service and status,
    retries, events delivered and dropped; then fleet mode's (``depositkit_fleet_*``, zero until
    a ``DepositFleet`` runs in the process): owners held, leases renewed and lost, members
    reaped, owners claimed and released, commands run by outcome, events written to the fleet's
    log (``docs/fleet.md``). Serve it from your own ``/metrics``.

    Returns:
        The text, one ``# HELP`` / ``# TYPE`` block per metric family (a family with labels,
        such as ``depositkit_deposits_credited_total``, appears once it has a value).

    Raises:
        Nothing: the registry is in memory.

    >>> "# TYPE depositkit_events_delivered_total counter" in metrics_text()
    True
    """

def refresh_log_levels() -> None:
    """Re-reads the levels of the ``depositkit.*`` loggers now. They are cached (so that a level
    that is off costs nothing) and otherwise re-read once a second.

    Returns:
        None.

    Raises:
        Exception: what ``logging.getLogger(...).getEffectiveLevel()`` raised, if anything.

    >>> refresh_log_levels()
    """

def flush_logs(timeout: float = 5.0) -> bool:
    """Waits at most ``timeout`` seconds until every record logged so far has reached
    ``logging`` (records are handed over on the ``depositkit-log`` thread).

    Returns:
        Whether they all did in time.

    Raises:
        Nothing.

    >>> flush_logs()
    True
    """

class _ServiceHealthDict(TypedDict):
    """One service as a client last saw it (unix milliseconds)."""

    lastOkMs: Optional[int]
    lastErrorMs: Optional[int]
    lastError: Optional[str]

class _HealthDict(TypedDict):
    """``DepositClient.health()``."""

    services: dict[str, _ServiceHealthDict]
    lastPollMs: Optional[int]
    backlog: int
    stuck: list[str]
    stuckAfterMs: int
    sessionValid: bool
    watching: bool
    ready: bool
    healthy: bool

class _WalletDict(TypedDict):
    """A wallet as the user-lookup service sends it (``Wallet.to_dict()``)."""

    chain: str
    publicAddress: str

class _UserDict(TypedDict):
    """A user record as the user-lookup service sends it (``User.to_dict()``): the keys of spec
    §2, camelCase, every one present (``None`` where the service sent ``null``)."""

    uuid: str
    phone: Optional[str]
    email: str
    name: Optional[str]
    avatar: Optional[str]
    facebookId: Optional[str]
    facebookEmail: Optional[str]
    googleId: Optional[str]
    googleEmail: Optional[str]
    appleId: Optional[str]
    appleEmail: Optional[str]
    twitterId: Optional[str]
    twitterEmail: Optional[str]
    telegramId: Optional[str]
    telegramPhone: Optional[str]
    discordId: Optional[str]
    discordEmail: Optional[str]
    githubId: Optional[str]
    githubEmail: Optional[str]
    twitchId: Optional[str]
    twitchEmail: Optional[str]
    microsoftId: Optional[str]
    microsoftEmail: Optional[str]
    linkedinId: Optional[str]
    linkedinEmail: Optional[str]
    createdAt: str
    updatedAt: str
    wallets: list[_WalletDict]

# BEGIN generated records: users (python/src/records/users.rs; scripts/gen-stubs.sh)
@final
class User:
    """A registered user's profile record (spec §2), as ``getUserInfo`` and
    ``getUserInfoByIdentity`` return it. Immutable; equal when every field is equal, and
    hashable. Created by ``UserRpcClient`` only.

    The attributes are the spec's fields in snake_case. Which provider fields (``google_id``,
    ``apple_email``, ...) hold a value depends on the user's social accounts; the others are
    ``None``. ``repr()`` is ``<depositkit.User uuid='…' email='…'>``.
    """

    @property
    def uuid(self) -> str:
        """The user's UUID."""
    @property
    def phone(self) -> Optional[str]:
        """Phone number, or ``None``."""
    @property
    def email(self) -> str:
        """E-mail address (always present)."""
    @property
    def name(self) -> Optional[str]:
        """Display name, or ``None``."""
    @property
    def avatar(self) -> Optional[str]:
        """Avatar URL, or ``None``."""
    @property
    def facebook_id(self) -> Optional[str]:
        """``facebookId``, or ``None``."""
    @property
    def facebook_email(self) -> Optional[str]:
        """``facebookEmail``, or ``None``."""
    @property
    def google_id(self) -> Optional[str]:
        """``googleId``, or ``None``."""
    @property
    def google_email(self) -> Optional[str]:
        """``googleEmail``, or ``None``."""
    @property
    def apple_id(self) -> Optional[str]:
        """``appleId``, or ``None``."""
    @property
    def apple_email(self) -> Optional[str]:
        """``appleEmail``, or ``None``."""
    @property
    def twitter_id(self) -> Optional[str]:
        """``twitterId``, or ``None``."""
    @property
    def twitter_email(self) -> Optional[str]:
        """``twitterEmail``, or ``None``."""
    @property
    def telegram_id(self) -> Optional[str]:
        """``telegramId``, or ``None``."""
    @property
    def telegram_phone(self) -> Optional[str]:
        """``telegramPhone`` (the telegram record carries a phone, not an e-mail), or ``None``."""
    @property
    def discord_id(self) -> Optional[str]:
        """``discordId``, or ``None``."""
    @property
    def discord_email(self) -> Optional[str]:
        """``discordEmail``, or ``None``."""
    @property
    def github_id(self) -> Optional[str]:
        """``githubId``, or ``None``."""
    @property
    def github_email(self) -> Optional[str]:
        """``githubEmail``, or ``None``."""
    @property
    def twitch_id(self) -> Optional[str]:
        """``twitchId``, or ``None``."""
    @property
    def twitch_email(self) -> Optional[str]:
        """``twitchEmail``, or ``None``."""
    @property
    def microsoft_id(self) -> Optional[str]:
        """``microsoftId``, or ``None``."""
    @property
    def microsoft_email(self) -> Optional[str]:
        """``microsoftEmail``, or ``None``."""
    @property
    def linkedin_id(self) -> Optional[str]:
        """``linkedinId``, or ``None``."""
    @property
    def linkedin_email(self) -> Optional[str]:
        """``linkedinEmail``, or ``None``."""
    @property
    def created_at(self) -> str:
        """``createdAt`` exactly as sent: ISO 8601 UTC with milliseconds
        (``"2022-06-08T07:47:54.000Z"``)."""
    @property
    def updated_at(self) -> str:
        """``updatedAt`` exactly as sent (same format as ``created_at``)."""
    @property
    def created_at_datetime(self) -> datetime.datetime:
        """``created_at`` as an aware ``datetime.datetime`` in UTC (``tzinfo`` is
        ``datetime.timezone.utc``), to the microsecond.

        Raises:
            ProtocolError: the timestamp is valid ISO 8601 but outside the years
                ``datetime`` can hold (1 to 9999).
        """
    @property
    def updated_at_datetime(self) -> datetime.datetime:
        """``updated_at`` as an aware ``datetime.datetime`` in UTC (see
        ``created_at_datetime``)."""
    @property
    def wallets(self) -> list[Wallet]:
        """The user's wallets, in the order the service sent them (a new list on each access)."""
    def to_dict(self) -> _UserDict:
        """The record as the service sends it: camelCase keys, every key present (``None`` for a
        ``null``), ``wallets`` as a list of ``{"chain", "publicAddress"}`` dicts. JSON-ready:
        ``json.dumps(user.to_dict())`` is the record on the wire.

        Returns:
            A new ``dict`` (see ``_UserDict``).
        """
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Wallet:
    """A wallet of a ``User`` (spec §2). Immutable; equal when chain and address are equal, and
    hashable. Created by ``UserRpcClient`` only.

    ``repr()`` is ``<depositkit.Wallet chain='evm_chain' public_address='0x…'>``.
    """

    @property
    def chain(self) -> str:
        """The chain family, ``"evm_chain"`` or ``"solana"`` (whatever the service sent)."""
    @property
    def public_address(self) -> str:
        """The wallet's public address, as the service sent it."""
    def to_dict(self) -> _WalletDict:
        """The wallet as the service sends it: ``{"chain": ..., "publicAddress": ...}``.

        Returns:
            A new ``dict`` with the keys ``chain`` and ``publicAddress``.
        """
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
# END generated records: users

@final
class UserRpcClient:
    """Client of the user-lookup JSON-RPC service (``spec/user-rpc-service.md``): one POST of
    a JSON-RPC 2.0 request per call, with HTTP Basic auth ``project_id:server_key``.

    Thread-safe: one client may be used from many threads at once; they share its keep-alive
    connections. Each network call releases the GIL and waits for its answer on a worker thread;
    Ctrl-C (``KeyboardInterrupt``) interrupts the wait within about 0.1 s, and the abandoned
    request then finishes in the background. Arguments are checked before any request is sent.

    Requests answered with HTTP 429 or 5xx, refused or reset connections and timed-out attempts
    are retried up to ``max_retries`` times, with exponential backoff and full jitter starting at
    0.1 s (capped at 5 s), or after the server's ``Retry-After`` (capped at 30 s).

    The server key is never shown: not by ``repr()``, not in any exception message.
    ``repr()`` is ``<depositkit.UserRpcClient base_url='…' project_id='…'>``.

    Use it as a context manager, or call ``close()`` when done::

        with depositkit.UserRpcClient(url, project_id, server_key) as client:
            user = client.get_user_info(uuid, token)

    Every network method raises, besides what it lists:

    - ``DepositSDKError`` (the base class itself) ``"UserRpcClient is closed"`` after ``close()``;
    - ``InternalError`` in a forked child, for a client created before the fork (it shares
      its connections with the parent): ``"this UserRpcClient was created in process N and
      cannot be used in this forked child (process M): …; create a new UserRpcClient in the
      child"``. ``closed`` and ``close()`` raise it too; ``base_url``, ``project_id`` and
      ``repr()`` still answer;
    - ``AuthenticationError`` when the service rejects the project credentials (HTTP 401 or
      403); the message names the project id and the HTTP status, and this exception has no
      ``rpc_code``;
    - ``DepositTimeoutError`` (also a ``NetworkError`` and a ``TimeoutError``) when every attempt
      exceeded ``timeout``: ``"request to <url> timed out after 1 attempt"``;
    - ``NetworkError`` (also a ``ConnectionError``) when the service cannot be reached, or still
      answers HTTP 429/5xx after every retry: ``"<url> answered HTTP 503 (service unavailable)
      after 3 attempts"``, ``"request to <url> failed after 4 attempts: connection refused"``;
    - ``ProtocolError`` when the answer is not a JSON-RPC 2.0 response to the request sent (not
      JSON, a wrong ``id``, a malformed user record);
    - ``RpcError`` for any other JSON-RPC error object the service sends (for example
      ``-32602`` invalid params, ``-32603`` internal error), with ``rpc_code``, ``rpc_message``
      and ``rpc_data``;
    - ``TypeError`` when an argument is not a ``str``;
    - ``KeyboardInterrupt`` (or whatever a signal handler raises) when interrupted.

    Errors carrying a JSON-RPC error object (``RpcError``, and the ``AuthenticationError`` and
    ``NotFoundError`` listed by each method) have ``rpc_code``, ``rpc_message`` and ``rpc_data``.
    """

    def __new__(
        cls,
        base_url: str,
        project_id: str,
        server_key: str,
        *,
        timeout: Optional[float] = 10.0,
        max_retries: Optional[int] = 3,
        user_agent: Optional[str] = None,
    ) -> UserRpcClient:
        """A client of the service at ``base_url`` (the full URL requests are POSTed to, e.g.
        ``"http://127.0.0.1:7420/user-rpc"``) for the project ``project_id`` and its server key.

        Args:
            timeout: deadline of one HTTP attempt in seconds, connect to last byte (``int`` or
                ``float``, above zero and at most 86400, a day). ``None`` means the default.
            max_retries: retries after the first attempt, ``0`` to ``2**32 - 1`` (``0``: no
                retry). ``None`` means the default.
            user_agent: the ``User-Agent`` header; ``None`` sends ``depositkit/<version>``.

        Raises:
            ConfigurationError: ``base_url`` is not ``http://`` or ``https://``, has no host, or
                carries credentials (``user:key@host``, which the message does not repeat); the
                project id is empty or holds ``:`` or control characters; the server key is
                empty or holds control characters; ``timeout`` is not above zero, NaN, or above
                a day (``"invalid timeout 0: ..."``); ``max_retries`` is negative or too large
                (``"invalid max_retries -1: ..."``); ``user_agent`` holds control characters.
                No request is sent.
            ConfigurationTypeError: (a ``ConfigurationError`` that is also a ``TypeError``)
                ``base_url``, ``project_id``, ``server_key`` or ``user_agent`` is not a
                ``str``; ``timeout`` is not an ``int`` or ``float``; ``max_retries`` is not an
                ``int`` (``bool`` is refused for both).
        """
    @property
    def base_url(self) -> str:
        """The URL requests are POSTed to, as given."""
    @property
    def project_id(self) -> str:
        """The project id the client authenticates as."""
    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
    def get_user_info(self, uuid: str, token: str) -> User:
        """``getUserInfo``: the profile of the user ``uuid``, proven by the user's own session
        ``token``. The token never appears in any exception message.

        Returns:
            The user's record.

        Raises:
            ConfigurationError: ``uuid`` is not a UUID in canonical 8-4-4-4-12 hex form
                (``invalid user uuid "nope": expected 8-4-4-4-12 hex digits``), or ``token`` is
                empty. Raised before any request.
            AuthenticationError: the token is unknown, another user's or expired
                (``rpc_code`` ``-32011``); or the project credentials were rejected.
            NotFoundError: no user ``uuid`` in the project (``rpc_code`` ``-32010``); also a
                ``LookupError``.
            DepositTimeoutError: see the class.
            NetworkError: see the class.
            ProtocolError: see the class.
            RpcError: see the class.
        """
    def get_user_info_by_identity(self, provider: str, uid: str) -> User:
        """``getUserInfoByIdentity``: the profile of the user whose identity at ``provider`` is
        ``uid``. Authorized by the project server key alone.

        Returns:
            The user's record.

        Raises:
            ConfigurationError: ``provider`` is not ``"jwt"``, the only provider
                (``unsupported identity provider "google": only "jwt" is supported``), or
                ``uid`` is empty. Raised before any request.
            NotFoundError: no user of the project has that identity (``rpc_code``
                ``-32013``); also a ``LookupError``.
            AuthenticationError: the project credentials were rejected.
            DepositTimeoutError: see the class.
            NetworkError: see the class.
            ProtocolError: see the class.
            RpcError: see the class.
        """
    def is_project_user(self, chain: str, address: str) -> bool:
        """``isProjectUser``: whether ``address`` on the chain family ``chain`` belongs to, or
        has interacted with, the calling project.

        Returns:
            ``True`` or ``False``, as the service answers.

        Raises:
            ConfigurationError: ``chain`` is neither ``"evm_chain"`` nor ``"solana"``
                (``unsupported chain "bitcoin": ...``), or ``address`` is not a valid address
                for it (an EVM address must be ``0x`` and 40 hex digits, with a correct EIP-55
                checksum when mixed-case; a Solana one base58 of 32 bytes); the message names
                the value. Raised before any request.
            AuthenticationError: the project credentials were rejected.
            DepositTimeoutError: see the class.
            NetworkError: see the class.
            ProtocolError: see the class (also: the result is not a boolean).
            RpcError: see the class.
        """
    def get_users_info(self, requests: Iterable[Tuple[str, str]]) -> List[Union[User, DepositSDKError]]:
        """``getUserInfo`` for each ``(uuid, token)`` pair of ``requests``, sent as **one**
        JSON-RPC batch (one HTTP request; the server must accept batches, as devnet's does).

        Returns:
            One item per request, in request order: the ``User``, or the exception
            ``get_user_info()`` would have raised for that request alone — an instance, not
            raised (``NotFoundError``, ``AuthenticationError`` for a wrong token,
            ``ConfigurationError`` for a malformed uuid or an empty token, which is then not
            sent, ``ProtocolError`` when the batch response has no answer for it). An empty
            ``requests`` sends nothing and returns ``[]``.

        Raises:
            AuthenticationError: the project credentials were rejected (the whole batch).
            RpcError: the service refused the batch as a whole (e.g. ``-32600``: larger than its
                body limit).
            DepositTimeoutError: see the class.
            NetworkError: see the class.
            ProtocolError: the answer is not a batch response.
            TypeError: ``requests`` is not an iterable of ``(str, str)`` pairs.
        """
    def _get_user_info_async(self, uuid: str, token: str) -> asyncio.Future[User]: ...
    def _get_user_info_by_identity_async(self, provider: str, uid: str) -> asyncio.Future[User]: ...
    def _is_project_user_async(self, chain: str, address: str) -> asyncio.Future[bool]: ...
    def _get_users_info_async(
        self, requests: Iterable[Tuple[str, str]]
    ) -> asyncio.Future[List[Union[User, DepositSDKError]]]: ...
    def close(self) -> None:
        """Releases the client's connections. Idempotent. Calls already running finish; later
        calls (and ``with`` on the closed client) raise ``DepositSDKError``
        ``"UserRpcClient is closed"``."""
    def __enter__(self) -> UserRpcClient:
        """Returns the client itself.

        Raises:
            DepositSDKError: the client is closed.
        """
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Literal[False]:
        """Closes the client; never swallows the exception."""

# --- deposits ------------------------------------------------------------------------------------

_DepositPhase = Literal[
    "detected",
    "processing",
    "credited",
    "failed",
    "below_threshold",
    "seen",
    "confirming",
    "confirmed",
    "reorged",
]
"""The phases of a deposit (spec §3 ``DepositPhase``)."""

_ClientStatusName = Literal["idle", "initializing", "ready", "watching", "sweeping", "error"]
"""The states of a ``DepositClient`` (spec §3 ``ClientStatus``)."""

class _DestinationDict(TypedDict):
    """Where deposits go, as ``DepositClient.get_destination()`` answers it."""

    address: str
    """The receiving address: EVM addresses lower-case, a Solana address exactly as given."""
    chain_id: int
    """The destination chain (Ethereum, Base, Arbitrum, BNB Chain or Solana)."""
    token: str
    """The delivered token's symbol (``"USDC"``)."""

class _EventDestinationDict(TypedDict):
    """Where a deposit goes, as a lifecycle event carries it (spec §2: address and chain)."""

    address: str
    chain_id: int

class _FeesDict(TypedDict):
    """A sweep quote's fees in USD (``DeliveredAmount.fees``)."""

    gas_usd: float
    """Gas on the destination chain."""
    lp_usd: float
    """Liquidity-provider fee (0.2% of the value)."""
    service_usd: float
    """Service fee: 1% of the value with an own ``ua_project_id`` (spec §5.3), else 0."""
    total_usd: float
    """Their sum."""

# BEGIN generated records: deposits (python/src/records/deposits.rs; scripts/gen-stubs.sh)
@final
class DepositAddresses:
    """The deposit addresses of a client's account (spec §2): one EVM address (every EVM chain)
    and one Solana address. Immutable, equal when both addresses are equal, hashable.

    ``repr()`` is ``<depositkit.DepositAddresses evm='0x…' solana='…'>``.
    """

    @property
    def evm(self) -> str:
        """The EVM deposit address, EIP-55 checksummed."""
    @property
    def solana(self) -> str:
        """The Solana deposit address (base58)."""
    def to_dict(self) -> dict[str, str]:
        """``{"evm": ..., "solana": ...}`` (spec §2).

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class DetectedDeposit:
    """A deposit the watcher found that is not delivered yet (spec §2 ``DetectedDeposit``), as
    ``DepositClient.pending_deposits()`` lists it. Immutable; equal when every field is equal."""

    @property
    def id(self) -> str:
        """The deposit's id (``dep_`` and 32 hex digits), the same in every lifecycle event."""
    @property
    def token(self) -> str:
        """The deposited token's symbol."""
    @property
    def chain_id(self) -> int:
        """The chain it arrived on."""
    @property
    def amount(self) -> str:
        """The amount, human-readable (``"0.01"``)."""
    @property
    def amount_usd(self) -> float:
        """Its USD value at detection."""
    @property
    def raw_amount(self) -> int:
        """The amount in smallest units."""
    @property
    def decimals(self) -> int:
        """Decimals of the token on the chain (USDC and USDT have 18 on BNB Chain)."""
    @property
    def detected_at(self) -> int:
        """When it was detected, unix milliseconds."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record: ``id``, ``token``, ``chainId``, ``amount``, ``amountUSD``,
        ``rawAmount`` (an ``int``), ``decimals``, ``detectedAt``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class DeliveredAmount:
    """What a successful sweep delivered: the quote's fee-aware amount (``SweepResult.delivered``).
    ``value_usd - fees["total_usd"]`` at the destination token's price is the amount, to one
    smallest unit."""

    @property
    def chain_id(self) -> int:
        """The destination chain."""
    @property
    def token(self) -> str:
        """The delivered token's symbol."""
    @property
    def address(self) -> str:
        """The receiving address."""
    @property
    def raw_amount(self) -> int:
        """Delivered, in smallest units of the destination token."""
    @property
    def amount(self) -> str:
        """Delivered, human-readable."""
    @property
    def decimals(self) -> int:
        """Decimals of the delivered token on the destination chain."""
    @property
    def value_usd(self) -> float:
        """The deposit's USD value at the quote's prices."""
    @property
    def fees(self) -> _FeesDict:
        """The quote's fees (a new ``dict`` on each access)."""
    @property
    def quote_id(self) -> str:
        """The executed quote."""
    def to_dict(self) -> dict[str, Any]:
        """``chainId``, ``token``, ``address``, ``rawAmount`` (an ``int``), ``amount``,
        ``decimals``, ``valueUSD``, ``fees`` (``gasUSD``, ``lpUSD``, ``serviceUSD``,
        ``totalUSD``) and ``quoteId``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class SweepResult:
    """The outcome of sweeping one deposit (spec §2 ``SweepResult``), as ``DepositClient.sweep()``
    and ``DepositClient.sweep_result()`` return it. Immutable.

    ``status`` is ``"success"`` (delivered: ``transaction_id``, ``explorer_url`` and
    ``delivered`` are set), ``"failed"`` (nothing moved; ``error`` says why and the deposit
    stays pending for another ``sweep()``), or ``"pending"`` (the outcome of the send is
    unknown; ``error`` says so; a later ``sweep()`` of the deposit resolves it with the same
    quote, never a new one).
    """

    @property
    def deposit_id(self) -> str:
        """The deposit swept."""
    @property
    def transaction_id(self) -> Optional[str]:
        """The delivering transaction, or ``None`` when there is none."""
    @property
    def explorer_url(self) -> Optional[str]:
        """A block-explorer link to it, or ``None``."""
    @property
    def status(self) -> Literal["success", "failed", "pending"]:
        """The outcome."""
    @property
    def error(self) -> Optional[str]:
        """Why it failed or why its outcome is unknown; ``None`` on success."""
    @property
    def delivered(self) -> Optional[DeliveredAmount]:
        """What was delivered (on success), else ``None``."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record: ``depositId``, ``transactionId`` and ``explorerUrl`` (``""`` when
        there is none), ``status``, ``error`` (only when set) and ``delivered`` (only on
        success; see ``DeliveredAmount.to_dict``).

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...
# END generated records: deposits

# --- refunds, recovery, notifications ------------------------------------------------------------

_RefundStatusName = Literal["pending", "processing", "success", "failed", "skipped"]
"""Where a refund is (spec §3 ``RefundResult.status``): ``pending`` (waiting for its turn, the
auto-refund delay, the next attempt, or an unknown send outcome to be resolved) →
``processing`` (an attempt runs) → ``success``, ``failed`` (every attempt allowed failed;
the money stays in the account) or ``skipped`` (not refundable, see ``reason``; the money
stays)."""

_RefundReasonName = Literal[
    "sweep_failed", "user_requested", "address_type_mismatch", "below_minimum"
]
"""Why a deposit is refunded (``sweep_failed``: the automatic refund after a sweep failed for good;
``user_requested``: ``refund()``'s default), or why its refund was skipped
(``address_type_mismatch``: nobody to refund whose address type fits the source chain;
``below_minimum``: the deposit does not cover the refund's gas)."""

_RecoveryStatusName = Literal["success", "failed", "skipped"]
"""The outcome of recovering one asset (spec §3 ``RecoveryResult.status``)."""

_NotificationPositionName = Literal[
    "top-right", "top-left", "bottom-right", "bottom-left", "top-center", "bottom-center"
]
"""Screen anchor of the notifications (for a host UI; depositkit draws nothing)."""

class _RefundConfigDict(TypedDict):
    """The auto-refund settings (``DepositClient.refund_config``; spec §2 ``RefundConfig``)."""

    enabled: bool
    """Whether deposits whose sweep failed for good are refunded automatically (default
    ``False``). Manual ``refund()`` works either way."""
    delay_ms: int
    """Wait before the first automatic attempt, and between attempts (default 5000)."""
    max_attempts: int
    """Automatic attempts at most (default 2)."""
    refund_to_sender: bool
    """Refund to the deposit's original sender when it is known (default ``True``); else to the
    owner."""

class _NotificationsConfigDict(TypedDict):
    """The notifications configuration as given (``DepositClient.notifications_config``; spec §2
    ``DepositNotificationsProps``). ``position``, ``theme`` and ``class_name`` mean nothing to
    depositkit: they are kept for a host UI. The spec's ``renderItem`` (a React render function)
    has no headless meaning and does not exist here: render ``DepositClient.notifications()``
    yourself."""

    position: _NotificationPositionName
    """Screen anchor (default ``"top-right"``)."""
    theme: Literal["dark", "light"]
    """Colour theme (default ``"dark"``)."""
    duration_ms: int
    """Auto-dismiss delay of terminal records; ``0`` never dismisses (default 6000)."""
    max: int
    """Records kept at most; a new deposit beyond that drops the oldest (default 5)."""
    class_name: Optional[str]
    """Extra classes for the host's container."""

# BEGIN generated records: refunds (python/src/records/refunds.rs; scripts/gen-stubs.sh)
@final
class RefundResult:
    """A refund of one deposit (spec §2 ``RefundResult``), as ``DepositClient.refund()`` and
    ``refund_result()`` return it and ``RefundEvent.result`` reports each of its updates.
    Immutable; equal when every field is equal.

    The refund goes back on the deposit's own chain (``source_chain_id``) in its own token, less
    the gas; ``delivered_amount`` is what the receiver got.

    ``repr()`` is ``<depositkit.RefundResult deposit_id='dep_…' status='success'
    reason='sweep_failed'>``.
    """

    @property
    def deposit_id(self) -> str:
        """The deposit refunded."""
    @property
    def token(self) -> str:
        """The deposit's token symbol (refunded in the same token)."""
    @property
    def source_chain_id(self) -> int:
        """The deposit's chain (refunded on the same chain)."""
    @property
    def amount(self) -> str:
        """The deposit's amount, human-readable: what leaves the account."""
    @property
    def amount_usd(self) -> float:
        """Its USD value at detection."""
    @property
    def status(self) -> _RefundStatusName:
        """Where the refund is."""
    @property
    def reason(self) -> _RefundReasonName:
        """Why it is refunded (``sweep_failed``, ``user_requested``) or why it was skipped
        (``address_type_mismatch``, ``below_minimum``)."""
    @property
    def tx_hash(self) -> Optional[str]:
        """The refund's transaction, on ``success``."""
    @property
    def error(self) -> Optional[str]:
        """What went wrong: on ``failed`` and ``skipped``, and on a ``pending`` update after a
        failed attempt (``"… attempt 1 of 3 failed …"``) or an unknown send outcome
        (``"… is unknown …"``)."""
    @property
    def refunded_to(self) -> Optional[str]:
        """The receiver, once chosen: the original sender or the owner."""
    @property
    def refunded_to_sender(self) -> Optional[bool]:
        """Whether ``refunded_to`` is the deposit's original sender (else the owner)."""
    @property
    def attempts(self) -> int:
        """Attempts made so far (depositkit's addition)."""
    @property
    def delivered_amount(self) -> Optional[str]:
        """What the receiver got, human-readable, after the gas; on ``success`` (depositkit's
        addition)."""
    @property
    def explorer_url(self) -> Optional[str]:
        """A block-explorer link to ``tx_hash`` when the chain has one (depositkit's addition)."""
    @property
    def quote_id(self) -> Optional[str]:
        """The refund quote last sent (depositkit's addition). A ``pending`` refund with an
        unknown outcome is resolved with this same quote, never a new one."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase: ``depositId``, ``token``, ``sourceChainId``, ``amount``,
        ``amountUSD``, ``status``, ``reason``, ``attempts``, and when set ``txHash``, ``error``,
        ``refundedTo``, ``refundedToSender``, ``deliveredAmount``, ``explorerUrl``, ``quoteId``.
        JSON-ready.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class RefundEligibility:
    """Whether a deposit can be refunded now, and to whom (spec §4 ``canRefund``), as
    ``DepositClient.can_refund()`` answers it. Immutable.

    ``repr()`` is ``<depositkit.RefundEligibility eligible=True reason='user_requested'
    message='…'>``.
    """

    @property
    def eligible(self) -> bool:
        """Whether ``refund(id)`` would try to send the money back now."""
    @property
    def reason(self) -> Optional[_RefundReasonName]:
        """When eligible: the reason a refund would carry (``sweep_failed`` after a failed sweep,
        else ``user_requested``). When not: ``address_type_mismatch`` or ``below_minimum`` if
        one of them is why, else ``None`` (``message`` says why: being swept, credited, already
        refunded, unknown sweep outcome, not found)."""
    @property
    def message(self) -> str:
        """Why, in words (always set when not eligible)."""
    @property
    def refund_address(self) -> Optional[str]:
        """Who would receive the refund."""
    @property
    def refund_to_sender(self) -> Optional[bool]:
        """Whether that is the deposit's original sender (else the owner)."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase: ``eligible``, ``message``, and when set ``reason``,
        ``refundAddress``, ``refundToSender``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class RecoveryResult:
    """The recovery of one asset's stuck funds (spec §2 ``RecoveryResult``), as
    ``DepositClient.recover_funds()`` returns it and ``RecoveryEvent.result`` reports it.
    Immutable.

    ``status`` is ``"success"`` (swept to the destination: ``tx_hash`` and ``delivered`` are
    set), ``"failed"`` (``error`` says why; the money stays in the account) or ``"skipped"``
    (dust worth $0.10 or less — ``error`` starts ``"Dust"`` —, or worth less than the fees —
    ``"Below minimum"``).

    ``repr()`` is ``<depositkit.RecoveryResult 4 USDC on chain 8453 status='success'>``.
    """

    @property
    def token(self) -> str:
        """The token's symbol."""
    @property
    def chain_id(self) -> int:
        """The chain it sat on."""
    @property
    def amount(self) -> str:
        """The stuck amount, human-readable."""
    @property
    def amount_usd(self) -> float:
        """Its USD value."""
    @property
    def raw_amount(self) -> int:
        """The stuck amount in smallest units (depositkit's addition)."""
    @property
    def status(self) -> _RecoveryStatusName:
        """The outcome."""
    @property
    def error(self) -> Optional[str]:
        """Why it failed or was skipped."""
    @property
    def tx_hash(self) -> Optional[str]:
        """The sweep's transaction, on ``success``."""
    @property
    def delivered(self) -> Optional[DeliveredAmount]:
        """What was delivered, on ``success`` (depositkit's addition)."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase: ``token``, ``chainId``, ``amount``, ``amountUSD``,
        ``status``, ``rawAmount`` (an ``int``), and when set ``error``, ``txHash``,
        ``delivered`` (see ``DeliveredAmount.to_dict``).

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class Notification:
    """One deposit's notification record: the headless equivalent of a toast of the spec's
    ``DepositNotifications`` (spec §2), as ``DepositClient.notifications()`` lists them and
    ``subscribe_notifications()`` callbacks receive them. Immutable.

    A record is the deposit's latest lifecycle event (its fields are the record's attributes)
    plus ``created_at``, ``updated_at`` and the deposit's latest refund update. There is one
    record per deposit, updated in place as the deposit moves through its phases; at most
    ``max`` records are kept (a new deposit beyond that drops the oldest record); a *terminal*
    record (``credited``, ``failed`` or ``below_threshold``, with no refund pending or
    processing) is dismissed ``duration_ms`` after its last update (``0``: never);
    ``dismiss_notification(id)`` removes one at once, and a later event of that deposit creates
    a new record.

    ``repr()`` is ``<depositkit.Notification failed id='dep_…' 5 USDC on chain 8453
    refund='success'>``.
    """

    @property
    def id(self) -> str:
        """The deposit's id."""
    @property
    def phase(self) -> _DepositPhase:
        """The deposit's latest phase."""
    @property
    def token(self) -> str:
        """The deposited token's symbol."""
    @property
    def chain_id(self) -> int:
        """The chain it arrived on."""
    @property
    def amount(self) -> str:
        """The deposited amount, human-readable."""
    @property
    def amount_usd(self) -> float:
        """Its USD value at detection."""
    @property
    def destination(self) -> Optional[_EventDestinationDict]:
        """Where it goes, or ``None``."""
    @property
    def transaction_id(self) -> Optional[str]:
        """The delivering transaction; set once ``credited``."""
    @property
    def explorer_url(self) -> Optional[str]:
        """A block-explorer link to it."""
    @property
    def error(self) -> Optional[str]:
        """Why the sweep failed, or why the deposit is below the threshold."""
    @property
    def timestamp(self) -> int:
        """When the latest phase was entered, unix milliseconds."""
    @property
    def created_at(self) -> int:
        """When the record was created, unix milliseconds."""
    @property
    def updated_at(self) -> int:
        """When it last changed (a phase or a refund update), unix milliseconds."""
    @property
    def refund(self) -> Optional[RefundResult]:
        """The deposit's latest refund update, if it is being (or was) refunded (depositkit's
        addition)."""
    @property
    def event(self) -> DepositLifecycleEvent:
        """The deposit's latest lifecycle event itself."""
    @property
    def is_terminal(self) -> bool:
        """Whether the deposit's story is over (so the record is due for auto-dismissal)."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase: the lifecycle event's fields (see
        ``DepositLifecycleEvent.to_dict``) plus ``createdAt``, ``updatedAt`` and, when set,
        ``refund`` (see ``RefundResult.to_dict``).

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...
# END generated records: refunds

# --- transaction history -------------------------------------------------------------------------

class _UATargetTokenDict(TypedDict):
    """``UATransaction.target_token``: the token a transaction moved (spec §2
    ``UATransaction.targetToken``, keys in snake_case)."""

    name: str
    type: str
    """The service's asset type (``"usdc"``)."""
    image: str
    price: float
    """USD price."""
    symbol: str
    address: str
    """The contract (mint on Solana); the zero address (system program) for a native asset."""
    asset_id: str
    chain_id: int
    decimals: int
    real_decimals: int
    is_primary_token: bool
    is_smart_router_supported: bool

_UAChangeDict = TypedDict(
    "_UAChangeDict",
    {"amount": str, "amount_in_usd": str, "from": str, "to": str, "raw_amount": Optional[int]},
)
"""``UATransaction.change``: what moved (spec §2 ``UATransaction.change``, keys in snake_case):
``amount`` (human-readable), ``amount_in_usd`` (a decimal string), ``from`` (``""`` when the
sender is unknown), ``to``, and ``raw_amount`` (smallest units, depositkit's addition; ``None``
when the service sent none)."""

class _UADetailDict(TypedDict):
    """``UATransaction.detail`` (spec §2)."""

    red_packet_count: int

# BEGIN generated records: history (python/src/records/history.rs; scripts/gen-stubs.sh)
@final
class UATransaction:
    """One transaction of the account (spec §2 ``UATransaction``): an incoming deposit (``tag``
    ``"receive"``), a sweep (``"sweep"``) or a refund (``"refund"``). Immutable; equal when
    every field is equal.

    A large record: its scalar fields are attributes, its nested objects (``target_token``,
    ``change``, ``detail``) are snake_case ``dict`` objects built on each access, and
    ``to_dict()`` gives the whole spec record in camelCase.

    ``repr()`` is ``<depositkit.UATransaction 'sweep' '0x…' 2.5 USDC on chain 8453 status=1>``.
    """

    @property
    def transaction_id(self) -> str:
        """The transaction's id (its hash)."""
    @property
    def tag(self) -> str:
        """``"receive"``, ``"sweep"`` or ``"refund"``."""
    @property
    def status(self) -> int:
        """``1`` success, ``0`` pending, ``-1`` failed."""
    @property
    def created_at(self) -> str:
        """When it was created, ISO 8601 (as the service sends it)."""
    @property
    def updated_at(self) -> str:
        """When it last changed, ISO 8601."""
    @property
    def from_chains(self) -> list[int]:
        """Source chains."""
    @property
    def to_chains(self) -> list[int]:
        """Destination chains."""
    @property
    def quote_id(self) -> Optional[str]:
        """The executed quote, for sweeps and refunds (depositkit's addition)."""
    @property
    def deposit_id(self) -> Optional[str]:
        """The deposit a sweep or refund moved, when the service knows it (depositkit's
        addition)."""
    @property
    def target_token(self) -> _UATargetTokenDict:
        """The token moved (a new ``dict`` on each access)."""
    @property
    def change(self) -> _UAChangeDict:
        """What moved, from whom to whom (a new ``dict`` on each access)."""
    @property
    def detail(self) -> _UADetailDict:
        """Extra details (a new ``dict`` on each access)."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase: ``transactionId``, ``tag``, ``createdAt``,
        ``updatedAt``, ``targetToken`` (``name``, ``type``, ``image``, ``price``, ``symbol``,
        ``address``, ``assetId``, ``chainId``, ``decimals``, ``realDecimals``,
        ``isPrimaryToken``, ``isSmartRouterSupported``), ``change`` (``amount``,
        ``amountInUSD``, ``from``, ``to``, and ``rawAmount`` as an ``int`` when known),
        ``detail`` (``redPacketCount``), ``status``, ``fromChains``, ``toChains``, and when set
        ``quoteId``, ``depositId``. JSON-ready.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class TransactionsResponse:
    """A page of the account's transactions (spec §2 ``TransactionsResponse``), as
    ``DepositClient.get_transactions()`` returns it. Immutable. ``len()`` is the number of
    transactions on the page."""

    @property
    def transactions(self) -> list[UATransaction]:
        """The page's transactions, newest first (a new list on each access)."""
    @property
    def page(self) -> int:
        """The page number, from 1."""
    @property
    def page_size(self) -> int:
        """The page size asked for."""
    def to_dict(self) -> dict[str, Any]:
        """``{"transactions": [UATransaction.to_dict(), ...], "page": ..., "pageSize": ...}``.

        Returns:
            A new ``dict``.
        """
    def __len__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class TokenTransactionsResponse:
    """One page of one token's transactions on one chain (spec §2
    ``TokenTransactionsResponse``), as ``DepositClient.get_token_transactions()`` returns it.
    Immutable. ``len()`` is the number of transactions on the page."""

    @property
    def transactions(self) -> list[UATransaction]:
        """The page's transactions, newest first (a new list on each access)."""
    @property
    def next_page_token(self) -> Optional[str]:
        """The cursor of the next page (pass it as ``page_token=``); ``None`` on the last
        page."""
    def to_dict(self) -> dict[str, Any]:
        """``{"transactions": [...]}`` plus ``"nextPageToken"`` when there is a next page.

        Returns:
            A new ``dict``.
        """
    def __len__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
# END generated records: history

# BEGIN generated records: events (python/src/records/events.rs; scripts/gen-stubs.sh)
@final
class DepositLifecycleEvent:
    """A deposit entering a phase (spec §2 ``DepositLifecycleEvent``; the ``deposit:lifecycle``
    event). ``id`` is the same in every phase of one deposit. Immutable.

    A deposit goes ``detected`` → ``processing`` (again at each retry of its sweep) →
    ``credited`` or ``failed``; a deposit worth less than the minimum is reported
    ``below_threshold`` instead and never swept. On a chain with a chain watcher
    (``chain_rpc_urls``; ``docs/finality.md``) it goes ``seen`` → ``confirming`` (with
    ``confirmations``) → ``confirmed`` → ``processing`` → …, or ``reorged`` when a
    reorganisation removed its transfer first (never swept or credited).

    ``repr()`` is
    ``<depositkit.DepositLifecycleEvent credited id='dep_…' 0.01 ETH on chain 8453>``.
    """

    @property
    def type(self) -> Literal["deposit:lifecycle"]:
        """The event's type."""
    @property
    def id(self) -> str:
        """The deposit's id."""
    @property
    def phase(self) -> _DepositPhase:
        """The phase the deposit entered."""
    @property
    def token(self) -> str:
        """The deposited token's symbol."""
    @property
    def chain_id(self) -> int:
        """The chain it arrived on."""
    @property
    def amount(self) -> str:
        """The deposited amount, human-readable."""
    @property
    def amount_usd(self) -> float:
        """Its USD value at detection."""
    @property
    def destination(self) -> Optional[_EventDestinationDict]:
        """Where it goes (the destination at the time of the event), or ``None``."""
    @property
    def transaction_id(self) -> Optional[str]:
        """The delivering transaction; set on ``credited``."""
    @property
    def explorer_url(self) -> Optional[str]:
        """A block-explorer link to it; set on ``credited`` when the chain has an explorer."""
    @property
    def error(self) -> Optional[str]:
        """Why the sweep failed (``failed``) or why the deposit is below the threshold."""
    @property
    def timestamp(self) -> int:
        """When the phase was entered, unix milliseconds."""
    @property
    def confirmations(self) -> Optional[int]:
        """On a watched chain: the blocks (slots) over its transfer, its own counted, when its
        chain reported the transfer; else ``None``."""
    @property
    def required_confirmations(self) -> Optional[int]:
        """On a watched chain: the confirmations its chain's rule asks for; ``None`` for a rule
        of the chain's ``safe`` / ``finalized`` head, and off watched chains."""
    @property
    def source_tx_hash(self) -> Optional[str]:
        """On a watched chain: the transaction (signature) that brought it, when its chain
        reported it; else ``None``."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase: ``id``, ``phase``, ``token``, ``chainId``, ``amount``,
        ``amountUSD``, ``timestamp``, and when set ``destination`` (``{"address", "chainId"}``),
        ``transactionId``, ``explorerUrl``, ``error``, ``confirmations``,
        ``requiredConfirmations``, ``sourceTxHash``. JSON-ready.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class StatusChangedEvent:
    """The client's status changed (the ``status:change`` event). Immutable, hashable."""

    @property
    def type(self) -> Literal["status:change"]:
        """The event's type."""
    @property
    def status(self) -> _ClientStatusName:
        """The new status."""
    def to_dict(self) -> dict[str, str]:
        """``{"status": ...}``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class ErrorEvent:
    """Something failed in the background (the ``error`` event): a poll of the watcher, or a
    ``poll_now()`` (which also raises). Immutable, hashable."""

    @property
    def type(self) -> Literal["error"]:
        """The event's type."""
    @property
    def kind(self) -> str:
        """The name of the exception class of the failure (``"UniversalAccountError"``)."""
    @property
    def code(self) -> int:
        """The stable code of that class (``DepositSDKError.code``)."""
    @property
    def message(self) -> str:
        """What failed and why."""
    def exception(self) -> DepositSDKError:
        """The exception of ``kind`` with ``message``, built (not raised), for example to
        re-raise it."""
    def to_dict(self) -> dict[str, Any]:
        """``{"kind": ..., "code": ..., "message": ...}``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class RefundEvent:
    """A refund changed status (the ``refund:update`` event): ``pending`` → ``processing`` →
    (``pending`` → ``processing`` … for automatic retries) → ``success``, ``failed`` or
    ``skipped``. Immutable.

    ``repr()`` is ``<depositkit.RefundEvent deposit_id='dep_…' status='processing'>``.
    """

    @property
    def type(self) -> Literal["refund:update"]:
        """The event's type."""
    @property
    def result(self) -> RefundResult:
        """The refund as it is now."""
    def to_dict(self) -> dict[str, Any]:
        """The refund's record: ``result.to_dict()``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class RecoveryEvent:
    """One asset of ``recover_funds()`` is done (the ``recovery:result`` event), in the order
    of the returned list. Immutable.

    ``repr()`` is ``<depositkit.RecoveryEvent 4 USDC on chain 8453 status='success'>``.
    """

    @property
    def type(self) -> Literal["recovery:result"]:
        """The event's type."""
    @property
    def result(self) -> RecoveryResult:
        """The asset's recovery."""
    def to_dict(self) -> dict[str, Any]:
        """The recovery's record: ``result.to_dict()``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...
# END generated records: events

# --- fund from wallet and the onramp ------------------------------------------------------------

_BalanceSourceName = Literal["balanceProvider", "rpc", "apiKey", "proxyUrl", "hosted"]
"""Where ``get_wallet_balances()`` read a balance (``docs/funding.md`` §3, in precedence order):
the host's balance provider (``set_balance_provider``), the chains' RPC endpoints
(``funding={"balance_provider": "rpc"}``), the balance API with ``funding.api_key``, the host's
proxy ``funding.proxy_url``, or the maker's hosted proxy."""

class _WalletBalancesRequestDict(TypedDict):
    """What a balance provider (``set_balance_provider``) is called with, the body every balance
    source gets."""

    evmAddress: Optional[str]
    """The EVM funding wallet, EIP-55 checksummed, or ``None`` when none is connected."""
    solanaAddress: Optional[str]
    """The Solana funding wallet (base58), or ``None``."""
    chainIds: list[int]
    """The chains to report: ``[1, 56, 8453, 42161, 101]``."""

class _WalletBalanceLineDict(TypedDict, total=False):
    """One line a balance provider answers (``docs/funding.md`` §3). ``chainId``, ``token`` and
    ``rawAmount`` are required; a line of another chain or an unknown token is skipped."""

    chainId: int
    token: str
    """The token's symbol (``"USDC"``, ``"ETH"``)."""
    tokenAddress: Optional[str]
    """The contract or mint; ``None`` for the chain's native asset. A contract other than
    depositkit's (a bridged variant) skips the line."""
    decimals: int
    """When given, must be the token's decimals on the chain (else the line is skipped)."""
    rawAmount: Union[str, int]
    """The balance in smallest units: decimal text or an ``int``."""
    priceUSD: Optional[float]
    valueUSD: Optional[float]

class _SimHeadsDict(TypedDict):
    """The heads of a simulated chain (``Devnet.mine_blocks``)."""

    latest: int
    safe: int
    finalized: int

class _SimReorgDict(TypedDict):
    """What ``Devnet.reorg`` did."""

    replaced: list[int]
    """The heights whose blocks were replaced."""
    dropped: list[str]
    """The transactions taken out of the chain."""
    kept: list[str]
    """The transactions of the replaced blocks that the new blocks hold again."""
    readd_at: Optional[int]
    """The height where the dropped transactions come back, if they do."""

class _VaultAddressesDict(TypedDict):
    """devnet's vault (its inventory and collection address) on the chain-backed chains."""

    evm: str
    """The EVM address (EIP-55), the same on every EVM chain."""
    solana: str
    """The Solana address (base58)."""

_EvmProviderCallable = Callable[[str, Any], Any]
"""An EIP-1193-style wallet: ``provider(method, params) -> result`` (``params`` is the JSON-RPC
params list, or for Phantom-style methods an object)."""

# BEGIN generated records: funding (python/src/records/funding.rs; scripts/gen-stubs.sh)
@final
class FundingBalance:
    """One balance of a funding wallet (spec §2 ``FundingBalance``), offered by
    ``DepositClient.get_wallet_balances()``. Immutable and opaque: there is no public
    constructor (``FundingBalance()`` raises ``TypeError``), and only the client that issued it
    accepts it back in ``fund_from_wallet``.

    ``repr()`` is
    ``<depositkit.FundingBalance 25 USDC on chain 8453 wallet='0x…' source='rpc'>``.
    """

    @property
    def chain_id(self) -> int:
        """The chain (Ethereum, BNB Chain, Base, Arbitrum or Solana)."""
    @property
    def token(self) -> str:
        """The token's symbol."""
    @property
    def token_address(self) -> Optional[str]:
        """The token's contract (EVM, EIP-55) or mint (Solana); ``None`` for the chain's native
        asset."""
    @property
    def is_native(self) -> bool:
        """Whether this is the chain's native asset (ETH, BNB, SOL)."""
    @property
    def decimals(self) -> int:
        """The token's decimals on this chain."""
    @property
    def raw_amount(self) -> int:
        """The balance in smallest units."""
    @property
    def amount(self) -> str:
        """The balance, human-readable (``"25.5"``)."""
    @property
    def price_usd(self) -> Optional[float]:
        """The token's USD price, when the source priced it."""
    @property
    def value_usd(self) -> Optional[float]:
        """The balance's USD value, when the source priced it."""
    @property
    def wallet_address(self) -> str:
        """The funding wallet holding it (EVM EIP-55 checksummed, Solana base58)."""
    @property
    def source(self) -> _BalanceSourceName:
        """Where the balance was read."""
    def to_dict(self) -> dict[str, Any]:
        """The JSON form of ``docs/funding.md`` §6: ``chainId``, ``token``, ``tokenAddress``,
        ``decimals``, ``rawAmount`` (an ``int``), ``priceUSD``, ``valueUSD``, ``amount``,
        ``walletAddress``, ``source``. It cannot be turned back into a ``FundingBalance``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class FundingTransferResult:
    """A transfer ``DepositClient.fund_from_wallet()`` made (spec §2
    ``FundingTransferResult``), mined (EVM) or confirmed (Solana). The watcher then detects it
    as a deposit. Immutable.

    ``repr()`` is ``<depositkit.FundingTransferResult 25 USDC on chain 8453 tx_hash='0x…'>``.
    """

    @property
    def tx_hash(self) -> str:
        """The transaction: a ``0x`` hash (EVM) or a base58 signature (Solana)."""
    @property
    def chain_id(self) -> int:
        """The chain it was sent on."""
    @property
    def token(self) -> str:
        """The token sent."""
    @property
    def raw_amount(self) -> int:
        """The amount sent, in smallest units."""
    @property
    def amount(self) -> str:
        """The amount sent, human-readable."""
    @property
    def from_address(self) -> str:
        """The funding wallet."""
    @property
    def to_address(self) -> str:
        """The deposit address that received it."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase: ``txHash``, ``chainId``, ``token``, ``rawAmount`` (an
        ``int``), ``amount``, ``from``, ``to``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...
# END generated records: funding

_OnrampEventName = Literal[
    "widget_opened",
    "order_created",
    "order_processing",
    "order_completed",
    "order_failed",
    "widget_closed",
]
"""The events the onramp overlay posts (``docs/funding.md`` §5)."""

# BEGIN generated records: onramp (python/src/records/onramp.rs; scripts/gen-stubs.sh)
@final
class OnrampOrder:
    """A completed fiat-onramp order (spec §2 ``OnrampOrder``): what ``onramp:complete``
    carries and ``DepositClient.last_onramp_order`` keeps, read from the widget's order
    (``cryptoAmount``, ``cryptoCurrency``, ``status``, ``id``, ``walletAddress``, ``network``,
    ``fiatAmount``, ``fiatCurrency``, ``txHash``). Immutable.

    ``repr()`` is ``<depositkit.OnrampOrder id='ord_…' 99 USDC to '0x…' on chain 8453
    status='completed'>``.
    """

    @property
    def amount(self) -> str:
        """The crypto delivered, human-readable (the order's ``cryptoAmount``)."""
    @property
    def token(self) -> str:
        """The token delivered (``cryptoCurrency``)."""
    @property
    def status(self) -> str:
        """The provider's order status (``"completed"``)."""
    @property
    def id(self) -> str:
        """The provider's order id."""
    @property
    def destination(self) -> _EventDestinationDict:
        """Where the crypto went: ``{"address", "chain_id"}`` (``walletAddress`` on
        ``network``)."""
    @property
    def fiat_amount(self) -> Optional[float]:
        """The fiat amount paid, when reported."""
    @property
    def fiat_currency(self) -> Optional[str]:
        """The fiat currency paid in, when reported."""
    @property
    def tx_hash(self) -> Optional[str]:
        """The delivering transaction, when the provider reports it."""
    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase: ``amount``, ``token``, ``status``, ``id``,
        ``destination`` (``{"address", "chainId"}``), ``fiatAmount``, ``fiatCurrency``,
        ``txHash``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class OnrampEvent:
    """A message of the onramp overlay, forwarded with ``DepositClient.handle_onramp_message``
    (the ``onramp:<name>`` events: ``onramp:widget_opened``, ``onramp:order_created``,
    ``onramp:order_processing``, ``onramp:order_completed``, ``onramp:order_failed``,
    ``onramp:widget_closed``). Immutable.

    ``repr()`` is ``<depositkit.OnrampEvent onramp:order_created order='ord_…'>``.
    """

    @property
    def type(self) -> str:
        """The event's type: ``"onramp:"`` followed by ``name``."""
    @property
    def name(self) -> _OnrampEventName:
        """The widget's event name."""
    @property
    def payload(self) -> Any:
        """The message's ``data`` (the widget's order object), as the widget posted it (a new
        copy each time); ``{}`` when the message had none."""
    def to_dict(self) -> dict[str, Any]:
        """The event's JSON form: ``{"type": "onramp:<name>", "payload": {...}}``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...

@final
class OnrampCompleteEvent:
    """An onramp order completed (the ``onramp:complete`` event), right after its
    ``onramp:order_completed``. Immutable.

    ``repr()`` is ``<depositkit.OnrampCompleteEvent order='ord_…' 99 USDC>``.
    """

    @property
    def type(self) -> Literal["onramp:complete"]:
        """The event's type."""
    @property
    def order(self) -> OnrampOrder:
        """The completed order (also ``DepositClient.last_onramp_order``)."""
    def to_dict(self) -> dict[str, Any]:
        """The order's record: ``order.to_dict()``.

        Returns:
            A new ``dict``.
        """
    def __eq__(self, other: object, /) -> bool: ...
# END generated records: onramp

_DepositEvent = Union[
    DepositLifecycleEvent,
    StatusChangedEvent,
    ErrorEvent,
    RefundEvent,
    RecoveryEvent,
    OnrampEvent,
    OnrampCompleteEvent,
]
"""Any event of a ``DepositClient``; tell them apart by ``type`` (``"deposit:lifecycle"``,
``"status:change"``, ``"error"``, ``"refund:update"``, ``"recovery:result"``,
``"onramp:<name>"``, ``"onramp:complete"``) or ``isinstance``."""

class _HasChainId(Protocol):
    """An object with a ``chain_id`` attribute (and optionally ``address`` and ``token``), such
    as ``depositkit.DestinationConfig``."""

    @property
    def chain_id(self) -> int: ...

_DestinationLike = Union[Mapping[str, Any], int, _HasChainId]
"""A destination: a mapping with ``chain_id`` (or ``chainId``), ``address`` and ``token``; a
``depositkit.DestinationConfig`` (any object with a ``chain_id`` attribute); or a bare chain id
(USDC to the owner address)."""

@final
class DepositClient:
    """The deposit client (spec §4): deposit addresses for an owner, a watcher that detects
    deposits, and a sweeper that converts each into the destination token and delivers it.

    Create it with the owner and the destination, ``initialize()`` it (session, intermediary
    wallet, account: the deposit addresses), then either ``start_watching()`` or call
    ``poll_now()`` yourself. Each detected deposit is swept automatically (``auto_sweep``), one
    at a time, and reported through lifecycle events::

        with depositkit.DepositClient(owner, {"chain_id": depositkit.CHAIN.ARBITRUM},
                                      services_url=url) as client:
            addresses = client.initialize()
            client.start_watching()
            for event in client:               # blocks for each event
                if event.type == "deposit:lifecycle" and event.phase == "credited":
                    print(event.id, event.transaction_id)

    **Events** reach the host two ways at once. *Pull*: ``next_event()`` or iterating the client
    takes the oldest queued event (``DepositLifecycleEvent``, ``StatusChangedEvent``,
    ``ErrorEvent``, ``RefundEvent``, ``RecoveryEvent``, ``OnrampEvent`` or
    ``OnrampCompleteEvent``); the queue holds ``event_queue_capacity`` events and drops the oldest when full
    (``dropped_events``). *Callbacks*: ``on_deposit_event=`` (lifecycle events only) and
    ``subscribe()`` (every event) are called in subscription order on a library thread
    (``depositkit-events``, of a small pool shared by every client; one client's callbacks run on
    one thread, one at a time, in order), which takes the GIL for each call. A callback may call back into the
    client (``status``, ``pending_deposits()``, even ``sweep()``). An exception raised by a
    callback is reported through ``sys.unraisablehook`` (with the callback as its object) and
    never stops delivery: later events still reach every callback. Slow callbacks delay later
    events, not the client.

    **Blocking calls** (``initialize``, ``poll_now``, ``sweep``, ``refund``, ``can_refund``,
    ``stuck_funds``, ``recover_funds``, ``transactions``, ``get_transactions``,
    ``get_token_transactions``, ``get_transaction``, and the funding calls
    ``connect_evm_wallet``, ``evm_accounts``, ``prompt_evm_account_selection``,
    ``connect_solana_wallet``, ``get_wallet_balances``, ``fund_from_wallet``) run on a worker thread while the caller
    waits with the GIL released; Ctrl-C interrupts the wait within about 0.1 s (the call itself
    then finishes in the background). ``next_event`` and iteration also wait with the GIL
    released and stay interruptible. Every call is bounded by ``call_timeout_ms``
    (``DepositTimeoutError``). The other methods and properties answer at once.

    **Refunds**: ``refund(id)`` sends a deposit that was not delivered back (to its original
    sender when known, else the owner), on its own chain, less the gas; with
    ``refund={"enabled": True}`` a deposit whose sweep failed for good is refunded
    automatically. A deposit is never refunded twice, nor both refunded and credited. Progress
    is reported as ``RefundEvent`` events. **Recovery**: ``stuck_funds()`` lists money in the
    account that no live deposit explains; ``recover_funds()`` sweeps it to the destination
    (``RecoveryEvent`` events). **Notifications**: with ``notifications=`` the client keeps one
    ``Notification`` record per deposit (``notifications()``, ``subscribe_notifications()``).
    **History**: ``get_transactions()``, ``get_token_transactions()`` and
    ``get_transaction()`` (answers cached 30 s, until the client itself changes the history).
    **Fund from wallet** (``funding={"enabled": True}``): ``set_evm_wallet()`` /
    ``set_solana_wallet()`` (a node URL or Python callables acting as the user's wallets),
    ``get_wallet_balances()`` → ``FundingBalance``, ``fund_from_wallet(balance)`` →
    ``FundingTransferResult``; the deposit then flows as any other. **Onramp**
    (``onramp={"enabled": True}``): ``open_onramp()`` gives the widget URL, and in overlay mode
    ``handle_onramp_message()`` turns the widget's messages into ``OnrampEvent`` and
    ``OnrampCompleteEvent`` events.

    Thread-safe: a client may be used from many threads at once. ``close()`` (or ``with``, or
    dropping the last reference, or interpreter exit) stops it. ``repr()`` shows the owner, the
    status and the destination (``closed`` instead once closed), never a key.

    After ``close()`` every method and property raises, besides what it lists,
    ``DepositSDKError`` (the base class) ``"the client is closed"``, except what stays true
    after closing: ``close()`` and ``with`` exit, ``closed``, ``status`` (``idle``),
    ``owner_address``, ``store_path``, the event log (``events_since()``,
    ``deposit_history()``, ``last_event_id``), the pull queue (``next_event()`` and iteration
    hand out the events left in it) and its counters (``dropped_events``,
    ``callback_panics``), and the releases ``close()`` already did (``unsubscribe()``,
    ``clear_funding_wallet()``). So ``get_destination()``, ``pending_deposits()``,
    ``stop_watching()``, ``sweep_result()``, ``refund_result()``, ``notifications()`` and the
    other views of the running client raise rather than answer with stale values.

    **Fork**: a client is tied to the process that created it (its threads stay in the parent).
    In a forked child every method and property of an inherited client, ``close()`` included,
    raises ``InternalError`` at once: ``"this DepositClient was created in process N and cannot
    be used in this forked child (process M): …; create a new DepositClient in the child"``.
    Exiting the child or dropping the object there leaves the parent's client alone; new
    clients created in the child work. ``repr()`` is then
    ``<depositkit.DepositClient created in process N>``.
    """

    # BEGIN generated DepositClient.__new__ (core/tests/option_table.rs)
    def __new__(
        cls,
        owner_address: str,
        destination: _DestinationLike,
        *,
        on_deposit_event: Optional[Callable[[DepositLifecycleEvent], object]] = None,
        signer: Optional[CallbackSigner] = None,
        intermediary_address: Optional[str] = None,
        ua_project_id: Optional[str] = None,
        min_value_usd: Optional[Union[float, int, decimal.Decimal]] = 0.5,
        supported_tokens: Optional[Sequence[str]] = None,
        supported_chains: Optional[Sequence[int]] = None,
        polling_interval_ms: Optional[int] = 3000,
        auto_sweep: Optional[bool] = True,
        refund: Optional[Mapping[str, Any]] = None,
        notifications: Optional[Union[bool, Mapping[str, Any]]] = None,
        funding: Optional[Mapping[str, Any]] = None,
        onramp: Optional[Mapping[str, Any]] = None,
        chain_rpc_urls: Optional[Mapping[str, Any]] = None,
        finality: Optional[Mapping[str, Any]] = None,
        backend: Optional[str] = None,
        particle: Optional[Mapping[str, Any]] = None,
        services_url: Optional[str] = None,
        jwt_service_url: Optional[str] = None,
        signer_url: Optional[str] = None,
        account_service_url: Optional[str] = None,
        sweep_retry_delay_ms: Optional[int] = 5000,
        reconcile_interval_ms: Optional[int] = 10000,
        processing_timeout_ms: Optional[int] = 300000,
        min_polling_interval_ms: Optional[int] = 2000,
        request_timeout_ms: Optional[int] = 10000,
        http_retries: Optional[int] = 3,
        http_initial_backoff_ms: Optional[int] = 100,
        call_timeout_ms: Optional[int] = 60000,
        event_queue_capacity: Optional[int] = 1024,
        store_path: Optional[Union[str, "os.PathLike[str]"]] = None,
    ) -> DepositClient:
        """A client for ``owner_address`` delivering to ``destination``. Nothing is sent yet:
        ``initialize()`` opens the session. ``None`` for any keyword means its default. Every
        option is listed, for every language, in ``docs/options.md``.

        Args:
            owner_address: the owner of the unified account, an EVM address (spec §4
                ``ownerAddress``).
            destination: where swept deposits go (spec §2 ``DestinationConfig``): a dict
                ``{"chain_id": CHAIN.ARBITRUM, "address": "0x…", "token": "USDC"}`` (keys in
                snake_case or camelCase; ``address`` defaults to the owner address, ``token`` to
                USDC), a ``depositkit.DestinationConfig``, or a bare chain id. The token must be
                deliverable on the chain (``is_supported_destination_token``); X Layer is never a
                destination; a Solana destination needs a Solana ``address`` (kept as given).
            on_deposit_event: called with every ``DepositLifecycleEvent`` (spec §4
                ``onDepositEvent``), on the event thread (see the class).
            signer: the owner's signer on the ``particle`` backend when the host keeps the key
                (a KMS, an HSM): a ``CallbackSigner``. It takes the place of ``particle``'s
                ``signer_key`` and ``signer_seed``.
            intermediary_address: The intermediary wallet, when the host knows it: ``initialize()``
                checks it equals the signer's wallet.
            ua_project_id: The host's own project id for unified-account operations (spec §5.2; a
                1% service fee applies to sweeps, spec §5.3).
            min_value_usd: Minimum USD value of a deposit; smaller deposits reach
                ``below_threshold`` (applied with 2% tolerance; 0 disables the check). Deposits
                worth $0.10 or less are dust and ignored. Default 0.5 (spec
                ``DEFAULT_MIN_VALUE_USD``).
            supported_tokens: The tokens the watcher reports, as symbols in any letter case. Default
                all six.
            supported_chains: The chain ids the watcher reports. Default all 17.
            polling_interval_ms: The watcher's polling interval in milliseconds: at least
                ``min_polling_interval_ms`` (2000 in production), at most a day. Default 3000.
            auto_sweep: Sweep each detected deposit automatically; without it, call ``sweep(id)``.
                Default True.
            refund: Auto-refund (spec §2 ``RefundConfig``), every key optional: ``enabled``
                (default False: refund deposits whose sweep failed for good automatically),
                ``delay_ms`` (default 5000: the wait before the first attempt and between attempts),
                ``max_attempts`` (default 2, 1 to 100), ``refund_to_sender`` (default True: to the
                original sender when known, else the owner). Manual refunds work either way.
            notifications: Notification records (spec §2 ``DepositNotificationsProps``): True for
                the defaults, or an object, every key optional: ``duration_ms`` (default 6000;
                auto-dismiss delay of terminal records, 0 never), ``max`` (default 5; records kept),
                and ``position``, ``theme``, ``class_name``, which are only kept for a host UI. The
                spec's ``render_item`` has no headless meaning and is refused as an unknown key.
                Default off.
            funding: Fund from wallet (spec §2 ``FundingConfig``; ``docs/funding.md`` §3–4),
                every key optional: ``enabled`` (default False: every funding call is refused),
                ``api_key`` (of the balance API, sent from this process: development use),
                ``balance_api_url`` (that API's base URL), ``proxy_url`` (the host's reverse proxy
                to it, which adds the key), ``balance_provider`` (``"rpc"``: read balances from the
                chains' nodes), ``evm_rpc_urls`` (chain id → node URL), ``solana_rpc_url``,
                ``min_value_usd`` (smallest balance offered; default the client's).
            onramp: The fiat onramp (spec §2 ``OnrampConfig``; ``docs/funding.md`` §5), every key
                optional: ``enabled`` (default False), ``api_key`` (the partner key; never shown),
                ``mode`` (``"overlay"``, the default, or ``"redirect"``), ``fiat_currency`` (default
                ``"USD"``), ``default_fiat_amount``, ``payment_mode``, ``widget_url``.
            chain_rpc_urls: Chain watchers (``docs/finality.md``): chain id (a number, or its text)
                → the chain's JSON-RPC endpoint (an EVM node, or Solana's): ``http(s)://``, polled
                every 100 ms, or for an EVM chain ``ws(s)://``, told of new heads by
                ``eth_subscribe`` (polled over the socket when the endpoint refuses subscriptions).
                A watched chain's deposits are ``seen`` when their transfer is included,
                ``confirming`` as blocks come, ``confirmed`` when the chain's finality rule
                (``finality``) is met, and only then swept; one a reorganisation removes first is
                ``reorged`` and never swept. Balance polling goes on beside them, so a deposit is
                found while an endpoint is down. Endpoints are never shown (their path may hold a
                key). Default none: every chain's deposits are the balance's rises, swept at once.
            finality: When a deposit on a watched chain (``chain_rpc_urls``) is final
                (``docs/finality.md``), every key optional: ``chains`` (chain id →
                ``{"confirmations": n}``, ``"safe"`` (Solana's ``"confirmed"``) or ``"finalized"``,
                replacing that chain's documented default), ``instant_below_usd`` (default 0:
                deposits worth less are swept as soon as they are seen, the host accepting the risk
                of a reorganisation on them), ``balance_fallback_ms`` (how long a deposit only the
                balance shows waits before it is taken as final; default the chain's typical time to
                finality).
            backend: The universal-account backend: ``"devnet"`` (the default: ``docs/protocol.md``,
                the services under ``services_url``) or ``"particle"`` (Particle's Universal Account
                JSON-RPC with a server-side signer, set up by ``particle``; ``docs/particle.md``).
            particle: The ``particle`` backend's settings (``docs/particle.md`` §8), every key
                optional: ``environment`` (``"production"``, the default, or ``"staging"``),
                ``rpc_url`` (a URL of your own, e.g. devnet's ``…/particle``; beats
                ``environment``), ``project_id`` and ``client_key`` (the project's credentials; else
                ``DEPOSITKIT_PARTICLE_PROJECT_ID`` and ``DEPOSITKIT_PARTICLE_CLIENT_KEY``), and the
                signer: ``signer_key`` (one key, 64 hex digits), ``signer_seed`` (a master seed in
                hex: one key per owner), or ``signer`` (``"key"`` or ``"seed"``: read
                ``DEPOSITKIT_PARTICLE_SIGNER_KEY`` or ``DEPOSITKIT_PARTICLE_SIGNER_SEED``; unset,
                whichever is set). A host signer (a KMS callback) overrides these. Secrets are never
                shown.
            services_url: Base URL of the three services (``{services_url}/jwt``, ``/signer``,
                ``/ua``), e.g. a devnet's. Either it or each of ``jwt_service_url``, ``signer_url``
                and ``account_service_url`` is required.
            jwt_service_url: The JWT service; overrides ``services_url``.
            signer_url: The auth-core signer; overrides ``services_url``.
            account_service_url: The universal-account service; overrides ``services_url``.
            sweep_retry_delay_ms: Milliseconds between the 3 attempts of a failed sweep (at most a
                day). Default 5000 (lower it in tests).
            reconcile_interval_ms: First wait in milliseconds before a sweep or refund whose send
                outcome is unknown (a timeout, 5xx or 429 on the send) is resolved again
                automatically, with the same quote, never a new one; doubles per round up to ten
                minutes. Default 10000 (lower it in tests).
            processing_timeout_ms: The watchdog: the longest one sweep, refund or recovery attempt
                may run, in milliseconds; then it is ended as a failed attempt (nothing sent yet) or
                as an unknown outcome to resolve (a send was under way). Default 300000 (lower it in
                tests).
            min_polling_interval_ms: **A test and devnet knob** (1 to 2000): lowers the smallest
                ``polling_interval_ms`` accepted, so that tests never wait seconds between polls.
                Default 2000.
            request_timeout_ms: Deadline of one HTTP attempt in milliseconds (more than 0, at most a
                day). Default 10000.
            http_retries: Retries of one HTTP request answered 429 or 5xx, refused or timed out (0
                to 20). Default 3.
            http_initial_backoff_ms: First backoff between HTTP retries in milliseconds (doubling,
                full jitter). Default 100.
            call_timeout_ms: Deadline of one blocking call (``initialize``, ``poll_now``, ``sweep``,
                ``refund``, ``can_refund``, ``stuck_funds``, ``recover_funds``, the history calls)
                in milliseconds. Default 60000.
            event_queue_capacity: Size of the pull queue of events (at least 1); when full the
                oldest event is dropped. Without ``store_path`` also how many events
                ``events_since`` can replay. Default 1024.
            store_path: A SQLite file (created if missing) that keeps the client's state across
                restarts: deposit records with their phase history, sweep and refund attempts, the
                event log, the watcher's snapshot and the notification records. A client started
                again on it (even after its process was killed mid-sweep) resumes every deposit
                where it was, resolves a send that may have happened with the same quote (never a
                second one), and continues the event ids. One process at a time: of processes
                starting on one file at once exactly one wins, the others wait up to 2 s and are
                refused ("… is in use by another process"); openings are serialised through
                ``<store_path>-lock`` beside it. Events are appended to ``<store_path>-events``
                first and folded into the file in batches: keep, copy or delete it with the file (as
                SQLite's ``-wal``). One live client per owner (several owners may share a file). A
                file this version cannot read is refused naming the path. Unset (the default): state
                lives in memory and a new client starts over.

        Raises:
            ConfigurationError: an option's value is invalid; the message names the option by
                its Python name (not the spec's camelCase one) and the value
                (``polling_interval_ms must be at least 2000 ms (and at most a day), got 500``).
                Cases: an owner that is not an EVM address; an unknown destination chain id
                (``Invalid destination chain ID: 7. ...``); X Layer or another non-destination
                chain; a token not deliverable on the chain (``destination.token USDT cannot be
                delivered on Base (8453); deliverable there: ETH, USDC``); an address invalid for
                the chain's type; an unknown token symbol; an unknown chain in
                ``supported_chains``; empty token or chain lists; a polling interval below the
                minimum; a negative or non-finite ``min_value_usd``; a URL that is not http(s) or
                carries credentials; an unknown key in a nested option dict. Also a
                ``ValueError``.
            ConfigurationTypeError: (a ``ConfigurationError`` that is also a ``TypeError``) an
                option of the wrong type, at the top level or in a nested dict
                (``polling_interval_ms`` given as ``str``, ``auto_sweep`` not a ``bool``, a
                non-callable ``on_deposit_event``, a callable in ``notifications``, ``"yes"`` for
                ``refund.enabled``), named as Python spells it.
            TypeError: an unknown keyword (Python's own call error).
        """
    # END generated DepositClient.__new__
    def health(self, stuck_after_ms: Optional[int] = None) -> _HealthDict:
        """The client's health, without a network call: each service's last success and
        failure (``account``: the balance polls, ``jwt``: the session), the last successful
        poll, the backlog (deposits detected and not yet credited or refunded), the ids of the
        deposits in the table for longer than ``stuck_after_ms`` (default 15 minutes), whether
        the session is valid, whether it watches, whether it is ready (initialized, not closed),
        and ``healthy``: ready, the last poll not failed while watching, nothing stuck.
        """
    def initialize(self) -> DepositAddresses:
        """Opens the intermediary session (JWT service), checks the signer's wallet against
        ``intermediary_address``, and initializes the account. The status goes ``initializing``
        → ``ready``, or ``error`` on failure, after which ``initialize()`` may be called again.

        Returns:
            The account's deposit addresses.

        Raises:
            JwtError: the JWT service is unreachable or failing (after retries), or its token
                fails verification (signature, issuer, audience, subject, expiry).
            AuthenticationError: the credentials or the session were refused.
            ConfigurationError: ``intermediary_address`` is not the signer's wallet; or the client
                is already initialized (``"Client already initialized"``) or initializing.
            UniversalAccountError: the account cannot be initialized.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    @property
    def deposit_addresses(self) -> DepositAddresses:
        """The deposit addresses (after ``initialize()``).

        Raises:
            ConfigurationError: not initialized (``"Client not initialized. Call initialize()
                first."``).
        """
    def set_destination(
        self,
        destination: Optional[_DestinationLike] = None,
        /,
        *,
        chain_id: Optional[int] = None,
        address: Optional[str] = None,
        token: Optional[str] = None,
    ) -> _DestinationDict:
        """Changes where deposits go (spec §4 ``setDestination``): a destination as the
        constructor takes it, or the ``chain_id``/``address``/``token`` keywords. Sweeps that
        start from now on use it, including queued ones and retries.

        Returns:
            The new destination, resolved (``address`` defaulted to the owner, ``token`` to
            USDC).

        Raises:
            ConfigurationError: the chain id, address or token is invalid (as for the
                constructor's ``destination``); the old destination stays.
                ``ConfigurationTypeError`` (also a ``TypeError``) for a value of the wrong type.
            TypeError: both forms, or neither, were given.
        """
    def get_destination(self) -> _DestinationDict:
        """The current destination (spec §4 ``getDestination``).

        Returns:
            A new ``dict`` with ``address``, ``chain_id`` and ``token``.
        """
    @property
    def status(self) -> _ClientStatusName:
        """The status (spec §3): ``idle`` (not initialized, or closed), ``initializing``,
        ``ready``, ``watching`` (the watcher runs), ``sweeping`` (a deposit is queued, being
        swept or refunded, or waiting for a retry or a refund's delay; or a recovery is queued or
        running), ``error`` (the last ``initialize()`` failed)."""
    @property
    def is_watching(self) -> bool:
        """Whether the watcher runs."""
    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
    @property
    def owner_address(self) -> str:
        """The owner address, lower-case."""
    @property
    def intermediary_address(self) -> Optional[str]:
        """The intermediary (signer) wallet, once initialized."""
    @property
    def account_id(self) -> Optional[str]:
        """The universal account's id, once initialized."""
    @property
    def dropped_events(self) -> int:
        """Events dropped from the full pull queue so far."""
    @property
    def last_event_id(self) -> int:
        """The id of the last event the client emitted (0: none yet). Event ids are 1, 2, … in
        the order events were emitted; with ``store_path`` they continue across restarts."""
    @property
    def store_path(self) -> Optional[str]:
        """The SQLite file of the client's durable state, or ``None`` (state in memory)."""
    def events_since(
        self, cursor: Optional[int] = None, limit: Optional[int] = None
    ) -> List[Tuple[int, _DepositEvent]]:
        """The events after ``cursor`` (an event id; ``None``/0: from the start), oldest first,
        at most ``limit``, as ``(event_id, event)`` pairs: what a host missed while it was down
        or because the pull queue overflowed. With ``store_path`` every event is kept, with the
        same ids after a restart; without it, the last ``event_queue_capacity``.

        A host that must not miss a credit stores the id of the last event it handled and,
        after a restart, handles ``events_since(that_id)`` first::

            for event_id, event in client.events_since(cursor):
                handle(event)
                cursor = event_id

        Raises:
            NotFoundError: events after ``cursor`` are no longer kept (in memory only).
            InvalidArgumentError: ``cursor`` is past ``last_event_id``.
            TypeError: ``cursor`` or ``limit`` is not an int.
            InternalError: the store cannot be read.
        """
    def deposit_history(self, deposit_id: str) -> List[Tuple[int, _DepositEvent]]:
        """Deposit ``deposit_id``'s phase history: its lifecycle events and refund updates as
        ``(event_id, event)`` pairs, oldest first (complete with ``store_path``; else what the
        in-memory log still holds).

        Raises:
            InternalError: the store cannot be read.
        """
    @property
    def callback_panics(self) -> int:
        """Callbacks that failed inside the library so far (an exception raised by a Python
        callback is not counted: it goes to ``sys.unraisablehook``)."""
    def is_onramp_supported(self) -> bool:
        """Whether the fiat onramp serves the destination chain (spec §4: ``False`` for X
        Layer; ``True`` for Ethereum, BNB Chain, Base, Arbitrum and Solana)."""
    # --- fund from wallet ---------------------------------------------------------------------
    def set_evm_wallet(
        self, provider: Union[str, _EvmProviderCallable], address: Optional[str] = None
    ) -> None:
        """Sets the EVM funding wallet (``docs/funding.md`` §4); it only ever sends money to the
        deposit addresses, it never owns or signs for the account.

        Args:
            provider: either the JSON-RPC URL of a node holding the wallet's unlocked account
                (anvil's development accounts; ``wallet_switchEthereumChain`` then moves it to
                ``funding.evm_rpc_urls[chain]``), or a callable
                ``provider(method: str, params: list) -> result`` speaking EIP-1193
                (``eth_requestAccounts``, ``eth_accounts``, ``eth_chainId``,
                ``wallet_switchEthereumChain``, ``eth_gasPrice``, ``eth_getBalance``,
                ``eth_estimateGas``, ``eth_sendTransaction``, ``eth_getTransactionReceipt``, …),
                answering the JSON result (``None``, ``bool``, ``int``, ``float``, ``str``,
                lists, dicts with ``str`` keys). It is called on one of the library's threads
                (never twice at once), holding the GIL for the call, while the method that
                needs it waits with the GIL released — so it may use threads or I/O freely. It
                refuses by raising ``depositkit.ProviderError(code, message)`` (4001 when the
                user rejects); any other exception is an internal failure of the wallet. Either
                is chained as the ``__cause__`` of the ``FundingError`` that follows.
            address: the wallet's account, when known; else ``connect_evm_wallet()`` (or the
                first use) asks the wallet.

        Raises:
            ConfigurationError: funding is not enabled (``funding={"enabled": True}``), or the
                URL is not ``http(s)://``.
            InvalidArgumentError: ``address`` is not an EVM address.
            TypeError: ``provider`` is neither a ``str`` nor callable.
        """
    def set_solana_wallet(
        self, provider: Callable[[str, Any], Any], address: Optional[str] = None
    ) -> None:
        """Sets the Solana funding wallet: a callable ``provider(method: str, params: dict) ->
        result`` with Phantom's methods — ``connect`` (params ``{}``) answering
        ``{"publicKey": "<base58>"}`` (or the bare string), and ``signAndSendTransaction``
        with ``{"transaction": "<base64 of the unsigned transaction depositkit built>",
        "encoding": "base64"}``, which signs it with the wallet's key, sends it and answers
        ``{"signature": "<base58>"}`` (or the bare string). Called as ``set_evm_wallet``'s
        callable is (library thread, GIL held for the call, ``ProviderError`` to refuse).

        Args:
            provider: the callable.
            address: the wallet's public key, when known; else ``connect_solana_wallet()`` asks.

        Raises:
            ConfigurationError: funding is not enabled.
            InvalidArgumentError: ``address`` is not a Solana address.
            TypeError: ``provider`` is not callable.
        """
    def set_balance_provider(
        self,
        provider: Optional[
            Callable[
                [_WalletBalancesRequestDict],
                Union[Sequence[_WalletBalanceLineDict], Mapping[str, Sequence[_WalletBalanceLineDict]]],
            ]
        ],
    ) -> None:
        """Sets (or with ``None`` removes) the host's balance source, which then answers every
        ``get_wallet_balances()`` ahead of ``funding.balance_provider``, ``api_key`` and
        ``proxy_url``: ``provider(request)`` gets ``{"evmAddress", "solanaAddress",
        "chainIds"}`` and answers the balance lines, as a list or as ``{"balances": [...]}``
        (``rawAmount`` may be an ``int`` of any size or decimal text). Called as
        ``set_evm_wallet``'s callable is.

        Raises:
            TypeError: ``provider`` is neither callable nor ``None``.
        """
    def clear_funding_wallet(self) -> None:
        """Forgets both funding wallets (the balance provider stays)."""
    def connect_evm_wallet(self) -> str:
        """Asks the EVM wallet for its accounts (``eth_requestAccounts``); the first becomes the
        funding address. Blocking (GIL released).

        Returns:
            The funding address, as the wallet wrote it.

        Raises:
            ConfigurationError: funding is not enabled.
            FundingError: no EVM wallet is set (``no EVM wallet is connected``), the wallet
                rejected (``rejected by the wallet (4001): …``), failed, or answered no or
                invalid accounts.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def evm_accounts(self) -> list[str]:
        """The EVM wallet's accounts (``eth_accounts``). Blocking (GIL released).

        Returns:
            The accounts, possibly none.

        Raises:
            ConfigurationError: funding is not enabled.
            FundingError: as ``connect_evm_wallet``.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def prompt_evm_account_selection(self) -> list[str]:
        """Lets the user pick accounts (``wallet_requestPermissions [{"eth_accounts": {}}]``,
        then ``eth_accounts``); the first becomes the funding address. Blocking (GIL released).

        Returns:
            The accounts.

        Raises:
            ConfigurationError: funding is not enabled.
            FundingError: as ``connect_evm_wallet``.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def connect_solana_wallet(self) -> str:
        """Connects the Solana wallet (Phantom's ``connect``). Blocking (GIL released).

        Returns:
            Its public key (base58), now the Solana funding address.

        Raises:
            ConfigurationError: funding is not enabled.
            FundingError: no Solana wallet is set, the wallet rejected or failed, or it answered
                no valid public key.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def get_wallet_balances(self) -> list[FundingBalance]:
        """The connected funding wallets' balances worth offering (``docs/funding.md`` §3),
        from the first source configured: the balance provider (``set_balance_provider``),
        ``funding.balance_provider == "rpc"`` (the chains' nodes), ``funding.api_key`` (the
        balance API at ``funding.balance_api_url``), ``funding.proxy_url``, else the hosted
        proxy. Only Ethereum, BNB Chain, Base, Arbitrum and Solana lines of known tokens with
        a positive amount and, when priced, a value of at least ``funding.min_value_usd``
        (default the client's ``min_value_usd``). Blocking (GIL released).

        Returns:
            The balances, possibly none.

        Raises:
            ConfigurationError: funding is not enabled.
            FundingError: no funding wallet is connected, or the source failed (the message
                names the source, never a key: ``wallet balances from the balance API (…)
                failed: HTTP 401 INVALID_API_KEY: …``).
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def fund_from_wallet(
        self, balance: FundingBalance, raw_amount: Optional[int] = None
    ) -> FundingTransferResult:
        """Sends ``raw_amount`` of ``balance`` from the funding wallet to this account's deposit
        address on its chain, and waits until the transfer is mined (EVM: a native transfer or
        an ERC-20 ``transfer`` through ``eth_sendTransaction``, legacy gas price
        ``eth_gasPrice × 1.25``) or confirmed (Solana: a system or SPL ``TransferChecked``
        transaction depositkit builds and the wallet signs and sends). The watcher then detects
        it as any deposit. Every check runs before anything is sent; a wallet that rejects
        loses nothing. Blocking (GIL released), so the providers run meanwhile.

        Args:
            balance: a balance from this client's ``get_wallet_balances()``.
            raw_amount: smallest units to send; ``None`` sends the maximum: the whole token
                balance, or for the native asset the balance less the transfer's gas (EVM:
                ``21000 × gas price``; Solana: the fee, keeping a new deposit account
                rent-exempt).

        Returns:
            The transfer.

        Raises:
            InvalidArgumentError: ``balance`` was issued by another client; ``raw_amount`` is
                0, negative or above ``2**256 - 1``.
            ConfigurationError: funding is not enabled, or the client is not initialized.
            FundingError: ``insufficient gas: …`` (naming what the gas needs and what the
                wallet holds), ``insufficient funds: …``, ``rejected by the wallet (4001): …``,
                ``RPC failure on <chain>: …``, ``transaction <hash> reverted``, or no wallet is
                connected; a provider's exception is its ``__cause__``.
            DepositTimeoutError: the transfer was sent but not confirmed within
                ``call_timeout_ms`` (the message names it).
            TypeError: ``balance`` is not a ``FundingBalance``; ``raw_amount`` not an ``int``.
        """
    # --- the onramp -----------------------------------------------------------------------------
    def open_onramp(self, amount: Optional[Union[float, int, decimal.Decimal]] = None) -> str:
        """The fiat onramp widget's URL for the current destination (``docs/funding.md`` §5),
        for the host to open (an overlay frame or a new tab, per ``onramp.mode``):
        ``{widget_url}?partnerKey=…&walletAddress=<destination>&network=<ethereum|bsc|base|arbitrum|solana>&cryptoCurrency=<token>&fiatCurrency=…[&fiatAmount=…][&paymentMethod=…]&mode=<overlay|redirect>&partnerOrderId=<new id>``.
        The token is the destination token when the onramp sells it on that chain, else USDC.
        The URL carries the partner key: do not log it.

        Args:
            amount: the fiat amount to pre-fill; overrides ``onramp.default_fiat_amount``.

        Returns:
            The URL.

        Raises:
            ConfigurationError: the onramp is not enabled, or does not serve the destination
                chain (X Layer).
            InvalidArgumentError: ``amount`` is not a positive finite number.
            TypeError: ``amount`` is not a number.
        """
    def handle_onramp_message(self, message: Union[Mapping[str, Any], str]) -> bool:
        """Takes in a message the overlay widget posted — ``{"event": "<name>", "data":
        {order}}``, or that JSON as text — and emits ``OnrampEvent`` ``onramp:<name>`` with the
        data; for ``order_completed`` also ``OnrampCompleteEvent`` (``onramp:complete``) with
        the ``OnrampOrder``, kept as ``last_onramp_order``. The events are queued (and handed to
        the callbacks) before this returns. In redirect mode there is no event channel: nothing
        is emitted.

        Returns:
            ``True``; ``False`` in redirect mode.

        Raises:
            ConfigurationError: the onramp is not enabled.
            InvalidArgumentError: a malformed message, an unknown event name (naming it), or an
                ``order_completed`` whose order lacks a field.
            TypeError: ``message`` is neither a mapping nor a ``str``.
        """
    @property
    def last_onramp_order(self) -> Optional[OnrampOrder]:
        """The last completed onramp order this client was told about, or ``None``."""
    def start_watching(self) -> None:
        """Starts the watcher: one poll now, then one every ``polling_interval_ms``, never
        overlapping. Does nothing when it already runs. A failed poll is reported as an
        ``ErrorEvent`` and the watcher goes on.

        Raises:
            ConfigurationError: not initialized (``"Client must be initialized before
                watching"``).
        """
    def stop_watching(self) -> None:
        """Stops the watcher (a poll under way is abandoned); sweeps under way go on. What was
        already seen is remembered: nothing is reported twice after ``start_watching()``."""
    def poll_now(self) -> list[DepositLifecycleEvent]:
        """Runs one poll now (after a poll under way) and returns the events it produced
        (``detected`` and ``below_threshold``). They are also queued for ``next_event()`` and
        handed to the callbacks before this returns. Detected deposits are queued for their
        sweep when ``auto_sweep`` is on; the sweep then runs in the background.

        Returns:
            The new lifecycle events, possibly none.

        Raises:
            ConfigurationError: not initialized.
            UniversalAccountError: the balances cannot be read (also reported as an
                ``ErrorEvent``).
            JwtError: the session cannot be renewed.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def pending_deposits(self) -> list[DetectedDeposit]:
        """Detected deposits not delivered yet (queued, being swept, failed, or with an unknown
        outcome), oldest first.

        Returns:
            A new list.
        """
    def sweep(self, deposit_id: str) -> SweepResult:
        """Sweeps one pending deposit now (one attempt, through the serial sweep queue) and
        waits for the result. Lifecycle events follow as for automatic sweeps. A deposit whose
        last send has an unknown outcome is resolved with its quote, never quoted anew.

        Returns:
            The result; ``status`` ``"failed"`` is a result, not an exception.

        Raises:
            NotFoundError: no pending deposit has this id (unknown, or already delivered).
            SweepError: the deposit is being swept right now.
            ConfigurationError: not initialized.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def sweep_result(self, deposit_id: str) -> Optional[SweepResult]:
        """The result of the last finished sweep of ``deposit_id`` (automatic or manual), or
        ``None``."""
    def transactions(self, page: int = 1, page_size: int = 10) -> dict[str, Any]:
        """A page of the account's transactions, newest first, as a plain ``dict`` (spec §2
        ``TransactionsResponse``: ``transactions`` (``UATransaction`` dicts, camelCase, raw
        amounts as strings), ``page``, ``pageSize``). ``get_transactions()`` returns the same
        as records.

        Raises:
            ConfigurationError: not initialized.
            UniversalAccountError: the service refused or failed.
        """
    def get_transactions(
        self, page: Optional[int] = None, page_size: Optional[int] = None
    ) -> TransactionsResponse:
        """A page of the account's transactions (spec §4 ``getTransactions``): deposits
        (``receive``), sweeps (``sweep``) and refunds (``refund``), newest first. Answers are
        cached 30 s (10 entries, least recently used dropped first), and the cache is emptied
        whenever this client detects a deposit or finishes a sweep, refund or recovery.

        Args:
            page: the page number from 1 (``None``: 1).
            page_size: transactions per page, 1 to 100 (``None``: 10).

        Returns:
            The page.

        Raises:
            InvalidArgumentError: page below 1, page size outside 1-100.
            ConfigurationError: not initialized.
            UniversalAccountError: the service refused or failed (``"Failed to get transactions:
                …"``).
            JwtError: the session cannot be renewed.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
            TypeError: ``page`` or ``page_size`` is not an ``int``.
        """
    def get_token_transactions(
        self,
        chain_id: int,
        address: str,
        *,
        page_token: Optional[str] = None,
        page_size: Optional[int] = None,
    ) -> TokenTransactionsResponse:
        """One token's transactions on one chain (spec §4 ``getTokenTransactions`` with a
        ``TokenTransactionFilter``), newest first, a cursor page at a time. Cached like
        ``get_transactions()``::

            usdc = depositkit.token_info("USDC", CHAIN.BASE)["contract"]
            page = client.get_token_transactions(CHAIN.BASE, usdc, page_size=20)
            while True:
                handle(page.transactions)
                if page.next_page_token is None:
                    break
                page = client.get_token_transactions(
                    CHAIN.BASE, usdc, page_token=page.next_page_token, page_size=20)

        Args:
            chain_id: the chain.
            address: the token's contract (mint on Solana; compared without regard to letter
                case), or the zero address (the system program on Solana) for the chain's native
                asset (``token_info(...)["contract"]`` is ``None`` for those).
            page_token: the ``next_page_token`` of the previous page; ``None`` for the first.
            page_size: transactions per page, 1 to 100 (``None``: 10); keep it the same across
                the pages of one listing.

        Returns:
            The page; its ``next_page_token`` is ``None`` on the last page.

        Raises:
            InvalidArgumentError: an empty address, a page size outside 1-100, a chain id that
                is negative or beyond 64 bits.
            ConfigurationError: not initialized.
            UniversalAccountError: the service refused or failed (``"Failed to get token
                transactions: …"``), also for a ``page_token`` it never issued.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def get_transaction(self, transaction_id: str) -> UATransaction:
        """One transaction of the account (spec §4 ``getTransaction``). Cached like
        ``get_transactions()``.

        Returns:
            The transaction.

        Raises:
            NotFoundError: the account has no such transaction.
            InvalidArgumentError: an empty id.
            ConfigurationError: not initialized.
            UniversalAccountError: the service refused or failed (``"Failed to get transaction:
                …"``).
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def refund(
        self, deposit_id: str, reason: _RefundReasonName = "user_requested"
    ) -> RefundResult:
        """Refunds a deposit that was not delivered (spec §4 ``refund``), whatever
        ``refund["enabled"]`` says: one attempt, through the client's serial executor (never
        at the same time as a sweep), and waits for its end. The receiver is the deposit's
        original sender when ``refund_to_sender`` is on and exactly one sender of a fitting
        address type is known, else the owner when its (EVM) address type fits the source chain.
        The money goes back on the source chain in the deposit's token, less the gas. A deposit
        whose earlier sweep or refund has an unknown outcome is resolved with that same quote
        first: a sweep found delivered makes the deposit credited (the result is then
        ``skipped``, ``error`` saying it turned out delivered), never refunded.
        ``RefundEvent`` events report each status on the way.

        Args:
            deposit_id: a pending deposit (waiting for a manual sweep, failed, or retrying).
            reason: recorded in the result; ``"user_requested"`` or ``"sweep_failed"``.

        Returns:
            The refund's final state: ``success``, ``failed`` (nothing moved), ``skipped``
            (``reason`` ``address_type_mismatch`` or ``below_minimum``; nothing moved), or
            ``pending`` when the send's outcome could not be learned (it is resolved
            automatically after ``reconcile_interval_ms``, or by calling ``refund()`` again).

        Raises:
            RefundError: the deposit was credited (``"… was credited …; a credited deposit
                cannot be refunded"``), was already refunded (``"… was already refunded
                (transaction 0x…)"``), is being swept right now, or is already being refunded.
            NotFoundError: no deposit has this id.
            InvalidArgumentError: ``reason`` is not one of the spec's reasons.
            ConfigurationError: not initialized.
            DepositTimeoutError: it took longer than ``call_timeout_ms`` (the refund goes on in
                the background).
        """
    def can_refund(self, deposit_id: str) -> RefundEligibility:
        """Whether ``refund(deposit_id)`` would try to send the money back now, and to whom
        (spec §4 ``canRefund``). Reads the deposit's senders and prices the refund (a quote
        moves nothing), so ``below_minimum`` is known. It gives the answer ``refund`` acts on
        (one table decides both): a deposit being swept now, already being refunded, credited,
        refunded or unknown is not eligible (``message`` says why). A deposit whose earlier
        sweep or refund outcome is unknown is eligible: ``refund`` first resolves that send with
        its same quote, never sending twice (``message`` says so).

        Returns:
            The eligibility.

        Raises:
            ConfigurationError: not initialized.
            UniversalAccountError: the senders or the price cannot be read.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def refund_result(self, deposit_id: str) -> Optional[RefundResult]:
        """The latest refund update of ``deposit_id`` (in progress or final), or ``None`` when
        it was never refunded nor tried. The last 1000 final results are kept."""
    @property
    def refund_config(self) -> _RefundConfigDict:
        """The auto-refund settings in effect (defaults filled in), a new ``dict`` on each
        access."""
    def stuck_funds(self) -> list[DetectedDeposit]:
        """Money in the account that no live deposit of this client explains — left by failed
        sweeps, deposits below the thresholds or of unsupported tokens —, one entry per chain
        and token: ``id`` ``"recovery:<token>:<chain id>"`` (``"recovery:usdc:8453"``),
        ``amount``, ``raw_amount``, ``amount_usd`` at the service's price. Deposits still being
        swept, refunded, or waiting for a manual sweep are not stuck. Runs a poll first (new
        deposits are registered and reported, not listed). Dust is listed too;
        ``recover_funds()`` skips it.

        Returns:
            A new list, ordered by chain id and token.

        Raises:
            ConfigurationError: not initialized.
            UniversalAccountError: the balances cannot be read.
            DepositTimeoutError: it took longer than ``call_timeout_ms``.
        """
    def recover_funds(self) -> list[RecoveryResult]:
        """Sweeps every stuck asset (``stuck_funds()``) to the current destination, through the
        serial executor, and returns one result per asset: ``success`` (with ``tx_hash``),
        ``failed`` (with ``error``; the money stays) or ``skipped`` (dust worth $0.10 or less,
        or worth less than the fees). Failed deposits whose money was recovered become
        ``credited`` (a lifecycle event, and ``sweep_result()`` shows the recovery's
        transaction). Each result is also a ``RecoveryEvent``; the status is ``sweeping``
        meanwhile and ``is_recovering`` is ``True``.

        Returns:
            A new list, in the order of ``stuck_funds()``; empty when nothing is stuck.

        Raises:
            ConfigurationError: not initialized.
            UniversalAccountError: the balances cannot be read.
            DepositTimeoutError: it took longer than ``call_timeout_ms`` (the recovery goes on
                in the background).
        """
    @property
    def is_recovering(self) -> bool:
        """Whether a ``recover_funds()`` is queued or running."""
    def notifications(self) -> list[Notification]:
        """The notification records, oldest first (see ``Notification`` for the rules); empty
        when the ``notifications`` option is not set. Current as soon as the call that caused a
        change returns.

        Returns:
            A new list.
        """
    def dismiss_notification(self, deposit_id: str) -> bool:
        """Removes deposit ``deposit_id``'s notification record at once (a later event of the
        deposit creates a new one).

        Returns:
            Whether there was one.
        """
    def subscribe_notifications(self, callback: Callable[[list[Notification]], object]) -> int:
        """Calls ``callback(records)`` with every record (a new list, oldest first) after each
        change of the notification records — a lifecycle event, a refund update, a dismissal
        or an expiry — on the client's event thread, under the same rules as ``subscribe()``
        callbacks (exceptions go to ``sys.unraisablehook``).

        Returns:
            The subscription id, for ``unsubscribe()``.

        Raises:
            ConfigurationError: the ``notifications`` option is not set.
            TypeError: ``callback`` is not callable.
        """
    @property
    def notifications_config(self) -> Optional[_NotificationsConfigDict]:
        """The notifications configuration as given (defaults filled in; ``position``,
        ``theme`` and ``class_name`` are for a host UI), or ``None`` when notifications are off.
        The spec's ``renderItem`` has no headless meaning: render ``notifications()``
        yourself."""
    def subscribe(self, callback: Callable[[_DepositEvent], object]) -> int:
        """Calls ``callback(event)`` for every event from now on (lifecycle, status changes,
        errors, refund updates, recovery results, onramp events) on the event thread; see the class for the
        rules.

        Returns:
            The subscription id, for ``unsubscribe()``.

        Raises:
            TypeError: ``callback`` is not callable.
        """
    def unsubscribe(self, id: int) -> bool:
        """Removes a subscription (of ``subscribe()`` or ``subscribe_notifications()``); from
        then on its callback is not called (not even by a
        delivery under way) and the client no longer holds it.

        Returns:
            ``False`` when ``id`` was not subscribed.
        """
    def next_event(self, timeout: Optional[float] = None) -> Optional[_DepositEvent]:
        """The oldest queued event, waiting at most ``timeout`` seconds for one (``0``: do not
        wait; ``None``: until one comes or the client is closed). Waits with the GIL released;
        Ctrl-C interrupts it.

        Returns:
            The event, or ``None`` on timeout, or once the client is closed and its queue empty.

        Raises:
            InvalidArgumentError: ``timeout`` is negative or NaN.
            TypeError: ``timeout`` is not a number.
        """
    def next_events(
        self, max_events: int = 1024, timeout: Optional[float] = None
    ) -> list[_DepositEvent]:
        """Up to ``max_events`` queued events at once, oldest first: waits at most ``timeout``
        seconds for the first (as ``next_event()``), then takes the events already queued
        behind it without waiting. For hosts that handle many events: one call, one list.

        Returns:
            The events (at least one), or ``[]`` on timeout, or once the client is closed and
            its queue empty.

        Raises:
            ValueError: ``max_events`` is 0.
            InvalidArgumentError: ``timeout`` is negative or NaN.
            TypeError: ``timeout`` is not a number.
        """
    def subscribe_batches(
        self, callback: Callable[[list[_DepositEvent]], object], max_batch: int = 1024
    ) -> int:
        """Calls ``callback(events)`` with lists of events, oldest first, for every event from
        now on — what ``subscribe()`` delivers, in lists of at most ``max_batch``: the events
        that arrived while the previous call ran come in one list. The calls run one at a time
        on a thread of this subscription; ``unsubscribe(id)`` ends it.

        Returns:
            The subscription id, for ``unsubscribe()``.

        Raises:
            TypeError: ``callback`` is not callable.
            ValueError: ``max_batch`` is 0.
        """
    def __iter__(self) -> Iterator[_DepositEvent]:
        """The client itself: iterating it yields every event as it comes."""
    def __next__(self) -> _DepositEvent:
        """The next event, waiting as long as it takes (GIL released, Ctrl-C interrupts).

        Raises:
            StopIteration: the client is closed and every queued event was taken.
        """
    def close(self) -> None:
        """Stops the watcher and the sweeper (a sweep under way is abandoned: its money is
        either delivered or still in the account, where a new client finds it), lets the event
        thread deliver what is queued (at most 5 s), and drops every callback. Idempotent;
        the status becomes ``idle``. Queued events can still be taken with ``next_event()``
        and iteration, and the event log read; every call that is not in the class's list of
        what a closed client answers raises ``DepositSDKError`` ``"the client is closed"``."""
    # The awaitable forms depositkit.AsyncDepositClient awaits (depositkit/_aio.py).
    def _initialize_async(self) -> asyncio.Future[DepositAddresses]: ...
    def _poll_now_async(self) -> asyncio.Future[list[DepositLifecycleEvent]]: ...
    def _sweep_async(self, deposit_id: str) -> asyncio.Future[SweepResult]: ...
    def _refund_async(
        self, deposit_id: str, reason: Optional[_RefundReasonName] = None
    ) -> asyncio.Future[RefundResult]: ...
    def _can_refund_async(self, deposit_id: str) -> asyncio.Future[RefundEligibility]: ...
    def _stuck_funds_async(self) -> asyncio.Future[list[DetectedDeposit]]: ...
    def _recover_funds_async(self) -> asyncio.Future[list[RecoveryResult]]: ...
    def _get_transactions_async(
        self, page: Optional[int] = None, page_size: Optional[int] = None
    ) -> asyncio.Future[TransactionsResponse]: ...
    def _get_token_transactions_async(
        self,
        chain_id: int,
        address: str,
        *,
        page_token: Optional[str] = None,
        page_size: Optional[int] = None,
    ) -> asyncio.Future[TokenTransactionsResponse]: ...
    def _get_transaction_async(self, transaction_id: str) -> asyncio.Future[UATransaction]: ...
    def _connect_evm_wallet_async(self) -> asyncio.Future[str]: ...
    def _evm_accounts_async(self) -> asyncio.Future[list[str]]: ...
    def _prompt_evm_account_selection_async(self) -> asyncio.Future[list[str]]: ...
    def _connect_solana_wallet_async(self) -> asyncio.Future[str]: ...
    def _get_wallet_balances_async(self) -> asyncio.Future[list[FundingBalance]]: ...
    def _fund_from_wallet_async(
        self, balance: FundingBalance, raw_amount: Optional[int] = None
    ) -> asyncio.Future[FundingTransferResult]: ...
    def _close_async(self) -> asyncio.Future[None]: ...
    def _event_inbox(self) -> _EventInbox: ...
    def __enter__(self) -> DepositClient:
        """Returns the client itself.

        Raises:
            DepositSDKError: the client is closed.
        """
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Literal[False]:
        """Closes the client; never swallows the exception."""

@final
class _EventInbox:
    """The events of an ``AsyncDepositClient`` (private)."""

    def next(self) -> asyncio.Future[Optional[_DepositEvent]]: ...
    @property
    def dropped(self) -> int: ...

@final
class CallbackSigner:
    """A signer whose key the host keeps (a KMS, an HSM, a wallet service): the owner's signer
    of a ``DepositClient`` on the ``particle`` backend, given as ``signer=`` (``docs/particle.md``
    §4). The other two signers, one key and a master seed (one key per owner), are options:
    ``particle={"signer_key": ...}`` or ``{"signer_seed": ...}``. A ``CallbackSigner`` takes
    their place.

    ``sign`` is called with 32 ``bytes`` and returns the secp256k1 signature as 65 ``bytes``
    ``r || s || v`` (``v`` 27/28 or 0/1; a high ``s`` is made low). With ``input="digest"`` (the
    default) it gets the EIP-191 digest ``keccak256(b"\x19Ethereum Signed Message:\n32" + root)``
    and signs it as it is (AWS KMS ``MessageType=DIGEST``, coincurve's
    ``sign_recoverable(digest, hasher=None)``); with ``input="message"`` it gets the root hash
    itself and must apply ``personal_sign`` on its own (eth_account's
    ``sign_message(encode_defunct(primitive=root))``)::

        import coincurve, depositkit

        key = coincurve.PrivateKey(secret)          # in a real host: a KMS call instead

        def sign(digest: bytes) -> bytes:
            return key.sign_recoverable(digest, hasher=None)

        signer = depositkit.CallbackSigner("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", sign)
        client = depositkit.DepositClient(owner, {"chain_id": depositkit.CHAIN.BASE},
                                          backend="particle", signer=signer,
                                          particle={"project_id": ..., "client_key": ...})

    Every answer is checked before it is used: it must recover to ``address``, else the signing
    fails with ``AuthenticationError`` ("the signer callback's answer was refused: the signature
    is from 0x…, not from the account's owner 0x…") and nothing is sent with it. That catches a
    wrong key and a callback that signs the wrong bytes. What ``sign`` raises fails the signing
    too, and nothing is sent: a ``DepositSDKError`` keeps its class and message (raise
    ``NetworkError("KMS unreachable")`` for a failure worth retrying), any other exception
    becomes an ``AuthenticationError`` naming its type and text (``"the signer callback raised
    RuntimeError: KMS unavailable"``, cut to 200 characters). So does an answer that is not 65
    ``bytes`` (or ``bytearray``). A sweep that fails so is retried, then fails (its
    ``DepositLifecycleEvent`` of phase ``failed`` carries the message).

    **Threads**: ``sign`` is called on a library thread (a worker of its runtime's blocking
    pool), never on the caller's, holding the GIL for the call only; it may block (a network
    call). One signer may serve many clients, and a client signs one transfer at a time, so
    calls may overlap only across clients (or when a call the client's watchdog gave up on,
    ``processing_timeout_ms``, is still running): keep ``sign`` thread-safe.

    ``repr()`` shows the address and the input, never ``sign`` (whose ``repr()`` may hold a
    key).
    """

    def __new__(
        cls,
        address: str,
        sign: Callable[[bytes], Union[bytes, bytearray]],
        *,
        input: Literal["digest", "message"] = "digest",
    ) -> CallbackSigner:
        """A signer for the key of ``address`` (an EVM address, any letter case).

        Raises:
            ConfigurationError: ``address`` is not an EVM address (the message quotes it).
            ValueError: ``input`` is neither ``"digest"`` nor ``"message"``.
            TypeError: ``address`` is not a ``str``, ``sign`` not callable, ``input`` not a
                ``str``.
        """
    @property
    def address(self) -> str:
        """The signer's address, EIP-55 (the universal account's owner)."""
    @property
    def input(self) -> Literal["digest", "message"]:
        """What ``sign`` is given: ``"digest"`` or ``"message"``."""

# --- fleet mode (docs/fleet.md) -----------------------------------------------------------------

@final
class DepositFleet:
    """A process of a fleet (preview; ``docs/fleet.md``): many processes share the owners of one
    deployment through one PostgreSQL database. Each registered owner is run by exactly one live
    member at a time (a ``DepositClient`` whose state is in the database, every write fenced by
    the member's lease); when a member dies, the others take its owners over within seconds::

        with depositkit.DepositFleet("postgres://app@db.internal/deposits",
                                     destination={"chain_id": depositkit.CHAIN.BASE}) as fleet:
            fleet.add_owner("0x5b38da6a701c568545dcfcb03fcb875f56beddc4")
            events, cursor = fleet.events(timeout=5.0)    # every owner's events, in order

    Owners, commands and the event log are the database's: any member (or any process with a
    ``DepositFleet``) registers owners and asks for work, and the member holding the owner runs
    it. Calls to the database release the GIL and stay interruptible by Ctrl-C.

    Errors: an unreachable database is ``NetworkError``; a URL that cannot be read, or a
    database of another fleet schema version, ``ConfigurationError``; an owner registered twice
    or a value that is not one ``InvalidArgumentError``; an owner the fleet does not know
    ``NotFoundError``; a command its holder did not finish in time ``DepositTimeoutError``. No
    message and no ``repr()`` shows the URL's password (``***`` instead).

    ``leave()`` (or ``with`` exit) hands this member's owners to the others at once; after it
    every method but ``leave()`` raises ``DepositSDKError``. Dropping the object without leaving
    stops its clients, and its owners pass on when its lease runs out. Like ``DepositClient``, a
    ``DepositFleet`` is tied to the process that created it (``InternalError`` in a forked
    child).
    """

    def __new__(
        cls,
        database_url: str,
        *,
        destination: _DestinationLike,
        name: Optional[str] = None,
        max_connections: int = 8,
        lease_ttl: float = 10.0,
        renew_every: float = 3.0,
        **options: Any,
    ) -> DepositFleet:
        """Connects to ``database_url`` (``postgres://user:password@host:port/database``, libpq's
        form; TLS by rustls when the server offers it or ``sslmode=require`` asks), creates the
        fleet's tables in an empty database, and joins the fleet.

        Args:
            destination: where the owners' deposits go, as ``DepositClient``'s ``destination``
                (an owner may have its own: ``add_owner(owner, destination=...)``).
            name: this member's name in ``dk_nodes`` (default ``"depositkit"``).
            max_connections: pooled connections (plus one listening connection).
            lease_ttl: seconds after which a member that did not renew its lease is dead to
                the fleet and its owners pass on.
            renew_every: seconds between renewals (and rebalancing); below ``lease_ttl``.
            **options: ``DepositClient``'s options (``services_url``, ``polling_interval_ms``,
                ``backend``, ``particle``, ...): the template every owner's client starts from.

        Raises:
            NetworkError: the database cannot be reached (the message shows
                ``host:port/database``, never the password).
            ConfigurationError: the URL cannot be read, the database holds another fleet schema
                version, or a client option is invalid.
            InvalidArgumentError: ``lease_ttl``, ``renew_every`` or ``max_connections`` out of
                range.
            TypeError: a keyword that is no option, or a value of the wrong type.
        """
    @property
    def node_id(self) -> str:
        """This member's id (a row of ``dk_nodes``)."""
    @property
    def database_url(self) -> str:
        """The database URL, its password replaced by ``***``."""
    @property
    def running_owners(self) -> list[str]:
        """The owners whose clients run in this process now, sorted (empty once left)."""
    @property
    def left(self) -> bool:
        """Whether this member left the fleet (``leave()``, ``with`` exit)."""
    def owners(self) -> list[str]:
        """Every registered owner, lower-case, sorted."""
    def deposit_addresses(self, owner: str) -> Optional[DepositAddresses]:
        """The deposit addresses of ``owner``'s account, read from the database (any member
        answers, whichever holds the owner): ``None`` until a client of the owner has started
        once (within a renewal of ``add_owner`` while members run). ``InvalidArgumentError``
        names a malformed owner; ``NotFoundError`` an unregistered one."""
    def add_owner(self, owner: str, *, destination: Optional[_DestinationLike] = None) -> str:
        """Registers ``owner`` (an EVM address) durably, with its own destination when given;
        a member picks it up within one renewal. Returns it lower-case.

        Raises:
            InvalidArgumentError: ``owner`` is not an EVM address, or is already registered.
            ConfigurationError: ``destination`` is invalid.
        """
    def remove_owner(self, owner: str) -> None:
        """Unregisters ``owner``: its holder stops its client within a renewal. Its deposit
        state stays in the database, so registering it again resumes it.

        Raises:
            NotFoundError: ``owner`` is not registered.
        """
    def request(
        self,
        owner: str,
        command: Literal["sweep", "refund", "recover", "set_destination"],
        *,
        deposit_id: Optional[str] = None,
        reason: Optional[str] = None,
        destination: Optional[_DestinationLike] = None,
        timeout: float = 30.0,
    ) -> Any:
        """Asks the member holding ``owner`` (this one or another) to run ``command`` on its
        client, and waits up to ``timeout`` seconds for the result: ``"sweep"`` and
        ``"refund"`` (``deposit_id``; ``reason``, default ``"user_requested"``) give the
        ``SweepResult``/``RefundResult`` as a dict, ``"recover"`` the list of recovery results,
        ``"set_destination"`` (``destination``) the new destination as a dict.

        Raises:
            NotFoundError: ``owner`` is not registered.
            DepositTimeoutError: no holder finished it in time (it stays queued: a holder may
                still run it).
            SweepError, RefundError, DepositSDKError: the holder's client refused or failed it
                (the client's message).
            InvalidArgumentError: an unknown command, or a missing or extra argument.
        """
    def events(
        self, cursor: Optional[str] = None, max_events: int = 500, timeout: float = 5.0
    ) -> tuple[list[FleetEvent], str]:
        """The next events of the fleet's one log across owners, in commit order, after
        ``cursor`` (``None``: from the start), waiting up to ``timeout`` seconds when there
        are none; and the cursor to pass next time (save it after handling the batch).
        Delivery is at least once: de-duplicate by ``(owner, id)``. The member keeps its reader
        (and its listening connection) between calls: a loop that passes back the cursor it got
        reads on, without a new connection per call.

        Raises:
            InvalidArgumentError: ``cursor`` is not one, or names another PostgreSQL cluster.
        """
    def subscribe(self, callback: Callable[[FleetEvent], object], cursor: Optional[str] = None) -> int:
        """Calls ``callback(event)`` with every event of the fleet's log after ``cursor``
        (``None``: from the start of the log), every owner's, whichever member holds it, in
        commit order, on a library thread of its own (one per subscription), as it comes.
        Returns the id for ``unsubscribe``. Delivery is at least once: save ``event.cursor``
        once an event is handled and pass it after a restart; de-duplicate by ``(owner, id)``.
        An exception the callback raises goes to ``sys.unraisablehook``, and delivery goes on.
        ``leave()`` stops every subscription (and waits for a callback that is running, unless
        it is the one leaving).

        Raises:
            TypeError: ``callback`` is not callable.
            InvalidArgumentError: ``cursor`` is not one, or names another PostgreSQL cluster.
            NetworkError: the database cannot be read.
        """
    def unsubscribe(self, id: int) -> bool:
        """Stops subscription ``id``: no callback of it starts after this returns (one running
        finishes). ``False`` when there is no such subscription."""
    def iter_events(self, cursor: Optional[str] = None, *, max_events: int = 500) -> FleetEventIterator:
        """The fleet's log after ``cursor`` (``None``: from the start), one event at a time:
        ``for event in fleet.iter_events(saved): ...`` waits for each next event (Ctrl-C
        interrupts the wait, and nothing is lost: the next call reads again from the last
        event returned) and ends once the member left; ``next_event(timeout)`` takes one.
        ``cursor`` on the iterator is the position after the last event it returned. Reads
        ``max_events`` at a time, on a reader of its own kept across calls.

        Raises:
            InvalidArgumentError: ``cursor`` is not one (another cluster's raises on the first
                read).
        """
    @staticmethod
    def _join_async(
        database_url: str,
        *,
        destination: _DestinationLike,
        name: Optional[str] = None,
        max_connections: int = 8,
        lease_ttl: float = 10.0,
        renew_every: float = 3.0,
        **options: Any,
    ) -> asyncio.Future[DepositFleet]:
        """``AsyncDepositFleet.join``: joins on the library's blocking pool; the member's
        awaited calls share its connection pool."""
    def _add_owner_async(self, owner: str, *, destination: Optional[_DestinationLike] = None) -> asyncio.Future[str]:
        """``add_owner``, awaited (a member of ``_join_async`` only)."""
    def _remove_owner_async(self, owner: str) -> asyncio.Future[None]:
        """``remove_owner``, awaited."""
    def _deposit_addresses_async(self, owner: str) -> asyncio.Future[Optional[DepositAddresses]]:
        """``deposit_addresses``, awaited."""
    def _owners_async(self) -> asyncio.Future[list[str]]:
        """``owners``, awaited."""
    def _request_async(
        self,
        owner: str,
        command: Literal["sweep", "refund", "recover", "set_destination"],
        *,
        deposit_id: Optional[str] = None,
        reason: Optional[str] = None,
        destination: Optional[_DestinationLike] = None,
        timeout: float = 30.0,
    ) -> asyncio.Future[Any]:
        """``request``, awaited."""
    def _events_async(
        self, cursor: Optional[str] = None, max_events: int = 500, timeout: float = 5.0
    ) -> asyncio.Future[tuple[list[FleetEvent], str]]:
        """``events``, awaited (the caller keeps the cursor; the listening connection is kept)."""
    def _leave_async(self) -> asyncio.Future[None]:
        """``leave``, awaited (on the library's blocking pool)."""
    def leave(self) -> None:
        """Stops this member's clients and hands its owners to the others at once. A second
        call does nothing."""
    def __enter__(self) -> DepositFleet:
        """Returns the fleet member itself.

        Raises:
            DepositSDKError: it left the fleet.
        """
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Literal[False]:
        """Leaves the fleet; never swallows the exception."""

@final
class FleetEvent:
    """One event of the fleet's log (``DepositFleet.events()``)."""

    @property
    def owner(self) -> str:
        """The owner it belongs to."""
    @property
    def id(self) -> int:
        """Its id in the owner's log: ``(owner, id)`` is stable, for de-duplication."""
    @property
    def at(self) -> int:
        """When it was emitted, unix milliseconds."""
    @property
    def kind(self) -> str:
        """Its type (``"deposit:lifecycle"``, ``"status:changed"``, ...)."""
    @property
    def deposit_id(self) -> Optional[str]:
        """The deposit it is about, if any."""
    @property
    def event(self) -> Any:
        """The event as JSON data (a dict: ``type``, ``payload``, ...)."""
    @property
    def cursor(self) -> str:
        """The log's position just after this event."""

@final
class FleetEventIterator:
    """``DepositFleet.iter_events()``: the fleet's log, one event at a time."""

    @property
    def cursor(self) -> str:
        """The log's position after the last event this iterator returned (save it)."""
    def next_event(self, timeout: Optional[float] = None) -> Optional[FleetEvent]:
        """The next event, waiting at most ``timeout`` seconds (``None``: until one comes);
        ``None`` on timeout or once the member left.

        Raises:
            InvalidArgumentError: a negative ``timeout``, or a cursor of another cluster.
            NetworkError: the database cannot be read.
        """
    def __iter__(self) -> FleetEventIterator: ...
    def __next__(self) -> FleetEvent:
        """The next event, waiting until one comes; ``StopIteration`` once the member left."""

# --- devnet --------------------------------------------------------------------------------------

class _DemoCredentialsDict(TypedDict):
    """The demo project of ``depositkit-devnet serve --demo`` (``Devnet.demo_credentials()``)."""

    project_id: str
    server_key: str
    user_uuid: str
    user_token: str
    jwt_uid: str
    evm_address: str
    solana_address: str

@final
class Devnet:
    """The devnet emulator of the remote services (``docs/protocol.md``: the JWT service, the
    auth-core signer, the universal-account service, and the user-lookup service), running in
    this process on an ephemeral loopback port, with its own thread and runtime. For tests,
    demos and notebooks::

        with depositkit.Devnet() as devnet:
            client = depositkit.DepositClient(owner, {"chain_id": 42161},
                                              services_url=devnet.services_url)
            addresses = client.initialize()
            devnet.deposit(addresses.evm, depositkit.CHAIN.BASE, "ETH", "0.01")

    **Opt-in**: only in builds with the cargo feature ``devnet`` — ``maturin develop --features
    devnet`` (what ``scripts/python-env.sh`` does, for the tests and the demo) or
    ``MATURIN_PEP517_ARGS='--features devnet' pip install ./python``. Production wheels
    (``maturin build --release``) have no emulator: there ``depositkit.Devnet`` raises
    ``AttributeError`` saying so, and ``from depositkit import Devnet`` raises ``ImportError``.

    The admin methods act on the emulator directly (not over HTTP) and release the GIL. Prices
    start at ETH 2500, BNB 600, SOL 150, BTC 60000, USDC 1, USDT 1. ``repr()`` is
    ``<depositkit.Devnet services_url='http://127.0.0.1:PORT'>``.

    **Chain-backed mode** (``Devnet(chains=...)``, ``docs/funding.md`` §2): the chains of the
    chains file (``tests/chains/launch.py``'s, the ``local_chains`` fixture) are real — balances
    are read from them, sweeps collect deposits into devnet's vault and deliver with real
    transactions; the other chains stay on the ledger. The same server also serves the balance
    API (``{services_url}/balances``, key ``devnet-balance-key`` unless ``balance_api_key``
    says otherwise), the balance proxy (``{services_url}/balance-proxy``), and a simulated
    onramp widget (``{services_url}/onramp/widget``, ``complete_onramp_order``).

    Every method raises ``DepositSDKError`` ``"the devnet is closed"`` after ``close()``.

    **Fork**: the server runs in the process that created it. In a forked child every method
    and property of an inherited devnet but ``services_url``, ``user_rpc_url`` and ``db_path``
    (the parent's server still answers there), ``close()`` and ``closed`` included, raises
    ``InternalError`` at once: ``"this Devnet was created in process N and cannot be used in
    this forked child (process M): …; create a new Devnet in the child"``. Exiting the child
    neither stops the parent's server nor removes its database.
    """

    def __new__(
        cls,
        *,
        db_path: Optional[Union[str, os.PathLike[str]]] = None,
        fault_injection: bool = True,
        chains: Optional[Union[Mapping[str, Any], str, os.PathLike[str]]] = None,
        balance_api_key: Optional[str] = None,
        sim_block_ms: Optional[int] = None,
    ) -> Devnet:
        """Starts the emulator; it answers when this returns (the first JWT may wait 0.1-0.4 s
        for the first signing key of a fresh database).

        Args:
            db_path: the SQLite file (created when missing; reused files keep accounts and
                wallets). ``None``: a fresh file in a temporary directory removed by ``close()``.
            fault_injection: serve the fault endpoints over HTTP too (``/devnet/faults``, …).
                The fault methods of this class work either way.
            chains: back these chains with real transactions: the chains file as a ``dict``
                (``{"evm": [...], "solana": {...}, "evmDevAccounts": [...]}``) or its path.
                Starting connects to every chain and stocks the vault.
            balance_api_key: the ``X-API-Key`` the balance API accepts (default
                ``"devnet-balance-key"``).
            sim_block_ms: an empty block this often on every simulated chain
                (``docs/devnet-chains.md``; default 1000); ``0``: blocks only for deposits and
                ``mine_blocks``, so a test counts the confirmations itself.

        Raises:
            InvalidArgumentError: the chains file is malformed or names an unknown chain or
                token, wrong decimals, a bad address or URL.
            DepositSDKError: the database cannot be opened, the port bound, or a chain reached.
            TypeError: ``chains`` is neither a mapping nor a path.
        """
    @property
    def services_url(self) -> str:
        """``http://127.0.0.1:PORT``: the ``services_url`` of a ``DepositClient``."""
    @property
    def user_rpc_url(self) -> str:
        """``http://127.0.0.1:PORT/user-rpc``: the ``base_url`` of a ``UserRpcClient``."""
    @property
    def db_path(self) -> pathlib.Path:
        """The database file."""
    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
    def deposit(
        self,
        address: str,
        chain_id: int,
        token: str,
        amount: Optional[Union[str, int, decimal.Decimal]] = None,
        *,
        raw_amount: Optional[int] = None,
        sender: Optional[str] = None,
    ) -> str:
        """Credits an incoming transfer to ``address`` on ``chain_id``: a deposit when it is an
        account's deposit address (the EVM one for EVM chains, the Solana one for Solana), else a
        credit to the address's ledger.

        Args:
            amount: whole tokens (``"0.01"``, ``Decimal("25")``, ``25``), converted with the
                token's decimals on the chain (USDC has 18 on BNB Chain).
            raw_amount: smallest units instead. Give exactly one of the two.
            sender: the sending address, recorded in the account's history.

        Returns:
            The transfer's transaction hash.

        Raises:
            InvalidArgumentError: a bad address for the chain, an unknown chain, a zero amount,
                an amount with more decimals than the token has.
            TypeError: both or neither of ``amount`` and ``raw_amount``; a ``float`` amount.
        """
    def chain_rpc_url(self, chain_id: int) -> str:
        """``{services_url}/devnet/chains/{chain_id}/rpc``: the JSON-RPC endpoint of the
        simulated chain of a ledger chain (``docs/devnet-chains.md``), for a client's
        ``chain_rpc_urls``. Each deposit is a transaction in a new block of its own."""
    def mine_blocks(self, chain_id: int, blocks: int) -> _SimHeadsDict:
        """Adds ``blocks`` empty blocks to the simulated chain of ``chain_id``; its heads then.

        Raises:
            InvalidArgumentError: an unknown or chain-backed chain, too many blocks.
        """
    def reorg(
        self,
        chain_id: int,
        depth: int,
        *,
        drop: Optional[Sequence[str]] = None,
        readd_after_blocks: Optional[int] = None,
    ) -> _SimReorgDict:
        """Replaces the ``depth`` newest blocks of the simulated chain of ``chain_id`` by as
        many new ones. The deposits whose transaction hashes are in ``drop`` leave the chain and
        the ledger (the account's balance falls back); with ``readd_after_blocks`` they come
        back in the block that many blocks past the new tip. The other transfers of the
        replaced blocks go into the first new block.

        Raises:
            InvalidArgumentError: an unknown or chain-backed chain, a depth reaching a finalized
                block, a dropped transaction not in the replaced blocks, a deposit already
                swept.
        """
    def ledger_balance(self, address: str, chain_id: int, token: str) -> int:
        """What ``address`` holds of ``token`` on ``chain_id``, in smallest units (``0`` when
        nothing arrived): the account's balance for a deposit address, else the ledger's amount
        (how tests check what a sweep delivered).

        Raises:
            InvalidArgumentError: an unknown chain.
        """
    @property
    def chains(self) -> list[int]:
        """The chain-backed chain ids (``[]`` without ``chains=``)."""
    @property
    def vault_addresses(self) -> Optional[_VaultAddressesDict]:
        """devnet's vault addresses when chain-backed, else ``None``."""
    def chain_balance(self, address: str, chain_id: int, token: str) -> int:
        """What ``address`` holds of ``token`` on the chain-backed chain ``chain_id``, read from
        the chain (``0`` for a token not deployed there), in smallest units.

        Raises:
            InvalidArgumentError: ``chain_id`` is not chain-backed; an invalid token.
            DepositSDKError: the chain cannot be read.
        """
    def complete_onramp_order(self, params: Union[Mapping[str, Any], str]) -> dict[str, Any]:
        """Completes a simulated onramp order, as ``POST {services_url}/onramp/v1/orders``
        does: buys ``fiatAmount / price − 1%`` of ``cryptoCurrency`` and credits it to
        ``walletAddress`` on ``network`` (a real transfer from the vault on a chain-backed
        chain, else the ledger).

        Args:
            params: the widget URL's parameters as a ``dict`` (``partnerKey``,
                ``walletAddress``, ``network``, ``cryptoCurrency``, ``fiatCurrency``,
                ``fiatAmount``, …), or the widget URL itself (``open_onramp()``'s answer).

        Returns:
            ``{"order": {...}, "messages": [...]}``: the order and the three messages the
            overlay would post (``order_created``, ``order_processing``,
            ``order_completed``), to forward to ``DepositClient.handle_onramp_message``.

        Raises:
            InvalidArgumentError: no partner key, a bad network, token, address or amount.
            DepositSDKError: a chain-backed chain failed.
            TypeError: ``params`` is neither a mapping nor a ``str``.
        """
    def set_price(self, token: str, usd: float) -> None:
        """Sets the USD price of ``token`` (kept until the devnet stops).

        Raises:
            InvalidArgumentError: not a positive finite number up to 10^12.
        """
    def fail_next_sweeps(self, count: int, mode: Literal["fail", "reject"] = "fail") -> None:
        """The next ``count`` sweep sends fail (``0`` disarms): ``"fail"`` answers
        ``status: "failed"`` with the money left in the account; ``"reject"`` answers 400
        ``ROUTE_FAILED`` before any money moves. Either is a no-money-moved failure the client
        retries."""
    def rotate_jwt_key(self) -> str:
        """Makes a new JWT signing key current (the previous one stays valid). Takes 0.1-0.4 s.

        Returns:
            The new key id.
        """
    def forge_next_jwts(self, count: int) -> None:
        """The next ``count`` JWTs are signed with a key not in the JWKS: clients refuse them
        (``JwtError``)."""
    def expire_sessions(self, user: Optional[str] = None) -> None:
        """Every JWT issued so far (to ``user``, an owner address, when given) is refused by the
        services from now on, as if expired; clients renew their session."""
    def inject_fault(
        self,
        service: Literal["jwt", "signer", "ua", "user-rpc"],
        *,
        status: Optional[int] = None,
        retry_after: Optional[int] = None,
        delay_ms: Optional[int] = None,
        count: int = 1,
        path: Optional[str] = None,
    ) -> None:
        """The next ``count`` requests to ``service`` (only those whose path starts with
        ``path``, e.g. ``"/v1/sweeps/send"``, when given) wait ``delay_ms`` and/or are answered
        HTTP ``status`` (400-599) with ``Retry-After: retry_after`` seconds.

        Raises:
            InvalidArgumentError: an unknown service, a fault without status nor delay, a status
                outside 400-599, a delay over 60 s, ``count`` 0, a ``path`` for user-rpc.
        """
    def clear_faults(self) -> None:
        """Disarms every pending fault: service faults, sweep faults, forged JWTs (expired
        sessions stay expired)."""
    def demo_credentials(self) -> _DemoCredentialsDict:
        """The demo project and user of ``depositkit-devnet serve --demo`` (created on first
        call; later calls rotate the server key and issue a new user token), for trying a
        ``UserRpcClient`` against ``user_rpc_url``."""
    def close(self) -> None:
        """Stops the server (in-flight requests get up to 2 s) and removes the temporary
        database. Idempotent."""
    def __enter__(self) -> Devnet:
        """Returns the devnet itself.

        Raises:
            DepositSDKError: the devnet is closed.
        """
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Literal[False]:
        """Closes the devnet; never swallows the exception."""
