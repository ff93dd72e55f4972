#!/usr/bin/env bash
# Installs Particle's published Universal Account SDK (@particle-network/universal-account-sdk
# 2.0.3) and viem (the SDK's own dependency, at the version the SDK resolves; sdk-run.mjs signs
# with it) into tests/particle/node_modules, exactly as tests/particle/package-lock.json pins them:
# `npm ci` from the npm registry, every package checked against its integrity hash, cached
# packages used without asking the registry again (--prefer-offline). No install scripts run.
#
#   tests/particle/install.sh
#
# Idempotent: nothing is done when node_modules was installed from the current lockfile.
# devnet/tests/particle_sdk.rs runs sdk-run.mjs with what this installs.
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SDK="$DIR/node_modules/@particle-network/universal-account-sdk/package.json"
STAMP="$DIR/node_modules/.depositkit-package-lock.json"

if [ -f "$SDK" ] && cmp -s "$DIR/package-lock.json" "$STAMP"; then
    echo "particle-sdk: up to date: $(node -p "require('$SDK').version") in $DIR/node_modules"
    exit 0
fi

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "particle-sdk: $tool is required" >&2; exit 1; }
done

echo "particle-sdk: npm ci --prefix $DIR (tests/particle/package-lock.json)"
npm ci --prefix "$DIR" --prefer-offline --ignore-scripts --no-audit --no-fund
cp "$DIR/package-lock.json" "$STAMP"
echo "particle-sdk: installed $(node -p "require('$SDK').version") in $DIR/node_modules"
