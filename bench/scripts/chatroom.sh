#!/usr/bin/env bash
# chatroom.sh: seed 3's chat room: messages per second (median of REPS runs)
# and system calls per delivered message (one run under strace -c -f), weft
# threads vs weft tasks with split-phase calls (bench_chatroom_tasks) vs
# pthreads.   bench/scripts/chatroom.sh [BUILD_DIR]  (env: REPS=5 MSGS=2000)
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
bin=$build/bench/bench_chatroom
reps=${REPS:-5}
msgs=${MSGS:-2000}
# The commit the programs were built from (bench/scripts/commit.cmake), for the RESULT lines.
commit=$(cat "$build/bench/commit.txt" 2>/dev/null || echo unknown)
declare -A rate calls
for impl in weft weft-tasks pthread; do
    flag=""; [ $impl = pthread ] && flag=-p
    bin=$build/bench/bench_chatroom; [ $impl = weft-tasks ] && bin=$build/bench/bench_chatroom_tasks
    vals=()
    for r in $(seq "$reps"); do
        v=$("$bin" $flag -m "$msgs" | sed -n 's/.*msgs_per_s=\([0-9]*\).*/\1/p')
        vals+=("$v")
    done
    rate[$impl]=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    if command -v strace >/dev/null; then
        delivered=$(strace -f -c -o "$build/chatroom-$impl.strace" "$bin" $flag -m "$((msgs / 4))" -q)
        total=$(awk '$NF=="total" {print $(NF-2)}' "$build/chatroom-$impl.strace")
        calls[$impl]=$(awk -v t="$total" -v d="$delivered" 'BEGIN {printf "%.3f", t / d}')
    fi
    echo "RESULT bench=chatroom impl=$impl workers=0 param=c20_m$msgs median_msgs_per_s=${rate[$impl]} syscalls_per_msg=${calls[$impl]:-} runs=$reps commit=$commit"
done
echo
echo "| impl | messages/s | system calls per message |"
echo "|---|---|---|"
for impl in weft weft-tasks pthread; do echo "| $impl | ${rate[$impl]} | ${calls[$impl]:-n/a} |"; done
awk -v a="${calls[pthread]:-0}" -v b="${calls[weft]:-0}" 'BEGIN { if (b > 0) printf "pthreads make %.1fx the system calls per message\n", a / b }'
