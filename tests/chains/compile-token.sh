#!/usr/bin/env bash
# Compiles tests/chains/fixtures/TestToken.sol with the solc-js of .chains/ (scripts/chains-install.sh)
# into the committed fixture tests/chains/fixtures/TestToken.json: {"solcVersion", "abi", "bytecode"}
# (bytecode: the creation code, 0x-prefixed, constructor arguments not included).
#
#   tests/chains/compile-token.sh
#
# Run it after editing TestToken.sol and commit the JSON with it; the tests only read the JSON.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
FIXTURES="$ROOT/tests/chains/fixtures"
SOLCJS="$ROOT/.chains/node_modules/solc/solc.js"

if [ ! -f "$SOLCJS" ]; then
    echo "compile-token: $SOLCJS is missing: run scripts/chains-install.sh" >&2
    exit 3
fi

BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT

# solcjs resolves sources relative to --base-path; compiling from the fixtures folder keeps the
# output file names short and free of this machine's paths.
(cd "$FIXTURES" && node "$SOLCJS" --bin --abi --optimize --base-path . -o "$BUILD" TestToken.sol)

SOLC_VERSION="$(node "$SOLCJS" --version)" BUILD="$BUILD" OUT="$FIXTURES/TestToken.json" node -e '
const fs = require("fs");
const path = require("path");
const stem = path.join(process.env.BUILD, "TestToken_sol_TestToken");
const fixture = {
    solcVersion: process.env.SOLC_VERSION,
    abi: JSON.parse(fs.readFileSync(stem + ".abi", "utf8")),
    bytecode: "0x" + fs.readFileSync(stem + ".bin", "utf8").trim(),
};
fs.writeFileSync(process.env.OUT, JSON.stringify(fixture, null, 2) + "\n");
'
echo "compile-token: wrote $FIXTURES/TestToken.json ($(node "$SOLCJS" --version))"
