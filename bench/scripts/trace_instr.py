#!/usr/bin/env python3
"""trace_instr.py: instructions per WEFT_TRACE event, from callgrind (make bench-trace).

Runs bench_trace --callgrind on one worker at fib(N1) and fib(N2), traced
and untraced (instr.py's difference of two sizes: start-up and warm-up
cancel; bench_trace leaves the conversion at weft_finalize out of the
count), and divides the traced runs' extra instructions by the extra
events, which the same runs count without valgrind. Both sizes fill the
rings, so the conversion's constant part cancels too.

    bench/scripts/trace_instr.py [BUILD]   (default build/)

Prints one line:
    INSTR cmd=bench_trace n1=N1 n2=N2 instr_per_event=X untraced_per_spawn=U traced_per_spawn=T
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instr  # noqa: E402

N1, N2 = 26, 27


def events(prog, n):
    out = subprocess.run([prog, "-i", "traced", "-w", "1", "-n", str(n), "--callgrind"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    m = re.search(r"bench=trace_events .* events=(\d+)", out)
    if not m:
        raise instr.InstrError("no event count in bench_trace's output")
    return int(m.group(1))


def spawns(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return a - 1  # fib(n + 1) - 1


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    prog = os.path.join(build, "bench", "bench_trace")
    if not instr.have_valgrind():
        print("trace_instr: valgrind not found", file=sys.stderr)
        return 1
    try:
        per = {}
        for kind in ("untraced", "traced"):
            per[kind] = instr.per_op([prog, "-i", kind, "-w", "1", "-n", "{n}", "--callgrind"],
                                     N1, N2, 1, 300)
        ev = events(prog, N2) - events(prog, N1)
    except (instr.InstrError, subprocess.CalledProcessError) as e:
        print("trace_instr: %s" % e, file=sys.stderr)
        return 1
    ds = spawns(N2) - spawns(N1)
    print("INSTR cmd=bench_trace n1=%d n2=%d instr_per_event=%.1f untraced_per_spawn=%.1f "
          "traced_per_spawn=%.1f" % (N1, N2, (per["traced"] - per["untraced"]) / ev,
                                     per["untraced"] / ds, per["traced"] / ds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
