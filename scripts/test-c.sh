#!/usr/bin/env bash
# Builds the C library (debug), checks that include/depositkit.h is up to date, then compiles
# every tests/c/*.c against the header with -std=c11 -Wall -Wextra -Wpedantic -Werror and runs
# it twice: linked against libdepositkit.so (rpath) and statically against libdepositkit.a.
# Also compiles the header as C++ (cpp_compat) when a C++ compiler is present.
#
#   scripts/test-c.sh              build, check the header, run the C tests
#   scripts/test-c.sh --valgrind   ... and run each test binary under valgrind as well
#   scripts/test-c.sh --sanitize   ... and run each test built with ASan + UBSan as well
#
# Environment: CC (default gcc), CXX (default g++), CARGO_TARGET_DIR.
# Exits non-zero when anything fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
lib_dir="$target_dir/debug"
build="$root/tests/c/build"
CC="${CC:-gcc}"
CXX="${CXX:-g++}"
# Native libraries the Rust staticlib needs on Linux (rustc --print native-static-libs).
STATIC_LIBS=(-lpthread -ldl -lm)
CFLAGS=(-std=c11 -Wall -Wextra -Wpedantic -Werror -g -I "$root/include")

valgrind=0
sanitize=0
for arg in "$@"; do
  case "$arg" in
    --valgrind) valgrind=1 ;;
    --sanitize) sanitize=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "usage: $0 [--valgrind] [--sanitize]" >&2; exit 2 ;;
  esac
done

cd "$root"
echo "test-c: cargo build -p depositkit-ffi"
cargo build -p depositkit-ffi
scripts/gen-header.sh --check

mkdir -p "$build"
failures=0

run() { # label, command...
  local label="$1"
  shift
  echo "test-c: run $label"
  if ! "$@"; then
    echo "test-c: FAILED: $label" >&2
    failures=$((failures + 1))
  fi
}

if command -v "$CXX" >/dev/null 2>&1; then
  echo "test-c: compile include/depositkit.h as C++"
  echo '#include "depositkit.h"' |
    "$CXX" -std=c++17 -Wall -Wextra -Wpedantic -Werror -I "$root/include" -fsyntax-only -x c++ -
fi

shopt -s nullglob
sources=("$root"/tests/c/*.c)
if [[ ${#sources[@]} -eq 0 ]]; then
  echo "test-c: no tests in tests/c" >&2
  exit 1
fi

for src in "${sources[@]}"; do
  name="$(basename "$src" .c)"
  echo "test-c: compile $name (shared and static)"
  "$CC" "${CFLAGS[@]}" "$src" -o "$build/$name-shared" \
    -L "$lib_dir" -ldepositkit -Wl,-rpath,"$lib_dir"
  "$CC" "${CFLAGS[@]}" "$src" -o "$build/$name-static" \
    "$lib_dir/libdepositkit.a" "${STATIC_LIBS[@]}"

  run "$name (libdepositkit.so)" "$build/$name-shared"
  run "$name (libdepositkit.a)" "$build/$name-static"

  if [[ $valgrind == 1 ]]; then
    for kind in shared static; do
      run "$name ($kind, valgrind)" valgrind --quiet --error-exitcode=1 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect "$build/$name-$kind"
    done
  fi
  if [[ $sanitize == 1 ]]; then
    "$CC" "${CFLAGS[@]}" -fsanitize=address,undefined -fno-omit-frame-pointer "$src" \
      -o "$build/$name-asan" -L "$lib_dir" -ldepositkit -Wl,-rpath,"$lib_dir"
    run "$name (ASan + UBSan)" env ASAN_OPTIONS=detect_leaks=1 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/$name-asan"
  fi
done

if [[ $failures -ne 0 ]]; then
  echo "test-c: $failures run(s) failed" >&2
  exit 1
fi
echo "test-c: all C tests passed"
