"""depositkit.UserRpcClient, User and Wallet against the real devnet server (spec
user-rpc-service.md): every method, every error path, retries, threads, the GIL and Ctrl-C.

The ``devnet`` fixture (conftest.py) runs ``depositkit-devnet serve --demo
--enable-fault-injection`` once per session; faults are cleared around every test here.
"""

from __future__ import annotations

import ast
import datetime
import http.server
import json
import math
import pathlib
import re
import signal
import threading
import time
import uuid as uuid_module
from typing import Any, Callable, Iterator

import pytest

import depositkit
from depositkit import (
    AuthenticationError,
    ConfigurationError,
    DepositSDKError,
    DepositTimeoutError,
    NetworkError,
    NotFoundError,
    ProtocolError,
    RpcError,
    User,
    UserRpcClient,
    Wallet,
    _native,
)

from conftest import Devnet, closed_port, raises_exactly

# The keys of spec §2's User record, in the spec's order.
USER_KEYS = [
    "uuid", "phone", "email", "name", "avatar",
    "facebookId", "facebookEmail", "googleId", "googleEmail", "appleId", "appleEmail",
    "twitterId", "twitterEmail", "telegramId", "telegramPhone", "discordId", "discordEmail",
    "githubId", "githubEmail", "twitchId", "twitchEmail", "microsoftId", "microsoftEmail",
    "linkedinId", "linkedinEmail", "createdAt", "updatedAt", "wallets",
]  # fmt: skip


def snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


# A valid checksummed EVM address nobody registered, and a valid Solana key.
STRANGER_EVM = "0x52908400098527886E0F7030069857D2E4169EE7"
STRANGER_SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"


@pytest.fixture(autouse=True)
def no_pending_faults(devnet: Devnet) -> Iterator[None]:
    devnet.faults("DELETE")
    yield
    devnet.faults("DELETE")


@pytest.fixture
def client(devnet: Devnet) -> Iterator[UserRpcClient]:
    with devnet.client() as c:
        yield c


