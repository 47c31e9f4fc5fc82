#!/usr/bin/env bash
# tasks.sh: the task-graph benchmarks (wavefront, linear_chain, binary_tree,
# graph_traversal: ns per task) with weft tasks, OpenMP depend and oneTBB
# flow graph, fib with weft tasks vs weft threads (ns per call) and skynet
# (1M leaves, 10-ary) with weft tasks vs weft threads (ns per node).
# Each sample is one process (one warm-up, one timed call); the models and
# worker counts alternate within each round, so load drifts hit them alike;
# the table gives medians of REPS rounds.
# The plot of the medians (ns per task per benchmark and model) goes to
# BUILD_DIR/tasks.png.
# Then (unless SPEEDUP=0) the 2-worker speedups with real work: wavefront
# with the 8x8 stencil body (S = 8192) and blocked Cholesky (N = 4096),
# weft tasks vs OpenMP depend, alternated, each run with BENCH_SCHED=1: the
# time each would take on free CPUs, from the kernel's per-thread run and
# wait times (bench/common/sched_est.h), since on a loaded machine a second
# thread need not get a program more CPU time.
#   bench/scripts/tasks.sh [BUILD_DIR]   (env: REPS=5 WORKERS="1 2" BENCHES=... OUT=file)
# PEER_CMD: a command run as "$PEER_CMD BENCH WORKERS" in each round beside
# the others, printing RESULT lines (say, a script that runs Taskflow's own
# benchmarks built outside this repository).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
reps=${REPS:-5}
workers=${WORKERS:-"1 2"}
benches=${BENCHES:-"wavefront linear_chain binary_tree graph_traversal"}
out=${OUT:-$src/bench/results/tasks-$(date -u +%Y-%m-%d_%H%M%S).txt}
models="$build/bench/bench_task_graphs"
for b in baseline_openmp_task_graphs baseline_tbb_task_graphs; do
    if [ -x "$build/bench/$b" ]; then models="$models $build/bench/$b"; else echo "tasks.sh: $b not built (skipped)" >&2; fi
done
{
    echo "# tasks.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cpus, $(uname -r); $reps rounds"
    echo "# uptime at start: $(uptime)"
} > "$out"
for r in $(seq "$reps"); do
    for b in $benches; do
        for w in $workers; do
            for m in $models; do
                "$m" -i "$b" -w "$w" -r 1 | grep '^RESULT' >> "$out"
            done
            if [ -n "${PEER_CMD:-}" ]; then $PEER_CMD "$b" "$w" | grep '^RESULT' >> "$out"; fi
        done
    done
    for w in $workers; do
        "$build/bench/bench_task_fib" -n 29 -w "$w" -r 1 | grep '^RESULT' >> "$out"
        "$build/bench/bench_skynet" -n 1000000 -w "$w" -r 1 | grep '^RESULT' >> "$out"
    done
done
if [ "${SPEEDUP:-1}" != 0 ]; then
    echo "# speedups, uptime: $(uptime)" >> "$out"
    for r in $(seq "$reps"); do
        for w in $workers; do
            for m in bench_task_graphs baseline_openmp_task_graphs; do
                [ -x "$build/bench/$m" ] || continue
                BENCH_SCHED=1 "$build/bench/$m" -i wavefront_stencil -n 8192 -w "$w" -r 1 |
                    grep -E '^(RESULT|SCHED)' >> "$out"
            done
            for m in bench_cholesky baseline_openmp_cholesky; do
                [ -x "$build/bench/$m" ] || continue
                BENCH_SCHED=1 "$build/bench/$m" -n 4096 -w "$w" -r 1 | grep -E '^(RESULT|SCHED)' >> "$out"
            done
        done
    done
fi
echo "# uptime at end: $(uptime)" >> "$out"
# Debian's python3 has python3-matplotlib (scripts/install-deps.sh); a
# virtual environment's python3 first on PATH may not.
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=python3
"$py" "$here/tasks_table.py" "$out" --png "$build/tasks.png"
echo "results: $out"
