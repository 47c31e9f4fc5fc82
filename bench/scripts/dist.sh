#!/usr/bin/env bash
# dist.sh: the weft_dist benchmarks (make bench-dist). In one run, REPS
# rounds, each starting every configuration once in turn (so load drifts
# hit all alike), then medians:
#   fib(N) plain serial, single-process weft on 1 worker (bench_fib),
#   weft_dist on 1, 2 and 4 ranks (a weft_spawn per call);
#   N-Queens(12) and UTS T1, serial and weft_dist on 1 and 2 ranks;
#   fib(N) and N-Queens(12) over the shm and the rma transport, 1 and 2 ranks;
#   a steal from a rank that computes without calling weft (2 ranks), and
#   from one that computes fib(27) (per transport);
#   steal counts and mean steal time (WEFT_DIST_STATS) for fib(N) on 2 ranks;
#   virtual and resident memory per rank as live threads grow.
# Usage: bench/scripts/dist.sh [BUILD_DIR] (env N=35 REPS=5)
set -euo pipefail
build=${1:-build}
n=${N:-35}
reps=${REPS:-5}
dist=$build/bench/bench_dist_fib
fib=$build/bench/bench_fib
command -v mpiexec >/dev/null || { echo "dist.sh: no mpiexec (install mpich)"; exit 1; }
[ -x "$dist" ] || { echo "dist.sh: $dist not built (MPI not found at configure time?)"; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/weft-dist-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT

ms() { sed -n 's/.*ms=\([0-9.]*\).*/\1/p' | head -1; }
for r in $(seq "$reps"); do
    "$dist" serial "$n" 1 | ms >>"$out/serial"
    "$fib" -i weft -w 1 -n "$n" -r 1 2>/dev/null |
        sed -n 's/^RESULT.*median_ns=\([0-9.]*\).*/\1/p' | awk '{ printf "%.2f\n", $1 / 1e6 }' >>"$out/weft1"
    for np in 1 2 4; do
        mpiexec -n "$np" "$dist" fib "$n" 1 | ms >>"$out/dist$np"
    done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
s=$(median "$out/serial"); w=$(median "$out/weft1")
d1=$(median "$out/dist1"); d2=$(median "$out/dist2"); d4=$(median "$out/dist4")
echo "# fib($n), median of $reps rounds (ms), $(nproc) CPUs, $(uptime | sed 's/.*load/load/')"
printf '%-34s %10s\n' "serial (plain recursion)" "$s" "weft, 1 worker (single process)" "$w" \
    "weft_dist, 1 rank" "$d1" "weft_dist, 2 ranks" "$d2" "weft_dist, 4 ranks" "$d4"
awk -v s="$s" -v w="$w" -v d1="$d1" -v d2="$d2" -v d4="$d4" 'BEGIN {
    printf "1 rank / single-process weft: %.2fx   1 rank / serial: %.1fx\n", d1 / w, d1 / s
    printf "speedup over 1 rank: 2 ranks %.2fx, 4 ranks %.2fx\n", d1 / d2, d1 / d4 }'
echo "RESULT bench=dist_fib n=$n serial_ms=$s weft1_ms=$w dist1_ms=$d1 dist2_ms=$d2 dist4_ms=$d4 runs=$reps"

apps=$build/bench/bench_dist_apps
for r in $(seq "$reps"); do
    "$apps" nqueens-serial 12 1 | ms >>"$out/q_serial"
    "$apps" uts-serial 1 | ms >>"$out/u_serial"
    for np in 1 2; do
        mpiexec -n "$np" "$apps" nqueens 12 1 | ms >>"$out/q$np"
        mpiexec -n "$np" "$apps" uts 1 | ms >>"$out/u$np"
    done