def wire_record(devnet: Devnet, method: str, params: list[str]) -> dict[str, Any]:
    """The ``result`` exactly as the service sends it, fetched with urllib."""
    status, _, reply = devnet.post({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert status == 200 and "result" in reply, reply
    return reply["result"]


# --- successful calls ---------------------------------------------------------------------------


class TestSuccess:
    def test_get_user_info_returns_the_demo_user(self, devnet: Devnet, client: UserRpcClient) -> None:
        creds = devnet.creds
        user = client.get_user_info(creds["userUuid"], creds["userToken"])
        assert type(user) is User
        assert user.uuid == creds["userUuid"]
        assert user.email == "demo@depositkit.dev"
        assert user.name == "Demo User"
        assert user.avatar == "https://example.com/avatars/demo.png"
        assert user.google_email == "demo@depositkit.dev"
        assert user.google_id is not None and user.google_id.isdigit()
        for field in ("phone", "facebook_id", "apple_email", "telegram_phone", "linkedin_id", "twitch_email"):
            assert getattr(user, field) is None, field
        assert [(w.chain, w.public_address) for w in user.wallets] == [
            ("evm_chain", creds["evmAddress"]),
            ("solana", creds["solanaAddress"]),
        ]
        assert all(type(w) is Wallet for w in user.wallets)

    def test_get_user_info_by_identity_returns_the_same_user(self, devnet: Devnet, client: UserRpcClient) -> None:
        creds = devnet.creds
        by_token = client.get_user_info(creds["userUuid"], creds["userToken"])
        by_identity = client.get_user_info_by_identity("jwt", creds["jwtUid"])
        assert type(by_identity) is User
        assert by_identity == by_token
        assert hash(by_identity) == hash(by_token)
        assert by_identity is not by_token

    def test_is_project_user(self, devnet: Devnet, client: UserRpcClient) -> None:
        assert client.is_project_user("evm_chain", devnet.creds["evmAddress"]) is True
        assert client.is_project_user("solana", devnet.creds["solanaAddress"]) is True
        assert client.is_project_user("evm_chain", STRANGER_EVM) is False
        assert client.is_project_user("solana", STRANGER_SOLANA) is False

    def test_is_project_user_sees_recorded_interactions(self, devnet: Devnet, client: UserRpcClient) -> None:
        address = "0x" + uuid_module.uuid4().hex + "00000000"
        assert client.is_project_user("evm_chain", address) is False
        devnet.cli("interaction", "add", "--project", devnet.creds["projectId"], "--chain", "evm_chain", "--address", address)
        assert client.is_project_user("evm_chain", address) is True

    def test_to_dict_is_exactly_the_wire_record(self, devnet: Devnet, client: UserRpcClient) -> None:
        creds = devnet.creds
        user = client.get_user_info(creds["userUuid"], creds["userToken"])
        record = user.to_dict()
        assert type(record) is dict
        assert record == wire_record(devnet, "getUserInfo", [creds["userUuid"], creds["userToken"]])
        assert sorted(record) == sorted(USER_KEYS)
        assert record["phone"] is None and "phone" in record  # nulls are kept
        assert record["wallets"] == [w.to_dict() for w in user.wallets]
        assert record["wallets"][0] == {"chain": "evm_chain", "publicAddress": creds["evmAddress"]}
        assert json.loads(json.dumps(record)) == record
        record["email"] = "changed"  # a copy: the record itself is immutable
        assert user.email == "demo@depositkit.dev"

    def test_every_attribute_is_the_snake_case_of_a_wire_key(self, devnet: Devnet, client: UserRpcClient) -> None:
        user = client.get_user_info_by_identity("jwt", devnet.creds["jwtUid"])
        record = user.to_dict()
        for key in USER_KEYS:
            if key == "wallets":
                assert [w.to_dict() for w in user.wallets] == record[key]
            else:
                assert getattr(user, snake(key)) == record[key], key

    def test_full_record_imported_with_fixed_timestamps(self, devnet: Devnet, client: UserRpcClient, tmp_path: pathlib.Path) -> None:
        """Every provider field set, through `import`: each attribute returns it."""
        values = {key: f"{key}-value-ü" for key in USER_KEYS if key not in ("uuid", "createdAt", "updatedAt", "wallets")}
        values["email"] = "full@example.com"
        uid = "full-" + uuid_module.uuid4().hex
        token = "st_full_" + uuid_module.uuid4().hex
        record = {
            **values,
            "createdAt": "2022-06-08T07:47:54.123Z",
            "updatedAt": "2023-01-02T03:04:05.006Z",
            "wallets": [{"chain": "solana", "publicAddress": STRANGER_SOLANA}],
            "identities": [{"provider": "jwt", "uid": uid}],
            "sessions": [{"token": token, "expiresAt": "2999-01-01T00:00:00.000Z"}],
        }
        path = tmp_path / "users.json"
        path.write_text(json.dumps([record]), encoding="utf-8")
        (user_uuid,) = devnet.cli("import", "--project", devnet.creds["projectId"], str(path)).split()
        user = client.get_user_info(user_uuid, token)
        assert user == client.get_user_info_by_identity("jwt", uid)
        for key, value in values.items():
            assert getattr(user, snake(key)) == value, key
        assert user.created_at == "2022-06-08T07:47:54.123Z"
        assert user.updated_at == "2023-01-02T03:04:05.006Z"
        utc = datetime.timezone.utc
        assert user.created_at_datetime == datetime.datetime(2022, 6, 8, 7, 47, 54, 123000, tzinfo=utc)
        assert user.updated_at_datetime == datetime.datetime(2023, 1, 2, 3, 4, 5, 6000, tzinfo=utc)
        assert user.wallets == user.wallets and user.wallets[0].public_address == STRANGER_SOLANA
        assert user.to_dict()["telegramPhone"] == "telegramPhone-value-ü"

    def test_created_at_datetime_is_aware_utc(self, devnet: Devnet, client: UserRpcClient) -> None:
        user = client.get_user_info(devnet.creds["userUuid"], devnet.creds["userToken"])
        for text, moment in [(user.created_at, user.created_at_datetime), (user.updated_at, user.updated_at_datetime)]:
            assert type(moment) is datetime.datetime
            assert moment.tzinfo is datetime.timezone.utc
            assert moment.utcoffset() == datetime.timedelta(0)
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text), text
            parsed = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
            assert moment == parsed
            assert moment.isoformat(timespec="milliseconds").replace("+00:00", "Z") == text
        now = datetime.datetime.now(datetime.timezone.utc)
        assert abs(now - user.created_at_datetime) < datetime.timedelta(days=2)

    def test_a_user_added_with_the_cli(self, devnet: Devnet, client: UserRpcClient) -> None:
        project = devnet.creds["projectId"]
        user_uuid = devnet.cli("user", "add", "--project", project, "--email", "cli@example.com", "--phone", "+15550100", "--github-id", "gh-1")
        token = devnet.cli("session", "add", "--user", user_uuid, "--ttl-seconds", "600")
        user = client.get_user_info(user_uuid, token)
        assert (user.uuid, user.email, user.phone, user.github_id, user.github_email) == (user_uuid, "cli@example.com", "+15550100", "gh-1", None)
        assert user.wallets == []
        assert user.to_dict()["wallets"] == []


class TestRecords:
    @pytest.fixture
    def user(self, devnet: Devnet, client: UserRpcClient) -> User:
        return client.get_user_info(devnet.creds["userUuid"], devnet.creds["userToken"])

    def test_reprs(self, devnet: Devnet, user: User) -> None:
        assert repr(user) == f"<depositkit.User uuid='{user.uuid}' email='demo@depositkit.dev'>"
        evm = user.wallets[0]
        assert repr(evm) == f"<depositkit.Wallet chain='evm_chain' public_address='{devnet.creds['evmAddress']}'>"

    def test_public_module_path(self) -> None:
        for cls in (User, Wallet, UserRpcClient):
            assert cls.__module__ == "depositkit"
            assert getattr(depositkit, cls.__name__) is cls
            assert cls.__name__ in depositkit.__all__

    def test_records_are_immutable_and_not_constructible(self, user: User) -> None:
        with pytest.raises(AttributeError):
            user.email = "x"  # type: ignore[misc]
        with pytest.raises(AttributeError):
            user.wallets[0].chain = "solana"  # type: ignore[misc]
        with pytest.raises(TypeError):
            User()  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            Wallet()  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            type("Sub", (User,), {})

    def test_equality_and_hash(self, devnet: Devnet, client: UserRpcClient, user: User) -> None:
        other = client.get_user_info_by_identity("jwt", devnet.creds["jwtUid"])
        assert user == other and not (user != other)
        assert {user, other} == {user}
        assert user != user.to_dict()
        assert user.__eq__("x") is NotImplemented
        evm, sol = user.wallets
        assert evm == other.wallets[0] and evm != sol
        assert len({evm, other.wallets[0], sol}) == 2
        assert evm != evm.to_dict()
        user_uuid = devnet.cli("user", "add", "--project", devnet.creds["projectId"], "--email", "demo@depositkit.dev")
        token = devnet.cli("session", "add", "--user", user_uuid)
        assert client.get_user_info(user_uuid, token) != user


# --- errors from the service ---------------------------------------------------------------------


class TestServiceErrors:
    def test_wrong_server_key(self, devnet: Devnet) -> None:
        key = "sk_wrong_" + uuid_module.uuid4().hex
        with UserRpcClient(devnet.url, devnet.creds["projectId"], key) as bad:
            assert key not in repr(bad)
            for call in (
                lambda: bad.get_user_info(devnet.creds["userUuid"], devnet.creds["userToken"]),
                lambda: bad.get_user_info_by_identity("jwt", devnet.creds["jwtUid"]),
                lambda: bad.is_project_user("evm_chain", devnet.creds["evmAddress"]),
            ):
                with raises_exactly(AuthenticationError, "rejected the credentials", devnet.creds["projectId"], "HTTP 401") as info:
                    call()
                err = info.value
                assert not isinstance(err, (ValueError, ConnectionError, LookupError))
                assert err.code == 300 and err.kind == "AuthenticationError"  # type: ignore[attr-defined]
                for text in (str(err), repr(err), repr(err.args)):
                    assert key not in text
                    assert devnet.creds["serverKey"] not in text

    def test_unknown_project(self, devnet: Devnet) -> None:
        with UserRpcClient(devnet.url, str(uuid_module.uuid4()), devnet.creds["serverKey"]) as bad:
            with raises_exactly(AuthenticationError, "HTTP 401") as info:
                bad.is_project_user("solana", STRANGER_SOLANA)
        assert devnet.creds["serverKey"] not in str(info.value)

    def test_the_real_key_never_shows(self, devnet: Devnet, client: UserRpcClient) -> None:
        key = devnet.creds["serverKey"]
        assert key not in repr(client) and key not in str(client)
        assert repr(client) == f"<depositkit.UserRpcClient base_url='{devnet.url}' project_id='{devnet.creds['projectId']}'>"
        assert not hasattr(client, "server_key")

    def test_wrong_token(self, devnet: Devnet, client: UserRpcClient) -> None:
        token = "st_not_a_real_token_" + uuid_module.uuid4().hex
        with raises_exactly(AuthenticationError, "getUserInfo failed: JSON-RPC error -32011", devnet.creds["userUuid"]) as info:
            client.get_user_info(devnet.creds["userUuid"], token)
        err = info.value
        assert err.rpc_code == -32011  # type: ignore[attr-defined]
        assert err.rpc_data == {"param": 1, "reason": "unknown"}  # type: ignore[attr-defined]
        for text in (str(err), repr(err), err.rpc_message, repr(err.rpc_data)):  # type: ignore[attr-defined]
            assert token not in text
        # Another user's valid token is just as wrong.
        other = devnet.cli("user", "add", "--project", devnet.creds["projectId"], "--email", "other@example.com")
        other_token = devnet.cli("session", "add", "--user", other)
        with raises_exactly(AuthenticationError, "-32011") as info:
            client.get_user_info(devnet.creds["userUuid"], other_token)
        assert other_token not in str(info.value)

    def test_expired_token(self, devnet: Devnet, client: UserRpcClient) -> None:
        token = devnet.cli("session", "add", "--user", devnet.creds["userUuid"], "--ttl-seconds", "-60")
        with raises_exactly(AuthenticationError, "-32011", "expired", devnet.creds["userUuid"]) as info:
            client.get_user_info(devnet.creds["userUuid"], token)
        assert info.value.rpc_code == -32011  # type: ignore[attr-defined]
        assert info.value.rpc_data["reason"] == "expired"  # type: ignore[attr-defined]
        assert token not in str(info.value)

    def test_unknown_user(self, client: UserRpcClient) -> None:
        nobody = str(uuid_module.uuid4())
        with raises_exactly(NotFoundError, "getUserInfo failed: JSON-RPC error -32010", nobody, builtin=LookupError) as info:
            client.get_user_info(nobody, "st_whatever")
        err = info.value
        assert err.rpc_code == -32010  # type: ignore[attr-defined]
        assert err.rpc_message == f"user {nobody} not found"  # type: ignore[attr-defined]
        assert err.code == 700  # type: ignore[attr-defined]
        with pytest.raises(LookupError):
            client.get_user_info(nobody, "st_whatever")

    def test_unknown_identity(self, client: UserRpcClient) -> None:
        with raises_exactly(NotFoundError, "getUserInfoByIdentity failed: JSON-RPC error -32013", '"nobody-at-all"', builtin=LookupError) as info:
            client.get_user_info_by_identity("jwt", "nobody-at-all")
        assert info.value.rpc_code == -32013  # type: ignore[attr-defined]
        assert info.value.rpc_data == {"param": 1, "provider": "jwt"}  # type: ignore[attr-defined]


# --- bad arguments: refused before any request ------------------------------------------------

EVM_BAD_CHECKSUM = "0x52908400098527886e0F7030069857D2E4169EE7"

BAD_ARGUMENTS = [
    ("get_user_info", ("nope", "st_x"), ['invalid user uuid "nope"', "8-4-4-4-12"]),
    ("get_user_info", ("{3fd1acca-12de-4953-9db6-153d0552656f}", "st_x"), ['"{3fd1acca-12de-4953-9db6-153d0552656f}"']),
    ("get_user_info", ("3fd1acca12de49539db6153d0552656f", "st_x"), ['"3fd1acca12de49539db6153d0552656f"']),
    ("get_user_info", ("3fd1acca-12de-4953-9db6-153d0552656g", "st_x"), ['"3fd1acca-12de-4953-9db6-153d0552656g"']),
    ("get_user_info", ("", "st_x"), ['invalid user uuid ""']),
    ("get_user_info", ("3fd1acca-12de-4953-9db6-153d0552656f", ""), ["session token is empty"]),
    ("get_user_info_by_identity", ("google", "u1"), ['unsupported identity provider "google"', '"jwt"']),
    ("get_user_info_by_identity", ("JWT", "u1"), ['"JWT"']),
    ("get_user_info_by_identity", ("", "u1"), ['unsupported identity provider ""']),
    ("get_user_info_by_identity", ("jwt", ""), ["identity uid is empty"]),
    ("is_project_user", ("bitcoin", STRANGER_EVM), ['unsupported chain "bitcoin"', '"solana" or "evm_chain"']),
    ("is_project_user", ("EVM_CHAIN", STRANGER_EVM), ['"EVM_CHAIN"']),
    ("is_project_user", ("evm_chain", "0x12"), ['invalid evm_chain address "0x12"']),
    ("is_project_user", ("evm_chain", EVM_BAD_CHECKSUM), [f'"{EVM_BAD_CHECKSUM}"', "checksum"]),
    ("is_project_user", ("evm_chain", STRANGER_SOLANA), [f'invalid evm_chain address "{STRANGER_SOLANA}"']),
    ("is_project_user", ("solana", STRANGER_EVM), [f'invalid solana address "{STRANGER_EVM}"']),
    ("is_project_user", ("solana", "0OIl" * 11), ['invalid solana address "0OIl']),
    ("is_project_user", ("solana", ""), ['invalid solana address ""']),
]


@pytest.mark.parametrize(("method", "args", "fragments"), BAD_ARGUMENTS)
def test_bad_arguments_raise_configuration_error_before_any_request(method: str, args: tuple[str, str], fragments: list[str]) -> None:
    """Against a closed port: a NetworkError would mean a request was attempted."""
    with UserRpcClient(f"http://127.0.0.1:{closed_port()}/user-rpc", "proj", "sk_secret", max_retries=0) as offline:
        with raises_exactly(ConfigurationError, *fragments, builtin=ValueError) as info:
            getattr(offline, method)(*args)
    assert info.value.code == 200  # type: ignore[attr-defined]
    assert not hasattr(info.value, "rpc_code")
    assert "sk_secret" not in str(info.value)


@pytest.mark.parametrize(
    ("method", "args", "name", "type_name"),
    [
        ("get_user_info", (None, "t"), "uuid", "NoneType"),
        ("get_user_info", ("3fd1acca-12de-4953-9db6-153d0552656f", b"t"), "token", "bytes"),
        ("get_user_info_by_identity", (1, "u"), "provider", "int"),
        ("get_user_info_by_identity", ("jwt", ["u"]), "uid", "list"),
        ("is_project_user", (101, STRANGER_EVM), "chain", "int"),
        ("is_project_user", ("evm_chain", None), "address", "NoneType"),
    ],
)
def test_wrong_argument_types_raise_type_error(method: str, args: tuple[Any, Any], name: str, type_name: str) -> None:
    with UserRpcClient(f"http://127.0.0.1:{closed_port()}/user-rpc", "proj", "sk_secret") as offline:
        with raises_exactly(TypeError, name, type_name):
            getattr(offline, method)(*args)


def test_bad_arguments_against_the_real_server_send_nothing(devnet: Devnet, client: UserRpcClient) -> None:
    """The same refusal with a live server: a pending fault is not used up."""
    devnet.inject(status=503, count=1)
    with raises_exactly(ConfigurationError, '"nope"', builtin=ValueError):
        client.get_user_info("nope", "t")
    assert devnet.faults("GET") == [{"status": 503, "count": 1}]


CONFIG_ERRORS = [
    (("ftp://example.com/rpc", "p", "k"), {}, ['invalid base URL "ftp://example.com/rpc"', "http:// or https://"]),
    (("example.com/rpc", "p", "k"), {}, ['"example.com/rpc"']),
    (("http://", "p", "k"), {}, ['invalid base URL "http://": no host']),
    (("http:///user-rpc", "p", "k"), {}, ["no host"]),
    (("", "p", "k"), {}, ['invalid base URL ""']),
    (("http://127.0.0.1:1/x", "", "k"), {}, ["project id is empty"]),
    (("http://127.0.0.1:1/x", "a:b", "k"), {}, ['invalid project id "a:b"']),
    (("http://127.0.0.1:1/x", "p", ""), {}, ["project server key is empty"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"timeout": 0}, ["invalid timeout 0", "greater than zero and at most 86400"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"timeout": -1.5}, ["invalid timeout -1.5"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"timeout": math.nan}, ["invalid timeout nan"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"timeout": math.inf}, ["invalid timeout inf", "at most 86400"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"timeout": 86400.5}, ["invalid timeout 86400.5", "at most 86400"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"timeout": 10**400}, ["invalid timeout 1000", "at most 86400"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"timeout": 1e-12}, ["invalid timeout 1e-12"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"max_retries": -1}, ["invalid max_retries -1", "0 to 4294967295"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"max_retries": 2**32}, ["invalid max_retries 4294967296"]),
    (("http://127.0.0.1:1/x", "p", "k"), {"user_agent": "bad\r\nX-Evil: 1"}, ["invalid user_agent", "control characters"]),
]


@pytest.mark.parametrize(("args", "kwargs", "fragments"), CONFIG_ERRORS)
def test_bad_configuration(args: tuple[str, str, str], kwargs: dict[str, Any], fragments: list[str]) -> None:
    with raises_exactly(ConfigurationError, *fragments, builtin=ValueError):
        UserRpcClient(*args, **kwargs)


def test_configuration_errors_never_echo_secrets() -> None:
    with raises_exactly(ConfigurationError, "must not carry credentials") as info:
        UserRpcClient("http://proj:sk_in_url_secret@127.0.0.1:1/x", "p", "k")
    assert "sk_in_url_secret" not in str(info.value)
    with raises_exactly(ConfigurationError, "project server key contains control characters") as info:
        UserRpcClient("http://127.0.0.1:1/x", "p", "sk_secret\nvalue")
    assert "sk_secret" not in str(info.value)


@pytest.mark.parametrize(
    ("args", "kwargs", "fragments"),
    [
        ((None, "p", "k"), {}, ["base_url", "NoneType"]),
        (("http://h/x", 7, "k"), {}, ["project_id", "int"]),
        (("http://h/x", "p", b"k"), {}, ["server_key", "bytes"]),
        (("http://h/x", "p", "k"), {"timeout": "1"}, ["timeout", "str"]),
        (("http://h/x", "p", "k"), {"timeout": True}, ["timeout", "bool"]),
        (("http://h/x", "p", "k"), {"max_retries": 1.0}, ["max_retries", "float"]),
        (("http://h/x", "p", "k"), {"max_retries": False}, ["max_retries", "bool"]),
        (("http://h/x", "p", "k"), {"user_agent": 5}, ["user_agent", "int"]),
    ],
)
def test_bad_configuration_types(args: tuple[Any, ...], kwargs: dict[str, Any], fragments: list[str]) -> None:
    # Options: a wrong type is a ConfigurationError that is also a TypeError.
    with raises_exactly(depositkit.ConfigurationTypeError, *fragments, builtin=TypeError):
        UserRpcClient(*args, **kwargs)


def test_options_are_keyword_only_and_accept_their_defaults(devnet: Devnet) -> None:
    with pytest.raises(TypeError):
        UserRpcClient(devnet.url, "p", "k", 5.0)  # type: ignore[misc]
    with UserRpcClient(devnet.url, devnet.creds["projectId"], devnet.creds["serverKey"], timeout=86400, max_retries=0, user_agent="tests/1.0") as c:
        assert c.is_project_user("solana", devnet.creds["solanaAddress"]) is True
    with UserRpcClient(devnet.url, devnet.creds["projectId"], devnet.creds["serverKey"], timeout=None, max_retries=None, user_agent=None) as c:
        assert c.base_url == devnet.url and c.project_id == devnet.creds["projectId"]
    assert UserRpcClient.__text_signature__ == "(base_url, project_id, server_key, *, timeout=10.0, max_retries=3, user_agent=None)"  # type: ignore[attr-defined]


# --- the JSON-RPC envelope, straight to the server with urllib (docs of devnet/src/rpc.rs) ----


class TestProtocolOnTheWire:
    def test_parse_error(self, devnet: Devnet) -> None:
        status, _, reply = devnet.post(b'{"jsonrpc": "2.0", "id": 1, "method": ')
        assert status == 200
        assert reply["jsonrpc"] == "2.0" and reply["id"] is None
        assert reply["error"]["code"] == -32700
        assert reply["error"]["message"] == "parse error"
        assert "detail" in reply["error"]["data"]

    @pytest.mark.parametrize(
        ("body", "reply_id", "fragment"),
        [
            ({"jsonrpc": "1.0", "id": 4, "method": "isProjectUser"}, 4, '"jsonrpc" must be "2.0"'),
            ({"id": 5, "method": "isProjectUser"}, 5, '"jsonrpc" must be "2.0"'),
            ({"jsonrpc": "2.0", "id": 6}, 6, '"method" is missing'),
            ({"jsonrpc": "2.0", "id": 7, "method": 7}, 7, '"method" must be a string'),
            ({"jsonrpc": "2.0", "id": 1.5, "method": "isProjectUser"}, None, '"id" must be'),
            ({"jsonrpc": "2.0", "id": 8, "method": "isProjectUser", "params": "solana"}, 8, '"params" must be an array'),
            (42, None, "must be a JSON object"),
            ([], None, "empty batch"),
        ],
    )
    def test_invalid_request(self, devnet: Devnet, body: Any, reply_id: Any, fragment: str) -> None:
        status, _, reply = devnet.post(body)
        assert status == 200
        assert reply["id"] == reply_id
        assert reply["error"]["code"] == -32600
        assert fragment in reply["error"]["message"]

    def test_method_not_found(self, devnet: Devnet) -> None:
        status, _, reply = devnet.post({"jsonrpc": "2.0", "id": "abc", "method": "getUsers", "params": []})
        assert status == 200 and reply["id"] == "abc"
        assert reply["error"]["code"] == -32601
        assert '"getUsers"' in reply["error"]["message"]
        assert reply["error"]["data"] == {"methods": ["getUserInfo", "getUserInfoByIdentity", "isProjectUser"]}

    def test_by_name_params_are_a_valid_request(self, devnet: Devnet) -> None:
        # JSON-RPC 2.0 allows by-name params: an unknown method is -32601 whatever its params,
        # and a known method (all take positional params) answers -32602, never -32600.
        status, _, reply = devnet.post({"jsonrpc": "2.0", "id": 1, "method": "foo.get", "params": {"name": "myself"}})
        assert status == 200 and reply["id"] == 1
        assert reply["error"]["code"] == -32601
        status, _, reply = devnet.post({"jsonrpc": "2.0", "id": 2, "method": "isProjectUser", "params": {"chain": "solana"}})
        assert status == 200 and reply["id"] == 2
        assert reply["error"]["code"] == -32602
        assert "positional params [chain, address]" in reply["error"]["message"]

    @pytest.mark.parametrize(
        ("params", "fragment"),
        [
            (["evm_chain"], "isProjectUser expects 2 params [chain, address], got 1"),
            (["evm_chain", STRANGER_EVM, "x"], "got 3"),
            (["evm_chain", 5], "param 1 (address) must be a string, got"),
            (["bitcoin", STRANGER_EVM], 'param 0 (chain) must be "solana" or "evm_chain", got "bitcoin"'),
            (["evm_chain", "0x12"], 'param 1 (address) "0x12" is not a evm_chain address'),
        ],
    )
    def test_invalid_params(self, devnet: Devnet, params: list[Any], fragment: str) -> None:
        status, _, reply = devnet.post({"jsonrpc": "2.0", "id": 9, "method": "isProjectUser", "params": params})
        assert status == 200 and reply["id"] == 9
        assert reply["error"]["code"] == -32602
        assert fragment in reply["error"]["message"]

    def test_batch_answers_each_request_in_order_and_skips_notifications(self, devnet: Devnet) -> None:
        creds = devnet.creds
        status, _, replies = devnet.post(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": ["evm_chain", creds["evmAddress"]]},
                {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["evm_chain", creds["evmAddress"]]},
                {"jsonrpc": "2.0", "id": "two", "method": "getUserInfoByIdentity", "params": ["jwt", creds["jwtUid"]]},
                {"jsonrpc": "2.0", "id": 3, "method": "nope"},
                7,
            ]
        )
        assert status == 200
        assert isinstance(replies, list) and len(replies) == 4
        assert replies[0] == {"jsonrpc": "2.0", "id": 1, "result": True}
        assert replies[1]["id"] == "two" and replies[1]["result"]["uuid"] == creds["userUuid"]
        assert replies[2]["id"] == 3 and replies[2]["error"]["code"] == -32601
        assert replies[3]["id"] is None and replies[3]["error"]["code"] == -32600

    def test_notifications_get_no_content(self, devnet: Devnet) -> None:
        note = {"jsonrpc": "2.0", "method": "isProjectUser", "params": ["solana", STRANGER_SOLANA]}
        assert devnet.post(note)[::2] == (204, None)
        assert devnet.post([note, {**note, "method": "nope"}])[::2] == (204, None)

    def test_unauthenticated_requests_get_401_with_a_challenge(self, devnet: Devnet) -> None:
        status, headers, reply = devnet.post({"jsonrpc": "2.0", "id": 1, "method": "isProjectUser", "params": []}, auth=(devnet.creds["projectId"], "sk_wrong"))
        assert status == 401
        assert headers["www-authenticate"].startswith("Basic realm=")
        assert reply["id"] == 1 and reply["error"]["code"] == -32001
        assert reply["error"]["data"] == {"reason": "unknown project id or wrong server key"}

    def test_wrong_http_method_and_content_type(self, devnet: Devnet) -> None:
        status, headers, reply = devnet.post(b"", method="GET")
        assert status == 405 and headers["allow"] == "POST"
        assert reply["error"]["code"] == -32600
        status, _, reply = devnet.post("{}", content_type="text/plain")
        assert status == 415 and reply["error"]["code"] == -32600
        assert "Content-Type must be application/json" in reply["error"]["message"]


