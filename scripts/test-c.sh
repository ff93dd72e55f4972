#!/usr/bin/env bash
# Builds the C library (debug), checks that include/depositkit.h is up to date, then compiles
# every tests/c/*.c against the header with -std=c11 -Wall -Wextra -Wpedantic -Werror and runs
# it twice: linked against libdepositkit.so (rpath) and statically against libdepositkit.a.
# Also compiles the header as C++ (cpp_compat) when a C++ compiler is present.
#
# The user-lookup test (test_user_rpc.c) needs a server: the script builds depositkit-devnet,
# runs `depositkit-devnet serve --demo` on a free loopback port with a temporary database, and
# passes its URL and demo credentials to every test as DEPOSITKIT_TEST_* environment variables
# (see tests/c/test_user_rpc.c). The server is stopped with SIGTERM at the end and must exit 0.
# The deposit test (test_deposit.c) needs none of that: it starts a devnet inside its own
# process through the C API (depositkit_devnet_start, the library's default `devnet` feature).
#
# The funding test (test_funding.c) runs on real local chains: the script starts
# tests/chains/launch.py once (with $CHAINS_ARGS, default `--no-solana`: the C tests use the EVM
# chains only), keeps its stdin open through a fifo, reads the chains file's JSON line from its
# stdout and passes it to every test as DEPOSITKIT_TEST_CHAINS; the test starts a chain-backed
# devnet in its process (depositkit_devnet_start_with_chains). Closing the fifo at the end stops
# the chains. When the launcher fails (anvil or the token fixture missing: run
# scripts/chains-install.sh), the script fails with its message.
#
#   scripts/test-c.sh              build, check the header, run the C tests
#   scripts/test-c.sh --valgrind   ... and run each test binary under valgrind as well
#   scripts/test-c.sh --sanitize   ... and run each test built with ASan + UBSan as well
#
# Environment: CC (default gcc), CXX (default g++), CARGO_TARGET_DIR, PYTHON (default
# .venv/bin/python, made by scripts/python-env.sh), CHAINS_ARGS (default --no-solana).
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
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "usage: $0 [--valgrind] [--sanitize]" >&2; exit 2 ;;
  esac
done

cd "$root"
echo "test-c: cargo build -p depositkit-ffi -p depositkit-devnet"
cargo build -p depositkit-ffi -p depositkit-devnet
scripts/gen-header.sh --check

mkdir -p "$build"
failures=0

# --- the devnet server -------------------------------------------------------------------------
tmp="$(mktemp -d "${TMPDIR:-/tmp}/depositkit-test-c.XXXXXX")"
devnet_pid=""
chains_pid=""
chains_fd=""
# Closing the launcher's stdin stops the chains; it then exits by itself.
stop_chains() {
  if [[ -n $chains_fd ]]; then
    exec {chains_fd}>&-
    chains_fd=""
  fi
  if [[ -n $chains_pid ]]; then
    local status=0
    wait "$chains_pid" 2>/dev/null || status=$?
    chains_pid=""
    return "$status"
  fi
}
cleanup() {
  if [[ -n $devnet_pid ]]; then
    kill -TERM "$devnet_pid" 2>/dev/null || true
    wait "$devnet_pid" 2>/dev/null || true
  fi
  stop_chains || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "test-c: start depositkit-devnet serve --demo"
"$target_dir/debug/depositkit-devnet" serve --db "$tmp/devnet.sqlite" --listen 127.0.0.1:0 \
  --demo --enable-fault-injection >"$tmp/devnet.out" 2>"$tmp/devnet.err" &
devnet_pid=$!

# The server prints one JSON line with the demo credentials, then
# "depositkit-devnet listening on http://127.0.0.1:PORT". Wait up to 30 s for the second.
base=""
for _ in $(seq 300); do
  base="$(sed -n 's|^depositkit-devnet listening on \(http://[^ ]*\)$|\1|p' "$tmp/devnet.out")"
  [[ -n $base ]] && break
  if ! kill -0 "$devnet_pid" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
if [[ -z $base ]]; then
  echo "test-c: depositkit-devnet did not start; its output:" >&2
  cat "$tmp/devnet.out" "$tmp/devnet.err" >&2
  exit 1
fi
credentials="$(head -n 1 "$tmp/devnet.out")"

# A string field of the credentials line (the values are plain: ids, base58, base64url, hex).
field() {
  local value
  value="$(sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" <<<"$credentials")"
  if [[ -z $value ]]; then
    echo "test-c: the devnet credentials line has no \"$1\"" >&2
    exit 1
  fi
  printf '%s' "$value"
}
DEPOSITKIT_TEST_USER_RPC_URL="$base/user-rpc"
DEPOSITKIT_TEST_PROJECT_ID="$(field projectId)"
DEPOSITKIT_TEST_SERVER_KEY="$(field serverKey)"
DEPOSITKIT_TEST_USER_UUID="$(field userUuid)"
DEPOSITKIT_TEST_USER_TOKEN="$(field userToken)"
DEPOSITKIT_TEST_JWT_UID="$(field jwtUid)"
DEPOSITKIT_TEST_EVM_ADDRESS="$(field evmAddress)"
DEPOSITKIT_TEST_SOLANA_ADDRESS="$(field solanaAddress)"
export DEPOSITKIT_TEST_USER_RPC_URL DEPOSITKIT_TEST_PROJECT_ID DEPOSITKIT_TEST_SERVER_KEY \
  DEPOSITKIT_TEST_USER_UUID DEPOSITKIT_TEST_USER_TOKEN DEPOSITKIT_TEST_JWT_UID \
  DEPOSITKIT_TEST_EVM_ADDRESS DEPOSITKIT_TEST_SOLANA_ADDRESS
