#!/usr/bin/env bash
# chatroom.sh: seed 3's chat room: messages per second (median of REPS runs)
# and system calls per delivered message (one run under strace -c -f), weft
# threads vs weft tasks with split-phase calls (bench_chatroom_tasks) vs
# pthreads, and for weft the requests per io_uring_enter (weft_stats:
# io_calls / io_enters, median). The split-phase version must reach at
# least BAR_PER_ENTER requests per enter and make fewer system calls per
# message than the thread version (issue 14); the last line says whether.
#   bench/scripts/chatroom.sh [BUILD_DIR]  (env: REPS=5 MSGS=2000 WORKERS=0)
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
bin=$build/bench/bench_chatroom
reps=${REPS:-5}
msgs=${MSGS:-2000}
workers=${WORKERS:-0} # 0: one per CPU
bar_per_enter=8
# The commit the programs were built from (bench/scripts/commit.cmake), for the RESULT lines.
commit=$(cat "$build/bench/commit.txt" 2>/dev/null || echo unknown)
declare -A rate calls per_enter
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for impl in weft weft-tasks pthread; do
    flag=""; [ $impl = pthread ] && flag=-p
    bin=$build/bench/bench_chatroom; [ $impl = weft-tasks ] && bin=$build/bench/bench_chatroom_tasks
    vals=() enters=()
    for r in $(seq "$reps"); do
        line=$("$bin" $flag -w "$workers" -m "$msgs")
        vals+=("$(sed -n 's/.*msgs_per_s=\([0-9]*\).*/\1/p' <<<"$line")")
        enters+=("$(sed -n 's/.*calls_per_enter=\([0-9.]*\).*/\1/p' <<<"$line")")
    done
    rate[$impl]=$(printf '%s\n' "${vals[@]}" | median)
    [ $impl != pthread ] && per_enter[$impl]=$(printf '%s\n' "${enters[@]}" | median)
    if command -v strace >/dev/null; then
        out=$build/chatroom-$impl.strace
        delivered=$(strace -f -c -o "$out" "$bin" $flag -w "$workers" -m "$((msgs / 4))" -q)
        if [ -z "$delivered" ]; then
            # Under ptrace, preemption signals can arrive nested and the run
            # may die; count the calls of a run without preemption instead.
            echo "chatroom.sh: $impl died under strace; counting a run with WEFT_QUANTUM=off" >&2
            delivered=$(WEFT_QUANTUM=off strace -f -c -o "$out" "$bin" $flag -w "$workers" \
                -m "$((msgs / 4))" -q)
        fi
        total=$(awk '$NF=="total" {print $(NF-2)}' "$out")
        calls[$impl]=$(awk -v t="$total" -v d="$delivered" 'BEGIN { if (d > 0) printf "%.3f", t / d }')
    fi
    echo "RESULT bench=chatroom impl=$impl workers=$workers param=c20_m$msgs median_msgs_per_s=${rate[$impl]} syscalls_per_msg=${calls[$impl]:-} calls_per_enter=${per_enter[$impl]:-} runs=$reps commit=$commit"
done
echo
echo "| impl | messages/s | system calls per message | requests per io_uring_enter |"
echo "|---|---|---|---|"
for impl in weft weft-tasks pthread; do
    echo "| $impl | ${rate[$impl]} | ${calls[$impl]:-n/a} | ${per_enter[$impl]:-n/a} |"
done
awk -v a="${calls[pthread]:-0}" -v b="${calls[weft]:-0}" 'BEGIN { if (b > 0) printf "pthreads make %.1fx the system calls per message\n", a / b }'
awk -v e="${per_enter[weft-tasks]}" -v bar=$bar_per_enter -v t="${calls[weft-tasks]:-}" -v w="${calls[weft]:-}" 'BEGIN {
    ok = e >= bar && (t == "" || w == "" || t < w)
    printf "split-phase bar (>= %d requests per enter, fewer system calls per message than threads): %s\n",
           bar, ok ? "met" : "NOT met"
}'
