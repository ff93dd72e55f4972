"""The CHAIN table, TokenType, the constants, and the destination and onramp rules (spec §4)."""

from __future__ import annotations

import enum

import pytest

import depositkit
from depositkit import CHAIN, TokenType

SPEC_CHAINS = [
    ("ETHEREUM", 1, "Ethereum"),
    ("OPTIMISM", 10, "OP (Optimism)"),
    ("BNB", 56, "BNB Chain"),
    ("POLYGON", 137, "Polygon"),
    ("MONAD", 143, "Monad"),
    ("SONIC", 146, "Sonic"),
    ("XLAYER", 196, "X Layer"),
    ("HYPERVM", 999, "HyperEVM"),
    ("MERLIN", 4200, "Merlin"),
    ("MANTLE", 5000, "Mantle"),
    ("BASE", 8453, "Base"),
    ("ARBITRUM", 42161, "Arbitrum"),
    ("AVALANCHE", 43114, "Avalanche"),
    ("LINEA", 59144, "Linea"),
    ("PLASMA", 9745, "Plasma"),
    ("BERACHAIN", 80094, "Berachain"),
    ("SOLANA", 101, "Solana"),
]

# Spec §4 "Destination rules": columns Ethereum, Base, Arbitrum, BNB, Solana.
DESTINATION_COLUMNS = [CHAIN.ETHEREUM, CHAIN.BASE, CHAIN.ARBITRUM, CHAIN.BNB, CHAIN.SOLANA]
DESTINATION_MATRIX = {
    "USDC": [True, True, True, True, True],
    "USDT": [True, False, True, True, True],
    "ETH": [True, True, True, True, False],
    "SOL": [False, False, False, False, True],
    # Not rows of the spec's table: never deliverable.
    "BTC": [False, False, False, False, False],
    "BNB": [False, False, False, False, False],
}

ONRAMP_CHAINS = [CHAIN.ETHEREUM, CHAIN.BNB, CHAIN.BASE, CHAIN.ARBITRUM, CHAIN.SOLANA]
# Spec §4 onramp rules: stablecoins everywhere, ETH on Ethereum and Base, BNB on BNB, SOL on Solana.
ONRAMP_MATRIX = {
    "USDC": {CHAIN.ETHEREUM, CHAIN.BNB, CHAIN.BASE, CHAIN.ARBITRUM, CHAIN.SOLANA},
    "USDT": {CHAIN.ETHEREUM, CHAIN.BNB, CHAIN.BASE, CHAIN.ARBITRUM, CHAIN.SOLANA},
    "ETH": {CHAIN.ETHEREUM, CHAIN.BASE},
    "BNB": {CHAIN.BNB},
    "SOL": {CHAIN.SOLANA},
    "BTC": set(),
}


class TestChain:
    def test_is_an_int_enum_with_the_seventeen_chains_of_the_spec(self) -> None:
        assert issubclass(CHAIN, enum.IntEnum)
        assert [(c.name, c.value) for c in CHAIN] == [(n, i) for n, i, _ in SPEC_CHAINS]
        assert len(CHAIN) == 17
        assert CHAIN.BASE == 8453
        assert CHAIN(101) is CHAIN.SOLANA
        assert CHAIN.__module__ == "depositkit"
        assert CHAIN.__qualname__ == "CHAIN"

    @pytest.mark.parametrize(("name", "chain_id", "display"), SPEC_CHAINS)
    def test_names(self, name: str, chain_id: int, display: str) -> None:
        assert CHAIN[name] == chain_id
        assert depositkit.get_chain_name(chain_id) == display
        assert depositkit.get_chain_name(CHAIN[name]) == display

    @pytest.mark.parametrize("chain_id", [0, 2, 7, 12345, 2**64 - 1])
    def test_unknown_ids_have_a_placeholder_name(self, chain_id: int) -> None:
        assert depositkit.get_chain_name(chain_id) == f"Unknown Chain ({chain_id})"

    @pytest.mark.parametrize("chain_id", [-1, -(2**70), 2**64, 2**200])
    def test_ids_outside_u64_are_unknown_chains(self, chain_id: int) -> None:
        assert depositkit.get_chain_name(chain_id) == f"Unknown Chain ({chain_id})"
        assert depositkit.is_valid_destination_chain(chain_id) is False
        assert depositkit.is_supported_destination_token("USDC", chain_id) is False
        assert depositkit.is_onramp_token_supported("USDC", chain_id) is False
        assert depositkit.get_address_type(chain_id) == "evm"
        assert depositkit.token_info("USDC", chain_id) is None
        assert depositkit.get_token_decimals("USDC", chain_id) == 6

    def test_destination_chains(self) -> None:
        destinations = {c for c in CHAIN if depositkit.is_valid_destination_chain(c)}
        assert destinations == set(DESTINATION_COLUMNS)
        assert depositkit.is_valid_destination_chain(CHAIN.XLAYER) is False
        assert depositkit.is_valid_destination_chain(0) is False

    def test_address_types(self) -> None:
        for chain in CHAIN:
            expected = "solana" if chain is CHAIN.SOLANA else "evm"
            assert depositkit.get_address_type(chain) == expected
        assert depositkit.get_address_type(123456) == "evm"


