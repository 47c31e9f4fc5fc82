#!/bin/sh
# bench/posix/sysbench.sh BUILD [rounds]: Debian's sysbench `threads`
# (3 s, events counted) and `mutex` (--mutex-locks=5000, a tenth of the
# default so 1,000 threads end in bounded time; total time) at 2, 64 and
# 1,000 threads, natively and under libweft-pthread, rounds interleaved;
# then the medians and the ratios (drop-in / native; for mutex, native
# time / drop-in time: above 1 is faster).
set -eu
B=${1:?usage: sysbench.sh BUILD [rounds]}
R=${2:-3}
. "$(dirname "$0")/lib.sh"
command -v sysbench >/dev/null || { echo "sysbench.sh: needs sysbench" >&2; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
one_round() {
    for t in 2 64 1000; do
        for mode in native dropin; do
            pre=$(preload $mode)
            ev=$(LD_PRELOAD=$pre timeout 120 sysbench threads --threads=$t --time=3 run |
                awk '/total number of events/ {print $5}')
            tt=$(LD_PRELOAD=$pre timeout 300 sysbench mutex --threads=$t --mutex-locks=5000 run |
                awk '/total time:/ {sub(/s$/,"",$3); print $3}')
            echo "sysbench mode=$mode threads=$t threads_events=${ev:-0} mutex_s=${tt:-0}" | tee -a "$out"
        done
    done
}
rounds one_round
py "$out" <<'PY'
v = results(r'sysbench mode=(\w+) threads=(\d+) threads_events=([\d.]+) mutex_s=([\d.]+)', ('ev', 'mx'))
print('\nmedians: threads | threads events native / drop-in (ratio) | mutex s native / drop-in (speed-up)')
for t in (2, 64, 1000):
    med = lambda mode, k: statistics.median(v[(mode, t, k)])
    en, ed, mn, md = med('native', 'ev'), med('dropin', 'ev'), med('native', 'mx'), med('dropin', 'mx')
    print(f'{t} | {en:.0f} / {ed:.0f} ({ed / en if en else 0:.2f}x) | {mn:.2f} / {md:.2f} ({mn / md if md else 0:.2f}x)')
PY
