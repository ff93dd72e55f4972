"""The exceptions depositkit raises.

Every exception is a :class:`DepositSDKError`. Where a built-in exception has the same meaning, the
class subclasses it as well, so either ``except`` clause catches it::

    try:
        depositkit.validate_address_for_chain(addr, depositkit.CHAIN.BASE)
    except ValueError:  # ConfigurationError is a ValueError
        ...

Each class carries ``code``, the stable number of its kind (the same number the C API returns as
``depositkit_status``), and ``kind``, the class name. The numbers live in the Rust core; this
module reads them from ``depositkit._native`` so they cannot drift.

The classes are constructed with a single message argument. ``NetworkError`` is also a
``ConnectionError`` (an ``OSError``), and ``OSError`` would read two or more arguments as
``(errno, strerror)``.
"""

from __future__ import annotations

from . import _native

__all__ = [
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
]


class DepositSDKError(Exception):
    """Base class of every depositkit error (spec §7).

    Attributes:
        code: the stable numeric code of the error's kind (``1`` for this class).
        kind: the name of the error's kind, which is its class name.
    """

    code: int
    kind: str


class InvalidArgumentError(DepositSDKError, ValueError):
    """An argument is malformed: an amount, a token symbol, a decimals count."""


class ConfigurationError(DepositSDKError, ValueError):
    """Invalid configuration: chain id, address or token invalid, or token not deliverable."""


class ConfigurationTypeError(ConfigurationError, TypeError):
    """An option of the wrong type (a callable where strings belong, a str where an int does).

    The one rule for options, top-level keywords and nested dicts alike: every bad option raises
    a :class:`ConfigurationError` naming the option; when its type is wrong the error is this
    subclass, so ``except TypeError`` catches it as Python code expects, and ``except
    ConfigurationError`` (or ``ValueError``) catches every bad option. Its ``code`` and ``kind``
    are ``ConfigurationError``'s. Arguments of methods that are not options (a cursor, an
    amount) raise plain ``TypeError`` for a wrong type, as Python's own functions do.
    """


class AuthenticationError(DepositSDKError):
    """Authentication failed."""


class JwtError(DepositSDKError):
    """The JWT service is unreachable or fails."""


class UniversalAccountError(DepositSDKError):
    """Unified-account operations failed, including initialization."""


class SweepError(DepositSDKError):
    """A sweep failed."""


class RefundError(DepositSDKError):
    """A refund failed."""


class FundingError(DepositSDKError):
    """Fund-from-wallet failed."""


class NetworkError(DepositSDKError, ConnectionError):
    """Network problems: refused connections, resets, bad gateways."""


class DepositTimeoutError(NetworkError, TimeoutError):
    """An operation did not finish within its deadline."""


class ProtocolError(DepositSDKError):
    """A service answered something its protocol does not allow (malformed JSON-RPC, a
    mismatched response id, a record missing a required field)."""


class RpcError(DepositSDKError):
    """A service answered with a JSON-RPC error object.

    Attributes:
        rpc_code: the JSON-RPC error code the service sent.
        rpc_message: the service's message.
        rpc_data: the service's extra data, or ``None``.
    """

    rpc_code: int
    rpc_message: str
    rpc_data: object


class NotFoundError(DepositSDKError, LookupError):
    """A thing looked up by id does not exist."""


class InternalError(DepositSDKError):
    """A bug in depositkit, or a state it cannot handle; please report it."""


def _set_codes() -> None:
    codes = dict(_native._error_kinds())
    for name in __all__:
        cls = globals()[name]
        kind = "ConfigurationError" if cls is ConfigurationTypeError else name
        cls.code = codes[kind]
        cls.kind = kind


_set_codes()
