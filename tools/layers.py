#!/usr/bin/env python3
"""layers.py - checks the layer picture of docs/architecture.md.

  layers.py check-includes          every #include "x.h" is allowed
  layers.py check-cycles OBJDIR     no two object files call each other in
                                    a loop (nm: who defines, who uses)
  layers.py check-calls OBJDIR      no object file uses a symbol defined in a
                                    folder it may not include from (a call
                                    up, even one declared in a lower header)
  layers.py check-functions N FILE...  no function longer than N lines

Exit 0 when the rules hold, 1 with one line per breach otherwise."""
import os
import re
import subprocess
import sys

# folder -> the folders whose headers its files may include (own folder
# always).  Bottom up; a folder never reaches one above it.
ALLOWED = {
    "include": [],
    "core": ["include"],
    "ref": ["include", "core"],
    "opt": ["include", "core"],
    "peers": ["include", "core", "opt"],
    "verify": ["include", "core"],
    "api": ["include", "core", "ref", "opt", "peers"],
    "store": ["include", "core"],
    "harness": ["include", "core", "store"],
    "viz": ["include", "core", "store", "harness"],
    "cli": ["include", "core", "api", "store", "harness", "viz"],
    "fuzz": ["include", "core", "api", "store", "harness", "viz"],
}
# folder -> the folders whose symbols its objects may use (own folder
# always): the library's layers as ALLOWED says, and the tools above the
# whole library (they reach it through memplan.h), the store at their
# bottom, the harness on it, the pictures on both.
LIBRARY = ["core", "ref", "opt", "peers", "verify", "api"]
CALLS = {
    "core": [],
    "ref": ["core"],
    "opt": ["core"],
    "peers": ["core", "opt"],
    "verify": ["core"],
    "api": ["core", "ref", "opt", "peers", "verify"],
    "store": LIBRARY,
    "harness": LIBRARY + ["store"],
    "viz": LIBRARY + ["store", "harness"],
}
# headers another folder may include: a module's face, not its insides
PRIVATE = {"ref_internal.h", "opt_internal.h", "kd.h", "sort.h", "store.h", "verify.h",
           "viz.h", "cli.h", "brute.h", "fuzz.h"}
# peers reach opt through its driver's face only
ONLY = {("peers", "opt"): {"opt.h", "pack.h"}}


def folder_of(path):
    d = os.path.dirname(path)
    return d if d in ALLOWED else None


def headers():
    where = {}
    for d in ALLOWED:
        for f in os.listdir(d) if os.path.isdir(d) else []:
            if f.endswith(".h"):
                where.setdefault(f, []).append(d)
    return where


def check_includes():
    where, bad = headers(), []
    for d in ALLOWED:
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                if "/" in inc:
                    bad.append(f"{path}:{n}: includes '{inc}' by a path (use the folder's -I)")
                    continue
                homes = where.get(inc, [])
                if len(homes) != 1:
                    bad.append(f"{path}:{n}: '{inc}' is in {len(homes)} folders")
                    continue
                home = homes[0]
                if home == d:
                    continue
                if home not in ALLOWED[d]:
                    bad.append(f"{path}:{n}: {d}/ may not include {home}/{inc} (a layer above it)")
                elif inc in PRIVATE:
                    bad.append(f"{path}:{n}: {home}/{inc} is private to {home}/")
                elif (d, home) in ONLY and inc not in ONLY[(d, home)]:
                    bad.append(f"{path}:{n}: {d}/ reaches {home}/ only through {sorted(ONLY[(d, home)])}")
    return bad


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def objects(objdir):
    """{object file: (folder, defined, used)} of the library and the tools."""
    out = {}
    for root, _, files in os.walk(objdir):
        rel = os.path.relpath(root, objdir)
        if rel.split(os.sep)[0] in ("cli", "tests", "fuzz"):
            continue
        for f in files:
            if f.endswith(".o"):
                out[os.path.join(root, f)] = (rel,) + symbols(os.path.join(root, f))
    return out


def check_calls(objdir):
    """A symbol an object uses, defined in another folder, must be in one
    below it (CALLS): the layer rule seen where a declaration in a lower
    header hides a call up (1.8's core/export.c called api/'s
    mp_algo_name, declared in core/internal.h)."""
    objs = objects(objdir)
    owner = {s: (o, d) for o, (d, defined, _) in objs.items() for s in defined}
    bad = []
    for o, (d, _, used) in sorted(objs.items()):
        for s in sorted(used):
            if s not in owner or owner[s][1] == d or d not in CALLS:
                continue
            home = owner[s][1]
            if home not in CALLS[d]:
                bad.append(f"{os.path.relpath(o, objdir)} uses {s} of {os.path.relpath(owner[s][0], objdir)}: "
                           f"{d}/ may not call into {home}/ (a layer above it, or beside it)")
    return bad


def check_cycles(objdir):
    objs = []
    for root, _, files in os.walk(objdir):
        rel = os.path.relpath(root, objdir)
        if rel.split(os.sep)[0] in ("cli", "tests", "fuzz"):
            continue
        objs += [os.path.join(root, f) for f in files if f.endswith(".o")]
    owner, uses = {}, {}
    for o in objs:
        d, u = symbols(o)
        for s in d:
            owner[s] = o
        uses[o] = u
    edges = {o: {owner[s] for s in uses[o] if s in owner and owner[s] != o} for o in objs}
    # Tarjan's strongly connected components, iteratively
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    for root in sorted(objs):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        sccs.append(sorted(os.path.relpath(c, objdir) for c in comp))
            elif nxt not in index:
                index[nxt] = low[nxt] = counter[0]
                counter[0] += 1
                stack.append(nxt)
                on.add(nxt)
                work.append((nxt, iter(sorted(edges[nxt]))))
            elif nxt in on:
                low[v] = min(low[v], index[nxt])
    return [f"files that call each other in a loop: {' '.join(c)}" for c in sccs]


def check_functions(limit, files):
    """Function bodies: from the signature (a line at column 0 with an
    opening parenthesis, or the return type on the line before it) to the
    next '}' at column 0."""
    bad = []
    for path in files:
        lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            if not re.match(r"[A-Za-z_]", line) or "(" not in line or re.match(r"(typedef|struct|enum|union)\b", line):
                i += 1
                continue
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";", "}")) and lines[j].strip():
                j += 1
            if j >= len(lines) or not lines[j].rstrip().endswith("{") or "=" in line.split("(")[0]:
                i = j + 1
                continue
            start = i - 1 if i > 0 and re.match(r"(static |const |inline )*[A-Za-z_][A-Za-z_0-9 *]*$", lines[i - 1]) else i
            m = re.search(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(", line)
            k = j
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            if k - start + 1 > limit:
                bad.append(f"{path}:{start + 1}: {m.group(1) if m else '?'} is {k - start + 1} lines (at most {limit})")
            i = k + 1
    return bad


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "check-includes":
        bad = check_includes()
    elif len(sys.argv) >= 4 and sys.argv[1] == "check-functions":
        bad = check_functions(int(sys.argv[2]), sys.argv[3:])
    elif len(sys.argv) == 3 and sys.argv[1] == "check-cycles":
        bad = check_cycles(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "check-calls":
        bad = check_calls(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
