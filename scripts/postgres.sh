#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests: initdb + pg_ctl in a directory of its own, listening
# on 127.0.0.1 at a free private port, trust authentication, fsync off (tests only).
#
#   scripts/postgres.sh start DIR [--watch-pid PID]   start it; prints its URL
#   scripts/postgres.sh url DIR                        print the URL of the server started in DIR
#   scripts/postgres.sh stop DIR                       stop it and remove DIR
#
# The URL is postgres://postgres@127.0.0.1:PORT/postgres; tests create a database of their own
# in it (depositkit_server::testing). With --watch-pid, a background watcher stops the server
# once process PID has exited (a test binary that started it has no teardown of its own).
#
# Binaries: $DEPOSITKIT_PG_BIN, else the newest /usr/lib/postgresql/*/bin. When there are none
# and we are root, Debian's `postgresql` package is installed (apt-get). initdb refuses to run
# as root: as root the cluster belongs to the `postgres` user (created by the package) and every
# server command runs through runuser.
#
# PG_EXTRA_OPTS adds server settings at start, e.g. to see every statement a benchmark sends:
#   PG_EXTRA_OPTS="-c log_statement=all -c logging_collector=on -c log_directory=/tmp/pglog"
set -euo pipefail

die() {
    echo "postgres.sh: $*" >&2
    exit 1
}

find_bin() {
    if [ -n "${DEPOSITKIT_PG_BIN:-}" ]; then
        [ -x "$DEPOSITKIT_PG_BIN/initdb" ] || die "DEPOSITKIT_PG_BIN=$DEPOSITKIT_PG_BIN has no initdb"
        echo "$DEPOSITKIT_PG_BIN"
        return
    fi
    local newest
    newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$newest" ] && [ -x "$newest/initdb" ]; then
        echo "$newest"
    fi
}

install_postgres() {
    [ "$(id -u)" -eq 0 ] || die "PostgreSQL server binaries are missing (/usr/lib/postgresql/*/bin/initdb); install Debian's postgresql package, or set DEPOSITKIT_PG_BIN"
    echo "postgres.sh: installing Debian's postgresql package" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends postgresql >&2 \
        || { apt-get update >&2 && apt-get install -y --no-install-recommends postgresql >&2; } \
        || die "apt-get install postgresql failed"
}

# Runs a server command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
    local dir=$1 watch_pid=${2:-}
    local bin
    bin=$(find_bin)
    if [ -z "$bin" ]; then
        install_postgres
        bin=$(find_bin)
        [ -n "$bin" ] || die "no initdb after installing postgresql"
    fi
    mkdir -p "$dir"
    [ ! -e "$dir/url" ] || die "$dir already has a server (scripts/postgres.sh stop $dir first)"
    if [ "$(id -u)" -eq 0 ]; then
        id -u postgres >/dev/null 2>&1 || die "as root the cluster runs as user postgres, which does not exist"
        chmod 755 "$dir"
        runuser -u postgres -- test -x "$dir" \
            || die "user postgres cannot enter $dir: use a directory whose parents others may enter (e.g. under /tmp)"
        install -d -o postgres -m 700 "$dir/data"
        install -d -o postgres -m 755 "$dir/run"
    else
        install -d -m 700 "$dir/data"
        install -d -m 755 "$dir/run"
    fi
    as_owner "$bin/initdb" -N -A trust -U postgres -E UTF8 --locale=C -D "$dir/data" >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
    local port attempt
    for attempt in 1 2 3 4 5 6 7 8; do
        port=$((20000 + RANDOM % 20000))
        port_in_use "$port" && continue
        if as_owner "$bin/pg_ctl" -w -t 30 -D "$dir/data" -l "$dir/run/server.log" start -o \
            "-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir/run -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 ${PG_EXTRA_OPTS:-}" \
            >/dev/null; then
            echo "$bin" >"$dir/bin"
            echo "postgres://postgres@127.0.0.1:$port/postgres" >"$dir/url"
            if [ -n "$watch_pid" ]; then
                # Detached: stops the server once the watched process is gone.
                nohup bash -c "while kill -0 $watch_pid 2>/dev/null; do sleep 1; done; '$0' stop '$dir'" \
                    >/dev/null 2>&1 &
            fi
            cat "$dir/url"
            return 0
        fi
        echo "postgres.sh: port $port did not work (attempt $attempt); trying another" >&2
    done
    cat "$dir/run/server.log" >&2 || true
    die "could not start PostgreSQL (see above)"
}

stop() {
    local dir=$1
    [ -d "$dir" ] || return 0
    if [ -f "$dir/bin" ] && [ -d "$dir/data" ]; then
        as_owner "$(cat "$dir/bin")/pg_ctl" -w -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: scripts/postgres.sh start|url|stop DIR [--watch-pid PID]"
case "$cmd" in
    start)
        watch=""
        if [ "${3:-}" = "--watch-pid" ]; then
            watch=${4:?--watch-pid needs a PID}
        fi
        start "$dir" "$watch"
        ;;
    url)
        [ -f "$dir/url" ] || die "no server started in $dir"
        cat "$dir/url"
        ;;
    stop) stop "$dir" ;;
    *) die "unknown command $cmd (start, url or stop)" ;;
esac
