#!/bin/sh
# bench/posix/run.sh BUILD [rounds]: the drop-in's bars, same run: the same
# binary (bench_posix_pthread) under glibc pinned to one CPU and under
# libweft-pthread on one worker, rounds interleaved; plus native
# weft_yield (bench_yield) for the yield-cost ratio. Prints each round's
# lines, then the medians over rounds and the ratios. yield_ra is the ping
# with release/acquire turns instead of a locked ++; yield_loop is 2 threads
# that only call sched_yield, bench_yield -k 2's program (pthread_bench.c).
set -eu
B=${1:?usage: run.sh BUILD [rounds]}
R=${2:-3}
PB=$B/bench/bench_posix_pthread
LIB=$B/libweft-pthread.so
out=$(mktemp)
i=0
while [ $i -lt "$R" ]; do
    taskset -c 0 "$PB" -n 3000 -r 5 | sed 's/^/glibc /' >>"$out"
    WEFT_WORKERS=1 LD_PRELOAD=$LIB "$PB" -n 100000 -r 5 | sed 's/^/dropin /' >>"$out"
    if [ -x "$B/bench/bench_yield" ]; then
        "$B/bench/bench_yield" -k 2 -n 1000000 2>/dev/null | grep '^RESULT' |
            sed 's/.*median_ns=\([0-9.]*\).*/native name=yield ns_per_op=\1/' >>"$out"
    fi
    i=$((i + 1))
done
cat "$out"
python3 - "$out" <<'PY'
import re, statistics, sys
v = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\w+) name=(\w+) ns_per_op=([0-9.]+)', line)
    if m:
        v.setdefault((m[1], m[2]), []).append(float(m[3]))
    m = re.search(r'name=(\w+) .*cpu_ns_per_op=([0-9.]+)', line)
    if m and line.split()[0] in ("glibc", "dropin"):
        v.setdefault((line.split()[0] + "_cpu", m[1]), []).append(float(m[2]))
med = {k: statistics.median(x) for k, x in v.items()}
for name, bar in (("create", 100), ("yield", 50), ("handoff", 20), ("yield_ra", 50),
                  ("yield_loop", 50)):
    g, d = med.get(("glibc", name)), med.get(("dropin", name))
    if g and d:
        print(f"{name:10s} glibc {g:10.1f} ns  drop-in {d:8.1f} ns  {g / d:7.1f}x  (bar {bar}x)")
    g, d = med.get(("glibc_cpu", name)), med.get(("dropin_cpu", name))
    if g and d:
        print(f"{name:10s} CPU time: glibc {g:8.1f} ns  drop-in {d:8.1f} ns  {g / d:7.1f}x")
n, d = med.get(("native", "yield")), med.get(("dropin", "yield"))
if n and d:
    print(f"yield    drop-in / native weft_yield = {d / n:.2f} (bar 2.5; the ping: a locked ++ each pass)")
d = med.get(("dropin", "yield_ra"))
if n and d:
    print(f"yield_ra drop-in / native weft_yield = {d / n:.2f} (the ping without its locked ++)")
d = med.get(("dropin", "yield_loop"))
if n and d:
    print(f"yield_loop drop-in / native weft_yield = {d / n:.2f} (bar 2.5; the same program)")
PY
rm -f "$out"
