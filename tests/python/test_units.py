"""format_units / parse_units: exact over the whole 256-bit range, for 0 to 77 decimals."""

from __future__ import annotations

import random
from decimal import Decimal, localcontext

import pytest

import depositkit
from depositkit import CHAIN, InvalidArgumentError

from conftest import raises_exactly

MAX = 2**256 - 1
MAX_TEXT = "115792089237316195423570985008687907853269984665640564039457584007913129639935"


def decimal_format(raw: int, decimals: int) -> str:
    """An independent peer: Decimal with enough precision, trailing zeros trimmed."""
    with localcontext() as ctx:
        ctx.prec = 200
        text = format(Decimal(raw).scaleb(-decimals), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


class TestFormat:
    @pytest.mark.parametrize(
        ("raw", "decimals", "text"),
        [
            (1_500_000, 6, "1.5"),
            (2_000_000, 6, "2"),
            (1, 6, "0.000001"),
            (0, 18, "0"),
            (0, 0, "0"),
            (123, 0, "123"),
            (400_000_000_000_000_000, 18, "0.4"),
            (10**77, 77, "1"),
            (MAX, 0, MAX_TEXT),
            (MAX, 77, "1." + MAX_TEXT[1:]),
            (MAX, 18, MAX_TEXT[:-18] + "." + MAX_TEXT[-18:]),
            (2**64, 0, "18446744073709551616"),
            (2**64 - 1, 0, "18446744073709551615"),
        ],
    )
    def test_values(self, raw: int, decimals: int, text: str) -> None:
        assert depositkit.format_units(raw, decimals) == text

    def test_bnb_chain_usdc_has_18_decimals(self) -> None:
        decimals = depositkit.get_token_decimals("USDC", CHAIN.BNB)
        assert decimals == 18
        assert depositkit.format_units(1_500_000_000_000_000_000, decimals) == "1.5"
        assert depositkit.parse_units("1.5", decimals) == 1_500_000_000_000_000_000
        assert depositkit.format_units(1_500_000, depositkit.get_token_decimals("USDC", CHAIN.BASE)) == "1.5"

    def test_int_subclasses_are_amounts(self) -> None:
        assert depositkit.format_units(CHAIN.BASE, 2) == "84.53"

    def test_agrees_with_decimal(self) -> None:
        rng = random.Random(7)
        for _ in range(500):
            raw = rng.getrandbits(rng.randint(1, 256))
            decimals = rng.randint(0, 77)
            assert depositkit.format_units(raw, decimals) == decimal_format(raw, decimals), (raw, decimals)


class TestParse:
    @pytest.mark.parametrize(
        ("text", "decimals", "raw"),
        [
            ("1.5", 6, 1_500_000),
            ("0.4", 18, 400_000_000_000_000_000),
            ("100", 18, 100 * 10**18),
            (".5", 1, 5),
            ("5.", 1, 50),
            ("000.000", 6, 0),
            ("0007", 0, 7),
            (MAX_TEXT, 0, MAX),
            ("1." + MAX_TEXT[1:], 77, MAX),
            ("18446744073709551616", 0, 2**64),
        ],
    )
    def test_values(self, text: str, decimals: int, raw: int) -> None:
        value = depositkit.parse_units(text, decimals)
        assert value == raw
        assert type(value) is int

    def test_round_trip_over_random_256_bit_ints(self) -> None:
        rng = random.Random(20240601)
        for _ in range(3000):
            x = rng.getrandbits(rng.choice([8, 64, 65, 128, 200, 256]))
            d = rng.randint(0, 77)
            assert depositkit.parse_units(depositkit.format_units(x, d), d) == x, (x, d)
        for x in (0, 1, MAX, MAX - 1, 2**255, 2**64 - 1, 2**64):
            for d in (0, 1, 6, 18, 76, 77):
                assert depositkit.parse_units(depositkit.format_units(x, d), d) == x, (x, d)


class TestBadInput:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("", 'invalid amount "": it is empty'),
            ("-1", 'invalid amount "-1": signs are not allowed'),
            ("+1", 'invalid amount "+1": signs are not allowed'),
            ("1e6", 'invalid amount "1e6": exponents are not allowed'),
            ("1 000", 'invalid amount "1 000": spaces are not allowed'),
            (" 1", 'invalid amount " 1": spaces are not allowed'),
            ("1,5", "invalid amount \"1,5\": ',' is not a digit"),
            ("1.2.3", 'invalid amount "1.2.3": more than one decimal point'),
            (".", 'invalid amount ".": it has no digits'),
            ("1.2345678", 'invalid amount "1.2345678": 7 fractional digits is more than the 6 decimals allowed'),
            ("0x10", "invalid amount \"0x10\": 'x' is not a digit"),
            ("NaN", "invalid amount \"NaN\": 'N' is not a digit"),
            ("١", "invalid amount \"١\": '١' is not a digit"),
        ],
    )
    def test_parse_names_the_text_with_the_core_message(self, text: str, message: str) -> None:
        with raises_exactly(InvalidArgumentError, builtin=ValueError) as info:
            depositkit.parse_units(text, 6)
        assert str(info.value) == message

    def test_parse_overflow(self) -> None:
        over = str(2**256)
        with raises_exactly(InvalidArgumentError, over, "exceeds", builtin=ValueError):
            depositkit.parse_units(over, 0)
        with raises_exactly(InvalidArgumentError, '"2"', "exceeds"):
            depositkit.parse_units("2", 77)

    def test_parse_of_unencodable_text_is_an_invalid_amount(self) -> None:
        with raises_exactly(InvalidArgumentError, "invalid amount"):
            depositkit.parse_units("1\ud8005", 6)

    @pytest.mark.parametrize("raw", [-1, -(2**300), 2**256, 2**256 + 12345, 10**100])
    def test_amount_out_of_range(self, raw: int) -> None:
        with raises_exactly(InvalidArgumentError, f"invalid raw amount {raw}", builtin=ValueError):
            depositkit.format_units(raw, 6)

    def test_enormous_amount_is_described_not_printed(self) -> None:
        with raises_exactly(InvalidArgumentError, "invalid raw amount", "bits", "2^256 - 1"):
            depositkit.format_units(10**6000, 6)

    @pytest.mark.parametrize("decimals", [78, 1000, 2**32, 2**64, 2**100, -1, -78, -(2**64)])
    def test_decimals_out_of_range(self, decimals: int) -> None:
        expected = f"decimals {decimals} is out of range: expected 0 to 77"
        for call in (lambda: depositkit.format_units(1, decimals), lambda: depositkit.parse_units("1", decimals)):
            with raises_exactly(InvalidArgumentError, builtin=ValueError) as info:
                call()
            assert str(info.value) == expected

    @pytest.mark.parametrize("raw", [True, False, 1.0, "1", b"1", None, Decimal(1), [1]])
    def test_amount_must_be_an_int(self, raw: object) -> None:
        with raises_exactly(TypeError, "raw must be an int", type(raw).__name__):
            depositkit.format_units(raw, 6)  # type: ignore[arg-type]

    @pytest.mark.parametrize("decimals", [True, 6.0, "6", None])
    def test_decimals_must_be_an_int(self, decimals: object) -> None:
        with raises_exactly(TypeError, "decimals must be an int", type(decimals).__name__):
            depositkit.format_units(1, decimals)  # type: ignore[arg-type]
        with raises_exactly(TypeError, "decimals must be an int", type(decimals).__name__):
            depositkit.parse_units("1", decimals)  # type: ignore[arg-type]

    @pytest.mark.parametrize("text", [1, 1.5, b"1.5", None, Decimal("1.5")])
    def test_text_must_be_a_str(self, text: object) -> None:
        with raises_exactly(TypeError, "text must be a str", type(text).__name__):
            depositkit.parse_units(text, 6)  # type: ignore[arg-type]
