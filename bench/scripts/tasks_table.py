#!/usr/bin/env python3
"""tasks_table.py: the table (and, with matplotlib, a PNG) of bench/scripts/tasks.sh's results.

    bench/scripts/tasks_table.py RESULTS.txt [--png FILE]

Medians over the RESULT lines of each (benchmark, model, workers): ns per
task for the task graphs, ns per call for fib, ns per node for skynet.
Standard library only for the table.
"""
import re
import statistics
import sys
from collections import defaultdict

sys.dont_write_bytecode = True
FIELD_RE = re.compile(r"(\w+)=(\S+)")
ORDER = ["wavefront", "linear_chain", "binary_tree", "graph_traversal", "fib", "skynet"]
UNIT = {"fib": "ns per call", "skynet": "ns per node"}
# Plot names of the models (the RESULT lines' impl): the task graphs call
# weft's tasks "weft", fib and skynet "weft-tasks"; one colour for both.
LABEL = {
    "weft": "weft tasks",
    "weft-tasks": "weft tasks",
    "weft-threads": "weft user threads",
    "omp": "OpenMP depend",
    "tbb": "oneTBB flow graph",
    "tf": "Taskflow",
}
LOG_ABOVE = 20  # a panel whose largest bar is this many times its smallest is drawn in log scale


def load(path):
    cells = defaultdict(list)
    params = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("RESULT "):
                continue
            d = dict(FIELD_RE.findall(line))
            key = (d["bench"], d["impl"], int(d["workers"]))
            cells[key].append(float(d["median_ns"]))
            params[d["bench"]] = d["param"]
    return cells, params


def speedups(path, params):
    """The SCHED lines (bench/common/sched_est.h): per benchmark and model,
    medians of the wall time and of the time on free CPUs (the upper
    estimate), the speedup of the most workers over 1 by each, and for
    Cholesky the GFLOPS on free CPUs."""
    wall, free = defaultdict(list), defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.startswith("SCHED "):
                d = dict(FIELD_RE.findall(line))
                key = (d["bench"], d["impl"], int(d["workers"]))
                wall[key].append(float(d["wall_ms"]))
                free[key].append(float(d["free_hi_ms"]))
    if not free:
        return
    print()
    print("| benchmark | model | workers | wall ms | free-CPU ms | speedup (wall) | "
          "speedup (free CPUs) | GFLOPS (free CPUs) |")
    print("|---|---|---|---|---|---|---|---|")
    for b, i in sorted({(k[0], k[1]) for k in free}):
        ws = sorted(k[2] for k in free if k[:2] == (b, i))
        for w in ws:
            mw = statistics.median(wall[(b, i, w)])
            mf = statistics.median(free[(b, i, w)])
            sw = sf = gf = ""
            if w != 1 and (b, i, 1) in free:
                sw = f"{statistics.median(wall[(b, i, 1)]) / mw:.2f}"
                sf = f"{statistics.median(free[(b, i, 1)]) / mf:.2f}"
            m = re.match(r"n(\d+)_", params.get(b, ""))
            if b == "cholesky" and m:
                gf = f"{int(m.group(1)) ** 3 / 3 / (mf * 1e6):.1f}"
            print(f"| {b} | {i} | {w} | {mw:.0f} (n={len(wall[(b, i, w)])}) | {mf:.0f} | "
                  f"{sw} | {sf} | {gf} |")


def main():
    args = sys.argv[1:]
    png = None
    if "--png" in args:
        i = args.index("--png")
        png = args[i + 1]
        del args[i:i + 2]
    cells, params = load(args[0])
    impls = sorted({k[1] for k in cells})
    workers = sorted({k[2] for k in cells})
    head = ["benchmark", "size"] + [f"{i} {w}T" for w in workers for i in impls]
    if any(k[0] in ORDER for k in cells):
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    for b in ORDER:
        if not any(k[0] == b for k in cells):
            continue
        row = [b, params.get(b, "")]
        for w in workers:
            for i in impls:
                v = cells.get((b, i, w))
                row.append(f"{statistics.median(v):.1f} (n={len(v)})" if v else "")
        print("| " + " | ".join(row) + " |")
    speedups(args[0], params)
    if png:
        plot(cells, params, impls, workers, png)


def plot(cells, params, impls, workers, png):
    """One panel per benchmark; in each, a group of bars per worker count,
    one bar (and one colour, the same in every panel) per model, with its
    median written above it."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("tasks_table.py: no matplotlib (Debian: python3-matplotlib): no PNG",
              file=sys.stderr)
        return
    benches = [b for b in ORDER if any(k[0] == b for k in cells)]
    if not benches:
        return
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # One colour per model, the same in every plot (LABEL's order, then
    # models LABEL does not know); the legend lists the models present.
    known = list(dict.fromkeys(LABEL.values()))
    extra = sorted({i for i in impls if i not in LABEL})
    colour = {m: colours[n % len(colours)] for n, m in enumerate(known + extra)}
    names = [m for m in known + extra if any(LABEL.get(i, i) == m for i in impls)]
    ncol = min(3, len(benches))
    nrow = (len(benches) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 3.6 * nrow), squeeze=False)
    for ax, b in zip(axes.flat, benches):
        here = [i for i in impls if any((b, i, w) in cells for w in workers)]
        width = 0.8 / len(here)
        ys_all = []
        for n, i in enumerate(here):
            xs, ys = [], []
            for g, w in enumerate(workers):
                v = cells.get((b, i, w))
                if v:
                    xs.append(g + (n - (len(here) - 1) / 2) * width)
                    ys.append(statistics.median(v))
            ax.bar(xs, ys, width, color=colour[LABEL.get(i, i)])
            for x, y in zip(xs, ys):
                ax.text(x, y, f"{y:.0f}", ha="center", va="bottom", fontsize=6)
            ys_all += ys
        ax.set_xticks(range(len(workers)))
        ax.set_xticklabels([f"{w} worker{'s' if w > 1 else ''}" for w in workers])
        log = max(ys_all) > LOG_ABOVE * min(ys_all)
        if log:
            ax.set_yscale("log")
        ax.set_title(f"{b} ({params.get(b, '')})", fontsize=9)
        ax.set_ylabel(UNIT.get(b, "ns per task") + (" (log)" if log else ""))
    for ax in list(axes.flat)[len(benches):]:
        ax.axis("off")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[m]) for m in names]
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8)
    fig.suptitle("weft tasks vs peers: median ns per task (lower is better)", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(png, dpi=110)
    print(f"plot: {png}")


if __name__ == "__main__":
    main()
