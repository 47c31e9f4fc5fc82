#!/usr/bin/env python3
"""scale_model.py: invariants of the scale model (bench/scale/model.py) on
tiny trees, so that a change to the simulator that loses work, runs a
thread twice or lets ranks beat the work's bound fails here.
Usage: scale_model.py REPO_ROOT (exit 0 = pass)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "bench", "scale"))
import model  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def net(per_node=4, rma=4000.0, mixed=False, poll=None):
    return model.Net("test", 100.0, rma, 10.0, 10.0, 5.0, per_node, mixed=mixed, poll=poll)


def costs():
    return model.Costs(2.0, 60.0, 200.0, 512, 50.0)


# 1 rank: exactly the serial work plus the spawns, no steal, nothing lost
c = costs()
for leaf in (0.0, 5e3, 1e5):
    tree = model.FibTree(20)
    T, s = model.simulate(tree, 1, net(), c, leaf_ns=leaf)
    T1 = model.t1_of(tree, c)
    check(abs(s.ranks[0].work - T1) < 1e-6 * T1, "1 rank, leaf %g: work %g != T1 %g" % (leaf, s.ranks[0].work, T1))
    check(T >= T1 and T < T1 * 1.001 + 1e4, "1 rank, leaf %g: T %g against T1 %g" % (leaf, T, T1))
    check(s.ranks[0].steal_ok == 0, "1 rank stole")

# p ranks: all work done once, T_p within [T1/p, T1 + overheads], steals happened
tree = model.FibTree(24)
T1 = model.t1_of(tree, c)
prev = None
for p in (2, 4, 16, 64):
    for nt in (net(), net(per_node=1 << 20), net(mixed=True), net(poll=3000.0)):
        T, s = model.simulate(tree, p, nt, c, seed=3, leaf_ns=2e3)
        work = sum(r.work for r in s.ranks)
        check(abs(work - T1) < 1e-6 * T1, "p=%d: work %g != T1 %g (lost or duplicated)" % (p, work, T1))
        check(T >= T1 / p, "p=%d: T %g below T1/p %g" % (p, T, T1 / p))
        check(sum(r.steal_ok for r in s.ranks) > 0, "p=%d: no steal" % p)
        check(all(not r.deque for r in s.ranks), "p=%d: continuations left in a deque" % p)
    T2, _ = model.simulate(tree, p, net(), c, seed=3)
    T3, _ = model.simulate(tree, p, net(), c, seed=3)
    check(T2 == T3, "p=%d: same seed, different result" % p)

# more ranks help a tree big enough for them (shared memory, cheap steals)
big = model.FibTree(27)
T1 = model.t1_of(big, c)
e4 = T1 / (4 * model.simulate(big, 4, net(per_node=1 << 20), c)[0])
e16 = T1 / (16 * model.simulate(big, 16, net(per_node=1 << 20), c)[0])
check(0.8 < e4 <= 1.0 and 0.5 < e16 <= 1.0, "efficiency 4 ranks %.2f, 16 ranks %.2f" % (e4, e16))
# and dearer steals cost efficiency
e16_slow = T1 / (16 * model.simulate(big, 16, net(per_node=1, rma=50e3), c)[0])
check(e16_slow < e16, "50 us round trips (%.2f) not worse than shared memory (%.2f)" % (e16_slow, e16))

# node first, as src/mpi/ranksched.c's victim: NEAR_TRIES attempts on one's
# node for each one elsewhere, when the job spans nodes; uniform inside one
for nf, per, want in ((True, 4, model.NEAR_TRIES), (False, 4, None), (True, 1 << 20, None)):
    sim = model.Sim(model.FibTree(10), 16, net(per_node=per), c, seed=5, node_first=nf)
    r = sim.ranks[5]
    tries = 4 * (model.NEAR_TRIES + 1) * 25
    near = sum(sim.victim(r).node == r.node and per < 16 for _ in range(tries))
    if want is not None:
        # the NEAR_TRIES of each cycle, and some of the others by chance (3 in 15)
        lo = tries * want // (want + 1)
        check(lo <= near < lo + tries // (want + 1) // 2, "node first: %d of %d attempts on the node" % (near, tries))
    else:
        check(near < tries // 2, "no node first (per_node %d): %d of %d attempts on the node" % (per, near, tries))
for nt in (net(per_node=4), model.Net("near", 100.0, 4000.0, 10.0, 10.0, 5.0, 4, near_op=1000.0)):
    tree = model.FibTree(22)
    T, s = model.simulate(tree, 16, nt, c, seed=2, leaf_ns=2e3, node_first=True)
    work = sum(r.work for r in s.ranks)
    check(abs(work - model.t1_of(tree, c)) < 1e-6 * work, "node first: work lost or duplicated")

# one spawn cost for both transports: rma adds a poll per WEFT_DIST_POLL spawns
cal = {"serial_fib35": 27.5, "shm_np1_fib35": 941.0, "serial_nq12": 128.0, "serial_uts": 891.0,
       "rma_fao_us": 1.2, "poll_ns_np1": 50.0, "poll_ns_np2": 100.0}
model.Param.record = False
P = model.machine_costs(cal)
model.Param.record = True
check(abs(P["spawn_rma"].value - P["spawn"].value - 50.0 / model.POLL_EVERY) < 1e-9, "rma spawn, 1 rank")
check(abs(P["spawn_rma_peers"].value - P["spawn"].value - 100.0 / model.POLL_EVERY) < 1e-9, "rma spawn, peers")
check(model.prog_costs(P, "fib", "rma", ranks=1).per_spawn < model.prog_costs(P, "fib", "rma", ranks=2).per_spawn,
      "a poll with peers is dearer")

# a skeleton as treegen writes it: post-order, L = bulk subtree, E = node
with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    f.write("# tree=test x cut=10 nodes=30 tokens=6\nL 5\nL 9\nE 2\nL 7\nL 7\nE 3\n")
    path = f.name
try:
    sk = model.SkeletonTree("test", path)
    check(sk.nodes == 30 and sk.root == [[5, 9], 7, 7], "skeleton parsed as %r (%d nodes)" % (sk.root, sk.nodes))
    T1 = model.t1_of(sk, c)
    for p, leaf in ((1, 0.0), (3, 0.0), (3, 1e9)):
        T, s = model.simulate(sk, p, net(), c, leaf_ns=leaf)
        work = sum(r.work for r in s.ranks)
        # the two expanded nodes' own work is in T1 as nodes, not as bulk
        check(abs(work - T1) < 1e-6 * T1, "skeleton p=%d: work %g != T1 %g" % (p, work, T1))
finally:
    os.unlink(path)

print("scale model: %s" % ("ok" if not failures else "%d failures" % len(failures)))
sys.exit(1 if failures else 0)
