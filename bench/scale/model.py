#!/usr/bin/env python3
"""model.py: a discrete-event scale model of weft_dist's scheduler, 16 to
4,096 ranks, checked against weft's own times and published results.

What is simulated (docs/distributed.md, "How far it scales"):
  - ranks with one worker each; a rank runs threads child-first: a spawn
    pushes the parent's continuation on the rank's deque and runs the
    child; a child that ends pops its parent back (the common case, no
    communication) or, when a thief took the parent, does the child side of
    the join (an atomic on the join record) and goes stealing;
  - a join whose children are not all done suspends the thread (its frames
    are evacuated); the last child to end resumes it on its own rank (the
    frames are copied in: a get when they sit on another rank);
  - an idle rank steals, step by step, as src/dist does: read top and base
    of a random victim (give up if empty), take the victim's deque lock
    (give up if held), add 1 to base and read top (back off: 2 more steps),
    read the entry and the continuation's frame_end, get the frames, store 0
    into the lock. Each step is one operation: a load, store or CPU atomic
    inside a node (shm), one MPI-3 RMA round trip between nodes (rma). The
    lock serialises the thieves of one victim (contention); every operation
    on a victim also queues at its network port (a message-rate limit);
  - under an MPI that is not truly one-sided (MPICH on this machine), an
    operation on a busy victim completes only at the victim's next poll
    (every WEFT_DIST_POLL = 64 spawns);
  - termination: the rank that ends the root sets the exit flags (a store
    per rank under shm; under rma one put to rank 0 and a binomial tree of
    puts), then a broadcast and a barrier (log2 p round trips each), plus
    the run's opening collective.
The approximation that makes 4,096 ranks x fib(40) take minutes: a subtree
smaller than a cut-off runs in bulk, as one leaf task whose cost is its
nodes x the serial cost per node + its spawns x the spawn+join cost. Its
continuations cannot be stolen while it runs, so a steal that in weft
would take a deeper, smaller piece finds nothing there; the cut-off is
chosen so that a leaf is ~1 % of a rank's share of the work, which bounds
the error this adds to the end of a run (the tail) to about that much.

Everything the model does not simulate is stated where its number is set:
see COSTS (this machine), PRESETS (interconnects), SEED and ITOYORI.
Usage: model.py [--calibration FILE] [--build DIR] [--quick] [--png FILE]
"""
import argparse
import collections
import heapq
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# Work trees


def fib_numbers(n):
    f = [0, 1]
    while len(f) <= n + 2:
        f.append(f[-1] + f[-2])
    return f


FIB = fib_numbers(64)


class FibTree:
    """fib(n) as bench/dist/dist_fib.c writes it: spawn fib(n-1), call
    fib(n-2) (inline, no spawn), join. A node is its n."""
    inline_last = True

    def __init__(self, n, leaf_ns=0.0):
        self.n, self.name = n, "fib(%d)" % n
        self.nodes = 2 * FIB[n + 1] - 1          # calls
        self.spawns = FIB[n + 1] - 1              # calls with n >= 2
        self.leaf_ns = leaf_ns
        self.root = n

    def children(self, n):
        return [n - 1, n - 2]

    def bulk(self, n, per_node, per_spawn):
        """None when n is to be simulated spawn by spawn, else the cost of
        its whole subtree run in bulk."""
        cost = (2 * FIB[n + 1] - 1) * per_node + (FIB[n + 1] - 1) * per_spawn
        if n < 2 or cost <= self.leaf_ns:
            return cost
        return None


class SkeletonTree:
    """A tree read from treegen's skeleton: an expanded node is a list of
    children, a bulk subtree an int (its nodes, each a spawned thread, as
    bench/dist/dist_apps.c spawns them)."""
    inline_last = False

    def __init__(self, name, path):
        self.name = name
        self.leaf_ns = 0.0
        self.size = {}   # id(expanded node) -> nodes in its subtree
        stack = []
        with open(path) as f:
            head = f.readline().split()
            self.nodes = int([h for h in head if h.startswith("nodes=")][0][6:])
            for line in f:
                kind, n = line[0], int(line[2:])
                if kind == "L":
                    stack.append(n)
                else:
                    if n:
                        node = stack[-n:]
                        del stack[-n:]
                    else:
                        node = []
                    self.size[id(node)] = 1 + sum(c if isinstance(c, int) else self.size[id(c)] for c in node)
                    stack.append(node)
        self.root = stack.pop()
        self.spawns = self.nodes - 1

    def children(self, node):
        return node

    def bulk(self, node, per_node, per_spawn):
        # a bulk subtree's root spawn is charged by the parent that spawns it
        if isinstance(node, int):
            return node * per_node + (node - 1) * per_spawn
        n = self.size[id(node)]
        cost = n * per_node + (n - 1) * per_spawn
        return cost if cost <= self.leaf_ns else None


_TREES = {}


def skeleton(build, kind, arg, cut, name):
    """treegen's skeleton of a tree, made once and kept in BUILD/scale."""
    key = (build, kind, arg, cut)
    if key not in _TREES:
        _TREES[key] = _skeleton(build, kind, arg, cut, name)
    return _TREES[key]


def _skeleton(build, kind, arg, cut, name):
    d = os.path.join(build, "scale")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "tree_%s_%s_%d.txt" % (kind, arg, cut))
    if not os.path.exists(path):
        exe = os.path.join(d, "treegen")
        if not os.path.exists(exe):
            src = os.path.join(HERE, "treegen.c")
            uts = os.path.join(HERE, "..", "apps", "uts", "uts_tree.c")
            subprocess.run(["cc", "-O2", "-o", exe, src, uts, "-lm"], check=True)
        t0 = time.time()
        with open(path + ".tmp", "w") as f:
            subprocess.run([exe, kind, str(arg), str(cut)], stdout=f, check=True)
        os.rename(path + ".tmp", path)
        log("  (walked %s %s once with treegen in %.0f s: %s)" % (kind, arg, time.time() - t0, path))
    return SkeletonTree(name, path)


# ---------------------------------------------------------------------------
# The machine a run is modelled on


class Net:
    """How two ranks reach each other. op(): one step of the steal
    protocol; inside a node a cache-line transfer, between nodes one RMA
    round trip (software + two one-way latencies). bw: frames (B/ns)."""

    def __init__(self, name, shm_op, rma_op, bw_remote, bw_local, port_ns, per_node,
                 mixed=False, poll=None, near_op=None):
        self.name, self.shm_op, self.rma_op = name, shm_op, rma_op
        self.near_op = near_op    # an RMA step between two ranks of one node (MPI's shared-memory path); None: as rma_op
        self.bw_remote, self.bw_local, self.port_ns = bw_remote, bw_local, port_ns
        self.per_node = per_node  # ranks per node
        self.mixed = mixed        # shm between ranks of one node even when the job spans nodes
        self.poll = poll          # None: truly one-sided RMA; else ns between a busy victim's polls


