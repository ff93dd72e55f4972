"""A short tour of depositkit from Python: the validation layer, then a user lookup against a
devnet server started for the occasion.

Run it with ``scripts/demo.sh`` (which builds everything first), or by hand::

    .venv/bin/python examples/demo.py target/debug/depositkit-devnet
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import depositkit
from depositkit import CHAIN, TokenType


def validation_tour() -> None:
    print("== validation")
    print(f"depositkit {depositkit.__version__}; {len(CHAIN)} chains; default tokens "
          f"{', '.join(t.value for t in depositkit.DEFAULT_SUPPORTED_TOKENS)}")
    for chain in (CHAIN.BASE, CHAIN.BNB, CHAIN.XLAYER, CHAIN.SOLANA):
        deliverable = [t.value for t in TokenType if depositkit.is_supported_destination_token(t, chain)]
        print(f"  {depositkit.get_chain_name(chain):<10} destination tokens: {deliverable or 'none'}")
    addr = "0x52908400098527886E0F7030069857D2E4169EE7"
    print(f"  {addr} valid EVM address: {depositkit.is_valid_evm_address(addr)}")
    flipped = addr[:-1] + addr[-1].lower()
    print(f"  {flipped} valid EVM address: {depositkit.is_valid_evm_address(flipped)}")
    raw = depositkit.parse_units("1234.5", depositkit.get_token_decimals(TokenType.USDC, CHAIN.BNB))
    print(f"  1234.5 USDC on BNB Chain = {raw} raw units = "
          f"{depositkit.format_units(raw, 18)} USDC")
    try:
        depositkit.parse_units("1e6", 6)
    except depositkit.InvalidArgumentError as exc:
        print(f"  parse_units('1e6', 6) -> {type(exc).__name__}: {exc}")


def lookup_tour(devnet_binary: str) -> None:
    print("== user lookup against devnet")
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [devnet_binary, "serve", "--db", os.path.join(tmp, "devnet.sqlite"),
             "--listen", "127.0.0.1:0", "--demo"],
            stdout=subprocess.PIPE, text=True,
        )
        try:
            demo = json.loads(server.stdout.readline())
            base_url = server.stdout.readline().split()[-1]
            print(f"  devnet at {base_url}, demo project {demo['projectId']}")
            with depositkit.UserRpcClient(f"{base_url}/user-rpc", demo["projectId"], demo["serverKey"]) as client:
                user = client.get_user_info(demo["userUuid"], demo["userToken"])
                print(f"  getUserInfo: {user.email}, wallets "
                      f"{[(w.chain, w.public_address) for w in user.wallets]}")
                same = client.get_user_info_by_identity("jwt", demo["jwtUid"])
                print(f"  getUserInfoByIdentity('jwt', ...): same user: {same == user}")
                print(f"  isProjectUser(evm_chain, {demo['evmAddress']}): "
                      f"{client.is_project_user('evm_chain', demo['evmAddress'])}")
                try:
                    client.get_user_info(demo["userUuid"], "not-the-token")
                except depositkit.AuthenticationError as exc:
                    print(f"  wrong token -> {type(exc).__name__} (rpc code {exc.rpc_code}): {exc}")
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    validation_tour()
    if len(sys.argv) > 1:
        lookup_tour(sys.argv[1])
