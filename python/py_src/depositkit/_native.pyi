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
"""

from typing import Literal, Optional, TypedDict

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
