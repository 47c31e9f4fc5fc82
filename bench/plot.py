#!/usr/bin/env python3
"""plot.py: tables and PNG plots of the seeds' experiments from a results file (RESULT / INSTR lines).

    bench/plot.py --tables RESULTS.txt          print one table per experiment and the bars
    bench/plot.py --out DIR RESULTS.txt         write DIR/seeds_*.png (needs matplotlib)

RESULT lines are those of bench/common/bench.h:
    RESULT bench=B impl=I workers=W param=P median_ns=X min_ns=X max_ns=X runs=R
INSTR lines those of bench/seeds/run.sh (callgrind, user-space instructions):
    INSTR bench=switch impl=I workers=1 param=2 instr_per_op=X n1=N1 n2=N2
For thread-count experiments param is the total number of threads; the
plots put threads per worker on the x axis where the seed did (Pi, matmul).
Tables need only the standard library.
"""
import argparse
import os
import re
import sys

sys.dont_write_bytecode = True

LINE_RE = re.compile(r"^(RESULT|INSTR) (.*)$")
IMPLS = ["weft", "mltp", "pthread"]
COLORS = {"weft": "tab:blue", "mltp": "tab:orange", "pthread": "tab:green"}
STYLES = {1: "--", 2: "-"}

# The seed's numbers (MLTP slides: instructions per "light" context switch).
SEED_SWITCH = [("seed MLTP\nuser", 282), ("seed MLTP\nuser+sys", 378),
               ("seed process\nuser", 10), ("seed process\nuser+sys", 830)]

# The bars of issue 5: (description, bench, param, workers of the user-level run, ratio wanted).
BARS = [("Ocean 258x258, 8 threads on 2 VPs: pthread / mltp time", "ocean_258", "8", 2, 1.3),
        ("token ring of 200 on 1 VP: pthread / mltp cost per hand-off", "ring", "200", 1, 50.0)]


def parse(path):
    results, instrs = [], []
    with open(path) as f:
        for line in f:
            m = LINE_RE.match(line.strip())
            if not m:
                continue
            kv = dict(p.split("=", 1) for p in m.group(2).split() if "=" in p)
            if m.group(1) == "RESULT":
                kv["workers"] = int(kv["workers"])
                for k in ("median_ns", "min_ns", "max_ns"):
                    kv[k] = float(kv[k])
                results.append(kv)
            else:
                kv["instr_per_op"] = float(kv["instr_per_op"])
                instrs.append(kv)
    return results, instrs


def param_key(p):
    try:
        return (0, float(p))
    except ValueError:
        return (1, p)


def fmt(ns, unit):
    if unit == "ms":
        return "%.2f" % (ns / 1e6)
    return "%.1f" % ns


def bench_order(results):
    seen = []
    for r in results:
        if r["bench"] not in seen:
            seen.append(r["bench"])
    return seen


def table(results, bench):
    rows = [r for r in results if r["bench"] == bench]
    params = sorted({r["param"] for r in rows}, key=param_key)
    keys = []
    for r in rows:
        k = (r["impl"], r["workers"])
        if k not in keys:
            keys.append(k)
    unit = "ms" if max(r["median_ns"] for r in rows) >= 1e6 else "ns"
    what = {"switch": "ns per switch", "create_delete": "ns per thread created and joined",
            "ring": "ns per hand-off, param = threads in the ring"}.get(
        bench, "median %s per run, param = total threads" % unit)
    cell = {((r["impl"], r["workers"]), r["param"]): r for r in rows}
    head = "| impl | workers | " + " | ".join(params) + " |"
    out = ["### %s (%s)" % (bench, what), "", head, "|" + "---|" * (len(params) + 2)]
    for k in keys:
        vals = []
        for p in params:
            r = cell.get((k, p))
            vals.append(fmt(r["median_ns"], unit) if r else "")
        out.append("| %s | %d | %s |" % (k[0], k[1], " | ".join(vals)))
    return "\n".join(out)


