#!/usr/bin/env bash
# sync-bench.sh: runs the synchronisation benchmarks (bench_sync_barrier, bench_sync_cond, bench_sync_mutex) and prints their RESULT lines as one table, with the speed-up over pthreads and the project's bars.
#
# Usage: bench/scripts/sync-bench.sh [-b BUILD_DIR] [-o RESULTS_FILE] [-r REPS] [--quick]
#   -b  a Release build directory holding bench/bench_sync_* (default: build
#       build-bench-sync in the source tree, configured and built if needed)
#   -o  where to keep the raw RESULT lines (default: BUILD_DIR/sync-bench.txt)
#   -r  repetitions per result (default 5; the median is reported)
#   --quick  a tenth of the default sizes (a smoke run, not for reporting)
# The benchmarks are timing-sensitive: run them on an otherwise idle machine.
set -eu

here=$(cd "$(dirname "$0")/../.." && pwd)
build="$here/build-bench-sync"
out=""
reps=5
quick=0
while [ $# -gt 0 ]; do
    case "$1" in
    -b) build=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -r) reps=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "sync-bench: unknown argument $1" >&2; exit 2 ;;
    esac
done

if [ ! -x "$build/bench/bench_sync_barrier" ]; then
    cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF >/dev/null
    cmake --build "$build" -j"$(nproc)" --target bench_sync_barrier bench_sync_cond bench_sync_mutex >/dev/null
fi
[ -n "$out" ] || out="$build/sync-bench.txt"

if [ "$quick" = 1 ]; then
    barrier_n=100000,5000; cond_n=100000; mutex_n=100000,10000
else
    barrier_n=1000000,50000; cond_n=1000000; mutex_n=1000000,100000
fi

: >"$out"
run() {
    echo "# $*" >&2
    "$@" | tee -a "$out" | grep -v '^RESULT' >&2
}
run "$build/bench/bench_sync_barrier" -r "$reps" -n "$barrier_n"
run "$build/bench/bench_sync_cond" -r "$reps" -n "$cond_n"
run "$build/bench/bench_sync_mutex" -r "$reps" -n "$mutex_n"

echo
echo "Synchronisation benchmarks ($(grep -c '^RESULT' "$out") results, medians of $reps runs; raw lines in $out)"
awk '
/^RESULT/ {
    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    key = f["bench"] SUBSEP f["param"]
    row[++n] = key SUBSEP f["impl"] SUBSEP f["workers"] SUBSEP f["median_ns"] SUBSEP f["min_ns"] SUBSEP f["max_ns"]
    # the pthread reference of a bench/param: its fastest pthread median
    if (f["impl"] == "pthread" && (!(key in ref) || f["median_ns"] + 0 < ref[key] + 0))
        ref[key] = f["median_ns"]
}
END {
    printf "%-16s %-10s %-13s %3s %14s %14s %14s %10s\n", "bench", "param", "impl", "w", "median", "min", "max", "vs pthread"
    for (i = 1; i <= n; i++) {
        split(row[i], r, SUBSEP)
        key = r[1] SUBSEP r[2]
        unit = (r[1] ~ /asym|twork/) ? 1e6 : 1
        uname = unit == 1e6 ? "ms" : "ns"
        sp = (key in ref && r[5] + 0 > 0) ? sprintf("%9.1fx", ref[key] / r[5]) : "         -"
        printf "%-16s %-10s %-13s %3s %11.1f %s %11.1f %s %11.1f %s %10s\n", r[1], r[2], r[3], r[4],
               r[5] / unit, uname, r[6] / unit, uname, r[7] / unit, uname, sp
    }
}' "$out"

echo
echo "Bars:"
awk '
/^RESULT/ {
    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    m[f["bench"] "|" f["impl"] "|" f["workers"] "|" f["param"]] = f["median_ns"] + 0
    if (f["impl"] == "pthread") {
        k = f["bench"] "|" f["param"]
        if (!(k in p) || f["median_ns"] + 0 < p[k]) p[k] = f["median_ns"] + 0
    }
    if (f["bench"] == "barrier_asym") { lv[f["param"]] = 1; if (f["impl"] == "weft") ww = f["workers"] }
}
function bar(name, ok, detail) { printf "  %-4s %s (%s)\n", ok ? "met" : "MISS", name, detail }
END {
    k = "barrier_sym|weft|2|2"
    if ((k in m) && ("barrier_sym|2" in p))
        bar("barrier, 2 user threads on 2 workers >= 50x pthread_barrier_wait", p["barrier_sym|2"] / m[k] >= 50,
            sprintf("%.1fx", p["barrier_sym|2"] / m[k]))
    k = "cond_handoff|weft|1|2"
    if ((k in m) && ("cond_handoff|2" in p))
        bar("condvar hand-off, 2 user threads on 1 worker >= 30x pthreads", p["cond_handoff|2"] / m[k] >= 30,
            sprintf("%.1fx, %.0f ns", p["cond_handoff|2"] / m[k], m[k]))
    worst = ""; ok = 1
    for (l in lv) {
        a = m["barrier_asym|weft|" ww "|" l]; b = m["barrier_asym|pthread|2|" l]
        if (a > b) { ok = 0; worst = worst " " l }
    }
    if (ww != "")
        bar("asymmetric barrier, weft <= pthreads at every level", ok, ok ? "all levels" : "over at levels" worst)
}' "$out"
