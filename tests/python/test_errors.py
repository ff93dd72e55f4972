"""The exception hierarchy, the one conversion of core errors, and bad input of every kind."""

from __future__ import annotations

import pickle
import random

import pytest

import depositkit
import depositkit.exceptions as exceptions
from depositkit import (
    CHAIN,
    ConfigurationError,
    DepositSDKError,
    InvalidArgumentError,
    _native,
)

from conftest import raises_exactly

# class name -> (code, direct bases by name): the table of ARCHITECTURE.md "Errors".
HIERARCHY = {
    "DepositSDKError": (1, ("Exception",)),
    "InvalidArgumentError": (100, ("DepositSDKError", "ValueError")),
    "ConfigurationError": (200, ("DepositSDKError", "ValueError")),
    "AuthenticationError": (300, ("DepositSDKError",)),
    "JwtError": (301, ("DepositSDKError",)),
    "UniversalAccountError": (400, ("DepositSDKError",)),
    "SweepError": (500, ("DepositSDKError",)),
    "RefundError": (501, ("DepositSDKError",)),
    "FundingError": (502, ("DepositSDKError",)),
    "NetworkError": (600, ("DepositSDKError", "ConnectionError")),
    "DepositTimeoutError": (601, ("NetworkError", "TimeoutError")),
    "ProtocolError": (602, ("DepositSDKError",)),
    "RpcError": (603, ("DepositSDKError",)),
    "NotFoundError": (700, ("DepositSDKError", "LookupError")),
    "InternalError": (900, ("DepositSDKError",)),
}

# Where a kind also is a built-in, so that `except <builtin>` catches it.
BUILTINS = {
    "InvalidArgumentError": ValueError,
    "ConfigurationError": ValueError,
    "NetworkError": ConnectionError,
    "DepositTimeoutError": TimeoutError,
    "NotFoundError": LookupError,
}


class TestHierarchy:
    @pytest.mark.parametrize("name", list(HIERARCHY))
    def test_table(self, name: str) -> None:
        code, bases = HIERARCHY[name]
        cls = getattr(exceptions, name)
        assert getattr(depositkit, name) is cls
        assert cls.__module__ == "depositkit.exceptions"
        assert tuple(b.__name__ for b in cls.__bases__) == bases
        assert issubclass(cls, DepositSDKError)
        assert cls.code == code
        assert cls.kind == name
        if name in BUILTINS:
            assert issubclass(cls, BUILTINS[name])

    def test_timeout_is_a_network_error_and_a_timeout(self) -> None:
        err = depositkit.DepositTimeoutError("took too long")
        assert isinstance(err, depositkit.NetworkError)
        assert isinstance(err, TimeoutError)
        assert isinstance(err, ConnectionError)
        assert isinstance(err, OSError)

    def test_every_core_kind_has_its_class_and_nothing_more(self) -> None:
        kinds = dict(_native._error_kinds())
        assert kinds == {name: code for name, (code, _) in HIERARCHY.items()}
        assert set(exceptions.__all__) == set(HIERARCHY) | {"ConfigurationTypeError"}
        assert len(set(kinds.values())) == len(kinds), "codes are unique"

    def test_a_wrong_option_type_is_a_configuration_error_and_a_type_error(self) -> None:
        cls = exceptions.ConfigurationTypeError
        assert depositkit.ConfigurationTypeError is cls
        assert cls.__bases__ == (exceptions.ConfigurationError, TypeError)
        assert issubclass(cls, ValueError) and issubclass(cls, DepositSDKError)
        assert (cls.code, cls.kind) == (200, "ConfigurationError")
        again = pickle.loads(pickle.dumps(cls("x must be an int, not str")))
        assert type(again) is cls and str(again) == "x must be an int, not str"

    @pytest.mark.parametrize("name", list(HIERARCHY))
    def test_constructed_from_python_with_one_message(self, name: str) -> None:
        cls = getattr(exceptions, name)
        err = cls("something broke: 42")
        assert str(err) == "something broke: 42"
        assert err.args == ("something broke: 42",)
        again = pickle.loads(pickle.dumps(err))
        assert type(again) is cls and str(again) == str(err)


