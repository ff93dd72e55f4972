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
"""

import datetime
from types import TracebackType
from typing import Literal, Optional, TypedDict, final

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

class TokenInfoDict(TypedDict):
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

def token_info(token: str, chain_id: int) -> Optional[TokenInfoDict]:
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

class WalletDict(TypedDict):
    """A wallet as the user-lookup service sends it (``Wallet.to_dict()``)."""

    chain: str
    publicAddress: str

class UserDict(TypedDict):
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
    wallets: list[WalletDict]

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
    def to_dict(self) -> WalletDict:
        """The wallet as the service sends it: ``{"chain": ..., "publicAddress": ...}``.

        Returns:
            A new ``dict`` with the keys ``chain`` and ``publicAddress``.
        """
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

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
    def to_dict(self) -> UserDict:
        """The record as the service sends it: camelCase keys, every key present (``None`` for a
        ``null``), ``wallets`` as a list of ``{"chain", "publicAddress"}`` dicts. JSON-ready:
        ``json.dumps(user.to_dict())`` is the record on the wire.

        Returns:
            A new ``dict`` (see ``UserDict``).
        """
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

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
            TypeError: ``base_url``, ``project_id``, ``server_key`` or ``user_agent`` is not a
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
