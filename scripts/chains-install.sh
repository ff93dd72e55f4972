#!/usr/bin/env bash
# Installs the local chains' npm tools into the git-ignored <repo>/.chains folder: anvil (the EVM
# node, @foundry-rs/anvil) and solc-js (compiles tests/chains/fixtures/TestToken.sol), at the
# versions pinned by tests/chains/package.json and package-lock.json (see docs/funding.md §1).
#
#   scripts/chains-install.sh
#
# Idempotent: nothing is done when the anvil binary and solcjs are present and were installed from
# the current lockfile. A fresh machine needs only node and npm. The Solana side (solders) is a
# Python package installed by scripts/python-env.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/tests/chains"
DEST="$ROOT/.chains"
ANVIL="$DEST/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"
SOLCJS="$DEST/node_modules/solc/solc.js"

if [ -x "$ANVIL" ] && [ -f "$SOLCJS" ] && cmp -s "$SRC/package-lock.json" "$DEST/package-lock.json"; then
    echo "chains-install: up to date: $("$ANVIL" --version | head -n 1), solc-js $(node "$SOLCJS" --version) in $DEST"
    exit 0
fi

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "chains-install: $tool is required" >&2; exit 1; }
done

mkdir -p "$DEST"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
# `npm install` with the committed lockfile installs exactly its versions and checks its integrity
# hashes. Not `npm ci`: the lockfile lists only the linux-amd64 anvil binary package (the registry
# reachable here serves no other platform's), and npm ci rejects a lockfile that lacks any optional
# dependency as out of sync, while npm install resolves or skips it. --no-save keeps the copied
# lockfile as committed (it is what the up-to-date check above compares).
# Optional dependencies must stay on (no --omit=optional): the binary package is one of them.
# npm may warn that anvil's install script did not run: harmless, the binary ships in the package.
echo "chains-install: npm install --prefix $DEST (tests/chains/package-lock.json)"
npm install --prefix "$DEST" --no-save --no-audit --no-fund

if [ ! -x "$ANVIL" ]; then
    echo "chains-install: $ANVIL is missing after npm install (the local chains need Linux on x86-64)" >&2
    exit 1
fi
echo "chains-install: installed $("$ANVIL" --version | head -n 1), solc-js $(node "$SOLCJS" --version) in $DEST"
