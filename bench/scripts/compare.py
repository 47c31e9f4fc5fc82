#!/usr/bin/env python3
"""compare.py: compares two benchmark results files, result by result: the ratio of the medians (new / old).

    bench/scripts/compare.py OLD.txt NEW.txt [--threshold 0.05] [--all]

Reads the RESULT lines (and the INSTR lines demo.py writes) of both files,
matches them on (bench, impl, workers, param) and prints a markdown table:
old median, new median, new/old and a verdict ("faster", "slower", or blank
within the threshold; for instructions "fewer"/"more"). Results present in
only one file are listed at the end. Lower is better for every number here.
Exit status 0; 2 on a usage error. Python 3 standard library only.
"""
import argparse
import sys


def load(path):
    """Returns {(kind, bench, impl, workers, param): value} from one file."""
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0] not in ("RESULT", "INSTR"):
                continue
            kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            try:
                if parts[0] == "RESULT":
                    value = float(kv["median_ns"])
                else:
                    value = float(kv["instr_per_op"])
                key = (parts[0], kv["bench"], kv["impl"], int(kv.get("workers", 1)), kv["param"])
            except (KeyError, ValueError):
                print("compare: %s: skipping malformed line: %s" % (path, line.strip()), file=sys.stderr)
                continue
            out[key] = value
    return out


def fmt(v):
    return "%.1f" % v if v < 1e6 else "%.3f ms" % (v / 1e6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--threshold", type=float, default=0.05, help="relative change to flag (default 0.05)")
    ap.add_argument("--all", action="store_true", help="also list results found in one file only")
    a = ap.parse_args()
    try:
        old, new = load(a.old), load(a.new)
    except OSError as e:
        print("compare: %s" % e, file=sys.stderr)
        return 2
    common = sorted(set(old) & set(new), key=lambda k: (k[0] != "RESULT",) + k[1:3] + (k[3], k[4]))
    print("| bench | impl | workers | param | %s | %s | new/old | |" % (a.old, a.new))
    print("|---|---|---:|---|---:|---:|---:|---|")
    for k in common:
        kind, bench, impl, workers, param = k
        o, n = old[k], new[k]
        r = n / o if o else float("inf")
        verdict = ""
        if r < 1 - a.threshold:
            verdict = "fewer" if kind == "INSTR" else "faster"
        elif r > 1 + a.threshold:
            verdict = "more" if kind == "INSTR" else "slower"
        name = bench + (" (instr/op)" if kind == "INSTR" else "")
        print("| %s | %s | %d | %s | %s | %s | %.3f | %s |" % (name, impl, workers, param, fmt(o), fmt(n), r, verdict))
    only = sorted(set(old) ^ set(new))
    if only:
        print("\n%d result(s) in one file only%s" % (len(only), ":" if a.all else " (--all lists them)"))
        if a.all:
            for k in only:
                print("- %s: %s%s %s workers=%d param=%s" % ("old" if k in old else "new", k[1],
                                                           " (instr/op)" if k[0] == "INSTR" else "", k[2], k[3], k[4]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
