#!/usr/bin/env python3
"""circles.py: fails when the files of src/ depend on each other in a circle.

    tests/layout/circles.py [SRC_DIR] [-v]

A room is a file's name within its folder, its .c and .h together
(sched/deque = deque.c + deque.h). Room A depends on room B when code in A
(a function body, an initialiser, a macro's body) names a function or a
global that B defines; a prototype or an include alone is no dependency.
The rooms must form layers of their own, as the folders do
(tests/layout/layers.py): the test allows at most ALLOWED circles, none
of more than MAX_ROOMS rooms, and prints each circle with the names that
close it (-v prints them even when it passes).

The assembly of the context switch is left out: its one call out, the
tail call into the scheduler's weft__ctx_resumed, is the one upward edge
that tests/layout/allowed.txt allows, and would close a circle through
every switch.

Today's one circle is policy/machine <-> policy/preempt: the rescue of a
worker blocked in the kernel is both a preemption (the signal, the
monitor's request) and a hand-off (the spare machine that takes the
worker), and each half calls the other.

Python 3 standard library only; reads the sources, builds nothing.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402  (strip_c, top_level_definitions)

ALLOWED = 1
MAX_ROOMS = 2

INLINE_RE = re.compile(r"(?:static\s+inline|WEFT_INLINE)[^;{]*?\b(weft_\w+)\s*\(")
MACRO_FN_RE = re.compile(r"#\s*define\s+(weft_\w+)\s*\(")
MACRO_BODY_RE = re.compile(r"#\s*define\s+\w+(?:\([^)]*\))?((?:[^\n]*\\\n)*[^\n]*)")


def rooms(src):
    """Returns (code, owner): code maps room -> its files' stripped code;
    owner maps a weft_ name -> the room that defines it."""
    code, owner = {}, {}
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            room = os.path.splitext(os.path.relpath(path, src))[0]
            with open(path, encoding="utf-8", errors="replace") as f:
                raw = f.read()
            text = layers.strip_c(raw)
            code[room] = code.get(room, "") + "\n" + text
            defs = layers.top_level_definitions(text)
            if name.endswith(".h"):
                defs += INLINE_RE.findall(text) + MACRO_FN_RE.findall(raw)
            for d in defs:
                owner.setdefault(d, room)
    return code, owner


def uses(text):
    """The weft_ names a room's code uses: inside braces, and in macro bodies."""
    out, depth = [], 0
    for m in re.finditer(r"[{}]|\bweft_\w+", text):
        t = m.group(0)
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
        elif depth > 0:
            out.append(t)
    for m in MACRO_BODY_RE.finditer(text):
        out += re.findall(r"\bweft_\w+", m.group(1))
    return out


def circles(src):
    code, owner = rooms(src)
    edges = {}
    for room, text in code.items():
        for name in uses(text):
            to = owner.get(name)
            if to and to != room:
                edges.setdefault(room, {}).setdefault(to, name)
    # Tarjan's strongly connected components
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(code):
        if v not in index:
            visit(v)
    return found, edges


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "..", "src")
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if args:
        src = args[0]
    found, edges = circles(os.path.abspath(src))
    bad = len(found) > ALLOWED or any(len(c) > MAX_ROOMS for c in found)
    for comp in found:
        if bad or verbose:
            print("circle of %d: %s" % (len(comp), " ".join(comp)))
            for a in comp:
                for b, name in sorted(edges.get(a, {}).items()):
                    if b in comp:
                        print("    %s -> %s: %s" % (a, b, name))
    if bad:
        print("circles: %d circles (at most %d allowed, of at most %d rooms)"
              % (len(found), ALLOWED, MAX_ROOMS))
        return 1
    print("circles: %d circle(s), within the bar (%d of at most %d rooms)"
          % (len(found), ALLOWED, MAX_ROOMS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
