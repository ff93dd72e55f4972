#!/usr/bin/env bash
# The main job: builds depositkit into the project's .venv and the devnet server, then runs the
# Python demo (validation, then a user lookup against a devnet server it starts).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/python-env.sh >/dev/null
cargo build -q -p depositkit-devnet
exec .venv/bin/python examples/demo.py target/debug/depositkit-devnet
