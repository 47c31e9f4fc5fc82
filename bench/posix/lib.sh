# bench/posix/lib.sh: what the bench/posix application scripts share, sourced
# by them (. "$(dirname "$0")/lib.sh") once B, R and D are set: the drop-in's
# LD_PRELOAD, rounds, sampling a server's RSS and kernel threads, ports, wrk
# runs and their rows, and the medians over rounds in Python. The functions
# read the caller's globals B (build directory), R (rounds), D (seconds a
# run), dir (temporary directory) and out (results file, one row a run).

# The drop-in of build B, absolute: the server may run from another directory.
LIB=$(cd "$B" && pwd)/libweft-pthread.so
LIB2=${LIB2:+$(cd "$(dirname "$LIB2")" && pwd)/$(basename "$LIB2")}

preload() { # mode: what LD_PRELOAD holds in that mode (the drop-in, LIB2, or nothing)
    if [ "$1" = dropin ]; then echo "$LIB"; fi
    if [ "$1" = dropin2 ]; then echo "$LIB2"; fi
}

rounds() { # command [args...]: runs it R times, in order
    _round=0
    while [ $_round -lt "$R" ]; do
        "$@"
        _round=$((_round + 1))
    done
}

sample() { # pid...: rss and thr, their RSS in KiB and kernel threads summed
    rss=0
    thr=0
    for _p in "$@"; do
        _r=$(awk '/VmRSS/ {print $2}' "/proc/$_p/status" 2>/dev/null || echo 0)
        _t=$(ls "/proc/$_p/task" 2>/dev/null | wc -l)
        rss=$((rss + ${_r:-0}))
        thr=$((thr + _t))
    done
}

wait_gone() { # target tenths: until `kill -0 target` fails, at most tenths x 0.1 s
    _i=0
    while kill -0 "$1" 2>/dev/null && [ $_i -lt "$2" ]; do
        sleep 0.1
        _i=$((_i + 1))
    done
}

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

# Python run by py() ahead of its program: results() gathers the rows of
# sys.argv[1] by their key (the leading groups of the pattern; digits as int)
# and the name of each value.
PY_LIB=$(
    cat <<'PY'
import re, statistics, sys
def results(pattern, names):
    v = {}
    for line in open(sys.argv[1]):
        m = re.match(pattern, line)
        if m:
            g = m.groups()
            n = len(g) - len(names)
            key = tuple(int(x) if x.isdigit() else x for x in g[:n])
            for k, x in zip(names, g[n:]):
                v.setdefault(key + (k,), []).append(float(x))
    return v
PY
)

py() { # file [args...]: the Python program on stdin, after PY_LIB
    python3 -c "$PY_LIB
$(cat)" "$@"
}

# The web servers' runs: wrk (2 threads, --latency) fetching a 140-byte
# static file, dir/hello.txt, at 100 and 1,000 connections.
wrk_file() {
    head -c 105 /dev/zero | tr '\0' 'w' | fold -w 35 >"$dir/hello.txt"
}

timed() { # command...: runs it, and its CPU ("wrk_cpu user system" on stderr) if GNU time is there
    if [ -x /usr/bin/time ]; then /usr/bin/time -f "wrk_cpu %U %S" "$@"; else "$@"; fi
}

wrk_load() { # conns port: wrk for D s in the background (w); sleeps half of it
    timed wrk -t2 -c"$1" -d"${D}s" --timeout 10s --latency "http://127.0.0.1:$2/hello.txt" >"$dir/wrk" 2>&1 &
    w=$!
    sleep $((D / 2))
}

# CPU of a process: cpu_at pid sets cpu0 (its user and system clock ticks,
# /proc/PID/stat, threads that ended included, and its context switches,
# voluntary and not, summed over the tasks it has then); cpu_since pid sets
# cpu, per request of dir/wrk: server user and system us, context switches,
# and wrk's own user+system us.
cpu_at() {
    cpu0="$(cpu_now "$1")"
}

cpu_now() { # pid: "utime stime switches"
    _st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || { echo "0 0 0"; return; }
    _cs=$(cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s + 0}')
    echo "$_st" | awk -v cs="$_cs" '{print $12, $13, cs}'
}