class Costs:
    """Per-node work and scheduler costs (ns) of one program on one machine."""

    def __init__(self, per_node, per_spawn, suspend, frame_bytes, retry):
        self.per_node, self.per_spawn = per_node, per_spawn
        self.suspend, self.frame_bytes, self.retry = suspend, frame_bytes, retry


# ---------------------------------------------------------------------------
# The simulator

INF = float("inf")


class Frame:
    __slots__ = ("children", "i", "pending", "parent", "spawned", "suspended", "rank")

    def __init__(self, children, parent, spawned, rank):
        self.children, self.i, self.pending = children, 0, 0
        self.parent, self.spawned, self.suspended, self.rank = parent, spawned, False, rank


class Rank:
    __slots__ = ("id", "node", "deque", "lock_until", "port_free", "busy", "work",
                 "steal_ok", "steal_fail", "t_ok", "t_fail", "first_work", "joins", "near_left")

    def __init__(self, i, node):
        self.id, self.node = i, node
        self.deque = collections.deque()
        self.lock_until = -1.0
        self.port_free = 0.0
        self.busy = False
        self.work = 0.0
        self.steal_ok = self.steal_fail = 0
        self.t_ok = self.t_fail = 0.0
        self.first_work = None
        self.joins = 0
        self.near_left = NEAR_TRIES


