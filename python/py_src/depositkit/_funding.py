"""Pure-Python helpers of fund-from-wallet: :class:`ProviderError`, what a host wallet provider
raises (``docs/funding.md`` §4)."""

from __future__ import annotations

__all__ = ["ProviderError"]

_I64_MIN = -(2**63)
_I64_MAX = 2**63 - 1


class ProviderError(Exception):
    """Raised by a host wallet provider (a callable given to ``DepositClient.set_evm_wallet``,
    ``set_solana_wallet`` or ``set_balance_provider``) to refuse or fail a request, with an
    EIP-1193 code, as an injected wallet rejects with ``{code, message}``::

        def wallet(method, params):
            if method == "eth_sendTransaction" and not user_confirms(params[0]):
                raise depositkit.ProviderError(4001, "User rejected the request.")
            ...

    The library turns it into the failure of the call that was waiting for the wallet: code
    ``4001`` becomes ``FundingError("rejected by the wallet (4001): <message>")`` (nothing is
    sent), ``4100`` an unauthorized request, ``4902`` an unknown chain, any other code an RPC
    failure naming it. That ``FundingError`` carries this exception as its ``__cause__``.

    Any *other* exception a provider raises is an internal failure of the provider (JSON-RPC
    code ``-32603``, with the exception's ``repr()``), chained the same way.

    This is not a ``DepositSDKError``: depositkit never raises it, hosts do.

    Attributes:
        code: the EIP-1193 (or JSON-RPC) error code, an ``int`` fitting 64 bits.
        message: what the wallet says.

    >>> err = ProviderError(ProviderError.USER_REJECTED, "User rejected the request.")
    >>> err.code, err.message
    (4001, 'User rejected the request.')
    >>> str(err)
    'User rejected the request. (4001)'
    """

    USER_REJECTED = 4001
    """EIP-1193: the user rejected the request."""
    UNAUTHORIZED = 4100
    """EIP-1193: the method or account is not authorized."""
    UNSUPPORTED_METHOD = 4200
    """EIP-1193: the provider does not support the method."""
    UNRECOGNIZED_CHAIN = 4902
    """EIP-3326: the wallet does not know the chain."""
    INTERNAL = -32603
    """JSON-RPC: internal error."""

    code: int
    message: str

    def __init__(self, code: int, message: str) -> None:
        if isinstance(code, bool) or not isinstance(code, int):
            raise TypeError(f"code must be an int, not {type(code).__name__}")
        if not _I64_MIN <= code <= _I64_MAX:
            raise ValueError(f"code must fit 64 bits, got {code}")
        if not isinstance(message, str):
            raise TypeError(f"message must be a str, not {type(message).__name__}")
        super().__init__(code, message)
        self.code = int(code)
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    def __repr__(self) -> str:
        return f"ProviderError({self.code!r}, {self.message!r})"
