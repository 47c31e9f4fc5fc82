#!/usr/bin/env python3
"""prio-plot.py: draws the wake-to-run latency distributions that
bench_prio, baseline_pthread_prio and baseline_go -b prio_latency leave in
BENCH_PRIO_DUMP=DIR (one file a configuration, sorted samples in ns, one a
line) as one PNG of their CDFs, latency on a log axis.

    bench/scripts/prio-plot.py DIR [OUT.png]      (default DIR/prio-latency.png)

Needs matplotlib (Debian: python3-matplotlib); without it, prints the
percentiles only and says so.
"""
import os
import sys


def load(path):
    with open(path) as f:
        return [float(x) for x in f if x.strip()]


def pct(v, p):
    return v[int(p * (len(v) - 1))] if v else 0.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(d, "prio-latency.png")
    runs = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".txt"):
            v = load(os.path.join(d, name))
            if v:
                runs[name[:-4]] = v
    if not runs:
        sys.exit("prio-plot: no samples in " + d)
    for k, v in runs.items():
        print("  %-22s n=%-6d p50 %10.1f us  p99 %10.1f us  p99.9 %10.1f us"
              % (k, len(v), pct(v, .5) / 1e3, pct(v, .99) / 1e3, pct(v, .999) / 1e3))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("prio-plot: no matplotlib (Debian: python3-matplotlib): no PNG")
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for k, v in runs.items():
        n = len(v)
        ax.plot([x / 1e3 for x in v], [(i + 1) / n for i in range(n)], label=k)
    ax.set_xscale("log")
    ax.axvline(200, color="grey", linestyle=":", label="200 us")
    ax.set_xlabel("wake-to-run latency (us, log)")
    ax.set_ylabel("fraction of requests")
    ax.set_title("HIGH requests under a flood of spinners, 2 workers")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print("prio-plot: wrote " + out)


if __name__ == "__main__":
    main()