class Sim:
    def __init__(self, tree, p, net, costs, seed=1, node_first=False, short=False):
        self.tree, self.p, self.net, self.c = tree, p, net, costs
        self.node_first, self.short = node_first, short
        self.rng = random.Random(seed)
        self.nodes = max(1, -(-p // net.per_node))
        self.single_node = self.nodes == 1
        self.ranks = [Rank(i, i // net.per_node) for i in range(p)]
        self.heap, self.seq = [], 0
        self.end = None
        self.root_end = None
        self.lg = math.ceil(math.log2(p)) if p > 1 else 0

    # -- communication ---------------------------------------------------
    def local(self, a, b):
        return self.single_node or (self.net.mixed and a.node == b.node)

    def op(self, a, b, t):
        """Completion time of one protocol step of rank a on rank b's
        memory, issued at t."""
        if a is b:
            return t + self.net.shm_op
        if self.local(a, b):
            return t + self.net.shm_op
        rt = self.net.rma_op
        if self.net.near_op is not None and a.node == b.node:
            rt = self.net.near_op
        half = rt / 2
        arrive = t + half
        start = max(arrive, b.port_free)
        b.port_free = start + self.net.port_ns
        if self.net.poll is not None and b.busy:
            # the victim serves the operation at its next poll
            start += self.rng.random() * self.net.poll
        return start + self.net.port_ns + half

    def copy(self, a, b, t, nbytes):
        if self.local(a, b):
            return t + self.net.shm_op + nbytes / self.net.bw_local
        return self.op(a, b, t) + nbytes / self.net.bw_remote

    # -- events ----------------------------------------------------------
    def at(self, t, fn, *args):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, fn, args))

    def run(self):
        c, tree = self.c, self.tree
        r0 = self.ranks[0]
        # the run's opening collective: a barrier (log2 p steps)
        t0 = self.lg * (self.net.shm_op if self.single_node else self.net.rma_op)
        root_children = tree.children(tree.root)
        b = tree.bulk(tree.root, c.per_node, c.per_spawn)
        if b is not None:
            self.at(t0 + b, self.finish_root, r0)
            r0.work += b
            r0.busy = True
        else:
            r0.first_work = t0
            r0.work += c.per_node      # the root's own node
            self.at(t0 + c.per_node, self.advance, r0, Frame(root_children, None, False, 0))
        for r in self.ranks[1:]:
            self.at(t0, self.steal_start, r)
        heap = self.heap
        pop = heapq.heappop
        while heap and self.end is None:
            t, _, fn, args = pop(heap)
            fn(t, *args)
        return self.end

    # a rank runs frame F from time t until it starts a leaf, suspends,
    # runs out of work or ends the root
    def advance(self, t, r, F):
        c, tree = self.c, self.tree
        r.busy = True
        if r.first_work is None:
            r.first_work = t
        per_node, per_spawn = c.per_node, c.per_spawn
        inline_last = tree.inline_last
        while True:
            ch = F.children
            if F.i < len(ch):
                node = ch[F.i]
                F.i += 1
                inline = inline_last and F.i == len(ch)
                if not inline:
                    F.pending += 1
                    r.deque.append(F)
                    t += per_spawn
                    r.work += per_spawn
                b = tree.bulk(node, per_node, per_spawn)
                if b is not None:
                    r.work += b
                    self.at(t + b, self.leaf_done, r, F, inline)
                    return
                t += per_node
                r.work += per_node
                F = Frame(tree.children(node), F, not inline, r.id)
                continue
            # the join: every child done?
            if F.pending:
                F.suspended = True
                F.rank = r.id
                t += c.suspend
                r.busy = False
                self.steal_start(t, r)
                return
            P = F.parent
            if P is None:
                self.finish_root(t, r)
                return
            if not F.spawned:
                F = P
                continue
            nxt, t = self.child_done(t, r, P)
            if nxt is None:
                return
            F = nxt

    def leaf_done(self, t, r, F, inline):
        if inline:
            self.advance(t, r, F)
            return
        nxt, t = self.child_done(t, r, F)
        if nxt is not None:
            self.advance(t, r, nxt)

    def child_done(self, t, r, P):
        """A spawned child of P ended on r at t: the frame r goes on with
        (and when), or None when r went stealing."""
        if r.deque and r.deque[-1] is P:
            r.deque.pop()
            P.pending -= 1
            return P, t
        # the parent was stolen: the child's side of the join, an atomic on
        # the join record (which lives on the rank that spawned the child)
        owner = self.ranks[P.rank]
        t = self.op(r, owner, t)
        P.pending -= 1
        r.joins += 1
        if P.pending == 0 and P.suspended:
            P.suspended = False
            t = self.copy(r, self.ranks[P.rank], t, self.c.frame_bytes)
            P.rank = r.id
            return P, t
        r.busy = False
        self.steal_start(t, r)
        return None, t

    def finish_root(self, t, r):
        net = self.net
        self.root_end = t
        if self.single_node:
            # a store into every rank's exit flag, then a broadcast and a
            # barrier through shared memory
            t += self.p * net.shm_op + 2 * self.lg * net.shm_op
        else:
            # a put to rank 0, a binomial tree of puts, a broadcast, a barrier
            t += (1 + 3 * self.lg) * net.rma_op
        self.end = t

    # -- stealing ----------------------------------------------------------
    def victim(self, r):
        """src/mpi/ranksched.c's victim: node first, NEAR_TRIES attempts on
        one's node for each one anywhere else, when the job spans nodes."""
        p = self.p
        per = self.net.per_node
        base = r.node * per
        n = min(per, p - base)
        if self.node_first and not self.single_node and n > 1:
            if r.near_left > 0:
                r.near_left -= 1
                v = base + self.rng.randrange(n - 1)
                if v >= r.id:
                    v += 1
                return self.ranks[v]
            r.near_left = NEAR_TRIES
        v = self.rng.randrange(p - 1)
        if v >= r.id:
            v += 1
        return self.ranks[v]

    def steal_start(self, t, r):
        if self.end is not None or self.p == 1:
            return
        v = self.victim(r)
        if self.short:
            # one atomic takes the lock and returns top and base
            t1 = self.op(r, v, t)
            self.at(t1, self.steal_short, r, v, t)
            return
        t1 = self.op(r, v, t)       # 1. read top and base
        self.at(t1, self.steal_peeked, r, v, t)

    def steal_fail(self, t, r, t_start):
        r.steal_fail += 1
        r.t_fail += t - t_start
        self.steal_start(t + self.c.retry, r)

    def steal_peeked(self, t, r, v, t_start):
        if not v.deque:
            self.steal_fail(t, r, t_start)
            return
        t1 = self.op(r, v, t)       # 2. the lock: one atomic
        self.at(t1, self.steal_locked, r, v, t_start)

    def steal_locked(self, t, r, v, t_start):
        if v.lock_until > t:
            self.steal_fail(t, r, t_start)
            return
        v.lock_until = INF
        t1 = self.op(r, v, self.op(r, v, t))   # 3. base + 1, read top
        self.at(t1, self.steal_take, r, v, t_start)

    def steal_take(self, t, r, v, t_start):
        if not v.deque:             # the owner popped the last entry: back off
            t1 = self.op(r, v, self.op(r, v, t))
            v.lock_until = t1
            self.steal_fail(t1, r, t_start)
            return
        F = v.deque.popleft()
        # 4. the entry, the continuation's frame_end, the frames, the unlock
        t1 = self.op(r, v, self.op(r, v, t))
        t1 = self.copy(r, v, t1, self.c.frame_bytes)
        t1 = self.op(r, v, t1)
        v.lock_until = t1
        self.stolen(t1, r, F, t_start)

    def stolen(self, t, r, F, t_start):
        r.steal_ok += 1
        r.t_ok += t - t_start
        F.rank = r.id
        self.at(t, self.advance, r, F)

    # the design change "fewer round trips": lock and peek in one atomic,
    # base + 1 and top in one, the entry with its frame_end in one get, the
    # frames, and an unlock the thief does not wait for
    def steal_short(self, t, r, v, t_start):
        if v.lock_until > t:
            self.steal_fail(t, r, t_start)
            return
        if not v.deque:
            v.lock_until = t + self.net.rma_op / 2   # the release lands
            self.steal_fail(t, r, t_start)
            return
        v.lock_until = INF
        t1 = self.op(r, v, t)
        self.at(t1, self.steal_short_take, r, v, t_start)

    def steal_short_take(self, t, r, v, t_start):
        if not v.deque:
            v.lock_until = t + self.net.rma_op / 2
            self.steal_fail(t, r, t_start)
            return
        F = v.deque.popleft()
        t1 = self.copy(r, v, self.op(r, v, t), self.c.frame_bytes)
        v.lock_until = t1 + self.net.rma_op / 2
        self.stolen(t1, r, F, t_start)


def simulate(tree, p, net, costs, seed=1, node_first=False, leaf_ns=None, short=False):
    """T_p (ns) and the simulator (its ranks' counters). leaf_ns: the
    largest subtree cost run in bulk (default: ~1 % of a rank's share)."""
    tree.leaf_ns = leaf_target(t1_of(tree, costs), p) if leaf_ns is None else leaf_ns
    s = Sim(tree, p, net, costs, seed, node_first, short)
    T = s.run()
    return T, s


def t1_of(tree, costs):
    return tree.nodes * costs.per_node + tree.spawns * costs.per_spawn


def breakdown(s, T, T1):
    """Where p x T_p went, as fractions: work, successful and failed steals,
    the wait before a rank's first work, and the rest (idle at the end,
    termination, joins)."""
    p = s.p
    tot = p * T
    work = sum(r.work for r in s.ranks)
    ok = sum(r.t_ok for r in s.ranks)
    fail = sum(r.t_fail for r in s.ranks)
    first = sum((r.first_work if r.first_work is not None else T) for r in s.ranks)
    return {"work": work / tot, "steal_ok": ok / tot, "steal_fail": fail / tot,
            "ramp": first / tot, "eff": T1 / tot}


# ---------------------------------------------------------------------------
# Inputs: this machine, published interconnects, the seed, Itoyori

LOG = []


def log(s=""):
    print(s)
    LOG.append(s)


def read_calibration(path):
    cal = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if "=" in line:
                k, v = line.split("=", 1)
                try:
                    cal[k.strip()] = float(v)
                except ValueError:
                    pass
    return cal


class Param:
    """A number with the place it came from, printed in the calibration."""
    rows = []
    record = True

    def __init__(self, name, value, unit, source):
        self.name, self.value, self.unit, self.source = name, value, unit, source
        if Param.record:
            Param.rows.append(self)

    def __float__(self):
        return float(self.value)


NEAR_TRIES = 3             # WEFT__DIST_NEAR_TRIES (src/mpi/dist.h): attempts on one's node per one elsewhere
STEAL_TIMED = 6            # steps of a steal inside WEFT_DIST_STATS's steal time
POLL_EVERY = 64            # WEFT__DIST_POLL_EVERY (src/mpi/dist.h)
NQ12_NODES = 856189        # threads of N-Queens(12), root included (treegen)
UTS_T1_NODES = 4130071     # UTS T1 (bench/apps/uts/uts.c)


# figures the quietest calibration file lacks, from another one: name ->
# (value, the file) (main fills it)
ELSEWHERE = {}


def machine_costs(cal):
    """This machine's costs, each from a measurement in the calibration."""
    fib35_calls = 2 * FIB[36] - 1
    P = {}
    P["fib_node"] = Param("fib: serial ns per call", cal["serial_fib35"] * 1e6 / fib35_calls, "ns",
                          "serial_fib35 = %.1f ms / %d calls (dist_fib serial 35)" % (cal["serial_fib35"], fib35_calls))
    # One spawn + pop + join cost for both transports: the path is the same
    # code (callgrind: the same instructions per spawn in weft__dist_spawn,
    # join, pop and finish over shm and rma); rma adds only a poll of MPI
    # every WEFT_DIST_POLL spawns, dearer when the job has peers. (The model
    # once took the rma cost from a separate 1-rank rma run, whose noise, 8%
    # below the shm run, it then carried into the 2-rank rma cells.)
    n = 30 if "shm_np1_fib30" in cal else 35
    ms = cal["shm_np1_fib%d" % n]
    calls, spawns = 2 * FIB[n + 1] - 1, FIB[n + 1] - 1
    P["spawn"] = Param("spawn + pop + join", (ms * 1e6 - calls * P["fib_node"].value) / spawns, "ns",
                       "(shm_np1_fib%d %.1f ms - serial share) / %d spawns (mpiexec -n 1 dist_fib fib %d)"
                       % (n, ms, spawns, n))
    P["calibrated_by"] = "fib35" if n == 35 else None
    for k, who in (("1", "alone (1 rank)"), ("2", "with a peer (2 ranks)")):
        key = "poll_ns_np" + k
        v, where = cal.get(key), "this file"
        if v is None and key in ELSEWHERE:
            v, where = ELSEWHERE[key]
        if v is None:
            v, where = (53.0 if k == "1" else 113.0), "none of the files: pollcost.c's medians on 2026-11-28"
        P["poll_ns" + k] = Param("rma: one poll of MPI, %s" % who, v, "ns",
                                 "%s: MPI_Iprobe under an open window, bench/scale/pollcost.c, mpiexec -n %s (%s)"
                                 % (key, k, where))
    P["spawn_rma"] = Param("spawn + pop + join, rma, 1 rank", P["spawn"].value + P["poll_ns1"].value / POLL_EVERY, "ns",
                           "spawn + one poll per %d spawns (WEFT_DIST_POLL, src/mpi/dist.h)" % POLL_EVERY)
    P["spawn_rma_peers"] = Param("spawn + pop + join, rma, with peers", P["spawn"].value + P["poll_ns2"].value / POLL_EVERY, "ns",
                                 "spawn + one poll with peers per %d spawns (assumed: no dearer with more peers)" % POLL_EVERY)
    P["nq_node"] = Param("N-Queens: serial ns per thread", cal["serial_nq12"] * 1e6 / NQ12_NODES, "ns",
                         "serial_nq12 = %.1f ms / %d placements (dist_apps nqueens-serial 12)" % (cal["serial_nq12"], NQ12_NODES))
    P["uts_node"] = Param("UTS: serial ns per node", cal["serial_uts"] * 1e6 / UTS_T1_NODES, "ns",
                          "serial_uts = %.1f ms / %d nodes (dist_apps uts-serial, T1)" % (cal["serial_uts"], UTS_T1_NODES))
    # WEFT_DIST_STATS times a steal from after the lock to the unlock: the
    # take (base + 1, top, the entry), frame_end, the frames and the unlock,
    # 6 of the 8 steps (src/mpi/rma.c); the peek and the lock are not in it
    steal_shm = cal.get("steal_us_shm") or 2.5
    P["shm_op"] = Param("shm protocol step", steal_shm * 1e3 / STEAL_TIMED, "ns",
                        "steal_us_shm = %.2f us (WEFT_DIST_STATS, after the lock to the unlock, 2 ranks) / %d steps"
                        % (steal_shm, STEAL_TIMED))
    P["rma_op"] = Param("rma round trip, this node", cal["rma_fao_us"] * 1e3, "ns",
                        "rma_fao_us: MPI_Fetch_and_op + flush, bench_rma_probe -n 2 (MPICH 4.0.2)")
    share = max(1.0, cal.get("pair_fib38", 1.0) / cal.get("alone_fib38", 1.0))
    P["share"] = Param("2 processes' slowdown (CPU share)", share, "x",
                       "pair_fib38 / alone_fib38: two serial fib(38) at once against one, same rounds (other jobs share the 2 CPUs); "
                       "applied to the 2-rank check with --stat median only")
    if cal.get("steal_us_rma"):
        P["rma_here"] = Param("rma protocol step, this machine", cal["steal_us_rma"] * 1e3 / STEAL_TIMED, "ns",
                              "steal_us_rma = %.0f us (WEFT_DIST_STATS, 2 ranks) / %d steps: each waits for the victim's poll, "
                              "and for the OS to run the victim when the CPUs are shared" % (cal["steal_us_rma"], STEAL_TIMED))
    P["poll"] = Param("rma: a busy rank's poll interval", POLL_EVERY * (P["spawn_rma_peers"].value + P["fib_node"].value * 2), "ns",
                      "WEFT_DIST_POLL = %d spawns x (spawn + a fib call's share): docs/distributed.md 'Progress'" % POLL_EVERY)
    P["suspend"] = Param("suspended join (evacuate frames)", 2 * P["shm_op"].value, "ns",
                         "assumed: a memcpy of the frames + the flag, ~2 shm steps (not measured alone)")
    P["frame"] = Param("frames copied per steal", 512, "B", "assumed: weft's continuations span a few hundred bytes (docs: [saved sp - 64, frame_end))")
    P["bw_local"] = Param("memcpy bandwidth", 10.0, "B/ns", "assumed: 10 GB/s")
    return P


# Interconnects: published figures, cited; round trip = 2 x one-way latency +
# the MPI software of one flushed RMA operation, the latter fitted once to
# Itoyori's published InfiniBand steal (ITOYORI below) and used for all.
PUBLISHED = {
    "ib_hdr_lat": (600, "ns", "NVIDIA ConnectX-6 user manual (docs.nvidia.com/networking/display/ConnectX6EN/Introduction): 'sub-600ns latency'"),
    "ib_hdr_bw": (25.0, "B/ns", "same: 200 Gb/s per port"),
    "ib_hdr_rate": (215e6, "msg/s", "same: '215 million messages per second'"),
    "slingshot_bw": (25.0, "B/ns", "De Sensi et al., 'An In-Depth Analysis of the Slingshot Interconnect', SC20 (arXiv 2008.08886): 200 Gb/s per direction"),
    "slingshot_lat": (None, "ns", "not found (the paper's latency figures were not readable here): taken as InfiniBand HDR's"),
    "tofu_bw": (5.0, "B/ns", "Tofu (K computer) 5 GB/s per direction (en.wikipedia.org/wiki/Torus_fusion); Tofu-D's own figure not found"),
    "tofu_steal": (20474, "ns", "Shiina & Taura, Cluster'22 artifact (github s417-lama/cluster22-contsteal-artifact 21119c2), raw_results/wisteria-o/sched_rrm..._node_3x4x3-mesh: median steal_success on Wisteria-O (A64FX, Tofu-D), 1,728 processes"),
    "tofu_copy": (3382, "ns", "same file: median steal_task_copy"),
}

# Itoyori's threading layer (MassiveThreads/DM greedy_gc, Cluster'22; what
# Itoyori's README names as its threading layer) on ITO-A (Xeon Gold 6154,
# 36 cores/node, InfiniBand EDR): per-operation costs and UTS T1L times,
# from the paper's published artifact (raw_results/ito-a), medians.
ITOYORI = {
    "steal_ok": (32805, "ns", "raw_results/ito-a/sched_pfor_size_n_no_buf_madm_greedy_gc_prof_node_64/node_64_n_1048576_m_10000_i_1.txt: median steal_success, 2,304 processes"),
    "steal_fail": (8317, "ns", "same file: median steal_fail"),
    "copy": (6305, "ns", "same file: median steal_task_copy (1.6 KB frames, steal_task_size)"),
    "frame": (1640, "B", "same file: steal_task_size"),
    "serial": (19.4334e9, "ns", "raw_results/ito-a/uts_T1L_serial_madm_greedy_gc_node_1: median of 110 runs, 102,181,082 nodes"),
    "onecore": (22.8675e9, "ns", "raw_results/ito-a/uts_T1L_onecore_madm_greedy_gc_node_1: median, 1 process"),
    "p2304": (13.0305e6, "ns", "raw_results/ito-a/uts_T1L_allcore_madm_greedy_gc_node_64: median, 2,304 processes (64 nodes x 36)"),
    "p576": (43.4671e6, "ns", "raw_results/ito-a/uts_T1L_allcore_madm_greedy_gc_node_16: median, 576 processes"),
    "largest": "the paper's largest ITO-A run (256 nodes, 9,216 processes; Wisteria-O: 2,304 nodes) is in the artifact but not in the stored snapshot (file absent): not found; 2,304 processes is the largest found",
    "fib": "Itoyori's fib speedups at scale: not found (SC'23 reports Cilksort, UTS-Mem, ExaFMM; Cluster'22 UTS, synthetic, LCS)",
}

# The seed (shared/seeds/4-uni-address-threads.txt, Akiyama & Taura,
# HPDC'15 slides): "42K cycles in total" per steal, "Uni-address threads
# 413 cycles" (SPARC64IXfx) / "100 cycles" (Xeon E5-2660) per thread
# creation, "Load balancing scalability (~3840 cores)" on FX10 for binary
# task creation, UTS and NQueens, "All the benchmarks worked".
SEED = {
    "steal_cycles": 42000,
    "spawn_cycles": 413,
    "ghz": (1.848, "FX10's SPARC64 IXfx clock: not in the seed text; Fujitsu's FX10 figure (assumed)"),
    "per_node": (16, "FX10: 16 cores per node; 3,840 cores = 240 nodes (not in the seed text: assumed)"),
    "sizes": "the seed's problem sizes and its curves' values: not found (the figures are images); the model runs this repository's trees",
}


def presets(P):
    """Network presets: one RMA round trip and frame bandwidth per interconnect."""
    # MPI software per flushed operation, fitted to Itoyori's published ITO-A
    # steal: 7 round trips of which one carries the frames (copy):
    # (steal_ok - copy) / 6 = one round trip on EDR; minus EDR's two one-way
    # latencies, taken as HDR's 600 ns (EDR's own figure: not found).
    rt_edr = (ITOYORI["steal_ok"][0] - ITOYORI["copy"][0]) / 6.0
    sw = rt_edr - 2 * PUBLISHED["ib_hdr_lat"][0]
    Param("MPI software per flushed RMA op", sw, "ns",
          "(Itoyori steal_ok %d - copy %d) / 6 round trips - 2 x 600 ns" % (ITOYORI["steal_ok"][0], ITOYORI["copy"][0]))
    rate_ns = 1e9 / PUBLISHED["ib_hdr_rate"][0]
    per_node = 48
    tofu_rt = (PUBLISHED["tofu_steal"][0] - PUBLISHED["tofu_copy"][0]) / 6.0
    # a step between two ranks of one node goes through the MPI's
    # shared-memory path: this machine's measured RMA round trip
    near = P["rma_op"].value
    nets = {
        "ib-hdr": Net("InfiniBand HDR", P["shm_op"].value, sw + 2 * 600, 25.0, 10.0, rate_ns, per_node, near_op=near),
        "slingshot": Net("Slingshot", P["shm_op"].value, sw + 2 * 600, 25.0, 10.0, rate_ns, per_node, near_op=near),
        "tofu-d": Net("Tofu-D", P["shm_op"].value, tofu_rt, 5.0, 10.0, rate_ns, per_node, near_op=near),
    }
    Param("IB HDR: RMA round trip", nets["ib-hdr"].rma_op, "ns", "2 x 600 ns (%s) + software" % PUBLISHED["ib_hdr_lat"][2])
    Param("presets: RMA step inside a node", near, "ns", "rma_fao_us: this machine's MPI RMA between two ranks of one node")
    Param("IB HDR: bandwidth / message rate", 25.0, "B/ns", "%s; %s" % (PUBLISHED["ib_hdr_bw"][2], PUBLISHED["ib_hdr_rate"][2]))
    Param("Slingshot: RMA round trip", nets["slingshot"].rma_op, "ns", "latency %s" % PUBLISHED["slingshot_lat"][2])
    Param("Slingshot: bandwidth", 25.0, "B/ns", PUBLISHED["slingshot_bw"][2])
    Param("Tofu-D: RMA round trip", tofu_rt, "ns", "(steal_ok - copy) / 6, %s" % PUBLISHED["tofu_steal"][2])
    Param("Tofu-D: bandwidth", 5.0, "B/ns", PUBLISHED["tofu_bw"][2])
    Param("ranks per node (presets)", per_node, "", "assumed: 48 cores per node, as Itoyori's SC'23 artifact nodes (compute_cascadelake_r)")
    return nets


# ---------------------------------------------------------------------------
# The runs


def leaf_target(T1, p):
    """A bulk leaf's cost: ~1 % of a rank's share, at least 2 us."""
    return max(2e3, min(5e6, T1 / p / 100.0))


def prog_costs(P, prog, transport="shm", frame=None, ranks=2):
    if transport == "shm":
        spawn = P["spawn"].value
    else:
        spawn = P["spawn_rma"].value if ranks == 1 else P["spawn_rma_peers"].value
    node = {"fib": P["fib_node"], "nq": P["nq_node"], "uts": P["uts_node"]}[prog].value
    return Costs(node, spawn, P["suspend"].value, frame or P["frame"].value, 50.0)


def here_nets(P):
    """This machine: every rank on one node (shm), or rma forced on it."""
    shm = Net("this machine, shm", P["shm_op"].value, P["rma_op"].value, 10.0, 10.0, 0.0, 1 << 30)
    if "rma_here" in P:
        rma = Net("this machine, rma", P["shm_op"].value, P["rma_here"].value, 10.0, 10.0, 0.0, 1)
    else:
        rma = Net("this machine, rma", P["shm_op"].value, P["rma_op"].value, 10.0, 10.0, 0.0, 1,
                  poll=P["poll"].value)
    return shm, rma


def check_own(cal, P, nq12, t1tree, use_share):
    """Check (a) against one calibration file: the relative errors.
    use_share: run each of 2 ranks at the CPU share two processes got (for
    medians; minima are the runs that had their CPUs)."""
    here_shm, here_rma = here_nets(P)
    errs = []
    events = {}
    log("  %-14s %-4s %5s %10s %10s %7s  %s" % ("program", "tr", "ranks", "measured", "model", "error", "model steals/rank"))
    share = P["share"].value if use_share else 1.0
    for prog, key, mk in (("fib", "fib35", lambda: FibTree(35)),
                          ("nq", "nq12", lambda: nq12), ("uts", "uts", lambda: t1tree)):
        for tr, net in (("shm", here_shm), ("rma", here_rma)):
            tree = mk()
            for np_ in (1, 2):
                meas = cal.get("%s_np%d_%s" % (tr, np_, key))
                if meas is None:
                    continue
                c = prog_costs(P, prog, tr, ranks=np_)
                cc = c
                if np_ == 2:   # each rank runs at the CPU share two processes got
                    cc = Costs(c.per_node * share, c.per_spawn * share, c.suspend * share, c.frame_bytes, c.retry)
                runs = sorted((simulate(tree, np_, net, cc, seed) for seed in (1, 2, 3)), key=lambda x: x[0])
                T, s = runs[1]
                T /= 1e6
                e = (T - meas) / meas
                note = ""
                if prog == "fib" and tr == "shm" and np_ == 1 and P["calibrated_by"] == "fib35":
                    note = "  (calibrates the spawn cost: not counted)"
                else:
                    errs.append(abs(e))
                log("  %-14s %-4s %5d %8.1f ms %8.1f ms %+6.1f%%  %.1f%s" % (tree.name, tr, np_, meas, T, 100 * e,
                                                                            sum(r.steal_ok for r in s.ranks) / np_, note))
                if prog == "fib" and np_ == 2:
                    events[tr] = (s, T * 1e6)
    # the model's events against the real run's (WEFT_DIST_STATS, the same
    # 2-rank fib(35) runs as the times above)
    for tr in ("shm", "rma"):
        if tr not in events:
            continue
        s, T = events[tr]
        ok = sum(r.steal_ok for r in s.ranks) / 2
        fail = sum(r.steal_fail for r in s.ranks) / 2
        idle = sum(T - r.work for r in s.ranks) / 2 / 1e6
        meas = ["%s %s" % (cal[k + tr], what) if k + tr in cal else "%s not measured" % what
                for k, what in (("steals_per_rank_", "steals"), ("fails_per_rank_", "failed attempts"),
                                ("idle_ms_per_rank_", "ms idle"))]
        log("  fib(35), 2 ranks, %s, per rank: measured %s; model %.1f steals, %.0f failed attempts, %.1f ms idle"
            % (tr, ", ".join(meas), ok, fail, idle))
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calibration", default=os.path.join(HERE, "calibration.txt"))
    ap.add_argument("--also", action="append", default=[os.path.join(HERE, "calibration-docs.txt")],
                    help="another calibration file (the quietest one is used)")
    ap.add_argument("--build", default="build")
    ap.add_argument("--png", default=None)
    ap.add_argument("--quick", action="store_true", help="small trees and rank counts (the ctest)")
    ap.add_argument("--stat", choices=("min", "median"), default="min",
                    help="which of the calibration's statistics to read (min: the least disturbed run)")
    o = ap.parse_args()
    t_start = time.time()
    if o.png is None:
        o.png = os.path.join(o.build, "scale", "efficiency.png")
    def load(path):
        cal = read_calibration(path)
        if o.stat == "min":
            for k in list(cal):
                if k + "_min" in cal:
                    cal[k] = cal[k + "_min"]
        head = open(path).read(2000)
        i = head.find("load average:")
        load1 = float(head[i + 13:].split(",")[0]) if i >= 0 else INF
        return cal, load1

    files = [o.calibration] + [f for f in o.also if os.path.exists(f)]
    cals = [(f,) + load(f) for f in files]
    primary = min(cals, key=lambda x: x[2])
    cal = primary[1]
    for f, other, _ in cals:
        for k in ("poll_ns_np1", "poll_ns_np2"):
            if k in other and k not in ELSEWHERE:
                ELSEWHERE[k] = (other[k], os.path.relpath(f))
    P = machine_costs(cal)
    nets = presets(P)

    log("== calibration (each parameter and where it came from) ==")
    log("   calibration files: %s" % ", ".join("%s (load %.1f)" % (os.path.relpath(f), l) for f, _, l in cals))
    log("   the model assumes a CPU per rank: it takes its costs, and check (a) its error, from the quietest: %s"
        % os.path.relpath(primary[0]))
    with open(primary[0]) as f:
        for line in f:
            if line.startswith("# 20") or line.startswith("# weft") or line.startswith("# med"):
                log("   " + line.strip())
    log("   the model reads the %s of each figure" % ("minima" if o.stat == "min" else "medians"))
    for row in Param.rows:
        log("  %-36s %12.1f %-5s %s" % (row.name, row.value, row.unit, row.source))

    def costs(prog, transport="shm", frame=None):
        return prog_costs(P, prog, transport, frame)

    build = o.build
    # ---- (a) weft's own 1- and 2-rank times ----
    log("")
    log("== check (a): weft_dist's measured 1- and 2-rank times ==")
    nq12 = skeleton(build, "nqueens", 12, 256, "N-Queens(12)")
    t1tree = skeleton(build, "uts", "T1", 256, "UTS T1")
    E1 = None
    for path, cal_a, load1 in sorted(cals, key=lambda x: x[2]):
        Param.record = False
        Pa = machine_costs(cal_a)
        Param.record = True
        log("  %s (load %.1f)%s" % (os.path.relpath(path), load1, ": the error reported" if path == primary[0] else ""))
        errs = check_own(cal_a, Pa, nq12, t1tree, o.stat == "median")
        if path == primary[0]:
            E1 = 100 * max(errs)
        log("  error: max %.1f%%, mean %.1f%% over %d cells (bar: 15%%)"
            % (100 * max(errs), 100 * sum(errs) / len(errs), len(errs)))

    # ---- (b) the seed's costs ----
    log("")
    log("== check (b): fed the seed's published costs (HPDC'15, FX10) ==")
    ghz = SEED["ghz"][0]
    steal_ns = SEED["steal_cycles"] / ghz
    spawn_ns = SEED["spawn_cycles"] / ghz
    slow = SEED["spawn_cycles"] / 100.0   # SPARC64IXfx / Xeon thread creation (seed table)
    log("  steal %d cycles = %.1f us, spawn %d cycles = %.0f ns at %.3f GHz (%s)"
        % (SEED["steal_cycles"], steal_ns / 1e3, SEED["spawn_cycles"], spawn_ns, ghz, SEED["ghz"][1]))
    log("  per-node work: this machine's x %.2f (the seed's SPARC64IXfx/Xeon creation ratio, 413/100); %s" % (slow, SEED["sizes"]))
    seed_net = Net("FX10 (seed)", P["shm_op"].value * slow, steal_ns / 7.0, 5.0, 5.0, 0.0, SEED["per_node"][0])
    seed_ranks = [16, 64, 256, 1024, 3840] if not o.quick else [4, 16, 64]
    seed_trees = []
    if o.quick:
        seed_trees.append(("fib(30)", lambda c: FibTree(30), "fib"))
    else:
        seed_trees.append(("fib(40) (binary task creation)", lambda c: FibTree(40), "fib"))
        seed_trees.append(("UTS T1L", lambda c: skeleton(build, "uts", "T1L", 256, "UTS T1L"), "uts"))
        seed_trees.append(("N-Queens(15)", lambda c: skeleton(build, "nqueens", 15, 256, "N-Queens(15)"), "nq"))
    shape_ok = True
    log("  %-32s " % "tree" + " ".join("%8d" % p for p in seed_ranks))
    for name, mk, prog in seed_trees:
        node = {"fib": P["fib_node"], "nq": P["nq_node"], "uts": P["uts_node"]}[prog].value * slow
        c = Costs(node, spawn_ns, P["suspend"].value * slow, P["frame"].value, 50.0 * slow)
        tree = mk(c)
        T1 = t1_of(tree, c)
        effs = []
        for p in seed_ranks:
            T, s = simulate(tree, p, seed_net, c)
            effs.append(T1 / (p * T))
        speed = [e * p for e, p in zip(effs, seed_ranks)]
        mono = all(b > a for a, b in zip(speed, speed[1:]))
        ok = mono and effs[-1] >= 0.5
        shape_ok &= ok
        log("  %-32s " % (name + " eff") + " ".join("%7.0f%%" % (100 * e) for e in effs) + "   %s" % ("ok" if ok else "off"))
    log("  the seed reports speedup that keeps growing up to 3,840 cores for its three benchmarks;")
    log("  'ok' = speedup rises at every step and efficiency at the largest count is >= 50%% (our reading, values not found)")

    # ---- (c) Itoyori ----
    log("")
    log("== check (c): fed Itoyori's published per-operation costs (Cluster'22 artifact, ITO-A) ==")
    for k in ("steal_ok", "steal_fail", "copy", "serial", "onecore", "p2304", "p576"):
        v, u, src = ITOYORI[k]
        log("  %-10s %14.1f %-3s %s" % (k, v, u, src))
    log("  " + ITOYORI["largest"])
    log("  " + ITOYORI["fib"])
    ity_node = ITOYORI["serial"][0] / 102181082
    ity_spawn = (ITOYORI["onecore"][0] - ITOYORI["serial"][0]) / 102181082
    ity_rt = (ITOYORI["steal_ok"][0] - ITOYORI["copy"][0]) / 6.0
    ity_net = Net("ITO-A (IB EDR)", 100.0, ity_rt, ITOYORI["frame"][0] / (ITOYORI["copy"][0] - ity_rt), 10.0,
                  1e9 / PUBLISHED["ib_hdr_rate"][0], 36)
    c = Costs(ity_node, ity_spawn, 2 * ity_rt, ITOYORI["frame"][0], 50.0)
    E2 = None
    if o.quick:
        log("  (skipped with --quick)")
        E2 = 0.0
    else:
        tl = skeleton(build, "uts", "T1L", 256, "UTS T1L")
        for p, key in ((576, "p576"), (2304, "p2304")):
            T, s = simulate(tl, p, ity_net, c)
            pub = ITOYORI["serial"][0] / ITOYORI[key][0]
            mod = ITOYORI["serial"][0] / T
            nf = sum(r.steal_fail for r in s.ranks)
            tf = sum(r.t_fail for r in s.ranks) / max(1, nf)
            log("  UTS T1L on %5d ranks: speedup over serial published %.0f, model %.0f (%+.1f%%); model's failed steal %.1f us (published %.1f)"
                % (p, pub, mod, 100 * (mod - pub) / pub, tf / 1e3, ITOYORI["steal_fail"][0] / 1e3))
            E2 = 100 * abs(mod - pub) / pub
        log("  itoyori error at 2,304 ranks (the largest found): %.1f%% (bar: 25%%)" % E2)

    # ---- predictions ----
    log("")
    log("== prediction: weft_dist (node first), efficiency T_1 / (p T_p), InfiniBand HDR, 48 ranks per node ==")
    ranks = [16, 64, 256, 1024, 4096] if not o.quick else [4, 16, 64]
    if o.quick:
        progs = [("fib(30)", "fib", lambda c, pmax: FibTree(30))]
    else:
        progs = [("fib(40)", "fib", lambda c, pmax: FibTree(40)),
                 ("UTS T1L", "uts", lambda c, pmax: skeleton(build, "uts", "T1L", 256, "UTS T1L")),
                 ("N-Queens(15)", "nq", lambda c, pmax: skeleton(build, "nqueens", 15, 256, "N-Queens(15)")),
                 ("UTS T3", "uts", lambda c, pmax: skeleton(build, "uts", "T3", 256, "UTS T3"))]
    net = nets["ib-hdr"]
    table = {}
    sims = {}
    log("  %-14s %9s " % ("program", "T_1") + " ".join("%8d" % p for p in ranks))
    for name, prog, mk in progs:
        c = costs(prog, "rma")
        row = []
        for p in ranks:
            cp = costs(prog, "shm") if p <= net.per_node else c
            tree = mk(cp, p)
            T1 = t1_of(tree, cp)
            T, s = simulate(tree, p, net, cp, node_first=True)
            row.append(T1 / (p * T))
            sims[(name, p)] = (s, T, T1)
        table[name] = row
        tree = mk(c, ranks[-1])
        log("  %-14s %7.2f s " % (name, t1_of(tree, c) / 1e9) + " ".join("%7.0f%%" % (100 * e) for e in row))
    log("  (16 ranks fit one node: shm; from 64 on the job spans nodes and every pair uses rma, as weft does now;")
    log("   a thief tries %d ranks of its node, over the MPI's shared memory, for each one elsewhere)" % NEAR_TRIES)

    # other interconnects at the largest count
    log("")
    log("  at %d ranks on the other presets:" % ranks[-1])
    for key in ("slingshot", "tofu-d"):
        cells = []
        for name, prog, mk in progs:
            c = costs(prog, "rma")
            tree = mk(c, ranks[-1])
            T, s = simulate(tree, ranks[-1], nets[key], c, node_first=True)
            cells.append("%s %.0f%%" % (name, 100 * t1_of(tree, c) / (ranks[-1] * T)))
        log("    %-10s %s" % (nets[key].name, ", ".join(cells)))

    # ---- the first bottleneck ----
    log("")
    P_ = ranks[-1]
    log("== where the time goes at %d ranks (fractions of p x T_p) ==" % P_)
    losses = collections.Counter()
    progs = progs[:3]
    for name, prog, mk in progs:
        s, T, T1 = sims[(name, P_)]
        b = breakdown(s, T, T1)
        steals = sum(r.steal_ok for r in s.ranks)
        fails = sum(r.steal_fail for r in s.ranks)
        ok_us = sum(r.t_ok for r in s.ranks) / max(1, steals) / 1e3
        fail_us = sum(r.t_fail for r in s.ranks) / max(1, fails) / 1e3
        other = max(0.0, 1 - b["work"] - b["steal_ok"] - b["steal_fail"])
        term = (T - s.root_end) / T
        log("  %-14s work %3.0f%% | failed attempts %3.0f%% | successful steals %3.0f%% | other %3.0f%% (termination %.1f%%)"
            % (name, 100 * b["work"], 100 * b["steal_fail"], 100 * b["steal_ok"], 100 * other, 100 * term))
        log("  %-14s %d steals of %.1f us, %d failed attempts of %.1f us (%.0f per steal); %.0f%% of p x T_p passed before a rank's first work"
            % ("", steals, ok_us, fails, fail_us, fails / max(1, steals), 100 * b["ramp"]))
        losses["victim selection (failed attempts)"] += b["steal_fail"]
        losses["RMA round trips of successful steals"] += b["steal_ok"]
        losses["termination and the tail"] += other
    first = losses.most_common(1)[0][0]
    log("  first bottleneck (largest loss summed over the three programs): %s" % first)
    log("  the root's fan-out is the part of both that comes before a rank's first work (above)")
    mixed = Net(net.name + " + shm in node", net.shm_op, net.rma_op, net.bw_remote, net.bw_local, net.port_ns,
                net.per_node, mixed=True)
    before = "uniform victims (weft_dist before node first): what node first gained"
    variants = ((before, dict(net=net, node_first=False)),
                ("+ the shm transport inside a node (not built)", dict(net=mixed, node_first=True)),
                ("+ 3 round trips per steal (lock+peek in one atomic, entry+frame_end in one get, no wait for the unlock)",
                 dict(net=net, node_first=True, short=True)),
                ("both", dict(net=mixed, node_first=True, short=True)))
    gains = collections.defaultdict(list)
    for vname, kw in variants:
        log("  design change: %s" % vname)
        for name, prog, mk in progs:
            c = costs(prog, "rma")
            tree = mk(c, P_)
            T1 = t1_of(tree, c)
            T0 = sims[(name, P_)][1]
            kw2 = dict(kw)
            vnet = kw2.pop("net")
            T, s = simulate(tree, P_, vnet, c, **kw2)
            e0, e1 = T1 / (P_ * T0), T1 / (P_ * T)
            gains[vname].append(e1 / e0)
            if vname == before:
                log("    %-14s %4.0f%% with uniform victims -> %4.0f%% with node first (x %.2f)"
                    % (name, 100 * e1, 100 * e0, e0 / e1))
            else:
                log("    %-14s %4.0f%% -> %4.0f%% (x %.2f)" % (name, 100 * e0, 100 * e1, e1 / e0))
    best = max(gains, key=lambda k: sum(gains[k]) if k not in ("both", before) else -1)
    log("  implied change (the single change with the larger modelled gain): %s" % best)

    # ---- the figure ----
    draw(o.png, ranks, table)
    log("")
    log("  figure: %s" % o.png)
    log("  model time: %.0f s" % (time.time() - t_start))
    f = table
    names = [n for n, _, _ in progs]
    last = [f[n][-1] for n in names] + [0.0] * (3 - len(names))
    print("scale-model: own error %.0f%%; seed shape %s; itoyori error %.0f%%; efficiency at %d ranks fib %.0f%% uts %.0f%% nqueens %.0f%%"
          % (E1, "ok" if shape_ok else "off", E2, ranks[-1], 100 * last[0], 100 * last[1], 100 * last[2]))


def draw(path, ranks, table):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        write_png(path, ranks, table)
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, row in table.items():
        ax.plot(ranks, [100 * e for e in row], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(r) for r in ranks])
    ax.set_ylim(0, 105)
    ax.set_xlabel("ranks (one worker each), InfiniBand HDR, 48 per node")
    ax.set_ylabel("efficiency T1 / (p Tp), %")
    ax.set_title("weft_dist: modelled efficiency against ranks")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write_png(path, ranks, table):
    """Without matplotlib: the curves on a grid (no text), zlib and struct."""
    import struct
    import zlib
    w, h = 480, 320
    px = [[(255, 255, 255)] * w for _ in range(h)]
    colors = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40)]

    def put(x, y, col):
        if 0 <= x < w and 0 <= y < h:
            px[y][x] = col

    def X(i):
        return 40 + int(i * (w - 60) / max(1, len(ranks) - 1))

    def Y(e):
        return h - 30 - int(e * (h - 50))

    for g in range(0, 11):
        for x in range(40, w - 20):
            put(x, Y(g / 10), (225, 225, 225))
    for i in range(len(ranks)):
        for y in range(20, h - 30):
            put(X(i), y, (225, 225, 225))
    for k, row in enumerate(table.values()):
        col = colors[k % len(colors)]
        for i in range(len(row) - 1):
            x0, y0, x1, y1 = X(i), Y(row[i]), X(i + 1), Y(row[i + 1])
            n = max(abs(x1 - x0), abs(y1 - y0), 1)
            for s in range(n + 1):
                for d in (-1, 0, 1):
                    put(x0 + (x1 - x0) * s // n, y0 + (y1 - y0) * s // n + d, col)
    raw = b"".join(b"\x00" + bytes(c for p in r for c in p) for r in px)

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


if __name__ == "__main__":
    main()
