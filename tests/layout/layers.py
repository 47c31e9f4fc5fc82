#!/usr/bin/env python3
"""layers.py: fails when a folder of src/ includes or calls into a folder above it in the layer order.

    tests/layout/layers.py [SRC_DIR] [--allowed FILE] [--edges]

The layers, lowest first (docs/design.md says why):

    base <- desc <- os <- arch <- stack <- sched <- policy <- thread <- {sync, io} <- task <- observe <- runtime <- {compat, mpi}

A folder may use its own layer and those below it. An edge goes upward when a
file of a lower folder
  - includes a header of a higher folder (`#include "sched/sched.h"` in
    stack/), or
  - names a function or global defined in a higher folder: the internal
    `weft__` symbols and the public `weft_` functions defined in src/
    (internal code calls internal functions, not the public API).
sync and io share a layer; an edge between them is not upward.

Today's tree still has upward edges. Each known one is listed in
tests/layout/allowed.txt as a line "from -> to: symbol" or
"from -> to: include path"; the test fails on an upward edge not in that
list, and on a line of the list that no longer matches any edge (so the list
only shrinks: delete the line when the restructure removes the edge).
--edges prints every cross-folder edge found, allowed or not, and exits 0.

Python 3 standard library only; reads the sources, builds nothing.
"""
import os
import re
import sys
from collections import defaultdict

LAYERS = [["base"], ["desc"], ["os"], ["arch"], ["stack"], ["sched"], ["policy"], ["thread"], ["sync", "io"],
          ["task"], ["observe"], ["runtime"], ["compat", "mpi", "posix"]]
RANK = {folder: i for i, group in enumerate(LAYERS) for folder in group}

IDENT_RE = re.compile(r"[A-Za-z_]\w*")
SYMBOL_RE = re.compile(r"weft_\w+")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
ASM_GLOBAL_RE = re.compile(r"^\s*\.globl\s+(weft_\w+)", re.M)
ASM_REF_RE = re.compile(r"\b(?:call|jmp)\s+(weft_\w+)")
# Words that may stand before a definition's name and carry parentheses.
ATTR_WORDS = {"__attribute__", "_Alignas", "_Atomic", "__typeof__", "typeof", "alignas"}


