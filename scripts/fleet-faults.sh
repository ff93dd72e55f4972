#!/usr/bin/env bash
# The long run of the fleet's multi-process fault harness (fleet/tests/fault_harness.rs,
# docs/fleet.md "Fault harness"): three depositkit-fleet-member processes, devnet and a
# PostgreSQL server of the harness's own (scripts/postgres.sh), several minutes of SIGKILL,
# SIGSTOP past the lease, pg_terminate_backend and PostgreSQL restarts under a stream of
# deposits to many owners; then the money, log and single-writer checks. Then the same faults
# with auto-sweep off while a process that is not a member asks for every deposit's sweep or
# refund and for destination changes (DEPOSITKIT_FAULT_COMMAND_SECONDS, 60 s, and
# DEPOSITKIT_FAULT_COMMAND_OWNERS, 20). Prints each run's summary (faults injected, deposits,
# commands, outcomes) and exits non-zero when a check failed.
#
#   scripts/fleet-faults.sh                 # 240 s of faults, 40 owners, a random seed
#   scripts/fleet-faults.sh --seed 7        # repeat a run
#   DEPOSITKIT_FAULT_SECONDS=600 DEPOSITKIT_FAULT_OWNERS=100 scripts/fleet-faults.sh
#
# Every DEPOSITKIT_FAULT_* variable of the test's header may be set; the short run in
# `cargo test` uses its defaults (20 s, 10 owners, seed 1).
set -euo pipefail
cd "$(dirname "$0")/.."

seed=${DEPOSITKIT_FAULT_SEED:-$(( (RANDOM << 15) | RANDOM ))}
if [ "${1:-}" = "--seed" ]; then
    seed=${2:?--seed needs a number}
fi
export DEPOSITKIT_FAULT_SEED=$seed
export DEPOSITKIT_FAULT_SECONDS=${DEPOSITKIT_FAULT_SECONDS:-240}
export DEPOSITKIT_FAULT_OWNERS=${DEPOSITKIT_FAULT_OWNERS:-40}
export DEPOSITKIT_FAULT_MEMBERS=${DEPOSITKIT_FAULT_MEMBERS:-3}
export DEPOSITKIT_FAULT_DEPOSIT_GAP_MS=${DEPOSITKIT_FAULT_DEPOSIT_GAP_MS:-250}
export DEPOSITKIT_FAULT_SETTLE_SECONDS=${DEPOSITKIT_FAULT_SETTLE_SECONDS:-180}
export DEPOSITKIT_FAULT_COMMAND_SECONDS=${DEPOSITKIT_FAULT_COMMAND_SECONDS:-60}
export DEPOSITKIT_FAULT_COMMAND_OWNERS=${DEPOSITKIT_FAULT_COMMAND_OWNERS:-20}
echo "fleet-faults: seed $seed, $DEPOSITKIT_FAULT_SECONDS s of faults, $DEPOSITKIT_FAULT_OWNERS owners;" \
    "then $DEPOSITKIT_FAULT_COMMAND_SECONDS s with commands, $DEPOSITKIT_FAULT_COMMAND_OWNERS owners"
# One scenario at a time: each has the machine to itself.
exec cargo test -p depositkit-fleet --test fault_harness -- --exact --nocapture --test-threads 1 \
    the_fleet_keeps_money_log_and_fencing_right_under_faults \
    commands_from_any_process_take_effect_once_under_faults
