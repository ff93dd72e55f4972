#!/usr/bin/env bash
# Throughput of depositkit-server against the fixed-body ceiling (issue 19, goal 4), side by side.
#
#   benches/server_throughput.sh [DURATION_SECONDS] [CONNECTIONS] [ROUNDS]   (defaults: 5 32 3)
#
# Builds release once: depositkit-server and benches/src/bin/fixed_body.rs (a minimal axum
# server on the same axum/hyper/tokio answering a fixed JSON body). Then, on loopback only:
#   1. wrk against fixed_body: the ceiling;
#   2. depositkit-server on SQLite (a fresh file), then on PostgreSQL (a private server from
#      scripts/postgres.sh, stopped at the end), each seeded through its admin CLI with one
#      project and 1,000 users (a wallet and a session each), driven with getUserInfo,
#      isProjectUser and a bad-credentials request (wrk Lua POST scripts).
# Each round runs every workload against the ceiling and then each server, back to back; the
# table shows, per server and workload, the median requests/s, p99 latency, and the median
# ratio to the fixed-body run just before it. Every answer is checked with curl before its run,
# so a misconfigured request cannot pass as fast.
#
# Environment:
#   BASELINE_SERVER=PATH   also run another depositkit-server binary (e.g. a copy built before a
#                          change) on the same workloads in the same run: before/after side by side.
#   SKIP_POSTGRES=1        SQLite only.
# wrk is Debian's package (installed when missing, as root). The machine's other load makes
# absolute numbers noisy; compare the ratios of one run.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-5}
connections=${2:-32}
rounds=${3:-3}
threads=$(( connections < 2 ? 1 : 2 ))
users=1000

die() { echo "server_throughput.sh: $*" >&2; exit 1; }
if ! command -v wrk >/dev/null; then
    [ "$(id -u)" -eq 0 ] || die "wrk is missing: apt-get install wrk (as root)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
command -v curl >/dev/null || die "curl is missing"
# Two builds, not one: built together, cargo would unify the features of both packages' deps
# and the server would not be the binary `cargo build --release -p depositkit-server` makes.
cargo build --release -q -p depositkit-server --bin depositkit-server
cargo build --release -q -p depositkit-benches --bin fixed_body
server_bin=$PWD/target/release/depositkit-server
[ -z "${BASELINE_SERVER:-}" ] || [ -x "$BASELINE_SERVER" ] || die "BASELINE_SERVER=$BASELINE_SERVER is not an executable"

tmp=$(mktemp -d /tmp/server-throughput.XXXXXX)
chmod 755 "$tmp" # scripts/postgres.sh runs the server as user postgres under it, when root
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ ! -e "$tmp/pg/url" ] || scripts/postgres.sh stop "$tmp/pg" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# Starts "$@" (which prints "listening on http://ADDR"), sets $base to that URL.
start() {
    local out=$tmp/out.$RANDOM
    "$@" >"$out" 2>>"$tmp/stderr" &
    pids+=($!)
    for _ in $(seq 200); do
        grep -q 'listening on' "$out" 2>/dev/null && break
        kill -0 "${pids[-1]}" 2>/dev/null || { cat "$tmp/stderr" >&2; die "$1 exited"; }
        sleep 0.05
    done
    base=$(grep -o 'http://[0-9.:]*' "$out" | tail -1)
    [ -n "$base" ] || die "$1 did not start listening"
}
stop_last() {
    kill -TERM "${pids[-1]}" 2>/dev/null || true
    wait "${pids[-1]}" 2>/dev/null || true
    unset 'pids[-1]'
}

# Seeds the store at $1 with a project and $users users; sets $auth, $uuid, $token, $address.
seed() {
    local url=$1 creds project key
    creds=$(DEPOSITKIT_DATABASE_URL=$url "$server_bin" project create --name throughput)
    project=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["projectId"])' "$creds")
    key=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["serverKey"])' "$creds")
    python3 - "$users" >"$tmp/users.json" <<'PY'
import json, sys
n = int(sys.argv[1])
print(json.dumps([{
    "email": f"user{i}@example.com", "name": f"User {i}",
    "wallets": [{"chain": "evm_chain", "publicAddress": "0x%040x" % (0x1000 + i)}],
    "sessions": [{"token": f"st_throughput_{i:06d}", "expiresAt": "2099-01-01T00:00:00Z"}],
} for i in range(n)]))
PY
    local middle=$(( users / 2 ))
    uuid=$(DEPOSITKIT_DATABASE_URL=$url "$server_bin" import --project "$project" "$tmp/users.json" | sed -n "$(( middle + 1 ))p")
    token=$(printf 'st_throughput_%06d' "$middle")
    address=$(printf '0x%040x' $(( 0x1000 + middle )))
    auth=$(printf '%s:%s' "$project" "$key" | base64 -w0)
}

