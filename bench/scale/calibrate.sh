#!/usr/bin/env bash
# calibrate.sh: measures, on this machine, every cost the scale model
# (bench/scale/model.py) takes from here, and writes them as key=value lines
# with the command each came from (bench/scale/calibration.txt by default).
#
#   serial per-node times      dist_fib serial, dist_apps *-serial
#   1-rank times               fib(30) calibrates the spawn+join cost; fib(35),
#                              N-Queens(12) and UTS T1 are check (a)'s targets
#   2-rank times, shm and rma  check (a)'s targets
#   steals, failed attempts,   WEFT_DIST_STATS of the same 2-rank fib(35)
#   idle time per rank         runs, per transport (what the model's event
#                              counts are compared with)
#   the cost of one poll       pollcost.c (MPI_Iprobe as rma.c polls), 1 and
#                              2 ranks: under rma a busy rank polls every 64
#                              spawns, dearer with peers
#   RMA operation latencies    bench_rma_probe (MPICH, one node)
# REPS interleaved rounds (default 7), so load drifts hit all alike; each
# figure is written as its median and its minimum (NAME_min): on a machine
# other jobs share, the least disturbed run is the one closest to what the
# model assumes (a CPU per rank), and the model reads the minima.
# Usage: bench/scale/calibrate.sh [BUILD_DIR] [OUT] (env REPS=5)
set -euo pipefail
build=${1:-build}
out=${2:-$(dirname "$0")/calibration.txt}
reps=${REPS:-7}
fib=$build/bench/bench_dist_fib
apps=$build/bench/bench_dist_apps
probe=$build/bench/bench_rma_probe
command -v mpiexec >/dev/null || { echo "calibrate.sh: no mpiexec (install mpich)"; exit 1; }
[ -x "$fib" ] && [ -x "$apps" ] || { echo "calibrate.sh: $fib or $apps not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft-scale-cal.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HWLOC_PLUGINS_PATH=/nonexistent
pollcost=$tmp/pollcost
mpicc -O2 -o "$pollcost" "$(dirname "$0")/pollcost.c" || pollcost=

ms() { sed -n 's/.*ms=\([0-9.]*\).*/\1/p' | head -1; }
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -n "$1" | head -1; }
run() { # name, then the command: appends its ms to $tmp/name
    local name=$1
    shift
    "$@" 2>/dev/null | ms >>"$tmp/$name"
}

for r in $(seq "$reps"); do
    echo "calibrate: round $r of $reps" >&2
    run serial_fib35 "$fib" serial 35 1
    # the CPU share two processes get now: serial fib(38) alone, then two
    # at once (the slower of the pair); their ratio scales the 2-rank model
    run alone_fib38 "$fib" serial 38 1
    ( "$fib" serial 38 1 | ms >"$tmp/pair_a" & "$fib" serial 38 1 | ms >"$tmp/pair_b"; wait )
    sort -n "$tmp/pair_a" "$tmp/pair_b" | tail -1 >>"$tmp/pair_fib38"
    run serial_nq12 "$apps" nqueens-serial 12 1
    run serial_uts "$apps" uts-serial 1
    if [ -n "$pollcost" ]; then
        for np in 1 2; do
            mpiexec -n "$np" "$pollcost" 2>/dev/null |
                sed -n 's/.*ns=\([0-9.]*\).*/\1/p' >>"$tmp/poll_ns_np$np" || true
        done
    fi
    for tr in shm rma; do
        for np in 1 2; do
            [ "$np" = 1 ] && run "${tr}_np1_fib30" env WEFT_DIST_TRANSPORT=$tr mpiexec -n 1 "$fib" fib 30 1
            if [ "$np" = 2 ]; then
                # the same runs give the time and each rank's WEFT_DIST_STATS line
                # (printed at finalize, after the timed run)
                env WEFT_DIST_STATS=1 WEFT_DIST_TRANSPORT=$tr mpiexec -n 2 "$fib" fib 35 1 \
                    >"$tmp/out" 2>"$tmp/err" || true
                ms <"$tmp/out" >>"$tmp/${tr}_np2_fib35"
                grep '^weft_dist: rank' "$tmp/err" >>"$tmp/stats_$tr" || true
            else
                run "${tr}_np${np}_fib35" env WEFT_DIST_TRANSPORT=$tr mpiexec -n "$np" "$fib" fib 35 1
            fi
            run "${tr}_np${np}_nq12" env WEFT_DIST_TRANSPORT=$tr mpiexec -n "$np" "$apps" nqueens 12 1
            run "${tr}_np${np}_uts" env WEFT_DIST_TRANSPORT=$tr mpiexec -n "$np" "$apps" uts 1
        done
    done
