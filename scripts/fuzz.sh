#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ (depositkit-core's parsers) for SECONDS each.
#
#   scripts/fuzz.sh              30 s per target
#   scripts/fuzz.sh 60           60 s per target
#   scripts/fuzz.sh 60 units     only the named targets
#
# Fails when any target crashes (a panic, a failed property assertion, an AddressSanitizer
# report, an input that runs over 10 s, or a leak), printing the saved input's path and the
# command that replays it. Prints executions per second per target at the end.
#
# cargo-fuzz is pinned below; when the pinned binary is missing it is installed with
# `cargo install --locked` into target/tools (bin/cargo-fuzz), as scripts/gen-header.sh does for
# cbindgen (about a minute, once). The targets build with the stable toolchain: cargo-fuzz's
# -Z flags (AddressSanitizer, coverage) are allowed with RUSTC_BOOTSTRAP=1, set here for the
# fuzz build only. They build into fuzz/target (ASan flags would otherwise rebuild the shared
# target dir); the first build takes about 6 minutes on 2 cores.
#
# Corpora: the committed seeds are fuzz/corpus/<target>/ (a few valid inputs each) and are only
# read; what the fuzzer finds goes to fuzz/corpus-work/<target>/ (ignored by git), which later
# runs start from. Crashing inputs go to fuzz/artifacts/<target>/ (ignored by git).
# Too slow for scripts/test.sh; run it by hand or in a nightly job.
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
tools="$target_dir/tools"
cargo_fuzz="$tools/bin/cargo-fuzz"
fuzz="$root/fuzz"

case "${1:-}" in
  -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
esac
seconds="${1:-30}"
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [SECONDS] [TARGET...]" >&2
  exit 2
fi
shift || true

if [[ ! -x "$cargo_fuzz" ]] || [[ "$("$cargo_fuzz" --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]]; then
  echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION into $tools" >&2
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --force \
    --root "$tools" --target-dir "$tools/build" >&2
fi

# `cargo fuzz` finds the pinned binary first on PATH. The fuzz crate has its own target dir and
# lock file (fuzz/Cargo.lock).
export PATH="$tools/bin:$PATH"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$fuzz/target"
run_cargo_fuzz() { (cd "$root" && cargo fuzz "$@"); }

mapfile -t all < <(run_cargo_fuzz list)
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

echo "fuzz: building ${#targets[@]} targets (debug assertions, AddressSanitizer)" >&2
run_cargo_fuzz build

logs="$fuzz/target/fuzz-logs"
mkdir -p "$logs"
failed=()
summary=()
for t in "${targets[@]}"; do
  seeds="$fuzz/corpus/$t"
  work="$fuzz/corpus-work/$t"
  artifacts="$fuzz/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  log="$logs/$t.log"
  echo "fuzz: $t for ${seconds}s (log: ${log#"$root"/})" >&2
  before="$(ls -A "$artifacts")"
  status=0
  # New inputs go to the first corpus dir (the work dir); the seeds are only read.
  corpora=("$work")
  [[ -d $seeds ]] && corpora+=("$seeds")
  run_cargo_fuzz run "$t" "${corpora[@]}" -- \
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
    for a in $new; do
      echo "fuzz: crashing input: ${artifacts#"$root"/}/$a" >&2
      echo "fuzz: replay with: PATH=${tools#"$root"/}/bin:\$PATH RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=fuzz/target cargo fuzz run $t ${artifacts#"$root"/}/$a" >&2
    done
  else
    summary+=("$(printf '%-20s %10s runs  %7s exec/s  cov %s' "$t" "${runs:-?}" "${rate:-?}" "${cov:-?}")")
  fi
done

echo
echo "fuzz: ${seconds}s per target"
printf '  %s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no crashes"
