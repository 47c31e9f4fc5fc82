#!/usr/bin/env python3
"""dist_model.py: efficiency of weft_dist's fork-join on an InfiniBand
cluster, from the per-steal cost and steal counts measured here
(docs/distributed.md, "Scaling model").

Model (stated assumptions):
  T_p = T_1 / p + (log2 p + s(p)) * (c_steal + f * c_fail)
  - log2 p rounds of steals spread the work (each doubles the busy ranks);
  - s(p) = a * log2 p * n / 35 further steals per rank: a fitted to the
    steals per rank measured for fib(35) on 2 and 4 ranks, growing with the
    recursion depth n;
  - c_steal = OPS flushed RMA operations of T_OP each (Itoyori's 7-step
    steal) + FRAME_BYTES at BW; c_fail = one operation (read top/base);
    f failed attempts before each successful one;
  - T_1 = the measured 1-rank time of fib(35), scaled by the call count
    for other n; one rank per core, no other load.
Efficiency E = T_1 / (p * T_p).

Usage: dist_model.py [--t1-ms 573] [--steals-per-doubling 5] [--op-us 2.5]
"""
import argparse
import math


def fib_calls(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1  # calls of fib(n) = 2 F(n+1) - 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t1-ms", type=float, default=573.0, help="fib(35) on 1 rank (measured)")
    ap.add_argument("--steals-per-doubling", type=float, default=5.0,
                    help="a: measured steals per rank per doubling of ranks, fib(35)")
    ap.add_argument("--op-us", type=float, default=2.5, help="one flushed RMA operation")
    ap.add_argument("--ops", type=int, default=7, help="RMA operations per steal")
    ap.add_argument("--frame-bytes", type=float, default=1024.0)
    ap.add_argument("--bw-gbs", type=float, default=10.0)
    ap.add_argument("--fails", type=float, default=3.0, help="failed attempts per steal")
    ap.add_argument("--ranks", default="16,256,4096")
    ap.add_argument("--n", default="35,40,45")
    o = ap.parse_args()
    c_steal = o.ops * o.op_us + o.frame_bytes / (o.bw_gbs * 1e3)  # us
    c_fail = o.op_us
    per_steal = c_steal + o.fails * c_fail
    ranks = [int(x) for x in o.ranks.split(",")]
    print(f"# per successful steal {c_steal:.1f} us + {o.fails:g} failed x {c_fail:.1f} us "
          f"= {per_steal:.1f} us")
    print("| problem | T_1 | " + " | ".join(f"{p} ranks" for p in ranks) + " |")
    print("|---|---|" + "---|" * len(ranks))
    for n in (int(x) for x in o.n.split(",")):
        t1_us = o.t1_ms * 1e3 * fib_calls(n) / fib_calls(35)
        cells = []
        for p in ranks:
            lg = math.log2(p)
            steals = lg + o.steals_per_doubling * lg * n / 35
            tp = t1_us / p + steals * per_steal
            cells.append(f"{100 * t1_us / (p * tp):.0f} %")
        print(f"| fib({n}) | {t1_us / 1e6:.2f} s | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