# --- transport failures and retries -----------------------------------------------------------


class TestTransport:
    def test_server_down_is_a_network_error(self) -> None:
        url = f"http://127.0.0.1:{closed_port()}/user-rpc"
        with UserRpcClient(url, "proj", "sk_secret", max_retries=0) as offline:
            with raises_exactly(NetworkError, f"request to {url} failed after 1 attempt", "connection refused", builtin=ConnectionError) as info:
                offline.is_project_user("solana", STRANGER_SOLANA)
        assert not isinstance(info.value, TimeoutError)
        assert info.value.code == 600  # type: ignore[attr-defined]
        assert "sk_secret" not in str(info.value)
        with UserRpcClient(url, "proj", "sk_secret", max_retries=2) as offline:
            with raises_exactly(NetworkError, "failed after 3 attempts", builtin=ConnectionError):
                offline.get_user_info_by_identity("jwt", "u1")

    def test_slow_server_is_a_timeout(self, devnet: Devnet) -> None:
        devnet.inject(delayMs=1500, count=1)
        with devnet.client(timeout=0.2, max_retries=0) as impatient:
            started = time.monotonic()
            with raises_exactly(DepositTimeoutError, f"request to {devnet.url} timed out after 1 attempt", builtin=TimeoutError) as info:
                impatient.is_project_user("evm_chain", devnet.creds["evmAddress"])
            elapsed = time.monotonic() - started
            assert isinstance(info.value, NetworkError) and isinstance(info.value, ConnectionError)
            assert info.value.code == 601  # type: ignore[attr-defined]
            assert elapsed < 1.4, elapsed
            # The fault is used up: the next call answers.
            assert impatient.is_project_user("evm_chain", devnet.creds["evmAddress"]) is True

    def test_429_is_retried_after_retry_after(self, devnet: Devnet, client: UserRpcClient) -> None:
        devnet.inject(status=429, count=2, retryAfter=0)
        with devnet.client(max_retries=3) as patient:
            assert patient.is_project_user("evm_chain", devnet.creds["evmAddress"]) is True
        assert devnet.faults("GET") == []

    def test_429_beyond_the_retries_is_a_network_error(self, devnet: Devnet) -> None:
        devnet.inject(status=429, count=2, retryAfter=0)
        with devnet.client(max_retries=1) as patient:
            with raises_exactly(NetworkError, "answered HTTP 429 (too many requests) after 2 attempts", builtin=ConnectionError):
                patient.get_user_info_by_identity("jwt", devnet.creds["jwtUid"])

    def test_503_three_times_with_two_retries_is_a_network_error(self, devnet: Devnet) -> None:
        devnet.inject(status=503, count=3, retryAfter=0)
        with devnet.client(max_retries=2) as patient:
            with raises_exactly(NetworkError, f"{devnet.url} answered HTTP 503 (service unavailable) after 3 attempts", builtin=ConnectionError) as info:
                patient.get_user_info(devnet.creds["userUuid"], devnet.creds["userToken"])
        assert not isinstance(info.value, TimeoutError)
        assert devnet.faults("GET") == []

    def test_503_then_success_within_the_retries(self, devnet: Devnet) -> None:
        devnet.inject(status=503, count=2)
        with devnet.client(max_retries=2) as patient:
            user = patient.get_user_info(devnet.creds["userUuid"], devnet.creds["userToken"])
        assert user.uuid == devnet.creds["userUuid"]