class TestConversionOfCoreErrors:
    @pytest.mark.parametrize("name", list(HIERARCHY))
    def test_each_kind_becomes_its_class_with_the_core_message(self, name: str) -> None:
        code, _ = HIERARCHY[name]
        cls = getattr(exceptions, name)
        with raises_exactly(cls, builtin=BUILTINS.get(name)) as info:
            _native._raise_error(code, f"{name} happened with value 7")
        err = info.value
        assert str(err) == f"{name} happened with value 7"
        assert err.args == (f"{name} happened with value 7",)
        assert err.code == code  # type: ignore[attr-defined]
        assert err.kind == name  # type: ignore[attr-defined]
        if isinstance(err, OSError):
            # One message argument, not (errno, strerror).
            assert err.errno is None and err.strerror is None

    def test_rpc_error_carries_the_json_rpc_object(self) -> None:
        with raises_exactly(depositkit.RpcError) as info:
            _native._raise_error(603, "getUserInfo", (-32001, "user not found", '{"uid": "u1"}'))
        err = info.value
        assert str(err) == "getUserInfo failed: JSON-RPC error -32001: user not found"
        assert err.rpc_code == -32001  # type: ignore[attr-defined]
        assert err.rpc_message == "user not found"  # type: ignore[attr-defined]
        assert err.rpc_data == {"uid": "u1"}  # type: ignore[attr-defined]

    def test_unknown_code_is_refused(self) -> None:
        with pytest.raises(ValueError, match="no error kind has code 42"):
            _native._raise_error(42, "x")


ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"

# (call, exact class, built-in it also is, fragments the message must contain)
BAD_INPUTS = [
    (lambda: depositkit.validate_address_for_chain("0xnope", CHAIN.BASE), ConfigurationError, ValueError, ['"0xnope"', "Base (8453)"]),
    (lambda: depositkit.validate_address_for_chain(ADDRESS, 424242), ConfigurationError, ValueError, ["424242"]),
    (lambda: depositkit.validate_address_for_chain(ADDRESS, -3), ConfigurationError, ValueError, ["-3"]),
    (lambda: depositkit.get_token_decimals("DOGE"), InvalidArgumentError, ValueError, ['"DOGE"']),
    (lambda: depositkit.get_token_decimals(" usdc"), InvalidArgumentError, ValueError, ['" usdc"']),
    (lambda: depositkit.get_token_decimals(""), InvalidArgumentError, ValueError, ['""']),
    (lambda: depositkit.is_supported_destination_token("WBTC", CHAIN.BASE), InvalidArgumentError, ValueError, ['"WBTC"']),
    (lambda: depositkit.is_supported_destination_token("WBTC", -1), InvalidArgumentError, ValueError, ['"WBTC"']),
    (lambda: depositkit.is_onramp_token_supported("usd", CHAIN.BASE), InvalidArgumentError, ValueError, ['"usd"']),
    (lambda: depositkit.token_info("ethereum", CHAIN.BASE), InvalidArgumentError, ValueError, ['"ethereum"']),
    (lambda: depositkit.format_units(-5, 6), InvalidArgumentError, ValueError, ["-5"]),
    (lambda: depositkit.format_units(2**256, 6), InvalidArgumentError, ValueError, [str(2**256)]),
    (lambda: depositkit.format_units(5, 78), InvalidArgumentError, ValueError, ["78"]),
    (lambda: depositkit.format_units(5, -1), InvalidArgumentError, ValueError, ["-1"]),
    (lambda: depositkit.parse_units("1.5.", 6), InvalidArgumentError, ValueError, ['"1.5."']),
    (lambda: depositkit.parse_units("1", 2**70), InvalidArgumentError, ValueError, [str(2**70)]),
    # Wrong types: TypeError naming the argument and the type.
    (lambda: depositkit.is_valid_evm_address(None), TypeError, TypeError, ["addr", "NoneType"]),
    (lambda: depositkit.is_valid_evm_address(b"0x00"), TypeError, TypeError, ["addr", "bytes"]),
    (lambda: depositkit.is_valid_solana_address(123), TypeError, TypeError, ["addr", "int"]),
    (lambda: depositkit.validate_address_for_chain(0x1234, 1), TypeError, TypeError, ["addr", "int"]),
    (lambda: depositkit.validate_address_for_chain(ADDRESS, "8453"), TypeError, TypeError, ["chain_id", "str"]),
    (lambda: depositkit.get_chain_name(1.0), TypeError, TypeError, ["chain_id", "float"]),
    (lambda: depositkit.get_chain_name(True), TypeError, TypeError, ["chain_id", "bool"]),
    (lambda: depositkit.is_valid_destination_chain(None), TypeError, TypeError, ["chain_id", "NoneType"]),
    (lambda: depositkit.get_address_type("101"), TypeError, TypeError, ["chain_id", "str"]),
    (lambda: depositkit.get_token_decimals(6), TypeError, TypeError, ["token", "int"]),
    (lambda: depositkit.get_token_decimals(None), TypeError, TypeError, ["token", "NoneType"]),
    (lambda: depositkit.get_token_decimals("USDC", "56"), TypeError, TypeError, ["chain_id", "str"]),
    (lambda: depositkit.token_info(b"USDC", 1), TypeError, TypeError, ["token", "bytes"]),
    (lambda: depositkit.format_units(True, 6), TypeError, TypeError, ["raw", "bool"]),
    (lambda: depositkit.format_units(1.5, 6), TypeError, TypeError, ["raw", "float"]),
    (lambda: depositkit.parse_units(15, 6), TypeError, TypeError, ["text", "int"]),
]


