#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ (depositkit-core's parsers) for SECONDS each.
#
#   scripts/fuzz.sh              30 s per target, AddressSanitizer (the long run, by hand)
#   scripts/fuzz.sh 60           60 s per target
#   scripts/fuzz.sh 60 units     only the named targets
#   scripts/fuzz.sh --ci         10 s per target, no sanitizer, fresh corpus: the CI step
#   scripts/fuzz.sh --ci 15 config
#   scripts/fuzz.sh [--ci] --replay TARGET INPUT...   runs the target once on each input
#
# Fails when any target crashes (a panic, a failed property assertion, an AddressSanitizer
# report, an input that runs over 10 s, or a leak), printing the saved input's path, the input
# itself (base64, so that a crash seen only in a CI log can be rebuilt) and the command that
# replays it. Prints runs, executions per second and coverage per target at the end.
#
# CI: scripts/test.sh runs `scripts/fuzz.sh --ci` as its `fuzz` step (8 targets x 10 s), so a
# regression that a target finds within seconds from the committed seeds fails CI; the long run
# stays this script run by hand. With --ci the targets build without a sanitizer
# (`--sanitizer none`), with 16 codegen units and line tables only: a cold build takes ~3 min on
# 2 cores instead of ~6 for the AddressSanitizer one (run speed is the same within noise); the
# whole step ~4.5 min cold, ~2 min once target/fuzz/none is cached and only core changed.
# The fuzzed code (depositkit-core's parsers) has almost no unsafe code, so what the targets look
# for (panics, broken properties, runaway time or memory) is caught without ASan; the long run
# keeps ASan and its leak check. Debug assertions and overflow checks are on in both.
#
# cargo-fuzz is pinned below; when the pinned binary is missing it is installed with
# `cargo install --locked` into target/tools (bin/cargo-fuzz), as scripts/gen-header.sh does for
# cbindgen (~30 s, once). The targets build with the stable toolchain: cargo-fuzz's -Z flags
# (sanitizers, coverage) are allowed with RUSTC_BOOTSTRAP=1, set here for the fuzz build only
# (this script's own process; nothing else sees it). They build into target/fuzz/address or
# target/fuzz/none (one dir per sanitizer, since their flags differ and would rebuild each
# other; under target/ so that a cached target dir caches them too).
#
# Corpora: the committed seeds are fuzz/corpus/<target>/ (a few valid inputs and regression
# inputs each) and are only read. On a long run what the fuzzer finds goes to
# fuzz/corpus-work/<target>/ (ignored by git), which later long runs start from; with --ci it
# goes to a temporary dir removed at exit, so every CI run starts from the seeds alone.
# Crashing inputs go to fuzz/artifacts/<target>/ (ignored by git).
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
tools="$target_dir/tools"
cargo_fuzz="$tools/bin/cargo-fuzz"
fuzz="$root/fuzz"

usage() {
  echo "usage: $0 [--ci] [SECONDS] [TARGET...]" >&2
  echo "       $0 [--ci] --replay TARGET INPUT..." >&2
  exit 2
}
ci=0
replay=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;p}' "$0"; exit 0 ;;
    --ci) ci=1; shift ;;
    --replay) replay=1; shift ;;
    -*) usage ;;
    *) break ;;
  esac
