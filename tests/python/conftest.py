"""Shared helpers of the depositkit Python suite.

Run from the repository root after ``scripts/python-env.sh``::

    .venv/bin/pytest tests/python -q
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Optional

import pytest

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58encode(data: bytes) -> str:
    """Base58 (Bitcoin alphabet), written out here so the suite needs no third-party encoder."""
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, rem = divmod(n, 58)
        out = B58_ALPHABET[rem] + out
    leading_zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * leading_zeros + out


@contextlib.contextmanager
def raises_exactly(
    cls: type[BaseException], *fragments: str, builtin: Optional[type[BaseException]] = None
) -> Iterator[pytest.ExceptionInfo[BaseException]]:
    """Expects an exception of exactly ``cls`` (not a subclass, not a parent) whose message
    contains every fragment, and which is also an instance of ``builtin`` when given."""
    with pytest.raises(BaseException) as info:
        yield info
    assert type(info.value) is cls, f"expected {cls.__name__}, got {type(info.value)!r}: {info.value}"
    if builtin is not None:
        assert isinstance(info.value, builtin)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
