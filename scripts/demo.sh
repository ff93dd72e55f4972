#!/usr/bin/env bash
# The main job: builds depositkit into the project's .venv, then runs the Python demo: a deposit
# client on a devnet embedded in the process (deposit addresses, three deposits, every lifecycle
# phase, the balance credited at the destination), with a short validation tour and a user lookup.
# The devnet is opt-in: scripts/python-env.sh builds with the cargo feature `devnet`.
#
# Then the devnet dashboard (docs/dashboard.md): a devnet server with a depositkit client watching
# the demo's owner (examples/dashboard.py) and two deposits sent through the dashboard, whose URL
# it prints. In a terminal it keeps serving until Enter: send deposits and arm faults from the
# page; otherwise (CI, a pipe) it stops once the deposits are credited.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "building depositkit into .venv (first run: a few minutes) ..."
if ! scripts/python-env.sh >/tmp/depositkit-setup.log 2>&1; then
    cat /tmp/depositkit-setup.log
    exit 1
fi
.venv/bin/python examples/demo.py

echo
echo "== the devnet dashboard"
cargo build -q -p depositkit-devnet
owner=0x52908400098527886e0f7030069857d2e4169ee7
work=$(mktemp -d)
devnet_pid=""
watcher_pid=""
stop() {
    [ -n "$watcher_pid" ] && kill "$watcher_pid" 2>/dev/null && wait "$watcher_pid" 2>/dev/null
    [ -n "$devnet_pid" ] && kill "$devnet_pid" 2>/dev/null && wait "$devnet_pid" 2>/dev/null
    rm -rf "$work"
}
trap stop EXIT
"${CARGO_TARGET_DIR:-target}/debug/depositkit-devnet" serve --db "$work/devnet.sqlite" \
    --listen 127.0.0.1:0 --enable-fault-injection >"$work/devnet.out" 2>"$work/devnet.err" &
devnet_pid=$!
# Waits (up to 30 s) for a line starting with $2 in file $1; prints the rest of it.
line_of() {
    for _ in $(seq 300); do
        if grep -q "^$2" "$1" 2>/dev/null; then
            sed -n "s/^$2//p" "$1" | head -n 1
            return 0
        fi
        sleep 0.1
    done
    echo "no '$2' line in $1:" >&2
    cat "$1" "$work/devnet.err" >&2
    return 1
}
url=$(line_of "$work/devnet.out" "dashboard: ")
echo "dashboard: $url"
.venv/bin/python examples/dashboard.py "${url%/dashboard/}" "$owner" </dev/null >"$work/watcher.out" 2>&1 &
watcher_pid=$!
line_of "$work/watcher.out" "watching " >/dev/null
credited=0
for amount in 25 10; do
    .venv/bin/python - "$url" "$owner" "$amount" <<'PY'
import json, sys, urllib.request
url, owner, amount = sys.argv[1:]
body = json.dumps({"to": owner, "chainId": 8453, "token": "USDC", "amount": amount}).encode()
request = urllib.request.Request(url + "api/deposits", body, {"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=10) as answer:
    print("  " + json.load(answer)["message"])
PY
    # One deposit at a time: the client credits each before the next arrives.
    credited=$((credited + 1))
    for _ in $(seq 300); do
        [ "$(grep -c ' credited ' "$work/watcher.out")" -ge "$credited" ] && break
        sleep 0.1
    done
done
sed 's/^/  client: /' "$work/watcher.out"
if [ -t 0 ]; then
    read -r -p "dashboard: $url (open it in a browser; press Enter to stop devnet) " _
else
    echo "dashboard: $url (run scripts/demo.sh in a terminal to keep it serving)"
fi
