#!/bin/sh
# bench/posix/civetweb.sh BUILD [rounds] [seconds]: Debian's civetweb
# (num_threads 1000, tcp_nodelay 1) serving a 140-byte static file on
# 127.0.0.1, loaded by wrk (2 threads, --latency) at 100 and 1,000
# connections, natively and under libweft-pthread (weft-run), rounds
# interleaved. Each run reports req/s, p99, and the server's RSS and
# kernel threads (/proc/PID/task) sampled mid-run, and per request the
# server's user and system CPU us, its context switches (summed over its
# tasks) and wrk's own CPU us; then the medians. CONNS="1000" runs one load
# only; PERF=DIR records the server's profile of each run into
# DIR/civetweb-MODE-CONNS.data (perf record -e cpu-clock -g; the VM has no
# hardware counters): perf report -i FILE --no-children --sort dso,sym.
# Loopback only; each run is bounded by [seconds] (default 5).
set -eu
B=${1:?usage: civetweb.sh BUILD [rounds] [seconds]}
R=${2:-3}
D=${3:-5}
. "$(dirname "$0")/lib.sh"
command -v civetweb >/dev/null && command -v wrk >/dev/null || {
    echo "civetweb.sh: needs civetweb and wrk (apt-get install civetweb wrk)" >&2
    exit 77
}
ulimit -n 8192 2>/dev/null || true
dir=$(mktemp -d)
out=$dir/results
trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT INT TERM
srv=
wrk_file
run() { # mode conns
    pre=$(preload "$1")
    tries=0
    while :; do
        port=$(free_port)
        (cd "$dir" && LD_PRELOAD=$pre exec civetweb -listening_ports "127.0.0.1:$port" \
            -document_root "$dir" -num_threads 1000 -tcp_nodelay 1 \
            -enable_directory_listing no >/dev/null 2>&1) &
        srv=$!
        if up "$port" && kill -0 "$srv" 2>/dev/null; then break; fi
        kill "$srv" 2>/dev/null || true
        wait "$srv" 2>/dev/null || true
        tries=$((tries + 1))
        [ $tries -lt 3 ] || { echo "civetweb did not start" >&2; exit 1; }
    done
    pid=$(pgrep -P "$srv" civetweb || echo "$srv")
    cpu_at "$pid"
    wrk_load "$2" "$port"
    sample "$pid"
    if [ -n "${PERF:-}" ]; then # the server's profile over D/2 - 1 s of the load's second half
        perf record -q -e cpu-clock -g -p "$pid" -o "$PERF/civetweb-$1-$2.data" \
            -- sleep $((D / 2 - 1 > 0 ? D / 2 - 1 : 1)) >/dev/null 2>&1 || true
    fi
    wait $w
    cpu_since "$pid"
    kill "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    wrk_row civetweb "$1" "$2"
}
rounds wrk_round
wrk_medians civetweb 'RSS KiB | kernel threads'
cpu_medians civetweb
