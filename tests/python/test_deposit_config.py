"""depositkit.DepositClient's options (spec §4) and depositkit.Devnet's admin API: every
ConfigurationError case names the option (as Python spells it) and the value, is a ValueError,
and is raised before any request; wrong types are ConfigurationTypeErrors (ConfigurationError and TypeError)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

import depositkit
from depositkit import (
    CHAIN,
    ConfigurationError,
    DepositClient,
    DepositSDKError,
    Devnet,
    InvalidArgumentError,
    TokenType,
)

from conftest import new_owner, new_solana_address, raises_exactly

OWNER = "0x52908400098527886E0F7030069857D2E4169EE7"
SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
# No request ever reaches this: configuration errors are raised before any.
NOWHERE = "http://127.0.0.1:9"


def client(owner: Any = OWNER, destination: Any = None, **options: Any) -> DepositClient:
    options.setdefault("services_url", NOWHERE)
    return DepositClient(owner, {"chain_id": CHAIN.ARBITRUM} if destination is None else destination, **options)


@pytest.mark.parametrize(
    ("owner", "destination", "options", "fragments"),
    [
        pytest.param("0x1234", None, {}, ["owner_address must be a valid EVM address", '"0x1234"'], id="bad-owner"),
        pytest.param("", None, {}, ["owner_address is required"], id="no-owner"),
        pytest.param(SOLANA, None, {}, ["owner_address", SOLANA], id="solana-owner"),
        pytest.param(OWNER, {"chain_id": 7}, {}, ["Invalid destination chain ID: 7"], id="unknown-chain"),
        pytest.param(OWNER, {"chain_id": -1}, {}, ["Invalid destination chain ID: -1"], id="negative-chain"),
        pytest.param(OWNER, {"chain_id": 196}, {}, ["destination.chain_id 196", "X Layer is a deposit source only"], id="xlayer"),
        pytest.param(OWNER, {"chain_id": 10}, {}, ["destination.chain_id 10", "cannot be a destination"], id="optimism"),
        pytest.param(
            OWNER, {"chain_id": 8453, "token": "USDT"}, {},
            ["destination.token USDT cannot be delivered on Base (8453)", "deliverable there: ETH, USDC"],
            id="usdt-to-base",
        ),
        pytest.param(OWNER, {"chain_id": 1, "token": TokenType.SOL}, {}, ["destination.token SOL", "Ethereum (1)"], id="sol-to-ethereum"),
        pytest.param(OWNER, {"chain_id": 101, "address": OWNER}, {}, ["Invalid Solana address format for destination on Solana", OWNER], id="solana-evm-address"),
        pytest.param(OWNER, {"chain_id": 101}, {}, ["Solana", "needs destination.address"], id="solana-default-address"),
        pytest.param(OWNER, {"chain_id": 1, "address": SOLANA}, {}, ["Invalid EVM address format for destination on Ethereum", SOLANA], id="evm-solana-address"),
        pytest.param(OWNER, {"chain_id": 1, "token": "DOGE"}, {}, ['destination.token must be one of', '"DOGE"'], id="unknown-token"),
        pytest.param(OWNER, {"address": OWNER}, {}, ["destination.chain_id is required"], id="no-chain"),
        pytest.param(OWNER, {"chain_id": 1, "chain": 1}, {}, ["destination has an unknown key", '"chain"'], id="unknown-key"),
        pytest.param(
            OWNER, None, {"polling_interval_ms": 500},
            ["polling_interval_ms must be at least 2000 ms", "got 500"], id="polling-below-minimum",
        ),
        pytest.param(OWNER, None, {"polling_interval_ms": -5}, ["polling_interval_ms", "-5"], id="polling-negative"),
        pytest.param(OWNER, None, {"min_polling_interval_ms": 5000}, ["min_polling_interval_ms must be between 1 and 2000", "5000"], id="knob-too-high"),
        pytest.param(OWNER, None, {"min_value_usd": -1}, ["min_value_usd must be a finite number of at least 0", "-1"], id="min-value-negative"),
        pytest.param(OWNER, None, {"min_value_usd": float("nan")}, ["min_value_usd", "NaN"], id="min-value-nan"),
        pytest.param(OWNER, None, {"supported_tokens": ["USDC", "DOGE"]}, ["supported_tokens must be one of", '"DOGE"'], id="unknown-supported-token"),
        pytest.param(OWNER, None, {"supported_tokens": []}, ["supported_tokens is empty"], id="no-tokens"),
        pytest.param(OWNER, None, {"supported_chains": [1, 7]}, ["supported_chains contains an unknown chain ID: 7"], id="unknown-supported-chain"),
        pytest.param(OWNER, None, {"supported_chains": [-3]}, ["supported_chains contains an unknown chain ID: -3"], id="negative-supported-chain"),
        pytest.param(OWNER, None, {"intermediary_address": "nope"}, ["intermediary_address must be a valid EVM address", '"nope"'], id="intermediary"),
        pytest.param(OWNER, None, {"ua_project_id": " "}, ["ua_project_id is empty"], id="project-id"),
        pytest.param(OWNER, None, {"services_url": "ftp://x"}, ["services_url must be an http:// or https:// URL", '"ftp://x"'], id="url-scheme"),
        pytest.param(OWNER, None, {"services_url": None}, ["jwt_service_url is required", "services_url"], id="no-url"),
        pytest.param(OWNER, None, {"refund": {"max_attempts": 0}}, ["refund.max_attempts must be between 1 and 100, got 0"], id="refund-attempts"),
        pytest.param(OWNER, None, {"refund": {"delayMs": 10**12}}, ["refund.delay_ms must be at most a day"], id="refund-camel"),
        pytest.param(OWNER, None, {"refund": {"bogus": 1}}, ["invalid refund", "unknown field `bogus`", "`delay_ms`"], id="refund-unknown-key"),
        pytest.param(OWNER, None, {"refund": {"delay_ms": 1, "delayMs": 2}}, ["refund gives delay_ms twice"], id="refund-twice"),
        pytest.param(OWNER, None, {"notifications": {"max": 0}}, ["notifications.max must be at least 1"], id="notifications"),
        pytest.param(OWNER, None, {"notifications": {"position": "middle"}}, ["invalid notifications", "middle"], id="notifications-position"),
        pytest.param(OWNER, None, {"funding": {"evm_rpc_urls": {101: "http://x"}}}, ["funding.evm_rpc_urls", "not an EVM chain"], id="funding-solana-rpc"),
        pytest.param(OWNER, None, {"funding": {"min_value_usd": -2}}, ["funding.min_value_usd"], id="funding-min-value"),
        pytest.param(OWNER, None, {"onramp": {"fiat_currency": "usd"}}, ["onramp.fiat_currency", '"usd"'], id="onramp-currency"),
        pytest.param(OWNER, None, {"http_retries": 21}, ["http_retries must be at most 20, got 21"], id="http-retries"),
        pytest.param(OWNER, None, {"event_queue_capacity": 0}, ["event_queue_capacity must be at least 1"], id="queue-capacity"),
        pytest.param(OWNER, None, {"call_timeout_ms": 0}, ["call_timeout_ms must be more than 0"], id="call-timeout"),
        pytest.param(OWNER, None, {"reconcile_interval_ms": 0}, ["reconcile_interval_ms must be more than 0", "got 0"], id="reconcile"),
        pytest.param(
            OWNER, None, {"processing_timeout_ms": 86_400_001},
            ["processing_timeout_ms must be more than 0 and at most a day", "86400001"], id="processing-timeout",
        ),
        pytest.param(OWNER, None, {"processing_timeout_ms": -1}, ["processing_timeout_ms must be a non-negative integer", "-1"], id="processing-negative"),
        pytest.param(OWNER, None, {"notifications": {"render_item": "x"}}, ["invalid notifications", "unknown field `render_item`"], id="render-item"),
    ],
)
def test_configuration_errors(owner: str, destination: Any, options: dict[str, Any], fragments: list[str]) -> None:
    with raises_exactly(ConfigurationError, *fragments, builtin=ValueError) as info:
        client(owner, destination, **options)
    assert info.value.code == 200 and info.value.kind == "ConfigurationError"  # type: ignore[attr-defined]
    assert "Ms " not in str(info.value) and "USD " not in str(info.value)  # no camelCase names


def test_credentials_in_a_url_are_never_echoed() -> None:
    with raises_exactly(ConfigurationError, "services_url must not carry credentials") as info:
        client(services_url="http://user:s3cret@127.0.0.1:1")
    assert "s3cret" not in str(info.value)
    with raises_exactly(ConfigurationError, "funding.api_key") as info:
        client(funding={"api_key": ""})


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"polling_interval_ms": "3000"}, "polling_interval_ms must be an int, not str"),
        ({"polling_interval_ms": True}, "polling_interval_ms must be an int, not bool"),
        ({"reconcile_interval_ms": "50"}, "reconcile_interval_ms must be an int, not str"),
        ({"processing_timeout_ms": 1.5}, "processing_timeout_ms must be an int, not float"),
        ({"auto_sweep": 1}, "auto_sweep must be a bool, not int"),
        ({"min_value_usd": "1"}, "min_value_usd must be a number, not str"),
        ({"on_deposit_event": 5}, "on_deposit_event must be callable, not int"),
        ({"supported_tokens": "USDC"}, "supported_tokens must be an iterable of tokens, not str"),
        ({"supported_tokens": [1]}, "supported_tokens must be a TokenType or str, not int"),
        ({"supported_chains": ["1"]}, "supported_chains must contain chain ids (int), not str"),
        ({"services_url": 5}, "services_url must be a str, not int"),
        ({"refund": [("enabled", True)]}, "refund must be a dict, not list"),
        ({"funding": {"api_key": object()}}, "funding.api_key must hold only"),
        ({"notifications": {"render_item": lambda item: "x"}}, "notifications.render_item must hold only"),
        ({"refund": {"enabled": "yes"}}, "invalid refund: invalid type: string \"yes\", expected a boolean"),
        ({"notifications": {"max": "3"}}, "invalid notifications: invalid type: string \"3\""),
        ({"store_path": 3}, "store_path must be a str or os.PathLike, not int"),
        ({"destination": "arbitrum"}, "destination must be a dict with chain_id, address and token"),
        ({"destination": {"chain_id": "42161"}}, "destination.chain_id must be an int, not str"),
        ({"destination": {"chain_id": 1, "token": 5}}, "destination.token must be a TokenType or str, not int"),
    ],
)
def test_wrong_types_are_configuration_errors_that_are_type_errors(options: dict[str, Any], fragment: str) -> None:
    # The one rule for options (top level and nested alike): a ConfigurationError naming the
    # option, which for a wrong type is a ConfigurationTypeError, also a TypeError.
    destination = options.pop("destination", None)
    with raises_exactly(depositkit.ConfigurationTypeError, fragment, builtin=TypeError) as info:
        client(OWNER, destination, **options)
    assert isinstance(info.value, ConfigurationError) and isinstance(info.value, ValueError)
    assert info.value.code == 200 and info.value.kind == "ConfigurationError"  # type: ignore[attr-defined]


def test_an_unknown_keyword_is_pythons_own_type_error() -> None:
    with raises_exactly(TypeError, "bogus"):
        client(OWNER, None, bogus=1)


def test_set_destination_and_user_rpc_options_follow_the_same_rule() -> None:
    c = client(OWNER, None)
    with raises_exactly(depositkit.ConfigurationTypeError, "destination.chain_id must be an int, not str"):
        c.set_destination({"chain_id": "8453"})
    with raises_exactly(ConfigurationError, "Invalid destination chain ID: 7"):
        c.set_destination(7)
    c.close()
    with raises_exactly(depositkit.ConfigurationTypeError, "timeout must be a number of seconds", builtin=TypeError):
        depositkit.UserRpcClient("http://127.0.0.1:1", "p", "k", timeout="5")  # type: ignore[arg-type]
    with raises_exactly(depositkit.ConfigurationTypeError, "base_url must be a str, not int"):
        depositkit.UserRpcClient(5, "p", "k")  # type: ignore[arg-type]


def test_accepted_forms_of_the_options() -> None:
    solana = new_solana_address()
    forms: list[Any] = [
        CHAIN.BASE,
        depositkit.DestinationConfig(CHAIN.SOLANA, solana, TokenType.USDC),
        {"chainId": 56, "address": OWNER.lower(), "token": "eth"},
    ]
    for destination in forms:
        with client(OWNER, destination) as c:
            assert c.status == "idle"
    with client(
        OWNER.lower(),
        intermediary_address=None,
        ua_project_id="proj",
        min_value_usd=Decimal("0.75"),
        supported_tokens=("usdc", TokenType.ETH),
        supported_chains=[CHAIN.BASE, CHAIN.ARBITRUM],
        polling_interval_ms=20,
        min_polling_interval_ms=10,
        auto_sweep=False,
        refund={"enabled": True, "delay_ms": 100, "maxAttempts": 3, "refund_to_sender": False},
        notifications=True,
        funding={"enabled": True, "api_key": "k-secret", "evm_rpc_urls": {8453: "http://rpc"}, "min_value_usd": 1},
        onramp={"mode": "redirect", "fiat_currency": "EUR", "default_fiat_amount": 50},
        jwt_service_url="http://127.0.0.1:9/jwt",
        signer_url="http://127.0.0.1:9/signer",
        account_service_url="http://127.0.0.1:9/ua",
        sweep_retry_delay_ms=0,
        reconcile_interval_ms=25,
        processing_timeout_ms=1500,
        request_timeout_ms=500,
        http_retries=0,
        http_initial_backoff_ms=1,
        call_timeout_ms=1000,
        event_queue_capacity=8,
    ) as c:
        assert c.owner_address == OWNER.lower()
        text = repr(c)
        assert text.startswith("<depositkit.DepositClient owner='0x5290")
        assert "status='idle'" in text and "Arbitrum" in text
        assert "k-secret" not in text and "proj" not in text
        assert c.is_onramp_supported()
        assert c.account_id is None and c.intermediary_address is None
        assert c.dropped_events == 0 and c.callback_panics == 0
        assert c.refund_config == {"enabled": True, "delay_ms": 100, "max_attempts": 3, "refund_to_sender": False}
        assert c.notifications_config == {
            "position": "top-right", "theme": "dark", "duration_ms": 6000, "max": 5, "class_name": None,
        }  # fmt: skip
        assert c.notifications() == [] and not c.is_recovering and c.refund_result("dep_x") is None
        with raises_exactly(ConfigurationError, "Client not initialized"):
            c.deposit_addresses
        with raises_exactly(ConfigurationError, "Client not initialized"):
            c.poll_now()
        with raises_exactly(ConfigurationError, "initialized before watching"):
            c.start_watching()
        for call in (c.stuck_funds, c.recover_funds, c.get_transactions, lambda: c.refund("dep_x"), lambda: c.can_refund("dep_x")):
            with raises_exactly(ConfigurationError, "Client not initialized"):
                call()


def test_set_destination_checks_and_keeps_the_old_one() -> None:
    with client() as c:
        before = c.get_destination()
        assert before == {"address": OWNER.lower(), "chain_id": 42161, "token": "USDC"}
        with raises_exactly(ConfigurationError, "destination.chain_id 196", builtin=ValueError):
            c.set_destination({"chain_id": CHAIN.XLAYER})
        with raises_exactly(ConfigurationError, "destination.token USDT cannot be delivered on Base"):
            c.set_destination(chain_id=CHAIN.BASE, token="USDT")
        with raises_exactly(TypeError, "not both"):
            c.set_destination(CHAIN.BASE, token="USDC")
        with raises_exactly(TypeError, "needs a destination"):
            c.set_destination()
        assert c.get_destination() == before
        assert c.set_destination(chain_id=CHAIN.ETHEREUM)["chain_id"] == 1


def test_keywords_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        DepositClient(OWNER, CHAIN.BASE, "0x" + "1" * 40)  # type: ignore[misc]


# --- Devnet ----------------------------------------------------------------------------------


def test_devnet_admin_api(net: Devnet) -> None:
    assert net.services_url.startswith("http://127.0.0.1:")
    assert net.user_rpc_url == net.services_url + "/user-rpc"
    assert repr(net) == f"<depositkit.Devnet services_url='{net.services_url}'>"
    assert net.db_path.name == "devnet.sqlite"
    somebody = new_owner()
    assert net.ledger_balance(somebody, CHAIN.BASE, "USDC") == 0
    net.deposit(somebody, CHAIN.BASE, "USDC", 2)
    net.deposit(somebody, CHAIN.BASE, "usdc", Decimal("0.5"))
    net.deposit(somebody, CHAIN.BASE, TokenType.USDC, raw_amount=1)
    assert net.ledger_balance(somebody, CHAIN.BASE, "USDC") == 2_500_001
    huge = 2**255
    net.deposit(somebody, CHAIN.ETHEREUM, "ETH", raw_amount=huge)
    assert net.ledger_balance(somebody, CHAIN.ETHEREUM, "ETH") == huge
    with raises_exactly(TypeError, "exactly one of amount"):
        net.deposit(somebody, CHAIN.BASE, "USDC")
    with raises_exactly(TypeError, "exactly one of amount"):
        net.deposit(somebody, CHAIN.BASE, "USDC", "1", raw_amount=1)
    with raises_exactly(TypeError, "not float"):
        net.deposit(somebody, CHAIN.BASE, "USDC", 0.1)  # type: ignore[arg-type]
    with raises_exactly(InvalidArgumentError, "invalid amount", '"0.0000001"'):
        net.deposit(somebody, CHAIN.BASE, "USDC", "0.0000001")
    with raises_exactly(InvalidArgumentError, "invalid request"):
        net.deposit("0x12", CHAIN.BASE, "USDC", "1")
    with raises_exactly(InvalidArgumentError):
        net.deposit(somebody, 7, "USDC", "1")
    with raises_exactly(InvalidArgumentError, 'mode must be "fail" or "reject"'):
        net.fail_next_sweeps(1, "explode")  # type: ignore[arg-type]
    with raises_exactly(InvalidArgumentError, "service must be one of"):
        net.inject_fault("db", status=500)  # type: ignore[arg-type]
    with raises_exactly(InvalidArgumentError, "status"):
        net.inject_fault("ua")
    with raises_exactly(InvalidArgumentError, "price"):
        net.set_price("ETH", -1.0)
    net.set_price("ETH", 2500.0)
    net.inject_fault("ua", status=503, count=2, path="/ua/v1/sweeps")
    net.fail_next_sweeps(0)
    net.forge_next_jwts(0)
    net.expire_sessions(new_owner())
    net.clear_faults()
    kid = net.rotate_jwt_key()
    assert len(kid) == 16
    creds = net.demo_credentials()
    assert set(creds) == {"project_id", "server_key", "user_uuid", "user_token", "jwt_uid", "evm_address", "solana_address"}
    with depositkit.UserRpcClient(net.user_rpc_url, creds["project_id"], creds["server_key"]) as users:
        assert users.get_user_info(creds["user_uuid"], creds["user_token"]).uuid == creds["user_uuid"]


def test_devnet_close_and_database_file(tmp_path: Any) -> None:
    db = tmp_path / "mine.sqlite"
    with Devnet(db_path=str(db), fault_injection=False) as devnet:
        assert devnet.db_path == db
        devnet.deposit(new_owner(), CHAIN.BASE, "ETH", "1")
    assert devnet.closed and db.exists()
    devnet.close()  # idempotent
    with raises_exactly(DepositSDKError, "the devnet is closed"):
        devnet.deposit(new_owner(), CHAIN.BASE, "ETH", "1")
    with raises_exactly(DepositSDKError, "the devnet is closed"):
        with devnet:
            pass
    temporary = Devnet()
    folder = temporary.db_path.parent
    assert folder.is_dir()
    temporary.close()
    assert not folder.exists()
    assert "closed" in repr(temporary)


def test_the_option_table_is_the_signature_the_stub_and_the_reference() -> None:
    # Keywords come from the core's one option table: inspect sees them with their defaults,
    # the reference page documents each, and each is accepted (None keeps the default).
    import inspect
    import pathlib

    parameters = inspect.signature(DepositClient).parameters
    options = [name for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert options[0] == "on_deposit_event" and len(options) > 20
    assert parameters["polling_interval_ms"].default == 3000
    assert parameters["auto_sweep"].default is True
    assert parameters["min_value_usd"].default == 0.5
    reference = (pathlib.Path(__file__).parents[2] / "docs" / "options.md").read_text()
    for name in options[1:]:
        assert f"`{name}`" in reference, name
    # Every option given as None keeps its default.
    with client(**{name: None for name in options if name != "services_url"}) as c:
        assert c.refund_config == {"enabled": False, "delay_ms": 5000, "max_attempts": 2, "refund_to_sender": True}
        assert c.notifications_config is None and c.store_path is None


def test_an_unknown_keyword_is_pythons_own_type_error() -> None:
    with raises_exactly(TypeError, "DepositClient() got an unexpected keyword argument 'polling_interval'"):
        client(polling_interval=3000)
