#!/bin/sh
# bench/posix/mariadb.sh BUILD [rounds] [seconds]: Debian's MariaDB 10.11,
# a private instance (mariadb-install-db into a temporary datadir; socket
# there, TCP on 127.0.0.1 and a free port only; --skip-grant-tables;
# max_connections 1200; 64 MiB buffer pool), loaded by sysbench
# oltp_point_select and oltp_read_write (4 tables x 10,000 rows) at 64 and
# 1,000 connections, in three configurations, rounds interleaved:
#   native  one-thread-per-connection under glibc;
#   dropin  the same under libweft-pthread (LD_PRELOAD, as bin/weft-run);
#   pool    MariaDB's own M:N thread pool (pool-of-threads) under glibc.
# Each run (default 10 s) reports tps, p95 and p99 latency (sysbench's
# histogram), sysbench's errors (ignored deadlocks included), and the
# server's kernel threads (/proc/PID/task) and RSS sampled mid-run; then
# the medians and the ratios of the issue's bars. Skipped (77) when
# mariadbd or sysbench is missing.
set -eu
B=${1:?usage: mariadb.sh BUILD [rounds] [seconds]}
R=${2:-3}
D=${3:-10}
. "$(dirname "$0")/lib.sh"
for p in mariadbd mariadb-install-db mariadb-admin sysbench; do
    command -v $p >/dev/null || [ -x /usr/sbin/$p ] || {
        echo "mariadb.sh: needs $p (apt-get install mariadb-server sysbench)" >&2
        exit 77
    }
done
PATH=$PATH:/usr/sbin
ulimit -n 20000 2>/dev/null || true
dir=$(mktemp -d /tmp/weft_mariadbXXXXXX)
out=$dir/results
srv=
stop() {
    [ -n "$srv" ] || return 0
    kill "$srv" 2>/dev/null || true
    wait_gone "$srv" 300
    kill -9 "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    srv=
}
trap 'stop; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM
OPTS="--innodb-buffer-pool-size=64M --innodb-log-file-size=16M --skip-log-bin"
mariadb-install-db --no-defaults --user="$(id -un)" --datadir="$dir/data" \
    --auth-root-authentication-method=normal --skip-test-db $OPTS >"$dir/install.log" 2>&1 || {
    cat "$dir/install.log" >&2
    exit 1
}
start() { # mode
    pre=$(preload "$1")
    th=one-thread-per-connection
    [ "$1" = pool ] && th=pool-of-threads
    port=$(free_port)
    LD_PRELOAD=$pre mariadbd --no-defaults --user="$(id -un)" --datadir="$dir/data" \
        --socket="$dir/sock" --port="$port" --bind-address=127.0.0.1 --skip-grant-tables \
        --max-connections=1200 --max-prepared-stmt-count=1000000 --thread-handling=$th \
        --pid-file="$dir/pid" --log-error="$dir/err.log" $OPTS >/dev/null 2>&1 &
    srv=$!
    i=0
    until mariadb-admin --no-defaults --socket="$dir/sock" -uroot ping >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -ge 600 ] || ! kill -0 "$srv" 2>/dev/null; then
            echo "mariadbd ($1) did not start; its log:" >&2
            tail -20 "$dir/err.log" >&2
            exit 1
        fi
        sleep 0.1
    done
}
sb() { # test threads [extra sysbench args...]
    t=$1
    c=$2
    shift 2
    sysbench "$t" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
        --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=10000 --threads="$c" "$@"
}
start native
mariadb --no-defaults --socket="$dir/sock" -uroot -e 'CREATE DATABASE sbtest'
sb oltp_read_write 4 prepare >"$dir/prepare.log" 2>&1
stop
run() { # mode test conns
    (
        sleep $((D / 2))
        sample "$srv"
        echo "$rss $thr" >"$dir/sample"
    ) &
    s=$!
    sb "$2" "$3" --time="$D" --histogram=on --db-ps-mode=auto run >"$dir/sb" 2>&1 || true
    wait $s
    python3 - "$dir/sb" "$1" "$2" "$3" $(cat "$dir/sample") <<'PY' | tee -a "$out"
import re, sys
text = open(sys.argv[1]).read()
mode, test, conns, rss, thr = sys.argv[2:7]
hist = [(float(v), int(c)) for v, c in re.findall(r'^\s+([\d.]+) \|\**\s+(\d+)$', text, re.M)]
total = sum(c for _, c in hist)
def pct(p):
    acc = 0
    for v, c in hist:
        acc += c
        if acc >= p / 100 * total:
            return v
    return 0.0
tps = re.search(r'transactions:\s+\d+\s+\(([\d.]+) per sec', text)
err = re.search(r'ignored errors:\s+(\d+)', text)
fatal = len(re.findall(r'FATAL', text))
print(f'mariadb mode={mode} test={test} c={conns} tps={float(tps[1]) if tps else 0:.0f} '
      f'p95_ms={pct(95):.2f} p99_ms={pct(99):.2f} errors={int(err[1]) if err else 0} '
      f'fatal={fatal} rss_kb={rss} threads={thr}')
PY
}
one_round() {
    for mode in native dropin pool; do
        start $mode
        for t in oltp_point_select oltp_read_write; do
            for c in 64 1000; do
                run $mode $t $c
            done
        done
        stop
    done
}
rounds one_round
py "$out" <<'PY'
v = results(r'mariadb mode=(\w+) test=(\w+) c=(\d+) tps=(\d+) p95_ms=([\d.]+) p99_ms=([\d.]+) '
            r'errors=(\d+) fatal=(\d+) rss_kb=(\d+) threads=(\d+)',
            ('tps', 'p95', 'p99', 'errors', 'fatal', 'rss', 'threads'))
med = lambda *k: statistics.median(v[k]) if k in v else 0
print('\nmedians: test | conns | mode | tps | p95 ms | p99 ms | errors (fatal) | RSS KiB | kernel threads')
for t in ('oltp_point_select', 'oltp_read_write'):
    for c in (64, 1000):
        for mode in ('native', 'dropin', 'pool'):
            if (mode, t, c, 'tps') in v:
                print(f'{t} | {c} | {mode} | {med(mode, t, c, "tps"):.0f} | {med(mode, t, c, "p95"):.2f} | '
                      f'{med(mode, t, c, "p99"):.2f} | {sum(v[(mode, t, c, "errors")]):.0f} '
                      f'({sum(v[(mode, t, c, "fatal")]):.0f}) | {med(mode, t, c, "rss"):.0f} | '
                      f'{med(mode, t, c, "threads"):.0f}')
        n, d, p = (med(m, t, c, 'tps') for m in ('native', 'dropin', 'pool'))
        if n and d and p:
            print(f'{t} {c}: drop-in / native = {d / n:.2f}, drop-in / pool-of-threads = {d / p:.2f}')
print('bars (oltp_point_select, 1000): drop-in >= 1.0x native, >= 0.9x pool-of-threads, zero errors')
PY