def find(results, bench, impl, workers, param):
    for r in results:
        if r["bench"] == bench and r["impl"] == impl and r["workers"] == workers and r["param"] == param:
            return r
    return None


def bars(results):
    out = ["### bars", ""]
    for desc, bench, param, w, want in BARS:
        m = find(results, bench, "mltp", w, param)
        ps = [r for r in results if r["bench"] == bench and r["impl"] == "pthread" and r["param"] == param]
        if not m or not ps:
            out.append("- %s: not measured" % desc)
            continue
        for p in sorted(ps, key=lambda r: r["workers"]):
            ratio = p["median_ns"] / m["median_ns"]
            out.append("- %s (pthreads on %d CPU%s): %.1fx, wanted >= %gx: %s" % (
                desc, p["workers"], "" if p["workers"] == 1 else "s", ratio, want,
                "PASS" if ratio >= want else "FAIL"))
    return "\n".join(out)


def print_tables(path):
    results, instrs = parse(path)
    for b in bench_order(results):
        print(table(results, b))
        print()
    if instrs:
        print("### switch: instructions per switch (callgrind, user space only)")
        print()
        print("| impl | instructions | seed (MLTP slides) |")
        print("|---|---|---|")
        seed = {"mltp": "282 user, 378 user+sys (MLTP thread)", "pthread": "10 user, 830 user+sys (process)"}
        for i in instrs:
            print("| %s | %.1f | %s |" % (i["impl"], i["instr_per_op"], seed.get(i["impl"], "")))
        print()
    print(bars(results))


# ---- plots ------------------------------------------------------------------------------

def series(results, bench, per_worker):
    """{(impl, workers): ([x], [median ms], [min ms], [max ms])} for one bench."""
    s = {}
    for r in results:
        if r["bench"] != bench:
            continue
        x = float(r["param"])
        if per_worker:
            x /= r["workers"]
        s.setdefault((r["impl"], r["workers"]), []).append((x, r["median_ns"], r["min_ns"], r["max_ns"]))
    return {k: [list(c) for c in zip(*sorted(v))] for k, v in s.items()}


def lines(ax, results, bench, per_worker, scale=1e6, logy=False):
    for (impl, w), (x, med, lo, hi) in sorted(series(results, bench, per_worker).items(),
                                              key=lambda kv: (IMPLS.index(kv[0][0]) if kv[0][0] in IMPLS else 9,
                                                              kv[0][1])):
        med = [v / scale for v in med]
        err = [[m - v / scale for m, v in zip(med, lo)], [v / scale - m for m, v in zip(med, hi)]]
        ax.errorbar(x, med, yerr=err, marker="o", ms=3, capsize=2, color=COLORS.get(impl),
                    linestyle=STYLES.get(w, ":"), label="%s, %d worker%s" % (impl, w, "" if w == 1 else "s"))
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=None if logy else 0)


def plot_switch(plt, results, instrs, out):
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    names = [i["impl"] + ("\n(user only)" if i["impl"] == "pthread" else "") for i in instrs]
    vals = [i["instr_per_op"] for i in instrs]
    names += [n for n, _ in SEED_SWITCH]
    vals += [v for _, v in SEED_SWITCH]
    colors = [COLORS.get(i["impl"], "gray") for i in instrs] + ["lightgray"] * len(SEED_SWITCH)
    a.bar(range(len(vals)), vals, color=colors)
    a.set_xticks(range(len(vals)))
    a.set_xticklabels(names, fontsize=7)
    for i, v in enumerate(vals):
        a.text(i, v, "%.0f" % v, ha="center", va="bottom", fontsize=8)
    a.set_ylabel("instructions per switch")
    a.set_title("instructions per light switch (callgrind) vs the seed")
    rows = [r for r in results if r["bench"] == "switch"]
    b.bar([r["impl"] for r in rows], [r["median_ns"] for r in rows],
          color=[COLORS.get(r["impl"]) for r in rows])
    for i, r in enumerate(rows):
        b.text(i, r["median_ns"], "%.1f" % r["median_ns"], ha="center", va="bottom", fontsize=8)
    b.set_yscale("log")
    b.set_ylabel("ns per switch (median)")
    b.set_title("time per switch, one CPU")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "seeds_switch.png"), dpi=110)
    plt.close(fig)