done

probe_med() { # probe output, row name: its median in us
    sed -n "s/.*uni *idle *$2 .*med= *\([0-9.]*\).*/\1/p" "$1" | head -1
}
if [ -x "$probe" ]; then
    timeout 120 mpiexec -n 2 "$probe" -b 0.2 -n 2000 -w uni >"$tmp/probe" 2>&1 || true
fi

{
    echo "# weft scale model calibration: bench/scale/calibrate.sh $build"
    echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uptime | sed 's/.*load/load/'), commit $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "# medians (NAME) and minima (NAME_min) of $reps interleaved rounds, ms unless said otherwise"
    for f in "$tmp"/serial_* "$tmp"/alone_* "$tmp"/pair_fib38 "$tmp"/poll_ns_* "$tmp"/shm_* "$tmp"/rma_*; do
        [ -s "$f" ] || continue
        n=$(basename "$f")
        case $n in stats_*) continue ;; esac
        echo "$n=$(median "$f")    # samples: $(tr '\n' ' ' <"$f")"
        echo "${n}_min=$(minimum "$f")"
    done
    for tr in shm rma; do
        # "weft_dist: rank R: spawns N steals S steal_ns_mean M suspends X
        # fails F idle_ns I transport T": the mean steal time of each rank
        # that stole, then the median over them; counts per rank
        awk '$7 > 0 { print $9 / 1000 }' "$tmp/stats_$tr" 2>/dev/null >"$tmp/steal_$tr" || true
        awk '{ print $7 }' "$tmp/stats_$tr" 2>/dev/null >"$tmp/nsteal_$tr" || true
        awk '$12 == "fails" { print $13 }' "$tmp/stats_$tr" 2>/dev/null >"$tmp/nfail_$tr" || true
        awk '$14 == "idle_ns" { print $15 / 1e6 }' "$tmp/stats_$tr" 2>/dev/null >"$tmp/idle_$tr" || true
        if [ -s "$tmp/steal_$tr" ]; then
            echo "steal_us_$tr=$(median "$tmp/steal_$tr")    # WEFT_DIST_STATS mean steal time (after the lock, to the unlock: 6 of the 8 steps) per rank, 2 ranks, fib(35)"
            echo "steal_us_${tr}_min=$(minimum "$tmp/steal_$tr")"
            echo "steals_per_rank_$tr=$(median "$tmp/nsteal_$tr")    # WEFT_DIST_STATS successful steals per rank, 2 ranks, fib(35)"
        fi
        if [ -s "$tmp/nfail_$tr" ]; then
            echo "fails_per_rank_$tr=$(median "$tmp/nfail_$tr")    # WEFT_DIST_STATS failed steal attempts per rank, same runs"
            echo "idle_ms_per_rank_$tr=$(median "$tmp/idle_$tr")    # WEFT_DIST_STATS time without a thread per rank, same runs"
            echo "idle_ms_per_rank_${tr}_min=$(minimum "$tmp/idle_$tr")"
        fi
        sed 's/^/#   /' "$tmp/stats_$tr" 2>/dev/null | head -8 || true
    done
    if [ -s "$tmp/probe" ]; then
        echo "rma_fao_us=$(probe_med "$tmp/probe" 'FetchAndOp+flush')    # bench_rma_probe, MPICH, 2 ranks, idle target"
        echo "rma_cas_us=$(probe_med "$tmp/probe" 'CompareAndSwap+flush')"
        echo "rma_get16k_us=$(probe_med "$tmp/probe" 'Get16KiB+flush')"
        echo "rma_steal7_us=$(probe_med "$tmp/probe" 'steal(7 RTT)')"
    fi
} >"$out"
echo "calibrate: wrote $out" >&2
