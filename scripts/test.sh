#!/usr/bin/env bash
# Runs every test of depositkit: Rust (unit, property, integration, ABI), the header drift check,
# the C programs (shared and static, against the library installed into a temporary prefix by
# scripts/install-c.sh) and the C/CMake examples, the benches in test mode, the check that
# production builds carry no devnet (and that the production wheel is abi3 + manylinux2014),
# stubtest and mypy --strict, the pytest suite (against the wheel installed into .venv), the devnet
# dashboard in headless Chromium, and every fuzz target briefly.
# Installs what it needs by itself (the project-local .venv with maturin, ziglang, pytest and
# solders, and the depositkit wheel built with the devnet; anvil and solc-js from npm into
# .chains/; Particle's Universal Account SDK from npm into tests/particle/node_modules; cmake and
# pkg-config with apt-get when missing, as root).
# Exits non-zero when any step fails; each runner prints its own summary.
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

failed=()
step() {
    local name=$1
    shift
    echo
    echo "=== $name: $*"
    local start=$SECONDS
    if "$@"; then
        echo "=== $name: ok ($((SECONDS - start)) s)"
    else
        echo "=== $name: FAILED ($((SECONDS - start)) s)"
        failed+=("$name")
    fi
}

pytest_step() {
    .venv/bin/python -m pytest tests/python -q -p no:cacheprovider
    local rc=$?
    if [ "$rc" -eq 5 ]; then
        echo "pytest collected no tests: that is a failure"
        return 1
    fi
    return "$rc"
}

step fmt cargo fmt --all --check
# Builds the devnet wheel (abi3, manylinux2014) and installs it into .venv: what pytest tests.
step python-env scripts/python-env.sh
# The devnet dashboard in a real headless Chromium (Debian's chromium and chromium-driver, apt-get
# when missing; Selenium into .venv), with a depositkit client watching: writes docs/dashboard.png.
step dashboard tests/dashboard/run.sh
# The local chains (anvil from npm, solc-js) the funding tests of every language run on.
step chains-install scripts/chains-install.sh
# Particle's published Universal Account SDK (npm ci of tests/particle/package-lock.json), which
# devnet/tests/particle_sdk.rs (in cargo-test) runs against devnet's Particle JSON-RPC.
step particle-sdk tests/particle/install.sh
# One throwaway PostgreSQL server (scripts/postgres.sh: initdb + pg_ctl on a private port, Debian's
# postgresql package installed when missing) for every PostgreSQL test of the run: each test makes
# a database of its own in it (depositkit_server::testing). Stopped when this script exits.
pg_dir=/tmp/depositkit-test-pg.$$
trap 'scripts/postgres.sh stop "$pg_dir"' EXIT
postgres_start() {
    DEPOSITKIT_TEST_POSTGRES_URL=$(scripts/postgres.sh start "$pg_dir") || return 1
    export DEPOSITKIT_TEST_POSTGRES_URL
    echo "PostgreSQL for the tests: $DEPOSITKIT_TEST_POSTGRES_URL"
}
step postgres postgres_start
# --no-fail-fast: one failing test binary must not hide the results of the ones after it.
step cargo-test cargo test --workspace --no-fail-fast
step benches cargo test -p depositkit-benches --benches
step clippy cargo clippy --workspace --all-targets --features depositkit-python/devnet -- -D warnings
step c-tests scripts/test-c.sh
step production scripts/check-production.sh --debug
step typecheck scripts/typecheck.sh
step pytest pytest_step
# Every cargo-fuzz target for 10 s from the committed seeds (no sanitizer; the long run is
# scripts/fuzz.sh by hand): ~4.5 min cold on 2 cores, ~2 min once target/fuzz/ is cached.
step fuzz scripts/fuzz.sh --ci

echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED steps: ${failed[*]}"
    exit 1
fi
echo "all test steps passed"