def plot_grid(plt, results, benches, titles, out, name, per_worker, xlabel, ylabel, scale=1e6, logy=False,
              ncols=2):
    benches = [b for b in benches if any(r["bench"] == b for r in results)]
    if not benches:
        return
    nrows = (len(benches) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.5 * ncols, 4 * nrows), squeeze=False)
    for i, b in enumerate(benches):
        ax = axes[i // ncols][i % ncols]
        lines(ax, results, b, per_worker, scale, logy)
        ax.set_title(titles.get(b, b))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    for j in range(len(benches), nrows * ncols):
        axes[j // ncols][j % ncols].axis("off")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=110)
    plt.close(fig)


def plot_lmbench(plt, results, out):
    rows = [r for r in results if r["bench"] == "create_delete"]
    has_ring = any(r["bench"] == "ring" for r in results)
    if not rows and not has_ring:
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = ["%s\n%d worker%s" % (r["impl"], r["workers"], "" if r["workers"] == 1 else "s") for r in rows]
    a.bar(range(len(rows)), [r["median_ns"] for r in rows], color=[COLORS.get(r["impl"]) for r in rows])
    a.set_xticks(range(len(rows)))
    a.set_xticklabels(labels, fontsize=7)
    for i, r in enumerate(rows):
        a.text(i, r["median_ns"], "%.0f" % r["median_ns"], ha="center", va="bottom", fontsize=7)
    a.set_yscale("log")
    a.set_ylabel("ns per thread (median)")
    a.set_title("create + delete, batches of 10 (LMbench)")
    if has_ring:
        lines(b, results, "ring", False, 1.0, True)
        b.set_xlabel("threads in the ring")
        b.set_ylabel("ns per hand-off (median)")
        b.set_title("token ring: lock + condition per thread")
        b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "seeds_lmbench.png"), dpi=110)
    plt.close(fig)


def plot_all(path, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    results, instrs = parse(path)
    os.makedirs(out, exist_ok=True)
    if instrs or any(r["bench"] == "switch" for r in results):
        plot_switch(plt, results, instrs, out)
    plot_grid(plt, results, ["pi"], {"pi": "Pi (rectangle rule), 2e7 steps"}, out, "seeds_pi.png", True,
              "threads per worker", "ms (median, min-max)", ncols=1)
    mm = sorted({r["bench"] for r in results if r["bench"].startswith("matmul_")},
                key=lambda b: (int(b.rsplit("_", 1)[1]), b))
    plot_grid(plt, results, mm, {b: "%s x %s, %s scheduling" % (b.rsplit("_", 1)[1], b.rsplit("_", 1)[1],
                                                               b.split("_")[1]) for b in mm},
              out, "seeds_matmul.png", True, "threads per worker", "ms (median, min-max)")
    oc = sorted({r["bench"] for r in results if r["bench"].startswith("ocean_")},
                key=lambda b: int(b.split("_")[1]))
    plot_grid(plt, results, oc, {b: "Ocean-like red-black solver, %s x %s" % (b[6:], b[6:]) for b in oc},
              out, "seeds_ocean.png", False, "threads (total)", "ms (median, min-max)")
    plot_lmbench(plt, results, out)
    for f in sorted(os.listdir(out)):
        if f.startswith("seeds_") and f.endswith(".png"):
            print("plot: %s" % os.path.join(out, f))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--tables", action="store_true", help="print the tables (no matplotlib needed)")
    ap.add_argument("--out", help="directory for the PNG files")
    a = ap.parse_args()
    if not a.tables and not a.out:
        ap.error("--tables and/or --out DIR")
    if a.tables:
        print_tables(a.results)
    if a.out:
        plot_all(a.results, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