done
echo "# N-Queens(12) and UTS T1 (4,130,071 nodes), a thread per placement / node, median of $reps (ms)"
printf '%-14s %10s %10s %10s\n' "" serial "1 rank" "2 ranks"
printf '%-14s %10s %10s %10s\n' "nqueens(12)" "$(median "$out/q_serial")" "$(median "$out/q1")" "$(median "$out/q2")"
printf '%-14s %10s %10s %10s\n' "UTS T1" "$(median "$out/u_serial")" "$(median "$out/u1")" "$(median "$out/u2")"
echo "RESULT bench=dist_apps nqueens12_serial_ms=$(median "$out/q_serial") nqueens12_dist1_ms=$(median "$out/q1") nqueens12_dist2_ms=$(median "$out/q2") uts_t1_serial_ms=$(median "$out/u_serial") uts_t1_dist1_ms=$(median "$out/u1") uts_t1_dist2_ms=$(median "$out/u2") runs=$reps"

# The two transports (docs/distributed.md "Transports"): rma is what ranks
# on several nodes use; forced here on one node.
for r in $(seq "$reps"); do
    for np in 1 2; do
        for tr in shm rma; do
            WEFT_DIST_TRANSPORT=$tr mpiexec -n "$np" "$dist" fib "$n" 1 | ms >>"$out/t_fib_${tr}_$np"
            WEFT_DIST_TRANSPORT=$tr mpiexec -n "$np" "$apps" nqueens 12 1 | ms >>"$out/t_q_${tr}_$np"
        done
    done
done
echo "# transports: fib($n) and N-Queens(12), median of $reps (ms)"
printf '%-14s %10s %10s %10s %10s\n' "" "shm 1" "rma 1" "shm 2" "rma 2"
for b in fib q; do
    printf '%-14s %10s %10s %10s %10s\n' "$([ $b = fib ] && echo "fib($n)" || echo "nqueens(12)")" \
        "$(median "$out/t_${b}_shm_1")" "$(median "$out/t_${b}_rma_1")" \
        "$(median "$out/t_${b}_shm_2")" "$(median "$out/t_${b}_rma_2")"
done
echo "RESULT bench=dist_transports fib_shm1_ms=$(median "$out/t_fib_shm_1") fib_rma1_ms=$(median "$out/t_fib_rma_1") fib_shm2_ms=$(median "$out/t_fib_shm_2") fib_rma2_ms=$(median "$out/t_fib_rma_2") nqueens12_shm1_ms=$(median "$out/t_q_shm_1") nqueens12_rma1_ms=$(median "$out/t_q_rma_1") nqueens12_shm2_ms=$(median "$out/t_q_shm_2") nqueens12_rma2_ms=$(median "$out/t_q_rma_2") runs=$reps"

echo "# a steal from a rank that computes without calling weft (2 ranks)"
mpiexec -n 2 "$dist" steal "$reps" | sed -n 's/.*resumed_after_us=\([0-9.-]*\).*/\1/p' >"$out/steal"
echo "resumed on the thief after (us): $(tr '\n' ' ' <"$out/steal")median $(median "$out/steal")"
echo "# the same from a rank that computes fib(27), spawning (2 ranks), per transport"
for tr in shm rma; do
    WEFT_DIST_TRANSPORT=$tr mpiexec -n 2 "$dist" steal-fib "$reps" |
        sed -n 's/.*resumed_after_us=\([0-9.-]*\).*/\1/p' >"$out/steal_$tr"
    echo "$tr: resumed after (us): $(tr '\n' ' ' <"$out/steal_$tr")median $(median "$out/steal_$tr")"
done

echo "# steals during fib($n) on 2 and 4 ranks (WEFT_DIST_STATS)"
for np in 2 4; do
    WEFT_DIST_STATS=1 mpiexec -n "$np" "$dist" fib "$n" 1 2>&1 | grep '^weft_dist: rank' | sort
done

echo "# memory per rank as live threads grow (2 ranks)"
mpiexec -n 2 "$dist" mem 10 1000 10000 60000 | sort -t= -k3,3n -k4,4n