done
if [[ $replay -eq 1 ]]; then
  [[ $# -ge 2 ]] || usage
  seconds=0
elif [[ $ci -eq 1 ]]; then
  seconds="${1:-10}"
else
  seconds="${1:-30}"
fi
if [[ $replay -eq 0 ]]; then
  [[ $seconds =~ ^[1-9][0-9]*$ ]] || usage
  shift || true
fi
rel() { printf '%s' "${1#"$root"/}"; }

if [[ ! -x "$cargo_fuzz" ]] || [[ "$("$cargo_fuzz" --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]]; then
  echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION into $tools" >&2
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --force \
    --root "$tools" --target-dir "$tools/build" >&2
fi

# `cargo fuzz` finds the pinned binary first on PATH. The fuzz crate has its own lock file
# (fuzz/Cargo.lock) and is not a member of the main workspace.
export PATH="$tools/bin:$PATH"
export RUSTC_BOOTSTRAP=1
if [[ $ci -eq 1 ]]; then
  sanitizer=none
  fuzz_flags=(--sanitizer none --codegen-units 16)
  export CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
else
  sanitizer=address
  fuzz_flags=(--sanitizer address)
fi
fuzz_target_dir="$target_dir/fuzz/$sanitizer"
fuzz_flags+=(--target-dir "$fuzz_target_dir")
run_cargo_fuzz() { (cd "$root" && cargo fuzz "$@"); }

mapfile -t all < <(run_cargo_fuzz list)

if [[ $replay -eq 1 ]]; then
  t=$1
  shift
  printf '%s\n' "${all[@]}" | grep -qxF -- "$t" || { echo "fuzz: no target $t" >&2; exit 2; }
  inputs=()
  for input in "$@"; do inputs+=("$(cd "$(dirname "$input")" && pwd)/$(basename "$input")"); done
  run_cargo_fuzz build "${fuzz_flags[@]}" "$t"
  host="$(rustc -vV | sed -n 's/^host: //p')"
  exec "$fuzz_target_dir/$host/release/$t" "${inputs[@]}"
fi
if [[ $# -gt 0 ]]; then
  targets=("$@")
  for t in "${targets[@]}"; do
    if ! printf '%s\n' "${all[@]}" | grep -qxF -- "$t"; then
      echo "fuzz: no target $t; the targets are: ${all[*]}" >&2
      exit 2
    fi
  done
else
  targets=("${all[@]}")
fi
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "fuzz: no fuzz targets found in $fuzz" >&2
  exit 1
fi

start=$SECONDS
echo "fuzz: building all ${#all[@]} targets into $(rel "$fuzz_target_dir") (debug assertions, sanitizer: $sanitizer)" >&2
run_cargo_fuzz build "${fuzz_flags[@]}"
echo "fuzz: built in $((SECONDS - start)) s" >&2

if [[ $ci -eq 1 ]]; then
  work_root="$(mktemp -d "${TMPDIR:-/tmp}/depositkit-fuzz.XXXXXX")"
  trap 'rm -rf "$work_root"' EXIT
else
  work_root="$fuzz/corpus-work"
fi
logs="$fuzz_target_dir/fuzz-logs"
mkdir -p "$logs"
failed=()
summary=()
ci_flag=""
[[ $ci -eq 1 ]] && ci_flag=" --ci"
for t in "${targets[@]}"; do
  seeds="$fuzz/corpus/$t"
  work="$work_root/$t"
  artifacts="$fuzz/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  log="$logs/$t.log"
  echo "fuzz: $t for ${seconds}s (log: $(rel "$log"))" >&2
  before="$(ls -A "$artifacts")"
  status=0
  # New inputs go to the first corpus dir (the work dir); the seeds are only read.
  corpora=("$work")
  [[ -d $seeds ]] && corpora+=("$seeds")
  run_cargo_fuzz run "${fuzz_flags[@]}" "$t" "${corpora[@]}" -- \
    -max_total_time="$seconds" -timeout=10 -print_final_stats=1 >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
  cov="$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)"
  if [[ $status -ne 0 ]]; then
    failed+=("$t")
    summary+=("$(printf '%-20s CRASHED after %s runs' "$t" "${runs:-?}")")
    echo "fuzz: $t CRASHED (exit $status); last lines of the log:" >&2
    tail -n 40 "$log" >&2
    new="$(comm -13 <(printf '%s\n' "$before") <(ls -A "$artifacts") | sed '/^$/d')"
    if [[ -z $new ]]; then
      echo "fuzz: $t saved no input (a build or start-up failure?); see the log above" >&2
    fi
    for a in $new; do
      input="$artifacts/$a"
      echo "fuzz: crashing input: $(rel "$input") ($(wc -c <"$input") bytes)" >&2
      if [[ $(wc -c <"$input") -le 65536 ]]; then
        echo "fuzz: the input as base64; to rebuild it: mkdir -p $(rel "$artifacts") && base64 -d >$(rel "$input") <<'END'" >&2
        base64 -w 76 "$input" >&2
        echo "END" >&2
      fi
      echo "fuzz: replay with: scripts/fuzz.sh${ci_flag} --replay $t $(rel "$input")" >&2
    done
  else
    summary+=("$(printf '%-20s %10s runs  %7s exec/s  cov %s' "$t" "${runs:-?}" "${rate:-?}" "${cov:-?}")")
  fi
done

echo
echo "fuzz: ${seconds}s per target, sanitizer $sanitizer, $((SECONDS - start)) s in all"
printf '  %s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no crashes"
