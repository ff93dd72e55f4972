# The names README.md's Python fragments leave to the surrounding prose or to the reader's own
# code (an owner, a destination, the host's cursor store, the demo credentials devnet prints).
# check_readme.py star-imports this module at the top of every extracted block, so that
# `mypy --strict` checks what the README shows against depositkit's types and nothing else.
import time as time

import depositkit as depositkit

__all__ = [
    "depositkit",
    "time",
    "owner",
    "destination",
    "load_cursor",
    "save_cursor",
    "handle",
    "PROJECT_ID",
    "SERVER_KEY",
    "USER_UUID",
    "USER_TOKEN",
    "seed_hex",
    "kms_address",
    "kms_sign_digest",
]

owner: str
destination: depositkit.DestinationConfig

def load_cursor() -> int: ...
def save_cursor(cursor: int) -> None: ...
def handle(event: depositkit.DepositEvent) -> None: ...

PROJECT_ID: str
SERVER_KEY: str
USER_UUID: str
USER_TOKEN: str

# README's "Production": the host's master seed, and its KMS key's address and signing call.
seed_hex: str
kms_address: str

def kms_sign_digest(digest: bytes) -> bytes: ...
