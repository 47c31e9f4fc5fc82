#!/bin/sh
# prio-bench.sh: the priority and time-quantum benchmarks (make bench-prio).
#   bench/scripts/prio-bench.sh [BUILD]   (default build/)
# Latency of HIGH requests under a flood (1 ms, 10 ms, off), the overhead of
# a 1 ms quantum on fib(35) and on UTS (T1 and all workers; same binary,
# WEFT_QUANTUM switched, runs alternated), fairness of 8 spinners on 2
# workers, and the CPU an idle runtime uses with preemption on. The latency
# runs have two peers in the same invocation: pthreads (the flood at nice
# 19) and Go (goroutines, GOMAXPROCS=2; skipped when it was not built), and
# their distributions are drawn into $BUILD/bench/prio/prio-latency.png.
set -eu
BUILD=${1:-build}
B=$BUILD/bench
export BENCH_PRIO_DUMP="$B/prio"
mkdir -p "$BENCH_PRIO_DUMP"
"$B/bench_prio" -i latency -r "${REPS:-5}"
"$B/baseline_pthread_prio" -r "${REPS:-5}"
if [ -x "$B/baseline_go" ]; then "$B/baseline_go" -b prio_latency -r "${REPS:-5}"; fi
# Debian's python3 has python3-matplotlib (scripts/install-deps.sh); a
# virtual environment's python3 first on PATH may not.
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=python3
"$py" "$(dirname "$0")/prio-plot.py" "$BENCH_PRIO_DUMP"
"$B/bench_prio" -i overhead -r "${REPS:-5}"
"$B/bench_prio" -i fairness -r "${REPS:-5}"
for w in 1 0; do
  for i in $(seq "${REPS:-5}"); do
    for q in 1ms off; do
      printf 'uts workers=%s quantum=%s ' "$w" "$q"
      WEFT_QUANTUM=$q "$B/bench_uts" -i weft -w "$w" -r 1 2>&1 | grep -m1 '^RESULT' || echo
    done
  done
done
WEFT_QUANTUM=1ms "$B/bench_idle" -w 0 -n 2
