#!/usr/bin/env bash
# Checks that the artefacts built the documented production way contain no devnet emulator:
#
# 1. the C library: `cargo build -p depositkit-ffi --release` (no cargo features). Neither
#    libdepositkit.so nor libdepositkit.a may define a depositkit_devnet_* function or any
#    symbol of the devnet crate or of the crates only it brings in (axum, hyper, matchit, ...),
#    and the .so must export exactly the functions include/depositkit.h declares without
#    DEPOSITKIT_DEVNET: nothing of the rest of the API is lost.
# 2. the Python wheel: `maturin build --release` (no `--features devnet`) into a temporary
#    directory. Its extension (depositkit/_native.abi3.so) may hold no such symbol either; the
#    wheel is installed into a fresh venv, where `import depositkit` must work, `Devnet` must be
#    absent (not in `__all__`, `hasattr` false), `depositkit.Devnet` must raise AttributeError
#    saying how to get it and `from depositkit import Devnet` must raise ImportError.
#
# So that the symbol check cannot pass by not seeing anything, the same patterns must match the
# extension scripts/python-env.sh built WITH the feature (.venv's depositkit/_native*.so).
#
#   scripts/check-production.sh           release builds, the documented production way
#   scripts/check-production.sh --debug   the same without --release (what scripts/test.sh
#                                         runs): the features decide what is linked in, and
#                                         debug builds reuse the dependencies the tests built
#                                         (about 1 minute), where the release builds compile
#                                         every dependency again on a fresh machine (about 8.5
#                                         minutes on 2 cores; 3.5 once target/release is warm)
#
# Needs the project's .venv (scripts/python-env.sh: maturin, and the positive control), a C
# compiler (CC, default gcc: to read the header's declarations), nm and unzip.
#
# Environment: CARGO_TARGET_DIR, PYTHON (default .venv/bin/python), CC.
# Exits non-zero when anything fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
python="${PYTHON:-$root/.venv/bin/python}"
maturin="$(dirname "$python")/maturin"
CC="${CC:-gcc}"
release=(--release)
profile=release
case "${1:-}" in
  "") ;;
  --debug) release=() profile=debug ;;
  -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
  *) echo "usage: $0 [--debug]" >&2; exit 2 ;;
esac
for tool in nm unzip; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check-production: $tool not found" >&2
    exit 1
  fi
done
if [[ ! -x $python || ! -x $maturin ]]; then
  echo "check-production: $python or $maturin not found: run scripts/python-env.sh" >&2
  exit 1
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/depositkit-production.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "check-production: FAILED: $*" >&2
  failures=$((failures + 1))
}

# What the devnet brings: its C functions, its crate, and the crates only it depends on
# (`cargo tree -p depositkit-ffi -e normal` with and without `--features devnet`), matched in
# nm's demangled output.
DEVNET_SYMBOLS='depositkit_devnet|\b(axum|axum_core|hyper|hyper_util|matchit|tower)::'

# Prints the symbols of $1 (every defined symbol of a shared object or archive, demangled) that
# match DEVNET_SYMBOLS, at most 20.
devnet_symbols() {
  { nm -C --defined-only "$1" 2>/dev/null || true; } | grep -E "$DEVNET_SYMBOLS" | head -n 20 || true
}

# --- the control: the patterns see the devnet where it is --------------------------------------
dev_ext="$("$python" -c 'import depositkit._native as n; print(n.__file__)')"
if [[ -z "$(devnet_symbols "$dev_ext")" ]]; then
  fail "no devnet symbol found in $dev_ext, which scripts/python-env.sh builds with the devnet:" \
    "the patterns ($DEVNET_SYMBOLS) or nm do not see them, so this check would prove nothing"
else
  echo "check-production: control: the devnet build's extension has devnet symbols"
fi

# --- the C library ----------------------------------------------------------------------------
echo "check-production: cargo build -p depositkit-ffi ${release[*]}"
start=$SECONDS
cargo build -p depositkit-ffi "${release[@]}"
echo "check-production: built in $((SECONDS - start)) s"
for lib in libdepositkit.so libdepositkit.a; do
  found="$(devnet_symbols "$target_dir/$profile/$lib")"
  if [[ -n $found ]]; then
    fail "$lib ($profile) holds devnet symbols:"$'\n'"$found"
  else
    echo "check-production: $lib ($profile): no devnet symbol"
  fi
