#!/usr/bin/env bash
# Creates (or refreshes) the project-local Python environment and builds depositkit into it,
# with the opt-in cargo feature `devnet` (depositkit.Devnet: the tests and the demo need it;
# production wheels, `maturin build --release`, have none: scripts/check-production.sh).
#
#   scripts/python-env.sh            # debug build of depositkit._native (tests, development)
#   scripts/python-env.sh --release  # optimized build (benches/compare_python.py, compare_user_rpc.py)
#
# Idempotent: the venv at <repo>/.venv is created only when missing; pip and maturin skip what is
# already up to date. A fresh machine needs nothing but python3 (with venv) and cargo: everything
# else is installed here.
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
# benches/compare_user_rpc.py times depositkit.UserRpcClient against, and solders (LiteSVM, the
# local Solana chain of tests/chains/svm_rpc.py).
"$VENV/bin/pip" install -q \
    'maturin>=1.9,<2' \
    'pytest>=8,<10' \
    'mypy>=1.13,<2' \
    'eth-utils>=5,<6' \
    'eth-hash[pycryptodome]>=0.7,<1' \
    'base58>=2.1,<3' \
    'requests>=2.31,<3' \
    'httpx>=0.27,<1' \
    'solders>=0.29,<0.30'

cd "$ROOT/python"
VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" maturin develop --features devnet "${profile[@]}"
