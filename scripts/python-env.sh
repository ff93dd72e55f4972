#!/usr/bin/env bash
# Creates (or refreshes) the project-local Python environment, builds depositkit as a wheel with
# the opt-in cargo feature `devnet` (depositkit.Devnet: the tests and the demo need it; production
# wheels, `maturin build --release`, have none: scripts/check-production.sh) and installs that
# wheel into .venv, the way a user installs depositkit: the tests run against the installed
# package in .venv's site-packages, never against python/py_src (tests/python/conftest.py checks).
#
#   scripts/python-env.sh            # debug build of depositkit._native (tests, development)
#   scripts/python-env.sh --release  # optimized build (benches/compare_python.py, compare_user_rpc.py)
#
# The wheel is abi3 (CPython 3.9+) and manylinux2014 (glibc 2.17+): `maturin build --zig
# --compatibility manylinux2014` links it with zig (PyPI's ziglang) against glibc 2.17's symbol
# versions, and maturin refuses to tag it so if it needed anything newer. Built with the host's
# own linker it would need glibc 2.34 (manylinux_2_34: pthread_*, dl* moved into libc there).
# It is written to target/wheels-devnet/ (CARGO_TARGET_DIR), apart from target/wheels/ where
# `maturin build` puts production wheels of the same name.
#
# After editing python/py_src, run this again: the package in .venv is a copy, not a link.
# Idempotent: the venv at <repo>/.venv is created only when missing; pip and maturin skip what is
# already up to date (the wheel is always reinstalled). A fresh machine needs nothing but python3
# (with venv) and cargo: everything else is installed here.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON="${PYTHON:-python3}"

profile=()
case "${1:-}" in
    "") ;;
    --release) profile=(--release) ;;
    *) echo "usage: $0 [--release]" >&2; exit 2 ;;
esac

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi

# Build tool, test runner, the peers of benches/compare_python.py, the HTTP clients
# benches/compare_user_rpc.py times depositkit.UserRpcClient against (and benches/async_user_rpc.py
# the async ones: httpx, aiohttp), anyio (its pytest plugin runs tests/python/test_async.py),
# uvloop (test_async.py runs on it too), solders (LiteSVM, the local Solana chain of
# tests/chains/svm_rpc.py), and coincurve (libsecp256k1: the KMS-like signing function of
# tests/python/test_particle_signers.py).
"$VENV/bin/pip" install -q \
    'maturin>=1.9,<2' \
    'ziglang>=0.17.1,<0.18' \
    'auditwheel>=6.4,<7' \
    'pytest>=8,<10' \
    'mypy>=1.13,<2' \
    'eth-utils>=5,<6' \
    'eth-hash[pycryptodome]>=0.7,<1' \
    'base58>=2.1,<3' \
    'requests>=2.31,<3' \
    'httpx>=0.27,<1' \
    'prometheus_client>=0.20,<1' \
    'anyio>=4.4,<5' \
    'aiohttp>=3.9,<4' \
    'uvloop>=0.19,<1' \
    'solders>=0.29,<0.30' \
    'coincurve>=21,<22'

wheels="${CARGO_TARGET_DIR:-$ROOT/target}/wheels-devnet"
mkdir -p "$wheels"
rm -f "$wheels"/depositkit-*.whl
cd "$ROOT/python"
# maturin runs zig as `python3 -m ziglang`: the venv's python3 first on PATH.
PATH="$VENV/bin:$PATH" maturin build --features devnet "${profile[@]}" \
    --zig --compatibility manylinux2014 --interpreter "$VENV/bin/python" --out "$wheels"
built=("$wheels"/depositkit-*.whl)
if [ "${#built[@]}" -ne 1 ] || [ ! -f "${built[0]}" ]; then
    echo "python-env: expected one wheel in $wheels, found: ${built[*]}" >&2
    exit 1
fi
"$VENV/bin/pip" install -q --force-reinstall --no-deps "${built[0]}"
echo "python-env: installed $(basename "${built[0]}") into $VENV"