@pytest.mark.parametrize(("call", "cls", "builtin", "fragments"), BAD_INPUTS)
def test_bad_input_raises_the_right_class_naming_the_value(call, cls, builtin, fragments) -> None:  # type: ignore[no-untyped-def]
    with raises_exactly(cls, *fragments, builtin=builtin):
        call()


def test_configuration_error_is_caught_as_value_error() -> None:
    with pytest.raises(ValueError):
        depositkit.validate_address_for_chain("nope", CHAIN.ETHEREUM)
    with pytest.raises(DepositSDKError):
        depositkit.validate_address_for_chain("nope", CHAIN.ETHEREUM)


def test_no_input_makes_rust_panic() -> None:
    """Every function, fed odd values of every type: only Exception subclasses come out, never
    pyo3's PanicException (a BaseException)."""
    rng = random.Random(99)
    values: list[object] = [
        None, True, False, 0, 1, -1, 2**64, -(2**64), 2**256, 2**256 - 1, 10**5000, 1.5,
        float("nan"), "", " ", "\0", "\ud800", "é" * 50, "x" * 100_000, "0x" + "f" * 40,
        "1" * 44, "1" * 45, b"bytes", [], {}, object(), CHAIN.BASE, depositkit.TokenType.SOL,
        "usdc", "1.5", ".", "9" * 100,
    ]
    values += ["".join(rng.choice("0123456789.xX-+eE ") for _ in range(rng.randint(0, 90))) for _ in range(100)]
    functions = [
        (depositkit.get_chain_name, 1),
        (depositkit.is_valid_destination_chain, 1),
        (depositkit.get_address_type, 1),
        (depositkit.is_valid_evm_address, 1),
        (depositkit.is_valid_solana_address, 1),
        (depositkit.get_token_decimals, 1),
        (depositkit.get_token_decimals, 2),
        (depositkit.is_supported_destination_token, 2),
        (depositkit.is_onramp_token_supported, 2),
        (depositkit.token_info, 2),
        (depositkit.validate_address_for_chain, 2),
        (depositkit.format_units, 2),
        (depositkit.parse_units, 2),
    ]
    for function, arity in functions:
        for first in values:
            seconds = values if arity == 2 else [None]
            for second in seconds:
                args = (first,) if arity == 1 else (first, second)
                try:
                    function(*args)
                except (DepositSDKError, TypeError):
                    pass
