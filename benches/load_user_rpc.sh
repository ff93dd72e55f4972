#!/usr/bin/env bash
# Load run of the devnet user-lookup server: wrk (Debian's package) on loopback, bounded in time.
#
#   benches/load_user_rpc.sh [DURATION_SECONDS] [CONNECTIONS]
#
# Builds depositkit-devnet in release, starts it with a demo project on a fresh SQLite file,
# and drives getUserInfo, isProjectUser and a bad-credentials request at it. Prints wrk's report
# for each. Traffic goes to 127.0.0.1 only; the server is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
connections=${2:-32}
threads=$(( connections < 2 ? 1 : 2 ))

if ! command -v wrk >/dev/null; then
    apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
cargo build --release -q -p depositkit-devnet

tmp=$(mktemp -d)
trap 'kill -TERM "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
target/release/depositkit-devnet serve --db "$tmp/devnet.sqlite" --listen 127.0.0.1:0 --demo >"$tmp/out" &
server=$!
for _ in $(seq 100); do
    grep -q listening "$tmp/out" 2>/dev/null && break
    sleep 0.05
done
base=$(grep -o 'http://[0-9.:]*' "$tmp/out" | head -1)
creds=$(head -1 "$tmp/out")
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$creds" "$1"; }
auth=$(printf '%s:%s' "$(field projectId)" "$(field serverKey)" | base64 -w0)

run() {
    local name=$1 body=$2 header=$3
    cat >"$tmp/$name.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Basic $header"
LUA
    echo "--- $name ($connections connections, ${duration}s, $threads threads)"
    wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$tmp/$name.lua" "$base/user-rpc" \
        | grep -E 'Requests/sec|Latency|50%|99%|Non-2xx|requests in'
}

run getUserInfo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getUserInfo\",\"params\":[\"$(field userUuid)\",\"$(field userToken)\"]}" "$auth"
run isProjectUser "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"isProjectUser\",\"params\":[\"evm_chain\",\"$(field evmAddress)\"]}" "$auth"
run badCredentials '{"jsonrpc":"2.0","id":1,"method":"isProjectUser","params":["evm_chain","0x0000000000000000000000000000000000000001"]}' "$(printf 'nobody:wrong' | base64 -w0)"