cpu_since() {
    _n=$(awk '/requests in/ {print $1}' "$dir/wrk")
    cpu=$(echo "$cpu0 $(cpu_now "$1") $(awk '/^wrk_cpu/ {print $2 + $3}' "$dir/wrk") ${_n:-0} $(getconf CLK_TCK)" |
        awk '{n = $8 > 0 ? $8 : 1; t = 1e6 / $9;
              printf "usr_us=%.1f sys_us=%.1f cs=%.2f wrk_us=%.1f", ($4 - $1) * t / n, ($5 - $2) * t / n, ($6 - $3) / n, $7 * 1e6 / n}')
}

wrk_row() { # name mode conns: the row of dir/wrk with rss and thr (and cpu if set), also to out
    rps=$(awk '/Requests\/sec/ {print $2}' "$dir/wrk")
    p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}' "$dir/wrk")
    errs=$(awk '/Socket errors|Non-2xx/ {print}' "$dir/wrk" | tr '\n' ' ')
    echo "$1 mode=$2 c=$3 rps=${rps:-0} p99_ms=${p99:-0} rss_kb=$rss threads=$thr ${cpu:+$cpu }$errs" | tee -a "$out"
}

# LIB2=path/libweft-pthread.so adds a third mode to each round, dropin2 (an
# A/B comparison of two builds of the drop-in within one run); CONNS="1000"
# runs one load only.
wrk_round() { # the caller's `run mode conns`, native then drop-in(s), at each load
    for c in ${CONNS:-100 1000}; do
        run native $c
        run dropin $c
        if [ -n "${LIB2:-}" ]; then run dropin2 $c; fi
    done
}

wrk_medians() { # name columns: the medians of out's rows, the req/s ratios
    py "$out" "$1" "$2" <<'PY'
name, cols = sys.argv[2:4]
v = results(name + r' mode=(\w+) c=(\d+) rps=([\d.]+) p99_ms=([\d.]+) rss_kb=(\d+) threads=(\d+)',
            ('rps', 'p99_ms', 'rss_kb', 'threads'))
print(f'\nmedians: conns | mode | req/s | p99 ms | {cols}')
for c in (100, 1000):
    for mode in ('native', 'dropin', 'dropin2'):
        if (mode, c, 'rps') in v:
            med = [statistics.median(v[(mode, c, k)]) for k in ('rps', 'p99_ms', 'rss_kb', 'threads')]
            print(f'{c} | {mode} | {med[0]:.0f} | {med[1]:.2f} | {med[2]:.0f} | {med[3]:.0f}')
    if ('native', c, 'rps') in v and ('dropin', c, 'rps') in v:
        n, d = statistics.median(v[('native', c, 'rps')]), statistics.median(v[('dropin', c, 'rps')])
        print(f'{c}: drop-in req/s / native = {d / n:.2f}')
    if ('native', c, 'rps') in v and ('dropin2', c, 'rps') in v:
        n, d = statistics.median(v[('native', c, 'rps')]), statistics.median(v[('dropin2', c, 'rps')])
        print(f'{c}: dropin2 req/s / native = {d / n:.2f}')
PY
}

cpu_medians() { # name: the medians of out's per-request CPU columns (cpu_since)
    py "$out" "$1" <<'PY'
name = sys.argv[2]
v = results(name + r' mode=(\w+) c=(\d+) .*usr_us=([\d.]+) sys_us=([\d.]+) cs=([\d.]+) wrk_us=([\d.]+)',
            ('usr', 'sys', 'cs', 'wrk'))
print('\nmedians per request: conns | mode | server user us | server sys us | context switches | wrk us')
for c in (100, 1000):
    for mode in ('native', 'dropin', 'dropin2'):
        if (mode, c, 'usr') in v:
            med = [statistics.median(v[(mode, c, k)]) for k in ('usr', 'sys', 'cs', 'wrk')]
            print(f'{c} | {mode} | {med[0]:.1f} | {med[1]:.1f} | {med[2]:.2f} | {med[3]:.1f}')
PY
}
