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
    if png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("tasks_table.py: no matplotlib, no PNG", file=sys.stderr)
            return
        benches = [b for b in ORDER if any(k[0] == b for k in cells)]
        fig, axes = plt.subplots(1, len(benches), figsize=(4 * len(benches), 4))
        for ax, b in zip(axes if len(benches) > 1 else [axes], benches):
            labels, vals = [], []
            for w in workers:
                for i in impls:
                    v = cells.get((b, i, w))
                    if v:
                        labels.append(f"{i}\n{w}T")
                        vals.append(statistics.median(v))
            ax.bar(range(len(vals)), vals)
            ax.set_xticks(range(len(vals)))
            ax.set_xticklabels(labels, fontsize=7)
            ax.set_yscale("log")
            ax.set_title(b)
            ax.set_ylabel(UNIT.get(b, "ns per task"))
        fig.tight_layout()
        fig.savefig(png, dpi=100)


if __name__ == "__main__":
    main()
