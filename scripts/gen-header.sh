#!/usr/bin/env bash
# Regenerates include/depositkit.h from ffi/src with cbindgen (pinned below).
#
#   scripts/gen-header.sh           write include/depositkit.h
#   scripts/gen-header.sh --check   regenerate into a temp file; fail with a diff when the
#                                   committed header is stale (CI runs this)
#
# cbindgen is pinned to one exact version because point releases change the output. When the
# pinned binary is missing, it is installed with `cargo install --locked` into
# target/tools (bin/cbindgen), so a fresh machine needs nothing but cargo (about a minute, once).
# It is built with --debug: that halves the build on a fresh CI machine, and generating the
# header takes well under a second either way. Installing the CLI, rather than building a
# workspace tool on the cbindgen library, keeps cbindgen and its dependency tree out of the
# workspace, its Cargo.lock and every `cargo build/test/clippy` of the workspace.
set -euo pipefail

CBINDGEN_VERSION=0.29.4

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
tools="$target_dir/tools"
cbindgen="$tools/bin/cbindgen"
header="$root/include/depositkit.h"

mode=write
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

if [[ ! -x "$cbindgen" ]] || [[ "$("$cbindgen" --version 2>/dev/null)" != "cbindgen $CBINDGEN_VERSION" ]]; then
  echo "gen-header: installing cbindgen $CBINDGEN_VERSION into $tools" >&2
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked --debug --force \
    --root "$tools" --target-dir "$tools/build" >&2
fi

generate() {
  # --lockfile: parse with the workspace's lock file; cbindgen reads only ffi/src
  # (parse_deps = false in ffi/cbindgen.toml).
  (cd "$root" && "$cbindgen" --quiet --config ffi/cbindgen.toml --crate depositkit-ffi \
    --lockfile "$root/Cargo.lock" --output "$1" ffi)
}

if [[ $mode == write ]]; then
  mkdir -p "$(dirname "$header")"
  generate "$header"
  echo "gen-header: wrote ${header#"$root"/}"
else
  tmp="$(mktemp "${TMPDIR:-/tmp}/depositkit.h.XXXXXX")"
  trap 'rm -f "$tmp"' EXIT
  generate "$tmp"
  if ! diff -u --label "include/depositkit.h (committed)" --label "include/depositkit.h (generated)" \
      "$header" "$tmp"; then
    echo "gen-header: include/depositkit.h is stale; run scripts/gen-header.sh and commit it" >&2
    exit 1
  fi
  echo "gen-header: include/depositkit.h is up to date"
fi
