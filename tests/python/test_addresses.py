"""EVM (EIP-55) and Solana (base58, 32 bytes) address checks."""

from __future__ import annotations

import random

import pytest

import depositkit
from depositkit import CHAIN, ConfigurationError

from conftest import b58encode, raises_exactly

# The test vectors of EIP-55.
EIP55 = [
    "0x52908400098527886E0F7030069857D2E4169EE7",
    "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77",
    "0x27b1fdb04752bbc536007a920d24acb045561c26",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
]

SOLANA_VALID = [
    "11111111111111111111111111111111",
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
    "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
    "So11111111111111111111111111111111111111112",
]


def flip_case_at(address: str, index: int) -> str:
    return address[:index] + address[index].swapcase() + address[index + 1 :]


class TestEvm:
    @pytest.mark.parametrize("address", EIP55)
    def test_eip55_vectors_are_valid(self, address: str) -> None:
        assert depositkit.is_valid_evm_address(address) is True

    @pytest.mark.parametrize("address", EIP55)
    def test_flipping_the_case_of_any_letter_invalidates(self, address: str) -> None:
        letters = [i for i, c in enumerate(address) if i >= 2 and c.isalpha()]
        assert letters
        for i in letters:
            flipped = flip_case_at(address, i)
            assert depositkit.is_valid_evm_address(flipped) is False, flipped

    @pytest.mark.parametrize("address", EIP55)
    def test_all_lower_and_all_upper_carry_no_checksum(self, address: str) -> None:
        assert depositkit.is_valid_evm_address(address.lower()) is True
        assert depositkit.is_valid_evm_address("0x" + address[2:].upper()) is True

    @pytest.mark.parametrize(
        "address",
        [
            "",
            "0x",
            "52908400098527886E0F7030069857D2E4169EE7",
            "0X52908400098527886E0F7030069857D2E4169EE7",
            "0x52908400098527886E0F7030069857D2E4169EE",
            "0x52908400098527886E0F7030069857D2E4169EE77",
            "0x52908400098527886E0F7030069857D2E4169EEG",
            " 0x52908400098527886E0F7030069857D2E4169EE7",
            "0x52908400098527886E0F7030069857D2E4169EE7 ",
            "0x52908400098527886E0F7030069857D2E4169EÉ",
            "0x52908400098527886E0F7030069857D2E4169EE\0",
            "0x\ud800" + "0" * 39,
        ],
    )
    def test_malformed_addresses_are_invalid(self, address: str) -> None:
        assert depositkit.is_valid_evm_address(address) is False

    def test_agrees_with_eth_utils_on_random_addresses(self) -> None:
        eth_utils = pytest.importorskip("eth_utils")
        rng = random.Random(55)
        for _ in range(300):
            checksummed = eth_utils.to_checksum_address("0x" + rng.getrandbits(160).to_bytes(20, "big").hex())
            candidates = [checksummed, checksummed.lower(), "0x" + checksummed[2:].upper()]
            letters = [i for i, c in enumerate(checksummed) if i >= 2 and c.isalpha()]
            if letters:
                candidates.append(flip_case_at(checksummed, rng.choice(letters)))
            for address in candidates:
                # eth_utils.is_address no longer checks checksums (v5): mixed case must pass
                # is_checksum_address, single-case hex needs only the right shape.
                digits = address[2:]
                single_case = digits == digits.lower() or digits == digits.upper()
                expected = eth_utils.is_hex_address(address) and (
                    single_case or eth_utils.is_checksum_address(address)
                )
                assert depositkit.is_valid_evm_address(address) is expected, address


