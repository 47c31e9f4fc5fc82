#!/usr/bin/env python3
"""instr.py: instructions per operation of a benchmark, from callgrind totals at two sizes.

Runs the command under `valgrind --tool=callgrind` twice, with {n} replaced by
N1 and then N2, and reports (I2 - I1) / ((N2 - N1) * per), where I is the
program's total instruction count (all threads) and `per` the operations per
unit of n (K for yield with K threads). Start-up, warm-up and shutdown are the
same in both runs and cancel; no symbols or toggles are needed. Valgrind
counts user-space instructions only: work done inside the kernel (clone,
futex, sched_yield) is not in the number. Go programs need
GODEBUG=asyncpreemptoff=1 (callgrind asserts on Go's preemption signals).

    bench/scripts/instr.py [--n1 2000] [--n2 4000] [--per 1] -- \\
        build/bench/bench_create_join -i weft -w 1 -n {n} --callgrind

Prints one line:
    INSTR cmd=<program> n1=N1 n2=N2 per=P instr_per_op=X
As a module: per_op(cmd, n1, n2, per, timeout) -> float (raises InstrError).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


class InstrError(Exception):
    pass


def have_valgrind():
    return shutil.which("valgrind") is not None


def total_instructions(cmd, timeout=120, env=None):
    """Total instructions (callgrind's Ir) of one run of cmd (a list)."""
    with tempfile.TemporaryDirectory(prefix="weft-instr-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, "--dump-line=no",
              "--compress-strings=no", "--compress-pos=no"]
        try:
            p = subprocess.run(vg + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout, env=env, text=True)
        except subprocess.TimeoutExpired:
            raise InstrError("timeout after %ds" % timeout)
        if p.returncode != 0:
            tail = " | ".join(p.stderr.strip().splitlines()[-3:])
            raise InstrError("exit %d: %s" % (p.returncode, tail))
        total = None
        try:
            with open(out) as f:
                for line in f:
                    m = re.match(r"(?:summary|totals):\s+(\d+)", line)
                    if m:
                        total = int(m.group(1))
        except OSError as e:
            raise InstrError("no callgrind output: %s" % e)
        if total is None:
            raise InstrError("no totals line in callgrind output")
        return total


def per_op(cmd, n1, n2, per=1, timeout=120, env=None):
    """Instructions per operation: cmd is a list with '{n}' in some argument."""
    if n2 <= n1:
        raise InstrError("need n2 > n1")
    if not any("{n}" in a for a in cmd):
        raise InstrError("no {n} in the command")
    i1 = total_instructions([a.replace("{n}", str(n1)) for a in cmd], timeout, env)
    i2 = total_instructions([a.replace("{n}", str(n2)) for a in cmd], timeout, env)
    return (i2 - i1) / float((n2 - n1) * per)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n1", type=int, default=2000)
    ap.add_argument("--n2", type=int, default=4000)
    ap.add_argument("--per", type=float, default=1, help="operations per unit of n (K for yield)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per valgrind run")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="extra environment (Go needs GODEBUG=asyncpreemptoff=1 under valgrind)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- program args with {n}")
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")
    if not have_valgrind():
        print("instr: valgrind not found (bench/scripts/deps.sh installs it)", file=sys.stderr)
        return 1
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    try:
        x = per_op(cmd, a.n1, a.n2, a.per, a.timeout, env)
    except InstrError as e:
        print("instr: %s: %s" % (os.path.basename(cmd[0]), e), file=sys.stderr)
        return 1
    print("INSTR cmd=%s n1=%d n2=%d per=%g instr_per_op=%.1f" % (os.path.basename(cmd[0]), a.n1, a.n2, a.per, x))
    return 0


if __name__ == "__main__":
    sys.exit(main())
