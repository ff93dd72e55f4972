#!/usr/bin/env bash
# Builds the C library (debug, with the opt-in cargo feature `devnet`: the tests start devnets
# through the C API; production libraries have none, see scripts/check-production.sh) and
# installs it into a temporary prefix with scripts/install-c.sh (the header, libdepositkit.so.
# VERSION with its SONAME links, libdepositkit.a, depositkit.pc), checks that
# include/depositkit.h is up to date, then compiles every tests/c/*.c against the installed
# header with -std=c11 -Wall -Wextra -Wpedantic -Werror and runs it twice: linked against the
# installed libdepositkit.so (rpath; the program must record the SONAME, libdepositkit.so.0.MINOR)
# and statically against libdepositkit.a (with the .pc's Libs.private, the native libraries
# rustc prints for it).
# The header is compiled as C++ (C++11, 17 and 20, with and without DEPOSITKIT_DEVNET), and the
# two examples are built against the installed files only, with warnings as errors, and run:
# examples/c-make (a copy of it: make, and make static, through pkg-config) and examples/c-cmake
# (pkg_check_modules(... IMPORTED_TARGET), a C and a C++ program).
# cmake, pkg-config, make, g++ and valgrind are installed with apt-get when missing (as root on
# Debian; otherwise the script says what to install), and so is libsecp256k1-dev: the callback
# signer of test_particle_signers.c signs with it (that program alone links -lsecp256k1).
#
# The user-lookup test (test_user_rpc.c) needs a server: the script builds depositkit-devnet,
# runs `depositkit-devnet serve --demo` on a free loopback port with a temporary database, and
# passes its URL and demo credentials to every test as DEPOSITKIT_TEST_* environment variables
# (see tests/c/test_user_rpc.c). The server is stopped with SIGTERM at the end and must exit 0.
# The deposit test (test_deposit.c) needs none of that: it starts a devnet inside its own
# process through the C API (depositkit_devnet_start: the `devnet` feature this script builds
# with; the programs that use it define DEPOSITKIT_DEVNET before including the header).
#
# The funding test (test_funding.c) runs on real local chains: the script starts
# tests/chains/launch.py once (with $CHAINS_ARGS, default `--no-solana`: the C tests use the EVM
# chains only), keeps its stdin open through a fifo, reads the chains file's JSON line from its
# stdout and passes it to every test as DEPOSITKIT_TEST_CHAINS; the test starts a chain-backed
# devnet in its process (depositkit_devnet_start_with_chains). Closing the fifo at the end stops
# the chains. When the launcher fails (anvil or the token fixture missing: run
# scripts/chains-install.sh), the script fails with its message.
#
# The fleet test (test_fleet.c) needs PostgreSQL: the server of $DEPOSITKIT_TEST_POSTGRES_URL
# (scripts/test.sh starts one), else one this script starts with scripts/postgres.sh (stopped at
# the end). Each run of it gets a new, empty database there (CREATE DATABASE through psql), as
# DEPOSITKIT_TEST_FLEET_URL; its devnet runs in its own process, like test_deposit's.
#
# The handles test (test_handles.c) runs create/use/free cycles of every handle, owned string,
# subscription and host provider of the API. Besides its two plain runs it ALWAYS runs under
# valgrind (not only with --valgrind): linked against libdepositkit.so once with 1 cycle and
# once with $HANDLE_CYCLES cycles, and statically once with 1 cycle (about 1.5 to 2 minutes in
# all on 2 cores). Each run must have no definite or indirect leak and no memory error, and
# the shared runs' "still reachable" + "possibly lost" bytes at exit may grow from 1 cycle to
# $HANDLE_CYCLES by at most $HANDLE_GROWTH_BOUND bytes (see the comment there): what the library
# creates once per process (its tokio runtime, thread locals) must not grow with the cycles.
# Every run of test_handles shares one devnet database ($DEPOSITKIT_HANDLE_DEVNET_DB), so that
# the JWT signing key is generated once, by a plain run, never under valgrind. valgrind is
# required (installed when missing, as above).
#
#   scripts/test-c.sh              build, check the header, run the C tests, and test_handles
#                                  under valgrind
#   scripts/test-c.sh --valgrind   ... and run every other test binary under valgrind as well
#   scripts/test-c.sh --sanitize   ... and run each test built with ASan + UBSan as well
#
# Environment: CC (default gcc), CXX (default g++), CMAKE (default cmake), CARGO_TARGET_DIR,
# PYTHON (default .venv/bin/python, made by scripts/python-env.sh), CHAINS_ARGS (default
# --no-solana), VALGRIND (default valgrind), HANDLE_CYCLES (default 5),
# DEPOSITKIT_TEST_POSTGRES_URL (a PostgreSQL server's admin URL; default: one started here),
# DEPOSITKIT_PG_BIN (the PostgreSQL binaries, as for scripts/postgres.sh).
# Exits non-zero when anything fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
build="$root/tests/c/build"
CC="${CC:-gcc}"
CXX="${CXX:-g++}"
CMAKE="${CMAKE:-cmake}"
# The native libraries the static library needs: the Libs.private of the installed
# depositkit.pc (what rustc prints for it, --print native-static-libs), read below.
STATIC_LIBS=()

