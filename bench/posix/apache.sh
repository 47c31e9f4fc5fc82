#!/bin/sh
# bench/posix/apache.sh BUILD [rounds] [seconds]: Debian's Apache 2.4 with
# mpm_worker (16 children x 64 threads, all started up front, one Listen on
# 127.0.0.1 and a free port; a private configuration, PidFile, ErrorLog and
# runtime directory in a temporary directory, apache2 -DFOREGROUND) serving
# a 140-byte static file, loaded by wrk (2 threads, --latency) at 100 and
# 1,000 connections, natively and under libweft-pthread (LD_PRELOAD, as
# bin/weft-run), rounds interleaved. Each run reports req/s, p99, and the
# RSS and kernel threads of the parent and its children together, sampled
# mid-run; then the medians. Loopback only; each run is bounded by
# [seconds] (default 5). Skipped (77) without apache2 or wrk.
set -eu
B=${1:?usage: apache.sh BUILD [rounds] [seconds]}
R=${2:-3}
D=${3:-5}
LIB=$(cd "$B" && pwd)/libweft-pthread.so
MODS=/usr/lib/apache2/modules
PATH=$PATH:/usr/sbin
command -v apache2 >/dev/null && [ -f $MODS/mod_mpm_worker.so ] && command -v wrk >/dev/null || {
    echo "apache.sh: needs apache2 and wrk (apt-get install apache2 wrk)" >&2
    exit 77
}
ulimit -n 8192 2>/dev/null || true
dir=$(mktemp -d /tmp/weft_apacheXXXXXX)
chmod 755 "$dir"
out=$dir/results
srv=
stop() {
    [ -n "$srv" ] || return 0
    kill -TERM -"$srv" 2>/dev/null || true
    i=0
    while kill -0 "$srv" 2>/dev/null && [ $i -lt 30 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -KILL -"$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    i=0
    while kill -0 -"$srv" 2>/dev/null && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    srv=
}
trap 'stop; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM
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
conf() { # port
    cat <<EOF
ServerRoot $dir
ServerName 127.0.0.1
Listen 127.0.0.1:$1
LoadModule mpm_worker_module $MODS/mod_mpm_worker.so
LoadModule authz_core_module $MODS/mod_authz_core.so
LoadModule mime_module $MODS/mod_mime.so
TypesConfig /etc/mime.types
PidFile $dir/httpd.pid
ErrorLog $dir/error.log
LogLevel warn
DefaultRuntimeDir $dir
DocumentRoot $dir
StartServers 16
ServerLimit 16
ThreadsPerChild 64
MaxRequestWorkers 1024
MinSpareThreads 64
MaxSpareThreads 1024
KeepAliveTimeout 5
MaxKeepAliveRequests 0
<Directory $dir>
  Require all granted
</Directory>
EOF
    [ "$(id -u)" -ne 0 ] || printf 'User nobody\nGroup nogroup\n'
}
run() { # mode conns
    if [ "$1" = dropin ]; then pre=$LIB; else pre=; fi
    port=$(free_port)
    conf "$port" >"$dir/httpd.conf"
    setsid sh -c "LD_PRELOAD=$pre exec apache2 -f $dir/httpd.conf -DFOREGROUND" >/dev/null 2>&1 &
    srv=$!
    up "$port" || { echo "apache2 did not start" >&2; tail "$dir/error.log" >&2; exit 1; }
    sleep 1 # the children start their threads
    wrk -t2 -c"$2" -d"${D}s" --timeout 10s --latency "http://127.0.0.1:$port/hello.txt" >"$dir/wrk" 2>&1 &
    w=$!
    sleep $((D / 2))
    rss=0
    thr=0
    for p in $srv $(cat "/proc/$srv/task/$srv/children" 2>/dev/null); do
        r=$(awk '/VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
        t=$(ls "/proc/$p/task" 2>/dev/null | wc -l)
        rss=$((rss + ${r:-0}))
        thr=$((thr + t))
    done
    wait $w
    stop
    rps=$(awk '/Requests\/sec/ {print $2}' "$dir/wrk")
    p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}' "$dir/wrk")
    errs=$(awk '/Socket errors|Non-2xx/ {print}' "$dir/wrk" | tr '\n' ' ')
    echo "apache mode=$1 c=$2 rps=${rps:-0} p99_ms=${p99:-0} rss_kb=$rss threads=$thr $errs" | tee -a "$out"
}
round=0
while [ $round -lt "$R" ]; do
    for c in 100 1000; do
        run native $c
        run dropin $c
    done
    round=$((round + 1))
done
python3 - "$out" <<'PY'
import re, statistics, sys
v = {}
for line in open(sys.argv[1]):
    m = re.match(r'apache mode=(\w+) c=(\d+) rps=([\d.]+) p99_ms=([\d.]+) rss_kb=(\d+) threads=(\d+)', line)
    if m:
        for k, x in zip(('rps', 'p99_ms', 'rss_kb', 'threads'), m.groups()[2:]):
            v.setdefault((m[1], int(m[2]), k), []).append(float(x))
print('\nmedians: conns | mode | req/s | p99 ms | RSS KiB (all processes) | kernel threads (all processes)')
for c in (100, 1000):
    for mode in ('native', 'dropin'):
        if (mode, c, 'rps') in v:
            med = [statistics.median(v[(mode, c, k)]) for k in ('rps', 'p99_ms', 'rss_kb', 'threads')]
            print(f'{c} | {mode} | {med[0]:.0f} | {med[1]:.2f} | {med[2]:.0f} | {med[3]:.0f}')
    if ('native', c, 'rps') in v and ('dropin', c, 'rps') in v:
        n, d = statistics.median(v[('native', c, 'rps')]), statistics.median(v[('dropin', c, 'rps')])
        print(f'{c}: drop-in req/s / native = {d / n:.2f}')
PY