# --- what a fake server can make go wrong: ProtocolError and RpcError ---------------------------


class FakeService:
    """An HTTP server on 127.0.0.1 that answers every POST with ``reply(request_json)``,
    returning ``(status, body text)``."""

    def __init__(self) -> None:
        self.reply: Callable[[Any], tuple[int, str]] = lambda request: (200, "{}")
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, body = fake.reply(request)
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/rpc"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeService]:
    service = FakeService()
    yield service
    service.close()


def echo(result: Any = None, **fields: Any) -> Callable[[Any], tuple[int, str]]:
    """A reply echoing the request's id with ``result`` (or other fields)."""

    def reply(request: Any) -> tuple[int, str]:
        body = {"jsonrpc": "2.0", "id": request["id"], **({"result": result} if not fields else fields)}
        return 200, json.dumps(body)

    return reply


VALID_RECORD = {
    "uuid": "3fd1acca-12de-4953-9db6-153d0552656f", "email": "a@b.c",
    "createdAt": "2022-06-08T07:47:54.000Z", "updatedAt": "2022-06-08T07:47:54.000Z", "wallets": [],
}  # fmt: skip


class TestMisbehavingService:
    @pytest.mark.parametrize(
        ("reply", "fragments"),
        [
            (lambda r: (200, "<html>oops</html>"), ["isProjectUser: HTTP 200 response is not JSON", '"<html>oops</html>"']),
            (lambda r: (200, "[1, 2]"), ["malformed JSON-RPC response", "an array, not an object"]),
            (lambda r: (200, json.dumps({"id": r["id"], "result": True})), ['lacks "jsonrpc": "2.0"']),
            (lambda r: (200, json.dumps({"jsonrpc": "2.0", "id": r["id"] + 1, "result": True})), ["does not match request id"]),
            (lambda r: (200, json.dumps({"jsonrpc": "2.0", "result": True})), ["the response has no id"]),
            (echo("yes"), ["isProjectUser returned a string where a boolean was expected"]),
            (lambda r: (200, json.dumps({"jsonrpc": "2.0", "id": r["id"], "error": {"code": "x"}})), ["malformed error object"]),
        ],
    )
    def test_protocol_errors(self, fake: FakeService, reply: Callable[[Any], tuple[int, str]], fragments: list[str]) -> None:
        fake.reply = reply
        with UserRpcClient(fake.url, "proj", "sk_secret", max_retries=0) as c:
            with raises_exactly(ProtocolError, *fragments):
                c.is_project_user("solana", STRANGER_SOLANA)

    def test_malformed_user_records(self, fake: FakeService) -> None:
        with UserRpcClient(fake.url, "proj", "sk_secret", max_retries=0) as c:
            fake.reply = echo({"uuid": "x"})
            with raises_exactly(ProtocolError, "getUserInfoByIdentity returned a malformed user record"):
                c.get_user_info_by_identity("jwt", "u1")
            fake.reply = echo({**VALID_RECORD, "createdAt": "yesterday"})
            with raises_exactly(ProtocolError, 'createdAt "yesterday" is not an ISO 8601 timestamp'):
                c.get_user_info_by_identity("jwt", "u1")
            fake.reply = echo({**VALID_RECORD, "createdAt": "2022-06-08T09:47:54.5+02:00", "phone": "+1"})
            user = c.get_user_info_by_identity("jwt", "u1")
            assert user.created_at == "2022-06-08T09:47:54.5+02:00"
            assert user.created_at_datetime == datetime.datetime(2022, 6, 8, 7, 47, 54, 500000, tzinfo=datetime.timezone.utc)
            assert user.created_at_datetime.tzinfo is datetime.timezone.utc
            # Keys the service left out come back as None from to_dict, like the nulls it sends.
            assert user.to_dict()["googleId"] is None and user.phone == "+1"

    def test_year_zero_is_refused_as_a_datetime(self, fake: FakeService) -> None:
        fake.reply = echo({**VALID_RECORD, "updatedAt": "0000-01-01T00:00:00Z"})
        with UserRpcClient(fake.url, "proj", "sk_secret", max_retries=0) as c:
            user = c.get_user_info_by_identity("jwt", "u1")
        assert user.updated_at == "0000-01-01T00:00:00Z"
        with raises_exactly(ProtocolError, 'updatedAt "0000-01-01T00:00:00Z"', "datetime.datetime"):
            user.updated_at_datetime

    def test_other_json_rpc_errors_are_rpc_errors(self, fake: FakeService) -> None:
        fake.reply = echo(error={"code": -32603, "message": "internal error", "data": {"trace": [1, 2]}})
        with UserRpcClient(fake.url, "proj", "sk_secret", max_retries=0) as c:
            with raises_exactly(RpcError, "isProjectUser failed: JSON-RPC error -32603: internal error") as info:
                c.is_project_user("solana", STRANGER_SOLANA)
        err = info.value
        assert (err.rpc_code, err.rpc_message, err.rpc_data) == (-32603, "internal error", {"trace": [1, 2]})  # type: ignore[attr-defined]
        assert err.code == 603  # type: ignore[attr-defined]
        fake.reply = echo(error={"code": -32012, "message": "provider not supported"})
        with UserRpcClient(fake.url, "proj", "sk_secret", max_retries=0) as c:
            with raises_exactly(RpcError, "-32012") as info:
                c.get_user_info_by_identity("jwt", "u1")
        assert info.value.rpc_data is None  # type: ignore[attr-defined]

    def test_403_is_an_authentication_error(self, fake: FakeService) -> None:
        fake.reply = lambda r: (403, json.dumps({"jsonrpc": "2.0", "id": r["id"], "error": {"code": -32001, "message": "forbidden"}}))
        with UserRpcClient(fake.url, "proj", "sk_secret", max_retries=0) as c:
            with raises_exactly(AuthenticationError, "project \"proj\" (HTTP 403: forbidden)"):
                c.is_project_user("solana", STRANGER_SOLANA)

    def test_the_request_is_what_the_spec_says(self, fake: FakeService) -> None:
        seen: list[Any] = []

        def record(request: Any) -> tuple[int, str]:
            seen.append(request)
            return echo(False)(request)

        fake.reply = record
        with UserRpcClient(fake.url, "proj", "sk_secret") as c:
            assert c.is_project_user("evm_chain", STRANGER_EVM) is False
            assert c.is_project_user("solana", STRANGER_SOLANA) is False
        first, second = seen
        assert first == {"jsonrpc": "2.0", "id": first["id"], "method": "isProjectUser", "params": ["evm_chain", STRANGER_EVM]}
        assert isinstance(first["id"], int) and second["id"] != first["id"]