valgrind=0
sanitize=0
for arg in "$@"; do
  case "$arg" in
    --valgrind) valgrind=1 ;;
    --sanitize) sanitize=1 ;;
    -h|--help) sed -n '2,62p' "$0"; exit 0 ;;
    *) echo "usage: $0 [--valgrind] [--sanitize]" >&2; exit 2 ;;
  esac
done

VALGRIND="${VALGRIND:-valgrind}"

# --- the Debian packages the script needs -------------------------------------------------------
# command -> package, for each tool that is missing and has its default name (a CC, CXX, CMAKE
# or VALGRIND set to something else must exist).
missing=()
for pair in "$CC:gcc:gcc" "$CXX:g++:g++" "$CMAKE:cmake:cmake" "pkg-config:pkg-config:pkg-config" \
  "make:make:make" "readelf:readelf:binutils" "$VALGRIND:valgrind:valgrind"; do
  IFS=: read -r tool default package <<<"$pair"
  if ! command -v "$tool" >/dev/null 2>&1; then
    if [[ $tool != "$default" ]]; then
      echo "test-c: $tool not found" >&2
      exit 1
    fi
    missing+=("$package")
  fi
done
if [[ ! -f /usr/include/secp256k1_recovery.h ]]; then
  missing+=(libsecp256k1-dev)
fi
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "test-c: apt-get install ${missing[*]}"
    # A fresh machine may have no package lists yet; a failed update still leaves the old ones.
    apt-get update -qq || echo "test-c: apt-get update failed; trying the install anyway" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  else
    echo "test-c: missing ${missing[*]}: install them (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
HANDLE_CYCLES="${HANDLE_CYCLES:-5}"
if ! [[ $HANDLE_CYCLES =~ ^[0-9]+$ ]] || [[ $HANDLE_CYCLES -lt 2 ]]; then
  echo "test-c: HANDLE_CYCLES must be a number of at least 2, not \"$HANDLE_CYCLES\"" >&2
  exit 2
fi

cd "$root"
mkdir -p "$build"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/depositkit-test-c.XXXXXX")"
devnet_pid=""
chains_pid=""
chains_fd=""
# The PostgreSQL server this script started for test_fleet (none when it was given one).
pg_dir=""
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
  if [[ -n $pg_dir ]]; then
    scripts/postgres.sh stop "$pg_dir" || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# --- build and install into a temporary prefix --------------------------------------------------