class TestTokenType:
    def test_members(self) -> None:
        assert [t.name for t in TokenType] == ["ETH", "USDC", "USDT", "BTC", "SOL", "BNB"]
        for token in TokenType:
            assert isinstance(token, str)
            assert token.value == token.name
            assert token == token.name
            assert str(token) == token.name
        assert issubclass(TokenType, enum.Enum)
        assert TokenType("USDC") is TokenType.USDC
        assert TokenType.__module__ == "depositkit"

    def test_constants(self) -> None:
        assert depositkit.DEFAULT_SUPPORTED_TOKENS == tuple(TokenType)
        assert all(type(t) is TokenType for t in depositkit.DEFAULT_SUPPORTED_TOKENS)
        assert depositkit.DEFAULT_MIN_VALUE_USD == 0.5
        assert isinstance(depositkit.DEFAULT_MIN_VALUE_USD, float)
        assert depositkit.DEFAULT_POLLING_INTERVAL_MS == 3000
        assert depositkit.MAX_DECIMALS == 77
        assert isinstance(depositkit.__version__, str) and depositkit.__version__.count(".") == 2

    @pytest.mark.parametrize("spelling", ["usdc", "USDC", "Usdc", "uSdC", TokenType.USDC])
    def test_tokens_are_accepted_in_any_case(self, spelling: str) -> None:
        assert depositkit.get_token_decimals(spelling) == 6
        assert depositkit.is_supported_destination_token(spelling, CHAIN.BASE) is True


class TestDestinationMatrix:
    @pytest.mark.parametrize("token", list(DESTINATION_MATRIX))
    @pytest.mark.parametrize("column", range(5))
    def test_cell(self, token: str, column: int) -> None:
        chain = DESTINATION_COLUMNS[column]
        expected = DESTINATION_MATRIX[token][column]
        assert depositkit.is_supported_destination_token(token, chain) is expected
        assert depositkit.is_supported_destination_token(TokenType(token), int(chain)) is expected

    @pytest.mark.parametrize("token", list(TokenType))
    def test_no_other_chain_is_a_destination(self, token: TokenType) -> None:
        for chain in CHAIN:
            if chain not in DESTINATION_COLUMNS:
                assert depositkit.is_supported_destination_token(token, chain) is False, chain
        assert depositkit.is_supported_destination_token(token, CHAIN.XLAYER) is False
        assert depositkit.is_supported_destination_token(token, 0) is False


class TestOnramp:
    @pytest.mark.parametrize("token", list(ONRAMP_MATRIX))
    def test_every_chain(self, token: str) -> None:
        for chain in CHAIN:
            expected = chain in ONRAMP_MATRIX[token]
            assert depositkit.is_onramp_token_supported(token, chain) is expected, (token, chain)

    def test_x_layer_is_unsupported(self) -> None:
        for token in TokenType:
            assert depositkit.is_onramp_token_supported(token, CHAIN.XLAYER) is False

    def test_onramp_chains_are_the_spec_list(self) -> None:
        served = {c for c in CHAIN if depositkit.is_onramp_token_supported("USDC", c)}
        assert served == set(ONRAMP_CHAINS)


class TestTokenDetails:
    @pytest.mark.parametrize(
        ("token", "chain_id", "decimals"),
        [
            ("ETH", None, 18),
            ("USDC", None, 6),
            ("USDT", None, 6),
            ("BTC", None, 8),
            ("SOL", None, 9),
            ("BNB", None, 18),
            ("USDC", CHAIN.BNB, 18),
            ("USDT", CHAIN.BNB, 18),
            ("USDC", CHAIN.ETHEREUM, 6),
            ("USDT", CHAIN.SOLANA, 6),
            ("ETH", CHAIN.BNB, 18),
            ("SOL", CHAIN.SOLANA, 9),
            ("USDC", 12345, 6),
        ],
    )
    def test_decimals(self, token: str, chain_id: int | None, decimals: int) -> None:
        assert depositkit.get_token_decimals(token, chain_id) == decimals
        if chain_id is None:
            assert depositkit.get_token_decimals(token) == decimals

    def test_token_info_has_the_core_record_shape(self) -> None:
        info = depositkit.token_info("usdc", CHAIN.BNB)
        assert info == {
            "token": "USDC",
            "chainId": 56,
            "contract": "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d",
            "bridgedContract": None,
            "decimals": 18,
        }
        arbitrum = depositkit.token_info(TokenType.USDC, CHAIN.ARBITRUM)
        assert arbitrum is not None
        assert arbitrum["bridgedContract"] == "0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8"
        solana = depositkit.token_info("USDC", CHAIN.SOLANA)
        assert solana is not None and solana["contract"] == "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"

    def test_native_assets_have_no_contract(self) -> None:
        for token, chain in [("ETH", CHAIN.BASE), ("SOL", CHAIN.SOLANA), ("BNB", CHAIN.BNB)]:
            info = depositkit.token_info(token, chain)
            assert info is not None and info["contract"] is None, (token, chain)
        bridged_eth = depositkit.token_info("ETH", CHAIN.BNB)
        assert bridged_eth is not None and bridged_eth["contract"] is not None

    def test_unknown_pairs(self) -> None:
        assert depositkit.token_info("ETH", CHAIN.POLYGON) is None
        assert depositkit.token_info("USDC", CHAIN.HYPERVM) is None
        assert depositkit.token_info("USDC", 7) is None

    def test_every_contract_is_valid_for_its_chain(self) -> None:
        for chain in CHAIN:
            for token in TokenType:
                info = depositkit.token_info(token, chain)
                if info is None:
                    continue
                assert info["chainId"] == chain and info["token"] == token
                assert info["decimals"] == depositkit.get_token_decimals(token, chain)
                for address in (info["contract"], info["bridgedContract"]):
                    if address is not None:
                        depositkit.validate_address_for_chain(address, chain)
