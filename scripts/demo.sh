#!/usr/bin/env bash
# The main job: builds depositkit into the project's .venv, then runs the Python demo: a deposit
# client on a devnet embedded in the process (deposit addresses, three deposits, every lifecycle
# phase, the balance credited at the destination), with a short validation tour and a user lookup.
# The devnet is opt-in: scripts/python-env.sh builds with the cargo feature `devnet`.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "building depositkit into .venv (first run: a few minutes) ..."
if ! scripts/python-env.sh >/tmp/depositkit-setup.log 2>&1; then
    cat /tmp/depositkit-setup.log
    exit 1
fi
exec .venv/bin/python examples/demo.py