def strip_c(text):
    """Blanks out comments, string and character literals (keeping newlines,
    so that offsets still give line numbers) and preprocessor lines other
    than #define bodies (which are code)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else " " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    # __attribute__((...)) carries parentheses that would hide a global's
    # definition (__thread T *weft__x __attribute__((tls_model(...)));).
    code = re.sub(r"__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)",
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    # Directives other than #define say nothing about calls (#include is read
    # separately, from the raw text).
    return re.sub(r"^[ \t]*#[ \t]*(?!define)\w+[^\n]*", lambda m: " " * len(m.group(0)), code,
                  flags=re.M)


def folder_of(path, src):
    rel = os.path.relpath(path, src).split(os.sep)
    return rel[0] if len(rel) > 1 else None


def top_level_definitions(code):
    """Names of the functions and globals that a C file defines (brace depth
    0; a function has a body, a global is not extern, typedef or static)."""
    defs = []
    depth, paren = 0, 0
    stmt = []          # tokens of the current top-level statement
    for m in re.finditer(r"[A-Za-z_]\w*|[{}();=\[,]", code):
        tok = m.group(0)
        if depth > 0:
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth == 0:
                    stmt = []
            continue
        if tok == "(":
            paren += 1
        elif tok == ")":
            paren -= 1
        if tok == "{" and paren == 0:
            name = function_name(stmt)
            if name:
                defs.append(name)
            depth = 1
            stmt = []
            continue
        if tok in (";", "=", "[", ",") and paren == 0:
            name = global_name(stmt)
            if name:
                defs.append(name)
            if tok == ";":
                stmt = []
            elif tok == "=" or tok == ",":
                # skip to the end of the declaration: an initialiser may hold braces
                stmt = ["<init>"]
            continue
        stmt.append(tok)
    return defs


def function_name(stmt):
    """The defined function's name: the first identifier followed by "(" at
    parenthesis depth 0 that is not an attribute-like word."""
    if not stmt or stmt[0] in ("struct", "union", "enum", "typedef") and "(" not in stmt:
        return None
    paren = 0
    for k, tok in enumerate(stmt):
        if tok == "(":
            if paren == 0 and k > 0 and stmt[k - 1] not in ATTR_WORDS and SYMBOL_RE.fullmatch(stmt[k - 1]):
                return stmt[k - 1]
            paren += 1
        elif tok == ")":
            paren -= 1
    return None


def global_name(stmt):
    """The defined global's name: the last weft_ identifier of a declaration
    that is not extern, typedef or static, and not a struct, union or enum
    tag (struct weft_thread;)."""
    if not stmt or stmt[0] in ("extern", "typedef", "static", "<init>") or "(" in stmt:
        return None
    for k in range(len(stmt) - 1, -1, -1):
        if SYMBOL_RE.fullmatch(stmt[k]):
            return None if k > 0 and stmt[k - 1] in ("struct", "union", "enum") else stmt[k]
    return None


def scan(src):
    """Returns (files, owner): files maps path -> (folder, raw text, code);
    owner maps symbol -> folder that defines it."""
    files = {}
    owner = {}
    for root, _, names in os.walk(src):
        for name in sorted(names):
            path = os.path.join(root, name)
            folder = folder_of(path, src)
            if folder is None or not name.endswith((".c", ".h", ".S")):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                raw = f.read()
            code = strip_c(raw)
            files[path] = (folder, raw, code)
            if name.endswith(".S"):
                for sym in ASM_GLOBAL_RE.findall(code):
                    claim(owner, sym, folder)
            else:
                for sym in top_level_definitions(code):
                    claim(owner, sym, folder)
    return files, owner


def claim(owner, sym, folder):
    """A name defined in two folders (mpi/gate.c defines the public calls
    again for libweft_dist) belongs to the lower layer."""
    if sym not in owner or RANK.get(folder, len(LAYERS)) < RANK.get(owner[sym], len(LAYERS)):
        owner[sym] = folder


def edges(src):
    """Yields (from, to, what, where) for every cross-folder dependency."""
    files, owner = scan(src)
    for path in sorted(files):
        folder, raw, code = files[path]
        rel = os.path.relpath(path, os.path.dirname(src))
        for m in INCLUDE_RE.finditer(raw):
            inc = m.group(1)
            to = inc.split("/")[0] if "/" in inc else None
            if to in RANK and to != folder:
                line = raw.count("\n", 0, m.start()) + 1
                yield folder, to, "include " + inc, "%s:%d" % (rel, line)
        if path.endswith(".S"):
            refs = ((m.group(1), m.start(1)) for m in ASM_REF_RE.finditer(code))
        else:
            refs = ((m.group(0), m.start()) for m in IDENT_RE.finditer(code)
                    if m.group(0) in owner and not re.search(r"\b(struct|union|enum)\s+$",
                                                             code[max(0, m.start() - 8):m.start()]))
        for sym, pos in refs:
            to = owner.get(sym)
            if to in RANK and to != folder:
                yield folder, to, sym, "%s:%d" % (rel, code.count("\n", 0, pos) + 1)


def upward(frm, to):
    return RANK[to] > RANK[frm]


def load_allowed(path):
    allowed = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"(\w+)\s*->\s*(\w+)\s*:\s*(.+)", line)
            if not m or m.group(1) not in RANK or m.group(2) not in RANK:
                sys.exit("layers: %s:%d: expected 'from -> to: symbol' with src/ folders, got %r"
                         % (path, n, line))
            allowed[(m.group(1), m.group(2), " ".join(m.group(3).split()))] = n
    return allowed


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "..", "..", "src")
    allowed_path = os.path.join(here, "allowed.txt")
    show = False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--allowed":
            allowed_path = args.pop(0)
        elif a == "--edges":
            show = True
        elif a.startswith("-"):
            print(__doc__, file=sys.stderr)
            return 2
        else:
            src = a
    src = os.path.abspath(src)

    found = defaultdict(list)  # (from, to, what) -> [where]
    for frm, to, what, where in edges(src):
        found[(frm, to, what)].append(where)
    if show:
        for (frm, to, what), wheres in sorted(found.items(), key=lambda kv: (RANK[kv[0][0]], kv[0])):
            mark = "UP " if upward(frm, to) else "   "
            print("%s%s -> %s: %s  (%s%s)" % (mark, frm, to, what, wheres[0],
                                              ", +%d" % (len(wheres) - 1) if len(wheres) > 1 else ""))
        return 0

    allowed = load_allowed(allowed_path)
    new = [(k, w) for k, w in sorted(found.items()) if upward(k[0], k[1]) and k not in allowed]
    stale = sorted((n, k) for k, n in allowed.items() if k not in found or not upward(k[0], k[1]))
    nup = sum(1 for k in found if upward(k[0], k[1]))
    if new:
        print("layers: upward edges not in %s (layer order: %s):" % (
            os.path.relpath(allowed_path), " <- ".join("{%s}" % ", ".join(g) if len(g) > 1 else g[0]
                                                       for g in LAYERS)))
        for (frm, to, what), wheres in new:
            print("  %s -> %s: %s    at %s" % (frm, to, what, ", ".join(wheres[:3])
                                              + (", ..." if len(wheres) > 3 else "")))
        print("Move the code down, or reach the higher layer through a hook it registers.")
    if stale:
        print("layers: lines of %s that match no upward edge any more; delete them:"
              % os.path.relpath(allowed_path))
        for n, (frm, to, what) in stale:
            print("  line %d: %s -> %s: %s" % (n, frm, to, what))
    if new or stale:
        return 1
    print("layers: %d upward edges, all in the allow-list (%d lines); no new ones" % (nup, len(allowed)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
