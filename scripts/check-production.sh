#!/usr/bin/env bash
# Checks that the artefacts built the documented production way contain no devnet emulator:
#
# 1. the C library: `cargo build -p depositkit-ffi --release` (no cargo features). Neither
#    libdepositkit.so nor libdepositkit.a may define a depositkit_devnet_* function or any
#    symbol of the devnet crate or of the crates only it brings in (axum, hyper, matchit, ...),
#    and the .so must export exactly the functions include/depositkit.h declares without
#    DEPOSITKIT_DEVNET: nothing of the rest of the API is lost.
#    The library's SONAME must be the versioned libdepositkit.so.0.MINOR (ffi/build.rs).
# 2. the Python wheel: `maturin build --release --zig --compatibility manylinux2014` (no
#    `--features devnet`) into a temporary directory. It must be the one abi3 wheel for CPython
#    3.9+ and carry the manylinux2014 (manylinux_2_17) tag: its name and its WHEEL tags say
#    cp39-abi3-manylinux2014 / manylinux_2_17, `auditwheel show` (an audit independent of
#    maturin's) finds it consistent with manylinux_2_17, the extension is _native.abi3.so and
#    METADATA requires Python >= 3.9. Its extension may hold no devnet symbol either; the
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
#                                         (the C library's in target/debug, the zig-linked
#                                         wheel's in target/x86_64-unknown-linux-gnu/debug,
#                                         from scripts/python-env.sh; about 2 minutes), where
#                                         the release builds compile every dependency again on
#                                         a fresh machine, once for each of the two (the
#                                         wheel's: 5 minutes cold on 2 busy cores)
#
# Needs the project's .venv (scripts/python-env.sh: maturin, ziglang, auditwheel, and the
# positive control), a C compiler (CC, default gcc: to read the header's declarations), nm,
# readelf and unzip.
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
  -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
  *) echo "usage: $0 [--debug]" >&2; exit 2 ;;
esac
for tool in nm readelf unzip; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check-production: $tool not found" >&2
    exit 1
  fi
done
auditwheel="$(dirname "$python")/auditwheel"
if [[ ! -x $python || ! -x $maturin || ! -x $auditwheel ]]; then
  echo "check-production: $python, $maturin or $auditwheel not found: run" \
    "scripts/python-env.sh" >&2
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
soname="$(readelf -d "$target_dir/$profile/libdepositkit.so" |
  sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')"
if [[ $soname =~ ^libdepositkit\.so\.[0-9]+(\.[0-9]+)?$ ]]; then
  echo "check-production: libdepositkit.so ($profile): SONAME $soname"
else
  fail "libdepositkit.so ($profile) has no versioned SONAME (\"$soname\"): see ffi/build.rs"
fi
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
echo "check-production: maturin build ${release[*]} --zig --compatibility manylinux2014 (in python/)"
start=$SECONDS
# maturin runs zig as `python3 -m ziglang`: the venv's python3 first on PATH.
(cd "$root/python" && PATH="$(dirname "$python"):$PATH" "$maturin" build "${release[@]}" \
  --zig --compatibility manylinux2014 --interpreter "$python" --out "$tmp/wheels")
echo "check-production: built in $((SECONDS - start)) s"
wheels=("$tmp"/wheels/depositkit-*.whl)
if [[ ${#wheels[@]} -ne 1 || ! -f ${wheels[0]} ]]; then
  echo "check-production: expected one wheel in $tmp/wheels, found: ${wheels[*]}" >&2
  exit 1
fi
wheel="${wheels[0]}"
mkdir "$tmp/unpacked"
unzip -q "$wheel" -d "$tmp/unpacked"

# --- its tags: abi3 for CPython 3.9+, manylinux2014 -------------------------------------------
arch="$(uname -m)"
wheel_name="$(basename "$wheel")"
if [[ $wheel_name != depositkit-*-cp39-abi3-manylinux2014_$arch.manylinux_2_17_$arch.whl ]]; then
  fail "$wheel_name is not tagged cp39-abi3-manylinux2014_$arch.manylinux_2_17_$arch"
fi
wheel_tags="$(sed -n 's/^Tag: //p' "$tmp"/unpacked/depositkit-*.dist-info/WHEEL | sort | tr '\n' ' ')"
if [[ $wheel_tags != "cp39-abi3-manylinux2014_$arch cp39-abi3-manylinux_2_17_$arch " ]]; then
  fail "$wheel_name's WHEEL file has the tags \"$wheel_tags\", not cp39-abi3-manylinux2014_$arch" \
    "and cp39-abi3-manylinux_2_17_$arch"
fi
if ! grep -qx 'Requires-Python: >=3.9' "$tmp"/unpacked/depositkit-*.dist-info/METADATA; then
  fail "$wheel_name's METADATA does not say Requires-Python: >=3.9"
fi
if [[ ! -f $tmp/unpacked/depositkit/_native.abi3.so ]]; then
  fail "$wheel_name has no depositkit/_native.abi3.so (the abi3 extension)"
fi
if ! "$auditwheel" show "$wheel" >"$tmp/auditwheel.txt" 2>&1 ||
  ! tr -s ' \n' ' ' <"$tmp/auditwheel.txt" |
    grep -q "consistent with the following platform tag: \"manylinux_2_17_$arch\""; then
  fail "auditwheel does not find $wheel_name consistent with manylinux_2_17_$arch:"$'\n'"$(cat "$tmp/auditwheel.txt")"
else
  echo "check-production: $wheel_name: abi3 (CPython >= 3.9), and auditwheel finds it" \
    "consistent with manylinux_2_17_$arch (manylinux2014)"
fi
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