# measure LABEL NAME EXPECTED_STATUS BODY AUTH URL: checks one answer, runs wrk, prints
# "LABEL NAME requests/s p99" on stdout.
measure() {
    local label=$1 name=$2 status=$3 body=$4 header=$5 url=$6 got
    got=$(curl -s -o "$tmp/answer" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        -H "Authorization: Basic $header" --data "$body" "$url/user-rpc")
    [ "$got" = "$status" ] || die "$label $name: HTTP $got, expected $status: $(cat "$tmp/answer")"
    if [ "$label" != fixed-body ]; then
        case $name in
            getUserInfo) grep -q '"email":"user' "$tmp/answer" || die "$label $name: $(cat "$tmp/answer")" ;;
            isProjectUser) grep -q '"result":true' "$tmp/answer" || die "$label $name: $(cat "$tmp/answer")" ;;
        esac
    fi
    printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["%s"] = "%s"\nwrk.headers["%s"] = "Basic %s"\n' \
        "'$body'" Content-Type application/json Authorization "$header" >"$tmp/request.lua"
    wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$tmp/request.lua" "$url/user-rpc" >"$tmp/wrk"
    if grep -q 'Non-2xx' "$tmp/wrk" && [ "$status" = 200 ]; then die "$label $name: $(grep Non-2xx "$tmp/wrk")"; fi
    local rps p99
    rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk")
    p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk")
    echo "  $label $name: $rps requests/s, p99 $p99" >&2
    echo "$label $name $rps $p99"
}

echo "wrk -t$threads -c$connections -d${duration}s on 127.0.0.1, $(nproc) cores, $rounds rounds" >&2
start target/release/fixed_body 127.0.0.1:0
fixed=$base
stores=("sqlite:///$tmp/users.sqlite")
if [ -z "${SKIP_POSTGRES:-}" ]; then
    stores+=("$(scripts/postgres.sh start "$tmp/pg")")
fi
for url in "${stores[@]}"; do
    kind=${url%%:*}
    seed "$url"
    project=$(printf '%s' "$auth" | base64 -d | cut -d: -f1)
    wrong=$(printf '%s:%s' "$project" sk_wrong | base64 -w0)
    servers=("$kind $server_bin")
    [ -z "${BASELINE_SERVER:-}" ] || servers+=("$kind(baseline) $BASELINE_SERVER")
    urls=()
    for entry in "${servers[@]}"; do
        start env DEPOSITKIT_DATABASE_URL="$url" "${entry#* }" serve --listen 127.0.0.1:0
        urls+=("$base")
    done
    # Each round: per workload the ceiling, then every server, so that the machine's other
    # load weighs on all of them alike.
    for round in $(seq "$rounds"); do
        for workload in getUserInfo isProjectUser badCredentials; do
            case $workload in
                getUserInfo) status=200 header=$auth
                    body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getUserInfo\",\"params\":[\"$uuid\",\"$token\"]}" ;;
                isProjectUser) status=200 header=$auth
                    body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"isProjectUser\",\"params\":[\"evm_chain\",\"$address\"]}" ;;
                badCredentials) status=401 header=$wrong
                    body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"isProjectUser\",\"params\":[\"evm_chain\",\"$address\"]}" ;;
            esac
            measure fixed-body "$workload" 200 "$body" "$header" "$fixed" >>"$tmp/rows"
            order=("${!servers[@]}")
            # Odd rounds in order, even rounds reversed: no server always runs right after the ceiling.
            (( round % 2 )) || order=($(printf '%s\n' "${order[@]}" | tac))
            for i in "${order[@]}"; do
                measure "${servers[$i]%% *}" "$workload" "$status" "$body" "$header" "${urls[$i]}" >>"$tmp/rows"
            done
        done
    done
    for _ in "${servers[@]}"; do stop_last; done
done

# Ratio of each run to the fixed-body run just before it; medians over the rounds.
python3 - "$tmp/rows" "$rounds" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
ceiling, table = None, {}
for label, name, rps, p99 in rows:
    if label == "fixed-body":
        ceiling = float(rps)
        table.setdefault(("fixed-body", "-"), []).append((float(rps), p99, 1.0))
    else:
        table.setdefault((label, name), []).append((float(rps), p99, float(rps) / ceiling))
print(f"\n{'server':<20} {'workload':<16} {'requests/s':>11} {'p99':>9} {'ratio':>7}  (medians of {sys.argv[2]} rounds)")
for (label, name), runs in table.items():
    rps = statistics.median(r[0] for r in runs)
    ratio = statistics.median(r[2] for r in runs)
    p99 = sorted(runs)[len(runs) // 2][1]
    print(f"{label:<20} {name:<16} {rps:>11,.0f} {p99:>9} {100 * ratio:>6.1f}%")
PY
