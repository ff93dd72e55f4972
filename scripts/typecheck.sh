#!/usr/bin/env bash
# Type checks the Python package (scripts/python-env.sh first: it installs mypy into .venv and
# builds depositkit there):
#   1. the record classes' entries of _native.pyi are what their py_record! declarations
#      (python/src/records/) render (scripts/gen-stubs.sh --check; scripts/gen-stubs.sh rewrites
#      them);
#   2. stubtest: depositkit/_native.pyi and the pure-Python modules describe the compiled module
#      as it is (entries python/stubtest-allowlist.txt excuses must say why);
#   3. the package itself passes `mypy --strict`;
#   4. every ```python block of README.md passes `mypy --strict`
#      (tests/python/typecheck/check_readme.py).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

echo "--- the record classes' stubs match their declarations"
scripts/gen-stubs.sh --check
echo "--- stubtest depositkit"
"$PY" -m mypy.stubtest depositkit --allowlist python/stubtest-allowlist.txt
echo "--- mypy --strict -p depositkit"
"$PY" -m mypy --strict --cache-dir=/dev/null -p depositkit
echo "--- mypy --strict on README.md's python blocks"
"$PY" tests/python/typecheck/check_readme.py README.md
