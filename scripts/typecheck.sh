#!/usr/bin/env bash
# Type checks the Python package (scripts/python-env.sh first: it installs mypy into .venv and
# builds depositkit there):
#   1. stubtest: depositkit/_native.pyi and the pure-Python modules describe the compiled module
#      as it is (entries python/stubtest-allowlist.txt excuses must say why);
#   2. the package itself passes `mypy --strict`;
#   3. every ```python block of README.md passes `mypy --strict`
#      (tests/python/typecheck/check_readme.py).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

echo "--- stubtest depositkit"
"$PY" -m mypy.stubtest depositkit --allowlist python/stubtest-allowlist.txt
echo "--- mypy --strict -p depositkit"
"$PY" -m mypy --strict --cache-dir=/dev/null -p depositkit
echo "--- mypy --strict on README.md's python blocks"
"$PY" tests/python/typecheck/check_readme.py README.md