done
# The functions the header declares for a build without the devnet, and those the library
# exports: the same names.
"$CC" -E -P -I "$root/include" -x c "$root/include/depositkit.h" |
  grep -oE '\bdepositkit_[a-z0-9_]+ *\(' | sed 's/ *($//' | sort -u >"$tmp/declared"
nm -D --defined-only "$target_dir/$profile/libdepositkit.so" | awk '$2 == "T" { print $3 }' |
  grep '^depositkit_' | sort -u >"$tmp/exported"
if ! diff -u --label declared --label exported "$tmp/declared" "$tmp/exported"; then
  fail "libdepositkit.so ($profile) does not export exactly what include/depositkit.h declares"
elif [[ $(wc -l <"$tmp/declared") -lt 50 ]]; then
  fail "include/depositkit.h declares only $(wc -l <"$tmp/declared") functions: not parsed?"
else
  echo "check-production: libdepositkit.so ($profile) exports the $(wc -l <"$tmp/declared")" \
    "functions the header declares without DEPOSITKIT_DEVNET"
fi

# --- the wheel ----------------------------------------------------------------------------------
echo "check-production: maturin build ${release[*]} (in python/)"
start=$SECONDS
(cd "$root/python" && "$maturin" build "${release[@]}" --interpreter "$python" --out "$tmp/wheels")
echo "check-production: built in $((SECONDS - start)) s"
wheels=("$tmp"/wheels/depositkit-*.whl)
if [[ ${#wheels[@]} -ne 1 || ! -f ${wheels[0]} ]]; then
  echo "check-production: expected one wheel in $tmp/wheels, found: ${wheels[*]}" >&2
  exit 1
fi
wheel="${wheels[0]}"
mkdir "$tmp/unpacked"
unzip -q "$wheel" -d "$tmp/unpacked"
extensions=("$tmp"/unpacked/depositkit/_native*.so)
if [[ ${#extensions[@]} -ne 1 || ! -f ${extensions[0]} ]]; then
  fail "$(basename "$wheel") has no depositkit/_native*.so"
else
  found="$(devnet_symbols "${extensions[0]}")"
  if [[ -n $found ]]; then
    fail "$(basename "$wheel")'s $(basename "${extensions[0]}") holds devnet symbols:"$'\n'"$found"
  else
    echo "check-production: $(basename "$wheel"): its extension has no devnet symbol"
  fi
fi

echo "check-production: install $(basename "$wheel") into a fresh venv"
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --no-index --no-deps "$wheel"
# Run outside the repository, so that nothing but the installed wheel can be imported.
if ! (cd "$tmp" && env -u PYTHONPATH "$tmp/venv/bin/python" -I - <<'EOF'
import depositkit

assert depositkit.__file__.startswith(__import__("sys").prefix), depositkit.__file__
assert depositkit.is_valid_evm_address("0x52908400098527886E0F7030069857D2E4169EE7")
assert hasattr(depositkit, "DepositClient") and hasattr(depositkit, "UserRpcClient")
assert not hasattr(depositkit._native, "Devnet")
assert not hasattr(depositkit, "Devnet")
assert "Devnet" not in depositkit.__all__
for name in depositkit.__all__:
    assert hasattr(depositkit, name), name
try:
    depositkit.Devnet
except AttributeError as error:
    assert "built without the devnet emulator" in str(error), error
    assert "--features devnet" in str(error), error
else:
    raise AssertionError("depositkit.Devnet exists in the production wheel")
try:
    from depositkit import Devnet  # noqa: F401
except ImportError:
    pass
else:
    raise AssertionError("from depositkit import Devnet works in the production wheel")
namespace: dict = {}
exec("from depositkit import *", namespace)
assert "Devnet" not in namespace
print("check-production: the wheel imports; depositkit.Devnet raises AttributeError")
EOF
); then
  fail "the production wheel does not behave as documented in a fresh venv"
fi

if [[ $failures -ne 0 ]]; then
  echo "check-production: $failures check(s) failed" >&2
  exit 1
fi
echo "check-production: the production C library and wheel contain no devnet"
