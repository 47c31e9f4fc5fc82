#!/usr/bin/env python3
"""demo.py: runs weft's micro benchmarks and every peer baseline that was built, with the same parameters, and prints the comparison.

    bench/scripts/demo.py BUILD_DIR [--out FILE] [--quick] [--no-callgrind] [--budget SECONDS]

Collects every RESULT line (and the INSTR lines it computes with callgrind,
see instr.py) into bench/results/<date>.txt, followed by the markdown tables
it prints: create+join, yield and fib (T1/Ts and speedup), each with the
ratio to pthreads and to weft. Sized to finish in under 5 minutes on 2 cores:
slow peers run fib at smaller n only (SIZES), every program has a timeout, and a
job that would not fit in the remaining budget is skipped and named so.
Python 3 standard library only.
"""
import argparse
import os
import platform
import re
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instr  # noqa: E402

RESULT_RE = re.compile(r"^RESULT (.*)$")

# Sizes shared by every implementation (full run, --quick run).
SIZES = {
    "full": dict(cj_n=20000, y2_n=100000, y100_n=2000, pp_n=5000, fibs=(20, 25, 30, 35),
                 fib_max={"pthread": 20, "boostfiber": 25, "go": 30}, hf_fib=30,
                 cg_cj=(2000, 4000), cg_y=(5000, 10000)),
    "quick": dict(cj_n=2000, y2_n=10000, y100_n=200, pp_n=500, fibs=(12, 15, 18, 20),
                  fib_max={"pthread": 12, "boostfiber": 15, "go": 18}, hf_fib=18,
                  cg_cj=(500, 1000), cg_y=(1000, 2000)),
}

IMPL_ORDER = ["weft", "weft-hf", "pthread", "go", "tbb", "openmp", "boostfiber"]
GO_VALGRIND_ENV = {"GODEBUG": "asyncpreemptoff=1"}


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def parse_fields(s):
    return dict(kv.split("=", 1) for kv in s.split() if "=" in kv)