echo "test-c: depositkit-devnet serving $DEPOSITKIT_TEST_USER_RPC_URL"

# --- the local chains ----------------------------------------------------------------------------
python="${PYTHON:-$root/.venv/bin/python}"
if [[ ! -x $python ]]; then
  echo "test-c: $python not found: run scripts/python-env.sh (or set PYTHON)" >&2
  exit 1
fi
read -r -a chains_args <<<"${CHAINS_ARGS:---no-solana}"
echo "test-c: start the local chains (tests/chains/launch.py ${chains_args[*]})"
mkfifo "$tmp/chains.in"
"$python" "$root/tests/chains/launch.py" "${chains_args[@]}" <"$tmp/chains.in" \
  >"$tmp/chains.out" 2>"$tmp/chains.err" &
chains_pid=$!
# Open the fifo's writing end (which lets the launcher's stdin open) and keep it until the end.
exec {chains_fd}>"$tmp/chains.in"

# The launcher prints one JSON line when the chains are ready (read once it is complete, with
# its newline). Wait up to 120 s.
chains_json=""
for _ in $(seq 1200); do
  if [[ $(wc -l <"$tmp/chains.out") -ge 1 ]]; then
    chains_json="$(head -n 1 "$tmp/chains.out")"
    break
  fi
  if ! kill -0 "$chains_pid" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
if [[ -z $chains_json ]]; then
  launcher_status=0
  stop_chains || launcher_status=$?
  echo "test-c: the local chains did not start (tests/chains/launch.py exited with status" \
    "$launcher_status); its output:" >&2
  cat "$tmp/chains.err" >&2
  exit 1
fi
DEPOSITKIT_TEST_CHAINS="$chains_json"
export DEPOSITKIT_TEST_CHAINS
echo "test-c: local chains ready: EVM chains" \
  $(grep -o '"chainId": [0-9]*' <<<"$chains_json" | grep -o '[0-9]*$')

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
  # ... and with the devnet functions declared.
  printf '#define DEPOSITKIT_DEVNET 1\n#include "depositkit.h"\n' |
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
      # Only definite and indirect leaks are errors, and only they are shown: the one block
      # "possibly lost" in test_user_rpc is the main thread's std::thread handle (the main
      # thread's thread-locals are never destroyed), allocated when ureq's resolver waits on a
      # channel for its lookup thread. test_deposit has a few more, of threads that outlive
      # main by design: the process-wide tokio runtime's (never shut down) and the devnet's
      # detached key-generation thread. Neither test needs a suppression file.
      run "$name ($kind, valgrind)" valgrind --quiet --error-exitcode=1 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
        "$build/$name-$kind"
    done
  fi
  if [[ $sanitize == 1 ]]; then
    "$CC" "${CFLAGS[@]}" -fsanitize=address,undefined -fno-omit-frame-pointer "$src" \
      -o "$build/$name-asan" -L "$lib_dir" -ldepositkit -Wl,-rpath,"$lib_dir"
    run "$name (ASan + UBSan)" env ASAN_OPTIONS=detect_leaks=1 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/$name-asan"
  fi
done

echo "test-c: stop depositkit-devnet (SIGTERM)"
kill -TERM "$devnet_pid"
devnet_status=0
wait "$devnet_pid" || devnet_status=$?
devnet_pid=""
if [[ $devnet_status -ne 0 ]]; then
  echo "test-c: FAILED: depositkit-devnet exited with status $devnet_status; its stderr:" >&2
  cat "$tmp/devnet.err" >&2
  failures=$((failures + 1))
fi

echo "test-c: stop the local chains"
chains_status=0
stop_chains || chains_status=$?
if [[ $chains_status -ne 0 ]]; then
  echo "test-c: FAILED: tests/chains/launch.py exited with status $chains_status; its stderr:" >&2
  cat "$tmp/chains.err" >&2
  failures=$((failures + 1))
fi

if [[ $failures -ne 0 ]]; then
  echo "test-c: $failures run(s) failed" >&2
  exit 1
fi
echo "test-c: all C tests passed"