# --- threads, the GIL and Ctrl-C ----------------------------------------------------------------


class TestConcurrency:
    def test_one_client_from_eight_threads(self, devnet: Devnet, client: UserRpcClient) -> None:
        creds = devnet.creds
        expected = client.get_user_info(creds["userUuid"], creds["userToken"])
        barrier = threading.Barrier(8)
        failures: list[BaseException] = []

        def work(index: int) -> None:
            try:
                barrier.wait(timeout=30)
                for i in range(20):
                    kind = (index + i) % 3
                    if kind == 0:
                        assert client.get_user_info(creds["userUuid"], creds["userToken"]) == expected
                    elif kind == 1:
                        assert client.get_user_info_by_identity("jwt", creds["jwtUid"]) == expected
                    else:
                        assert client.is_project_user("solana", creds["solanaAddress"]) is True
                        assert client.is_project_user("evm_chain", STRANGER_EVM) is False
                    with pytest.raises(NotFoundError):
                        client.get_user_info_by_identity("jwt", f"nobody-{index}-{i}")
            except BaseException as error:  # noqa: BLE001 - reported below
                failures.append(error)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in threads)
        assert failures == []

    def test_calls_from_eight_threads_overlap(self, devnet: Devnet, client: UserRpcClient) -> None:
        """Eight calls held 0.6 s each by the server: done together, not one after another."""
        devnet.inject(delayMs=600, count=8)
        barrier = threading.Barrier(8)
        answers: list[bool] = []

        def work() -> None:
            barrier.wait(timeout=30)
            answers.append(client.is_project_user("evm_chain", devnet.creds["evmAddress"]))

        threads = [threading.Thread(target=work) for _ in range(8)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        elapsed = time.monotonic() - started
        assert answers == [True] * 8
        assert elapsed < 3.0, f"8 x 0.6 s took {elapsed:.2f} s: calls were serialized"

    def test_the_gil_is_released_while_waiting(self, devnet: Devnet, client: UserRpcClient) -> None:
        devnet.inject(delayMs=1000, count=1)
        counts = {"loops": 0}
        stop = threading.Event()

        def count() -> None:
            while not stop.is_set():
                counts["loops"] += 1

        counter = threading.Thread(target=count)
        counter.start()
        try:
            time.sleep(0.05)
            before = counts["loops"]
            started = time.monotonic()
            assert client.is_project_user("evm_chain", devnet.creds["evmAddress"]) is True
            elapsed = time.monotonic() - started
            during = counts["loops"] - before
        finally:
            stop.set()
            counter.join()
        assert elapsed >= 0.9, "the delay fault did not apply"
        # A held GIL would leave the counter at (almost) nothing for a whole second.
        assert during > 100_000, f"only {during} loop iterations in {elapsed:.2f} s"

    def test_ctrl_c_interrupts_a_waiting_call(self, devnet: Devnet, client: UserRpcClient) -> None:
        devnet.inject(delayMs=3000, count=1)
        armed = threading.Event()
        previous = signal.getsignal(signal.SIGINT)

        def on_sigint(signum: int, frame: Any) -> None:
            # Raise only inside the call under test, never into pytest.
            if armed.is_set():
                raise KeyboardInterrupt

        signal.signal(signal.SIGINT, on_sigint)
        timer = threading.Timer(0.2, signal.raise_signal, (signal.SIGINT,))
        try:
            armed.set()
            started = time.monotonic()
            timer.start()
            with pytest.raises(KeyboardInterrupt):
                client.is_project_user("evm_chain", devnet.creds["evmAddress"])
            elapsed = time.monotonic() - started
            armed.clear()
        finally:
            armed.clear()
            timer.cancel()
            timer.join()
            signal.signal(signal.SIGINT, previous)
        assert elapsed < 1.5, f"KeyboardInterrupt came after {elapsed:.2f} s (the request takes 3 s)"
        # The client is still usable; the abandoned request finishes in the background.
        assert client.is_project_user("evm_chain", devnet.creds["evmAddress"]) is True

    def test_an_exception_from_a_signal_handler_interrupts_too(self, devnet: Devnet, client: UserRpcClient) -> None:
        devnet.inject(delayMs=2000, count=1)

        class Stop(Exception):
            pass

        def on_alarm(signum: int, frame: Any) -> None:
            raise Stop

        previous = signal.signal(signal.SIGALRM, on_alarm)
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            started = time.monotonic()
            with pytest.raises(Stop):
                client.get_user_info(devnet.creds["userUuid"], devnet.creds["userToken"])
            assert time.monotonic() - started < 1.5
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


# --- lifecycle ----------------------------------------------------------------------------------


class TestLifecycle:
    def test_close_then_calls_raise(self, devnet: Devnet) -> None:
        c = devnet.client()
        assert c.closed is False
        assert c.is_project_user("solana", devnet.creds["solanaAddress"]) is True
        c.close()
        c.close()  # idempotent
        assert c.closed is True
        for call in (
            lambda: c.get_user_info(devnet.creds["userUuid"], devnet.creds["userToken"]),
            lambda: c.get_user_info_by_identity("jwt", devnet.creds["jwtUid"]),
            lambda: c.is_project_user("solana", devnet.creds["solanaAddress"]),
        ):
            with raises_exactly(DepositSDKError, "UserRpcClient is closed") as info:
                call()
            assert str(info.value) == "UserRpcClient is closed"
            assert info.value.code == 1  # type: ignore[attr-defined]
        # Still describable.
        assert c.base_url == devnet.url and c.project_id == devnet.creds["projectId"]
        assert devnet.creds["serverKey"] not in repr(c)

    def test_with_closes_and_does_not_swallow(self, devnet: Devnet) -> None:
        with devnet.client() as c:
            assert type(c) is UserRpcClient
            assert c.is_project_user("solana", devnet.creds["solanaAddress"]) is True
        assert c.closed
        with raises_exactly(DepositSDKError, "UserRpcClient is closed"):
            c.is_project_user("solana", devnet.creds["solanaAddress"])
        with raises_exactly(DepositSDKError, "UserRpcClient is closed"):
            with c:
                pass
        other = devnet.client()
        with pytest.raises(ZeroDivisionError):
            with other:
                1 / 0  # noqa: B018
        assert other.closed

    def test_close_while_a_call_is_running(self, devnet: Devnet) -> None:
        devnet.inject(delayMs=500, count=1)
        c = devnet.client()
        answers: list[bool] = []
        worker = threading.Thread(target=lambda: answers.append(c.is_project_user("solana", devnet.creds["solanaAddress"])))
        worker.start()
        time.sleep(0.2)
        c.close()
        worker.join(timeout=30)
        assert answers == [True]

    def test_interpreter_exit_with_a_live_client_and_a_call_in_flight(self, devnet: Devnet) -> None:
        """A subprocess leaves a client open and a request running on a worker at exit."""
        devnet.inject(delayMs=5000, count=1)
        code = (
            "import sys, threading, depositkit\n"
            f"c = depositkit.UserRpcClient({devnet.url!r}, {devnet.creds['projectId']!r}, {devnet.creds['serverKey']!r})\n"
            "threading.Thread(target=lambda: c.is_project_user('solana', " + repr(STRANGER_SOLANA) + "), daemon=True).start()\n"
            "import time; time.sleep(0.3)\n"
            "print(c.is_project_user('solana', " + repr(devnet.creds["solanaAddress"]) + "))\n"
        )
        import subprocess
        import sys

        started = time.monotonic()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert (out.returncode, out.stdout, out.stderr) == (0, "True\n", "")
        assert time.monotonic() - started < 4.5


# --- the stubs ----------------------------------------------------------------------------------


STUB = pathlib.Path(_native.__file__).with_name("_native.pyi")


def stub_classes() -> dict[str, ast.ClassDef]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


@pytest.mark.parametrize("cls", [UserRpcClient, User, Wallet])
def test_every_public_member_has_a_documented_stub(cls: type) -> None:
    node = stub_classes()[cls.__name__]
    assert ast.get_docstring(node), cls.__name__
    assert any(isinstance(d, ast.Name) and d.id == "final" for d in node.decorator_list), f"{cls.__name__} is not @final"
    stubbed = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
    public = {name for name in vars(cls) if not name.startswith("_")} | ({"__enter__", "__exit__", "__new__"} if cls is UserRpcClient else set())
    assert public <= set(stubbed), public - set(stubbed)
    for name in public:
        assert ast.get_docstring(stubbed[name]), f"{cls.__name__}.{name} has no docstring"
    if cls is User:
        assert {snake(k) for k in USER_KEYS} <= public


def test_network_methods_document_their_exceptions() -> None:
    node = stub_classes()["UserRpcClient"]
    class_doc = ast.get_docstring(node) or ""
    for name in ("DepositSDKError", "AuthenticationError", "DepositTimeoutError", "NetworkError", "ProtocolError", "RpcError", "KeyboardInterrupt", "rpc_code"):
        assert name in class_doc, name
    methods = {item.name: ast.get_docstring(item) or "" for item in node.body if isinstance(item, ast.FunctionDef)}
    for name in ("get_user_info", "get_user_info_by_identity", "is_project_user"):
        doc = methods[name]
        assert "Returns:" in doc and "Raises:" in doc, name
        for exc in ("ConfigurationError", "AuthenticationError", "DepositTimeoutError", "NetworkError", "ProtocolError", "RpcError"):
            assert exc in doc, f"{name} does not document {exc}"
    assert "-32011" in methods["get_user_info"] and "-32010" in methods["get_user_info"]
    assert "-32013" in methods["get_user_info_by_identity"]
    assert "ConfigurationError" in methods["__new__"]
