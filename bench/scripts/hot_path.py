#!/usr/bin/env python3
"""hot_path.py: fails when yield or create+join costs more instructions than the design's floor.

    bench/scripts/hot_path.py BUILD

Counts with callgrind (instr.py: the difference of two sizes, 1 worker)
  - weft_yield between 2 user threads: at most 55 instructions a yield;
  - weft_spawn (NULL attribute) + weft_join: at most 176 a pair;
and prints both. Instruction counts do not depend on the machine's load,
so this is a check of the code, not a timing. Exit 77 (skipped) without
valgrind. ctest runs it on plain builds (label instr).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instr  # noqa: E402

BARS = [
    ("yield", 55.0, ["bench_yield", "-k", "2", "-n", "{n}", "--callgrind"], 5000, 10000, 2),
    ("create+join", 176.0, ["bench_create_join", "-i", "weft", "-w", "1", "-n", "{n}", "--callgrind"],
     2000, 4000, 1),
]


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if not instr.have_valgrind():
        print("hot_path: no valgrind: skipped")
        return 77
    bench = os.path.join(argv[0], "bench")
    failed = 0
    for name, bar, cmd, n1, n2, per in BARS:
        cmd = [os.path.join(bench, cmd[0])] + cmd[1:]
        x = instr.per_op(cmd, n1, n2, per, timeout=300)
        ok = x <= bar
        failed += not ok
        print("hot_path: %-11s %6.1f instructions (bar %.0f) %s" % (name, x, bar, "ok" if ok else "OVER"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