# install-c.sh builds with `cargo rustc ... -- --print native-static-libs` and writes rustc's list
# into the .pc's Libs.private.
prefix="$tmp/prefix"
scripts/install-c.sh --debug --features devnet "$prefix"
lib_dir="$prefix/lib"
pc="$lib_dir/pkgconfig/depositkit.pc"
read -r -a STATIC_LIBS <<<"$(sed -n 's/^Libs.private: //p' "$pc")"
if [[ ${#STATIC_LIBS[@]} -eq 0 ]]; then
  echo "test-c: $pc has no Libs.private" >&2
  exit 1
fi
soname="$(readelf -d "$lib_dir/libdepositkit.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')"
echo "test-c: installed libdepositkit.so (SONAME $soname); libdepositkit.a links with" \
  "${STATIC_LIBS[*]}"
CFLAGS=(-std=c11 -Wall -Wextra -Wpedantic -Werror -g -I "$prefix/include")
echo "test-c: cargo build -p depositkit-devnet"
cargo build -p depositkit-devnet
scripts/gen-header.sh --check

failures=0

# --- the devnet server -------------------------------------------------------------------------
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

# --- PostgreSQL for test_fleet ------------------------------------------------------------------
# Started before the chains: a server started later would inherit the chains fifo's writing end
# (its daemon keeps the fds it is given), and the launcher would never see its stdin close.
postgres_url="${DEPOSITKIT_TEST_POSTGRES_URL:-}"
fleet_databases=0
if [[ -z $postgres_url ]]; then
  # Under /tmp: as root the server runs as user postgres, which must be able to enter it.
  pg_dir="/tmp/depositkit-test-c-pg.$$"
  echo "test-c: start PostgreSQL (scripts/postgres.sh start $pg_dir)"
  postgres_url="$(scripts/postgres.sh start "$pg_dir")"
fi
psql=""
newest_pg="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
for candidate in "${DEPOSITKIT_PG_BIN:-}/psql" "$newest_pg/psql" "$(command -v psql || true)"; do
  if [[ -f $candidate && -x $candidate ]]; then
    psql="$candidate"
    break
  fi
done
if [[ -z $psql ]]; then
  echo "test-c: psql not found (install Debian's postgresql package)" >&2
  exit 1
fi

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
# test_handles' devnet database, shared by all its runs (created by the first).
DEPOSITKIT_HANDLE_DEVNET_DB="$tmp/handles-devnet.sqlite"
export DEPOSITKIT_TEST_CHAINS DEPOSITKIT_HANDLE_DEVNET_DB
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

# Whether the program $1 loads libdepositkit by its SONAME (not by the development name).
loads_soname() {
  local needed
  needed="$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(libdepositkit[^]]*\)\]$/\1/p')"
  if [[ $needed != "$soname" ]]; then
    echo "test-c: $1 needs \"$needed\", not the SONAME $soname" >&2
    return 1
  fi
}

# --- the header as C++ ------------------------------------------------------------------------
for std in c++11 c++17 c++20; do
  echo "test-c: compile depositkit.h as $std (with and without DEPOSITKIT_DEVNET)"
  echo '#include <depositkit.h>' |
    "$CXX" -std="$std" -Wall -Wextra -Wpedantic -Werror -I "$prefix/include" -fsyntax-only \
      -x c++ -
  printf '#define DEPOSITKIT_DEVNET 1\n#include <depositkit.h>\n' |
    "$CXX" -std="$std" -Wall -Wextra -Wpedantic -Werror -I "$prefix/include" -fsyntax-only \
      -x c++ -
done

# --- the examples, against the installed files only ---------------------------------------------
# examples/c-make: a copy, so that nothing is built in the work tree; pkg-config finds the
# prefix through PKG_CONFIG_PATH, and the Makefile's own flags get -Werror added.
echo "test-c: examples/c-make: make, make static (PKG_CONFIG_PATH=$lib_dir/pkgconfig)"
cp -R "$root/examples/c-make" "$tmp/c-make"
make -s -C "$tmp/c-make" CC="$CC" PKG_CONFIG_PATH="$lib_dir/pkgconfig" \
  CFLAGS="-O2 -g -std=c11 -Wall -Wextra -Wpedantic -Werror" all static
loads_soname "$tmp/c-make/units"
if readelf -d "$tmp/c-make/units-static" | grep -q 'NEEDED.*libdepositkit'; then
  echo "test-c: units-static loads libdepositkit at run time" >&2
  exit 1
fi
run "examples/c-make units (shared)" "$tmp/c-make/units" 25 USDC 8453
run "examples/c-make units-static" "$tmp/c-make/units-static"
# examples/c-cmake: found through CMAKE_PREFIX_PATH (pkg_check_modules searches its lib/pkgconfig).
echo "test-c: examples/c-cmake: cmake (CMAKE_PREFIX_PATH=$prefix), cmake --build"
"$CMAKE" -S "$root/examples/c-cmake" -B "$tmp/c-cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS="-Werror" -DCMAKE_CXX_FLAGS="-Werror" >"$tmp/c-cmake.log" ||
  { cat "$tmp/c-cmake.log" >&2; exit 1; }
grep 'depositkit' "$tmp/c-cmake.log" || true
"$CMAKE" --build "$tmp/c-cmake" -- -s
loads_soname "$tmp/c-cmake/validate"
loads_soname "$tmp/c-cmake/validate_cpp"
run "examples/c-cmake validate" "$tmp/c-cmake/validate"
run "examples/c-cmake validate_cpp" "$tmp/c-cmake/validate_cpp"

shopt -s nullglob
sources=("$root"/tests/c/*.c)
if [[ ${#sources[@]} -eq 0 ]]; then
  echo "test-c: no tests in tests/c" >&2
  exit 1
fi

# What a run of test $1 needs in its environment: for test_fleet, a new empty database
# (exported as DEPOSITKIT_TEST_FLEET_URL, on the server of postgres_url with its query kept).
fresh_env() {
  [[ $1 == test_fleet ]] || return 0
  fleet_databases=$((fleet_databases + 1))
  local name="dk_test_c_$$_$fleet_databases"
  "$psql" -X -q -d "$postgres_url" -c "CREATE DATABASE $name"
  local base="${postgres_url%%\?*}"
  DEPOSITKIT_TEST_FLEET_URL="${base%/*}/$name${postgres_url#"$base"}"
  export DEPOSITKIT_TEST_FLEET_URL
}

# The libraries a test program needs besides depositkit's.
extra_libs() {
  case "$1" in
    test_particle_signers) echo "-lsecp256k1" ;;
  esac
}

for src in "${sources[@]}"; do
  name="$(basename "$src" .c)"
  read -r -a extra <<<"$(extra_libs "$name")"
  echo "test-c: compile $name (shared and static)"
  "$CC" "${CFLAGS[@]}" "$src" -o "$build/$name-shared" \
    -L "$lib_dir" -ldepositkit -Wl,-rpath,"$lib_dir" ${extra[@]+"${extra[@]}"}
  "$CC" "${CFLAGS[@]}" "$src" -o "$build/$name-static" \
    "$lib_dir/libdepositkit.a" "${STATIC_LIBS[@]}" ${extra[@]+"${extra[@]}"}
  loads_soname "$build/$name-shared"

  fresh_env "$name"
  run "$name (libdepositkit.so)" "$build/$name-shared"
  fresh_env "$name"
  run "$name (libdepositkit.a)" "$build/$name-static"

  # test_handles runs under valgrind below in any case.
  if [[ $valgrind == 1 && $name != test_handles ]]; then
    for kind in shared static; do
      fresh_env "$name"
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
      -o "$build/$name-asan" -L "$lib_dir" -ldepositkit -Wl,-rpath,"$lib_dir" \
      ${extra[@]+"${extra[@]}"}
    fresh_env "$name"
    run "$name (ASan + UBSan)" env ASAN_OPTIONS=detect_leaks=1 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/$name-asan"
  fi
done

# --- test_handles under valgrind, and the growth of what stays allocated ----------------------

# valgrind's flags for test_handles: a definite or indirect leak, or any memory error, fails the
# run. Not --quiet: it would drop the LEAK SUMMARY parsed below, so the output goes to a log
# file instead, shown when the run fails.
VALGRIND_FLAGS=(--error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect
  --show-leak-kinds=definite,indirect)

# How many more bytes "still reachable" + "possibly lost" may be at exit after HANDLE_CYCLES
# cycles than after 1. test_handles frees everything it creates, so what is left at exit is
# what the process creates once: the shared tokio runtime (its drivers, signal registry and
# blocking pool), statics (the table of pending provider replies, ureq's headers) and the
# records and thread locals of the runtime's threads alive at exit (2 workers and, here, 2
# blocking-pool threads): 52.2-52.9 KB still reachable and 1,692 bytes possibly lost (those 4
# threads' pthread TLS blocks and the pool's table of their join handles).
#
# Measured on the 2-core dev machine (shared build: 6 runs of 1 cycle, 3 of 5 cycles, 3 of 8),
# always the same: possibly lost 1,692 -> 1,692, still reachable 52,571 -> 52,941, +370 bytes
# that do not grow further (5 and 8 cycles give the same): rand's ThreadRng (336 bytes + 32 for
# its destructor's registration) that an HTTP retry's jitter creates on a blocking-pool thread,
# on one of the two after 1 cycle and on both after more; and the last-error messages the two
# threads running the C providers keep, which quote the reply handle's number ("reply 0x9 was
# answered already"), one hex digit longer once it passes 0xf. What may differ between runs is
# how many blocking-pool threads are alive at exit (one idle for 10 s exits): one more holds
# about 1.1 KB (std::thread and pthread records 470 bytes, tokio's thread locals 64, the
# last-error message 130 + 32, a ThreadRng 368). The bound covers the measured 370 plus one
# such thread, rounded up: 2,048 bytes. A leak that grows with the cycles shows above it from
# about 2,048 / (HANDLE_CYCLES - 1) = 512 bytes a cycle: a devnet (with its own thread and
# runtime), a deposit client (with its dispatcher thread) or a user-lookup client kept alive is
# each far more than that; a thread left behind (470 bytes of records plus its thread locals)
# is about that. A smaller growth, such as one subscription kept in a table, shows only with
# more cycles (HANDLE_CYCLES=20 notices 108 bytes a cycle; a cycle takes 3-6 s under valgrind).
HANDLE_GROWTH_BOUND=2048

# Runs test_handles' $1 build (shared or static) under valgrind with $2 cycles; logs to
# $tmp/handles-$1-$2.log and, on success, sets handle_held to its "still reachable" + "possibly
# lost" bytes.
handle_held=""
run_handles_valgrind() {
  local kind="$1"
  local cycles="$2"
  local log="$tmp/handles-$kind-$cycles.log"
  local started=$SECONDS
  echo "test-c: run test_handles ($cycles cycle(s), $kind, valgrind)"
  handle_held=""
  if ! "$VALGRIND" "${VALGRIND_FLAGS[@]}" --log-file="$log" "$build/test_handles-$kind" \
    "$cycles"; then
    echo "test-c: FAILED: test_handles ($cycles cycle(s), $kind, valgrind); valgrind's log:" >&2
    cat "$log" >&2
    failures=$((failures + 1))
    return
  fi
  # "==PID==    still reachable: 52,203 bytes in 125 blocks"; no LEAK SUMMARY at all when
  # every block was freed.
  local what bytes line held=0 summary=""
  for what in "definitely lost" "indirectly lost" "possibly lost" "still reachable"; do
    line="$(grep -m 1 "== *$what: " "$log" || true)"
    bytes="$(sed -n "s/.*$what: \([0-9,]*\) bytes.*/\1/p" <<<"$line" | tr -d ,)"
    if [[ -z $bytes ]]; then
      if ! grep -q "All heap blocks were freed" "$log"; then
        echo "test-c: FAILED: no \"$what\" in valgrind's log of test_handles:" >&2
        cat "$log" >&2
        failures=$((failures + 1))
        return
      fi
      bytes=0
    fi
    summary+="$what $bytes, "
    if [[ $what == "possibly lost" || $what == "still reachable" ]]; then
      held=$((held + bytes))
    fi
  done
  handle_held=$held
  echo "test-c: test_handles ($cycles cycle(s), $kind, valgrind): ${summary%, } bytes;" \
    "$((SECONDS - started)) s"
}

run_handles_valgrind shared 1
held_once="$handle_held"
run_handles_valgrind shared "$HANDLE_CYCLES"
held_many="$handle_held"
if [[ -n $held_once && -n $held_many ]]; then
  growth=$((held_many - held_once))
  if [[ $growth -gt $HANDLE_GROWTH_BOUND ]]; then
    echo "test-c: FAILED: test_handles holds $growth more bytes at exit (still reachable +" \
      "possibly lost) after $HANDLE_CYCLES cycles than after 1 ($held_many vs $held_once), more" \
      "than the bound of $HANDLE_GROWTH_BOUND: something grows with the cycles. Rerun" \
      "valgrind with --show-leak-kinds=all on both counts and compare the records." >&2
    failures=$((failures + 1))
  else
    echo "test-c: test_handles holds $held_once bytes at exit after 1 cycle, $held_many after" \
      "$HANDLE_CYCLES (growth $growth, bound $HANDLE_GROWTH_BOUND)"
  fi
fi
# The static build once, for leaks and memory errors only (the same code: no second growth
# check).
run_handles_valgrind static 1

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
