#!/usr/bin/env bash
# The dashboard's browser test (tests/dashboard/test_dashboard.py): a real headless Chromium,
# driven by Selenium, against the devnet binary. Installs what it needs when missing: Debian's
# chromium and chromium-driver with apt-get (as root; no browser is downloaded at test time) and
# Selenium into the project's .venv (which scripts/python-env.sh makes, with depositkit in it).
# Writes the screenshot docs/dashboard.png that the README shows.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "chromium and chromedriver are missing: apt-get install chromium chromium-driver (as root)" >&2
        exit 1
    fi
    echo "installing chromium and chromium-driver with apt-get ..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
if [ ! -x .venv/bin/python ]; then
    echo ".venv is missing: run scripts/python-env.sh first" >&2
    exit 1
fi
if ! .venv/bin/python -c "import selenium" 2>/dev/null; then
    .venv/bin/python -m pip install -q "selenium==4.38.0"
fi

cargo build -q -p depositkit-devnet
export DEPOSITKIT_DEVNET_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/depositkit-devnet"
exec .venv/bin/python -m pytest tests/dashboard -q -p no:cacheprovider "$@"
