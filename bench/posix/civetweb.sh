#!/bin/sh
# bench/posix/civetweb.sh BUILD [rounds] [seconds]: Debian's civetweb
# (num_threads 1000, tcp_nodelay 1) serving a 140-byte static file on
# 127.0.0.1, loaded by wrk (2 threads, --latency) at 100 and 1,000
# connections, natively and under libweft-pthread (weft-run), rounds
# interleaved. Each run reports req/s, p99, and the server's RSS and
# kernel threads (/proc/PID/task) sampled mid-run; then the medians.
# Loopback only; each run is bounded by [seconds] (default 5).
set -eu
B=${1:?usage: civetweb.sh BUILD [rounds] [seconds]}
R=${2:-3}
D=${3:-5}
LIB=$(cd "$B" && pwd)/libweft-pthread.so
command -v civetweb >/dev/null && command -v wrk >/dev/null || {
    echo "civetweb.sh: needs civetweb and wrk (apt-get install civetweb wrk)" >&2
    exit 77
}
ulimit -n 8192 2>/dev/null || true
dir=$(mktemp -d)
out=$dir/results
trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT INT TERM
srv=
head -c 105 /dev/zero | tr '\0' 'w' | fold -w 35 >"$dir/hello.txt"
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
up() { # port: 0 once a connection to it is accepted
    python3 - "$1" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
PY
}
run() { # mode conns
    if [ "$1" = dropin ]; then pre=$LIB; else pre=; fi
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
    wrk -t2 -c"$2" -d"${D}s" --timeout 10s --latency "http://127.0.0.1:$port/hello.txt" >"$dir/wrk" 2>&1 &
    w=$!
    sleep $((D / 2))
    pid=$(pgrep -P "$srv" civetweb || echo "$srv")
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    thr=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
    wait $w
    kill "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    rps=$(awk '/Requests\/sec/ {print $2}' "$dir/wrk")
    p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}' "$dir/wrk")
    errs=$(awk '/Socket errors|Non-2xx/ {print}' "$dir/wrk" | tr '\n' ' ')
    echo "civetweb mode=$1 c=$2 rps=${rps:-0} p99_ms=${p99:-0} rss_kb=$rss threads=$thr $errs" | tee -a "$out"
}
i=0
while [ $i -lt "$R" ]; do
    for c in 100 1000; do
        run native $c
        run dropin $c
    done
    i=$((i + 1))
done
python3 - "$out" <<'PY'
import re, statistics, sys
v = {}
for line in open(sys.argv[1]):
    m = re.match(r'civetweb mode=(\w+) c=(\d+) rps=([\d.]+) p99_ms=([\d.]+) rss_kb=(\d+) threads=(\d+)', line)
    if m:
        for k, x in zip(('rps', 'p99_ms', 'rss_kb', 'threads'), m.groups()[2:]):
            v.setdefault((m[1], int(m[2]), k), []).append(float(x))
print('\nmedians: conns | mode | req/s | p99 ms | RSS KiB | kernel threads')
for c in (100, 1000):
    for mode in ('native', 'dropin'):
        if (mode, c, 'rps') in v:
            med = [statistics.median(v[(mode, c, k)]) for k in ('rps', 'p99_ms', 'rss_kb', 'threads')]
            print(f'{c} | {mode} | {med[0]:.0f} | {med[1]:.2f} | {med[2]:.0f} | {med[3]:.0f}')
    if ('native', c, 'rps') in v and ('dropin', c, 'rps') in v:
        n, d = statistics.median(v[('native', c, 'rps')]), statistics.median(v[('dropin', c, 'rps')])
        print(f'{c}: drop-in req/s / native = {d / n:.2f}')
PY
