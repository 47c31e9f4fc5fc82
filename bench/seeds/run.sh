#!/usr/bin/env bash
# run.sh: runs the seeds' experiments (weft, mltp.h and pthreads in each), prints their tables and writes results + PNG plots under bench/results/.
#
#   bench/seeds/run.sh [BUILD_DIR] [--quick]      (default BUILD_DIR: build)
# Configures BUILD_DIR (Release) if needed and builds the `seeds` target.
# Writes bench/results/seeds-<date>.txt (RESULT and INSTR lines) and
# bench/results/seeds_*.png (bench/plot.py; needs python3-matplotlib, the
# tables are printed without it). Instructions per switch need valgrind.
# About 2.5 minutes on 2 cores (--quick: 20 s).
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=build
quick=0
for a in "$@"; do
    case $a in
        --quick) quick=1 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) build=$a ;;
    esac
done
case $build in /*) ;; *) build=$src/$build ;; esac

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target seeds -j"$(nproc)" >/dev/null
bin=$build/bench/seeds

results=$src/bench/results
mkdir -p "$results"
out=$results/seeds-$(date -u +%Y-%m-%d_%H%M%S).txt
commit=$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)
{
    echo "# weft seeds' experiments (bench/seeds/run.sh)"
    echo "# date: $(date -u '+%Y-%m-%d %H:%M:%S +0000')"
    echo "# commit: $commit"
    echo "# host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs in affinity mask, $(uname -sr)"
    echo "# load average (1 min) at start: $(cut -d' ' -f1 /proc/loadavg)"
} >"$out"

reps=5
if [ $quick = 1 ]; then reps=3; fi
run() {
    echo "## ${*#$bin/}" >&2
    "$@" | tee -a "$out" | sed -n '/^RESULT/!p' >&2 || echo "run.sh: FAILED: $*" | tee -a "$out" >&2
}

# seed 1: light context switch, time per switch, then instructions
run "$bin/seeds_switch" -r "$reps"
if command -v valgrind >/dev/null 2>&1; then
    for impl in weft mltp pthread; do
        n1=20000 n2=40000
        if [ $impl = pthread ]; then n1=5000 n2=10000; fi
        line=$(python3 "$src/bench/scripts/instr.py" --n1 $n1 --n2 $n2 --per 2 -- \
               "$bin/seeds_switch" -i $impl -n '{n}' --callgrind) || line=""
        x=$(printf '%s\n' "$line" | sed -n 's/.*instr_per_op=\([0-9.]*\).*/\1/p')
        if [ -n "$x" ]; then
            echo "INSTR bench=switch impl=$impl workers=1 param=2 instr_per_op=$x n1=$n1 n2=$n2" | tee -a "$out" >&2
        else
            echo "run.sh: callgrind count for $impl failed" >&2
        fi
    done
else
    echo "run.sh: valgrind not found: no instruction counts" >&2
fi

# seed 1: Pi, matmul, Ocean
if [ $quick = 1 ]; then
    run "$bin/seeds_pi" -r "$reps" -k 1,2,4,8
    run "$bin/seeds_matmul" -r "$reps" -n 512 -k 1,4
    run "$bin/seeds_ocean" -r "$reps" -k 2,8
else
    run "$bin/seeds_pi" -r "$reps"
    run "$bin/seeds_matmul" -r "$reps" -n 512,1024
    run "$bin/seeds_ocean" -r "$reps"
fi
# seed 2: LMbench create/delete and token ring
run "$bin/seeds_lmbench" -r "$reps"

echo "# load average (1 min) at end: $(cut -d' ' -f1 /proc/loadavg)" >>"$out"

# tables (standard library), then plots (matplotlib)
py=python3
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
"$py" "$src/bench/plot.py" --tables "$out"
if "$py" -c 'import matplotlib' 2>/dev/null; then
    "$py" "$src/bench/plot.py" --out "$results" "$out"
else
    echo "run.sh: no matplotlib (Debian: apt-get install python3-matplotlib): no plots" >&2
fi
echo "results: $out"
