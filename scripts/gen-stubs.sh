#!/usr/bin/env bash
# The record classes' entries of python/py_src/depositkit/_native.pyi (User, Wallet,
# DepositAddresses, ..., OnrampCompleteEvent) come from their one declaration, the py_record!
# blocks of python/src/records/*.rs: this writes them into the file's marked regions
# (`# BEGIN generated records: <group>` ... `# END generated records: <group>`); the rest of the
# file is written by hand.
#
#   scripts/gen-stubs.sh           # rewrite the regions from the declarations
#   scripts/gen-stubs.sh --check   # fail (naming the first stale line) when the file is stale
#
# Both run the Rust test records::stub::tests::native_pyi_matches_the_record_declarations (so
# `cargo test --workspace` checks it too; DEPOSITKIT_WRITE_STUBS=1 makes it write). No network.
set -euo pipefail
cd "$(dirname "$0")/.."

test_name=records::stub::tests::native_pyi_matches_the_record_declarations
case "${1:-}" in
    "") export DEPOSITKIT_WRITE_STUBS=1 ;;
    --check) unset DEPOSITKIT_WRITE_STUBS ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
cargo test -q -p depositkit-python --lib -- --exact "$test_name" --nocapture
