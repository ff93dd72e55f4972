#!/usr/bin/env bash
# The main job: builds depositkit into the project's .venv, then runs the Python demo: a deposit
# client on a devnet embedded in the process (deposit addresses, three deposits, every lifecycle
# phase, the balance credited at the destination), with a short validation tour and a user lookup.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/python-env.sh >/dev/null
exec .venv/bin/python examples/demo.py