class TestSolana:
    @pytest.mark.parametrize("address", SOLANA_VALID)
    def test_vectors_are_valid(self, address: str) -> None:
        assert depositkit.is_valid_solana_address(address) is True

    @pytest.mark.parametrize("length", [0, 1, 31, 33, 64])
    def test_other_decoded_lengths_are_invalid(self, length: int) -> None:
        rng = random.Random(length)
        for key in (bytes([7]) * length, bytes(length), rng.randbytes(length)):
            assert depositkit.is_valid_solana_address(b58encode(key)) is False, key

    def test_31_and_33_byte_keys_are_invalid_and_32_valid(self) -> None:
        thirty_three = bytes(32) + b"\x01"  # short enough in base58 to reach the decoder
        assert len(b58encode(thirty_three)) <= 44
        assert depositkit.is_valid_solana_address(b58encode(thirty_three)) is False
        assert depositkit.is_valid_solana_address(b58encode(bytes([7]) * 31)) is False
        assert depositkit.is_valid_solana_address(b58encode(bytes([7]) * 32)) is True
        rng = random.Random(32)
        for _ in range(200):
            assert depositkit.is_valid_solana_address(b58encode(rng.getrandbits(256).to_bytes(32, "big")))

    @pytest.mark.parametrize("bad", ["0", "O", "I", "l"])
    def test_characters_outside_base58_are_invalid(self, bad: str) -> None:
        address = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1" + bad
        assert depositkit.is_valid_solana_address(address) is False
        with raises_exactly(ConfigurationError, repr(bad)[1:-1], address, builtin=ValueError):
            depositkit.validate_address_for_chain(address, CHAIN.SOLANA)

    @pytest.mark.parametrize("address", ["", " ", "1" * 45, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v ", "\ud800"])
    def test_malformed_addresses_are_invalid(self, address: str) -> None:
        assert depositkit.is_valid_solana_address(address) is False

    def test_agrees_with_the_base58_package(self) -> None:
        base58 = pytest.importorskip("base58")
        rng = random.Random(58)
        for _ in range(300):
            text = b58encode(rng.randbytes(rng.choice([31, 32, 33])))
            assert depositkit.is_valid_solana_address(text) is (len(base58.b58decode(text)) == 32), text


class TestValidateAddressForChain:
    def test_returns_the_address_type(self) -> None:
        for chain in CHAIN:
            if chain is CHAIN.SOLANA:
                assert depositkit.validate_address_for_chain(SOLANA_VALID[1], chain) == "solana"
            else:
                assert depositkit.validate_address_for_chain(EIP55[0], chain) == "evm"

    def test_wrong_kind_of_address_names_chain_address_and_reason(self) -> None:
        with raises_exactly(ConfigurationError, "Invalid Solana address format for Solana (101)", EIP55[0], builtin=ValueError):
            depositkit.validate_address_for_chain(EIP55[0], CHAIN.SOLANA)
        with raises_exactly(ConfigurationError, "Invalid EVM address format for Base (8453)", SOLANA_VALID[1]):
            depositkit.validate_address_for_chain(SOLANA_VALID[1], CHAIN.BASE)

    def test_core_message_is_unchanged(self) -> None:
        with raises_exactly(ConfigurationError) as info:
            depositkit.validate_address_for_chain("0x12", 1)
        assert str(info.value) == (
            'Invalid EVM address format for Ethereum (1): "0x12": expected 40 hex digits after 0x, found 2'
        )

    def test_checksum_mismatch_names_the_expected_address(self) -> None:
        bad = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"
        with raises_exactly(ConfigurationError, bad, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "EIP-55"):
            depositkit.validate_address_for_chain(bad, CHAIN.ETHEREUM)

    @pytest.mark.parametrize("chain_id", [0, 7, 12345, -1, 2**64, 2**300])
    def test_unknown_chain(self, chain_id: int) -> None:
        with raises_exactly(ConfigurationError, builtin=ValueError) as info:
            depositkit.validate_address_for_chain(EIP55[0], chain_id)
        assert str(info.value) == f"Unknown chain ID: {chain_id}"

    def test_long_input_is_quoted_short(self) -> None:
        with raises_exactly(ConfigurationError, "(10000 characters)") as info:
            depositkit.validate_address_for_chain("x" * 10_000, CHAIN.BASE)
        assert len(str(info.value)) < 300