class Demo:
    def __init__(self, build, budget, reps, sizes, out):
        self.bin = os.path.join(build, "bench")
        self.deadline = time.monotonic() + budget
        self.reps = reps
        self.s = sizes
        self.out = out
        self.results = {}  # (bench, impl, workers, param) -> fields
        self.instr = {}    # (bench, impl, param) -> instructions per op
        self.lines = []    # RESULT / INSTR lines for the results file
        self.notes = []
        self.failed = {}   # (bench, impl, param) -> "timeout" | "skipped ..." | "failed"
        self.ncpu = len(os.sched_getaffinity(0))
        # The build's commit, as the RESULT lines of its programs carry it.
        try:
            with open(os.path.join(self.bin, "commit.txt")) as f:
                self.commit = f.read().strip() or "unknown"
        except OSError:
            self.commit = "unknown"

    def exe(self, name):
        p = os.path.join(self.bin, name)
        return p if os.access(p, os.X_OK) else None

    def remaining(self):
        return self.deadline - time.monotonic()

    def note(self, msg):
        if msg not in self.notes:
            self.notes.append(msg)
        print("note: " + msg, flush=True)

    def run(self, label, cmd, timeout, keys, env=None):
        """Runs one benchmark program, echoing its output; keys are the
        (bench, impl, param) it is expected to produce, marked on failure."""
        left = self.remaining()
        if left < min(timeout, 10):
            for k in keys:
                self.failed.setdefault(k, "skipped (time budget)")
            self.note("%s skipped: demo time budget spent" % label)
            return
        timeout = min(timeout, left)
        print("$ " + " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd)), flush=True)
        full_env = dict(os.environ)
        full_env.update(env or {})
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=full_env, start_new_session=True)
        timed_out = []

        def kill():
            timed_out.append(True)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        got = set()
        for line in p.stdout:
            line = line.rstrip("\n")
            print(line, flush=True)
            m = RESULT_RE.match(line)
            if m:
                f = parse_fields(m.group(1))
                self.results[(f["bench"], f["impl"], int(f["workers"]), f["param"])] = f
                got.add((f["bench"], f["impl"], f["param"]))
                self.lines.append(line)
        rc = p.wait()
        timer.cancel()
        for k in keys:
            if k not in got:
                self.failed.setdefault(k, "timeout" if timed_out else "failed (exit %d)" % rc)
        if timed_out:
            self.note("%s: timeout after %.0f s" % (label, timeout))
        elif rc != 0:
            self.note("%s: exit status %d" % (label, rc))

    def callgrind(self, bench, impl, param, cmd, n12, per, env=None):
        if not instr.have_valgrind():
            return
        if self.remaining() < 20:
            self.note("callgrind %s %s skipped: demo time budget spent" % (bench, impl))
            return
        try:
            x = instr.per_op(cmd, n12[0], n12[1], per, timeout=min(120, self.remaining()),
                             env=dict(os.environ, **(env or {})))
        except instr.InstrError as e:
            self.note("callgrind %s %s: %s" % (bench, impl, e))
            return
        self.instr[(bench, impl, param)] = x
        line = "INSTR bench=%s impl=%s workers=1 param=%s instr_per_op=%.1f n1=%d n2=%d commit=%s" % (
            bench, impl, param, x, n12[0], n12[1], self.commit)
        print(line, flush=True)
        self.lines.append(line)

    # ---- the jobs ----------------------------------------------------------

    def jobs(self, callgrind):
        s, r = self.s, ["-r", str(self.reps)]
        cj, y2, y100, pp = str(s["cj_n"]), str(s["y2_n"]), str(s["y100_n"]), str(s["pp_n"])
        fibs = s["fibs"]
        weft_cj, weft_y, weft_fib = self.exe("bench_create_join"), self.exe("bench_yield"), self.exe("bench_fib")
        pingpong = self.exe("bench_pingpong")
        go = self.exe("baseline_go")
        if not weft_cj:
            self.note("weft benchmarks not found in %s: build the project first" % self.bin)
        missing = [os.path.basename(p) for p in (weft_y, weft_fib, pingpong) if weft_cj and not p]
        if missing:
            self.note("not built: " + " ".join(missing))
        baselines = os.path.join(self.bin, "baselines.txt")
        if os.path.exists(baselines):
            for line in open(baselines):
                if line.startswith("skipped:"):
                    self.note("baseline " + line[len("skipped:"):].strip())
        else:
            self.note("no %s: were the baselines configured (WEFT_BENCH_BASELINES)?" % baselines)

        # create + join
        if weft_cj:
            self.run("create_join weft+pthread", [weft_cj, "-n", cj, "-p", "both"] + r, 90,
                     [("create_join", i, "empty") for i in ("weft", "weft-hf", "pthread")])
        if go:
            self.run("create_join go", [go, "-b", "create_join", "-n", cj] + r, 60, [("create_join", "go", "empty")])
        for impl in ("tbb", "openmp", "boostfiber"):
            e = self.exe("baseline_%s_create_join" % impl)
            if e:
                self.run("create_join " + impl, [e, "-n", cj] + r, 60, [("create_join", impl, "empty")])

        # yield
        for k, n in (("2", y2), ("100", y100)):
            if weft_y:
                self.run("yield weft k=" + k, [weft_y, "-k", k, "-n", n] + r, 60, [("yield", "weft", k)])
            if pingpong:
                self.run("yield pthread k=" + k, [pingpong, "-i", "sched_yield", "-k", k, "-n", n] + r, 60,
                         [("yield", "pthread", k)])
            if go:
                self.run("yield go k=" + k, [go, "-b", "yield", "-k", k, "-n", n] + r, 60, [("yield", "go", k)])
            for impl in ("boostfiber", "openmp"):
                e = self.exe("baseline_%s_yield" % impl)
                if e:
                    self.run("yield %s k=%s" % (impl, k), [e, "-k", k, "-n", n] + r, 60, [("yield", impl, k)])
        if pingpong:
            self.run("pingpong condvar", [pingpong, "-i", "condvar", "-n", pp] + r, 60,
                     [("pingpong_condvar", "pthread", "2")])

        # fib: every size up to 30 first, the largest after the instruction counts
        fib_progs = [("weft", weft_fib, []), ("pthread", self.exe("baseline_pthread_fib"), []),
                     ("go", go, ["-b", "fib"])]
        fib_progs += [(i, self.exe("baseline_%s_fib" % i), []) for i in ("tbb", "openmp", "boostfiber")]

        def fib_jobs(sizes):
            for n in sizes:
                for impl, e, pre in fib_progs:
                    if not e:
                        continue
                    if n > s["fib_max"].get(impl, n):
                        continue
                    extra = ["-p", "both"] if impl == "weft" and n == s["hf_fib"] else []
                    keys = [("fib", impl, str(n)), ("fib_serial", impl, str(n))]
                    if extra:
                        keys.append(("fib", "weft-hf", str(n)))
                    self.run("fib(%d) %s" % (n, impl), [e] + pre + ["-n", str(n)] + extra + r, 90, keys)

        fib_jobs(fibs[:-1])

        # instructions per operation (one worker)
        if callgrind and not instr.have_valgrind():
            self.note("valgrind not found: no instruction counts (bench/scripts/deps.sh installs it)")
        elif callgrind:
            cg = ["--callgrind", "-r", "1", "-w", "1"]
            if weft_cj:
                self.callgrind("create_join", "weft", "empty", [weft_cj, "-i", "weft", "-n", "{n}"] + cg, s["cg_cj"], 1)
                self.callgrind("create_join", "weft-hf", "empty",
                               [weft_cj, "-i", "weft", "-p", "help-first", "-n", "{n}"] + cg, s["cg_cj"], 1)
                self.callgrind("create_join", "pthread", "empty", [weft_cj, "-i", "pthread", "-n", "{n}"] + cg,
                               s["cg_cj"], 1)
            if weft_y:
                self.callgrind("yield", "weft", "2", [weft_y, "-k", "2", "-n", "{n}"] + cg, s["cg_y"], 2)
            if pingpong:
                self.callgrind("yield", "pthread", "2", [pingpong, "-i", "sched_yield", "-k", "2", "-n", "{n}"] + cg,
                               s["cg_y"], 2)
            if go:
                self.callgrind("create_join", "go", "empty", [go, "-b", "create_join", "-n", "{n}"] + cg, s["cg_cj"], 1,
                               GO_VALGRIND_ENV)
                self.callgrind("yield", "go", "2", [go, "-b", "yield", "-k", "2", "-n", "{n}"] + cg, s["cg_y"], 2,
                               GO_VALGRIND_ENV)
            for impl in ("tbb", "openmp", "boostfiber"):
                e = self.exe("baseline_%s_create_join" % impl)
                if e:
                    self.callgrind("create_join", impl, "empty", [e, "-n", "{n}"] + cg, s["cg_cj"], 1)
                e = self.exe("baseline_%s_yield" % impl)
                if e:
                    self.callgrind("yield", impl, "2", [e, "-k", "2", "-n", "{n}"] + cg, s["cg_y"], 2)

        fib_jobs(fibs[-1:])

    # ---- the tables --------------------------------------------------------

    def med(self, bench, impl, workers, param):
        f = self.results.get((bench, impl, workers, param))
        return float(f["median_ns"]) if f else None

    def missing(self, bench, impl, param):
        return self.failed.get((bench, impl, param), "—")

    @staticmethod
    def ratio(num, den):
        if not num or not den:
            return "—"
        r = num / den
        return ("%.0fx" if r >= 100 else "%.1fx" if r >= 10 else "%.2fx") % r

    def tables(self):
        W = self.ncpu
        out = []
        impls = [i for i in IMPL_ORDER if any(k[1] == i for k in self.results) or
                 any(k[1] == i for k in self.failed)]

        def ns(v, miss):
            return "%.1f" % v if v is not None else miss

        def ins(bench, impl, param):
            v = self.instr.get((bench, impl, param))
            return "%.0f" % v if v is not None else "—"

        # create + join
        out.append("### create + join of an empty thread (ns per create+join; lower is better)\n")
        out.append("| impl | 1 worker | %d workers | instr/op (1 worker) | x faster than pthread (1 w / %d w) | "
                   "weft is x faster (1 w / %d w) |" % (W, W, W))
        out.append("|---|---:|---:|---:|---:|---:|")
        p1, pW = self.med("create_join", "pthread", 1, "empty"), self.med("create_join", "pthread", W, "empty")
        w1, wW = self.med("create_join", "weft", 1, "empty"), self.med("create_join", "weft", W, "empty")
        for i in impls:
            a, b = self.med("create_join", i, 1, "empty"), self.med("create_join", i, W, "empty")
            if a is None and b is None and ("create_join", i, "empty") not in self.failed:
                continue
            miss = self.missing("create_join", i, "empty")
            out.append("| %s | %s | %s | %s | %s / %s | %s / %s |" % (
                i, ns(a, miss), ns(b, miss), ins("create_join", i, "empty"), self.ratio(p1, a), self.ratio(pW, b),
                self.ratio(a, w1), self.ratio(b, wW)))

        # yield
        out.append("\n### yield, K threads on one worker (ns per yield; lower is better)\n")
        out.append("| impl | K=2 | K=100 | instr/yield (K=2) | x faster than pthread sched_yield (K=2 / K=100) | "
                   "weft is x faster (K=2 / K=100) |")
        out.append("|---|---:|---:|---:|---:|---:|")
        py2, py100 = self.med("yield", "pthread", 1, "2"), self.med("yield", "pthread", 1, "100")
        wy2, wy100 = self.med("yield", "weft", 1, "2"), self.med("yield", "weft", 1, "100")
        for i in impls:
            a, b = self.med("yield", i, 1, "2"), self.med("yield", i, 1, "100")
            if a is None and b is None and ("yield", i, "2") not in self.failed:
                continue
            name = {"pthread": "pthread (sched_yield, 1 CPU)", "go": "go (Gosched, GOMAXPROCS=1)",
                    "openmp": "openmp (taskyield: no-op in libgomp)"}.get(i, i)
            miss = self.missing("yield", i, "2")
            out.append("| %s | %s | %s | %s | %s / %s | %s / %s |" % (
                name, ns(a, miss), ns(b, self.missing("yield", i, "100")), ins("yield", i, "2"),
                self.ratio(py2, a), self.ratio(py100, b), self.ratio(a, wy2), self.ratio(b, wy100)))
        c1 = self.med("pingpong_condvar", "pthread", 1, "2")
        cW = self.med("pingpong_condvar", "pthread", W, "2")
        if c1 or cW:
            out.append("\npthread mutex+condvar token hand-off: %s ns on 1 CPU, %s ns on %d CPUs "
                       "(weft yield, K=2, is %s / %s faster)" % (
                           ns(c1, "—"), ns(cW, "—"), W, self.ratio(c1, wy2), self.ratio(cW, wy2)))

        # fib
        out.append("\n### fib(n), one spawn per call (times in ms; T1/Ts = overhead on one worker, "
                   "T1/T%d = speedup on %d workers)\n" % (W, W))
        out.append("| n | impl | Ts serial | T1 | T1/Ts | T%d | T1/T%d | Ts/T%d | x faster than pthread (T1 / T%d) | "
                   "weft is x faster (T1 / T%d) |" % (W, W, W, W, W))
        out.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        fib_ns = sorted({int(k[3]) for k in self.results if k[0] == "fib"} |
                        {int(k[2]) for k in self.failed if k[0] == "fib"})
        for n in fib_ns:
            pn = str(n)
            wt1, wtW = self.med("fib", "weft", 1, pn), self.med("fib", "weft", W, pn)
            pt1, ptW = self.med("fib", "pthread", 1, pn), self.med("fib", "pthread", W, pn)
            for i in impls:
                t1, tW = self.med("fib", i, 1, pn), self.med("fib", i, W, pn)
                ser = "weft" if i == "weft-hf" else i
                ts = self.med("fib_serial", ser, 1, pn)
                if t1 is None and tW is None:
                    if ("fib", i, pn) in self.failed:
                        out.append("| %d | %s | %s | %s | | | | | | |" % (
                            n, i, "%.3f" % (ts / 1e6) if ts else "—", self.failed[("fib", i, pn)]))
                    continue

                def ms(v):
                    if v is None:
                        return "—"
                    return ("%.1f" if v >= 1e7 else "%.2f" if v >= 1e6 else "%.3f") % (v / 1e6)

                out.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s |" % (
                    n, i, ms(ts), ms(t1), self.ratio(t1, ts), ms(tW), self.ratio(t1, tW), self.ratio(ts, tW),
                    self.ratio(pt1, t1), self.ratio(ptW, tW), self.ratio(t1, wt1), self.ratio(tW, wtW)))
        return "\n".join(out)

    def header(self, params, load0, load1):
        cpu = "unknown"
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        try:
            src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            commit = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True).stdout.strip() or "none"
            dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
            if dirty:
                commit += "+dirty"
        except OSError:
            commit = "unknown"
        return ["# weft benchmark results (bench/scripts/demo.py)",
                "# date: " + time.strftime("%Y-%m-%d %H:%M:%S %z"),
                "# commit: " + commit,
                "# host: %s, %d CPUs in affinity mask, Linux %s, Python %s" % (
                    cpu, self.ncpu, platform.release(), platform.python_version()),
                "# load average (1 min): %s at start, %s at end" % (load0, load1),
                "# params: reps=%d %s" % (self.reps, " ".join("%s=%s" % kv for kv in sorted(params.items())))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="the CMake build directory (holds bench/)")
    ap.add_argument("--out", help="results file (default bench/results/<date>.txt)")
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke test of the whole pipeline")
    ap.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    ap.add_argument("--budget", type=float, default=280, help="seconds for the whole demo (default 280)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions per result (default 5)")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.build, "bench")):
        print("demo: %s/bench not found: configure and build first:\n"
              "  cmake -S . -B %s -DCMAKE_BUILD_TYPE=Release && cmake --build %s -j" % (a.build, a.build, a.build),
              file=sys.stderr)
        return 1
    sizes = SIZES["quick" if a.quick else "full"]
    out = a.out
    if not out:
        rdir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")
        os.makedirs(rdir, exist_ok=True)
        out = os.path.join(rdir, time.strftime("%Y-%m-%d_%H%M%S") + (".quick" if a.quick else "") + ".txt")
    t0 = time.monotonic()
    load0 = loadavg()
    d = Demo(a.build, a.budget, a.reps, sizes, out)
    d.jobs(not a.no_callgrind)
    table = d.tables()
    load1 = loadavg()
    notes = list(d.notes)
    busy = max(x for x in (load0, load1, 0.0) if x is not None)
    if busy > 0.5 * d.ncpu + 0.5:
        notes.append("the machine was busy (load average %.1f on %d CPUs): wall times, the %d-worker ones above all, "
                     "are unreliable; the instruction counts are not affected" % (busy, d.ncpu, d.ncpu))
    notes.append("all workers = %d (CPUs in the affinity mask); pthread workers=1 pins the process to one CPU" % d.ncpu)
    notes.append("instr = user-space instructions per operation from callgrind, (I(n2)-I(n1))/(n2-n1), "
                 "one worker; kernel work (clone, futex, sched_yield) is not counted")
    notes.append("tbb has no task yield; openmp's taskyield is a no-op in libgomp (its yield row is the call's cost)")
    notes.append("fib sizes are capped for the slow ones to keep the demo under 5 minutes: " +
                 ", ".join("%s at n <= %d" % kv for kv in sorted(sizes["fib_max"].items())))
    elapsed = time.monotonic() - t0
    text = "\n".join(d.header(sizes, load0, load1) + d.lines) + "\n\n" + table + "\n\nNotes:\n" + \
        "\n".join("- " + n for n in notes) + "\n\n(demo took %.0f s)\n" % elapsed
    with open(out, "w") as f:
        f.write(text)
    print("\n" + table + "\n\nNotes:\n" + "\n".join("- " + n for n in notes))
    print("\nresults: %s (demo took %.0f s)" % (os.path.relpath(out), elapsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
